//! The dynamic [`Value`] a provider works with, and its conversion to and
//! from the flattened wire `value` of the ABI.

use std::collections::BTreeMap;
use std::fmt;

use crate::bindings::cairn::provider::types as wire;
use crate::diag::{Path, PathStep};

/// A dynamic value: what configuration, plans and states are made of.
///
/// Null (absent) and [`Unknown`](Value::Unknown) (known only after apply)
/// are ordinary cases, not sentinels. Equality treats sets as unordered and
/// compares numbers by value (`Int(1) == Float(1.0)`).
#[derive(Clone, Debug, Default)]
pub enum Value {
    /// The absence of a value.
    #[default]
    Null,
    /// A value that will only be known after apply, with what is already
    /// known about it. Build it with [`Value::unknown`] and refine it with
    /// [`not_null`](Value::not_null), [`prefix`](Value::prefix),
    /// [`at_least`](Value::at_least), [`at_most`](Value::at_most),
    /// [`length`](Value::length): `Value::unknown().not_null().prefix("arn:")`.
    Unknown(Refinements),
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A UTF-8 string.
    String(String),
    /// An ordered sequence of elements of one type.
    List(Vec<Value>),
    /// An unordered collection of distinct elements of one type; the order
    /// of the vector carries no meaning.
    Set(Vec<Value>),
    /// String keys to elements of one type.
    Map(BTreeMap<String, Value>),
    /// Named attributes, each of its own type: resources, data sources and
    /// blocks are objects.
    Object(BTreeMap<String, Value>),
    /// A fixed-length sequence, each element of its own type.
    Tuple(Vec<Value>),
}

/// What is known about an unknown value. A planned refinement is a promise:
/// the host refuses a new state (or a second plan) that breaks it, so only
/// promise what apply is sure to keep. The default says nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Refinements {
    /// The value will not be null.
    pub not_null: bool,
    /// A string: the value will start with this.
    pub prefix: Option<String>,
    /// A number: the value will be at least this (inclusive).
    pub lower: Option<Number>,
    /// A number: the value will be at most this (inclusive).
    pub upper: Option<Number>,
    /// A collection: the fewest elements it will have.
    pub min_length: Option<u64>,
    /// A collection: the most elements it will have.
    pub max_length: Option<u64>,
}

/// A number: a 64-bit integer or a double, both exact.
///
/// Equality is numeric: `Int(2) == Float(2.0)`, and an `i64` is never
/// rounded through `f64` to be compared.
#[derive(Clone, Copy, Debug)]
pub enum Number {
    /// A whole number in the signed 64-bit range.
    Int(i64),
    /// Any other number (finite: the ABI has no NaN or infinities).
    Float(f64),
}

/// The shared null that accessors return for absent parts, so that lookups
/// can chain (`v.get_attr("a").get_key("b")`) without `Option` at each step.
static NULL: Value = Value::Null;

/// A wire value that could not be decoded (a host bug, never a user error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed value from the host: {}", self.0)
    }
}

impl std::error::Error for WireError {}

impl Number {
    /// The number as an `i64`, if it is whole and in range.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(i),
            Number::Float(f) => float_as_i64(f),
        }
    }

    /// The number as an `f64` (integers beyond 2^53 are rounded).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

/// `f` as an `i64` when that is exact. Negative zero stays a float so that
/// its sign survives a round trip.
fn float_as_i64(f: f64) -> Option<i64> {
    // 2^63 is exactly representable; i64::MAX is not, hence the strict `<`.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f) && !(f == 0.0 && f.is_sign_negative()) {
        Some(f as i64)
    } else {
        None
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Number {
        Number::Int(i)
    }
}

impl From<i32> for Number {
    fn from(i: i32) -> Number {
        Number::Int(i.into())
    }
}

