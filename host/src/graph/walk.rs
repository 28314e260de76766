//! Walks a graph on tokio: every step starts as soon as all the steps
//! before it have finished, up to a parallelism limit (and per-group
//! limits). Each step is a task, which holds a thread only while it works,
//! not while it waits on a provider. Refresh and plan walk the dependency
//! graph with it, apply walks the apply graph.
//!
//! When a step fails, nothing after it starts; independent steps still run
//! to completion. When the walk is told to stop ([`walk_spread_until`]),
//! nothing more starts at all, and the steps running finish.
//!
//! There is no scheduler task: each step's own worker starts what it made
//! ready ([`walk_spread`], [`walk_spread_until`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;

use petgraph::Direction;
use petgraph::graph::DiGraph;

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
    /// It never ran, or was cancelled while it ran, because the run was
    /// interrupted.
    Interrupted,
}

/// How many steps may run at once: in all, and within named groups (the
/// steps of one provider, for its `max_concurrency`).
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Most steps running at once (`-parallelism`); at least 1 is used.
    pub parallelism: usize,
    /// Most steps of one group running at once.
    pub per_group: BTreeMap<String, usize>,
}

/// For every step, the number of steps in the longest chain that starts
/// with it (itself included), by node index: how urgent it is.
pub fn chain_lengths<N>(graph: &DiGraph<N, ()>) -> Vec<usize> {
    let mut length = vec![1usize; graph.node_count()];
    // Successors first: a reverse topological order. The graph is acyclic.
    let order = petgraph::algo::toposort(graph, None).unwrap_or_default();
    for n in order.into_iter().rev() {
        let longest_after = graph.neighbors_directed(n, Direction::Outgoing).map(|m| length[m.index()]).max();
        length[n.index()] = 1 + longest_after.unwrap_or(0);
    }
    length
}

