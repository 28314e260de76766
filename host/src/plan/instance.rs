//! Planning one resource instance: read its prior state, refresh it, ask
//! the provider for a plan, check the answer against the contract and
//! decide the action.

use crate::addr::InstanceAddr;
use crate::config::{self, EvalContext, Resource};
use crate::contract::{self, Violation};
use crate::diag::{Diagnostic, Location};
use crate::provider::{CallError, PlanRequest, PlanResponse, Provider};
use crate::schema::Schema;
use crate::state::{InstanceState, InstanceStatus};
use crate::value::{self, Path, PathStep, Value};

use super::{Action, Drift, Plan, ReplaceReason, ResourceChange};

/// The sentence every contract violation ends with.
const PROVIDER_BUG: &str = "This is a bug in the provider, which should be reported to its authors. \
     Nothing from this answer was recorded in the state.";

/// Plans one instance of a resource block.
pub(super) struct InstancePlanner<'a> {
    pub provider: &'a dyn Provider,
    pub schema: &'a Schema,
    pub resource: &'a Resource,
    pub addr: &'a InstanceAddr,
    pub prior: Option<&'a InstanceState>,
    pub dependencies: &'a [crate::addr::ResourceAddr],
    pub skip_refresh: bool,
}

impl InstancePlanner<'_> {
    /// Plans a managed instance; returns the value references to it see.
    pub fn plan_managed(&self, ctx: &EvalContext, plan: &mut Plan) -> Result<Value, Vec<Diagnostic>> {
        let mut config = config::decode_body(&self.resource.body, &self.schema.block, ctx)?;
        let (mut prior, mut prior_private, status) = match self.prior {
            None => (Value::Null, Vec::new(), InstanceStatus::Ready),
            Some(inst) => (decode_prior(self.provider, inst).map_err(|d| vec![d])?, inst.private.clone(), inst.status),
        };
        if !prior.is_null() && !self.skip_refresh {
            (prior, prior_private) = self.refresh(prior, prior_private, plan)?;
        }
        if !prior.is_null() {
            for path in &self.resource.lifecycle.ignore_changes {
                config = with_value_at(&config, path.steps(), prior.at(path));
            }
        }
        self.validate(&config, plan)?;
        let mut response = self.call_plan(&prior, &config, &prior_private, plan)?;
        let (action, reason) = self.decide(&prior, status, &response);
        if action == Action::Replace {
            if self.resource.lifecycle.prevent_destroy {
                return Err(vec![prevent_destroy_error(self.addr, &self.resource.location)]);
            }
            // The replacement is a create: plan it as one, so that computed
            // values show as unknown rather than as the old object's.
            response = self.call_plan(&Value::Null, &config, &[], plan)?;
        }
        let value = response.planned_state.clone();
        plan.changes.push(ResourceChange {
            sensitive: response.sensitive,
            addr: self.addr.clone(),
            provider: self.provider.name().to_string(),
            action,
            prior,
            planned: response.planned_state,
            config,
            prior_private,
            planned_private: response.planned_private,
            replace_reason: reason,
            dependencies: self.dependencies.to_vec(),
            prior_dependencies: self.prior.map(super::state_dependencies).unwrap_or_default(),
            create_before_destroy: self.resource.lifecycle.create_before_destroy,
            deposed: None,
            schema_version: self.schema.version,
            location: Some(self.resource.location.clone()),
        });
        Ok(value)
    }

    /// Chooses the action from the prior state and the provider's plan.
    fn decide(
        &self,
        prior: &Value,
        status: InstanceStatus,
        response: &PlanResponse,
    ) -> (Action, Option<ReplaceReason>) {
        if prior.is_null() {
            return (Action::Create, None);
        }
        match status {
            InstanceStatus::Tainted => return (Action::Replace, Some(ReplaceReason::Tainted)),
            InstanceStatus::Destroying => return (Action::Replace, Some(ReplaceReason::Destroying)),
            InstanceStatus::Ready => {}
        }
        let forcing: Vec<Path> =
            response.requires_replace.iter().filter(|p| prior.at(p) != response.planned_state.at(p)).cloned().collect();
        if !forcing.is_empty() {
            (Action::Replace, Some(ReplaceReason::RequiresReplace(forcing)))
        } else if &response.planned_state == prior {
            (Action::NoOp, None)
        } else {
            (Action::Update, None)
        }
    }

    /// Asks the provider whether the object changed outside cairn.
    fn refresh(&self, prior: Value, private: Vec<u8>, plan: &mut Plan) -> Result<(Value, Vec<u8>), Vec<Diagnostic>> {
        let type_name = &self.addr.resource.type_name;
        let response = self.provider.read_resource(type_name, &prior, &private).map_err(|e| self.call_failed(e))?;
        self.provider_diagnostics(response.diagnostics, plan)?;
        match response.new_state {
            None => {
                plan.drift.push(Drift { addr: self.addr.clone(), message: "has been deleted outside of cairn".into() });
                Ok((Value::Null, Vec::new()))
            }
            Some(current) => {
                let current = contract::null_write_only(&self.schema.block, &current);
                if let Err(e) = self.schema.block.implied_type().check(&current) {
                    let v = Violation { path: e.path, message: e.message, rule: contract::RULE_TYPE };
                    return Err(vec![invalid_answer(
                        self.provider.name(),
                        self.addr,
                        "an invalid refreshed state",
                        &[v],
                    )]);
                }
                if current != prior {
                    plan.drift.push(Drift { addr: self.addr.clone(), message: "has changed outside of cairn".into() });
                }
                Ok((current, response.private))
            }
        }
    }

    fn validate(&self, config: &Value, plan: &mut Plan) -> Result<(), Vec<Diagnostic>> {
        let diags =
            self.provider.validate_resource(&self.addr.resource.type_name, config).map_err(|e| self.call_failed(e))?;
        self.provider_diagnostics(diags, plan)
    }

    /// Calls plan and checks the answer against the contract.
    fn call_plan(
        &self,
        prior: &Value,
        config: &Value,
        private: &[u8],
        plan: &mut Plan,
    ) -> Result<PlanResponse, Vec<Diagnostic>> {
        let response = plan_checked(self.provider, self.schema, self.addr, prior, config, private)
            .map_err(|e| e.into_diagnostics(&self.resource.location))?;
        self.provider_diagnostics(response.diagnostics.clone(), plan)?;
        Ok(response)
    }

    /// Keeps warnings for the plan; errors fail the instance, located at the resource.
    fn provider_diagnostics(&self, diags: Vec<Diagnostic>, plan: &mut Plan) -> Result<(), Vec<Diagnostic>> {
        let (errors, warnings): (Vec<_>, Vec<_>) =
            diags.into_iter().map(|d| located(d, self.addr, &self.resource.location)).partition(Diagnostic::is_error);
        plan.warnings.extend(warnings);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }

    fn call_failed(&self, e: CallError) -> Vec<Diagnostic> {
        vec![call_failed(self.addr, &e).at(&self.resource.location)]
    }

    /// Plans a data source: read now when its configuration is known and
    /// nothing it depends on changes; otherwise defer the read to apply.
    pub fn plan_data(
        &self,
        ctx: &EvalContext,
        upstream_changes: bool,
        plan: &mut Plan,
    ) -> Result<Value, Vec<Diagnostic>> {
        let config = config::decode_body(&self.resource.body, &self.schema.block, ctx)?;
        if config.is_wholly_known() && !upstream_changes {
            let state = read_data_checked(self.provider, self.schema, self.addr, &config)
                .map_err(|e| e.into_diagnostics(&self.resource.location))?;
            plan.data_values.insert(self.addr.clone(), state.clone());
            return Ok(state);
        }
        let planned = unknown_computed(&self.schema.block, &config);
        plan.changes.push(ResourceChange {
            sensitive: Vec::new(),
            addr: self.addr.clone(),
            provider: self.provider.name().to_string(),
            action: Action::Read,
            prior: Value::Null,
            planned: planned.clone(),
            config,
            prior_private: Vec::new(),
            planned_private: Vec::new(),
            replace_reason: None,
            dependencies: self.dependencies.to_vec(),
            prior_dependencies: Vec::new(),
            create_before_destroy: false,
            deposed: None,
            schema_version: self.schema.version,
            location: Some(self.resource.location.clone()),
        });
        Ok(planned)
    }
}

