//! Failures and the destruction lifecycle (Juju's death and destruction; `docs/design.md`, "Sources"),
//! end to end with the `recorder` test provider: a failing resource stops
//! only what depends on it; a failed delete leaves the object in the state,
//! marked as being destroyed, and the next apply deletes it again; deleting
//! what is already gone succeeds; a deposed object whose delete failed is
//! kept and retried; a retried operation gets the same idempotency key.

use cairn_e2e::{Run, Workdir, recorder_workdir as workdir};
use serde_json::Value;

fn thing(name: &str, extra: &str) -> String {
    format!("resource \"recorder_thing\" \"{name}\" {{\n  name = \"{name}\"\n  {extra}\n}}\n")
}

/// The provider's log lines, split into fields: op, name, id, key.
fn ops(w: &Workdir) -> Vec<Vec<String>> {
    w.read("log/ops.log").lines().map(|l| l.split(' ').map(String::from).collect()).collect()
}

fn finish<'a>(events: &'a [Value], address: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == "node_finish" && e["address"] == address).collect()
}

fn status(w: &Workdir, addr: &str) -> Value {
    let state = w.state().unwrap();
    state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["addr"] == addr)
        .map_or(Value::Null, |r| r["status"].clone())
}

fn marker(w: &Workdir, name: &str) {
    w.write(&format!("log/{name}"), "");
}

fn unmark(w: &Workdir, name: &str) {
    std::fs::remove_file(w.path().join("log").join(name)).unwrap();
}

#[test]
fn a_failure_stops_only_its_dependents_and_every_error_is_listed() {
    // a → b → c, and b2 → c2 beside them; b and b2 fail; x is independent.
    let config = [
        thing("a", ""),
        thing("b", "value = recorder_thing.a.id"),
        thing("c", "value = recorder_thing.b.id"),
        thing("b2", ""),
        thing("c2", "value = recorder_thing.b2.id"),
        thing("x", ""),
    ]
    .concat();
    let w = workdir(&config);
    marker(&w, "fail-create-b");
    marker(&w, "fail-create-b2");
    let run = w.cairn(&["apply", "-auto-approve", "-json"]).failure();
    let events = run.events();
    for (addr, outcome) in [
        ("recorder_thing.a", "done"),
        ("recorder_thing.x", "done"),
        ("recorder_thing.b", "failed"),
        ("recorder_thing.b2", "failed"),
        ("recorder_thing.c", "skipped"),
        ("recorder_thing.c2", "skipped"),
    ] {
        let f = finish(&events, addr);
        assert_eq!(f.len(), 1, "{addr}: {}", run.all());
        assert_eq!(f[0]["outcome"], outcome, "{addr}: {}", run.all());
    }
    assert!(!events.iter().any(|e| e["type"] == "node_start" && e["address"] == "recorder_thing.c"), "{}", run.all());
    let errors: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "diagnostic" && e["severity"] == "error")
        .map(|e| e["summary"].as_str().unwrap())
        .collect();
    assert!(errors.iter().any(|e| e.contains("create of b failed")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("create of b2 failed")), "{errors:?}");
    let summary = events.last().unwrap();
    assert_eq!((summary["outcome"].as_str(), summary["errors"].as_u64()), (Some("failed"), Some(2)), "{}", run.all());
    let mut addrs = w.addresses();
    addrs.sort();
    assert_eq!(addrs, ["recorder_thing.a", "recorder_thing.x"], "completed work is in the state");

    // Human output lists every error too.
    let human = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(
        human.stderr.contains("create of b failed") && human.stderr.contains("create of b2 failed"),
        "{}",
        human.all()
    );
    assert!(human.stderr.contains("2 error(s)"), "{}", human.all());
}

