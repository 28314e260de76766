//! Ephemeral values (Terraform 1.10) through the real binary: ephemeral
//! input variables and child module outputs, `ephemeralasnull()`, and
//! `terraform.applying`. Each misuse fails with Terraform 1.11's error at
//! Terraform's line (the real `terraform` runs the same configuration with
//! `terraform_data`); values agree with Terraform's; a saved plan holds no
//! ephemeral value and applying it asks for the value again; and an
//! ephemeral password reaches a write-only attribute and a provider
//! configuration of the real PostgreSQL provider (which logs in with it)
//! while appearing in no state, plan file, `-json` stream or log.

use cairn_e2e::{Postgres, Run, Workdir};

const SECRET: &str = "eph-s3cret-value-42";

/// A directory holding `files`, for cairn or terraform.
fn workdir(files: &[(&str, &str)]) -> Workdir {
    let w = Workdir::new();
    for (name, text) in files {
        w.write(name, text);
    }
    w
}

/// The `(summary, file:line)` of each error cairn printed: cairn writes
/// `Error: main.tf:9:11: Summary`.
fn cairn_errors(run: &Run) -> Vec<(String, String)> {
    let mut errors: Vec<(String, String)> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("Error: "))
        .filter_map(|rest| {
            let (file, rest) = rest.split_once(':')?;
            let (line, rest) = rest.split_once(':')?;
            let (_column, summary) = rest.split_once(": ")?;
            Some((summary.to_string(), format!("{file}:{line}")))
        })
        .collect();
    errors.sort();
    errors
}

/// The `(summary, file:line)` of each error terraform printed:
/// `Error: Summary` followed by `  on main.tf line 9, …`.
fn terraform_errors(run: &Run) -> Vec<(String, String)> {
    let lines: Vec<&str> = run.stderr.lines().map(|l| l.trim_start_matches(['│', ' '])).collect();
    let mut errors = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(summary) = line.strip_prefix("Error: ") else { continue };
        let place = lines[at + 1..].iter().take(4).find_map(|l| l.strip_prefix("on ")).and_then(|l| {
            let (file, rest) = l.split_once(" line ")?;
            let line = rest.split([',', ':']).next()?;
            Some(format!("{file}:{line}"))
        });
        if let Some(place) = place {
            errors.push((summary.to_string(), place));
        }
    }
    errors.sort();
    errors
}

/// Plans `files` with cairn and with terraform (`-var pw=…`); both must
/// fail with the same errors at the same lines, which must be `expected`.
fn same_errors_as_terraform(files: &[(&str, &str)], expected: &[(&str, &str)]) {
    let ours = workdir(files);
    let ours_run = ours.cairn(&["plan", "-no-color", "-var", &format!("pw={SECRET}")]).failure();
    let theirs = workdir(files);
    theirs.terraform(&["init", "-no-color"]);
    let theirs_run = theirs.terraform(&["plan", "-no-color", "-input=false", "-var", &format!("pw={SECRET}")]);
    let mut expected: Vec<(String, String)> = expected.iter().map(|(s, l)| (s.to_string(), l.to_string())).collect();
    expected.sort();
    assert_eq!(terraform_errors(&theirs_run), expected, "terraform:\n{}", theirs_run.all());
    assert_eq!(cairn_errors(&ours_run), expected, "cairn:\n{}", ours_run.all());
    assert!(!ours_run.all().contains(SECRET), "an error shows the ephemeral value:\n{}", ours_run.all());
}

const VARIABLE: &str = r#"variable "pw" {
  type      = string
  ephemeral = true
}
"#;

#[test]
fn an_ephemeral_value_in_a_persisted_attribute_fails_where_terraform_says() {
    let main = format!(
        r#"{VARIABLE}
locals {{
  l = "x-${{var.pw}}"
}}

resource "terraform_data" "a" {{
  input = local.l
}}
"#
    );
    same_errors_as_terraform(&[("main.tf", &main)], &[("Invalid use of ephemeral value", "main.tf:11")]);

    // `validate` finds it too, as Terraform's does.
    let expected = vec![("Invalid use of ephemeral value".to_string(), "main.tf:11".to_string())];
    let theirs = workdir(&[("main.tf", &main)]);
    theirs.terraform(&["init", "-no-color"]);
    let theirs_run = theirs.terraform(&["validate", "-no-color"]);
    assert_eq!(terraform_errors(&theirs_run), expected, "terraform:\n{}", theirs_run.all());
    let ours = workdir(&[("main.tf", &main)]);
    let ours_run = ours.cairn(&["validate", "-no-color", "-var", "pw=x"]).failure();
    assert_eq!(cairn_errors(&ours_run), expected, "cairn:\n{}", ours_run.all());
}

