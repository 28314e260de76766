//! The WebAssembly runtime: providers are components run by wasmtime, each
//! in its own sandbox, behind the [`Provider`] trait.
//!
//! This module owns the engines and their epoch ticker (`engine`), tiered
//! compilation (`tiers`: baseline code first, optimised code in the
//! background), a WASI clock
//! whose sleeps end at the call deadline (`clock`), the on-disk cache of
//! compiled components (`cache`) and the notice of a slow compile
//! (`compile_notice`), the sandbox policy and limits ([`Sandbox`], which
//! the configuration fills), its mapping to WASI (`wasi`, and `sockets` for
//! the `connect` grants), the record of
//! what it refused a call, told with the call's error (`denials`, and
//! `fs_watch` for the filesystem calls), the host's `files` import, which changes permission bits within
//! read-write grants (`files`), provider output (`output`), the conversion of host data to
//! and from the WIT ABI (`wire`), provider instances and their pool
//! (`instance`, `pool`), and the providers bundled into the binary
//! ([`builtin`]).
//!
//! Calls into a provider are asynchronous (wasmtime's async support): a
//! provider that waits on a timer or on HTTP is a pending future, not a
//! blocked thread, so hundreds of calls can be in flight on a few threads.
//!
//! ```text
//! let runtime = Runtime::new()?;
//! let loaded = runtime.load("local", builtin("local").unwrap())?;
//! let sandbox = Sandbox::resolve(config_dir, &["./out".into()], &[])?;
//! let provider = loaded.configure(sandbox, Value::Null).await?;
//! let plan = provider.plan_resource(request).await?;
//! ```

mod answer;
mod bindings;
mod builtin;
mod cache;
mod clock;
mod compile_notice;
mod denials;
mod engine;
mod ephemeral;
mod files;
mod fs_watch;
mod http;
mod imports;
mod instance;
mod output;
mod pool;
pub mod sandbox;
mod sockets;
mod state_moves;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod tiers;
// Shared with the build script, which uses the parts the library does not.
mod wasi;
#[allow(dead_code)]
mod wasm_build;
mod wire;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::Context as _;
use wasmtime::Engine;
use wasmtime::component::Linker;

pub use builtin::{BUILTIN_NAMES, builtin, builtin_sha256};
pub use cache::{clean as clean_component_cache, default_cache_root, default_key_file};
pub use engine::EPOCH_TICK;
pub use imports::describe_import;
pub use sandbox::{Grant, HttpGrant, Sandbox};
pub use tiers::{CompileMode, MODE_VARIABLE as COMPILE_MODE_VARIABLE, compile_in_background_with, compile_into_cache};

use self::bindings::ProviderWorldPre;
use self::cache::{BaselineUse, Compilers, ComponentCache};
use self::engine::{EpochTicker, Tier};
use self::instance::{Instance, StoreState, answer_decodes_too_large};
use self::pool::{Parts, WasmProvider};
use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::{CallError, Provider};
use crate::schema::ProviderSchema;
use crate::value::Value;

/// Loads provider components. One per process is enough: it owns the
/// compiler, the compiled-code cache and the clock of call deadlines.
pub struct Runtime {
    shared: Arc<Shared>,
}

/// What the runtime and everything made from it share. The epoch ticker
/// stops when the last holder (runtime, loaded or configured provider) is
/// dropped, so a provider never outlives the clock of its deadlines.
pub(crate) struct Shared {
    /// Cranelift's engine, and the linker of components it compiled.
    engine: Engine,
    linker: Linker<StoreState>,
    /// Winch's, when compiling tiered; its linker is made on first use.
    baseline: Option<(Engine, OnceLock<Linker<StoreState>>, BaselineUse)>,
    cache: ComponentCache,
    _ticker: EpochTicker,
}

/// A compiled and linked provider component, not yet configured.
pub struct LoadedProvider {
    name: Arc<str>,
    pre: ProviderWorldPre<StoreState>,
    from_cache: bool,
    shared: Arc<Shared>,
}

/// Why [`LoadedProvider::configure`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigureError {
    /// The provider could not be called (trap, timeout, malformed answer).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The provider rejected its configuration.
    #[error("provider {provider:?} rejected its configuration:\n{}", Diagnostics(.diagnostics.clone()))]
    Diagnostics {
        /// The provider's local name.
        provider: String,
        /// What it said; at least one is an error.
        diagnostics: Vec<Diagnostic>,
    },
}

/// The provider interface this host calls: a component must export it.
pub const PROVIDER_INTERFACE: &str = "cairn:provider/provider@0.2.0";

