//! Test files (`*.tftest.hcl`) for `cairn test`, read as Terraform 1.11
//! reads them: `variables` for the whole file, `mock_provider` blocks
//! (with their `mock_resource`, `mock_data` and overrides, inline or from
//! the `*.tfmock.hcl` files of their `source`), `override_resource` and
//! `override_data` and `override_module` for the whole file, and `run`
//! blocks, each with its `command` (`apply`, the default, or `plan`), its
//! own `variables`, overrides, `plan_options`, `assert` blocks,
//! `expect_failures`, `state_key`, `module { source = "./DIR" }` (a
//! local module run instead of the configuration under test) and
//! `providers = { NAME = NAME.ALIAS }` (which of the file's `provider`
//! blocks stand for the configuration's). `provider "NAME" { … }` blocks
//! (with `alias` and cairn's `sandbox`) are read as in a `.tf` file.
//!
//! The `test` block is refused as Terraform 1.11 refuses it (it came with
//! 1.12). What cairn does not run yet (a run's module from a registry or
//! with a `version`) is an error at its place, never ignored: a test that
//! quietly ran something else than written would pass for the wrong
//! reason.

use std::path::Path;

use crate::addr::Mode;
use crate::diag::{Diagnostic, Location};
use crate::value::Value;

use super::blocks::{expect_no_labels, literal_string, unsupported_argument, unsupported_block};
use super::conditions::condition_block;
use super::source::SourceFile;
use super::{
    Attribute, Block, Body, Condition, ConditionKind, ExprKind, Expression, ProviderConfig, Step, error_at, parse,
};

/// One test file.
#[derive(Debug, Clone)]
pub struct TestFile {
    /// The file's path as shown, relative to the configuration directory
    /// (`main.tftest.hcl`, `tests/defaults.tftest.hcl`).
    pub name: String,
    /// The file-level `variables` block's values, as written: they may
    /// refer to `run.NAME.OUTPUT` and to each other's `var.NAME`.
    pub variables: Vec<Attribute>,
    /// Its `mock_provider` blocks.
    pub mock_providers: Vec<MockProvider>,
    /// Its `provider` blocks, each named `NAME` or `NAME.ALIAS`, with the
    /// sandbox its own `sandbox` block grants (nothing without one). Their
    /// arguments may refer to the file's `var.NAME` and to earlier runs'
    /// `run.NAME.OUTPUT`, evaluated before each run.
    pub providers: Vec<ProviderConfig>,
    /// Its file-level `override_resource` and `override_data` blocks.
    pub overrides: Vec<Override>,
    /// Its file-level `override_module` blocks.
    pub module_overrides: Vec<ModuleOverride>,
    /// Its `run` blocks, in file order.
    pub runs: Vec<TestRun>,
}

/// When mocked and overridden values are given: Terraform 1.11's
/// `override_during`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideDuring {
    /// Only at apply: a plan shows computed values as known after apply
    /// (the default).
    Apply,
    /// Already in the plan.
    Plan,
}

/// A `mock_provider "NAME" { … }` block: the provider is never configured
/// or called; its resources and data sources get mocked values.
#[derive(Debug, Clone)]
pub struct MockProvider {
    /// The configuration name it stands for: `aws`, or `aws.ALIAS` with
    /// `alias = "ALIAS"`.
    pub name: String,
    /// Its `mock_resource` and `mock_data` blocks, the test file's first,
    /// then those of its `source` files.
    pub mocks: Vec<MockType>,
    /// Its `override_resource` and `override_data` blocks, in the same
    /// order.
    pub overrides: Vec<Override>,
    /// Its own `override_during`, for what inside it sets none.
    pub during: Option<OverrideDuring>,
    /// The block header.
    pub location: Location,
}

/// A `mock_resource "TYPE"` or `mock_data "TYPE"` block: the values its
/// computed attributes get.
#[derive(Debug, Clone)]
pub struct MockType {
    /// Managed (`mock_resource`) or data (`mock_data`).
    pub mode: Mode,
    /// The resource type or data source.
    pub type_name: String,
    /// `defaults = { … }`, as written.
    pub defaults: Option<Expression>,
    /// Its `override_during`.
    pub during: Option<OverrideDuring>,
    /// The block header.
    pub location: Location,
}

/// An `override_resource` or `override_data` block: the objects at
/// `target` are never sent to their provider, and their computed
/// attributes get `values`.
#[derive(Debug, Clone)]
pub struct Override {
    /// Managed (`override_resource`) or data (`override_data`).
    pub mode: Mode,
    /// The address as written: a resource (all its instances) or one
    /// instance, `data.` for a data source, in a module or not.
    pub target: String,
    /// `values = { … }`, as written.
    pub values: Option<Expression>,
    /// Its `override_during`.
    pub during: Option<OverrideDuring>,
    /// The block header.
    pub location: Location,
}

