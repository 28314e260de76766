//! Planning one resource instance: read its prior state, refresh it, ask
//! the provider for a plan, check the answer against the contract and
//! decide the action.

use crate::addr::{InstanceAddr, ResourceAddr};
use crate::config::{self, EvalContext, Resource};
use crate::contract::{CheckedCallError, Gate, import_gone, located};
use crate::diag::{Diagnostic, Location};
use crate::provider::PlanResponse;
use crate::schema::Schema;
use crate::state::{InstanceState, InstanceStatus};
use crate::value::{Path, PathStep, Value};

use super::{Action, Drift, Plan, ReplaceReason, ResourceChange};

/// Plans one instance of a resource block.
pub(super) struct InstancePlanner<'a> {
    pub gate: Gate<'a>,
    pub schema: &'a Schema,
    pub resource: &'a Resource,
    pub addr: &'a InstanceAddr,
    pub prior: Option<&'a InstanceState>,
    pub dependencies: &'a [ResourceAddr],
    pub skip_refresh: bool,
    /// Only refresh (`-refresh-only`): the change is a no-op whatever the
    /// configuration says.
    pub refresh_only: bool,
    /// Replace the object even if it could stay or change in place.
    pub forced: Option<ReplaceReason>,
    /// Adopt an existing object by this id (an `import` block).
    pub import_id: Option<String>,
    /// Where each read is reported as it happens.
    pub progress: &'a super::Progress,
}

