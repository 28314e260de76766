//! `cairn test`: runs the `*.tftest.hcl` files of the configuration
//! directory and of its `tests/` folder, as `terraform test` does.
//!
//! Each file's `run` blocks go in order over one state kept in memory
//! ([`memory::Memory`]): `command = apply` (the default) plans and applies
//! with the configuration's real providers and sandbox grants, `command =
//! plan` only plans. After each run its `assert` blocks are checked
//! against what it planned or applied (resources, `output.NAME`, `var.NAME`
//! and the outputs of earlier runs as `run.NAME.OUTPUT`); `expect_failures`
//! turns the failures of the named checkable objects (variable
//! validations, output and resource conditions, check blocks) into a pass.
//! When a file is done, everything its runs created is destroyed, in
//! reverse dependency order; what a failed destroy leaves behind is listed
//! loudly, object by object.
//!
//! `mock_provider` blocks replace a provider with a mock that is never
//! configured or called, and `override_resource` and `override_data`
//! (for the file, for a run, or inside a mock provider) answer for the
//! objects they target instead of their provider ([`mocks`]); the mocked
//! provider's schema is still read from its component, as Terraform reads
//! the real provider's.
//!
//! The test file's `provider` blocks stand for the configuration's of the
//! same name (all of them, or with a run's `providers` map only those it
//! names, under the configuration's name), their arguments evaluated with
//! the file's variables and earlier runs' outputs, each with only its own
//! `sandbox` grants.
//!
//! The output is Terraform's: `FILE... in progress`, `  run "NAME"...
//! pass|fail|skip`, `FILE... tearing down`, `FILE... pass|fail`, then
//! `Success!` or `Failure!` with the counts; diagnostics on standard
//! error. `-filter=FILE` runs only the named files, `-verbose` prints each
//! run's plan or state, `-junit-xml=FILE` writes the results as JUnit XML.

mod junit;
mod memory;
mod mocks;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Result;

use super::render::{Colors, render_plan, schemas_of};
use crate::addr::{InstanceAddr, Mode};
use crate::apply::events::{Event, EventSink};
use crate::config::{
    self, Config, EvalContext, MockProvider, ModuleOverride, Override, OverrideDuring, ProviderConfig, TestCommand,
    TestFile, TestPlanOptions, TestRun, VariableInput,
};
use crate::diag::{Diagnostic, Diagnostics, Location};
use crate::engine::{Engine, Intent, RunOptions, Workspace};
use crate::plan::ResourceValues;
use crate::schema::ProviderSchema;
use crate::state::State;
use crate::value::Value;
use memory::Memory;
use mocks::{EvaluatedOverride, Mocked, TestDoubles, TypeValues};

/// What `cairn test` was asked to do.
pub(super) struct TestOptions<'a> {
    /// The configuration directory.
    pub dir: PathBuf,
    /// `-var` and `-var-file`, under every run's own variables.
    pub inputs: Vec<VariableInput>,
    /// `-filter=FILE`: only these files (paths relative to the directory).
    pub filter: &'a [String],
    /// `-verbose`: each run's plan or state too.
    pub verbose: bool,
    /// `-junit-xml=FILE`.
    pub junit_xml: Option<PathBuf>,
    /// Colours for the plans `-verbose` prints.
    pub colors: Colors,
}

/// How a run, or a file, ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    /// Everything held.
    Pass,
    /// An assertion failed, or an expected failure did not happen.
    Fail,
    /// Something kept the run from finishing (an error); the file's later
    /// runs are skipped.
    Error,
    /// Not run, after an error.
    Skip,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail | Status::Error => "fail",
            Status::Skip => "skip",
        }
    }
}

/// One run's result, for the summary and the JUnit report.
pub(super) struct RunResult {
    /// The run's name.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// Why it failed, in one line a diagnostic.
    pub failures: Vec<String>,
}

/// One file's result.
pub(super) struct FileResult {
    /// Its path, relative to the configuration directory.
    pub name: String,
    /// How it ended as a whole (teardown included).
    pub status: Status,
    /// Its runs.
    pub runs: Vec<RunResult>,
}

/// Runs `cairn test`; the exit status is 1 when anything failed.
pub(super) fn run(options: &TestOptions) -> Result<i32> {
    let dir = options
        .dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("the configuration directory {} cannot be read: {e}", options.dir.display()))?;
    let mut names = test_files(&dir)?;
    if !options.filter.is_empty() {
        let wanted: Vec<&str> = options.filter.iter().map(|f| f.trim_start_matches("./")).collect();
        names.retain(|n| wanted.contains(&n.as_str()));
    }
    // The configuration as written, for where its checkable objects are.
    let declared = config::load(&dir).map_err(|d| anyhow::Error::new(Diagnostics(d)))?;
    // Every file is read before any runs, as Terraform reads them with the
    // configuration: a malformed file stops everything, nothing is run.
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for name in &names {
        match config::load_test_file(&dir, name) {
            Ok(file) => files.push(file),
            Err(diags) => errors.extend(diags),
        }
    }
    if !errors.is_empty() {
        print_diagnostics(&errors);
        return Ok(1);
    }
    let engine = Engine::new()?;
    let mut results = Vec::new();
    for file in &files {
        results.push(run_file(&engine, &dir, file, &declared, options));
    }
    let count = |s: Status| results.iter().flat_map(|f| &f.runs).filter(|r| r.status == s).count();
    let (passed, failed, skipped) =
        (count(Status::Pass), count(Status::Fail) + count(Status::Error), count(Status::Skip));
    let all_passed = results.iter().all(|f| f.status == Status::Pass);
    let skipped = if skipped > 0 { format!(", {skipped} skipped") } else { String::new() };
    let verdict = if all_passed { "Success!" } else { "Failure!" };
    println!("\n{verdict} {passed} passed, {failed} failed{skipped}.");
    if let Some(path) = &options.junit_xml {
        std::fs::write(path, junit::report(&results))
            .map_err(|e| anyhow::anyhow!("cannot write the JUnit report {}: {e}", path.display()))?;
    }
    Ok(if all_passed { 0 } else { 1 })
}

