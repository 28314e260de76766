//! Planning behaviours of a single run and of the configuration, through
//! the real binary and the bundled `local` and `null` providers:
//! `replace_triggered_by`, `-replace`, `-target`, `-refresh-only` (and
//! `-refresh=false`), `apply -destroy`, and drift notes that say what
//! changed outside cairn.

use cairn_e2e::{LOCAL_OUT_GRANT, Workdir};

const TRIGGERS: &str = r#"
variable "input" {
  default = "one"
}

variable "trigger" {
  default = "t1"
}

resource "null_data" "src" {
  input            = var.input
  triggers_replace = var.trigger
}

resource "local_file" "on_resource" {
  filename = "out/r.txt"
  content  = "r"
  lifecycle {
    replace_triggered_by = [null_data.src]
  }
}

resource "local_file" "on_input" {
  filename = "out/i.txt"
  content  = "i"
  lifecycle {
    replace_triggered_by = [null_data.src.input]
  }
}

resource "local_file" "on_trigger" {
  filename = "out/t.txt"
  content  = "t"
  lifecycle {
    replace_triggered_by = [null_data.src.triggers_replace]
  }
}
"#;

#[test]
fn replace_triggered_by_replaces_on_a_replace_or_an_update_of_what_it_names_and_not_otherwise() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TRIGGERS}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let files = ["out/r.txt", "out/i.txt", "out/t.txt"];
    let stamps = |w: &Workdir| files.map(|f| w.file_stamp(f));

    // Nothing changes: nothing is replaced.
    let before = stamps(&w);
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(stamps(&w), before, "no file may be rewritten when nothing changed");

    // `src` is updated in place (its input): the whole-resource and the
    // input triggers fire, the triggers_replace one does not.
    let plan = w.cairn(&["plan", "-var", "input=two"]).success();
    assert!(plan.stdout.contains("# null_data.src will be updated in-place"), "{}", plan.all());
    assert!(
        plan.stdout.contains("# local_file.on_resource will be replaced due to changes in replace_triggered_by"),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("# (triggered by null_data.src.input)"), "{}", plan.all());
    assert!(!plan.stdout.contains("# local_file.on_trigger"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 2 to add, 1 to change, 2 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-var", "input=two"]).success();
    let after = stamps(&w);
    assert_ne!(after[0], before[0], "on_resource is re-created");
    assert_ne!(after[1], before[1], "on_input is re-created");
    assert_eq!(after[2], before[2], "on_trigger is untouched");

    // `src` is replaced (its triggers_replace), its input unchanged: the
    // whole-resource and the triggers_replace triggers fire.
    let vars = ["-var", "input=two", "-var", "trigger=t2"];
    let plan = w.cairn(&[&["plan", "-json"][..], &vars].concat()).success();
    let mut replaced: Vec<String> = plan
        .events()
        .iter()
        .filter(|e| e["type"] == "planned_change" && e["action"] == "replace")
        .map(|e| e["address"].as_str().unwrap().to_string())
        .collect();
    replaced.sort();
    assert_eq!(replaced, ["local_file.on_resource", "local_file.on_trigger", "null_data.src"], "{}", plan.all());
    w.cairn(&[&["apply", "-auto-approve"][..], &vars].concat()).success();
    let last = stamps(&w);
    assert_ne!(last[0], after[0]);
    assert_eq!(last[1], after[1], "the input did not change, so on_input stays");
    assert_ne!(last[2], after[2]);
    assert_eq!(w.read("out/t.txt"), "t");
}

#[test]
fn an_invalid_replace_triggered_by_is_an_error_with_its_place() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "resource \"null_data\" \"a\" {}\nresource \"null_data\" \"b\" {\n  lifecycle {\n    \
         replace_triggered_by = [upper(null_data.a.id)]\n  }\n}\n",
    );
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("main.tf:4:29: Invalid replace_triggered_by expression"), "{}", run.all());
}

const TWO_FILES: &str = r#"
resource "local_file" "a" {
  filename = "out/a.txt"
  content  = "a"
}

resource "local_file" "b" {
  filename = "out/b.txt"
  content  = "b from ${local_file.a.content}"
}

resource "local_file" "c" {
  filename = "out/c.txt"
  content  = "c"
}
"#;

