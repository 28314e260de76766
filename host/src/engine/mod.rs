//! A run of cairn, from configuration to committed state: the one place
//! that knows the whole pipeline. It loads a configuration
//! ([`Workspace::load`]), opens its state through a [`Backend`], starts the
//! providers the run needs, refreshes and plans ([`Engine::plan`]), applies
//! ([`Engine::apply`]) and commits the state. Commands (`cli/`), tests and
//! benchmarks all drive a run through this module.
//!
//! Progress, warnings and results go to an [`EventSink`] as they happen;
//! what a command prints is the sink's business.
//!
//! A run can be interrupted ([`Engine::interrupt`], and Ctrl-C once a
//! command calls [`Engine::handle_signals`]): a plan stops with nothing
//! written, an apply as `apply` describes.

mod backend;
pub mod check;
mod doubles;
mod ephemeral;
mod import;
mod providers;
mod saved;
mod signals;
mod staged;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

pub use crate::apply::events::{Event, EventSink};
pub use crate::apply::{ApplyReport, Outcome};
pub use crate::apply::{Interrupt, Recovered, Recovery};
pub use crate::runtime::BUILTIN_NAMES as BUILTIN_PROVIDERS;
pub use crate::runtime::builtin as bundled;
pub use backend::{
    BACKEND_RECORD, BackendChoice, BackendRecord, STATE_FILE, WORKSPACE_SCHEMA_SEPARATOR, WORKSPACES_DIR,
    check_initialised, local_state_path, workspace_schema,
};
pub use doubles::Doubles;
pub use import::Imported;
pub use providers::{Intent, ProviderHashes, needed_providers, provider_type};
pub use saved::{Basis, SavedPlan, Stale};
pub use signals::Received;
pub(crate) use staged::argument_values;

use crate::addr::{InstanceAddr, ModuleInstance};
use crate::apply::{self, Applier};
use crate::config::{self, Config};
use crate::contract::Gate;
use crate::diag::{Diagnostic, Diagnostics};
use crate::graph::DependencyGraph;
use crate::plan::{self, Plan, PlanOptions, Planner, Providers};
use crate::runtime::Runtime;
use crate::schema::ProviderSchema;
use crate::state::{Backend, Locking, State};
use crate::value::Value;

/// A loaded configuration: its files, dependency graph and variables.
pub struct Workspace {
    /// The configuration.
    pub config: Arc<Config>,
    /// Its dependency graph.
    pub graph: Arc<DependencyGraph>,
    /// Resolved input variables.
    pub variables: BTreeMap<String, Value>,
    /// Every file the configuration and its variables were read from:
    /// the `*.tf` files, then the variable files (a saved plan records
    /// their hashes).
    pub files: Vec<PathBuf>,
    /// Those of `files` that are the `*.tf` files of the modules the
    /// configuration calls.
    pub module_files: Vec<PathBuf>,
    /// Warnings from loading (values in variable files for variables no
    /// one declared); a run shows them with its own.
    pub warnings: Vec<Diagnostic>,
    /// With module calls whose `count` or `for_each` only planning can
    /// decide (see `staged`): what expanding them needs. `config` and
    /// `graph` have none of their instances.
    staging: Option<Arc<staged::Staging>>,
}

impl Workspace {
    /// Loads the configuration in `dir`, with variables from `inputs`
    /// (`-var` and `-var-file`, in order), the variable files beside it,
    /// the environment (`CAIRN_VAR_name`) and defaults.
    pub fn load(dir: &Path, inputs: &[config::VariableInput]) -> Result<Workspace> {
        Workspace::load_asking(dir, inputs, &mut |_| Ok(None))
    }

    /// [`Workspace::load`], asking `ask` for the value of each required
    /// variable nothing else gives (as Terraform prompts on a terminal);
    /// `None` from it leaves the variable unset, an error.
    pub fn load_asking(
        dir: &Path,
        inputs: &[config::VariableInput],
        ask: &mut dyn FnMut(&config::Variable) -> Result<Option<String>>,
    ) -> Result<Workspace> {
        Workspace::load_adjusted(dir, inputs, ask, &mut |_| Ok(()))
    }

    /// [`Workspace::load`], with `adjust` changing the configuration as
    /// parsed, before its variables are resolved and its modules expanded
    /// (`cairn test` replaces the module calls that `override_module`
    /// names).
    pub fn load_overridden(
        dir: &Path,
        inputs: &[config::VariableInput],
        adjust: &mut dyn FnMut(&mut Config) -> Result<()>,
    ) -> Result<Workspace> {
        Workspace::load_adjusted(dir, inputs, &mut |_| Ok(None), adjust)
    }

