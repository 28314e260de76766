//! Refactoring and adoption through the real binary and the bundled
//! `local` provider: `moved` blocks rename without re-creating, `import`
//! blocks and `cairn import` adopt a file that already exists, and
//! `removed` blocks forget an object without deleting it.

use cairn_e2e::{LOCAL_OUT_GRANT, Workdir};

/// `local_file.NAME` writing `out/site.txt`.
fn site(name: &str) -> String {
    format!("resource \"local_file\" \"{name}\" {{\n  filename = \"out/site.txt\"\n  content  = \"site\"\n}}\n")
}

#[test]
fn a_moved_block_renames_without_re_creating() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{}", site("old")));
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.file_stamp("out/site.txt");

    w.write(
        "main.tf",
        &format!("{LOCAL_OUT_GRANT}{}moved {{\n  from = local_file.old\n  to   = local_file.new\n}}\n", site("new")),
    );
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "a move is a change of the state:\n{}", plan.all());
    assert!(plan.stdout.contains("# local_file.old has moved to local_file.new"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let json = w.cairn(&["plan", "-json"]).success();
    let moved = json.events().into_iter().find(|e| e["type"] == "planned_change").expect("a planned change");
    assert_eq!((moved["action"].as_str(), moved["previous_address"].as_str()), (Some("move"), Some("local_file.old")));

    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["local_file.new"]);
    assert_eq!(w.file_stamp("out/site.txt"), before, "the file is neither re-created nor rewritten");
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());
}

#[test]
fn a_move_onto_an_address_that_has_an_object_is_an_error() {
    let w = Workdir::new();
    let other = "resource \"local_file\" \"new\" {\n  filename = \"out/other.txt\"\n  content  = \"o\"\n}\n";
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{}{other}", site("old")));
    w.cairn(&["apply", "-auto-approve"]).success();
    w.write(
        "main.tf",
        &format!("{LOCAL_OUT_GRANT}{other}moved {{\n  from = local_file.old\n  to   = local_file.new\n}}\n"),
    );
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("Cannot move local_file.old to local_file.new"), "{}", run.all());
    assert_eq!(w.addresses(), ["local_file.new", "local_file.old"], "the state is untouched");
}

#[test]
fn an_import_block_adopts_an_existing_file() {
    let w = Workdir::new();
    w.write("out/site.txt", "site");
    let before = w.file_stamp("out/site.txt");
    w.write(
        "main.tf",
        &format!("{LOCAL_OUT_GRANT}{}import {{\n  to = local_file.site\n  id = \"out/site.txt\"\n}}\n", site("site")),
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# local_file.site will be imported"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let json = w.cairn(&["plan", "-json"]).success();
    let events = json.events();
    let change = events.iter().find(|e| e["type"] == "planned_change").expect("a planned change");
    assert_eq!(change["importing"]["id"], "out/site.txt");
    let summary = events.iter().find(|e| e["type"] == "change_summary").unwrap();
    assert_eq!(summary["import"], 1);

    let run = w.cairn(&["apply", "-auto-approve", "-json"]).success();
    let summary = run.events().into_iter().find(|e| e["type"] == "summary").expect("a summary");
    assert_eq!((summary["imported"].as_u64(), summary["added"].as_u64()), (Some(1), Some(0)), "{summary}");
    assert_eq!(w.addresses(), ["local_file.site"]);
    assert_eq!(w.attributes("local_file.site")["content"], "site");
    assert_eq!(w.file_stamp("out/site.txt"), before, "adopting a file does not rewrite it");
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "an adopted file that matches the configuration has no changes:\n{}", plan.all());
}

#[test]
fn an_import_of_something_that_does_not_exist_fails_and_records_nothing() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        &format!("{LOCAL_OUT_GRANT}{}import {{\n  to = local_file.site\n  id = \"out/site.txt\"\n}}\n", site("site")),
    );
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("Cannot read out/site.txt"), "{}", run.all());
    assert!(w.addresses().is_empty());
}

#[test]
fn cairn_import_adopts_an_existing_file_into_the_state() {
    let w = Workdir::new();
    w.write("out/site.txt", "site");
    let before = w.file_stamp("out/site.txt");
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{}", site("site")));
    let run = w.cairn(&["import", "local_file.site", "out/site.txt"]).success();
    assert!(run.stdout.contains("Import successful!"), "{}", run.all());
    assert_eq!(w.addresses(), ["local_file.site"]);
    assert_eq!(w.file_stamp("out/site.txt"), before);
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());

    let again = w.cairn(&["import", "local_file.site", "out/site.txt"]).failure();
    assert!(again.stderr.contains("Resource already managed by cairn"), "{}", again.all());
    let undeclared = w.cairn(&["import", "local_file.other", "out/site.txt"]).failure();
    assert!(undeclared.stderr.contains("does not exist in the configuration"), "{}", undeclared.all());
    assert_eq!(w.addresses(), ["local_file.site"]);
}

