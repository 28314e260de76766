//! Ephemeral resources (Terraform 1.10's `ephemeral "TYPE" "NAME" { … }`)
//! on the real binary: `random`'s ephemeral `random_password` flowing into
//! the write-only `password_wo` of a real PostgreSQL role (the test run's
//! server on loopback), the role logging in with it, and the password in
//! no state, plan file, `-json` stream, log or `show`; the `recorder` test
//! provider's `recorder_lease` proving when the host opens, renews and
//! closes (also when the apply fails); and the errors of misuse at their
//! locations.

use cairn_e2e::{Postgres, Run, Workdir, recorder_workdir};

const DEBUG: [(&str, &str); 1] = [("CAIRN_LOG", "debug")];

/// The one password an ephemeral `random_password` can draw from a
/// single special character: known to the test, and so findable.
const PASSWORD: &str = "QQQQQQQQQQQQQQQQQQQQQQQQ";

/// A provider block for the shared PostgreSQL, logging in as `postgres`.
fn postgres_provider(port: u16) -> String {
    format!(
        "provider \"postgresql\" {{\n  host     = \"127.0.0.1\"\n  port     = {port}\n  username = \"postgres\"\n  \
         sslmode  = \"disable\"\n  sandbox {{\n    connect = [\"127.0.0.1:{port}\"]\n  }}\n}}\n"
    )
}

/// `random_password` that can only draw [`PASSWORD`], into a role's
/// write-only password.
fn role_with_ephemeral_password(role: &str) -> String {
    format!(
        r#"ephemeral "random_password" "db" {{
  length           = 24
  upper            = false
  lower            = false
  numeric          = false
  override_special = "Q"
}}

resource "postgresql_role" "app" {{
  name                = "{role}"
  login               = true
  password_wo         = ephemeral.random_password.db.result
  password_wo_version = 1
}}
"#
    )
}

fn assert_absent(what: &str, text: &str) {
    assert!(!text.contains(PASSWORD), "{what} holds the ephemeral password:\n{text}");
}

#[test]
fn an_ephemeral_password_sets_a_write_only_role_password_and_is_stored_nowhere() {
    let server = Postgres::shared();
    let role = server.schema("ephemeral_role");
    let w = Workdir::new();
    w.write("main.tf", &format!("{}{}", postgres_provider(server.port), role_with_ephemeral_password(&role)));

    let plan = w.cairn_here_env(&["plan", "-out=tfplan"], &DEBUG).success();
    assert_absent("plan", &plan.all());
    let opening =
        plan.stdout.find("ephemeral.random_password.db: Opening...").unwrap_or_else(|| panic!("{}", plan.all()));
    let opened = plan
        .stdout
        .find("ephemeral.random_password.db: Opening complete after 0s")
        .unwrap_or_else(|| panic!("{}", plan.all()));
    let closing =
        plan.stdout.find("ephemeral.random_password.db: Closing...").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(opening < opened && opened < closing, "{}", plan.all());
    assert!(plan.stdout.contains("password_wo"), "{}", plan.all());
    let plan_file = std::fs::read(w.path().join("tfplan")).unwrap();
    assert_absent("the plan file", &String::from_utf8_lossy(&plan_file));
    assert!(!plan_file.windows(PASSWORD.len()).any(|b| b == PASSWORD.as_bytes()), "the plan file holds it");

    let apply = w.cairn_here_env(&["apply", "-json", "tfplan"], &DEBUG).success();
    assert_absent("apply -json and its log", &apply.all());
    for message in ["\"type\":\"ephemeral_op_start\"", "\"type\":\"ephemeral_op_complete\""] {
        assert!(apply.stdout.contains(message), "{message}: {}", apply.all());
    }
    assert_absent("the state", &w.state_text());

    // The role logs in with it: the password was set.
    let who = server.psql_as(&role, PASSWORD, "postgres", "SELECT current_user");
    assert_eq!(who, role);

    for args in [&["show"][..], &["state", "show", "postgresql_role.app"], &["state", "list"]] {
        let run = w.cairn_here_env(args, &DEBUG).success();
        assert_absent(&args.join(" "), &run.all());
        assert!(!run.stdout.contains("ephemeral.random_password"), "{}", run.all());
    }
    // A plan after it: the role as configured; the password drawn anew is
    // not a change (password_wo_version says when to set it again).
    let again = w.cairn_env(&["plan"], &DEBUG).success();
    assert!(again.stdout.contains("No changes."), "{}", again.all());
    w.cairn(&["destroy", "-auto-approve"]).success();
}

/// The log of operations of the recorder's workdir, one a line, only the
/// op and name.
fn ops(w: &Workdir) -> Vec<String> {
    let log = std::fs::read_to_string(w.path().join("log/ops.log")).unwrap_or_default();
    log.lines().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect()
}

