//! The apply graph: the steps of a plan and the order they must run in.
//!
//! Creates and updates follow dependencies; destroys run in reverse
//! dependency order; a replace destroys the old object before creating the
//! new one (`seeds/terraform-destroying.md`, "Resource Replacement").

use std::collections::BTreeMap;
use std::fmt;

use petgraph::graph::{DiGraph, NodeIndex};

use crate::addr::InstanceAddr;
use crate::graph::{DependencyGraph, Node};
use crate::plan::{Action, Plan};

/// One unit of work during apply.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// Destroy the current object of an instance (delete, or the first half of a replace).
    Destroy(InstanceAddr),
    /// Create, update or read an instance (or just publish its value, for a no-op).
    Apply(InstanceAddr),
    /// Evaluate a local value.
    Local(String),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Destroy(a) => write!(f, "{a} (destroy)"),
            Step::Apply(a) => write!(f, "{a}"),
            Step::Local(n) => write!(f, "local.{n}"),
        }
    }
}

/// Steps with "must finish before" edges.
pub type ApplyGraph = DiGraph<Step, ()>;

/// Builds the apply graph of a plan.
pub fn build(plan: &Plan, deps: &DependencyGraph) -> ApplyGraph {
    let mut g = ApplyGraph::new();
    let mut applies: BTreeMap<InstanceAddr, NodeIndex> = BTreeMap::new();
    let mut destroys: BTreeMap<InstanceAddr, NodeIndex> = BTreeMap::new();
    for change in &plan.changes {
        if matches!(change.action, Action::Delete | Action::Replace) {
            destroys.insert(change.addr.clone(), g.add_node(Step::Destroy(change.addr.clone())));
        }
        if change.action != Action::Delete {
            applies.insert(change.addr.clone(), g.add_node(Step::Apply(change.addr.clone())));
        }
    }
    // Every instance of a resource and every local, for dependency edges.
    let mut node_steps: BTreeMap<Node, Vec<NodeIndex>> = BTreeMap::new();
    for (addr, idx) in &applies {
        node_steps.entry(Node::Resource(addr.resource.clone())).or_default().push(*idx);
    }
    // Locals are evaluated for the configuration's creates and updates; a
    // destroy plan has none, and what locals refer to is going away.
    for node in deps.topo_order().into_iter().filter(|_| !plan.destroy) {
        if let Node::Local(name) = &node {
            node_steps.insert(node.clone(), vec![g.add_node(Step::Local(name.clone()))]);
        }
    }
    // Creates, updates and locals after what they refer to.
    for (node, steps) in &node_steps {
        for dep in deps.dependencies(node) {
            for from in node_steps.get(&dep).into_iter().flatten() {
                for to in steps {
                    g.update_edge(*from, *to, ());
                }
            }
        }
    }
    // A replace destroys before it creates.
    for (addr, destroy) in &destroys {
        if let Some(apply) = applies.get(addr) {
            g.update_edge(*destroy, *apply, ());
        }
    }
    // Destroys in reverse: a dependency is destroyed after its dependents.
    for change in &plan.changes {
        let Some(dependent) = destroys.get(&change.addr) else { continue };
        for dep in &change.dependencies {
            for (addr, dependency) in destroys.range(dep.instance()..) {
                if &addr.resource != dep {
                    break;
                }
                g.update_edge(*dependent, *dependency, ());
            }
        }
    }
    g
}

/// The apply graph in Graphviz DOT, edges in the order steps run.
pub fn to_dot(g: &ApplyGraph) -> String {
    use petgraph::visit::EdgeRef;
    let mut out = String::from("digraph apply {\n");
    let mut names: Vec<String> = g.node_weights().map(ToString::to_string).collect();
    names.sort();
    for n in names {
        out.push_str(&format!("  \"{n}\";\n"));
    }
    let mut edges: Vec<(String, String)> =
        g.edge_references().map(|e| (g[e.source()].to_string(), g[e.target()].to_string())).collect();
    edges.sort();
    for (a, b) in edges {
        out.push_str(&format!("  \"{a}\" -> \"{b}\";\n"));
    }
    out.push_str("}\n");
    out
}
