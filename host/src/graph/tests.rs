//! Dependency graphs built from real configurations.

use super::*;

/// The graph of a configuration, or every error (loading or building) as text.
fn graph_of(hcl: &str) -> Result<DependencyGraph, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
    let config = crate::config::load(dir.path()).map_err(|d| crate::diag::Diagnostics(d).to_string())?;
    DependencyGraph::build(&config).map_err(|d| d.to_string())
}

#[test]
fn references_locals_and_depends_on_order_the_nodes() {
    let g = graph_of(
        r#"
resource "random_id" "x" {
  byte_length = 4
}
locals {
  name = "f-${random_id.x.hex}"
}
resource "local_file" "f" {
  filename = local.name
  content  = "c"
}
resource "null_resource" "n" {
  depends_on = [local_file.f]
}
output "o" {
  value = null_resource.n.id
}
"#,
    )
    .unwrap();
    let order: Vec<String> = g.topo_order().iter().map(ToString::to_string).collect();
    assert_eq!(order, ["random_id.x", "local.name", "local_file.f", "null_resource.n", "output.o"]);
    let f = Node::Resource(ResourceAddr::managed("local_file", "f"));
    assert_eq!(g.resource_dependencies(&f), vec![ResourceAddr::managed("random_id", "x")]);
    assert!(g.to_dot().contains("\"local_file.f\" -> \"local.name\""));
}

#[test]
fn a_node_reads_only_the_locals_it_names() {
    let g = graph_of(
        r#"
locals {
  a     = "a"
  b     = "${local.a}-b"
  other = "unused"
}
resource "null_resource" "n" {
  triggers = { b = local.b }
  count    = length(local.a)
}
"#,
    )
    .unwrap();
    let n = Node::Resource(ResourceAddr::managed("null_resource", "n"));
    // `local.b` reads `local.a` itself: its value is all `n` needs of it.
    assert_eq!(g.local_dependencies(&n), ["a", "b"]);
    assert_eq!(g.local_dependencies(&Node::Local("b".into())), ["a"]);
    assert!(g.local_dependencies(&Node::Local("other".into())).is_empty());
}

#[test]
fn a_cycle_is_an_error_that_prints_the_cycle_with_locations() {
    let err = graph_of(
        r#"
resource "null_resource" "a" {
  triggers = { b = null_resource.b.id }
}

resource "null_resource" "b" {
  triggers = { c = local.c }
}

locals {
  c = null_resource.a.id
}
"#,
    )
    .unwrap_err();
    let text = err;
    assert!(text.contains("Cycle: null_resource.a -> null_resource.b -> local.c -> null_resource.a"), "{text}");
    assert!(text.contains("main.tf:2: Cycle"), "{text}");
    assert!(text.contains("null_resource.b (main.tf:6)"), "{text}");
}

#[test]
fn a_resource_depending_on_itself_is_a_cycle() {
    let err = graph_of("resource \"null_resource\" \"a\" {\n  depends_on = [null_resource.a]\n}\n").unwrap_err();
    assert!(err.contains("null_resource.a") && err.contains("main.tf:"), "{err}");
}

#[test]
fn a_configuration_large_enough_to_gather_references_in_runs_has_every_edge() {
    // More resources than two threads gather alone (see `RESOURCES_A_RUN`),
    // each referring to the one before and, through a local, to the first.
    let n = 3 * RESOURCES_A_RUN + 5;
    let mut hcl = String::from("locals {\n  first = null_resource.r0.id\n}\nresource \"null_resource\" \"r0\" {}\n");
    for i in 1..n {
        hcl.push_str(&format!(
            "resource \"null_resource\" \"r{i}\" {{\n  triggers = {{ a = null_resource.r{}.id, b = local.first }}\n}}\n",
            i - 1
        ));
    }
    let g = graph_of(&hcl).unwrap();
    let r = |i: usize| ResourceAddr::managed("null_resource", &format!("r{i}"));
    for i in [1, RESOURCES_A_RUN - 1, RESOURCES_A_RUN, 2 * RESOURCES_A_RUN + 1, n - 1] {
        let mut expected = vec![r(0), r(i - 1)];
        expected.sort();
        expected.dedup();
        assert_eq!(g.resource_dependencies(&Node::Resource(r(i))), expected, "r{i}");
    }
    assert_eq!(g.topo_order().len(), n + 1);
}

