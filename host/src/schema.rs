//! Provider schemas: the attributes and nested blocks of resource types, data
//! sources and provider configuration, as the host sees them.

use std::collections::BTreeMap;

use crate::value::{Path, PathStep, Type, Value};

/// Everything one provider offers.
#[derive(Debug, Clone, Default)]
pub struct ProviderSchema {
    /// The `provider "name" { … }` block.
    pub provider: Schema,
    /// Managed resource types by name.
    pub resources: BTreeMap<String, Schema>,
    /// Data sources by name.
    pub data_sources: BTreeMap<String, Schema>,
    /// Ephemeral resource types by name (the optional
    /// `ephemeral-resources` export's `schemas`; empty without it).
    pub ephemeral_resources: BTreeMap<String, Schema>,
}

impl ProviderSchema {
    /// The schema of a resource type (managed) or data source (`data.`):
    /// the one place that picks the table by mode.
    pub fn of(&self, resource: &crate::addr::ResourceAddr) -> Option<&Schema> {
        self.table(resource.mode).get(&resource.type_name)
    }

    /// The resource types (managed) or the data sources (`data.`).
    pub fn table(&self, mode: crate::addr::Mode) -> &BTreeMap<String, Schema> {
        match mode {
            crate::addr::Mode::Managed => &self.resources,
            crate::addr::Mode::Data => &self.data_sources,
            crate::addr::Mode::Ephemeral => &self.ephemeral_resources,
        }
    }
}

/// Something wrong with a schema a provider declared: where (`provider`,
/// `resource "x"`, `data "y"`, then the attribute path) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// `resource "local_file"`, `data "http"` or `provider`.
    pub within: String,
    /// The attribute or block, as a path from the top-level block.
    pub path: Path,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.steps().is_empty() {
            write!(f, "{}: {}", self.within, self.message)
        } else {
            write!(f, "{} at {}: {}", self.within, self.path, self.message)
        }
    }
}

impl ProviderSchema {
    /// Everything that makes this schema malformed: names that are not
    /// identifiers (or that a configuration could not write), attributes
    /// that are neither required, optional nor computed (or more than one
    /// of those at once, but optional + computed), write-only attributes
    /// that are computed, nested blocks whose item limits contradict each
    /// other or their nesting, and nested attribute types whose declared
    /// type is not the one they imply.
    pub fn problems(&self) -> Vec<SchemaProblem> {
        let mut out = Vec::new();
        let tables =
            [("resource", &self.resources), ("data", &self.data_sources), ("ephemeral", &self.ephemeral_resources)];
        let mut blocks = vec![("provider".to_string(), &self.provider.block)];
        for (kind, table) in tables {
            for (name, schema) in table {
                let within = format!("{kind} {name:?}");
                if !crate::addr::is_identifier(name) || name.contains('-') {
                    let message = "is not a name a configuration can write (letters, digits and _)".to_string();
                    out.push(SchemaProblem { within: within.clone(), path: Path::root(), message });
                }
                blocks.push((within, &schema.block));
            }
        }
        for (within, block) in blocks {
            block_problems(block, &Path::root(), &mut |path, message| {
                out.push(SchemaProblem { within: within.clone(), path, message });
            });
        }
        out
    }
}

fn block_problems(block: &Block, at: &Path, report: &mut dyn FnMut(Path, String)) {
    for (name, a) in &block.attributes {
        let path = at.attr(name);
        if !crate::addr::is_identifier(name) {
            report(path.clone(), format!("{name:?} is not an identifier"));
        }
        if block.blocks.contains_key(name) {
            report(path.clone(), "is both an attribute and a nested block".into());
        }
        match (a.required, a.optional, a.computed) {
            (true, false, false) | (false, true, _) | (false, false, true) => {}
            (false, false, false) => report(path.clone(), "is neither required, optional nor computed".into()),
            (true, true, _) => report(path.clone(), "is both required and optional".into()),
            (true, false, true) => report(path.clone(), "is both required and computed".into()),
        }
        if a.write_only && a.computed {
            report(path.clone(), "is write-only and computed: a provider can never return it".into());
        }
        if let Some(nested) = &a.nested {
            if a.ty != nested.implied_type() {
                report(path.clone(), "declares a type other than the one its nested attributes imply".into());
            }
            block_problems(&nested.block, &path, report);
        }
    }
    for (name, nested) in &block.blocks {
        let path = at.attr(name);
        if !crate::addr::is_identifier(name) {
            report(path.clone(), format!("{name:?} is not an identifier"));
        }
        let (min, max) = (nested.min_items, nested.max_items);
        if max != 0 && min > max {
            report(path.clone(), format!("needs at least {min} blocks but allows at most {max}"));
        }
        if nested.nesting == Nesting::Single && (min > 1 || max > 1) {
            report(path.clone(), "is a single block, yet allows more than one".into());
        }
        block_problems(&nested.block, &path, report);
    }
}

