//! Moving in from Terraform (issue 36, item 1): a directory the real
//! `terraform` (1.4 or later, for `terraform_data`, which is built into
//! both tools) applied is brought over with `cairn state migrate`, and
//! cairn then plans the same objects as they are: `No changes.`. Before
//! that, a plan refuses to create them a second time.

use std::process::Command;

use cairn_e2e::{Postgres, Run, Workdir};

const CONFIG: &str = r#"
resource "terraform_data" "a" {
  input = "one"
}

resource "terraform_data" "many" {
  count = 2
  input = "n${count.index}"
}

resource "terraform_data" "keyed" {
  for_each         = toset(["x", "y"])
  input            = { key = each.key, a = terraform_data.a.output }
  triggers_replace = [terraform_data.a.id]
}

module "inner" {
  source = "./inner"
}

output "a" {
  value = terraform_data.a.output
}
"#;

const INNER: &str = r#"
resource "terraform_data" "deep" {
  input = ["l", 1, true]
}
"#;

/// Runs the real `terraform` in the directory; it must be on PATH.
fn terraform(w: &Workdir, args: &[&str]) -> Run {
    let run = w.terraform(args);
    assert_eq!(run.code, 0, "terraform {args:?} failed:\n{}", run.all());
    run
}

fn applied_by_terraform() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w.write("inner/main.tf", INNER);
    terraform(&w, &["init", "-input=false", "-no-color"]);
    terraform(&w, &["apply", "-auto-approve", "-input=false", "-no-color"]);
    w
}

#[test]
fn a_directory_terraform_applied_is_migrated_and_planned_without_changes() {
    let w = applied_by_terraform();
    // Without cairn's state, a plan would make every object a second time.
    let refused = w.cairn(&["plan"]).failure();
    assert!(
        refused.stderr.contains("this directory has a Terraform state (terraform.tfstate) with 6 resource instance(s)"),
        "{}",
        refused.all()
    );
    assert!(refused.stderr.contains("cairn state migrate"), "{}", refused.all());

    let migrated = w.cairn_here(&["state", "migrate"]).success();
    assert!(migrated.stdout.contains("Migrated 6 resource instance(s) and 1 output(s) from"), "{}", migrated.all());
    let tf: serde_json::Value = serde_json::from_str(&w.read("terraform.tfstate")).unwrap();
    let state = w.state().unwrap();
    assert_eq!(state["lineage"], tf["lineage"], "the state's history goes on");
    let mut addresses = w.addresses();
    addresses.sort();
    assert_eq!(
        addresses,
        [
            "module.inner.terraform_data.deep",
            "terraform_data.a",
            "terraform_data.keyed[\"x\"]",
            "terraform_data.keyed[\"y\"]",
            "terraform_data.many[0]",
            "terraform_data.many[1]",
        ]
    );

    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("No changes."), "{}", plan.all());
    let output = w.cairn_here(&["output", "-raw", "a"]).success();
    assert_eq!(output.stdout.trim(), "one");

    // Once cairn has a state, migrating again would replace it: refused.
    let again = w.cairn_here(&["state", "migrate"]).failure();
    assert!(again.stderr.contains("already holds a cairn state"), "{}", again.all());
}

#[test]
fn a_resource_cairn_has_no_provider_for_is_refused_by_name_and_nothing_is_written() {
    let w = applied_by_terraform();
    let mut tf: serde_json::Value = serde_json::from_str(&w.read("terraform.tfstate")).unwrap();
    let resources = tf["resources"].as_array_mut().unwrap();
    let mut foreign = resources[0].clone();
    foreign["type"] = "aws_instance".into();
    foreign["name"] = "web".into();
    foreign["provider"] = "provider[\"registry.terraform.io/hashicorp/aws\"]".into();
    resources.push(foreign);
    w.write("terraform.tfstate", &serde_json::to_string_pretty(&tf).unwrap());
    let run = w.cairn_here(&["state", "migrate"]).failure();
    assert!(run.stderr.contains("nothing was written"), "{}", run.all());
    assert!(run.stderr.contains("aws_instance.web: cairn has no provider \"aws\""), "{}", run.all());
    assert!(w.state().is_none(), "no state was written");
}