#[test]
fn replace_option_replaces_an_object_with_no_changes() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let (a, c) = (w.file_stamp("out/a.txt"), w.file_stamp("out/c.txt"));
    let plan = w.cairn(&["plan", "-replace=local_file.a", "-replace=local_file.nowhere"]).success();
    assert!(plan.stdout.contains("# local_file.a will be replaced, as requested"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 1 to destroy."), "{}", plan.all());
    assert!(plan.all().contains("Unused -replace option"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-replace=local_file.a"]).success();
    assert_ne!(w.file_stamp("out/a.txt"), a, "a is re-created");
    assert_eq!(w.file_stamp("out/c.txt"), c);
    assert_eq!(w.read("out/a.txt"), "a");
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());
}

/// A local value and an output of a resource that `-target=local_file.b`
/// leaves out.
const OF_C: &str = r#"
locals {
  c = local_file.c.content
}

output "c" {
  value = local.c
}
"#;

#[test]
fn target_plans_and_applies_only_the_target_and_what_it_depends_on() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}{OF_C}"));
    let plan = w.cairn(&["plan", "-target=local_file.b"]).success();
    assert!(plan.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.all().contains("Resource targeting is in effect"), "{}", plan.all());
    assert!(!plan.stdout.contains("local_file.c"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-target=local_file.b"]).success();
    assert_eq!(w.addresses(), ["local_file.a", "local_file.b"]);
    assert!(!w.exists("out/c.txt"));
    assert_eq!(w.read("out/b.txt"), "b from a");
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# local_file.c will be created"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("c = \"c\""), "{}", run.all());
}

#[test]
fn refresh_only_records_an_edited_file_without_touching_it() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}{OF_C}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    w.write("out/c.txt", "edited");
    let edited = w.file_stamp("out/c.txt");

    // Without a refresh the state is all the plan knows.
    let plan = w.cairn(&["plan", "-refresh=false", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());

    let plan = w.cairn(&["plan", "-refresh-only"]).success();
    assert!(plan.stdout.contains("# local_file.c has changed outside of cairn"), "{}", plan.all());
    assert!(
        has_line(&plan.stdout, "~ content", "= \"c\" -> \"edited\""),
        "the note names what changed:\n{}",
        plan.all()
    );
    assert!(plan.stdout.contains("This is a refresh-only plan"), "{}", plan.all());
    assert!(!plan.stdout.contains("will be replaced"), "{}", plan.all());

    let run = w.cairn(&["apply", "-refresh-only", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 0 added, 0 changed, 0 destroyed."), "{}", run.all());
    assert_eq!(w.read("out/c.txt"), "edited");
    assert_eq!(w.file_stamp("out/c.txt"), edited, "the file is not touched");
    assert_eq!(w.attributes("local_file.c")["content"], "edited", "the state follows the file");
    assert_eq!(w.state().unwrap()["outputs"]["c"]["value"], "edited", "and the outputs with it");

    let plan = w.cairn(&["plan", "-refresh-only", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "the state now matches the file:\n{}", plan.all());
    assert!(plan.stdout.contains("still matches the configuration"), "{}", plan.all());
    // An ordinary plan puts the configured content back.
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# local_file.c must be replaced"), "{}", plan.all());

    let run = w.cairn(&["plan", "-refresh-only", "-refresh=false"]).failure();
    assert!(run.stderr.contains("Incompatible plan options"), "{}", run.all());
}

#[test]
fn a_drift_note_names_the_attribute_that_changed() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    w.write("out/a.txt", "changed");
    std::fs::remove_file(w.path().join("out/c.txt")).unwrap();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Note: Objects have changed outside of cairn"), "{}", plan.all());
    assert!(plan.stdout.contains("# local_file.a has changed outside of cairn"), "{}", plan.all());
    assert!(has_line(&plan.stdout, "~ content", "= \"a\" -> \"changed\""), "{}", plan.all());
    assert!(plan.stdout.contains("# local_file.c has been deleted outside of cairn"), "{}", plan.all());
    let json = w.cairn(&["plan", "-json"]).success();
    let drift: Vec<(String, String)> = json
        .events()
        .iter()
        .filter(|e| e["type"] == "resource_drift")
        .map(|e| (e["address"].as_str().unwrap().to_string(), e["action"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(drift, [("local_file.a".into(), "update".into()), ("local_file.c".into(), "delete".into())]);
}

#[test]
fn apply_destroy_destroys_like_destroy() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let run = w.cairn(&["apply", "-destroy", "-auto-approve"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 3 destroyed."), "{}", run.all());
    assert!(w.addresses().is_empty());
    assert!(!w.exists("out/a.txt") && !w.exists("out/b.txt") && !w.exists("out/c.txt"));
}

#[test]
fn refresh_only_also_follows_objects_no_longer_configured() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    // `c` leaves the configuration and its file leaves the disk: a
    // refresh-only run drops it from the state instead of planning a delete.
    w.write(
        "main.tf",
        &format!("{LOCAL_OUT_GRANT}{}", TWO_FILES.split("resource \"local_file\" \"c\"").next().unwrap()),
    );
    std::fs::remove_file(w.path().join("out/c.txt")).unwrap();
    let plan = w.cairn(&["plan", "-refresh-only"]).success();
    assert!(plan.stdout.contains("# local_file.c has been deleted outside of cairn"), "{}", plan.all());
    w.cairn(&["apply", "-refresh-only", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["local_file.a", "local_file.b"]);
}

#[test]
fn destroy_with_a_target_destroys_it_and_its_dependents_only() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{TWO_FILES}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let c = w.file_stamp("out/c.txt");
    let run = w.cairn(&["destroy", "-auto-approve", "-target=local_file.a"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", run.all());
    assert_eq!(w.addresses(), ["local_file.c"]);
    assert!(!w.exists("out/a.txt") && !w.exists("out/b.txt"));
    assert_eq!(w.file_stamp("out/c.txt"), c);
}

/// Whether `text` has a line that starts (after its indentation) with
/// `start` and ends with `end`: an attribute's line whatever the width its
/// block aligns `=` to.
fn has_line(text: &str, start: &str, end: &str) -> bool {
    text.lines().any(|l| l.trim_start().starts_with(start) && l.ends_with(end))
}