/// [`walk_spread_until`] without groups or a way to stop. Outcomes by node
/// index.
pub async fn walk_spread<N, F, Fut>(graph: &DiGraph<N, ()>, parallelism: usize, work: F) -> Vec<Outcome>
where
    N: Clone + Send + Sync + 'static,
    F: Fn(N, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
{
    let limits = Limits { parallelism, per_group: BTreeMap::new() };
    walk_spread_until(graph, &limits, |_| None, work, || false).await
}

/// Runs every step of `graph` with `work`, within `limits`, with no task
/// of its own between the steps: the step that finishes counts down the
/// steps after it and starts those that became ready (the most urgent
/// first: the longest chain after it, ties in graph order), on the worker
/// it ran on, unless `stopped` says to start nothing more. Outcomes by
/// node index. When it returns, every step's task is over and `work` is
/// dropped, so nothing the steps shared is still held.
///
/// Why: with one task joining every step and starting the next (as the
/// walk did before 2026-11-29), each step's end waited for that task to be
/// woken and scheduled, and its bookkeeping (about 5,000 instructions a
/// step, a sixth of them the join itself) ran there one step at a time: a
/// plan of 100,000
/// resources passed every node through one task. Here the bookkeeping is
/// a short section under a lock that the finishing step's own worker runs,
/// and a step it starts goes to that worker's queue, where the values it
/// just made are still in the cache. The plan walk (whose interrupt's
/// stop starts nothing new) and the apply walk use it.
pub async fn walk_spread_until<N, F, Fut, G, S>(
    graph: &DiGraph<N, ()>,
    limits: &Limits,
    group: G,
    work: F,
    stopped: S,
) -> Vec<Outcome>
where
    N: Clone + Send + Sync + 'static,
    F: Fn(N, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
    G: Fn(&N) -> Option<String>,
    S: Fn() -> bool + Send + Sync + 'static,
{
    let count = graph.node_count();
    let waiting_on: Vec<usize> =
        graph.node_indices().map(|n| graph.edges_directed(n, Direction::Incoming).count()).collect();
    let (bounds, queue) = bounded_groups(graph, limits, group);
    let (closed, finished) = tokio::sync::oneshot::channel::<()>();
    let schedule = Arc::new(std::sync::Mutex::new(Schedule {
        waiting_on,
        ready: vec![std::collections::BinaryHeap::new(); 1 + bounds.len()],
        active: vec![0; bounds.len()],
        running: 0,
        outcomes: vec![Outcome::Skipped; count],
    }));
    let spread = Arc::new(Spread {
        steps: graph.node_indices().map(|n| graph[n].clone()).collect(),
        after: graph
            .node_indices()
            .map(|n| graph.neighbors_directed(n, Direction::Outgoing).map(|m| m.index()).collect())
            .collect(),
        priority: chain_lengths(graph),
        queue,
        bounds,
        parallelism: limits.parallelism.max(1),
        work,
        stopped,
        schedule: Arc::clone(&schedule),
        _closed: closed,
    });
    let first = {
        let mut schedule = spread.schedule();
        for n in 0..count {
            if schedule.waiting_on[n] == 0 {
                spread.make_ready(&mut schedule, n);
            }
        }
        spread.next_to_start(&mut schedule)
    };
    for n in first {
        Spread::start(&spread, n);
    }
    // The steps' tasks hold the only other handles on `spread`: once the
    // last of them is gone, so is `spread`, and with it the sender.
    drop(spread);
    let _ = finished.await;
    std::mem::take(&mut schedule.lock().unwrap_or_else(std::sync::PoisonError::into_inner).outcomes)
}

/// For every step, the queue it waits in when ready: 0 for steps in no
/// group or in a group without a limit (they start whenever there is
/// room), `1 + i` for the `i`th group with a limit; and those limits.
fn bounded_groups<N>(
    graph: &DiGraph<N, ()>,
    limits: &Limits,
    group: impl Fn(&N) -> Option<String>,
) -> (Vec<usize>, Vec<usize>) {
    let mut bounds: Vec<usize> = Vec::new();
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let queue = graph
        .node_indices()
        .map(|n| {
            let Some(name) = group(&graph[n]) else { return 0 };
            let Some(limit) = limits.per_group.get(&name) else { return 0 };
            1 + *numbers.entry(name).or_insert_with(|| {
                bounds.push((*limit).max(1));
                bounds.len() - 1
            })
        })
        .collect();
    (bounds, queue)
}

/// What the steps of a [`walk_spread_until`] share.
struct Spread<N, F, S> {
    /// The steps, by node index.
    steps: Vec<N>,
    /// The steps that depend on each step, by node index.
    after: Vec<Vec<usize>>,
    /// Each step's urgency ([`chain_lengths`]).
    priority: Vec<usize>,
    /// Each step's queue (see [`bounded_groups`]).
    queue: Vec<usize>,
    /// Most steps running at once of each group with a limit.
    bounds: Vec<usize>,
    parallelism: usize,
    work: F,
    /// Whether to start nothing more.
    stopped: S,
    schedule: Arc<std::sync::Mutex<Schedule>>,
    /// Never sent: dropped with the last handle on this, which tells the
    /// walk it is over. Last, so that it goes after `work` (and whatever
    /// `work` holds).
    _closed: tokio::sync::oneshot::Sender<()>,
}

/// The end of one step of a [`walk_spread_until`], run when its task is
/// done with it: when the step returns, and also when it panics (then as a
/// failure), so that the steps after it are never left waiting.
struct Ending<N, F, Fut, S>
where
    N: Clone + Send + Sync + 'static,
    F: Fn(N, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
    S: Fn() -> bool + Send + Sync + 'static,
{
    spread: Arc<Spread<N, F, S>>,
    n: usize,
    ok: bool,
    step: std::marker::PhantomData<fn() -> Fut>,
}

impl<N, F, Fut, S> Drop for Ending<N, F, Fut, S>
where
    N: Clone + Send + Sync + 'static,
    F: Fn(N, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
    S: Fn() -> bool + Send + Sync + 'static,
{
    fn drop(&mut self) {
        for m in self.spread.finish(self.n, self.ok) {
            Spread::start(&self.spread, m);
        }
    }
}

/// Where a [`walk_spread_until`] stands.
struct Schedule {
    /// How many steps each step still waits for.
    waiting_on: Vec<usize>,
    /// Ready steps by queue (see [`bounded_groups`]), each the most urgent
    /// first, ties in graph order.
    ready: Vec<std::collections::BinaryHeap<(usize, Reverse<usize>)>>,
    /// Steps running of each group with a limit.
    active: Vec<usize>,
    running: usize,
    outcomes: Vec<Outcome>,
}

impl<N, F, Fut, S> Spread<N, F, S>
where
    N: Clone + Send + Sync + 'static,
    F: Fn(N, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
    S: Fn() -> bool + Send + Sync + 'static,
{
    fn schedule(&self) -> std::sync::MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn make_ready(&self, schedule: &mut Schedule, n: usize) {
        schedule.ready[self.queue[n]].push((self.priority[n], Reverse(n)));
    }

    /// Takes the ready steps that may start now, counting them as running.
    fn next_to_start(&self, schedule: &mut Schedule) -> Vec<usize> {
        let mut starting = Vec::new();
        while schedule.running < self.parallelism && !(self.stopped)() {
            // The most urgent first step of a queue that may start one
            // more (queue 0 always may).
            let next = schedule
                .ready
                .iter()
                .enumerate()
                .filter(|(q, _)| *q == 0 || schedule.active[q - 1] < self.bounds[q - 1])
                .filter_map(|(q, steps)| steps.peek().map(|first| (*first, q)))
                .max();
            let Some((_, q)) = next else { break };
            let Some((_, Reverse(n))) = schedule.ready[q].pop() else { break };
            if q > 0 {
                schedule.active[q - 1] += 1;
            }
            schedule.running += 1;
            starting.push(n);
        }
        starting
    }

    /// Spawns step `n`; when it ends, it records its outcome and starts
    /// what it made ready. A panic in the step counts as its failure.
    fn start(spread: &Arc<Self>, n: usize) {
        let ending = Ending { spread: Arc::clone(spread), n, ok: false, step: std::marker::PhantomData };
        let step = (spread.work)(spread.steps[n].clone(), spread.priority[n]);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(async move {
            // The whole guard moves into the task (not only the field set).
            let mut ending = ending;
            ending.ok = step.await;
        });
    }

    /// Records step `n`'s outcome; the steps to start now.
    fn finish(&self, n: usize, ok: bool) -> Vec<usize> {
        let mut schedule = self.schedule();
        schedule.running -= 1;
        if self.queue[n] > 0 {
            schedule.active[self.queue[n] - 1] -= 1;
        }
        schedule.outcomes[n] = if ok { Outcome::Done } else { Outcome::Failed };
        if ok {
            for &m in &self.after[n] {
                schedule.waiting_on[m] -= 1;
                if schedule.waiting_on[m] == 0 {
                    self.make_ready(&mut schedule, m);
                }
            }
        }
        self.next_to_start(&mut schedule)
    }
}

/// A fixed number of permits for one kind of work (apply's provider
/// operations), handed to waiters most urgent first rather than first come
/// first served, so that steps waiting for a permit still go in the order
/// the walk starts them: longest chain first.
#[derive(Debug)]
pub struct Slots {
    state: std::sync::Mutex<SlotState>,
}

#[derive(Debug)]
struct SlotState {
    /// Permits no one holds or waits for.
    free: usize,
    /// Waiters by urgency (most urgent first), then by arrival.
    waiting: BTreeMap<(Reverse<usize>, u64), tokio::sync::oneshot::Sender<()>>,
    /// Arrivals so far, to order waiters of the same urgency.
    arrivals: u64,
}

/// One of the permits of [`Slots`], given back when dropped.
#[derive(Debug)]
pub struct SlotPermit<'a> {
    slots: &'a Slots,
}

impl Slots {
    /// `permits` permits (at least one).
    pub fn new(permits: usize) -> Slots {
        let state = SlotState { free: permits.max(1), waiting: BTreeMap::new(), arrivals: 0 };
        Slots { state: std::sync::Mutex::new(state) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for a permit; waiters with a higher `urgency` (see
    /// [`chain_lengths`]) get one first. A waiter that stops waiting (its
    /// future dropped) gives up its place, and a permit handed to it passes
    /// on to the next.
    pub async fn acquire(&self, urgency: usize) -> SlotPermit<'_> {
        let handed = {
            let mut state = self.state();
            if state.free > 0 && state.waiting.is_empty() {
                state.free -= 1;
                return SlotPermit { slots: self };
            }
            let (tx, rx) = tokio::sync::oneshot::channel();
            let arrival = state.arrivals;
            state.arrivals += 1;
            state.waiting.insert((Reverse(urgency), arrival), tx);
            rx
        };
        let mut waiting = Waiting { slots: self, handed: Some(handed) };
        if let Some(handed) = waiting.handed.as_mut() {
            // The sender is never dropped unsent while `self` lives.
            let _ = handed.await;
        }
        waiting.handed = None;
        SlotPermit { slots: self }
    }

    /// A permit, if one is free and nobody waits for one.
    pub fn try_acquire(&self) -> Option<SlotPermit<'_>> {
        let mut state = self.state();
        (state.free > 0 && state.waiting.is_empty()).then(|| {
            state.free -= 1;
            SlotPermit { slots: self }
        })
    }

    /// Gives a permit to the most urgent waiter still waiting, or back.
    fn release(&self) {
        let mut state = self.state();
        while let Some((_, waiter)) = state.waiting.pop_first() {
            if waiter.send(()).is_ok() {
                return;
            }
        }
        state.free += 1;
    }
}

/// A waiter of [`Slots::acquire`]: if its future is dropped while it
/// waits, a permit already handed to it passes on.
struct Waiting<'a> {
    slots: &'a Slots,
    handed: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(mut handed) = self.handed.take() {
            handed.close();
            if handed.try_recv().is_ok() {
                self.slots.release();
            }
        }
    }
}

impl Drop for SlotPermit<'_> {
    fn drop(&mut self) {
        self.slots.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::graph::NodeIndex;
    use std::sync::Mutex;

    type ApplyGraph = DiGraph<String, ()>;

    fn step(name: &str) -> String {
        format!("t.{name}")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slots_go_to_the_most_urgent_waiter_first() {
        let slots = Arc::new(Slots::new(1));
        let held = slots.acquire(0).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for (name, urgency) in [("low", 1), ("high", 9), ("mid", 5), ("high too", 9)] {
            let (mine, order) = (Arc::clone(&slots), Arc::clone(&order));
            waiters.push(tokio::spawn(async move {
                let _permit = mine.acquire(urgency).await;
                order.lock().unwrap().push(name);
            }));
            // Each waits before the next arrives.
            while slots.state().waiting.len() < waiters.len() {
                tokio::task::yield_now().await;
            }
        }
        drop(held);
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["high", "high too", "mid", "low"]);
        assert_eq!(slots.state().free, 1, "every permit came back");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_that_gives_up_passes_its_permit_on() {
        let slots = Arc::new(Slots::new(1));
        let held = slots.acquire(0).await;
        let gives_up = {
            let slots = Arc::clone(&slots);
            tokio::spawn(async move {
                let _permit = slots.acquire(9).await;
                unreachable!("aborted before its turn");
            })
        };
        while slots.state().waiting.is_empty() {
            tokio::task::yield_now().await;
        }
        gives_up.abort();
        assert!(gives_up.await.unwrap_err().is_cancelled());
        drop(held);
        let again = tokio::time::timeout(std::time::Duration::from_secs(10), slots.acquire(1)).await;
        assert!(again.is_ok(), "the permit was lost");
        drop(again);
        assert_eq!(slots.state().free, 1);
    }
    async fn spread(g: &ApplyGraph, parallelism: usize) -> (Vec<Outcome>, Vec<String>) {
        let order = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&order);
        let outcomes = walk_spread(g, parallelism, move |s: String, _| {
            seen.lock().unwrap().push(s.clone());
            async move {
                assert!(!s.ends_with(".panics"), "the step {s} panics");
                !s.ends_with(".fails")
            }
        })
        .await;
        let order = order.lock().unwrap().clone();
        (outcomes, order)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spread_walk_runs_in_dependency_order_and_skips_after_a_failure_or_a_panic() {
        let mut g = ApplyGraph::new();
        let names = ["a", "b", "c", "fails", "after_fail", "panics", "after_panic", "after_both"];
        let n: Vec<NodeIndex> = names.iter().map(|name| g.add_node(step(name))).collect();
        for (from, to) in [(0, 1), (1, 2), (3, 4), (5, 6), (2, 7), (6, 7)] {
            g.add_edge(n[from], n[to], ());
        }
        let (outcomes, order) = spread(&g, 4).await;
        let pos = |name: &str| order.iter().position(|s| *s == step(name)).unwrap();
        assert!(pos("a") < pos("b") && pos("b") < pos("c"), "{order:?}");
        use Outcome::{Done, Failed, Skipped};
        assert_eq!(outcomes, [Done, Done, Done, Failed, Skipped, Failed, Skipped, Skipped]);
        assert_eq!(order.len(), 5, "only the steps that could run started: {order:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spread_walk_starts_the_longest_chain_first_and_ends_on_an_empty_graph() {
        // With room for one step, the chain a → b → c goes
        // first while it is longer than what else is ready.
        let mut g = ApplyGraph::new();
        let names = ["x", "y", "a", "b", "c"];
        let n: Vec<NodeIndex> = names.iter().map(|name| g.add_node(step(name))).collect();
        g.add_edge(n[2], n[3], ());
        g.add_edge(n[3], n[4], ());
        let (_, order) = spread(&g, 1).await;
        assert_eq!(order, ["t.a", "t.b", "t.x", "t.y", "t.c"]);
        let (outcomes, order) = spread(&ApplyGraph::new(), 3).await;
        assert!(outcomes.is_empty() && order.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_spread_walk_runs_independent_steps_together_up_to_the_limit() {
        let mut g = ApplyGraph::new();
        for i in 0..40 {
            g.add_node(step(&format!("n{i}")));
        }
        // (running now, most at once); each step waits until a second one
        // runs (or gives up after a while), so overlap is seen without
        // relying on timing.
        let active = Arc::new(Mutex::new((0usize, 0usize)));
        let counter = Arc::clone(&active);
        let outcomes = walk_spread(&g, 3, move |_, _| {
            let counter = Arc::clone(&counter);
            async move {
                {
                    let mut a = counter.lock().unwrap();
                    a.0 += 1;
                    a.1 = a.1.max(a.0);
                }
                for _ in 0..2000 {
                    if counter.lock().unwrap().1 >= 2 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                counter.lock().unwrap().0 -= 1;
                true
            }
        })
        .await;
        let (_, max) = *active.lock().unwrap();
        assert!((2..=3).contains(&max), "max concurrent steps {max}");
        assert!(outcomes.iter().all(|o| *o == Outcome::Done));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spread_walk_holds_a_limited_group_back_but_not_other_steps() {
        // Six p steps (limit 2), two q steps (a group without a limit) and
        // two steps in no group; each waits until three steps overlap (or
        // gives up after a while), so overlap is seen without timing.
        let mut g = ApplyGraph::new();
        for name in ["p0", "p1", "p2", "p3", "p4", "p5", "q0", "q1", "n0", "n1"] {
            g.add_node(step(name));
        }
        // (running p, most p at once, most steps at once, running)
        let active = Arc::new(Mutex::new((0usize, 0usize, 0usize, 0usize)));
        let counter = Arc::clone(&active);
        let limits = Limits { parallelism: 8, per_group: [("p".to_string(), 2)].into() };
        let group = |s: &String| match &s[2..3] {
            "n" => None,
            g => Some(g.to_string()),
        };
        let outcomes = walk_spread_until(
            &g,
            &limits,
            group,
            move |s: String, _| {
                let counter = Arc::clone(&counter);
                async move {
                    let is_p = s.starts_with("t.p");
                    {
                        let mut a = counter.lock().unwrap();
                        a.3 += 1;
                        a.2 = a.2.max(a.3);
                        if is_p {
                            a.0 += 1;
                            a.1 = a.1.max(a.0);
                        }
                    }
                    for _ in 0..2000 {
                        if counter.lock().unwrap().2 >= 3 {
                            break;
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    let mut a = counter.lock().unwrap();
                    a.3 -= 1;
                    if is_p {
                        a.0 -= 1;
                    }
                    true
                }
            },
            || false,
        )
        .await;
        assert!(outcomes.iter().all(|o| *o == Outcome::Done), "{outcomes:?}");
        let (_, max_p, max_all, _) = *active.lock().unwrap();
        assert_eq!(max_p, 2, "the p group never exceeds its limit");
        assert!(max_all >= 3, "other steps run beside the p steps: {max_all}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spread_walk_with_a_full_group_starts_the_most_urgent_step_that_may_start() {
        // With room for one p step, p_long (chain of 3) starts first, then
        // the urgency order goes on across groups.
        let mut g = ApplyGraph::new();
        let names = ["px", "nx", "pa", "pb", "nc"];
        let n: Vec<NodeIndex> = names.iter().map(|name| g.add_node(step(name))).collect();
        g.add_edge(n[2], n[3], ());
        g.add_edge(n[3], n[4], ());
        let order = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&order);
        let limits = Limits { parallelism: 1, per_group: [("p".to_string(), 1)].into() };
        let group = |s: &String| Some(s[2..3].to_string());
        walk_spread_until(
            &g,
            &limits,
            group,
            move |s: String, urgency| {
                seen.lock().unwrap().push((s, urgency));
                async { true }
            },
            || false,
        )
        .await;
        let order = order.lock().unwrap().clone();
        let expected = [("t.pa", 3), ("t.pb", 2), ("t.px", 1), ("t.nx", 1), ("t.nc", 1)];
        assert_eq!(order, expected.map(|(s, u)| (s.to_string(), u)));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_spread_walk_starts_nothing_more_and_drops_its_work_before_it_returns() {
        // a → b, and c: with room for one step at a time, a runs first and
        // asks the walk to stop; neither b nor c starts. The work holds a
        // handle that must be gone once the walk returns (the apply takes
        // its shared data back then).
        let mut g = ApplyGraph::new();
        let a = g.add_node(step("a"));
        g.add_node(step("b"));
        g.add_node(step("c"));
        g.add_edge(a, NodeIndex::new(1), ());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let started = Arc::new(Mutex::new(Vec::new()));
        let (stopper, seen, stopped) = (Arc::clone(&stop), Arc::clone(&started), Arc::clone(&stop));
        let limits = Limits { parallelism: 1, per_group: BTreeMap::new() };
        let outcomes = walk_spread_until(
            &g,
            &limits,
            |_| None,
            move |s: String, urgency| {
                seen.lock().unwrap().push((s, urgency));
                stopper.store(true, std::sync::atomic::Ordering::SeqCst);
                async { true }
            },
            move || stopped.load(std::sync::atomic::Ordering::SeqCst),
        )
        .await;
        assert_eq!(*started.lock().unwrap(), [("t.a".to_string(), 2)]);
        assert_eq!(outcomes, [Outcome::Done, Outcome::Skipped, Outcome::Skipped]);
        assert_eq!(Arc::strong_count(&stop), 1, "the walk's work and stop are dropped");
        assert_eq!(Arc::strong_count(&started), 1);
    }
}
