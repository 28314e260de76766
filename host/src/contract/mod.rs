//! The plan/apply contracts: pure functions with no I/O, and the [`Gate`]
//! through which the engine makes every provider call.
//!
//! A provider is not trusted: every answer it gives is checked here before
//! the engine believes it (see Terraform's resource instance change lifecycle, in `docs/design.md`, "Sources").
//! - [`proposed_new`] is the merge the host performs before calling plan;
//! - [`check_plan`] checks a planned state against config and prior state;
//! - [`check_compatible`] checks a later value against an earlier one: the
//!   second plan against the first, and the new state against the plan.
//!
//! Every check returns all violations it finds, sorted by path, each with the
//! attribute path, the rule broken and both values. Values of sensitive
//! attributes (and of any extra paths the caller marks, see
//! [`check_plan_marked`]) are shown as `(sensitive value)`.
//!
//! The rules are Terraform's (`objchange.AssertPlanValid` and
//! `AssertObjectCompatible`) without the legacy-SDK exemptions, and with
//! one difference:
//! - an unknown configured value may be planned unknown, or as a known
//!   value the provider can already predict (Terraform refuses the known
//!   one unless it is the prior value). cairn lets a provider say what it
//!   knows, because nothing it says escapes the checks: the re-plan at
//!   apply time, with the configuration known, must keep the configured
//!   value (rule 2) and every value the first plan knew (rule 3), so a
//!   prediction the configuration then contradicts fails that re-plan,
//!   before the provider is asked to apply anything (the `replan` cases of
//!   the contract table show both);
//! - null and empty collections are different values everywhere; a list,
//!   set or map of nested blocks with no blocks is empty, never null;
//! - an unknown collection of nested blocks (a `dynamic` block whose
//!   `for_each` is unknown) is `Value::Unknown` as a whole; there is no
//!   "placeholder block" heuristic;
//! - sets are compared as sets: order never matters, and an element with
//!   unknowns inside may turn into any element it is compatible with (two
//!   such elements may even coalesce into one), but a set never grows.

mod compatible;
mod conform;
mod gate;
mod plan;
mod proposed;

use std::fmt;

use crate::schema::{Block, Nesting};
use crate::value::{Number, Path, Value, quote, quote_key};

pub use compatible::{check_compatible, check_compatible_marked};
pub use gate::{
    CheckedCallError, FailedApply, FailedOpen, Gate, RULE_DELETE_NULL, RULE_IMPORT_ONE, call_failed, import_gone,
    invalid_answer, located,
};
pub use plan::{check_plan, check_plan_marked};
pub use proposed::proposed_new;

/// One broken rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Where in the object.
    pub path: Path,
    /// What was found, with both values, e.g. `planned value 8 does not match config value 4`.
    pub message: String,
    /// The rule, in words a provider author can look up (one of the `RULE_` constants).
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
/// Rule: nested blocks keep their count (and, for maps of blocks, their keys).
pub const RULE_BLOCK_COUNT: &str = "nested blocks must keep the number the configuration wrote";
/// Rule: a block or the whole object is never planned unknown as a whole.
pub const RULE_BLOCK_KNOWN: &str =
    "a nested block must not be planned unknown as a whole; set the attributes inside it to unknown instead";
/// Rule: values conform to the schema.
pub const RULE_TYPE: &str = "every value must conform to the schema type";
/// Rule: known values stay as they were.
pub const RULE_KNOWN_UNCHANGED: &str = "a value known in the plan must not change";
/// Rule: the new state is wholly known.
pub const RULE_NO_UNKNOWNS: &str = "a new state must not contain unknown values";

/// Rule: a configured nested attribute keeps its objects.
pub const RULE_NESTED_COUNT: &str = "a configured nested attribute must keep the objects the configuration wrote (their number, and for maps their keys)";
/// Rule: write-only attributes are never stored.
pub const RULE_WRITE_ONLY: &str = "a write-only attribute must be planned and returned null";
/// Rule: refinements of a planned unknown are promises.
pub const RULE_REFINEMENT: &str = "a value must satisfy the refinements of its planned unknown";

/// Every rule with a short identifier, for tests and machine-readable
/// output: `config_preserved`, `not_computed`, `block_count`, `block_known`,
/// `type`, `known_unchanged`, `no_unknowns`, `nested_count`, `write_only`,
/// `refinement`.
pub const RULES: [(&str, &str); 10] = [
    ("config_preserved", RULE_CONFIG_PRESERVED),
    ("not_computed", RULE_NOT_COMPUTED),
    ("block_count", RULE_BLOCK_COUNT),
    ("block_known", RULE_BLOCK_KNOWN),
    ("type", RULE_TYPE),
    ("known_unchanged", RULE_KNOWN_UNCHANGED),
    ("no_unknowns", RULE_NO_UNKNOWNS),
    ("nested_count", RULE_NESTED_COUNT),
    ("write_only", RULE_WRITE_ONLY),
    ("refinement", RULE_REFINEMENT),
];

