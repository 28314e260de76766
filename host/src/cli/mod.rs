//! The `cairn` command: argument parsing (clap, with Terraform's single-dash
//! flags accepted), the commands, and what they print.

mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use std::sync::Arc;

use crate::apply::Applier;
use crate::apply::events::{Event, EventSink, Human, JsonLines, Live};
use crate::config::{self, Config};
use crate::diag::{Diagnostic, Diagnostics};
use crate::graph::DependencyGraph;
use crate::plan::{Action, Plan, PlanOptions, Planner, Providers};
use crate::registry;
use crate::runtime::Runtime;
use crate::schema::{Block, Nesting, ProviderSchema};
use crate::state::{LocalBackend, State};
use crate::value::{self, Value};

pub use render::{Colors, render_plan};

/// The name of the state file beside the configuration.
pub const STATE_FILE: &str = "cairn.state.json";

/// cairn: infrastructure as code with sandboxed WebAssembly providers.
#[derive(Debug, Parser)]
#[command(name = "cairn", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check that the configuration is valid.
    Validate(Common),
    /// Show what apply would do.
    Plan {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
        /// Exit with 2 when there are changes (0: none, 1: error).
        #[arg(long)]
        detailed_exitcode: bool,
        /// Plan to destroy everything.
        #[arg(long)]
        destroy: bool,
    },
    /// Create, update and destroy objects to match the configuration.
    Apply {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
        /// Do not ask for confirmation.
        #[arg(long)]
        auto_approve: bool,
    },
    /// Destroy every object in the state.
    Destroy {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        run: RunFlags,
        /// Do not ask for confirmation.
        #[arg(long)]
        auto_approve: bool,
    },
    /// Show the current state.
    Show {
        #[command(flatten)]
        common: Common,
        /// Print the state file's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the dependency graph in Graphviz DOT.
    Graph {
        #[command(flatten)]
        common: Common,
        /// `plain` (dependencies) or `apply` (the steps of the current plan).
        #[arg(long = "type", default_value = "plain")]
        kind: String,
    },
    /// Inspect providers.
    Providers {
        #[command(subcommand)]
        command: ProvidersCommand,
    },
}

#[derive(Debug, Subcommand)]
enum ProvidersCommand {
    /// Print the schemas of the providers the configuration uses.
    Schema {
        #[command(flatten)]
        common: Common,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show what a provider component is and what it could ask for, without
    /// granting it anything: its resource types and the WIT imports it uses.
    Inspect {
        /// The provider's `.wasm` file.
        file: PathBuf,
    },
}

/// Flags every command takes.
#[derive(Debug, Args)]
struct Common {
    /// The configuration directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Change to this directory first (Terraform's -chdir).
    #[arg(long)]
    chdir: Option<PathBuf>,
    /// Set a variable: -var 'name=value' (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Disable colours.
    #[arg(long)]
    no_color: bool,
}

/// Flags of commands that plan.
#[derive(Debug, Args)]
struct RunFlags {
    /// Most operations running at once.
    #[arg(long, default_value_t = 10)]
    parallelism: usize,
    /// Do not ask providers whether objects changed outside cairn.
    #[arg(long = "refresh", default_value_t = true, action = clap::ArgAction::Set)]
    refresh: bool,
    /// Write the run as a stream of JSON objects, one a line, instead of
    /// the human output (apply and destroy then need -auto-approve).
    #[arg(long)]
    json: bool,
}

impl RunFlags {
    /// Where this run's events go.
    fn sink(&self) -> Arc<dyn EventSink> {
        if self.json {
            Arc::new(JsonLines::new(std::io::stdout()))
        } else if std::io::stdout().is_terminal() && std::env::var_os("TERM").is_some_and(|t| t != "dumb") {
            let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(100);
            Arc::new(Live::new(width))
        } else {
            Arc::new(Human)
        }
    }
}

/// Runs a planning command; with -json, its errors become `diagnostic`
/// events and a failed `summary` instead of text on standard error.
fn json_run(command: &str, run: &RunFlags, body: impl FnOnce(&Arc<dyn EventSink>) -> Result<i32>) -> Result<i32> {
    let events = run.sink();
    if run.json {
        events.emit(Event::RunStart {
            command: command.to_string(),
            cairn_version: env!("CARGO_PKG_VERSION").to_string(),
            parallelism: run.parallelism,
        });
    }
    let result = body(&events);
    if !run.json {
        return result;
    }
    match result {
        Ok(code) => Ok(code),
        Err(e) => {
            let diags = match e.downcast_ref::<Diagnostics>() {
                Some(d) => d.0.clone(),
                None => vec![Diagnostic::error(format!("{e:#}"))],
            };
            for d in &diags {
                events.diagnostic(d);
            }
            events.emit(Event::Summary {
                command: command.to_string(),
                outcome: "failed".to_string(),
                added: 0,
                changed: 0,
                destroyed: 0,
                errors: diags.iter().filter(|d| d.is_error()).count(),
            });
            Ok(1)
        }
    }
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let args = normalize_flags(std::env::args());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    init_logging();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            match e.downcast_ref::<Diagnostics>() {
                Some(d) => eprintln!("{d}"),
                None => eprintln!("Error: {e:#}"),
            }
            1
        }
    }
}