#[test]
fn ephemeral_values_in_root_outputs_and_count_fail_where_terraform_says() {
    let main = format!(
        r#"{VARIABLE}
resource "terraform_data" "n" {{
  count = length(var.pw) > 3 ? 1 : 0
}}

output "plain" {{
  value = var.pw
}}

output "declared" {{
  value     = var.pw
  ephemeral = true
}}

output "applying" {{
  value = terraform.applying
}}
"#
    );
    same_errors_as_terraform(
        &[("main.tf", &main)],
        &[
            ("Invalid count argument", "main.tf:7"),
            ("Ephemeral value not allowed", "main.tf:11"),
            ("Ephemeral output not allowed", "main.tf:14"),
            ("Ephemeral value not allowed", "main.tf:20"),
        ],
    );
}

const MODULE: &str = r#"variable "plain_in" {
  type = string
}

variable "secret_in" {
  type      = string
  ephemeral = true
}

output "plain" {
  value = var.secret_in
}

output "secret" {
  value     = var.secret_in
  ephemeral = true
}
"#;

#[test]
fn ephemeral_values_into_a_module_fail_where_terraform_says() {
    let main = format!(
        r#"{VARIABLE}
module "m" {{
  source    = "./m"
  plain_in  = var.pw
  secret_in = var.pw
}}

resource "terraform_data" "a" {{
  for_each = toset([var.pw])
}}
"#
    );
    same_errors_as_terraform(
        &[("main.tf", &main), ("m/main.tf", MODULE)],
        &[
            ("Ephemeral value not allowed", "main.tf:8"),
            ("Ephemeral value not allowed", "m/main.tf:11"),
            ("Invalid for_each argument", "main.tf:13"),
        ],
    );
}

/// Ephemeral values where they are allowed, made persistent only through
/// `ephemeralasnull`: both tools apply it to the same outputs.
const ALLOWED: &str = r#"variable "pw" {
  type      = string
  ephemeral = true
}

variable "plain" {
  type    = string
  default = "d"
}

locals {
  greeting = "hello ${var.pw}"
}

module "m" {
  source    = "./m"
  secret_in = local.greeting
}

resource "terraform_data" "a" {
  input = {
    whole    = ephemeralasnull(local.greeting)
    parts    = ephemeralasnull({ secret = module.m.secret, plain = var.plain })
    tuple    = ephemeralasnull([var.pw, var.plain])
    unmarked = ephemeralasnull(var.plain)
  }
}

output "a" {
  value = terraform_data.a.output
}
"#;

const ALLOWED_MODULE: &str = r#"variable "secret_in" {
  type      = string
  ephemeral = true
}

output "secret" {
  value     = upper(var.secret_in)
  ephemeral = true
}
"#;

#[test]
fn ephemeralasnull_gives_the_values_terraform_gives_and_nothing_ephemeral_is_stored() {
    let files = [("main.tf", ALLOWED), ("m/main.tf", ALLOWED_MODULE)];
    let var = format!("pw={SECRET}");
    let ours = workdir(&files);
    ours.cairn(&["apply", "-auto-approve", "-no-color", "-var", &var]).success();
    let ours_output = ours.cairn_here(&["output", "-json", "a"]).success();
    let theirs = workdir(&files);
    theirs.terraform(&["init", "-no-color"]).success();
    theirs.terraform(&["apply", "-auto-approve", "-no-color", "-input=false", "-var", &var]).success();
    let theirs_output = theirs.terraform(&["output", "-json", "a"]).success();
    let parse = |run: &Run| serde_json::from_str::<serde_json::Value>(&run.stdout).expect("output -json is JSON");
    let expected = serde_json::json!({
        "whole": null,
        "parts": {"secret": null, "plain": "d"},
        "tuple": [null, "d"],
        "unmarked": "d",
    });
    assert_eq!(parse(&theirs_output), expected, "terraform:\n{}", theirs_output.all());
    assert_eq!(parse(&ours_output), expected, "cairn:\n{}", ours_output.all());
    let state = std::fs::read_to_string(ours.path().join("cairn.state.json")).expect("the state is written");
    assert!(!state.contains(SECRET) && !state.contains("HELLO"), "the state holds an ephemeral value:\n{state}");
}

