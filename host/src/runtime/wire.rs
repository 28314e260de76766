//! Conversion between the host's data types ([`Value`], [`ProviderSchema`],
//! [`Diagnostic`], [`Path`]) and their flattened WIT forms.
//!
//! Encoding (host → provider) cannot fail. Decoding (provider → host) treats
//! the answer as hostile: every node index is checked, and a value that is
//! nested too deeply (a cycle) or expands to too many nodes is a
//! [`WireError`], never a panic or a hang. Every part decoded is paid for,
//! as it is built, from the answer's [`Budget`] of host memory: a node
//! shared on the wire (a "zip bomb") costs again for every reference, and
//! decoding stops with [`DecodeError::TooLarge`] at the first part over the
//! budget, so that an answer never takes more than the limit to refuse.

use std::collections::BTreeMap;
use std::fmt;

use super::bindings::cairn::provider::types as wit;
use crate::diag::{Diagnostic, Severity};
use crate::schema::{Attribute, Block, NestedBlock, NestedType, Nesting, ProviderSchema, Schema};
use crate::value::{Bound, Map, Number, Path, PathStep, Refinements, Type, Value};

/// The most nodes a flattened value, type or schema may have on the wire.
pub const MAX_WIRE_NODES: usize = 1 << 20;

/// The most nodes a decoded tree may have. Nodes may be shared on the wire
/// (a DAG), so this bounds the work of expanding one into a tree.
pub const MAX_DECODED_NODES: usize = 1 << 20;

/// The deepest nesting accepted. Real configurations are a few levels deep;
/// anything deeper is a cycle or an attack, and recursing further would risk
/// the host's stack. Matches the limit of the Rust provider SDK.
pub const MAX_DEPTH: usize = super::sandbox::MAX_ANSWER_DEPTH;

/// A provider answer that does not follow the wire format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

fn malformed<T, E: From<WireError>>(message: impl Into<String>) -> Result<T, E> {
    Err(WireError(message.into()).into())
}

/// Why a provider's answer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// It does not follow the wire format.
    Malformed(WireError),
    /// Decoded, it would take more host memory than its budget's limit
    /// (bytes); decoding stopped there.
    TooLarge {
        /// The budget's limit, in bytes.
        limit: u64,
    },
}