/// An `override_module { target = module.NAME  outputs = { … } }` block:
/// the module call is not planned or applied, and its outputs are the
/// given values (null for those not given), as in Terraform 1.11.
#[derive(Debug, Clone)]
pub struct ModuleOverride {
    /// The names of the calls down to the one it overrides: `["m"]` for
    /// `module.m`, `["m", "n"]` for `module.m.module.n`.
    pub call: Vec<String>,
    /// `outputs = { … }`, as written.
    pub outputs: Option<Expression>,
    /// The block header.
    pub location: Location,
}

/// A run's `plan_options { … }`: how its plan is made, as `cairn plan`'s
/// `-refresh-only`, `-refresh=false`, `-replace` and `-target` make it.
#[derive(Debug, Clone)]
pub struct TestPlanOptions {
    /// `mode = refresh-only` (`normal` by default).
    pub refresh_only: bool,
    /// `refresh = false` skips refreshing.
    pub refresh: bool,
    /// `replace = [ADDRESS, …]`, each as written with its place.
    pub replace: Vec<(String, Location)>,
    /// `target = [ADDRESS, …]`, each as written with its place.
    pub targets: Vec<(String, Location)>,
}

impl Default for TestPlanOptions {
    fn default() -> TestPlanOptions {
        TestPlanOptions { refresh_only: false, refresh: true, replace: Vec::new(), targets: Vec::new() }
    }
}

/// What a run does with the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestCommand {
    /// Plan and apply, keeping the state for the next runs.
    Apply,
    /// Plan only.
    Plan,
}

/// One `run "NAME" { … }` block.
#[derive(Debug, Clone)]
pub struct TestRun {
    /// Its label.
    pub name: String,
    /// `command = apply | plan`.
    pub command: TestCommand,
    /// Its own `variables`, over the file's.
    pub variables: Vec<Attribute>,
    /// Its `assert` blocks, checked after the plan or the apply.
    pub asserts: Vec<Condition>,
    /// Its own `override_resource` and `override_data` blocks, over the
    /// file's.
    pub overrides: Vec<Override>,
    /// Its own `override_module` blocks, over the file's.
    pub module_overrides: Vec<ModuleOverride>,
    /// Its `plan_options` block (the defaults without one).
    pub plan_options: TestPlanOptions,
    /// The checkable objects expected to fail (`var.x`, `output.y`,
    /// `terraform_data.z`, `check.c`), as written, each with its place.
    pub expect_failures: Vec<(String, Location)>,
    /// Its `module { source = "./DIR" }` block: the local module it runs
    /// instead of the configuration under test.
    pub module: Option<RunModule>,
    /// Its `state_key`, as written.
    pub state_key: Option<String>,
    /// Its `providers = { … }` map: which of the file's provider blocks
    /// stand for which of the configuration's (only these, when given).
    pub providers: Vec<RunProvider>,
    /// The block header.
    pub location: Location,
}

/// One entry of a run's `providers = { local = local.alt }` map.
#[derive(Debug, Clone, PartialEq)]
pub struct RunProvider {
    /// The configuration's provider it stands for: `local` or `local.x`.
    pub child: String,
    /// The test file's provider block: `local.alt`.
    pub parent: String,
    /// Where the test file's provider is named (an error for one the file
    /// does not declare is shown there, as Terraform shows it).
    pub location: Location,
}

/// A run's `module { source = "./DIR" }` block.
#[derive(Debug, Clone)]
pub struct RunModule {
    /// The module's directory, as written (relative to the configuration
    /// directory).
    pub source: String,
    /// The block header.
    pub location: Location,
}

impl TestRun {
    /// The key of the state the run plans and applies over, as Terraform
    /// 1.11 keys it: its `state_key`, else its module's source, else the
    /// configuration under test's (the empty key). Runs with the same key
    /// share one state.
    pub fn state_key(&self) -> String {
        match (&self.state_key, &self.module) {
            (Some(key), _) => key.clone(),
            (None, Some(module)) => module.source.clone(),
            (None, None) => String::new(),
        }
    }
}

/// Reads the test file at `dir`/`name`: every problem at its
/// `file:line:column`.
pub fn load_test_file(dir: &Path, name: &str) -> Result<TestFile, Vec<Diagnostic>> {
    let text = std::fs::read_to_string(dir.join(name))
        .map_err(|e| vec![error_at("Cannot read test file", e.to_string(), &Location::new(name, 1, 1))])?;
    let mut diags = Vec::new();
    let file = SourceFile::new(name, text);
    let Some(body) = parse::parse_file(&file, &mut diags) else { return Err(diags) };
    let test = test_file(dir, name, body, &mut diags);
    if diags.iter().any(Diagnostic::is_error) { Err(diags) } else { Ok(test) }
}

