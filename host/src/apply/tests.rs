//! The executor with an in-process fake provider: what reaches the state,
//! in which order, and what happens after a failure.

use std::sync::{Arc, Mutex};

use super::*;
use crate::engine::{Engine, Intent, RunOptions, Workspace};
use crate::provider::{CallFuture, PlanRequest, PlanResponse, Provider, ready};
use crate::schema::{Attribute, Block, ProviderSchema};
use crate::state::LocalBackend;
use crate::testing::{self, Fake, fake_provider_basics};
use crate::value::Type;

/// Drops every event.
struct Quiet;

impl EventSink for Quiet {
    fn emit(&self, _: Event) {}
    fn diagnostic(&self, _: &Diagnostic) {}
}

/// A configuration directory whose state lives on from run to run.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project { dir: tempfile::tempdir().unwrap() }
    }

    /// Plans and applies `hcl` with `fake` as the provider; returns the
    /// report, the new state and the calls the provider saw.
    fn run(&self, hcl: &str, fake: Fake, destroy: bool) -> (ApplyReport, State, Vec<(String, &'static str)>) {
        let fake = Arc::new(fake);
        let engine = Engine::in_process(testing::providers(Arc::clone(&fake) as Arc<dyn Provider>)).unwrap();
        let (report, state) = self.apply_with(&engine, hcl, destroy, 4);
        (report, state, fake.calls())
    }

    /// Plans and applies `hcl` with `engine`, `parallelism` steps at once.
    fn apply_with(&self, engine: &Engine, hcl: &str, destroy: bool, parallelism: usize) -> (ApplyReport, State) {
        std::fs::write(self.dir.path().join("main.tf"), hcl).unwrap();
        let ws = Workspace::load(self.dir.path(), &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let options = RunOptions { parallelism, destroy, intent: Intent::Change, ..RunOptions::default() };
        let planned = engine.plan(&ws, options, true, &Quiet).unwrap_or_else(|e| panic!("{e:#}"));
        engine.apply(&ws, planned, Arc::new(Quiet))
    }
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
    let project = Project::new();
    let (report, state, calls) = project.run(CHAIN, Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!((report.added, report.changed, report.destroyed), (3, 0, 0));
    assert!(position(&calls, "a", "create") < position(&calls, "b-id-a", "create"));
    let b = state.get(&"fake_thing.b".parse().unwrap()).unwrap();
    assert_eq!(
        b.attributes.to_json().unwrap()["name"],
        "b-id-a",
        "b was planned with an unknown and applied with a's real id"
    );
    assert_eq!(b.dependencies, vec![crate::addr::ResourceAddr::managed("fake_thing", "a")]);

    let (report, state, calls) = project.run(CHAIN, Fake::new(), true);
    assert_eq!(report.destroyed, 3);
    assert!(state.resources.is_empty());
    assert!(position(&calls, "b-id-a", "delete") < position(&calls, "a", "delete"), "{calls:?}");
}

#[test]
fn a_failed_create_is_tainted_its_dependents_never_start_and_the_rest_completes() {
    let fake = Fake { fail_create: vec!["a".to_string()], ..Fake::new() };
    let project = Project::new();
    let (report, state, calls) = project.run(CHAIN, fake, false);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert!(report.errors[0].summary.contains("creating a failed half-way"), "{}", report.errors[0]);
    let a = state.get(&"fake_thing.a".parse().unwrap()).expect("the partial object is recorded");
    assert_eq!(a.status, InstanceStatus::Tainted);
    assert!(state.get(&"fake_thing.b".parse().unwrap()).is_none());
    assert!(!calls.iter().any(|(n, _)| n.starts_with("b-")), "b depends on a and must not start: {calls:?}");
    assert!(state.get(&"fake_thing.c".parse().unwrap()).is_some(), "independent c completes");

    // The next run replaces the tainted object: destroy, then create.
    let (report, state, calls) = project.run(CHAIN, Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(position(&calls, "a", "delete") < position(&calls, "a", "create"), "{calls:?}");
    assert_eq!(state.get(&"fake_thing.a".parse().unwrap()).unwrap().status, InstanceStatus::Ready);
    assert!(state.get(&"fake_thing.b".parse().unwrap()).is_some());
}

#[test]
fn a_replace_destroys_before_it_creates_and_updates_what_refers_to_it() {
    let project = Project::new();
    project.run(CHAIN, Fake::new(), false);
    let renamed = CHAIN.replace("name = \"a\"", "name = \"a2\"");
    let (report, state, calls) = project.run(&renamed, Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    // a is replaced; b's name contains a's id, which changes, so b is replaced too.
    assert!(position(&calls, "b-id-a", "delete") < position(&calls, "a", "delete"), "{calls:?}");
    assert!(position(&calls, "a", "delete") < position(&calls, "a2", "create"), "{calls:?}");
    assert!(position(&calls, "a2", "create") < position(&calls, "b-id-a2", "create"), "{calls:?}");
    assert_eq!(state.get(&"fake_thing.b".parse().unwrap()).unwrap().attributes.to_json().unwrap()["name"], "b-id-a2");
}

/// One create: (name, its deps, the deps found on disk then, whether its
/// own intent was on disk then, how many other intents were pending there).
type Seen = (String, Vec<String>, Vec<String>, bool, usize);

/// `fake_thing`: `name`, `deps` (list of strings), computed `id`. Its apply
/// reads the state from disk (the state file and the apply's journal) and
/// records which of the thing's `deps` it found, and whether the journal
/// holds the intent of its own create.
struct Watcher {
    schema: ProviderSchema,
    state_file: std::path::PathBuf,
    seen: Mutex<Vec<Seen>>,
}

impl Watcher {
    fn new(state_file: std::path::PathBuf) -> Watcher {
        let block = Block {
            attributes: [
                ("name".to_string(), Attribute::required(Type::String)),
                ("deps".to_string(), Attribute::optional(Type::List(Box::new(Type::String)))),
                ("id".to_string(), Attribute::computed(Type::String)),
            ]
            .into(),
            ..Block::default()
        };
        let schema = ProviderSchema {
            resources: [("fake_thing".to_string(), Schema { version: 0, block })].into(),
            ..ProviderSchema::default()
        };
        Watcher { schema, state_file, seen: Mutex::new(Vec::new()) }
    }
}

impl Provider for Watcher {
    fake_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        let mut planned = r.proposed_new_state;
        if let Value::Object(m) = &mut planned
            && m.get("id").is_none_or(Value::is_null)
        {
            m.insert("id".into(), Value::unknown());
        }
        ready(Ok(PlanResponse { planned_state: planned, ..PlanResponse::default() }))
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        let mut state = r.planned_state;
        let on_disk = LocalBackend::open_read_only(&self.state_file).read().unwrap();
        if let Value::Object(m) = &mut state {
            let name = m.get("name").unwrap().as_str().unwrap().to_string();
            let deps: Vec<String> = match m.get("deps").unwrap() {
                Value::List(v) => v.iter().map(|d| d.as_str().unwrap().to_string()).collect(),
                _ => Vec::new(),
            };
            let ids: Vec<serde_json::Value> =
                on_disk.resources.iter().map(|r| r.attributes.to_json().unwrap()["id"].clone()).collect();
            let found = deps.iter().filter(|d| ids.contains(&serde_json::json!(d))).cloned().collect();
            let intent = on_disk.pending.iter().any(|p| p.idempotency_key == r.idempotency_key);
            let others = on_disk.pending.len() - usize::from(intent);
            self.seen.lock().unwrap().push((name.clone(), deps, found, intent, others));
            m.insert("id".into(), Value::string(name));
        }
        ready(Ok(ApplyResponse { new_state: state, ..Default::default() }))
    }
}

#[test]
fn every_dependency_is_on_disk_before_its_dependents_start() {
    // Fans of independent things finishing together, each feeding the next
    // level: writes are grouped, and still no dependent starts early.
    let mut hcl = String::new();
    for level in 0..4 {
        for i in 0..12 {
            let deps: Vec<String> = if level == 0 {
                Vec::new()
            } else {
                vec![
                    format!("fake_thing.l{}_{i}.id", level - 1),
                    format!("fake_thing.l{}_{}.id", level - 1, (i + 1) % 12),
                ]
            };
            hcl.push_str(&format!(
                "resource \"fake_thing\" \"l{level}_{i}\" {{\n  name = \"l{level}_{i}\"\n  deps = [{}]\n}}\n",
                deps.join(", ")
            ));
        }
    }
    let project = Project::new();
    let state_file = project.dir.path().join(crate::engine::STATE_FILE);
    let watcher = Arc::new(Watcher::new(state_file.clone()));
    let engine = Engine::in_process(testing::providers(watcher.clone())).unwrap();
    let (report, state) = project.apply_with(&engine, &hcl, false, 12);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.added, 48);
    let seen = watcher.seen.lock().unwrap();
    assert_eq!(seen.len(), 48);
    for (name, deps, found, intent, _) in seen.iter() {
        assert_eq!(deps, found, "{name} started before its dependencies were written");
        assert!(intent, "{name}'s create was not journaled before the provider was called");
    }
    let on_disk = LocalBackend::open_read_only(&state_file).read().unwrap();
    assert_eq!(on_disk.resources.len(), 48);
    assert!(on_disk.pending.is_empty(), "{:?}", on_disk.pending);
    assert_eq!(on_disk.serial, state.serial, "the state returned is the one on disk");
    assert!(!state_file.with_extension("json.journal").exists(), "the journal is deleted at the end");
}

#[test]
fn intents_journaled_ahead_of_their_calls_are_bounded() {
    // One operation at a time, many steps ready: while a call runs, other
    // steps journal their intents (sharing flushes), but no more than
    // `INTENTS_PER_OPERATION` (24) per operation slot, so that a crash leaves only so many
    // pending operations whose calls never started.
    let hcl: String =
        (0..64).map(|i| format!("resource \"fake_thing\" \"t{i}\" {{\n  name = \"t{i}\"\n}}\n")).collect();
    let project = Project::new();
    let watcher = Arc::new(Watcher::new(project.dir.path().join(crate::engine::STATE_FILE)));
    let engine = Engine::in_process(testing::providers(watcher.clone())).unwrap();
    let (report, _) = project.apply_with(&engine, &hcl, false, 1);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let seen = watcher.seen.lock().unwrap();
    assert_eq!(seen.len(), 64);
    for (name, _, _, intent, others) in seen.iter() {
        assert!(intent, "{name}'s create was not journaled before the provider was called");
        assert!(*others <= super::INTENTS_PER_OPERATION, "{others} other intents were pending during {name}'s call");
    }
}

/// `fake_thing` whose apply waits, without a thread, until every one of
/// `expected` calls is in flight at once.
struct Waiter {
    fake: Fake,
    schema: ProviderSchema,
    expected: usize,
    barrier: tokio::sync::Barrier,
    /// (in flight now, most in flight at once, calls that gave up waiting)
    counts: Mutex<(usize, usize, usize)>,
}

impl Provider for Waiter {
    fake_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(self.fake.plan(r)))
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        Box::pin(async move {
            {
                let mut c = self.counts.lock().unwrap();
                c.0 += 1;
                c.1 = c.1.max(c.0);
            }
            // Only a guard against hanging if calls cannot all be in
            // flight; the assertion is on the counts.
            if tokio::time::timeout(std::time::Duration::from_secs(120), self.barrier.wait()).await.is_err() {
                self.counts.lock().unwrap().2 += 1;
            }
            self.counts.lock().unwrap().0 -= 1;
            Ok(self.fake.apply(r))
        })
    }
}