const LEASED_THING: &str = r#"
ephemeral "recorder_lease" "l" {
  name     = "l"
  renew_ms = 100
}

resource "recorder_thing" "a" {
  name      = "a"
  secret_wo = ephemeral.recorder_lease.l.token
  sleep_ms  = 1500
}
"#;

#[test]
fn a_lease_is_opened_for_the_plan_and_the_apply_renewed_while_in_use_and_closed_after() {
    let w = recorder_workdir(LEASED_THING);
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(!apply.all().contains("token-l"), "{}", apply.all());
    let ops = ops(&w);
    // The plan opens and closes it; the apply opens it before the create
    // that needs it, renews it while the create runs, and closes it after.
    assert_eq!(ops[..2], ["open l", "close l"], "{ops:?}");
    assert_eq!(ops[2], "open l", "{ops:?}");
    let create = ops.iter().position(|o| o == "create a").expect("created");
    assert_eq!(ops.last().map(String::as_str), Some("close l"), "{ops:?}");
    assert!(ops[3..create].iter().all(|o| o == "renew l"), "{ops:?}");
    assert!(ops[create + 1..ops.len() - 1].iter().all(|o| o == "renew l"), "{ops:?}");
    assert!(ops.iter().any(|o| o == "renew l"), "renewed at renew-at while the create ran: {ops:?}");
    assert!(!w.state_text().contains("token-l"), "{}", w.state_text());
}

#[test]
fn a_lease_is_closed_when_the_apply_fails() {
    let w = recorder_workdir(LEASED_THING.replace("sleep_ms  = 1500", "").as_str());
    w.write("log/fail-create-a", "");
    let apply = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(apply.stderr.contains("create of a failed, as asked"), "{}", apply.all());
    let ops = ops(&w);
    assert_eq!(ops, ["open l", "close l", "open l", "fail-create a", "close l"], "{}", apply.all());
}

#[test]
fn every_lease_opened_by_an_interrupted_plan_is_closed_and_close_errors_are_shown() {
    // Lease b is opened after a (its name refers to a's token) and waits in
    // its open: the interrupt comes while the plan has a open and b's open
    // under way; c would be opened after b, and the thing after c.
    let w = recorder_workdir(
        r#"
ephemeral "recorder_lease" "a" {
  name = "a"
}

ephemeral "recorder_lease" "b" {
  name          = "b${substr(ephemeral.recorder_lease.a.token, 0, 0)}"
  open_sleep_ms = 3000
}

ephemeral "recorder_lease" "c" {
  name = "c${substr(ephemeral.recorder_lease.b.token, 0, 0)}"
}

resource "recorder_thing" "t" {
  name      = "t"
  secret_wo = ephemeral.recorder_lease.c.token
}
"#,
    );
    // a's close fails: the interrupt is reported, and that error with it.
    w.write("log/fail-close-a", "");
    // apply, whose plan may write the recorder's log (a plan alone may not).
    let run = crate::interrupts::Running::start(&w, &["apply", "-auto-approve"], &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !ops(&w).iter().any(|o| o == "open b") {
        assert!(std::time::Instant::now() < deadline, "b was never opened: {:?}", ops(&w));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    run.signal("INT");
    let plan = run.finish();
    assert_ne!(plan.code, 0, "{}", plan.all());
    assert!(plan.stderr.contains("Interrupted: the plan stopped; nothing was changed"), "{}", plan.all());
    assert!(plan.stderr.contains("recorder: close of a failed, as asked"), "{}", plan.all());
    // b's open under way finished, and b is closed too, the last opened
    // first; nothing started after the interrupt (c is never opened).
    assert_eq!(ops(&w), ["open a", "open b", "close b", "fail-close a"], "{}", plan.all());
    assert!(!plan.all().contains("token-"), "{}", plan.all());
}

#[test]
fn nothing_is_opened_in_an_apply_that_does_not_need_it() {
    let w = recorder_workdir(LEASED_THING.replace("sleep_ms  = 1500", "").as_str());
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = ops(&w).len();
    // No change: the plan opens it to evaluate, the apply has nothing to do.
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("No changes."), "{}", run.all());
    assert_eq!(ops(&w)[before..], ["open l", "close l"]);
}

/// The line (1-based) of `main.tf` in `w` that contains `text`.
fn line_of(w: &Workdir, text: &str) -> usize {
    let config = std::fs::read_to_string(w.path().join("main.tf")).unwrap();
    config.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("{text:?} is not in {config}")) + 1
}