impl From<f64> for Number {
    fn from(f: f64) -> Number {
        Number::Float(f)
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        match (*self, *other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a == b,
            (Number::Int(i), Number::Float(f)) | (Number::Float(f), Number::Int(i)) => {
                float_as_i64(f) == Some(i) || (f == 0.0 && i == 0)
            }
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            // Debug prints the shortest round-tripping form ("1e300", "0.1").
            Number::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Unknown(a), Unknown(b)) => a == b,
            (Bool(a), Bool(b)) => a == b,
            (Number(a), Number(b)) => a == b,
            (String(a), String(b)) => a == b,
            (List(a), List(b)) | (Tuple(a), Tuple(b)) => a == b,
            (Map(a), Map(b)) | (Object(a), Object(b)) => a == b,
            // Sets are small in practice; a quadratic comparison avoids
            // needing an order on values.
            (Set(a), Set(b)) => {
                a.len() == b.len() && a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x))
            }
            _ => false,
        }
    }
}

impl Value {
    /// An unknown value: known only after apply, nothing known about it yet.
    pub fn unknown() -> Value {
        Value::Unknown(Refinements::default())
    }

    /// Refine an unknown: it will not be null. A known value is returned
    /// as it is (it needs no promise).
    pub fn not_null(self) -> Value {
        self.refine(|r| r.not_null = true)
    }

    /// Refine an unknown string: it will start with `prefix` (and so is
    /// not null).
    pub fn prefix(self, prefix: impl Into<String>) -> Value {
        let prefix = prefix.into();
        self.refine(|r| {
            r.not_null = true;
            r.prefix = Some(prefix);
        })
    }

    /// Refine an unknown number: it will be at least `n`.
    pub fn at_least(self, n: impl Into<Number>) -> Value {
        let n = n.into();
        self.refine(|r| r.lower = Some(n))
    }

    /// Refine an unknown number: it will be at most `n`.
    pub fn at_most(self, n: impl Into<Number>) -> Value {
        let n = n.into();
        self.refine(|r| r.upper = Some(n))
    }

    /// Refine an unknown collection: it will have between `min` and `max`
    /// elements (equal bounds make its length known to the configuration,
    /// so `count = length(x)` can be planned).
    pub fn length(self, min: u64, max: u64) -> Value {
        self.refine(|r| {
            r.not_null = true;
            r.min_length = Some(min);
            r.max_length = Some(max);
        })
    }

    /// The refinements of an unknown value.
    pub fn refinements(&self) -> Option<&Refinements> {
        match self {
            Value::Unknown(r) => Some(r),
            _ => None,
        }
    }

    fn refine(mut self, f: impl FnOnce(&mut Refinements)) -> Value {
        if let Value::Unknown(r) = &mut self {
            f(r);
        }
        self
    }

