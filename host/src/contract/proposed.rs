//! The proposed new state: the merge the host performs before it asks a
//! provider to plan (Terraform's `objchange.ProposedNew`).

use super::{canonical_set, same};
use crate::schema::{Block, Nesting};
use crate::value::{Map, Value};

/// The proposed new state: configured values where the configuration sets
/// them; for computed attributes it leaves null, the prior value. Nested
/// blocks are merged recursively, correlated with prior blocks by index
/// (lists), by key (maps), or by their configurable content (sets). Blocks
/// the configuration does not have are gone; blocks it adds have null
/// computed attributes.
///
/// A null prior (create) proposes the configuration as it is, and a null
/// configuration (delete) proposes null. An unknown configuration, or an
/// unknown collection of blocks, stays unknown.
pub fn proposed_new(schema: &Block, prior: &Value, config: &Value) -> Value {
    proposed_element(schema, prior, config)
}

/// One object of `block`: the resource itself, a single block, or one
/// element of a collection of blocks.
fn proposed_element(block: &Block, prior: &Value, config: &Value) -> Value {
    let Value::Object(_) = config else {
        // Null (absent or deleted), unknown, or the wrong shape, which the
        // provider's answer will be checked against anyway.
        return config.clone();
    };
    // A missing prior is an object of nulls: nothing to carry over.
    let prior = if matches!(prior, Value::Object(_)) { prior } else { &Value::Null };
    let mut out = Map::new();
    for (name, attr) in &block.attributes {
        let (c, p) = (config.get_attr(name), prior.get_attr(name));
        let v = match &attr.nested {
            // An optional+computed nested attribute left null keeps the
            // prior value only if the provider chose all of it: a prior
            // holding a configurable value came from an earlier
            // configuration, which now says null (Terraform's
            // `optionalValueNotComputable`).
            Some(nested) if attr.computed && c.is_null() => {
                if attr.optional && configurable_inside(nested.nesting, &nested.block, p) {
                    c.clone()
                } else {
                    p.clone()
                }
            }
            Some(nested) => proposed_nested(nested.nesting, &nested.block, p, c),
            None if attr.computed && c.is_null() => p.clone(),
            None => c.clone(),
        };
        out.insert(name.clone(), v);
    }
    for (name, nested) in &block.blocks {
        out.insert(
            name.clone(),
            proposed_nested(nested.nesting, &nested.block, prior.get_attr(name), config.get_attr(name)),
        );
    }
    Value::Object(out)
}

/// Whether the objects of a nested attribute value `v` hold a non-null
/// value of an attribute that is not computed (one only configuration
/// sets).
fn configurable_inside(nesting: Nesting, block: &Block, v: &Value) -> bool {
    let object = |o: &Value| {
        block.attributes.iter().any(|(name, a)| {
            let inner = o.get_attr(name);
            !inner.is_null()
                && (!a.computed || a.nested.as_ref().is_some_and(|n| configurable_inside(n.nesting, &n.block, inner)))
        })
    };
    match (nesting, v) {
        (_, Value::Null | Value::Unknown(_)) => false,
        (Nesting::Single, o) => object(o),
        (_, Value::List(items) | Value::Set(items)) => items.iter().any(object),
        (_, Value::Map(m)) => m.values().any(object),
        _ => false,
    }
}

