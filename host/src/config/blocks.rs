//! Reading the blocks whose shape cairn itself defines (`variable`,
//! `lifecycle`, `sandbox`, `required_providers`, …), as opposed to bodies a
//! provider schema describes: taking meta-arguments out of a body, literal
//! values, and the errors for arguments and blocks that do not belong.

use std::path::Path;

use crate::diag::{Diagnostic, Location};
use crate::value::{Type, Value};

use super::{Attribute, Block, Body, EvalContext, Expression, error_at, eval, suggest};

/// Removes and returns the attribute `name` from a body.
pub(super) fn take_attribute(body: &mut Body, name: &str) -> Option<Attribute> {
    let i = body.attributes.iter().position(|a| a.name == name)?;
    Some(body.attributes.remove(i))
}

/// Removes and returns every block of type `name` from a body.
pub(super) fn take_blocks(body: &mut Body, name: &str) -> Vec<Block> {
    let (taken, kept) = std::mem::take(&mut body.blocks).into_iter().partition(|b| b.type_name == name);
    body.blocks = kept;
    taken
}

/// Removes `dynamic` blocks from a body, at any depth, with an error for
/// each: they are not supported yet, and their iterator variables would
/// otherwise be reported as undeclared resources.
pub(super) fn reject_dynamic_blocks(body: &mut Body, diags: &mut Vec<Diagnostic>) {
    for block in take_blocks(body, "dynamic") {
        diags.push(error_at(
            "Unsupported block type",
            "dynamic blocks are not supported yet; write the blocks out, or use a list or map attribute.",
            &block.location,
        ));
    }
    for block in &mut body.blocks {
        reject_dynamic_blocks(&mut block.body, diags);
    }
}

/// "Unsupported argument" for an attribute of a fixed-shape block.
pub(super) fn unsupported_argument(attr: &Attribute, block: &str, expected: &[&str]) -> Diagnostic {
    let hint = suggest::did_you_mean(&attr.name, expected.iter().copied());
    error_at(
        "Unsupported argument",
        format!("An argument named \"{}\" is not expected in {} block.{hint}", attr.name, article(block)),
        &attr.location,
    )
}

/// "Unsupported block type" for a block inside a fixed-shape block.
pub(super) fn unsupported_block(block: &Block, parent: &str, expected: &[&str]) -> Diagnostic {
    let hint = suggest::did_you_mean(&block.type_name, expected.iter().copied());
    error_at(
        "Unsupported block type",
        format!("Blocks of type \"{}\" are not expected in {} block.{hint}", block.type_name, article(parent)),
        &block.location,
    )
}

/// "a lifecycle", "an output".
fn article(word: &str) -> String {
    let an = word.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {word}", if an { "an" } else { "a" })
}

/// Checks that a block has no labels.
pub(super) fn expect_no_labels(block: &Block, diags: &mut Vec<Diagnostic>) {
    if !block.labels.is_empty() {
        diags.push(error_at(
            "Extraneous label for block",
            format!("A {} block takes no labels.", block.type_name),
            &block.location,
        ));
    }
}

/// The value of an expression that must not refer to anything: settings
/// read before any variable or resource has a value, and which an operator
/// should be able to audit by reading the file.
pub(super) fn literal(expr: &Expression, dir: &Path, what: &str) -> Result<Value, Vec<Diagnostic>> {
    if let Some(first) = expr.checked_references().into_iter().next() {
        let detail = match first {
            Ok((reference, _)) => {
                format!("The {what} must be a literal value; it cannot refer to {reference}.")
            }
            Err(_) => format!("The {what} must be a literal value; it cannot refer to anything."),
        };
        return Err(vec![error_at("Variables not allowed", detail, &expr.location)]);
    }
    eval(expr, &EvalContext::new(dir))
}

/// A literal converted to a type; `None` (after recording why) when it
/// is not one, or is null.
fn literal_of(attr: &Attribute, dir: &Path, ty: &Type, diags: &mut Vec<Diagnostic>) -> Option<Value> {
    let what = format!("\"{}\" argument", attr.name);
    let value = literal(&attr.expr, dir, &what).map_err(|d| diags.extend(d)).ok()?;
    match ty.convert(&value) {
        Ok(Value::Null) => {
            diags.push(error_at("Invalid value", format!("The {what} must not be null."), &attr.location));
            None
        }
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(error_at("Invalid value", format!("The {what} is not valid: {}.", e.message), &attr.location));
            None
        }
    }
}

/// A literal bool; false when it is not one.
pub(super) fn literal_bool(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> bool {
    matches!(literal_of(attr, dir, &Type::Bool, diags), Some(Value::Bool(true)))
}

/// A literal string.
pub(super) fn literal_string(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<String> {
    match literal_of(attr, dir, &Type::String, diags)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// A literal whole number of at least 1.
pub(super) fn literal_positive(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<u64> {
    let n = match literal_of(attr, dir, &Type::Number, diags)? {
        Value::Number(n) => n.as_i64().filter(|i| *i > 0),
        _ => None,
    };
    if n.is_none() {
        diags.push(error_at(
            "Invalid value",
            format!("The \"{}\" argument must be a whole number of at least 1.", attr.name),
            &attr.location,
        ));
    }
    n.map(|i| i as u64)
}

/// A literal list of strings, each with where it is written.
pub(super) fn literal_strings(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> Vec<(String, Location)> {
    let list = Type::List(Box::new(Type::String));
    let Some(Value::List(values)) = literal_of(attr, dir, &list, diags) else {
        return Vec::new();
    };
    // Point at each element when the list is written out, else at the list.
    let locations: Vec<&Location> = match &attr.expr.kind {
        super::ExprKind::Tuple(items) if items.len() == values.len() => items.iter().map(|e| &e.location).collect(),
        _ => vec![&attr.expr.location; values.len()],
    };
    let mut out = Vec::new();
    for (value, location) in values.into_iter().zip(locations) {
        match value {
            Value::String(s) => out.push((s, location.clone())),
            _ => diags.push(error_at(
                "Invalid value",
                format!("The elements of \"{}\" must not be null.", attr.name),
                location,
            )),
        }
    }
    out
}
