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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use crate::addr::{InstanceAddr, InstanceKey, Mode, ResourceAddr};
use crate::config::{self, Config, EvalContext, Resource};
use crate::diag::{Diagnostic, Location};
use crate::graph::{DependencyGraph, Node};
use crate::provider::Provider;
use crate::schema::Schema;
use crate::state::{InstanceState, State};
use crate::value::{Path, Value};

pub use instance::{
    CheckedCallError, decode_prior, invalid_answer, invalid_plan_error, plan_checked, read_data_checked,
    replan_and_check, with_value_at,
};
pub use values::{Expansion, ResourceValues, instance_context};

/// The providers of a run by local name, configured and ready.
pub type Providers = BTreeMap<String, Arc<dyn Provider>>;

/// What will happen to one resource instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
#[derive(Debug, Clone, PartialEq)]
pub enum ReplaceReason {
    /// An earlier create failed part-way.
    Tainted,
    /// An earlier delete failed: the object is being destroyed.
    Destroying,
    /// These attributes cannot change in place.
    RequiresReplace(Vec<Path>),
}

/// The planned change of one resource instance.
#[derive(Debug, Clone)]
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
    pub prior_private: Vec<u8>,
    /// Private bytes from the plan.
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
    /// it (see [`crate::apply::graph::inherit_create_before_destroy`]).
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
#[derive(Debug, Clone)]
pub struct PlannedOutput {
    /// The new value; may be unknown.
    pub value: Value,
    /// The value in the current state, if any.
    pub prior: Option<Value>,
    /// Whether to hide it.
    pub sensitive: bool,
}

/// A notice about something that changed outside cairn, found by refresh.
#[derive(Debug, Clone)]
pub struct Drift {
    /// Which instance.
    pub addr: InstanceAddr,
    /// What was found.
    pub message: String,
}

/// Everything a run will do.
#[derive(Debug, Clone, Default)]
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

    /// The delete of one of an instance's deposed objects.
    pub fn deposed_change(&self, addr: &InstanceAddr, key: &str) -> Option<&ResourceChange> {
        self.changes.iter().find(|c| &c.addr == addr && c.deposed.as_deref() == Some(key))
    }
}

/// Options of one planning run.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    /// Plan to destroy everything in state.
    pub destroy: bool,
    /// Skip asking providers whether objects changed outside cairn.
    pub skip_refresh: bool,
}

/// Everything the planner reads.
pub struct Planner<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// Its dependency graph.
    pub graph: &'a DependencyGraph,
    /// Configured providers by local name.
    pub providers: &'a Providers,
    /// The current state.
    pub state: &'a State,
    /// Resolved input variables.
    pub variables: BTreeMap<String, Value>,
    /// Options.
    pub options: PlanOptions,
}