/// Terraform's flags are single-dash (`-auto-approve`); accept them as
/// well as the double-dash form clap expects.
fn normalize_flags(args: impl Iterator<Item = String>) -> Vec<String> {
    args.enumerate()
        .map(|(i, a)| {
            let is_single_dash_long = i > 0 && a.starts_with('-') && !a.starts_with("--") && a.len() > 2;
            if is_single_dash_long { format!("-{a}") } else { a }
        })
        .collect()
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Validate(common) => validate(&common),
        Command::Plan { common, run, detailed_exitcode, destroy } => plan(&common, &run, detailed_exitcode, destroy),
        Command::Apply { common, run, auto_approve } => apply(&common, &run, auto_approve, false),
        Command::Destroy { common, run, auto_approve } => apply(&common, &run, auto_approve, true),
        Command::Show { common, json } => show(&common, json),
        Command::Graph { common, kind } => graph(&common, &kind),
        Command::Providers { command: ProvidersCommand::Schema { common, json } } => providers_schema(&common, json),
        Command::Providers { command: ProvidersCommand::Inspect { file } } => providers_inspect(&file),
    }
}

/// A loaded configuration with what every command needs.
struct Workspace {
    config: Config,
    graph: DependencyGraph,
    variables: BTreeMap<String, Value>,
    state_path: PathBuf,
    colors: Colors,
}

fn diagnostics(d: Vec<Diagnostic>) -> anyhow::Error {
    anyhow::Error::new(Diagnostics(d))
}

impl Workspace {
    fn load(common: &Common) -> Result<Workspace> {
        let base = match &common.chdir {
            Some(d) => d.join(&common.dir),
            None => common.dir.clone(),
        };
        let dir = base
            .canonicalize()
            .with_context(|| format!("the configuration directory {} does not exist", base.display()))?;
        let config = config::load(&dir).map_err(diagnostics)?;
        let graph = DependencyGraph::build(&config).map_err(|d| diagnostics(vec![d]))?;
        let env: Vec<(String, String)> = std::env::vars().collect();
        let variables = config::resolve_variables(&config, &common.vars, &env).map_err(diagnostics)?;
        let colors =
            Colors::new(!common.no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal());
        Ok(Workspace { state_path: dir.join(STATE_FILE), config, graph, variables, colors })
    }

    fn start_providers(&self, runtime: &Runtime, state: &State, intent: registry::Intent) -> Result<Providers> {
        let names = registry::needed_providers(&self.config, state);
        registry::start(runtime, &self.config, &names, &self.variables, intent).map_err(diagnostics)
    }

    fn plan(
        &self,
        providers: &Providers,
        state: &State,
        run: &RunFlags,
        destroy: bool,
        events: &dyn EventSink,
    ) -> Result<Plan> {
        let planner = Planner {
            config: &self.config,
            graph: &self.graph,
            providers,
            state,
            variables: self.variables.clone(),
            options: PlanOptions { destroy, skip_refresh: !run.refresh },
        };
        let plan = planner.plan().map_err(diagnostics)?;
        for w in &plan.warnings {
            events.diagnostic(w);
        }
        Ok(plan)
    }
}