fn test_file(dir: &Path, name: &str, body: Body, diags: &mut Vec<Diagnostic>) -> TestFile {
    let mut test = TestFile {
        name: name.to_string(),
        variables: Vec::new(),
        mock_providers: Vec::new(),
        providers: Vec::new(),
        overrides: Vec::new(),
        module_overrides: Vec::new(),
        runs: Vec::new(),
    };
    for attr in &body.attributes {
        diags.push(error_at(
            "Unsupported argument",
            format!("An argument named \"{}\" is not expected at the top of a test file.", attr.name),
            &attr.location,
        ));
    }
    for block in body.blocks {
        match block.type_name.as_str() {
            "variables" => test.variables.extend(variables_block(block, diags)),
            "run" => test.runs.extend(run_block(dir, block, &test.runs, diags)),
            "mock_provider" => {
                if let Some(mock) = mock_provider_block(dir, block, diags) {
                    diags.extend(duplicate_provider(&test, &mock.name, &mock.location));
                    test.mock_providers.push(mock);
                }
            }
            "override_resource" | "override_data" => test.overrides.extend(override_block(&block, diags)),
            "override_module" => test.module_overrides.extend(module_override_block(&block, diags)),
            "provider" => {
                if let Some(provider) = provider_block(dir, block, diags) {
                    diags.extend(duplicate_provider(&test, &provider.name, &provider.location));
                    test.providers.push(provider);
                }
            }
            // Terraform 1.11 does not know the `test` block (1.12 added
            // it): refused with its words.
            "test" => diags.push(error_at(
                "Unsupported block type",
                "Blocks of type \"test\" are not expected here.",
                &block.location,
            )),
            _ => diags.push(unsupported_block(
                &block,
                "test file",
                &[
                    "run",
                    "variables",
                    "provider",
                    "mock_provider",
                    "override_resource",
                    "override_data",
                    "override_module",
                ],
            )),
        }
    }
    test
}

/// "`X` is not supported yet" at `location`.
fn not_supported(what: &str, why: &str, location: &Location) -> Diagnostic {
    error_at(format!("{what} is not supported yet by cairn test"), why, location)
}

/// The attributes of a `variables` block.
fn variables_block(block: Block, diags: &mut Vec<Diagnostic>) -> Vec<Attribute> {
    expect_no_labels(&block, diags);
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "variables", &[]));
    }
    block.body.attributes
}

/// A `run` block; `earlier` are the file's runs before it (names are
/// unique in a file).
fn run_block(dir: &Path, block: Block, earlier: &[TestRun], diags: &mut Vec<Diagnostic>) -> Option<TestRun> {
    let [name] = block.labels.as_slice() else {
        diags.push(error_at(
            "Wrong number of labels for a run block",
            "A run block takes one label, its name: run \"NAME\" { … }.",
            &block.location,
        ));
        return None;
    };
    if earlier.iter().any(|r| &r.name == name) {
        diags.push(error_at(
            "Duplicate run block",
            format!("This test file already has a run block named \"{name}\"."),
            &block.location,
        ));
    }
    let mut run = TestRun {
        name: name.clone(),
        command: TestCommand::Apply,
        variables: Vec::new(),
        asserts: Vec::new(),
        overrides: Vec::new(),
        module_overrides: Vec::new(),
        plan_options: TestPlanOptions::default(),
        expect_failures: Vec::new(),
        module: None,
        state_key: None,
        providers: Vec::new(),
        location: block.location.clone(),
    };
    for attr in block.body.attributes {
        match attr.name.as_str() {
            "command" => run.command = command(&attr, diags),
            "expect_failures" => run.expect_failures = checkables(&attr.expr, diags),
            "state_key" => run.state_key = literal_string(&attr, dir, diags),
            "providers" => run.providers = run_providers(&attr, diags),
            _ => diags.push(unsupported_argument(
                &attr,
                "run",
                &["command", "expect_failures", "state_key", "providers"],
            )),
        }
    }
    for nested in block.body.blocks {
        match nested.type_name.as_str() {
            "variables" => run.variables.extend(variables_block(nested, diags)),
            "assert" => run.asserts.extend(condition_block(&nested, ConditionKind::CheckAssertion, diags)),
            "override_resource" | "override_data" => run.overrides.extend(override_block(&nested, diags)),
            "override_module" => run.module_overrides.extend(module_override_block(&nested, diags)),
            "module" => run.module = run_module_block(dir, &nested, diags),
            "plan_options" => run.plan_options = plan_options_block(&nested, diags),
            _ => diags.push(unsupported_block(
                &nested,
                "run",
                &[
                    "variables",
                    "assert",
                    "override_resource",
                    "override_data",
                    "override_module",
                    "module",
                    "plan_options",
                ],
            )),
        }
    }
    Some(run)
}

/// An error, as Terraform 1.11's, when `test` already has a `provider` or
/// `mock_provider` block for the configuration `name` (one file cannot
/// both configure and mock a provider).
fn duplicate_provider(test: &TestFile, name: &str, location: &Location) -> Option<Diagnostic> {
    let configured = test.providers.iter().map(|p| (&p.name, &p.location));
    let mocked = test.mock_providers.iter().map(|m| (&m.name, &m.location));
    let (_, first) = configured.chain(mocked).find(|(n, _)| *n == name)?;
    Some(error_at(
        "Duplicate provider block",
        format!("A provider for {name} is already defined at {}.", crate::diag::source::position(first)),
        location,
    ))
}

