//! The apply graph: the steps of a plan and the order they must run in,
//! exactly as Terraform's notes on destroying draw it (`docs/design.md`, "Sources").
//!
//! The rules, written as "X depends on Y" (Y runs first), as the notes
//! write their edges:
//!
//! 1. creates, updates and reads depend on what their configuration refers
//!    to (and locals on what theirs refers to);
//! 2. a replaced object's create depends on its destroy;
//! 3. a destroy of a dependency depends on the destroys of its dependents
//!    (from the dependencies stored in the state), and a create or update of
//!    a dependency that is not itself replaced depends on them too ("destroy
//!    then update");
//! 4. a create or update depends on the destroys of everything it depends
//!    on, by configuration or by the state (the notes' dotted "implementation
//!    detail" edges);
//! 5. for a `create_before_destroy` destroy (and every deposed object's
//!    destroy), every edge from a create or update into it is inverted: the
//!    destroy waits for its own replacement and for its dependents' creates
//!    and updates.
//!
//! A provider configured late (`plan::late`) is a step too,
//! [`Step::Configure`]: after what its block refers to (rule 1), and before
//! every step of its objects, destroys included. In a plan that also
//! creates or updates, it is configured once, with the applied values, as
//! Terraform does: so rule 3 does not hold a dependency of the provider's
//! block back until the provider's objects are destroyed (that would wait
//! for itself). A destroy plan configures it from the state, with no step
//! before it, and its objects are destroyed before what its block refers
//! to, by the dependencies the state records.
//!
//! create_before_destroy is inherited by everything a resource that has it
//! depends on ([`crate::plan::inherit_create_before_destroy`], the notes' "forced"
//! case), so rule 5 never makes a cycle out of an acyclic configuration.
//! Only the dependents that are really replaced or deleted get a destroy
//! node, so a delete-before-replace destroys first only those
//! (Pulumi's resource registration, "Dependent Replacements"):
//! dependents whose new values merely change are updated after the
//! replacement exists.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use petgraph::graph::{DiGraph, NodeIndex};
use sha2::{Digest, Sha256};

use crate::addr::{AddrIndexMap, AddrMap, InstanceAddr, ResourceAddr};
use crate::diag::Diagnostic;
use crate::graph::{DependencyGraph, Node};
use crate::plan::{Action, Plan, ResourceChange};
use crate::value;

/// One unit of work during apply.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// Destroy an object of an instance: its current object (`None`; a
    /// delete, or the first half of a replace), or the deposed object with
    /// this key (the second half of a create_before_destroy replace, or the
    /// retry of an earlier one).
    Destroy(InstanceAddr, Option<String>),
    /// Create, update or read an instance (or just publish its value, for
    /// a no-op). With a key: a create_before_destroy replace, which first
    /// deposes the current object under that key.
    Apply(InstanceAddr, Option<String>),
    /// Evaluate a local value.
    Local(String),
    /// Open the instances of an ephemeral resource block (when something
    /// applied needs them): they are closed when the apply ends.
    Open(ResourceAddr),
    /// Configure a provider whose block refers to planned objects (when
    /// something applied needs it), by configuration name.
    Configure(String),
    /// Nothing: a step that finishes once a group of steps has, standing
    /// for the edges from every step of that group to every step of
    /// another. Between two blocks of many instances those edges would
    /// number the product of their sizes; through a join they number the
    /// sum. See [`Join`].
    Join(Join),
}

/// The group of steps a [`Step::Join`] waits for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Join {
    /// Every create, update, read or no-op of the block (rule 1).
    Applied(ResourceAddr),
    /// Every destroy of the first block whose object depended on the
    /// second (rule 3).
    DestroyedBefore(ResourceAddr, ResourceAddr),
    /// Every destroy of the block (rule 4).
    Destroyed(ResourceAddr),
}

