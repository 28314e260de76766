//! `cairn test` (issue 37, item 3): `*.tftest.hcl` files run as
//! `terraform test` runs them, with real providers, the state kept between
//! a file's runs and destroyed at its end; compared with the real
//! `terraform` 1.11.4 on PATH where both can run the same files.

use cairn_e2e::Workdir;

const MODULE: &str = r#"variable "name" {
  type = string
  validation {
    condition     = length(var.name) > 2
    error_message = "name too short"
  }
}

resource "terraform_data" "a" {
  input = var.name
}

output "out" {
  value = terraform_data.a.output
}
"#;

const MAIN_TEST: &str = r#"variables {
  name = "alpha"
}

run "plan_it" {
  command = plan
  assert {
    condition     = terraform_data.a.input == "alpha"
    error_message = "wrong input"
  }
}

run "apply_it" {
  variables {
    name = "beta"
  }
  assert {
    condition     = output.out == "beta"
    error_message = "wrong output"
  }
  assert {
    condition     = output.out == "gamma"
    error_message = "expected gamma, got ${output.out}"
  }
}

run "uses_an_earlier_run" {
  variables {
    name = "${run.apply_it.out}-again"
  }
  assert {
    condition     = output.out == "beta-again"
    error_message = "run outputs are not passed on"
  }
}

run "bad_name" {
  command = plan
  variables {
    name = "x"
  }
  expect_failures = [var.name]
}
"#;

const SECOND_TEST: &str = "run \"ok\" {\n  variables {\n    name = \"delta\"\n  }\n}\n";

fn module_with_tests() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", MODULE);
    w.write("main.tftest.hcl", MAIN_TEST);
    w.write("tests/second.tftest.hcl", SECOND_TEST);
    w
}

#[test]
fn test_files_run_and_report_as_terraform_test_does() {
    let w = module_with_tests();
    let ours = w.cairn(&["test", "-no-color"]);
    let tf_dir = module_with_tests();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1));
    // The failed assertion, with its place and its message.
    assert!(ours.stderr.contains("Error: main.tftest.hcl:22:21: Test assertion failed"), "{}", ours.all());
    assert!(ours.stderr.contains("expected gamma, got beta"), "{}", ours.all());
    // The runs' state lived in memory: the directory has no state file.
    assert!(!w.path().join("cairn.state.json").exists());

    let filtered = w.cairn(&["test", "-no-color", "-filter=tests/second.tftest.hcl"]).success();
    let theirs = tf_dir.terraform(&["test", "-no-color", "-filter=tests/second.tftest.hcl"]);
    assert_eq!(filtered.stdout, theirs.stdout, "{}", filtered.all());
    assert!(filtered.stdout.ends_with("Success! 1 passed, 0 failed.\n"), "{}", filtered.all());
}

#[test]
fn real_objects_are_kept_between_runs_and_destroyed_at_the_end() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"provider "local" {
  sandbox {
    read_write = ["out"]
  }
}

variable "text" {
  type = string
}

resource "local_file" "f" {
  filename = "out/f.txt"
  content  = var.text
}

output "path" {
  value = local_file.f.filename
}
"#,
    );
    w.write(
        "tests/files.tftest.hcl",
        r#"run "create" {
  variables {
    text = "one"
  }
  assert {
    condition     = local_file.f.content == "one"
    error_message = "not written"
  }
}

run "update" {
  variables {
    text = "two"
  }
  assert {
    condition     = fileexists(run.create.path) && local_file.f.id != ""
    error_message = "the file of the first run is gone"
  }
}
"#,
    );
    std::fs::create_dir_all(w.path().join("out")).unwrap();
    let junit = format!("-junit-xml={}", w.path().join("results.xml").display());
    let run = w.cairn(&["test", "-no-color", &junit]).success();
    assert!(run.stdout.contains("  run \"create\"... pass\n  run \"update\"... pass\n"), "{}", run.all());
    // Destroyed at the end: the file the runs made is gone.
    assert!(!w.path().join("out/f.txt").exists(), "{}", run.all());
    let xml = w.read("results.xml");
    assert!(
        xml.contains("<testsuite name=\"tests/files.tftest.hcl\" tests=\"2\" skipped=\"0\" failures=\"0\""),
        "{xml}"
    );
}