/// A `provider "NAME" { … }` block of a test file, read as in a `.tf`
/// file (its `alias`, its `sandbox` grants relative to the configuration
/// directory).
fn provider_block(dir: &Path, block: Block, diags: &mut Vec<Diagnostic>) -> Option<ProviderConfig> {
    let [name] = block.labels.as_slice() else {
        diags.push(error_at(
            "Wrong number of labels for a provider block",
            "A provider block takes one label, the provider's local name: provider \"aws\" { … }.",
            &block.location,
        ));
        return None;
    };
    Some(super::provider::provider(name.clone(), block, dir, diags))
}

/// A run's `providers = { local = local.alt }` map.
fn run_providers(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Vec<RunProvider> {
    let invalid = |location: &Location| {
        error_at(
            "Invalid providers argument",
            "providers maps the configuration's provider names to the test file's provider configurations, like \
             providers = { local = local.alt }.",
            location,
        )
    };
    let ExprKind::Object(items) = &attr.expr.kind else {
        diags.push(invalid(&attr.expr.location));
        return Vec::new();
    };
    let mut found = Vec::new();
    for (key, value) in items {
        match (super::module::provider_name(key), super::module::provider_name(value)) {
            (Some(child), Some(parent)) => found.push(RunProvider { child, parent, location: value.location.clone() }),
            _ => diags.push(invalid(&key.location)),
        }
    }
    found
}

/// A run's `module { source = "./DIR" }` block: a local directory, as
/// cairn test does not download modules.
fn run_module_block(dir: &Path, block: &Block, diags: &mut Vec<Diagnostic>) -> Option<RunModule> {
    expect_no_labels(block, diags);
    let mut source = None;
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "source" => source = literal_string(attr, dir, diags).map(|s| (s, attr.location.clone())),
            "version" => diags.push(not_supported(
                "A run module's version",
                "cairn test runs local modules only (source = \"./DIR\"), which have no version.",
                &attr.location,
            )),
            _ => diags.push(unsupported_argument(attr, "module", &["source", "version"])),
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "module", &[]));
    }
    let Some((source, location)) = source else {
        diags.push(error_at(
            "Missing required argument",
            "The argument \"source\" is required in a run's module block: the module to run, like \"./testing/setup\".",
            &block.location,
        ));
        return None;
    };
    if !(source.starts_with("./") || source.starts_with("../")) {
        diags.push(not_supported(
            "A run module from a registry or a remote source",
            "cairn test runs local modules only: a source starting with ./ or ../.",
            &location,
        ));
        return None;
    }
    Some(RunModule { source, location: block.location.clone() })
}

/// A `mock_provider "NAME" { … }` block.
fn mock_provider_block(dir: &Path, mut block: Block, diags: &mut Vec<Diagnostic>) -> Option<MockProvider> {
    let [name] = block.labels.as_slice() else {
        diags.push(error_at(
            "Wrong number of labels for a mock_provider block",
            "A mock_provider block takes one label, the provider's local name: mock_provider \"aws\" { … }.",
            &block.location,
        ));
        return None;
    };
    let mut mock = MockProvider {
        name: name.clone(),
        mocks: Vec::new(),
        overrides: Vec::new(),
        during: None,
        location: block.location.clone(),
    };
    let mut source = None;
    for attr in std::mem::take(&mut block.body.attributes) {
        match attr.name.as_str() {
            "alias" => {
                if let Some(alias) = literal_string(&attr, dir, diags) {
                    mock.name = format!("{name}.{alias}");
                }
            }
            "source" => source = literal_string(&attr, dir, diags).map(|s| (s, attr.location.clone())),
            "override_during" => mock.during = during(&attr, diags),
            _ => diags.push(unsupported_argument(&attr, "mock_provider", &["alias", "source", "override_during"])),
        }
    }
    mock_contents(block.body, "mock_provider", &mut mock, diags);
    if let Some((source, location)) = source {
        mock_source(dir, &source, &location, &mut mock, diags);
    }
    Some(mock)
}

/// The `mock_resource`, `mock_data`, `override_resource` and
/// `override_data` blocks of `body` (a `mock_provider` block or a
/// `.tfmock.hcl` file), added to `mock`.
fn mock_contents(body: Body, within: &str, mock: &mut MockProvider, diags: &mut Vec<Diagnostic>) {
    for attr in &body.attributes {
        diags.push(unsupported_argument(attr, within, &[]));
    }
    for nested in body.blocks {
        match nested.type_name.as_str() {
            "mock_resource" => mock.mocks.extend(mock_type_block(nested, Mode::Managed, diags)),
            "mock_data" => mock.mocks.extend(mock_type_block(nested, Mode::Data, diags)),
            "override_resource" | "override_data" => mock.overrides.extend(override_block(&nested, diags)),
            _ => diags.push(unsupported_block(
                &nested,
                within,
                &["mock_resource", "mock_data", "override_resource", "override_data"],
            )),
        }
    }
}

