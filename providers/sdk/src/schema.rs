//! Schema declarations — types, attributes, blocks — and their flattened wire
//! encodings; also the schema-directed reading of a JSON state that
//! `upgrade-state` needs.

use std::collections::BTreeMap;

use crate::bindings::cairn::provider::types as wire;
use crate::diag::{Diagnostic, Path};
use crate::value::{Number, Value};

/// The type of an attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// true or false.
    Bool,
    /// Any number, integer or float.
    Number,
    /// A UTF-8 string.
    String,
    /// Any type at all: the value decides.
    Dynamic,
    /// A list whose elements have the inner type.
    List(Box<Type>),
    /// A set whose elements have the inner type.
    Set(Box<Type>),
    /// A map from strings to the inner type.
    Map(Box<Type>),
    /// An object with exactly these attributes.
    Object(BTreeMap<String, Type>),
    /// A tuple with exactly these element types.
    Tuple(Vec<Type>),
}

impl Type {
    /// `list(element)`.
    pub fn list(element: Type) -> Type {
        Type::List(Box::new(element))
    }

    /// `set(element)`.
    pub fn set(element: Type) -> Type {
        Type::Set(Box::new(element))
    }

    /// `map(element)`.
    pub fn map(element: Type) -> Type {
        Type::Map(Box::new(element))
    }

    /// `object({name = type, …})`.
    pub fn object<K: Into<String>>(attrs: impl IntoIterator<Item = (K, Type)>) -> Type {
        Type::Object(attrs.into_iter().map(|(k, t)| (k.into(), t)).collect())
    }

    /// `tuple([type, …])`.
    pub fn tuple(elements: impl IntoIterator<Item = Type>) -> Type {
        Type::Tuple(elements.into_iter().collect())
    }

    /// Encode as the flattened wire `type-expr`, root first.
    pub(crate) fn to_wire(&self) -> wire::TypeExpr {
        let mut nodes = Vec::new();
        encode_type(self, &mut nodes);
        wire::TypeExpr { nodes }
    }
}

fn encode_type(ty: &Type, nodes: &mut Vec<wire::TypeNode>) -> u32 {
    // A placeholder first, so that the parent precedes its children.
    nodes.push(wire::TypeNode::Dynamic);
    let at = nodes.len() - 1;
    let node = match ty {
        Type::Bool => wire::TypeNode::Boolean,
        Type::Number => wire::TypeNode::Number,
        Type::String => wire::TypeNode::Text,
        Type::Dynamic => wire::TypeNode::Dynamic,
        Type::List(t) => wire::TypeNode::List(encode_type(t, nodes)),
        Type::Set(t) => wire::TypeNode::Set(encode_type(t, nodes)),
        Type::Map(t) => wire::TypeNode::Map(encode_type(t, nodes)),
        Type::Object(attrs) => {
            wire::TypeNode::Object(attrs.iter().map(|(k, t)| (k.clone(), encode_type(t, nodes))).collect())
        }
        Type::Tuple(ts) => wire::TypeNode::Tuple(ts.iter().map(|t| encode_type(t, nodes)).collect()),
    };
    nodes[at] = node;
    at as u32
}

/// One attribute of a block: its type and flags. Start from a type
/// constructor, then say who sets it:
///
/// ```
/// use cairn_sdk::{Attr, Type};
/// let filename = Attr::string().required().description("Path of the file");
/// let id = Attr::string().computed();
/// let mode = Attr::string().optional().computed(); // set it, or the provider will
/// let tags = Attr::map(Type::String).optional();
/// # let _ = (filename, id, mode, tags);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// The attribute's type.
    pub ty: Type,
    /// The configuration must set it.
    pub required: bool,
    /// The configuration may set it.
    pub optional: bool,
    /// The provider may set it when the configuration leaves it null.
    pub computed: bool,
    /// Never display the value; the SDK also marks it sensitive on the wire.
    pub sensitive: bool,
    /// Sent on plan and apply, never stored: planned and returned null
    /// ([`PlanResponse::from_proposed`](crate::PlanResponse::from_proposed)
    /// does that). For secrets that must not persist.
    pub write_only: bool,
    /// A nested attribute type: the value is an object of this block's
    /// attributes, or a list, set or map of such objects. Declared like a
    /// nested block (see [`Attr::nested`]), but the attribute as a whole
    /// may be null, unknown, optional, computed or sensitive.
    pub nested: Option<(Nesting, Block)>,
    /// Shown to users by `cairn providers schema`.
    pub description: String,
}