/// `value` (an object of `schema`) with every write-only attribute, at any
/// depth, set to null: what the host keeps of a provider's answer. The
/// contract checks already refuse a planned or new state that keeps one
/// (rule `write_only`); this is the one place where an answer the host
/// accepts (refresh and import included, which have no such check) loses
/// them, so that a write-only value can reach neither state nor plan.
pub fn null_write_only(schema: &Block, value: &Value) -> Value {
    if !schema.contains_write_only() {
        return value.clone();
    }
    let Value::Object(m) = value else { return value.clone() };
    let mut out = m.clone();
    for (name, v) in out.iter_mut() {
        if let Some(a) = schema.attributes.get(name) {
            if a.write_only {
                *v = Value::Null;
            } else if let Some(nested) = &a.nested {
                *v = each_object(nested.nesting, v, |o| null_write_only(&nested.block, o));
            }
        } else if let Some(b) = schema.blocks.get(name) {
            *v = each_object(b.nesting, v, |o| null_write_only(&b.block, o));
        }
    }
    Value::Object(out)
}

/// `v` with `f` applied to each of its objects, as `nesting` gathers them.
fn each_object(nesting: Nesting, v: &Value, f: impl Fn(&Value) -> Value) -> Value {
    match (nesting, v) {
        (Nesting::Single, o) => f(o),
        (_, Value::List(items)) => Value::List(items.iter().map(&f).collect()),
        (_, Value::Set(items)) => canonical_set(items.iter().map(&f).collect()),
        (_, Value::Map(m)) => Value::Map(m.iter().map(|(k, o)| (k.clone(), f(o))).collect()),
        (_, other) => other.clone(),
    }
}

/// A violation for every write-only attribute that is not null in `value`
/// (an object of `schema`), at any depth.
fn write_only_kept(schema: &Block, value: &Value, path: &Path, out: &mut Vec<Violation>) {
    if !schema.contains_write_only() {
        return;
    }
    let Value::Object(m) = value else { return };
    let each = |nesting: Nesting, block: &Block, v: &Value, path: &Path, out: &mut Vec<Violation>| match (nesting, v) {
        (Nesting::Single, o) => write_only_kept(block, o, path, out),
        (_, Value::List(items) | Value::Set(items)) => {
            items.iter().enumerate().for_each(|(i, o)| write_only_kept(block, o, &path.index(i), out))
        }
        (_, Value::Map(m)) => m.iter().for_each(|(k, o)| write_only_kept(block, o, &path.key(k), out)),
        _ => {}
    };
    for (name, v) in m {
        let here = path.attr(name);
        if let Some(a) = schema.attributes.get(name) {
            if a.write_only && !v.is_null() {
                out.push(Violation {
                    path: here,
                    message: "a write-only attribute is not null; it is sent to the provider, never kept".into(),
                    rule: RULE_WRITE_ONLY,
                });
            } else if let Some(nested) = &a.nested {
                each(nested.nesting, &nested.block, v, &here, out);
            }
        } else if let Some(b) = schema.blocks.get(name) {
            each(b.nesting, &b.block, v, &here, out);
        }
    }
}

/// The short identifier of a rule (see [`RULES`]).
pub fn rule_id(rule: &str) -> Option<&'static str> {
    RULES.iter().find(|(_, text)| *text == rule).map(|(id, _)| *id)
}

/// Whether `a` and `b` are the same value, as the contracts compare values:
/// sets are unordered (and compared as multisets, so a set holding two
/// unknown elements differs from one holding one), numbers compare by value
/// (`1` and `1.0` are equal), an attribute absent from an object is null,
/// and unknown equals unknown.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) | (Value::Unknown(_), Value::Unknown(_)) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => same_number(*x, *y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Set(x), Value::Set(y)) => same_elements(x, y),
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.keys().chain(y.keys()).all(|k| same(x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null)))
        }
        _ => false,
    }
}

fn same_number(a: Number, b: Number) -> bool {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => x == y,
        (Number::Float(x), Number::Float(y)) => x == y,
        // A provider may send a whole number as a float on the wire.
        (Number::Int(i), Number::Float(f)) | (Number::Float(f), Number::Int(i)) => {
            matches!(Number::from_f64(f), Number::Int(j) if i == j)
        }
    }
}

/// Whether two sets hold the same elements, in any order, each as often.
fn same_elements(x: &[Value], y: &[Value]) -> bool {
    if x.len() != y.len() {
        return false;
    }
    let sorted = |v: &[Value]| {
        let mut keys: Vec<String> = v.iter().map(key).collect();
        keys.sort_unstable();
        keys
    };
    sorted(x) == sorted(y)
}

