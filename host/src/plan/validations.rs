//! Variable validations that refer to local values, resources or data
//! sources (Terraform 1.9): they cannot be checked when the variables are
//! decided, so they are checked once the plan has those values, and again
//! after the apply when the plan could not decide them (an unknown value).
//! A failure is an error, "Invalid value for variable", as when the
//! variables are decided.

use std::collections::BTreeMap;

use crate::addr::ResourceAddr;
use crate::config::{self, Config, EvalContext};
use crate::diag::Diagnostic;
use crate::value::Value;

use super::{ResourceValues, locals_of, sensitivity};

/// The failures of the root module's deferred validation rules, with the
/// values known now: `variables`, `locals` and `values`. A rule whose
/// result is not known yet passes for now.
pub fn deferred_validations(
    config: &Config,
    variables: &BTreeMap<String, Value>,
    locals: &BTreeMap<String, Value>,
    values: &mut ResourceValues,
) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for variable in config.variables.values() {
        for rule in variable.validations.iter().filter(|r| r.refers_beyond_variables()) {
            let references: Vec<config::Reference> =
                [&rule.condition, &rule.error_message].iter().flat_map(|e| e.references()).map(|(r, _)| r).collect();
            let resources: Vec<ResourceAddr> = references
                .iter()
                .filter_map(|r| match r {
                    config::Reference::Resource(addr) => Some(addr.clone()),
                    _ => None,
                })
                .collect();
            let local_names: Vec<String> = references
                .iter()
                .filter_map(|r| match r {
                    config::Reference::Local(name) => Some(name.clone()),
                    _ => None,
                })
                .collect();
            let ctx = EvalContext {
                variables: variables.clone(),
                locals: locals_of(&local_names, locals),
                resources: values.snapshot_of(&resources),
                sensitivity: config::Sensitivity {
                    variables: sensitivity::sensitive_variables(config),
                    ..Default::default()
                },
                ..EvalContext::new(&config.dir)
            };
            errors.extend(config::check_deferred_validation(variable, rule, &ctx));
        }
    }
    errors.extend(module_validations(config, locals, values));
    errors
}

/// The failures of the module variables' validations that refer to other
/// objects of their module: their references are the flat configuration's
/// locals (the module's variables and locals) and resources.
fn module_validations(
    config: &Config,
    locals: &BTreeMap<String, Value>,
    values: &mut ResourceValues,
) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for validation in &config.module_validations {
        let rule = &validation.rule;
        let references: Vec<config::Reference> =
            [&rule.condition, &rule.error_message].iter().flat_map(|e| e.references()).map(|(r, _)| r).collect();
        let mut resources = Vec::new();
        let mut local_names = Vec::new();
        for reference in references {
            match reference {
                config::Reference::Resource(addr) => resources.push(addr),
                config::Reference::Local(name) => local_names.push(name),
                _ => {}
            }
        }
        let ctx = EvalContext {
            locals: locals_of(&local_names, locals),
            resources: values.snapshot_of(&resources),
            ..EvalContext::new(&config.dir)
        };
        errors.extend(config::check_module_validation(validation, &ctx));
    }
    errors
}
