//! `check` blocks through the real binary: assertions checked after plan
//! and after apply, failing as warnings as Terraform's do, an assertion on
//! values known only after apply reported as such while planning, and a
//! scoped data source read inside its check, a failure to read it a
//! warning too.

use cairn_e2e::Workdir;

/// terraform_data checks that Terraform 1.11 reports the same way.
const CHECKS: &str = r#"
resource "terraform_data" "a" {
  input = "x"
}

check "known" {
  assert {
    condition     = terraform_data.a.input == "y"
    error_message = "input is ${terraform_data.a.input}."
  }
}

check "unknown" {
  assert {
    condition     = terraform_data.a.output == "y"
    error_message = "output is not y."
  }
}
"#;

#[test]
fn failed_assertions_are_warnings_after_plan_and_after_apply() {
    let w = Workdir::new();
    w.write("main.tf", CHECKS);
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stderr.contains("Warning: main.tf:8:21: Check block assertion failed"), "{}", plan.all());
    assert!(plan.stderr.contains("input is x."), "{}", plan.all());
    assert!(plan.stderr.contains("Warning: main.tf:15:21: Check block assertion known after apply"), "{}", plan.all());
    assert!(
        plan.stderr.contains(
            "The condition could not be evaluated at this time, a result will be known when this plan is applied."
        ),
        "{}",
        plan.all()
    );
    assert!(!plan.stderr.contains("Error"), "{}", plan.all());

    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 1 added"), "{}", apply.all());
    // After apply, both are decided; the plan's notice is not repeated.
    assert!(apply.stderr.contains("Warning: main.tf:8:21: Check block assertion failed"), "{}", apply.all());
    assert!(apply.stderr.contains("Warning: main.tf:15:21: Check block assertion failed"), "{}", apply.all());
    assert!(apply.stderr.contains("output is not y."), "{}", apply.all());
    assert!(!apply.stderr.contains("known after apply"), "{}", apply.all());

    // Passing checks say nothing.
    w.write("main.tf", &CHECKS.replace("\"y\"", "\"x\""));
    let plan = w.cairn(&["plan"]).success();
    assert!(!plan.stderr.contains("Check block assertion"), "{}", plan.all());
}

#[test]
fn a_scoped_data_source_is_read_inside_its_check_and_a_failed_read_is_a_warning() {
    let w = Workdir::new();
    w.write("data/limit.txt", "1");
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_only = ["./data"]
  }
}

resource "terraform_data" "a" {
  input = "x"
}

check "limit" {
  data "local_file" "limit" {
    filename = "data/limit.txt"
  }
  assert {
    condition     = data.local_file.limit.content == "2"
    error_message = "The limit is ${data.local_file.limit.content}, not 2."
  }
}

check "missing" {
  data "local_file" "missing" {
    filename = "data/missing.txt"
  }
  assert {
    condition     = data.local_file.missing.content != ""
    error_message = "never shown: the read fails"
  }
}
"#,
    );
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(apply.stderr.contains("Warning: main.tf:17:21: Check block assertion failed"), "{}", apply.all());
    assert!(apply.stderr.contains("The limit is 1, not 2."), "{}", apply.all());
    // At the attribute the provider names (its filename), as every
    // provider error about an attribute is.
    assert!(apply.stderr.contains("Warning: main.tf:24:16: data.local_file.missing: Cannot read"), "{}", apply.all());
    assert!(!apply.stderr.contains("never shown"), "{}", apply.all());
    // A check's data source is no object of the state.
    assert_eq!(w.addresses(), ["terraform_data.a"]);

    w.write("data/limit.txt", "2");
    let plan = w.cairn(&["plan"]).success();
    assert!(!plan.stderr.contains("The limit is"), "{}", plan.all());
}

#[test]
fn a_scoped_data_source_is_not_available_outside_its_check() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
check "c" {
  data "local_file" "f" {
    filename = "f.txt"
  }
  assert {
    condition     = data.local_file.f.content != ""
    error_message = "empty"
  }
}