impl Attr {
    /// An attribute of type `ty`, with no flags yet: add at least one of
    /// [`required`](Self::required), [`optional`](Self::optional),
    /// [`computed`](Self::computed).
    pub fn of(ty: Type) -> Attr {
        Attr {
            ty,
            required: false,
            optional: false,
            computed: false,
            sensitive: false,
            write_only: false,
            nested: None,
            description: String::new(),
        }
    }

    /// A nested attribute type: objects of `block`'s attributes, gathered
    /// as `nesting` says. Written in configuration as an expression
    /// (`login = { user = "a" }`, `rules = [{ port = 80 }]`), unlike a
    /// nested block. `block` holds attributes only (nested ones too).
    ///
    /// ```
    /// use cairn_sdk::{Attr, Block, Nesting};
    /// let rules = Attr::nested(Nesting::List, Block::new().attribute("port", Attr::number().required())).optional();
    /// # let _ = rules;
    /// ```
    pub fn nested(nesting: Nesting, block: Block) -> Attr {
        let object = Type::Object(block.attributes.iter().map(|(n, a)| (n.clone(), a.ty.clone())).collect());
        let ty = match nesting {
            Nesting::Single => object,
            Nesting::List => Type::list(object),
            Nesting::Set => Type::set(object),
            Nesting::Map => Type::map(object),
        };
        Attr { nested: Some((nesting, block)), ..Attr::of(ty) }
    }

    /// Write-only: the configured value reaches plan and apply, and is
    /// never stored in state or plan.
    pub fn write_only(mut self) -> Attr {
        self.write_only = true;
        self
    }

    /// A string attribute.
    pub fn string() -> Attr {
        Attr::of(Type::String)
    }

    /// A number attribute.
    pub fn number() -> Attr {
        Attr::of(Type::Number)
    }

    /// A boolean attribute.
    pub fn bool() -> Attr {
        Attr::of(Type::Bool)
    }

    /// An attribute of any type (the value decides).
    pub fn dynamic() -> Attr {
        Attr::of(Type::Dynamic)
    }

    /// A list attribute.
    pub fn list(element: Type) -> Attr {
        Attr::of(Type::list(element))
    }

    /// A set attribute.
    pub fn set(element: Type) -> Attr {
        Attr::of(Type::set(element))
    }

    /// A map attribute.
    pub fn map(element: Type) -> Attr {
        Attr::of(Type::map(element))
    }

    /// The configuration must set it.
    pub fn required(mut self) -> Attr {
        self.required = true;
        self.optional = false;
        self
    }

    /// The configuration may set it.
    pub fn optional(mut self) -> Attr {
        self.optional = true;
        self.required = false;
        self
    }

    /// The provider sets it when the configuration does not (alone: only
    /// the provider sets it).
    pub fn computed(mut self) -> Attr {
        self.computed = true;
        self
    }

    /// Never display the value.
    pub fn sensitive(mut self) -> Attr {
        self.sensitive = true;
        self
    }

    /// The text shown to users.
    pub fn description(mut self, text: impl Into<String>) -> Attr {
        self.description = text.into();
        self
    }

