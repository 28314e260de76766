//! `lifecycle { replace_triggered_by = [...] }`: an object is replaced when
//! a resource it names is planned to be updated or replaced, or, for a
//! reference to an attribute (`local_file.a.content`), when that attribute
//! changes — the rules of Terraform's `EvaluateReplaceTriggeredBy`. A
//! create or a delete of the referenced object triggers nothing, and
//! neither does anything for an object that is being created itself.
//!
//! The references are dependencies in the graph, so the resources they
//! name are planned first; their changes are kept here for the resources
//! planned after them.

use std::collections::{BTreeMap, BTreeSet};

use crate::addr::{InstanceAddr, InstanceKey};
use crate::config::{self, Config, EvalContext, ReplaceTrigger, Resource};
use crate::diag::Diagnostic;
use crate::value::Value;

use super::{Action, ResourceChange};

/// The resources some `replace_triggered_by` refers to: only their changes
/// are kept.
pub(super) fn referenced(config: &Config) -> BTreeSet<crate::addr::ResourceAddr> {
    config.resources.iter().flat_map(|r| r.lifecycle.replace_triggered_by.iter().map(|t| t.resource.clone())).collect()
}

/// What was planned for one referenced instance.
#[derive(Debug, Clone)]
struct PlannedChange {
    action: Action,
    prior: Value,
    planned: Value,
}

/// The planned changes of the referenced resources' current objects.
#[derive(Debug, Default)]
pub(super) struct Changes(BTreeMap<InstanceAddr, PlannedChange>);

impl Changes {
    /// Keeps the changes of current objects among `changes`.
    pub fn record(&mut self, changes: &[ResourceChange]) {
        for c in changes.iter().filter(|c| c.deposed.is_none()) {
            let planned = PlannedChange { action: c.action, prior: c.prior.clone(), planned: c.planned.clone() };
            self.0.insert(c.addr.clone(), planned);
        }
    }

    /// The changes of the instances a trigger names: one, for a reference
    /// with a key or to a resource without count or for_each, or every
    /// instance of the resource.
    fn of(&self, trigger: &ReplaceTrigger, key: Option<&InstanceKey>) -> Vec<&PlannedChange> {
        match key {
            Some(key) => {
                let addr = InstanceAddr { resource: trigger.resource.clone(), key: Some(key.clone()) };
                self.0.get(&addr).into_iter().collect()
            }
            None => self.0.iter().filter(|(a, _)| a.resource == trigger.resource).map(|(_, p)| p).collect(),
        }
    }
}

/// The first of `resource`'s triggers that fires for the instance whose
/// `count.index`/`each` are in `ctx`, as the reference it resolved to.
pub(super) fn fired(
    resource: &Resource,
    ctx: &EvalContext,
    changes: &Changes,
) -> Result<Option<String>, Vec<Diagnostic>> {
    for trigger in &resource.lifecycle.replace_triggered_by {
        let key = match &trigger.key {
            Some(expr) => Some(instance_key(&config::eval(expr, ctx)?, trigger)?),
            None => None,
        };
        let planned = changes.of(trigger, key.as_ref());
        let changed = |p: &&PlannedChange| {
            // Only an update or a replace of an existing object: a create
            // or a delete changes values too, but triggers nothing.
            matches!(p.action, Action::Update | Action::Replace)
                && (trigger.path.is_root() || p.prior.at(&trigger.path) != p.planned.at(&trigger.path))
        };
        if planned.iter().any(changed) {
            let key = key.map(|k| InstanceAddr { resource: trigger.resource.clone(), key: Some(k) });
            let target = key.map_or_else(|| trigger.resource.to_string(), |a| a.to_string());
            let path = if trigger.path.is_root() { String::new() } else { trigger.path.to_string() };
            return Ok(Some(format!("{target}{path}")));
        }
    }
    Ok(None)
}

/// The instance key a trigger's index evaluated to.
fn instance_key(v: &Value, trigger: &ReplaceTrigger) -> Result<InstanceKey, Vec<Diagnostic>> {
    match v {
        Value::String(s) => Ok(InstanceKey::String(s.clone())),
        Value::Number(n) if n.as_i64().is_some_and(|i| i >= 0) => Ok(InstanceKey::Int(n.as_i64().unwrap_or_default())),
        _ => Err(vec![
            Diagnostic::error("Invalid replace_triggered_by expression")
                .with_detail(format!(
                    "The instance key of {} must be a whole number or a string, not {}.",
                    trigger.resource,
                    v.to_hcl()
                ))
                .at(&trigger.expr.location),
        ]),
    }
}
