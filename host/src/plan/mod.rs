//! Planning: for every resource instance, decide create, update, replace,
//! delete, read or no-op, with the provider's help and under the host's
//! contract checks. The result is a [`Plan`], which `apply` carries out.
//!
//! The default behaviours follow `seeds/terraform-planning-behaviors.md`:
//! create what is configured but not in state, delete what is in state but
//! not configured, update what differs, replace what is tainted or what the
//! provider says cannot change in place, and read data sources as early as
//! their configuration is known.

mod instance;
mod values;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::addr::{InstanceAddr, InstanceKey, Mode, ResourceAddr};
use crate::config::{self, Config, EvalContext};
use crate::contract::Gate;
use crate::diag::{Diagnostic, Location};
use crate::graph::walk::{Limits, walk_limited};
use crate::graph::{DependencyGraph, Node};
use crate::provider::Provider;
use crate::state::{InstanceState, State};
use crate::value::{Path, Value};

pub use instance::{decode_prior, ignoring_changes, with_value_at};
pub use values::{Expansion, ResourceValues, instance_context};

/// The providers of a run by local name, configured and ready.
pub type Providers = BTreeMap<String, Arc<dyn Provider>>;

/// What will happen to one resource instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Action {
    /// Nothing: the object already matches.
    NoOp,
    /// A new object.
    Create,
    /// A data source read during apply, because its configuration is not
    /// known yet or something it depends on changes.
    Read,
    /// The object changes in place.
    Update,
    /// The object is destroyed and created anew.
    Replace,
    /// The object is destroyed.
    Delete,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::NoOp => "no-op",
            Action::Create => "create",
            Action::Read => "read",
            Action::Update => "update",
            Action::Replace => "replace",
            Action::Delete => "delete",
        })
    }
}

/// Why an object is replaced, for the plan output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ReplaceReason {
    /// An earlier create failed part-way.
    Tainted,
    /// An earlier delete failed: the object is being destroyed.
    Destroying,
    /// These attributes cannot change in place.
    RequiresReplace(Vec<Path>),
}

/// The planned change of one resource instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResourceChange {
    /// Which instance.
    pub addr: InstanceAddr,
    /// Paths the provider marked sensitive in `planned`, redacted in plan
    /// output like the schema's sensitive attributes.
    pub sensitive: Vec<crate::value::Path>,
    /// The local name of its provider.
    pub provider: String,
    /// What will happen.
    pub action: Action,
    /// The object as it is now (refreshed); null for a create.
    pub prior: Value,
    /// The object as planned; null for a delete. May contain unknowns.
    pub planned: Value,
    /// The configuration as evaluated at plan time; null for a delete.
    pub config: Value,
    /// Private bytes of the prior object.
    #[serde(with = "crate::state::base64_bytes")]
    pub prior_private: Vec<u8>,
    /// Private bytes from the plan.
    #[serde(with = "crate::state::base64_bytes")]
    pub planned_private: Vec<u8>,
    /// Why a replace is a replace.
    pub replace_reason: Option<ReplaceReason>,
    /// Resources the new object depends on (from the configuration; for a
    /// delete, from the state).
    pub dependencies: Vec<ResourceAddr>,
    /// Resources the existing object depended on when it was last applied
    /// (from the state): destroying it waits for their dependents' destroys
    /// and comes before their creates and updates.
    pub prior_dependencies: Vec<ResourceAddr>,
    /// Whether a replace creates the new object before destroying the old
    /// one: the resource's `lifecycle`, the state's record of it for an
    /// object no longer configured, or inherited from a dependent that has
    /// it (see [`inherit_create_before_destroy`]).
    pub create_before_destroy: bool,
    /// For the delete of a deposed object (an old object of an earlier
    /// create_before_destroy replacement whose delete has not succeeded
    /// yet): its key. `None` for a change of the current object.
    pub deposed: Option<String>,
    /// The schema version of the resource type.
    pub schema_version: u64,
    /// Where the resource is declared, when it is.
    pub location: Option<Location>,
}

/// The planned value of an output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlannedOutput {
    /// The new value; may be unknown.
    pub value: Value,
    /// The value in the current state, if any.
    pub prior: Option<Value>,
    /// Whether to hide it.
    pub sensitive: bool,
}

/// A notice about something that changed outside cairn, found by refresh.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drift {
    /// Which instance.
    pub addr: InstanceAddr,
    /// What was found.
    pub message: String,
}

