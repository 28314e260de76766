//! Local modules through the real binary and the bundled `local`
//! provider, with the configuration in `tests/configs/modules/`: a module
//! called with `for_each`, calling another with `count`, an aliased
//! provider configuration passed down with `providers`, and outputs
//! flowing back up. Addresses carry the module path everywhere.

use std::path::Path;

use cairn_e2e::{LOCAL_OUT_GRANT, Workdir, repo_root};

/// A work directory with a copy of `tests/configs/modules/`.
fn modules_workdir() -> Workdir {
    let w = Workdir::new();
    copy_tree(&repo_root().join("tests/configs/modules"), Path::new(""), &w);
    w
}

fn copy_tree(from: &Path, rel: &Path, w: &Workdir) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let rel = rel.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &rel, w);
        } else {
            w.write(rel.to_str().unwrap(), &std::fs::read_to_string(entry.path()).unwrap());
        }
    }
}

const ADDRESSES: [&str; 6] = [
    "module.extra[0].local_file.f",
    r#"module.site["blog"].local_file.index"#,
    r#"module.site["blog"].module.page[0].local_file.f"#,
    r#"module.site["blog"].module.page[1].local_file.f"#,
    r#"module.site["docs"].local_file.index"#,
    r#"module.site["docs"].module.page[0].local_file.f"#,
];

