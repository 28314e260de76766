//! Provider configurations from planned values: a `provider` block that
//! refers to a resource, an ephemeral resource or a local is configured as
//! a node of the graph, as Terraform configures it. The `recorder` test
//! provider keeps its objects in the directory its block names (`dir`),
//! and refresh finds an object only there: so an object found again by
//! the next plan proves that plan configured the provider with the
//! planned value, and an object made under the applied directory proves
//! the apply configured it with the applied one.

use cairn_e2e::Workdir;

/// The recorder from `./recorder.wasm`, then `body`; every provider block
/// of `body` needs its grant of `./log`.
fn recorder(body: &str) -> Workdir {
    let w = Workdir::new();
    w.install_provider("recorder", "cairn-provider-recorder");
    std::fs::create_dir_all(w.path().join("log/leases")).unwrap();
    w.write("main.tf", &format!("{}{body}", cairn_e2e::required_providers(&["recorder"])));
    w
}

/// The recorder's `dir` is made of `terraform_data.where.input` (known
/// while planning) and the token of a lease that another configuration of
/// the recorder opens (an ephemeral value, known while planning too).
const FROM_A_RESOURCE_AND_A_LEASE: &str = r#"
provider "recorder" {
  alias = "leases"
  dir   = "log/leases"
  sandbox {
    read_write = ["./log"]
  }
}

ephemeral "recorder_lease" "where" {
  provider = recorder.leases
  name     = "x"
}

resource "terraform_data" "where" {
  input = "log/known"
}

locals {
  suffix = trimprefix(ephemeral.recorder_lease.where.token, "token-")
}

provider "recorder" {
  dir = "${terraform_data.where.input}-${local.suffix}"
  sandbox {
    read_write = ["./log"]
  }
}

resource "recorder_thing" "a" {
  name = "a"
}
"#;