#[test]
fn a_state_terraform_keeps_in_postgresql_is_migrated_from_its_pg_backend() {
    let server = Postgres::shared();
    let schema = server.schema("tf_pg");
    let conn_str = server.conn_str();
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w.write("inner/main.tf", INNER);
    w.write(
        "backend.tf",
        &format!("terraform {{\n  backend \"pg\" {{\n    conn_str    = \"{conn_str}\"\n    schema_name = \"{schema}\"\n  }}\n}}\n"),
    );
    terraform(&w, &["init", "-input=false", "-no-color"]);
    terraform(&w, &["apply", "-auto-approve", "-input=false", "-no-color"]);
    assert!(!w.exists("terraform.tfstate"), "Terraform kept its state in PostgreSQL");
    // cairn keeps its own state in the local file; Terraform's backend
    // block is Terraform's.
    std::fs::remove_file(w.path().join("backend.tf")).unwrap();

    let migrated = w.cairn_here(&["state", "migrate", "-from-pg", &conn_str, "-pg-schema", &schema]).success();
    assert!(
        migrated.stdout.contains("Migrated 6 resource instance(s) and 1 output(s) from Terraform's state \"default\""),
        "{}",
        migrated.all()
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("No changes."), "{}", plan.all());

    let missing = w
        .cairn_here(&["state", "migrate", "-from-pg", &conn_str, "-pg-schema", &schema, "-workspace", "nope"])
        .failure();
    assert!(missing.stderr.contains("there is no such state"), "{}", missing.all());
}

/// Issue 36, item 4 (in part): `cairn show -json` of a state is what
/// tools written for Terraform read. HashiCorp's own reader,
/// `hashicorp/terraform-json` (`tests/tfjson`, built with the machine's
/// Go), finds every resource in it, module ones included, and in the JSON
/// of a saved plan.
#[test]
fn terraform_json_readers_find_every_resource_in_show_json() {
    let w = applied_by_terraform();
    w.cairn_here(&["state", "migrate"]).success();
    let shown = w.cairn(&["show", "-json"]).success();
    w.write("state.json", &shown.stdout);
    let json: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let inner = &json["values"]["root_module"]["child_modules"][0];
    assert_eq!(inner["address"], "module.inner", "{json:#}");
    assert_eq!(inner["resources"][0]["values"]["input"], serde_json::json!(["l", 1, true]), "{json:#}");

    // Each resource names its provider by Terraform's full address, as
    // Terraform's own `show -json` of the same objects does.
    let theirs: serde_json::Value = serde_json::from_str(&terraform(&w, &["show", "-json"]).stdout).unwrap();
    let (my_a, their_a) =
        (&json["values"]["root_module"]["resources"][0], &theirs["values"]["root_module"]["resources"][0]);
    assert_eq!(my_a["address"], their_a["address"], "{json:#}");
    assert_eq!(my_a["provider_name"], their_a["provider_name"], "{json:#}");
    assert_eq!(my_a["provider_name"], "terraform.io/builtin/terraform");
    let their_inner = &theirs["values"]["root_module"]["child_modules"][0]["resources"][0];
    assert_eq!(inner["resources"][0]["provider_name"], their_inner["provider_name"], "{json:#}");

    let mut found: Vec<String> = tfjson(&["state", "state.json"], &w).lines().map(String::from).collect();
    found.sort();
    let mut expected = w.addresses();
    expected.sort();
    assert_eq!(found, expected);

    w.write("more.tf", "resource \"terraform_data\" \"new\" {\n  input = 1\n}\n");
    w.cairn_here(&["plan", "-out", "p.plan"]).success();
    let plan = w.cairn_here(&["show", "-json", "p.plan"]).success();
    w.write("plan.json", &plan.stdout);
    assert!(tfjson(&["plan", "plan.json"], &w).lines().any(|l| l == "terraform_data.new"));
}