#[test]
fn a_retried_create_gets_the_same_idempotency_key() {
    let w = workdir(&thing("a", "value = \"v\""));
    marker(&w, "fail-create-a");
    w.cairn(&["apply", "-auto-approve"]).failure();
    let failed = w.state().unwrap();
    let kept = &failed["retries"][0];
    assert_eq!((kept["addr"].as_str(), kept["operation"].as_str()), (Some("recorder_thing.a"), Some("create")));
    unmark(&w, "fail-create-a");
    w.cairn(&["apply", "-auto-approve"]).success();
    let ops = ops(&w);
    assert_eq!(kept["idempotency_key"].as_str(), Some(ops[0][3].as_str()), "the state kept the failed create's key");
    assert_eq!((ops[0][0].as_str(), ops[1][0].as_str()), ("fail-create", "create"), "{ops:?}");
    assert_eq!(ops[0][3], ops[1][3], "the retry carries the first attempt's key: {ops:?}");
    assert!(w.state().unwrap().get("retries").is_none(), "the retry made it: {}", w.state_text());
    // A different planned change gets a different key.
    w.configure_recorder(&thing("a", "value = \"w\""));
    w.cairn(&["apply", "-auto-approve"]).success();
    let update = ops_named(&w, "update");
    assert_ne!(update[0][3], ops[1][3]);
}

#[test]
fn every_other_change_gets_another_idempotency_key() {
    let w = workdir(&thing("a", "value = \"v\""));
    w.cairn(&["apply", "-auto-approve"]).success();
    // Two replacements of an object whose configuration did not change:
    // each create's planned object is the same as the first create's.
    w.cairn(&["apply", "-auto-approve", "-replace=recorder_thing.a"]).success();
    w.cairn(&["apply", "-auto-approve", "-replace=recorder_thing.a"]).success();
    // The same create again after a destroy.
    w.cairn(&["destroy", "-auto-approve"]).success();
    w.cairn(&["apply", "-auto-approve"]).success();
    let creates: Vec<String> = ops_named(&w, "create").into_iter().map(|o| o[3].clone()).collect();
    assert_eq!(creates.len(), 4, "{:?}", ops(&w));
    let mut distinct = creates.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "every create has a key of its own: {creates:?}");
    assert!(w.state().unwrap().get("retries").is_none(), "nothing is left to retry: {}", w.state_text());
}

fn ops_named(w: &Workdir, op: &str) -> Vec<Vec<String>> {
    ops(w).into_iter().filter(|o| o[0] == op).collect()
}

#[test]
fn a_failed_delete_stays_in_state_being_destroyed_and_the_next_apply_retries_it() {
    let w = workdir(&[thing("a", ""), thing("keep", "")].concat());
    w.cairn(&["apply", "-auto-approve"]).success();
    marker(&w, "fail-delete-a");
    w.configure_recorder(&thing("keep", ""));
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains("delete of a failed"), "{}", run.all());
    assert_eq!(status(&w, "recorder_thing.a"), "destroying", "{}", w.state_text());

    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# recorder_thing.a will be destroyed (again: its delete failed)"), "{}", plan.all());
    let show = w.cairn(&["show"]).success();
    assert!(show.stdout.contains("# recorder_thing.a: (being destroyed)"), "{}", show.all());

    unmark(&w, "fail-delete-a");
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["recorder_thing.keep"]);
    let deletes: Vec<String> = ops(&w).iter().skip(2).map(|o| o[0].clone()).collect();
    assert_eq!(deletes, ["fail-delete", "delete"]);
    let keys: Vec<String> = ops(&w).iter().skip(2).map(|o| o[3].clone()).collect();
    assert_eq!(keys[0], keys[1], "the retried delete carries the same key");
}

#[test]
fn a_configured_object_whose_delete_failed_is_deleted_first_when_replaced() {
    let w = workdir(&thing("a", "keeper = var.ka"));
    w.cairn(&["apply", "-auto-approve"]).success();
    marker(&w, "fail-delete-a");
    w.cairn(&["apply", "-auto-approve", "-var", "ka=2"]).failure();
    assert_eq!(status(&w, "recorder_thing.a"), "destroying");
    unmark(&w, "fail-delete-a");
    let plan = w.cairn(&["plan", "-var", "ka=2"]).success();
    assert!(plan.stdout.contains("is being destroyed (its delete failed), so must be replaced"), "{}", plan.all());
    let run = w.cairn(&["apply", "-auto-approve", "-json", "-var", "ka=2"]).success();
    let starts: Vec<String> = run
        .events()
        .iter()
        .filter(|e| e["type"] == "node_start")
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(starts, ["delete", "create"]);
    assert_eq!(status(&w, "recorder_thing.a"), "ready");
}