/// The test files: `*.tftest.hcl` in `dir`, then in `dir/tests`, each in
/// name order, as paths relative to `dir`.
fn test_files(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for (sub, prefix) in [(dir.to_path_buf(), ""), (dir.join("tests"), "tests/")] {
        let Ok(entries) = std::fs::read_dir(&sub) else { continue };
        let mut found: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n.ends_with(".tftest.hcl"))
            .map(|n| format!("{prefix}{n}"))
            .collect();
        found.sort();
        names.extend(found);
    }
    Ok(names)
}

/// Prints diagnostics for people, on standard error.
fn print_diagnostics(diags: &[Diagnostic]) {
    for d in diags {
        eprintln!("{}", crate::diag::source::render(d));
    }
}

/// What a file's runs left for the next ones: their states, by state key,
/// and their outputs.
#[derive(Default)]
struct FileState {
    /// One state per key ([`TestRun::state_key`]): the configuration
    /// under test's (the empty key), each run module's, each `state_key`'s.
    states: BTreeMap<String, KeyedState>,
    run_outputs: BTreeMap<String, Value>,
    /// The schemas of the mocked providers, read once per file.
    mocked_schemas: BTreeMap<String, ProviderSchema>,
}

/// One state of a file's runs, and what the last run that applied over it
/// used: the teardown destroys it with that run's workspace (its module
/// and variables) and doubles.
#[derive(Default)]
struct KeyedState {
    memory: Memory,
    /// The index in the file of the last run that applied over this
    /// state: the teardown goes from the latest to the earliest, as
    /// Terraform's does.
    last_run: usize,
    last_applied: Option<Workspace>,
    /// The doubles of the last run that applied: the teardown destroys
    /// with them, so that a mocked object is never sent to a real provider.
    last_doubles: Option<Arc<TestDoubles>>,
}

/// The directory of the module a run plans: its `module`'s source, or the
/// configuration under test.
fn run_dir(dir: &Path, run: &TestRun) -> PathBuf {
    match &run.module {
        Some(module) => dir.join(&module.source),
        None => dir.to_path_buf(),
    }
}

/// The configurations the runs of `file` plan, as written, by run module
/// source (the configuration under test under the empty key); the errors
/// of a run module that cannot be read.
fn run_modules(dir: &Path, file: &TestFile, declared: &Config) -> Result<BTreeMap<String, Config>, Vec<Diagnostic>> {
    let mut found = BTreeMap::from([(String::new(), declared.clone())]);
    for module in file.runs.iter().filter_map(|r| r.module.as_ref()) {
        if !found.contains_key(&module.source) {
            let loaded = config::load(&dir.join(&module.source)).map_err(|mut diags| {
                diags.insert(
                    0,
                    Diagnostic::error("Cannot load the run's module")
                        .with_detail(format!("The module \"{}\" of this run cannot be loaded.", module.source))
                        .at(&module.location),
                );
                diags
            })?;
            found.insert(module.source.clone(), loaded);
        }
    }
    Ok(found)
}

/// The run module source of `run` (empty for the configuration under
/// test), the key of [`run_modules`].
fn module_source(run: &TestRun) -> &str {
    run.module.as_ref().map_or("", |m| m.source.as_str())
}

/// Runs one file's runs and tears down what they made.
fn run_file(engine: &Engine, dir: &Path, file: &TestFile, declared: &Config, options: &TestOptions) -> FileResult {
    let name = file.name.as_str();
    println!("{name}... in progress");
    let modules = match run_modules(dir, file, declared) {
        Ok(modules) => modules,
        Err(diags) => {
            print_diagnostics(&diags);
            println!("{name}... fail");
            return FileResult { name: name.to_string(), status: Status::Error, runs: Vec::new() };
        }
    };
    let file_overrides = file.overrides.iter().chain(file.mock_providers.iter().flat_map(|m| &m.overrides));
    print_diagnostics(&missing_targets(declared, file_overrides));
    print_diagnostics(&missing_modules(declared, &file.module_overrides));
    let mut state = FileState::default();
    let mut runs = Vec::new();
    let mut halted = false;
    for (index, run) in file.runs.iter().enumerate() {
        if halted {
            println!("  run \"{}\"... skip", run.name);
            runs.push(RunResult { name: run.name.clone(), status: Status::Skip, failures: Vec::new() });
            continue;
        }
        let declared = &modules[module_source(run)];
        let at = RunAt { dir, file, run, index };
        let (status, diags, verbose) = run_one(engine, &at, declared, &mut state, options);
        println!("  run \"{}\"... {}", run.name, status.word());
        if options.verbose && !verbose.is_empty() {
            println!("\n{verbose}");
        }
        print_diagnostics(&diags);
        halted = status == Status::Error;
        let failures = diags.iter().filter(|d| d.is_error()).map(|d| format!("{}: {}", d.summary, d.detail)).collect();
        runs.push(RunResult { name: run.name.clone(), status, failures });
    }
    println!("{name}... tearing down");
    let torn_down = tear_down(engine, file, &mut state);
    let status = if !torn_down {
        Status::Error
    } else if runs.iter().all(|r| r.status == Status::Pass) {
        Status::Pass
    } else {
        Status::Fail
    };
    println!("{name}... {}", status.word());
    FileResult { name: name.to_string(), status, runs }
}

/// A run block, with where it is: the configuration directory, its file
/// and its index in the file.
struct RunAt<'a> {
    dir: &'a Path,
    file: &'a TestFile,
    run: &'a TestRun,
    index: usize,
}