    fn to_wire(&self, name: &str, out: &mut Vec<wire::Block>) -> wire::Attribute {
        let nested = self
            .nested
            .as_ref()
            .map(|(nesting, block)| wire::NestedType { nesting: nesting_to_wire(*nesting), block: block.encode(out) });
        wire::Attribute {
            name: name.to_owned(),
            // The host derives a nested attribute's type from `nested`.
            type_: if nested.is_some() { wire::TypeExpr { nodes: Vec::new() } } else { self.ty.to_wire() },
            nested,
            required: self.required,
            optional: self.optional,
            computed: self.computed,
            sensitive: self.sensitive,
            write_only: self.write_only,
            description: self.description.clone(),
        }
    }
}

fn nesting_to_wire(nesting: Nesting) -> wire::Nesting {
    match nesting {
        Nesting::Single => wire::Nesting::Single,
        Nesting::List => wire::Nesting::List,
        Nesting::Set => wire::Nesting::Set,
        Nesting::Map => wire::Nesting::Map,
    }
}

/// How repeated nested blocks are gathered into a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// At most one block; an object, or null when absent.
    Single,
    /// An ordered list of objects.
    List,
    /// A set of objects.
    Set,
    /// Labelled blocks (`name "key" { … }`): a map of objects.
    Map,
}

/// A nested block type: `rule { … }` inside a resource.
#[derive(Clone, Debug, PartialEq)]
pub struct NestedBlock {
    /// How repeated blocks are gathered.
    pub nesting: Nesting,
    /// The block's contents.
    pub block: Block,
    /// The fewest blocks the configuration must write.
    pub min_items: u32,
    /// The most blocks the configuration may write (0 = no limit).
    pub max_items: u32,
}

impl NestedBlock {
    fn new(nesting: Nesting, block: Block) -> NestedBlock {
        NestedBlock { nesting, block, min_items: 0, max_items: 0 }
    }

    /// At most one block, read as an object (null when absent).
    pub fn single(block: Block) -> NestedBlock {
        NestedBlock::new(Nesting::Single, block)
    }

    /// Any number of blocks, read as a list of objects.
    pub fn list(block: Block) -> NestedBlock {
        NestedBlock::new(Nesting::List, block)
    }

    /// Any number of blocks, read as a set of objects.
    pub fn set(block: Block) -> NestedBlock {
        NestedBlock::new(Nesting::Set, block)
    }

    /// Labelled blocks, read as a map of objects.
    pub fn map(block: Block) -> NestedBlock {
        NestedBlock::new(Nesting::Map, block)
    }

    /// The configuration must write at least `n` blocks.
    pub fn min_items(mut self, n: u32) -> NestedBlock {
        self.min_items = n;
        self
    }

    /// The configuration may write at most `n` blocks (0 = no limit).
    pub fn max_items(mut self, n: u32) -> NestedBlock {
        self.max_items = n;
        self
    }
}

/// The contents of a block: attributes and nested block types, in
/// declaration order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    /// The attributes, by name.
    pub attributes: Vec<(String, Attr)>,
    /// The nested block types, by name.
    pub blocks: Vec<(String, NestedBlock)>,
    /// Shown to users by `cairn providers schema`.
    pub description: String,
}

impl Block {
    /// An empty block.
    pub fn new() -> Block {
        Block::default()
    }

    /// Add an attribute.
    pub fn attribute(mut self, name: impl Into<String>, attr: Attr) -> Block {
        self.attributes.push((name.into(), attr));
        self
    }

    /// Add a nested block type.
    pub fn block(mut self, name: impl Into<String>, nested: NestedBlock) -> Block {
        self.blocks.push((name.into(), nested));
        self
    }

    /// Set the text shown to users.
    pub fn description(mut self, text: impl Into<String>) -> Block {
        self.description = text.into();
        self
    }

    /// The attribute `name`, if declared.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attributes.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }

