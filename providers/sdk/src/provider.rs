//! The [`Provider`] trait and the requests and answers of its methods, with
//! the helpers that make the usual plan a one-liner.

use std::sync::Arc;

use crate::diag::{Diagnostic, Path};
use crate::schema::{ProviderSchema, Schema};
use crate::value::Value;

/// A cairn provider. Implement it, then call
/// [`export_provider!`](crate::export_provider) once.
///
/// The host may create a fresh instance for any call: it calls
/// [`configure`](Self::configure) first on each, and the SDK keeps the
/// configured value for the instance's later calls. Keep nothing else
/// between calls.
///
/// Return ordinary failures (bad input, I/O errors, remote errors) as error
/// [`Diagnostic`]s. A panic traps the instance; the host survives it and
/// reports the call as failed, but the user gets a far worse message.
pub trait Provider: Sized + 'static {
    /// Everything the provider offers. Called before `configure`; must not
    /// depend on configuration.
    fn schema() -> ProviderSchema;

    /// Build the provider from its `provider "name" { … }` block (null when
    /// there is none).
    fn configure(config: Value) -> Result<Self, Vec<Diagnostic>>;

    /// Check a resource's configuration beyond what the schema says (the host
    /// has already checked types and required attributes). Values may be
    /// unknown: say nothing about those.
    fn validate(&self, type_name: &str, config: &Value) -> Vec<Diagnostic> {
        let _ = (type_name, config);
        Vec::new()
    }

    /// Predict a create or an update (deletes are planned by the host).
    ///
    /// The default is [`PlanResponse::from_proposed`]: the proposed new state,
    /// with the computed attributes the configuration leaves null unknown on
    /// create. Override it to declare requires-replace attributes or
    /// defaults:
    ///
    /// ```text
    /// fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
    ///     Ok(PlanResponse::from_proposed(&req)
    ///         .requires_replace(["filename", "content"])
    ///         .default("file_permission", "0777"))
    /// }
    /// ```
    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        Ok(PlanResponse::from_proposed(&req))
    }

    /// Make the object match `req.planned_state`: create it (prior state
    /// null), update it, or delete it (planned state null). The new state
    /// must keep every known planned value and contain no unknowns.
    ///
    /// To report a partly created object, return `Ok` with the partial
    /// state and an error diagnostic in [`ApplyResponse::diagnostics`]: the
    /// host records it as tainted. An `Err` from a create records nothing.
    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>>;

    /// Refresh: read the object as it really is now; `None` when it no
    /// longer exists. The default trusts the stored state.
    fn read(&self, req: ReadRequest) -> Result<Option<Value>, Vec<Diagnostic>> {
        Ok(Some(req.current_state))
    }

    /// Read the data source `type_name`; `config` is fully known. Return it
    /// with every computed attribute filled in.
    fn read_data_source(&self, type_name: &str, config: Value) -> Result<Value, Vec<Diagnostic>> {
        let _ = config;
        Err(Diagnostic::error(format!("Unknown data source `{type_name}`")).into())
    }

    /// Find an existing object of `type_name` by its provider-specific `id`
    /// and return its state, for adoption into cairn's state. Unsupported by
    /// default.
    ///
    /// After an apply was interrupted during a create, cairn calls this
    /// with the create's idempotency key as `id`: a provider that recorded
    /// the key with what it created answers that object (cairn adopts it,
    /// tainted), and an error otherwise (`docs/writing-providers.md`).
    fn import(&self, type_name: &str, id: &str) -> Result<Value, Vec<Diagnostic>> {
        let _ = id;
        Err(Diagnostic::error(format!("Resource type `{type_name}` does not support import")).into())
    }

    /// Rewrite a state stored with schema version `version` (as JSON) into
    /// the current layout. The default reads the current version with
    /// [`Schema::state_from_json`] and refuses any other: a provider that
    /// bumps a schema version must override this.
    fn upgrade_state(&self, type_name: &str, version: u64, raw_json: &str) -> Result<Value, Vec<Diagnostic>> {
        let schema = Self::schema();
        let Some(schema) = schema.resource_schema(type_name) else {
            return Err(Diagnostic::error(format!("Unknown resource type `{type_name}`")).into());
        };
        if version != schema.version {
            return Err(Diagnostic::error(format!("Cannot upgrade `{type_name}` state from version {version}"))
                .detail(format!(
                    "The provider's schema is at version {}, and it has no upgrade from version {version}.",
                    schema.version
                ))
                .into());
        }
        Ok(schema.state_from_json(raw_json)?)
    }

    /// Convert an object stored as another resource type (of this provider
    /// or another) into one of `req.target_type_name`: a `moved` block
    /// across types, as Terraform 1.8's `moved { from = null_resource.a
    /// to = terraform_data.a }`. Return the object in the target type's
    /// layout, every value known; check `req.source_provider_address` and
    /// `req.source_type_name` and refuse what you do not know.
    ///
    /// Only called when the crate exports the interface with
    /// [`export_state_moves!`](crate::export_state_moves). The default
    /// refuses every move, as Terraform's plugin framework does for a
    /// resource without move support.
    fn move_state(&self, req: MoveRequest) -> Result<Value, Vec<Diagnostic>> {
        Err(Diagnostic::error("Unable to Move Resource State")
            .detail(format!(
                "The target resource implementation does not include move resource state support.\n\n\
                 Source Provider Address: {}\nSource Resource Type: {}\nSource Resource Schema Version: {}\n\
                 Target Resource Type: {}",
                req.source_provider_address, req.source_type_name, req.source_schema_version, req.target_type_name
            ))
            .into())
    }

    /// Check an ephemeral resource's configuration beyond what the schema
    /// says. Values may be unknown: say nothing about those.
    fn validate_ephemeral(&self, type_name: &str, config: &Value) -> Vec<Diagnostic> {
        let _ = (type_name, config);
        Vec::new()
    }

    /// Open an object of the ephemeral resource type `type_name` (declared
    /// with [`ProviderSchema::ephemeral_resource`](crate::ProviderSchema::ephemeral_resource))
    /// from its fully known `config`: answer the configuration with every
    /// computed attribute filled in, and whatever `renew` and `close` need
    /// in [`OpenResponse::private`]. Nothing of it is ever stored.
    ///
    /// Only called when the crate exports the interface with
    /// [`export_ephemeral_resources!`](crate::export_ephemeral_resources).
    fn open_ephemeral(&self, type_name: &str, config: Value) -> Result<OpenResponse, Vec<Diagnostic>> {
        let _ = config;
        Err(Diagnostic::error(format!("Unknown ephemeral resource type `{type_name}`")).into())
    }

    /// Keep an open object alive (extend a lease, refresh a token), given
    /// its private bytes; called when the `renew_at` of its open (or of its
    /// last renewal) passes while the run still uses it. The default asks
    /// for no more renewals.
    fn renew_ephemeral(&self, type_name: &str, private: &[u8]) -> Result<RenewResponse, Vec<Diagnostic>> {
        let _ = type_name;
        Ok(RenewResponse { private: private.to_vec(), renew_at: None })
    }

    /// Close an open object (revoke a lease, end a session), given its
    /// private bytes: called once for every successful open. The default
    /// has nothing to close.
    fn close_ephemeral(&self, type_name: &str, private: &[u8]) -> Result<(), Vec<Diagnostic>> {
        let _ = (type_name, private);
        Ok(())
    }
}