/// Runs one `run` block: its status, what to show of it, and with
/// `-verbose` its plan or state. `declared` is the configuration it plans
/// (the run's module's, or the one under test), as written.
fn run_one(
    engine: &Engine,
    at: &RunAt,
    declared: &Config,
    state: &mut FileState,
    options: &TestOptions,
) -> (Status, Vec<Diagnostic>, String) {
    let run = at.run;
    let uncheckable = uncheckable_expectations(run);
    if !uncheckable.is_empty() {
        // As in Terraform: the run fails before it plans, and the file's
        // later runs are skipped.
        return (Status::Error, uncheckable, String::new());
    }
    let gathered = Arc::new(Gather::default());
    for warning in missing_targets(declared, &run.overrides) {
        gathered.diagnostic(&warning);
    }
    for warning in missing_modules(declared, &run.module_overrides) {
        gathered.diagnostic(&warning);
    }
    let outcome = execute(engine, at, state, &gathered, options);
    // Errors come back from the calls too: only the warnings from here.
    let warnings: Vec<Diagnostic> = gathered.take().into_iter().filter(|d| !d.is_error()).collect();
    let (errors, checked) = match outcome {
        Ok(checked) => (Vec::new(), Some(checked)),
        Err(errors) => (errors, None),
    };
    // Failed check blocks are warnings; an expected one counts as a failure.
    let check_failures: Vec<Diagnostic> =
        warnings.iter().filter(|w| w.summary == "Check block assertion failed").cloned().collect();
    if !run.expect_failures.is_empty() {
        return expected_failures(run, declared, errors, check_failures, warnings);
    }
    let mut shown = warnings;
    if !errors.is_empty() {
        shown.extend(errors);
        return (Status::Error, shown, String::new());
    }
    let Some(checked) = checked else { return (Status::Error, shown, String::new()) };
    // An assertion that could not be evaluated (an unknown value, an
    // error in its expression) is an error, as in Terraform: the file's
    // later runs are skipped.
    let status = if checked.failed.is_empty() {
        Status::Pass
    } else if checked.failed.iter().all(|d| d.summary == ASSERTION_FAILED) {
        Status::Fail
    } else {
        Status::Error
    };
    shown.extend(checked.failed);
    (status, shown, checked.verbose)
}

/// Every value a run gives its variables: the file's `variables`, then the
/// run's own over them, evaluated with `run.NAME` (earlier runs' outputs)
/// and `var.NAME` (the file's variables) in scope.
fn run_variables(
    dir: &Path,
    file: &TestFile,
    run: &TestRun,
    run_outputs: &BTreeMap<String, Value>,
) -> Result<Vec<VariableInput>, Vec<Diagnostic>> {
    let bound = [("run".to_string(), object(run_outputs))];
    let mut ctx = EvalContext::new(dir);
    let mut inputs = Vec::new();
    for (i, attrs) in [&file.variables, &run.variables].into_iter().enumerate() {
        for attr in attrs {
            let value = config::eval_within(&attr.expr, &ctx, &bound)?;
            if i == 0 {
                // A run's variables may refer to the file's.
                ctx.variables.insert(attr.name.clone(), value.clone());
            }
            let source = crate::diag::source::position(&attr.location);
            inputs.push(VariableInput::Value { name: attr.name.clone(), value, source });
        }
    }
    Ok(inputs)
}

/// The test file's provider configurations a run uses, named as the
/// configuration's they replace, as Terraform 1.11 chooses them: those its
/// `providers` map names (under the configuration's name), or without a
/// map all of the file's; an error at the map's entry for a provider the
/// file does not configure. Each keeps only the grants of its own
/// `sandbox` block.
fn chosen_providers(file: &TestFile, run: &TestRun) -> Result<Vec<ProviderConfig>, Vec<Diagnostic>> {
    if run.providers.is_empty() {
        return Ok(file.providers.clone());
    }
    let mut chosen = Vec::new();
    let mut missing = Vec::new();
    for pass in &run.providers {
        match file.providers.iter().find(|p| p.name == pass.parent) {
            Some(provider) => chosen.push(ProviderConfig { name: pass.child.clone(), ..provider.clone() }),
            None => missing.push(
                Diagnostic::error(format!("Missing provider definition for {}", pass.parent))
                    .with_detail("This provider block references a provider definition that does not exist.")
                    .at(&pass.location),
            ),
        }
    }
    if missing.is_empty() { Ok(chosen) } else { Err(missing) }
}

/// The scope of a test file's provider blocks.
struct ProviderScope {
    /// The file's variables and the global ones as `var.NAME`.
    ctx: EvalContext,
    /// Earlier runs' outputs as `run.NAME.OUTPUT`.
    bound: [(String, Value); 1],
}

/// The scope of a test file's provider blocks, as terraform test 1.11.4
/// has it: as `var.NAME` the file's variables, over the `globals` (what
/// `-var`, `-var-file`, `TF_VAR_`/`CAIRN_VAR_` and the variable files beside
/// the configuration give; not a variable's default, which Terraform does
/// not make available there either), and earlier runs' `run.NAME.OUTPUT`.
fn provider_scope(
    dir: &Path,
    file: &TestFile,
    run_outputs: &BTreeMap<String, Value>,
    globals: BTreeMap<String, Value>,
) -> Result<ProviderScope, Vec<Diagnostic>> {
    let bound = [("run".to_string(), object(run_outputs))];
    let mut ctx = EvalContext::new(dir);
    ctx.variables = globals;
    for attr in &file.variables {
        let value = config::eval_within(&attr.expr, &ctx, &bound)?;
        ctx.variables.insert(attr.name.clone(), value);
    }
    Ok(ProviderScope { ctx, bound })
}

