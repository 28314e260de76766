//! The executor with an in-process fake provider: what reaches the state,
//! in which order, and what happens after a failure.

use std::sync::Arc;

use super::*;
use crate::graph::DependencyGraph;
use crate::plan::{PlanOptions, Planner};
use crate::state::LocalBackend;
use crate::testing::Fake;

/// Plans and applies `hcl` over `state` in a fresh directory; returns the
/// report, the new state and the calls the provider saw.
fn run(hcl: &str, state: State, fake: Fake, destroy: bool) -> (ApplyReport, State, Vec<(String, &'static str)>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
    let config = crate::config::load(dir.path()).unwrap_or_else(|d| panic!("{}", crate::diag::Diagnostics(d)));
    let graph = DependencyGraph::build(&config).unwrap();
    let fake = Arc::new(fake);
    let providers: Providers = [("fake".to_string(), Arc::clone(&fake) as Arc<dyn Provider>)].into();
    let plan = Planner {
        config: &config,
        graph: &graph,
        providers: &providers,
        state: &state,
        variables: BTreeMap::new(),
        options: PlanOptions { destroy, skip_refresh: false },
    }
    .plan()
    .unwrap_or_else(|d| panic!("{}", crate::diag::Diagnostics(d)));
    let backend = LocalBackend::open(&dir.path().join("cairn.state.json")).unwrap();
    let applier = Applier { config, graph, providers, plan, variables: BTreeMap::new(), parallelism: 4 };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (report, state) = runtime.block_on(applier.apply(state, backend));
    (report, state, fake.calls())
}

const CHAIN: &str = r#"
resource "fake_thing" "a" {
  name = "a"
}
resource "fake_thing" "b" {
  name = "b-${fake_thing.a.id}"
}
resource "fake_thing" "c" {
  name = "c"
}
"#;

fn position(calls: &[(String, &'static str)], name: &str, kind: &str) -> usize {
    calls
        .iter()
        .position(|(n, k)| n == name && *k == kind)
        .unwrap_or_else(|| panic!("no {kind} of {name} in {calls:?}"))
}

#[test]
fn creates_follow_dependencies_and_destroys_reverse_them() {
    let (report, state, calls) = run(CHAIN, State::new(), Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!((report.added, report.changed, report.destroyed), (3, 0, 0));
    assert!(position(&calls, "a", "create") < position(&calls, "b-id-a", "create"));
    let b = state.get(&"fake_thing.b".parse().unwrap()).unwrap();
    assert_eq!(b.attributes["name"], "b-id-a", "b was planned with an unknown and applied with a's real id");
    assert_eq!(b.dependencies, vec!["fake_thing.a".to_string()]);

    let (report, state, calls) = run(CHAIN, state, Fake::new(), true);
    assert_eq!(report.destroyed, 3);
    assert!(state.resources.is_empty());
    assert!(position(&calls, "b-id-a", "delete") < position(&calls, "a", "delete"), "{calls:?}");
}

#[test]
fn a_failed_create_is_tainted_its_dependents_never_start_and_the_rest_completes() {
    let fake = Fake { fail_create: vec!["a".to_string()], ..Fake::new() };
    let (report, state, calls) = run(CHAIN, State::new(), fake, false);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert!(report.errors[0].summary.contains("creating a failed half-way"), "{}", report.errors[0]);
    let a = state.get(&"fake_thing.a".parse().unwrap()).expect("the partial object is recorded");
    assert_eq!(a.status, InstanceStatus::Tainted);
    assert!(state.get(&"fake_thing.b".parse().unwrap()).is_none());
    assert!(!calls.iter().any(|(n, _)| n.starts_with("b-")), "b depends on a and must not start: {calls:?}");
    assert!(state.get(&"fake_thing.c".parse().unwrap()).is_some(), "independent c completes");

    // The next run replaces the tainted object: destroy, then create.
    let (report, state, calls) = run(CHAIN, state, Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(position(&calls, "a", "delete") < position(&calls, "a", "create"), "{calls:?}");
    assert_eq!(state.get(&"fake_thing.a".parse().unwrap()).unwrap().status, InstanceStatus::Ready);
    assert!(state.get(&"fake_thing.b".parse().unwrap()).is_some());
}

#[test]
fn a_replace_destroys_before_it_creates_and_updates_what_refers_to_it() {
    let (_, state, _) = run(CHAIN, State::new(), Fake::new(), false);
    let renamed = CHAIN.replace("name = \"a\"", "name = \"a2\"");
    let (report, state, calls) = run(&renamed, state, Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    // a is replaced; b's name contains a's id, which changes, so b is replaced too.
    assert!(position(&calls, "b-id-a", "delete") < position(&calls, "a", "delete"), "{calls:?}");
    assert!(position(&calls, "a", "delete") < position(&calls, "a2", "create"), "{calls:?}");
    assert!(position(&calls, "a2", "create") < position(&calls, "b-id-a2", "create"), "{calls:?}");
    assert_eq!(state.get(&"fake_thing.b".parse().unwrap()).unwrap().attributes["name"], "b-id-a2");
}