#[test]
fn an_object_left_after_the_tests_is_reported_loudly() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "resource \"terraform_data\" \"kept\" {\n  input = \"x\"\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n",
    );
    w.write("main.tftest.hcl", "run \"make\" {}\n");
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("  run \"make\"... pass\nmain.tftest.hcl... tearing down\nmain.tftest.hcl... fail\n"));
    assert!(run.stderr.contains("Failed to clean up after tests"), "{}", run.all());
    assert!(run.stderr.contains("  - terraform_data.kept"), "{}", run.all());
}

#[test]
fn expected_failures_that_do_not_happen_fail_the_run() {
    let w = Workdir::new();
    w.write("main.tf", MODULE);
    w.write(
        "main.tftest.hcl",
        "run \"wrongly_expects\" {\n  command = plan\n  variables {\n    name = \"long enough\"\n  }\n  expect_failures = [var.name]\n}\n",
    );
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("  run \"wrongly_expects\"... fail"), "{}", run.all());
    assert!(run.stderr.contains("Error: main.tftest.hcl:6:22: Missing expected failure"), "{}", run.all());
}

const CALLS_MODULE: &str = "variable \"n\" {\n  type    = number\n  default = 1\n}\n\nmodule \"m\" {\n  source = \"./m\"\n  n      = var.n\n}\n";

const CHECKED_MODULE: &str = r#"variable "n" {
  type = number
}

resource "terraform_data" "d" {
  input = var.n * 2
}

check "small" {
  assert {
    condition     = var.n < 5
    error_message = "n is big"
  }
}
"#;

const EXPECTS_INSIDE_MODULE: &str = r#"run "good" {
  command = plan
}

run "inside" {
  command = plan
  variables {
    n = 7
  }
  expect_failures = [module.m.check.small, var.n]
}

run "after" {
  command = plan
}
"#;

fn expects_inside_module() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", CALLS_MODULE);
    w.write("m/main.tf", CHECKED_MODULE);
    w.write("main.tftest.hcl", EXPECTS_INSIDE_MODULE);
    w
}

#[test]
fn expected_failures_inside_a_module_are_refused_as_terraform_refuses_them() {
    let ours = expects_inside_module().cairn(&["test", "-no-color"]);
    let tf_dir = expects_inside_module();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert!(ours.stdout.contains("  run \"inside\"... fail\n  run \"after\"... skip\n"), "{}", ours.all());
    assert!(
        ours.stderr.contains("Error: main.tftest.hcl:10:22: Invalid `expect_failures` reference"),
        "{}",
        ours.all()
    );
    assert!(ours.stderr.contains("You cannot expect failures from module.m.check."), "{}", ours.all());
    assert!(theirs.stderr.contains("You cannot expect failures from module.m.check."), "{}", theirs.all());
}

const VALIDATED_MODULE: &str = r#"variable "n" {
  type = number
  validation {
    condition     = var.n > 0
    error_message = "n must be positive"
  }
}

resource "terraform_data" "d" {
  input = var.n * 2
}

output "doubled" {
  value = terraform_data.d.output
}

output "other" {
  value = "o"
}
"#;

const CALLS_VALIDATED_MODULE: &str = r#"variable "n" {
  type    = number
  default = 1
}

module "m" {
  source = "./m"
  n      = var.n
}

output "doubled" {
  value = module.m.doubled
}

output "other" {
  value = module.m.other
}
"#;

const OVERRIDES_MODULE: &str = r#"override_module {
  target = module.m
  outputs = {
    doubled = 42
  }
}

run "file_level" {
  variables {
    n = -1
  }
  assert {
    condition     = output.doubled == 42
    error_message = "the file's override is not used"
  }
  assert {
    condition     = output.other == null
    error_message = "an output the override does not give is not null"
  }
}

