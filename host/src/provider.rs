//! The one seam between the engine and providers: the [`Provider`] trait.
//!
//! The planner and executor only ever talk to this trait, so they run the
//! same against a WebAssembly component (see `runtime`) and against an
//! in-process fake in tests. Calls are blocking, except
//! [`Provider::apply_resource_async`], which the executor awaits.

use crate::diag::Diagnostic;
use crate::schema::ProviderSchema;
use crate::value::{Path, Value};

/// What `plan_resource` is given (see the WIT `plan-request`).
#[derive(Debug, Clone)]
pub struct PlanRequest {
    /// The resource type.
    pub type_name: String,
    /// Null for a create.
    pub prior_state: Value,
    /// Config merged over prior state.
    pub proposed_new_state: Value,
    /// Configuration alone.
    pub config: Value,
    /// Private bytes stored with the prior state.
    pub prior_private: Vec<u8>,
}

/// What `plan_resource` answers.
#[derive(Debug, Clone, Default)]
pub struct PlanResponse {
    /// The predicted new state.
    pub planned_state: Value,
    /// Attributes whose change forces replacement.
    pub requires_replace: Vec<Path>,
    /// Handed back to apply.
    pub planned_private: Vec<u8>,
    /// Messages for the user.
    pub diagnostics: Vec<Diagnostic>,
    /// Paths the provider marked sensitive in `planned_state` (beyond the
    /// schema's sensitive attributes): redacted wherever shown.
    pub sensitive: Vec<Path>,
}

/// What `apply_resource` is given.
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    /// The resource type.
    pub type_name: String,
    /// Null for a create.
    pub prior_state: Value,
    /// Null for a delete.
    pub planned_state: Value,
    /// Fully known configuration; null for a delete.
    pub config: Value,
    /// From the plan.
    pub planned_private: Vec<u8>,
    /// Stable across retries of the same planned change.
    pub idempotency_key: String,
}

/// What `apply_resource` answers.
#[derive(Debug, Clone, Default)]
pub struct ApplyResponse {
    /// The object as it now is; null after a delete.
    pub new_state: Value,
    /// Stored with the state.
    pub private: Vec<u8>,
    /// Messages for the user.
    pub diagnostics: Vec<Diagnostic>,
    /// Paths the provider marked sensitive in `new_state` (beyond the
    /// schema's sensitive attributes): redacted wherever shown.
    pub sensitive: Vec<Path>,
}

/// What `read_resource` answers.
#[derive(Debug, Clone, Default)]
pub struct ReadResponse {
    /// `None` when the object no longer exists.
    pub new_state: Option<Value>,
    /// Stored with the state.
    pub private: Vec<u8>,
    /// Messages for the user.
    pub diagnostics: Vec<Diagnostic>,
}

/// A failure of the call itself (trap, timeout, oversized answer), as
/// opposed to an error the provider reported in its diagnostics.
///
/// It reads as a sentence about the provider: `provider "evil" exceeded its
/// memory limit of 64 MiB while planning` — and, through
/// [`CallError::about`], names the resource instance the call was for.
#[derive(Debug, thiserror::Error)]
pub struct CallError {
    /// The provider's local name.
    pub provider: String,
    /// Which export was being called.
    pub operation: &'static str,
    /// What happened, as a verb phrase with the provider as its subject:
    /// "exceeded its time limit of 30s", "panicked: index out of bounds".
    pub message: String,
    /// More lines for the curious (the provider's last lines of standard
    /// error), or empty.
    pub detail: String,
}

impl CallError {
    /// The error of a call to `provider`'s `operation` with no detail.
    pub fn new(provider: impl Into<String>, operation: &'static str, message: impl Into<String>) -> CallError {
        CallError { provider: provider.into(), operation, message: message.into(), detail: String::new() }
    }

    /// The one-line summary for a call made for the resource instance
    /// `addr`: `provider "evil" exceeded its memory limit of 64 MiB while
    /// planning evil_thing.x`.
    pub fn about(&self, addr: &dyn std::fmt::Display) -> String {
        format!("provider {:?} {} while {} {addr}", self.provider, self.message, activity(self.operation).1)
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "provider {:?} {} while {}", self.provider, self.message, activity(self.operation).0)?;
        if !self.detail.is_empty() {
            write!(f, "\n{}", self.detail)?;
        }
        Ok(())
    }
}

/// What a provider was doing during `operation`, alone and before the
/// address of the resource instance it was doing it for.
fn activity(operation: &str) -> (&str, &str) {
    match operation {
        "instantiate" => ("starting", "starting an instance for"),
        "schema" => ("reading its schema", "reading its schema for"),
        "configure" => ("being configured", "configuring an instance for"),
        "validate-resource" => ("validating", "validating"),
        "plan-resource" => ("planning", "planning"),
        "apply-resource" => ("applying", "applying"),
        "read-resource" => ("refreshing", "refreshing"),
        "import-resource" => ("importing", "importing"),
        "read-data-source" => ("reading a data source", "reading"),
        "upgrade-state" => ("upgrading a state", "upgrading the state of"),
        other => (other, other),
    }
}

/// The result of a provider call.
pub type CallResult<T> = Result<T, CallError>;

/// A provider call that may wait without holding a thread.
pub type CallFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = CallResult<T>> + Send + 'a>>;

/// A configured provider, ready to serve calls. Implementations must allow
/// concurrent calls (the executor runs independent resources in parallel).
pub trait Provider: Send + Sync {
    /// The provider's local name (`local`, `random`, …), for messages.
    fn name(&self) -> &str;

    /// The schema the provider declared.
    fn schema(&self) -> &ProviderSchema;

    /// Provider-specific validation of a resource's configuration.
    fn validate_resource(&self, type_name: &str, config: &Value) -> CallResult<Vec<Diagnostic>>;

    /// Plans a create or update.
    fn plan_resource(&self, request: PlanRequest) -> CallResult<PlanResponse>;

    /// Applies a create, update or delete.
    fn apply_resource(&self, request: ApplyRequest) -> CallResult<ApplyResponse>;

    /// [`Provider::apply_resource`] as a future, which the executor awaits.
    /// A provider that waits on I/O or timers overrides it, so that a
    /// waiting call holds no thread and many can be in flight at once. The
    /// default runs the blocking call in place
    /// ([`tokio::task::block_in_place`]), which needs a multi-threaded
    /// tokio runtime.
    fn apply_resource_async(&self, request: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        Box::pin(async move { tokio::task::block_in_place(|| self.apply_resource(request)) })
    }

    /// Refreshes an object.
    fn read_resource(&self, type_name: &str, current_state: &Value, private: &[u8]) -> CallResult<ReadResponse>;

    /// Reads a data source; returns the state and diagnostics.
    fn read_data_source(&self, type_name: &str, config: &Value) -> CallResult<(Value, Vec<Diagnostic>)>;

    /// Upgrades a state stored with an older schema version.
    fn upgrade_state(&self, type_name: &str, version: u64, raw_json: &str) -> CallResult<(Value, Vec<Diagnostic>)>;
}