#[test]
fn a_two_level_configuration_plans_applies_and_destroys() {
    let w = modules_workdir();
    let plan = w.cairn(&["plan"]).success();
    assert!(
        plan.stdout.contains(r#"# module.site["blog"].module.page[1].local_file.f will be created"#),
        "{}",
        plan.all()
    );
    assert!(plan.stdout.contains("+ resource \"local_file\" \"f\" {"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 6 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let json = w.cairn(&["plan", "-json"]).success();
    let mut planned: Vec<String> = json
        .events()
        .into_iter()
        .filter(|e| e["type"] == "planned_change")
        .filter_map(|e| e["address"].as_str().map(str::to_string))
        .collect();
    planned.sort();
    assert_eq!(planned, ADDRESSES, "{}", json.all());
    w.cairn_here(&["plan", "-out=tfplan"]).success();
    let shown = w.cairn_here(&["show", "-json", "tfplan"]).success();
    let shown: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let change = shown["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == r#"module.site["docs"].module.page[0].local_file.f"#)
        .expect("the change is in the plan's JSON");
    assert_eq!(change["module_address"], r#"module.site["docs"].module.page[0]"#);
    assert_eq!((change["type"].as_str(), change["name"].as_str()), (Some("local_file"), Some("f")));

    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(
        apply
            .stdout
            .contains("indexes = {\n  \"blog\" = \"out/blog/index.txt\"\n  \"docs\" = \"out/docs/index.txt\"\n}"),
        "{}",
        apply.all()
    );
    assert_eq!(w.read("out/blog/page-1.txt"), "page 1 of blog");
    assert_eq!(w.read("out/blog/index.txt"), "out/blog/page-0.txt\nout/blog/page-1.txt");
    assert_eq!(w.read("out/extra-0.txt"), "out/blog/index.txt,out/docs/index.txt");
    let mut addresses = w.addresses();
    addresses.sort();
    assert_eq!(addresses, ADDRESSES);
    // The sites' files were written through the configuration passed down.
    let state = w.state().unwrap();
    let provider_of = |addr: &str| {
        state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == addr).unwrap()["provider"].clone()
    };
    assert_eq!(provider_of(r#"module.site["blog"].module.page[0].local_file.f"#), "local.other");
    assert_eq!(provider_of("module.extra[0].local_file.f"), "local");

    let list = w.cairn_here(&["state", "list"]).success();
    assert_eq!(list.stdout.lines().collect::<Vec<_>>(), ADDRESSES, "{}", list.all());
    let show = w.cairn_here(&["state", "show", r#"module.site["docs"].local_file.index"#]).success();
    assert!(show.stdout.contains("resource \"local_file\" \"index\" {"), "{}", show.all());
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan is empty:\n{}", again.all());

    w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(w.addresses().is_empty());
    assert!(!w.exists("out/blog/page-0.txt"));
}

#[test]
fn target_a_resource_or_a_module_instance() {
    let w = modules_workdir();
    w.cairn(&["apply", "-auto-approve", r#"-target=module.site["docs"].local_file.index"#]).success();
    // The target and what it depends on, nothing else.
    assert_eq!(
        w.addresses(),
        [r#"module.site["docs"].local_file.index"#, r#"module.site["docs"].module.page[0].local_file.f"#]
    );
    // A module instance as a target: everything in it (and what that needs).
    let plan = w.cairn(&["plan", r#"-target=module.site["blog"]"#]).success();
    assert!(plan.stdout.contains(r#"# module.site["blog"].local_file.index will be created"#), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 3 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let run = w.cairn(&["plan", "-target=module.nowhere"]).failure();
    assert!(run.stderr.contains("-target=module.nowhere names no module instance with resources"), "{}", run.all());
}

#[test]
fn a_moved_block_moves_a_resource_into_a_module() {
    let w = Workdir::new();
    let file = "resource \"local_file\" \"f\" {\n  filename = \"out/f.txt\"\n  content  = \"f\"\n}\n";
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{file}"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.file_stamp("out/f.txt");
    w.write("modules/files/main.tf", file);
    w.write(
        "main.tf",
        &format!(
            "{LOCAL_OUT_GRANT}module \"files\" {{\n  source = \"./modules/files\"\n}}\nmoved {{\n  from = local_file.f\n  to   = module.files.local_file.f\n}}\n"
        ),
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# local_file.f has moved to module.files.local_file.f"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["module.files.local_file.f"]);
    assert_eq!(w.file_stamp("out/f.txt"), before, "the file is neither re-created nor rewritten");
}

#[test]
fn remote_module_sources_are_an_error() {
    for source in ["git::https://example.com/modules.git//site", "hashicorp/consul/aws"] {
        let w = Workdir::new();
        w.write("main.tf", &format!("module \"m\" {{\n  source = \"{source}\"\n}}\n"));
        let run = w.cairn(&["plan"]).failure();
        assert!(run.stderr.contains("main.tf:2:3: Unsupported module source"), "{}", run.all());
        assert!(run.stderr.contains("only from local paths (./ or ../)"), "{}", run.all());
    }
}

/// Issue 37: a module's `for_each` over what a plan knows of a resource
/// (its configured attribute), with a nested module whose `count` comes
/// from a resource of its instance: planned, applied and shrunk as
/// Terraform 1.11 does.
const KNOWN_WHILE_PLANNING: [(&str, &str); 3] = [
    (
        "main.tf",
        r#"resource "terraform_data" "names" {
  input = ["a", "b"]
}

module "outer" {
  source   = "./modules/outer"
  for_each = toset(terraform_data.names.input)
  name     = each.key
}

output "values" {
  value = { for k, m in module.outer : k => m.values }
}
"#,
    ),
    (
        "modules/outer/main.tf",
        r#"variable "name" {}

resource "terraform_data" "in" {
  input = [var.name, "${var.name}-2"]
}

module "inner" {
  source = "../inner"
  count  = length(terraform_data.in.input)
  value  = terraform_data.in.input[count.index]
}

output "values" {
  value = module.inner[*].value
}
"#,
    ),
    (
        "modules/inner/main.tf",
        r#"variable "value" {}

resource "terraform_data" "leaf" {
  input = var.value
}

output "value" {
  value = terraform_data.leaf.input
}
"#,
    ),
];

/// The addresses a plan's text says it creates or destroys, sorted.
fn planned_addresses(plan: &str) -> Vec<String> {
    let mut addrs: Vec<String> = plan
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# "))
        .filter(|l| l.ends_with(" will be created") || l.ends_with(" will be destroyed"))
        .map(str::to_string)
        .collect();
    addrs.sort();
    addrs
}

/// The line of a plan's text that sums it up.
fn summary(plan: &str) -> &str {
    plan.lines().find(|l| l.starts_with("Plan: ")).unwrap_or_else(|| panic!("no summary in {plan}"))
}

#[test]
fn module_for_each_over_values_known_while_planning_expands_as_terraform_does() {
    let (w, tf) = (Workdir::new(), Workdir::new());
    for d in [&w, &tf] {
        for (name, text) in KNOWN_WHILE_PLANNING {
            d.write(name, text);
        }
    }
    let init = tf.terraform(&["init", "-input=false", "-no-color"]);
    assert_eq!(init.code, 0, "terraform init: {}", init.all());
    let theirs = tf.terraform(&["plan", "-no-color"]).success().stdout;
    let ours = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert_eq!(summary(&ours), "Plan: 7 to add, 0 to change, 0 to destroy.", "{ours}");
    assert_eq!(summary(&ours), summary(&theirs), "terraform: {theirs}");
    assert_eq!(planned_addresses(&ours), planned_addresses(&theirs), "cairn: {ours}\nterraform: {theirs}");
    assert!(ours.contains(r#"# module.outer["b"].module.inner[1].terraform_data.leaf will be created"#), "{ours}");
    // The plan is the same on one thread as on several.
    let on = |threads| w.cairn_env(&["plan", "-no-color"], &[("CAIRN_THREADS", threads)]).success().stdout;
    assert_eq!(on("1"), on("4"));

    // A saved plan applies to the instances it was made with.
    w.cairn_here(&["plan", "-out=tfplan"]).success();
    let shown: serde_json::Value =
        serde_json::from_str(&w.cairn_here(&["show", "-json", "tfplan"]).success().stdout).unwrap();
    assert_eq!(shown["resource_changes"].as_array().unwrap().len(), 7, "{shown:#}");
    w.cairn_here(&["apply", "tfplan"]).success();
    assert_eq!(tf.terraform(&["apply", "-auto-approve", "-no-color"]).code, 0);
    assert_same_addresses(&w, &tf);
    let outputs = w.cairn_here(&["output", "-json", "values"]).success().stdout;
    let tf_outputs = tf.terraform(&["output", "-json", "values"]).success().stdout;
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
    assert_eq!(parse(&outputs), parse(&tf_outputs));
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0, "nothing to do after apply");

    // The set shrinks: module.outer["b"]'s objects are destroyed.
    for d in [&w, &tf] {
        d.write("main.tf", &KNOWN_WHILE_PLANNING[0].1.replace(r#"["a", "b"]"#, r#"["a"]"#));
    }
    let theirs = tf.terraform(&["plan", "-no-color"]).success().stdout;
    let ours = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert_eq!(summary(&ours), "Plan: 0 to add, 1 to change, 3 to destroy.", "{ours}");
    assert_eq!(summary(&ours), summary(&theirs), "terraform: {theirs}");
    assert_eq!(planned_addresses(&ours), planned_addresses(&theirs), "cairn: {ours}\nterraform: {theirs}");
    w.cairn(&["apply", "-auto-approve"]).success();
    let mut ours = w.addresses();
    ours.sort();
    assert!(ours.iter().all(|a| !a.starts_with(r#"module.outer["b"]"#)), "{ours:?}");
    assert_eq!(ours.len(), 4, "{ours:?}");
}

/// Issue 37: a `for_each` or `count` of a module that is known only after
/// apply is Terraform's error, at the same place.
#[test]
fn module_for_each_or_count_known_only_after_apply_is_terraforms_error() {
    let module = ("modules/m/main.tf", "variable \"x\" {}\n");
    let cases = [
        (
            "for_each",
            "toset([terraform_data.u.id])",
            "The \"for_each\" set includes values derived from resource attributes",
        ),
        (
            "for_each",
            "{ for k in [terraform_data.u.id] : k => 1 }",
            "The \"for_each\" map includes keys derived from resource attributes",
        ),
        (
            "count",
            "length(terraform_data.u.id)",
            "The \"count\" value depends on resource attributes that cannot be determined until apply",
        ),
    ];
    for (argument, expr, detail) in cases {
        let (w, tf) = (Workdir::new(), Workdir::new());
        let main = format!(
            "resource \"terraform_data\" \"u\" {{}}\n\nmodule \"m\" {{\n  source = \"./modules/m\"\n  {argument} = {expr}\n  x = 1\n}}\n"
        );
        for d in [&w, &tf] {
            d.write(module.0, module.1);
            d.write("main.tf", &main);
        }
        assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
        let theirs = tf.terraform(&["plan", "-no-color"]).failure();
        let ours = w.cairn(&["plan", "-no-color"]).failure();
        let summary = format!("Invalid {argument} argument");
        assert!(theirs.stderr.contains(&format!("Error: {summary}")), "terraform: {}", theirs.all());
        assert!(theirs.stderr.contains("on main.tf line 5, in module \"m\":"), "terraform: {}", theirs.all());
        let column = 6 + argument.len();
        assert!(ours.stderr.contains(&format!("main.tf:5:{column}: {summary}")), "cairn: {}", ours.all());
        let unwrapped = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(unwrapped(&theirs.stderr).contains(detail), "terraform: {}", theirs.all());
        assert!(unwrapped(&ours.stderr).contains(detail), "cairn: {}", ours.all());
    }
}

/// Issue 37: a module's `for_each` decided while planning over a value
/// derived from a sensitive one is Terraform's error at the argument; a
/// sensitive `count` is allowed, as Terraform allows it.
#[test]
fn a_sensitive_module_for_each_decided_while_planning_is_refused_as_terraform_does() {
    let module = ("modules/m/main.tf", "variable \"x\" {}\n\nresource \"terraform_data\" \"y\" {}\n");
    let main = |argument: &str, expr: &str| {
        format!(
            "variable \"secret\" {{\n  type      = list(string)\n  default   = [\"a\", \"b\"]\n  sensitive = true\n}}\n\n\
             resource \"terraform_data\" \"src\" {{\n  input = var.secret\n}}\n\n\
             module \"m\" {{\n  source = \"./modules/m\"\n  {argument} = {expr}\n  x = 1\n}}\n"
        )
    };
    let (w, tf) = (Workdir::new(), Workdir::new());
    for d in [&w, &tf] {
        d.write(module.0, module.1);
        d.write("main.tf", &main("for_each", "toset(terraform_data.src.input)"));
    }
    assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
    let theirs = tf.terraform(&["plan", "-no-color"]).failure();
    let ours = w.cairn(&["plan", "-no-color"]).failure();
    let detail = "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments.";
    let unwrapped = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(theirs.stderr.contains("Error: Invalid for_each argument"), "terraform: {}", theirs.all());
    assert!(theirs.stderr.contains("on main.tf line 13, in module \"m\":"), "terraform: {}", theirs.all());
    assert!(unwrapped(&theirs.stderr).contains(detail), "terraform: {}", theirs.all());
    assert!(ours.stderr.contains("main.tf:13:14: Invalid for_each argument"), "cairn: {}", ours.all());
    assert!(unwrapped(&ours.stderr).contains(detail), "cairn: {}", ours.all());

    // A count derived from the same secret expands.
    for d in [&w, &tf] {
        d.write("main.tf", &main("count", "length(terraform_data.src.input)"));
    }
    let theirs = tf.terraform(&["plan", "-no-color"]).success().stdout;
    let ours = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert_eq!(summary(&ours), "Plan: 3 to add, 0 to change, 0 to destroy.", "{ours}");
    assert_eq!(planned_addresses(&ours), planned_addresses(&theirs), "cairn: {ours}\nterraform: {theirs}");
}

/// Issue 37: `import` into an instance of a module call whose `for_each`
/// comes from a resource works as Terraform's: the argument is evaluated
/// from the state, so it is refused (Terraform's unknown-`for_each` error)
/// until that resource is applied, then imports; a key the call does not
/// expand to is Terraform's error.
#[test]
fn import_into_a_module_instance_decided_while_planning_works_as_terraform_does() {
    let (w, tf) = (Workdir::new(), Workdir::new());
    for d in [&w, &tf] {
        d.write("modules/m/main.tf", "resource \"terraform_data\" \"x\" {}\n");
        d.write(
            "main.tf",
            "resource \"terraform_data\" \"names\" {\n  input = [\"a\", \"b\"]\n}\n\nmodule \"m\" {\n  \
             source   = \"./modules/m\"\n  for_each = toset(terraform_data.names.input)\n}\n",
        );
    }
    assert_eq!(tf.terraform(&["init", "-input=false", "-no-color"]).code, 0);
    let import = |d: &Workdir, terraform: bool, key: &str, id: &str| {
        let args = ["import", "-no-color", &format!("module.m[\"{key}\"].terraform_data.x"), id].map(String::from);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if terraform { d.terraform(&args) } else { d.cairn(&args) }
    };
    let unwrapped = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (theirs, ours) = (import(&tf, true, "a", "obj-a").failure(), import(&w, false, "a", "obj-a").failure());
    let unknown = "The \"for_each\" set includes values derived from resource attributes that cannot be determined";
    assert!(unwrapped(&theirs.stderr).contains(unknown), "terraform: {}", theirs.all());
    assert!(theirs.stderr.contains("main.tf line 7"), "terraform: {}", theirs.all());
    assert!(ours.stderr.contains("main.tf:7:14: Invalid for_each argument"), "cairn: {}", ours.all());
    assert!(unwrapped(&ours.stderr).contains(unknown), "cairn: {}", ours.all());

    assert_eq!(tf.terraform(&["apply", "-auto-approve", "-no-color", "-target=terraform_data.names"]).code, 0);
    w.cairn(&["apply", "-auto-approve", "-target=terraform_data.names"]).success();
    import(&tf, true, "a", "obj-a").success();
    import(&w, false, "a", "obj-a").success();
    assert_same_addresses(&w, &tf);
    assert_eq!(w.attributes(r#"module.m["a"].terraform_data.x"#)["id"], "obj-a");

    let (theirs, ours) = (import(&tf, true, "zz", "obj-z").failure(), import(&w, false, "zz", "obj-z").failure());
    let missing = "Configuration for import target does not exist";
    assert!(theirs.stderr.contains(missing), "terraform: {}", theirs.all());
    assert!(ours.stderr.contains(missing), "cairn: {}", ours.all());
    let plan = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert_eq!(planned_addresses(&plan), [r#"module.m["b"].terraform_data.x will be created"#], "{plan}");
}

/// Issue 37: a module's `count` from a data source read while planning
/// (the `local` provider's `local_file`, which Terraform would download,
/// so cairn alone), through a saved plan, and shrinking when the data
/// changes; a `depends_on` on the module waits for all its instances.
#[test]
fn module_count_from_a_data_source_read_while_planning() {
    let w = Workdir::new();
    w.write("data/n.txt", "2");
    w.write("modules/m/main.tf", "variable \"i\" {}\n\nresource \"terraform_data\" \"t\" {\n  input = var.i\n}\n");
    w.write(
        "main.tf",
        r#"provider "local" {
  sandbox {
    read_only = ["./data"]
  }
}

data "local_file" "n" {
  filename = "data/n.txt"
}

module "m" {
  source = "./modules/m"
  count  = tonumber(data.local_file.n.content)
  i      = count.index
}

resource "terraform_data" "after" {
  depends_on = [module.m]
}
"#,
    );
    let plan = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert!(plan.contains("Plan: 3 to add, 0 to change, 0 to destroy."), "{plan}");
    assert!(plan.contains("# module.m[1].terraform_data.t will be created"), "{plan}");
    let graph = w.cairn(&["graph", "-type=apply"]).success().stdout;
    assert!(graph.contains("module.m[1].terraform_data.t"), "{graph}");
    w.cairn_here(&["plan", "-out=tfplan"]).success();
    // The data changes after the plan is saved: applying it still makes
    // the instances it planned.
    w.write("data/n.txt", "1");
    w.cairn_here(&["apply", "tfplan"]).success();
    let mut addrs = w.addresses();
    addrs.sort();
    assert_eq!(addrs, ["module.m[0].terraform_data.t", "module.m[1].terraform_data.t", "terraform_data.after"]);
    let dependencies = w.state().unwrap()["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["addr"] == "terraform_data.after")
        .map(|r| r["dependencies"].clone())
        .unwrap();
    assert_eq!(dependencies, serde_json::json!(["module.m[0].terraform_data.t", "module.m[1].terraform_data.t"]));
    let shrink = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert!(shrink.contains("# module.m[1].terraform_data.t will be destroyed"), "{shrink}");
    assert!(shrink.contains("Plan: 0 to add, 0 to change, 1 to destroy."), "{shrink}");
}

#[test]
fn a_moved_block_renames_a_module_call() {
    let w = Workdir::new();
    w.write("modules/files/main.tf", "variable \"n\" {}\nresource \"local_file\" \"f\" {\n  filename = \"out/${var.n}.txt\"\n  content  = var.n\n}\n");
    let call = |name: &str| format!("module \"{name}\" {{\n  source = \"./modules/files\"\n  n      = \"f\"\n}}\n");
    w.write("main.tf", &format!("{LOCAL_OUT_GRANT}{}", call("old")));
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.file_stamp("out/f.txt");
    w.write(
        "main.tf",
        &format!("{LOCAL_OUT_GRANT}{}moved {{\n  from = module.old\n  to   = module.new\n}}\n", call("new")),
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# module.old.local_file.f has moved to module.new.local_file.f"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["module.new.local_file.f"]);
    assert_eq!(w.file_stamp("out/f.txt"), before, "the file is neither re-created nor rewritten");
}

#[test]
fn state_commands_take_module_addresses() {
    let w = modules_workdir();
    w.cairn(&["apply", "-auto-approve"]).success();
    let list = w.cairn_here(&["state", "list", r#"module.site["blog"].local_file.index"#]).success();
    assert_eq!(list.stdout.trim(), r#"module.site["blog"].local_file.index"#, "{}", list.all());
    w.cairn_here(&["state", "mv", "module.extra[0].local_file.f", "local_file.extra"]).success();
    w.cairn_here(&["state", "rm", r#"module.site["docs"].module.page[0].local_file.f"#]).success();
    // A whole module instance moves with everything in it.
    let mv = w.cairn_here(&["state", "mv", r#"module.site["blog"]"#, "module.blog"]).success();
    assert!(mv.stdout.contains("Successfully moved 3 object(s)."), "{}", mv.all());
    let mut addresses = w.addresses();
    addresses.sort();
    assert_eq!(
        addresses,
        [
            "local_file.extra",
            "module.blog.local_file.index",
            "module.blog.module.page[0].local_file.f",
            "module.blog.module.page[1].local_file.f",
            r#"module.site["docs"].local_file.index"#,
        ]
    );
    let index = w.state().unwrap()["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["addr"] == "module.blog.local_file.index")
        .unwrap()["dependencies"]
        .clone();
    assert_eq!(
        index,
        serde_json::json!(["module.blog.module.page[0].local_file.f", "module.blog.module.page[1].local_file.f"])
    );
    let run = w.cairn_here(&["state", "mv", "module.nowhere", "module.x"]).failure();
    assert!(run.stderr.contains("cannot move module.nowhere: it does not match anything"), "{}", run.all());
}

#[test]
fn a_provider_block_inside_a_module_is_an_error() {
    let w = Workdir::new();
    w.write("modules/m/main.tf", "provider \"local\" {}\n");
    w.write("main.tf", "module \"m\" {\n  source = \"./modules/m\"\n}\n");
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("modules/m/main.tf:1:1: provider block not allowed in a module"), "{}", run.all());
    assert!(run.stderr.contains("pass it with providers = { … }"), "{}", run.all());
}

#[test]
fn dynamic_blocks_inside_a_module_instance_see_its_variables() {
    let w = cairn_e2e::recorder_workdir(
        "module \"svc\" {\n  source   = \"./modules/svc\"\n  for_each = { a = [\"x\"], b = [\"y\", \"z\"] }\n  tags     = each.value\n}\n",
    );
    w.write(
        "modules/svc/main.tf",
        "variable \"tags\" {\n  type = list(string)\n}\nresource \"recorder_thing\" \"t\" {\n  name = join(\"-\", var.tags)\n  \
         dynamic \"tag\" {\n    for_each = var.tags\n    content {\n      name = upper(tag.value)\n    }\n  }\n}\n",
    );
    w.cairn(&["apply", "-auto-approve"]).success();
    let b = w.attributes(r#"module.svc["b"].recorder_thing.t"#);
    assert_eq!(b["name"], "y-z");
    assert_eq!(b["tag"], serde_json::json!([{"name": "Y"}, {"name": "Z"}]));
    assert_eq!(w.attributes(r#"module.svc["a"].recorder_thing.t"#)["tag"], serde_json::json!([{"name": "X"}]));
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());
}

#[test]
fn a_saved_plan_is_stale_when_a_module_file_changes() {
    let w = modules_workdir();
    w.cairn_here(&["plan", "-out=p.plan"]).success();
    let page = "modules/site/modules/page/main.tf";
    w.write(page, &format!("{}# edited\n", w.read(page)));
    let run = w.cairn_here(&["apply", "p.plan"]).failure();
    assert!(run.stderr.contains(&format!("{page} was modified")), "{}", run.all());
}

/// Issue 37: the blocks of a module whose `for_each` (and, inside it, a
/// nested module whose `count`) only planning decides are validated once,
/// every value in them unknown, as terraform validate 1.11.4 validates
/// them: the same error at the same place, in the outer module and in the
/// inner one; and `cairn graph` shows them, once each (the `for_each`
/// instance as `["*"]`, the `count` one as `[0]`). Before, they were in
/// neither.
#[test]
fn modules_whose_instances_planning_decides_are_validated_and_graphed_once() {
    let main = "resource \"terraform_data\" \"names\" {\n  input = [\"a\", \"b\"]\n}\n\nmodule \"outer\" {\n  \
                source   = \"./modules/outer\"\n  for_each = toset(terraform_data.names.input)\n  name     = each.key\n}\n";
    let outer = "variable \"name\" {}\n\nresource \"terraform_data\" \"in\" {\n  input   = var.name\n  unknown = 1\n}\n\n\
                 module \"inner\" {\n  source = \"../inner\"\n  count  = length(terraform_data.in.input)\n}\n";
    let inner = "resource \"terraform_data\" \"leaf\" {\n  input = 1\n  bogus = 2\n}\n";
    let (ours, theirs) = (Workdir::new(), Workdir::new());
    let write = |outer: &str, inner: &str| {
        for w in [&ours, &theirs] {
            w.write("main.tf", main);
            w.write("modules/outer/main.tf", outer);
            w.write("modules/inner/main.tf", inner);
        }
    };
    write(outer, inner);
    theirs.terraform(&["init", "-no-color"]);
    // terraform stops at the outer module's error (the inner module's
    // count depends on the resource that has it): one error at a time.
    let fixed_outer = outer.replace("  unknown = 1\n", "");
    for (outer, file, line, name) in
        [(outer, "modules/outer/main.tf", 5, "unknown"), (fixed_outer.as_str(), "modules/inner/main.tf", 3, "bogus")]
    {
        write(outer, inner);
        let tf = theirs.terraform(&["validate", "-no-color"]);
        let run = ours.cairn(&["validate", "-no-color"]);
        assert_eq!((run.code, tf.code), (1, 1), "cairn:\n{}\nterraform:\n{}", run.all(), tf.all());
        assert!(tf.stderr.contains(&format!("on {file} line {line}")), "{}", tf.all());
        assert!(run.stderr.contains(&format!("{file}:{line}:3: Unsupported argument")), "{}", run.all());
        for out in [&tf.stderr, &run.stderr] {
            assert!(out.contains(&format!("An argument named \"{name}\" is not expected here.")), "{out}");
        }
    }

    // Without errors, the graph shows the modules' resources.
    write(&fixed_outer, &inner.replace("  bogus = 2\n", ""));
    ours.cairn(&["validate"]).success();
    let graph = ours.cairn(&["graph"]).success().stdout;
    for node in
        ["module.outer[\\\"*\\\"].terraform_data.in", "module.outer[\\\"*\\\"].module.inner[0].terraform_data.leaf"]
    {
        assert!(graph.contains(node), "{node}: {graph}");
    }
}

/// Checks that cairn's state in `w` and terraform's in `tf` hold the same
/// instance addresses.
fn assert_same_addresses(w: &Workdir, tf: &Workdir) {
    let mut theirs: Vec<String> =
        tf.terraform(&["state", "list"]).success().stdout.lines().map(str::to_string).collect();
    theirs.sort();
    let mut ours = w.addresses();
    ours.sort();
    assert_eq!(ours, theirs);
}