/// `provider` with its arguments (and its `http` grants' headers)
/// evaluated in the test file's scope.
fn evaluate_provider(
    mut provider: ProviderConfig,
    ctx: &EvalContext,
    bound: &[(String, Value)],
) -> Result<ProviderConfig, Vec<Diagnostic>> {
    let unavailable = unavailable_variables(&provider.body, ctx);
    if !unavailable.is_empty() {
        return Err(unavailable);
    }
    evaluate_body(&mut provider.body, ctx, bound)?;
    for headers in &mut provider.http_headers {
        evaluate_expression(&mut headers.expr, ctx, bound)?;
    }
    Ok(provider)
}

/// Terraform's error for each `var.NAME` in a test file's provider block
/// `body` that its scope `ctx` does not have (a variable only the
/// configuration's default gives, or none), at the reference.
fn unavailable_variables(body: &config::Body, ctx: &EvalContext) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    body.visit_traversals(&[], &mut |root, steps, location| {
        let Some(config::Step::Attr(name)) = steps.first() else { return };
        if root == "var" && !ctx.variables.contains_key(name) {
            errors.push(
                Diagnostic::error("Reference to unavailable variable")
                    .with_detail(format!(
                        "The input variable \"{name}\" is not available to the current provider configuration. You \
                         can only reference variables defined at the file or global levels."
                    ))
                    .at(location),
            );
        }
    });
    errors
}

/// Replaces every argument of `body` (nested blocks included) with its
/// value in the test file's scope: the configuration evaluates a provider
/// block in its own scope, where the test file's variables and runs are
/// not.
fn evaluate_body(body: &mut config::Body, ctx: &EvalContext, bound: &[(String, Value)]) -> Result<(), Vec<Diagnostic>> {
    for attr in &mut body.attributes {
        evaluate_expression(&mut attr.expr, ctx, bound)?;
    }
    for block in &mut body.blocks {
        evaluate_body(&mut block.body, ctx, bound)?;
    }
    Ok(())
}

/// Replaces `expr` with the literal of its value, keeping its place.
fn evaluate_expression(
    expr: &mut config::Expression,
    ctx: &EvalContext,
    bound: &[(String, Value)],
) -> Result<(), Vec<Diagnostic>> {
    let value = config::eval_within(expr, ctx, bound)?;
    expr.kind = config::ExprKind::Literal(value);
    Ok(())
}

/// Puts the test file's `providers`, evaluated in `scope`, in place of the
/// configuration's provider blocks of the same name (`local`,
/// `local.alt`), adding those it has not. Only those the configuration
/// (with its module calls) or the run's state uses are evaluated and put
/// in, as Terraform configures only the providers something uses: a
/// provider block for a later run may refer to that run's outputs.
fn replace_providers(
    config: &mut Config,
    state: &State,
    providers: &[ProviderConfig],
    scope: &ProviderScope,
) -> Result<(), Vec<Diagnostic>> {
    let mut used = BTreeSet::new();
    provider_names_in(config, &mut used);
    used.extend(state.resources.iter().map(|r| r.provider.clone()));
    for provider in providers.iter().filter(|p| used.contains(&p.name)) {
        let provider = evaluate_provider(provider.clone(), &scope.ctx, &scope.bound)?;
        match config.providers.iter_mut().find(|p| p.name == provider.name) {
            Some(own) => *own = provider,
            None => config.providers.push(provider),
        }
    }
    Ok(())
}

/// The provider names `config` and its module calls declare or use.
fn provider_names_in(config: &Config, names: &mut BTreeSet<String>) {
    names.extend(config.providers.iter().map(|p| p.name.clone()));
    names.extend(config.resources.iter().map(|r| r.provider.clone()));
    names.extend(config.checks.iter().flat_map(|c| &c.data).map(|d| d.provider.clone()));
    for call in &config.modules {
        provider_names_in(&call.config, names);
    }
}

/// What checking a run's assertions found.
struct Checked {
    /// The assertions that failed (errors to show).
    failed: Vec<Diagnostic>,
    /// The plan or the state, for `-verbose`.
    verbose: String,
}

/// Loads, plans and (for `command = apply`) applies the configuration with
/// the run's variables and doubles over the file's state, then checks the
/// run's assertions; the errors that kept it from finishing otherwise.
fn execute(
    engine: &Engine,
    at: &RunAt,
    state: &mut FileState,
    gathered: &Arc<Gather>,
    options: &TestOptions,
) -> Result<Checked, Vec<Diagnostic>> {
    let (dir, file, run) = (at.dir, at.file, at.run);
    let mut inputs = options.inputs.clone();
    inputs.extend(run_variables(dir, file, run, &state.run_outputs)?);
    let module_outputs = module_override_outputs(dir, file, run)?;
    let providers = chosen_providers(file, run)?;
    // Runs with the same state key share one state.
    let memory = state.states.entry(run.state_key()).or_default().memory.clone();
    let env: Vec<(String, String)> = std::env::vars().collect();
    let run_outputs = &state.run_outputs;
    let ws = Workspace::load_overridden(&run_dir(dir, run), &inputs, &mut |config| {
        for (calls, (outputs, location)) in &module_outputs {
            config::override_call(config, calls, outputs, location);
        }
        // The global variables are those the run's configuration declares.
        let globals = config::given_values(config, &options.inputs, &env);
        let scope = provider_scope(dir, file, run_outputs, globals).map_err(|d| anyhow::Error::new(Diagnostics(d)))?;
        replace_providers(config, &memory.state(), &providers, &scope).map_err(|d| anyhow::Error::new(Diagnostics(d)))
    })
    .map_err(Diagnostics::of_error)?;
    let doubles =
        Arc::new(test_doubles(engine, &ws, file, run, &memory, &state.run_outputs, &mut state.mocked_schemas)?);
    engine.set_doubles(Some(doubles.clone()));
    let result = execute_with(engine, &ws, run, &memory, &mut state.run_outputs, gathered, options);
    engine.set_doubles(None);
    for warning in doubles.take_warnings() {
        gathered.diagnostic(&warning);
    }
    if run.command == TestCommand::Apply {
        let keyed = state.states.entry(run.state_key()).or_default();
        keyed.last_run = at.index;
        keyed.last_applied = Some(ws);
        keyed.last_doubles = Some(doubles);
    }
    result
}

