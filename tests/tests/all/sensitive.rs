//! Sensitive values: a value derived from a `sensitive = true` variable
//! (through a template, a local, a resource attribute another resource
//! copies, an element of a map) is redacted on every channel a user or a
//! CI log sees: `plan`, `apply`, `destroy`, `show`, `state show`, `output`,
//! the `-json` event streams and the logs at `CAIRN_LOG=debug`. The state
//! file keeps the value (as Terraform's does) and records which paths are
//! sensitive, so that `show` still redacts them after a reload; a copy a
//! provider makes of a sensitive value (`null_data`'s `output`) is found
//! by its value and redacted too. Asking for
//! one output by name, `output -json` and `show -json` give the value, as
//! Terraform's do.

use cairn_e2e::{LOCAL_OUT_GRANT, Run, Workdir};

const SECRET: &str = "hunter2-very-secret";

const DEBUG: [(&str, &str); 1] = [("CAIRN_LOG", "debug")];

fn config(outputs: &str) -> String {
    format!(
        r#"{LOCAL_OUT_GRANT}
variable "secret" {{
  type      = string
  default   = "{SECRET}"
  sensitive = true
}}

locals {{
  login = {{ user = "admin", password = var.secret }}
}}

resource "local_file" "a" {{
  filename = "out/a.txt"
  content  = "pw=${{var.secret}}"
}}

# A copy of a sensitive attribute is sensitive.
resource "local_file" "copy" {{
  filename = "out/copy.txt"
  content  = local_file.a.content
}}

# Only the sensitive element of the map is.
resource "null_data" "m" {{
  input = {{ user = local.login.user, password = local.login.password }}
}}

{outputs}
"#
    )
}

const OUTPUTS: &str = r#"
output "user" {
  value = local.login.user
}

output "secret" {
  value     = local.login
  sensitive = true
}

output "length" {
  value = nonsensitive(length(var.secret))
}
"#;

fn assert_hidden(what: &str, run: &Run) {
    assert!(!run.all().contains(SECRET), "{what} shows the sensitive value:\n{}", run.all());
}

/// The lines of standard output that contain `text` (at least one).
fn every_line_with<'a>(text: &str, run: &'a Run) -> impl Iterator<Item = &'a str> {
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains(text)).collect();
    assert!(!lines.is_empty(), "no line with {text:?}:\n{}", run.all());
    lines.into_iter()
}

#[test]
fn a_value_derived_from_a_sensitive_variable_is_redacted_everywhere_but_the_state() {
    let w = Workdir::new();
    w.write("main.tf", &config(OUTPUTS));

    let plan = w.cairn_env(&["plan"], &DEBUG).success();
    assert_hidden("plan", &plan);
    assert!(every_line_with("+ content ", &plan).all(|l| l.ends_with("= (sensitive value)")), "{}", plan.all());
    assert!(plan.stdout.contains("{ password = (sensitive value), user = \"admin\" }"), "{}", plan.all());
    assert!(plan.stdout.contains("+ secret = (sensitive value)"), "{}", plan.all());
    assert!(plan.stdout.contains("+ user = \"admin\""), "{}", plan.all());
    assert_hidden("plan -json", &w.cairn_env(&["plan", "-json"], &DEBUG).success());
    assert_hidden("plan -out", &w.cairn_here_env(&["plan", "-out", "p.plan"], &DEBUG).success());
    assert_hidden("show of a saved plan", &w.cairn_here_env(&["show", "p.plan"], &DEBUG).success());

    let apply = w.cairn_env(&["apply", "-auto-approve"], &DEBUG).success();
    assert_hidden("apply", &apply);
    assert!(apply.stdout.contains("secret = (sensitive value)"), "{}", apply.all());
    assert!(apply.stdout.contains("length = 19"), "{}", apply.all());
    assert_hidden("apply -json", &w.cairn_env(&["apply", "-auto-approve", "-json"], &DEBUG).success());

    // The state keeps the value and which paths are sensitive.
    assert_eq!(w.read("out/copy.txt"), format!("pw={SECRET}"));
    let marks = |addr: &str| {
        let state = w.state().unwrap();
        let r = state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == addr).cloned().unwrap();
        r["sensitive_attributes"].clone()
    };
    assert_eq!(marks("local_file.copy"), serde_json::json!([[{"attr": "content"}]]));
    // null_data copies `input` to `output`: the copy the provider made is
    // found by its value and marked too.
    assert_eq!(
        marks("null_data.m"),
        serde_json::json!([[{"attr": "input"}, {"attr": "password"}], [{"attr": "output"}, {"attr": "password"}]])
    );

    let show = w.cairn_env(&["show"], &DEBUG).success();
    assert_hidden("show", &show);
    assert!(show.stdout.contains("content = (sensitive value)"), "{}", show.all());
    assert!(show.stdout.contains("{ password = (sensitive value), user = \"admin\" }"), "{}", show.all());
    assert_hidden("state show", &w.cairn_here_env(&["state", "show", "local_file.copy"], &DEBUG).success());
    let outputs = w.cairn_here_env(&["output"], &DEBUG).success();
    assert_hidden("output", &outputs);
    assert!(outputs.stdout.contains("secret = <sensitive>"), "{}", outputs.all());

    // As in Terraform: asked for by name or as JSON, an output is given.
    let json = w.cairn_here(&["output", "-json"]).success();
    assert!(json.stdout.contains(SECRET), "{}", json.all());

    // A change of the secret shows that something changed, not what.
    let changed = w.cairn_env(&["plan", "-var", "secret=another-secret"], &DEBUG).success();
    assert_hidden("a plan that changes it", &changed);
    assert!(!changed.stdout.contains("another-secret"), "{}", changed.all());
    assert!(changed.stdout.contains("(sensitive value) -> (sensitive value)"), "{}", changed.all());

    let destroy = w.cairn_env(&["destroy", "-auto-approve"], &DEBUG).success();
    assert_hidden("destroy", &destroy);
    assert!(
        every_line_with("- content ", &destroy).all(|l| l.ends_with("= (sensitive value) -> null")),
        "{}",
        destroy.all()
    );
}