impl From<WireError> for DecodeError {
    fn from(e: WireError) -> DecodeError {
        DecodeError::Malformed(e)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Malformed(e) => e.fmt(f),
            DecodeError::TooLarge { limit } => write!(f, "decodes to more than the limit of {limit} bytes"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The host memory one answer may take once decoded: every value, string,
/// key, refinement, sensitive path and schema part is charged as it is
/// built, once for every reference to it (a node shared on the wire is
/// decoded again for each). What an answer's values, marks or schemas
/// spend together is held to one limit, so several values in one answer
/// (the objects of an import) cannot each take it whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    limit: u64,
    spent: u64,
}

impl Budget {
    /// A budget of `limit` bytes (the sandbox's `max_answer_bytes`).
    pub fn new(limit: u64) -> Budget {
        Budget { limit, spent: 0 }
    }

    /// The bytes charged so far: what the parts decoded until now take.
    #[cfg(test)]
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Pays for a part of `bytes` about to be built, or refuses it (and
    /// leaves `spent` as it was) when it would go over the limit.
    fn charge(&mut self, bytes: u64) -> Result<(), DecodeError> {
        match self.spent.checked_add(bytes) {
            Some(spent) if spent <= self.limit => {
                self.spent = spent;
                Ok(())
            }
            _ => Err(DecodeError::TooLarge { limit: self.limit }),
        }
    }
}

/// What a [`Value`] takes in the host, beside what its parts take.
const VALUE_BYTES: u64 = std::mem::size_of::<Value>() as u64;
/// What a map or object entry's key takes, beside its bytes (its value is
/// counted as a value).
const KEY_BYTES: u64 = std::mem::size_of::<String>() as u64;
/// What the refinements of an unknown take, beside a prefix's bytes.
const REFINEMENTS_BYTES: u64 = std::mem::size_of::<Refinements>() as u64;

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/// Encodes a value: root first, children after their parent, no sensitive
/// marks (the provider knows its own schema). Null is the empty node list.
pub fn value_to_wire(value: &Value) -> wit::Value {
    let mut nodes = Vec::new();
    if !value.is_null() {
        encode_value(value, &mut nodes);
    }
    wit::Value { nodes }
}

fn encode_value(value: &Value, nodes: &mut Vec<wit::Node>) -> u32 {
    // Reserve this node's slot first so that the root ends up at index 0.
    let at = nodes.len();
    nodes.push(wit::Node { kind: wit::ValueNode::Null, sensitive: false });
    let kind = match value {
        Value::Null => wit::ValueNode::Null,
        Value::Unknown(r) => wit::ValueNode::Unknown(refinements_to_wire(r.as_deref())),
        Value::Bool(b) => wit::ValueNode::Boolean(*b),
        Value::Number(Number::Int(i)) => wit::ValueNode::Integer(*i),
        Value::Number(Number::Float(f)) => wit::ValueNode::Float(*f),
        Value::String(s) => wit::ValueNode::Text(s.clone()),
        Value::List(xs) => wit::ValueNode::List(encode_all(xs, nodes)),
        Value::Set(xs) => wit::ValueNode::Set(encode_all(xs, nodes)),
        Value::Tuple(xs) => wit::ValueNode::Tuple(encode_all(xs, nodes)),
        Value::Map(m) => wit::ValueNode::Map(encode_entries(m, nodes)),
        Value::Object(m) => wit::ValueNode::Object(encode_entries(m, nodes)),
    };
    nodes[at].kind = kind;
    index_u32(at)
}

fn refinements_to_wire(r: Option<&Refinements>) -> wit::Refinements {
    let none = Refinements::default();
    let r = r.unwrap_or(&none);
    let bound = |b: &Bound| wit::NumberBound {
        value: match b.value {
            Number::Int(i) => wit::Number::Integer(i),
            Number::Float(f) => wit::Number::Float(f),
        },
        inclusive: b.inclusive,
    };
    wit::Refinements {
        not_null: r.not_null,
        prefix: r.prefix.clone(),
        lower: r.lower.as_ref().map(bound),
        upper: r.upper.as_ref().map(bound),
        min_length: r.min_length,
        max_length: r.max_length,
    }
}

/// Decodes refinements; a bound that is not a finite number is malformed.
fn refinements_from_wire(r: &wit::Refinements) -> Result<Refinements, WireError> {
    let bound = |b: &wit::NumberBound| -> Result<Bound, WireError> {
        let value = match b.value {
            wit::Number::Integer(i) => Number::Int(i),
            wit::Number::Float(f) if f.is_finite() => Number::from_f64(f),
            wit::Number::Float(f) => return malformed(format!("the bound {f} is not finite")),
        };
        Ok(Bound { value, inclusive: b.inclusive })
    };
    Ok(Refinements {
        not_null: r.not_null,
        prefix: r.prefix.clone(),
        lower: r.lower.as_ref().map(bound).transpose()?,
        upper: r.upper.as_ref().map(bound).transpose()?,
        min_length: r.min_length,
        max_length: r.max_length,
    })
}

/// The paths of the nodes a provider marked sensitive in a value it
/// returned (outermost marks only: everything inside a marked node is
/// secret anyway), each paid for from `budget` (a node shared on the wire
/// has a path for every reference to it). Call after
/// [`value_from_wire_within`] accepted the value, so the indexes are known
/// to be good; a bad one ends the walk.
pub fn sensitive_marks(value: &wit::Value, budget: &mut Budget) -> Result<Vec<Path>, DecodeError> {
    struct Walk<'a> {
        nodes: &'a [wit::Node],
        budget: &'a mut Budget,
        out: Vec<Path>,
    }
    impl Walk<'_> {
        fn walk(&mut self, at: u32, path: Path, depth: usize) -> Result<(), DecodeError> {
            let Some(node) = self.nodes.get(at as usize) else { return Ok(()) };
            if depth > MAX_DEPTH {
                return Ok(());
            }
            if node.sensitive {
                self.budget.charge(path_bytes(&path))?;
                self.out.push(path);
                return Ok(());
            }
            match &node.kind {
                wit::ValueNode::List(xs) | wit::ValueNode::Set(xs) | wit::ValueNode::Tuple(xs) => {
                    for (i, x) in xs.iter().enumerate() {
                        self.walk(*x, path.index(i), depth + 1)?;
                    }
                }
                wit::ValueNode::Map(xs) => {
                    for (k, x) in xs {
                        self.walk(*x, path.key(k), depth + 1)?;
                    }
                }
                wit::ValueNode::Object(xs) => {
                    for (k, x) in xs {
                        self.walk(*x, path.attr(k), depth + 1)?;
                    }
                }
                _ => {}
            }
            Ok(())
        }
    }
    // Most answers mark nothing: no walk at all then.
    if !value.nodes.iter().any(|n| n.sensitive) {
        return Ok(Vec::new());
    }
    let mut walk = Walk { nodes: &value.nodes, budget, out: Vec::new() };
    walk.walk(0, Path::root(), 0)?;
    Ok(walk.out)
}

/// What a path takes in the host: its steps and their names' bytes.
fn path_bytes(path: &Path) -> u64 {
    let steps = path.steps().iter().map(|step| match step {
        PathStep::Attr(name) | PathStep::Key(name) => STEP_BYTES + name.len() as u64,
        PathStep::Index(_) => STEP_BYTES,
    });
    steps.fold(std::mem::size_of::<Path>() as u64, u64::saturating_add)
}

/// What one step of a path takes, beside a name's bytes.
const STEP_BYTES: u64 = std::mem::size_of::<PathStep>() as u64;

fn encode_all(values: &[Value], nodes: &mut Vec<wit::Node>) -> Vec<u32> {
    values.iter().map(|v| encode_value(v, nodes)).collect()
}

fn encode_entries(entries: &Map, nodes: &mut Vec<wit::Node>) -> Vec<(String, u32)> {
    entries.iter().map(|(k, v)| (k.clone(), encode_value(v, nodes))).collect()
}

/// A node index as the wire's `u32`. The host never builds values of more
/// than 4 billion nodes (they would not fit in memory first).
fn index_u32(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

/// Decodes a value a provider returned, with no limit on its size but
/// [`MAX_DECODED_NODES`]. Sensitive marks are read apart, by
/// [`sensitive_marks`].
#[cfg(test)]
pub fn value_from_wire(value: &wit::Value) -> Result<Value, DecodeError> {
    value_from_wire_within(value, MAX_DEPTH, &mut Budget::new(u64::MAX))
}

/// Decodes a value a provider returned, no deeper than `max_depth` (the
/// sandbox's `max_answer_depth`; never more than [`MAX_DEPTH`]), paying
/// for every node from `budget` before it is built.
pub fn value_from_wire_within(value: &wit::Value, max_depth: usize, budget: &mut Budget) -> Result<Value, DecodeError> {
    if value.nodes.is_empty() {
        return Ok(Value::Null);
    }
    check_node_count(value.nodes.len())?;
    let mut decoder =
        Decoder { nodes: &value.nodes, budget: MAX_DECODED_NODES, max_depth: max_depth.min(MAX_DEPTH), bytes: budget };
    decoder.value(0, 0)
}

fn check_node_count(count: usize) -> Result<(), WireError> {
    if count > MAX_WIRE_NODES {
        return malformed(format!("{count} nodes, more than the limit of {MAX_WIRE_NODES}"));
    }
    Ok(())
}

/// Walks a flattened node list with a depth limit, a budget of nodes, and
/// the answer's budget of bytes.
struct Decoder<'a, 'b, N> {
    nodes: &'a [N],
    budget: usize,
    max_depth: usize,
    bytes: &'b mut Budget,
}

impl<'a, N> Decoder<'a, '_, N> {
    /// The node at `at`, after checking the index, the depth and the budget.
    fn node(&mut self, at: u32, depth: usize) -> Result<&'a N, WireError> {
        if depth > self.max_depth {
            return malformed(format!("nested deeper than the limit of {} levels (a cycle?)", self.max_depth));
        }
        self.budget = match self.budget.checked_sub(1) {
            Some(left) => left,
            None => return malformed(format!("expands to more than {MAX_DECODED_NODES} nodes")),
        };
        match self.nodes.get(at as usize) {
            Some(node) => Ok(node),
            None => malformed(format!("node index {at} out of range ({} nodes)", self.nodes.len())),
        }
    }
}

