//! The dependency graph of a configuration: which resources, locals,
//! outputs and provider configurations refer to which, built with petgraph
//! from the references in the configuration and `depends_on`. A cycle is an
//! error that prints the cycle.
//!
//! A `provider` block that refers to anything the graph has a node for (a
//! resource, data source, ephemeral resource, local or module output) is a
//! node itself, [`Node::Provider`], as in Terraform: it depends on what it
//! refers to, and every resource of that provider configuration depends on
//! it, so that the provider is configured when the walk reaches it, with the
//! values planned or applied by then. One that refers to input variables
//! alone has no node: it is configured before the walk.

pub mod walk;

use std::collections::BTreeSet;
use std::fmt;

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::addr::{AddrMap, ResourceAddr};
use crate::config::{Config, ProviderConfig, Reference};
use crate::diag::{Diagnostic, Location};

/// How many resources a thread gathers the references of at least, when
/// they are shared out (a thread costs about as much as a hundred).
const RESOURCES_A_RUN: usize = 2048;

/// The nodes `refs` name, in order and once each. The config loader
/// already rejected references to undeclared things; variables and
/// `count`/`each`/`path` have no node.
fn dependency_nodes(refs: Vec<(Reference, Location)>) -> BTreeSet<Node> {
    refs.into_iter()
        .filter_map(|(r, _)| match r {
            Reference::Resource(a) => Some(Node::Resource(a)),
            Reference::Local(n) => Some(Node::Local(n)),
            _ => None,
        })
        .collect()
}

/// Something in the configuration that has a value others can refer to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    /// A `resource` or `data` block.
    Resource(ResourceAddr),
    /// A `locals` entry.
    Local(String),
    /// An `output` block.
    Output(String),
    /// A `provider` block configured during the walk (see the module
    /// documentation), by its configuration name (`pg`, `pg.admin`).
    Provider(String),
}

/// Every reference a `provider` block makes: its arguments and its
/// sandbox's `headers`.
fn provider_references(provider: &ProviderConfig) -> Vec<(Reference, Location)> {
    let mut refs = provider.body.references();
    refs.extend(provider.http_headers.iter().flat_map(|h| h.expr.references()));
    refs
}

/// Whether the `provider` block is configured during the walk, as a node of
/// the graph: whether it refers to a resource, a data source, an ephemeral
/// resource, a local value or a module output (after module expansion, a
/// local), directly or not. One that refers to input variables alone is
/// configured before anything is planned.
pub fn configured_in_graph(provider: &ProviderConfig) -> bool {
    provider_references(provider).iter().any(|(r, _)| matches!(r, Reference::Resource(_) | Reference::Local(_)))
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Resource(a) => write!(f, "{a}"),
            Node::Local(n) => f.write_str(&crate::config::local_address(n)),
            Node::Output(n) => write!(f, "output.{n}"),
            // Terraform's `provider["registry.terraform.io/hashicorp/pg"].admin`,
            // with the configuration's local name.
            Node::Provider(n) => match n.split_once('.') {
                Some((name, alias)) => write!(f, "provider[\"{name}\"].{alias}"),
                None => write!(f, "provider[\"{n}\"]"),
            },
        }
    }
}

/// Nodes and "is needed by" edges: an edge goes from a dependency to the
/// node that depends on it.
#[derive(Debug, Default)]
pub struct DependencyGraph {
    graph: DiGraph<Node, ()>,
    index: AddrMap<Node, NodeIndex>,
    /// Where each node is declared, by its index in `graph`.
    locations: Vec<Location>,
}

impl DependencyGraph {
    /// Builds the graph of a configuration; fails with the cycle if there is one.
    pub fn build(config: &Config) -> Result<DependencyGraph, Diagnostic> {
        let mut g = DependencyGraph::default();
        // Every node first, so that edges may point forwards in the files.
        for r in &config.resources {
            g.add(Node::Resource(r.addr.clone()), &r.location);
        }
        for (name, local) in &config.locals {
            g.add(Node::Local(name.clone()), &local.location);
        }
        for (name, output) in &config.outputs {
            g.add(Node::Output(name.clone()), &output.location);
        }
        let in_graph: Vec<&ProviderConfig> = config.providers.iter().filter(|p| configured_in_graph(p)).collect();
        for provider in &in_graph {
            g.add(Node::Provider(provider.name.clone()), &provider.location);
        }
        // What each resource refers to, gathered on all threads: walking
        // every resource's expressions is half of building the graph
        // (callgrind, 5,000 resources), and serial at 100,000. The edges
        // are still added one after the other, in the same order.
        let resource_deps = crate::parallel::map_runs(&config.resources, RESOURCES_A_RUN, |run| {
            run.iter().map(|r| dependency_nodes(r.references())).collect::<Vec<_>>()
        });
        for (r, deps) in config.resources.iter().zip(resource_deps.into_iter().flatten()) {
            g.depend(&Node::Resource(r.addr.clone()), deps);
        }
        for (name, local) in &config.locals {
            g.depend(&Node::Local(name.clone()), dependency_nodes(local.references()));
        }
        for (name, output) in &config.outputs {
            g.depend(&Node::Output(name.clone()), dependency_nodes(output.references()));
        }
        for provider in in_graph {
            let node = Node::Provider(provider.name.clone());
            g.depend(&node, dependency_nodes(provider_references(provider)));
            // Every resource, data source and ephemeral resource of the
            // configuration is planned and applied with it configured.
            for r in config.resources.iter().filter(|r| r.provider == provider.name) {
                g.depend(&Node::Resource(r.addr.clone()), BTreeSet::from([node.clone()]));
            }
        }
        g.check_acyclic()?;
        Ok(g)
    }