#[test]
fn deleting_what_is_already_gone_succeeds() {
    let w = workdir(&[thing("a", ""), thing("keep", "")].concat());
    w.cairn(&["apply", "-auto-approve"]).success();
    let id = w.attributes("recorder_thing.a")["id"].as_str().unwrap().to_string();
    std::fs::remove_file(w.path().join("log/objects").join(&id)).unwrap();
    w.configure_recorder(&thing("keep", ""));
    let run = w.cairn(&["apply", "-auto-approve", "-json"]).success();
    let events = run.events();
    let f = finish(&events, "recorder_thing.a");
    assert_eq!(f[0]["outcome"], "done", "{}", run.all());
    assert_eq!(ops(&w).last().unwrap()[0], "delete-gone");
    assert_eq!(w.addresses(), ["recorder_thing.keep"]);
}

#[test]
fn an_object_being_destroyed_that_is_gone_needs_no_second_delete() {
    let w = workdir(&thing("a", "keeper = var.ka"));
    w.cairn(&["apply", "-auto-approve"]).success();
    marker(&w, "fail-delete-a");
    w.cairn(&["apply", "-auto-approve", "-var", "ka=2"]).failure();
    // Someone finished the deletion by hand.
    let id = w.attributes("recorder_thing.a")["id"].as_str().unwrap().to_string();
    std::fs::remove_file(w.path().join("log/objects").join(&id)).unwrap();
    let run = w.cairn(&["apply", "-auto-approve", "-json", "-var", "ka=2"]).success();
    let starts: Vec<Value> = run.events().into_iter().filter(|e| e["type"] == "node_start").collect();
    assert_eq!(starts.len(), 1, "only the create: {}", run.all());
    assert_eq!(starts[0]["action"], "create");
    assert_eq!(ops(&w).iter().filter(|o| o[0] == "delete").count(), 0, "{:?}", ops(&w));
}

#[test]
fn a_deposed_object_whose_delete_failed_stays_deposed_and_is_retried() {
    let cbd = "keeper = var.ka\n  lifecycle {\n    create_before_destroy = true\n  }";
    let w = workdir(&thing("a", cbd));
    w.cairn(&["apply", "-auto-approve"]).success();
    let old_id = w.attributes("recorder_thing.a")["id"].as_str().unwrap().to_string();
    marker(&w, "fail-delete-a");
    let run: Run = w.cairn(&["apply", "-auto-approve", "-var", "ka=2"]).failure();
    let state = w.state().unwrap();
    let a = state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == "recorder_thing.a").unwrap().clone();
    assert_ne!(a["attributes"]["id"], old_id.as_str(), "the new object is current: {}", run.all());
    let deposed = a["deposed"].as_array().unwrap_or_else(|| panic!("{state:#}"));
    assert_eq!(deposed.len(), 1);
    assert_eq!(deposed[0]["attributes"]["id"], old_id.as_str());
    let key = deposed[0]["key"].as_str().unwrap().to_string();

    unmark(&w, "fail-delete-a");
    let plan = w.cairn(&["plan", "-var", "ka=2"]).success();
    assert!(
        plan.stdout.contains(&format!("# recorder_thing.a (deposed object {key}) will be destroyed")),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 1 to destroy."), "{}", plan.all());
    let run = w.cairn(&["apply", "-auto-approve", "-json", "-var", "ka=2"]).success();
    let events = run.events();
    let f = finish(&events, "recorder_thing.a");
    assert_eq!(
        (f[0]["deposed"].as_bool(), f[0]["deposed_key"].as_str()),
        (Some(true), Some(key.as_str())),
        "{}",
        run.all()
    );
    assert!(!w.state_text().contains("\"deposed\""), "{}", w.state_text());
    let deletes = ops_named(&w, "delete");
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0][2], old_id);
    let failed = ops_named(&w, "fail-delete");
    assert_eq!(failed[0][3], deletes[0][3], "the retried delete of the deposed object carries the same key");
}