#[test]
fn an_open_error_about_an_attribute_is_reported_at_that_attribute() {
    let w = recorder_workdir("\nephemeral \"recorder_lease\" \"l\" {\n  renew_ms = 100\n  name     = \"l\"\n}\n");
    w.write("log/fail-open-l", "");
    // apply: its plan may write the recorder's log (a plan's may not).
    let plan = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(plan.stderr.contains("ephemeral.recorder_lease.l: recorder: open of l failed, as asked"), "{}", plan.all());
    assert!(plan.stderr.contains("at attribute .name"), "{}", plan.all());
    let (block, name) = (line_of(&w, "ephemeral \"recorder_lease\""), line_of(&w, "name     = \"l\""));
    // At the value, as Terraform's error is.
    assert!(plan.stderr.contains(&format!("main.tf:{name}:14: ")), "at `name`, line {name}: {}", plan.all());
    assert!(!plan.stderr.contains(&format!("main.tf:{block}:")), "not at the block: {}", plan.all());
    assert_eq!(ops(&w), ["fail-open l"]);
}

#[test]
fn an_ephemeral_value_in_a_stored_attribute_is_an_error_at_its_location() {
    let w = recorder_workdir(
        r#"
ephemeral "recorder_lease" "l" {
  name = "l"
}

resource "recorder_thing" "a" {
  name  = "a"
  value = ephemeral.recorder_lease.l.token
}
"#,
    );
    let plan = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(plan.stderr.contains("Invalid use of ephemeral value"), "{}", plan.all());
    assert!(plan.stderr.contains("main.tf:24:"), "at the attribute: {}", plan.all());
    assert!(plan.stderr.contains("\"value\""), "{}", plan.all());
    assert!(ops(&w).is_empty(), "refused before anything is opened: {:?}", ops(&w));
}

#[test]
fn an_ephemeral_value_in_a_root_output_or_count_is_refused() {
    let w = recorder_workdir(
        r#"
ephemeral "recorder_lease" "l" {
  name = "l"
}

output "token" {
  value = ephemeral.recorder_lease.l.token
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Ephemeral value not allowed"), "{}", plan.all());
    w.configure_recorder(
        r#"
ephemeral "recorder_lease" "l" {
  name = "l"
}

resource "recorder_thing" "a" {
  count = length(ephemeral.recorder_lease.l.token)
  name  = "a"
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Invalid count argument"), "{}", plan.all());
}

/// A module call's `count` or `for_each` (decided while planning, as it
/// refers to a resource) may not come from an ephemeral resource:
/// Terraform's error at the argument, before anything is opened.
#[test]
fn an_ephemeral_value_in_a_module_count_or_for_each_is_refused() {
    // Terraform's wording: the given "count" is…, the given "for_each" value is….
    for (argument, given, expr, what) in [
        ("count", "\"count\"", "length(ephemeral.recorder_lease.l.token)", "the number of resource instances"),
        ("for_each", "\"for_each\" value", "toset([ephemeral.recorder_lease.l.token])", "a resource's instance keys"),
    ] {
        let w = recorder_workdir(&format!(
            "ephemeral \"recorder_lease\" \"l\" {{\n  name = \"l\"\n}}\n\nmodule \"m\" {{\n  source = \"./m\"\n  \
             {argument} = {expr}\n}}\n"
        ));
        w.write("m/main.tf", "resource \"recorder_thing\" \"t\" {\n  name = \"t\"\n}\n");
        let plan = w.cairn(&["plan"]).failure();
        let line = line_of(&w, &format!("{argument} = "));
        assert!(plan.stderr.contains(&format!("main.tf:{line}:")), "at the argument: {}", plan.all());
        assert!(plan.stderr.contains(&format!("Invalid {argument} argument")), "{}", plan.all());
        let unwrapped = plan.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        let detail = format!("The given {given} is derived from an ephemeral value");
        assert!(unwrapped.contains(&detail), "{}", plan.all());
        assert!(unwrapped.contains(what), "{}", plan.all());
        assert!(ops(&w).is_empty(), "nothing opened: {:?}", ops(&w));
    }
}

#[test]
fn an_unknown_attribute_or_type_is_an_error_naming_provider_type_and_location() {
    let w = recorder_workdir("ephemeral \"recorder_lease\" \"l\" {\n  name = \"l\"\n  color = \"red\"\n}\n");
    let run: Run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("Unsupported argument"), "{}", run.all());
    assert!(run.stderr.contains("color"), "{}", run.all());
    w.configure_recorder("ephemeral \"recorder_thing\" \"l\" {\n  name = \"l\"\n}\n");
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("has no ephemeral resource type \"recorder_thing\""), "{}", run.all());
    assert!(run.stderr.contains("recorder_lease"), "{}", run.all());
    assert!(ops(&w).is_empty(), "nothing opened: {:?}", ops(&w));
}
