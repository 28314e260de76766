//! Starting the providers a run needs: each one's component found by the
//! registry, loaded by the runtime, given the sandbox its `provider` block
//! grants, and configured with that block: at once when the block refers
//! to input variables alone, or else when the walk reaches the block
//! (`plan::late`), with what it refers to planned or applied by then.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::config::{self, Config, EvalContext, Expression, ProviderConfig};
use crate::diag::{Diagnostic, Location};
use crate::plan::{ConfigureFn, Configuring, LateProvider, LateProviders, Providers};
use crate::provider::Provider;
use crate::registry;
use crate::runtime::{HttpGrant, LoadedProvider, Runtime, Sandbox};
use crate::schema::ProviderSchema;
use crate::state::State;
use crate::value::Value;

/// The provider names a run needs: those of configured resources, of
/// `provider` blocks, and of everything in state (to destroy orphans).
pub fn needed_providers(config: &Config, state: &State) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = config.resources.iter().map(|r| r.provider.clone()).collect();
    names.extend(config.checks.iter().flat_map(|c| &c.data).map(|d| d.provider.clone()));
    names.extend(config.providers.iter().map(|p| p.name.clone()));
    names.extend(state.resources.iter().map(|r| r.provider.clone()));
    names
}

/// The provider a configuration name is of: `local` for `local` and for
/// the aliased `local.other`.
pub fn provider_type(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// A provider loaded and sandboxed, not configured yet.
pub struct Loaded {
    /// The compiled component.
    pub loaded: LoadedProvider,
    /// The sandbox its instances get.
    pub sandbox: Sandbox,
    /// Its schema.
    pub schema: ProviderSchema,
    /// The SHA-256 of its component, as loaded (saved plans record it).
    pub sha256: String,
}

/// Loads the provider of configuration `name` (`local`, or an aliased
/// `local.other`, which is the same component under another name), to run
/// in `sandbox`, and reads its schema.
pub async fn load(runtime: &Runtime, config: &Config, name: &str, sandbox: Sandbox) -> Result<Loaded, Vec<Diagnostic>> {
    // Identity, signature and lock are checked on the file's bytes before
    // the runtime compiles (let alone runs) any of it.
    let verified = registry::load(provider_type(name), config).map_err(|d| vec![d])?;
    let loaded = runtime
        .load(name, &verified.bytes)
        .map_err(|e| vec![Diagnostic::error(format!("Provider {name:?} could not be loaded: {e:#}"))])?;
    let schema = loaded.schema(&sandbox).await.map_err(|e| vec![Diagnostic::error(e.to_string())])?;
    Ok(Loaded { loaded, sandbox, schema, sha256: verified.entry.sha256 })
}

/// The `provider` block of `name` when the walk configures it (see
/// `graph::configured_in_graph`).
fn late_block<'c>(config: &'c Config, name: &str) -> Option<&'c ProviderConfig> {
    config.providers.iter().find(|p| p.name == name).filter(|p| crate::graph::configured_in_graph(p))
}

/// The sandbox policy of provider `name`: what its `provider` block's
/// `sandbox` grants (nothing without one), as the configuration checked it,
/// with the headers of its `http` grants evaluated with the run's
/// `variables` (for a provider configured late, they are evaluated when it
/// is configured).
pub fn policy(config: &Config, name: &str, variables: &BTreeMap<String, Value>) -> Result<Sandbox, Vec<Diagnostic>> {
    let Some(block) = config.providers.iter().find(|p| p.name == name) else { return Ok(Sandbox::default()) };
    let mut sandbox = block.sandbox.clone();
    if crate::graph::configured_in_graph(block) {
        return Ok(sandbox);
    }
    let ctx = EvalContext {
        variables: variables.clone(),
        ephemeral: config.ephemeral.clone(),
        ..EvalContext::new(&config.dir)
    };
    add_block_headers(block, &mut sandbox, &ctx)?;
    Ok(sandbox)
}