    fn load_adjusted(
        dir: &Path,
        inputs: &[config::VariableInput],
        ask: &mut dyn FnMut(&config::Variable) -> Result<Option<String>>,
        adjust: &mut dyn FnMut(&mut Config) -> Result<()>,
    ) -> Result<Workspace> {
        let started = Instant::now();
        let mut config = parse_config(dir)?;
        adjust(&mut config)?;
        tracing::debug!(elapsed = ?started.elapsed(), "configuration parsed");
        let env: Vec<(String, String)> = std::env::vars().collect();
        let mut inputs = inputs.to_vec();
        let mut answers = Vec::new();
        for variable in config::unset_required(&config, &inputs, &env) {
            if let Some(value) = ask(variable)? {
                // As if given with -var: nothing else gives it a value.
                answers.push(config::VariableInput::Var(format!("{}={value}", variable.name)));
            }
        }
        inputs.extend(answers);
        let inputs = &inputs;
        let resolved = config::resolve_variables(&config, inputs, &env).map_err(diagnostics)?;
        let mut files = config::config_files(&config.dir).map_err(diagnostics)?;
        let module_files = config::module_files(&config);
        files.extend(module_files.iter().cloned());
        let started = Instant::now();
        let (config, graph, staging) = expand_config(config, &resolved.values)?;
        tracing::debug!(resources = config.resources.len(), elapsed = ?started.elapsed(), "configuration expanded");
        files.extend(resolved.files);
        crate::diag::source::remember_secrets(config::marks::variable_secrets(&config, &resolved.values));
        Ok(Workspace {
            config: Arc::new(config),
            graph: Arc::new(graph),
            variables: resolved.values,
            files,
            module_files,
            warnings: resolved.warnings,
            staging,
        })
    }

    /// Loads the configuration in `dir` with `variables` as they are, for
    /// a saved plan: it was made with them, and nothing may change them.
    /// Its files are the `*.tf` files and the automatic variable files.
    pub fn with_variables(dir: &Path, variables: BTreeMap<String, Value>) -> Result<Workspace> {
        let config = parse_config(dir)?;
        let mut files = config::config_files(&config.dir).map_err(diagnostics)?;
        let module_files = config::module_files(&config);
        files.extend(module_files.iter().cloned());
        let (config, graph, staging) = expand_config(config, &variables)?;
        files.extend(config::automatic_var_files(&config.dir));
        crate::diag::source::remember_secrets(config::marks::variable_secrets(&config, &variables));
        Ok(Workspace {
            config: Arc::new(config),
            graph: Arc::new(graph),
            variables,
            files,
            module_files,
            warnings: Vec::new(),
            staging,
        })
    }

    /// The configuration as `plan` planned it, and its graph: with the
    /// module calls whose `count` or `for_each` planning decided expanded
    /// from the plan's own values (see `staged`), so that a saved plan
    /// applies to the instances it was made with.
    pub fn planned_config(&self, plan: &Plan) -> Result<(Arc<Config>, Arc<DependencyGraph>)> {
        let Some(staging) = &self.staging else { return Ok((Arc::clone(&self.config), Arc::clone(&self.graph))) };
        if plan.destroy {
            return Ok((Arc::clone(&self.config), Arc::clone(&self.graph)));
        }
        let first = self.first_stage(staging);
        let stage = staged::expand_in_rounds(&staging.parsed, &self.variables, first, |_, _| Ok(plan.clone()))?;
        Ok((stage.config, stage.graph))
    }

    /// The configuration as loading expanded it, the first stage of
    /// expanding its deferred calls.
    fn first_stage(&self, staging: &staged::Staging) -> staged::Stage {
        staged::Stage {
            config: Arc::clone(&self.config),
            graph: Arc::clone(&self.graph),
            deferred: staging.deferred.clone(),
            deferred_providers: staging.providers.clone(),
        }
    }

    /// The configuration directory.
    pub fn dir(&self) -> &Path {
        &self.config.dir
    }

    /// Where the local backend keeps the state.
    pub fn state_path(&self) -> PathBuf {
        self.dir().join(STATE_FILE)
    }

    /// The providers the configuration itself uses (resources and
    /// `provider` blocks).
    pub fn provider_names(&self) -> BTreeSet<String> {
        let mut names = needed_providers(&self.config, &State::new());
        names.extend(self.staging.iter().flat_map(|s| s.providers.iter().cloned()));
        names.iter().map(|n| providers::provider_type(n).to_string()).collect()
    }

    /// The state's backend, unlocked. Refused when it is not the one
    /// `cairn init` set up (see [`check_initialised`]).
    pub fn backend(&self) -> Result<Box<dyn Backend>> {
        open_backend(&self.config)
    }

    /// Most steps of each provider that may run at once: its sandbox's
    /// `max_concurrency`, where it sets one.
    fn provider_limits(&self) -> BTreeMap<String, usize> {
        self.config.providers.iter().filter_map(|p| Some((p.name.clone(), p.sandbox.max_concurrency?))).collect()
    }
}

/// The configuration with its module calls expanded (which needs the
/// root module's `variables`), its dependency graph, and what expanding the
/// calls only planning can decide needs, when there are some.
#[allow(clippy::type_complexity)]
fn expand_config(
    config: Config,
    variables: &BTreeMap<String, Value>,
) -> Result<(Config, DependencyGraph, Option<Arc<staged::Staging>>)> {
    // Only a call with count or for_each can be deferred: only then is the
    // configuration as parsed worth keeping.
    let parsed = config::has_repeated_calls(&config).then(|| config.clone());
    let stage = staged::expand_config(config, variables, &config::Pinned::new())?;
    let staging = match (stage.deferred.is_empty(), parsed) {
        (false, Some(parsed)) => {
            Some(Arc::new(staged::Staging { parsed, deferred: stage.deferred, providers: stage.deferred_providers }))
        }
        _ => None,
    };
    let config = Arc::try_unwrap(stage.config).unwrap_or_else(|shared| (*shared).clone());
    let graph = Arc::try_unwrap(stage.graph).map_err(|_| anyhow::anyhow!("the graph is not shared yet"))?;
    Ok((config, graph, staging))
}

