//! The orderings of Terraform's notes on destroying (`docs/design.md`, "Sources"), one test per diagram,
//! on plans built by hand over a real configuration's dependency graph.

use petgraph::algo::has_path_connecting;

use super::*;
use crate::value::Value;

/// `B` refers to `A` (and `C` to `B`, for the longer cases).
const CONFIG: &str = r#"
resource "null_resource" "a" {
}
resource "null_resource" "b" {
  triggers = { a = null_resource.a.id }
}
"#;

/// The key of a deposed object left by an earlier run.
const OLD: &str = "0badc0de";

fn deps_of(hcl: &str) -> DependencyGraph {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
    let config = crate::config::load(dir.path()).unwrap_or_else(|d| panic!("{}", crate::diag::Diagnostics(d)));
    DependencyGraph::build(&config).unwrap()
}

fn addr(name: &str) -> InstanceAddr {
    ResourceAddr::managed("null_resource", name).instance()
}

/// A change of `null_resource.NAME`; `deps` are its configured and stored
/// dependencies (for a delete, only stored).
fn change(name: &str, action: Action, deps: &[&str], cbd: bool) -> ResourceChange {
    let deps: Vec<ResourceAddr> = deps.iter().map(|d| ResourceAddr::managed("null_resource", d)).collect();
    ResourceChange {
        sensitive: Vec::new(),
        addr: addr(name),
        provider: "null".into(),
        action,
        prior: if action == Action::Create { Value::Null } else { Value::string("old") },
        planned: if action == Action::Delete { Value::Null } else { Value::string("new") },
        config: Value::Null,
        prior_private: Vec::new(),
        planned_private: Vec::new(),
        replace_reason: None,
        dependencies: deps.clone(),
        prior_dependencies: if action == Action::Create { Vec::new() } else { deps },
        create_before_destroy: cbd,
        deposed: None,
        schema_version: 0,
        location: None,
        importing: None,
        moved_from: None,
    }
}

/// The apply graph of these changes over CONFIG (or `hcl`), with
/// create_before_destroy inherited as the planner does.
fn graph(hcl: &str, mut changes: Vec<ResourceChange>) -> (ApplyGraph, Plan) {
    crate::plan::inherit_create_before_destroy(&mut changes);
    let plan = Plan { changes, ..Plan::default() };
    let g = build(&plan, &deps_of(hcl)).unwrap_or_else(|d| panic!("{d}"));
    (g, plan)
}

fn node(g: &ApplyGraph, label: &str) -> NodeIndex {
    let (name, what) = label.split_once(' ').unwrap();
    g.node_indices()
        .find(|n| match (&g[*n], what) {
            // The destroy of the current object, or of the one a replace deposes.
            (Step::Destroy(a, k), "destroy") => a == &addr(name) && k.as_deref() != Some(OLD),
            (Step::Apply(a, _), "apply") => a == &addr(name),
            _ => false,
        })
        .unwrap_or_else(|| panic!("no node {label} in\n{}", to_dot(g, &Plan::default())))
}

/// Asserts that each step runs strictly before the next.
fn order(g: &ApplyGraph, plan: &Plan, steps: &[&str]) {
    for w in steps.windows(2) {
        let (a, b) = (node(g, w[0]), node(g, w[1]));
        assert!(has_path_connecting(g, a, b, None), "{} must run before {}:\n{}", w[0], w[1], to_dot(g, plan));
    }
}

/// Asserts that two steps may run at the same time.
fn parallel(g: &ApplyGraph, plan: &Plan, a: &str, b: &str) {
    let (x, y) = (node(g, a), node(g, b));
    assert!(
        !has_path_connecting(g, x, y, None) && !has_path_connecting(g, y, x, None),
        "{a} and {b} must be unordered:\n{}",
        to_dot(g, plan)
    );
}

#[test]
fn simple_create_update_and_destroy_follow_dependencies() {
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Create, &[], false), change("b", Action::Create, &["a"], false)]);
    order(&g, &p, &["a apply", "b apply"]);
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Delete, &[], false), change("b", Action::Delete, &["a"], false)]);
    order(&g, &p, &["b destroy", "a destroy"]);
}