#[test]
fn calls_waiting_on_a_provider_hold_no_thread() {
    const N: usize = 256;
    let hcl: String = (0..N).map(|i| format!("resource \"fake_thing\" \"t{i}\" {{\n  name = \"t{i}\"\n}}\n")).collect();
    let waiter = Arc::new(Waiter {
        fake: Fake::new(),
        expected: N,
        barrier: tokio::sync::Barrier::new(N),
        counts: Mutex::new((0, 0, 0)),
        schema: Fake::new().schema,
    });
    // Two workers and at most four threads for blocking work: far fewer
    // threads than calls.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let engine = Engine::in_process_on(testing::providers(waiter.clone()), runtime);
    let (report, state) = Project::new().apply_with(&engine, &hcl, false, N);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(state.resources.len(), N);
    let (_, most, gave_up) = *waiter.counts.lock().unwrap();
    assert_eq!((most, gave_up), (waiter.expected, 0), "all {N} calls were in flight at once on 6 threads");
}

#[test]
fn an_interrupted_apply_starts_nothing_new_and_commits_what_it_did() {
    let project = Project::new();
    let fake = Arc::new(Fake::new());
    let engine = Engine::in_process(testing::providers(Arc::clone(&fake) as Arc<dyn Provider>)).unwrap();
    std::fs::write(project.dir.path().join("main.tf"), CHAIN).unwrap();
    let ws = Workspace::load(project.dir.path(), &[]).unwrap();
    let options = RunOptions { intent: Intent::Change, ..RunOptions::default() };
    let planned = engine.plan(&ws, options, true, &Quiet).unwrap();
    // Ctrl-C between the plan and the first provider call.
    engine.interrupt().stop();
    let (report, state) = engine.apply(&ws, planned, Arc::new(Quiet));
    assert!(report.interrupted);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(fake.calls().is_empty(), "nothing started: {:?}", fake.calls());
    let not_started: Vec<&str> = report.not_started.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(not_started, ["fake_thing.a", "fake_thing.b", "fake_thing.c"]);
    assert!(report.cancelled.is_empty());
    // The state was committed (nothing pending, no journal left).
    let on_disk = LocalBackend::open_read_only(&ws.state_path()).read().unwrap();
    assert_eq!(on_disk.serial, state.serial);
    assert!(on_disk.pending.is_empty() && on_disk.resources.is_empty());
}