    fn add(&mut self, node: Node, location: &Location) {
        let idx = self.graph.add_node(node.clone());
        self.index.insert(node, idx);
        self.locations.push(location.clone());
    }

    /// Adds an edge from each of `deps` (see [`dependency_nodes`]) to
    /// `node`.
    fn depend(&mut self, node: &Node, deps: BTreeSet<Node>) {
        let to = self.index[node];
        for dep in deps {
            if let Some(from) = self.index.get(&dep) {
                self.graph.update_edge(*from, to, ());
            }
        }
    }

    fn check_acyclic(&self) -> Result<(), Diagnostic> {
        if let Some(cycle) = self.find_cycle() {
            let names: Vec<String> = cycle.iter().map(|n| self.graph[*n].to_string()).collect();
            let mut detail: Vec<String> = cycle
                .iter()
                .map(|n| {
                    let node = &self.graph[*n];
                    match self.locations.get(n.index()) {
                        Some(loc) => format!("{node} ({loc})"),
                        None => node.to_string(),
                    }
                })
                .collect();
            detail.insert(0, "Each of these refers to the next:".to_string());
            let mut d = Diagnostic::error(format!("Cycle: {} -> {}", names.join(" -> "), names[0]))
                .with_detail(detail.join("\n  "));
            if let Some(loc) = self.locations.get(cycle[0].index()) {
                d = d.at(loc);
            }
            return Err(d);
        }
        Ok(())
    }

    /// A cycle as a list of nodes, each referring to the one after it.
    fn find_cycle(&self) -> Option<Vec<NodeIndex>> {
        // One depth-first pass says whether there is a cycle at all; the
        // strongly connected components that name it cost several.
        if !petgraph::algo::is_cyclic_directed(&self.graph) {
            return None;
        }
        for scc in petgraph::algo::tarjan_scc(&self.graph) {
            let self_loop = scc.len() == 1 && self.graph.contains_edge(scc[0], scc[0]);
            if scc.len() < 2 && !self_loop {
                continue;
            }
            // Walk inside the component until a node repeats.
            let members: BTreeSet<NodeIndex> = scc.iter().copied().collect();
            let mut path = vec![*scc.iter().min_by_key(|i| self.graph[**i].clone()).expect("a component is not empty")];
            loop {
                let here = *path.last().expect("the path starts with one node");
                let next = self
                    .graph
                    .edges_directed(here, Direction::Incoming)
                    .map(|e| e.source())
                    .filter(|t| members.contains(t))
                    .min_by_key(|t| self.graph[*t].clone())
                    .expect("a node in a cycle has a successor in it");
                if let Some(pos) = path.iter().position(|n| *n == next) {
                    return Some(path.split_off(pos));
                }
                path.push(next);
            }
        }
        None
    }

    /// The graph itself, edges from a dependency to its dependent, to walk
    /// with [`walk::walk_spread_until`].
    pub fn petgraph(&self) -> &DiGraph<Node, ()> {
        &self.graph
    }

    /// Every node, dependencies before dependents (ties by name, so the
    /// order is stable).
    pub fn topo_order(&self) -> Vec<Node> {
        let mut order = Vec::with_capacity(self.graph.node_count());
        // By node index: a map ordered by index cost a tenth of this at
        // 100,000 nodes.
        let mut indegree: Vec<usize> =
            self.graph.node_indices().map(|n| self.graph.edges_directed(n, Direction::Incoming).count()).collect();
        let mut ready: BTreeSet<(Node, NodeIndex)> = self
            .graph
            .node_indices()
            .filter(|n| indegree[n.index()] == 0)
            .map(|n| (self.graph[n].clone(), n))
            .collect();
        while let Some((node, idx)) = ready.pop_first() {
            order.push(node);
            for e in self.graph.edges_directed(idx, Direction::Outgoing) {
                let d = &mut indegree[e.target().index()];
                *d -= 1;
                if *d == 0 {
                    ready.insert((self.graph[e.target()].clone(), e.target()));
                }
            }
        }
        order
    }

