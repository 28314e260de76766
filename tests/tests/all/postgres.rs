//! State backends (issue 16, and the lock of issue 14): the PostgreSQL
//! backend through the real binary against a real server (Debian's
//! PostgreSQL, started once per test run on a loopback port; each test in
//! a schema of its own), and the lock both backends share: `-lock-timeout`
//! and `cairn force-unlock`. A third writer, a lock held by another
//! process, and a state read before another run wrote are played by this
//! test process through the library's own backends.

use std::process::Stdio;

use cairn::state::{Backend, LocalBackend, PgBackend, State, StateError};
use cairn_e2e::{Postgres, Run, Workdir, recorder_workdir};

/// A recorder configuration whose state is in `schema` of the test server.
struct PgDir {
    w: Workdir,
    schema: String,
    conn_str: String,
}

/// `cairn { backend "pg" { schema_name = "SCHEMA" } }`; the connection
/// string comes from `PG_CONN_STR`.
fn backend_block(schema: &str) -> String {
    format!("cairn {{\n  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}\n}}\n")
}

/// `recorder_thing.NAME` with `value` (and `extra` lines).
fn thing(name: &str, value: &str, extra: &str) -> String {
    format!("resource \"recorder_thing\" \"{name}\" {{\n  name  = \"{name}\"\n  value = \"{value}\"\n{extra}}}\n")
}

impl PgDir {
    /// A working directory with `resources` and a pg backend, not
    /// initialised.
    fn new(test: &str, resources: &str) -> PgDir {
        let server = Postgres::shared();
        let schema = server.schema(test);
        let w = recorder_workdir(&format!("{}{resources}", backend_block(&schema)));
        PgDir { w, schema, conn_str: server.conn_str() }
    }

    /// Replaces the resources, keeping the backend.
    fn configure(&self, resources: &str) {
        self.w.configure_recorder(&format!("{}{resources}", backend_block(&self.schema)));
    }

    /// `cairn ARGS DIR` with `PG_CONN_STR` set.
    fn cairn(&self, args: &[&str]) -> Run {
        self.w.cairn_env(args, &[("PG_CONN_STR", &self.conn_str)])
    }

    /// `cairn ARGS DIR` with `PG_CONN_STR` set, started.
    fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.w
            .command(args, &[("PG_CONN_STR", &self.conn_str)])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The state's backend, as another process would open it.
    fn backend(&self) -> PgBackend {
        PgBackend::new(&self.conn_str, &self.schema).unwrap()
    }

    /// The state in the database.
    fn state(&self) -> State {
        self.backend().read().unwrap()
    }
}

/// The recorder's log, one operation a line: `op name id key`.
fn ops(w: &Workdir) -> Vec<Vec<String>> {
    w.read("log/ops.log").lines().map(|l| l.split(' ').map(String::from).collect()).collect()
}

/// How many times the recorder did `op` on `name`.
fn count(w: &Workdir, op: &str, name: &str) -> usize {
    ops(w).iter().filter(|l| l[0] == op && l[1] == name).count()
}

/// The `id` attribute of `addr` in `state`.
fn id(state: &State, addr: &str) -> String {
    let inst = state.get(&addr.parse().unwrap()).unwrap_or_else(|| panic!("{addr} is not in the state"));
    inst.attributes.to_json().unwrap()["id"].as_str().unwrap().to_string()
}

/// Waits for a started `cairn`.
fn finish(child: std::process::Child) -> Run {
    child.wait_with_output().unwrap().into()
}