/// Runs `tests/tfjson` (built once per run into `target/`) in `w`.
fn tfjson(args: &[&str], w: &Workdir) -> String {
    static BINARY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let binary = BINARY.get_or_init(|| {
        let root = cairn_e2e::repo_root();
        let out = root.join("target/tfjson/tfjson");
        let status = Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(root.join("tests/tfjson"))
            .status()
            .expect("go must be on PATH to build tests/tfjson");
        assert!(status.success(), "building tests/tfjson failed");
        out
    });
    let output = Command::new(binary).args(args).current_dir(w.path()).output().unwrap();
    assert!(output.status.success(), "tfjson {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Issue 36, item 4: a saved plan's `show -json` has Terraform's
/// `configuration` section, with the same provider configurations (their
/// `full_name` too) and expressions (constants and references) Terraform
/// 1.11.4 gives for the same configuration.
#[test]
fn a_saved_plan_s_configuration_section_is_terraform_s() {
    let config = r#"
variable "n" {
  type    = number
  default = 2
}

resource "terraform_data" "a" {
  input = "x"
}

resource "terraform_data" "b" {
  count = var.n
  input = { a = terraform_data.a.output, k = count.index }
}

module "m" {
  source = "./m"
  v      = terraform_data.a.id
}

output "o" {
  value = terraform_data.a.output
}
"#;
    let inner = "variable \"v\" {}\n\nresource \"terraform_data\" \"inner\" {\n  input = var.v\n}\n";
    let w = Workdir::new();
    w.write("main.tf", config);
    w.write("m/main.tf", inner);
    terraform(&w, &["init", "-input=false", "-no-color"]);
    terraform(&w, &["plan", "-out=tf.plan", "-input=false", "-no-color"]);
    let tf: serde_json::Value = serde_json::from_str(&terraform(&w, &["show", "-json", "tf.plan"]).stdout).unwrap();
    w.cairn_here(&["plan", "-out", "cairn.plan"]).success();
    let ours: serde_json::Value =
        serde_json::from_str(&w.cairn_here(&["show", "-json", "cairn.plan"]).success().stdout).unwrap();
    // `full_name` is how tools key providers (terraform-json's
    // ProviderConfig.FullName).
    assert_eq!(ours["configuration"]["provider_config"], tf["configuration"]["provider_config"]);
    // A change names its provider as Terraform does, by full address, in
    // `resource_changes` and `planned_values` alike.
    for (i, change) in ours["resource_changes"].as_array().unwrap().iter().enumerate() {
        assert_eq!(change["address"], tf["resource_changes"][i]["address"], "{ours:#}");
        assert_eq!(change["provider_name"], tf["resource_changes"][i]["provider_name"], "{}", change["address"]);
    }
    let planned =
        |doc: &serde_json::Value| doc["planned_values"]["root_module"]["resources"][0]["provider_name"].clone();
    assert_eq!(planned(&ours), planned(&tf));
    let (theirs, mine) = (&tf["configuration"]["root_module"], &ours["configuration"]["root_module"]);
    for (i, name) in ["terraform_data.a", "terraform_data.b"].iter().enumerate() {
        assert_eq!(mine["resources"][i]["address"], *name, "{mine:#}");
        assert_eq!(mine["resources"][i]["expressions"], theirs["resources"][i]["expressions"], "{name}");
    }
    assert_eq!(mine["resources"][1]["count_expression"], theirs["resources"][1]["count_expression"]);
    assert_eq!(mine["outputs"], theirs["outputs"]);
    assert_eq!(mine["variables"], theirs["variables"]);
    let (their_call, my_call) = (&theirs["module_calls"]["m"], &mine["module_calls"]["m"]);
    assert_eq!(my_call["source"], their_call["source"]);
    assert_eq!(my_call["expressions"], their_call["expressions"]);
    assert_eq!(my_call["module"]["resources"][0]["expressions"], their_call["module"]["resources"][0]["expressions"]);
}

/// Issue 36, item 4: an apply's `-json` stream ends with Terraform's
/// `outputs` message, a sensitive output's value left out.
#[test]
fn an_apply_json_stream_gives_the_outputs_as_terraform_s_does() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "resource \"terraform_data\" \"a\" {\n  input = \"one\"\n}\n\noutput \"plain\" {\n  value = terraform_data.a.output\n}\n\noutput \"secret\" {\n  value     = \"hunter2\"\n  sensitive = true\n}\n",
    );
    let run = w.cairn(&["apply", "-auto-approve", "-json"]).success();
    let events = run.events();
    // As Terraform's, the plan's outputs message comes first, and the
    // apply's, with the values, last.
    let messages: Vec<&serde_json::Value> = events.iter().filter(|e| e["type"] == "outputs").collect();
    assert_eq!(messages.len(), 2, "{}", run.all());
    assert_eq!(messages[0]["outputs"]["plain"]["action"], "create");
    let outputs = messages[1];
    assert_eq!(outputs["@message"], "Outputs: 2");
    assert_eq!(outputs["outputs"]["plain"], serde_json::json!({"sensitive": false, "type": "string", "value": "one"}));
    assert_eq!(outputs["outputs"]["secret"], serde_json::json!({"sensitive": true}));
    assert!(!run.stdout.contains("hunter2"), "{}", run.all());

    // A plan's `outputs` message says what happens to each, as Terraform's.
    w.write("main.tf", &w.read("main.tf").replace("\"one\"", "\"two\""));
    let plan = w.cairn(&["plan", "-json"]).success();
    let events = plan.events();
    let planned = events.iter().find(|e| e["type"] == "outputs").unwrap_or_else(|| panic!("{}", plan.all()));
    assert_eq!(
        planned["outputs"],
        serde_json::json!({"plain": {"sensitive": false, "action": "update"}, "secret": {"sensitive": true, "action": "noop"}})
    );
}

