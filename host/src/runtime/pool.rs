//! A configured provider ([`WasmProvider`]): the [`Provider`] trait over a
//! pool of configured instances of one component.
//!
//! A call takes an idle instance, or creates one (instantiate, then
//! `configure` with the provider's configuration) while fewer than
//! [`MAX_INSTANCES`] exist, or waits for one to come back. An instance whose
//! call failed (trap, timeout, out of memory) is thrown away; the next call
//! gets a fresh one.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use wasmtime::Store;

use super::Shared;
use super::answer::AnswerSize;
use super::bindings::ProviderWorldPre;
use super::bindings::cairn::provider::types as wit;
use super::bindings::exports::cairn::provider::provider as api;
use super::instance::{Instance, StoreState};
use super::sandbox::Sandbox;
use super::wire::{self, WireError};
use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::{
    ApplyRequest, ApplyResponse, CallError, CallResult, PlanRequest, PlanResponse, Provider, ReadResponse,
};
use crate::schema::ProviderSchema;
use crate::value::Value;

/// The most instances of one configured provider that exist at once, and so
/// the most calls to it that run in parallel, unless its sandbox says
/// otherwise (`max_concurrency`).
pub const MAX_INSTANCES: usize = 8;

/// A provider component, configured, serving calls.
pub(crate) struct WasmProvider {
    name: Arc<str>,
    schema: ProviderSchema,
    pre: ProviderWorldPre<StoreState>,
    sandbox: Sandbox,
    /// The `provider` block, encoded once; every new instance gets it.
    config: wit::Value,
    pool: Pool,
    /// Keeps the engine's epoch ticker running while calls can be made.
    _shared: Arc<Shared>,
}

/// Idle instances and the count of all instances, idle or busy.
struct Pool {
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    idle: Vec<Instance>,
    live: usize,
}

/// Everything needed to make a configured provider from its first instance.
pub(crate) struct Parts {
    pub name: Arc<str>,
    pub pre: ProviderWorldPre<StoreState>,
    pub sandbox: Sandbox,
    pub config: wit::Value,
    pub shared: Arc<Shared>,
}

impl WasmProvider {
    /// A provider whose first instance, `first`, is already configured.
    pub(crate) fn new(parts: Parts, schema: ProviderSchema, first: Instance) -> WasmProvider {
        WasmProvider {
            name: parts.name,
            schema,
            pre: parts.pre,
            sandbox: parts.sandbox,
            config: parts.config,
            pool: Pool { state: Mutex::new(PoolState { idle: vec![first], live: 1 }), returned: Condvar::new() },
            _shared: parts.shared,
        }
    }