output "o" {
  value = data.local_file.f.content
}
"#,
    );
    let validate = w.cairn(&["validate"]).failure();
    assert!(validate.stderr.contains("Error: main.tf:13:11: Reference to scoped resource"), "{}", validate.all());
    assert!(
        validate
            .stderr
            .contains("The referenced data resource \"local_file\" \"f\" is not available from this context."),
        "{}",
        validate.all()
    );
}

/// A check's data source says it is read, in a plan and in an apply, as
/// Terraform 1.11.4 says it (checked with its `terraform_remote_state` in
/// a check, which cairn does not have): `data.x.y: Reading...`, then
/// `Read complete after 0s [id=ID]`.
#[test]
fn a_scoped_data_source_says_it_is_read_as_terraform_does() {
    let w = Workdir::new();
    w.write("hello.txt", "hi\n");
    w.write(
        "main.tf",
        "provider \"local\" {\n  sandbox {\n    read_only = [\".\"]\n  }\n}\n\ncheck \"c\" {\n  data \"local_file\" \"inner\" {\n    filename = \"hello.txt\"\n  }\n  assert {\n    condition     = data.local_file.inner.content == \"hi\\n\"\n    error_message = \"no\"\n  }\n}\n",
    );
    let sha1 = "55ca6286e3e4f4fba5d0448333fa99fc5a404a73";
    let said = [
        "data.local_file.inner: Reading...".to_string(),
        format!("data.local_file.inner: Read complete after 0s [id={sha1}]"),
    ];
    for command in [&["plan"][..], &["apply", "-auto-approve"][..]] {
        let run = w.cairn(command).success();
        let lines: Vec<String> = run.stdout.lines().filter(|l| l.starts_with("data.")).map(String::from).collect();
        assert_eq!(lines, said, "{command:?}: {}", run.all());
    }
}

/// A module whose check fails in one of its two instances.
const MODULE_CALL: &str = "module \"m\" {\n  source = \"./m\"\n  count  = 2\n  name   = \"n${count.index}\"\n}\n";
const MODULE_WITH_CHECK: &str = r#"variable "name" {}

resource "terraform_data" "a" {
  input = var.name
}

check "named" {
  assert {
    condition     = terraform_data.a.input == "n0"
    error_message = "input is ${terraform_data.a.input}."
  }
}
"#;

/// Issue 37: a `check` block inside a module is checked in every instance
/// of the module (`module.m[1].check.named`), with that instance's values,
/// and fails as a warning where it is written, as Terraform 1.11.4's does.
#[test]
fn a_check_inside_a_module_is_checked_in_each_instance_as_terraform_does() {
    let w = Workdir::new();
    let tf = Workdir::new();
    for d in [&w, &tf] {
        d.write("main.tf", MODULE_CALL);
        d.write("m/main.tf", MODULE_WITH_CHECK);
    }
    let terraform = |args: &[&str]| tf.terraform(args);
    assert_eq!(terraform(&["init", "-input=false", "-no-color"]).code, 0);
    let theirs = terraform(&["plan", "-no-color"]);
    assert_eq!(theirs.code, 0, "{}", theirs.all());
    assert!(theirs.all().contains("on m/main.tf line 9, in check \"named\":"), "{}", theirs.all());
    assert_eq!(theirs.all().matches("Check block assertion failed").count(), 1, "{}", theirs.all());
    assert!(theirs.all().contains("input is n1.") && !theirs.all().contains("input is n0."), "{}", theirs.all());

    let plan = w.cairn(&["plan", "-no-color"]).success();
    assert!(plan.stderr.contains("Warning: m/main.tf:9:21: Check block assertion failed"), "{}", plan.all());
    assert_eq!(plan.stderr.matches("Check block assertion failed").count(), 1, "{}", plan.all());
    assert!(plan.stderr.contains("input is n1.") && !plan.stderr.contains("input is n0."), "{}", plan.all());

    let apply = w.cairn(&["apply", "-auto-approve", "-no-color"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 2 added"), "{}", apply.all());
    assert_eq!(apply.stderr.matches("Check block assertion failed").count(), 1, "{}", apply.all());
}