fn validate(common: &Common) -> Result<i32> {
    let ws = Workspace::load(common)?;
    let runtime = Runtime::new()?;
    let mut errors = Vec::new();
    let names: BTreeSet<String> = registry::needed_providers(&ws.config, &State::new());
    let mut schemas = BTreeMap::new();
    for name in &names {
        match registry::load(&runtime, &ws.config, name) {
            Ok(l) => {
                schemas.insert(name.clone(), l.schema);
            }
            Err(d) => errors.extend(d),
        }
    }
    // Every resource's body against its schema, with other resources unknown.
    let ctx = config::EvalContext {
        variables: ws.variables.clone(),
        locals: ws.config.locals.keys().map(|k| (k.clone(), Value::unknown())).collect(),
        resources: ws.config.resources.iter().map(|r| (r.addr.clone(), Value::unknown())).collect(),
        ..config::EvalContext::new(&ws.config.dir)
    };
    for r in &ws.config.resources {
        let Some(schema) = schemas.get(&r.provider) else { continue };
        let table = if r.addr.mode == crate::addr::Mode::Managed { &schema.resources } else { &schema.data_sources };
        match table.get(&r.addr.type_name) {
            None => errors.push(
                Diagnostic::error(format!("Provider {:?} has no type {:?}", r.provider, r.addr.type_name))
                    .at(&r.location),
            ),
            Some(s) => {
                let mut inst = ctx.clone();
                inst.count_index = r.count.as_ref().map(|_| 0);
                inst.each = r.for_each.as_ref().map(|_| (Value::unknown(), Value::unknown()));
                if let Err(d) = config::decode_body(&r.body, &s.block, &inst) {
                    errors.extend(d);
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(diagnostics(errors));
    }
    println!("{} The configuration is valid.", ws.colors.green("Success!"));
    Ok(0)
}

/// Everything a planning command has once the plan is shown.
struct Planned {
    ws: Workspace,
    backend: LocalBackend,
    state: State,
    providers: Providers,
    plan: Plan,
}

/// Loads the configuration, locks and reads the state, starts the
/// providers, plans and prints the plan.
fn plan_and_show(
    common: &Common,
    run: &RunFlags,
    destroy: bool,
    intent: registry::Intent,
    events: &dyn EventSink,
) -> Result<Planned> {
    let ws = Workspace::load(common)?;
    let backend = LocalBackend::open(&ws.state_path)?;
    let state = backend.read()?;
    for pending in &state.pending {
        events.diagnostic(&pending.warning());
    }
    let runtime = Runtime::new()?;
    let providers = ws.start_providers(&runtime, &state, intent)?;
    let plan = ws.plan(&providers, &state, run, destroy, events)?;
    if run.json {
        for c in plan.changes.iter().filter(|c| c.action != Action::NoOp) {
            events.emit(Event::PlannedChange {
                address: c.addr.to_string(),
                action: c.action.to_string(),
                create_before_destroy: c.create_before_destroy,
                deposed_key: c.deposed.clone(),
            });
        }
        let (add, change, destroy) = plan.counts();
        events.emit(Event::ChangeSummary { add, change, destroy });
    } else {
        print!("{}", render_plan(&plan, &providers, ws.colors));
    }
    Ok(Planned { ws, backend, state, providers, plan })
}

fn plan(common: &Common, run: &RunFlags, detailed_exitcode: bool, destroy: bool) -> Result<i32> {
    json_run("plan", run, |events| {
        let planned = plan_and_show(common, run, destroy, registry::Intent::Inspect, events.as_ref())?;
        let changes = planned.plan.has_changes();
        if run.json {
            events.emit(Event::Summary {
                command: "plan".to_string(),
                outcome: if changes { "success" } else { "no_changes" }.to_string(),
                added: 0,
                changed: 0,
                destroyed: 0,
                errors: 0,
            });
        }
        Ok(if detailed_exitcode && changes { 2 } else { 0 })
    })
}

fn apply(common: &Common, run: &RunFlags, auto_approve: bool, destroy: bool) -> Result<i32> {
    let command = if destroy { "destroy" } else { "apply" };
    json_run(command, run, |events| apply_with(common, run, auto_approve, destroy, events))
}

fn apply_with(
    common: &Common,
    run: &RunFlags,
    auto_approve: bool,
    destroy: bool,
    events: &Arc<dyn EventSink>,
) -> Result<i32> {
    let command = if destroy { "destroy" } else { "apply" };
    if run.json && !auto_approve {
        bail!("-json needs -auto-approve: there is no one to type 'yes' in a JSON stream");
    }
    let Planned { ws, mut backend, mut state, providers, plan } =
        plan_and_show(common, run, destroy, registry::Intent::Change, events.as_ref())?;
    let summary = |outcome: &str, report: Option<&crate::apply::ApplyReport>| Event::Summary {
        command: command.to_string(),
        outcome: outcome.to_string(),
        added: report.map_or(0, |r| r.added),
        changed: report.map_or(0, |r| r.changed),
        destroyed: report.map_or(0, |r| r.destroyed),
        errors: report.map_or(0, |r| r.errors.len()),
    };
    if !plan.has_changes() {
        // The operations an earlier crash left pending were just shown;
        // with nothing to change, this apply settles them here.
        if !state.pending.is_empty() {
            state.pending.clear();
            backend.write(&mut state)?;
        }
        if run.json {
            events.emit(summary("no_changes", None));
        }
        return Ok(0);
    }
    if !auto_approve && !confirm(destroy)? {
        println!("\nApply cancelled.");
        return Ok(1);
    }
    if !run.json {
        println!();
    }
    let colors = ws.colors;
    let applier = Applier {
        config: ws.config,
        graph: ws.graph,
        providers,
        plan,
        variables: ws.variables,
        parallelism: run.parallelism,
        events: Arc::clone(events),
    };
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (report, _state) = tokio.block_on(applier.apply(state, backend));
    if run.json {
        events.emit(summary(if report.errors.is_empty() { "success" } else { "failed" }, Some(&report)));
        return Ok(if report.errors.is_empty() { 0 } else { 1 });
    }
    if !report.errors.is_empty() {
        eprintln!(
            "{} {} error(s); the state records everything that finished.",
            colors.red("Apply failed:"),
            report.errors.len()
        );
        return Ok(1);
    }
    if destroy {
        println!("\n{} Resources: {} destroyed.", colors.green("Destroy complete!"), report.destroyed);
    } else {
        println!(
            "\n{} Resources: {} added, {} changed, {} destroyed.",
            colors.green("Apply complete!"),
            report.added,
            report.changed,
            report.destroyed
        );
    }
    if !report.outputs.is_empty() {
        println!("\nOutputs:\n");
        for (name, (v, sensitive)) in &report.outputs {
            println!("{name} = {}", render::show_value(v, *sensitive));
        }
    }
    Ok(0)
}

/// Asks the operator to type `yes`.
fn confirm(destroy: bool) -> Result<bool> {
    let question = if destroy {
        "Do you really want to destroy all resources?\n  cairn will destroy all your managed infrastructure, as shown above."
    } else {
        "Do you want to perform these actions?\n  cairn will perform the actions described above."
    };
    print!("\n{question}\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim() == "yes")
}

fn show(common: &Common, json: bool) -> Result<i32> {
    let ws = Workspace::load(common)?;
    if !ws.state_path.exists() {
        println!("No state.");
        return Ok(0);
    }
    let state = LocalBackend::open_read_only(&ws.state_path).read()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&state)?);
        return Ok(0);
    }
    if state.resources.is_empty() && state.outputs.is_empty() && state.pending.is_empty() {
        println!("The state is empty.");
        return Ok(0);
    }
    let runtime = Runtime::new()?;
    let names: BTreeSet<String> = state.resources.iter().map(|r| r.provider.clone()).collect();
    let mut schemas = BTreeMap::new();
    for name in &names {
        let loaded = registry::load(&runtime, &ws.config, name).map_err(diagnostics)?;
        schemas.insert(name.clone(), loaded.schema);
    }
    for inst in &state.resources {
        let schema = schemas[&inst.provider].resources.get(&inst.addr.resource.type_name);
        let value = match schema {
            Some(s) => value::from_json(&inst.attributes, &s.block.implied_type()).unwrap_or(Value::Null),
            None => value::from_json_untyped(&inst.attributes),
        };
        let tainted = match inst.status {
            crate::state::InstanceStatus::Tainted => " (tainted)",
            crate::state::InstanceStatus::Destroying => " (being destroyed)",
            crate::state::InstanceStatus::Ready => "",
        };
        println!("# {}:{tainted}", inst.addr);
        let name = inst.addr.to_string();
        let label = name.split_once('.').map_or("", |(_, n)| n);
        println!("resource \"{}\" \"{label}\" {{", inst.addr.resource.type_name);
        let block = schema.map(|s| &s.block);
        for (k, v) in value_attrs(&value) {
            if v.is_null() {
                continue;
            }
            let path = value::Path::root().attr(k);
            let marked = inst.sensitive_attributes.iter().any(|m| path.starts_with(m));
            let sensitive = marked || block.is_some_and(|b| b.is_sensitive(&path));
            println!("    {k} = {}", render::show_value(v, sensitive));
        }
        println!("}}\n");
    }
    for op in &state.pending {
        let object = op.deposed.as_ref().map_or(String::new(), |key| format!(" (deposed object {key})"));
        println!(
            "# Interrupted: the {} of {}{object}, started {}; the object may exist (idempotency key {}).\n",
            op.operation, op.addr, op.started, op.idempotency_key
        );
    }
    if !state.outputs.is_empty() {
        println!("Outputs:\n");
        for (name, o) in &state.outputs {
            let v = o.decode().unwrap_or(Value::Null);
            println!("{name} = {}", render::show_value(&v, o.sensitive));
        }
    }
    Ok(0)
}

fn value_attrs(v: &Value) -> Vec<(&String, &Value)> {
    match v {
        Value::Object(m) => m.iter().collect(),
        _ => Vec::new(),
    }
}

fn graph(common: &Common, kind: &str) -> Result<i32> {
    let ws = Workspace::load(common)?;
    match kind {
        "plain" => print!("{}", ws.graph.to_dot()),
        "apply" => {
            let state = LocalBackend::open_read_only(&ws.state_path).read()?;
            let runtime = Runtime::new()?;
            let providers = ws.start_providers(&runtime, &state, registry::Intent::Inspect)?;
            let run = RunFlags { parallelism: 10, refresh: true, json: false };
            let plan = ws.plan(&providers, &state, &run, false, &Human)?;
            let g = crate::apply::graph::build(&plan, &ws.graph).map_err(|d| diagnostics(vec![d]))?;
            print!("{}", crate::apply::graph::to_dot(&g, &plan));
        }
        other => bail!("unknown graph type {other:?}: use plain or apply"),
    }
    Ok(0)
}

fn providers_schema(common: &Common, json: bool) -> Result<i32> {
    let ws = Workspace::load(common)?;
    let runtime = Runtime::new()?;
    let mut names = registry::needed_providers(&ws.config, &State::new());
    if names.is_empty() {
        names.extend(crate::runtime::BUILTIN_NAMES.iter().map(|s| s.to_string()));
    }
    let mut out = serde_json::Map::new();
    for name in &names {
        let loaded = registry::load(&runtime, &ws.config, name).map_err(diagnostics)?;
        if json {
            out.insert(name.clone(), schema_json(&loaded.schema));
        } else {
            print!("{}", schema_text(name, &loaded.schema));
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::Value::Object(out))?);
    }
    Ok(0)
}