#[test]
fn replace_all() {
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Replace, &[], false), change("b", Action::Replace, &["a"], false)]);
    order(&g, &p, &["b destroy", "a destroy", "a apply", "b apply"]);
}

#[test]
fn replace_one_then_update_its_dependent() {
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Replace, &[], false), change("b", Action::Update, &["a"], false)]);
    order(&g, &p, &["a destroy", "a apply", "b apply"]);
    assert_eq!(g.node_count(), 3, "b is updated, never destroyed (the Pulumi seed's dependent replacements)");
}

#[test]
fn destroy_then_update() {
    let (g, p) = graph(
        "resource \"null_resource\" \"a\" {\n}\n",
        vec![change("a", Action::Update, &[], false), change("b", Action::Delete, &["a"], false)],
    );
    order(&g, &p, &["b destroy", "a apply"]);
}

#[test]
fn replace_all_with_create_before_destroy_on_the_dependency() {
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Replace, &[], true), change("b", Action::Replace, &["a"], false)]);
    order(&g, &p, &["a apply", "b apply", "a destroy"]);
    order(&g, &p, &["b destroy", "b apply"]);
    order(&g, &p, &["b destroy", "a destroy"]);
    parallel(&g, &p, "b destroy", "a apply");
    assert!(matches!(&g[node(&g, "a destroy")], Step::Destroy(_, Some(_))), "the old a is destroyed as deposed");
}

#[test]
fn replace_dependency_with_create_before_destroy_then_update_dependent() {
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Replace, &[], true), change("b", Action::Update, &["a"], false)]);
    order(&g, &p, &["a apply", "b apply", "a destroy"]);
}

#[test]
fn removing_a_create_before_destroy_dependency_updates_the_dependent_first() {
    // b no longer refers to a; its state still records that it did.
    let mut b = change("b", Action::Update, &[], false);
    b.prior_dependencies = vec![ResourceAddr::managed("null_resource", "a")];
    let (g, p) = graph("resource \"null_resource\" \"b\" {\n}\n", vec![change("a", Action::Delete, &[], true), b]);
    order(&g, &p, &["b apply", "a destroy"]);
    // Without create_before_destroy, the dependency goes first.
    let mut b = change("b", Action::Update, &[], false);
    b.prior_dependencies = vec![ResourceAddr::managed("null_resource", "a")];
    let (g, p) = graph("resource \"null_resource\" \"b\" {\n}\n", vec![change("a", Action::Delete, &[], false), b]);
    order(&g, &p, &["a destroy", "b apply"]);
}

#[test]
fn create_before_destroy_is_inherited_by_dependencies() {
    let (g, p) =
        graph(CONFIG, vec![change("a", Action::Replace, &[], false), change("b", Action::Replace, &["a"], true)]);
    assert!(p.changes.iter().all(|c| c.create_before_destroy), "a is forced to create_before_destroy");
    order(&g, &p, &["a apply", "b apply", "b destroy", "a destroy"]);
}

#[test]
fn without_inheritance_the_seed_s_incorrect_graph_is_a_cycle() {
    let changes = vec![change("a", Action::Replace, &[], false), change("b", Action::Replace, &["a"], true)];
    let plan = Plan { changes, ..Plan::default() };
    let err = build(&plan, &deps_of(CONFIG)).unwrap_err();
    assert!(err.summary.starts_with("Cycle in the apply graph: "), "{err}");
    assert!(err.summary.contains("null_resource.b (destroy deposed"), "{err}");
}

#[test]
fn deposed_objects_left_by_earlier_runs_are_destroyed_after_dependents_change() {
    let mut old = change("a", Action::Delete, &[], true);
    old.deposed = Some(OLD.into());
    let (g, p) =
        graph(CONFIG, vec![old, change("a", Action::Replace, &[], false), change("b", Action::Update, &["a"], false)]);
    let deposed = g.node_indices().find(|n| g[*n] == Step::Destroy(addr("a"), Some(OLD.into()))).unwrap();
    assert!(has_path_connecting(&g, node(&g, "b apply"), deposed, None), "{}", to_dot(&g, &p));
    order(&g, &p, &["a destroy", "a apply", "b apply"]);
}