impl Decoder<'_, '_, wit::Node> {
    fn value(&mut self, at: u32, depth: usize) -> Result<Value, DecodeError> {
        let node = self.node(at, depth)?;
        // Paid for before anything of it is built: a bomb stops at the
        // first node over the budget, never after its expansion.
        self.bytes.charge(value_bytes(&node.kind))?;
        Ok(match &node.kind {
            wit::ValueNode::Null => Value::Null,
            wit::ValueNode::Unknown(r) => Value::refined(refinements_from_wire(r)?),
            wit::ValueNode::Boolean(b) => Value::Bool(*b),
            wit::ValueNode::Integer(i) => Value::Number(Number::Int(*i)),
            wit::ValueNode::Float(f) if f.is_finite() => Value::Number(Number::from_f64(*f)),
            wit::ValueNode::Float(f) => return malformed(format!("the float {f} is not finite")),
            wit::ValueNode::Text(s) => Value::String(s.clone()),
            wit::ValueNode::List(xs) => Value::List(self.values(xs, depth)?),
            // Sets are kept canonical in the host (sorted, without duplicates).
            wit::ValueNode::Set(xs) => Value::set(self.values(xs, depth)?),
            wit::ValueNode::Tuple(xs) => Value::Tuple(self.values(xs, depth)?),
            wit::ValueNode::Map(xs) => Value::Map(self.entries(xs, depth)?),
            wit::ValueNode::Object(xs) => Value::Object(self.entries(xs, depth)?),
        })
    }

    fn values(&mut self, indexes: &[u32], depth: usize) -> Result<Vec<Value>, DecodeError> {
        indexes.iter().map(|&i| self.value(i, depth + 1)).collect()
    }

    fn entries(&mut self, entries: &[(String, u32)], depth: usize) -> Result<Map, DecodeError> {
        // Sized up front: collected through `Result`, it would start with
        // room for four entries, and most objects have one or two.
        let mut out = Vec::with_capacity(entries.len());
        for (key, i) in entries {
            out.push((key.clone(), self.value(*i, depth + 1)?));
        }
        // Sorted once, whatever order the provider sent (inserting one by
        // one would shift the entries after each key: quadratic in a
        // hostile answer's size).
        out.sort_by(|(a, _), (b, _)| a.cmp(b));
        if let Some(pair) = out.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return malformed(format!("duplicate key {:?}", pair[0].0));
        }
        // Sorted and without duplicates, as just checked: taken as it is
        // (`collect` would sort it again into a new vector).
        Ok(Map::from_sorted_store_unchecked(out))
    }
}

/// What one node takes in the host once decoded, beside its children: the
/// [`Value`] itself, a string's bytes, an unknown's refinements, and the
/// keys of a map or object's entries.
fn value_bytes(kind: &wit::ValueNode) -> u64 {
    let own = match kind {
        wit::ValueNode::Text(s) => s.len() as u64,
        wit::ValueNode::Unknown(r) if refined(r) => {
            REFINEMENTS_BYTES.saturating_add(r.prefix.as_ref().map_or(0, |p| p.len() as u64))
        }
        wit::ValueNode::Map(entries) | wit::ValueNode::Object(entries) => {
            entries.iter().map(|(key, _)| KEY_BYTES.saturating_add(key.len() as u64)).fold(0, u64::saturating_add)
        }
        _ => 0,
    };
    VALUE_BYTES.saturating_add(own)
}

/// Whether an unknown's refinements say something (and so are kept, boxed).
fn refined(r: &wit::Refinements) -> bool {
    r.not_null
        || r.prefix.is_some()
        || r.lower.is_some()
        || r.upper.is_some()
        || r.min_length.is_some()
        || r.max_length.is_some()
}

// ---------------------------------------------------------------------------
// Types and schemas
// ---------------------------------------------------------------------------

/// Decodes a flattened type, paying for every node from `budget`.
pub fn type_from_wire(ty: &wit::TypeExpr, budget: &mut Budget) -> Result<Type, DecodeError> {
    if ty.nodes.is_empty() {
        return malformed("an empty type");
    }
    check_node_count(ty.nodes.len())?;
    let mut decoder = Decoder { nodes: &ty.nodes, budget: MAX_DECODED_NODES, max_depth: MAX_DEPTH, bytes: budget };
    decoder.ty(0, 0)
}

/// What a type takes in the host: a [`Type`] for each node (types nested
/// in a list, set or map are boxed), and the names of object attributes.
const TYPE_BYTES: u64 = std::mem::size_of::<Type>() as u64;

/// What one type node takes in the host, beside its children.
fn type_node_bytes(node: &wit::TypeNode) -> u64 {
    let names = match node {
        wit::TypeNode::Object(attrs) => {
            attrs.iter().map(|(name, _)| KEY_BYTES.saturating_add(name.len() as u64)).fold(0, u64::saturating_add)
        }
        _ => 0,
    };
    TYPE_BYTES.saturating_add(names)
}

/// What a type already built takes in the host, counted as
/// [`type_node_bytes`] counts a decoded one.
fn type_bytes(ty: &Type) -> u64 {
    let inner = match ty {
        Type::List(t) | Type::Set(t) | Type::Map(t) => type_bytes(t),
        Type::Object(attrs) => attrs
            .iter()
            .map(|(name, t)| KEY_BYTES.saturating_add(name.len() as u64).saturating_add(type_bytes(t)))
            .fold(0, u64::saturating_add),
        Type::Tuple(ts) => ts.iter().map(type_bytes).fold(0, u64::saturating_add),
        Type::Bool | Type::Number | Type::String | Type::Dynamic => 0,
    };
    TYPE_BYTES.saturating_add(inner)
}

