//! The gate: the one way the engine calls a provider. Each method makes one
//! call and checks the answer against the contract before handing it back,
//! so nothing a provider says reaches the plan or the state unchecked.
//!
//! The checks themselves are the pure functions of this module's parent;
//! the gate only pairs each answer with the rules that apply to it and
//! words what it finds as diagnostics that name the provider, the resource
//! instance, the attribute path and the rule.

use crate::addr::{InstanceAddr, Mode, ResourceAddr};
use crate::diag::{Diagnostic, Location};
use crate::provider::{ApplyRequest, ApplyResponse, CallError, OpenResponse, PlanRequest, PlanResponse, Provider};
use crate::schema::Schema;
use crate::value::{Path, Value};

use super::{RULE_NO_UNKNOWNS, RULE_TYPE, Violation};

/// The sentence every contract violation ends with, before what became of
/// the answer.
const PROVIDER_BUG: &str = "This is a bug in the provider, which should be reported to its authors.";

/// What became of a refused answer, usually.
const NOTHING_RECORDED: &str = "Nothing from this answer was recorded in the state.";

/// What became of a refused apply answer that still described an object.
const RECORDED_TAINTED: &str = "So that the object it describes is not lost, it was recorded in the state \
     as tainted: the next plan replaces it.";

/// Rule: an import finds one object of the type asked for.
pub const RULE_IMPORT_ONE: &str = "an import must answer exactly one non-null object of the type asked for";

/// Rule: a delete answers null.
pub const RULE_DELETE_NULL: &str = "a deleted object's new state must be null";

/// Why a checked provider call failed.
#[derive(Debug)]
pub enum CheckedCallError {
    /// The call itself failed (trap, timeout). (Addresses are boxed to
    /// keep results small.)
    Call(Box<InstanceAddr>, Box<CallError>),
    /// The provider reported errors.
    Reported(Box<InstanceAddr>, Vec<Diagnostic>),
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

/// A create or update whose answer was refused: why, and the object it
/// left, if the answer described one the state can record (as tainted).
#[derive(Debug)]
pub struct FailedApply {
    /// What went wrong, most important first.
    pub errors: Vec<CheckedCallError>,
    /// An object of the right shape (known, of the schema's type) that the
    /// refused answer still returned — a create that failed part-way, or a
    /// create or update whose answer broke the contract — to be recorded
    /// tainted, so that it is not lost: the next plan replaces it.
    pub partial: Option<ApplyResponse>,
}

impl FailedApply {
    /// The diagnostics to show, located at the resource's declaration.
    pub fn into_diagnostics(self, location: &Location) -> Vec<Diagnostic> {
        self.errors.into_iter().flat_map(|e| e.into_diagnostics(location)).collect()
    }
}

/// An ephemeral resource's open that failed or was refused: why, and the
/// private bytes of the object when the provider did open it (its answer
/// broke the contract), which must still be closed.
#[derive(Debug)]
pub struct FailedOpen {
    /// What went wrong.
    pub error: CheckedCallError,
    /// The opened object's private bytes, when there is one to close.
    pub private: Option<Vec<u8>>,
}

/// A provider behind the contract checks.
#[derive(Clone, Copy)]
pub struct Gate<'a> {
    provider: &'a dyn Provider,
}

impl<'a> Gate<'a> {
    /// The gate in front of `provider`.
    pub fn new(provider: &'a dyn Provider) -> Gate<'a> {
        Gate { provider }
    }

    /// The provider that answers the calls about `addr`: the provider's
    /// stand-in for it (a test's override), or the provider itself.
    fn answering(&self, addr: &InstanceAddr) -> &'a dyn Provider {
        self.provider.stand_in(addr).unwrap_or(self.provider)
    }