impl Planner<'_> {
    /// Plans the run. Errors are all the problems found, each saying where.
    pub fn plan(&self) -> Result<Plan, Vec<Diagnostic>> {
        let mut plan = Plan { destroy: self.options.destroy, ..Plan::default() };
        let mut errors = Vec::new();
        if self.options.destroy {
            plan.removed_outputs = self.state.outputs.keys().cloned().collect();
        } else {
            self.plan_configuration(&mut plan, &mut errors);
        }
        self.plan_orphans(&mut plan, &mut errors);
        self.plan_deposed(&mut plan, &mut errors);
        crate::apply::graph::inherit_create_before_destroy(&mut plan.changes);
        if errors.is_empty() { Ok(plan) } else { Err(errors) }
    }

    /// Walks the configuration's graph in dependency order.
    fn plan_configuration(&self, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let mut ctx = self.eval_context();
        let mut values = ResourceValues::default();
        let mut failed: BTreeSet<Node> = BTreeSet::new();
        for node in self.graph.topo_order() {
            if self.graph.dependencies(&node).iter().any(|d| failed.contains(d)) {
                failed.insert(node);
                continue;
            }
            let ok = match &node {
                Node::Local(name) => self.plan_local(name, &mut ctx, errors),
                Node::Output(name) => self.plan_output(name, &ctx, plan, errors),
                Node::Resource(addr) => {
                    let resource = self.config.resources.iter().find(|r| &r.addr == addr).expect("graph node");
                    self.plan_resource(resource, &node, &mut ctx, &mut values, plan, errors)
                }
            };
            if !ok {
                failed.insert(node);
            }
        }
        for name in self.state.outputs.keys() {
            if !self.config.outputs.contains_key(name) {
                plan.removed_outputs.push(name.clone());
            }
        }
    }

    /// The evaluation context with variables and nothing else yet.
    pub fn eval_context(&self) -> EvalContext {
        EvalContext { variables: self.variables.clone(), ..EvalContext::new(&self.config.dir) }
    }

    fn plan_local(&self, name: &str, ctx: &mut EvalContext, errors: &mut Vec<Diagnostic>) -> bool {
        match config::eval(&self.config.locals[name].expr, ctx) {
            Ok(v) => {
                ctx.locals.insert(name.to_string(), v);
                true
            }
            Err(d) => {
                errors.extend(d);
                false
            }
        }
    }

    fn plan_output(&self, name: &str, ctx: &EvalContext, plan: &mut Plan, errors: &mut Vec<Diagnostic>) -> bool {
        let output = &self.config.outputs[name];
        match config::eval(&output.expr, ctx) {
            Ok(value) => {
                let prior = self.state.outputs.get(name).and_then(|o| o.decode());
                plan.outputs.insert(name.to_string(), PlannedOutput { value, prior, sensitive: output.sensitive });
                true
            }
            Err(d) => {
                errors.extend(d);
                false
            }
        }
    }

    /// Plans every instance of one resource block and records its value
    /// for the resources after it.
    fn plan_resource(
        &self,
        resource: &Resource,
        node: &Node,
        ctx: &mut EvalContext,
        values: &mut ResourceValues,
        plan: &mut Plan,
        errors: &mut Vec<Diagnostic>,
    ) -> bool {
        let (provider, schema) = match self.provider_and_schema(resource) {
            Ok(found) => found,
            Err(d) => {
                errors.push(d);
                return false;
            }
        };
        let keys = match values::expand(resource, ctx) {
            Ok(keys) => keys,
            Err(d) => {
                errors.extend(d);
                return false;
            }
        };
        values.declare(&resource.addr, &keys);
        plan.expansions.insert(resource.addr.clone(), keys.clone());
        let dependencies = self.graph.resource_dependencies(node);
        let upstream_changes = dependencies
            .iter()
            .any(|d| plan.changes.iter().any(|c| &c.addr.resource == d && !matches!(c.action, Action::NoOp)));
        let mut ok = true;
        for key in keys.instance_keys() {
            let addr = InstanceAddr { resource: resource.addr.clone(), key: key.clone() };
            let mut inst_ctx = values::instance_context(ctx, &keys, key.as_ref());
            // What the body can reference: its dependencies (directly or
            // through locals, whose values are in the context already).
            inst_ctx.resources = values.snapshot_of(&dependencies);
            let planned = instance::InstancePlanner {
                provider: provider.as_ref(),
                schema,
                resource,
                addr: &addr,
                // Null attributes: only deposed objects are left.
                prior: self.state.get(&addr).filter(|i| !i.attributes.is_null()),
                dependencies: &dependencies,
                skip_refresh: self.options.skip_refresh,
            };
            let result = if resource.addr.mode == Mode::Data {
                planned.plan_data(&inst_ctx, upstream_changes, plan)
            } else {
                planned.plan_managed(&inst_ctx, plan)
            };
            match result {
                Ok(value) => values.set(&addr, value),
                Err(d) => {
                    errors.extend(d);
                    ok = false;
                }
            }
        }
        // Instances in state that the count or for_each no longer has.
        if resource.addr.mode == Mode::Managed {
            for inst in self.state.resources.iter().filter(|i| i.addr.resource == resource.addr) {
                if !keys.contains(inst.addr.key.as_ref()) {
                    self.plan_delete(inst, plan, errors);
                }
            }
        }
        // Locals, outputs and later count/for_each expressions see it now.
        ctx.resources.insert(resource.addr.clone(), values.resource_value(&resource.addr));
        ok
    }

    fn provider_and_schema<'p>(
        &'p self,
        resource: &Resource,
    ) -> Result<(&'p Arc<dyn Provider>, &'p Schema), Diagnostic> {
        let provider = self.providers.get(&resource.provider).ok_or_else(|| {
            Diagnostic::error(format!("Provider {:?} is not available", resource.provider)).at(&resource.location)
        })?;
        let schemas = match resource.addr.mode {
            Mode::Managed => &provider.schema().resources,
            Mode::Data => &provider.schema().data_sources,
        };
        let kind = if resource.addr.mode == Mode::Managed { "resource type" } else { "data source" };
        schemas.get(&resource.addr.type_name).map(|s| (provider, s)).ok_or_else(|| {
            let known: Vec<&str> = schemas.keys().map(String::as_str).collect();
            Diagnostic::error(format!("Provider {:?} has no {kind} {:?}", resource.provider, resource.addr.type_name))
                .at(&resource.location)
                .with_detail(format!(
                    "It offers: {}.",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ))
        })
    }

    /// Plans the deletion of everything in state that the configuration no
    /// longer declares (or everything, for destroy).
    fn plan_orphans(&self, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        for inst in &self.state.resources {
            let declared = !self.options.destroy && self.config.resources.iter().any(|r| r.addr == inst.addr.resource);
            if !declared && inst.addr.resource.mode == Mode::Managed {
                self.plan_delete(inst, plan, errors);
            }
        }
    }

    /// Plans the deletion of every deposed object in the state: old objects
    /// of create_before_destroy replacements whose delete has not succeeded.
    fn plan_deposed(&self, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
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
                match instance::decode_prior(provider.as_ref(), &object) {
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
                        dependencies: state_dependencies(inst),
                        prior_dependencies: state_dependencies(inst),
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

    fn plan_delete(&self, inst: &InstanceState, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
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
        match instance::decode_prior(provider.as_ref(), inst) {
            Ok(prior) => {
                let resource = self.config.resources.iter().find(|r| r.addr == inst.addr.resource);
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
                    dependencies: state_dependencies(inst),
                    prior_dependencies: state_dependencies(inst),
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

/// The resources an instance in state depended on when it was last applied.
pub fn state_dependencies(inst: &InstanceState) -> Vec<ResourceAddr> {
    inst.dependencies.iter().filter_map(|d| d.parse::<InstanceAddr>().ok()).map(|a| a.resource).collect()
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