/// Why a checked provider call failed.
pub enum CheckedCallError {
    /// The call itself failed (trap, timeout).
    Call(InstanceAddr, Box<CallError>),
    /// The provider reported errors.
    Reported(InstanceAddr, Vec<Diagnostic>),
    /// The answer broke the contract.
    Contract(Diagnostic),
}

impl CheckedCallError {
    /// The diagnostics to show, located at the resource's declaration.
    pub fn into_diagnostics(self, location: &Location) -> Vec<Diagnostic> {
        match self {
            CheckedCallError::Call(addr, e) => vec![call_failed(&addr, &e).at(location)],
            CheckedCallError::Reported(addr, diags) => diags.into_iter().map(|d| located(d, &addr, location)).collect(),
            CheckedCallError::Contract(d) => vec![d.at(location)],
        }
    }
}

/// The error of a provider call for `addr` that failed: what happened in
/// one line, the provider's last words (if any) as the detail.
fn call_failed(addr: &InstanceAddr, e: &CallError) -> Diagnostic {
    Diagnostic::error(e.about(addr)).with_detail(e.detail.clone())
}

/// Calls `plan_resource` with the proposed new state and checks the answer:
/// shared by planning and by the re-plan at apply time. Provider error
/// diagnostics fail the call; warnings stay in the response.
pub fn plan_checked(
    provider: &dyn Provider,
    schema: &Schema,
    addr: &InstanceAddr,
    prior: &Value,
    config: &Value,
    private: &[u8],
) -> Result<PlanResponse, CheckedCallError> {
    let request = PlanRequest {
        type_name: addr.resource.type_name.clone(),
        prior_state: prior.clone(),
        proposed_new_state: contract::proposed_new(&schema.block, prior, config),
        config: config.clone(),
        prior_private: private.to_vec(),
    };
    let response = provider.plan_resource(request).map_err(|e| CheckedCallError::Call(addr.clone(), Box::new(e)))?;
    if response.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(CheckedCallError::Reported(addr.clone(), response.diagnostics));
    }
    let violations =
        contract::check_plan_marked(&schema.block, prior, config, &response.planned_state, &response.sensitive);
    if !violations.is_empty() {
        return Err(CheckedCallError::Contract(invalid_answer(provider.name(), addr, "an invalid plan", &violations)));
    }
    Ok(response)
}