#[test]
fn the_lifecycle_runs_against_postgres_and_every_version_is_kept() {
    let d = PgDir::new("lifecycle", &(thing("a", "1", "") + &thing("b", "1", "")));
    let refused = d.cairn(&["plan"]).failure();
    assert!(refused.stderr.contains("run `cairn init`"), "{}", refused.all());

    let init = d.cairn(&["init"]).success();
    assert!(
        init.stdout.contains(&format!("the pg backend (schema \"{}\" of postgres://postgres@127.0.0.1", d.schema)),
        "{}",
        init.all()
    );
    d.cairn(&["apply", "-auto-approve"]).success();
    assert!(!d.w.exists("cairn.state.json"), "the state must not be written locally");
    let created = d.state();
    assert_eq!(created.resources.len(), 2);
    let a = id(&created, "recorder_thing.a");

    d.configure(&(thing("a", "2", "") + &thing("b", "1", "")));
    let update = d.cairn(&["apply", "-auto-approve"]).success();
    assert!(update.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", update.all());
    let updated = d.state();
    assert_eq!(id(&updated, "recorder_thing.a"), a, "updated in place");
    assert_eq!(updated.get(&"recorder_thing.a".parse().unwrap()).unwrap().attributes.to_json().unwrap()["value"], "2");
    assert!(d.cairn(&["show"]).success().stdout.contains("recorder_thing.a"));

    d.cairn(&["destroy", "-auto-approve"]).success();
    let destroyed = d.state();
    assert!(destroyed.resources.is_empty());
    assert_eq!((count(&d.w, "create", "a"), count(&d.w, "update", "a"), count(&d.w, "delete", "a")), (1, 1, 1));

    // Every version before the newest is kept, newest first, one per write.
    let history = d.backend().history().unwrap();
    let serials: Vec<u64> = history.iter().map(|s| s.serial).collect();
    let expected: Vec<u64> = (1..destroyed.serial).rev().collect();
    assert_eq!(serials, expected);
    assert!(history.iter().all(|s| s.lineage == destroyed.lineage));
    assert!(history.iter().any(|s| s.resources.len() == 2 && s.serial == updated.serial));
}

#[test]
fn two_concurrent_applies_make_every_change_exactly_once() {
    let slow = "  sleep_ms = 1000\n";
    let d = PgDir::new("concurrent", &["a", "b", "c"].map(|n| thing(n, "1", slow)).concat());
    d.cairn(&["init"]).success();

    // Without -lock-timeout the one that finds the lock taken is refused,
    // naming the holder; whichever order they run in, each object is
    // created once.
    let runs = [d.spawn(&["apply", "-auto-approve"]), d.spawn(&["apply", "-auto-approve"])].map(finish);
    for run in &runs {
        let refused = run.code == 1 && run.stderr.contains("is locked by another cairn process");
        assert!(run.code == 0 || refused, "{}", run.all());
        if refused {
            assert!(run.stderr.contains("lock ID") && run.stderr.contains("command `cairn apply"), "{}", run.all());
        }
    }
    assert!(runs.iter().any(|r| r.code == 0));
    for name in ["a", "b", "c"] {
        assert_eq!(count(&d.w, "create", name), 1, "{name} created once:\n{:?}", ops(&d.w));
    }

    // With -lock-timeout the second waits for the first, then finds
    // nothing left to do: each update is made once.
    d.configure(&["a", "b", "c"].map(|n| thing(n, "2", slow)).concat());
    let runs = [
        d.spawn(&["apply", "-auto-approve", "-lock-timeout=5m"]),
        d.spawn(&["apply", "-auto-approve", "-lock-timeout=5m"]),
    ]
    .map(finish);
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.all());
    }
    let state = d.state();
    assert_eq!(state.resources.len(), 3);
    for name in ["a", "b", "c"] {
        assert_eq!(count(&d.w, "update", name), 1, "{name} updated once:\n{:?}", ops(&d.w));
        let created: Vec<_> = ops(&d.w).into_iter().filter(|l| l[0] == "create" && l[1] == name).collect();
        assert_eq!(id(&state, &format!("recorder_thing.{name}")), created[0][2]);
    }
}

#[test]
fn a_writer_of_an_older_serial_is_refused() {
    let d = PgDir::new("older_serial", &thing("a", "1", ""));
    d.cairn(&["init"]).success();
    d.cairn(&["apply", "-auto-approve"]).success();

    // A third process reads the state under the lock, and lets go.
    let mut third = d.backend();
    third.lock().unwrap();
    let mut stale = third.read().unwrap();
    drop(third);

    d.configure(&thing("a", "2", ""));
    d.cairn(&["apply", "-auto-approve"]).success();
    let newest = d.state();
    assert!(newest.serial > stale.serial);

    let mut third = d.backend();
    third.lock().unwrap();
    let err = third.write(&mut stale).unwrap_err();
    assert!(matches!(err, StateError::StaleSerial { .. }), "{err}");
    assert!(err.to_string().contains("writing would lose changes"), "{err}");
    drop(third);
    assert_eq!(d.state(), newest, "the refused write changed nothing");
}