    /// `value` (an object of this block) with every write-only attribute,
    /// at any depth, null: what a plan or a new state must hold.
    pub fn null_write_only(&self, value: &Value) -> Value {
        let Value::Object(m) = value else { return value.clone() };
        let mut out = m.clone();
        let each = |block: &Block, nesting: Nesting, v: &Value| match (nesting, v) {
            (Nesting::Single, o) => block.null_write_only(o),
            (_, Value::List(xs)) => Value::List(xs.iter().map(|o| block.null_write_only(o)).collect()),
            (_, Value::Set(xs)) => Value::Set(xs.iter().map(|o| block.null_write_only(o)).collect()),
            (_, Value::Map(m)) => Value::Map(m.iter().map(|(k, o)| (k.clone(), block.null_write_only(o))).collect()),
            (_, other) => other.clone(),
        };
        for (name, v) in out.iter_mut() {
            if let Some(attr) = self.attr(name) {
                match &attr.nested {
                    _ if attr.write_only => *v = Value::Null,
                    Some((nesting, block)) => *v = each(block, *nesting, v),
                    None => {}
                }
            } else if let Some((_, nb)) = self.blocks.iter().find(|(n, _)| n == name) {
                *v = each(&nb.block, nb.nesting, v);
            }
        }
        Value::Object(out)
    }

    /// Append this block and its nested blocks to `out`, this one first;
    /// returns its index.
    fn encode(&self, out: &mut Vec<wire::Block>) -> u32 {
        out.push(wire::Block { attributes: Vec::new(), blocks: Vec::new(), description: String::new() });
        let at = out.len() - 1;
        let blocks = self
            .blocks
            .iter()
            .map(|(name, nb)| wire::NestedBlock {
                name: name.clone(),
                nesting: nesting_to_wire(nb.nesting),
                block: nb.block.encode(out),
                min_items: nb.min_items,
                max_items: nb.max_items,
            })
            .collect();
        let attributes = self.attributes.iter().map(|(n, a)| a.to_wire(n, out)).collect();
        out[at] = wire::Block { attributes, blocks, description: self.description.clone() };
        at as u32
    }

    /// Schema mistakes, each as a sentence prefixed with `at`.
    fn check(&self, at: &str, errors: &mut Vec<String>) {
        let mut names: Vec<&str> = Vec::new();
        for (name, attr) in &self.attributes {
            if names.contains(&name.as_str()) {
                errors.push(format!("{at}: `{name}` is declared twice"));
            }
            names.push(name);
            if !(attr.required || attr.optional || attr.computed) {
                errors.push(format!("{at}: attribute `{name}` is none of required, optional and computed"));
            }
            if attr.required && attr.computed {
                errors.push(format!("{at}: attribute `{name}` cannot be both required and computed"));
            }
            if attr.write_only && attr.computed {
                errors.push(format!("{at}: attribute `{name}` cannot be both write-only and computed"));
            }
            if let Some((_, block)) = &attr.nested {
                if !block.blocks.is_empty() {
                    errors.push(format!("{at}: nested attribute `{name}` holds blocks; it may hold attributes only"));
                }
                block.check(&format!("{at}.{name}"), errors);
            }
        }
        for (name, nb) in &self.blocks {
            if names.contains(&name.as_str()) {
                errors.push(format!("{at}: `{name}` is declared twice"));
            }
            names.push(name);
            if nb.max_items != 0 && nb.min_items > nb.max_items {
                errors.push(format!("{at}: block `{name}` has min_items > max_items"));
            }
            if nb.nesting == Nesting::Single && nb.max_items > 1 {
                errors.push(format!("{at}: single block `{name}` cannot allow more than one item"));
            }
            nb.block.check(&format!("{at}.{name}"), errors);
        }
    }