#[test]
fn a_removed_block_forgets_without_deleting() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{}", site("site")));
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.file_stamp("out/site.txt");
    w.write(
        "main.tf",
        &format!(
            "{LOCAL_OUT_GRANT}removed {{\n  from = local_file.site\n  lifecycle {{\n    destroy = false\n  }}\n}}\n"
        ),
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(
        plan.stdout.contains("# local_file.site will no longer be managed by cairn, but will not be destroyed"),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy, 1 to forget."), "{}", plan.all());
    assert!(plan.all().contains("Some objects will no longer be managed by cairn"), "{}", plan.all());
    let json = w.cairn(&["plan", "-json"]).success();
    let change = json.events().into_iter().find(|e| e["type"] == "planned_change").unwrap();
    assert_eq!(change["action"], "forget");

    let run = w.cairn(&["apply", "-auto-approve", "-json"]).success();
    let summary = run.events().into_iter().find(|e| e["type"] == "summary").expect("a summary");
    assert_eq!((summary["forgotten"].as_u64(), summary["destroyed"].as_u64()), (Some(1), Some(0)), "{summary}");
    assert!(w.addresses().is_empty());
    assert_eq!(w.file_stamp("out/site.txt"), before, "the file is left as it was");
    assert_eq!(w.read("out/site.txt"), "site");
}

#[test]
fn a_removed_block_without_lifecycle_destroys() {
    let w = Workdir::new();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{}", site("site")));
    w.cairn(&["apply", "-auto-approve"]).success();
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}removed {{\n  from = local_file.site\n}}\n"));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("1 destroyed"), "{}", run.all());
    assert!(!w.exists("out/site.txt"));
}

/// Issue 37: `terraform_data` is importable as in Terraform 1.11: the
/// object adopted has the id given, and the plan updates it to the
/// configuration (Terraform plans the same: `1 to import, 0 to add, 1 to
/// change`).
#[test]
fn terraform_data_is_imported_with_the_id_given() {
    let w = cairn_e2e::Workdir::new();
    w.write(
        "main.tf",
        "import {\n  to = terraform_data.x\n  id = \"abc\"\n}\n\nresource \"terraform_data\" \"x\" {\n  input = \"v\"\n}\n",
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to import, 0 to add, 1 to change, 0 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    let attrs = w.attributes("terraform_data.x");
    assert_eq!((attrs["id"].as_str(), attrs["output"]["value"].as_str()), (Some("abc"), Some("v")), "{attrs:#}");
}

/// Issue 37: an `import` block with `for_each` (Terraform 1.7) adopts one
/// object per element, its key and id from `each`; the plan is the one
/// Terraform 1.11.4 makes of the same configuration.
#[test]
fn an_import_with_for_each_adopts_one_object_per_element_as_terraform_does() {
    let config = r#"variable "ids" {
  default = { a = "id-a", b = "id-b" }
}

import {
  for_each = var.ids
  to       = terraform_data.x[each.key]
  id       = each.value
}

resource "terraform_data" "x" {
  for_each = var.ids
  input    = each.key
}
"#;
    let w = cairn_e2e::Workdir::new();
    w.write("main.tf", config);
    let summary = "Plan: 2 to import, 0 to add, 2 to change, 0 to destroy.";
    let terraform = |args: &[&str]| w.terraform(args).success().stdout;
    terraform(&["init", "-input=false", "-no-color"]);
    assert!(terraform(&["plan", "-input=false", "-no-color"]).contains(summary));
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains(summary), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("terraform_data.x[\"a\"]")["id"], "id-a");
    assert_eq!(w.attributes("terraform_data.x[\"b\"]")["id"], "id-b");

    // A reference to anything but input variables and each is refused,
    // where it is written.
    w.write("main.tf", &config.replace("id       = each.value", "id       = terraform_data.x[\"a\"].id"));
    let refused = w.cairn(&["plan"]).failure();
    assert!(
        refused.stderr.contains("may refer only to input variables and each.key or each.value"),
        "{}",
        refused.all()
    );
}

const NULL_RESOURCE: &str = "resource \"null_resource\" \"a\" {\n  triggers = { k = \"v\" }\n}\n";

const NULL_TO_TERRAFORM_DATA: &str = r#"resource "terraform_data" "a" {
  triggers_replace = { k = "v" }
}

moved {
  from = null_resource.a
  to   = terraform_data.a
}
"#;