/// The configuration in `dir`, read and checked but not evaluated.
fn parse_config(dir: &Path) -> Result<Config> {
    let dir =
        dir.canonicalize().with_context(|| format!("the configuration directory {} does not exist", dir.display()))?;
    config::load(&dir).map_err(diagnostics)
}

/// The backend `config`'s `backend` block names (with `PG_CONN_STR` from
/// the environment), unlocked; refused when it is not the one `cairn init`
/// set up (see [`check_initialised`]).
fn open_backend(config: &Config) -> Result<Box<dyn Backend>> {
    let choice = BackendChoice::of(config, |name| std::env::var(name).ok())?;
    check_initialised(&config.dir, &choice)?;
    choice.open()
}

/// The backend the configuration in `dir` names, chosen for its current
/// workspace but not opened (`cairn workspace`).
pub fn backend_choice_at(dir: &Path) -> Result<BackendChoice> {
    let config = parse_config(dir)?;
    let choice = BackendChoice::of(&config, |name| std::env::var(name).ok())?;
    check_initialised(&config.dir, &choice)?;
    Ok(choice)
}

/// The backend of the state of the configuration in `dir`, unlocked, for
/// commands that need the state but not a run (`state`, `output`): the
/// configuration is read for its `backend` block, and its variables are
/// not evaluated (such a command may not have them).
pub fn backend_at(dir: &Path) -> Result<Box<dyn Backend>> {
    open_backend(&parse_config(dir)?)
}

/// Options of a run that plans.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Most operations (refreshes, plans, applies) at once.
    pub parallelism: usize,
    /// Ask providers whether objects changed outside cairn.
    pub refresh: bool,
    /// Plan to destroy everything.
    pub destroy: bool,
    /// Only refresh (`-refresh-only`): the plan changes no object, and
    /// applying it makes the state what refresh found.
    pub refresh_only: bool,
    /// Replace these instances even where nothing changed (`-replace`).
    pub replace: Vec<InstanceAddr>,
    /// Plan only these resources or instances and what they depend on
    /// (`-target`); an address without a key is the whole resource.
    pub targets: Vec<InstanceAddr>,
    /// Plan only the resources in these module instances (`-target=module.a`,
    /// `-target=module.a["x"]`) and what they depend on.
    pub target_modules: Vec<ModuleInstance>,
    /// Whether the run may change things (locks the state, makes read-write
    /// grants writable).
    pub intent: Intent,
    /// Whether to take the state's lock (`-lock`), and how long to wait
    /// for it while another run holds it (`-lock-timeout`).
    pub locking: Locking,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            parallelism: 10,
            refresh: true,
            destroy: false,
            refresh_only: false,
            replace: Vec::new(),
            targets: Vec::new(),
            target_modules: Vec::new(),
            intent: Intent::Inspect,
            locking: Locking::default(),
        }
    }
}

impl RunOptions {
    /// Refuses options that contradict each other, as Terraform does.
    pub fn check(&self) -> Result<()> {
        let incompatible =
            |detail: &str| diagnostics(vec![Diagnostic::error("Incompatible plan options").with_detail(detail)]);
        if self.destroy && self.refresh_only {
            return Err(incompatible("The -destroy and -refresh-only options are mutually exclusive."));
        }
        if self.refresh_only && !self.refresh {
            return Err(incompatible(
                "A refresh-only plan is nothing but a refresh, so -refresh-only and -refresh=false contradict each other.",
            ));
        }
        if (self.refresh_only || self.destroy) && !self.replace.is_empty() {
            return Err(incompatible(
                "The -replace option plans a replacement, which a refresh-only or destroy plan never makes.",
            ));
        }
        Ok(())
    }

    /// The planner's options, with the module targets turned into the
    /// resources of `config` and `state` inside them; a module target with
    /// none is an error (it would otherwise target nothing, or everything).
    fn plan_options(&self, config: &Config, state: &State) -> Result<PlanOptions> {
        let mut targets = self.targets.clone();
        for module in &self.target_modules {
            let resources: BTreeSet<&crate::addr::ResourceAddr> = (config.resources.iter().map(|r| &r.addr))
                .chain(state.resources.iter().map(|i| &i.addr.resource))
                .filter(|r| r.module.within(module))
                .collect();
            if resources.is_empty() {
                return Err(diagnostics(vec![Diagnostic::error("Invalid target").with_detail(format!(
                    "-target={module} names no module instance with resources, in the configuration or the state."
                ))]));
            }
            targets.extend(resources.into_iter().map(|r| r.instance()));
        }
        Ok(PlanOptions {
            destroy: self.destroy,
            skip_refresh: !self.refresh,
            refresh_only: self.refresh_only,
            replace: self.replace.clone(),
            targets,
            parallelism: self.parallelism,
        })
    }
}

