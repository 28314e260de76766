//! The plan/apply contracts, as pure functions with no I/O.
//!
//! A provider is not trusted: every answer it gives is checked here before
//! the engine believes it (see `seeds/terraform-resource-instance-change-lifecycle.md`).
//! - [`proposed_new`] is the merge the host performs before calling plan;
//! - [`check_plan`] checks a planned state against config and prior state;
//! - [`check_compatible`] checks a later value against an earlier one: the
//!   second plan against the first, and the new state against the plan.
//!
//! Every check returns all violations it finds, each with the attribute
//! path, the rule broken and both values (sensitive ones redacted).

use std::collections::BTreeMap;
use std::fmt;

use crate::schema::{Attribute, Block, NestedBlock, Nesting};
use crate::value::{Path, Value};

/// One broken rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Where in the object.
    pub path: Path,
    /// What was found, with both values, e.g. `planned value 8 does not match config value 4`.
    pub message: String,
    /// The rule, in words a provider author can look up.
    pub rule: &'static str,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} (rule: {})", self.path, self.message, self.rule)
    }
}

/// Rule: configured values are planned as configured (or as prior).
pub const RULE_CONFIG_PRESERVED: &str = "a configured attribute must be planned as configured or as its prior value";
/// Rule: only computed attributes may be set by the provider.
pub const RULE_NOT_COMPUTED: &str = "only a computed attribute may be given a value the configuration does not set";
/// Rule: nested blocks keep their count.
pub const RULE_BLOCK_COUNT: &str = "nested blocks must keep the number the configuration wrote";
/// Rule: values conform to the schema.
pub const RULE_TYPE: &str = "every value must conform to the schema type";
/// Rule: known values stay as they were.
pub const RULE_KNOWN_UNCHANGED: &str = "a value known in the plan must not change";
/// Rule: the new state is wholly known.
pub const RULE_NO_UNKNOWNS: &str = "a new state must not contain unknown values";

/// The proposed new state: config values where set; for computed attributes
/// the config leaves null, the prior value. Null config (delete) gives null.
pub fn proposed_new(schema: &Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() || config.is_unknown() {
        return config.clone();
    }
    let prior = if prior.is_null() { &Value::Object(BTreeMap::new()) } else { prior };
    let mut out = BTreeMap::new();
    for (name, attr) in &schema.attributes {
        let c = config.get_attr(name);
        let v = if attr.computed && c.is_null() { prior.get_attr(name).clone() } else { c.clone() };
        out.insert(name.clone(), v);
    }
    for (name, nested) in &schema.blocks {
        out.insert(name.clone(), proposed_nested(nested, prior.get_attr(name), config.get_attr(name)));
    }
    Value::Object(out)
}

fn proposed_nested(nested: &NestedBlock, prior: &Value, config: &Value) -> Value {
    let block = &nested.block;
    match (nested.nesting, config) {
        (_, Value::Null | Value::Unknown) => config.clone(),
        (Nesting::Single, c) => proposed_new(block, prior, c),
        (Nesting::List, Value::List(items)) => Value::List(
            items
                .iter()
                .enumerate()
                .map(|(i, c)| proposed_new(block, prior.elements().and_then(|p| p.get(i)).unwrap_or(&Value::Null), c))
                .collect(),
        ),
        (Nesting::Map, Value::Map(items)) => {
            Value::Map(items.iter().map(|(k, c)| (k.clone(), proposed_new(block, prior.get_attr(k), c))).collect())
        }
        (Nesting::Set, Value::Set(items)) => {
            let priors = prior.elements().unwrap_or(&[]);
            Value::set(items.iter().map(|c| proposed_new(block, matching_set_element(block, priors, c), c)).collect())
        }
        (_, c) => c.clone(),
    }
}

/// The prior set element whose configurable attributes equal the config
/// element's, so that its computed attributes carry over.
fn matching_set_element<'a>(block: &Block, priors: &'a [Value], config: &Value) -> &'a Value {
    let configurable = |v: &Value| -> Vec<Value> {
        block.attributes.iter().filter(|(_, a)| !a.computed || a.optional).map(|(n, _)| v.get_attr(n).clone()).collect()
    };
    let want = configurable(config);
    priors.iter().find(|p| configurable(p) == want).unwrap_or(&Value::Null)
}