/// What [`Provider::open_ephemeral`] answers.
#[derive(Clone, Debug, Default)]
pub struct OpenResponse {
    /// The configuration with every computed attribute filled in, all
    /// known; the schema's sensitive attributes are marked on the wire.
    pub result: Value,
    /// Opaque bytes handed to `renew` and `close` of this object, in this
    /// run only.
    pub private: Vec<u8>,
    /// When to renew, in milliseconds since the Unix epoch; `None` for
    /// never.
    pub renew_at: Option<u64>,
    /// Warnings.
    pub diagnostics: Vec<Diagnostic>,
}

impl OpenResponse {
    /// The object opened is `result`.
    pub fn new(result: Value) -> OpenResponse {
        OpenResponse { result, ..OpenResponse::default() }
    }

    /// Hand `private` to `renew` and `close` of this object.
    pub fn private(mut self, private: impl Into<Vec<u8>>) -> OpenResponse {
        self.private = private.into();
        self
    }

    /// Ask for `renew` at `at`, milliseconds since the Unix epoch.
    pub fn renew_at(mut self, at: u64) -> OpenResponse {
        self.renew_at = Some(at);
        self
    }
}

/// What [`Provider::renew_ephemeral`] answers.
#[derive(Clone, Debug, Default)]
pub struct RenewResponse {
    /// Replaces the object's private bytes.
    pub private: Vec<u8>,
    /// When to renew again, milliseconds since the Unix epoch; `None` for
    /// never.
    pub renew_at: Option<u64>,
}