    /// Read a JSON object laid out as this block into a [`Value`].
    fn read_json(&self, json: &serde_json::Value, path: &Path) -> Result<Value, Diagnostic> {
        let serde_json::Value::Object(fields) = json else {
            return Err(json_error(path, "an object"));
        };
        if let Some(extra) = fields.keys().find(|k| self.attr(k).is_none() && !self.blocks.iter().any(|(n, _)| n == *k))
        {
            return Err(Diagnostic::error("Stored state does not match the schema")
                .detail(format!("`{extra}` is not an attribute or block of this schema version"))
                .at(path.clone().then_attr(extra.as_str())));
        }
        let mut out = BTreeMap::new();
        for (name, attr) in &self.attributes {
            let p = path.clone().then_attr(name.as_str());
            out.insert(
                name.clone(),
                value_from_json(fields.get(name).unwrap_or(&serde_json::Value::Null), &attr.ty, &p)?,
            );
        }
        for (name, nb) in &self.blocks {
            let p = path.clone().then_attr(name.as_str());
            let json = fields.get(name).unwrap_or(&serde_json::Value::Null);
            let v = match (nb.nesting, json) {
                (_, serde_json::Value::Null) => Value::Null,
                (Nesting::Single, j) => nb.block.read_json(j, &p)?,
                (Nesting::List | Nesting::Set, serde_json::Value::Array(items)) => {
                    let items = items
                        .iter()
                        .enumerate()
                        .map(|(i, j)| nb.block.read_json(j, &p.clone().index(i as u64)))
                        .collect::<Result<Vec<_>, _>>()?;
                    if nb.nesting == Nesting::List { Value::List(items) } else { Value::Set(items) }
                }
                (Nesting::Map, serde_json::Value::Object(items)) => Value::Map(
                    items
                        .iter()
                        .map(|(k, j)| Ok((k.clone(), nb.block.read_json(j, &p.clone().key(k.as_str()))?)))
                        .collect::<Result<_, Diagnostic>>()?,
                ),
                (Nesting::Map, _) => return Err(json_error(&p, "an object of blocks")),
                (_, _) => return Err(json_error(&p, "an array of blocks")),
            };
            out.insert(name.clone(), v);
        }
        Ok(Value::Object(out))
    }
}

fn json_error(path: &Path, expected: &str) -> Diagnostic {
    Diagnostic::error("Stored state does not match the schema")
        .detail(format!("expected {expected} at {path}"))
        .at(path.clone())
}

/// Read JSON as a value of type `ty`. JSON cannot tell a list from a set or
/// a map from an object; the type does. Under `Dynamic` arrays become tuples
/// and objects become objects, the most specific reading.
fn value_from_json(json: &serde_json::Value, ty: &Type, path: &Path) -> Result<Value, Diagnostic> {
    use serde_json::Value as J;
    let seq = |items: &[J], elem: &dyn Fn(usize) -> Option<Type>| -> Result<Vec<Value>, Diagnostic> {
        items
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let t = elem(i).ok_or_else(|| json_error(path, "fewer tuple elements"))?;
                value_from_json(j, &t, &path.clone().index(i as u64))
            })
            .collect()
    };
    let entries = |fields: &serde_json::Map<String, J>, elem: &dyn Fn(&str) -> Option<Type>| {
        fields
            .iter()
            .map(|(k, j)| {
                let t = elem(k).ok_or_else(|| json_error(path, &format!("no attribute `{k}`")))?;
                Ok((k.clone(), value_from_json(j, &t, &path.clone().key(k.as_str()))?))
            })
            .collect::<Result<BTreeMap<_, _>, Diagnostic>>()
    };
    Ok(match (ty, json) {
        (_, J::Null) => Value::Null,
        (Type::Bool | Type::Dynamic, J::Bool(b)) => Value::Bool(*b),
        (Type::Number | Type::Dynamic, J::Number(n)) => Value::Number(match n.as_i64() {
            Some(i) => Number::Int(i),
            None => Number::Float(n.as_f64().ok_or_else(|| json_error(path, "a finite number"))?),
        }),
        (Type::String | Type::Dynamic, J::String(s)) => Value::String(s.clone()),
        (Type::List(t), J::Array(xs)) => Value::List(seq(xs, &|_| Some((**t).clone()))?),
        (Type::Set(t), J::Array(xs)) => Value::Set(seq(xs, &|_| Some((**t).clone()))?),
        (Type::Tuple(ts), J::Array(xs)) if ts.len() == xs.len() => Value::Tuple(seq(xs, &|i| ts.get(i).cloned())?),
        (Type::Dynamic, J::Array(xs)) => Value::Tuple(seq(xs, &|_| Some(Type::Dynamic))?),
        (Type::Map(t), J::Object(fs)) => Value::Map(entries(fs, &|_| Some((**t).clone()))?),
        (Type::Object(ts), J::Object(fs)) => {
            let mut m = entries(fs, &|k| ts.get(k).cloned())?;
            // Attributes absent from the JSON are null, as in configuration.
            for k in ts.keys() {
                m.entry(k.clone()).or_insert(Value::Null);
            }
            Value::Object(m)
        }
        (Type::Dynamic, J::Object(fs)) => Value::Object(entries(fs, &|_| Some(Type::Dynamic))?),
        (ty, _) => return Err(json_error(path, &format!("a value of type {ty:?}"))),
    })
}