    /// Runs one export call on a pooled instance.
    fn call<R: AnswerSize>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&api::Guest, &mut Store<StoreState>) -> wasmtime::Result<R>,
    ) -> CallResult<R> {
        let mut instance = self.checkout()?;
        let result = instance.call(operation, f);
        match result {
            Ok(_) => self.checkin(instance),
            Err(_) => self.discard(instance),
        }
        result
    }

    /// An idle instance, a new one, or (when the sandbox's `max_concurrency`
    /// are busy) the next one returned.
    fn checkout(&self) -> CallResult<Instance> {
        let mut state = self.lock();
        loop {
            if let Some(instance) = state.idle.pop() {
                return Ok(instance);
            }
            if state.live < self.sandbox.max_concurrency.max(1) {
                state.live += 1;
                drop(state);
                return self.new_instance().inspect_err(|_| self.forget_one());
            }
            state = self.pool.returned.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// A new instance, configured like the first one.
    fn new_instance(&self) -> CallResult<Instance> {
        let mut instance = Instance::new(&self.pre, &self.name, &self.sandbox)?;
        let diagnostics = instance.call("configure", |guest, store| guest.call_configure(store, &self.config))?;
        let diagnostics = wire::diagnostics_from_wire(&diagnostics);
        if Diagnostics::has_errors(&diagnostics) {
            let mut error = self.error("configure", "rejected its configuration on a new instance".to_string());
            error.detail = Diagnostics(diagnostics).to_string();
            return Err(error);
        }
        Ok(instance)
    }

    fn checkin(&self, instance: Instance) {
        self.lock().idle.push(instance);
        self.pool.returned.notify_one();
    }

    fn discard(&self, instance: Instance) {
        drop(instance);
        self.forget_one();
    }

    /// One instance fewer exists: a waiting call may create one.
    fn forget_one(&self) {
        self.lock().live -= 1;
        self.pool.returned.notify_one();
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // The pool's counts stay right even if a holder panicked.
        self.pool.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn error(&self, operation: &'static str, message: String) -> CallError {
        CallError::new(&*self.name, operation, message)
    }

    /// A provider answer that does not decode.
    fn malformed(&self, operation: &'static str, error: WireError) -> CallError {
        self.error(operation, format!("returned a malformed value: {error}"))
    }

    fn decode(&self, operation: &'static str, value: &wit::Value) -> CallResult<Value> {
        wire::value_from_wire_within(value, self.sandbox.max_answer_depth).map_err(|e| self.malformed(operation, e))
    }
}

impl Provider for WasmProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }

    fn validate_resource(&self, type_name: &str, config: &Value) -> CallResult<Vec<Diagnostic>> {
        let config = wire::value_to_wire(config);
        let answer = self.call("validate-resource", |g, s| g.call_validate_resource(s, type_name, &config))?;
        Ok(wire::diagnostics_from_wire(&answer))
    }

    fn plan_resource(&self, request: PlanRequest) -> CallResult<PlanResponse> {
        const OP: &str = "plan-resource";
        let request = api::PlanRequest {
            type_name: request.type_name,
            prior_state: wire::value_to_wire(&request.prior_state),
            proposed_new_state: wire::value_to_wire(&request.proposed_new_state),
            config: wire::value_to_wire(&request.config),
            prior_private: request.prior_private,
        };
        let answer = self.call(OP, |g, s| g.call_plan_resource(s, &request))?;
        Ok(PlanResponse {
            planned_state: self.decode(OP, &answer.planned_state)?,
            requires_replace: answer.requires_replace.iter().map(|p| wire::path_from_wire(p)).collect(),
            planned_private: answer.planned_private,
            diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
        })
    }

    fn apply_resource(&self, request: ApplyRequest) -> CallResult<ApplyResponse> {
        const OP: &str = "apply-resource";
        let request = api::ApplyRequest {
            type_name: request.type_name,
            prior_state: wire::value_to_wire(&request.prior_state),
            planned_state: wire::value_to_wire(&request.planned_state),
            config: wire::value_to_wire(&request.config),
            planned_private: request.planned_private,
            idempotency_key: request.idempotency_key,
        };
        let answer = self.call(OP, |g, s| g.call_apply_resource(s, &request))?;
        Ok(ApplyResponse {
            new_state: self.decode(OP, &answer.new_state)?,
            private: answer.private,
            diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
        })
    }

    fn read_resource(&self, type_name: &str, current_state: &Value, private: &[u8]) -> CallResult<ReadResponse> {
        const OP: &str = "read-resource";
        let request = api::ReadRequest {
            type_name: type_name.to_string(),
            current_state: wire::value_to_wire(current_state),
            private: private.to_vec(),
        };
        let answer = self.call(OP, |g, s| g.call_read_resource(s, &request))?;
        Ok(ReadResponse {
            new_state: answer.new_state.as_ref().map(|v| self.decode(OP, v)).transpose()?,
            private: answer.private,
            diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
        })
    }

    fn read_data_source(&self, type_name: &str, config: &Value) -> CallResult<(Value, Vec<Diagnostic>)> {
        const OP: &str = "read-data-source";
        let config = wire::value_to_wire(config);
        let answer = self.call(OP, |g, s| g.call_read_data_source(s, type_name, &config))?;
        Ok((self.decode(OP, &answer.state)?, wire::diagnostics_from_wire(&answer.diagnostics)))
    }

    fn upgrade_state(&self, type_name: &str, version: u64, raw_json: &str) -> CallResult<(Value, Vec<Diagnostic>)> {
        const OP: &str = "upgrade-state";
        let answer = self.call(OP, |g, s| g.call_upgrade_state(s, type_name, version, raw_json))?;
        Ok((self.decode(OP, &answer.upgraded_state)?, wire::diagnostics_from_wire(&answer.diagnostics)))
    }
}