#[test]
fn an_output_that_would_expose_a_sensitive_value_must_say_so() {
    let w = Workdir::new();
    w.write("main.tf", &config("output \"leak\" {\n  value = local_file.copy.content\n}\n"));
    let plan = w.cairn(&["plan"]).failure();
    assert_hidden("the refused plan", &plan);
    assert!(plan.stderr.contains("Output refers to sensitive values"), "{}", plan.all());
    assert!(plan.stderr.contains("sensitive = true"), "{}", plan.all());
    assert!(!w.exists("out/a.txt"), "nothing was applied");

    // `sensitive()` marks a value that was not; `nonsensitive()` clears it.
    w.write("main.tf", &config("output \"m\" {\n  value = sensitive(\"plain\")\n}\n"));
    assert!(w.cairn(&["plan"]).failure().stderr.contains("Output refers to sensitive values"));
    w.write("main.tf", &config("output \"m\" {\n  value = nonsensitive(local_file.copy.content)\n}\n"));
    w.cairn(&["plan"]).success();
}

#[test]
fn errors_about_a_sensitive_value_do_not_show_it() {
    let w = Workdir::new();
    w.write("main.tf", &config(""));
    // An error that would quote the value it got.
    w.write("extra.tf", "locals {\n  n = 1 + var.secret\n}\n");
    for args in [&["plan"][..], &["plan", "-json"], &["validate"], &["validate", "-json"]] {
        let run = w.cairn(args).failure();
        assert_hidden(&args.join(" "), &run);
        assert!(run.all().contains("Invalid operand"), "{}", run.all());
    }
    // A sensitive value cannot name instances, as in Terraform.
    w.write("extra.tf", "resource \"null_data\" \"k\" {\n  for_each = toset([var.secret])\n}\n");
    let run = w.cairn(&["plan"]).failure();
    assert_hidden("for_each", &run);
    assert!(run.stderr.contains("extra.tf:2:14: Invalid for_each argument"), "{}", run.all());
    // The elements of a map may be sensitive: each.value is then.
    w.write(
        "extra.tf",
        "resource \"null_data\" \"k\" {\n  for_each = { a = var.secret }\n  input    = each.value\n}\n",
    );
    let run = w.cairn(&["plan"]).success();
    assert_hidden("each.value", &run);
    assert!(run.stdout.contains("+ input  = (sensitive value)"), "{}", run.all());
}

/// A module's variable or output declared `sensitive = true` marks its
/// value, as Terraform's does: what the root makes of it is redacted, and
/// a root output that exposes it must say `sensitive = true` too.
#[test]
fn a_module_output_declared_sensitive_is_marked() {
    let w = Workdir::new();
    w.write(
        "modules/creds/main.tf",
        &format!(
            "variable \"user\" {{\n  type = string\n}}\n\noutput \"password\" {{\n  value     = \"{SECRET}\"\n  sensitive = true\n}}\n\noutput \"user\" {{\n  value = var.user\n}}\n"
        ),
    );
    let root = |outputs: &str| {
        format!(
            "module \"creds\" {{\n  source = \"./modules/creds\"\n  user   = \"admin\"\n}}\n\nresource \"null_data\" \"login\" {{\n  input = \"${{module.creds.user}}:${{module.creds.password}}\"\n}}\n\n{outputs}"
        )
    };
    w.write("main.tf", &root("output \"user\" {\n  value = module.creds.user\n}\n"));
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert_hidden("apply", &apply);
    assert!(apply.stdout.contains("input  = (sensitive value)"), "{}", apply.all());
    assert!(apply.stdout.contains("user = \"admin\""), "an output not declared sensitive is shown: {}", apply.all());
    assert_hidden("show", &w.cairn(&["show"]).success());

    w.write("main.tf", &root("output \"password\" {\n  value = module.creds.password\n}\n"));
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Output refers to sensitive values"), "{}", plan.all());
    assert_hidden("the refused plan", &plan);
}