run "run_level" {
  command = plan
  override_module {
    target = module.m
    outputs = {
      doubled = 43
    }
  }
  assert {
    condition     = output.doubled == 43
    error_message = "the run's override does not win"
  }
}

run "wrong" {
  command = plan
  assert {
    condition     = output.doubled == 1
    error_message = "doubled is the override's"
  }
}
"#;

fn overridden_module() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", CALLS_VALIDATED_MODULE);
    w.write("m/main.tf", VALIDATED_MODULE);
    w.write("main.tftest.hcl", OVERRIDES_MODULE);
    w
}

#[test]
fn an_overridden_module_is_not_planned_and_gives_its_outputs_as_in_terraform() {
    let ours = overridden_module().cairn(&["test", "-no-color"]);
    let tf_dir = overridden_module();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert!(ours.stdout.contains("  run \"file_level\"... pass\n  run \"run_level\"... pass\n"), "{}", ours.all());
    assert!(ours.stderr.contains("doubled is the override's"), "{}", ours.all());
    // The module's resource is neither planned nor applied.
    let verbose = overridden_module().cairn(&["test", "-no-color", "-verbose"]);
    assert!(!verbose.stdout.contains("terraform_data"), "{}", verbose.all());
    assert!(verbose.stdout.contains("doubled = 42\n"), "{}", verbose.all());
}

const PLANNED_TWICE: &str = r#"variable "x" {
  type = string
}

resource "terraform_data" "a" {
  input = var.x
}

resource "terraform_data" "b" {
  input = var.x
}

output "a_id" {
  value = terraform_data.a.id
}
"#;

/// Runs whose `plan_options` target, refresh only and replace; the last
/// run fails on purpose, to show that only the run that asks replaces.
const PLAN_OPTIONS_TEST: &str = r#"run "first" {
  variables {
    x = "one"
  }
}

run "targeted" {
  command = plan
  variables {
    x = "two"
  }
  plan_options {
    target = [terraform_data.a]
  }
  assert {
    condition     = terraform_data.a.input == "two"
    error_message = "only terraform_data.a is planned"
  }
}

run "refresh_only" {
  command = plan
  variables {
    x = "three"
  }
  plan_options {
    mode    = refresh-only
    refresh = true
  }
  assert {
    condition     = terraform_data.a.input == "one"
    error_message = "a refresh-only plan changes nothing"
  }
}

run "replaced" {
  variables {
    x = "one"
  }
  plan_options {
    replace = [terraform_data.a]
  }
  assert {
    condition     = terraform_data.a.id != run.first.a_id
    error_message = "terraform_data.a is not replaced"
  }
}

run "not_replaced" {
  variables {
    x = "one"
  }
  assert {
    condition     = terraform_data.a.id != run.replaced.a_id
    error_message = "terraform_data.a is kept"
  }
}
"#;

fn plan_options_config() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", PLANNED_TWICE);
    w.write("main.tftest.hcl", PLAN_OPTIONS_TEST);
    w
}

#[test]
fn plan_options_target_refresh_only_and_replace_as_in_terraform() {
    let ours = plan_options_config().cairn(&["test", "-no-color"]);
    let tf_dir = plan_options_config();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    // Terraform prints a run's warnings (targeting) on standard output,
    // cairn on standard error: the results are what must be the same.
    let results = |out: &str| -> Vec<String> { out.lines().filter(|l| l.contains("...")).map(String::from).collect() };
    assert_eq!(results(&ours.stdout), results(&theirs.stdout), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert!(ours.stdout.ends_with("Failure! 4 passed, 1 failed.\n"), "{}", ours.all());
    assert!(theirs.stdout.ends_with("Failure! 4 passed, 1 failed.\n"), "{}", theirs.all());
    assert!(ours.stderr.contains("Resource targeting is in effect"), "{}", ours.all());
    assert!(ours.stderr.contains("terraform_data.a is kept"), "{}", ours.all());
}