/// What [`Provider::move_state`] is given: an object stored as another
/// resource type.
#[derive(Debug, Clone)]
pub struct MoveRequest {
    /// The full address of the provider that stored it
    /// (`registry.terraform.io/hashicorp/null`).
    pub source_provider_address: String,
    /// The resource type it was stored as (`null_resource`).
    pub source_type_name: String,
    /// The version of the source type's schema it was written with.
    pub source_schema_version: u64,
    /// Its stored attributes, as JSON in the source type's layout: read it
    /// with a [`Schema`] of the source type ([`Schema::state_from_json`]).
    pub source_state_json: String,
    /// The private bytes the source provider stored with it.
    pub source_private: Vec<u8>,
    /// The type to convert it to: one of this provider's.
    pub target_type_name: String,
}

/// What [`Provider::plan`] is given: the lifecycle's artifacts for one
/// resource instance.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// The resource type name.
    pub type_name: String,
    /// The resource type's schema (shared: requests for one type are handed
    /// the same copy).
    pub schema: Arc<Schema>,
    /// The state after the last apply (after refresh); null for a create.
    pub prior_state: Value,
    /// The host's merge: configured values where the configuration sets
    /// them, prior values for computed attributes it leaves null.
    pub proposed_new_state: Value,
    /// The configuration alone; may contain unknowns.
    pub config: Value,
    /// The private bytes stored with the prior state.
    pub prior_private: Vec<u8>,
}

impl PlanRequest {
    /// The request the host sends for `config` over `prior` (null for a
    /// create): the proposed new state takes the configured values, and the
    /// prior value of each computed top-level attribute the configuration
    /// leaves null. For a provider's unit tests.
    pub fn proposed(type_name: &str, schema: impl Into<Arc<Schema>>, prior: Value, config: Value) -> PlanRequest {
        let schema = schema.into();
        let mut proposed = config.clone();
        for name in schema.computed_attributes() {
            if config.get_attr(name).is_null() {
                proposed.set_attr(name, prior.get_attr(name).clone());
            }
        }
        PlanRequest {
            type_name: type_name.to_string(),
            schema,
            prior_state: prior,
            proposed_new_state: proposed,
            config,
            prior_private: Vec::new(),
        }
    }

    /// Is this the plan of a new object?
    pub fn is_create(&self) -> bool {
        self.prior_state.is_null()
    }
}

/// What [`Provider::plan`] answers. Build it with
/// [`from_proposed`](Self::from_proposed) and the helpers below, or set the
/// fields directly.
#[derive(Clone, Debug)]
pub struct PlanResponse {
    /// The predicted new state. Must keep every non-null configured value
    /// (or the prior one); may set computed attributes the configuration
    /// leaves null, using [`Value::unknown()`] for what only apply can tell.
    pub planned_state: Value,
    /// Attributes whose change cannot be made in place: if any differs from
    /// the prior state, the host replaces the object.
    pub requires_replace: Vec<Path>,
    /// Opaque bytes handed back to [`Provider::apply`].
    pub planned_private: Vec<u8>,
    /// Warnings to show (errors belong in the `Err` of `plan`).
    pub diagnostics: Vec<Diagnostic>,
    /// Top-level attributes to mark sensitive in `planned_state` beyond
    /// those the schema marks: the host redacts them in plan output.
    pub sensitive: Vec<String>,
    /// What the helpers need to know about the request.
    ctx: Option<PlanContext>,
}

