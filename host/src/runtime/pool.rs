//! A configured provider ([`WasmProvider`]): the [`Provider`] trait over a
//! pool of configured instances of one component.
//!
//! A call takes one of the provider's `max_concurrency` permits (waiting,
//! without a thread, while all are taken), then an idle instance or a new
//! one (instantiated, then `configure`d with the provider's configuration).
//! An instance whose call failed (trap, timeout, out of memory) is thrown
//! away; the next call gets a fresh one. Every call is asynchronous.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

use tokio::sync::Semaphore;

use super::Shared;
use super::answer::AnswerSize;
use super::bindings::ProviderWorldPre;
use super::bindings::cairn::provider::types as wit;
use super::bindings::exports::cairn::provider::provider as api;
use super::denials::Diagnosed;
use super::ephemeral;
use super::instance::{self, ExportCall, Instance, InstanceCall, StoreState, answer_decodes_too_large};
use super::sandbox::Sandbox;
use super::state_moves::{self, wit_moves};
use super::wire::{self, Budget, DecodeError};
use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::{
    ApplyRequest, ApplyResponse, CallError, CallFuture, CallResult, ImportResponse, ImportedResource, MoveRequest,
    MoveResponse, OpenResponse, PlanRequest, PlanResponse, Provider, ReadResponse, RenewResponse,
};
use crate::schema::ProviderSchema;
use crate::value::{Path, Value};

/// A provider component, configured, serving calls.
pub(crate) struct WasmProvider {
    name: Arc<str>,
    schema: ProviderSchema,
    pre: ProviderWorldPre<StoreState>,
    sandbox: Sandbox,
    /// The `provider` block, encoded once; every new instance gets it.
    config: wit::Value,
    pool: Pool,
    /// The component's optional `state-moves` export, if it has one.
    state_moves: Option<state_moves::Indices>,
    /// The component's optional `ephemeral-resources` export, if it has one.
    ephemeral: Option<ephemeral::Indices>,
    /// Keeps the engine's epoch ticker running while calls can be made.
    _shared: Arc<Shared>,
}

/// The instances of a provider not in use, and one permit for each
/// instance that may be in use at once.
struct Pool {
    idle: Idle<Instance>,
    permits: Semaphore,
}

/// Idle instances, each with the thread that last ran it, the most recently
/// used last.
struct Idle<T>(Mutex<Vec<(ThreadId, T)>>);

impl<T> Idle<T> {
    fn new(first: T) -> Idle<T> {
        Idle(Mutex::new(vec![(std::thread::current().id(), first)]))
    }

    /// The idle instance this thread ran last, else the one used last: its
    /// memory is still in this core's caches. (Handed from core to core,
    /// the provider's code took 40% more samples in a `plan
    /// -refresh=false` of 10,000 resources on two worker threads than on
    /// one; keeping instances on their thread took that plan from a median
    /// of 0.33–0.35 s to 0.29–0.31 s, and its CPU time from 0.51 s to
    /// 0.44–0.48 s.)
    fn take(&self) -> Option<T> {
        let mut idle = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let here = std::thread::current().id();
        let at = idle.iter().rposition(|(thread, _)| *thread == here).or_else(|| idle.len().checked_sub(1))?;
        Some(idle.remove(at).1)
    }