/// Refuses a component that exports an older `cairn:provider` interface
/// than [`PROVIDER_INTERFACE`], by name, with what to do about it: its
/// values would be misread (0.1.0 unknowns carry no refinements, its
/// schemas no nested or write-only attributes), so it is never run.
/// Anything else (no provider export at all) is left to linking, which
/// names what is missing.
pub fn check_abi(exports: &[String]) -> Result<(), String> {
    if exports.iter().any(|e| e == PROVIDER_INTERFACE) {
        return Ok(());
    }
    match exports.iter().find(|e| e.starts_with("cairn:provider/provider@")) {
        Some(old) => {
            let version = old.trim_start_matches("cairn:provider/provider@");
            Err(format!(
                "cairn:provider@{version} is no longer supported: rebuild the provider with cairn-sdk 0.2 \
                 (or against the WIT package cairn:provider@0.2.0), which exports {PROVIDER_INTERFACE}"
            ))
        }
        None => Ok(()),
    }
}

impl Runtime {
    /// A runtime caching compiled components in the default cache directory:
    /// `$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn`, else
    /// `$HOME/.cache/cairn` (in its `components/` subdirectory).
    /// A provider without cached code is compiled as `CAIRN_COMPILE` says
    /// ([`CompileMode::from_env`]).
    pub fn new() -> anyhow::Result<Runtime> {
        Runtime::with_cache_dir_and_mode(cache::default_cache_root(), CompileMode::from_env()?)
    }

    /// A runtime caching compiled components under the cairn cache
    /// directory `dir` (in `dir/components`), or not at all for `None`.
    /// Entries are authenticated with this user's cache key
    /// ([`default_key_file`]); without one nothing is cached.
    /// Code is compiled optimised before the first call.
    pub fn with_cache_dir(dir: Option<PathBuf>) -> anyhow::Result<Runtime> {
        Runtime::with_cache_dir_and_mode(dir, CompileMode::Optimized)
    }

    /// A runtime caching under `dir` (see [`Runtime::with_cache_dir`])
    /// that compiles a provider without cached code as `mode` says. Without
    /// a cache, code is always optimised: no later run would use the
    /// background's work.
    pub fn with_cache_dir_and_mode(dir: Option<PathBuf>, mode: CompileMode) -> anyhow::Result<Runtime> {
        let engine = engine::new_engine(Tier::Optimized).map_err(to_anyhow)?;
        let linker = instance::linker(&engine).map_err(to_anyhow)?;
        let cache = ComponentCache::new(dir, cache::default_key_file());
        let baseline_use = match mode {
            CompileMode::Tiered if cache.dir().is_some() => Some(BaselineUse::UntilOptimized),
            CompileMode::Baseline => Some(BaselineUse::Cached),
            _ => None,
        };
        let baseline = match baseline_use {
            Some(using) => Some((engine::new_engine(Tier::Baseline).map_err(to_anyhow)?, OnceLock::new(), using)),
            None => None,
        };
        let engines: Vec<&Engine> = std::iter::once(&engine).chain(baseline.as_ref().map(|(e, _, _)| e)).collect();
        let ticker = EpochTicker::start(&engines).context("cannot start the epoch ticker thread")?;
        let shared = Shared { engine, linker, baseline, cache, _ticker: ticker };
        Ok(Runtime { shared: Arc::new(shared) })
    }

    /// The directory compiled components are cached in, if any.
    pub fn component_cache_dir(&self) -> Option<&Path> {
        self.shared.cache.dir()
    }

    /// Compiles (or loads from the cache) and links the component `wasm` of
    /// the provider named `name`. Fails if it is not a component, or imports
    /// something the host does not provide.
    pub fn load(&self, name: &str, wasm: &[u8]) -> anyhow::Result<LoadedProvider> {
        let compilers = Compilers {
            optimized: &self.shared.engine,
            baseline: self.shared.baseline.as_ref().map(|(e, _, using)| (e, *using)),
        };
        let loaded = self
            .shared
            .cache
            .load(compilers, name, wasm)
            .with_context(|| format!("cannot compile provider {name:?}"))?;
        let engine = loaded.component.engine();
        let exports: Vec<String> =
            loaded.component.component_type().exports(engine).map(|(name, _)| name.to_string()).collect();
        check_abi(&exports).map_err(|e| anyhow::anyhow!("provider {name:?}: {e}"))?;
        let linker = self.shared.linker_of(loaded.tier).map_err(to_anyhow)?;
        let link = || -> wasmtime::Result<ProviderWorldPre<StoreState>> {
            ProviderWorldPre::new(linker.instantiate_pre(&loaded.component)?)
        };
        let pre = link()
            .map_err(to_anyhow)
            .with_context(|| format!("provider {name:?} does not fit the {PROVIDER_INTERFACE} world"))?;
        Ok(LoadedProvider { name: name.into(), pre, from_cache: loaded.from_cache, shared: self.shared.clone() })
    }
}

impl Shared {
    /// The linker of components compiled by the engine of `tier`.
    fn linker_of(&self, tier: Tier) -> wasmtime::Result<&Linker<StoreState>> {
        match (tier, &self.baseline) {
            (Tier::Baseline, Some((engine, linker, _))) => {
                if let Some(linker) = linker.get() {
                    return Ok(linker);
                }
                let made = instance::linker(engine)?;
                Ok(linker.get_or_init(|| made))
            }
            _ => Ok(&self.linker),
        }
    }
}