#[derive(Clone, Debug)]
struct PlanContext {
    prior: Value,
    config: Value,
    /// Top-level computed attributes that the configuration leaves null:
    /// the ones a plan may set freely.
    free: Vec<String>,
}

impl PlanResponse {
    /// A response planning exactly `planned_state`, no replacement.
    pub fn new(planned_state: Value) -> PlanResponse {
        PlanResponse {
            planned_state,
            requires_replace: Vec::new(),
            planned_private: Vec::new(),
            diagnostics: Vec::new(),
            sensitive: Vec::new(),
            ctx: None,
        }
    }

    /// The default plan: the proposed new state with write-only attributes
    /// null, where on create every
    /// top-level computed attribute the configuration leaves null becomes
    /// unknown
    /// (on update they keep their prior values, which the host already
    /// merged in). The request's private bytes are carried over.
    pub fn from_proposed(req: &PlanRequest) -> PlanResponse {
        let free: Vec<String> = req
            .schema
            .computed_attributes()
            .filter(|name| req.config.get_attr(name).is_null())
            .map(str::to_owned)
            .collect();
        // Write-only values reach the provider in the request and never
        // the plan: the host refuses a plan that keeps one.
        let mut resp = PlanResponse::new(req.schema.block.null_write_only(&req.proposed_new_state));
        resp.planned_private = req.prior_private.clone();
        resp.ctx = Some(PlanContext { prior: req.prior_state.clone(), config: req.config.clone(), free });
        if req.is_create() {
            resp.mark_free_unknown();
        }
        resp
    }

    fn mark_free_unknown(&mut self) {
        let Some(ctx) = &self.ctx else { return };
        for name in &ctx.free {
            self.planned_state.set_attr(name.clone(), Value::unknown());
        }
    }

    /// Declare top-level attributes whose change forces a replacement.
    ///
    /// When one of them differs from the prior state (or is unknown), the
    /// object will be created anew, so the computed attributes the
    /// configuration leaves null also become unknown, as on create: the
    /// prior object's values do not describe the new one.
    pub fn requires_replace<S: AsRef<str>>(mut self, attrs: impl IntoIterator<Item = S>) -> PlanResponse {
        let mut replacing = false;
        for name in attrs {
            let name = name.as_ref();
            if let Some(ctx) = &self.ctx
                && !ctx.prior.is_null()
                && ctx.prior.get_attr(name) != self.planned_state.get_attr(name)
            {
                replacing = true;
            }
            self.requires_replace.push(Path::attr(name));
        }
        if replacing {
            self.mark_free_unknown();
            // Marked once: a second call must not blank out defaults set
            // in between.
            if let Some(ctx) = self.ctx.as_mut() {
                ctx.free.clear();
            }
        }
        self
    }

    /// Use `value` for the optional+computed attribute `name` when the
    /// configuration leaves it null (Terraform's `Default`). Call it before
    /// [`requires_replace`](Self::requires_replace) when `name` is one of
    /// the replacing attributes, so that the comparison sees the default.
    pub fn default(mut self, name: &str, value: impl Into<Value>) -> PlanResponse {
        let unset = self.ctx.as_ref().is_none_or(|ctx| ctx.config.get_attr(name).is_null());
        if unset {
            self.planned_state.set_attr(name, value);
            if let Some(ctx) = self.ctx.as_mut() {
                // Known now; a later replacement must not blank it out.
                ctx.free.retain(|n| n != name);
            }
        }
        self
    }

    /// Set the planned value of the top-level attribute `name` (a computed
    /// attribute the provider can predict, or [`Value::unknown()`]).
    pub fn set(mut self, name: &str, value: impl Into<Value>) -> PlanResponse {
        self.planned_state.set_attr(name, value);
        self
    }

