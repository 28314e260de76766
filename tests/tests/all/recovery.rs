//! Recovery after a crash (issue 16, items 3 and 4), through the real
//! binary and the `recorder` test provider, which finds an object by the
//! idempotency key of the create that made it (`import`):
//!
//! - the crash test: an apply of a graph of slow resources killed with
//!   SIGKILL at each of its 20 crash points; after each, the next apply
//!   ends with every object that exists in the state exactly once, and no
//!   object made twice. It runs on both state backends ([`Backend`]:
//!   the local file and PostgreSQL);
//! - a pending create that the provider finds is adopted (tainted, so it
//!   is replaced); one it does not find is said plainly;
//! - a pending delete whose object is gone is forgotten.

use cairn_e2e::{Postgres, Workdir, recorder_workdir};

use crate::interrupts::{Running, addresses, ids, objects, shown_state};

/// Where a state is kept, for the tests that run on every backend: how a
/// configuration directory is set up to use it (a `backend.tf` beside the
/// configuration, say). The state is only ever read through cairn.
pub struct Backend {
    /// For messages.
    pub name: &'static str,
    /// Prepares a new configuration directory.
    pub setup: fn(&Workdir),
}

/// The local state file, the default.
pub const LOCAL: Backend = Backend { name: "local", setup: |_| {} };

/// PostgreSQL (the test run's server), a schema of its own per directory,
/// set up by `cairn init`.
pub const PG: Backend = Backend {
    name: "pg",
    setup: |w| {
        let server = Postgres::shared();
        let schema = server.schema("crash");
        let conn_str = server.conn_str();
        w.write(
            "backend.tf",
            &format!("cairn {{\n  backend \"pg\" {{\n    conn_str    = \"{conn_str}\"\n    schema_name = \"{schema}\"\n  }}\n}}\n"),
        );
        w.cairn(&["init"]).success();
    },
};

fn thing(name: &str, extra: &str) -> String {
    format!("resource \"recorder_thing\" \"{name}\" {{\n  name = \"{name}\"\n  sleep_ms = 50\n  {extra}\n}}\n")
}

/// What the crash test starts from: four objects, `b` depending on `a`.
fn before() -> String {
    [
        thing("a", "value = \"one\""),
        thing("b", "keeper = \"k1\"\n  value = recorder_thing.a.id"),
        thing("c", ""),
        thing("d", ""),
    ]
    .concat()
}

/// What the crash test applies: an update (`a`), a replace (`b`, delete
/// then create), a delete (`c`), nothing (`d`) and a create depending on
/// the replace (`e`): five operations of four crash points each.
fn after() -> String {
    [
        thing("a", "value = \"two\""),
        thing("b", "keeper = \"k2\"\n  value = recorder_thing.a.id"),
        thing("d", ""),
        thing("e", "value = recorder_thing.b.id"),
    ]
    .concat()
}

/// Runs `cairn apply` with crash point `point` armed and kills it with
/// SIGKILL once it stops there; `parallelism` operations at once (with 1,
/// the points come in the same order in every run).
fn apply_killed_at(w: &Workdir, point: usize, parallelism: usize) {
    let parallelism = format!("-parallelism={parallelism}");
    let args = ["apply", "-auto-approve", &parallelism];
    let mut run = Running::start(w, &args, &[("CAIRN_TEST_CRASH_AT", &point.to_string())]);
    run.wait_for(true, |l| l.starts_with(&format!("cairn: crash point {point} reached")));
    run.kill();
}

/// Checks that every object the provider made exists once in the state,
/// and nothing else is there: the state's ids are exactly the objects.
fn assert_every_object_once(w: &Workdir, expected: &[&str], context: &str) {
    let state = shown_state(w);
    assert_eq!(addresses(&state), expected, "{context}:\n{state:#}");
    assert!(state.get("pending").is_none(), "{context}: nothing is left pending:\n{state:#}");
    assert_eq!(objects(w), ids(&state), "{context}: the objects made are exactly those in the state");
}

/// The crash test on `backend`, `parallelism` operations at once. With
/// one at a time, each of the 20 points is where exactly one run is
/// killed, so every way a pending operation can end is seen; with more,
/// the points come in varying orders and several operations can be
/// pending at once.
fn killed_at_every_crash_point_the_next_apply_recovers(backend: &Backend, parallelism: usize) {
    let expected = ["recorder_thing.a", "recorder_thing.b", "recorder_thing.d", "recorder_thing.e"];
    // Every way a pending operation can end, each seen at some point.
    let mut outcomes = [
        ("the provider found the object it made by its idempotency key; recorded as tainted", false),
        ("the provider did not find an object by its idempotency key", false),
        ("the object exists; recorded as the provider read it", false),
        ("the object is gone; forgotten", false),
    ];
    for point in 1..=20 {
        let context = format!("{} backend, -parallelism={parallelism}, killed at crash point {point}", backend.name);
        let w = recorder_workdir(&before());
        (backend.setup)(&w);
        w.cairn(&["apply", "-auto-approve"]).success();
        w.configure_recorder(&after());
        apply_killed_at(&w, point, parallelism);
        let pending = shown_state(&w)["pending"].as_array().map_or(0, Vec::len);

        let run = w.cairn(&["apply", "-auto-approve"]);
        assert_eq!(run.code, 0, "{context}:\n{}", run.all());
        let recovered = run.stdout.matches(": recovered the interrupted ").count();
        for (kind, seen) in &mut outcomes {
            *seen |= run.stdout.contains(*kind);
        }
        assert_eq!(recovered, pending, "{context}: every pending operation is resolved:\n{}", run.all());
        assert_every_object_once(&w, &expected, &context);
        assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0, "{context}: nothing is left to do");
        assert_eq!(w.read(&format!("log/objects/{}", id_of(&w, "recorder_thing.a"))), "two", "{context}");
    }
    for (kind, seen) in outcomes.iter().filter(|_| parallelism == 1) {
        assert!(seen, "{} backend: no crash point led to \"{kind}\"", backend.name);
    }
}