impl Step {
    /// The instance the step works on, if any.
    pub fn addr(&self) -> Option<&InstanceAddr> {
        match self {
            Step::Destroy(a, _) | Step::Apply(a, _) => Some(a),
            Step::Local(_) | Step::Open(_) | Step::Configure(_) | Step::Join(_) => None,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Destroy(a, None) => write!(f, "{a} (destroy)"),
            Step::Destroy(a, Some(k)) => write!(f, "{a} (destroy deposed {k})"),
            Step::Apply(a, _) => write!(f, "{a}"),
            Step::Local(n) => f.write_str(&crate::config::local_address(n)),
            Step::Open(r) => write!(f, "{r} (open)"),
            Step::Configure(p) => write!(f, "{} (configure)", Node::Provider(p.clone())),
            Step::Join(Join::Applied(r)) => write!(f, "{r} (all applied)"),
            Step::Join(Join::DestroyedBefore(r, dep)) => write!(f, "{r} (all destroyed before {dep})"),
            Step::Join(Join::Destroyed(r)) => write!(f, "{r} (all destroyed)"),
        }
    }
}

/// Steps with "must finish before" edges.
pub type ApplyGraph = DiGraph<Step, ()>;

/// The key a create_before_destroy replace deposes the current object
/// under: derived from the planned change, so that `cairn graph` and apply
/// agree, and distinct from the instance's other deposed objects.
fn deposing_key(change: &ResourceChange, taken: &BTreeSet<&str>) -> String {
    (0u32..)
        .map(|n| {
            let mut h = Sha256::new();
            h.update(change.addr.to_string().as_bytes());
            h.update(value::to_json_text(&change.planned).as_bytes());
            h.update(n.to_le_bytes());
            hex::encode(&h.finalize()[..4])
        })
        .find(|k| !taken.contains(k.as_str()))
        .expect("some key is free")
}

/// Whether a change's apply node is a real operation on its object.
fn creates_or_updates(change: &ResourceChange) -> bool {
    matches!(change.action, Action::Create | Action::Update | Action::Replace | Action::Read)
}

