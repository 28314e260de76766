//! Dynamic values: the one representation of configuration, state and plans.
//!
//! A [`Value`] is what an HCL expression evaluates to, what a provider sees on
//! the wire and what the state records. Unknown is a first-class variant, never
//! a sentinel. Types ([`Type`]) describe what a schema attribute accepts;
//! [`Type::convert`] turns a configuration value into that type the way
//! Terraform does (numbers and bools into strings, tuples into lists, …).

mod json;
mod path;
mod refine;
mod types;

use std::fmt;

pub use json::{
    TypedJson, from_json, from_json_untyped, refinements_from_json, refinements_to_json, to_json, to_json_text,
    to_json_typed, type_from_json, type_to_json,
};
pub use path::{Path, PathStep};
pub use refine::{Bound, Refinements};
pub use types::{Type, TypeError, parse_number};

/// A number that keeps 64-bit integers and doubles exact.
///
/// A float that is a whole number within the i64 range is always stored as
/// [`Number::Int`], so `1` and `1.0` are the same value.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub enum Number {
    /// A whole number.
    Int(i64),
    /// Any other finite number.
    Float(f64),
}

impl Number {
    /// The canonical number for a float.
    pub fn from_f64(f: f64) -> Number {
        if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
            Number::Int(f as i64)
        } else {
            Number::Float(f)
        }
    }

    /// The number as a float (may round very large integers).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    /// The number as an integer, when it is one.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(i),
            Number::Float(_) => None,
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a.to_bits() == b.to_bits() || a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// The entries of a map or object value, sorted by key.
///
/// A sorted vector rather than a `BTreeMap`: most objects have a handful of
/// attributes, and a B-tree node has room for eleven (about 600 bytes for
/// two); plans and states hold several values per resource. Build large
/// maps with `collect` or `extend` (which sort once) rather than `insert`
/// in a loop (which shifts the entries after each new key).
pub type Map = litemap::LiteMap<String, Value>;

/// A dynamic value.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// The absence of a value.
    #[default]
    Null,
    /// Known only after apply, with what is already known about it (see
    /// [`Refinements`]; `None` says nothing). Build with
    /// [`Value::unknown`] or [`Value::refined`], which keep "nothing known"
    /// as `None` so that equal unknowns compare equal.
    Unknown(Option<Box<Refinements>>),
    /// true or false.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An ordered sequence of one element type.
    List(Vec<Value>),
    /// Distinct elements of one type; kept in a canonical order so that equal
    /// sets compare equal (see [`Value::set`]).
    Set(Vec<Value>),
    /// String keys to one element type.
    Map(Map),
    /// Named attributes of their own types.
    Object(Map),
    /// A fixed sequence of elements of their own types.
    Tuple(Vec<Value>),
}

impl Value {
    /// A plain unknown value: nothing known about it.
    pub fn unknown() -> Value {
        Value::Unknown(None)
    }

    /// An unknown value with `refinements` (a plain unknown when they say
    /// nothing).
    pub fn refined(refinements: Refinements) -> Value {
        if refinements.is_empty() { Value::Unknown(None) } else { Value::Unknown(Some(Box::new(refinements))) }
    }

    /// The refinements of an unknown value (`None` for a plain unknown or
    /// a value that is not unknown).
    pub fn refinements(&self) -> Option<&Refinements> {
        match self {
            Value::Unknown(r) => r.as_deref(),
            _ => None,
        }
    }

    /// A string value.
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// An integer value.
    pub fn int(i: i64) -> Value {
        Value::Number(Number::Int(i))
    }

    /// A set: duplicates removed, elements in canonical order.
    pub fn set(mut elements: Vec<Value>) -> Value {
        elements.sort_by_key(|v| v.sort_key());
        elements.dedup();
        Value::Set(elements)
    }

    /// An object from (name, value) pairs.
    pub fn object<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Value)>) -> Value {
        Value::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// Whether this is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether this value itself is unknown (not looking inside).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
    }

    /// Whether this value contains no unknown anywhere inside it.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.iter().all(Value::is_wholly_known),
            Value::Map(m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    /// The attribute `name` of an object (or element of a map); null when
    /// absent or when this is not an object.
    pub fn get_attr(&self, name: &str) -> &Value {
        match self {
            Value::Object(m) | Value::Map(m) => m.get(name).unwrap_or(&Value::Null),
            _ => &Value::Null,
        }
    }

    /// The string inside, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements of a list, set or tuple.
    pub fn elements(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// The value at `path`; null where the path leads nowhere, unknown when
    /// it passes through an unknown.
    pub fn at(&self, path: &Path) -> Value {
        let mut here = self;
        for step in path.steps() {
            if here.is_unknown() {
                return Value::unknown();
            }
            here = match (step, here) {
                (PathStep::Attr(k) | PathStep::Key(k), Value::Object(m) | Value::Map(m)) => {
                    m.get(k).unwrap_or(&Value::Null)
                }
                (PathStep::Index(i), Value::List(v) | Value::Tuple(v) | Value::Set(v)) => {
                    v.get(*i as usize).unwrap_or(&Value::Null)
                }
                _ => &Value::Null,
            };
        }
        here.clone()
    }

    /// A short name of what kind of value this is, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Unknown(_) => "unknown",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::Map(_) => "map",
            Value::Object(_) => "object",
            Value::Tuple(_) => "tuple",
        }
    }

    /// A string that orders values of one type deterministically; used to
    /// keep sets canonical.
    fn sort_key(&self) -> String {
        to_json_text(self)
    }

    /// The value as it would be written in HCL, for plan output and messages.
    pub fn to_hcl(&self) -> String {
        let mut out = String::new();
        write_hcl(self, &mut out, None);
        out
    }

    /// [`Value::to_hcl`] with every part at a path `hidden` says is
    /// sensitive written as `(sensitive value)` (null and unknown parts
    /// stay as they are: they give nothing away).
    pub fn to_hcl_redacted(&self, hidden: &dyn Fn(&Path) -> bool) -> String {
        let mut out = String::new();
        write_hcl(self, &mut out, Some((&Path::root(), hidden)));
        out
    }
}