/// The engine's options for a run's plan: its `plan_options`, as the
/// flags of `cairn plan` give them; an address that is not one is an
/// error at its place.
fn run_options(given: &TestPlanOptions, intent: Intent) -> Result<RunOptions, Vec<Diagnostic>> {
    let mut options =
        RunOptions { intent, refresh: given.refresh, refresh_only: given.refresh_only, ..Default::default() };
    let mut errors = Vec::new();
    let mut parse = |(text, location): &(String, Location)| match text.parse::<InstanceAddr>() {
        Ok(addr) => Some(addr),
        Err(e) => {
            errors.push(Diagnostic::error("Invalid address").with_detail(format!("{text}: {e}")).at(location));
            None
        }
    };
    options.replace = given.replace.iter().filter_map(&mut parse).collect();
    for target in &given.targets {
        match target.0.parse::<crate::addr::ModuleInstance>().ok().filter(|m| !m.is_root()) {
            Some(module) => options.target_modules.push(module),
            None => options.targets.extend(parse(target)),
        }
    }
    if errors.is_empty() { Ok(options) } else { Err(errors) }
}

/// [`execute`] once the workspace is loaded and the doubles are set.
fn execute_with(
    engine: &Engine,
    ws: &Workspace,
    run: &TestRun,
    memory: &Memory,
    run_outputs: &mut BTreeMap<String, Value>,
    gathered: &Arc<Gather>,
    options: &TestOptions,
) -> Result<Checked, Vec<Diagnostic>> {
    let apply = run.command == TestCommand::Apply;
    let intent = if apply { Intent::Change } else { Intent::Inspect };
    let run_options = run_options(&run.plan_options, intent)?;
    let events: Arc<dyn EventSink> = gathered.clone();
    let planned = engine
        .plan_on(ws, Box::new(memory.clone()), run_options, false, events.as_ref())
        .map_err(Diagnostics::of_error)?;
    let schemas = schemas_of(&planned.providers);
    let mut values = ResourceValues::default();
    for (addr, expansion) in &planned.plan.expansions {
        values.declare(addr, expansion);
    }
    for (addr, value) in &planned.plan.data_values {
        values.set(addr, value.clone());
    }
    let (outputs, verbose) = if apply {
        let (report, applied) = engine.apply(ws, planned, events);
        if !report.errors.is_empty() {
            return Err(report.errors);
        }
        set_state_values(&mut values, &applied, &schemas);
        let outputs: BTreeMap<String, Value> = report.outputs.into_iter().map(|(n, (v, _))| (n, v)).collect();
        let verbose = if options.verbose { state_text(&applied, &schemas, &outputs) } else { String::new() };
        (outputs, verbose)
    } else {
        for change in planned.plan.changes.iter().filter(|c| c.deposed.is_none() && !c.planned.is_null()) {
            values.set(&change.addr, change.planned.clone());
        }
        let outputs = planned.plan.outputs.iter().map(|(n, o)| (n.clone(), o.value.clone())).collect();
        let verbose =
            if options.verbose { render_plan(&planned.plan, &schemas, options.colors) } else { String::new() };
        planned.release();
        (outputs, verbose)
    };
    let failed = check_assertions(run, ws, &mut values, &outputs, run_outputs);
    run_outputs.insert(run.name.clone(), object(&outputs));
    Ok(Checked { failed, verbose })
}

