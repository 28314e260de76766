//! Custom conditions through the real binary, with configurations that
//! Terraform 1.11 runs to the same outcome: resource preconditions and
//! postconditions (a postcondition on a value known only after apply is
//! checked then, and the object stays in the state), data source
//! conditions, output preconditions, and variable validations that
//! compare variables.

use cairn_e2e::Workdir;

/// The first diagnostic of `run` with this summary, from its `Error:` (or
/// `Warning:`) line to the next blank line after the message.
fn diagnostic<'a>(stderr: &'a str, summary: &str) -> Option<&'a str> {
    let start = stderr.find(&format!(": {summary}\n"))?;
    let start = stderr[..start].rfind("\n").map_or(0, |i| i + 1);
    Some(&stderr[start..])
}

const PLAN_TIME: &str = r#"
variable "n" {
  default = 3
}

resource "terraform_data" "a" {
  input = var.n
  lifecycle {
    precondition {
      condition     = var.n < 2
      error_message = "n is ${var.n}, too big."
    }
  }
}

resource "terraform_data" "c" {
  input = "x"
  lifecycle {
    postcondition {
      condition     = self.input == "y"
      error_message = "input is not y."
    }
  }
}

output "o" {
  value = var.n
  precondition {
    condition     = var.n < 1
    error_message = "o bad."
  }
}
"#;

#[test]
fn failed_conditions_fail_the_plan_with_their_messages_at_their_conditions() {
    let w = Workdir::new();
    w.write("main.tf", PLAN_TIME);
    let plan = w.cairn(&["plan"]).failure();
    let pre = diagnostic(&plan.stderr, "Resource precondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(pre.starts_with("Error: main.tf:10:23: Resource precondition failed"), "{}", plan.all());
    assert!(pre.contains("n is 3, too big."), "{}", plan.all());
    let post = diagnostic(&plan.stderr, "Resource postcondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(post.starts_with("Error: main.tf:20:23: Resource postcondition failed"), "{}", plan.all());
    assert!(post.contains("input is not y."), "{}", plan.all());
    let output =
        diagnostic(&plan.stderr, "Module output value precondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(output.starts_with("Error: main.tf:29:21: Module output value precondition failed"), "{}", plan.all());
    assert!(output.contains("o bad."), "{}", plan.all());

    // With values that meet them, the same configuration applies.
    let passing = PLAN_TIME.replace("default = 3", "default = 0").replace("\"y\"", "\"x\"");
    w.write("main.tf", &passing);
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 2 added"), "{}", apply.all());
    assert_eq!(w.state().unwrap()["outputs"]["o"]["value"], 0);
}

#[test]
fn a_postcondition_on_a_value_known_only_after_apply_is_checked_then_and_the_object_kept() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
resource "terraform_data" "b" {
  input = "x"
  lifecycle {
    postcondition {
      condition     = self.output == "y"
      error_message = "output is ${self.output}, not y."
    }
  }
}

resource "terraform_data" "after" {
  input = terraform_data.b.output
}
"#,
    );
    // Unknown while planning: the plan succeeds.
    w.cairn(&["plan"]).success();
    let apply = w.cairn(&["apply", "-auto-approve"]).failure();
    let post = diagnostic(&apply.stderr, "Resource postcondition failed").unwrap_or_else(|| panic!("{}", apply.all()));
    assert!(post.starts_with("Error: main.tf:6:23: Resource postcondition failed"), "{}", apply.all());
    assert!(post.contains("output is x, not y."), "{}", apply.all());
    // The object made is recorded; what depends on it was not applied.
    assert_eq!(w.addresses(), ["terraform_data.b"], "{}", apply.all());
    assert_eq!(w.attributes("terraform_data.b")["output"]["value"], "x");
    // Known now, the postcondition fails the next plan, as Terraform's does.
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Error: main.tf:6:23: Resource postcondition failed"), "{}", plan.all());
}

#[test]
fn a_precondition_unknown_while_planning_is_checked_before_the_apply_makes_anything() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
resource "terraform_data" "first" {
  input = "short"
}

resource "terraform_data" "second" {
  input = "x"
  lifecycle {
    precondition {
      condition     = length(terraform_data.first.output) > 10
      error_message = "The first output is too short."
    }
  }
}
"#,
    );
    w.cairn(&["plan"]).success();
    let apply = w.cairn(&["apply", "-auto-approve"]).failure();
    let pre = diagnostic(&apply.stderr, "Resource precondition failed").unwrap_or_else(|| panic!("{}", apply.all()));
    assert!(pre.starts_with("Error: main.tf:10:23: Resource precondition failed"), "{}", apply.all());
    assert!(pre.contains("The first output is too short."), "{}", apply.all());
    assert_eq!(w.addresses(), ["terraform_data.first"], "{}", apply.all());
}

