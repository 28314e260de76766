//! The one seam between the engine and providers: the [`Provider`] trait.
//!
//! The planner and executor only ever talk to this trait (through the
//! contract gate, [`crate::contract::Gate`]), so they run the same against a
//! WebAssembly component (see `runtime`) and against an in-process fake in
//! tests. Every call is asynchronous.

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

/// One existing object found by `import_resource`.
#[derive(Debug, Clone)]
pub struct ImportedResource {
    /// Its resource type (a provider may find an object of another type
    /// than the one asked for, as Terraform allows; the host refuses it).
    pub type_name: String,
    /// The object as it is, in its type's schema.
    pub state: Value,
    /// Stored with the state.
    pub private: Vec<u8>,
}

/// What `import_resource` answers.
#[derive(Debug, Clone, Default)]
pub struct ImportResponse {
    /// The objects found; empty (with an error diagnostic) when there is none.
    pub imported: Vec<ImportedResource>,
    /// Messages for the user.
    pub diagnostics: Vec<Diagnostic>,
}

/// What `move_resource_state` is given (see the WIT `state-moves`
/// interface): an object stored as another resource type, to convert.
#[derive(Debug, Clone)]
pub struct MoveRequest {
    /// The full address of the provider that stored the object
    /// (`registry.terraform.io/hashicorp/null`).
    pub source_provider_address: String,
    /// The resource type it was stored as.
    pub source_type_name: String,
    /// The schema version it was written with.
    pub source_schema_version: u64,
    /// Its attributes as stored, JSON.
    pub source_state_json: String,
    /// The source provider's private bytes.
    pub source_private: Vec<u8>,
    /// The type to convert it to: one of this provider's.
    pub target_type_name: String,
}

/// What `move_resource_state` answers.
#[derive(Debug, Clone, Default)]
pub struct MoveResponse {
    /// The object in the target type's layout.
    pub target_state: Value,
    /// Stored with the moved object.
    pub target_private: Vec<u8>,
    /// Messages for the user; an error refuses the move.
    pub diagnostics: Vec<Diagnostic>,
}

/// What `open_ephemeral` answers (see the WIT `ephemeral-resources`
/// interface).
#[derive(Debug, Clone, Default)]
pub struct OpenResponse {
    /// The configuration with every computed attribute filled in, all
    /// known. Meaningless when `diagnostics` has an error.
    pub result: Value,
    /// The paths the provider marked sensitive in `result`.
    pub sensitive: Vec<Path>,
    /// Handed to `renew` and `close` of this object; never stored.
    pub private: Vec<u8>,
    /// When to renew, in milliseconds since the Unix epoch; `None` for never.
    pub renew_at: Option<u64>,
    /// Messages for the user; an error means nothing was opened.
    pub diagnostics: Vec<Diagnostic>,
}

/// What `renew_ephemeral` answers.
#[derive(Debug, Clone, Default)]
pub struct RenewResponse {
    /// Replaces the object's private bytes.
    pub private: Vec<u8>,
    /// When to renew again; `None` for never.
    pub renew_at: Option<u64>,
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
        "ephemeral-schemas" => ("reading its ephemeral resource schemas", "reading its schemas for"),
        "ephemeral-validate" => ("validating an ephemeral resource", "validating"),
        "ephemeral-open" => ("opening an ephemeral resource", "opening"),
        "ephemeral-renew" => ("renewing an ephemeral resource", "renewing"),
        "ephemeral-close" => ("closing an ephemeral resource", "closing"),
        other => (other, other),
    }
}

/// The result of a provider call.
pub type CallResult<T> = Result<T, CallError>;

/// A provider call in flight: a future that may wait (on a timer, on HTTP,
/// on a free instance) without holding a thread.
pub type CallFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = CallResult<T>> + Send + 'a>>;

/// A call whose answer is already there: for in-process providers (test
/// fakes), which compute their answer without waiting.
pub fn ready<'a, T: Send + 'a>(answer: CallResult<T>) -> CallFuture<'a, T> {
    Box::pin(std::future::ready(answer))
}

