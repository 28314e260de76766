//! The sandbox (issue 2, item 6), through the real binary and the hostile
//! `cairn-provider-misbehave` component: a provider that loops, sleeps, runs
//! out of memory, panics or answers garbage fails the resource it was asked
//! about with a diagnostic naming it and what happened, and cairn itself
//! ends normally with exit code 1 and a valid, untouched state. A provider
//! sees no file, environment variable or network address it was not
//! granted, and what it prints never reaches cairn's output.
//!
//! The misbehave provider misbehaves in `plan-resource`, so every failure
//! here happens while planning: the run is refused before anything is
//! applied (as Terraform refuses a plan with errors), and the other
//! resources are still planned, through fresh instances of the provider.

use std::collections::BTreeMap;

use cairn_e2e::{Run, Workdir, required_providers};

/// A configuration using the misbehave provider, with `sandbox` as the body
/// of its `sandbox` block, and `resources`.
fn config(sandbox: &str, resources: &str) -> String {
    format!(
        "{}\nprovider \"misbehave\" {{\n  sandbox {{\n    {sandbox}\n  }}\n}}\n{resources}",
        required_providers(&["misbehave"])
    )
}

/// A configuration directory with the misbehave provider installed.
fn workdir() -> Workdir {
    let w = Workdir::new();
    w.install_provider("misbehave", "cairn-provider-misbehave");
    w
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} is not in:\n{text}")) + 1
}

/// The error lines a run printed.
fn errors(run: &Run) -> Vec<&str> {
    run.stderr.lines().filter(|l| l.starts_with("Error: ")).collect()
}

/// Checks that cairn ended by itself with exit code 1 and did not panic.
fn assert_clean_failure(run: Run) -> Run {
    let run = run.failure();
    // A provider's panic is quoted from its stderr, indented under the
    // error; cairn's own would start a line.
    assert!(!run.stderr.lines().any(|l| l.starts_with("thread ")), "cairn panicked:\n{}", run.all());
    run
}

/// Resources that are already applied when a hostile one is added.
const BASELINE: &str = r#"
resource "misbehave_ok" "ok" {}

resource "null_resource" "n" {}
"#;

/// Added with the hostile resource: an independent new resource of each
/// provider, planned after every `misbehave_*` one (through the dependency
/// on `null_resource.n`, which is planned after them), and one that depends
/// on the hostile resource.
fn added(hostile: &str) -> String {
    format!(
        r#"
resource "{hostile}" "x" {{}}

resource "misbehave_ok" "after" {{
  depends_on = [null_resource.n]
}}

resource "null_resource" "new" {{}}

resource "misbehave_ok" "dependent" {{
  depends_on = [{hostile}.x]
}}
"#
    )
}

/// Each hostile resource type, the sandbox limit it runs into, and what
/// cairn says the provider did.
const HOSTILE: &[(&str, &str, &str)] = &[
    ("misbehave_loop", "timeout_seconds = 1", "exceeded its time limit of 1s"),
    ("misbehave_sleep", "timeout_seconds = 1", "exceeded its time limit of 1s"),
    ("misbehave_oom", "memory_mb = 32", "exceeded its memory limit of 32 MiB"),
    ("misbehave_panic", "", "panicked: misbehave: deliberate panic in plan"),
    ("misbehave_malformed", "", "returned a malformed value: node index 7 out of range (1 nodes)"),
];

#[test]
fn a_hostile_provider_call_fails_that_resource_with_a_clear_diagnostic() {
    for (hostile, limit, what) in HOSTILE {
        let w = workdir();
        w.write("main.tf", &config(limit, BASELINE));
        w.cairn(&["apply", "-auto-approve"]).success();
        let before = w.state_text();

        let main_tf = config(limit, &format!("{BASELINE}{}", added(hostile)));
        w.write("main.tf", &main_tf);
        for command in [&["plan"][..], &["apply", "-auto-approve"]] {
            let run = assert_clean_failure(w.cairn(command));
            let line = line_of(&main_tf, &format!("resource \"{hostile}\" \"x\""));
            let expected = format!("Error: main.tf:{line}:1: provider \"misbehave\" {what} while planning {hostile}.x");
            // Only the hostile resource fails: the others (`misbehave_ok.after`
            // among them, which errs when planned by an instance that was
            // never configured) were planned; its dependent was skipped.
            assert_eq!(errors(&run).len(), 1, "{command:?}: {hostile}:\n{}", run.all());
            assert!(errors(&run)[0].starts_with(&expected), "{command:?}: expected\n{expected}\nin:\n{}", run.all());
            // The plan failed, so nothing was applied.
            assert!(!run.stdout.contains("Creating..."), "{}", run.all());
            assert_eq!(w.state_text(), before, "{command:?}: {hostile}: the state file changed");
            assert_eq!(w.addresses(), ["misbehave_ok.ok", "null_resource.n"]);
        }
    }
}