/// Builds the apply graph of a plan. Fails, printing the cycle, if the
/// steps cannot be ordered.
pub fn build(plan: &Plan, deps: &DependencyGraph) -> Result<ApplyGraph, Diagnostic> {
    let mut g = ApplyGraph::with_capacity(plan.changes.len(), plan.changes.len());
    // Hashed, in plan order where they are walked: a map ordered by
    // address compared a dozen addresses, string by string, for each of
    // tens of thousands of lookups. Walking them in plan order keeps the
    // graph the same from run to run.
    let mut applies: AddrIndexMap<&InstanceAddr, NodeIndex> =
        AddrIndexMap::with_capacity_and_hasher(plan.changes.len(), Default::default());
    // Creators with their change, and destroyers with theirs and whether
    // they are create_before_destroy.
    let mut creators: Vec<(NodeIndex, &ResourceChange)> = Vec::new();
    let mut destroyers: Vec<(NodeIndex, &ResourceChange, bool)> = Vec::new();
    let mut current_destroy: AddrIndexMap<&InstanceAddr, NodeIndex> = AddrIndexMap::default();
    // The keys of each instance's deposed objects, found once rather than
    // by searching the plan for every replace.
    let mut deposed_keys: BTreeMap<&InstanceAddr, BTreeSet<&str>> = BTreeMap::new();
    for change in &plan.changes {
        if let Some(key) = &change.deposed {
            deposed_keys.entry(&change.addr).or_default().insert(key);
        }
    }
    for change in &plan.changes {
        if let Some(key) = &change.deposed {
            let d = g.add_node(Step::Destroy(change.addr.clone(), Some(key.clone())));
            destroyers.push((d, change, true));
            continue;
        }
        let cbd_replace = change.action == Action::Replace && change.create_before_destroy;
        let key = cbd_replace.then(|| deposing_key(change, deposed_keys.get(&change.addr).unwrap_or(&BTreeSet::new())));
        if matches!(change.action, Action::Delete | Action::Replace) {
            let d = g.add_node(Step::Destroy(change.addr.clone(), key.clone()));
            destroyers.push((d, change, change.create_before_destroy));
            current_destroy.insert(&change.addr, d);
        }
        if change.action != Action::Delete {
            let a = g.add_node(Step::Apply(change.addr.clone(), key));
            applies.insert(&change.addr, a);
            if creates_or_updates(change) {
                creators.push((a, change));
            }
        }
    }

    // "dependent depends on dependency" pairs, before inversion.
    // Gathered in a vector, then sorted and deduplicated once: a set
    // ordered as it grew cost a tree search for each of them.
    let mut edges: Vec<(NodeIndex, NodeIndex)> = Vec::new();

    // Rule 1: creates, updates and locals after what they refer to.
    let mut node_steps: AddrIndexMap<Node, Vec<NodeIndex>> =
        AddrIndexMap::with_capacity_and_hasher(applies.len(), Default::default());
    for (addr, idx) in &applies {
        node_steps.entry(Node::Resource(addr.resource.clone())).or_default().push(*idx);
    }
    // Locals are evaluated for the configuration's creates and updates; a
    // destroy plan has none, and what locals refer to is going away.
    // (In the order of their names: a topological order of the whole graph, only
    // to number these steps, cost a tenth of a second at 100,000.)
    for name in deps.locals().filter(|_| !plan.destroy) {
        node_steps.insert(Node::Local(name.to_string()), vec![g.add_node(Step::Local(name.to_string()))]);
    }
    // Ephemeral resources are opened, like locals, only for the
    // configuration's creates and updates (in the order of their names).
    let mut ephemeral: Vec<&ResourceAddr> = deps
        .petgraph()
        .node_weights()
        .filter_map(|n| match n {
            Node::Resource(r) if r.mode == crate::addr::Mode::Ephemeral && !plan.destroy => Some(r),
            _ => None,
        })
        .collect();
    ephemeral.sort();
    for r in ephemeral {
        node_steps.insert(Node::Resource(r.clone()), vec![g.add_node(Step::Open(r.clone()))]);
    }
    // Providers configured late, in every plan (a destroy configures them
    // from the state), before every step of their objects.
    let mut configures: BTreeMap<&str, NodeIndex> = BTreeMap::new();
    let mut providers: Vec<&str> = deps.providers().collect();
    providers.sort();
    for name in providers {
        let step = g.add_node(Step::Configure(name.to_string()));
        configures.insert(name, step);
        // A destroy plan's reads nothing of the configuration.
        if !plan.destroy {
            node_steps.insert(Node::Provider(name.to_string()), vec![step]);
        }
    }
    let mut joins = Joins::default();
    for (node, steps) in &node_steps {
        for dep in deps.direct_dependencies(node) {
            let Some(from) = node_steps.get(dep) else { continue };
            let join = match dep {
                Node::Resource(r) => Some(Join::Applied(r.clone())),
                _ => None,
            };
            joins.depend_all(&mut g, &mut edges, join, steps, from);
        }
    }

    // Destroys after their provider is configured (creates and updates
    // are, by rule 1).
    for (d, change, _) in &destroyers {
        if let Some(configure) = configures.get(change.provider.as_str()) {
            edges.push((*d, *configure));
        }
    }
    // What the block of each provider configured late refers to, which
    // rule 3 must not order after the destroys of that provider's objects.
    let behind_provider: BTreeMap<&str, BTreeSet<ResourceAddr>> = match plan.destroy {
        true => BTreeMap::new(),
        false => configures
            .keys()
            .map(|p| (*p, deps.resource_dependencies(&Node::Provider(p.to_string())).into_iter().collect()))
            .collect(),
    };
    let through_provider = |change: &ResourceChange, dep: &ResourceAddr| {
        behind_provider.get(change.provider.as_str()).is_some_and(|behind| behind.contains(dep))
    };

    // Rule 2: a replace's create after its destroy.
    for (addr, d) in &current_destroy {
        if let Some(a) = applies.get(addr) {
            edges.push((*a, *d));
        }
    }
    // Destroyers, and creators of objects not destroyed first, by resource
    // block: rules 3 and 4 look them up for every dependency of every
    // step, and searching all of them each time made this quadratic.
    let mut destroyers_by: AddrMap<&ResourceAddr, Vec<NodeIndex>> = AddrMap::default();
    for (d, change, _) in &destroyers {
        destroyers_by.entry(&change.addr.resource).or_default().push(*d);
    }
    // Rules 3 and 4 only order creators against destroys: with nothing
    // destroyed, they have no creator to look at.
    let near_destroys: &[(NodeIndex, &ResourceChange)] = if destroyers.is_empty() { &[] } else { &creators };
    let mut kept_creators_by: AddrMap<&ResourceAddr, Vec<NodeIndex>> = AddrMap::default();
    for (c, creator) in near_destroys {
        if !current_destroy.contains_key(&creator.addr) {
            kept_creators_by.entry(&creator.addr.resource).or_default().push(*c);
        }
    }
    let destroyers_of = |r: &ResourceAddr| destroyers_by.get(r).into_iter().flatten().copied();
    // Rule 3: dependencies destroyed after their dependents; their creates
    // and updates too when they are not replaced (those edges stay one by
    // one: rule 5 may invert each of them).
    let mut dependents_destroyed: BTreeMap<(&ResourceAddr, &ResourceAddr), Vec<NodeIndex>> = BTreeMap::new();
    for (d, change, _) in &destroyers {
        for dep in change.prior_dependencies.iter().filter(|dep| !through_provider(change, dep)) {
            dependents_destroyed.entry((&change.addr.resource, dep)).or_default().push(*d);
            for c in kept_creators_by.get(dep).into_iter().flatten() {
                edges.push((*c, *d));
            }
        }
    }
    for ((block, dep), dependents) in &dependents_destroyed {
        // An object's own block: each destroy waits for the others only.
        if block == dep {
            for d in dependents {
                edges.extend(destroyers_of(dep).filter(|x| x != d).map(|x| (x, *d)));
            }
            continue;
        }
        let dep_destroys: Vec<NodeIndex> = destroyers_of(dep).collect();
        let join = Join::DestroyedBefore((*block).clone(), (*dep).clone());
        joins.depend_all(&mut g, &mut edges, Some(join), &dep_destroys, dependents);
    }
    // Rule 4: creates and updates after the destroys of what they depend on.
    let cbd: BTreeSet<NodeIndex> = destroyers.iter().filter(|(_, _, cbd)| *cbd).map(|(d, _, _)| *d).collect();
    let mut creators_after: AddrIndexMap<&ResourceAddr, Vec<NodeIndex>> = AddrIndexMap::default();
    for (c, creator) in near_destroys {
        let all: BTreeSet<&ResourceAddr> = creator.dependencies.iter().chain(&creator.prior_dependencies).collect();
        for dep in all {
            if dep != &creator.addr.resource && destroyers_by.contains_key(dep) {
                creators_after.entry(dep).or_default().push(*c);
            }
        }
    }
    for (dep, dependents) in &creators_after {
        let dep_destroys: Vec<NodeIndex> = destroyers_of(dep).collect();
        // Rule 5 inverts the edges into create_before_destroy destroys one
        // by one, so those cannot go through a join.
        let join = dep_destroys.iter().all(|d| !cbd.contains(d)).then(|| Join::Destroyed((*dep).clone()));
        joins.depend_all(&mut g, &mut edges, join, dependents, &dep_destroys);
    }

    edges.sort_unstable();
    edges.dedup();
    // Rule 5: invert create/update → create_before_destroy destroy edges.
    for (dependent, dependency) in edges {
        if cbd.contains(&dependency) && matches!(g[dependent], Step::Apply(..)) {
            g.update_edge(dependent, dependency, ());
        } else {
            g.update_edge(dependency, dependent, ());
        }
    }
    check_acyclic(&g)?;
    Ok(g)
}