/// Everything a run will do.
///
/// Serde-serialisable (by derive, so that every kind of change travels
/// without extra code) for saved plans (`engine::SavedPlan`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Plan {
    /// Every resource instance considered, including no-ops, in planning order.
    pub changes: Vec<ResourceChange>,
    /// Outputs after the change; `None` value means the output is removed.
    pub outputs: BTreeMap<String, PlannedOutput>,
    /// Outputs in the state that the configuration no longer declares.
    pub removed_outputs: Vec<String>,
    /// Changes found outside cairn.
    pub drift: Vec<Drift>,
    /// Warnings to show.
    pub warnings: Vec<Diagnostic>,
    /// Data source values read during planning, for apply's evaluation.
    pub data_values: BTreeMap<InstanceAddr, Value>,
    /// How each resource block expanded (count, for_each), for apply.
    pub expansions: BTreeMap<ResourceAddr, Expansion>,
    /// Whether this plan destroys everything.
    pub destroy: bool,
}

impl Plan {
    /// (to add, to change, to destroy), counting a replace as one add and one destroy.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for ch in &self.changes {
            match ch.action {
                Action::Create => c.0 += 1,
                Action::Update => c.1 += 1,
                Action::Replace => {
                    c.0 += 1;
                    c.2 += 1
                }
                Action::Delete => c.2 += 1,
                Action::NoOp | Action::Read => {}
            }
        }
        c
    }

    /// Whether applying would change any object or output.
    pub fn has_changes(&self) -> bool {
        self.changes.iter().any(|c| !matches!(c.action, Action::NoOp | Action::Read))
            || !self.removed_outputs.is_empty()
            || self.outputs.values().any(|o| o.prior.as_ref() != Some(&o.value))
    }

    /// The change of one instance's current object.
    pub fn change(&self, addr: &InstanceAddr) -> Option<&ResourceChange> {
        self.changes.iter().find(|c| &c.addr == addr && c.deposed.is_none())
    }

    /// Adds what `part`, planned apart, found.
    fn absorb(&mut self, part: Plan) {
        self.changes.extend(part.changes);
        self.outputs.extend(part.outputs);
        self.removed_outputs.extend(part.removed_outputs);
        self.drift.extend(part.drift);
        self.warnings.extend(part.warnings);
        self.data_values.extend(part.data_values);
        self.expansions.extend(part.expansions);
    }

    /// The delete of one of an instance's deposed objects.
    pub fn deposed_change(&self, addr: &InstanceAddr, key: &str) -> Option<&ResourceChange> {
        self.changes.iter().find(|c| &c.addr == addr && c.deposed.as_deref() == Some(key))
    }
}

/// Options of one planning run.
#[derive(Debug, Clone, Copy)]
pub struct PlanOptions {
    /// Plan to destroy everything in state.
    pub destroy: bool,
    /// Skip asking providers whether objects changed outside cairn.
    pub skip_refresh: bool,
    /// Most resource instances refreshed and planned at once
    /// (`-parallelism`); each provider's `max_concurrency` also holds.
    pub parallelism: usize,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        PlanOptions { destroy: false, skip_refresh: false, parallelism: 10 }
    }
}

/// Everything the planner reads, shared with the tasks that plan
/// instances in parallel.
pub struct Planner {
    /// The configuration.
    pub config: Arc<Config>,
    /// Its dependency graph.
    pub graph: Arc<DependencyGraph>,
    /// Configured providers by local name.
    pub providers: Providers,
    /// The current state.
    pub state: Arc<State>,
    /// Resolved input variables.
    pub variables: BTreeMap<String, Value>,
    /// Options.
    pub options: PlanOptions,
}

/// What the walk of the configuration has found so far, shared by the
/// tasks that plan its nodes.
#[derive(Default)]
struct Walked {
    /// Values of the locals evaluated so far.
    locals: BTreeMap<String, Value>,
    /// Values of the resource instances planned so far.
    values: ResourceValues,
    /// Resources with a change other than a no-op: a data source that
    /// depends on one is read during apply.
    changed: BTreeSet<ResourceAddr>,
    /// What each node added to the plan and its errors, by its position in
    /// the graph's stable topological order, so that the plan reads the
    /// same whatever order the tasks finished in.
    parts: BTreeMap<usize, (Plan, Vec<Diagnostic>)>,
}

/// A task's view of the walk.
struct Walk {
    planner: Arc<Planner>,
    walked: Mutex<Walked>,
    /// One permit per instance being refreshed and planned: `-parallelism`.
    slots: Semaphore,
    /// Each node's position in the stable topological order.
    position: BTreeMap<Node, usize>,
    /// Each resource block's position in the configuration.
    blocks: Arc<Blocks>,
}