/// Reads a data source and checks that the answer keeps the configuration.
pub fn read_data_checked(
    provider: &dyn Provider,
    schema: &Schema,
    addr: &InstanceAddr,
    config: &Value,
) -> Result<Value, CheckedCallError> {
    let (state, diags) = provider
        .read_data_source(&addr.resource.type_name, config)
        .map_err(|e| CheckedCallError::Call(addr.clone(), Box::new(e)))?;
    if diags.iter().any(Diagnostic::is_error) {
        return Err(CheckedCallError::Reported(addr.clone(), diags));
    }
    let mut violations = contract::check_plan(&schema.block, &Value::Null, config, &state);
    violations.extend(contract::check_compatible(&schema.block, &state, &state, true));
    if !violations.is_empty() {
        return Err(CheckedCallError::Contract(invalid_answer(
            provider.name(),
            addr,
            "an invalid data source result",
            &violations,
        )));
    }
    Ok(state)
}

/// The re-plan at apply time, once upstream values are known: plans again
/// and checks the second plan against the first.
pub fn replan_and_check(
    provider: &dyn Provider,
    schema: &Schema,
    change: &ResourceChange,
    config: &Value,
) -> Result<PlanResponse, CheckedCallError> {
    let (prior, private) = match change.action {
        Action::Replace | Action::Create => (Value::Null, &[][..]),
        _ => (change.prior.clone(), &change.prior_private[..]),
    };
    let response = plan_checked(provider, schema, &change.addr, &prior, config, private)?;
    let violations = contract::check_compatible(&schema.block, &change.planned, &response.planned_state, false);
    if !violations.is_empty() {
        return Err(CheckedCallError::Contract(invalid_answer(
            provider.name(),
            &change.addr,
            "an inconsistent final plan",
            &violations,
        )));
    }
    Ok(response)
}

/// The error for an answer that breaks the contract: names the provider,
/// the instance and every violation, and says whose bug it is.
pub fn invalid_answer(provider: &str, addr: &InstanceAddr, what: &str, violations: &[Violation]) -> Diagnostic {
    let first = violations.first().map(|v| format!(": {v}")).unwrap_or_default();
    let mut detail: Vec<String> = violations.iter().skip(1).map(ToString::to_string).collect();
    detail.push(PROVIDER_BUG.to_string());
    Diagnostic::error(format!("provider {provider:?} produced {what} for {addr}{first}")).with_detail(detail.join("\n"))
}