#[test]
fn counted_instances_see_count_index_in_preconditions() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
resource "terraform_data" "n" {
  count = 3
  input = count.index
  lifecycle {
    precondition {
      condition     = count.index < 2
      error_message = "Instance ${count.index} is one too many."
    }
  }
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    let pre = diagnostic(&plan.stderr, "Resource precondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(pre.contains("Instance 2 is one too many."), "{}", plan.all());
    assert_eq!(plan.stderr.matches("Resource precondition failed").count(), 1, "{}", plan.all());
}

#[test]
fn misused_conditions_are_errors_where_terraform_reports_them() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
resource "terraform_data" "a" {
  input = 1
  lifecycle {
    precondition {
      condition     = self.input == 1
      error_message = "m"
    }
  }
}

resource "terraform_data" "b" {
  input = 1
  lifecycle {
    postcondition {
      condition     = true
      error_message = "never"
    }
  }
}
"#,
    );
    let validate = w.cairn(&["validate"]).failure();
    assert!(validate.stderr.contains("Error: main.tf:6:23: Invalid \"self\" reference"), "{}", validate.all());
    assert!(validate.stderr.contains("Error: main.tf:16:23: Invalid postcondition expression"), "{}", validate.all());

    w.write(
        "main.tf",
        r#"
variable "z" {
  default = null
}

resource "terraform_data" "a" {
  input = 1
  lifecycle {
    precondition {
      condition     = var.z
      error_message = "x"
    }
  }
}

resource "terraform_data" "b" {
  input = 1
  lifecycle {
    precondition {
      condition     = var.z == 2
      error_message = var.z
    }
  }
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Error: main.tf:10:23: Invalid condition result"), "{}", plan.all());
    assert!(plan.stderr.contains("Condition expression must return either true or false, not null."), "{}", plan.all());
    assert!(plan.stderr.contains("Error: main.tf:21:23: Invalid error message"), "{}", plan.all());
    assert!(plan.stderr.contains("Unsuitable value for error message: must not be null."), "{}", plan.all());
}

#[test]
fn data_source_conditions_are_checked_when_it_is_read() {
    // local_file is a provider Terraform downloads; the conditions behave
    // as with any data source (terraform_remote_state, built in, checks
    // the same way).
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

variable "path" {
  default = "data/limit.txt"
}

data "local_file" "limit" {
  filename = var.path
  lifecycle {
    precondition {
      condition     = endswith(var.path, ".txt")
      error_message = "${var.path} is not a text file."
    }
    postcondition {
      condition     = tonumber(self.content) == 2
      error_message = "The limit is ${self.content}, not 2."
    }
  }
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    let post = diagnostic(&plan.stderr, "Resource postcondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(post.starts_with("Error: main.tf:20:23: Resource postcondition failed"), "{}", plan.all());
    assert!(post.contains("The limit is 1, not 2."), "{}", plan.all());
    let plan = w.cairn(&["plan", "-var", "path=data/limit.json"]).failure();
    let pre = diagnostic(&plan.stderr, "Resource precondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(pre.starts_with("Error: main.tf:16:23: Resource precondition failed"), "{}", plan.all());
    assert!(pre.contains("data/limit.json is not a text file."), "{}", plan.all());
    w.write("data/limit.txt", "2");
    w.cairn(&["plan"]).success();
}

#[test]
fn a_variable_validation_may_compare_variables() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
variable "min" {
  default = 5
  validation {
    condition     = var.min < var.max
    error_message = "min ${var.min} must be below max ${var.max}."
  }
}

variable "max" {
  default = 3
}

resource "terraform_data" "a" {
  input = var.min
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    let invalid = diagnostic(&plan.stderr, "Invalid value for variable").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(invalid.contains("min 5 must be below max 3."), "{}", plan.all());
    w.cairn(&["plan", "-var", "max=10"]).success();
}

#[test]
fn preconditions_of_a_module_output_and_resource_are_checked() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
module "m" {
  source = "./m"
  n      = 5
}
"#,
    );
    w.write(
        "m/main.tf",
        r#"
variable "n" {}

resource "terraform_data" "r" {
  input = var.n
  lifecycle {
    postcondition {
      condition     = self.input < 10
      error_message = "input too big."
    }
  }
}

output "o" {
  value = var.n
  precondition {
    condition     = var.n < 4
    error_message = "n must be below 4."
  }
}
"#,
    );
    let plan = w.cairn(&["plan"]).failure();
    let output =
        diagnostic(&plan.stderr, "Module output value precondition failed").unwrap_or_else(|| panic!("{}", plan.all()));
    assert!(output.starts_with("Error: m/main.tf:17:21: Module output value precondition failed"), "{}", plan.all());
    assert!(output.contains("n must be below 4."), "{}", plan.all());
    assert!(!plan.stderr.contains("input too big."), "{}", plan.all());
}

/// Validations that refer to a local value and to a resource's configured
/// value: decided while planning.
const VALIDATION_OF_OBJECTS: &str = r#"locals {
  max = 2
}

variable "n" {
  type    = number
  default = 3
  validation {
    condition     = var.n <= local.max
    error_message = "n must be at most ${local.max}."
  }
}

resource "terraform_data" "a" {
  input = 5
}

variable "m" {
  type    = number
  default = 4
  validation {
    condition     = var.m < terraform_data.a.input
    error_message = "m must be below the input."
  }
}
"#;

/// A validation on a value known only after apply: decided then.
const VALIDATION_AFTER_APPLY: &str = r#"resource "terraform_data" "a" {
  input = "five"
}