/// The schema of one resource type, data source or provider configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// The version of the state layout.
    pub version: u64,
    /// The top-level block.
    pub block: Block,
}

/// The contents of a block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    /// Attributes by name.
    pub attributes: BTreeMap<String, Attribute>,
    /// Nested block types by name.
    pub blocks: BTreeMap<String, NestedBlock>,
    /// For `cairn providers schema`.
    pub description: String,
}

/// One attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The value type. For a nested attribute type, the type implied by
    /// [`Attribute::nested`] (kept here too so that code that only needs
    /// the type need not care).
    pub ty: Type,
    /// A nested attribute type: the value is an object (or a list, set or
    /// map of objects) of these attributes. Unlike a nested block, the
    /// attribute as a whole may be null, unknown, optional or computed.
    pub nested: Option<NestedType>,
    /// Configuration must set it.
    pub required: bool,
    /// Configuration may set it.
    pub optional: bool,
    /// The provider may set it when configuration leaves it null.
    pub computed: bool,
    /// Never displayed.
    pub sensitive: bool,
    /// Sent to the provider, never stored: always null in planned and new
    /// states (see `contract::null_write_only`).
    pub write_only: bool,
    /// For `cairn providers schema`.
    pub description: String,
}

/// The type of a nested attribute: objects of these attributes, gathered
/// as `nesting` says (`Single` is one object).
#[derive(Debug, Clone, PartialEq)]
pub struct NestedType {
    /// How the objects are gathered.
    pub nesting: Nesting,
    /// The attributes of each object, as a block with no nested blocks
    /// (a nested attribute holds only attributes, which may be nested
    /// attributes in turn). A block, so that the contract checks walk the
    /// objects of nested attributes and of nested blocks with one code.
    pub block: Block,
}

/// A mistake inside a configured nested attribute that its type cannot
/// express, found by [`NestedType::config_problems`].
#[derive(Debug, Clone, PartialEq)]
pub enum NestedProblem {
    /// A required attribute of an object is null; at its path.
    MissingRequired(Path),
    /// A computed-only attribute of an object is set; at its path.
    Unconfigurable(Path),
}

impl NestedType {
    /// What a configured value of this nested attribute (at `path`) gets
    /// wrong beyond its type: inside every known object, a required
    /// attribute left null, or a computed-only attribute set. Checked the
    /// way the attributes of a block are, since a nested attribute is
    /// configuration too.
    pub fn config_problems(&self, value: &Value, path: &Path) -> Vec<NestedProblem> {
        let mut out = Vec::new();
        self.walk(value, path, &mut out);
        out
    }

    fn walk(&self, value: &Value, path: &Path, out: &mut Vec<NestedProblem>) {
        let mut object = |o: &Value, at: &Path| {
            let Value::Object(_) = o else { return };
            for (name, a) in &self.block.attributes {
                let (v, here) = (o.get_attr(name), at.attr(name));
                if a.required && v.is_null() {
                    out.push(NestedProblem::MissingRequired(here));
                } else if a.computed && !a.optional && !a.required && !v.is_null() {
                    out.push(NestedProblem::Unconfigurable(here));
                } else if let Some(inner) = &a.nested {
                    inner.walk(v, &here, out);
                }
            }
        };
        match (self.nesting, value) {
            (Nesting::Single, o) => object(o, path),
            (_, Value::List(items) | Value::Set(items)) => {
                items.iter().enumerate().for_each(|(i, o)| object(o, &path.index(i)))
            }
            (_, Value::Map(m)) => m.iter().for_each(|(k, o)| object(o, &path.key(k))),
            _ => {}
        }
    }

    /// The type of the whole attribute value.
    pub fn implied_type(&self) -> Type {
        self.nesting.gather(self.block.implied_type())
    }
}

/// How repeated nested blocks are gathered into a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// At most one block: an object, or null.
    Single,
    /// A list of objects.
    List,
    /// A set of objects.
    Set,
    /// A map of objects keyed by the block label.
    Map,
}

