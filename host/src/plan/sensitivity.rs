//! The sensitivity marks a plan carries from node to node: which parts of
//! each local and resource instance are sensitive, so that expressions
//! that read them are marked too (see [`config::marks`](crate::config::marks)),
//! and the check that a root output does not expose a sensitive value
//! without saying `sensitive = true`.

use std::collections::{BTreeMap, BTreeSet};

use crate::addr::{InstanceAddr, InstanceKey, ResourceAddr};
use crate::config::{self, Config, EvalContext, Output, Resource, Sensitivity};
use crate::diag::Diagnostic;
use crate::schema::Block;
use crate::value::{Path, PathStep, Value};

use super::ResourceChange;
use super::values::Expansion;

/// The marks found so far in a walk of the configuration.
#[derive(Debug, Default)]
pub struct Marks {
    /// The marks of each local value evaluated so far that has any.
    pub locals: BTreeMap<String, Vec<Path>>,
    /// The marks of each resource instance planned so far that has any,
    /// as references to it see them (the schema's sensitive attributes
    /// included).
    pub instances: BTreeMap<InstanceAddr, Vec<Path>>,
}

impl Marks {
    /// What is sensitive for an expression that reads `dependencies`, each
    /// expanded as `expansions` says.
    pub fn sensitivity(
        &self,
        sensitive_variables: &BTreeSet<String>,
        dependencies: &[ResourceAddr],
        expansion: impl Fn(&ResourceAddr) -> Option<Expansion>,
    ) -> Sensitivity {
        let resources = match self.instances.is_empty() {
            true => BTreeMap::new(),
            false => dependencies
                .iter()
                .map(|addr| (addr.clone(), self.resource_marks(addr, expansion(addr).as_ref())))
                .filter(|(_, marks)| !marks.is_empty())
                .collect(),
        };
        Sensitivity {
            variables: sensitive_variables.clone(),
            locals: self.locals.clone(),
            resources,
            ..Sensitivity::default()
        }
    }

    /// The marks of a resource's value: each instance's under its index or
    /// key, as the value of a `count` or `for_each` resource nests them.
    fn resource_marks(&self, addr: &ResourceAddr, expansion: Option<&Expansion>) -> Vec<Path> {
        let mut marks = Vec::new();
        for key in expansion.map(Expansion::instance_keys).unwrap_or_else(|| vec![None]) {
            let step = key.as_ref().map(|k| match k {
                InstanceKey::Int(i) => PathStep::Index(*i as u64),
                InstanceKey::String(s) => PathStep::Attr(s.clone()),
            });
            let instance = InstanceAddr { resource: addr.clone(), key };
            if let Some(own) = self.instances.get(&instance) {
                marks.extend(config::marks::under(step, own));
            }
        }
        marks
    }
}

/// What is sensitive for the instance `key` of `resource`: what is for
/// the resource block, and `each.value` as the `for_each` element marks it.
pub fn of_instance(ctx: &EvalContext, resource: &Resource, key: Option<&InstanceKey>) -> Sensitivity {
    let mut sensitivity = ctx.sensitivity.clone();
    if let (Some(for_each), Some(InstanceKey::String(k))) = (&resource.for_each, key) {
        sensitivity.each_value = config::marks::element(&config::marks(for_each, ctx), k);
    }
    sensitivity
}

/// The names of the input variables declared `sensitive = true`.
pub fn sensitive_variables(config: &Config) -> std::collections::BTreeSet<String> {
    config.variables.values().filter(|v| v.sensitive).map(|v| v.name.clone()).collect()
}

/// Adds the marks of an instance's configuration to its planned change,
/// so that a value copied from something sensitive is redacted wherever
/// the change or the object it makes is shown; returns the marks of the
/// instance's value that references to it see.
pub fn mark_instance(
    changes: &mut [ResourceChange],
    addr: &InstanceAddr,
    resource: &Resource,
    block: &Block,
    ctx: &EvalContext,
    value: &Value,
) -> Vec<Path> {
    let from_config = config::body_marks(&resource.body, ctx);
    let mut own = Vec::new();
    for change in changes.iter_mut().filter(|c| &c.addr == addr && c.deposed.is_none()) {
        let mut marks = config::conform(&from_config, &change.planned);
        marks.extend(change.sensitive.iter().cloned());
        // Copies the provider made, of the value now or as it was (the
        // prior object is shown beside the planned one).
        let mut secrets = config::marks::secrets(&change.config, &marks);
        secrets.extend(config::marks::secrets(&change.prior, &marks));
        marks.extend(config::marks::echoes(&change.planned, &secrets));
        marks.extend(config::marks::echoes(&change.prior, &secrets));
        marks.sort();
        marks.dedup();
        change.sensitive = marks;
        own.extend(change.sensitive.iter().cloned());
    }
    if own.is_empty() {
        own = from_config;
    }
    config::object_marks(value, block, &own)
}

/// Terraform's check on a root module output: one whose value is derived
/// from something sensitive must say `sensitive = true`.
pub fn check_output(output: &Output, ctx: &EvalContext) -> Result<(), Diagnostic> {
    if output.sensitive || config::marks(&output.expr, ctx).is_empty() {
        return Ok(());
    }
    Err(Diagnostic::error("Output refers to sensitive values")
        .with_detail(
            "To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, \
             cairn requires that any root module output containing sensitive data be explicitly marked as \
             sensitive, to confirm your intent.\n\nIf you do intend to export this data, annotate the output \
             value as sensitive by adding the following argument:\n    sensitive = true",
        )
        .at(&output.location))
}
