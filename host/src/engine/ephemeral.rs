//! Ephemeral input variables and saved plans: a plan file never holds an
//! ephemeral variable's value, so applying it needs the value again, as
//! Terraform 1.10 does: `cairn apply -var pw=… plan.bin`. Only ephemeral
//! variables may be given then; every other variable keeps the value the
//! plan was made with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Result, bail};

use crate::config::{self, VariableInput};
use crate::diag::Diagnostic;
use crate::plan::{Plan, Providers};
use crate::value::Value;

use super::{Workspace, diagnostics, parse_config};

/// The variables of `values` that `config` declares ephemeral: what a
/// plan file must not hold.
pub fn ephemeral_names(config: &config::Config, values: &BTreeMap<String, Value>) -> BTreeSet<String> {
    values.keys().filter(|name| config.variables.get(*name).is_some_and(|v| v.ephemeral)).cloned().collect()
}

/// Nulls the write-only attributes of every change's configuration in
/// `plan`, before it is written to a plan file: a write-only value (often
/// an ephemeral one) is never stored. Applying evaluates each change's
/// configuration again, so nothing it needs is lost.
pub fn forget_write_only(plan: &mut Plan, providers: &Providers) {
    for change in &mut plan.changes {
        let Some(provider) = providers.get(&change.provider) else { continue };
        if let Some(schema) = provider.schema().of(&change.addr.resource) {
            change.config = crate::contract::null_write_only(&schema.block, &change.config);
        }
    }
}

impl Workspace {
    /// Loads the configuration in `dir` for applying a saved plan made with
    /// `saved` (its variables, without the ephemeral ones) while the
    /// ephemeral variables named in `set_at_plan` had values: those must
    /// be given again by `inputs` (or the environment); `inputs` may give
    /// no other variable.
    pub fn with_saved_variables(
        dir: &Path,
        saved: &BTreeMap<String, Value>,
        set_at_plan: &BTreeSet<String>,
        inputs: &[VariableInput],
        plan_file: &Path,
    ) -> Result<Workspace> {
        if set_at_plan.is_empty() && inputs.is_empty() {
            return Workspace::with_variables(dir, saved.clone());
        }
        let config = parse_config(dir)?;
        let env: Vec<(String, String)> = std::env::vars().collect();
        let given = config::given_names(&config, inputs, &[]);
        if let Some(name) = given.iter().find(|n| config.variables.get(*n).is_none_or(|v| !v.ephemeral)) {
            bail!(
                "cannot set variables when applying a saved plan: the plan {} was made with its own values, and \
                 applies with them (give -var and -var-file to `cairn plan -out` instead); only ephemeral \
                 variables are given again, and {name:?} is not one",
                plan_file.display()
            );
        }
        let given_anywhere = config::given_names(&config, inputs, &env);
        let missing: Vec<Diagnostic> = set_at_plan
            .iter()
            .filter(|name| !given_anywhere.contains(*name))
            .map(|name| {
                Diagnostic::error("No value for required variable").with_detail(format!(
                    "The ephemeral input variable \"{name}\" was set during the plan phase, and so must also be \
                     set during the apply phase."
                ))
            })
            .collect();
        if !missing.is_empty() {
            return Err(diagnostics(missing));
        }
        // The saved values first: nothing given now replaces them.
        let mut all: Vec<VariableInput> = saved
            .iter()
            .map(|(name, value)| VariableInput::Value {
                name: name.clone(),
                value: value.clone(),
                source: format!("the plan {}", plan_file.display()),
            })
            .collect();
        all.extend(inputs.iter().cloned());
        let resolved = config::resolve_variables(&config, &all, &env).map_err(diagnostics)?;
        let mut variables = resolved.values;
        // An ephemeral variable not set at plan keeps its default, as then.
        for (name, value) in saved {
            variables.insert(name.clone(), value.clone());
        }
        Workspace::with_variables(dir, variables)
    }
}