/// A provider whose block refers to planned values, through a local too,
/// and one that refers to variables alone.
const PROVIDERS: &str = r#"
variable "token" {
  default = "t"
}
resource "terraform_data" "cluster" {
  input = "db.internal"
}
ephemeral "random_password" "pw" {
  length = 16
}
locals {
  host = terraform_data.cluster.output
}
provider "postgresql" {
  host     = local.host
  password = ephemeral.random_password.pw.result
}
provider "postgresql" {
  alias    = "admin"
  password = var.token
}
resource "postgresql_role" "r" {
  name = "r"
}
resource "postgresql_role" "admin" {
  provider = postgresql.admin
  name     = "admin"
}
"#;

#[test]
fn a_provider_that_refers_to_planned_values_is_a_node_after_them_and_before_its_resources() {
    let g = graph_of(PROVIDERS).unwrap();
    let provider = Node::Provider("postgresql".into());
    assert!(g.has_provider("postgresql"));
    // Variables alone: configured before the walk, no node.
    assert!(!g.has_provider("postgresql.admin"));
    assert_eq!(g.providers().collect::<Vec<_>>(), ["postgresql"]);
    let cluster = ResourceAddr::managed("terraform_data", "cluster");
    let pw =
        ResourceAddr::new(crate::addr::ModuleInstance::root(), crate::addr::Mode::Ephemeral, "random_password", "pw");
    assert_eq!(g.resource_dependencies(&provider), [cluster.clone(), pw.clone()]);
    assert_eq!(g.local_dependencies(&provider), ["host"]);
    // Its resources depend on it, and so on what it refers to: that is
    // what -target pulls in and what the state records for destroy order.
    let role = Node::Resource(ResourceAddr::managed("postgresql_role", "r"));
    assert!(g.direct_dependencies(&role).any(|n| *n == provider));
    assert_eq!(g.resource_dependencies(&role), [cluster, pw]);
    let admin = Node::Resource(ResourceAddr::managed("postgresql_role", "admin"));
    assert!(g.resource_dependencies(&admin).is_empty());
    let order: Vec<String> = g.topo_order().iter().map(ToString::to_string).collect();
    let at = |name: &str| order.iter().position(|n| n == name).unwrap_or_else(|| panic!("{name} in {order:?}"));
    assert!(at("terraform_data.cluster") < at("local.host") && at("local.host") < at("provider[\"postgresql\"]"));
    assert!(at("provider[\"postgresql\"]") < at("postgresql_role.r"), "{order:?}");
    assert!(g.to_dot().contains("\"provider[\\\"postgresql\\\"]\" -> \"local.host\""), "{}", g.to_dot());
    let in_order: Vec<String> = g.dependencies_in_order(&provider, |_| true).iter().map(ToString::to_string).collect();
    assert_eq!(in_order, ["terraform_data.cluster", "ephemeral.random_password.pw", "local.host"]);
}

#[test]
fn a_provider_that_refers_to_its_own_resource_is_a_cycle() {
    let err = graph_of(
        r#"
provider "postgresql" {
  host = postgresql_role.r.name
}

resource "postgresql_role" "r" {
  name = "r"
}
"#,
    )
    .unwrap_err();
    assert!(err.contains("Cycle: postgresql_role.r -> provider[\"postgresql\"] -> postgresql_role.r"), "{err}");
    assert!(err.contains("provider[\"postgresql\"] (main.tf:2)"), "{err}");
}