/// Reads the `*.tfmock.hcl` files of a mock provider's `source` directory
/// (relative to the configuration directory), in name order, into `mock`.
fn mock_source(dir: &Path, source: &str, location: &Location, mock: &mut MockProvider, diags: &mut Vec<Diagnostic>) {
    let entries = match std::fs::read_dir(dir.join(source)) {
        Ok(entries) => entries,
        Err(e) => {
            diags.push(error_at(
                "Cannot read mock data",
                format!("The source directory \"{source}\" of this mock provider cannot be read: {e}."),
                location,
            ));
            return;
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(".tfmock.hcl"))
        .collect();
    names.sort();
    for name in names {
        let shown = format!("{}/{name}", source.trim_end_matches('/'));
        let text = match std::fs::read_to_string(dir.join(&shown)) {
            Ok(text) => text,
            Err(e) => {
                diags.push(error_at("Cannot read mock data", e.to_string(), &Location::new(&shown, 1, 1)));
                continue;
            }
        };
        let file = SourceFile::new(&shown, text);
        if let Some(body) = parse::parse_file(&file, diags) {
            mock_contents(body, "mock data file", mock, diags);
        }
    }
}

/// A `mock_resource "TYPE"` or `mock_data "TYPE"` block.
fn mock_type_block(block: Block, mode: Mode, diags: &mut Vec<Diagnostic>) -> Option<MockType> {
    let [type_name] = block.labels.as_slice() else {
        diags.push(error_at(
            format!("Wrong number of labels for a {} block", block.type_name),
            format!("A {0} block takes one label, the type it mocks: {0} \"TYPE\" {{ … }}.", block.type_name),
            &block.location,
        ));
        return None;
    };
    let mut mock =
        MockType { mode, type_name: type_name.clone(), defaults: None, during: None, location: block.location.clone() };
    for attr in block.body.attributes {
        match attr.name.as_str() {
            "defaults" => mock.defaults = Some(attr.expr),
            "override_during" => mock.during = during(&attr, diags),
            _ => diags.push(unsupported_argument(&attr, &block.type_name, &["defaults", "override_during"])),
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, &block.type_name, &[]));
    }
    Some(mock)
}

/// A run's `plan_options { mode, refresh, replace, target }` block.
fn plan_options_block(block: &Block, diags: &mut Vec<Diagnostic>) -> TestPlanOptions {
    expect_no_labels(block, diags);
    let mut options = TestPlanOptions::default();
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "mode" => match &attr.expr.kind {
                ExprKind::Variable(word) if word == "normal" => options.refresh_only = false,
                ExprKind::Variable(word) if word == "refresh-only" => options.refresh_only = true,
                _ => diags.push(error_at(
                    "Invalid plan mode",
                    "The mode of plan_options is the keyword normal or refresh-only (without quotes).",
                    &attr.expr.location,
                )),
            },
            "refresh" => match &attr.expr.kind {
                ExprKind::Literal(Value::Bool(b)) => options.refresh = *b,
                _ => diags.push(error_at("Invalid refresh", "refresh is true or false.", &attr.expr.location)),
            },
            "replace" => options.replace = addresses(&attr.expr, "replace", diags),
            "target" => options.targets = addresses(&attr.expr, "target", diags),
            _ => diags.push(unsupported_argument(attr, "plan_options", &["mode", "refresh", "replace", "target"])),
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "plan_options", &[]));
    }
    options
}

/// The references of `what = [a.b, …]`, as written, each with its place.
fn addresses(expr: &Expression, what: &str, diags: &mut Vec<Diagnostic>) -> Vec<(String, Location)> {
    let ExprKind::Tuple(items) = &expr.kind else {
        diags.push(error_at(
            format!("Invalid {what}"),
            format!("{what} is a list of resource addresses, like [terraform_data.a]."),
            &expr.location,
        ));
        return Vec::new();
    };
    let mut found = Vec::new();
    for item in items {
        match address_text(item) {
            Some(text) => found.push((text, item.location.clone())),
            None => diags.push(error_at(
                format!("Invalid {what}"),
                "Each item must be a resource address, like terraform_data.a or terraform_data.b[0].",
                &item.location,
            )),
        }
    }
    found
}

/// An `override_module { … }` block.
fn module_override_block(block: &Block, diags: &mut Vec<Diagnostic>) -> Option<ModuleOverride> {
    expect_no_labels(block, diags);
    let mut call = None;
    let mut outputs = None;
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "target" => call = module_call_target(&attr.expr, diags),
            "outputs" => outputs = Some(attr.expr.clone()),
            _ => diags.push(unsupported_argument(attr, "override_module", &["target", "outputs"])),
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "override_module", &[]));
    }
    if call.is_none() && !block.body.attributes.iter().any(|a| a.name == "target") {
        diags.push(error_at(
            "Missing required argument",
            "The argument \"target\" is required in override_module blocks: the module call to override.",
            &block.location,
        ));
    }
    Some(ModuleOverride { call: call?, outputs, location: block.location.clone() })
}

/// The call names in `target = module.NAME` or `module.A.module.B`; one
/// instance of a call is refused, not overridden in part.
fn module_call_target(expr: &Expression, diags: &mut Vec<Diagnostic>) -> Option<Vec<String>> {
    let calls = address_text(expr).filter(|t| !t.contains('[')).and_then(|text| {
        let parts: Vec<&str> = text.split('.').collect();
        let all_calls = parts.len().is_multiple_of(2) && parts.chunks(2).all(|pair| pair[0] == "module");
        all_calls.then(|| parts.chunks(2).map(|pair| pair[1].to_string()).collect::<Vec<_>>())
    });
    if calls.is_none() {
        diags.push(error_at(
            "Invalid override_module target",
            "cairn test overrides a module call as a whole, like target = module.m or module.m.module.n: one \
             instance of a call cannot be overridden yet.",
            &expr.location,
        ));
    }
    calls
}