    /// Mark the top-level attribute `name` of the planned state sensitive
    /// (a value the schema cannot know is secret).
    pub fn mark_sensitive(mut self, name: impl Into<String>) -> PlanResponse {
        self.sensitive.push(name.into());
        self
    }

    /// Add a warning for the user.
    pub fn warn(mut self, diagnostic: Diagnostic) -> PlanResponse {
        self.diagnostics.push(diagnostic);
        self
    }
}

/// What [`Provider::apply`] is given.
#[derive(Clone, Debug)]
pub struct ApplyRequest {
    /// The resource type name.
    pub type_name: String,
    /// The resource type's schema (shared: requests for one type are handed
    /// the same copy).
    pub schema: Arc<Schema>,
    /// The state before this change; null for a create.
    pub prior_state: Value,
    /// The planned state; null means delete the object.
    pub planned_state: Value,
    /// The configuration, fully known; null for a delete.
    pub config: Value,
    /// The `planned_private` bytes of the plan.
    pub planned_private: Vec<u8>,
    /// The same for every retry of the same planned change, so that an
    /// object an interrupted attempt created can be recognised.
    pub idempotency_key: String,
}

impl ApplyRequest {
    /// Is this the creation of a new object?
    pub fn is_create(&self) -> bool {
        self.prior_state.is_null() && !self.planned_state.is_null()
    }

    /// Is this the deletion of the object?
    pub fn is_delete(&self) -> bool {
        self.planned_state.is_null()
    }

    /// The value of planned attribute `name` if the plan knows it, else
    /// `compute()`: the usual way to fill in a computed attribute without
    /// changing a value the plan promised.
    pub fn planned_or(&self, name: &str, compute: impl FnOnce() -> Value) -> Value {
        match self.planned_state.get_attr(name) {
            Value::Unknown(_) => compute(),
            v if v.is_known() => v.clone(),
            // Partly unknown (a list with an unknown element): the provider
            // must compute it whole.
            _ => compute(),
        }
    }
}

/// What [`Provider::apply`] answers.
#[derive(Clone, Debug)]
pub struct ApplyResponse {
    /// The object as it now is: every value known, every known planned
    /// value kept. Null after a delete.
    pub new_state: Value,
    /// Opaque bytes the host stores with the state.
    pub private: Vec<u8>,
    /// Warnings; or an error together with a partial `new_state`.
    pub diagnostics: Vec<Diagnostic>,
    /// Top-level attributes to mark sensitive in `new_state` beyond those
    /// the schema marks: the host redacts them in plan output, `show` and
    /// `-json` output (a value that turned out secret, say).
    pub sensitive: Vec<String>,
}

impl ApplyResponse {
    /// The object now has state `new_state`.
    pub fn new(new_state: Value) -> ApplyResponse {
        ApplyResponse { new_state, private: Vec::new(), diagnostics: Vec::new(), sensitive: Vec::new() }
    }

    /// Mark the top-level attribute `name` of the new state sensitive.
    pub fn sensitive(mut self, name: impl Into<String>) -> ApplyResponse {
        self.sensitive.push(name.into());
        self
    }

    /// The object is gone.
    pub fn deleted() -> ApplyResponse {
        ApplyResponse::new(Value::Null)
    }
}