/// Adds to `sandbox`'s `http` grants the headers `block`'s sandbox gives
/// them, evaluated in `ctx`; every error, each grant's.
fn add_block_headers(block: &ProviderConfig, sandbox: &mut Sandbox, ctx: &EvalContext) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for headers in &block.http_headers {
        let Some(grant) = sandbox.http.get_mut(headers.grant) else { continue };
        if let Err(d) = add_headers(&block.name, grant, &headers.expr, ctx) {
            errors.extend(d);
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// Adds the headers `expr` gives to provider `name`'s `grant`: a map of header names to
/// known strings, each one that HTTP can carry. An error never shows a
/// value: it is likely a secret. While planning, a header whose value is
/// not known yet (a provider configured late) is left out: a request can
/// carry no unknown value.
fn add_headers(name: &str, grant: &mut HttpGrant, expr: &Expression, ctx: &EvalContext) -> Result<(), Vec<Diagnostic>> {
    let origin = grant.origin();
    let invalid = |detail: String| {
        let summary = format!("provider {name:?}: invalid headers for {origin}");
        vec![Diagnostic::error(summary).with_detail(detail).at(&expr.location)]
    };
    let planning = ctx.phase != config::Phase::Apply;
    let entries = match config::eval(expr, ctx)? {
        Value::Unknown(_) if planning => return Ok(()),
        Value::Object(entries) | Value::Map(entries) => entries,
        other => return Err(invalid(format!("headers must be a map of strings, got {}.", other.kind_name()))),
    };
    for (header, value) in entries {
        if planning && matches!(value, Value::Unknown(_)) {
            continue;
        }
        let Value::String(value) = value else {
            return Err(invalid(format!("the value of header {header:?} must be a known string.")));
        };
        grant.add_header(&header, &value).map_err(|e| invalid(format!("{e}.")))?;
    }
    Ok(())
}

/// Whether a run may change things: only then are granted read-write
/// directories created and writable, so that validate and plan leave no
/// trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// validate, plan, show.
    Inspect,
    /// apply, destroy.
    Change,
}

/// The SHA-256 of each started provider's component, by local name.
pub type ProviderHashes = BTreeMap<String, String>;

/// The providers a run started.
#[derive(Default)]
pub struct Started {
    /// Every provider, by local name, configured or to be configured late.
    pub providers: Providers,
    /// Those of `providers` configured when the walk reaches their block.
    pub late: LateProviders,
    /// The SHA-256 of each one's component, of the very bytes loaded.
    pub hashes: ProviderHashes,
}

/// Loads every provider in `names`, and configures those whose block
/// refers to input variables alone; the others are configured late (see
/// [`LateProvider`]).
pub async fn start(
    runtime: &Runtime,
    config: &Config,
    names: &BTreeSet<String>,
    variables: &BTreeMap<String, Value>,
    intent: Intent,
) -> Result<Started, Vec<Diagnostic>> {
    let mut providers = BTreeMap::new();
    let mut late = LateProviders::new();
    let mut hashes = BTreeMap::new();
    let mut errors = Vec::new();
    // Every sandbox (directories, headers) is checked before any provider runs.
    let mut policies = BTreeMap::new();
    for name in names {
        match policy(config, name, variables) {
            Ok(sandbox) => {
                policies.insert(name.clone(), sandbox);
            }
            Err(d) => errors.extend(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for (name, mut sandbox) in policies {
        // Granted names are resolved once for the run, here, and every
        // instance of the provider reaches them at those addresses only.
        sandbox.pin_connect_targets().await;
        let started = match prepare_sandbox(&name, &mut sandbox, intent) {
            Ok(()) => match load(runtime, config, &name, sandbox).await {
                Ok(loaded) => {
                    hashes.insert(name.clone(), loaded.sha256.clone());
                    match late_block(config, &name) {
                        Some(block) => {
                            let provider = Arc::new(configured_late(block, loaded));
                            late.insert(name.clone(), Arc::clone(&provider));
                            Ok(provider as Arc<dyn Provider>)
                        }
                        None => configure(config, &name, loaded, variables).await,
                    }
                }
                Err(d) => Err(d),
            },
            Err(d) => Err(d),
        };
        match started {
            Ok(p) => {
                providers.insert(name, p);
            }
            Err(d) => errors.extend(d),
        }
    }
    if errors.is_empty() { Ok(Started { providers, late, hashes }) } else { Err(errors) }
}

/// Fits a sandbox to the run: read-write directories created for a change,
/// or mounted read-only otherwise.
pub fn prepare_sandbox(name: &str, sandbox: &mut Sandbox, intent: Intent) -> Result<(), Vec<Diagnostic>> {
    match intent {
        Intent::Change => sandbox
            .create_writable_dirs()
            .map_err(|e| vec![Diagnostic::error(format!("provider {name:?}: sandbox: {e}"))]),
        Intent::Inspect => {
            sandbox.inspect_only();
            Ok(())
        }
    }
}

/// Configures a loaded provider with its `provider` block (null when there is none).
async fn configure(
    config: &Config,
    name: &str,
    loaded: Loaded,
    variables: &BTreeMap<String, Value>,
) -> Result<Arc<dyn Provider>, Vec<Diagnostic>> {
    let block = config.providers.iter().find(|p| p.name == name);
    let value = match block {
        None => Value::Null,
        Some(block) => {
            let ctx = EvalContext {
                variables: variables.clone(),
                ephemeral: config.ephemeral.clone(),
                ..EvalContext::new(&config.dir)
            };
            config::decode_body(&block.body, &loaded.schema.provider.block, &ctx)?
        }
    };
    let location = block.map(|b| b.location.clone());
    loaded.loaded.configure(loaded.sandbox, value).await.map_err(|e| configure_failed(name, &e, location.as_ref()))
}

/// The error of a provider's `configure`, at its block if it has one.
fn configure_failed(name: &str, e: &dyn std::fmt::Display, location: Option<&Location>) -> Vec<Diagnostic> {
    let d = Diagnostic::error(format!("Provider {name:?} could not be configured: {e}"));
    vec![match location {
        Some(l) => d.at(l),
        None => d,
    }]
}

/// The loaded provider of `block`, configured late: each time with the
/// block (and its sandbox's headers) evaluated in the context the walk
/// gives, on a fresh copy of the sandbox.
fn configured_late(block: &ProviderConfig, loaded: Loaded) -> LateProvider {
    let Loaded { loaded, sandbox, schema, .. } = loaded;
    let name = block.name.clone();
    let (loaded, block) = (Arc::new(loaded), Arc::new(block.clone()));
    let provider_block = schema.provider.block.clone();
    let configure: ConfigureFn = Arc::new(move |ctx: EvalContext| -> Configuring {
        let (loaded, block, provider_block) = (Arc::clone(&loaded), Arc::clone(&block), provider_block.clone());
        let mut sandbox = sandbox.clone();
        Box::pin(async move {
            add_block_headers(&block, &mut sandbox, &ctx)?;
            let value = config::decode_body(&block.body, &provider_block, &ctx)?;
            loaded.configure(sandbox, value).await.map_err(|e| configure_failed(&block.name, &e, Some(&block.location)))
        })
    });
    LateProvider::new(name, schema, configure)
}

/// What configuring providers from the state reads: see
/// [`crate::plan::FromState`].
pub struct StateConfiguration<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// Its dependency graph.
    pub graph: &'a crate::graph::DependencyGraph,
    /// The run's providers.
    pub providers: &'a Providers,
    /// Those configured late.
    pub late: &'a LateProviders,
    /// Resolved input variables.
    pub variables: &'a BTreeMap<String, Value>,
}

impl StateConfiguration<'_> {
    /// Configures the late providers `names` from `state`, before anything
    /// that calls them outside the walk (recovery, `cairn import`), and
    /// closes the ephemeral resources opened for that.
    pub async fn configure(&self, names: &BTreeSet<String>, state: &State) -> Result<(), Vec<Diagnostic>> {
        let session = crate::plan::ephemeral::Session::silent();
        let from = crate::plan::FromState {
            config: self.config,
            graph: self.graph,
            providers: self.providers,
            late: self.late,
            variables: self.variables,
            session: &session,
        };
        let mut errors = Vec::new();
        for name in names.iter().filter(|n| self.late.contains_key(*n)) {
            if let Err(d) = from.configure(name, state).await {
                errors.extend(d);
            }
        }
        errors.extend(session.close_all().await);
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}