/// The schema of a resource type, data source or provider configuration:
/// a state-layout version and the top-level block. The block builders are
/// repeated here so that a schema reads as one expression:
///
/// ```
/// use cairn_sdk::{Attr, Schema, Type};
/// let s = Schema::new(0)
///     .description("A file on disk")
///     .attribute("filename", Attr::string().required())
///     .attribute("id", Attr::string().computed());
/// assert!(s.block.attr("id").unwrap().computed);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// The version of the state layout; bump it when the layout changes and
    /// implement [`Provider::upgrade_state`](crate::Provider::upgrade_state).
    pub version: u64,
    /// The top-level block.
    pub block: Block,
}

impl Schema {
    /// An empty schema with the given state-layout version.
    pub fn new(version: u64) -> Schema {
        Schema { version, block: Block::new() }
    }

    /// Add a top-level attribute.
    pub fn attribute(mut self, name: impl Into<String>, attr: Attr) -> Schema {
        self.block = self.block.attribute(name, attr);
        self
    }

    /// Add a top-level nested block type.
    pub fn block(mut self, name: impl Into<String>, nested: NestedBlock) -> Schema {
        self.block = self.block.block(name, nested);
        self
    }

    /// Set the text shown to users.
    pub fn description(mut self, text: impl Into<String>) -> Schema {
        self.block = self.block.description(text);
        self
    }

    /// The names of the top-level computed attributes.
    pub fn computed_attributes(&self) -> impl Iterator<Item = &str> {
        self.block.attributes.iter().filter(|(_, a)| a.computed).map(|(n, _)| n.as_str())
    }

    /// Is the top-level attribute `name` sensitive?
    pub fn is_sensitive(&self, name: &str) -> bool {
        self.block.attr(name).is_some_and(|a| a.sensitive)
    }

    /// Read a state stored as JSON (an object of attributes, nested blocks
    /// as objects, arrays or maps of objects) into a [`Value`] of this
    /// schema's layout. What [`Provider::upgrade_state`] does by default for
    /// the current version; useful to read an old version's layout too.
    ///
    /// [`Provider::upgrade_state`]: crate::Provider::upgrade_state
    pub fn state_from_json(&self, raw: &str) -> Result<Value, Diagnostic> {
        let json: serde_json::Value = serde_json::from_str(raw)
            .map_err(|e| Diagnostic::error("Stored state is not valid JSON").detail(e.to_string()))?;
        self.block.read_json(&json, &Path::root())
    }

    pub(crate) fn to_wire(&self) -> wire::Schema {
        let mut blocks = Vec::new();
        self.block.encode(&mut blocks);
        wire::Schema { version: self.version, blocks }
    }
}

/// Everything a provider offers: its own configuration block, its resource
/// types and its data sources.
///
/// ```
/// use cairn_sdk::{Attr, ProviderSchema, Schema};
/// let s = ProviderSchema::new()
///     .resource("demo_thing", Schema::new(0).attribute("id", Attr::string().computed()));
/// assert!(s.check().is_ok());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderSchema {
    /// The `provider "name" { … }` block; empty by default.
    pub provider: Schema,
    /// Managed resource types, by type name.
    pub resources: Vec<(String, Schema)>,
    /// Data sources, by type name.
    pub data_sources: Vec<(String, Schema)>,
    /// Ephemeral resource types, by type name: offered to the host through
    /// the optional `ephemeral-resources` export, which the crate adds with
    /// [`export_ephemeral_resources!`](crate::export_ephemeral_resources).
    pub ephemeral_resources: Vec<(String, Schema)>,
}

