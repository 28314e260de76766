//! Provider schemas: the attributes and nested blocks of resource types, data
//! sources and provider configuration, as the host sees them.

use std::collections::BTreeMap;

use crate::value::{Path, PathStep, Type};

/// Everything one provider offers.
#[derive(Debug, Clone, Default)]
pub struct ProviderSchema {
    /// The `provider "name" { … }` block.
    pub provider: Schema,
    /// Managed resource types by name.
    pub resources: BTreeMap<String, Schema>,
    /// Data sources by name.
    pub data_sources: BTreeMap<String, Schema>,
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
        }
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
    /// The value type.
    pub ty: Type,
    /// Configuration must set it.
    pub required: bool,
    /// Configuration may set it.
    pub optional: bool,
    /// The provider may set it when configuration leaves it null.
    pub computed: bool,
    /// Never displayed.
    pub sensitive: bool,
    /// For `cairn providers schema`.
    pub description: String,
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
        Attribute { ty, required: false, optional: true, computed: false, sensitive: false, description: String::new() }
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

    /// The attribute at `path` (through nested blocks), if the path names one.
    pub fn attribute_at(&self, path: &Path) -> Option<&Attribute> {
        let mut block = self;
        let mut steps = path.steps().iter();
        while let Some(PathStep::Attr(name)) = steps.next() {
            if let Some(a) = block.attributes.get(name) {
                return Some(a);
            }
            let nested = block.blocks.get(name)?;
            if nested.nesting != Nesting::Single {
                steps.next()?;
            }
            block = &nested.block;
        }
        None
    }

    /// Whether the value at `path` must be hidden from users.
    pub fn is_sensitive(&self, path: &Path) -> bool {
        (1..=path.steps().len()).any(|n| {
            let prefix = Path::from_steps(path.steps()[..n].to_vec());
            self.attribute_at(&prefix).is_some_and(|a| a.sensitive)
        })
    }
}

impl NestedBlock {
    /// The type of the whole nested block value.
    pub fn implied_type(&self) -> Type {
        let object = Box::new(self.block.implied_type());
        match self.nesting {
            Nesting::Single => *object,
            Nesting::List => Type::List(object),
            Nesting::Set => Type::Set(object),
            Nesting::Map => Type::Map(object),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(ty: Type, sensitive: bool) -> Attribute {
        Attribute { ty, required: false, optional: true, computed: false, sensitive, description: String::new() }
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