/// The fake, except that its creates and updates answer `size = 7`
/// whatever was planned (a contract violation that still describes a
/// usable object), or with `null_answer` nothing at all.
struct Liar {
    schema: ProviderSchema,
    fake: Fake,
    null_answer: bool,
}

impl Liar {
    fn new(null_answer: bool) -> Liar {
        let fake = Fake::new();
        Liar { schema: fake.schema.clone(), fake, null_answer }
    }
}

impl Provider for Liar {
    fake_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(self.fake.plan(r)))
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        let deleting = r.planned_state.is_null();
        let mut response = self.fake.apply(r);
        if let Value::Object(attrs) = &mut response.new_state {
            attrs.insert("size".into(), Value::int(7));
        }
        if self.null_answer && !deleting {
            response.new_state = Value::Null;
        }
        ready(Ok(response))
    }
}

const SIZED: &str = r#"
resource "fake_thing" "a" {
  name = "a"
  size = 1
}
"#;

#[test]
fn an_answer_that_breaks_the_contract_but_describes_an_object_is_kept_tainted() {
    let project = Project::new();
    let liar = Arc::new(Liar::new(false));
    let engine = Engine::in_process(testing::providers(liar as Arc<dyn Provider>)).unwrap();
    let (report, state) = project.apply_with(&engine, SIZED, false, 4);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let error = &report.errors[0];
    assert!(error.summary.contains("produced an inconsistent result after apply for fake_thing.a: .size"), "{error}");
    assert!(error.detail.contains("it was recorded in the state as tainted: the next plan replaces it"), "{error}");
    let a = state.get(&"fake_thing.a".parse().unwrap()).expect("the object is not orphaned");
    assert_eq!((a.status, &a.attributes.to_json().unwrap()["size"]), (InstanceStatus::Tainted, &serde_json::json!(7)));

    // The next run replaces it.
    let (report, state, calls) = project.run(SIZED, Fake::new(), false);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(position(&calls, "a", "delete") < position(&calls, "a", "create"), "{calls:?}");
    assert_eq!(state.get(&"fake_thing.a".parse().unwrap()).unwrap().status, InstanceStatus::Ready);
}

