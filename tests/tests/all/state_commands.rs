//! `cairn state list | show | rm | mv | pull | push | history` and
//! `cairn output`, each through the real binary over a state an apply
//! wrote: every command round-trips, and every refusal leaves the state as
//! it was.

use cairn_e2e::Workdir;
use serde_json::Value;

const CONFIG: &str = r#"
resource "null_data" "a" {
  input = "first"
}

resource "null_data" "b" {
  count = 2
  input = "b${count.index}"
}

resource "random_password" "secret" {
  length  = 12
  special = false
}

output "name" {
  value = null_data.a.output
}

output "port" {
  value = 8080
}

output "list" {
  value = [1, 2]
}

output "secret" {
  value     = random_password.secret.result
  sensitive = true
}
"#;

/// A configuration applied once.
fn applied() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w.cairn(&["apply", "-auto-approve"]).success();
    w
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn list_mv_rm_round_trip_and_the_plan_creates_what_was_forgotten() {
    let w = applied();
    let all = w.cairn_here(&["state", "list"]).success();
    assert_eq!(lines(&all.stdout), ["null_data.a", "null_data.b[0]", "null_data.b[1]", "random_password.secret"]);
    let some = w.cairn_here(&["state", "list", "null_data.b", "random_password.secret"]).success();
    assert_eq!(lines(&some.stdout), ["null_data.b[0]", "null_data.b[1]", "random_password.secret"]);
    let one = w.cairn_here(&["state", "list", "null_data.b[1]"]).success();
    assert_eq!(lines(&one.stdout), ["null_data.b[1]"]);

    let id = w.attributes("null_data.a")["id"].clone();
    let moved = w.cairn_here(&["state", "mv", "null_data.a", "null_data.renamed"]).success();
    assert!(moved.stdout.contains("Move \"null_data.a\" to \"null_data.renamed\""), "{}", moved.all());
    assert!(moved.stdout.contains("Successfully moved 1 object(s)."), "{}", moved.all());
    assert_eq!(w.attributes("null_data.renamed")["id"], id, "the same object, at its new address");
    assert!(w.exists("cairn.state.json.backup"), "a write keeps the state from before");
    let all = w.cairn_here(&["state", "list"]).success();
    assert_eq!(lines(&all.stdout), ["null_data.b[0]", "null_data.b[1]", "null_data.renamed", "random_password.secret"]);

    // A whole resource moves with its keys.
    w.cairn_here(&["state", "mv", "null_data.b", "null_data.c"]).success();
    assert!(w.addresses().contains(&"null_data.c[1]".to_string()), "{:?}", w.addresses());
    w.cairn_here(&["state", "mv", "null_data.c", "null_data.b"]).success();

    let removed = w.cairn_here(&["state", "rm", "null_data.renamed"]).success();
    assert!(removed.stdout.contains("Removed null_data.renamed"), "{}", removed.all());
    assert!(removed.stdout.contains("Successfully removed 1 resource instance(s)."), "{}", removed.all());
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# null_data.a will be created"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
}

#[test]
fn refused_moves_and_removals_change_nothing() {
    let w = applied();
    let before = w.state_text();
    let run = w.cairn_here(&["state", "mv", "null_data.a", "null_data.b[0]"]).failure();
    assert!(run.stderr.contains("there is already a resource instance at null_data.b[0]"), "{}", run.all());
    let run = w.cairn_here(&["state", "mv", "null_data.a", "null_resource.a"]).failure();
    assert!(run.stderr.contains("resource types don't match"), "{}", run.all());
    let run = w.cairn_here(&["state", "mv", "null_data.zz", "null_data.y"]).failure();
    assert!(run.stderr.contains("does not match anything in the current state"), "{}", run.all());
    let run = w.cairn_here(&["state", "rm", "null_data.a", "null_data.zz"]).failure();
    assert!(run.stderr.contains("no matching objects found"), "{}", run.all());
    let run = w.cairn_here(&["state", "rm", "not an address"]).failure();
    assert!(run.stderr.contains("is not a resource instance address"), "{}", run.all());
    assert_eq!(w.state_text(), before);
}

