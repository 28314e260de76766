//! The whole life of a configuration through the real binary and the real
//! bundled providers: apply, no-op plan, replace, update through references,
//! destroy.

use cairn_e2e::Workdir;

const FILES: &str = r#"
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

variable "keeper" {
  default = "one"
}

resource "random_id" "x" {
  byte_length = 8
  keepers = {
    k = var.keeper
  }
}

resource "local_file" "site" {
  filename = "out/site.txt"
  content  = "id=${random_id.x.hex}\n"
}

resource "local_file" "static" {
  filename        = "out/static.txt"
  content         = "CONTENT"
}

output "hex" {
  value = random_id.x.hex
}
"#;

#[test]
fn apply_creates_files_and_random_values_then_plans_no_changes() {
    let w = Workdir::new();
    w.write("main.tf", FILES);
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Plan: 3 to add, 0 to change, 0 to destroy."), "{}", run.all());
    let at = |line: &str| run.stdout.find(line).unwrap_or_else(|| panic!("no {line:?} in\n{}", run.all()));
    assert!(at("random_id.x: Creation complete") < at("local_file.site: Creating"), "{}", run.all());
    assert!(run.stdout.contains("Apply complete! Resources: 3 added, 0 changed, 0 destroyed."), "{}", run.all());

    let hex = w.attributes("random_id.x")["hex"].as_str().unwrap().to_string();
    assert_eq!(hex.len(), 16, "8 bytes of hex");
    assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(w.read("out/site.txt"), format!("id={hex}\n"));
    assert_eq!(w.read("out/static.txt"), "CONTENT");
    // Terraform's local_file id is the SHA-1 of the content.
    assert_eq!(w.attributes("local_file.static")["id"], "238a131a3e8eb98d1fc5b27d882ca40b7618fd2a"); // sha1("CONTENT")
    assert!(run.stdout.contains(&format!("hex = \"{hex}\"")), "{}", run.all());

    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "a second plan must find nothing to do:\n{}", plan.all());
    assert!(plan.stdout.contains("No changes."), "{}", plan.all());
}

#[test]
fn changing_content_replaces_the_file() {
    let w = Workdir::new();
    w.write("main.tf", FILES);
    w.cairn(&["apply", "-auto-approve"]).success();
    let before_id = w.attributes("random_id.x")["hex"].clone();

    w.write("main.tf", &FILES.replace("\"CONTENT\"", "\"NEW CONTENT\""));
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# local_file.static must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# forces replacement"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 1 to destroy."), "{}", plan.all());

    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.read("out/static.txt"), "NEW CONTENT");
    assert_eq!(w.attributes("random_id.x")["hex"], before_id, "unrelated resources keep their values");
}

