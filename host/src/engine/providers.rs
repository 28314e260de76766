//! Starting the providers a run needs: each one's component found by the
//! registry, loaded by the runtime, given the sandbox its `provider` block
//! grants, and configured with that block.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::config::{self, Config, EvalContext, ProviderConfig};
use crate::diag::{Diagnostic, Location};
use crate::plan::Providers;
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
    names.extend(config.providers.iter().map(|p| p.name.clone()));
    names.extend(state.resources.iter().map(|r| r.provider.clone()));
    names
}

/// A provider loaded and sandboxed, not configured yet.
pub struct Loaded {
    /// The compiled component.
    pub loaded: LoadedProvider,
    /// The sandbox its instances get.
    pub sandbox: Sandbox,
    /// Its schema.
    pub schema: ProviderSchema,
}

/// Loads provider `name`, to run in `sandbox`, and reads its schema.
pub async fn load(runtime: &Runtime, config: &Config, name: &str, sandbox: Sandbox) -> Result<Loaded, Vec<Diagnostic>> {
    // Identity, signature and lock are checked on the file's bytes before
    // the runtime compiles (let alone runs) any of it.
    let verified = registry::load(name, config).map_err(|d| vec![d])?;
    let loaded = runtime
        .load(name, &verified.bytes)
        .map_err(|e| vec![Diagnostic::error(format!("Provider {name:?} could not be loaded: {e:#}"))])?;
    let schema = loaded.schema(&sandbox).await.map_err(|e| vec![Diagnostic::error(e.to_string())])?;
    Ok(Loaded { loaded, sandbox, schema })
}

/// The sandbox policy of provider `name`: everything its `provider`
/// block's `sandbox` grants (nothing without one), checked and resolved
/// once — directories, the headers of `http` grants (evaluated with the
/// run's `variables`), environment variables, budgets.
pub fn policy(config: &Config, name: &str, variables: &BTreeMap<String, Value>) -> Result<Sandbox, Vec<Diagnostic>> {
    let mut sandbox = sandbox_for(config, name, config.providers.iter().find(|p| p.name == name))?;
    let headers = http_headers(config, name, variables)?;
    for (grant, headers) in sandbox.http.iter_mut().zip(headers) {
        grant.headers = headers;
    }
    Ok(sandbox)
}