/// An `override_resource { … }` or `override_data { … }` block.
fn override_block(block: &Block, diags: &mut Vec<Diagnostic>) -> Option<Override> {
    expect_no_labels(block, diags);
    let mode = if block.type_name == "override_data" { Mode::Data } else { Mode::Managed };
    let mut target = None;
    let mut values = None;
    let mut during_ = None;
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "target" => target = override_target(&attr.expr, mode, diags),
            "values" => values = Some(attr.expr.clone()),
            "override_during" => during_ = during(attr, diags),
            _ => diags.push(unsupported_argument(attr, &block.type_name, &["target", "values", "override_during"])),
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, &block.type_name, &[]));
    }
    let Some(target) = target else {
        diags.push(error_at(
            "Missing required argument",
            format!("The argument \"target\" is required in {} blocks: the address to override.", block.type_name),
            &block.location,
        ));
        return None;
    };
    Some(Override { mode, target, values, during: during_, location: block.location.clone() })
}

/// The address an override's `target` names, checked to be of its mode.
fn override_target(expr: &Expression, mode: Mode, diags: &mut Vec<Diagnostic>) -> Option<String> {
    let Some(text) = address_text(expr) else {
        diags.push(error_at(
            "Invalid override target",
            "The target is a reference to a resource, a resource instance or a data source, like aws_instance.web \
             or data.aws_ami.ubuntu.",
            &expr.location,
        ));
        return None;
    };
    let is_data = text.starts_with("data.") || text.contains(".data.");
    let mode_wanted = if is_data { Mode::Data } else { Mode::Managed };
    if mode_wanted != mode {
        let (block, other) =
            if mode == Mode::Data { ("override_data", "a data source") } else { ("override_resource", "a resource") };
        diags.push(error_at(
            "Invalid override target",
            format!("The target of {block} must be {other}; {text} is not."),
            &expr.location,
        ));
        return None;
    }
    Some(text)
}