variable "o" {
  default = "x"
  validation {
    condition     = terraform_data.a.output == var.o
    error_message = "o must be the output."
  }
}
"#;

/// Issue 37: a variable validation may refer to local values, resources
/// and data sources (Terraform 1.9): it is decided once the plan has their
/// values (`n` fails, `m` holds), and when the plan cannot decide it, after
/// the apply, which then fails once the object is made; as Terraform
/// 1.11.4 decides each.
#[test]
fn validations_referring_to_other_objects_are_decided_when_known_as_terraform_does() {
    let (w, tf) = (Workdir::new(), Workdir::new());
    for d in [&w, &tf] {
        d.write("main.tf", VALIDATION_OF_OBJECTS);
    }
    assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
    let theirs = tf.terraform(&["plan", "-no-color"]);
    let ours = w.cairn(&["plan", "-no-color"]).failure();
    assert_eq!(theirs.code, 1, "{}", theirs.all());
    for run in [&theirs, &ours] {
        assert_eq!(run.stderr.matches("Invalid value for variable").count(), 1, "{}", run.all());
        assert!(run.stderr.contains("n must be at most 2."), "{}", run.all());
    }
    assert!(ours.stderr.contains("Error: main.tf:8:3: Invalid value for variable"), "{}", ours.all());

    let (w, tf) = (Workdir::new(), Workdir::new());
    for d in [&w, &tf] {
        d.write("main.tf", VALIDATION_AFTER_APPLY);
    }
    assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
    assert_eq!(tf.terraform(&["plan", "-no-color"]).code, 0);
    w.cairn(&["plan", "-no-color"]).success();
    let theirs = tf.terraform(&["apply", "-auto-approve", "-no-color"]);
    let ours = w.cairn(&["apply", "-auto-approve", "-no-color"]).failure();
    assert_eq!(theirs.code, 1, "{}", theirs.all());
    for run in [&theirs, &ours] {
        assert!(run.all().contains("terraform_data.a: Creation complete"), "{}", run.all());
        assert!(run.stderr.contains("o must be the output."), "{}", run.all());
    }
    assert!(ours.stderr.contains("Error: main.tf:7:3: Invalid value for variable"), "{}", ours.all());
    assert_eq!(w.addresses(), ["terraform_data.a"], "the object made stays in the state");
}