#[test]
fn state_show_prints_one_instance_with_sensitive_values_hidden() {
    let w = applied();
    let run = w.cairn_here(&["state", "show", "null_data.b[1]"]).success();
    assert!(run.stdout.starts_with("# null_data.b[1]:\nresource \"null_data\" \"b[1]\" {"), "{}", run.all());
    assert!(run.stdout.contains("input = \"b1\""), "{}", run.all());
    let secret = w.attributes("random_password.secret")["result"].as_str().unwrap().to_string();
    let run = w.cairn_here(&["state", "show", "random_password.secret"]).success();
    assert!(run.stdout.contains("result = (sensitive value)"), "{}", run.all());
    assert!(!run.stdout.contains(&secret), "{}", run.all());
    let run = w.cairn_here(&["state", "show", "null_data.b"]).failure();
    assert!(run.stderr.contains("matches 2 instances"), "{}", run.all());
    let run = w.cairn_here(&["state", "show", "null_data.zz"]).failure();
    assert!(run.stderr.contains("no instance found"), "{}", run.all());
}

#[test]
fn pull_then_push_round_trips_and_push_checks_lineage_and_serial() {
    let w = applied();
    let pulled = w.cairn_here(&["state", "pull"]).success();
    let pulled_state: Value = serde_json::from_str(&pulled.stdout).unwrap();
    assert_eq!(pulled_state, w.state().unwrap(), "pull prints the state");
    w.write("pulled.json", &pulled.stdout);

    w.cairn_here(&["state", "rm", "null_data.a"]).success();
    let run = w.cairn_here(&["state", "push", "pulled.json"]).failure();
    assert!(run.stderr.contains("is older than the serial"), "{}", run.all());
    assert!(!w.addresses().contains(&"null_data.a".to_string()));
    w.cairn_here(&["state", "push", "-force", "pulled.json"]).success();
    assert!(w.addresses().contains(&"null_data.a".to_string()), "the pushed state is the state now");
    let pushed = w.state().unwrap();
    assert_eq!(pushed["lineage"], pulled_state["lineage"]);
    assert!(pushed["serial"].as_u64() > pulled_state["serial"].as_u64(), "a push is a new serial");

    let mut other = pulled_state.clone();
    other["lineage"] = "another-configuration".into();
    other["serial"] = 1000.into();
    w.write("other.json", &other.to_string());
    let before = w.state_text();
    let run = w.cairn_here(&["state", "push", "other.json"]).failure();
    assert!(run.stderr.contains("lineage another-configuration"), "{}", run.all());
    assert!(run.stderr.contains("belongs to another configuration"), "{}", run.all());
    assert_eq!(w.state_text(), before);
    w.cairn_here(&["state", "push", "-force", "other.json"]).success();
    let forced = w.state().unwrap();
    assert_eq!(forced["lineage"], "another-configuration");
    assert_eq!(forced["serial"], 1001, "above both the pushed serial and the one it replaced");
    assert_eq!(w.read("cairn.state.json.backup"), before, "the replaced state is the backup");

    // Into a directory with no state yet, any state may be pushed.
    let fresh = Workdir::new();
    fresh.write("main.tf", CONFIG);
    fresh.write("other.json", &other.to_string());
    fresh.cairn_here(&["state", "push", "other.json"]).success();
    assert_eq!(fresh.state().unwrap()["lineage"], "another-configuration");
}

#[test]
fn history_lists_the_kept_states_and_pull_reads_an_earlier_one() {
    let w = applied();
    let first = w.state().unwrap();
    w.cairn_here(&["state", "rm", "null_data.a"]).success();
    let history = w.cairn_here(&["state", "history"]).success();
    let serial = first["serial"].as_u64().unwrap();
    let rows = lines(&history.stdout);
    assert!(rows[0].starts_with("  SERIAL"), "{}", history.all());
    assert!(rows[1].trim_start().starts_with(&format!("{} ", serial + 1)), "{}", history.all());
    assert!(rows[1].contains("(current)"), "{}", history.all());
    assert!(rows[2].trim_start().starts_with(&format!("{serial} ")), "{}", history.all());

    let earlier = w.cairn_here(&["state", "pull", &format!("-version={serial}")]).success();
    let earlier: Value = serde_json::from_str(&earlier.stdout).unwrap();
    assert_eq!(earlier, first);
    let run = w.cairn_here(&["state", "pull", "-version=999"]).failure();
    assert!(run.stderr.contains("keeps no state with serial 999"), "{}", run.all());
}