    /// The provider's local name.
    pub fn name(&self) -> &'a str {
        self.provider.name()
    }

    /// The schema of a resource type or data source, or an error that names
    /// what the provider offers instead.
    pub fn schema_of(&self, resource: &ResourceAddr) -> Result<&'a Schema, Diagnostic> {
        let schema = self.provider.schema();
        schema.of(resource).ok_or_else(|| {
            let kind = match resource.mode {
                Mode::Managed => "resource type",
                Mode::Data => "data source",
                Mode::Ephemeral => "ephemeral resource type",
            };
            let known: Vec<&str> = schema.table(resource.mode).keys().map(String::as_str).collect();
            let offers = match (known.is_empty(), resource.mode) {
                // Most providers have none: say why, rather than a bare "none".
                (true, Mode::Ephemeral) => "no ephemeral resource types (the component does not export the \
                                            ephemeral-resources interface, or offers none through it)"
                    .to_string(),
                (true, _) => "none".to_string(),
                (false, _) => known.join(", "),
            };
            Diagnostic::error(format!("Provider {:?} has no {kind} {:?}", self.name(), resource.type_name))
                .with_detail(format!("It offers: {offers}."))
        })
    }

    /// The provider's own validation of a configuration; returns its
    /// warnings.
    pub async fn validate(&self, addr: &InstanceAddr, config: &Value) -> Result<Vec<Diagnostic>, CheckedCallError> {
        let provider = self.answering(addr);
        let type_name = &addr.resource.type_name;
        let diags = match addr.resource.mode {
            Mode::Ephemeral => provider.validate_ephemeral(type_name, config).await,
            _ => provider.validate_resource(type_name, config).await,
        }
        .map_err(|e| CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)))?;
        reported(addr, diags)
    }

    /// Opens the ephemeral resource instance `addr` with its fully known
    /// `config` and checks the answer as a data source's is checked
    /// (configured values kept, everything known, of the schema's type).
    /// A refused answer of an object the provider did open still carries
    /// its private bytes, so that it can be closed.
    pub async fn open_ephemeral(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        config: &Value,
    ) -> Result<OpenResponse, Box<FailedOpen>> {
        let opened = self.answering(addr).open_ephemeral(&addr.resource.type_name, config).await.map_err(|e| {
            Box::new(FailedOpen { error: CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)), private: None })
        })?;
        if opened.diagnostics.iter().any(Diagnostic::is_error) {
            let error = CheckedCallError::Reported(Box::new(addr.clone()), opened.diagnostics);
            return Err(Box::new(FailedOpen { error, private: None }));
        }
        let mut violations = super::check_plan(&schema.block, &Value::Null, config, &opened.result);
        violations.extend(super::check_compatible(&schema.block, &opened.result, &opened.result, true));
        match self.refuse(addr, "an invalid ephemeral resource result", &violations) {
            Ok(()) => Ok(opened),
            Err(error) => Err(Box::new(FailedOpen { error, private: Some(opened.private) })),
        }
    }

    /// Calls plan with the proposed new state and checks the planned state
    /// against the configuration and prior state. Provider errors fail the
    /// call; warnings stay in the response.
    pub async fn plan(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        prior: &Value,
        config: &Value,
        private: &[u8],
    ) -> Result<PlanResponse, CheckedCallError> {
        let request = PlanRequest {
            type_name: addr.resource.type_name.clone(),
            prior_state: prior.clone(),
            proposed_new_state: super::proposed_new(&schema.block, prior, config),
            config: config.clone(),
            prior_private: private.to_vec(),
        };
        let response = self
            .answering(addr)
            .plan_resource(request)
            .await
            .map_err(|e| CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)))?;
        if response.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(CheckedCallError::Reported(Box::new(addr.clone()), response.diagnostics));
        }
        let violations =
            super::check_plan_marked(&schema.block, prior, config, &response.planned_state, &response.sensitive);
        self.refuse(addr, "an invalid plan", &violations)?;
        Ok(response)
    }

    /// The re-plan at apply time, once upstream values are known: plans
    /// again and checks the second plan against the first (`first`).
    pub async fn replan(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        first: &Value,
        prior: &Value,
        config: &Value,
        private: &[u8],
    ) -> Result<PlanResponse, CheckedCallError> {
        let response = self.plan(schema, addr, prior, config, private).await?;
        let violations = super::check_compatible(&schema.block, first, &response.planned_state, false);
        self.refuse(addr, "an inconsistent final plan", &violations)?;
        Ok(response)
    }

    /// Refreshes an object: `None` when it no longer exists, else its
    /// current value (checked against the schema) and private bytes. Also
    /// returns the provider's warnings.
    #[allow(clippy::type_complexity)]
    pub async fn refresh(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        prior: &Value,
        private: &[u8],
    ) -> Result<(Option<(Value, Vec<u8>)>, Vec<Diagnostic>), CheckedCallError> {
        let response = self
            .answering(addr)
            .read_resource(&addr.resource.type_name, prior, private)
            .await
            .map_err(|e| CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)))?;
        let warnings = reported(addr, response.diagnostics)?;
        let Some(current) = response.new_state else { return Ok((None, warnings)) };
        // What is never stored is never compared either.
        let current = super::null_write_only(&schema.block, &current);
        if let Err(e) = schema.block.implied_type().check(&current) {
            let v = Violation { path: e.path, message: e.message, rule: RULE_TYPE };
            self.refuse(addr, "an invalid refreshed state", &[v])?;
        }
        Ok((Some((current, response.private)), warnings))
    }

    /// Reads a data source and checks that the answer keeps the
    /// configuration and is wholly known.
    pub async fn read_data(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        config: &Value,
    ) -> Result<(Value, Vec<Diagnostic>), CheckedCallError> {
        let (state, diags) = self
            .answering(addr)
            .read_data_source(&addr.resource.type_name, config)
            .await
            .map_err(|e| CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)))?;
        let warnings = reported(addr, diags)?;
        let mut violations = super::check_plan(&schema.block, &Value::Null, config, &state);
        violations.extend(super::check_compatible(&schema.block, &state, &state, true));
        self.refuse(addr, "an invalid data source result", &violations)?;
        Ok((state, warnings))
    }

    /// Applies a create or update and checks the new state against the plan
    /// (`request.planned_state`). An answer that breaks the contract but
    /// describes a usable object (known, of the schema's type) is refused
    /// with that object as [`FailedApply::partial`], so that it is not
    /// orphaned; only an answer with no usable object leaves nothing.
    pub async fn apply(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        request: ApplyRequest,
    ) -> Result<ApplyResponse, FailedApply> {
        let creating = request.prior_state.is_null();
        let planned = request.planned_state.clone();
        let response = self.answering(addr).apply_resource(request).await.map_err(|e| FailedApply {
            errors: vec![CheckedCallError::Call(Box::new(addr.clone()), Box::new(e))],
            partial: None,
        })?;
        let violations =
            super::check_compatible_marked(&schema.block, &planned, &response.new_state, true, &response.sensitive);
        let what = "an inconsistent result after apply";
        if response.diagnostics.iter().any(Diagnostic::is_error) {
            // A create that failed part-way but returned an object of the
            // right shape is recorded as tainted, so that the next plan
            // replaces it; anything else from a failed answer is dropped.
            let partial = (creating && recordable(schema, &response.new_state)).then(|| response.clone());
            let mut errors = vec![CheckedCallError::Reported(Box::new(addr.clone()), response.diagnostics)];
            // Unknowns and wrong types are the provider's bug even in a
            // failed answer, so say so in the host's words too. (A changed
            // value is not: a failed update answers with the old object.)
            let bugs: Vec<_> =
                violations.into_iter().filter(|v| v.rule == RULE_NO_UNKNOWNS || v.rule == RULE_TYPE).collect();
            if !bugs.is_empty() {
                errors.push(CheckedCallError::Contract(invalid_answer(self.name(), addr, what, &bugs)));
            }
            return Err(FailedApply { errors, partial });
        }
        if violations.is_empty() {
            return Ok(response);
        }
        let kept = recordable(schema, &response.new_state);
        let ending = if kept { RECORDED_TAINTED } else { NOTHING_RECORDED };
        let error = invalid_answer_ending(self.name(), addr, what, &violations, ending);
        Err(FailedApply { errors: vec![CheckedCallError::Contract(error)], partial: kept.then_some(response) })
    }

    /// Deletes an object (`request.planned_state` is null) and checks that
    /// the provider answered null. Returns its warnings.
    pub async fn delete(
        &self,
        addr: &InstanceAddr,
        request: ApplyRequest,
    ) -> Result<Vec<Diagnostic>, CheckedCallError> {
        let response = self
            .answering(addr)
            .apply_resource(request)
            .await
            .map_err(|e| CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)))?;
        let warnings = reported(addr, response.diagnostics)?;
        if !response.new_state.is_null() {
            let v = Violation {
                path: Path::root(),
                message: "returned an object after a delete".into(),
                rule: RULE_DELETE_NULL,
            };
            self.refuse(addr, "an invalid delete result", &[v])?;
        }
        Ok(warnings)
    }

    /// Finds the existing object `id` for adoption as `addr` and checks the
    /// answer: exactly one object, of `addr`'s type, wholly known and of
    /// the schema's type. Returns its state and private bytes (to be read
    /// once more, as Terraform does, before it is recorded) and warnings.
    #[allow(clippy::type_complexity)]
    pub async fn import(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        id: &str,
    ) -> Result<((Value, Vec<u8>), Vec<Diagnostic>), CheckedCallError> {
        let type_name = &addr.resource.type_name;
        let response = self
            .answering(addr)
            .import_resource(type_name, id)
            .await
            .map_err(|e| CheckedCallError::Call(Box::new(addr.clone()), Box::new(e)))?;
        let warnings = reported(addr, response.diagnostics)?;
        let what = "an invalid import result";
        let mut imported = response.imported;
        let object = match (imported.pop(), imported.is_empty()) {
            (Some(object), true) => object,
            (found, _) => {
                let n = imported.len() + usize::from(found.is_some());
                let v = Violation {
                    path: Path::root(),
                    message: format!("returned {n} objects for id {id:?}, where one was asked for"),
                    rule: RULE_IMPORT_ONE,
                };
                return Err(CheckedCallError::Contract(invalid_answer(self.name(), addr, what, &[v])));
            }
        };
        let mut violations = Vec::new();
        if object.type_name != *type_name {
            violations.push(Violation {
                path: Path::root(),
                message: format!("returned an object of type {:?}", object.type_name),
                rule: RULE_IMPORT_ONE,
            });
        }
        if object.state.is_null() {
            violations.push(Violation { path: Path::root(), message: "returned null".into(), rule: RULE_IMPORT_ONE });
        } else if let Err(e) = schema.block.implied_type().check(&object.state) {
            violations.push(Violation { path: e.path, message: e.message, rule: RULE_TYPE });
        } else if !object.state.is_wholly_known() {
            violations.push(Violation {
                path: Path::root(),
                message: "returned unknown values".into(),
                rule: RULE_NO_UNKNOWNS,
            });
        }
        self.refuse(addr, what, &violations)?;
        Ok(((object.state, object.private), warnings))
    }

    /// Adopts the existing object `id` as `addr`, as Terraform does: asks
    /// for it ([`Gate::import`]), then reads it back ([`Gate::refresh`]),
    /// so that what is recorded is what a refresh would see. `None` when
    /// the read finds it gone. Returns the warnings of both calls.
    #[allow(clippy::type_complexity)]
    pub async fn adopt(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        id: &str,
    ) -> Result<(Option<(Value, Vec<u8>)>, Vec<Diagnostic>), CheckedCallError> {
        let ((object, private), mut warnings) = self.import(schema, addr, id).await?;
        let (current, more) = self.refresh(schema, addr, &object, &private).await?;
        warnings.extend(more);
        Ok((current, warnings))
    }

    /// Upgrades a stored object written with an older schema version and
    /// checks the result against the current schema.
    pub async fn upgrade(
        &self,
        schema: &Schema,
        addr: &InstanceAddr,
        version: u64,
        raw_json: &str,
    ) -> Result<Value, Diagnostic> {
        let (upgraded, diags) = self
            .answering(addr)
            .upgrade_state(&addr.resource.type_name, version, raw_json)
            .await
            .map_err(|e| Diagnostic::error(format!("{addr}: {e}")))?;
        if let Some(d) = diags.into_iter().find(Diagnostic::is_error) {
            return Err(Diagnostic { summary: format!("{addr}: {}", d.summary), ..d });
        }
        schema
            .block
            .implied_type()
            .check(&upgraded)
            .map_err(|e| Diagnostic::error(format!("{addr}: the upgraded state does not match the schema: {e}")))?;
        Ok(upgraded)
    }

    /// Fails with the contract error when there are violations.
    fn refuse(&self, addr: &InstanceAddr, what: &str, violations: &[Violation]) -> Result<(), CheckedCallError> {
        if violations.is_empty() {
            return Ok(());
        }
        Err(CheckedCallError::Contract(invalid_answer(self.name(), addr, what, violations)))
    }
}