impl Decoder<'_, '_, wit::TypeNode> {
    fn ty(&mut self, at: u32, depth: usize) -> Result<Type, DecodeError> {
        let node = self.node(at, depth)?;
        self.bytes.charge(type_node_bytes(node))?;
        Ok(match node {
            wit::TypeNode::Boolean => Type::Bool,
            wit::TypeNode::Number => Type::Number,
            wit::TypeNode::Text => Type::String,
            wit::TypeNode::Dynamic => Type::Dynamic,
            wit::TypeNode::List(t) => Type::List(Box::new(self.ty(*t, depth + 1)?)),
            wit::TypeNode::Set(t) => Type::Set(Box::new(self.ty(*t, depth + 1)?)),
            wit::TypeNode::Map(t) => Type::Map(Box::new(self.ty(*t, depth + 1)?)),
            wit::TypeNode::Object(attrs) => {
                let mut out = BTreeMap::new();
                for (name, t) in attrs {
                    let ty = self.ty(*t, depth + 1)?;
                    if out.insert(name.clone(), ty).is_some() {
                        return malformed(format!("duplicate object attribute {name:?}"));
                    }
                }
                Type::Object(out)
            }
            wit::TypeNode::Tuple(ts) => {
                Type::Tuple(ts.iter().map(|t| self.ty(*t, depth + 1)).collect::<Result<_, _>>()?)
            }
        })
    }
}

/// Decodes everything a provider offers, paying for every part from
/// `budget` (blocks may be shared on the wire too).
pub fn provider_schema_from_wire(
    schema: &wit::ProviderSchema,
    budget: &mut Budget,
) -> Result<ProviderSchema, DecodeError> {
    Ok(ProviderSchema {
        provider: schema_from_wire(&schema.provider, budget).map_err(|e| within("the provider configuration", e))?,
        resources: named_schemas(&schema.resources, "resource type", budget)?,
        data_sources: named_schemas(&schema.data_sources, "data source", budget)?,
        ephemeral_resources: BTreeMap::new(),
    })
}

/// Decodes the ephemeral resource types of the optional
/// `ephemeral-resources` export's `schemas`, paying from `budget`.
pub fn ephemeral_schemas_from_wire(
    list: &[(String, wit::Schema)],
    budget: &mut Budget,
) -> Result<BTreeMap<String, Schema>, DecodeError> {
    named_schemas(list, "ephemeral resource type", budget)
}

fn named_schemas(
    list: &[(String, wit::Schema)],
    what: &str,
    budget: &mut Budget,
) -> Result<BTreeMap<String, Schema>, DecodeError> {
    let mut out = BTreeMap::new();
    for (name, schema) in list {
        budget.charge(KEY_BYTES.saturating_add(name.len() as u64))?;
        let decoded = schema_from_wire(schema, budget).map_err(|e| within(&format!("{what} {name:?}"), e))?;
        if out.insert(name.clone(), decoded).is_some() {
            return malformed(format!("duplicate {what} {name:?}"));
        }
    }
    Ok(out)
}

/// A malformed schema's error, saying whose schema it is.
fn within(what: &str, error: DecodeError) -> DecodeError {
    match error {
        DecodeError::Malformed(e) => DecodeError::Malformed(WireError(format!("in the schema of {what}: {}", e.0))),
        too_large @ DecodeError::TooLarge { .. } => too_large,
    }
}

/// What a block takes in the host, beside its description and contents.
const BLOCK_BYTES: u64 = std::mem::size_of::<Block>() as u64;
/// What an attribute takes in its block, beside its name, description and type.
const ATTRIBUTE_BYTES: u64 = std::mem::size_of::<(String, Attribute)>() as u64;
/// What a nested block type takes in its block, beside its name and block.
const NESTED_BLOCK_BYTES: u64 = std::mem::size_of::<(String, NestedBlock)>() as u64;

/// Decodes one schema: `blocks[0]` is the top-level block. Every block,
/// attribute and type is paid for from `budget` as it is built.
pub fn schema_from_wire(schema: &wit::Schema, budget: &mut Budget) -> Result<Schema, DecodeError> {
    if schema.blocks.is_empty() {
        return malformed("a schema without a top-level block");
    }
    check_node_count(schema.blocks.len())?;
    let mut decoder = Decoder { nodes: &schema.blocks, budget: MAX_DECODED_NODES, max_depth: MAX_DEPTH, bytes: budget };
    Ok(Schema { version: schema.version, block: decoder.block(0, 0)? })
}

impl Decoder<'_, '_, wit::Block> {
    fn block(&mut self, at: u32, depth: usize) -> Result<Block, DecodeError> {
        let wire = self.node(at, depth)?;
        self.bytes.charge(BLOCK_BYTES.saturating_add(wire.description.len() as u64))?;
        let mut block = Block { description: wire.description.clone(), ..Block::default() };
        for attr in &wire.attributes {
            let named = [attr.name.len(), attr.description.len()].map(|n| n as u64);
            self.bytes.charge(named.into_iter().fold(ATTRIBUTE_BYTES, u64::saturating_add))?;
            let mut decoded = attribute_from_wire(attr, self.bytes)?;
            if let Some(nested) = &attr.nested {
                // The objects' attributes are a block of the schema's list
                // that holds attributes only.
                let inner = self.block(nested.block, depth + 1)?;
                if !inner.blocks.is_empty() {
                    return malformed(format!("the nested attribute {:?} holds nested blocks", attr.name));
                }
                let nested = NestedType { nesting: nesting_from_wire(nested.nesting), block: inner };
                // Built from the block just paid for, so no larger than
                // it: paid for once built.
                decoded.ty = nested.implied_type();
                self.bytes.charge(type_bytes(&decoded.ty))?;
                decoded.nested = Some(nested);
            }
            if block.attributes.insert(attr.name.clone(), decoded).is_some() {
                return malformed(format!("duplicate attribute {:?}", attr.name));
            }
        }
        for nested in &wire.blocks {
            if block.attributes.contains_key(&nested.name) || block.blocks.contains_key(&nested.name) {
                return malformed(format!("duplicate attribute or block {:?}", nested.name));
            }
            self.bytes.charge(NESTED_BLOCK_BYTES.saturating_add(nested.name.len() as u64))?;
            let decoded = NestedBlock {
                nesting: nesting_from_wire(nested.nesting),
                block: self.block(nested.block, depth + 1)?,
                min_items: nested.min_items,
                max_items: nested.max_items,
            };
            block.blocks.insert(nested.name.clone(), decoded);
        }
        Ok(block)
    }
}