#[test]
fn the_deposing_key_is_stable_and_avoids_existing_ones() {
    let c = change("a", Action::Replace, &[], true);
    let k = deposing_key(&c, &BTreeSet::new());
    assert_eq!(k.len(), 8);
    assert_eq!(k, deposing_key(&c, &BTreeSet::new()));
    assert_ne!(k, deposing_key(&c, &BTreeSet::from([k.as_str()])));
}

/// `a` and `b` with `count = 4`, every `b` referring to `a`: the edges
/// between the two blocks go through one join step per rule, so that
/// their number grows as the sum of the blocks' sizes, not the product,
/// and every `b` still runs after every `a` (and is destroyed before).
#[test]
fn edges_between_large_blocks_go_through_joins() {
    const COUNTED: &str = r#"
resource "null_resource" "a" {
  count = 4
}
resource "null_resource" "b" {
  count = 4
  triggers = { a = null_resource.a[count.index].id }
}
"#;
    let keyed = |name: &str, i: i64, action: Action, deps: &[&str]| ResourceChange {
        addr: InstanceAddr { key: Some(crate::addr::InstanceKey::Int(i)), ..addr(name) },
        ..change(name, action, deps, false)
    };
    let all = |name: &str, action: Action, deps: &[&str]| {
        (0..4).map(move |i| keyed(name, i, action, deps)).collect::<Vec<_>>()
    };
    let step = |g: &ApplyGraph, s: Step| g.node_indices().find(|n| g[*n] == s).unwrap();
    let runs_before = |g: &ApplyGraph, first: &[NodeIndex], then: &[NodeIndex]| {
        first.iter().all(|a| then.iter().all(|b| has_path_connecting(g, *a, *b, None)))
    };

    // Created: every a before every b, through `a (all applied)`.
    let (g, _) = graph(COUNTED, [all("a", Action::Create, &[]), all("b", Action::Create, &["a"])].concat());
    let applies = |name: &str| {
        (0..4).map(|i| step(&g, Step::Apply(keyed(name, i, Action::Create, &[]).addr, None))).collect::<Vec<_>>()
    };
    assert!(runs_before(&g, &applies("a"), &applies("b")));
    assert!(g.node_weights().any(|s| *s == Step::Join(Join::Applied(ResourceAddr::managed("null_resource", "a")))));
    assert_eq!(g.edge_count(), 8, "4 edges into the join and 4 out:\n{}", to_dot(&g, &Plan::default()));

    // Destroyed: every b before every a.
    let (g, _) = graph(COUNTED, [all("a", Action::Delete, &[]), all("b", Action::Delete, &["a"])].concat());
    let destroys = |name: &str| {
        (0..4).map(|i| step(&g, Step::Destroy(keyed(name, i, Action::Delete, &[]).addr, None))).collect::<Vec<_>>()
    };
    assert!(runs_before(&g, &destroys("b"), &destroys("a")));
    assert_eq!(g.edge_count(), 8, "{}", to_dot(&g, &Plan::default()));

    // Replaced: b destroyed before a, a's destroys before its creates and
    // b's creates after a's destroys and creates.
    let (g, _) = graph(COUNTED, [all("a", Action::Replace, &[]), all("b", Action::Replace, &["a"])].concat());
    let destroys_of = |name: &str| {
        (0..4).map(|i| step(&g, Step::Destroy(keyed(name, i, Action::Delete, &[]).addr, None))).collect::<Vec<_>>()
    };
    let applies_of = |name: &str| {
        (0..4).map(|i| step(&g, Step::Apply(keyed(name, i, Action::Create, &[]).addr, None))).collect::<Vec<_>>()
    };
    assert!(runs_before(&g, &destroys_of("b"), &destroys_of("a")));
    assert!(runs_before(&g, &destroys_of("a"), &applies_of("b")));
    assert!(runs_before(&g, &applies_of("a"), &applies_of("b")));
    assert!(g.edge_count() < 40, "linear in the blocks' sizes:\n{}", to_dot(&g, &Plan::default()));
}