/// The join steps of a graph being built, each added once.
#[derive(Default)]
struct Joins {
    added: BTreeMap<Join, NodeIndex>,
}

impl Joins {
    /// Adds "every step of `dependents` depends on every step of
    /// `dependencies`" to `edges`: one by one when either side is small,
    /// through the step `join` (added once, waiting for `dependencies`)
    /// when both are large enough that the product of their sizes would
    /// exceed the sum. Every use of one join must pass the same
    /// `dependencies`.
    fn depend_all(
        &mut self,
        g: &mut ApplyGraph,
        edges: &mut Vec<(NodeIndex, NodeIndex)>,
        join: Option<Join>,
        dependents: &[NodeIndex],
        dependencies: &[NodeIndex],
    ) {
        let many = dependents.len() * dependencies.len() > dependents.len() + dependencies.len() + 1;
        match join {
            Some(join) if many => {
                let j = *self.added.entry(join.clone()).or_insert_with(|| {
                    let j = g.add_node(Step::Join(join));
                    edges.extend(dependencies.iter().map(|d| (j, *d)));
                    j
                });
                edges.extend(dependents.iter().map(|d| (*d, j)));
            }
            _ => {
                for to in dependents {
                    edges.extend(dependencies.iter().map(|from| (*to, *from)));
                }
            }
        }
    }
}