    /// The names of the locals, in the order the configuration holds them
    /// (by name).
    pub fn locals(&self) -> impl Iterator<Item = &str> {
        self.graph.node_weights().filter_map(|n| match n {
            Node::Local(name) => Some(name.as_str()),
            _ => None,
        })
    }

    /// The provider configurations that are nodes of the graph (see
    /// [`configured_in_graph`]), by name.
    pub fn providers(&self) -> impl Iterator<Item = &str> {
        self.graph.node_weights().filter_map(|n| match n {
            Node::Provider(name) => Some(name.as_str()),
            _ => None,
        })
    }

    /// Whether the provider configuration `name` is a node of the graph.
    pub fn has_provider(&self, name: &str) -> bool {
        self.index.contains_key(&Node::Provider(name.to_string()))
    }

    /// The nodes `node` refers to directly, in no particular order (but the
    /// same from run to run), without copying them.
    pub fn direct_dependencies(&self, node: &Node) -> impl Iterator<Item = &Node> {
        let idx = self.index.get(node).copied();
        idx.into_iter()
            .flat_map(|idx| self.graph.edges_directed(idx, Direction::Incoming))
            .map(|e| &self.graph[e.source()])
    }

    /// The locals `node` reads directly: all an evaluation of its
    /// expressions needs of them, since a local's own references were
    /// resolved when its value was.
    pub fn local_dependencies(&self, node: &Node) -> Vec<String> {
        let mut locals: Vec<String> = self
            .direct_dependencies(node)
            .filter_map(|n| match n {
                Node::Local(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        locals.sort();
        locals
    }

    /// The resources `node` depends on, directly or through locals,
    /// sorted. (Every node's evaluation asks: nothing is copied but the
    /// addresses found.)
    pub fn resource_dependencies(&self, node: &Node) -> Vec<ResourceAddr> {
        let mut seen: BTreeSet<&Node> = BTreeSet::new();
        let mut stack: Vec<&Node> = self.direct_dependencies(node).collect();
        let mut out = Vec::new();
        while let Some(n) = stack.pop() {
            match n {
                // An ephemeral resource is opened in the same run from what
                // it reads: what reads it reads that too (for the order of
                // apply, and for the values its opening needs).
                Node::Resource(a) if a.mode == crate::addr::Mode::Ephemeral => {
                    out.push(a.clone());
                    if seen.insert(n) {
                        stack.extend(self.direct_dependencies(n));
                    }
                }
                Node::Resource(a) => out.push(a.clone()),
                _ if seen.insert(n) => stack.extend(self.direct_dependencies(n)),
                _ => {}
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// What `node` depends on, directly or not, dependencies before
    /// dependents (in [`DependencyGraph::topo_order`]'s order); the
    /// dependencies of a node are followed only where `through` says so.
    pub fn dependencies_in_order(&self, node: &Node, through: impl Fn(&Node) -> bool) -> Vec<Node> {
        let mut seen: BTreeSet<&Node> = BTreeSet::new();
        let mut stack: Vec<&Node> = self.direct_dependencies(node).collect();
        while let Some(n) = stack.pop() {
            if seen.insert(n) && through(n) {
                stack.extend(self.direct_dependencies(n));
            }
        }
        self.topo_order().into_iter().filter(|n| seen.contains(n)).collect()
    }

    /// The graph in Graphviz DOT, edges pointing from a node to what it depends on.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph cairn {\n  rankdir = \"RL\";\n");
        let mut nodes: Vec<&Node> = self.graph.node_weights().collect();
        nodes.sort();
        for node in nodes {
            out.push_str(&format!("  \"{}\";\n", dot_escaped(&node.to_string())));
        }
        let name = |n: NodeIndex| dot_escaped(&self.graph[n].to_string());
        let mut edges: Vec<(String, String)> =
            self.graph.edge_references().map(|e| (name(e.target()), name(e.source()))).collect();
        edges.sort();
        for (from, to) in edges {
            out.push_str(&format!("  \"{from}\" -> \"{to}\";\n"));
        }
        out.push_str("}\n");
        out
    }
}

/// `text` inside a DOT string: a provider's node (`provider["pg"]`) has
/// quotes.
pub(crate) fn dot_escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests;