    /// An object from `(name, value)` pairs.
    pub fn object<K: Into<String>, V: Into<Value>>(attrs: impl IntoIterator<Item = (K, V)>) -> Value {
        Value::Object(attrs.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }

    /// A map from `(key, value)` pairs.
    pub fn map<K: Into<String>, V: Into<Value>>(entries: impl IntoIterator<Item = (K, V)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }

    /// A list of the given elements.
    pub fn list<V: Into<Value>>(elements: impl IntoIterator<Item = V>) -> Value {
        Value::List(elements.into_iter().map(Into::into).collect())
    }

    /// A set of the given elements; duplicates are dropped.
    pub fn set<V: Into<Value>>(elements: impl IntoIterator<Item = V>) -> Value {
        let mut out: Vec<Value> = Vec::new();
        for v in elements.into_iter().map(Into::into) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        Value::Set(out)
    }

    /// A tuple of the given elements.
    pub fn tuple<V: Into<Value>>(elements: impl IntoIterator<Item = V>) -> Value {
        Value::Tuple(elements.into_iter().map(Into::into).collect())
    }

    /// Is this null?
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Is this value itself unknown? (See [`is_known`](Self::is_known) for
    /// "nothing inside is unknown".)
    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
    }

    /// Is this value wholly known: no unknown anywhere inside it?
    pub fn is_known(&self) -> bool {
        self.find_unknown().is_none()
    }

    /// The path of the first unknown inside this value, if there is one.
    pub fn find_unknown(&self) -> Option<Path> {
        match self {
            Value::Unknown(_) => Some(Path::root()),
            Value::List(xs) | Value::Set(xs) | Value::Tuple(xs) => {
                xs.iter().enumerate().find_map(|(i, x)| x.find_unknown().map(|p| p.prepend(PathStep::Index(i as u64))))
            }
            Value::Map(m) => m.iter().find_map(|(k, x)| x.find_unknown().map(|p| p.prepend(PathStep::Key(k.clone())))),
            Value::Object(m) => {
                m.iter().find_map(|(k, x)| x.find_unknown().map(|p| p.prepend(PathStep::Attr(k.clone()))))
            }
            _ => None,
        }
    }

    /// The attribute `name` of an object; null when absent or when this is
    /// not an object. (A map's element is found too: configuration writes
    /// both with the same syntax, and a lenient lookup costs nothing.)
    pub fn get_attr(&self, name: &str) -> &Value {
        match self {
            Value::Object(m) | Value::Map(m) => m.get(name).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// The element `key` of a map; null when absent or when this is not a
    /// map. (An object's attribute is found too, as with `get_attr`.)
    pub fn get_key(&self, key: &str) -> &Value {
        match self {
            Value::Map(m) | Value::Object(m) => m.get(key).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// The element at `index` of a list or tuple; null when out of range or
    /// when this is neither.
    pub fn get_index(&self, index: usize) -> &Value {
        match self {
            Value::List(xs) | Value::Tuple(xs) => xs.get(index).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// The part of this value at `path`; null when there is none.
    pub fn get_path(&self, path: &Path) -> &Value {
        path.steps().iter().fold(self, |v, step| match step {
            PathStep::Attr(a) => v.get_attr(a),
            PathStep::Key(k) => v.get_key(k),
            PathStep::Index(i) => usize::try_from(*i).map_or(&NULL, |i| v.get_index(i)),
        })
    }

    /// Set the attribute `name` of an object. A null becomes an empty object
    /// first, so a state can be built up from nothing.
    ///
    /// # Panics
    /// If this value is neither an object nor null: that is a bug in the
    /// provider, not something a user can cause.
    pub fn set_attr(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        if self.is_null() {
            *self = Value::Object(BTreeMap::new());
        }
        match self {
            Value::Object(m) => {
                m.insert(name.into(), value.into());
            }
            other => panic!("set_attr on a value that is not an object: {other:?}"),
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<Number> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The number as an `i64`, if this is a whole number in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The number as an `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(Number::as_f64)
    }

    /// The elements of a list, set or tuple.
    pub fn as_slice(&self) -> Option<&[Value]> {
        match self {
            Value::List(xs) | Value::Set(xs) | Value::Tuple(xs) => Some(xs),
            _ => None,
        }
    }

    /// The entries of a map or the attributes of an object.
    pub fn as_map(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Value::Map(m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Encode as the flattened wire value, with no sensitive marks.
    pub fn to_wire(&self) -> wire::Value {
        self.to_wire_marked(&|_| false)
    }

    /// Encode as the flattened wire value, marking sensitive each top-level
    /// attribute of an object for which `sensitive(name)` is true (the host
    /// redacts marked values wherever it shows them).
    pub(crate) fn to_wire_marked(&self, sensitive: &dyn Fn(&str) -> bool) -> wire::Value {
        // A null root travels as the empty node list, the ABI's spelling of
        // "no object" (e.g. a planned state of null meaning delete).
        let mut nodes = Vec::new();
        if !self.is_null() {
            match self {
                Value::Object(attrs) => {
                    let root = reserve(&mut nodes, false);
                    let children =
                        attrs.iter().map(|(k, v)| (k.clone(), encode(v, sensitive(k), &mut nodes))).collect();
                    nodes[root as usize].kind = wire::ValueNode::Object(children);
                }
                other => {
                    encode(other, false, &mut nodes);
                }
            }
        }
        wire::Value { nodes }
    }

    /// Decode a flattened wire value. Sensitive marks are dropped: the
    /// provider is trusted with the values it manages.
    pub fn from_wire(value: &wire::Value) -> Result<Value, WireError> {
        Value::from_wire_owned(value.clone())
    }

    /// [`Value::from_wire`] for a value the caller no longer needs: its
    /// strings move into the result instead of being copied, which spares
    /// the allocator two calls for each string of every request.
    pub fn from_wire_owned(mut value: wire::Value) -> Result<Value, WireError> {
        if value.nodes.is_empty() {
            return Ok(Value::Null);
        }
        let mut parents = parent_counts(&value.nodes);
        let mut budget = MAX_DECODED_NODES;
        Decoder { nodes: &mut value.nodes, parents: &mut parents, budget: &mut budget }.decode(0, 0, true)
    }
}

/// Push a placeholder node, to be filled once its children have indexes:
/// this keeps the root first, as the ABI requires.
fn reserve(nodes: &mut Vec<wire::Node>, sensitive: bool) -> u32 {
    nodes.push(wire::Node { kind: wire::ValueNode::Null, sensitive });
    u32::try_from(nodes.len() - 1).expect("a value of more than 4 billion nodes")
}

fn encode(value: &Value, sensitive: bool, nodes: &mut Vec<wire::Node>) -> u32 {
    let at = reserve(nodes, sensitive);
    let seq = |xs: &[Value], nodes: &mut Vec<wire::Node>| -> Vec<u32> {
        xs.iter().map(|x| encode(x, false, nodes)).collect()
    };
    let kind = match value {
        Value::Null => wire::ValueNode::Null,
        Value::Unknown(r) => wire::ValueNode::Unknown(refinements_to_wire(r)),
        Value::Bool(b) => wire::ValueNode::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => wire::ValueNode::Integer(i),
            None => wire::ValueNode::Float(n.as_f64()),
        },
        Value::String(s) => wire::ValueNode::Text(s.clone()),
        Value::List(xs) => wire::ValueNode::List(seq(xs, nodes)),
        Value::Set(xs) => wire::ValueNode::Set(seq(xs, nodes)),
        Value::Tuple(xs) => wire::ValueNode::Tuple(seq(xs, nodes)),
        Value::Map(m) => wire::ValueNode::Map(m.iter().map(|(k, v)| (k.clone(), encode(v, false, nodes))).collect()),
        Value::Object(m) => {
            wire::ValueNode::Object(m.iter().map(|(k, v)| (k.clone(), encode(v, false, nodes))).collect())
        }
    };
    nodes[at as usize].kind = kind;
    at
}

fn number_to_wire(n: Number) -> wire::Number {
    match n.as_i64() {
        Some(i) => wire::Number::Integer(i),
        None => wire::Number::Float(n.as_f64()),
    }
}

fn refinements_to_wire(r: &Refinements) -> wire::Refinements {
    let bound = |n: Number| wire::NumberBound { value: number_to_wire(n), inclusive: true };
    wire::Refinements {
        not_null: r.not_null,
        prefix: r.prefix.clone(),
        lower: r.lower.map(bound),
        upper: r.upper.map(bound),
        min_length: r.min_length,
        max_length: r.max_length,
    }
}

/// Exclusive bounds from the host are kept as inclusive ones: a provider
/// reading configuration only needs "at least about here".
fn refinements_from_wire(r: &wire::Refinements) -> Refinements {
    let number = |b: &wire::NumberBound| match b.value {
        wire::Number::Integer(i) => Number::Int(i),
        wire::Number::Float(f) => Number::Float(f),
    };
    Refinements {
        not_null: r.not_null,
        prefix: r.prefix.clone(),
        lower: r.lower.as_ref().map(number),
        upper: r.upper.as_ref().map(number),
        min_length: r.min_length,
        max_length: r.max_length,
    }
}

/// Deeper than this is not a real configuration; it is a cycle or an attack,
/// and recursing further would exhaust the component's stack.
const MAX_DEPTH: usize = 256;
/// Nodes may be shared on the wire (a DAG); this bounds the work of
/// expanding one into a tree.
const MAX_DECODED_NODES: usize = 1 << 20;

/// How many parents each node has, saturating at 2, the root's caller
/// counted as one: a node with one parent can give its strings away, a
/// shared one is copied each time.
fn parent_counts(nodes: &[wire::Node]) -> Vec<u8> {
    let mut parents = vec![0u8; nodes.len()];
    parents[0] = 1;
    let mut count = |i: u32| {
        if let Some(n) = parents.get_mut(i as usize) {
            *n = n.saturating_add(1).min(2);
        }
    };
    for node in nodes {
        match &node.kind {
            wire::ValueNode::List(xs) | wire::ValueNode::Set(xs) | wire::ValueNode::Tuple(xs) => {
                xs.iter().for_each(|&i| count(i))
            }
            wire::ValueNode::Map(xs) | wire::ValueNode::Object(xs) => xs.iter().for_each(|&(_, i)| count(i)),
            _ => {}
        }
    }
    parents
}

/// Decodes the nodes of one wire value, moving the strings out of nodes
/// that only one path from the root reaches.
struct Decoder<'a> {
    nodes: &'a mut [wire::Node],
    /// [`parent_counts`], with [`TAKEN`] for a node already moved out.
    parents: &'a mut [u8],
    budget: &'a mut usize,
}

/// Marks a node whose contents a [`Decoder`] moved out.
const TAKEN: u8 = u8::MAX;

impl Decoder<'_> {
    /// The value at node `at`; `owned` when every node on the way here had
    /// one parent, so that this one is reached by no other path.
    fn decode(&mut self, at: u32, depth: usize, owned: bool) -> Result<Value, WireError> {
        if depth > MAX_DEPTH {
            return Err(WireError(format!("nested deeper than {MAX_DEPTH} levels (a cycle?)")));
        }
        *self.budget = self
            .budget
            .checked_sub(1)
            .ok_or_else(|| WireError(format!("expands to more than {MAX_DECODED_NODES} nodes")))?;
        let len = self.nodes.len();
        let (Some(node), Some(parents)) = (self.nodes.get_mut(at as usize), self.parents.get_mut(at as usize)) else {
            return Err(WireError(format!("node index {at} out of range ({len} nodes)")));
        };
        // A node with one parent, below nodes with one parent each, is on
        // one path from the root: it is not read again (a cycle aside,
        // which is then an error). Below a shared node, everything is
        // read once for each way to it, and copied.
        let (kind, owned) = match *parents {
            TAKEN => return Err(WireError(format!("node {at} is reached twice (a cycle?)"))),
            0 | 1 if owned => {
                *parents = TAKEN;
                (std::mem::replace(&mut node.kind, wire::ValueNode::Null), true)
            }
            _ => (node.kind.clone(), false),
        };
        Ok(match kind {
            wire::ValueNode::Null => Value::Null,
            wire::ValueNode::Unknown(r) => Value::Unknown(refinements_from_wire(&r)),
            wire::ValueNode::Boolean(b) => Value::Bool(b),
            wire::ValueNode::Integer(i) => Value::Number(Number::Int(i)),
            wire::ValueNode::Float(f) => Value::Number(Number::Float(f)),
            wire::ValueNode::Text(s) => Value::String(s),
            wire::ValueNode::List(xs) => Value::List(self.seq(&xs, depth, owned)?),
            wire::ValueNode::Set(xs) => Value::Set(self.seq(&xs, depth, owned)?),
            wire::ValueNode::Tuple(xs) => Value::Tuple(self.seq(&xs, depth, owned)?),
            wire::ValueNode::Map(xs) => Value::Map(self.entries(xs, depth, owned)?),
            wire::ValueNode::Object(xs) => Value::Object(self.entries(xs, depth, owned)?),
        })
    }

    fn seq(&mut self, xs: &[u32], depth: usize, owned: bool) -> Result<Vec<Value>, WireError> {
        xs.iter().map(|&i| self.decode(i, depth + 1, owned)).collect()
    }

    fn entries(
        &mut self,
        xs: Vec<(String, u32)>,
        depth: usize,
        owned: bool,
    ) -> Result<BTreeMap<String, Value>, WireError> {
        let mut out = BTreeMap::new();
        for (k, i) in xs {
            let v = self.decode(i, depth + 1, owned)?;
            // One search for the key, not one to check and one to insert.
            match out.entry(k) {
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(v);
                }
                std::collections::btree_map::Entry::Occupied(slot) => {
                    return Err(WireError(format!("duplicate key {:?}", slot.key())));
                }
            }
        }
        Ok(out)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Number(Number::Int(i))
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Value {
        Value::Number(Number::Int(i.into()))
    }
}

impl From<u32> for Value {
    fn from(i: u32) -> Value {
        Value::Number(Number::Int(i.into()))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Number(Number::Float(f))
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<&Value> for Value {
    fn from(v: &Value) -> Value {
        v.clone()
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &Value) -> Value {
        Value::from_wire(&v.to_wire()).expect("decodes")
    }

    /// Compare structurally *and* by number representation, which `==`
    /// deliberately does not.
    fn same(a: &Value, b: &Value) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn nested_values_round_trip() {
        let v = Value::object([
            ("s", Value::from("text")),
            ("b", Value::from(true)),
            ("n", Value::Null),
            ("u", Value::unknown()),
            ("l", Value::list([Value::from(1), Value::object([("deep", Value::map([("k", Value::tuple([1.5]))]))])])),
            ("m", Value::map([("a", "x"), ("b", "y")])),
            ("t", Value::tuple([Value::from("x"), Value::from(2), Value::Null])),
            ("e", Value::list(Vec::<Value>::new())),
        ]);
        assert!(same(&round_trip(&v), &v), "{:?}", round_trip(&v));
    }

    #[test]
    fn integers_at_the_limits_round_trip_exactly() {
        for i in [i64::MAX, i64::MIN, 0, -1, 1 << 53, (1 << 53) + 1] {
            let wire = Value::from(i).to_wire();
            assert!(matches!(wire.nodes[0].kind, wire::ValueNode::Integer(x) if x == i));
            assert!(same(&round_trip(&Value::from(i)), &Value::from(i)));
        }
    }

    #[test]
    fn floats_round_trip_exactly() {
        for f in [0.1, 1e300, -2.5e-308, f64::MAX, f64::MIN_POSITIVE, -0.0, 9.3e18] {
            let back = round_trip(&Value::from(f));
            let Value::Number(Number::Float(g)) = back else { panic!("{f} came back as {back:?}") };
            assert_eq!(f.to_bits(), g.to_bits(), "{f}");
        }
    }

    #[test]
    fn whole_floats_travel_as_integers() {
        let wire = Value::from(42.0).to_wire();
        assert!(matches!(wire.nodes[0].kind, wire::ValueNode::Integer(42)));
        // 2^63 is whole but out of i64 range: it must stay a float.
        let wire = Value::from(9_223_372_036_854_775_808.0).to_wire();
        assert!(matches!(wire.nodes[0].kind, wire::ValueNode::Float(_)));
        assert_eq!(Value::from(42.0), Value::from(42));
        assert_ne!(Value::from(i64::MAX), Value::from(i64::MAX as f64));
    }

    #[test]
    fn null_is_the_empty_node_list_and_unknown_a_node() {
        assert!(Value::Null.to_wire().nodes.is_empty());
        assert!(round_trip(&Value::Null).is_null());
        let wire = Value::unknown().to_wire();
        assert!(matches!(wire.nodes[0].kind, wire::ValueNode::Unknown(_)));
        assert!(round_trip(&Value::unknown()).is_unknown());
        // A null node as the root also reads as null.
        let explicit = wire::Value { nodes: vec![wire::Node { kind: wire::ValueNode::Null, sensitive: false }] };
        assert!(Value::from_wire(&explicit).unwrap().is_null());
    }

    #[test]
    fn sets_are_unordered_and_distinct() {
        let a = Value::set(["x", "y", "x"]);
        assert_eq!(a.as_slice().unwrap().len(), 2);
        assert_eq!(a, Value::set(["y", "x"]));
        assert_ne!(a, Value::list(["x", "y"]));
        let back = round_trip(&a);
        assert!(matches!(&back, Value::Set(xs) if xs.len() == 2));
        assert_eq!(back, a);
    }

    #[test]
    fn root_comes_first_and_marks_follow_the_predicate() {
        let v = Value::object([("secret", Value::from("pw")), ("plain", Value::from("x"))]);
        let wire = v.to_wire_marked(&|name| name == "secret");
        let wire::ValueNode::Object(children) = &wire.nodes[0].kind else { panic!("root is not an object") };
        for (name, i) in children {
            assert_eq!(wire.nodes[*i as usize].sensitive, name == "secret", "{name}");
        }
        assert!(!wire.nodes[0].sensitive);
    }

    #[test]
    fn children_may_precede_parents_and_be_shared() {
        // Another encoder may lay nodes out differently; only indexes matter.
        let wire = wire::Value {
            nodes: vec![
                wire::Node { kind: wire::ValueNode::List(vec![1, 1]), sensitive: false },
                wire::Node { kind: wire::ValueNode::Text("a".into()), sensitive: true },
            ],
        };
        assert_eq!(Value::from_wire(&wire).unwrap(), Value::list(["a", "a"]));
        // A shared node's children are read once for each way to them,
        // though each has one parent.
        let node = |kind| wire::Node { kind, sensitive: false };
        let shared_subtree = wire::Value {
            nodes: vec![
                node(wire::ValueNode::List(vec![1, 1])),
                node(wire::ValueNode::Object(vec![("k".into(), 2)])),
                node(wire::ValueNode::Text("v".into())),
            ],
        };
        let inner = Value::object([("k", Value::from("v"))]);
        assert_eq!(Value::from_wire_owned(shared_subtree).unwrap(), Value::List(vec![inner.clone(), inner]));
    }

    #[test]
    fn malformed_wire_values_are_errors() {
        let node = |kind| wire::Node { kind, sensitive: false };
        let out_of_range = wire::Value { nodes: vec![node(wire::ValueNode::List(vec![7]))] };
        assert!(Value::from_wire(&out_of_range).is_err());
        let cycle = wire::Value { nodes: vec![node(wire::ValueNode::List(vec![0]))] };
        assert!(Value::from_wire(&cycle).unwrap_err().0.contains("deeper"));
        // Root → 1 → 2 → 1: node 2 has one parent, so only the cycle brings
        // the decoder back to it.
        let inner_cycle = wire::Value {
            nodes: vec![
                node(wire::ValueNode::List(vec![1])),
                node(wire::ValueNode::List(vec![2])),
                node(wire::ValueNode::Tuple(vec![1])),
            ],
        };
        let err = Value::from_wire(&inner_cycle).unwrap_err().0;
        assert!(err.contains("deeper") || err.contains("cycle"), "{err}");
        let dup = wire::Value {
            nodes: vec![
                node(wire::ValueNode::Object(vec![("a".into(), 1), ("a".into(), 1)])),
                node(wire::ValueNode::Boolean(true)),
            ],
        };
        assert!(Value::from_wire(&dup).unwrap_err().0.contains("duplicate"));
    }

    #[test]
    fn refined_unknowns_round_trip() {
        let v = Value::unknown().not_null().prefix("arn:");
        assert_eq!(v.refinements().and_then(|r| r.prefix.as_deref()), Some("arn:"));
        assert!(v.refinements().is_some_and(|r| r.not_null));
        assert_eq!(round_trip(&v), v);
        let n = Value::unknown().at_least(1).at_most(10i64);
        assert_eq!(round_trip(&n), n);
        let l = Value::unknown().length(2, 2);
        assert_eq!(round_trip(&l), l);
        assert_ne!(l, Value::unknown());
        // Known values need no promise.
        assert_eq!(Value::from("x").not_null(), Value::from("x"));
    }

    #[test]
    fn accessors_chain_through_absent_parts() {
        let v = Value::object([("m", Value::map([("k", Value::list([10, 20]))]))]);
        assert_eq!(v.get_attr("m").get_key("k").get_index(1).as_i64(), Some(20));
        assert!(v.get_attr("nope").get_key("k").get_index(3).is_null());
        assert_eq!(v.get_path(&Path::attr("m").key("k").index(0)).as_i64(), Some(10));
        let mut s = Value::Null;
        s.set_attr("id", "x");
        assert_eq!(s.get_attr("id").as_str(), Some("x"));
        assert_eq!(
            Value::object([("a", Value::list([Value::unknown()]))]).find_unknown(),
            Some(Path::attr("a").index(0))
        );
        assert!(Value::object([("a", 1)]).is_known());
    }
}
