//! `-target=ADDR`: which resources and instances a targeted run plans —
//! the targets and everything they depend on, as Terraform does; for a
//! destroy, the targets and everything that depends on them (what must go
//! first). Whole resources are targeted with their address
//! (`local_file.a`), single instances with their key (`local_file.a[0]`).

use std::collections::{BTreeMap, BTreeSet};

use crate::addr::{InstanceAddr, InstanceKey, ResourceAddr};
use crate::graph::{DependencyGraph, Node};
use crate::state::State;

/// What a run may plan.
#[derive(Debug, Default)]
pub struct Targets {
    /// `None`: everything (no `-target`).
    resources: Option<BTreeSet<ResourceAddr>>,
    /// Resources only some instances of which are targeted, with their keys.
    instances: BTreeMap<ResourceAddr, BTreeSet<Option<InstanceKey>>>,
}

impl Targets {
    /// The targets `addrs` (an address without a key names the whole
    /// resource) and what they depend on in `graph`; no targets, everything.
    pub fn new(addrs: &[InstanceAddr], graph: &DependencyGraph) -> Targets {
        if addrs.is_empty() {
            return Targets::default();
        }
        let (mut whole, mut instances) = split(addrs);
        let mut resources = BTreeSet::new();
        for addr in addrs {
            resources.insert(addr.resource.clone());
            // What a target depends on is planned whole: the target's
            // configuration may refer to any of its instances.
            for dependency in graph.resource_dependencies(&Node::Resource(addr.resource.clone())) {
                whole.insert(dependency.clone());
                resources.insert(dependency);
            }
        }
        instances.retain(|r, _| !whole.contains(r));
        Targets { resources: Some(resources), instances }
    }

    /// The targets of a destroy: `addrs` and every object in `state` that
    /// depends on one of them, directly or not, by the dependencies the
    /// state records (the configuration may no longer have them).
    pub fn for_destroy(addrs: &[InstanceAddr], state: &State) -> Targets {
        if addrs.is_empty() {
            return Targets::default();
        }
        let (mut whole, mut instances) = split(addrs);
        let mut resources: BTreeSet<ResourceAddr> = addrs.iter().map(|a| a.resource.clone()).collect();
        loop {
            let dependents: Vec<ResourceAddr> = state
                .resources
                .iter()
                .filter(|i| {
                    !resources.contains(&i.addr.resource) && i.dependencies.iter().any(|d| resources.contains(d))
                })
                .map(|i| i.addr.resource.clone())
                .collect();
            if dependents.is_empty() {
                break;
            }
            whole.extend(dependents.iter().cloned());
            resources.extend(dependents);
        }
        instances.retain(|r, _| !whole.contains(r));
        Targets { resources: Some(resources), instances }
    }

    /// Whether no `-target` limits the run.
    pub fn everything(&self) -> bool {
        self.resources.is_none()
    }

    /// Whether the instance `addr` is planned.
    pub fn includes_instance(&self, addr: &InstanceAddr) -> bool {
        let Some(resources) = &self.resources else { return true };
        match self.instances.get(&addr.resource) {
            Some(keys) => keys.contains(&addr.key),
            None => resources.contains(&addr.resource),
        }
    }

    /// Whether a node of the configuration is planned: a resource when it
    /// is targeted, a local value, output or provider configuration when
    /// every resource it needs is.
    pub fn includes_node(&self, node: &Node, graph: &DependencyGraph) -> bool {
        let Some(resources) = &self.resources else { return true };
        match node {
            Node::Resource(addr) => resources.contains(addr),
            Node::Local(_) | Node::Output(_) | Node::Provider(_) => graph
                .resource_dependencies(node)
                .iter()
                .all(|r| resources.contains(r) && !self.instances.contains_key(r)),
        }
    }
}

/// The resources targeted whole, and the keys of those targeted by instance.
#[allow(clippy::type_complexity)]
fn split(addrs: &[InstanceAddr]) -> (BTreeSet<ResourceAddr>, BTreeMap<ResourceAddr, BTreeSet<Option<InstanceKey>>>) {
    let mut whole = BTreeSet::new();
    let mut instances: BTreeMap<ResourceAddr, BTreeSet<Option<InstanceKey>>> = BTreeMap::new();
    for addr in addrs {
        match &addr.key {
            None => {
                whole.insert(addr.resource.clone());
            }
            Some(key) => {
                instances.entry(addr.resource.clone()).or_default().insert(Some(key.clone()));
            }
        }
    }
    (whole, instances)
}