/// An attribute, but for its nested type (which needs the schema's other
/// blocks): the type of a nested attribute is left dynamic here.
fn attribute_from_wire(attr: &wit::Attribute, budget: &mut Budget) -> Result<Attribute, DecodeError> {
    let ty = if attr.nested.is_some() {
        Type::Dynamic
    } else {
        type_from_wire(&attr.type_, budget).map_err(|e| match e {
            DecodeError::Malformed(e) => {
                DecodeError::Malformed(WireError(format!("attribute {:?}: {}", attr.name, e.0)))
            }
            too_large @ DecodeError::TooLarge { .. } => too_large,
        })?
    };
    Ok(Attribute {
        ty,
        nested: None,
        write_only: attr.write_only,
        required: attr.required,
        optional: attr.optional,
        computed: attr.computed,
        sensitive: attr.sensitive,
        description: attr.description.clone(),
    })
}

fn nesting_from_wire(nesting: wit::Nesting) -> Nesting {
    match nesting {
        wit::Nesting::Single => Nesting::Single,
        wit::Nesting::List => Nesting::List,
        wit::Nesting::Set => Nesting::Set,
        wit::Nesting::Map => Nesting::Map,
    }
}

// ---------------------------------------------------------------------------
// Paths and diagnostics
// ---------------------------------------------------------------------------

/// Decodes an attribute path.
pub fn path_from_wire(steps: &[wit::PathStep]) -> Path {
    Path::from_steps(
        steps
            .iter()
            .map(|step| match step {
                wit::PathStep::Attribute(name) => PathStep::Attr(name.clone()),
                wit::PathStep::Key(key) => PathStep::Key(key.clone()),
                wit::PathStep::Index(i) => PathStep::Index(*i),
            })
            .collect(),
    )
}

/// Decodes a diagnostic. An empty path means the whole object, which the
/// host spells `None`; providers know nothing of files, so no location.
pub fn diagnostic_from_wire(diag: &wit::Diagnostic) -> Diagnostic {
    Diagnostic {
        severity: match diag.severity {
            wit::Severity::Error => Severity::Error,
            wit::Severity::Warning => Severity::Warning,
        },
        summary: diag.summary.clone(),
        detail: diag.detail.clone(),
        location: None,
        path: (!diag.path.is_empty()).then(|| path_from_wire(&diag.path)),
    }
}