/// A plan, with what applying it needs: the state it was made from, the
/// backend holding that state's lock, and the started providers.
pub struct Planned {
    /// The plan.
    pub plan: Plan,
    /// The providers it was made with, by local name.
    pub providers: Providers,
    /// The state it was made from, after recovery.
    pub state: State,
    /// The operations an interrupted apply left pending, and what asking
    /// their providers found (already in [`Planned::state`]).
    pub recoveries: Vec<Recovery>,
    backend: Box<dyn Backend>,
    options: RunOptions,
    /// The SHA-256 of each provider's component (none for providers
    /// started in this process).
    provider_hashes: ProviderHashes,
    /// The configuration planned: the workspace's, with the module calls
    /// only planning could expand expanded (see `staged`). Apply uses it.
    pub config: Arc<Config>,
    /// Its dependency graph.
    pub graph: Arc<DependencyGraph>,
    /// Those of `providers` configured when the walk reaches their block
    /// (see [`plan::late`]): the apply configures them again.
    late_providers: plan::LateProviders,
}

impl Planned {
    /// Ends a run that applies nothing: releases the state's lock and
    /// stops the providers, and [`release`](crate::release::release)s the
    /// plan and the state. (Freeing every value of a plan one by one took
    /// 5% of a no-op plan of 10,000 resources.)
    pub fn release(self) {
        let Planned { plan, state, backend, providers, .. } = self;
        drop(backend);
        drop(providers);
        crate::release::release((plan, state));
    }
}

/// Where providers come from.
enum ProviderSource {
    /// WebAssembly components, run by the runtime.
    Components(Runtime),
    /// Providers already started in this process (tests, benchmarks).
    InProcess(Providers),
}

/// Runs cairn's commands. One per process: it owns the WebAssembly runtime
/// (and its cache of compiled components) and the async runtime every
/// provider call runs on.
pub struct Engine {
    source: ProviderSource,
    tokio: tokio::runtime::Runtime,
    interrupt: Interrupt,
    /// `cairn test`'s stand-ins for the providers runs start, if any.
    doubles: std::sync::Mutex<Option<Arc<dyn Doubles>>>,
}

impl Engine {
    /// An engine that runs providers as WebAssembly components.
    pub fn new() -> Result<Engine> {
        Engine::with_source(ProviderSource::Components(Runtime::new()?))
    }

    /// An engine that compiles every provider without cached code to
    /// optimised code before its first call, whatever `CAIRN_COMPILE` says:
    /// `cairn providers cache warm`.
    pub fn with_optimized_code() -> Result<Engine> {
        let runtime = Runtime::with_cache_dir_and_mode(
            crate::runtime::default_cache_root(),
            crate::runtime::CompileMode::Optimized,
        )?;
        Engine::with_source(ProviderSource::Components(runtime))
    }

    /// An engine whose providers are `providers`, already started in this
    /// process, whatever the configuration says about their sources.
    pub fn in_process(providers: Providers) -> Result<Engine> {
        Engine::with_source(ProviderSource::InProcess(providers))
    }

    /// [`Engine::in_process`], running on `tokio` (a multi-threaded
    /// runtime with its I/O and time drivers), for tests that count threads.
    pub fn in_process_on(providers: Providers, tokio: tokio::runtime::Runtime) -> Engine {
        Engine {
            source: ProviderSource::InProcess(providers),
            tokio,
            interrupt: Interrupt::new(),
            doubles: Default::default(),
        }
    }

    fn with_source(source: ProviderSource) -> Result<Engine> {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .worker_threads(crate::parallel::threads())
            .thread_name("cairn")
            .build()
            .context("cannot start the async runtime")?;
        Ok(Engine { source, tokio, interrupt: Interrupt::new(), doubles: Default::default() })
    }

    /// From now on, runs use `doubles` in place of the providers they
    /// start (`cairn test`'s mocks and overrides), or the real providers
    /// again with `None`.
    pub fn set_doubles(&self, doubles: Option<Arc<dyn Doubles>>) {
        *self.doubles.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = doubles;
    }

    /// The interrupt every run of this engine honours: stop it to stop
    /// the run gracefully, abort it to stop it at once.
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// From now on, SIGINT (Ctrl-C) and SIGTERM interrupt the run instead
    /// of ending the process: the first stops it, the second aborts it
    /// ([`Interrupt`]); `notice` is called with each, to tell the user.
    pub fn handle_signals(&self, notice: impl Fn(Received) + Send + 'static) -> Result<()> {
        signals::listen(&self.tokio, self.interrupt.clone(), notice)
    }