/// What [`Provider::read`] is given.
#[derive(Clone, Debug)]
pub struct ReadRequest {
    /// The resource type name.
    pub type_name: String,
    /// The resource type's schema (shared: requests for one type are handed
    /// the same copy).
    pub schema: Arc<Schema>,
    /// The state as the host has it.
    pub current_state: Value,
    /// The private bytes stored with it (kept unchanged by the SDK).
    pub private: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Attr, Type};

    fn schema() -> Schema {
        Schema::new(0)
            .attribute("filename", Attr::string().required())
            .attribute("content", Attr::string().optional())
            .attribute("mode", Attr::string().optional().computed())
            .attribute("tags", Attr::map(Type::String).optional())
            .attribute("id", Attr::string().computed())
    }

    fn request(prior: Value, config: Value) -> PlanRequest {
        PlanRequest { prior_private: b"p".to_vec(), ..PlanRequest::proposed("t", schema(), prior, config) }
    }

    fn config(content: &str) -> Value {
        Value::object([
            ("filename", Value::from("a.txt")),
            ("content", Value::from(content)),
            ("mode", Value::Null),
            ("tags", Value::Null),
            ("id", Value::Null),
        ])
    }

    fn prior(content: &str) -> Value {
        let mut v = config(content);
        v.set_attr("mode", "0644");
        v.set_attr("id", "abc");
        v
    }

    #[test]
    fn create_marks_null_computed_attributes_unknown() {
        let resp = PlanResponse::from_proposed(&request(Value::Null, config("x")));
        assert!(resp.planned_state.get_attr("id").is_unknown());
        assert!(resp.planned_state.get_attr("mode").is_unknown());
        assert_eq!(resp.planned_state.get_attr("content").as_str(), Some("x"));
        assert!(resp.planned_state.get_attr("tags").is_null(), "optional-only attributes stay null");
        assert!(resp.requires_replace.is_empty());
        assert_eq!(resp.planned_private, b"p");
    }

    #[test]
    fn configured_computed_values_are_kept() {
        let mut cfg = config("x");
        cfg.set_attr("mode", "0600");
        let resp = PlanResponse::from_proposed(&request(Value::Null, cfg)).default("mode", "0777");
        assert_eq!(resp.planned_state.get_attr("mode").as_str(), Some("0600"));
    }

    #[test]
    fn in_place_update_keeps_prior_computed_values() {
        let mut cfg = config("x");
        cfg.set_attr("tags", Value::map([("k", "v")]));
        let resp = PlanResponse::from_proposed(&request(prior("x"), cfg)).requires_replace(["filename", "content"]);
        assert_eq!(resp.planned_state.get_attr("id").as_str(), Some("abc"));
        assert_eq!(resp.planned_state.get_attr("mode").as_str(), Some("0644"));
        assert_eq!(resp.requires_replace, vec![Path::attr("filename"), Path::attr("content")]);
    }

    #[test]
    fn replacement_makes_computed_values_unknown_except_defaults() {
        let resp = PlanResponse::from_proposed(&request(prior("old"), config("new")))
            .requires_replace(["filename", "content"])
            .default("mode", "0777");
        assert!(resp.planned_state.get_attr("id").is_unknown());
        assert_eq!(resp.planned_state.get_attr("mode").as_str(), Some("0777"));
        // The same regardless of the order of the helpers.
        let resp = PlanResponse::from_proposed(&request(prior("old"), config("new")))
            .default("mode", "0777")
            .requires_replace(["content"]);
        assert!(resp.planned_state.get_attr("id").is_unknown());
        assert_eq!(resp.planned_state.get_attr("mode").as_str(), Some("0777"));
    }

    #[test]
    fn unknown_config_in_a_replacing_attribute_means_replacement() {
        let mut cfg = config("x");
        cfg.set_attr("content", Value::unknown());
        let resp = PlanResponse::from_proposed(&request(prior("x"), cfg)).requires_replace(["content"]);
        assert!(resp.planned_state.get_attr("id").is_unknown());
    }

    #[test]
    fn no_change_plans_the_prior_state() {
        let resp = PlanResponse::from_proposed(&request(prior("x"), config("x")))
            .requires_replace(["filename", "content"])
            .default("mode", "0644");
        assert_eq!(resp.planned_state, prior("x"));
    }

    #[test]
    fn planned_or_keeps_known_planned_values() {
        let req = ApplyRequest {
            type_name: "t".into(),
            schema: schema().into(),
            prior_state: Value::Null,
            planned_state: Value::object([("id", Value::unknown()), ("mode", Value::from("0600"))]),
            config: Value::Null,
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        };
        assert!(req.is_create() && !req.is_delete());
        assert_eq!(req.planned_or("id", || "new".into()).as_str(), Some("new"));
        assert_eq!(req.planned_or("mode", || "0777".into()).as_str(), Some("0600"));
    }
}