impl InstancePlanner<'_> {
    /// Plans a managed instance; returns the value references to it see.
    pub async fn plan_managed(&self, ctx: &EvalContext, plan: &mut Plan) -> Result<Value, Vec<Diagnostic>> {
        let mut config = config::decode_body(&self.resource.body, &self.schema.block, ctx)?;
        let (mut prior, mut prior_private, status) = match (self.prior, &self.import_id) {
            (Some(inst), _) => {
                (decode_prior(self.gate, inst).await.map_err(|d| vec![d])?, inst.private.clone(), inst.status)
            }
            (None, Some(id)) => {
                let (object, private) = self.import(id, plan).await?;
                // The adopted object was read: said as a refresh, as
                // Terraform says it.
                self.progress.refresh_start(self.addr, &object);
                self.progress.refresh_complete(self.addr, &object);
                (object, private, InstanceStatus::Ready)
            }
            (None, None) => (Value::Null, Vec::new(), InstanceStatus::Ready),
        };
        // An imported object was read just now.
        if self.prior.is_some() && !self.skip_refresh {
            (prior, prior_private) = self.refresh(prior, prior_private, plan).await?;
        }
        if self.refresh_only {
            return Ok(self.refreshed(prior, prior_private, config, plan));
        }
        config = ignoring_changes(self.resource, config, &prior);
        self.validate(&config, plan).await?;
        let mut response = self.call_plan(&prior, &config, &prior_private, plan).await?;
        let (action, reason) = self.decide(&prior, status, &response);
        if action == Action::Replace {
            if self.resource.lifecycle.prevent_destroy {
                return Err(vec![prevent_destroy_error(self.addr, &self.resource.location)]);
            }
            // The replacement is a create: plan it as one, so that computed
            // values show as unknown rather than as the old object's.
            response = self.call_plan(&Value::Null, &config, &[], plan).await?;
        }
        let value = response.planned_state.clone();
        plan.changes.push(ResourceChange {
            sensitive: response.sensitive,
            prior_private,
            planned_private: response.planned_private,
            replace_reason: reason,
            importing: self.import_id.clone(),
            ..self.change(action, prior, response.planned_state, config)
        });
        Ok(value)
    }

    /// The no-op change of a refresh-only plan: the object as refresh
    /// found it. Returns the value references to it see (unknown for an
    /// object that does not exist).
    fn refreshed(&self, current: Value, private: Vec<u8>, config: Value, plan: &mut Plan) -> Value {
        if current.is_null() {
            return Value::unknown();
        }
        plan.changes.push(ResourceChange {
            sensitive: self.prior.map(|i| i.sensitive_attributes.clone()).unwrap_or_default(),
            prior_private: private,
            ..self.change(Action::NoOp, current.clone(), current.clone(), config)
        });
        current
    }

    /// Asks the provider for the existing object `id`, then reads it, as
    /// Terraform does: the answer to the read is what is adopted.
    async fn import(&self, id: &str, plan: &mut Plan) -> Result<(Value, Vec<u8>), Vec<Diagnostic>> {
        let (found, warnings) = self.gate.adopt(self.schema, self.addr, id).await.map_err(|e| self.failed(e))?;
        self.keep_warnings(warnings, plan);
        found.ok_or_else(|| vec![import_gone(self.addr, id).at(&self.resource.location)])
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
        } else if let Some(reason) = &self.forced {
            (Action::Replace, Some(reason.clone()))
        } else if &response.planned_state == prior {
            (Action::NoOp, None)
        } else {
            (Action::Update, None)
        }
    }

    /// Asks the provider whether the object changed outside cairn.
    async fn refresh(
        &self,
        prior: Value,
        private: Vec<u8>,
        plan: &mut Plan,
    ) -> Result<(Value, Vec<u8>), Vec<Diagnostic>> {
        self.progress.refresh_start(self.addr, &prior);
        let (current, warnings) =
            self.gate.refresh(self.schema, self.addr, &prior, &private).await.map_err(|e| self.failed(e))?;
        self.progress.refresh_complete(self.addr, &prior);
        self.keep_warnings(warnings, plan);
        match current {
            None => {
                plan.drift.push(self.drift(prior, Value::Null, Vec::new()));
                Ok((Value::Null, Vec::new()))
            }
            Some((current, private)) => {
                if current != prior {
                    plan.drift.push(self.drift(prior, current.clone(), private.clone()));
                }
                Ok((current, private))
            }
        }
    }

    /// A drift note: the object was `prior`, refresh found `current`.
    fn drift(&self, prior: Value, current: Value, current_private: Vec<u8>) -> Drift {
        Drift {
            addr: self.addr.clone(),
            provider: self.gate.name().to_string(),
            prior,
            current,
            current_private,
            sensitive: self.prior.map(|i| i.sensitive_attributes.clone()).unwrap_or_default(),
        }
    }

    async fn validate(&self, config: &Value, plan: &mut Plan) -> Result<(), Vec<Diagnostic>> {
        let warnings = self.gate.validate(self.addr, config).await.map_err(|e| self.failed(e))?;
        self.keep_warnings(warnings, plan);
        Ok(())
    }

    /// Calls plan through the contract gate.
    async fn call_plan(
        &self,
        prior: &Value,
        config: &Value,
        private: &[u8],
        plan: &mut Plan,
    ) -> Result<PlanResponse, Vec<Diagnostic>> {
        let response =
            self.gate.plan(self.schema, self.addr, prior, config, private).await.map_err(|e| self.failed(e))?;
        self.keep_warnings(response.diagnostics.clone(), plan);
        Ok(response)
    }

    /// Keeps a provider's warnings for the plan, located at the resource
    /// (at the attribute each is about, where it is written).
    fn keep_warnings(&self, warnings: Vec<Diagnostic>, plan: &mut Plan) {
        let located = warnings.into_iter().map(|d| located(d, self.addr, &self.resource.location)).collect();
        plan.warnings.extend(super::at_attributes_in(&self.resource.body, located));
    }

    /// A failed call's errors, located at the resource (at the attribute
    /// each is about, where it is written).
    fn failed(&self, e: CheckedCallError) -> Vec<Diagnostic> {
        super::at_attributes_in(&self.resource.body, e.into_diagnostics(&self.resource.location))
    }

    /// Plans a data source: read now when its configuration is known and
    /// nothing it depends on changes; otherwise defer the read to apply.
    pub async fn plan_data(
        &self,
        ctx: &EvalContext,
        upstream_changes: bool,
        plan: &mut Plan,
    ) -> Result<Value, Vec<Diagnostic>> {
        let config = config::decode_body(&self.resource.body, &self.schema.block, ctx)?;
        if config.is_wholly_known() && !upstream_changes {
            let started = std::time::Instant::now();
            self.progress.read_start(self.addr);
            let (state, warnings) =
                self.gate.read_data(self.schema, self.addr, &config).await.map_err(|e| self.failed(e))?;
            self.keep_warnings(warnings, plan);
            let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.progress.read_complete(self.addr, elapsed_ms, &state);
            plan.data_read_ms.insert(self.addr.clone(), elapsed_ms);
            plan.data_values.insert(self.addr.clone(), state.clone());
            return Ok(state);
        }
        let planned = unknown_computed(&self.schema.block, &config);
        let reason = match config.is_wholly_known() {
            true => ReplaceReason::ReadDependencyPending,
            false => ReplaceReason::ReadConfigUnknown,
        };
        plan.changes.push(ResourceChange {
            // A read depends on what it depends on now, never on an earlier read.
            prior_dependencies: Vec::new(),
            replace_reason: Some(reason),
            ..self.change(Action::Read, Value::Null, planned.clone(), config)
        });
        Ok(planned)
    }

    /// This instance's change `action` from `prior` to `planned`, with what
    /// every change of it carries (address, provider, dependencies,
    /// lifecycle, schema version, location) and nothing else: no private
    /// bytes, marks, reason, import or move.
    fn change(&self, action: Action, prior: Value, planned: Value, config: Value) -> ResourceChange {
        ResourceChange {
            sensitive: Vec::new(),
            addr: self.addr.clone(),
            provider: self.gate.name().to_string(),
            action,
            prior,
            planned,
            config,
            prior_private: Vec::new(),
            planned_private: Vec::new(),
            replace_reason: None,
            dependencies: self.dependencies.to_vec(),
            prior_dependencies: self.prior.map(|i| i.dependencies.clone()).unwrap_or_default(),
            create_before_destroy: self.resource.lifecycle.create_before_destroy,
            deposed: None,
            schema_version: self.schema.version,
            location: Some(self.resource.location.clone()),
            importing: None,
            moved_from: None,
        }
    }
}