/// The configuration's resource blocks by address, so that finding the
/// block of a graph node or of a state instance does not search them all
/// (which made planning quadratic in the number of blocks).
type Blocks = HashMap<ResourceAddr, usize>;

impl Planner {
    /// Plans the run: refreshes and plans every resource instance, as many
    /// at once as `-parallelism` allows, each as soon as what it depends on
    /// is planned. Errors are all the problems found, each saying where.
    pub async fn plan(self) -> Result<Plan, Vec<Diagnostic>> {
        let planner = Arc::new(self);
        let blocks: Arc<Blocks> =
            Arc::new(planner.config.resources.iter().enumerate().map(|(i, r)| (r.addr.clone(), i)).collect());
        let mut plan = Plan { destroy: planner.options.destroy, ..Plan::default() };
        let mut errors = Vec::new();
        if planner.options.destroy {
            plan.removed_outputs = planner.state.outputs.keys().cloned().collect();
        } else {
            Planner::plan_configuration(&planner, &blocks, &mut plan, &mut errors).await;
        }
        planner.plan_orphans(&blocks, &mut plan, &mut errors).await;
        planner.plan_deposed(&mut plan, &mut errors).await;
        inherit_create_before_destroy(&mut plan.changes);
        if errors.is_empty() { Ok(plan) } else { Err(errors) }
    }

    /// Walks the configuration's graph: every node once what it depends on
    /// is done, independent ones at the same time.
    async fn plan_configuration(
        planner: &Arc<Planner>,
        blocks: &Arc<Blocks>,
        plan: &mut Plan,
        errors: &mut Vec<Diagnostic>,
    ) {
        let position = planner.graph.topo_order().into_iter().enumerate().map(|(i, n)| (n, i)).collect();
        let walk = Arc::new(Walk {
            planner: Arc::clone(planner),
            walked: Mutex::new(Walked::default()),
            slots: Semaphore::new(planner.options.parallelism.clamp(1, Semaphore::MAX_PERMITS)),
            position,
            blocks: Arc::clone(blocks),
        });
        let limits = Limits { parallelism: planner.options.parallelism, per_group: BTreeMap::new() };
        let task = Arc::clone(&walk);
        walk_limited(
            planner.graph.petgraph(),
            &limits,
            |_| None,
            move |node| {
                let walk = Arc::clone(&task);
                async move { walk.plan_node(node).await }
            },
        )
        .await;
        let walked = std::mem::take(&mut *walk.walked.lock().unwrap_or_else(PoisonError::into_inner));
        for (part, part_errors) in walked.parts.into_values() {
            plan.absorb(part);
            errors.extend(part_errors);
        }
        for name in planner.state.outputs.keys() {
            if !planner.config.outputs.contains_key(name) {
                plan.removed_outputs.push(name.clone());
            }
        }
    }

    /// The evaluation context with variables and nothing else yet.
    pub fn eval_context(&self) -> EvalContext {
        EvalContext { variables: self.variables.clone(), ..EvalContext::new(&self.config.dir) }
    }

    /// Plans the deletion of everything in state that the configuration no
    /// longer declares (or everything, for destroy).
    async fn plan_orphans(&self, blocks: &Blocks, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        for inst in &self.state.resources {
            let declared = !self.options.destroy && blocks.contains_key(&inst.addr.resource);
            if !declared && inst.addr.resource.mode == Mode::Managed {
                self.plan_delete(inst, blocks, plan, errors).await;
            }
        }
    }

    /// Plans the deletion of every deposed object in the state: old objects
    /// of create_before_destroy replacements whose delete has not succeeded.
    async fn plan_deposed(&self, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        for inst in self.state.resources.iter().filter(|i| !i.deposed.is_empty()) {
            let Some(provider) = self.providers.get(&inst.provider) else {
                errors.push(Diagnostic::error(format!(
                    "Provider {:?} is needed to destroy deposed objects of {}, but it is not available",
                    inst.provider, inst.addr
                )));
                continue;
            };
            for d in &inst.deposed {
                let object = InstanceState {
                    attributes: d.attributes.clone(),
                    private: d.private.clone(),
                    deposed: Vec::new(),
                    ..inst.clone()
                };
                match instance::decode_prior(Gate::new(provider.as_ref()), &object).await {
                    Ok(prior) => plan.changes.push(ResourceChange {
                        sensitive: Vec::new(),
                        addr: inst.addr.clone(),
                        provider: inst.provider.clone(),
                        action: Action::Delete,
                        prior,
                        planned: Value::Null,
                        config: Value::Null,
                        prior_private: d.private.clone(),
                        planned_private: Vec::new(),
                        replace_reason: None,
                        dependencies: inst.dependencies.clone(),
                        prior_dependencies: inst.dependencies.clone(),
                        create_before_destroy: true,
                        deposed: Some(d.key.clone()),
                        schema_version: inst.schema_version,
                        location: None,
                    }),
                    Err(e) => errors.push(e),
                }
            }
        }
    }

