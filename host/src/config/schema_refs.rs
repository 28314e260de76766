//! The static check of references to resource attributes against the
//! provider schemas (Terraform's "static validate" of references): a
//! misspelt `random_id.r.hexx` is an error before any value is known, so
//! that `validate` finds it where `plan` would only find it once the
//! resource's value is there.
//!
//! A reference is followed through the schema as far as the schema says
//! what is there: attributes and nested blocks by name, the elements of
//! nested collections by index, object-typed attributes by their
//! attribute names. Wherever the shape stops being known (a map's keys, a
//! `dynamic` value, a splat over a nested collection), the check stops
//! too: what remains is the evaluation's to find.

use crate::addr::ResourceAddr;
use crate::diag::{Diagnostic, Location};
use crate::schema::{Block, Nesting};
use crate::value::Type;

use super::expr::{Reference, Step};
use super::{Body, Config, Expression, error_at, suggest};

/// The errors of every reference in `config` to an attribute that the
/// schema of its resource (`schema_of`; a resource with no schema is not
/// checked) does not have, each at the reference with a suggestion.
pub fn check_attribute_references<'a>(
    config: &Config,
    schema_of: &dyn Fn(&ResourceAddr) -> Option<&'a Block>,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut check = |root: &str, steps: &[Step], location: &Location| {
        let Ok((Reference::Resource(addr), consumed)) = Reference::from_traversal(root, steps) else { return };
        if let Some(block) = schema_of(&addr)
            && let Err((summary, detail)) = follow(block, &steps[consumed..])
        {
            diags.push(error_at(summary, format!("{detail} (a reference to {addr})"), location));
        }
    };
    let mut expr = |e: &Expression| e.visit_traversals(&mut Vec::new(), &mut check);
    let mut bodies: Vec<&Body> = Vec::new();
    for r in &config.resources {
        bodies.push(&r.body);
        for e in r.lifecycle.replace_triggered_by.iter().map(|t| &t.expr) {
            expr(e);
        }
        for e in r.count.iter().chain(&r.for_each) {
            expr(e.as_ref());
        }
        for c in r.lifecycle.preconditions.iter().chain(&r.lifecycle.postconditions) {
            expr(&c.condition);
            expr(&c.error_message);
        }
    }
    for e in config.locals.values().map(|l| &l.expr).chain(config.outputs.values().map(|o| &o.expr)) {
        expr(e);
    }
    for c in config.outputs.values().flat_map(|o| &o.preconditions) {
        expr(&c.condition);
        expr(&c.error_message);
    }
    for call in &config.modules {
        for e in call.inputs.values().map(|i| &i.expr).chain(&call.count).chain(&call.for_each) {
            expr(e);
        }
    }
    bodies.extend(config.providers.iter().map(|p| &p.body));
    for body in bodies {
        body.visit_traversals(&[], &mut check);
    }
    diags
}

/// What a reference's steps lead through.
enum Shape<'a> {
    /// An object of a schema block (a resource, a nested block or the
    /// objects of a nested attribute).
    Block(&'a Block),
    /// Several of those: a nested block or nested attribute that is a
    /// list, set or map.
    Many(&'a Block),
    /// A value of a type.
    Typed(&'a Type),
}

/// Follows `steps` (after the resource's address) through `block`.
/// Leading index and splat steps select instances of a `count` or
/// `for_each` resource, whose value is the same object each.
fn follow(block: &Block, steps: &[Step]) -> Result<(), (&'static str, String)> {
    let first = steps.iter().position(|s| matches!(s, Step::Attr(_))).unwrap_or(steps.len());
    let mut shape = Shape::Block(block);
    for step in &steps[first..] {
        shape = match (shape, step) {
            (Shape::Block(block), Step::Attr(name)) => attribute_of(block, name)?,
            (Shape::Many(block), Step::Index(_)) => Shape::Block(block),
            (Shape::Typed(Type::Object(attrs)), Step::Attr(name)) => match attrs.get(name) {
                Some(ty) => Shape::Typed(ty),
                None => return Err(unsupported(name, attrs.keys().map(String::as_str))),
            },
            (Shape::Typed(Type::List(element) | Type::Set(element) | Type::Map(element)), Step::Index(_)) => {
                Shape::Typed(element)
            }
            // The shape is not known from here (a map's key, a dynamic
            // value, a splat): the evaluation checks the rest.
            _ => return Ok(()),
        };
    }
    Ok(())
}

/// The attribute or nested block `name` of `block`.
fn attribute_of<'a>(block: &'a Block, name: &str) -> Result<Shape<'a>, (&'static str, String)> {
    if let Some(attr) = block.attributes.get(name) {
        return Ok(match &attr.nested {
            Some(nested) if nested.nesting == Nesting::Single => Shape::Block(&nested.block),
            Some(nested) => Shape::Many(&nested.block),
            None => Shape::Typed(&attr.ty),
        });
    }
    if let Some(nested) = block.blocks.get(name) {
        return Ok(match nested.nesting {
            Nesting::Single => Shape::Block(&nested.block),
            _ => Shape::Many(&nested.block),
        });
    }
    Err(unsupported(name, block.attributes.keys().chain(block.blocks.keys()).map(String::as_str)))
}