#[test]
fn a_panic_is_reported_with_the_providers_message() {
    let w = workdir();
    w.write("main.tf", &config("", "resource \"misbehave_panic\" \"x\" {}\n"));
    let run = assert_clean_failure(w.cairn(&["plan"]));
    let expected =
        "provider \"misbehave\" panicked: misbehave: deliberate panic in plan while planning misbehave_panic.x";
    assert!(run.stderr.contains(expected), "{}", run.all());
    assert!(run.stderr.contains("provider stderr:\n"), "{}", run.all());
    assert!(run.stderr.contains("misbehave: deliberate panic in plan"), "{}", run.all());
}

#[test]
fn every_hostile_resource_in_one_run_gets_its_own_diagnostic() {
    let w = workdir();
    let hostile: String = HOSTILE.iter().map(|(t, _, _)| format!("resource \"{t}\" \"x\" {{}}\n")).collect();
    let main_tf = config("timeout_seconds = 1\n    memory_mb = 32", &format!("{BASELINE}\n{hostile}"));
    w.write("main.tf", &main_tf);
    let run = assert_clean_failure(w.cairn(&["apply", "-auto-approve"]));
    let errors = errors(&run);
    assert_eq!(errors.len(), HOSTILE.len(), "{}", run.all());
    for (hostile, _, what) in HOSTILE {
        let line = line_of(&main_tf, &format!("resource \"{hostile}\" \"x\""));
        let expected = format!("Error: main.tf:{line}:1: provider \"misbehave\" {what} while planning {hostile}.x");
        assert!(errors.iter().any(|e| e.starts_with(&expected)), "expected\n{expected}\nin:\n{}", run.all());
    }
    assert!(w.state().is_none(), "nothing was applied, so there is no state:\n{}", w.state_text());
}

// ---------------------------------------------------------------------------
// Nothing that was not granted.

/// What `misbehave_escape.<name>` reported: `"<op> <path>"` → `"ok…"` or
/// `"failed: <error>"`.
fn escape_report(run: &Run, name: &str) -> BTreeMap<String, String> {
    let marker = format!(": misbehave_escape.{name}: ");
    run.stderr
        .lines()
        .filter(|l| l.starts_with("Warning: "))
        .filter_map(|l| l.split_once(&marker))
        .filter_map(|(_, report)| report.split_once(": "))
        .map(|(what, outcome)| (what.to_string(), outcome.to_string()))
        .collect()
}

#[test]
fn a_provider_reaches_only_the_granted_directories_and_no_network() {
    let w = workdir();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();
    w.write("out/inside.txt", "granted");
    w.write("templates/t.txt", "template");
    w.write("elsewhere/e.txt", "not granted");
    std::os::unix::fs::symlink(&secret, w.path().join("out/link")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();

    let secret = secret.to_str().unwrap();
    let outside_write = outside.path().join("escaped.txt");
    let outside_write = outside_write.to_str().unwrap();
    let resources = format!(
        r#"
resource "misbehave_escape" "x" {{
  read    = ["out/inside.txt", "templates/t.txt", "main.tf", "elsewhere/e.txt", "out/../main.tf", "out/link", "{secret}", "/etc/passwd"]
  write   = ["out/new.txt", "templates/new.txt", "escaped.txt", "out/../escaped.txt", "{outside_write}"]
  list    = ["out", "/", "."]
  connect = ["127.0.0.1:{port}"]
}}
"#
    );
    w.write("main.tf", &config("read_write = [\"./out\"]\n    read_only = [\"./templates\"]", &resources));
    let run = w.cairn(&["plan"]).success();
    let report = escape_report(&run, "x");

    let ok = |what: &str, expected: &str| {
        assert_eq!(report.get(what).map(String::as_str), Some(expected), "{what}:\n{}", run.all())
    };
    let refused = |what: &str| {
        let outcome = report.get(what).unwrap_or_else(|| panic!("no report of {what:?}:\n{}", run.all()));
        assert!(outcome.starts_with("failed: "), "{what} should have failed:\n{}", run.all());
    };
    // The grants work as granted, read-only while planning...
    ok("read out/inside.txt", "ok (7 bytes)");
    ok("read templates/t.txt", "ok (8 bytes)");
    refused("write out/new.txt");
    assert!(!w.exists("out/new.txt"), "planning wrote into a read-write grant");
    listed(&report);
    // ...and nothing else is there.
    for what in [
        "read main.tf".to_string(),
        "write out/new.txt".to_string(),
        "read elsewhere/e.txt".to_string(),
        "read out/../main.tf".to_string(),
        "read out/link".to_string(),
        format!("read {secret}"),
        "read /etc/passwd".to_string(),
        "write templates/new.txt".to_string(),
        "write escaped.txt".to_string(),
        "write out/../escaped.txt".to_string(),
        format!("write {outside_write}"),
        "list /".to_string(),
        "list .".to_string(),
        format!("connect 127.0.0.1:{port}"),
    ] {
        refused(&what);
    }
    assert!(!w.exists("templates/new.txt") && !w.exists("escaped.txt"), "a write landed outside the grants");
    assert!(!std::path::Path::new(outside_write).exists(), "a write landed outside the grants");
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the provider connected to 127.0.0.1:{port}"
    );
    assert_eq!(report.len(), 17, "every operation is reported once:\n{}", run.all());
}