/// A string that is equal for two values exactly when [`same`] says they
/// are: lets sets be compared and searched by sorting and hashing instead
/// of comparing every element with every other.
fn key(v: &Value) -> String {
    let mut out = String::new();
    write_key(v, &mut out);
    out
}

fn write_key(v: &Value, out: &mut String) {
    let seq = |tag: &str, items: &mut dyn Iterator<Item = String>, out: &mut String| {
        out.push_str(tag);
        out.push('[');
        for (i, k) in items.enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&k);
        }
        out.push(']');
    };
    match v {
        Value::Null => out.push('n'),
        Value::Unknown(_) => out.push('u'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        // Whole floats are integers (`Number::from_f64`); other floats are
        // equal exactly when their bits are.
        Value::Number(n) => match *n {
            Number::Float(f) => match Number::from_f64(f) {
                Number::Int(i) => out.push_str(&format!("i{i}")),
                Number::Float(f) => out.push_str(&format!("f{:x}", f.to_bits())),
            },
            Number::Int(i) => out.push_str(&format!("i{i}")),
        },
        Value::String(s) => {
            out.push('s');
            out.push_str(&quote(s));
        }
        Value::List(items) => seq("l", &mut items.iter().map(key), out),
        Value::Tuple(items) => seq("T", &mut items.iter().map(key), out),
        Value::Set(items) => {
            let mut keys: Vec<String> = items.iter().map(key).collect();
            keys.sort_unstable();
            seq("S", &mut keys.into_iter(), out)
        }
        Value::Map(m) => seq("m", &mut m.iter().map(|(k, e)| format!("{}:{}", quote(k), key(e))), out),
        // An absent attribute is null, so null ones are left out.
        Value::Object(m) => {
            seq("o", &mut m.iter().filter(|(_, e)| !e.is_null()).map(|(k, e)| format!("{}:{}", quote(k), key(e))), out)
        }
    }
}

/// A set in canonical order (as [`Value::set`] orders it), with duplicates
/// removed only among wholly known elements: two elements with unknowns
/// inside may turn out different, so both are kept (as cty does).
fn canonical_set(mut elements: Vec<Value>) -> Value {
    elements.sort_by_cached_key(crate::value::to_json_text);
    let mut seen = std::collections::HashSet::new();
    elements.retain(|e| !e.is_wholly_known() || seen.insert(key(e)));
    Value::Set(elements)
}

/// Decides what must not be shown: attributes the schema marks sensitive
/// or write-only (a write-only value is a secret that must not persist,
/// in a message neither), and whatever lies at or under the extra paths a
/// caller (or a provider's marks) names.
struct Redactor<'a> {
    schema: &'a Block,
    marks: &'a [Path],
}

impl Redactor<'_> {
    fn is_sensitive(&self, path: &Path) -> bool {
        self.schema.is_sensitive(path)
            || self.schema.is_write_only(path)
            || self.marks.iter().any(|m| path.starts_with(m))
    }

    /// The value at `path` for a message: HCL syntax, with every sensitive
    /// part (the whole value, or anything inside it) replaced by
    /// `(sensitive value)`.
    fn show(&self, path: &Path, v: &Value) -> String {
        let mut out = String::new();
        self.write(path, v, &mut out);
        out
    }

    fn write(&self, path: &Path, v: &Value, out: &mut String) {
        if self.is_sensitive(path) {
            out.push_str("(sensitive value)");
            return;
        }
        match v {
            Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
                out.push('[');
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write(&path.index(i), e, out);
                }
                out.push(']');
            }
            Value::Map(m) | Value::Object(m) => {
                out.push('{');
                for (i, (k, e)) in m.iter().enumerate() {
                    out.push_str(if i > 0 { ", " } else { " " });
                    if matches!(v, Value::Map(_)) {
                        out.push_str(&quote(k));
                        out.push_str(" = ");
                        self.write(&path.key(k), e, out);
                    } else {
                        out.push_str(&quote_key(k));
                        out.push_str(" = ");
                        self.write(&path.attr(k), e, out);
                    }
                }
                out.push_str(if m.is_empty() { "}" } else { " }" });
            }
            scalar => out.push_str(&scalar.to_hcl()),
        }
    }
}