/// Issue 37: `moved` from `null_resource` to `terraform_data` (Terraform
/// 1.8): the `terraform` provider converts the object (its
/// `state-moves` export), so the plan moves it without replacing it, and
/// the state then holds what Terraform 1.11.4's holds: the same id,
/// `triggers` as `triggers_replace`.
#[test]
fn a_null_resource_moves_to_terraform_data_as_terraform_does() {
    let w = Workdir::new();
    let tf = Workdir::new();
    for d in [&w, &tf] {
        d.write("main.tf", NULL_RESOURCE);
    }
    let init = tf.terraform(&["init", "-input=false", "-no-color"]);
    assert_eq!(init.code, 0, "terraform init needs hashicorp/null: run scripts/test-tools.sh\n{}", init.all());
    assert_eq!(tf.terraform(&["apply", "-auto-approve", "-no-color"]).code, 0);
    w.cairn(&["apply", "-auto-approve"]).success();
    let id = w.attributes("null_resource.a")["id"].as_str().unwrap().to_string();

    for d in [&w, &tf] {
        d.write("main.tf", NULL_TO_TERRAFORM_DATA);
    }
    let theirs = tf.terraform(&["plan", "-no-color"]);
    let ours = w.cairn(&["plan", "-no-color"]).success();
    for expected in ["# null_resource.a has moved to terraform_data.a", "Plan: 0 to add, 0 to change, 0 to destroy."] {
        assert!(theirs.stdout.contains(expected), "terraform: {}", theirs.all());
        assert!(ours.stdout.contains(expected), "cairn: {}", ours.all());
    }

    assert_eq!(tf.terraform(&["apply", "-auto-approve", "-no-color"]).code, 0);
    w.cairn(&["apply", "-auto-approve"]).success();
    let shown: serde_json::Value =
        serde_json::from_str(&tf.terraform(&["show", "-json"]).stdout).expect("terraform show -json");
    let tf_values = &shown["values"]["root_module"]["resources"][0]["values"];
    let attrs = w.attributes("terraform_data.a");
    assert_eq!(w.addresses(), ["terraform_data.a"]);
    assert_eq!(attrs["id"].as_str(), Some(id.as_str()), "the object keeps its id: {attrs:#}");
    assert_eq!(tf_values["triggers_replace"], serde_json::json!({"k": "v"}));
    assert_eq!(attrs["triggers_replace"]["value"], tf_values["triggers_replace"], "{attrs:#}");
    for unset in ["input", "output"] {
        assert!(tf_values[unset].is_null() && attrs[unset]["value"].is_null(), "{unset}: {attrs:#}");
    }
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());
}

/// Issue 37: moves across types that the target's provider does not take
/// are refused at the `moved` block, as Terraform refuses them: back from
/// `terraform_data` to `null_resource` (hashicorp/null has no state moves),
/// and into `terraform_data` from another provider's type (its provider's
/// own error). Nothing is planned or changed.
#[test]
fn moves_across_types_a_provider_does_not_take_are_refused_at_the_block() {
    let w = Workdir::new();
    let tf = Workdir::new();
    let data = "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n";
    for d in [&w, &tf] {
        d.write("main.tf", data);
    }
    assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
    assert_eq!(tf.terraform(&["apply", "-auto-approve", "-no-color"]).code, 0);
    w.cairn(&["apply", "-auto-approve"]).success();
    let back = format!("{NULL_RESOURCE}\nmoved {{\n  from = terraform_data.a\n  to   = null_resource.a\n}}\n");
    for d in [&w, &tf] {
        d.write("main.tf", &back);
    }
    // terraform init again: the configuration now needs hashicorp/null.
    let init = tf.terraform(&["init", "-input=false", "-no-color"]);
    assert_eq!(init.code, 0, "terraform init needs hashicorp/null: run scripts/test-tools.sh\n{}", init.all());
    let theirs = tf.terraform(&["plan", "-no-color"]);
    let ours = w.cairn(&["plan", "-no-color"]).failure();
    let detail = "The provider \"registry.terraform.io/hashicorp/null\" does not support moved";
    assert!(theirs.stderr.contains("Error: Unsupported `moved` across resource types"), "{}", theirs.all());
    assert!(theirs.stderr.contains("on main.tf line 5:"), "{}", theirs.all());
    assert!(theirs.stderr.contains(detail), "{}", theirs.all());
    assert!(ours.stderr.contains("main.tf:5:1: Unsupported `moved` across resource types"), "{}", ours.all());
    assert!(ours.stderr.contains(detail), "{}", ours.all());

    let random = "resource \"random_id\" \"r\" {\n  byte_length = 4\n}\n";
    w.write("main.tf", random);
    w.cairn(&["apply", "-auto-approve"]).success();
    w.write(
        "main.tf",
        "resource \"terraform_data\" \"r\" {\n}\n\nmoved {\n  from = random_id.r\n  to   = terraform_data.r\n}\n",
    );
    let refused = w.cairn(&["plan", "-no-color"]).failure();
    assert!(
        refused.stderr.contains("main.tf:4:1: Unsupported source provider for move operation"),
        "{}",
        refused.all()
    );
    assert!(refused.stderr.contains("Only moving from the official hashicorp/null provider"), "{}", refused.all());
    assert_eq!(w.addresses(), ["random_id.r"], "nothing moved");
}