impl Nesting {
    /// The type of the value that gathers objects of type `object` this way.
    pub fn gather(self, object: Type) -> Type {
        match self {
            Nesting::Single => object,
            Nesting::List => Type::List(Box::new(object)),
            Nesting::Set => Type::Set(Box::new(object)),
            Nesting::Map => Type::Map(Box::new(object)),
        }
    }
}

/// A nested block type.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedBlock {
    /// How blocks are gathered.
    pub nesting: Nesting,
    /// What each block contains.
    pub block: Block,
    /// Fewest blocks allowed.
    pub min_items: u32,
    /// Most blocks allowed; 0 means no limit.
    pub max_items: u32,
}

impl Attribute {
    /// A required attribute of type `ty`.
    pub fn required(ty: Type) -> Attribute {
        Attribute { required: true, optional: false, ..Attribute::optional(ty) }
    }

    /// An optional attribute of type `ty`.
    pub fn optional(ty: Type) -> Attribute {
        Attribute {
            ty,
            nested: None,
            required: false,
            optional: true,
            computed: false,
            sensitive: false,
            write_only: false,
            description: String::new(),
        }
    }

    /// An optional nested attribute of `attributes`, gathered as `nesting`
    /// says; its `ty` is the implied type.
    pub fn nested(nesting: Nesting, attributes: BTreeMap<String, Attribute>) -> Attribute {
        let nested = NestedType { nesting, block: Block { attributes, ..Block::default() } };
        Attribute { nested: Some(nested.clone()), ..Attribute::optional(nested.implied_type()) }
    }

    /// A computed-only attribute of type `ty`, set by the provider.
    pub fn computed(ty: Type) -> Attribute {
        Attribute { optional: false, computed: true, ..Attribute::optional(ty) }
    }
}

impl Block {
    /// The object type of a value of this block.
    pub fn implied_type(&self) -> Type {
        let mut attrs: BTreeMap<String, Type> =
            self.attributes.iter().map(|(name, a)| (name.clone(), a.ty.clone())).collect();
        for (name, nested) in &self.blocks {
            attrs.insert(name.clone(), nested.implied_type());
        }
        Type::Object(attrs)
    }

    /// The attribute at `path` (through nested blocks and nested attribute
    /// types), if the path names one.
    pub fn attribute_at(&self, path: &Path) -> Option<&Attribute> {
        let mut block = self;
        let mut steps = path.steps().iter();
        while let Some(PathStep::Attr(name)) = steps.next() {
            if let Some(a) = block.attributes.get(name) {
                return attribute_within(a, steps.as_slice());
            }
            let nested = block.blocks.get(name)?;
            if nested.nesting != Nesting::Single {
                steps.next()?;
            }
            block = &nested.block;
        }
        None
    }

    /// Whether any attribute, at any depth, is write-only.
    pub fn contains_write_only(&self) -> bool {
        self.attributes.values().any(Attribute::contains_write_only)
            || self.blocks.values().any(|b| b.block.contains_write_only())
    }

    /// Whether the value at `path` is (inside) a write-only attribute.
    pub fn is_write_only(&self, path: &Path) -> bool {
        (1..=path.steps().len()).any(|n| {
            let prefix = Path::from_steps(path.steps()[..n].to_vec());
            self.attribute_at(&prefix).is_some_and(|a| a.write_only)
        })
    }

    /// Whether the value at `path` must be hidden from users.
    pub fn is_sensitive(&self, path: &Path) -> bool {
        (1..=path.steps().len()).any(|n| {
            let prefix = Path::from_steps(path.steps()[..n].to_vec());
            self.attribute_at(&prefix).is_some_and(|a| a.sensitive)
        })
    }
}

impl Attribute {
    /// Whether this attribute, or one nested inside it, is write-only.
    pub fn contains_write_only(&self) -> bool {
        self.write_only || self.nested.as_ref().is_some_and(|n| n.block.contains_write_only())
    }
}

/// The attribute at `rest` inside the attribute `a` (`a` itself when `rest`
/// is empty): through the objects of nested attribute types.
fn attribute_within<'a>(a: &'a Attribute, rest: &[PathStep]) -> Option<&'a Attribute> {
    let Some(nested) = &a.nested else { return Some(a) };
    let rest = match (nested.nesting, rest) {
        (_, []) => return Some(a),
        (Nesting::Single, rest) => rest,
        (_, [_, rest @ ..]) => rest,
    };
    match rest {
        [] => Some(a),
        [PathStep::Attr(name), rest @ ..] => attribute_within(nested.block.attributes.get(name)?, rest),
        _ => None,
    }
}

