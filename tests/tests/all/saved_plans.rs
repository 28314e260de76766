//! Saved plans: `cairn plan -out=FILE`, `cairn apply FILE` (exactly that
//! plan, or a refusal that says what changed), and `cairn show [-json]
//! FILE` (the JSON in the shape of `terraform show -json`).

use cairn_e2e::{Workdir, bundled_component, required_providers};
use serde_json::Value;

/// A local file whose content comes from a variable, and a value that
/// follows it.
const CONFIG: &str = r#"
variable "greeting" {
  default = "from the default"
}

provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

resource "local_file" "greeting" {
  filename = "out/greeting.txt"
  content  = var.greeting
}

resource "null_data" "copy" {
  count = 2
  input = local_file.greeting.content
}

resource "random_password" "secret" {
  length  = 12
  special = false
}

output "greeting" {
  value = local_file.greeting.content
}
"#;

fn workdir() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w
}

#[test]
fn a_saved_plan_applies_exactly_with_its_own_variables_and_asks_nothing() {
    let w = workdir();
    let plan = w.cairn_here(&["plan", "-var", "greeting=from the plan", "-out=greeting.plan"]).success();
    assert!(plan.stdout.contains("Plan: 4 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.stdout.contains("Saved the plan to: greeting.plan"), "{}", plan.all());
    assert!(plan.stdout.contains("cairn apply \"greeting.plan\""), "{}", plan.all());
    assert!(w.state().is_none(), "plan -out must not write a state");

    // No -var and no -auto-approve: the plan's own value is applied, and
    // nobody is asked (stdin is closed: a question would cancel).
    let apply = w.cairn_here(&["apply", "greeting.plan"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 4 added, 0 changed, 0 destroyed."), "{}", apply.all());
    assert!(!apply.stdout.contains("Do you want to perform these actions"), "{}", apply.all());
    assert_eq!(w.read("out/greeting.txt"), "from the plan");
    assert_eq!(w.attributes("null_data.copy[1]")["output"]["value"], "from the plan");

    let again = w.cairn_here(&["plan", "-var", "greeting=from the plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "the applied plan leaves nothing to do:\n{}", again.all());
}

#[test]
fn variables_cannot_be_given_with_a_saved_plan() {
    let w = workdir();
    w.cairn_here(&["plan", "-out=p.plan"]).success();
    let run = w.cairn_here(&["apply", "-var", "greeting=x", "p.plan"]).failure();
    assert!(run.stderr.contains("cannot set variables when applying a saved plan"), "{}", run.all());
    let run = w.cairn_here(&["destroy", "p.plan"]).failure();
    assert!(run.stderr.contains("destroy takes a configuration directory, not a plan file"), "{}", run.all());
    let run = w.cairn_here(&["apply", "main.tf"]).failure();
    assert!(run.stderr.contains("main.tf is not a cairn plan file"), "{}", run.all());
    assert!(w.state().is_none());
}

#[test]
fn a_saved_destroy_plan_destroys() {
    let w = workdir();
    w.cairn_here(&["apply", "-auto-approve"]).success();
    let plan = w.cairn_here(&["plan", "-destroy", "-out=destroy.plan"]).success();
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 4 to destroy."), "{}", plan.all());
    let run = w.cairn_here(&["apply", "destroy.plan"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 0 added, 0 changed, 4 destroyed."), "{}", run.all());
    assert!(!w.exists("out/greeting.txt"));
    assert!(w.addresses().is_empty());
}

#[test]
fn a_configuration_changed_after_the_plan_is_refused_not_applied() {
    let w = workdir();
    w.cairn_here(&["plan", "-out=p.plan"]).success();
    w.write("main.tf", &CONFIG.replace("out/greeting.txt", "out/other.txt"));
    let run = w.cairn_here(&["apply", "p.plan"]).failure();
    assert!(run.stderr.contains("Saved plan is stale"), "{}", run.all());
    assert!(run.stderr.contains("the configuration changed: main.tf was modified"), "{}", run.all());
    assert!(!w.exists("out/greeting.txt") && !w.exists("out/other.txt"), "nothing may be applied");
    assert!(w.state().is_none());

    // A file added to the configuration is a change too.
    w.write("main.tf", CONFIG);
    w.cairn_here(&["plan", "-out=p.plan"]).success();
    w.write("extra.tf", "locals {\n  x = 1\n}\n");
    let run = w.cairn_here(&["apply", "p.plan"]).failure();
    assert!(run.stderr.contains("the configuration changed: extra.tf was added"), "{}", run.all());
}

#[test]
fn a_plan_over_a_state_that_changed_since_is_refused_and_the_state_kept() {
    let w = workdir();
    w.cairn_here(&["plan", "-out=first.plan"]).success();
    w.cairn_here(&["plan", "-out=second.plan"]).success();
    w.cairn_here(&["apply", "first.plan"]).success();
    let state = w.state_text();

    let run = w.cairn_here(&["apply", "second.plan"]).failure();
    assert!(run.stderr.contains("Saved plan is stale"), "{}", run.all());
    assert!(
        run.stderr.contains("the state changed: the plan was made from serial 0, the state is now at serial"),
        "{}",
        run.all()
    );
    assert_eq!(w.state_text(), state, "a refused plan leaves the state as it was");

    // The same plan twice: the first apply changed the state it was made from.
    let run = w.cairn_here(&["apply", "first.plan"]).failure();
    assert!(run.stderr.contains("the state changed"), "{}", run.all());
}

#[test]
fn a_plan_whose_provider_file_changed_is_refused() {
    let w = workdir();
    w.write("main.tf", &format!("{}{CONFIG}", required_providers(&["local"])));
    std::fs::copy(bundled_component("local"), w.path().join("local.wasm")).unwrap();
    w.cairn_here(&["plan", "-out=p.plan"]).success();

    // Another build of the same provider: the same component with one more
    // custom section (id 0, size, name), so it still loads and still says
    // it is `local`, but its bytes differ.
    let mut bytes = std::fs::read(w.path().join("local.wasm")).unwrap();
    bytes.extend_from_slice(&[0, 6, 5, b'e', b'x', b't', b'r', b'a']);
    std::fs::write(w.path().join("local.wasm"), bytes).unwrap();

    let run = w.cairn_here(&["apply", "p.plan"]).failure();
    assert!(run.stderr.contains("Saved plan is stale"), "{}", run.all());
    assert!(run.stderr.contains("provider \"local\" changed: its component was modified"), "{}", run.all());
    assert!(!w.exists("out/greeting.txt"));
    assert!(w.state().is_none());
}

#[test]
fn show_renders_a_saved_plan_as_plan_does() {
    let w = workdir();
    let plan = w.cairn_here(&["plan", "-out=p.plan"]).success();
    let shown = w.cairn_here(&["show", "p.plan"]).success();
    let body = |text: &str| text[text.find("cairn will perform").expect("a plan")..].trim_end().to_string();
    // The plan's text before the rule that leads to "Saved the plan".
    assert_eq!(body(&shown.stdout), body(&plan.stdout[..plan.stdout.find("\n─").unwrap()]));
    assert!(shown.stdout.contains("# local_file.greeting will be created"), "{}", shown.all());
}

/// Asserts `value` is a JSON object holding every key of `keys`.
fn assert_keys(value: &Value, keys: &[&str], what: &str) {
    let object = value.as_object().unwrap_or_else(|| panic!("{what} is not an object: {value}"));
    for key in keys {
        assert!(object.contains_key(*key), "{what} has no {key:?}: {value:#}");
    }
}

#[test]
fn show_json_of_a_plan_has_the_shape_of_terraform_show_json() {
    let w = workdir();
    w.cairn_here(&["plan", "-out=p.plan"]).success();
    let run = w.cairn_here(&["show", "-json", "p.plan"]).success();
    let plan: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.all()));

    assert_keys(
        &plan,
        &[
            "format_version",
            "terraform_version",
            "cairn_version",
            "variables",
            "planned_values",
            "resource_changes",
            "output_changes",
            "prior_state",
        ],
        "the plan",
    );
    assert_eq!(plan["format_version"], "1.2");
    assert!(plan["terraform_version"].is_string() && plan["cairn_version"].is_string());
    assert_eq!(plan["variables"]["greeting"]["value"], "from the default");

    let changes = plan["resource_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 4, "{plan:#}");
    for change in changes {
        assert_keys(change, &["address", "mode", "type", "name", "provider_name", "change"], "a resource change");
        assert!(change["address"].is_string() && change["type"].is_string() && change["name"].is_string());
        assert_eq!(change["mode"], "managed");
        assert_keys(
            &change["change"],
            &["actions", "before", "after", "after_unknown", "before_sensitive", "after_sensitive"],
            "a change",
        );
        assert_eq!(change["change"]["actions"], serde_json::json!(["create"]));
        assert!(change["change"]["before"].is_null());
        assert!(change["change"]["after"].is_object());
        assert!(change["change"]["after_unknown"].is_object());
        assert_eq!(change["change"]["before_sensitive"], false);
        assert!(change["change"]["after_sensitive"].is_object());
    }
    let by_address = |a: &str| changes.iter().find(|c| c["address"] == a).unwrap_or_else(|| panic!("no {a}"));
    let file = by_address("local_file.greeting");
    // As Terraform writes it: the full address, not the local name.
    assert_eq!(file["provider_name"], "registry.terraform.io/hashicorp/local");
    assert_eq!(file["change"]["after"]["content"], "from the default");
    let copy = by_address("null_data.copy[1]");
    assert_eq!(copy["index"], 1);
    assert_eq!(copy["name"], "copy");
    assert_eq!(copy["change"]["after_unknown"]["id"], true);
    assert!(copy["change"]["after"].get("id").is_none(), "an unknown is left out of after");
    assert_eq!(copy["change"]["after"]["input"], "from the default");
    let secret = by_address("random_password.secret");
    assert_eq!(secret["change"]["after_sensitive"]["result"], true);

    assert_keys(&plan["output_changes"]["greeting"], &["actions", "before", "after_unknown"], "an output change");
    assert_eq!(plan["output_changes"]["greeting"]["actions"], serde_json::json!(["create"]));
    assert_eq!(plan["output_changes"]["greeting"]["after"], "from the default");
    assert!(plan["planned_values"]["root_module"]["resources"].as_array().unwrap().len() == 4);
    assert_keys(&plan["prior_state"], &["format_version", "values"], "prior_state");
    assert!(plan["prior_state"]["values"]["root_module"]["resources"].as_array().unwrap().is_empty());
}

#[test]
fn show_json_of_an_update_has_the_prior_state_and_before_values() {
    let w = workdir();
    w.cairn_here(&["apply", "-auto-approve"]).success();
    w.cairn_here(&["plan", "-var", "greeting=changed", "-out=p.plan"]).success();
    let run = w.cairn_here(&["show", "-json", "p.plan"]).success();
    let plan: Value = serde_json::from_str(&run.stdout).unwrap();
    let changes = plan["resource_changes"].as_array().unwrap();
    let by_address = |a: &str| changes.iter().find(|c| c["address"] == a).unwrap_or_else(|| panic!("no {a}"));
    // local_file replaces on a content change; null_data updates in place.
    assert_eq!(by_address("local_file.greeting")["change"]["actions"], serde_json::json!(["delete", "create"]));
    assert_eq!(by_address("null_data.copy[0]")["change"]["actions"], serde_json::json!(["update"]));
    assert_eq!(by_address("null_data.copy[0]")["change"]["before"]["input"], "from the default");
    assert_eq!(by_address("random_password.secret")["change"]["actions"], serde_json::json!(["no-op"]));
    assert_eq!(by_address("random_password.secret")["change"]["before_sensitive"]["result"], true);
    let prior = plan["prior_state"]["values"]["root_module"]["resources"].as_array().unwrap();
    assert_eq!(prior.len(), 4, "{plan:#}");
    assert_eq!(plan["output_changes"]["greeting"]["actions"], serde_json::json!(["update"]));
    assert_eq!(plan["output_changes"]["greeting"]["before"], "from the default");
}

#[test]
fn a_variable_file_changed_after_the_plan_is_refused_and_its_values_are_the_plans() {
    let w = workdir();
    w.write("vars/greeting.tfvars", "greeting = \"from the file\"\n");
    w.cairn_here(&["plan", "-var-file=vars/greeting.tfvars", "-out=p.plan"]).success();
    w.write("vars/greeting.tfvars", "greeting = \"changed since\"\n");
    let run = w.cairn_here(&["apply", "p.plan"]).failure();
    assert!(run.stderr.contains("the configuration changed: vars/greeting.tfvars was modified"), "{}", run.all());

    // An automatic variable file that appears after the plan is a change too.
    w.cairn_here(&["plan", "-var-file=vars/greeting.tfvars", "-out=p.plan"]).success();
    w.write("terraform.tfvars", "greeting = \"automatic\"\n");
    let run = w.cairn_here(&["apply", "p.plan"]).failure();
    assert!(run.stderr.contains("the configuration changed: terraform.tfvars was added"), "{}", run.all());
    std::fs::remove_file(w.path().join("terraform.tfvars")).unwrap();

    // Applied from another directory with -chdir, the plan finds its files.
    let elsewhere = Workdir::new();
    let dir = format!("-chdir={}", w.path().display());
    let plan = w.path().join("p.plan").display().to_string();
    let run = elsewhere.cairn_here(&["apply", &dir, &plan]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(w.read("out/greeting.txt"), "changed since");
}