/// The names of the objects the recorder keeps in `dir`.
fn objects(w: &Workdir, dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(w.path().join(dir).join("objects")) else { return Vec::new() };
    let mut names: Vec<String> = entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_provider_configured_from_a_resource_and_an_ephemeral_resource_gets_them_in_plan_apply_and_destroy() {
    let w = recorder(FROM_A_RESOURCE_AND_A_LEASE);
    let graph = w.cairn(&["graph"]).success();
    assert!(graph.stdout.contains(r#""provider[\"recorder\"]" -> "local.suffix";"#), "{}", graph.all());
    assert!(graph.stdout.contains(r#""recorder_thing.a" -> "provider[\"recorder\"]";"#), "{}", graph.all());

    let first = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(first.stdout.contains("Apply complete! Resources: 2 added, 0 changed, 0 destroyed."), "{}", first.all());
    // Made where the apply's configuration said.
    let made = objects(&w, "log/known-x");
    assert_eq!(made.len(), 1, "{made:?}\n{}", first.all());
    assert!(made[0].starts_with("a-"), "{made:?}");
    assert!(objects(&w, "log").is_empty(), "the provider was configured without its block's values");
    // The lease was opened for the plan and again for the apply's
    // configuration, and closed each time.
    let leases = w.read("log/leases/ops.log");
    assert_eq!(leases.lines().filter(|l| l.starts_with("open x")).count(), 2, "{leases}");
    assert_eq!(leases.lines().filter(|l| l.starts_with("close x")).count(), 2, "{leases}");
    for (what, text) in [("the state", w.state_text()), ("the apply's output", first.all())] {
        assert!(!text.contains("token-x"), "{what} holds the lease's token:\n{text}");
    }
    // The role's dependencies, as Terraform records them: what its
    // provider's block refers to (but the ephemeral resource).
    let state = w.state().unwrap();
    let thing = state["resources"].as_array().unwrap().iter().find(|r| r["addr"] == "recorder_thing.a").unwrap();
    assert_eq!(thing["dependencies"], serde_json::json!(["terraform_data.where"]), "{thing:#}");

    // The next run's plan refreshes the object where the planned values
    // say: it finds it, so nothing changes.
    let again = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(again.stdout.contains("No changes."), "the plan's provider did not find the object:\n{}", again.all());

    // A destroy configures the provider from the state (the lease opened
    // once more) and destroys the object before what the block refers to.
    let destroy = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(destroy.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", destroy.all());
    assert!(objects(&w, "log/known-x").is_empty(), "the object was not deleted where it was made");
    assert!(w.read("log/known-x/ops.log").lines().any(|l| l.starts_with("delete a")), "{}", destroy.all());
    let out = &destroy.stdout;
    let (thing_done, data_starts) =
        (out.find("recorder_thing.a: Destruction complete"), out.find("terraform_data.where: Destroying"));
    assert!(thing_done.is_some() && thing_done < data_starts, "destroyed out of order:\n{out}");
}

/// The recorder's `dir` is made of the id of `terraform_data.where`, known
/// only once it is created: unknown while planning from empty.
const FROM_AN_ID: &str = r#"
resource "terraform_data" "where" {
  input = "x"
}

provider "recorder" {
  dir = "log/${terraform_data.where.id}"
  sandbox {
    read_write = ["./log"]
  }
}

resource "recorder_thing" "a" {
  name = "a"
}
"#;

#[test]
fn a_value_unknown_while_planning_is_applied_from_a_saved_plan_and_planned_after() {
    let w = recorder(FROM_AN_ID);
    let plan = w.cairn_here(&["plan", "-out=tfplan"]).success();
    assert!(plan.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let steps = w.cairn(&["graph", "-type=apply"]).success();
    assert!(steps.stdout.contains(r#""provider[\"recorder\"] (configure)" -> "recorder_thing.a";"#), "{}", steps.all());
    assert!(
        steps.stdout.contains(r#""terraform_data.where" -> "provider[\"recorder\"] (configure)";"#),
        "{}",
        steps.all()
    );

    let apply = w.cairn_here(&["apply", "tfplan"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 2 added"), "{}", apply.all());
    let id = w.attributes("terraform_data.where")["id"].as_str().unwrap().to_string();
    assert_eq!(objects(&w, &format!("log/{id}")).len(), 1, "not made under the applied id {id}:\n{}", apply.all());
    assert!(objects(&w, "log").is_empty());

    // Known now, from the state: the plan's provider finds the object.
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());

    let destroy = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(destroy.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", destroy.all());
    assert!(objects(&w, &format!("log/{id}")).is_empty());
}

#[test]
fn a_target_plans_what_its_provider_refers_to() {
    let w = recorder(&format!("{FROM_AN_ID}\nresource \"recorder_thing\" \"b\" {{\n  name = \"b\"\n}}\n"));
    let run = w.cairn(&["apply", "-auto-approve", "-target=recorder_thing.b"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 2 added"), "{}", run.all());
    let mut addresses = w.addresses();
    addresses.sort();
    assert_eq!(addresses, ["recorder_thing.b", "terraform_data.where"], "{}", run.all());
    let id = w.attributes("terraform_data.where")["id"].as_str().unwrap().to_string();
    let made = objects(&w, &format!("log/{id}"));
    assert!(made.len() == 1 && made[0].starts_with("b-"), "{made:?}");
}

/// tfhttp (a Terraform framework provider, run natively by Terraform and
/// through the bridge by cairn) whose `endpoint` is `endpoint`, an
/// expression over `terraform_data.store`, whose input is the store's URL.
fn tfhttp_from(source: &str, port: u16, grant: &str, endpoint: &str) -> String {
    format!(
        r#"terraform {{
  required_providers {{
    tfhttp = {{ source = "{source}" }}
  }}
}}

resource "terraform_data" "store" {{
  input = "http://127.0.0.1:{port}"
}}

provider "tfhttp" {{
  endpoint = {endpoint}
{grant}}}

resource "tfhttp_item" "a" {{
  name  = "alpha"
  value = "hello"
}}
"#
    )
}

/// `terraform_data.store.input`: known while planning.
fn tfhttp_known(source: &str, port: u16, grant: &str) -> String {
    tfhttp_from(source, port, grant, "terraform_data.store.input")
}

/// `terraform_data.store.output`: known only once the store's URL is
/// applied (Terraform plans a new terraform_data's output unknown).
fn tfhttp_unknown(source: &str, port: u16, grant: &str) -> String {
    tfhttp_from(source, port, grant, "terraform_data.store.output")
}

#[test]
fn terraform_and_cairn_configure_a_provider_from_a_resource_alike() {
    for (case, config) in [
        ("known while planning", tfhttp_known as fn(&str, u16, &str) -> String),
        ("unknown while planning", tfhttp_unknown),
    ] {
        let both = crate::tfbridge_side_by_side::SideBySide::tfhttp_with(config);
        let actions = both.same_plan(&format!("{case}: plan"), &[]);
        assert_eq!(actions["tfhttp_item.a"], "create", "{case}: {actions:?}");
        // The same item (terraform_data's id is random, and each store
        // has its port).
        let (tf, cairn) = both.apply(&format!("{case}: apply"), &[]);
        assert_eq!(cairn["tfhttp_item.a"], tf["tfhttp_item.a"], "{case}: cairn and Terraform keep different items");
        assert_eq!(tf["tfhttp_item.a"]["value"], "hello", "{case}: {tf:#?}");
        for (tool, values) in [("terraform", &tf), ("cairn", &cairn)] {
            let store = &values["terraform_data.store"];
            assert_eq!(store["output"], store["input"], "{case}: {tool}: {store:#}");
        }
        // Each tool's provider reached its store with the applied URL.
        let (tf_store, cairn_store) = both.stores();
        assert_eq!(tf_store.put_bodies().len(), 1, "{case}");
        assert_eq!(cairn_store.put_bodies().len(), 1, "{case}: cairn's provider never reached its store");
        // And the next plan's refresh reads the item through the planned URL.
        let actions = both.same_plan(&format!("{case}: no-op plan"), &[]);
        assert!(actions.is_empty(), "{case}: {actions:?}");
        both.both(&format!("{case}: destroy"), &["destroy", "-auto-approve", "-input=false"]);
        assert!(both.cairn.addresses().is_empty(), "{case}");
    }
}

/// A provider block that refers to a resource of its own: a cycle in both.
fn tfhttp_cycle(source: &str, port: u16, grant: &str) -> String {
    tfhttp_from(source, port, grant, "tfhttp_item.a.name")
}

#[test]
fn a_provider_block_that_refers_to_its_own_resource_is_a_cycle_in_both_tools() {
    let both = crate::tfbridge_side_by_side::SideBySide::tfhttp_with(tfhttp_cycle);
    let terraform = both.terraform_unchecked(&["validate", "-no-color"]);
    assert_eq!(terraform.code, 1, "terraform should refuse it:\n{}", terraform.all());
    assert!(terraform.all().contains("Error: Cycle: "), "terraform says:\n{}", terraform.all());
    let cairn = both.cairn.cairn(&["validate"]);
    assert_eq!(cairn.code, 1, "cairn should refuse it:\n{}", cairn.all());
    let cycle = "Cycle: tfhttp_item.a -> provider[\"tfhttp\"] -> tfhttp_item.a";
    assert!(cairn.all().contains(cycle), "{}", cairn.all());
    assert!(cairn.all().contains("provider[\"tfhttp\"] (main.tf:"), "{}", cairn.all());
}

/// The bundled `postgresql` provider on the test run's real server, whose
/// port comes from `terraform_data.server`: unknown while planning from
/// empty (Terraform plans a new terraform_data's output unknown), known
/// from the state after.
fn postgres_from_a_resource(port: u16, role: &str) -> String {
    format!(
        r#"resource "terraform_data" "server" {{
  input = {port}
}}

provider "postgresql" {{
  host     = "127.0.0.1"
  port     = terraform_data.server.output
  username = "postgres"
  sslmode  = "disable"
  sandbox {{
    connect = ["127.0.0.1:{port}"]
  }}
}}

resource "postgresql_role" "r" {{
  name = "{role}"
}}
"#
    )
}

#[test]
fn the_postgresql_provider_takes_an_unknown_port_while_planning_and_the_applied_one_after() {
    let server = cairn_e2e::Postgres::shared();
    let role = server.schema("late_provider_role");
    let w = Workdir::new();
    w.write("main.tf", &postgres_from_a_resource(server.port, &role));
    let count = format!("SELECT count(*) FROM pg_roles WHERE rolname = '{role}'");

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    let apply = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 2 added"), "{}", apply.all());
    assert_eq!(server.psql("postgres", &count), "1", "the role was not made on the server");

    // The next plan refreshes the role through the port in the state.
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());

    // `cairn import` configures the provider from the state too.
    w.cairn_here(&["state", "rm", "postgresql_role.r"]).success();
    w.cairn(&["import", "postgresql_role.r", &role]).success();
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());

    let destroy = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(destroy.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", destroy.all());
    assert_eq!(server.psql("postgres", &count), "0", "the role was not dropped");
}

/// The recorder's `dir` through a local from an ephemeral variable: a
/// provider configured late, whose configuration holds an ephemeral value.
const FROM_AN_EPHEMERAL_VARIABLE: &str = r#"
variable "secret" {
  type      = string
  ephemeral = true
}

locals {
  suffix = trimprefix(var.secret, "s3cret-")
}

provider "recorder" {
  dir = "log/${local.suffix}"
  sandbox {
    read_write = ["./log"]
  }
}

resource "recorder_thing" "a" {
  name = "a"
}
"#;

#[test]
fn an_ephemeral_value_in_a_provider_configuration_is_stored_nowhere() {
    let w = recorder(FROM_AN_EPHEMERAL_VARIABLE);
    let var = ["-var", "secret=s3cret-x"];
    let plan = w.cairn_here(&[&["plan", "-out=tfplan"][..], &var].concat()).success();
    let apply = w.cairn_here(&[&["apply"][..], &var, &["tfplan"]].concat()).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 1 added"), "{}", apply.all());
    assert_eq!(objects(&w, "log/x").len(), 1, "{}", apply.all());
    w.assert_stored_nowhere("s3cret-x", &plan, &apply, "tfplan");
}

#[test]
fn a_provider_that_refuses_its_planned_configuration_fails_the_plan_at_its_block() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "resource \"terraform_data\" \"server\" {\n  input = 70000\n}\n\nprovider \"postgresql\" {\n  port = \
         terraform_data.server.input\n}\n\nresource \"postgresql_role\" \"r\" {\n  name = \"r\"\n}\n",
    );
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("main.tf:5"), "not at the provider block:\n{}", plan.all());
    assert!(plan.stderr.contains("Provider \"postgresql\" could not be configured"), "{}", plan.all());
    assert!(plan.stderr.contains("`port` must be a TCP port"), "{}", plan.all());
    // Nothing of it was planned: the role waits for its provider.
    assert!(!plan.stdout.contains("postgresql_role.r will be created"), "{}", plan.all());
}

#[test]
fn a_provider_configured_from_a_module_output() {
    let w = recorder(
        r#"
module "place" {
  source = "./place"
}

provider "recorder" {
  dir = module.place.dir
  sandbox {
    read_write = ["./log"]
  }
}

resource "recorder_thing" "a" {
  name = "a"
}
"#,
    );
    w.write(
        "place/main.tf",
        "resource \"terraform_data\" \"d\" {\n  input = \"log/from-module\"\n}\n\noutput \"dir\" {\n  value = \
         terraform_data.d.input\n}\n",
    );
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 2 added"), "{}", run.all());
    assert_eq!(objects(&w, "log/from-module").len(), 1, "{}", run.all());
    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());
}

/// A lease of a provider configured late (its dir from a resource), whose
/// name is known only once `terraform_data.where` is made: opened only
/// during apply, for the write-only secret of an object of another
/// provider configuration.
const A_LEASE_OF_A_LATE_PROVIDER: &str = r#"
resource "terraform_data" "where" {
  input = "log/late"
}

provider "recorder" {
  alias = "late"
  dir   = terraform_data.where.input
  sandbox {
    read_write = ["./log"]
  }
}

ephemeral "recorder_lease" "l" {
  provider = recorder.late
  name     = "l-${terraform_data.where.id}"
}

provider "recorder" {
  sandbox {
    read_write = ["./log"]
  }
}

resource "recorder_thing" "a" {
  name      = "a"
  secret_wo = ephemeral.recorder_lease.l.token
}
"#;

#[test]
fn a_saved_plan_configures_the_late_provider_of_a_lease_it_opens() {
    let w = recorder(A_LEASE_OF_A_LATE_PROVIDER);
    std::fs::create_dir_all(w.path().join("log/late")).unwrap();
    w.cairn_here(&["plan", "-out=tfplan"]).success();
    let apply = w.cairn_here(&["apply", "tfplan"]).success();
    assert!(apply.stdout.contains("Apply complete! Resources: 2 added"), "{}", apply.all());
    let id = w.attributes("terraform_data.where")["id"].as_str().unwrap().to_string();
    let leases = w.read("log/late/ops.log");
    assert!(leases.contains(&format!("open l-{id} - -")), "{leases}");
    assert!(leases.contains(&format!("close l-{id} - -")), "{leases}");
    assert_eq!(objects(&w, "log").len(), 1, "{}", apply.all());
}