#[test]
fn output_lists_shows_one_in_clear_and_prints_json_and_raw() {
    let w = applied();
    let secret = w.attributes("random_password.secret")["result"].as_str().unwrap().to_string();

    let all = w.cairn_here(&["output"]).success();
    assert_eq!(
        lines(&all.stdout),
        ["list = [", "  1,", "  2,", "]", "name = \"first\"", "port = 8080", "secret = <sensitive>"],
        "{}",
        all.all()
    );

    let one = w.cairn_here(&["output", "secret"]).success();
    assert_eq!(one.stdout, format!("\"{secret}\"\n"));

    let raw = w.cairn_here(&["output", "-raw", "name"]).success();
    assert_eq!(raw.stdout, "first", "no quotes, no newline");
    assert_eq!(w.cairn_here(&["output", "-raw", "port"]).success().stdout, "8080");
    let run = w.cairn_here(&["output", "-raw", "list"]).failure();
    assert!(run.stderr.contains("only supports strings, numbers and bools"), "{}", run.all());

    let json: Value = serde_json::from_str(&w.cairn_here(&["output", "-json"]).success().stdout).unwrap();
    assert_eq!(json["secret"], serde_json::json!({"sensitive": true, "type": "string", "value": secret}));
    assert_eq!(json["list"]["value"], serde_json::json!([1, 2]));
    assert_eq!(json["port"]["type"], "number");
    let one: Value = serde_json::from_str(&w.cairn_here(&["output", "-json", "list"]).success().stdout).unwrap();
    assert_eq!(one, serde_json::json!([1, 2]));

    let run = w.cairn_here(&["output", "nope"]).failure();
    assert!(run.stderr.contains("output \"nope\" not found"), "{}", run.all());
}

/// `cairn apply` in `w`, started and waiting at its confirmation prompt,
/// and so holding the state's lock until it is answered.
fn apply_waiting_at_its_prompt(w: &Workdir) -> std::process::Child {
    use std::io::Read;
    let mut apply = w
        .command(&["apply"], &[])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = apply.stdout.take().unwrap();
    let (mut seen, mut buf) = (String::new(), [0u8; 4096]);
    while !seen.contains("Enter a value") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the apply ended early:\n{seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    // Kept open, so that what the apply prints after the answer has a
    // reader.
    apply.stdout = Some(stdout);
    apply
}

#[test]
fn commands_that_change_the_state_wait_for_no_one_holding_its_lock() {
    use std::io::Write;
    let w = applied();
    w.write("main.tf", &CONFIG.replace("\"first\"", "\"second\""));
    let before = w.state_text();
    // An apply waits at its confirmation prompt, holding the lock.
    let mut apply = apply_waiting_at_its_prompt(&w);
    for args in [
        &["state", "rm", "null_data.a"][..],
        &["state", "mv", "null_data.a", "null_data.z"],
        &["state", "push", "-force", "cairn.state.json"],
    ] {
        let run = w.cairn_here(args).failure();
        assert!(run.stderr.contains("locked"), "{args:?}: {}", run.all());
    }
    // Reading needs no lock.
    assert_eq!(lines(&w.cairn_here(&["state", "list", "null_data.a"]).success().stdout), ["null_data.a"]);
    assert_eq!(w.state_text(), before, "nothing refused changed the state");
    // With -lock-timeout a change waits for the lock, and goes ahead once
    // the apply (answered "no") lets it go.
    let dir = w.path().to_path_buf();
    let waiting = std::thread::spawn(move || {
        cairn_e2e::cairn_command(&["state", "rm", "-lock-timeout=60s", "null_data.a"], &[]).current_dir(dir).output()
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    apply.stdin.take().unwrap().write_all(b"no\n").unwrap();
    apply.wait().unwrap();
    let removed = waiting.join().unwrap().unwrap();
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
    assert!(!w.addresses().contains(&"null_data.a".to_string()), "{}", w.state_text());
}

#[test]
fn lock_false_lets_a_state_command_run_while_another_run_holds_the_lock() {
    use std::io::Write;
    // As Terraform's state commands: `-lock=false` takes no lock (issue 36,
    // item 2).
    let w = applied();
    w.write("main.tf", &CONFIG.replace("\"first\"", "\"second\""));
    let mut apply = apply_waiting_at_its_prompt(&w);
    assert!(w.cairn_here(&["state", "rm", "null_data.a"]).failure().stderr.contains("locked"));
    w.cairn_here(&["state", "rm", "-lock=false", "null_data.a"]).success();
    apply.stdin.take().unwrap().write_all(b"no\n").unwrap();
    apply.wait().unwrap();
    assert!(!w.addresses().contains(&"null_data.a".to_string()), "{}", w.state_text());
}