/// The configuration of the hashicorp/random state below.
const RANDOM_CONFIG: &str = r#"
resource "random_password" "db" {
  length = 16
}

resource "random_password" "old" {
  length = 16
}

resource "random_string" "suffix" {
  length  = 6
  special = false
  upper   = false
}

resource "random_string" "old" {
  length = 6
  number = false
}

resource "random_id" "id" {
  byte_length = 4
}

resource "random_integer" "port" {
  min = 8000
  max = 8099
}

resource "random_pet" "name" {}

resource "random_shuffle" "zones" {
  input        = ["a", "b", "c"]
  result_count = 2
}

resource "random_uuid" "run" {}
"#;

/// One managed resource of hashicorp/random in a Terraform state.
fn random_resource(kind: &str, name: &str, version: u64, attributes: serde_json::Value) -> serde_json::Value {
    let sensitive: Vec<serde_json::Value> = ["bcrypt_hash", "result"]
        .iter()
        .filter(|a| kind == "random_password" && attributes.get(**a).is_some())
        .map(|a| serde_json::json!([{"type": "get_attr", "value": a}]))
        .collect();
    serde_json::json!({
        "mode": "managed", "type": kind, "name": name,
        "provider": "provider[\"registry.terraform.io/hashicorp/random\"]",
        "instances": [{"schema_version": version, "attributes": attributes, "sensitive_attributes": sensitive}]
    })
}

