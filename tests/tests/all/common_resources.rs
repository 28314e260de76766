//! The resources people use most, beyond `random_id` and `local_file`:
//! `random_integer`, `random_shuffle`, `random_uuid` and
//! `local_sensitive_file`, applied through the real binary with the bundled
//! providers (no `required_providers` needed), then kept on the next plan.

use cairn_e2e::Workdir;

#[test]
fn random_integer_shuffle_and_uuid_are_made_once_and_kept() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
resource "random_integer" "port" {
  min = 8000
  max = 8099
}

resource "random_shuffle" "zones" {
  input        = ["a", "b", "c", "d"]
  result_count = 2
}

resource "random_uuid" "run" {}

output "summary" {
  value = "${random_integer.port.result}:${join(",", random_shuffle.zones.result)}:${random_uuid.run.result}"
}
"#,
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("random_uuid.run will be created"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();

    let port = w.attributes("random_integer.port");
    let n = port["result"].as_i64().unwrap();
    assert!((8000..=8099).contains(&n), "{port}");
    assert_eq!(port["id"], n.to_string());
    let zones = w.attributes("random_shuffle.zones");
    let picked: Vec<&str> = zones["result"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(picked.len(), 2, "{zones}");
    assert!(picked.iter().all(|z| ["a", "b", "c", "d"].contains(z)) && picked[0] != picked[1], "{zones}");
    let uuid = w.attributes("random_uuid.run")["result"].as_str().unwrap().to_string();
    assert_eq!((uuid.len(), &uuid[14..15]), (36, "4"), "a version 4 UUID: {uuid}");

    let summary = &w.state().unwrap()["outputs"]["summary"]["value"];
    assert_eq!(summary.as_str().unwrap(), format!("{n}:{}:{uuid}", picked.join(",")));
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "generated once, then kept:\n{}", again.all());
}

#[test]
fn a_local_sensitive_file_is_written_but_its_content_never_shown() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

resource "local_sensitive_file" "key" {
  filename = "out/key.txt"
  content  = "s3cr3t-value"
}
"#,
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(!plan.all().contains("s3cr3t-value"), "the plan shows the content:\n{}", plan.all());
    assert!(plan.stdout.contains("(sensitive value)"), "{}", plan.all());
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(!apply.all().contains("s3cr3t-value"), "{}", apply.all());
    assert_eq!(w.read("out/key.txt"), "s3cr3t-value");
    let attrs = w.attributes("local_sensitive_file.key");
    assert_eq!(
        (attrs["file_permission"].as_str(), attrs["directory_permission"].as_str()),
        (Some("0700"), Some("0700"))
    );
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());
}

/// `random_password`'s `bcrypt_hash` (hashicorp/random's): set when the
/// password is made, and given to a state written before it existed
/// (schema version 0, as earlier cairn wrote it) without a new password,
/// the same in every run.
#[test]
fn a_password_stored_without_bcrypt_hash_gets_one_and_keeps_its_result() {
    let w = Workdir::new();
    let config = "resource \"random_password\" \"p\" {\n  length = 20\n}\n\n\
                  output \"hash\" {\n  value     = random_password.p.bcrypt_hash\n  sensitive = true\n}\n";
    w.write("main.tf", config);
    w.cairn(&["apply", "-auto-approve"]).success();
    let made = w.attributes("random_password.p");
    assert!(made["bcrypt_hash"].as_str().is_some_and(|h| h.starts_with("$2a$10$")), "{made:#}");

    // The state as a cairn before bcrypt_hash wrote it.
    let mut state = w.state().unwrap();
    let stored = &mut state["resources"][0];
    stored["schema_version"] = 0.into();
    stored["attributes"].as_object_mut().unwrap().remove("bcrypt_hash");
    stored["sensitive_attributes"] = serde_json::json!([[{"attr": "result"}]]);
    state["outputs"] = serde_json::json!({});
    w.write("cairn.state.json", &state.to_string());

    let plan = w.cairn(&["plan", "-no-color"]).success().stdout;
    assert!(plan.contains("+ hash = (sensitive value)"), "only the output is new: {plan}");
    assert!(!plan.contains("random_password.p will be"), "the password is kept: {plan}");
    w.cairn(&["apply", "-auto-approve"]).success();
    let outputs = w.state().unwrap()["outputs"]["hash"]["value"].clone();
    let hash = outputs.as_str().expect("the output has the hash").to_string();
    assert!(hash.starts_with("$2a$10$") && hash != made["bcrypt_hash"], "{hash}");
    assert_eq!(w.attributes("random_password.p")["result"], made["result"], "the same password");
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0, "the same hash in the next run");
}

/// An object a plan upgrades to its provider's schema version and keeps as
/// it is (`random_password` stored before `bcrypt_hash`) is written at that
/// version by the apply that finds no changes, as Terraform writes its
/// refreshed state — by `apply` and by the apply of a saved plan — so that
/// the next run upgrades nothing and writes nothing.
#[test]
fn an_apply_without_changes_writes_the_upgraded_object() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"random_password\" \"p\" {\n  length = 20\n}\n");
    w.cairn(&["apply", "-auto-approve"]).success();
    let made = w.attributes("random_password.p");
    let current = w.state().unwrap()["resources"][0]["schema_version"].clone();
    assert_ne!(current, 0, "{current}");
    // The state as a cairn before bcrypt_hash wrote it.
    let downgrade = || {
        let mut state = w.state().unwrap();
        let stored = &mut state["resources"][0];
        stored["schema_version"] = 0.into();
        stored["attributes"].as_object_mut().unwrap().remove("bcrypt_hash");
        w.write("cairn.state.json", &state.to_string());
    };

    downgrade();
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(apply.stdout.contains("No changes."), "{}", apply.all());
    let state = w.state().unwrap();
    assert_eq!(state["resources"][0]["schema_version"], current, "written at the provider's version: {state:#}");
    let upgraded = w.attributes("random_password.p");
    assert_eq!(upgraded["result"], made["result"], "the same password");
    let hash = upgraded["bcrypt_hash"].as_str().expect("the upgrade's hash is stored").to_string();
    assert!(hash.starts_with("$2a$10$"), "{hash}");
    // The next run finds the object current: nothing to write.
    let serial = state["serial"].clone();
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.state().unwrap()["serial"], serial, "nothing was written again");
    assert_eq!(w.attributes("random_password.p")["bcrypt_hash"], hash.as_str(), "the same hash");

    // A saved plan without changes, applied, writes it too.
    downgrade();
    w.cairn_here(&["plan", "-out", "p.bin"]).success();
    let applied = w.cairn_here(&["apply", "p.bin"]).success();
    assert!(!applied.all().contains("Error"), "{}", applied.all());
    assert_eq!(w.state().unwrap()["resources"][0]["schema_version"], current);
    assert!(w.attributes("random_password.p")["bcrypt_hash"].as_str().is_some_and(|h| h.starts_with("$2a$10$")));
}