/// The doubles of a run: the file's mocked providers that the
/// configuration uses (each one's schema read from its component, once per
/// file), and the run's overrides over the file's, their values evaluated.
fn test_doubles(
    engine: &Engine,
    ws: &Workspace,
    file: &TestFile,
    run: &TestRun,
    memory: &Memory,
    run_outputs: &BTreeMap<String, Value>,
    mocked_schemas: &mut BTreeMap<String, ProviderSchema>,
) -> Result<TestDoubles, Vec<Diagnostic>> {
    let ctx = EvalContext { variables: ws.variables.clone(), ..EvalContext::new(ws.dir()) };
    let bound = [("run".to_string(), object(run_outputs))];
    let used = crate::engine::needed_providers(&ws.config, &memory.state());
    let mut errors = Vec::new();
    let mut mocked = BTreeMap::new();
    for mock in file.mock_providers.iter().filter(|m| used.contains(&m.name)) {
        let schema = match mocked_schema(engine, ws, mock, mocked_schemas) {
            Ok(schema) => schema,
            Err(d) => {
                errors.extend(d);
                continue;
            }
        };
        let mut values = Vec::new();
        for m in &mock.mocks {
            let during = m.during.or(mock.during).unwrap_or(OverrideDuring::Apply);
            match object_value(m.defaults.as_ref(), &ctx, &bound) {
                Ok(given) => values.push(TypeValues {
                    mode: m.mode,
                    type_name: m.type_name.clone(),
                    values: given,
                    during,
                    location: m.location.clone(),
                }),
                Err(d) => errors.extend(d),
            }
        }
        let overrides = evaluate_overrides(&mock.overrides, mock.during, &ctx, &bound, &mut errors);
        mocked.insert(mock.name.clone(), Mocked { schema, values, overrides });
    }
    let own = run.overrides.iter().chain(&file.overrides).cloned().collect::<Vec<_>>();
    let overrides = evaluate_overrides(&own, None, &ctx, &bound, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(TestDoubles { mocked, overrides, warnings: Default::default() })
}

/// The schema of a mocked provider, read from its component without
/// configuring it; an error at the `mock_provider` block when it cannot be.
fn mocked_schema(
    engine: &Engine,
    ws: &Workspace,
    mock: &MockProvider,
    cache: &mut BTreeMap<String, ProviderSchema>,
) -> Result<ProviderSchema, Vec<Diagnostic>> {
    if let Some(schema) = cache.get(&mock.name) {
        return Ok(schema.clone());
    }
    let names = [mock.name.clone()].into();
    let found = engine.schemas(ws, &names).map_err(Diagnostics::of_error).and_then(|mut s| {
        s.remove(&mock.name).ok_or_else(|| vec![Diagnostic::error(format!("no schema for provider {:?}", mock.name))])
    });
    match found {
        Ok(schema) => {
            cache.insert(mock.name.clone(), schema.clone());
            Ok(schema)
        }
        Err(diags) => {
            let why: Vec<String> =
                diags.iter().map(|d| format!("{} {}", d.summary, d.detail).trim().to_string()).collect();
            Err(vec![
                Diagnostic::error(format!("Cannot read the schema of mocked provider {:?}", mock.name))
                    .with_detail(format!(
                        "A mocked provider is never configured or called, but its resource types' schemas (which \
                         attributes are computed) come from its component, as Terraform reads them from the real \
                         provider: {}",
                        why.join("; ")
                    ))
                    .at(&mock.location),
            ])
        }
    }
}

/// `overrides` with their values evaluated, their targets parsed and
/// their `override_during` settled (`outer` is the mock provider's).
fn evaluate_overrides(
    overrides: &[Override],
    outer: Option<OverrideDuring>,
    ctx: &EvalContext,
    bound: &[(String, Value)],
    errors: &mut Vec<Diagnostic>,
) -> Vec<EvaluatedOverride> {
    let mut evaluated = Vec::new();
    for o in overrides {
        let target: crate::addr::InstanceAddr = match o.target.parse() {
            Ok(target) => target,
            Err(e) => {
                errors.push(Diagnostic::error("Invalid override target").with_detail(e.to_string()).at(&o.location));
                continue;
            }
        };
        let given = match object_value(o.values.as_ref(), ctx, bound) {
            Ok(given) => given,
            Err(d) => {
                errors.extend(d);
                continue;
            }
        };
        let values = TypeValues {
            mode: o.mode,
            type_name: target.resource.type_name.clone(),
            values: given,
            during: o.during.or(outer).unwrap_or(OverrideDuring::Apply),
            location: o.location.clone(),
        };
        evaluated.push(EvaluatedOverride { target, values });
    }
    evaluated
}

/// A warning for each override whose target the configuration does not
/// declare, as Terraform words it.
fn missing_targets<'a>(config: &Config, overrides: impl IntoIterator<Item = &'a Override>) -> Vec<Diagnostic> {
    let declared = |target: &str| {
        let resource = target.parse::<crate::addr::InstanceAddr>().map(|a| a.resource.to_string());
        config.resources.iter().any(|r| resource.as_ref().is_ok_and(|t| *t == r.addr.to_string()))
    };
    overrides
        .into_iter()
        .filter(|o| !declared(&o.target))
        .map(|o| {
            Diagnostic::warning("Invalid override target")
                .with_detail(format!(
                    "The override target {} does not exist within the configuration under test. This could \
                     indicate a typo in the target address or an unnecessary override.",
                    o.target
                ))
                .at(&o.location)
        })
        .collect()
}

/// A warning, as Terraform's, for each `override_module` whose target
/// the configuration does not call.
fn missing_modules(config: &Config, overrides: &[ModuleOverride]) -> Vec<Diagnostic> {
    overrides
        .iter()
        .filter(|o| !calls_module(config, &o.call))
        .map(|o| {
            let target: Vec<String> = o.call.iter().map(|c| format!("module.{c}")).collect();
            Diagnostic::warning("Invalid override target")
                .with_detail(format!(
                    "The override target {} does not exist within the configuration under test. This could \
                     indicate a typo in the target address or an unnecessary override.",
                    target.join(".")
                ))
                .at(&o.location)
        })
        .collect()
}

/// Whether `config` has the module call at `path` (from the root module
/// down).
fn calls_module(config: &Config, path: &[String]) -> bool {
    let Some((name, inner)) = path.split_first() else { return true };
    config.modules.iter().any(|c| &c.name == name && calls_module(&c.config, inner))
}

/// The overridden module calls, by path of call names: the outputs each
/// gives, and the place of its override.
type OverriddenCalls = BTreeMap<Vec<String>, (BTreeMap<String, Value>, Location)>;

/// The outputs each overridden module call gives in this run, by call
/// name, with the place of the override: the file's `override_module`
/// blocks, then the run's over them.
fn module_override_outputs(dir: &Path, file: &TestFile, run: &TestRun) -> Result<OverriddenCalls, Vec<Diagnostic>> {
    // As in Terraform, the values are static: no run outputs, no variables.
    let ctx = EvalContext::new(dir);
    let mut found = BTreeMap::new();
    for o in file.module_overrides.iter().chain(&run.module_overrides) {
        let outputs = match object_value(o.outputs.as_ref(), &ctx, &[])? {
            Value::Object(m) | Value::Map(m) => m.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            _ => BTreeMap::new(),
        };
        found.insert(o.call.clone(), (outputs, o.location.clone()));
    }
    Ok(found)
}

/// The object `expr` gives (null without one).
fn object_value(
    expr: Option<&config::Expression>,
    ctx: &EvalContext,
    bound: &[(String, Value)],
) -> Result<Value, Vec<Diagnostic>> {
    let Some(expr) = expr else { return Ok(Value::Null) };
    match config::eval_within(expr, ctx, bound)? {
        v @ (Value::Object(_) | Value::Map(_) | Value::Null) => Ok(v),
        other => Err(vec![
            Diagnostic::error("Invalid mock values")
                .with_detail(format!(
                    "Mocked and overridden values are an object of attribute values, not {}.",
                    other.kind_name()
                ))
                .at(&expr.location),
        ]),
    }
}