fn providers_inspect(file: &std::path::Path) -> Result<i32> {
    let wasm = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let name = file.file_stem().map_or_else(|| "provider".to_string(), |s| s.to_string_lossy().into_owned());
    let runtime = Runtime::new()?;
    let loaded = runtime.load(&name, &wasm)?;
    // Nothing granted: no files, no environment, no network.
    let schema = loaded.schema(&crate::runtime::Sandbox::default())?;
    println!("provider {name:?}");
    println!("  file:    {}", file.display());
    println!("  sha256:  {}", hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&wasm)));
    println!("  version: not declared (the cairn:provider@0.2.0 ABI has no version; the sha256 identifies it)");
    for (kind, table) in [("resource types", &schema.resources), ("data sources", &schema.data_sources)] {
        println!("\n{kind}:");
        if table.is_empty() {
            println!("  (none)");
        }
        for type_name in table.keys() {
            println!("  {type_name}");
        }
    }
    println!("\nimports (what it could ask for; each works only as far as its sandbox grants):");
    let imports = loaded.imports();
    let width = imports.iter().map(String::len).max().unwrap_or(0);
    for import in &imports {
        println!("  {import:width$}  {}", capability(import));
    }
    Ok(0)
}

/// What an import gives a provider, and what decides how far it reaches.
fn capability(import: &str) -> &'static str {
    let interface = import.split('@').next().unwrap_or(import);
    match interface {
        "cairn:provider/log" => "log lines (to the host's log, rate-limited)",
        "cairn:provider/types" => "the provider ABI's types",
        "wasi:filesystem/types" | "wasi:filesystem/preopens" => {
            "files: only the directories granted with read_only / read_write"
        }
        "wasi:cli/environment" => "environment variables: only those granted with env",
        "wasi:http/outgoing-handler" => "outgoing HTTP: only the origins granted with http { url = … }",
        "wasi:http/types" => "HTTP requests and responses (see outgoing-handler)",
        "wasi:sockets/tcp"
        | "wasi:sockets/udp"
        | "wasi:sockets/tcp-create-socket"
        | "wasi:sockets/udp-create-socket" => "raw sockets: always denied",
        "wasi:sockets/ip-name-lookup" => "name lookup: always denied",
        "wasi:sockets/network" | "wasi:sockets/instance-network" => "networks: none granted, ever",
        "wasi:cli/stdout" | "wasi:cli/stderr" => "output: to the host's log, rate-limited",
        "wasi:cli/stdin" => "standard input: always empty",
        "wasi:cli/exit" => "exit: ends the call as a crash",
        "wasi:clocks/monotonic-clock" => "a clock (waits end at the call's deadline)",
        "wasi:clocks/wall-clock" => "the time of day",
        "wasi:random/random" | "wasi:random/insecure" | "wasi:random/insecure-seed" => "random numbers",
        "wasi:io/poll" | "wasi:io/streams" | "wasi:io/error" => "streams and polling (for the above)",
        _ if interface.starts_with("wasi:cli/terminal") => "terminal queries: never a terminal",
        _ => "unknown to cairn: linking fails unless the host provides it",
    }
}