/// `override_during = plan` or `override_during = apply` (a bare keyword).
fn during(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Option<OverrideDuring> {
    match &attr.expr.kind {
        ExprKind::Variable(word) if word == "apply" => Some(OverrideDuring::Apply),
        ExprKind::Variable(word) if word == "plan" => Some(OverrideDuring::Plan),
        _ => {
            diags.push(error_at(
                "Invalid override_during",
                "override_during is the keyword plan or apply (without quotes).",
                &attr.expr.location,
            ));
            None
        }
    }
}

/// `command = apply` or `command = plan` (a bare keyword).
fn command(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> TestCommand {
    match &attr.expr.kind {
        ExprKind::Variable(word) if word == "apply" => TestCommand::Apply,
        ExprKind::Variable(word) if word == "plan" => TestCommand::Plan,
        _ => {
            diags.push(error_at(
                "Invalid command",
                "The command of a run is the keyword apply or plan (without quotes).",
                &attr.expr.location,
            ));
            TestCommand::Apply
        }
    }
}

/// The addresses of `expect_failures = [var.x, output.y, …]`.
fn checkables(expr: &Expression, diags: &mut Vec<Diagnostic>) -> Vec<(String, Location)> {
    let ExprKind::Tuple(items) = &expr.kind else {
        diags.push(error_at(
            "Invalid expect_failures",
            "expect_failures is a list of checkable objects, like [var.name, output.name, aws_instance.name].",
            &expr.location,
        ));
        return Vec::new();
    };
    let mut found = Vec::new();
    for item in items {
        match address_text(item) {
            Some(text) => found.push((text, item.location.clone())),
            None => diags.push(error_at(
                "Invalid expect_failures",
                "Each item must be a reference to a checkable object: an input variable, an output, a resource or \
                 a check block.",
                &item.location,
            )),
        }
    }
    found
}

/// A static reference as written (`var.name`, `aws_s3_bucket.b[0]`),
/// `None` for anything that is not one.
pub fn address_text(expr: &Expression) -> Option<String> {
    match &expr.kind {
        ExprKind::Variable(name) => Some(name.clone()),
        ExprKind::Traversal { source, steps } => {
            let mut text = address_text(source)?;
            for step in steps {
                match step {
                    Step::Attr(name) => {
                        text.push('.');
                        text.push_str(name);
                    }
                    Step::Index(key) => match &key.kind {
                        ExprKind::Literal(v) => text.push_str(&format!("[{}]", v.to_hcl())),
                        _ => return None,
                    },
                    Step::Splat { .. } => return None,
                }
            }
            Some(text)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<TestFile, Vec<Diagnostic>> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.tftest.hcl"), text).unwrap();
        load_test_file(dir.path(), "a.tftest.hcl")
    }

    #[test]
    fn runs_have_their_command_variables_assertions_and_expected_failures() {
        let file = load(
            "variables {\n  n = 1\n}\n\nrun \"first\" {\n  command = plan\n  variables {\n    m = run.x.y\n  }\n  \
             assert {\n    condition     = true\n    error_message = \"no\"\n  }\n  expect_failures = [var.n, \
             terraform_data.a[0]]\n}\n\nrun \"second\" {}\n",
        )
        .unwrap();
        assert_eq!(file.variables.len(), 1);
        let [first, second] = file.runs.as_slice() else { panic!("{:?}", file.runs) };
        assert_eq!((first.command, second.command), (TestCommand::Plan, TestCommand::Apply));
        assert_eq!(first.variables[0].name, "m");
        assert_eq!(first.asserts.len(), 1);
        let expected: Vec<&str> = first.expect_failures.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(expected, ["var.n", "terraform_data.a[0]"]);
    }

    #[test]
    fn module_overrides_name_a_call_nested_or_not() {
        let file = load(
            "override_module {\n  target = module.m\n  outputs = {\n    o = 1\n  }\n}\n\nrun \"a\" {\n  \
             override_module {\n    target = module.n\n  }\n}\n",
        )
        .unwrap();
        assert_eq!(file.module_overrides[0].call, ["m"]);
        assert!(file.module_overrides[0].outputs.is_some());
        assert_eq!(file.runs[0].module_overrides[0].call, ["n"]);
        let file = load("override_module {\n  target = module.m.module.n\n}\n").unwrap();
        assert_eq!(file.module_overrides[0].call, ["m", "n"]);
        let e = load("override_module {\n  target = module.m[0]\n}\n").unwrap_err();
        assert_eq!(crate::diag::source::position(e[0].location.as_ref().unwrap()), "a.tftest.hcl:2:12", "{e:?}");
        let e = load("override_module {\n  target = module.m.output.o\n}\n").unwrap_err();
        assert_eq!(crate::diag::source::position(e[0].location.as_ref().unwrap()), "a.tftest.hcl:2:12", "{e:?}");
    }

    #[test]
    fn plan_options_give_mode_refresh_replace_and_targets() {
        let file = load(
            "run \"a\" {\n  plan_options {\n    mode    = refresh-only\n    refresh = false\n    replace = \
             [terraform_data.a]\n    target  = [terraform_data.b[0], module.m]\n  }\n}\n",
        )
        .unwrap();
        let options = &file.runs[0].plan_options;
        assert!(options.refresh_only && !options.refresh);
        assert_eq!(options.replace[0].0, "terraform_data.a");
        let targets: Vec<&str> = options.targets.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(targets, ["terraform_data.b[0]", "module.m"]);
        let e = load("run \"a\" {\n  plan_options {\n    mode = destroy\n  }\n}\n").unwrap_err();
        assert_eq!(crate::diag::source::position(e[0].location.as_ref().unwrap()), "a.tftest.hcl:3:12", "{e:?}");
    }

    #[test]
    fn what_is_not_supported_yet_is_an_error_at_its_place() {
        let e =
            load("run \"a\" {\n  module {\n    source  = \"hashicorp/consul/aws\"\n    version = \"1.0.0\"\n  }\n}\n")
                .unwrap_err();
        let places: Vec<String> =
            e.iter().map(|d| crate::diag::source::position(d.location.as_ref().unwrap())).collect();
        assert_eq!(places, ["a.tftest.hcl:4:5", "a.tftest.hcl:3:5"], "{e:?}");
        assert!(e.iter().all(|d| d.summary.contains("not supported yet")), "{e:?}");
    }

    #[test]
    fn provider_blocks_and_a_runs_providers_map_are_read_with_their_places() {
        let file = load(
            "provider \"recorder\" {\n  dir = var.d\n}\n\nprovider \"recorder\" {\n  alias = \"alt\"\n  dir   = \
             \"log2\"\n}\n\nrun \"a\" {\n  providers = {\n    recorder = recorder.alt\n  }\n}\n",
        )
        .unwrap();
        let names: Vec<&str> = file.providers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["recorder", "recorder.alt"]);
        assert_eq!(file.providers[1].body.attributes[0].name, "dir");
        let [pass] = file.runs[0].providers.as_slice() else { panic!("{:?}", file.runs[0].providers) };
        assert_eq!((pass.child.as_str(), pass.parent.as_str()), ("recorder", "recorder.alt"));
        assert_eq!(crate::diag::source::position(&pass.location), "a.tftest.hcl:12:16");
        // One block per configuration name, mocked or not, as in Terraform.
        let e = load("mock_provider \"local\" {}\n\nprovider \"local\" {}\n\nprovider \"local\" {}\n").unwrap_err();
        let places: Vec<String> =
            e.iter().map(|d| crate::diag::source::position(d.location.as_ref().unwrap())).collect();
        assert_eq!(places, ["a.tftest.hcl:3:1", "a.tftest.hcl:5:1"], "{e:?}");
        assert_eq!(e[0].summary, "Duplicate provider block");
        assert_eq!(e[0].detail, "A provider for local is already defined at a.tftest.hcl:1:1.");
        let e = load("provider \"local\" {\n  alias = \"a\"\n}\n\nmock_provider \"local\" {\n  alias = \"a\"\n}\n")
            .unwrap_err();
        assert_eq!(crate::diag::source::position(e[0].location.as_ref().unwrap()), "a.tftest.hcl:5:1");
        let e = load("run \"a\" {\n  providers = [local]\n}\n").unwrap_err();
        assert_eq!(e[0].summary, "Invalid providers argument");
    }

    #[test]
    fn the_test_block_is_refused_as_terraform_1_11_refuses_it() {
        let e = load("test {\n  parallel = true\n}\n\nrun \"a\" {}\n").unwrap_err();
        assert_eq!(
            (e[0].summary.as_str(), e[0].detail.as_str()),
            ("Unsupported block type", "Blocks of type \"test\" are not expected here.")
        );
        assert_eq!(crate::diag::source::position(e[0].location.as_ref().unwrap()), "a.tftest.hcl:1:1");
    }

    #[test]
    fn a_run_keys_its_state_by_state_key_then_module_source() {
        let file = load(
            "run \"main\" {}\n\nrun \"setup\" {\n  module {\n    source = \"./testing/setup\"\n  }\n}\n\nrun \
             \"keyed\" {\n  state_key = \"k\"\n  module {\n    source = \"./testing/setup\"\n  }\n}\n",
        )
        .unwrap();
        let keys: Vec<String> = file.runs.iter().map(TestRun::state_key).collect();
        assert_eq!(keys, ["", "./testing/setup", "k"]);
        assert_eq!(file.runs[1].module.as_ref().unwrap().source, "./testing/setup");
    }

    #[test]
    fn mock_providers_and_overrides_are_read_with_their_places() {
        let file = load(
            "mock_provider \"aws\" {\n  alias           = \"west\"\n  override_during = plan\n  mock_resource \
             \"aws_instance\" {\n    defaults = {\n      id = \"i-1\"\n    }\n  }\n  mock_data \"aws_ami\" {}\n  \
             override_resource {\n    target = aws_instance.web[0]\n  }\n}\n\noverride_data {\n  target          \
             = module.m.data.aws_ami.a\n  override_during = apply\n  values = {\n    id = \"ami\"\n  }\n}\n\nrun \
             \"a\" {\n  override_resource {\n    target = aws_instance.web\n  }\n}\n",
        )
        .unwrap();
        let [mock] = file.mock_providers.as_slice() else { panic!("{:?}", file.mock_providers) };
        assert_eq!(mock.name, "aws.west");
        assert_eq!(mock.during, Some(OverrideDuring::Plan));
        let mocked: Vec<(Mode, &str)> = mock.mocks.iter().map(|m| (m.mode, m.type_name.as_str())).collect();
        assert_eq!(mocked, [(Mode::Managed, "aws_instance"), (Mode::Data, "aws_ami")]);
        assert!(mock.mocks[0].defaults.is_some() && mock.mocks[1].defaults.is_none());
        assert_eq!(mock.overrides[0].target, "aws_instance.web[0]");
        let [file_override] = file.overrides.as_slice() else { panic!("{:?}", file.overrides) };
        assert_eq!((file_override.mode, file_override.target.as_str()), (Mode::Data, "module.m.data.aws_ami.a"));
        assert_eq!(file_override.during, Some(OverrideDuring::Apply));
        assert_eq!(crate::diag::source::position(&file_override.location), "a.tftest.hcl:15:1");
        assert_eq!(file.runs[0].overrides[0].target, "aws_instance.web");
    }

    #[test]
    fn an_override_of_the_wrong_kind_is_an_error_at_its_target() {
        let e = load("override_data {\n  target = aws_instance.web\n}\n").unwrap_err();
        assert_eq!(e[0].summary, "Invalid override target");
        assert_eq!(crate::diag::source::position(e[0].location.as_ref().unwrap()), "a.tftest.hcl:2:12");
        let e = load("override_resource {\n  values = {}\n}\n").unwrap_err();
        assert_eq!(e[0].summary, "Missing required argument");
    }

    #[test]
    fn a_mock_source_directory_adds_its_tfmock_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("mocks")).unwrap();
        std::fs::write(
            dir.path().join("mocks/aws.tfmock.hcl"),
            "mock_resource \"aws_s3_bucket\" {\n  defaults = {\n    arn = \"arn:x\"\n  }\n}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("a.tftest.hcl"), "mock_provider \"aws\" {\n  source = \"./mocks\"\n}\n")
            .unwrap();
        let file = load_test_file(dir.path(), "a.tftest.hcl").unwrap();
        assert_eq!(file.mock_providers[0].mocks[0].type_name, "aws_s3_bucket");
        assert_eq!(&*file.mock_providers[0].mocks[0].location.file, std::path::Path::new("./mocks/aws.tfmock.hcl"));
    }

    #[test]
    fn a_command_is_apply_or_plan() {
        let e = load("run \"a\" {\n  command = \"plan\"\n}\n").unwrap_err();
        assert_eq!(e[0].summary, "Invalid command");
    }
}
