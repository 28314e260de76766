//! A Terraform user's scripts, run as they are (issue 36, items 2 and 6):
//! `TF_VAR_name`, `-input`, `-lock`, `-lock-timeout`, `-compact-warnings`,
//! `-auto-approve=BOOL`, the global `-chdir=DIR`, `required_version`, and
//! no lock file left behind.

use std::process::{Command, Stdio};

use cairn::state::LocalBackend;
use cairn_e2e::{Run, Workdir, cairn_binary, cairn_command, use_shared_cache};

/// One `terraform_data` whose input shows the variables' values.
const CONFIG: &str = r#"
variable "a" {}
variable "b" {}
variable "c" {}
variable "d" {}

resource "terraform_data" "shown" {
  input = "${var.a} ${var.b} ${var.c} ${var.d}"
}
"#;

/// One resource, no variables.
const PLAIN: &str = "resource \"terraform_data\" \"x\" {\n  input = \"x\"\n}\n";

/// The planned input, from `plan`'s text.
fn planned_input(run: &Run) -> String {
    let line = run.stdout.lines().find(|l| l.contains("input ")).unwrap_or_else(|| panic!("{}", run.all()));
    line.split(" = ").nth(1).unwrap().trim_matches('"').to_string()
}

fn workdir(config: &str) -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", config);
    w
}

#[test]
fn tf_var_is_read_cairn_var_wins_over_it_and_files_and_flags_win_over_both() {
    let w = workdir(CONFIG);
    w.write("terraform.tfvars", "c = \"tfvars\"\n");
    let env = [
        ("TF_VAR_a", "tf"),
        ("TF_VAR_b", "tf"),
        ("CAIRN_VAR_b", "cairn"),
        ("TF_VAR_c", "tf"),
        ("TF_VAR_d", "tf"),
        ("CAIRN_VAR_d", "cairn"),
    ];
    let run = w.cairn_env(&["plan", "-var", "d=flag"], &env).success();
    assert_eq!(planned_input(&run), "tf cairn tfvars flag");
}

#[test]
fn input_false_is_accepted_and_a_missing_variable_without_a_terminal_is_an_error() {
    let w = workdir(CONFIG);
    let vars = ["-var", "a=1", "-var", "b=2", "-var", "c=3"];
    for input in ["-input=false", "-input=true", "-input"] {
        let args: Vec<&str> = ["plan", input].into_iter().chain(vars).collect();
        let run = w.cairn(&args).failure();
        assert!(run.stderr.contains("No value for required variable"), "{}", run.all());
        assert!(run.stderr.contains("\"d\""), "{}", run.all());
        assert!(!run.stdout.contains("Enter a value"), "{}", run.all());
    }
    let run = w.cairn(&["plan", "-input=false", "-var", "a=1", "-var", "b=2", "-var", "c=3", "-var", "d=4"]).success();
    assert_eq!(planned_input(&run), "1 2 3 4");
    // CI scripts run `init -input=false` first: init asks nothing anyway.
    w.cairn(&["init", "-input=false"]).success();
}

/// `script` (util-linux) runs cairn on a pseudo-terminal, whose input is
/// what the test writes to `script`'s standard input.
#[test]
fn a_missing_variable_is_asked_for_on_a_terminal_unless_input_is_false() {
    let w = workdir(
        "variable \"word\" {\n  description = \"A word\"\n}\nresource \"terraform_data\" \"x\" {\n  input = var.word\n}\n",
    );
    let on_terminal = |flags: &str| -> Run {
        let line = format!("{} plan {flags} {}", cairn_binary().display(), w.path().display());
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"]).env_remove("CAIRN_LOG").env("NO_COLOR", "1");
        cmd.env("CAIRN_COMPILE_NOTICE_AFTER_MS", "3600000");
        use_shared_cache(&mut cmd);
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"typed\n").unwrap();
        let mut run: Run = child.wait_with_output().unwrap().into();
        // A terminal ends lines with CR LF.
        run.stdout = run.stdout.replace("\r\n", "\n");
        run
    };
    let asked = on_terminal("");
    assert_eq!(asked.code, 0, "{}", asked.all());
    assert!(asked.stdout.contains("var.word\n  A word\n\n  Enter a value: "), "{}", asked.all());
    assert!(asked.stdout.contains("+ input  = \"typed\""), "{}", asked.all());
    let refused = on_terminal("-input=false");
    assert_eq!(refused.code, 1, "{}", refused.all());
    assert!(!refused.stdout.contains("Enter a value"), "{}", refused.all());
    assert!(refused.stdout.contains("No value for required variable"), "{}", refused.all());
}

#[test]
fn lock_false_runs_while_another_process_holds_the_lock() {
    let w = workdir(PLAIN);
    let held = LocalBackend::open(&w.path().join("cairn.state.json")).unwrap();
    let refused = w.cairn(&["plan"]).failure();
    assert!(refused.stderr.contains("is locked by another cairn process"), "{}", refused.all());
    w.cairn(&["plan", "-lock=false"]).success();
    w.cairn(&["apply", "-auto-approve", "-lock=false"]).success();
    assert_eq!(w.addresses(), ["terraform_data.x"]);
    drop(held);
    let run = w.cairn(&["plan", "-lock=true"]).success();
    assert!(run.stdout.contains("No changes."), "{}", run.all());
}