fn schema_text(name: &str, schema: &ProviderSchema) -> String {
    let mut out = format!("provider \"{name}\"\n");
    out.push_str(&block_text(&schema.provider.block, 2));
    for (kind, table) in [("resource", &schema.resources), ("data", &schema.data_sources)] {
        for (type_name, s) in table {
            out.push_str(&format!("\n{kind} \"{type_name}\" (schema version {})\n", s.version));
            out.push_str(&block_text(&s.block, 2));
        }
    }
    out.push('\n');
    out
}

fn block_text(block: &Block, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (name, a) in &block.attributes {
        let mut flags = Vec::new();
        if a.required {
            flags.push("required");
        }
        if a.optional {
            flags.push("optional");
        }
        if a.computed {
            flags.push("computed");
        }
        if a.sensitive {
            flags.push("sensitive");
        }
        let desc = if a.description.is_empty() { String::new() } else { format!(" — {}", a.description) };
        out.push_str(&format!("{pad}{name}: {} ({}){desc}\n", a.ty, flags.join(", ")));
    }
    for (name, nb) in &block.blocks {
        let nesting = match nb.nesting {
            Nesting::Single => "single",
            Nesting::List => "list",
            Nesting::Set => "set",
            Nesting::Map => "map",
        };
        out.push_str(&format!("{pad}{name} {{ }} ({nesting} block)\n"));
        out.push_str(&block_text(&nb.block, indent + 2));
    }
    out
}