/// Checks a planned state against config and prior state (`PlanResourceChange` rules).
pub fn check_plan(schema: &Block, prior: &Value, config: &Value, planned: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Err(e) = schema.implied_type().check(planned) {
        out.push(Violation { path: e.path, message: e.message, rule: RULE_TYPE });
        return out;
    }
    if config.is_null() {
        if !planned.is_null() {
            out.push(Violation {
                path: Path::root(),
                message: "planned an object for a resource being deleted".into(),
                rule: RULE_CONFIG_PRESERVED,
            });
        }
        return out;
    }
    if planned.is_null() || planned.is_unknown() {
        out.push(Violation {
            path: Path::root(),
            message: format!("planned {} for a resource that is configured", planned.kind_name()),
            rule: RULE_CONFIG_PRESERVED,
        });
        return out;
    }
    check_plan_block(schema, schema, prior, config, planned, &Path::root(), &mut out);
    out
}

/// Checks one block's attributes and nested blocks; `root` is the whole
/// schema, for deciding what is sensitive.
fn check_plan_block(
    root: &Block,
    block: &Block,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &Path,
    out: &mut Vec<Violation>,
) {
    for (name, attr) in &block.attributes {
        let at = path.attr(name);
        check_planned_attribute(
            root,
            attr,
            prior.get_attr(name),
            config.get_attr(name),
            planned.get_attr(name),
            &at,
            out,
        );
    }
    for (name, nested) in &block.blocks {
        let at = path.attr(name);
        check_plan_nested(root, nested, prior.get_attr(name), config.get_attr(name), planned.get_attr(name), &at, out);
    }
}

fn check_planned_attribute(
    root: &Block,
    attr: &Attribute,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &Path,
    out: &mut Vec<Violation>,
) {
    let show = |v: &Value| display(root, path, v, attr.sensitive);
    if planned == config || (planned == prior && !prior.is_null() && !config.is_null()) {
        return;
    }
    // An unknown configured value may be planned as anything of its type:
    // the provider may know better, e.g. after normalising.
    if config.is_unknown() || (attr.computed && !attr.optional) || (config.is_null() && attr.computed) {
        return;
    }
    let message = if config.is_null() {
        format!("planned value {} for a non-computed attribute that the configuration leaves null", show(planned))
    } else if prior.is_null() {
        format!("planned value {} does not match config value {}", show(planned), show(config))
    } else {
        format!(
            "planned value {} does not match config value {} nor prior value {}",
            show(planned),
            show(config),
            show(prior)
        )
    };
    let rule = if config.is_null() { RULE_NOT_COMPUTED } else { RULE_CONFIG_PRESERVED };
    out.push(Violation { path: path.clone(), message, rule });
}

fn check_plan_nested(
    root: &Block,
    nested: &NestedBlock,
    prior: &Value,
    config: &Value,
    planned: &Value,
    path: &Path,
    out: &mut Vec<Violation>,
) {
    if config.is_unknown() || planned.is_unknown() {
        return;
    }
    let count = |v: &Value| match v {
        Value::Null => 0,
        Value::Map(m) => m.len(),
        v => v.elements().map_or(1, <[Value]>::len),
    };
    let mut block_count = |found: usize, wanted: usize| {
        out.push(Violation {
            path: path.clone(),
            message: format!("planned {found} block(s) where the configuration has {wanted}"),
            rule: RULE_BLOCK_COUNT,
        })
    };
    match nested.nesting {
        Nesting::Single => {
            if config.is_null() != planned.is_null() {
                block_count(count(planned), count(config));
            } else if !config.is_null() {
                check_plan_block(root, &nested.block, prior, config, planned, path, out);
            }
        }
        Nesting::List => {
            let (c, p) = (config.elements().unwrap_or(&[]), planned.elements().unwrap_or(&[]));
            if c.len() != p.len() {
                return block_count(p.len(), c.len());
            }
            let priors = prior.elements().unwrap_or(&[]);
            for (i, (ce, pe)) in c.iter().zip(p).enumerate() {
                let pr = priors.get(i).unwrap_or(&Value::Null);
                check_plan_block(root, &nested.block, pr, ce, pe, &path.index(i), out);
            }
        }
        Nesting::Map => {
            let empty = BTreeMap::new();
            let (Value::Map(c) | Value::Object(c)) = config else { return };
            let p = match planned {
                Value::Map(p) => p,
                _ => &empty,
            };
            if c.keys().ne(p.keys()) {
                return block_count(p.len(), c.len());
            }
            for (k, ce) in c {
                check_plan_block(root, &nested.block, prior.get_attr(k), ce, &p[k], &path.key(k), out);
            }
        }
        Nesting::Set => {
            // Set elements cannot be paired with config elements one to one,
            // so only the count is checked, and only when it is certain.
            let (c, p) = (config.elements().unwrap_or(&[]), planned.elements().unwrap_or(&[]));
            if config.is_wholly_known() && planned.is_wholly_known() && c.len() != p.len() {
                block_count(p.len(), c.len());
            }
        }
    }
}

