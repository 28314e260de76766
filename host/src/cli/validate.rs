//! `cairn validate`: the configuration against the provider schemas.
//!
//! With `-json`, the result is one JSON document in the shape of
//! `terraform validate -json`: `valid`, the error and warning counts, and
//! each diagnostic with its `range` and a `snippet` of the offending line.

use anyhow::Result;
use serde_json::{Value as Json, json};

use super::Common;
use crate::diag::{Diagnostic, Diagnostics, Severity, source};
use crate::engine::Engine;

/// Runs `cairn validate`.
pub(super) fn run(common: &Common, json: bool) -> Result<i32> {
    let result = common.workspace().and_then(|ws| Engine::new()?.validate(&ws));
    if !json {
        result?;
        println!("{} The configuration is valid.", common.colors().green("Success!"));
        return Ok(0);
    }
    let diags = match result {
        Ok(()) => Vec::new(),
        Err(e) => match e.downcast_ref::<Diagnostics>() {
            Some(d) => d.0.clone(),
            None => vec![Diagnostic::error(format!("{e:#}"))],
        },
    };
    let document = validate_json(&diags);
    println!("{}", serde_json::to_string_pretty(&document)?);
    Ok(if Diagnostics::has_errors(&diags) { 1 } else { 0 })
}

/// The `validate -json` document for `diags`.
fn validate_json(diags: &[Diagnostic]) -> Json {
    let errors = diags.iter().filter(|d| d.is_error()).count();
    json!({
        "format_version": "1.0",
        "valid": errors == 0,
        "error_count": errors,
        "warning_count": diags.len() - errors,
        "diagnostics": diags.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

/// One diagnostic as Terraform's JSON gives it.
pub fn diagnostic_json(d: &Diagnostic) -> Json {
    let mut out = json!({
        "severity": if d.severity == Severity::Error { "error" } else { "warning" },
        "summary": source::scrub(&d.summary),
        "detail": source::scrub(&d.detail),
    });
    if let Some(range) = d.location.as_ref().and_then(source::range) {
        out["snippet"] = snippet_json(&range);
        out["range"] = json!(range);
    }
    out
}

/// The offending line and where in it the span is, as Terraform's
/// `snippet` (without its `context` and `values`).
fn snippet_json(range: &source::Range) -> Json {
    let code = source::line(range).unwrap_or_default();
    let line_start = range.start.byte - code.char_indices().nth(range.start.column - 1).map_or(code.len(), |(i, _)| i);
    json!({
        "code": code,
        "start_line": range.start.line,
        "highlight_start_offset": range.start.byte - line_start,
        "highlight_end_offset": range.end.byte - line_start,
    })
}