/// The final list: every type violation, then the other violations except
/// those inside a value that already has the wrong type (comparing a value
/// of the wrong type only repeats the same problem), sorted by path.
fn finish(types: Vec<Violation>, found: Vec<Violation>) -> Vec<Violation> {
    let mut out = types;
    let wrong: Vec<Path> = out.iter().map(|v| v.path.clone()).collect();
    out.extend(found.into_iter().filter(|v| !wrong.iter().any(|w| v.path.starts_with(w))));
    // Stable: violations at one path keep the order they were found in.
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Attribute;
    use crate::value::Type;

    fn attr(ty: Type, required: bool, optional: bool, computed: bool) -> Attribute {
        Attribute { required, optional, computed, ..Attribute::optional(ty) }
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
        let planned = obj(&[("byte_length", Value::int(8)), ("hex", Value::unknown())]);
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
        let planned = obj(&[("byte_length", Value::int(4)), ("hex", Value::unknown()), ("prefix", Value::string("x"))]);
        assert!(check_plan(&schema(), &Value::Null, &config, &planned).is_empty());
    }

    #[test]
    fn every_wrong_type_is_reported() {
        let config = obj(&[("byte_length", Value::int(4))]);
        let planned = obj(&[("byte_length", Value::string("4")), ("hex", Value::int(1)), ("result", Value::int(2))]);
        let v = check_plan(&schema(), &Value::Null, &config, &planned);
        let text: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(v.len(), 3, "{text:?}");
        assert!(v.iter().all(|x| x.rule == RULE_TYPE), "{text:?}");
        assert_eq!(
            text[1],
            ".hex: a string is required, got the number 1 (rule: every value must conform to the schema type)"
        );
        assert_eq!(
            text[2],
            ".result: a string is required, got a number (rule: every value must conform to the schema type)"
        );
    }

    #[test]
    fn new_state_must_be_known_and_keep_planned_values() {
        let planned =
            obj(&[("byte_length", Value::int(4)), ("hex", Value::unknown()), ("result", Value::string("s1"))]);
        let new = obj(&[("byte_length", Value::int(5)), ("hex", Value::unknown()), ("result", Value::string("s2"))]);
        let v = check_compatible(&schema(), &planned, &new, true);
        let text: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert!(text.iter().any(|t| t.starts_with(".hex: the new state leaves this value unknown")), "{text:?}");
        assert!(text.iter().any(|t| t.starts_with(".byte_length: was 4, but now 5")), "{text:?}");
        assert!(
            text.iter().any(|t| t.starts_with(".result: was (sensitive value), but now (sensitive value)")),
            "{text:?}"
        );
    }

    #[test]
    fn replan_may_fill_unknowns() {
        let first = obj(&[("byte_length", Value::int(4)), ("hex", Value::unknown())]);
        let second = obj(&[("byte_length", Value::int(4)), ("hex", Value::string("ab"))]);
        assert!(check_compatible(&schema(), &first, &second, false).is_empty());
        assert!(!check_compatible(&schema(), &second, &first, false).is_empty());
    }

    #[test]
    fn marked_paths_are_redacted() {
        let config = obj(&[("byte_length", Value::int(4)), ("prefix", Value::string("secret"))]);
        let planned = obj(&[("byte_length", Value::int(4)), ("prefix", Value::string("other"))]);
        let marks = [Path::root().attr("prefix")];
        let v = check_plan_marked(&schema(), &Value::Null, &config, &planned, &marks);
        assert_eq!(v.len(), 1);
        assert!(!v[0].message.contains("secret") && !v[0].message.contains("other"), "{}", v[0]);
    }

    #[test]
    fn sets_compare_unordered_and_by_count() {
        let a = Value::Set(vec![Value::string("x"), Value::unknown()]);
        let b = Value::Set(vec![Value::unknown(), Value::string("x")]);
        assert!(same(&a, &b));
        assert!(!same(&a, &Value::Set(vec![Value::unknown(), Value::unknown(), Value::string("x")])));
        assert!(same(&Value::int(1), &Value::Number(Number::Float(1.0))));
        let set = canonical_set(vec![Value::unknown(), Value::string("b"), Value::unknown(), Value::string("b")]);
        assert_eq!(set.elements().map(<[Value]>::len), Some(3));
        assert_eq!(rule_id(RULE_TYPE), Some("type"));
    }

    #[test]
    fn keys_agree_with_same() {
        let values = [
            Value::Null,
            Value::unknown(),
            Value::int(1),
            Value::Number(Number::Float(1.0)),
            Value::Number(Number::Float(0.5)),
            Value::string("1"),
            Value::string("a,b"),
            Value::List(vec![Value::string("a"), Value::string("b")]),
            Value::List(vec![Value::string("a,b")]),
            Value::Tuple(vec![Value::string("a"), Value::string("b")]),
            Value::Set(vec![Value::string("b"), Value::string("a")]),
            Value::Set(vec![Value::string("a"), Value::string("b"), Value::string("b")]),
            Value::object([("a", Value::Null)]),
            Value::object([("b", Value::int(1))]),
            Value::Map([("b".to_string(), Value::int(1))].into_iter().collect()),
            Value::Map([("a".to_string(), Value::Null)].into_iter().collect()),
            Value::object(Vec::<(String, Value)>::new()),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(key(a) == key(b), same(a, b), "{a:?} vs {b:?}");
            }
        }
    }
}