    /// Keeps `item`, run by this thread, for a later call.
    fn put(&self, item: T) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push((std::thread::current().id(), item));
    }
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
        let permits = parts.sandbox.concurrency().clamp(1, Semaphore::MAX_PERMITS);
        let state_moves = state_moves::lookup(&parts.pre);
        let ephemeral = ephemeral::lookup(&parts.pre);
        WasmProvider {
            name: parts.name,
            schema,
            state_moves,
            ephemeral,
            pre: parts.pre,
            sandbox: parts.sandbox,
            config: parts.config,
            pool: Pool { idle: Idle::new(first), permits: Semaphore::new(permits) },
            _shared: parts.shared,
        }
    }

    /// Runs one export call on a pooled instance, waiting for a permit
    /// first when `max_concurrency` calls are running.
    async fn call<R: AnswerSize + Diagnosed + 'static>(
        &self,
        operation: &'static str,
        f: ExportCall<R>,
    ) -> CallResult<R> {
        self.call_instance(operation, instance::on_provider(f)).await
    }

    /// [`WasmProvider::call`] for a call that reaches the instance's
    /// exports itself (an optional interface's).
    async fn call_instance<R: AnswerSize + Diagnosed + 'static>(
        &self,
        operation: &'static str,
        f: InstanceCall<R>,
    ) -> CallResult<R> {
        // The semaphore is never closed.
        let _permit = self.pool.permits.acquire().await.map_err(|_| self.error(operation, "was shut down".into()))?;
        let mut instance = match self.pool.idle.take() {
            Some(instance) => instance,
            None => self.new_instance().await?,
        };
        let result = instance.call_instance(operation, f).await;
        // An instance whose call failed is dropped here: its state is unknown.
        // So is one that still holds files open (idle instances hold no
        // files of the cairn process, whose descriptors every provider
        // shares), more than half its descriptor budget in connections (a
        // provider may keep a database session from call to call, but what
        // one call leaked must not fail the next one), or more than half its
        // handles (likewise).
        if result.is_ok() {
            let (files, handles) = (instance.held_descriptors(), instance.held_handles());
            let sockets = instance.held_sockets();
            if files == 0 && sockets <= self.sandbox.max_descriptors / 2 && handles <= self.sandbox.max_handles / 2 {
                self.pool.idle.put(instance);
            } else {
                tracing::debug!(
                    provider = %self.name,
                    operation,
                    "dropping an instance that holds {files} open files, {sockets} sockets and {handles} handles"
                );
            }
        }
        result
    }

    /// A new instance, configured like the first one.
    async fn new_instance(&self) -> CallResult<Instance> {
        let mut instance = Instance::new(&self.pre, &self.name, &self.sandbox).await?;
        let diagnostics = instance.configure(self.config.clone()).await?;
        if Diagnostics::has_errors(&diagnostics) {
            let mut error = self.error("configure", "rejected its configuration on a new instance".to_string());
            error.detail = Diagnostics(diagnostics).to_string();
            return Err(error);
        }
        Ok(instance)
    }

    fn error(&self, operation: &'static str, message: String) -> CallError {
        CallError::new(&*self.name, operation, message)
    }

    /// The memory one answer may take once decoded: every value and mark
    /// of it is paid for from this one budget.
    fn budget(&self) -> Budget {
        Budget::new(self.sandbox.max_answer_bytes)
    }

    /// Decodes a value of an answer, paying for it from the answer's
    /// `budget` as it is built: shared nodes on the wire are copied for
    /// every reference.
    fn decode(&self, operation: &'static str, value: &wit::Value, budget: &mut Budget) -> CallResult<Value> {
        decode_answer(value, self.sandbox.max_answer_depth, budget).map_err(|message| self.error(operation, message))
    }

    /// The paths a provider marked sensitive in a value of its answer, paid
    /// for from the answer's `budget`.
    fn marks(&self, operation: &'static str, value: &wit::Value, budget: &mut Budget) -> CallResult<Vec<Path>> {
        wire::sensitive_marks(value, budget).map_err(|e| self.error(operation, decode_failed(e)))
    }
}

/// Decodes a value of a provider's answer within the sandbox's depth limit
/// and the answer's `budget`, or says why not (the message of a
/// [`CallError`]). The one way an answer's values enter the host: the
/// fuzzer drives it too.
pub(crate) fn decode_answer(value: &wit::Value, max_depth: usize, budget: &mut Budget) -> Result<Value, String> {
    wire::value_from_wire_within(value, max_depth, budget).map_err(decode_failed)
}

/// Why an answer could not be decoded, as the message of a [`CallError`].
pub(crate) fn decode_failed(e: DecodeError) -> String {
    match e {
        DecodeError::Malformed(e) => format!("returned a malformed value: {e}"),
        DecodeError::TooLarge { limit } => answer_decodes_too_large(limit),
    }
}