/// A state of hashicorp/random 3.7.2's resources as terraform 1.11.4
/// writes it (its keys, its schema versions: `random_password` 3,
/// `random_string` 2, the others 0, from hashicorp/terraform-provider-
/// random's source), with a password and string of hashicorp/random 3.3's
/// schema version 1 beside them (`number` without `numeric`). terraform
/// cannot install hashicorp/random on a machine without the registry, so
/// the state is written here; the password and its bcrypt hash are made by
/// cairn's `random`, which hashes as hashicorp/random does.
#[test]
fn a_state_of_hashicorp_random_resources_is_migrated_and_planned_without_changes() {
    let made = Workdir::new();
    made.write("main.tf", "resource \"random_password\" \"p\" {\n  length = 16\n}\n");
    made.cairn(&["apply", "-auto-approve"]).success();
    let p = made.attributes("random_password.p");
    let (result, hash) = (p["result"].clone(), p["bcrypt_hash"].clone());
    assert!(hash.as_str().is_some_and(|h| h.starts_with("$2a$10$")), "{p}");

    let characters = |length: u64, result: &serde_json::Value| {
        serde_json::json!({
            "keepers": null, "length": length, "lower": true, "min_lower": 0, "min_numeric": 0, "min_special": 0,
            "min_upper": 0, "number": true, "numeric": true, "override_special": null, "result": result,
            "special": true, "upper": true
        })
    };
    let mut password = characters(16, &result);
    password["bcrypt_hash"] = hash.clone();
    password["id"] = "none".into();
    let mut old_password = password.clone();
    old_password.as_object_mut().unwrap().remove("numeric");
    let mut suffix = characters(6, &"x7k2qp".into());
    suffix["special"] = false.into();
    suffix["upper"] = false.into();
    suffix["id"] = "x7k2qp".into();
    let mut old_string = characters(6, &"QkZmAb".into());
    old_string.as_object_mut().unwrap().remove("numeric");
    old_string["number"] = false.into();
    old_string["id"] = "QkZmAb".into();
    let resources = vec![
        random_resource(
            "random_id",
            "id",
            0,
            serde_json::json!({
                "b64_std": "AAECAw==", "b64_url": "AAECAw", "byte_length": 4, "dec": "66051", "hex": "00010203",
                "id": "AAECAw", "keepers": null, "prefix": null
            }),
        ),
        random_resource(
            "random_integer",
            "port",
            0,
            serde_json::json!({
                "id": "8042", "keepers": null, "max": 8099, "min": 8000, "result": 8042, "seed": null
            }),
        ),
        random_resource("random_password", "db", 3, password),
        random_resource("random_password", "old", 1, old_password),
        random_resource(
            "random_pet",
            "name",
            0,
            serde_json::json!({
                "id": "brave-otter", "keepers": null, "length": 2, "prefix": null, "separator": "-"
            }),
        ),
        random_resource(
            "random_shuffle",
            "zones",
            0,
            serde_json::json!({
                "id": "-", "input": ["a", "b", "c"], "keepers": null, "result": ["c", "a"], "result_count": 2,
                "seed": null
            }),
        ),
        random_resource("random_string", "old", 1, old_string),
        random_resource("random_string", "suffix", 2, suffix),
        random_resource(
            "random_uuid",
            "run",
            0,
            serde_json::json!({
                "id": "0b3c1f5e-6a0e-4d2a-9d7e-3f1e2a4b5c6d", "keepers": null,
                "result": "0b3c1f5e-6a0e-4d2a-9d7e-3f1e2a4b5c6d"
            }),
        ),
    ];
    let tfstate = serde_json::json!({
        "version": 4, "terraform_version": "1.11.4", "serial": 9,
        "lineage": "5b0e8f4a-1c2d-4e3f-8a9b-0c1d2e3f4a5b", "outputs": {}, "resources": resources,
        "check_results": null
    });

    let w = Workdir::new();
    w.write("main.tf", RANDOM_CONFIG);
    w.write("terraform.tfstate", &serde_json::to_string_pretty(&tfstate).unwrap());
    let migrated = w.cairn_here(&["state", "migrate"]).success();
    assert!(migrated.stdout.contains("Migrated 9 resource instance(s)"), "{}", migrated.all());
    let plan = w.cairn(&["plan", "-no-color"]).success();
    assert!(plan.stdout.contains("No changes."), "{}", plan.all());
    assert!(!plan.all().contains(result.as_str().unwrap()), "the password is not shown: {}", plan.all());

    // The apply that finds nothing to change writes the older objects
    // upgraded: at hashicorp/random's versions, the same password and hash.
    w.cairn(&["apply", "-auto-approve"]).success();
    let version = |addr: &str| {
        let state = w.state().unwrap();
        let r = state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == addr).unwrap().clone();
        r["schema_version"].as_u64().unwrap()
    };
    assert_eq!((version("random_password.old"), version("random_string.old")), (3, 2));
    let old = w.attributes("random_password.old");
    assert_eq!((&old["result"], &old["bcrypt_hash"], &old["numeric"]), (&result, &hash, &true.into()));
    let old = w.attributes("random_string.old");
    assert_eq!((&old["result"], &old["number"], &old["numeric"]), (&"QkZmAb".into(), &false.into(), &false.into()));
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0);
}