/// The error for an import whose object the provider could not read back.
pub fn import_gone(addr: &InstanceAddr, id: &str) -> Diagnostic {
    Diagnostic::error("Cannot import non-existent remote object").with_detail(format!(
        "While attempting to import an existing object to {addr}, the provider detected that no object exists \
         with the id {id:?}. Only existing objects can be imported; check that the id is correct, or let cairn \
         create the object by removing the import."
    ))
}

/// Splits a provider's diagnostics: errors fail the call, warnings are returned.
fn reported(addr: &InstanceAddr, diags: Vec<Diagnostic>) -> Result<Vec<Diagnostic>, CheckedCallError> {
    if diags.iter().any(Diagnostic::is_error) {
        return Err(CheckedCallError::Reported(Box::new(addr.clone()), diags));
    }
    Ok(diags)
}

/// The error of a provider call for `addr` that failed: what happened in
/// one line, the provider's last words (if any) as the detail.
pub fn call_failed(addr: &InstanceAddr, e: &CallError) -> Diagnostic {
    Diagnostic::error(e.about(addr)).with_detail(e.detail.clone())
}

/// The error for an answer that breaks the contract: names the provider,
/// the instance and every violation, and says whose bug it is (and that
/// nothing of it was recorded).
pub fn invalid_answer(provider: &str, addr: &InstanceAddr, what: &str, violations: &[Violation]) -> Diagnostic {
    invalid_answer_ending(provider, addr, what, violations, NOTHING_RECORDED)
}

/// [`invalid_answer`], saying `ending` about what became of the answer.
fn invalid_answer_ending(
    provider: &str,
    addr: &InstanceAddr,
    what: &str,
    violations: &[Violation],
    ending: &str,
) -> Diagnostic {
    let first = violations.first().map(|v| format!(": {v}")).unwrap_or_default();
    let mut detail: Vec<String> = violations.iter().skip(1).map(ToString::to_string).collect();
    detail.push(format!("{PROVIDER_BUG} {ending}"));
    Diagnostic::error(format!("provider {provider:?} produced {what} for {addr}{first}")).with_detail(detail.join("\n"))
}

/// Whether an apply answer's new state is an object the state can hold:
/// not null, wholly known, of the schema's type.
fn recordable(schema: &Schema, new_state: &Value) -> bool {
    !new_state.is_null() && new_state.is_wholly_known() && schema.block.implied_type().check(new_state).is_ok()
}

/// A provider's diagnostic, prefixed with the instance and located at its
/// declaration.
pub fn located(mut d: Diagnostic, addr: &InstanceAddr, location: &Location) -> Diagnostic {
    d.summary = format!("{addr}: {}", d.summary);
    d.at(location)
}