impl ProviderSchema {
    /// No resources, no data sources, an empty provider block.
    pub fn new() -> ProviderSchema {
        ProviderSchema::default()
    }

    /// Set the provider configuration block's schema.
    pub fn provider(mut self, schema: Schema) -> ProviderSchema {
        self.provider = schema;
        self
    }

    /// Add a managed resource type.
    pub fn resource(mut self, type_name: impl Into<String>, schema: Schema) -> ProviderSchema {
        self.resources.push((type_name.into(), schema));
        self
    }

    /// Add a data source.
    pub fn data_source(mut self, type_name: impl Into<String>, schema: Schema) -> ProviderSchema {
        self.data_sources.push((type_name.into(), schema));
        self
    }

    /// Add an ephemeral resource type (Terraform 1.10's `ephemeral` block),
    /// opened by [`Provider::open_ephemeral`](crate::Provider::open_ephemeral).
    pub fn ephemeral_resource(mut self, type_name: impl Into<String>, schema: Schema) -> ProviderSchema {
        self.ephemeral_resources.push((type_name.into(), schema));
        self
    }

    /// The schema of the ephemeral resource type `type_name`.
    pub fn ephemeral_resource_schema(&self, type_name: &str) -> Option<&Schema> {
        self.ephemeral_resources.iter().find(|(n, _)| n == type_name).map(|(_, s)| s)
    }

    /// The schema of the resource type `type_name`.
    pub fn resource_schema(&self, type_name: &str) -> Option<&Schema> {
        self.resources.iter().find(|(n, _)| n == type_name).map(|(_, s)| s)
    }

    /// The schema of the data source `type_name`.
    pub fn data_source_schema(&self, type_name: &str) -> Option<&Schema> {
        self.data_sources.iter().find(|(n, _)| n == type_name).map(|(_, s)| s)
    }