impl LoadedProvider {
    /// The provider's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the component imports, by WIT name (`wasi:filesystem/types@0.2.12`,
    /// `cairn:provider/log@0.2.0`, …): everything it could ask the host for,
    /// whether or not a sandbox grants it. Sorted.
    pub fn imports(&self) -> Vec<String> {
        let component = self.pre.instance_pre().component();
        let mut names: Vec<String> =
            component.component_type().imports(component.engine()).map(|(name, _)| name.to_string()).collect();
        names.sort();
        names
    }

    /// Whether the compiled code came from the cache (rather than a compiler).
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Creates one instance in `sandbox` and drops it without calling it:
    /// what a new instance costs (the `provider_start` benchmark).
    pub async fn instantiate(&self, sandbox: &Sandbox) -> Result<(), CallError> {
        Instance::new(&self.pre, &self.name, sandbox).await.map(drop)
    }

    /// The provider's schema, from a throwaway instance in `sandbox`.
    pub async fn schema(&self, sandbox: &Sandbox) -> Result<ProviderSchema, CallError> {
        let mut instance = Instance::new(&self.pre, &self.name, sandbox).await?;
        self.fetch_schema(&mut instance, sandbox.max_answer_bytes).await
    }

    async fn fetch_schema(&self, instance: &mut Instance, max_answer_bytes: u64) -> Result<ProviderSchema, CallError> {
        let schema = instance.call("schema", Box::new(|g, s| Box::pin(g.call_schema(s)))).await?;
        // Blocks and types may be shared on the wire too: the schema is
        // held to the answer limit as it is decoded, like any answer.
        let mut budget = wire::Budget::new(max_answer_bytes);
        let schema_error = |operation: &'static str, e: wire::DecodeError| {
            let message = match e {
                wire::DecodeError::Malformed(e) => format!("returned a malformed schema: {e}"),
                wire::DecodeError::TooLarge { limit } => answer_decodes_too_large(limit),
            };
            CallError::new(&*self.name, operation, message)
        };
        let mut decoded =
            wire::provider_schema_from_wire(&schema, &mut budget).map_err(|e| schema_error("schema", e))?;
        // The optional export's types, held to the same answer budget.
        if let Some(indices) = ephemeral::lookup(&self.pre) {
            let list = instance.call_instance("ephemeral-schemas", ephemeral::schemas_call(indices)).await?;
            decoded.ephemeral_resources = wire::ephemeral_schemas_from_wire(&list, &mut budget)
                .map_err(|e| schema_error("ephemeral-schemas", e))?;
        }
        Ok(decoded)
    }

    /// Configures the provider with its `provider` block `config` (null when
    /// there is none), to run in `sandbox`. Warnings the provider gives are
    /// logged. Granted names the sandbox has not pinned yet are resolved
    /// and pinned now, for every instance of the provider.
    pub async fn configure(&self, mut sandbox: Sandbox, config: Value) -> Result<Arc<dyn Provider>, ConfigureError> {
        sandbox.pin_connect_targets().await;
        let mut first = Instance::new(&self.pre, &self.name, &sandbox).await?;
        let schema = self.fetch_schema(&mut first, sandbox.max_answer_bytes).await?;
        let config = wire::value_to_wire(&config);
        let diagnostics = first.configure(config.clone()).await?;
        if Diagnostics::has_errors(&diagnostics) {
            return Err(ConfigureError::Diagnostics { provider: self.name.to_string(), diagnostics });
        }
        for warning in &diagnostics {
            tracing::warn!(provider = %self.name, "{warning}");
        }
        let parts =
            Parts { name: self.name.clone(), pre: self.pre.clone(), sandbox, config, shared: self.shared.clone() };
        Ok(Arc::new(WasmProvider::new(parts, schema, first)))
    }
}

/// Waits for `future`, a provider call, from blocking test code: on a
/// multi-threaded tokio runtime in place of the current task
/// ([`tokio::task::block_in_place`]), elsewhere on wasmtime-wasi's own
/// runtime (whose I/O and timers the WASI host functions need).
#[cfg(test)]
pub(crate) fn block_on<F>(future: F) -> F::Output
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(future))
        }
        // A current-thread runtime cannot block in place: wait on a thread
        // of our own, outside it.
        Ok(_) => std::thread::scope(|scope| {
            let waiter = scope.spawn(|| wasmtime_wasi::runtime::in_tokio(future));
            waiter.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }),
        Err(_) => wasmtime_wasi::runtime::in_tokio(future),
    }
}

/// wasmtime's own error type as an `anyhow` error, chain included. (The
/// `From` conversion needs wasmtime's `anyhow` feature, which the trimmed
/// feature set leaves out.)
fn to_anyhow(error: wasmtime::Error) -> anyhow::Error {
    anyhow::Error::from_boxed(error.into_boxed_dyn_error())
}

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod zoo_tests;
