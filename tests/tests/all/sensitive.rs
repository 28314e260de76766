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
    // The object's sensitive attribute redacted, its other one shown (over
    // several lines, as Terraform shows an object).
    let object = "          + password = (sensitive value)\n          + user     = \"admin\"\n";
    assert!(plan.stdout.contains(object), "{}", plan.all());
    assert!(plan.stdout.contains("+ secret = (sensitive value)"), "{}", plan.all());
    assert!(plan.stdout.contains("+ user   = \"admin\""), "{}", plan.all());
    assert_hidden("plan -json", &w.cairn_env(&["plan", "-json"], &DEBUG).success());
    assert_hidden("plan -out", &w.cairn_here_env(&["plan", "-out", "p.plan"], &DEBUG).success());
    assert_hidden("show of a saved plan", &w.cairn_here_env(&["show", "p.plan"], &DEBUG).success());

    let apply = w.cairn_env(&["apply", "-auto-approve"], &DEBUG).success();
    assert_hidden("apply", &apply);
    assert!(apply.stdout.contains("\nsecret = <sensitive>"), "{}", apply.all());
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
    // As Terraform says it: the line marked changed, no value on either side.
    let content_changed =
        |l: &str| l.trim_start().starts_with("~ content ") && l.contains("= (sensitive value) # forces replacement");
    assert!(changed.stdout.lines().any(content_changed), "{}", changed.all());

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

/// Issue 32, item 2: a new value of a sensitive variable leaves the copy
/// a provider made of it unknown until apply, and the marks on that
/// unknown stay where they were known to be: an output of the object's
/// other attribute is planned `(known after apply)`, as in Terraform, not
/// refused as sensitive.
#[test]
fn a_new_sensitive_value_keeps_its_marks_where_they_were_inside_an_unknown_object() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "db" {
  input = { user = "admin", password = var.db_password }
}

output "user_only" {
  value = terraform_data.db.output.user
}
"#,
    );
    let apply = w.cairn(&["apply", "-auto-approve", "-var", &format!("db_password={SECRET}")]).success();
    assert!(apply.stdout.contains("user_only = \"admin\""), "{}", apply.all());

    let plan = w.cairn(&["plan", "-var", "db_password=another-secret"]).success();
    assert_hidden("the plan", &plan);
    assert!(!plan.all().contains("another-secret"), "{}", plan.all());
    assert!(plan.stdout.contains("~ user_only = \"admin\" -> (known after apply)"), "{}", plan.all());
    // The password is still secret inside the planned object.
    w.cairn(&["apply", "-auto-approve", "-var", "db_password=another-secret"]).success();
    let show = w.cairn_env(&["show"], &[("CAIRN_VAR_db_password", "another-secret")]).success();
    assert!(!show.all().contains("another-secret"), "{}", show.all());
    assert!(show.stdout.contains("output = { password = (sensitive value), user = \"admin\" }"), "{}", show.all());
}

/// Issue 32, item 3: a copy a provider made of a value that was unknown
/// while planning (a `random_password` made in the same apply) is found
/// by the value known at apply time, recorded among the object's
/// sensitive paths, and redacted by every command after a reload.
#[test]
fn a_copy_of_a_secret_unknown_while_planning_is_redacted_after_the_apply() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"resource "random_password" "x" {
  length = 24
}

resource "terraform_data" "copy" {
  input = { user = "admin", password = random_password.x.result }
}

output "copy" {
  value     = terraform_data.copy.output
  sensitive = true
}
"#,
    );
    w.cairn(&["apply", "-auto-approve"]).success();
    let state = w.state().unwrap();
    let resources = state["resources"].as_array().unwrap();
    let secret = resources.iter().find(|r| r["addr"] == "random_password.x").unwrap()["attributes"]["result"]
        .as_str()
        .unwrap()
        .to_string();
    let copy = resources.iter().find(|r| r["addr"] == "terraform_data.copy").unwrap();
    assert_eq!(
        copy["sensitive_attributes"],
        serde_json::json!([[{"attr": "input"}, {"attr": "password"}], [{"attr": "output"}, {"attr": "password"}]]),
        "{}",
        w.state_text()
    );
    let hidden = |what: &str, run: &Run| {
        assert!(!run.all().contains(&secret), "{what} shows the copied secret:\n{}", run.all());
    };
    let show = w.cairn(&["show"]).success();
    hidden("show", &show);
    assert!(show.stdout.contains("password = (sensitive value)"), "{}", show.all());
    hidden("state show", &w.cairn_here(&["state", "show", "terraform_data.copy"]).success());
    hidden("output", &w.cairn_here(&["output"]).success());
    // A plan of a change to the object, saved and shown as JSON.
    w.write("extra.tf", "resource \"terraform_data\" \"more\" {\n  input = terraform_data.copy.output.user\n}\n");
    w.cairn_here(&["plan", "-out", "p.plan"]).success();
    hidden("show of a plan", &w.cairn_here(&["show", "p.plan"]).success());
    // As Terraform's, the JSON form gives values and marks which are
    // sensitive, for the tools that read it to redact.
    let plan_json: serde_json::Value =
        serde_json::from_str(&w.cairn_here(&["show", "-json", "p.plan"]).success().stdout).unwrap();
    let marked = plan_json["prior_state"]["values"]["root_module"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == "terraform_data.copy")
        .unwrap()["sensitive_values"]
        .clone();
    assert_eq!(marked["output"]["password"], true, "{plan_json:#}");
    // An output of the copy must now say it is sensitive, as one of the
    // original must.
    w.write("extra.tf", "output \"leak\" {\n  value = terraform_data.copy.output.password\n}\n");
    assert!(w.cairn(&["plan"]).failure().stderr.contains("Output refers to sensitive values"));
}