impl NestedBlock {
    /// The type of the whole nested block value.
    pub fn implied_type(&self) -> Type {
        self.nesting.gather(self.block.implied_type())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(ty: Type, sensitive: bool) -> Attribute {
        Attribute { sensitive, ..Attribute::optional(ty) }
    }

    #[test]
    fn malformed_schemas_are_named_with_their_paths() {
        let mut block = Block::default();
        let flags =
            |required, optional, computed| Attribute { required, optional, computed, ..attr(Type::String, false) };
        block.attributes.insert("none".into(), flags(false, false, false));
        block.attributes.insert("req_opt".into(), flags(true, true, false));
        block.attributes.insert("req_comp".into(), flags(true, false, true));
        block.attributes.insert("fine".into(), flags(false, true, true));
        block.attributes.insert("wo".into(), Attribute { write_only: true, ..Attribute::computed(Type::String) });
        block.attributes.insert("bad name".into(), attr(Type::String, false));
        let mut wrong_type = Attribute::nested(Nesting::List, [("x".to_string(), attr(Type::Number, false))].into());
        wrong_type.ty = Type::String;
        block.attributes.insert("nested".into(), wrong_type);
        let rule = NestedBlock { nesting: Nesting::List, block: Block::default(), min_items: 3, max_items: 2 };
        block.blocks.insert("rule".into(), rule);
        let one = NestedBlock { nesting: Nesting::Single, block: Block::default(), min_items: 0, max_items: 2 };
        block.blocks.insert("one".into(), one);
        let schema = ProviderSchema {
            resources: [
                ("thing".to_string(), Schema { version: 0, block }),
                ("bad-type".to_string(), Schema::default()),
            ]
            .into(),
            ..ProviderSchema::default()
        };
        let shown: Vec<String> = schema.problems().iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "resource \"bad-type\": is not a name a configuration can write (letters, digits and _)",
                "resource \"thing\" at .bad name: \"bad name\" is not an identifier",
                "resource \"thing\" at .nested: declares a type other than the one its nested attributes imply",
                "resource \"thing\" at .none: is neither required, optional nor computed",
                "resource \"thing\" at .req_comp: is both required and computed",
                "resource \"thing\" at .req_opt: is both required and optional",
                "resource \"thing\" at .wo: is write-only and computed: a provider can never return it",
                "resource \"thing\" at .one: is a single block, yet allows more than one",
                "resource \"thing\" at .rule: needs at least 3 blocks but allows at most 2",
            ]
        );
        assert!(ProviderSchema::default().problems().is_empty());
    }

    #[test]
    fn lookup_through_nested_attribute_types() {
        let inner: BTreeMap<String, Attribute> = [
            ("user".to_string(), attr(Type::String, false)),
            ("password".to_string(), Attribute { write_only: true, ..attr(Type::String, true) }),
        ]
        .into();
        for nesting in [Nesting::Single, Nesting::List, Nesting::Set, Nesting::Map] {
            let block = Block {
                attributes: [("login".to_string(), Attribute::nested(nesting, inner.clone()))].into(),
                ..Default::default()
            };
            let login = Path::root().attr("login");
            let element = match nesting {
                Nesting::Single => login.clone(),
                Nesting::Map => login.key("k"),
                _ => login.index(0),
            };
            assert!(block.attribute_at(&element.attr("password")).is_some_and(|a| a.write_only), "{nesting:?}");
            assert!(block.is_sensitive(&element.attr("password")), "{nesting:?}");
            assert!(!block.is_sensitive(&element.attr("user")), "{nesting:?}");
            assert!(block.attribute_at(&login).is_some_and(|a| a.nested.is_some()));
            assert!(block.contains_write_only());
        }
    }

    #[test]
    fn implied_type_and_lookup_through_blocks() {
        let inner = Block { attributes: [("port".to_string(), attr(Type::Number, true))].into(), ..Default::default() };
        let block = Block {
            attributes: [("name".to_string(), attr(Type::String, false))].into(),
            blocks: [(
                "rule".to_string(),
                NestedBlock { nesting: Nesting::List, block: inner, min_items: 0, max_items: 0 },
            )]
            .into(),
            description: String::new(),
        };
        let Type::Object(attrs) = block.implied_type() else { panic!() };
        assert!(matches!(attrs["rule"], Type::List(_)));
        let port = Path::root().attr("rule").index(0).attr("port");
        assert!(block.attribute_at(&port).is_some());
        assert!(block.is_sensitive(&port));
        assert!(!block.is_sensitive(&Path::root().attr("name")));
    }
}
