//! The engine with in-process fake providers: a whole run, and refresh and
//! plan walking the graph in parallel.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::apply::events::Collect;
use crate::provider::{
    ApplyRequest, ApplyResponse, CallFuture, PlanRequest, PlanResponse, Provider, ReadResponse, ready,
};
use crate::testing::{self, Fake};

/// `count` independent `fake_thing`s.
fn independent(count: usize) -> String {
    (0..count).map(|i| format!("resource \"fake_thing\" \"t{i}\" {{\n  name = \"t{i}\"\n}}\n")).collect()
}

fn change(parallelism: usize) -> RunOptions {
    RunOptions { parallelism, intent: Intent::Change, ..RunOptions::default() }
}

#[test]
fn a_run_plans_applies_commits_and_then_has_nothing_to_do() {
    let fake = Arc::new(Fake::new());
    let engine = Engine::in_process(testing::providers(fake.clone())).unwrap();
    let (_dir, ws) = testing::workspace(&independent(3));
    let events = Arc::new(Collect::default());
    let planned = engine.plan(&ws, change(10), true, events.as_ref()).unwrap();
    assert_eq!(planned.plan.counts(), (3, 0, 0));
    let (report, state) = engine.apply(&ws, planned, events.clone());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!((report.added, state.resources.len()), (3, 3));
    let on_disk = engine.read_state(&ws).unwrap().expect("the state was committed");
    assert_eq!(on_disk, state);

    let again = engine.plan(&ws, change(10), true, events.as_ref()).unwrap();
    assert!(!again.plan.has_changes(), "{:?}", again.plan.changes);
    assert_eq!(fake.calls().len(), 3, "the second run called no apply");
}

#[test]
fn a_second_run_waits_for_the_lock_of_the_first() {
    let engine = Engine::in_process(testing::providers(Arc::new(Fake::new()))).unwrap();
    let (_dir, ws) = testing::workspace(&independent(1));
    let _first = engine.plan(&ws, change(1), true, &Collect::default()).unwrap();
    let second = engine.plan(&ws, change(1), true, &Collect::default());
    let message = format!("{:#}", second.err().expect("the state is locked"));
    assert!(message.contains("locked"), "{message}");
    // A run that only looks takes no lock.
    engine.plan(&ws, RunOptions::default(), false, &Collect::default()).unwrap();
}

/// `fake_thing` whose refresh and plan wait, without a thread, until
/// `together` calls of the same kind are in flight at once (or a long
/// while passes), and count how many ever were.
struct Gathering {
    fake: Fake,
    schema: crate::schema::ProviderSchema,
    together: usize,
    /// (reads in flight, most reads at once, plans in flight, most plans at once)
    counts: Mutex<[usize; 4]>,
}

impl Gathering {
    fn new(together: usize) -> Gathering {
        let fake = Fake::new();
        Gathering { schema: fake.schema.clone(), fake, together, counts: Mutex::new([0; 4]) }
    }

    /// Counts a call of kind `at` (0: read, 2: plan) in flight until enough
    /// others are, then lets it go.
    async fn gather(&self, at: usize) {
        {
            let mut c = self.counts.lock().unwrap();
            c[at] += 1;
            c[at + 1] = c[at + 1].max(c[at]);
        }
        // Only a guard against hanging when the calls cannot all be in
        // flight together; the assertions are on the counts.
        for _ in 0..6000 {
            if self.counts.lock().unwrap()[at + 1] >= self.together {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.counts.lock().unwrap()[at] -= 1;
    }

    fn most(&self) -> (usize, usize) {
        let c = self.counts.lock().unwrap();
        (c[1], c[3])
    }
}

impl Provider for Gathering {
    fn name(&self) -> &str {
        "fake"
    }

    fn schema(&self) -> &crate::schema::ProviderSchema {
        &self.schema
    }

    fn validate_resource<'a>(&'a self, t: &'a str, c: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        self.fake.validate_resource(t, c)
    }

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        Box::pin(async move {
            self.gather(2).await;
            Ok(self.fake.plan(r))
        })
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        ready(Ok(self.fake.apply(r)))
    }

    fn read_resource<'a>(&'a self, t: &'a str, current: &'a Value, p: &'a [u8]) -> CallFuture<'a, ReadResponse> {
        Box::pin(async move {
            self.gather(0).await;
            self.fake.read_resource(t, current, p).await
        })
    }

    fn read_data_source<'a>(&'a self, t: &'a str, c: &'a Value) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        self.fake.read_data_source(t, c)
    }

    fn upgrade_state<'a>(&'a self, t: &'a str, v: u64, raw: &'a str) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        self.fake.upgrade_state(t, v, raw)
    }
}

#[test]
fn independent_resources_are_refreshed_and_planned_at_the_same_time() {
    const N: usize = 12;
    let (_dir, ws) = testing::workspace(&independent(N));
    // Create them first, so that the next plan refreshes them too.
    let creator = Engine::in_process(testing::providers(Arc::new(Fake::new()))).unwrap();
    let planned = creator.plan(&ws, change(N), true, &Collect::default()).unwrap();
    let (report, _) = creator.apply(&ws, planned, Arc::new(Collect::default()));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    drop(creator);

    let gathering = Arc::new(Gathering::new(N));
    let engine = Engine::in_process(testing::providers(gathering.clone())).unwrap();
    let planned = engine.plan(&ws, change(N), true, &Collect::default()).unwrap();
    assert!(!planned.plan.has_changes());
    assert_eq!(gathering.most(), (N, N), "(most reads, most plans) in flight at once");
}

#[test]
fn parallelism_bounds_how_many_are_planned_at_once() {
    let (_dir, ws) = testing::workspace(&independent(9));
    let gathering = Arc::new(Gathering::new(3));
    let engine = Engine::in_process(testing::providers(gathering.clone())).unwrap();
    engine.plan(&ws, change(3), true, &Collect::default()).unwrap();
    assert_eq!(gathering.most().1, 3, "most plans at once with -parallelism=3");
}

#[test]
fn a_plan_reads_the_same_whatever_order_its_calls_finish_in() {
    // A chain and independent resources: the plan lists changes in the
    // graph's stable order, not the order the tasks happened to end.
    let hcl = format!("{}resource \"fake_thing\" \"z\" {{\n  name = fake_thing.t0.id\n}}\n", independent(6));
    let (_dir, ws) = testing::workspace(&hcl);
    let engine = Engine::in_process(testing::providers(Arc::new(Fake::new()))).unwrap();
    let order = |planned: Planned| planned.plan.changes.iter().map(|c| c.addr.to_string()).collect::<Vec<_>>();
    let first = order(engine.plan(&ws, change(10), false, &Collect::default()).unwrap());
    for _ in 0..5 {
        assert_eq!(order(engine.plan(&ws, change(10), false, &Collect::default()).unwrap()), first);
    }
    let z = first.iter().position(|a| a == "fake_thing.z").unwrap();
    let t0 = first.iter().position(|a| a == "fake_thing.t0").unwrap();
    assert!(t0 < z, "{first:?}");
}

#[test]
fn an_interrupted_plan_stops_with_nothing_written() {
    let fake = Arc::new(Fake::new());
    let engine = Engine::in_process(testing::providers(fake.clone())).unwrap();
    let (_dir, ws) = testing::workspace(&independent(3));
    engine.interrupt().stop();
    let err = engine.plan(&ws, change(10), true, &Collect::default()).err().expect("the plan is refused");
    assert_eq!(err.to_string(), "Interrupted: the plan stopped; nothing was changed");
    assert!(engine.read_state(&ws).unwrap().is_none(), "no state was written");
}
