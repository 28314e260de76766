//! Walks an apply graph on tokio: every step starts as soon as all the steps
//! before it have finished, up to a parallelism limit. Steps run on blocking
//! threads because provider calls are synchronous.
//!
//! When a step fails, nothing after it starts; independent steps still run
//! to completion.

use std::collections::{BTreeMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use tokio::task::JoinSet;

use super::graph::{ApplyGraph, Step};

/// What became of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and succeeded.
    Done,
    /// It ran and failed.
    Failed,
    /// It never ran because a step before it failed.
    Skipped,
}

/// Runs every step of `graph` with `work`, at most `parallelism` at once.
/// A panic in `work` counts as a failure of that step.
pub async fn walk<F>(graph: &ApplyGraph, parallelism: usize, work: F) -> BTreeMap<NodeIndex, Outcome>
where
    F: Fn(&Step) -> bool + Send + Sync + 'static,
{
    let work = Arc::new(work);
    let mut waiting_on: BTreeMap<NodeIndex, usize> =
        graph.node_indices().map(|n| (n, graph.edges_directed(n, Direction::Incoming).count())).collect();
    let mut ready: VecDeque<NodeIndex> = waiting_on.iter().filter(|(_, c)| **c == 0).map(|(n, _)| *n).collect();
    let mut outcomes: BTreeMap<NodeIndex, Outcome> = BTreeMap::new();
    let mut running = JoinSet::new();
    loop {
        while running.len() < parallelism.max(1) {
            let Some(n) = ready.pop_front() else { break };
            let step = graph[n].clone();
            let work = Arc::clone(&work);
            running.spawn_blocking(move || {
                let ok = std::panic::catch_unwind(AssertUnwindSafe(|| work(&step))).unwrap_or(false);
                (n, ok)
            });
        }
        let Some(joined) = running.join_next().await else { break };
        let (n, ok) = joined.expect("step tasks are never cancelled, and panics are caught inside them");
        outcomes.insert(n, if ok { Outcome::Done } else { Outcome::Failed });
        if ok {
            for e in graph.edges_directed(n, Direction::Outgoing) {
                let count = waiting_on.get_mut(&e.target()).expect("every node is counted");
                *count -= 1;
                if *count == 0 {
                    ready.push_back(e.target());
                }
            }
        }
    }
    for n in graph.node_indices() {
        outcomes.entry(n).or_insert(Outcome::Skipped);
    }
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::ResourceAddr;
    use std::sync::Mutex;

    fn step(name: &str) -> Step {
        Step::Apply(ResourceAddr::managed("t", name).instance(), None)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_in_dependency_order_and_skips_after_failure() {
        let mut g = ApplyGraph::new();
        let a = g.add_node(step("a"));
        let b = g.add_node(step("b"));
        let c = g.add_node(step("c"));
        let fails = g.add_node(step("fails"));
        let after_fail = g.add_node(step("after_fail"));
        g.add_edge(a, b, ());
        g.add_edge(b, c, ());
        g.add_edge(fails, after_fail, ());
        let order = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&order);
        let outcomes = walk(&g, 4, move |s| {
            seen.lock().unwrap().push(s.to_string());
            !s.to_string().ends_with(".fails")
        })
        .await;
        let order = order.lock().unwrap().clone();
        let pos = |n: &str| order.iter().position(|s| s == n).unwrap();
        assert!(pos("t.a") < pos("t.b") && pos("t.b") < pos("t.c"), "{order:?}");
        assert_eq!(outcomes[&c], Outcome::Done);
        assert_eq!(outcomes[&fails], Outcome::Failed);
        assert_eq!(outcomes[&after_fail], Outcome::Skipped);
        assert!(!order.contains(&"t.after_fail".to_string()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn independent_steps_overlap_up_to_the_limit() {
        let mut g = ApplyGraph::new();
        for i in 0..6 {
            g.add_node(step(&format!("n{i}")));
        }
        let active = Arc::new(Mutex::new((0usize, 0usize)));
        let counter = Arc::clone(&active);
        // Each step waits until a second one is running (or gives up after a
        // while), so overlap is observed without relying on timing.
        walk(&g, 3, move |_| {
            {
                let mut a = counter.lock().unwrap();
                a.0 += 1;
                a.1 = a.1.max(a.0);
            }
            for _ in 0..200 {
                if counter.lock().unwrap().1 >= 2 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            counter.lock().unwrap().0 -= 1;
            true
        })
        .await;
        let (_, max) = *active.lock().unwrap();
        assert!((2..=3).contains(&max), "max concurrent steps {max}");
    }
}