    /// Find declaration mistakes (an attribute with no flag, a duplicate
    /// name, …). The SDK checks this before answering `schema`, so a provider
    /// with a broken schema fails loudly on first use; call it in a unit test
    /// to find out sooner.
    pub fn check(&self) -> Result<(), Vec<String>> {
        let mut errors = Vec::new();
        self.provider.block.check("provider", &mut errors);
        let lists = [
            ("resource", &self.resources),
            ("data source", &self.data_sources),
            ("ephemeral resource", &self.ephemeral_resources),
        ];
        for (kind, list) in lists {
            for (i, (name, schema)) in list.iter().enumerate() {
                if list[..i].iter().any(|(n, _)| n == name) {
                    errors.push(format!("{kind} `{name}` is declared twice"));
                }
                schema.block.check(&format!("{kind} {name}"), &mut errors);
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }

    pub(crate) fn to_wire(&self) -> wire::ProviderSchema {
        let all = |list: &[(String, Schema)]| list.iter().map(|(n, s)| (n.clone(), s.to_wire())).collect();
        wire::ProviderSchema {
            provider: self.provider.to_wire(),
            resources: all(&self.resources),
            data_sources: all(&self.data_sources),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_flatten_root_first() {
        let t = Type::map(Type::object([("a", Type::String), ("b", Type::list(Type::Number))]));
        let w = t.to_wire();
        assert_eq!(w.nodes[0], wire::TypeNode::Map(1));
        let wire::TypeNode::Object(attrs) = &w.nodes[1] else { panic!("{:?}", w.nodes) };
        assert_eq!(attrs.len(), 2);
        let get = |name: &str| &w.nodes[attrs.iter().find(|(n, _)| n == name).unwrap().1 as usize];
        assert_eq!(get("a"), &wire::TypeNode::Text);
        let wire::TypeNode::List(elem) = get("b") else { panic!() };
        assert_eq!(w.nodes[*elem as usize], wire::TypeNode::Number);
        assert_eq!(Type::tuple([Type::Bool, Type::Dynamic]).to_wire().nodes.len(), 3);
    }

    #[test]
    fn schemas_flatten_nested_blocks_into_the_list() {
        let s = Schema::new(3)
            .attribute("name", Attr::string().required().description("the name"))
            .attribute("secret", Attr::string().computed().sensitive())
            .block(
                "rule",
                NestedBlock::list(
                    Block::new()
                        .attribute("port", Attr::number().required())
                        .block("inner", NestedBlock::single(Block::new().attribute("x", Attr::bool().optional()))),
                )
                .min_items(1)
                .max_items(4),
            );
        let w = s.to_wire();
        assert_eq!(w.version, 3);
        assert_eq!(w.blocks.len(), 3);
        let top = &w.blocks[0];
        assert_eq!(top.attributes[0].name, "name");
        assert!(top.attributes[0].required && !top.attributes[0].optional);
        assert_eq!(top.attributes[0].description, "the name");
        assert!(top.attributes[1].computed && top.attributes[1].sensitive);
        let rule = &top.blocks[0];
        assert_eq!(
            (rule.name.as_str(), rule.nesting, rule.min_items, rule.max_items),
            ("rule", wire::Nesting::List, 1, 4)
        );
        let rule_block = &w.blocks[rule.block as usize];
        assert_eq!(rule_block.attributes[0].name, "port");
        let inner = &rule_block.blocks[0];
        assert_eq!(inner.nesting, wire::Nesting::Single);
        assert_eq!(w.blocks[inner.block as usize].attributes[0].name, "x");
    }

    #[test]
    fn check_finds_declaration_mistakes() {
        let bad = ProviderSchema::new()
            .resource("a", Schema::new(0).attribute("x", Attr::string()))
            .resource("a", Schema::new(0).attribute("y", Attr::string().required().computed()))
            .data_source("d", Schema::new(0).block("b", NestedBlock::single(Block::new()).max_items(2)));
        let errors = bad.check().unwrap_err();
        assert_eq!(errors.len(), 4, "{errors:#?}");
        assert!(errors.iter().any(|e| e.contains("none of required")));
        assert!(errors.iter().any(|e| e.contains("declared twice")));
    }

    #[test]
    fn state_json_is_read_by_the_schema_types() {
        let s = Schema::new(0)
            .attribute("n", Attr::number().required())
            .attribute("tags", Attr::set(Type::String).optional())
            .attribute("m", Attr::map(Type::Number).optional())
            .attribute("any", Attr::dynamic().optional())
            .attribute("absent", Attr::string().optional())
            .block("b", NestedBlock::list(Block::new().attribute("x", Attr::bool().optional())));
        let raw = r#"{"n": 9223372036854775807, "tags": ["a","b"], "m": {"k": 0.1},
                      "any": [1, {"z": "s"}], "b": [{"x": true}]}"#;
        let v = s.state_from_json(raw).unwrap();
        assert_eq!(v.get_attr("n").as_i64(), Some(i64::MAX));
        assert!(matches!(v.get_attr("tags"), Value::Set(xs) if xs.len() == 2));
        assert_eq!(v.get_attr("m").get_key("k").as_f64(), Some(0.1));
        assert_eq!(v.get_attr("any"), &Value::tuple([Value::from(1), Value::object([("z", "s")])]));
        assert!(v.get_attr("absent").is_null());
        assert_eq!(v.get_attr("b").get_index(0).get_attr("x").as_bool(), Some(true));
        // A key the schema does not know, or a type mismatch, is an error.
        assert!(s.state_from_json(r#"{"n": 1, "zzz": 2}"#).unwrap_err().detail.contains("zzz"));
        assert!(s.state_from_json(r#"{"n": "one"}"#).is_err());
        assert!(s.state_from_json("not json").is_err());
    }
}