    async fn plan_delete(&self, inst: &InstanceState, blocks: &Blocks, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        if inst.attributes.is_null() {
            // No current object: only deposed ones, planned apart.
            return;
        }
        let Some(provider) = self.providers.get(&inst.provider) else {
            errors.push(Diagnostic::error(format!(
                "Provider {:?} is needed to destroy {}, but it is not available",
                inst.provider, inst.addr
            )));
            return;
        };
        match instance::decode_prior(Gate::new(provider.as_ref()), inst).await {
            Ok(prior) => {
                let resource = blocks.get(&inst.addr.resource).map(|i| &self.config.resources[*i]);
                if let Some(r) = resource.filter(|r| r.lifecycle.prevent_destroy) {
                    errors.push(instance::prevent_destroy_error(&inst.addr, &r.location));
                    return;
                }
                plan.changes.push(ResourceChange {
                    sensitive: Vec::new(),
                    addr: inst.addr.clone(),
                    provider: inst.provider.clone(),
                    action: Action::Delete,
                    prior,
                    planned: Value::Null,
                    config: Value::Null,
                    prior_private: inst.private.clone(),
                    planned_private: Vec::new(),
                    // Not a replace: for the plan output, a delete retried.
                    replace_reason: (inst.status == crate::state::InstanceStatus::Destroying)
                        .then_some(ReplaceReason::Destroying),
                    dependencies: inst.dependencies.clone(),
                    prior_dependencies: inst.dependencies.clone(),
                    create_before_destroy: inst.create_before_destroy,
                    deposed: None,
                    schema_version: inst.schema_version,
                    location: resource.map(|r| r.location.clone()),
                })
            }
            Err(d) => errors.push(d),
        }
    }
}

impl Walk {
    fn walked(&self) -> std::sync::MutexGuard<'_, Walked> {
        self.walked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Plans one node of the configuration; records what it adds to the
    /// plan under its position. Returns whether it succeeded (dependents of
    /// a failed node are not planned: their errors would only repeat it).
    async fn plan_node(&self, node: Node) -> bool {
        let mut part = Plan::default();
        let mut errors = Vec::new();
        match &node {
            Node::Local(name) => self.plan_local(name, &node, &mut errors),
            Node::Output(name) => self.plan_output(name, &node, &mut part, &mut errors),
            Node::Resource(addr) => self.plan_resource(addr, &node, &mut part, &mut errors).await,
        }
        let ok = errors.is_empty();
        let at = self.position[&node];
        self.walked().parts.insert(at, (part, errors));
        ok
    }

    /// The evaluation context of `node`: variables, the locals so far and
    /// the values of the resources it depends on (only those: copying every
    /// resource's value for every node would make planning quadratic).
    fn context_of(&self, node: &Node) -> (EvalContext, Vec<ResourceAddr>) {
        let dependencies = self.planner.graph.resource_dependencies(node);
        let walked = self.walked();
        let ctx = EvalContext {
            locals: walked.locals.clone(),
            resources: walked.values.snapshot_of(&dependencies),
            ..self.planner.eval_context()
        };
        (ctx, dependencies)
    }

    fn plan_local(&self, name: &str, node: &Node, errors: &mut Vec<Diagnostic>) {
        let (ctx, _) = self.context_of(node);
        match config::eval(&self.planner.config.locals[name].expr, &ctx) {
            Ok(v) => {
                self.walked().locals.insert(name.to_string(), v);
            }
            Err(d) => errors.extend(d),
        }
    }

    fn plan_output(&self, name: &str, node: &Node, part: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let output = &self.planner.config.outputs[name];
        let (ctx, _) = self.context_of(node);
        match config::eval(&output.expr, &ctx) {
            Ok(value) => {
                let prior = self.planner.state.outputs.get(name).and_then(|o| o.decode());
                part.outputs.insert(name.to_string(), PlannedOutput { value, prior, sensitive: output.sensitive });
            }
            Err(d) => errors.extend(d),
        }
    }