#[test]
fn a_saved_plan_holds_no_ephemeral_value_and_applying_it_needs_the_value_again() {
    let main = format!(
        r#"{VARIABLE}
variable "plain" {{
  type    = string
  default = "d"
}}

resource "terraform_data" "a" {{
  input = ephemeralasnull(var.pw)
}}

resource "terraform_data" "b" {{
  input = var.plain
}}
"#
    );
    let w = workdir(&[("main.tf", &main)]);
    w.cairn_here(&["plan", "-no-color", "-out=p.bin", "-var", &format!("pw={SECRET}")]).success();
    let plan = std::fs::read(w.path().join("p.bin")).expect("the plan is saved");
    assert!(!String::from_utf8_lossy(&plan).contains(SECRET), "the plan file holds the ephemeral value");

    // As Terraform 1.11 says it.
    let without = w.cairn_here(&["apply", "-no-color", "p.bin"]).failure();
    assert!(without.stderr.contains("No value for required variable"), "{}", without.all());
    assert!(
        without.stderr.contains(
            "The ephemeral input variable \"pw\" was set during the plan phase, and so must also be set during the \
             apply phase."
        ),
        "{}",
        without.all()
    );
    // Only an ephemeral variable may be given again.
    let other =
        w.cairn_here(&["apply", "-no-color", "-var", "plain=x", "-var", &format!("pw={SECRET}"), "p.bin"]).failure();
    assert!(other.stderr.contains("cannot set variables when applying a saved plan"), "{}", other.all());
    assert!(other.stderr.contains("\"plain\" is not one"), "{}", other.all());

    w.cairn_here(&["apply", "-no-color", "-var", &format!("pw={SECRET}"), "p.bin"]).success();
    let state = std::fs::read_to_string(w.path().join("cairn.state.json")).expect("the state is written");
    assert!(!state.contains(SECRET), "the state holds the ephemeral value:\n{state}");
    assert!(state.contains("terraform_data"), "{state}");
}

/// A `postgresql` provider block for the shared server, logging in as
/// `username` with `password` (an expression), under `alias` when given.
fn postgresql_provider(alias: Option<&str>, username: &str, password: Option<&str>) -> String {
    let port = Postgres::shared().port;
    let alias = alias.map(|a| format!("  alias    = \"{a}\"\n")).unwrap_or_default();
    let password = password.map(|p| format!("  password = {p}\n")).unwrap_or_default();
    format!(
        "provider \"postgresql\" {{\n{alias}  host     = \"127.0.0.1\"\n  port     = {port}\n  username = \
         \"{username}\"\n{password}  sslmode  = \"disable\"\n  sandbox {{\n    connect = [\"127.0.0.1:{port}\"]\n  \
         }}\n}}\n"
    )
}

#[test]
fn an_ephemeral_password_reaches_a_write_only_attribute_and_a_provider_and_nothing_else() {
    // Roles and databases belong to the whole server the tests share.
    let name = format!("eph_{}", std::process::id());
    let main = format!(
        r#"{VARIABLE}
{}{}
resource "postgresql_role" "r" {{
  name        = "{name}"
  login       = true
  password_wo = var.pw
}}

resource "postgresql_database" "d" {{
  name  = "{name}"
  owner = postgresql_role.r.name
}}

# Logs in as the role with the ephemeral password: the schema exists only
# if the write-only attribute set that password.
resource "postgresql_schema" "s" {{
  provider = postgresql.app
  name     = "made_by_{name}"
  database = postgresql_database.d.name
}}
"#,
        postgresql_provider(None, "postgres", None),
        postgresql_provider(Some("app"), &name, Some("var.pw")),
    );
    let w = workdir(&[("main.tf", &main)]);
    w.cairn(&["init"]).success();
    let var = format!("pw={SECRET}");
    let debug = [("CAIRN_LOG", "debug")];
    let plan = w.cairn_here_env(&["plan", "-json", "-out=p.bin", "-var", &var], &debug).success();
    let apply = w.cairn_here_env(&["apply", "-json", "-var", &var, "p.bin"], &debug).success();
    let schemas = w.cairn_here(&["state", "list"]).success();
    assert!(schemas.stdout.contains("postgresql_schema.s"), "the role logged in:\n{}", apply.all());
    w.assert_stored_nowhere(SECRET, &plan, &apply, "p.bin");
    w.cairn(&["destroy", "-auto-approve", "-var", &var]).success();
}