/// The error for `name`, which none of `names` is, as the evaluation
/// words it.
fn unsupported<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> (&'static str, String) {
    let hint = suggest::did_you_mean(name, names);
    ("Unsupported attribute", format!("This object does not have an attribute named \"{name}\".{hint}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testutil::expr;
    use crate::schema::{Attribute, NestedBlock, NestedType};

    fn schema() -> Block {
        let mut nested = Block::default();
        nested.attributes.insert("port".into(), Attribute::optional(Type::Number));
        let mut block = Block::default();
        block.attributes.insert("hex".into(), Attribute::computed(Type::String));
        block.attributes.insert(
            "tags".into(),
            Attribute::optional(Type::Object([("team".to_string(), Type::String)].into_iter().collect())),
        );
        block.attributes.insert("labels".into(), Attribute::optional(Type::Map(Box::new(Type::String))));
        block.attributes.insert(
            "rules".into(),
            Attribute {
                nested: Some(NestedType { nesting: Nesting::List, block: nested.clone() }),
                ..Attribute::optional(Type::Dynamic)
            },
        );
        block.blocks.insert(
            "listener".into(),
            NestedBlock { nesting: Nesting::List, block: nested, min_items: 0, max_items: 0 },
        );
        block
    }

    fn check(text: &str) -> Result<(), String> {
        let e = expr(text);
        let mut errors = Vec::new();
        e.visit_traversals(&mut Vec::new(), &mut |root, steps, _| {
            if let Ok((Reference::Resource(_), consumed)) = Reference::from_traversal(root, steps)
                && let Err((_, detail)) = follow(&schema(), &steps[consumed..])
            {
                errors.push(detail);
            }
        });
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }

    #[test]
    fn attributes_and_blocks_of_the_schema_are_found() {
        for ok in [
            "random_id.r.hex",
            "random_id.r[0].hex",
            "random_id.r[\"k\"].hex",
            "random_id.r[*].hex",
            "random_id.r.tags.team",
            "random_id.r.labels.anything",
            "random_id.r.rules[0].port",
            "random_id.r.listener[0].port",
            "random_id.r.listener[*].anything",
            "random_id.r",
            "[for x in random_id.r.rules : x.whatever]",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn a_misspelt_attribute_is_an_error_with_a_suggestion() {
        assert_eq!(
            check("random_id.r.hexx"),
            Err("This object does not have an attribute named \"hexx\". Did you mean \"hex\"?".into())
        );
        assert_eq!(check("random_id.r[0].hexx").unwrap_err(), check("random_id.r.hexx").unwrap_err());
        assert!(check("random_id.r.tags.taem").unwrap_err().contains("Did you mean \"team\"?"));
        assert!(check("random_id.r.rules[0].prot").unwrap_err().contains("Did you mean \"port\"?"));
        assert!(check("random_id.r.listener[1].prot").unwrap_err().contains("Did you mean \"port\"?"));
        assert!(check("\"${random_id.r.outptu}\"").unwrap_err().contains("\"outptu\""));
    }
}