/// Same as [`invalid_answer`] for an invalid plan.
pub fn invalid_plan_error(provider: &str, addr: &InstanceAddr, violations: &[Violation]) -> Diagnostic {
    invalid_answer(provider, addr, "an invalid plan", violations)
}

/// The error for deleting what `prevent_destroy` protects.
pub fn prevent_destroy_error(addr: &InstanceAddr, location: &Location) -> Diagnostic {
    Diagnostic::error(format!("Instance cannot be destroyed: {addr}")).at(location).with_detail(
        "Resource has lifecycle.prevent_destroy set, but the plan calls for this object to be destroyed. \
         To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce \
         the scope of the plan using -target.",
    )
}

/// A provider's diagnostic, prefixed with the instance and located at its declaration.
fn located(mut d: Diagnostic, addr: &InstanceAddr, location: &Location) -> Diagnostic {
    d.summary = format!("{addr}: {}", d.summary);
    d.at(location)
}

/// Reads an instance's stored attributes with its provider's schema,
/// upgrading them first when they were written with an older schema version.
pub fn decode_prior(provider: &dyn Provider, inst: &InstanceState) -> Result<Value, Diagnostic> {
    let type_name = &inst.addr.resource.type_name;
    let schemas = match inst.addr.resource.mode {
        crate::addr::Mode::Managed => &provider.schema().resources,
        crate::addr::Mode::Data => &provider.schema().data_sources,
    };
    let schema = schemas.get(type_name).ok_or_else(|| {
        Diagnostic::error(format!(
            "{}: provider {:?} no longer offers resource type {type_name:?}, which the state records",
            inst.addr,
            provider.name()
        ))
    })?;
    if inst.schema_version > schema.version {
        return Err(Diagnostic::error(format!(
            "{}: the state was written with schema version {} of {type_name}, newer than the provider's version {}",
            inst.addr, inst.schema_version, schema.version
        ))
        .with_detail("Use the provider that wrote this state, or a newer one."));
    }
    let ty = schema.block.implied_type();
    if inst.schema_version < schema.version {
        let raw = serde_json::to_string(&inst.attributes).unwrap_or_default();
        let (upgraded, diags) = provider
            .upgrade_state(type_name, inst.schema_version, &raw)
            .map_err(|e| Diagnostic::error(format!("{}: {e}", inst.addr)))?;
        if let Some(d) = diags.into_iter().find(Diagnostic::is_error) {
            return Err(Diagnostic { summary: format!("{}: {}", inst.addr, d.summary), ..d });
        }
        ty.check(&upgraded).map_err(|e| {
            Diagnostic::error(format!("{}: the upgraded state does not match the schema: {e}", inst.addr))
        })?;
        return Ok(upgraded);
    }
    value::from_json(&inst.attributes, &ty).map_err(|e| {
        Diagnostic::error(format!("{}: the state does not match the resource type's schema: {e}", inst.addr))
    })
}

/// The configuration with every computed top-level attribute it leaves
/// null made unknown: what a deferred data source read will fill.
fn unknown_computed(block: &crate::schema::Block, config: &Value) -> Value {
    let Value::Object(attrs) = config else { return config.clone() };
    let mut out = attrs.clone();
    for (name, a) in &block.attributes {
        if a.computed && out.get(name).is_none_or(Value::is_null) {
            out.insert(name.clone(), Value::unknown());
        }
    }
    Value::Object(out)
}

/// `v` with the value at `steps` replaced (objects and maps only; other
/// paths leave `v` as it is).
pub fn with_value_at(v: &Value, steps: &[PathStep], new: Value) -> Value {
    let Some((first, rest)) = steps.split_first() else { return new };
    match (v, first) {
        (Value::Object(m), PathStep::Attr(k) | PathStep::Key(k))
        | (Value::Map(m), PathStep::Attr(k) | PathStep::Key(k)) => {
            let mut m = m.clone();
            let inner = with_value_at(m.get(k).unwrap_or(&Value::Null), rest, new);
            m.insert(k.clone(), inner);
            if matches!(v, Value::Map(_)) { Value::Map(m) } else { Value::Object(m) }
        }
        _ => v.clone(),
    }
}