#[test]
fn lock_timeout_waits_for_the_lock_and_gives_up_when_it_is_not_released() {
    let w = workdir(PLAIN);
    let held = LocalBackend::open(&w.path().join("cairn.state.json")).unwrap();
    let gave_up = w.cairn(&["plan", "-lock-timeout=1s"]).failure();
    assert!(gave_up.stderr.contains("is locked by another cairn process"), "{}", gave_up.all());
    // Released while the run waits (or before it first tries): it goes on.
    let mut waiting = w.command(&["apply", "-auto-approve", "-lock-timeout=5m"], &[]);
    let child = waiting.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(held);
    let run: Run = child.wait_with_output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(w.addresses(), ["terraform_data.x"]);
}

#[test]
fn compact_warnings_shows_one_line_a_warning() {
    let w = workdir(PLAIN);
    w.write("terraform.tfvars", "undeclared = 1\n");
    let full = w.cairn(&["plan"]).success();
    assert!(full.stderr.contains("does not declare a variable named \"undeclared\""), "{}", full.all());
    let compact = w.cairn(&["plan", "-compact-warnings"]).success();
    assert!(compact.stderr.contains("\nWarnings:\n\n- Value for undeclared variable\n"), "{}", compact.all());
    assert!(compact.stderr.contains("To see the full warning notes, run cairn without -compact-warnings."));
    assert!(!compact.stderr.contains("does not declare a variable"), "{}", compact.all());
}

#[test]
fn auto_approve_takes_a_value() {
    let w = workdir(PLAIN);
    let asked = w.cairn(&["apply", "-auto-approve=false"]).failure();
    assert!(asked.stdout.contains("Apply cancelled."), "{}", asked.all());
    assert!(w.addresses().is_empty());
    w.cairn(&["apply", "-auto-approve=true"]).success();
    assert_eq!(w.addresses(), ["terraform_data.x"]);
    let asked = w.cairn(&["destroy", "-auto-approve=false"]).failure();
    assert!(asked.stdout.contains("Apply cancelled."), "{}", asked.all());
    w.cairn(&["destroy", "-auto-approve=true"]).success();
    assert!(w.addresses().is_empty());
}

#[test]
fn chdir_before_the_command_runs_it_in_that_directory() {
    let w = workdir(PLAIN);
    w.write("vars/x.tfvars", "");
    let elsewhere = tempfile::tempdir().unwrap();
    let chdir = format!("-chdir={}", w.path().display());
    let mut cmd = cairn_command(&[&chdir, "apply", "-auto-approve", "-var-file=vars/x.tfvars"], &[]);
    let run: Run = cmd.current_dir(elsewhere.path()).stdin(Stdio::null()).output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(w.addresses(), ["terraform_data.x"]);
    assert!(!elsewhere.path().join("cairn.state.json").exists());

    let missing = elsewhere.path().join("missing");
    let chdir = format!("-chdir={}", missing.display());
    let run: Run = cairn_command(&[&chdir, "plan"], &[]).stdin(Stdio::null()).output().unwrap().into();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stderr.starts_with(&format!("Error handling -chdir option: chdir {}", missing.display())));
}

#[test]
fn required_version_is_checked_with_terraform_s_message() {
    let w = workdir(&format!("terraform {{\n  required_version = \">= 1.5\"\n}}\n{PLAIN}"));
    w.cairn(&["plan"]).success();
    w.write("main.tf", &format!("cairn {{\n  required_version = \">= 0.1\"\n}}\n{PLAIN}"));
    w.cairn(&["plan"]).success();

    w.write("main.tf", &format!("terraform {{\n  required_version = \"< 1.0\"\n}}\n{PLAIN}"));
    let old = w.cairn(&["plan"]).failure();
    assert!(old.stderr.contains("main.tf:2:3: Unsupported Terraform Core version"), "{}", old.all());
    assert!(old.stderr.contains("This configuration does not support Terraform version 1.11.4."), "{}", old.all());

    w.write("main.tf", &format!("cairn {{\n  required_version = \">= 99\"\n}}\n{PLAIN}"));
    let new = w.cairn(&["validate"]).failure();
    assert!(new.stderr.contains("main.tf:2:3: Unsupported cairn version"), "{}", new.all());

    w.write("main.tf", &format!("terraform {{\n  required_version = \"not a constraint\"\n}}\n{PLAIN}"));
    let bad = w.cairn(&["plan"]).failure();
    assert!(bad.stderr.contains("main.tf:2:22: Invalid version constraint"), "{}", bad.all());
}

#[test]
fn no_lock_file_is_left_behind() {
    let w = workdir(PLAIN);
    w.cairn(&["plan"]).success();
    assert!(!w.exists("cairn.state.json.lock"));
    w.cairn(&["apply", "-auto-approve"]).success();
    assert!(w.exists("cairn.state.json"));
    assert!(!w.exists("cairn.state.json.lock"));
    w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(!w.exists("cairn.state.json.lock"));
}