const MODULE_VALIDATING_OBJECTS: &str = r#"variable "min" {
  type = number
}

variable "max" {
  type = number
  validation {
    condition     = var.max > var.min
    error_message = "max ${var.max} must be above min ${var.min}."
  }
}

locals {
  limit = 100
}

variable "n" {
  type = number
  validation {
    condition     = var.n < local.limit
    error_message = "n must be below ${local.limit}."
  }
}

resource "terraform_data" "t" {
  input = 7
}

variable "o" {
  type = number
  validation {
    condition     = terraform_data.t.output == var.o
    error_message = "o must be the output."
  }
}
"#;

const CALLS_MODULE_VALIDATING_OBJECTS: &str = r#"variable "max" {
  type = number
}

variable "n" {
  type = number
}

variable "o" {
  type = number
}

module "m" {
  source = "./m"
  min    = 5
  max    = var.max
  n      = var.n
  o      = var.o
}
"#;

/// Issue 37: a child module's variable validation may refer to another
/// variable, a local value or a resource of its module (Terraform 1.9):
/// decided once the plan has their values, after the apply when the plan
/// cannot decide, and reported at the module call's argument, as
/// Terraform 1.11.4 does.
#[test]
fn module_validations_referring_to_other_objects_are_decided_as_terraform_does() {
    let (w, tf) = (Workdir::new(), Workdir::new());
    for d in [&w, &tf] {
        d.write("main.tf", CALLS_MODULE_VALIDATING_OBJECTS);
        d.write("m/main.tf", MODULE_VALIDATING_OBJECTS);
    }
    assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
    let bad = ["-var", "max=1", "-var", "n=200", "-var", "o=7"];
    let theirs = tf.terraform(&[&["plan", "-no-color"][..], &bad].concat());
    let ours = w.cairn(&[&["plan", "-no-color"][..], &bad].concat()).failure();
    assert_eq!(theirs.code, 1, "{}", theirs.all());
    for run in [&theirs, &ours] {
        assert_eq!(run.stderr.matches("Invalid value for variable").count(), 2, "{}", run.all());
        assert!(run.stderr.contains("max 1 must be above min 5."), "{}", run.all());
        assert!(run.stderr.contains("n must be below 100."), "{}", run.all());
    }
    // At the call's arguments, where Terraform points.
    assert!(theirs.stderr.contains("on main.tf line 16, in module \"m\""), "{}", theirs.all());
    assert!(theirs.stderr.contains("on main.tf line 17, in module \"m\""), "{}", theirs.all());
    assert!(ours.stderr.contains("Error: main.tf:16:12: Invalid value for variable"), "{}", ours.all());
    assert!(ours.stderr.contains("Error: main.tf:17:12: Invalid value for variable"), "{}", ours.all());

    let good = ["-var", "max=6", "-var", "n=2", "-var", "o=7"];
    assert_eq!(tf.terraform(&[&["plan", "-no-color"][..], &good].concat()).code, 0);
    w.cairn(&[&["plan", "-no-color"][..], &good].concat()).success();

    // Unknown in the plan (the output is made by the apply): decided after
    // the apply, which fails once the object is made.
    let after = ["-var", "max=6", "-var", "n=2", "-var", "o=8"];
    assert_eq!(tf.terraform(&[&["plan", "-no-color"][..], &after].concat()).code, 0);
    w.cairn(&[&["plan", "-no-color"][..], &after].concat()).success();
    let theirs = tf.terraform(&[&["apply", "-auto-approve", "-no-color"][..], &after].concat());
    let ours = w.cairn(&[&["apply", "-auto-approve", "-no-color"][..], &after].concat()).failure();
    assert_eq!(theirs.code, 1, "{}", theirs.all());
    for run in [&theirs, &ours] {
        assert!(run.all().contains("module.m.terraform_data.t: Creation complete"), "{}", run.all());
        assert!(run.stderr.contains("o must be the output."), "{}", run.all());
    }
    assert!(ours.stderr.contains("Error: main.tf:18:12: Invalid value for variable"), "{}", ours.all());
}
