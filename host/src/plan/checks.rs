//! Checking the configuration's `check` blocks, after a plan and after an
//! apply, as Terraform does: each check reads its scoped data sources,
//! then evaluates its assertions. Everything a check finds is a warning,
//! never an error: a failed assertion, a data source that cannot be read,
//! an assertion that cannot be evaluated.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::addr::ResourceAddr;
use crate::config::{self, Check, ConditionKind, Config, EvalContext, Verdict};
use crate::contract::{Gate, located};
use crate::diag::{Diagnostic, Severity};
use crate::value::Value;

use super::{Providers, ResourceValues, locals_of, read_completed, read_started, sensitivity};
use crate::engine::Event;

/// When checks are checked, which decides what an unknown result says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPhase {
    /// After the plan: an assertion on values known only after apply is
    /// reported as such.
    Plan,
    /// After the apply: everything the apply made is known.
    Apply,
}

/// The warnings of every `check` block of `config`, in file order, with
/// the values known now: `variables`, `locals` and `values`. Each read of
/// a check's data source goes to `report` as it starts and ends, as
/// Terraform says it (`Reading...`, `Read complete after Ns`).
pub async fn check_blocks(
    config: &Config,
    providers: &Providers,
    variables: &BTreeMap<String, Value>,
    locals: &BTreeMap<String, Value>,
    values: &mut ResourceValues,
    phase: CheckPhase,
    report: &(dyn Fn(Event) + Sync),
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for check in &config.checks {
        let references = check.references();
        let resources: Vec<ResourceAddr> = references
            .iter()
            .filter_map(|(r, _)| match r {
                config::Reference::Resource(addr) => Some(addr.clone()),
                _ => None,
            })
            .collect();
        let local_names: Vec<String> = references
            .iter()
            .filter_map(|(r, _)| match r {
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
            phase: match phase {
                CheckPhase::Plan => config::Phase::Plan,
                CheckPhase::Apply => config::Phase::Apply,
            },
            ..EvalContext::new(&config.dir)
        };
        warnings.extend(check_one(check, providers, ctx, phase, report).await);
    }
    warnings
}

/// The warnings of one check in `ctx`.
async fn check_one(
    check: &Check,
    providers: &Providers,
    mut ctx: EvalContext,
    phase: CheckPhase,
    report: &(dyn Fn(Event) + Sync),
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for data in &check.data {
        match read_scoped(data, providers, &ctx, report).await {
            Ok((value, read_warnings)) => {
                warnings.extend(read_warnings);
                ctx.resources.insert(data.addr.clone(), Arc::new(value));
            }
            // The check has failed: its assertions would only repeat it.
            Err(errors) => {
                warnings.extend(errors.into_iter().map(as_warning));
                return warnings;
            }
        }
    }
    for assert in &check.asserts {
        match config::evaluate_condition(assert, ConditionKind::CheckAssertion, &ctx, &[]) {
            Ok(Verdict::Passed) => {}
            Ok(Verdict::Failed(warning)) => warnings.push(warning),
            // A check with data sources reads them again at apply, where
            // its assertions are decided: Terraform says nothing now.
            Ok(Verdict::Unknown) if phase == CheckPhase::Plan && check.data.is_empty() => {
                warnings.push(known_after_apply(assert));
            }
            Ok(Verdict::Unknown) => {}
            Err(errors) => warnings.extend(errors.into_iter().map(as_warning)),
        }
    }
    warnings
}

/// Reads a check's data source in `ctx`: its value (unknown when its
/// configuration is not known yet) and the provider's warnings.
async fn read_scoped(
    data: &config::Resource,
    providers: &Providers,
    ctx: &EvalContext,
    report: &(dyn Fn(Event) + Sync),
) -> Result<(Value, Vec<Diagnostic>), Vec<Diagnostic>> {
    let Some(provider) = providers.get(&data.provider) else {
        return Err(vec![
            Diagnostic::error(format!("Provider {:?} is not available", data.provider)).at(&data.location),
        ]);
    };
    let gate = Gate::new(provider.as_ref());
    let schema = gate.schema_of(&data.addr).map_err(|d| vec![d.at(&data.location)])?;
    let config = config::decode_body(&data.body, &schema.block, ctx)?;
    if !config.is_wholly_known() {
        return Ok((Value::unknown(), Vec::new()));
    }
    let addr = data.addr.instance();
    let started = std::time::Instant::now();
    report(read_started(&addr));
    let (value, warnings) = gate
        .read_data(schema, &addr, &config)
        .await
        .map_err(|e| super::at_attributes_in(&data.body, e.into_diagnostics(&data.location)))?;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report(read_completed(&addr, elapsed_ms, &value));
    let warnings = warnings.into_iter().map(|w| located(w, &addr, &data.location)).collect();
    Ok((value, super::at_attributes_in(&data.body, warnings)))
}

/// The warning for an assertion whose result is known only after apply,
/// in Terraform's words.
fn known_after_apply(assert: &config::Condition) -> Diagnostic {
    Diagnostic::warning("Check block assertion known after apply")
        .with_detail(
            "The condition could not be evaluated at this time, a result will be known when this plan is applied.",
        )
        .at(&assert.condition.location)
}

/// `d` as a warning: nothing a check finds fails a run.
fn as_warning(d: Diagnostic) -> Diagnostic {
    Diagnostic { severity: Severity::Warning, ..d }
}