/// A nested block type's value, or a nested attribute's: the objects of
/// `block`, gathered as `nesting` says, merged with their prior objects.
fn proposed_nested(nesting: Nesting, block: &Block, prior: &Value, config: &Value) -> Value {
    match (nesting, config) {
        (Nesting::Single, _) => proposed_element(block, prior, config),
        (Nesting::List, Value::List(items)) => {
            let priors = match prior {
                Value::List(p) => p.as_slice(),
                _ => &[],
            };
            Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| proposed_element(block, priors.get(i).unwrap_or(&Value::Null), c))
                    .collect(),
            )
        }
        (Nesting::Map, Value::Map(items)) => {
            let priors = match prior {
                Value::Map(p) => Some(p),
                _ => None,
            };
            Value::Map(
                items
                    .iter()
                    .map(|(k, c)| {
                        let p = priors.and_then(|p| p.get(k)).unwrap_or(&Value::Null);
                        (k.clone(), proposed_element(block, p, c))
                    })
                    .collect(),
            )
        }
        (Nesting::Set, Value::Set(items)) => {
            // Set elements have no identity but their content: a prior block
            // carries its computed values over only to a configured block
            // with the same configurable content. Each prior block is used
            // once.
            let priors = match prior {
                Value::Set(p) => p.as_slice(),
                _ => &[],
            };
            let partners = pair_up(items, priors, |c, p| configured_as(block, c, p));
            let merged = items
                .iter()
                .zip(partners)
                .map(|(c, partner)| proposed_element(block, partner.map_or(&Value::Null, |i| &priors[i]), c))
                .collect();
            canonical_set(merged)
        }
        // Null, unknown (a `dynamic` block with an unknown `for_each`), or
        // the wrong shape: the configuration as it is.
        _ => config.clone(),
    }
}

/// Whether the prior object `prior` is what the configured object `config`
/// describes: every attribute the configuration decides is equal, and an
/// optional+computed attribute the configuration leaves null may have any
/// prior value (the provider chose it). Computed-only attributes do not
/// count, at any depth: the objects of a nested attribute and nested
/// blocks are compared by the same rule, so that a computed member the
/// configuration leaves null inside them does not tell two objects apart
/// (Terraform's ProposedNew). Unknown configured values match nothing.
fn configured_as(block: &Block, config: &Value, prior: &Value) -> bool {
    let (Value::Object(_), Value::Object(_)) = (config, prior) else {
        return false;
    };
    let attributes_match = block.attributes.iter().all(|(name, attr)| {
        let (c, p) = (config.get_attr(name), prior.get_attr(name));
        match &attr.nested {
            _ if attr.computed && c.is_null() => true,
            Some(nested) => objects_configured_as(nested.nesting, &nested.block, c, p),
            None => same(c, p),
        }
    });
    attributes_match
        && block.blocks.iter().all(|(name, nested)| {
            objects_configured_as(nested.nesting, &nested.block, config.get_attr(name), prior.get_attr(name))
        })
}

/// [`configured_as`] for the objects of a nested block type or nested
/// attribute, gathered as `nesting` says: the same number of objects
/// (for maps, the same keys), each configured as its partner.
fn objects_configured_as(nesting: Nesting, block: &Block, c: &Value, p: &Value) -> bool {
    match nesting {
        Nesting::Single => (c.is_null() && p.is_null()) || configured_as(block, c, p),
        Nesting::List => match (blocks(c), blocks(p)) {
            (Some(c), Some(p)) => c.len() == p.len() && c.iter().zip(p).all(|(c, p)| configured_as(block, c, p)),
            _ => false,
        },
        Nesting::Set => match (blocks(c), blocks(p)) {
            (Some(c), Some(p)) => {
                c.len() == p.len() && pair_up(c, p, |c, p| configured_as(block, c, p)).iter().all(Option::is_some)
            }
            _ => false,
        },
        Nesting::Map => match (c, p) {
            (Value::Null, Value::Null) => true,
            (Value::Map(c), Value::Map(p)) => {
                c.len() == p.len() && c.iter().all(|(k, c)| p.get(k).is_some_and(|p| configured_as(block, c, p)))
            }
            (Value::Null, Value::Map(m)) | (Value::Map(m), Value::Null) => m.is_empty(),
            _ => false,
        },
    }
}

/// The blocks of a list or set of blocks; null counts as no blocks.
fn blocks(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Null => Some(&[]),
        Value::List(items) | Value::Set(items) => Some(items),
        _ => None,
    }
}

/// For each of `config`'s elements in turn, the first prior element not yet
/// taken that `fits` it (greedy, as Terraform correlates set elements).
fn pair_up(config: &[Value], priors: &[Value], fits: impl Fn(&Value, &Value) -> bool) -> Vec<Option<usize>> {
    let mut taken = vec![false; priors.len()];
    config
        .iter()
        .map(|c| {
            let found = (0..priors.len()).find(|&i| !taken[i] && fits(c, &priors[i]));
            if let Some(i) = found {
                taken[i] = true;
            }
            found
        })
        .collect()
}