/// The error for deleting what `prevent_destroy` protects.
pub fn prevent_destroy_error(addr: &InstanceAddr, location: &Location) -> Diagnostic {
    Diagnostic::error(format!("Instance cannot be destroyed: {addr}")).at(location).with_detail(
        "Resource has lifecycle.prevent_destroy set, but the plan calls for this object to be destroyed. \
         To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce \
         the scope of the plan using -target.",
    )
}

/// Reads an instance's stored attributes with its provider's schema,
/// upgrading them first when they were written with an older schema version.
pub async fn decode_prior(gate: Gate<'_>, inst: &InstanceState) -> Result<Value, Diagnostic> {
    let type_name = &inst.addr.resource.type_name;
    let schema = gate.schema_of(&inst.addr.resource).map_err(|_| {
        Diagnostic::error(format!(
            "{}: provider {:?} no longer offers resource type {type_name:?}, which the state records",
            inst.addr,
            gate.name()
        ))
    })?;
    if inst.schema_version > schema.version {
        return Err(Diagnostic::error(format!(
            "{}: the state was written with schema version {} of {type_name}, newer than the provider's version {}",
            inst.addr, inst.schema_version, schema.version
        ))
        .with_detail("Use the provider that wrote this state, or a newer one."));
    }
    if inst.schema_version < schema.version {
        return gate.upgrade(schema, &inst.addr, inst.schema_version, inst.attributes.as_str()).await;
    }
    inst.attributes.decode(&schema.block.implied_type()).map_err(|e| {
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

/// The configuration with every path of the resource's
/// `lifecycle { ignore_changes }` set to its prior value, so that changes
/// there never become a plan; a create (null prior) ignores nothing.
pub fn ignoring_changes(resource: &Resource, mut config: Value, prior: &Value) -> Value {
    if prior.is_null() {
        return config;
    }
    for path in &resource.lifecycle.ignore_changes {
        config = with_value_at(&config, path.steps(), prior.at(path));
    }
    config
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