impl Provider for WasmProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }

    fn validate_resource<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        let (type_name, config) = (type_name.to_string(), wire::value_to_wire(config));
        let call: ExportCall<_> =
            Box::new(move |g, s| Box::pin(async move { g.call_validate_resource(s, &type_name, &config).await }));
        Box::pin(async move {
            let answer = self.call("validate-resource", call).await?;
            Ok(wire::diagnostics_from_wire(&answer))
        })
    }

    fn plan_resource(&self, request: PlanRequest) -> CallFuture<'_, PlanResponse> {
        const OP: &str = "plan-resource";
        let request = api::PlanRequest {
            type_name: request.type_name,
            prior_state: wire::value_to_wire(&request.prior_state),
            proposed_new_state: wire::value_to_wire(&request.proposed_new_state),
            config: wire::value_to_wire(&request.config),
            prior_private: request.prior_private,
        };
        let call: ExportCall<_> =
            Box::new(move |g, s| Box::pin(async move { g.call_plan_resource(s, &request).await }));
        Box::pin(async move {
            let answer = self.call(OP, call).await?;
            let mut budget = self.budget();
            Ok(PlanResponse {
                planned_state: self.decode(OP, &answer.planned_state, &mut budget)?,
                requires_replace: answer.requires_replace.iter().map(|p| wire::path_from_wire(p)).collect(),
                planned_private: answer.planned_private,
                diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
                sensitive: self.marks(OP, &answer.planned_state, &mut budget)?,
            })
        })
    }

    /// While the provider waits (on a timer, on HTTP) the call holds no thread.
    fn apply_resource(&self, request: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        const OP: &str = "apply-resource";
        let request = api::ApplyRequest {
            type_name: request.type_name,
            prior_state: wire::value_to_wire(&request.prior_state),
            planned_state: wire::value_to_wire(&request.planned_state),
            config: wire::value_to_wire(&request.config),
            planned_private: request.planned_private,
            idempotency_key: request.idempotency_key,
        };
        let call: ExportCall<_> =
            Box::new(move |g, s| Box::pin(async move { g.call_apply_resource(s, &request).await }));
        Box::pin(async move {
            let answer = self.call(OP, call).await?;
            let mut budget = self.budget();
            Ok(ApplyResponse {
                new_state: self.decode(OP, &answer.new_state, &mut budget)?,
                private: answer.private,
                diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
                sensitive: self.marks(OP, &answer.new_state, &mut budget)?,
            })
        })
    }

    fn read_resource<'a>(
        &'a self,
        type_name: &'a str,
        current_state: &'a Value,
        private: &'a [u8],
    ) -> CallFuture<'a, ReadResponse> {
        const OP: &str = "read-resource";
        let request = api::ReadRequest {
            type_name: type_name.to_string(),
            current_state: wire::value_to_wire(current_state),
            private: private.to_vec(),
        };
        let call: ExportCall<_> =
            Box::new(move |g, s| Box::pin(async move { g.call_read_resource(s, &request).await }));
        Box::pin(async move {
            let answer = self.call(OP, call).await?;
            let mut budget = self.budget();
            Ok(ReadResponse {
                new_state: answer.new_state.as_ref().map(|v| self.decode(OP, v, &mut budget)).transpose()?,
                private: answer.private,
                diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
            })
        })
    }

    fn import_resource<'a>(&'a self, type_name: &'a str, id: &'a str) -> CallFuture<'a, ImportResponse> {
        const OP: &str = "import-resource";
        let (type_name, id) = (type_name.to_string(), id.to_string());
        let call: ExportCall<_> =
            Box::new(move |g, s| Box::pin(async move { g.call_import_resource(s, &type_name, &id).await }));
        Box::pin(async move {
            let answer = self.call(OP, call).await?;
            // One budget for every object found: together they are one answer.
            let mut budget = self.budget();
            let imported = answer
                .imported
                .iter()
                .map(|i| {
                    Ok(ImportedResource {
                        type_name: i.type_name.clone(),
                        state: self.decode(OP, &i.state, &mut budget)?,
                        private: i.private.clone(),
                    })
                })
                .collect::<CallResult<Vec<_>>>()?;
            Ok(ImportResponse { imported, diagnostics: wire::diagnostics_from_wire(&answer.diagnostics) })
        })
    }

    fn read_data_source<'a>(
        &'a self,
        type_name: &'a str,
        config: &'a Value,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        const OP: &str = "read-data-source";
        let (type_name, config) = (type_name.to_string(), wire::value_to_wire(config));
        let call: ExportCall<_> =
            Box::new(move |g, s| Box::pin(async move { g.call_read_data_source(s, &type_name, &config).await }));
        Box::pin(async move {
            let answer = self.call(OP, call).await?;
            let state = self.decode(OP, &answer.state, &mut self.budget())?;
            Ok((state, wire::diagnostics_from_wire(&answer.diagnostics)))
        })
    }

    fn upgrade_state<'a>(
        &'a self,
        type_name: &'a str,
        version: u64,
        raw_json: &'a str,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        const OP: &str = "upgrade-state";
        let (type_name, raw_json) = (type_name.to_string(), raw_json.to_string());
        let call: ExportCall<_> = Box::new(move |g, s| {
            Box::pin(async move { g.call_upgrade_state(s, &type_name, version, &raw_json).await })
        });
        Box::pin(async move {
            let answer = self.call(OP, call).await?;
            let state = self.decode(OP, &answer.upgraded_state, &mut self.budget())?;
            Ok((state, wire::diagnostics_from_wire(&answer.diagnostics)))
        })
    }

    /// `None` when the component does not export `state-moves`, or answers
    /// that its provider takes no moves ([`state_moves::is_unsupported`]).
    fn move_resource_state(&self, request: MoveRequest) -> CallFuture<'_, Option<MoveResponse>> {
        const OP: &str = "move-resource-state";
        let Some(indices) = self.state_moves.clone() else { return crate::provider::ready(Ok(None)) };
        let request = wit_moves::MoveRequest {
            source_provider_address: request.source_provider_address,
            source_type_name: request.source_type_name,
            source_schema_version: request.source_schema_version,
            source_state: request.source_state_json,
            source_private: request.source_private,
            target_type_name: request.target_type_name,
        };
        Box::pin(async move {
            let answer = self.call_instance(OP, state_moves::move_call(indices, request)).await?;
            if state_moves::is_unsupported(&answer) {
                return Ok(None);
            }
            Ok(Some(MoveResponse {
                target_state: self.decode(OP, &answer.target_state, &mut self.budget())?,
                target_private: answer.target_private,
                diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
            }))
        })
    }

    fn validate_ephemeral<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        const OP: &str = "ephemeral-validate";
        let Some(indices) = self.ephemeral.clone() else { return self.no_ephemeral(OP) };
        let call = ephemeral::validate_call(indices, type_name.to_string(), wire::value_to_wire(config));
        Box::pin(async move { Ok(wire::diagnostics_from_wire(&self.call_instance(OP, call).await?)) })
    }

    fn open_ephemeral<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, OpenResponse> {
        const OP: &str = "ephemeral-open";
        let Some(indices) = self.ephemeral.clone() else { return self.no_ephemeral(OP) };
        let call = ephemeral::open_call(indices, type_name.to_string(), wire::value_to_wire(config));
        Box::pin(async move {
            let answer = self.call_instance(OP, call).await?;
            let mut budget = self.budget();
            Ok(OpenResponse {
                result: self.decode(OP, &answer.result, &mut budget)?,
                sensitive: self.marks(OP, &answer.result, &mut budget)?,
                private: answer.private,
                renew_at: answer.renew_at,
                diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
            })
        })
    }

    fn renew_ephemeral<'a>(&'a self, type_name: &'a str, private: &'a [u8]) -> CallFuture<'a, RenewResponse> {
        const OP: &str = "ephemeral-renew";
        let Some(indices) = self.ephemeral.clone() else { return self.no_ephemeral(OP) };
        let call = ephemeral::renew_call(indices, type_name.to_string(), private.to_vec());
        Box::pin(async move {
            let answer = self.call_instance(OP, call).await?;
            Ok(RenewResponse {
                private: answer.private,
                renew_at: answer.renew_at,
                diagnostics: wire::diagnostics_from_wire(&answer.diagnostics),
            })
        })
    }

    fn close_ephemeral<'a>(&'a self, type_name: &'a str, private: &'a [u8]) -> CallFuture<'a, Vec<Diagnostic>> {
        const OP: &str = "ephemeral-close";
        let Some(indices) = self.ephemeral.clone() else { return self.no_ephemeral(OP) };
        let call = ephemeral::close_call(indices, type_name.to_string(), private.to_vec());
        Box::pin(async move { Ok(wire::diagnostics_from_wire(&self.call_instance(OP, call).await?)) })
    }
}

impl WasmProvider {
    /// The answer to an ephemeral resource call on a component without the
    /// export (the host refuses its `ephemeral` blocks before any call).
    fn no_ephemeral<'a, T: Send + 'a>(&self, operation: &'static str) -> CallFuture<'a, T> {
        crate::provider::ready(Err(self.error(operation, "does not export the ephemeral-resources interface".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::Idle;

    #[test]
    fn an_idle_instance_goes_back_to_the_thread_that_ran_it_last() {
        let idle = Idle::new(1);
        // Run by another thread: 2. Then by this one: 3.
        std::thread::scope(|s| {
            s.spawn(|| idle.put(2));
        });
        idle.put(3);
        std::thread::scope(|s| {
            s.spawn(|| {
                // A thread that ran none takes the one used last.
                assert_eq!(idle.take(), Some(3));
            });
        });
        // This thread ran 1 before 3; 2 was another thread's.
        assert_eq!(idle.take(), Some(1));
        assert_eq!(idle.take(), Some(2));
        assert_eq!(idle.take(), None);
    }
}