fn schema_json(schema: &ProviderSchema) -> serde_json::Value {
    fn block(b: &Block) -> serde_json::Value {
        let attrs: serde_json::Map<String, serde_json::Value> = b
            .attributes
            .iter()
            .map(|(n, a)| {
                (
                    n.clone(),
                    serde_json::json!({
                        "type": value::type_to_json(&a.ty), "required": a.required, "optional": a.optional,
                        "computed": a.computed, "sensitive": a.sensitive, "description": a.description,
                    }),
                )
            })
            .collect();
        let blocks: serde_json::Map<String, serde_json::Value> = b
            .blocks
            .iter()
            .map(|(n, nb)| {
                let nesting = format!("{:?}", nb.nesting).to_lowercase();
                (
                    n.clone(),
                    serde_json::json!({"nesting_mode": nesting, "min_items": nb.min_items, "max_items": nb.max_items, "block": block(&nb.block)}),
                )
            })
            .collect();
        serde_json::json!({"attributes": attrs, "block_types": blocks, "description": b.description})
    }
    let table = |t: &BTreeMap<String, crate::schema::Schema>| -> serde_json::Value {
        t.iter()
            .map(|(n, s)| (n.clone(), serde_json::json!({"version": s.version, "block": block(&s.block)})))
            .collect()
    };
    serde_json::json!({
        "provider": {"version": schema.provider.version, "block": block(&schema.provider.block)},
        "resource_schemas": table(&schema.resources),
        "data_source_schemas": table(&schema.data_sources),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_dash_flags_become_double_dash() {
        let args = ["cairn", "apply", "-auto-approve", "-parallelism=3", "-var", "a=b", "dir"].map(String::from);
        assert_eq!(
            normalize_flags(args.into_iter()),
            ["cairn", "apply", "--auto-approve", "--parallelism=3", "--var", "a=b", "dir"]
        );
    }
}