/// The `id` of `addr` in the state.
fn id_of(w: &Workdir, addr: &str) -> String {
    let state = shown_state(w);
    let resource = state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == addr).unwrap();
    resource["attributes"]["id"].as_str().unwrap().to_string()
}

#[test]
fn killed_at_every_crash_point_the_next_local_apply_recovers() {
    killed_at_every_crash_point_the_next_apply_recovers(&LOCAL, 1);
}

#[test]
fn killed_at_every_crash_point_of_a_parallel_apply_the_next_local_apply_recovers() {
    killed_at_every_crash_point_the_next_apply_recovers(&LOCAL, 10);
}

#[test]
fn killed_at_every_crash_point_the_next_pg_apply_recovers() {
    killed_at_every_crash_point_the_next_apply_recovers(&PG, 1);
}

#[test]
fn killed_at_every_crash_point_of_a_parallel_apply_the_next_pg_apply_recovers() {
    killed_at_every_crash_point_the_next_apply_recovers(&PG, 10);
}

/// Lines of the recorder's log of operations of `op` on `name`.
fn logged(w: &Workdir, op: &str, name: &str) -> usize {
    let log = std::fs::read_to_string(w.path().join("log/ops.log")).unwrap_or_default();
    log.lines().filter(|l| l.split(' ').take(2).eq([op, name])).count()
}

#[test]
fn a_pending_create_the_provider_finds_is_adopted_tainted_and_replaced() {
    let w = recorder_workdir(&thing("a", ""));
    // Points of a create: before its intent, after it, after the answer.
    apply_killed_at(&w, 3, 1);
    let made = objects(&w);
    assert_eq!(made.len(), 1, "the provider made the object");

    let plan = w.cairn(&["plan"]).success();
    assert!(
        plan.stdout.contains(
            "recorder_thing.a: recovered the interrupted create: the provider found the object it made by its \
             idempotency key; recorded as tainted, so it will be replaced"
        ),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("# recorder_thing.a is tainted, so must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 1 to destroy."), "{}", plan.all());
    // A plan writes nothing: the operation is still pending.
    assert_eq!(shown_state(&w)["pending"].as_array().map_or(0, Vec::len), 1);

    let events = w.cairn(&["plan", "-json"]).success().events();
    let recovered = events.iter().find(|e| e["type"] == "recovered").expect("a recovered event");
    assert_eq!(recovered["address"], "recorder_thing.a");
    assert_eq!(recovered["operation"], "create");
    assert_eq!(recovered["outcome"], "adopted_tainted");

    w.cairn(&["apply", "-auto-approve"]).success();
    assert_every_object_once(&w, &["recorder_thing.a"], "after the recovering apply");
    assert_ne!(objects(&w), made, "the adopted object was replaced");
    assert_eq!(logged(&w, "delete", "a"), 1, "the adopted object was deleted, not orphaned");
}

#[test]
fn a_pending_create_the_provider_does_not_find_is_said_plainly_and_made() {
    let w = recorder_workdir(&thing("a", ""));
    // After the intent, before the call: the provider made nothing.
    apply_killed_at(&w, 2, 1);
    assert!(objects(&w).is_empty());
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(
        run.stdout.contains(
            "recorder_thing.a: recovered the interrupted create: the provider did not find an object by its \
             idempotency key"
        ),
        "{}",
        run.all()
    );
    assert!(run.stdout.contains("so the object may exist outside the state"), "{}", run.all());
    assert_every_object_once(&w, &["recorder_thing.a"], "after the recovering apply");
}

#[test]
fn a_pending_delete_whose_object_is_gone_is_forgotten() {
    let w = recorder_workdir(&[thing("a", ""), thing("keep", "")].concat());
    w.cairn(&["apply", "-auto-approve"]).success();
    w.configure_recorder(&thing("keep", ""));
    // After the provider deleted it, before that was recorded.
    apply_killed_at(&w, 3, 1);
    assert_eq!(logged(&w, "delete", "a"), 1);

    let plan = w.cairn(&["plan"]).success();
    assert!(
        plan.stdout.contains("recorder_thing.a: recovered the interrupted delete: the object is gone; forgotten"),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("No changes."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_every_object_once(&w, &["recorder_thing.keep"], "after the recovering apply");
    assert_eq!(logged(&w, "delete", "a"), 1, "the object is not deleted twice");
}