    /// Plans every instance of one resource block, at the same time, and
    /// records their values for the nodes after it.
    async fn plan_resource(&self, addr: &ResourceAddr, node: &Node, part: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let planner = &self.planner;
        let resource = &planner.config.resources[self.blocks[addr]];
        let provider = match planner.providers.get(&resource.provider) {
            Some(p) => p,
            None => {
                let d = Diagnostic::error(format!("Provider {:?} is not available", resource.provider));
                return errors.push(d.at(&resource.location));
            }
        };
        let schema = match Gate::new(provider.as_ref()).schema_of(addr) {
            Ok(schema) => schema,
            Err(d) => return errors.push(d.at(&resource.location)),
        };
        let (ctx, dependencies) = self.context_of(node);
        let keys = match values::expand(resource, &ctx) {
            Ok(keys) => keys,
            Err(d) => return errors.extend(d),
        };
        let upstream_changes = {
            let mut walked = self.walked();
            walked.values.declare(addr, &keys);
            dependencies.iter().any(|d| walked.changed.contains(d))
        };
        part.expansions.insert(addr.clone(), keys.clone());
        let instances = keys.instance_keys().into_iter().map(|key| {
            let inst_ctx =
                EvalContext { resources: ctx.resources.clone(), ..values::instance_context(&ctx, &keys, key.as_ref()) };
            let addr = InstanceAddr { resource: addr.clone(), key };
            let dependencies = &dependencies;
            async move {
                let _slot = self.slots.acquire().await.expect("the semaphore is never closed");
                let planner = instance::InstancePlanner {
                    gate: Gate::new(provider.as_ref()),
                    schema,
                    resource,
                    addr: &addr,
                    // Null attributes: only deposed objects are left.
                    prior: self.planner.state.get(&addr).filter(|i| !i.attributes.is_null()),
                    dependencies,
                    skip_refresh: self.planner.options.skip_refresh,
                };
                let mut own = Plan::default();
                let result = if resource.addr.mode == Mode::Data {
                    planner.plan_data(&inst_ctx, upstream_changes, &mut own).await
                } else {
                    planner.plan_managed(&inst_ctx, &mut own).await
                };
                (addr, result, own)
            }
        });
        // The instances share their node's task: their provider calls wait
        // without a thread, and the instance slots bound how many run.
        let planned = join_all(instances).await;
        {
            let mut walked = self.walked();
            for (addr, result, own) in planned {
                part.absorb(own);
                match result {
                    Ok(value) => walked.values.set(&addr, value),
                    Err(d) => errors.extend(d),
                }
            }
        }
        // Instances in state that the count or for_each no longer has.
        if addr.mode == Mode::Managed {
            for inst in planner.state.resources.of_resource(addr) {
                if !keys.contains(inst.addr.key.as_ref()) {
                    planner.plan_delete(inst, &self.blocks, part, errors).await;
                }
            }
        }
        // After the deletes: a data source that depends on a block losing
        // an instance is read during apply too.
        if part.changes.iter().any(|c| c.action != Action::NoOp) {
            self.walked().changed.insert(addr.clone());
        }
    }
}

/// Marks create_before_destroy on every change of a resource that a
/// resource with create_before_destroy depends on, directly or not, by
/// configuration or by the state: the seed's "forced create before
/// destroy", without which rule 5 would make a cycle.
pub fn inherit_create_before_destroy(changes: &mut [ResourceChange]) {
    let mut deps: BTreeMap<&ResourceAddr, BTreeSet<&ResourceAddr>> = BTreeMap::new();
    let mut todo: Vec<&ResourceAddr> = Vec::new();
    for c in changes.iter() {
        deps.entry(&c.addr.resource).or_default().extend(c.dependencies.iter().chain(&c.prior_dependencies));
        if c.create_before_destroy && c.deposed.is_none() {
            todo.push(&c.addr.resource);
        }
    }
    let mut forced: BTreeSet<ResourceAddr> = BTreeSet::new();
    while let Some(r) = todo.pop() {
        for d in deps.get(r).into_iter().flatten() {
            if forced.insert((*d).clone()) {
                todo.push(d);
            }
        }
    }
    for c in changes.iter_mut() {
        if forced.contains(&c.addr.resource) && c.addr.resource.mode == Mode::Managed {
            c.create_before_destroy = true;
        }
    }
}

/// The instance key of an address as a value for `count.index`/`each.key`.
pub fn key_value(key: &InstanceKey) -> Value {
    match key {
        InstanceKey::Int(i) => Value::int(*i),
        InstanceKey::String(s) => Value::string(s.clone()),
    }
}

#[cfg(test)]
mod tests;