#[test]
fn changing_keepers_replaces_the_id_and_updates_what_refers_to_it() {
    let w = Workdir::new();
    w.write("main.tf", FILES);
    w.cairn(&["apply", "-auto-approve"]).success();
    let old = w.attributes("random_id.x")["hex"].as_str().unwrap().to_string();

    let plan = w.cairn(&["plan", "-var", "keeper=two"]).success();
    assert!(plan.stdout.contains("# random_id.x must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("(known after apply)"), "{}", plan.all());
    assert!(plan.stdout.contains("# local_file.site must be replaced"), "{}", plan.all());

    let run = w.cairn(&["apply", "-auto-approve", "-var", "keeper=two"]).success();
    let new = w.attributes("random_id.x")["hex"].as_str().unwrap().to_string();
    assert_ne!(old, new, "{}", run.all());
    assert_eq!(w.read("out/site.txt"), format!("id={new}\n"));
    assert_eq!(w.attributes("local_file.site")["content"], format!("id={new}\n"));
    let state = w.state().unwrap();
    assert_eq!(state["outputs"]["hex"]["value"], new);

    let again = w.cairn_env(&["plan", "-detailed-exitcode"], &[("CAIRN_VAR_keeper", "two")]);
    assert_eq!(again.code, 0, "the variable from the environment gives the same plan:\n{}", again.all());
}

#[test]
fn destroy_removes_everything_and_leaves_an_empty_state() {
    let w = Workdir::new();
    w.write("main.tf", FILES);
    w.cairn(&["apply", "-auto-approve"]).success();
    assert!(w.exists("out/site.txt"));

    let run = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 3 destroyed."), "{}", run.all());
    // Reverse dependency order: the file that shows the id goes first.
    let at = |line: &str| run.stdout.find(line).unwrap_or_else(|| panic!("no {line:?} in\n{}", run.all()));
    assert!(at("local_file.site: Destruction complete") < at("random_id.x: Destroying"), "{}", run.all());
    assert!(!w.exists("out/site.txt"));
    assert!(!w.exists("out/static.txt"));
    let state = w.state().unwrap();
    assert_eq!(state["resources"].as_array().unwrap().len(), 0, "{state:#}");
    assert_eq!(state["outputs"].as_object().unwrap().len(), 0, "{state:#}");
    assert!(w.exists("cairn.state.json.backup"), "the previous state is kept");
}

#[test]
fn removing_a_resource_from_the_configuration_destroys_it() {
    let w = Workdir::new();
    w.write("main.tf", FILES);
    w.cairn(&["apply", "-auto-approve"]).success();
    let without_static = FILES.replace(
        "resource \"local_file\" \"static\" {\n  filename        = \"out/static.txt\"\n  content         = \"CONTENT\"\n}",
        "",
    );
    assert_ne!(without_static, FILES);
    w.write("main.tf", &without_static);
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("# local_file.static will be destroyed"), "{}", run.all());
    assert!(!w.exists("out/static.txt"));
    assert!(!w.addresses().contains(&"local_file.static".to_string()));
}

#[test]
fn apply_without_approval_changes_nothing() {
    let w = Workdir::new();
    w.write("main.tf", FILES);
    let run = w.cairn(&["apply"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("Only 'yes' will be accepted"), "{}", run.all());
    assert!(!w.exists("out/site.txt"));
    assert!(w.addresses().is_empty());
}

#[test]
fn the_quickstart_example_applies() {
    let w = Workdir::example("quickstart");
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete!"), "{}", run.all());
    let hello = w.read("out/hello.txt");
    let run_id = w.attributes("random_id.run")["hex"].as_str().unwrap().to_string();
    assert!(hello.contains(&format!("Run id: {run_id}")), "{hello}");
    assert!(run.stdout.contains("\npassword = <sensitive>\n"), "{}", run.all());
    let summary = &w.state().unwrap()["outputs"]["summary"]["value"];
    assert_eq!(summary["run_id"], run_id.as_str());
    w.cairn(&["plan", "-detailed-exitcode"]).success();

    let run = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 4 destroyed."), "{}", run.all());
    assert!(!w.exists("out/hello.txt"));
    assert!(w.addresses().is_empty());
}

#[test]
fn random_pet_and_random_string_are_made_once_and_kept() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "resource \"random_pet\" \"name\" {\n  prefix = \"dev\"\n}\n\
         resource \"random_string\" \"suffix\" {\n  length  = 6\n  special = false\n  upper   = false\n}\n\
         output \"name\" {\n  value = \"${random_pet.name.id}-${random_string.suffix.result}\"\n}\n",
    );
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    let pet = w.attributes("random_pet.name")["id"].as_str().unwrap().to_string();
    assert_eq!(pet.split('-').count(), 3, "dev, an adjective, an animal: {pet}");
    assert!(pet.starts_with("dev-"), "{pet}");
    let suffix = w.attributes("random_string.suffix")["result"].as_str().unwrap().to_string();
    assert!(suffix.len() == 6 && suffix.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{suffix}");
    assert!(run.stdout.contains(&format!("name = \"{pet}-{suffix}\"")), "{}", run.all());
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "generated once, then kept:\n{}", plan.all());
}

#[test]
fn dynamic_blocks_make_nested_blocks_and_follow_their_collection() {
    let config = |tags: &str| {
        format!(
            "variable \"tags\" {{\n  default = {tags}\n}}\n\
             resource \"recorder_thing\" \"t\" {{\n  name = \"t\"\n  dynamic \"tag\" {{\n    for_each = var.tags\n    \
             iterator = each_tag\n    content {{\n      name = upper(each_tag.value)\n    }}\n  }}\n}}\n"
        )
    };
    let w = cairn_e2e::recorder_workdir(&config("[\"a\", \"b\"]"));
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("recorder_thing.t")["tag"], serde_json::json!([{"name": "A"}, {"name": "B"}]));
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());

    w.configure_recorder(&config("[\"a\", \"b\", \"c\"]"));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("1 changed"), "{}", run.all());
    assert_eq!(w.attributes("recorder_thing.t")["tag"].as_array().map(Vec::len), Some(3));
}