/// Decodes a list of diagnostics.
pub fn diagnostics_from_wire(diags: &[wit::Diagnostic]) -> Vec<Diagnostic> {
    diags.iter().map(diagnostic_from_wire).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host never sends paths, only decodes them; tests need both ways.
    fn path_to_wire(path: &Path) -> Vec<wit::PathStep> {
        path.steps()
            .iter()
            .map(|step| match step {
                PathStep::Attr(name) => wit::PathStep::Attribute(name.clone()),
                PathStep::Key(key) => wit::PathStep::Key(key.clone()),
                PathStep::Index(i) => wit::PathStep::Index(*i),
            })
            .collect()
    }

    fn node(kind: wit::ValueNode) -> wit::Node {
        wit::Node { kind, sensitive: false }
    }

    /// A budget that never runs out.
    fn unlimited() -> Budget {
        Budget::new(u64::MAX)
    }

    fn round_trip(v: &Value) -> Value {
        value_from_wire(&value_to_wire(v)).expect("decodes")
    }

    #[test]
    fn values_round_trip() {
        let v = Value::object([
            ("s", Value::string("x")),
            ("n", Value::Null),
            ("u", Value::unknown()),
            ("b", Value::Bool(true)),
            ("l", Value::List(vec![Value::int(1), Value::unknown()])),
            ("set", Value::set(vec![Value::string("b"), Value::string("a")])),
            ("t", Value::Tuple(vec![Value::Bool(false), Value::string("y")])),
            ("m", Value::Map([("k".to_string(), Value::Object(Map::new()))].into_iter().collect())),
        ]);
        assert_eq!(round_trip(&v), v);
        assert_eq!(value_to_wire(&v).nodes.len(), 16);
    }

    #[test]
    fn null_is_the_empty_node_list() {
        assert!(value_to_wire(&Value::Null).nodes.is_empty());
        assert_eq!(round_trip(&Value::Null), Value::Null);
        assert_eq!(round_trip(&Value::unknown()), Value::unknown());
    }

    #[test]
    fn numbers_are_exact() {
        for i in [i64::MIN, -1, 0, 1, 1 << 53, (1 << 53) + 1, i64::MAX] {
            assert_eq!(round_trip(&Value::int(i)), Value::int(i));
        }
        for f in [0.1, -2.5, 1e300, f64::MIN_POSITIVE, 9.3e18] {
            let v = Value::Number(Number::Float(f));
            let Value::Number(Number::Float(back)) = round_trip(&v) else { panic!("{f} is no longer a float") };
            assert_eq!(back.to_bits(), f.to_bits());
        }
        // A whole float from a provider is the host's integer.
        let wire = wit::Value { nodes: vec![node(wit::ValueNode::Float(3.0))] };
        assert_eq!(value_from_wire(&wire).unwrap(), Value::int(3));
    }

    #[test]
    fn sensitive_marks_are_not_sent_and_read_apart() {
        let wire = value_to_wire(&Value::object([("a", Value::string("x"))]));
        assert!(wire.nodes.iter().all(|n| !n.sensitive));
        assert!(sensitive_marks(&wire, &mut unlimited()).unwrap().is_empty());
        let marked = wit::Value { nodes: vec![wit::Node { kind: wit::ValueNode::Boolean(true), sensitive: true }] };
        assert_eq!(value_from_wire(&marked).unwrap(), Value::Bool(true));
        assert_eq!(sensitive_marks(&marked, &mut unlimited()).unwrap(), vec![Path::root()]);
        let nested = wit::Value {
            nodes: vec![
                node(wit::ValueNode::Object(vec![("a".into(), 1), ("b".into(), 2)])),
                node(wit::ValueNode::List(vec![3])),
                node(wit::ValueNode::Text("public".into())),
                wit::Node { kind: wit::ValueNode::Text("secret".into()), sensitive: true },
            ],
        };
        assert_eq!(sensitive_marks(&nested, &mut unlimited()).unwrap(), vec![Path::root().attr("a").index(0)]);
    }

    #[test]
    fn refinements_round_trip() {
        let r = Refinements {
            not_null: true,
            prefix: Some("arn:".into()),
            lower: Some(Bound::inclusive(Number::Int(i64::MIN))),
            upper: Some(Bound { value: Number::Float(2.5), inclusive: false }),
            min_length: Some(1),
            max_length: Some(3),
        };
        let v = Value::object([("u", Value::refined(r)), ("plain", Value::unknown())]);
        assert_eq!(round_trip(&v), v);
        let bad = wit::Refinements {
            lower: Some(wit::NumberBound { value: wit::Number::Float(f64::NAN), inclusive: true }),
            ..refinements_to_wire(None)
        };
        let err = value_from_wire(&wit::Value { nodes: vec![node(wit::ValueNode::Unknown(bad))] }).unwrap_err();
        assert!(err.to_string().contains("not finite"), "{err}");
    }

    #[test]
    fn nested_attribute_types_decode() {
        let wire_login = wit::Attribute {
            nested: Some(wit::NestedType { nesting: wit::Nesting::List, block: 1 }),
            type_: wit::TypeExpr { nodes: vec![] },
            ..attr("login", vec![])
        };
        let password = wit::Attribute { write_only: true, ..attr("password", vec![wit::TypeNode::Text]) };
        let schema = wit::Schema {
            version: 0,
            blocks: vec![
                wit::Block { attributes: vec![wire_login.clone()], ..empty_block() },
                wit::Block { attributes: vec![password], ..empty_block() },
            ],
        };
        let block = schema_from_wire(&schema, &mut unlimited()).unwrap().block;
        let login = &block.attributes["login"];
        let nested = login.nested.as_ref().expect("a nested type");
        assert_eq!(nested.nesting, Nesting::List);
        assert!(nested.block.attributes["password"].write_only);
        assert_eq!(login.ty, Type::List(Box::new(Type::Object([("password".to_string(), Type::String)].into()))));
        assert_eq!(block.implied_type(), Type::Object([("login".to_string(), login.ty.clone())].into()));
        // The objects of a nested attribute hold attributes, not blocks.
        let inner_block =
            wit::NestedBlock { name: "b".into(), nesting: wit::Nesting::Single, block: 2, min_items: 0, max_items: 0 };
        let bad = wit::Schema {
            version: 0,
            blocks: vec![
                wit::Block {
                    attributes: vec![wit::Attribute {
                        nested: Some(wit::NestedType { nesting: wit::Nesting::Single, block: 1 }),
                        ..wire_login
                    }],
                    ..empty_block()
                },
                wit::Block { blocks: vec![inner_block], ..empty_block() },
                empty_block(),
            ],
        };
        assert!(schema_from_wire(&bad, &mut unlimited()).unwrap_err().to_string().contains("holds nested blocks"));
    }

    #[test]
    fn shared_and_backward_children_are_fine() {
        // Another encoder may lay nodes out differently; only indexes matter.
        let wire =
            wit::Value { nodes: vec![node(wit::ValueNode::Text("a".into())), node(wit::ValueNode::List(vec![0, 0]))] };
        // The root is node 0, a string; node 1 is unreachable and ignored.
        assert_eq!(value_from_wire(&wire).unwrap(), Value::string("a"));
        let wire =
            wit::Value { nodes: vec![node(wit::ValueNode::List(vec![1, 1])), node(wit::ValueNode::Text("a".into()))] };
        assert_eq!(value_from_wire(&wire).unwrap(), Value::List(vec![Value::string("a"), Value::string("a")]));
    }

    #[test]
    fn malformed_values_are_rejected() {
        let reject = |nodes: Vec<wit::Node>| value_from_wire(&wit::Value { nodes }).unwrap_err().to_string();
        assert!(reject(vec![node(wit::ValueNode::List(vec![7]))]).contains("out of range"));
        assert!(reject(vec![node(wit::ValueNode::Object(vec![("a".into(), 3)]))]).contains("out of range"));
        assert!(reject(vec![node(wit::ValueNode::List(vec![0]))]).contains("deeper"));
        assert!(reject(vec![node(wit::ValueNode::Float(f64::NAN))]).contains("not finite"));
        assert!(reject(vec![node(wit::ValueNode::Float(f64::INFINITY))]).contains("not finite"));
        let dup = vec![
            node(wit::ValueNode::Map(vec![("k".into(), 1), ("k".into(), 1)])),
            node(wit::ValueNode::Boolean(true)),
        ];
        assert!(reject(dup).contains("duplicate key"));
    }

    #[test]
    fn exponential_sharing_is_rejected() {
        // Each node is a list of the next one twice: 2^64 nodes once expanded.
        let nodes = (0..64u32)
            .map(|i| node(wit::ValueNode::List(vec![i + 1, i + 1])))
            .chain([node(wit::ValueNode::Null)])
            .collect();
        let err = value_from_wire(&wit::Value { nodes }).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }

    #[test]
    fn a_shared_node_is_paid_for_at_every_reference() {
        // [t, t, { k = t }] with t = "abc" held once on the wire.
        let wire = wit::Value {
            nodes: vec![
                node(wit::ValueNode::List(vec![1, 1, 2])),
                node(wit::ValueNode::Text("abc".into())),
                node(wit::ValueNode::Object(vec![("k".into(), 1)])),
            ],
        };
        let mut budget = unlimited();
        let value = value_from_wire_within(&wire, MAX_DEPTH, &mut budget).unwrap();
        assert_eq!(value.at(&Path::root().index(2).attr("k")), Value::string("abc"));
        let text = VALUE_BYTES + 3;
        let object = VALUE_BYTES + KEY_BYTES + 1 + text;
        assert_eq!(budget.spent(), VALUE_BYTES + 2 * text + object);
    }

    #[test]
    fn a_shared_node_bomb_stops_at_the_limit_before_it_is_expanded() {
        // The issue's bomb: 4 MB on the wire, a million references to one
        // 256-byte string, about 280 MiB once expanded.
        let bomb = wit::Value {
            nodes: vec![node(wit::ValueNode::List(vec![1; 1_000_000])), node(wit::ValueNode::Text("s".repeat(256)))],
        };
        let expanded = VALUE_BYTES + 1_000_000 * (VALUE_BYTES + 256);
        let limit = 32 << 20;
        let mut budget = Budget::new(limit);
        let err = value_from_wire_within(&bomb, MAX_DEPTH, &mut budget).unwrap_err();
        assert_eq!(err, DecodeError::TooLarge { limit });
        // What was built before it stopped: under the limit, and short of it
        // by less than one more string.
        assert!(budget.spent() <= limit && budget.spent() + VALUE_BYTES + 256 > limit, "{}", budget.spent());
        assert!(budget.spent() * 8 < expanded, "{} of {expanded}", budget.spent());
    }

    #[test]
    fn refinements_are_paid_for() {
        // A plain unknown is a value; one with refinements keeps them boxed,
        // with its prefix. A million references to one refined unknown
        // cost that a million times.
        let refined = wit::Refinements { prefix: Some("p".repeat(100)), ..refinements_to_wire(None) };
        let wire = wit::Value {
            nodes: vec![
                node(wit::ValueNode::List(vec![1, 2])),
                node(wit::ValueNode::Unknown(refinements_to_wire(None))),
                node(wit::ValueNode::Unknown(refined.clone())),
            ],
        };
        let mut budget = unlimited();
        value_from_wire_within(&wire, MAX_DEPTH, &mut budget).unwrap();
        assert_eq!(budget.spent(), 3 * VALUE_BYTES + REFINEMENTS_BYTES + 100);
        let bomb = wit::Value {
            nodes: vec![node(wit::ValueNode::List(vec![1; 1_000_000])), node(wit::ValueNode::Unknown(refined))],
        };
        let mut budget = Budget::new(32 << 20);
        assert_eq!(
            value_from_wire_within(&bomb, MAX_DEPTH, &mut budget),
            Err(DecodeError::TooLarge { limit: 32 << 20 })
        );
    }

    #[test]
    fn marks_are_paid_for_from_the_answer_s_budget() {
        // Ten references to one marked node: ten paths, one step each.
        let wire = wit::Value {
            nodes: vec![
                node(wit::ValueNode::List(vec![1; 10])),
                wit::Node { kind: wit::ValueNode::Boolean(true), sensitive: true },
            ],
        };
        let mut budget = unlimited();
        value_from_wire_within(&wire, MAX_DEPTH, &mut budget).unwrap();
        let decoded = budget.spent();
        let marks = sensitive_marks(&wire, &mut budget).unwrap();
        assert_eq!(marks.len(), 10);
        let path = std::mem::size_of::<Path>() as u64 + STEP_BYTES;
        assert_eq!(budget.spent(), decoded + 10 * path);
        // What is left after the value pays for five paths, not ten.
        let mut budget = Budget::new(decoded + 5 * path);
        value_from_wire_within(&wire, MAX_DEPTH, &mut budget).unwrap();
        assert_eq!(sensitive_marks(&wire, &mut budget), Err(DecodeError::TooLarge { limit: decoded + 5 * path }));
        assert_eq!(budget.spent(), decoded + 5 * path);
    }

    #[test]
    fn a_schema_of_shared_blocks_stops_at_the_limit() {
        // Twenty blocks, each nesting the next twice: a million blocks once
        // expanded, each with a described attribute of a shared type.
        let described = wit::Attribute {
            description: "d".repeat(100),
            ..attr("a", vec![wit::TypeNode::Tuple(vec![1, 1]), wit::TypeNode::Text])
        };
        let blocks = (0..20u32)
            .map(|i| {
                let nested = |name: &str| wit::NestedBlock {
                    name: name.into(),
                    nesting: wit::Nesting::List,
                    block: i + 1,
                    min_items: 0,
                    max_items: 0,
                };
                wit::Block {
                    attributes: vec![described.clone()],
                    blocks: vec![nested("x"), nested("y")],
                    ..empty_block()
                }
            })
            .chain([empty_block()])
            .collect();
        let schema = wit::Schema { version: 0, blocks };
        let limit = 1 << 20;
        let mut budget = Budget::new(limit);
        assert_eq!(schema_from_wire(&schema, &mut budget).unwrap_err(), DecodeError::TooLarge { limit });
        assert!(budget.spent() <= limit);
        // One block of it, and what it costs.
        let one = wit::Schema { version: 0, blocks: vec![wit::Block { attributes: vec![described], ..empty_block() }] };
        let mut budget = unlimited();
        schema_from_wire(&one, &mut budget).unwrap();
        let ty = 3 * TYPE_BYTES;
        assert_eq!(budget.spent(), BLOCK_BYTES + ATTRIBUTE_BYTES + 1 + 100 + ty);
    }

    #[test]
    fn the_depth_limit_can_be_lowered_but_not_raised() {
        // [[[[null]]]]: four levels below the root.
        let nodes: Vec<_> =
            (0..4u32).map(|i| node(wit::ValueNode::List(vec![i + 1]))).chain([node(wit::ValueNode::Null)]).collect();
        let value = wit::Value { nodes };
        assert!(value_from_wire_within(&value, 4, &mut unlimited()).is_ok());
        let err = value_from_wire_within(&value, 3, &mut unlimited()).unwrap_err();
        assert_eq!(err.to_string(), "nested deeper than the limit of 3 levels (a cycle?)");
        let deep: Vec<_> =
            (0..300u32).map(|i| node(wit::ValueNode::List(vec![i + 1]))).chain([node(wit::ValueNode::Null)]).collect();
        let err = value_from_wire_within(&wit::Value { nodes: deep }, 10_000, &mut unlimited()).unwrap_err();
        assert!(err.to_string().contains(&format!("limit of {MAX_DEPTH} levels")), "{err}");
    }

    #[test]
    fn oversized_node_lists_are_rejected() {
        let nodes = vec![node(wit::ValueNode::Null); MAX_WIRE_NODES + 1];
        assert!(value_from_wire(&wit::Value { nodes }).unwrap_err().to_string().contains("limit"));
    }

    fn attr(name: &str, ty: Vec<wit::TypeNode>) -> wit::Attribute {
        wit::Attribute {
            name: name.into(),
            type_: wit::TypeExpr { nodes: ty },
            nested: None,
            write_only: false,
            required: false,
            optional: true,
            computed: true,
            sensitive: true,
            description: "an attribute".into(),
        }
    }

    fn empty_block() -> wit::Block {
        wit::Block { attributes: vec![], blocks: vec![], description: String::new() }
    }

    #[test]
    fn schemas_decode() {
        let object = wit::TypeNode::Object(vec![("a".into(), 1), ("b".into(), 2)]);
        let rule =
            wit::NestedBlock { name: "rule".into(), nesting: wit::Nesting::Map, block: 1, min_items: 1, max_items: 3 };
        let schema = wit::Schema {
            version: 2,
            blocks: vec![
                wit::Block {
                    attributes: vec![attr("keepers", vec![wit::TypeNode::Map(1), wit::TypeNode::Text])],
                    blocks: vec![rule],
                    description: "top".into(),
                },
                wit::Block {
                    attributes: vec![attr(
                        "o",
                        vec![object, wit::TypeNode::Tuple(vec![3]), wit::TypeNode::Set(3), wit::TypeNode::Number],
                    )],
                    ..empty_block()
                },
            ],
        };
        let provider = wit::ProviderSchema {
            provider: wit::Schema { version: 0, blocks: vec![empty_block()] },
            resources: vec![("x_thing".into(), schema)],
            data_sources: vec![],
        };
        let decoded = provider_schema_from_wire(&provider, &mut unlimited()).unwrap();
        let thing = &decoded.resources["x_thing"];
        assert_eq!(thing.version, 2);
        assert_eq!(thing.block.description, "top");
        let keepers = &thing.block.attributes["keepers"];
        assert_eq!(keepers.ty, Type::Map(Box::new(Type::String)));
        assert!(keepers.optional && keepers.computed && keepers.sensitive && !keepers.required);
        let rule = &thing.block.blocks["rule"];
        assert_eq!((rule.nesting, rule.min_items, rule.max_items), (Nesting::Map, 1, 3));
        assert_eq!(
            rule.block.attributes["o"].ty,
            Type::Object(
                [
                    ("a".to_string(), Type::Tuple(vec![Type::Number])),
                    ("b".to_string(), Type::Set(Box::new(Type::Number))),
                ]
                .into()
            )
        );
    }

    #[test]
    fn malformed_schemas_are_rejected() {
        let nested = |block| wit::NestedBlock {
            name: "n".into(),
            nesting: wit::Nesting::List,
            block,
            min_items: 0,
            max_items: 0,
        };
        let with_blocks = |blocks| wit::Schema { version: 0, blocks };
        let cyclic = with_blocks(vec![wit::Block { blocks: vec![nested(0)], ..empty_block() }]);
        assert!(schema_from_wire(&cyclic, &mut unlimited()).unwrap_err().to_string().contains("deeper"));
        let dangling = with_blocks(vec![wit::Block { blocks: vec![nested(5)], ..empty_block() }]);
        assert!(schema_from_wire(&dangling, &mut unlimited()).unwrap_err().to_string().contains("out of range"));
        assert!(schema_from_wire(&with_blocks(vec![]), &mut unlimited()).is_err());
        let bad_type = with_blocks(vec![wit::Block {
            attributes: vec![attr("a", vec![wit::TypeNode::List(9)])],
            ..empty_block()
        }]);
        let err = schema_from_wire(&bad_type, &mut unlimited()).unwrap_err().to_string();
        assert!(err.contains("attribute \"a\"") && err.contains("out of range"), "{err}");
        let type_cycle =
            with_blocks(vec![wit::Block { attributes: vec![attr("a", vec![wit::TypeNode::Set(0)])], ..empty_block() }]);
        assert!(schema_from_wire(&type_cycle, &mut unlimited()).unwrap_err().to_string().contains("deeper"));
        let twice = with_blocks(vec![wit::Block {
            attributes: vec![attr("a", vec![wit::TypeNode::Text]), attr("a", vec![wit::TypeNode::Text])],
            ..empty_block()
        }]);
        assert!(schema_from_wire(&twice, &mut unlimited()).unwrap_err().to_string().contains("duplicate"));
        let provider = wit::ProviderSchema {
            provider: with_blocks(vec![empty_block()]),
            resources: vec![("r".into(), with_blocks(vec![])), ("r".into(), with_blocks(vec![]))],
            data_sources: vec![],
        };
        assert!(
            provider_schema_from_wire(&provider, &mut unlimited())
                .unwrap_err()
                .to_string()
                .contains("resource type \"r\"")
        );
    }

    #[test]
    fn paths_and_diagnostics_decode() {
        let path = Path::root().attr("keepers").key("a").index(3);
        assert_eq!(path_from_wire(&path_to_wire(&path)), path);
        let diag = wit::Diagnostic {
            severity: wit::Severity::Warning,
            summary: "careful".into(),
            detail: "more".into(),
            path: path_to_wire(&path),
        };
        let decoded = diagnostic_from_wire(&diag);
        assert_eq!(decoded, Diagnostic::warning("careful").with_detail("more").at_path(path));
        let whole = wit::Diagnostic { severity: wit::Severity::Error, path: vec![], ..diag };
        let decoded = diagnostic_from_wire(&whole);
        assert!(decoded.is_error() && decoded.path.is_none() && decoded.location.is_none());
    }
}