/// Checks that `later` keeps every value known in `earlier`: the second plan
/// against the first (`final_state` false), or the new state against the
/// plan (`final_state` true, which also forbids unknowns).
pub fn check_compatible(schema: &Block, earlier: &Value, later: &Value, final_state: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Err(e) = schema.implied_type().check(later) {
        out.push(Violation { path: e.path, message: e.message, rule: RULE_TYPE });
    }
    if final_state && !later.is_wholly_known() {
        for path in unknown_paths(later, &Path::root()) {
            out.push(Violation { path, message: "the value is still unknown".into(), rule: RULE_NO_UNKNOWNS });
        }
    }
    compatible_value(schema, earlier, later, &Path::root(), &mut out);
    out
}

fn compatible_value(schema: &Block, earlier: &Value, later: &Value, path: &Path, out: &mut Vec<Violation>) {
    if earlier.is_unknown() || earlier == later {
        return;
    }
    let changed = |out: &mut Vec<Violation>| {
        let sensitive = schema.is_sensitive(path);
        out.push(Violation {
            path: path.clone(),
            message: format!(
                "was {}, but now {}",
                display(schema, path, earlier, sensitive),
                display(schema, path, later, sensitive)
            ),
            rule: RULE_KNOWN_UNCHANGED,
        });
    };
    match (earlier, later) {
        (Value::Object(a), Value::Object(b)) | (Value::Map(a), Value::Map(b)) if a.keys().eq(b.keys()) => {
            let step = |k: &str| if matches!(earlier, Value::Map(_)) { path.key(k) } else { path.attr(k) };
            for (k, av) in a {
                compatible_value(schema, av, &b[k], &step(k), out);
            }
        }
        (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                compatible_value(schema, av, bv, &path.index(i), out);
            }
        }
        (Value::Set(a), Value::Set(b)) if a.len() == b.len() || !earlier.is_wholly_known() => {
            // Each known element must still be there; elements with unknowns
            // inside may have become anything.
            let lost = a.iter().filter(|e| e.is_wholly_known()).any(|e| !b.contains(e));
            if lost {
                changed(out);
            }
        }
        _ => changed(out),
    }
}

fn unknown_paths(v: &Value, path: &Path) -> Vec<Path> {
    match v {
        Value::Unknown => vec![path.clone()],
        Value::Object(m) => m.iter().flat_map(|(k, e)| unknown_paths(e, &path.attr(k))).collect(),
        Value::Map(m) => m.iter().flat_map(|(k, e)| unknown_paths(e, &path.key(k))).collect(),
        Value::List(e) | Value::Set(e) | Value::Tuple(e) => {
            e.iter().enumerate().flat_map(|(i, x)| unknown_paths(x, &path.index(i))).collect()
        }
        _ => Vec::new(),
    }
}