/// Fails with the steps of a cycle, each to run before the next.
fn check_acyclic(g: &ApplyGraph) -> Result<(), Diagnostic> {
    use petgraph::visit::EdgeRef;
    for scc in petgraph::algo::tarjan_scc(g) {
        if scc.len() < 2 {
            continue;
        }
        let members: BTreeSet<NodeIndex> = scc.iter().copied().collect();
        let mut path = vec![*scc.iter().min_by_key(|i| g[**i].clone()).expect("not empty")];
        loop {
            let here = *path.last().expect("not empty");
            let next = g
                .edges(here)
                .map(|e| e.target())
                .filter(|t| members.contains(t))
                .min_by_key(|t| g[*t].clone())
                .expect("a node in a cycle has a successor in it");
            if let Some(pos) = path.iter().position(|n| *n == next) {
                let names: Vec<String> = path[pos..].iter().map(|n| g[*n].to_string()).collect();
                return Err(Diagnostic::error(format!(
                    "Cycle in the apply graph: {} -> {}",
                    names.join(" -> "),
                    names[0]
                ))
                .with_detail("Each of these steps must run before the next."));
            }
            path.push(next);
        }
    }
    Ok(())
}

/// The apply graph in Graphviz DOT, edges in the order steps run, each
/// node labelled with its action from the plan.
pub fn to_dot(g: &ApplyGraph, plan: &Plan) -> String {
    use petgraph::visit::EdgeRef;
    let mut out = String::from("digraph apply {\n");
    let escaped = |text: String| crate::graph::dot_escaped(&text);
    let mut names: Vec<(String, String)> =
        g.node_weights().map(|s| (escaped(s.to_string()), escaped(label(s, plan)))).collect();
    names.sort();
    for (n, label) in names {
        out.push_str(&format!("  \"{n}\" [label=\"{label}\"];\n"));
    }
    let mut edges: Vec<(String, String)> =
        g.edge_references().map(|e| (escaped(g[e.source()].to_string()), escaped(g[e.target()].to_string()))).collect();
    edges.sort();
    for (a, b) in edges {
        out.push_str(&format!("  \"{a}\" -> \"{b}\";\n"));
    }
    out.push_str("}\n");
    out
}

/// `A create`, `B update`, `A destroy`, as the seed labels nodes.
fn label(step: &Step, plan: &Plan) -> String {
    match step {
        Step::Destroy(a, None) => format!("{a} destroy"),
        Step::Destroy(a, Some(k)) => format!("{a} destroy (deposed {k})"),
        Step::Apply(a, _) => {
            let action = match plan.change(a).map(|c| c.action) {
                Some(Action::Replace) => "create".to_string(),
                Some(action) => action.to_string(),
                None => "apply".to_string(),
            };
            format!("{a} {action}")
        }
        Step::Local(n) => crate::config::local_address(n),
        Step::Open(r) => format!("{r} open"),
        Step::Configure(p) => format!("{} configure", Node::Provider(p.clone())),
        Step::Join(_) => step.to_string(),
    }
}

#[cfg(test)]
mod tests;