/// An object of `fields`.
fn object(fields: &BTreeMap<String, Value>) -> Value {
    Value::Object(fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

/// Records the objects of `state` in `values`, read with their schemas.
fn set_state_values(values: &mut ResourceValues, state: &State, schemas: &super::render::Schemas) {
    for inst in state.resources.iter().filter(|i| !i.attributes.is_null()) {
        let schema = schemas.get(&inst.provider).and_then(|s| s.of(&inst.addr.resource));
        let value = match schema {
            Some(s) if s.version == inst.schema_version => inst.attributes.decode(&s.block.implied_type()).ok(),
            _ => None,
        };
        if let Some(value) = value {
            values.set(&inst.addr, value);
        }
    }
}

/// The state and outputs as `-verbose` shows them after an apply, as
/// `cairn show` prints them.
fn state_text(state: &State, schemas: &super::render::Schemas, outputs: &BTreeMap<String, Value>) -> String {
    let mut out = String::new();
    for inst in state.resources.iter().filter(|i| !i.attributes.is_null()) {
        let schema = schemas.get(&inst.provider).and_then(|s| s.of(&inst.addr.resource));
        out.push_str(&super::show::render_instance(inst, schema));
        out.push('\n');
    }
    // A null root output is not kept in the state, as in Terraform.
    let outputs: Vec<(&String, &Value)> = outputs.iter().filter(|(_, v)| !v.is_null()).collect();
    if !outputs.is_empty() {
        out.push_str("\nOutputs:\n\n");
        for (name, value) in outputs {
            out.push_str(&format!("{name} = {}\n", super::render::output_value(value, false)));
        }
    }
    out
}

/// The summary of a failed assertion (as opposed to one that could not be
/// evaluated).
const ASSERTION_FAILED: &str = "Test assertion failed";

/// Checks the run's `assert` blocks: each failure as Terraform words it,
/// at its condition, with its `error_message`.
fn check_assertions(
    run: &TestRun,
    ws: &Workspace,
    values: &mut ResourceValues,
    outputs: &BTreeMap<String, Value>,
    run_outputs: &BTreeMap<String, Value>,
) -> Vec<Diagnostic> {
    let mut ctx = EvalContext::new(ws.dir());
    ctx.variables = ws.variables.clone();
    let addrs: Vec<crate::addr::ResourceAddr> = ws.config.resources.iter().map(|r| r.addr.clone()).collect();
    ctx.resources = values.snapshot_of(&addrs);
    let bound = [("output".to_string(), object(outputs)), ("run".to_string(), object(run_outputs))];
    let mut failed = Vec::new();
    for assertion in &run.asserts {
        match config::evaluate_condition(assertion, config::ConditionKind::CheckAssertion, &ctx, &bound) {
            Ok(config::Verdict::Passed) => {}
            Ok(config::Verdict::Failed(d)) => {
                failed.push(Diagnostic::error(ASSERTION_FAILED).with_detail(d.detail).at(&assertion.condition.location))
            }
            Ok(config::Verdict::Unknown) => failed.push(
                Diagnostic::error("Unknown condition value")
                    .with_detail(
                        "The condition depends on values not known until apply: run it with command = apply, \
                         assert on what the plan knows, or, for a mocked or overridden value, give it in the plan \
                         with override_during = plan.",
                    )
                    .at(&assertion.condition.location),
            ),
            Err(d) => failed.extend(d),
        }
    }
    failed
}

/// The run's result when it expects failures: it passes when every error
/// (and failed check) comes from an expected object and every expected
/// object failed; an unexpected error is shown as such.
fn expected_failures(
    run: &TestRun,
    declared: &Config,
    errors: Vec<Diagnostic>,
    check_failures: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
) -> (Status, Vec<Diagnostic>, String) {
    let expected = |d: &Diagnostic| {
        let owner = d.location.as_ref().and_then(|l| checkable_at(declared, l));
        owner.filter(|o| run.expect_failures.iter().any(|(e, _)| strip_key(e) == *o))
    };
    let mut shown: Vec<Diagnostic> = warnings.into_iter().filter(|w| expected(w).is_none()).collect();
    let unexpected: Vec<Diagnostic> = errors.iter().filter(|d| expected(d).is_none()).cloned().collect();
    let failed: Vec<String> = errors.iter().chain(&check_failures).filter_map(expected).collect();
    let mut status = Status::Pass;
    for (address, location) in &run.expect_failures {
        if !failed.contains(&strip_key(address)) {
            status = Status::Fail;
            shown.push(
                Diagnostic::error("Missing expected failure")
                    .with_detail(format!(
                        "The checkable object, {address}, was expected to report an error but did not."
                    ))
                    .at(location),
            );
        }
    }
    if !unexpected.is_empty() {
        status = Status::Error;
        shown.extend(unexpected);
    }
    (status, shown, String::new())
}

/// The run's `expect_failures` items that name no checkable object of the
/// root module (a module, an object inside one, a local value), each an
/// error worded as Terraform's.
fn uncheckable_expectations(run: &TestRun) -> Vec<Diagnostic> {
    run.expect_failures
        .iter()
        .filter_map(|(address, location)| {
            let subject = uncheckable_subject(address)?;
            Some(
                Diagnostic::error("Invalid `expect_failures` reference")
                    .with_detail(format!(
                        "You cannot expect failures from {subject}. You can only expect failures from checkable \
                         objects such as input variables, output values, check blocks, managed resources and data \
                         sources."
                    ))
                    .at(location),
            )
        })
        .collect()
}

/// What a reference that is not a checkable object of the root module
/// refers to, as Terraform names it (`module.m.check` for
/// `module.m.check.x`, `local.l`); `None` for a variable, an output, a
/// check block, a resource or a data source.
fn uncheckable_subject(address: &str) -> Option<String> {
    let parts = reference_parts(address);
    let first = parts.first()?.as_str();
    let taken = match first {
        "var" | "output" | "check" | "data" | "resource" => return None,
        // A module call, or one of its outputs: Terraform reads what
        // follows the call as an output's name.
        "module" => 3,
        "local" | "path" | "terraform" | "count" | "each" | "run" => 2,
        "self" => 1,
        _ => return None,
    };
    Some(parts[..taken.min(parts.len())].join("."))
}

/// A reference's dot-separated parts, a part keeping its `[key]` (a dot
/// inside the brackets does not separate).
fn reference_parts(address: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0usize;
    for c in address.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().expect("parts starts with one").push(c);
    }
    parts
}

/// `terraform_data.a[0]` without its key: the block its instances share.
fn strip_key(address: &str) -> String {
    address.split('[').next().unwrap_or(address).to_string()
}

/// The checkable object whose block holds `location`: the declaration in
/// the same file that starts last before it (top-level blocks do not
/// nest), as `var.NAME`, `output.NAME`, `check.NAME` or `TYPE.NAME`.
fn checkable_at(config: &Config, location: &Location) -> Option<String> {
    let variables = config.variables.values().map(|v| (format!("var.{}", v.name), &v.location));
    let outputs = config.outputs.iter().map(|(name, o)| (format!("output.{name}"), &o.location));
    let resources = config.resources.iter().map(|r| (r.addr.to_string(), &r.location));
    let checks = config.checks.iter().map(|c| (format!("check.{}", c.name), &c.location));
    variables
        .chain(outputs)
        .chain(resources)
        .chain(checks)
        .filter(|(_, at)| at.file == location.file && (at.line, at.column) <= (location.line, location.column))
        .max_by_key(|(_, at)| (at.line, at.column))
        .map(|(name, _)| name)
}

/// Destroys what the file's runs made: each state with the workspace
/// (module and variables) of the last run that applied over it, the state
/// of the latest such run first, as Terraform does; `false`, after saying
/// loudly what is left, when any object could not be destroyed.
fn tear_down(engine: &Engine, file: &TestFile, state: &mut FileState) -> bool {
    let mut states: Vec<KeyedState> = std::mem::take(&mut state.states).into_values().collect();
    states.sort_by_key(|s| std::cmp::Reverse(s.last_run));
    let mut remaining = Vec::new();
    for keyed in states {
        remaining.extend(destroy_state(engine, keyed));
    }
    if remaining.is_empty() {
        return true;
    }
    let listed: Vec<String> = remaining.iter().map(|a| format!("  - {a}")).collect();
    print_diagnostics(&[Diagnostic::error("Failed to clean up after tests").with_detail(format!(
        "cairn test could not destroy everything {} created. These objects still exist and are no longer in any \
         state: destroy them by hand.\n{}",
        file.name,
        listed.join("\n")
    ))]);
    false
}

/// Destroys the objects of one state with the workspace and doubles of
/// the last run that applied over it: what is left afterwards.
fn destroy_state(engine: &Engine, keyed: KeyedState) -> Vec<InstanceAddr> {
    let left = |s: &State| -> Vec<InstanceAddr> {
        s.resources
            .iter()
            .filter(|i| i.addr.resource.mode == Mode::Managed && (!i.attributes.is_null() || !i.deposed.is_empty()))
            .map(|i| i.addr.clone())
            .collect()
    };
    let KeyedState { memory, last_applied, last_doubles, .. } = keyed;
    // Objects are only ever applied by a run whose workspace is kept.
    let Some(ws) = last_applied else { return left(&memory.state()) };
    if left(&memory.state()).is_empty() {
        return Vec::new();
    }
    engine.set_doubles(last_doubles.map(|d| d as Arc<dyn crate::engine::Doubles>));
    let destroyed = (|| -> Result<(), Vec<Diagnostic>> {
        let gathered = Arc::new(Gather::default());
        let events: Arc<dyn EventSink> = gathered.clone();
        let options = RunOptions { destroy: true, intent: Intent::Change, ..RunOptions::default() };
        let planned = engine
            .plan_on(&ws, Box::new(memory.clone()), options, false, events.as_ref())
            .map_err(Diagnostics::of_error)?;
        let (report, _) = engine.apply(&ws, planned, events);
        if report.errors.is_empty() { Ok(()) } else { Err(report.errors) }
    })();
    engine.set_doubles(None);
    if let Err(diags) = &destroyed {
        print_diagnostics(diags);
    }
    left(&memory.state())
}

/// Gathers the diagnostics a run reports (its warnings; errors come back
/// from the calls), and nothing else: a test run prints no progress.
#[derive(Default)]
struct Gather {
    diags: Mutex<Vec<Diagnostic>>,
}

impl Gather {
    fn take(&self) -> Vec<Diagnostic> {
        std::mem::take(&mut *self.diags.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl EventSink for Gather {
    fn emit(&self, _event: Event) {}

    fn diagnostic(&self, d: &Diagnostic) {
        self.diags.lock().unwrap_or_else(PoisonError::into_inner).push(d.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::uncheckable_subject;

    #[test]
    fn objects_inside_modules_are_named_as_terraform_names_them() {
        assert_eq!(uncheckable_subject("module.m.check.small").as_deref(), Some("module.m.check"));
        assert_eq!(uncheckable_subject("module.m.output.doubled").as_deref(), Some("module.m.output"));
        assert_eq!(uncheckable_subject("module.m").as_deref(), Some("module.m"));
        assert_eq!(uncheckable_subject("module.m[\"a.b\"].var.n").as_deref(), Some("module.m[\"a.b\"].var"));
        assert_eq!(uncheckable_subject("local.l").as_deref(), Some("local.l"));
    }

    #[test]
    fn checkable_objects_of_the_root_module_are_accepted() {
        for address in ["var.n", "output.o", "check.c", "terraform_data.a[0]", "data.terraform_data.d"] {
            assert_eq!(uncheckable_subject(address), None, "{address}");
        }
    }
}