/// A value for a message, or `(sensitive value)` where it must not be shown.
fn display(schema: &Block, path: &Path, v: &Value, sensitive: bool) -> String {
    if sensitive || schema.is_sensitive(path) { "(sensitive value)".to_string() } else { v.to_hcl() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Type;

    fn attr(ty: Type, required: bool, optional: bool, computed: bool) -> Attribute {
        Attribute { ty, required, optional, computed, sensitive: false, description: String::new() }
    }

    /// random_id-like: byte_length required, hex computed, keepers optional.
    fn schema() -> Block {
        Block {
            attributes: [
                ("byte_length".to_string(), attr(Type::Number, true, false, false)),
                ("hex".to_string(), attr(Type::String, false, false, true)),
                ("prefix".to_string(), attr(Type::String, false, true, true)),
                ("result".to_string(), Attribute { sensitive: true, ..attr(Type::String, false, false, true) }),
            ]
            .into(),
            ..Default::default()
        }
    }

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::object(pairs.iter().cloned())
    }

    #[test]
    fn proposed_new_merges_config_over_computed_prior() {
        let prior =
            obj(&[("byte_length", Value::int(4)), ("hex", Value::string("ab")), ("prefix", Value::string("p"))]);
        let config = obj(&[("byte_length", Value::int(8))]);
        let proposed = proposed_new(&schema(), &prior, &config);
        assert_eq!(proposed.get_attr("byte_length"), &Value::int(8));
        assert_eq!(proposed.get_attr("hex"), &Value::string("ab"));
        assert_eq!(proposed.get_attr("prefix"), &Value::string("p"));
        assert_eq!(proposed_new(&schema(), &prior, &Value::Null), Value::Null);
        let created = proposed_new(&schema(), &Value::Null, &config);
        assert_eq!(created.get_attr("hex"), &Value::Null);
    }

    #[test]
    fn plan_that_changes_config_is_refused_with_the_rule() {
        let config = obj(&[("byte_length", Value::int(4))]);
        let planned = obj(&[("byte_length", Value::int(8)), ("hex", Value::Unknown)]);
        let v = check_plan(&schema(), &Value::Null, &config, &planned);
        assert_eq!(v.len(), 1);
        assert_eq!(
            v[0].to_string(),
            ".byte_length: planned value 8 does not match config value 4 (rule: a configured attribute must be planned as configured or as its prior value)"
        );
    }

    #[test]
    fn computed_values_may_be_planned_freely() {
        let config = obj(&[("byte_length", Value::int(4))]);
        let planned = obj(&[("byte_length", Value::int(4)), ("hex", Value::Unknown), ("prefix", Value::string("x"))]);
        assert!(check_plan(&schema(), &Value::Null, &config, &planned).is_empty());
    }

    #[test]
    fn wrong_type_is_refused() {
        let config = obj(&[("byte_length", Value::int(4))]);
        let planned = obj(&[("byte_length", Value::int(4)), ("hex", Value::int(1))]);
        let v = check_plan(&schema(), &Value::Null, &config, &planned);
        assert_eq!(v[0].rule, RULE_TYPE);
        assert_eq!(v[0].path.to_string(), ".hex");
    }

    #[test]
    fn new_state_must_be_known_and_keep_planned_values() {
        let planned = obj(&[("byte_length", Value::int(4)), ("hex", Value::Unknown), ("result", Value::string("s1"))]);
        let new = obj(&[("byte_length", Value::int(5)), ("hex", Value::Unknown), ("result", Value::string("s2"))]);
        let v = check_compatible(&schema(), &planned, &new, true);
        let text: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert!(text.iter().any(|t| t.starts_with(".hex: the value is still unknown")), "{text:?}");
        assert!(text.iter().any(|t| t.starts_with(".byte_length: was 4, but now 5")), "{text:?}");
        assert!(
            text.iter().any(|t| t.starts_with(".result: was (sensitive value), but now (sensitive value)")),
            "{text:?}"
        );
    }

    #[test]
    fn replan_may_fill_unknowns() {
        let first = obj(&[("byte_length", Value::int(4)), ("hex", Value::Unknown)]);
        let second = obj(&[("byte_length", Value::int(4)), ("hex", Value::string("ab"))]);
        assert!(check_compatible(&schema(), &first, &second, false).is_empty());
        assert!(!check_compatible(&schema(), &second, &first, false).is_empty());
    }
}