/// `null_resource.b` is of the provider `other`, whose block refers to
/// `null_resource.a`: configured late, by a step of its own.
const LATE_PROVIDER: &str = r#"
resource "null_resource" "a" {
}
provider "other" {
  endpoint = null_resource.a.id
}
resource "null_resource" "b" {
  provider = other
}
"#;

/// The step whose text (as `cairn graph` shows it) is `text`.
fn step(g: &ApplyGraph, text: &str) -> NodeIndex {
    g.node_indices()
        .find(|n| g[*n].to_string() == text)
        .unwrap_or_else(|| panic!("no step {text} in\n{}", to_dot(g, &Plan::default())))
}

/// Asserts that each step (by its text) runs strictly before the next.
fn runs_in_order(g: &ApplyGraph, steps: &[&str]) {
    for w in steps.windows(2) {
        let (a, b) = (step(g, w[0]), step(g, w[1]));
        assert!(
            has_path_connecting(g, a, b, None),
            "{} must run before {}:\n{}",
            w[0],
            w[1],
            to_dot(g, &Plan::default())
        );
    }
}

/// A change of `null_resource.NAME` of the provider `other`.
fn of_other(name: &str, action: Action, deps: &[&str]) -> ResourceChange {
    ResourceChange { provider: "other".into(), ..change(name, action, deps, false) }
}

const CONFIGURE: &str = "provider[\"other\"] (configure)";

#[test]
fn a_provider_configured_late_is_a_step_after_what_it_refers_to_and_before_its_objects() {
    // `a` changes, `b` is created and `c`, an object of `other` no longer
    // configured, is destroyed.
    let changes = vec![
        change("a", Action::Update, &[], false),
        of_other("b", Action::Create, &["a"]),
        of_other("c", Action::Delete, &["a"]),
    ];
    let (g, _) = graph(LATE_PROVIDER, changes);
    runs_in_order(&g, &["null_resource.a", CONFIGURE, "null_resource.b"]);
    runs_in_order(&g, &[CONFIGURE, "null_resource.c (destroy)"]);
    // Configured once, with `a` as applied: `a` does not wait for the
    // destroy of `c`, which waits for the provider (a cycle otherwise).
    assert!(!has_path_connecting(&g, step(&g, "null_resource.c (destroy)"), step(&g, "null_resource.a"), None));
    assert_eq!(g.node_weights().filter(|s| matches!(s, Step::Configure(_))).count(), 1);

    // Replaced: the provider is configured with the new `a`.
    let changes = vec![change("a", Action::Replace, &[], false), of_other("b", Action::Update, &["a"])];
    let (g, _) = graph(LATE_PROVIDER, changes);
    runs_in_order(&g, &["null_resource.a (destroy)", "null_resource.a", CONFIGURE, "null_resource.b"]);
}

#[test]
fn a_destroy_configures_the_provider_first_and_destroys_what_it_refers_to_last() {
    let mut plan = Plan {
        changes: vec![change("a", Action::Delete, &[], false), of_other("b", Action::Delete, &["a"])],
        destroy: true,
        ..Plan::default()
    };
    crate::plan::inherit_create_before_destroy(&mut plan.changes);
    let g = build(&plan, &deps_of(LATE_PROVIDER)).unwrap_or_else(|d| panic!("{d}"));
    runs_in_order(&g, &[CONFIGURE, "null_resource.b (destroy)", "null_resource.a (destroy)"]);
    // From the state: nothing runs before it.
    let configure = step(&g, CONFIGURE);
    assert_eq!(g.neighbors_directed(configure, petgraph::Direction::Incoming).count(), 0);
    assert!(to_dot(&g, &plan).contains("[label=\"provider[\\\"other\\\"] configure\"]"), "{}", to_dot(&g, &plan));
}