/// A configured provider, ready to serve calls: the one seam between the
/// engine and providers. Every call is a future, so that the engine can
/// have many in flight on few threads (refresh, plan and apply all walk the
/// graph in parallel). Implementations must allow concurrent calls.
///
/// Answers are raw: nothing has checked them against the contracts yet.
/// The engine never calls these methods itself but goes through
/// [`crate::contract::Gate`], which checks every answer.
pub trait Provider: Send + Sync {
    /// The provider's local name (`local`, `random`, …), for messages.
    fn name(&self) -> &str;

    /// The schema the provider declared.
    fn schema(&self) -> &ProviderSchema;

    /// Provider-specific validation of a resource's configuration.
    fn validate_resource<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>>;

    /// Plans a create or update.
    fn plan_resource(&self, request: PlanRequest) -> CallFuture<'_, PlanResponse>;

    /// Applies a create, update or delete.
    fn apply_resource(&self, request: ApplyRequest) -> CallFuture<'_, ApplyResponse>;

    /// Refreshes an object.
    fn read_resource<'a>(
        &'a self,
        type_name: &'a str,
        current_state: &'a Value,
        private: &'a [u8],
    ) -> CallFuture<'a, ReadResponse>;

    /// Finds an existing object by its provider-specific `id`, for adoption
    /// (`import` blocks, `cairn import`, and recovering an interrupted
    /// create). In-process fakes that never adopt keep the default, an
    /// error diagnostic.
    fn import_resource<'a>(&'a self, type_name: &'a str, id: &'a str) -> CallFuture<'a, ImportResponse> {
        let _ = id;
        ready(Ok(ImportResponse {
            imported: Vec::new(),
            diagnostics: vec![Diagnostic::error(format!("Resource type `{type_name}` does not support import"))],
        }))
    }

    /// Reads a data source; returns the state and diagnostics.
    fn read_data_source<'a>(
        &'a self,
        type_name: &'a str,
        config: &'a Value,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)>;

    /// Upgrades a state stored with an older schema version.
    fn upgrade_state<'a>(
        &'a self,
        type_name: &'a str,
        version: u64,
        raw_json: &'a str,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)>;

    /// Converts an object stored as another resource type into one of
    /// this provider's (a `moved` block across types). `None` when the
    /// provider does not support such moves at all (a component that does
    /// not export the optional `state-moves` interface, and in-process
    /// fakes, which keep this default).
    fn move_resource_state(&self, request: MoveRequest) -> CallFuture<'_, Option<MoveResponse>> {
        let _ = request;
        ready(Ok(None))
    }

    /// Provider-specific validation of an ephemeral resource's
    /// configuration. Providers without ephemeral resources keep the
    /// default: nothing to say.
    fn validate_ephemeral<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        let _ = (type_name, config);
        ready(Ok(Vec::new()))
    }

    /// Opens an ephemeral resource of `type_name` with its fully known
    /// `config`. Providers without the optional `ephemeral-resources`
    /// export keep the default, an error (the host refuses their
    /// `ephemeral` blocks before, since their schema offers no type).
    fn open_ephemeral<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, OpenResponse> {
        let _ = (type_name, config);
        ready(Err(CallError::new(self.name(), "ephemeral-open", "offers no ephemeral resources")))
    }

    /// Renews an open ephemeral object, given its private bytes.
    fn renew_ephemeral<'a>(&'a self, type_name: &'a str, private: &'a [u8]) -> CallFuture<'a, RenewResponse> {
        let _ = (type_name, private);
        ready(Err(CallError::new(self.name(), "ephemeral-renew", "offers no ephemeral resources")))
    }

    /// Closes an open ephemeral object, given its private bytes.
    fn close_ephemeral<'a>(&'a self, type_name: &'a str, private: &'a [u8]) -> CallFuture<'a, Vec<Diagnostic>> {
        let _ = (type_name, private);
        ready(Err(CallError::new(self.name(), "ephemeral-close", "offers no ephemeral resources")))
    }

    /// The provider that answers the calls about the instance `addr`
    /// instead of this one, if any: `cairn test`'s `override_resource` and
    /// `override_data` name instances, which a call alone does not. The
    /// contract gate asks before every call; components and fakes keep the
    /// default, none.
    fn stand_in<'a>(&'a self, addr: &crate::addr::InstanceAddr) -> Option<&'a dyn Provider> {
        let _ = addr;
        None
    }
}
