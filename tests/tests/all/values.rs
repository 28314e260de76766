//! The value model and the provider ABI, complete (issue 10), through the
//! real binary and the real `cairn-provider-violations` component:
//!
//! - `violations_nested` has a nested attribute type of each nesting
//!   (single, list, set, map), each object with a computed `id` planned as
//!   a refined unknown (not null, prefix `"n-"`) and filled at apply, and a
//!   write-only `password`. The run plans, applies and re-plans cleanly;
//!   the provider saw the password (it records its length), and the
//!   password is in none of: the state file, `plan` and `apply` output,
//!   `-json` output, `show` and `show -json`, and the logs at
//!   `CAIRN_LOG=debug`. Its `token`, which the provider (not the schema)
//!   marks sensitive, is redacted in plan output and `show`, and the state
//!   records the mark.
//! - `violations_breaks_refinement` plans `arn` as an unknown with prefix
//!   `"arn:"` and returns `"x"`: apply is refused, naming the refinement,
//!   and nothing is recorded.

use cairn_e2e::{Run, Workdir, required_providers};

/// The write-only value that must never be kept or shown.
const PASSWORD: &str = "correct-horse-battery-staple";

/// The value the provider marks sensitive on the wire.
const TOKEN: &str = "tok-marked-secret";

const DEBUG: [(&str, &str); 1] = [("CAIRN_LOG", "debug")];

fn nested_config() -> String {
    format!(
        r#"{}
resource "violations_nested" "x" {{
  login    = {{ user = "admin" }}
  ports    = [{{ port = "80" }}, {{ port = "443" }}]
  rules    = [{{ cidr = "10.0.0.0/8" }}]
  env      = {{ a = {{ value = "1" }} }}
  password = "{PASSWORD}"
}}
"#,
        required_providers(&["violations"])
    )
}

fn assert_no_password(what: &str, run: &Run) {
    assert!(!run.all().contains(PASSWORD), "{what} shows the write-only password:\n{}", run.all());
}

#[test]
fn nested_attributes_round_trip_and_a_write_only_password_is_never_kept() {
    let w = Workdir::new();
    w.install_provider("violations", "cairn-provider-violations");
    w.write("main.tf", &nested_config());

    let plan = w.cairn_env(&["plan"], &DEBUG).success();
    assert_no_password("plan", &plan);
    assert!(plan.stdout.contains("violations_nested.x"), "{}", plan.all());
    assert!(!plan.all().contains(TOKEN), "plan shows the value the provider marked sensitive:\n{}", plan.all());
    assert!(plan.stdout.contains("token") && plan.stdout.contains("(sensitive value)"), "{}", plan.all());
    assert_no_password("plan -json", &w.cairn_env(&["plan", "-json"], &DEBUG).success());

    let apply = w.cairn_env(&["apply", "-auto-approve"], &DEBUG).success();
    assert_no_password("apply", &apply);
    assert_no_password("apply -json", &w.cairn_env(&["apply", "-auto-approve", "-json"], &DEBUG).success());

    let state = w.state_text();
    assert!(!state.contains(PASSWORD), "the state file holds the write-only password:\n{state}");
    let attrs = w.attributes("violations_nested.x");
    assert!(attrs["password"].is_null(), "{attrs:#}");
    // The provider was given the password at plan and apply.
    assert_eq!(attrs["password_length"], PASSWORD.len(), "{attrs:#}");
    // Every nesting came back with its computed values, keeping the
    // planned refinement (prefix "n-").
    assert_eq!(attrs["login"]["user"], "admin", "{attrs:#}");
    assert_eq!(attrs["login"]["id"], "n-login", "{attrs:#}");
    assert_eq!(attrs["ports"][0]["id"], "n-port0", "{attrs:#}");
    assert_eq!(attrs["ports"][1]["port"], "443", "{attrs:#}");
    assert_eq!(attrs["rules"][0]["id"], "n-10.0.0.0/8", "{attrs:#}");
    assert_eq!(attrs["env"]["a"]["id"], "n-a", "{attrs:#}");

    let show = w.cairn_env(&["show"], &DEBUG).success();
    assert_no_password("show", &show);
    assert!(!show.stdout.contains(TOKEN) && show.stdout.contains("token = (sensitive value)"), "{}", show.all());
    // (The SDK marks the schema's sensitive attributes on the wire too.)
    let marks = w.state().unwrap()["resources"][0]["sensitive_attributes"].clone();
    let token = serde_json::json!([{"attr": "token"}]);
    assert!(marks.as_array().is_some_and(|m| m.contains(&token)), "the state records the provider's mark: {marks}");
    assert_no_password("show -json", &w.cairn_env(&["show", "-json"], &DEBUG).success());

    // The same configuration again is no change: a write-only value is
    // not a difference from the (null) state.
    let again = w.cairn_env(&["plan"], &DEBUG).success();
    assert_no_password("the second plan", &again);
    assert!(again.stdout.contains("No changes."), "{}", again.all());
}

#[test]
fn a_refinement_broken_at_apply_is_refused_naming_it() {
    let w = Workdir::new();
    w.install_provider("violations", "cairn-provider-violations");
    w.write(
        "main.tf",
        &format!("{}\nresource \"violations_breaks_refinement\" \"x\" {{}}\n", required_providers(&["violations"])),
    );
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    let expected = ".arn: planned as an unknown with prefix \"arn:\", but the new value \"x\" does not start with it \
                    (rule: a value must satisfy the refinements of its planned unknown)";
    assert!(run.stderr.contains(expected), "{}", run.all());
    assert!(run.stderr.contains("violations_breaks_refinement.x"), "{}", run.all());
    // The object the answer describes is not lost: it is kept, tainted, so
    // that the next plan replaces it.
    assert!(run.stderr.contains("recorded in the state as tainted"), "{}", run.all());
    let state = w.state().expect("the state was written");
    let kept = state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == "violations_breaks_refinement.x");
    assert_eq!(kept.map(|r| r["status"].clone()), Some(serde_json::json!("tainted")), "{}", w.state_text());
}

#[test]
fn the_schema_command_shows_nested_attributes_and_write_only_ones() {
    let w = Workdir::new();
    w.install_provider("violations", "cairn-provider-violations");
    w.write("main.tf", &nested_config());
    let text = w.cairn(&["providers", "schema"]).success().stdout;
    let line = |name: &str| text.lines().find(|l| l.trim_start().starts_with(&format!("{name}:"))).unwrap_or("");
    assert!(line("ports").contains("nested list"), "{text}");
    assert!(line("env").contains("nested map"), "{text}");
    assert!(line("password").contains("write-only"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&w.cairn(&["providers", "schema", "-json"]).success().stdout).unwrap();
    let attrs = &json["violations"]["resource_schemas"]["violations_nested"]["block"]["attributes"];
    assert_eq!(attrs["rules"]["nested_type"]["nesting_mode"], "set");
    assert!(attrs["rules"]["nested_type"]["block"]["attributes"]["cidr"].is_object(), "{attrs}");
    assert_eq!(attrs["password"]["write_only"], true);
}