#[test]
fn a_create_before_destroy_replacement_that_fails_leaves_the_old_object_current() {
    let cbd = "keeper = var.ka\n  lifecycle {\n    create_before_destroy = true\n  }";
    let w = workdir(&[thing("a", cbd), thing("b", "value = recorder_thing.a.id")].concat());
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.state().unwrap()["resources"].clone();
    marker(&w, "fail-create-a");
    let run = w.cairn(&["apply", "-auto-approve", "-json", "-var", "ka=2"]).failure();
    let events = run.events();
    assert_eq!(
        finish(&events, "recorder_thing.a").iter().map(|e| e["outcome"].as_str().unwrap()).collect::<Vec<_>>(),
        ["failed", "skipped"],
        "{}",
        run.all()
    );
    assert_eq!(finish(&events, "recorder_thing.b")[0]["outcome"], "skipped");
    assert_eq!(w.state().unwrap()["resources"], before, "the old object is current again, nothing deposed");
    unmark(&w, "fail-create-a");
    w.cairn(&["apply", "-auto-approve", "-var", "ka=2"]).success();
    assert!(!w.state_text().contains("\"deposed\""), "{}", w.state_text());
}

#[test]
fn an_apply_killed_mid_call_keeps_what_finished_and_reports_what_may_exist() {
    // `fast` finishes; `slow` is in its provider call when cairn is killed.
    let config = [thing("fast", ""), thing("slow", "sleep_ms = 3000")].concat();
    let w = workdir(&config);
    let mut apply = w
        .command(&["apply", "-auto-approve", "-json"], &[])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the journal holds fast's result and slow's intent: the
    // intent is written before the provider is called.
    let journal = w.path().join("cairn.state.json.journal");
    let in_call = || {
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        // An instance's line and an intent's (`host/src/state/journal/format.rs`).
        text.lines().any(|l| l.starts_with(r#"{"s":"#) && l.contains(r#""name":"fast""#))
            && text.contains(r#"{"i":["recorder_thing.slow""#)
    };
    while !in_call() {
        assert!(apply.try_wait().unwrap().is_none(), "the apply ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    apply.kill().unwrap();
    apply.wait().unwrap();
    assert!(!ops(&w).iter().any(|o| o[1] == "slow"), "slow's call had not finished");

    let plan = w.cairn(&["plan"]).success();
    assert!(
        plan.stdout.contains(
            "recorder_thing.slow: recovered the interrupted create: the provider did not find an object by its \
             idempotency key"
        ),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    // Opening the state folded the journal into it: fast is recorded,
    // slow is pending with the key its provider was given.
    assert!(!journal.exists());
    assert_eq!(w.addresses(), ["recorder_thing.fast"]);
    let state = w.state().unwrap();
    let pending = state["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["operation"], "create");
    let key = pending[0]["idempotency_key"].as_str().unwrap().to_string();
    let show = w.cairn(&["show"]).success();
    assert!(show.stdout.contains("# Interrupted: the create of recorder_thing.slow, started "), "{}", show.all());

    w.cairn(&["apply", "-auto-approve"]).success();
    let retried = ops(&w);
    let slow: Vec<&Vec<String>> = retried.iter().filter(|o| o[1] == "slow").collect();
    assert_eq!(slow.len(), 1, "{retried:?}");
    assert_eq!(slow[0][3], key, "the retry sends the interrupted call's key");
    assert!(w.state().unwrap().get("pending").is_none(), "the apply settled the pending operation");
    let quiet = w.cairn(&["plan"]).success();
    assert!(!quiet.all().contains("interrupted"), "{}", quiet.all());
}