/// The sandbox an operator granted in the provider block, but the headers
/// of its `http` grants; nothing without one.
fn sandbox_for(config: &Config, name: &str, block: Option<&ProviderConfig>) -> Result<Sandbox, Vec<Diagnostic>> {
    let Some(block) = block else {
        return Sandbox::resolve(&config.dir, &[], &[])
            .map_err(|e| vec![Diagnostic::error(format!("provider {name:?}: {e}"))]);
    };
    let s = &block.sandbox;
    let strings = |v: &[(String, Location)]| v.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>();
    let location = s.location.clone().unwrap_or_else(|| block.location.clone());
    let mut sandbox = Sandbox::resolve(&config.dir, &strings(&s.read_write), &strings(&s.read_only))
        .map_err(|e| vec![Diagnostic::error(format!("provider {name:?}: sandbox: {e}")).at(&location)])?;
    if let Some((host, at)) = s.allowed_hosts.first() {
        // Refuse rather than ignore: an operator who grants a host expects it
        // to be reachable, and nothing would tell them why it is not.
        return Err(vec![
            Diagnostic::error(format!("provider {name:?}: sandbox.allowed_hosts ({host:?}) is not supported yet"))
                .at(at)
                .with_detail(
                    "Grant outgoing HTTP with a block per origin instead: http { url = \"https://api.example.com\" }.",
                ),
        ]);
    }
    for grant in &s.http {
        let (scheme, host, port) = (grant.scheme.clone(), grant.host.clone(), grant.port);
        // The headers are added by `policy`, with the run's variables.
        sandbox.http.push(HttpGrant { scheme, host, port, headers: Vec::new() });
    }
    for (var, _) in &s.env {
        if let Ok(v) = std::env::var(var) {
            sandbox.env.push((var.clone(), v));
        }
    }
    if let Some(bytes) = s.memory {
        sandbox.memory_limit = bytes;
    }
    if let Some(timeout) = s.timeout {
        sandbox.call_timeout = timeout;
    }
    if let Some(n) = s.max_concurrency {
        sandbox.max_concurrency = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(bytes) = s.max_answer_size {
        sandbox.max_answer_bytes = bytes;
    }
    if let Some(depth) = s.max_answer_depth {
        sandbox.max_answer_depth = usize::try_from(depth).unwrap_or(usize::MAX);
    }
    // The parser bounds each budget.
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    for (set, budget) in [
        (s.max_descriptors, &mut sandbox.max_descriptors),
        (s.max_handles, &mut sandbox.max_handles),
        (s.max_table_elements, &mut sandbox.max_table_elements),
        (s.max_instances, &mut sandbox.max_instances),
        (s.max_log_lines, &mut sandbox.max_log_lines),
    ] {
        if let Some(n) = set {
            *budget = count(n);
        }
    }
    Ok(sandbox)
}

/// The headers of each `http` grant of provider `name`'s sandbox, evaluated
/// with the run's variables (they are usually secrets, from variables).
fn http_headers(
    config: &Config,
    name: &str,
    variables: &BTreeMap<String, Value>,
) -> Result<Vec<Vec<(String, String)>>, Vec<Diagnostic>> {
    let Some(block) = config.providers.iter().find(|p| p.name == name) else { return Ok(Vec::new()) };
    let ctx = EvalContext { variables: variables.clone(), ..EvalContext::new(&config.dir) };
    let mut all = Vec::new();
    let mut errors = Vec::new();
    for grant in &block.sandbox.http {
        let Some(expr) = &grant.headers else {
            all.push(Vec::new());
            continue;
        };
        let invalid = |detail: String| {
            Diagnostic::error(format!("provider {name:?}: invalid headers for {}://{}", grant.scheme, grant.host))
                .with_detail(detail)
                .at(&expr.location)
        };
        let entries = match config::eval(expr, &ctx) {
            Ok(Value::Object(entries) | Value::Map(entries)) => entries,
            Ok(other) => {
                errors.push(invalid(format!("headers must be a map of strings, got {}.", other.to_hcl())));
                continue;
            }
            Err(d) => {
                errors.extend(d);
                continue;
            }
        };
        let mut headers = Vec::new();
        for (header, value) in entries {
            let Value::String(value) = value else {
                // Never print the value: it is likely a secret.
                errors.push(invalid(format!("the value of header {header:?} must be a known string.")));
                continue;
            };
            let mut check = HttpGrant { scheme: String::new(), host: String::new(), port: 0, headers: Vec::new() };
            match check.add_header(&header, &value) {
                Ok(()) => headers.extend(check.headers),
                Err(e) => errors.push(invalid(format!("{e}."))),
            }
        }
        all.push(headers);
    }
    if errors.is_empty() { Ok(all) } else { Err(errors) }
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

/// Loads and configures every provider in `names`.
pub async fn start(
    runtime: &Runtime,
    config: &Config,
    names: &BTreeSet<String>,
    variables: &BTreeMap<String, Value>,
    intent: Intent,
) -> Result<Providers, Vec<Diagnostic>> {
    let mut providers = BTreeMap::new();
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
        let started = match prepare_sandbox(&name, &mut sandbox, intent) {
            Ok(()) => match load(runtime, config, &name, sandbox).await {
                Ok(loaded) => configure(config, &name, loaded, variables).await,
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
    if errors.is_empty() { Ok(providers) } else { Err(errors) }
}

/// Fits a sandbox to the run: read-write directories created for a change,
/// or mounted read-only otherwise.
pub fn prepare_sandbox(name: &str, sandbox: &mut Sandbox, intent: Intent) -> Result<(), Vec<Diagnostic>> {
    match intent {
        Intent::Change => sandbox
            .create_writable_dirs()
            .map_err(|e| vec![Diagnostic::error(format!("provider {name:?}: sandbox: {e}"))]),
        // Planning may read what a provider wrote, never write: the
        // operator approved no change yet.
        Intent::Inspect => {
            let writable = std::mem::take(&mut sandbox.read_write);
            sandbox.read_only.extend(writable.into_iter().filter(|g| g.host.is_dir()));
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
            let ctx = EvalContext { variables: variables.clone(), ..EvalContext::new(&config.dir) };
            config::decode_body(&block.body, &loaded.schema.provider.block, &ctx)?
        }
    };
    let location = block.map(|b| b.location.clone());
    loaded.loaded.configure(loaded.sandbox, value).await.map_err(|e| {
        let d = Diagnostic::error(format!("Provider {name:?} could not be configured: {e}"));
        vec![match &location {
            Some(l) => d.at(l),
            None => d,
        }]
    })
}