/// Checks that `list out` listed exactly what is in `out` (in the file
/// system's order).
fn listed(report: &BTreeMap<String, String>) {
    let outcome = report.get("list out").cloned().unwrap_or_default();
    let names = outcome.strip_prefix("ok [").and_then(|s| s.strip_suffix(']')).unwrap_or_default();
    let mut sorted: Vec<&str> = names.split(", ").collect();
    sorted.sort_unstable();
    assert_eq!(sorted, ["inside.txt", "link"], "list out: {outcome}");
}

#[test]
fn a_provider_sees_only_the_granted_environment_variables() {
    let env = [("CAIRN_E2E_GRANTED", "visible"), ("CAIRN_E2E_SECRET", "hunter2")];

    // Nothing granted: nothing seen, although cairn's own environment is
    // full (PATH, HOME, cargo's variables, and the two above).
    let w = workdir();
    let main_tf = format!("{}\nresource \"misbehave_env\" \"e\" {{}}\n", required_providers(&["misbehave"]));
    w.write("main.tf", &main_tf);
    let run = w.cairn_env(&["plan"], &env).success();
    let line = line_of(&main_tf, "resource \"misbehave_env\"");
    assert!(run.stderr.contains(&format!("Warning: main.tf:{line}:1: misbehave_env.e: env: 0\n")), "{}", run.all());
    assert!(run.stderr.contains(&format!("Warning: main.tf:{line}:1: misbehave_env.e: args: 0\n")), "{}", run.all());
    assert!(!run.stderr.contains("hunter2") && !run.stderr.contains("visible"), "{}", run.all());

    // One granted by name: that one, with its value, and nothing else. A
    // granted variable that is not set is simply absent.
    let main_tf = config("env = [\"CAIRN_E2E_GRANTED\", \"CAIRN_E2E_UNSET\"]", "resource \"misbehave_env\" \"e\" {}\n");
    w.write("main.tf", &main_tf);
    let run = w.cairn_env(&["plan"], &env).success();
    let line = line_of(&main_tf, "resource \"misbehave_env\"");
    let expected = format!("Warning: main.tf:{line}:1: misbehave_env.e: env: 1\n");
    assert!(run.stderr.contains(&expected), "expected\n{expected}\nin:\n{}", run.all());
    // The detail, after the source line.
    assert!(run.stderr.contains("\n  CAIRN_E2E_GRANTED=visible\n"), "{}", run.all());
    assert!(!run.stderr.contains("hunter2") && !run.stderr.contains("CAIRN_E2E_UNSET"), "{}", run.all());
}

// ---------------------------------------------------------------------------
// A provider's output goes to the log, never to cairn's output.

#[test]
fn what_a_provider_prints_goes_to_the_debug_log_only() {
    let w = workdir();
    w.write("main.tf", &format!("{}\nresource \"misbehave_chatty\" \"c\" {{}}\n", required_providers(&["misbehave"])));
    let printed = ["chatty: hello on stdout", "chatty: hello on stderr", "chatty: no newline at the end"];

    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(!run.stdout.contains("chatty:"), "a provider's output reached cairn's stdout:\n{}", run.all());
    for p in printed {
        assert!(!run.stderr.contains(p), "{p:?} reached cairn's stderr without CAIRN_LOG:\n{}", run.all());
    }
    // What it logs through the `log` import is logged, at its own level
    // (warnings are shown by default).
    assert!(run.stderr.contains("chatty: a warning through the log import"), "{}", run.all());
    assert!(!run.stderr.contains("chatty: hello through the log import"), "{}", run.all());

    w.write("main.tf", &w.read("main.tf").replace("\"c\"", "\"d\""));
    let run = w.cairn_env(&["apply", "-auto-approve"], &[("CAIRN_LOG", "debug")]).success();
    assert!(!run.stdout.contains("chatty:"), "a provider's output reached cairn's stdout:\n{}", run.all());
    for p in printed.iter().chain(&["chatty: hello through the log import"]) {
        let logged = run.stderr.lines().find(|l| l.contains(p));
        let logged = logged.unwrap_or_else(|| panic!("{p:?} is not in the debug log:\n{}", run.all()));
        assert!(logged.contains("cairn::provider") && logged.contains("provider=misbehave"), "{logged}");
    }
}