#[test]
fn an_answer_with_no_usable_object_leaves_the_state_as_it_was() {
    let project = Project::new();
    let liar = Arc::new(Liar::new(true));
    let engine = Engine::in_process(testing::providers(liar as Arc<dyn Provider>)).unwrap();
    let (report, state) = project.apply_with(&engine, SIZED, false, 4);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert!(report.errors[0].detail.contains("Nothing from this answer was recorded in the state."));
    assert!(state.resources.is_empty());
}

/// The fake, except that the create of `hang` never answers.
struct Hang {
    schema: ProviderSchema,
    fake: Fake,
    /// Set once the create of `hang` was called.
    entered: Arc<std::sync::atomic::AtomicBool>,
}

impl Provider for Hang {
    fake_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(self.fake.plan(r)))
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        if r.prior_state.is_null() && r.planned_state.get_attr("name").as_str() == Some("hang") {
            self.entered.store(true, std::sync::atomic::Ordering::SeqCst);
            return Box::pin(std::future::pending());
        }
        ready(Ok(self.fake.apply(r)))
    }
}

#[test]
fn a_second_interrupt_cancels_a_call_under_way_and_its_intent_stays_pending() {
    let project = Project::new();
    let fake = Fake::new();
    let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hang = Hang { schema: fake.schema.clone(), fake, entered: Arc::clone(&entered) };
    let engine = Engine::in_process(testing::providers(Arc::new(hang) as Arc<dyn Provider>)).unwrap();
    let hcl = "resource \"fake_thing\" \"hang\" {\n  name = \"hang\"\n}\n";
    std::fs::write(project.dir.path().join("main.tf"), hcl).unwrap();
    let ws = Workspace::load(project.dir.path(), &[]).unwrap();
    let options = RunOptions { intent: Intent::Change, ..RunOptions::default() };
    let planned = engine.plan(&ws, options, true, &Quiet).unwrap();
    let interrupt = engine.interrupt().clone();
    let sender = std::thread::spawn(move || {
        while !entered.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::yield_now();
        }
        interrupt.stop();
        interrupt.abort();
    });
    let (report, _) = engine.apply(&ws, planned, Arc::new(Quiet));
    sender.join().unwrap();
    assert!(report.interrupted);
    assert_eq!(report.cancelled, [("fake_thing.hang".to_string(), "create".to_string())]);
    // The state is not committed: reading it replays the journal, where
    // the cancelled create is pending.
    let on_disk = LocalBackend::open_read_only(&ws.state_path()).read().unwrap();
    let pending: Vec<String> = on_disk.pending.iter().map(|p| p.addr.to_string()).collect();
    assert_eq!(pending, ["fake_thing.hang"]);
    assert_eq!(on_disk.pending[0].operation, "create");
}