    /// Runs `work` (blocking: a question to the user, say) on a thread of
    /// its own; `None` if the run is interrupted first (the thread is left
    /// to end with the process).
    pub fn unless_interrupted<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || answer.send(work()));
        let interrupt = self.interrupt.clone();
        self.tokio.block_on(async move {
            tokio::select! {
                biased;
                () = interrupt.stopped() => None,
                answer = answered => answer.ok(),
            }
        })
    }

    /// Runs `work` on the async runtime until it ends or the run is
    /// interrupted (which drops it: only for work that changes nothing).
    fn until_interrupted<T>(&self, what: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
        let interrupt = self.interrupt.clone();
        self.tokio.block_on(async move {
            tokio::select! {
                biased;
                () = interrupt.stopped() => Err(anyhow::anyhow!("Interrupted: {what} stopped; nothing was changed")),
                out = work => Ok(out),
            }
        })
    }

    /// Runs `planner` until it ends or the run is interrupted. It runs as a
    /// task on the runtime's workers rather than on this thread, so that a
    /// walk waking its scheduler for every node it finishes wakes a task on
    /// a busy worker, not this sleeping thread (a context switch each, which
    /// cost a no-op plan of 10,000 resources a tenth of its time). Asked to
    /// stop, the plan starts nothing new, lets what runs finish and closes
    /// the ephemeral resources it opened before it ends: the interrupt is
    /// reported with the errors of those closes, if any; a second request
    /// (abort) drops it at once.
    fn plan_until_interrupted(&self, planner: Planner) -> Result<Result<plan::Plan, Vec<Diagnostic>>> {
        let interrupt = self.interrupt.clone();
        let mut task = self.tokio.spawn(planner.plan_until(interrupt.clone()));
        self.tokio.block_on(async move {
            let out = tokio::select! {
                biased;
                () = interrupt.aborted() => {
                    task.abort();
                    return Err(anyhow::anyhow!(plan::INTERRUPTED));
                }
                out = &mut task => out,
            };
            match out {
                // Stopped: the plan said so first in its errors, after
                // closing; what else it says (a close that failed) is kept.
                Ok(Err(errors)) if interrupt.is_stopped() && errors.len() > 1 && is_interrupted(&errors[0]) => {
                    Ok(Err(errors))
                }
                Ok(_) if interrupt.is_stopped() => Err(anyhow::anyhow!(plan::INTERRUPTED)),
                Ok(out) => Ok(out),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => Err(anyhow::anyhow!("the plan was cancelled: {e}")),
            }
        })
    }

    /// The schemas of the providers `names`, without configuring them.
    pub fn schemas(&self, ws: &Workspace, names: &BTreeSet<String>) -> Result<BTreeMap<String, ProviderSchema>> {
        match &self.source {
            ProviderSource::InProcess(providers) => {
                Ok(names.iter().filter_map(|n| Some((n.clone(), providers.get(n)?.schema().clone()))).collect())
            }
            ProviderSource::Components(runtime) => self.tokio.block_on(async {
                let mut schemas = BTreeMap::new();
                let mut errors = Vec::new();
                for name in names {
                    // Only the schema is read: nothing may change.
                    let sandbox = providers::policy(&ws.config, name, &ws.variables).and_then(|mut sandbox| {
                        providers::prepare_sandbox(name, &mut sandbox, Intent::Inspect).map(|()| sandbox)
                    });
                    let loaded = match sandbox {
                        Ok(sandbox) => providers::load(runtime, &ws.config, name, sandbox).await,
                        Err(d) => Err(d),
                    };
                    match loaded {
                        Ok(l) => {
                            schemas.insert(name.clone(), l.schema);
                        }
                        Err(d) => errors.extend(d),
                    }
                }
                if errors.is_empty() { Ok(schemas) } else { Err(diagnostics(errors)) }
            }),
        }
    }

    /// Checks every resource's configuration against its provider's schema,
    /// with the values of other resources unknown.
    pub fn validate(&self, ws: &Workspace) -> Result<()> {
        // The modules whose instances planning decides are checked too,
        // once each, every value in them unknown, as Terraform validates them.
        let ws = &ws.with_unknown_instances()?;
        // Started (configured) as a plan starts them: a provider validates
        // a resource only on a configured instance.
        let started = self.start_providers(ws, &State::new(), Intent::Inspect)?;
        let providers = started.providers;
        let mut errors = Vec::new();
        // One context for every resource, only `count.index` and `each`
        // set anew for each: a copy per resource of a context that holds
        // every resource made validating quadratic (16 s at 10,000).
        let mut inst = config::EvalContext {
            variables: ws.variables.clone(),
            locals: ws.config.locals.keys().map(|k| (k.clone(), Value::unknown())).collect(),
            resources: ws.config.resources.iter().map(|r| (r.addr.clone(), Arc::new(Value::unknown()))).collect(),
            ..config::EvalContext::new(ws.dir())
        };
        // Providers configured late, with what their blocks refer to
        // unknown, as a first plan has it: a provider validates resources
        // only once configured.
        let configured = self
            .tokio
            .block_on(futures_util::future::join_all(started.late.values().map(|late| late.configure(inst.clone()))));
        errors.extend(configured.into_iter().filter_map(Result::err).flatten());
        // Locals and outputs, with every value they may refer to unknown:
        // an unknown function or a bad reference is found here, not at plan.
        let expressions = ws.config.locals.values().map(|l| &l.expr).chain(ws.config.outputs.values().map(|o| &o.expr));
        for expr in expressions {
            if let Err(d) = config::eval(expr, &inst) {
                errors.extend(d);
            }
        }
        // References to attributes the schemas do not have: found here,
        // with every value unknown, rather than by the plan.
        let blocks: crate::addr::AddrMap<crate::addr::ResourceAddr, &crate::schema::Block> = ws
            .config
            .resources
            .iter()
            .filter_map(|r| {
                Some((r.addr.clone(), &Gate::new(providers.get(&r.provider)?.as_ref()).schema_of(&r.addr).ok()?.block))
            })
            .collect();
        errors.extend(config::check_attribute_references(&ws.config, &|addr| blocks.get(addr).copied()));
        let mut checks = Vec::new();
        for r in &ws.config.resources {
            let Some(provider) = providers.get(&r.provider) else { continue };
            let gate = Gate::new(provider.as_ref());
            match gate.schema_of(&r.addr) {
                Err(d) => errors.push(d.at(&r.location)),
                Ok(s) => {
                    let what = r.addr.to_string();
                    // An ephemeral resource's own attributes may be ephemeral.
                    if r.addr.mode != crate::addr::Mode::Ephemeral {
                        errors.extend(config::ephemeral::check_resource_body(
                            &r.body,
                            &s.block,
                            &ws.config.ephemeral,
                            &what,
                        ));
                    }
                    inst.count_index = r.count.as_ref().map(|_| 0);
                    inst.each = r.for_each.as_ref().map(|_| (Value::unknown(), Value::unknown()));
                    match config::decode_body(&r.body, &s.block, &inst) {
                        // Plan asks providers to validate managed resources only
                        // (the WIT's validate-resource); data sources are checked
                        // when they are read.
                        // (and ephemeral resources' `validate`, as plan does).
                        Ok(value) if r.addr.mode != crate::addr::Mode::Data => {
                            checks.push((gate, r, r.addr.instance(), value))
                        }
                        Ok(_) => {}
                        Err(d) => errors.extend(d),
                    }
                }
            }
        }
        // The providers' own checks of each configuration, as plan makes
        // them (values not known yet are unknown: a provider reports
        // nothing about those).
        let answers = self.tokio.block_on(futures_util::future::join_all(
            checks.iter().map(|(gate, _, addr, value)| gate.validate(addr, value)),
        ));
        for ((_, r, _, _), answer) in checks.iter().zip(answers) {
            if let Err(e) = answer {
                errors.extend(plan::at_attributes_in(&r.body, e.into_diagnostics(&r.location)));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(diagnostics(errors)) }
    }

    /// The state as it is now, or `None` when none was ever written. Takes
    /// no lock: it sees the state before or after a write, never half.
    pub fn read_state(&self, ws: &Workspace) -> Result<Option<State>> {
        let state = ws.backend()?.read()?;
        Ok((!state.never_written()).then_some(state))
    }

    /// Opens the state (locked unless the run only inspects without
    /// `lock`), starts the providers, recovers what an interrupted apply
    /// left pending (asking the providers; see `apply::recover`),
    /// refreshes and plans. What recovery found, and the plan's warnings,
    /// go to `events`. An interrupt stops it, with nothing written.
    pub fn plan(&self, ws: &Workspace, options: RunOptions, lock: bool, events: &dyn EventSink) -> Result<Planned> {
        self.plan_on(ws, ws.backend()?, options, lock, events)
    }

    /// [`Engine::plan`] over the state in `backend` rather than the one the
    /// configuration names: for benchmarks that measure a backend (or
    /// none).
    pub fn plan_on(
        &self,
        ws: &Workspace,
        mut backend: Box<dyn Backend>,
        options: RunOptions,
        lock: bool,
        events: &dyn EventSink,
    ) -> Result<Planned> {
        options.check()?;
        if lock {
            backend.lock_as(options.locking)?;
        }
        let started = Instant::now();
        let mut state = backend.read()?;
        tracing::debug!(resources = state.resources.len(), elapsed = ?started.elapsed(), "state read");
        refuse_unmigrated_terraform_state(ws, &state)?;
        for warning in &ws.warnings {
            events.diagnostic(warning);
        }
        let started = Instant::now();
        let providers::Started { providers, late: late_providers, hashes: provider_hashes } =
            self.start_providers(ws, &state, options.intent)?;
        tracing::debug!(providers = providers.len(), elapsed = ?started.elapsed(), "providers started");
        // Recovery asks providers about what is pending before anything is
        // planned: those configured late are configured from the state.
        if !state.pending.is_empty() {
            self.configure_late_from_state(ws, &state, &providers, &late_providers)?;
        }
        // What an interrupted apply left pending is settled first, at the
        // addresses it was journaled under.
        let recoveries = match state.pending.is_empty() {
            true => Vec::new(),
            false => {
                self.until_interrupted("recovery", crate::apply::recover::recover(&mut state, &providers, &ws.config))?
            }
        };
        for r in &recoveries {
            events.emit(Event::recovered(r));
        }
        // `moved` blocks rebind the state before anything is planned.
        let moves = plan::apply_moves(&ws.config.moved, &mut state).map_err(diagnostics)?;
        // Only a move across types calls a provider (and so can be
        // interrupted); without one, an interrupt is the plan's to report.
        if moves.iter().any(|m| m.from.resource.type_name != m.to.resource.type_name) {
            // A move across types asks the target's provider: configured
            // from the state if it is configured late.
            if late_providers.values().any(|p| !p.is_configured()) {
                self.configure_late_from_state(ws, &state, &providers, &late_providers)?;
            }
            let across_types =
                plan::convert_moves_across_types(&moves, &ws.config.moved, &ws.config, &providers, &mut state);
            self.until_interrupted("moving objects across resource types", across_types)?.map_err(diagnostics)?;
        }
        let state = Arc::new(state);
        // A destroy plans the state alone: module expansion does not matter.
        let (config, graph) = match &ws.staging {
            Some(staging) if !options.destroy => {
                self.expand_while_planning(ws, staging, &state, (&providers, &late_providers), &options)?
            }
            _ => (Arc::clone(&ws.config), Arc::clone(&ws.graph)),
        };
        let (progress, reported) = std::sync::mpsc::channel();
        let planner = Planner {
            config: Arc::clone(&config),
            graph: Arc::clone(&graph),
            providers: providers.clone(),
            late_providers: late_providers.clone(),
            state: Arc::clone(&state),
            variables: ws.variables.clone(),
            options: options.plan_options(&config, &state)?,
            moves,
            progress: plan::Progress::to(progress),
        };
        let started = Instant::now();
        // Each read goes to `events` as it happens, from a thread of its
        // own: the planner's tasks cannot borrow `events`. It ends once the
        // planner, and with it every sender, is gone.
        let plan = std::thread::scope(|scope| {
            scope.spawn(|| reported.into_iter().for_each(|event| events.emit(event)));
            self.plan_until_interrupted(planner)
        })?
        .map_err(diagnostics)?;
        tracing::debug!(changes = plan.changes.len(), elapsed = ?started.elapsed(), "planned");
        // The planner is gone, and with it the only other holder: no copy.
        let state = Arc::try_unwrap(state).unwrap_or_else(|shared| (*shared).clone());
        for w in &plan.warnings {
            events.diagnostic(w);
        }
        // An apply checks the check blocks again once it is done.
        if options.intent == Intent::Inspect {
            for w in &plan.check_warnings {
                events.diagnostic(w);
            }
        }
        Ok(Planned {
            plan,
            providers,
            state,
            recoveries,
            backend,
            options,
            provider_hashes,
            config,
            graph,
            late_providers,
        })
    }

    /// Configures the providers configured late from `state` (see
    /// [`plan::FromState`]), for what asks them before the walk does.
    fn configure_late_from_state(
        &self,
        ws: &Workspace,
        state: &State,
        providers: &Providers,
        late: &plan::LateProviders,
    ) -> Result<()> {
        if late.is_empty() {
            return Ok(());
        }
        let from_state = providers::StateConfiguration {
            config: &ws.config,
            graph: &ws.graph,
            providers,
            late,
            variables: &ws.variables,
        };
        let names: BTreeSet<String> = late.keys().cloned().collect();
        self.until_interrupted("configuring providers", from_state.configure(&names, state))?.map_err(diagnostics)
    }

    /// The configuration of `ws` with its deferred module calls expanded
    /// (see `staged`): each round plans, quietly, the resources their
    /// arguments depend on in `state` with `providers`.
    fn expand_while_planning(
        &self,
        ws: &Workspace,
        staging: &staged::Staging,
        state: &Arc<State>,
        (providers, late_providers): (&Providers, &plan::LateProviders),
        options: &RunOptions,
    ) -> Result<(Arc<Config>, Arc<DependencyGraph>)> {
        let first = ws.first_stage(staging);
        let stage = staged::expand_in_rounds(&staging.parsed, &ws.variables, first, |stage, upstream| {
            let planner = Planner {
                config: Arc::clone(&stage.config),
                graph: Arc::clone(&stage.graph),
                providers: providers.clone(),
                late_providers: late_providers.clone(),
                state: Arc::clone(state),
                variables: ws.variables.clone(),
                options: PlanOptions {
                    destroy: false,
                    skip_refresh: !options.refresh,
                    refresh_only: options.refresh_only,
                    replace: Vec::new(),
                    targets: upstream,
                    parallelism: options.parallelism,
                },
                moves: Vec::new(),
                progress: plan::Progress::default(),
            };
            self.plan_until_interrupted(planner)?.map_err(diagnostics)
        })?;
        Ok((stage.config, stage.graph))
    }

    /// Applies a plan: every change as soon as what it depends on is done,
    /// each journaled before the provider is called, and the state committed
    /// once at the end. Errors are in the report; the state records
    /// everything that finished.
    pub fn apply(&self, ws: &Workspace, planned: Planned, events: Arc<dyn EventSink>) -> (ApplyReport, State) {
        let Planned {
            plan, providers, mut state, recoveries, mut backend, options, config, graph, late_providers, ..
        } = planned;
        let failed = |d: Vec<Diagnostic>, state: State| {
            for e in &d {
                events.diagnostic(e);
            }
            (ApplyReport { errors: d, ..ApplyReport::default() }, state)
        };
        if plan.refresh_only {
            return match plan::refreshed_state(&plan, &providers, &mut state) {
                Ok(()) => match backend.write(&mut state) {
                    Ok(()) => (ApplyReport::default(), state),
                    Err(e) => failed(vec![Diagnostic::error(format!("cannot write the state: {e}"))], state),
                },
                Err(d) => failed(d, state),
            };
        }
        // The objects the plan keeps as they are, as it read them
        // (refreshed, upgraded): written with the rest.
        let refreshed = plan::unchanged_objects(&plan, &providers, &mut state);
        // Objects `moved` blocks rebound are written at their new
        // addresses before any provider call, so that what the apply
        // journals is about the state as planned.
        if !plan.moved.is_empty()
            && let Err(e) = backend.write(&mut state)
        {
            return failed(vec![Diagnostic::error(format!("cannot write the state: {e}"))], state);
        }
        let applier = Applier {
            config,
            graph,
            providers,
            late_providers,
            plan,
            variables: ws.variables.clone(),
            parallelism: options.parallelism,
            provider_limits: ws.provider_limits(),
            events,
            interrupt: self.interrupt.clone(),
            state_changed: !recoveries.is_empty() || refreshed,
        };
        // On the workers, as the plan (see `plan_until_interrupted`).
        let task = self.tokio.spawn(applier.apply(state, backend));
        match self.tokio.block_on(task) {
            Ok(done) => done,
            // The task is never aborted, so it ended or panicked.
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// Ends a run that had nothing to apply: what the plan recovered of an
    /// interrupted apply, and the objects it refreshed or upgraded (see
    /// [`plan::unchanged_objects`]), are committed here.
    pub fn settle(&self, planned: &mut Planned) -> Result<()> {
        let refreshed = plan::unchanged_objects(&planned.plan, &planned.providers, &mut planned.state);
        if !planned.recoveries.is_empty() || refreshed {
            planned.backend.write(&mut planned.state)?;
        }
        Ok(())
    }

    /// The steps applying `plan` would take, as an apply graph.
    pub fn apply_graph(&self, ws: &Workspace, plan: &Plan) -> Result<apply::ApplyGraph> {
        let (_, graph) = ws.planned_config(plan)?;
        apply::graph::build(plan, &graph).map_err(|d| diagnostics(vec![d]))
    }

    /// What a provider component is and could ask for, without granting it
    /// anything.
    pub fn inspect(&self, name: &str, wasm: &[u8]) -> Result<Inspection> {
        let ProviderSource::Components(runtime) = &self.source else {
            anyhow::bail!("only a WebAssembly component can be inspected");
        };
        let loaded = runtime.load(name, wasm)?;
        // Nothing granted: no files, no environment, no network.
        let schema = self.tokio.block_on(loaded.schema(&crate::runtime::Sandbox::default()))?;
        let imports =
            loaded.imports().into_iter().map(|i| (crate::runtime::describe_import(&i), i)).map(|(d, i)| (i, d));
        Ok(Inspection { schema, imports: imports.collect() })
    }

    /// Starts the providers a run over `state` needs, with the SHA-256 of
    /// each one's component.
    fn start_providers(&self, ws: &Workspace, state: &State, intent: Intent) -> Result<providers::Started> {
        let mut names = needed_providers(&ws.config, state);
        names.extend(ws.staging.iter().flat_map(|s| s.providers.iter().cloned()));
        let doubles = self.doubles.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        // A mocked provider is not started at all.
        let mocked = doubles.as_ref().map(|d| doubles::take_mocked(d.as_ref(), &mut names)).unwrap_or_default();
        let started = self.start_real_providers(ws, &names, intent)?;
        match doubles {
            None => Ok(started),
            Some(d) => Ok(providers::Started {
                providers: doubles::substitute(d.as_ref(), started.providers, &mocked).map_err(diagnostics)?,
                ..started
            }),
        }
    }

    /// Starts the providers `names`, with the SHA-256 of each one's
    /// component.
    fn start_real_providers(
        &self,
        ws: &Workspace,
        names: &BTreeSet<String>,
        intent: Intent,
    ) -> Result<providers::Started> {
        match &self.source {
            // Configured already: none is late.
            ProviderSource::InProcess(providers) => Ok(providers::Started {
                providers: providers
                    .iter()
                    .filter(|(n, _)| names.contains(*n))
                    .map(|(n, p)| (n.clone(), Arc::clone(p)))
                    .collect(),
                ..providers::Started::default()
            }),
            ProviderSource::Components(runtime) => self
                .tokio
                .block_on(providers::start(runtime, &ws.config, names, &ws.variables, intent))
                .map_err(diagnostics),
        }
    }
}

/// What [`Engine::inspect`] found in a component.
pub struct Inspection {
    /// The schema it declares.
    pub schema: ProviderSchema,
    /// What it imports, by WIT name, sorted, each with what it gives the
    /// provider under the sandbox.
    pub imports: Vec<(String, &'static str)>,
}

/// Diagnostics as an error.
pub fn diagnostics(d: Vec<Diagnostic>) -> anyhow::Error {
    anyhow::Error::new(Diagnostics(d))
}

/// Whether `d` is the plan's report that it was interrupted.
fn is_interrupted(d: &Diagnostic) -> bool {
    d.is_error() && d.summary == plan::INTERRUPTED
}

/// Refuses to plan from no state in a directory whose objects Terraform's
/// state records: the plan would create every one of them a second time.
fn refuse_unmigrated_terraform_state(ws: &Workspace, state: &State) -> Result<()> {
    if state.serial > 0 || !state.resources.is_empty() {
        return Ok(());
    }
    let path = ws.dir().join(crate::state::TERRAFORM_STATE_FILE);
    let Ok(text) = std::fs::read(&path) else { return Ok(()) };
    let instances = crate::state::TerraformState::parse(crate::state::TERRAFORM_STATE_FILE, &text)
        .map(|tf| tf.managed_instances())
        .unwrap_or(0);
    if instances == 0 {
        return Ok(());
    }
    anyhow::bail!(
        "this directory has a Terraform state ({}) with {instances} resource instance(s), and cairn has no state \
         yet: a plan would create every one of them again. Bring them over with `cairn state migrate`, which \
         writes cairn's state from Terraform's (or move {} away if those objects are not this configuration's)",
        crate::state::TERRAFORM_STATE_FILE,
        crate::state::TERRAFORM_STATE_FILE
    )
}

#[cfg(test)]
mod tests;
