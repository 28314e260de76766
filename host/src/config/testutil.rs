//! Helpers for this module's tests: configurations written into temporary
//! directories, and expressions parsed from text.

use std::path::Path;

use tempfile::TempDir;

use crate::diag::Diagnostic;
use crate::value::Value;

use super::{Config, EvalContext, Expression, eval, load, parse_expression};

/// A temporary directory holding the given `(file name, text)` pairs.
pub(crate) fn write_dir(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Loads a configuration of one `main.tf`, which must be valid.
pub(crate) fn load_main(text: &str) -> (TempDir, Config) {
    let dir = write_dir(&[("main.tf", text)]);
    let config = load(dir.path()).unwrap_or_else(|diags| panic!("{}", shown(&diags)));
    (dir, config)
}

/// The errors loading a configuration of one `main.tf` produces, displayed.
pub(crate) fn load_errors(text: &str) -> Vec<String> {
    let dir = write_dir(&[("main.tf", text)]);
    match load(dir.path()) {
        Ok(_) => panic!("expected errors loading:\n{text}"),
        Err(diags) => diags.iter().map(Diagnostic::to_string).collect(),
    }
}

/// An expression parsed from text, as if written in `test.tf`.
pub(crate) fn expr(text: &str) -> Expression {
    parse_expression(text, "test.tf").unwrap_or_else(|diags| panic!("{}", shown(&diags)))
}

/// Evaluates an expression in an otherwise empty context rooted at `dir`.
pub(crate) fn eval_in(text: &str, ctx: &EvalContext) -> Result<Value, Vec<Diagnostic>> {
    eval(&expr(text), ctx)
}

/// Evaluates an expression that must succeed, in an empty context.
pub(crate) fn value(text: &str) -> Value {
    eval_in(text, &EvalContext::new(Path::new("."))).unwrap_or_else(|diags| panic!("{text}: {}", shown(&diags)))
}

/// The first error evaluating an expression in an empty context, displayed.
pub(crate) fn error(text: &str) -> String {
    match eval_in(text, &EvalContext::new(Path::new("."))) {
        Ok(v) => panic!("{text}: expected an error, got {v}"),
        Err(diags) => shown(&diags),
    }
}

/// Diagnostics displayed one after the other.
pub(crate) fn shown(diags: &[Diagnostic]) -> String {
    diags.iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("\n")
}