#[test]
fn lock_timeout_waits_for_a_pg_lock_then_proceeds() {
    let d = PgDir::new("lock_timeout", &thing("a", "1", ""));
    d.cairn(&["init"]).success();
    let mut holder = d.backend();
    holder.lock().unwrap();
    let lock_id = holder.lock_id().unwrap().to_string();

    let refused = d.cairn(&["apply", "-auto-approve"]).failure();
    let pid = format!("pid {}", std::process::id());
    assert!(refused.stderr.contains(&pid) && refused.stderr.contains(&lock_id), "{}", refused.all());

    let waiting = d.spawn(&["apply", "-auto-approve", "-lock-timeout=5m"]);
    wait_while_locked(waiting, holder);
    assert_eq!(count(&d.w, "create", "a"), 1);
}

#[test]
fn lock_timeout_waits_for_a_local_lock_then_proceeds() {
    let w = recorder_workdir(&thing("a", "1", ""));
    w.cairn(&["apply", "-auto-approve"]).success();
    let holder = LocalBackend::open(&w.path().join("cairn.state.json")).unwrap();
    let refused = w.cairn(&["plan"]).failure();
    assert!(refused.stderr.contains("is locked by another cairn process"), "{}", refused.all());
    assert!(refused.stderr.contains("-lock-timeout"), "{}", refused.all());
    w.configure_recorder(&thing("a", "2", ""));
    let waiting = w
        .command(&["apply", "-auto-approve", "-lock-timeout=5m"], &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_while_locked(waiting, holder);
    assert_eq!(count(&w, "update", "a"), 1);
}

/// Checks that `waiting` (a run with -lock-timeout) is still waiting while
/// `holder` holds the lock, releases it, and checks that the run then
/// succeeds.
fn wait_while_locked<B>(mut waiting: std::process::Child, holder: B) {
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(waiting.try_wait().unwrap().is_none(), "the run did not wait for the lock: {}", finish(waiting).all());
    drop(holder);
    finish(waiting).success();
}

#[test]
fn force_unlock_releases_a_pg_lock_and_the_old_holder_writes_nothing_more() {
    let d = PgDir::new("force_unlock", &thing("a", "1", ""));
    d.cairn(&["init"]).success();
    d.cairn(&["apply", "-auto-approve"]).success();
    let mut holder = d.backend();
    holder.lock().unwrap();
    let mut held = holder.read().unwrap();
    let lock_id = holder.lock_id().unwrap().to_string();

    let asked = d.cairn(&["force-unlock", &lock_id]);
    assert_eq!(asked.code, 1, "{}", asked.all());
    assert!(
        asked.stdout.contains("Do you really want to force-unlock?") && asked.stdout.contains("cancelled"),
        "{}",
        asked.all()
    );
    let wrong = d.cairn(&["force-unlock", "-force", "not-the-id"]).failure();
    assert!(wrong.stderr.contains(&format!("locked with lock ID {lock_id}, not not-the-id")), "{}", wrong.all());

    let unlocked = d.cairn(&["force-unlock", "-force", &lock_id]).success();
    assert!(unlocked.stdout.contains("successfully unlocked"), "{}", unlocked.all());
    let err = holder.write(&mut held).unwrap_err();
    assert!(matches!(err, StateError::LockLost { .. }), "{err}");

    d.configure(&thing("a", "2", ""));
    d.cairn(&["apply", "-auto-approve"]).success();
    let again = d.cairn(&["force-unlock", "-force", &lock_id]).failure();
    assert!(again.stderr.contains("it is not locked"), "{}", again.all());
}

#[test]
fn force_unlock_of_a_local_state_names_the_process_to_stop() {
    let w = recorder_workdir(&thing("a", "1", ""));
    w.cairn(&["apply", "-auto-approve"]).success();
    let not_locked = w.cairn(&["force-unlock", "-force", "some-id"]).failure();
    assert!(not_locked.stderr.contains("it is not locked"), "{}", not_locked.all());

    let holder = LocalBackend::open(&w.path().join("cairn.state.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&w.read("cairn.state.json.lock")).unwrap();
    let lock_id = file["id"].as_str().unwrap().to_string();
    let refused = w.cairn(&["plan"]).failure();
    assert!(refused.stderr.contains(&format!("lock ID {lock_id}")), "{}", refused.all());
    let run = w.cairn(&["force-unlock", "-force", &lock_id]).failure();
    assert!(
        run.stderr.contains("cannot be unlocked by another process")
            && run.stderr.contains(&format!("pid {}", std::process::id())),
        "{}",
        run.all()
    );
    drop(holder);
    w.cairn(&["plan"]).success();
}

#[test]
fn init_migrates_the_state_from_local_to_pg_and_back_keeping_lineage_and_serial() {
    let server = Postgres::shared();
    let schema = server.schema("migrate");
    let conn = server.conn_str();
    let env = [("PG_CONN_STR", conn.as_str())];
    let resources = thing("a", "1", "") + &thing("b", "1", "");
    let w = recorder_workdir(&resources);
    w.cairn(&["apply", "-auto-approve"]).success();
    let local = LocalBackend::open_read_only(&w.path().join("cairn.state.json")).read().unwrap();

    w.configure_recorder(&format!("{}{resources}", backend_block(&schema)));
    let refused = w.cairn_env(&["plan"], &env).failure();
    assert!(refused.stderr.contains("run `cairn init`"), "{}", refused.all());
    let asks = w.cairn_env(&["init"], &env).failure();
    let says = format!("holds a state (lineage {}, serial {}, 2 resource instance(s))", local.lineage, local.serial);
    assert!(asks.stderr.contains(&says) && asks.stderr.contains("cairn init -migrate-state"), "{}", asks.all());

    w.cairn_env(&["init", "-migrate-state"], &env).success();
    let pg = PgBackend::new(&conn, &schema).unwrap().read().unwrap();
    assert_eq!((&pg.lineage, pg.serial, &pg.resources), (&local.lineage, local.serial, &local.resources));
    let plan = w.cairn_env(&["plan", "-detailed-exitcode"], &env);
    assert_eq!(plan.code, 0, "nothing to change after the migration:\n{}", plan.all());

    w.configure_recorder(&format!("{}{}", backend_block(&schema), thing("a", "2", "") + &thing("b", "1", "")));
    w.cairn_env(&["apply", "-auto-approve"], &env).success();
    let pg = PgBackend::new(&conn, &schema).unwrap().read().unwrap();
    assert!(pg.serial > local.serial);

    // And back: the local file's older copy of the same lineage is replaced.
    w.configure_recorder(&(thing("a", "2", "") + &thing("b", "1", "")));
    assert!(w.cairn_env(&["plan"], &env).failure().stderr.contains("run `cairn init`"));
    w.cairn_env(&["init", "-migrate-state"], &env).success();
    let back = LocalBackend::open_read_only(&w.path().join("cairn.state.json")).read().unwrap();
    assert_eq!((&back.lineage, back.serial, &back.resources), (&pg.lineage, pg.serial, &pg.resources));
    let plan = w.cairn_env(&["plan", "-detailed-exitcode"], &[]);
    assert_eq!(plan.code, 0, "nothing to change after migrating back:\n{}", plan.all());
    assert_eq!((count(&w, "create", "a"), count(&w, "create", "b")), (1, 1));
}

#[test]
fn unsupported_backends_and_arguments_are_configuration_errors() {
    let w = Workdir::new();
    w.write("main.tf", "terraform {\n  backend \"s3\" {}\n}\n");
    let run = w.cairn(&["validate"]).failure();
    assert!(
        run.stderr.contains("main.tf:2") && run.stderr.contains("cairn supports \"local\" and \"pg\""),
        "{}",
        run.all()
    );
    w.write("main.tf", "terraform {\n  backend \"pg\" {\n    conn = \"x\"\n  }\n}\n");
    let run = w.cairn(&["validate"]).failure();
    assert!(run.stderr.contains("main.tf:3") && run.stderr.contains("conn_str"), "{}", run.all());
}

#[test]
fn an_apply_killed_mid_call_is_recovered_from_the_journal_rows() {
    // `fast` finishes; `slow` is in its provider call when cairn is killed.
    let d = PgDir::new("killed", &(thing("fast", "1", "") + &thing("slow", "1", "  sleep_ms = 3000\n")));
    d.cairn(&["init"]).success();
    let mut apply = d.spawn(&["apply", "-auto-approve"]);
    // Reading replays the journal rows of the apply under way: killed once
    // they hold fast's result and slow's intent (written before the call).
    let in_call = || {
        let state = d.state();
        state.get(&"recorder_thing.fast".parse().unwrap()).is_some()
            && state.pending.iter().any(|p| p.addr.to_string() == "recorder_thing.slow")
    };
    while !in_call() {
        assert!(apply.try_wait().unwrap().is_none(), "the apply ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    apply.kill().unwrap();
    apply.wait().unwrap();
    assert_eq!(count(&d.w, "create", "slow"), 0, "slow's call had not finished");

    let plan = d.cairn(&["plan"]).success();
    assert!(
        plan.all()
            .contains("recorder_thing.slow: recovered the interrupted create: the provider did not find an object"),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    // Taking the lock folded the rows into a new version: fast is
    // recorded, slow pending with the key its provider was given.
    let recovered = d.state();
    let addresses: Vec<String> = recovered.resources.iter().map(|r| r.addr.to_string()).collect();
    assert_eq!(addresses, ["recorder_thing.fast"]);
    assert_eq!(recovered.pending.len(), 1);
    assert_eq!(d.backend().history().unwrap()[0].serial + 1, recovered.serial, "recovery wrote a version");

    d.cairn(&["apply", "-auto-approve"]).success();
    let slow: Vec<Vec<String>> = ops(&d.w).into_iter().filter(|o| o[1] == "slow").collect();
    assert_eq!(slow.len(), 1, "{slow:?}");
    let state = d.state();
    assert!(state.pending.is_empty() && state.resources.len() == 2);
}

/// An apply waits for its intents only: an instance's new state that no
/// step waits for still reaches the journal's rows while the journal stays
/// open (within the linger, with no later insert to carry it), and what is
/// queued when the journal is dropped is not lost with it.
#[test]
fn journal_records_nobody_waits_for_still_reach_the_rows() {
    use cairn::addr::ResourceAddr;
    use cairn::state::{InstanceState, PendingOperation, Record};

    let server = Postgres::shared();
    let (conn_str, schema) = (server.conn_str(), server.schema("unawaited_records"));
    let addr = |name: &str| ResourceAddr::managed("recorder_thing", name).instance();
    let instance = |name: &str| InstanceState::new(addr(name), "recorder", 0, serde_json::json!({ "name": name }));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();

    let mut backend = PgBackend::new(&conn_str, &schema).unwrap();
    backend.lock().unwrap();
    let mut state = State::new();
    backend.write(&mut state).unwrap();
    let mut journal = backend.start_journal(&state).unwrap();
    let read_elsewhere = || PgBackend::new(&conn_str, &schema).unwrap().read().unwrap();
    runtime.block_on(async {
        let intent = Record::Intent(PendingOperation::now(addr("a"), None, "create", "ka"));
        journal.write(&intent).unwrap().durable().await.unwrap();
        // The result, as an apply queues it: written, never waited for.
        drop(journal.write(&Record::Set { instance: Box::new(instance("a")), ends: Some("ka".into()) }).unwrap());
    });
    let mut seen = read_elsewhere();
    for _ in 0..200 {
        if seen.get(&addr("a")).is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        seen = read_elsewhere();
    }
    assert_eq!(seen.get(&addr("a")), Some(&instance("a")), "the result reached the rows while the journal was open");
    assert!(seen.pending.is_empty(), "its intent ended with it: {:?}", seen.pending);

    runtime.block_on(async {
        let intent = Record::Intent(PendingOperation::now(addr("b"), None, "create", "kb"));
        journal.write(&intent).unwrap().durable().await.unwrap();
        drop(journal.write(&Record::Set { instance: Box::new(instance("b")), ends: Some("kb".into()) }).unwrap());
    });
    // As a cancelled apply leaves it: the journal dropped, the state not
    // written.
    drop(journal);
    drop(backend);
    let seen = read_elsewhere();
    assert_eq!(seen.get(&addr("b")), Some(&instance("b")), "the queued result was inserted as the journal closed");
    assert!(seen.pending.is_empty(), "{:?}", seen.pending);
}