/// Where a part being written is and what is hidden, when redacting.
type Redaction<'a> = Option<(&'a Path, &'a dyn Fn(&Path) -> bool)>;

fn write_hcl(v: &Value, out: &mut String, redact: Redaction<'_>) {
    if let Some((path, hidden)) = redact
        && !v.is_null()
        && !v.is_unknown()
        && hidden(path)
    {
        out.push_str("(sensitive value)");
        return;
    }
    let inner = |step: PathStep, v: &Value, out: &mut String| match redact {
        Some((path, hidden)) => write_hcl(v, out, Some((&path.push(step), hidden))),
        None => write_hcl(v, out, None),
    };
    match v {
        Value::Null => out.push_str("null"),
        Value::Unknown(_) => out.push_str("(known after apply)"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&quote(s)),
        Value::List(v) | Value::Set(v) | Value::Tuple(v) => {
            out.push('[');
            for (i, e) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inner(PathStep::Index(i as u64), e, out);
            }
            out.push(']');
        }
        Value::Map(m) | Value::Object(m) => {
            out.push('{');
            for (i, (k, e)) in m.iter().enumerate() {
                out.push_str(if i > 0 { ", " } else { " " });
                out.push_str(&quote_key(k));
                out.push_str(" = ");
                let step =
                    if matches!(v, Value::Map(_)) { PathStep::Key(k.clone()) } else { PathStep::Attr(k.clone()) };
                inner(step, e, out);
            }
            out.push_str(if m.is_empty() { "}" } else { " }" });
        }
    }
}

/// A string in double quotes with HCL escapes.
pub fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            '\t' => q.push_str("\\t"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A map key or attribute name, quoted only when it is not an identifier.
pub fn quote_key(k: &str) -> String {
    let ident = !k.is_empty()
        && k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ident { k.to_string() } else { quote(k) }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hcl())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_are_integers() {
        assert_eq!(Number::from_f64(3.0), Number::Int(3));
        assert_eq!(Number::from_f64(0.5), Number::Float(0.5));
        assert_eq!(Number::from_f64(1e300), Number::Float(1e300));
    }

    #[test]
    fn sets_are_canonical() {
        let a = Value::set(vec![Value::string("b"), Value::string("a"), Value::string("b")]);
        let b = Value::set(vec![Value::string("a"), Value::string("b")]);
        assert_eq!(a, b);
        assert_eq!(a.elements().unwrap().len(), 2);
    }

    #[test]
    fn at_follows_paths_and_unknowns() {
        let v = Value::object([
            ("keepers", Value::Map([("a".to_string(), Value::string("1"))].into_iter().collect())),
            ("hex", Value::unknown()),
        ]);
        assert_eq!(v.at(&Path::root().attr("keepers").key("a")), Value::string("1"));
        assert_eq!(v.at(&Path::root().attr("hex").key("x")), Value::unknown());
        assert_eq!(v.at(&Path::root().attr("missing")), Value::Null);
        assert!(!v.is_wholly_known());
    }

    #[test]
    fn renders_like_hcl() {
        let v = Value::object([
            ("a", Value::List(vec![Value::int(1), Value::string("x\"y")])),
            ("my key", Value::Bool(true)),
        ]);
        assert_eq!(v.to_hcl(), r#"{ a = [1, "x\"y"], "my key" = true }"#);
    }

    #[test]
    fn redacts_the_hidden_parts() {
        let v = Value::object([
            (
                "tags",
                Value::Map(
                    [("k".to_string(), Value::string("s3cret")), ("o".to_string(), Value::int(1))]
                        .into_iter()
                        .collect(),
                ),
            ),
            ("list", Value::List(vec![Value::Null, Value::string("s3cret")])),
        ]);
        let hidden =
            |p: &Path| p.starts_with(&Path::root().attr("tags").key("k")) || p.starts_with(&Path::root().attr("list"));
        assert_eq!(
            v.to_hcl_redacted(&hidden),
            r#"{ list = (sensitive value), tags = { k = (sensitive value), o = 1 } }"#
        );
        assert_eq!(Value::Null.to_hcl_redacted(&|_| true), "null");
    }
}
