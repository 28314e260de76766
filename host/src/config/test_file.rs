//! Test files (`*.tftest.hcl`) for `cairn test`, read as Terraform 1.11
//! reads them: `variables` for the whole file, and `run` blocks, each with
//! its `command` (`apply`, the default, or `plan`), its own `variables`,
//! `assert` blocks and `expect_failures`.
//!
//! What cairn does not run yet (`mock_provider`, `override_resource`,
//! `override_data`, `override_module`, `provider` blocks, a run's `module`,
//! `providers`, `plan_options` and `state_key`, the `test` block) is an
//! error at its place, never ignored: a test that quietly ran something
//! else than written would pass for the wrong reason.

use std::path::Path;

use crate::diag::{Diagnostic, Location};

use super::blocks::{expect_no_labels, unsupported_argument, unsupported_block};
use super::conditions::condition_block;
use super::source::SourceFile;
use super::{Attribute, Block, Body, Condition, ConditionKind, ExprKind, Expression, Step, error_at, parse};

/// One test file.
#[derive(Debug, Clone)]
pub struct TestFile {
    /// The file's path as shown, relative to the configuration directory
    /// (`main.tftest.hcl`, `tests/defaults.tftest.hcl`).
    pub name: String,
    /// The file-level `variables` block's values, as written: they may
    /// refer to `run.NAME.OUTPUT` and to each other's `var.NAME`.
    pub variables: Vec<Attribute>,
    /// Its `run` blocks, in file order.
    pub runs: Vec<TestRun>,
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
    /// The checkable objects expected to fail (`var.x`, `output.y`,
    /// `terraform_data.z`, `check.c`), as written, each with its place.
    pub expect_failures: Vec<(String, Location)>,
    /// The block header.
    pub location: Location,
}

/// Reads the test file at `dir`/`name`: every problem at its
/// `file:line:column`.
pub fn load_test_file(dir: &Path, name: &str) -> Result<TestFile, Vec<Diagnostic>> {
    let text = std::fs::read_to_string(dir.join(name))
        .map_err(|e| vec![error_at("Cannot read test file", e.to_string(), &Location::new(name, 1, 1))])?;
    let mut diags = Vec::new();
    let file = SourceFile::new(name, text);
    let Some(body) = parse::parse_file(&file, &mut diags) else { return Err(diags) };
    let test = test_file(name, body, &mut diags);
    if diags.iter().any(Diagnostic::is_error) { Err(diags) } else { Ok(test) }
}

/// The blocks of a test file that cairn does not run yet: each is refused
/// at its place with this sentence.
const NOT_YET: &[(&str, &str)] = &[
    ("mock_provider", "Mock providers are not supported yet: a test runs against the configuration's real providers."),
    ("override_resource", "Overriding resources is not supported yet."),
    ("override_data", "Overriding data sources is not supported yet."),
    ("override_module", "Overriding modules is not supported yet."),
    (
        "provider",
        "Provider blocks in test files are not supported yet: the configuration's own provider blocks are used.",
    ),
    ("test", "The test block (parallel runs) is not supported yet: runs go one after the other."),
];

fn test_file(name: &str, body: Body, diags: &mut Vec<Diagnostic>) -> TestFile {
    let mut test = TestFile { name: name.to_string(), variables: Vec::new(), runs: Vec::new() };
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
            "run" => test.runs.extend(run_block(block, &test.runs, diags)),
            other => match NOT_YET.iter().find(|(kind, _)| *kind == other) {
                Some((_, why)) => diags.push(not_supported(other, why, &block.location)),
                None => diags.push(unsupported_block(&block, "test file", &["run", "variables"])),
            },
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
fn run_block(block: Block, earlier: &[TestRun], diags: &mut Vec<Diagnostic>) -> Option<TestRun> {
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
        expect_failures: Vec::new(),
        location: block.location.clone(),
    };
    for attr in block.body.attributes {
        match attr.name.as_str() {
            "command" => run.command = command(&attr, diags),
            "expect_failures" => run.expect_failures = checkables(&attr.expr, diags),
            "providers" | "state_key" => diags.push(not_supported(
                &attr.name,
                "Only the configuration's own providers and state are used.",
                &attr.location,
            )),
            _ => diags.push(unsupported_argument(&attr, "run", &["command", "expect_failures"])),
        }
    }
    for nested in block.body.blocks {
        match nested.type_name.as_str() {
            "variables" => run.variables.extend(variables_block(nested, diags)),
            "assert" => run.asserts.extend(condition_block(&nested, ConditionKind::CheckAssertion, diags)),
            "module" => diags.push(not_supported(
                "A run's module block",
                "A run tests the configuration of the directory cairn test runs in.",
                &nested.location,
            )),
            "plan_options" => diags.push(not_supported(
                "plan_options",
                "A run plans as a plain `cairn plan` does (normal mode, with refresh).",
                &nested.location,
            )),
            _ => diags.push(unsupported_block(&nested, "run", &["variables", "assert", "module", "plan_options"])),
        }
    }
    Some(run)
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
    fn what_is_not_supported_yet_is_an_error_at_its_place() {
        let e =
            load("mock_provider \"random\" {}\n\nrun \"a\" {\n  module {\n    source = \"./m\"\n  }\n}\n").unwrap_err();
        let places: Vec<String> =
            e.iter().map(|d| crate::diag::source::position(d.location.as_ref().unwrap())).collect();
        assert_eq!(places, ["a.tftest.hcl:1:1", "a.tftest.hcl:4:3"], "{e:?}");
        assert!(e[0].summary.contains("not supported yet"), "{e:?}");
    }

    #[test]
    fn a_command_is_apply_or_plan() {
        let e = load("run \"a\" {\n  command = \"plan\"\n}\n").unwrap_err();
        assert_eq!(e[0].summary, "Invalid command");
    }
}
