//! Decoding a body against a schema: from what the user wrote in a resource
//! or provider block to the object value the schema describes (the planner's
//! "config" artifact), checking it on the way. Every problem is collected,
//! each with the `file:line` and attribute path it is about.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Diagnostic, Location};
use crate::schema::{self, Nesting};
use crate::value::{Map, Path, PathStep, Value};

use super::eval::eval_within;
use super::{Attribute, Block, Body, EvalContext, error_at, suggest};

/// Decodes `body` into a value of `schema`'s type: every attribute present
/// (null when unset), converted to its type; nested blocks gathered by their
/// nesting mode (single → object or null, list → list, set → set, map → map
/// keyed by the block label).
pub fn decode_body(body: &Body, schema: &schema::Block, ctx: &EvalContext) -> Result<Value, Vec<Diagnostic>> {
    let mut decoder = Decoder { ctx, diags: Vec::new(), bound: Vec::new() };
    let value = decoder.block(body, schema, &Path::root());
    if decoder.diags.is_empty() { Ok(value) } else { Err(decoder.diags) }
}

struct Decoder<'a> {
    ctx: &'a EvalContext,
    diags: Vec<Diagnostic>,
    /// The iterators of the `dynamic` blocks being decoded, innermost last.
    bound: Vec<(String, Value)>,
}

/// A nested block as written, or one a `dynamic` block made, with the
/// iterators its body sees.
struct Found<'b> {
    block: Cow<'b, Block>,
    bound: Vec<(String, Value)>,
}

/// The arguments a `dynamic` block takes besides its `content` block.
const DYNAMIC_ARGUMENTS: [&str; 3] = ["for_each", "iterator", "labels"];

impl Decoder<'_> {
    fn block(&mut self, body: &Body, schema: &schema::Block, path: &Path) -> Value {
        let mut object = Map::with_capacity(schema.attributes.len() + schema.blocks.len());
        for attr in &body.attributes {
            if let Some(value) = self.attribute(attr, schema, path) {
                object.insert(attr.name.clone(), value);
            }
        }
        for (name, attr) in &schema.attributes {
            let written = body.attribute(name);
            if written.is_some() && !object.contains_key(name) {
                continue; // written but unusable: already reported
            }
            let value = object.entry(name.clone()).or_insert(Value::Null);
            if attr.required && value.is_null() {
                self.missing_required(name, written, body, path);
            }
        }
        let mut by_type: BTreeMap<String, Vec<Found>> = BTreeMap::new();
        // Block types a `dynamic` block makes from a collection not known yet.
        let mut unknown: BTreeSet<String> = BTreeSet::new();
        for block in &body.blocks {
            if block.type_name == "dynamic" {
                let made = block.labels.first().filter(|l| schema.blocks.contains_key(*l));
                match (made, self.dynamic(block, path)) {
                    (Some(name), Some(found)) => by_type.entry(name.clone()).or_default().extend(found),
                    (Some(name), None) => drop(unknown.insert(name.clone())),
                    (None, _) => self.unsupported_dynamic(block, schema, path),
                }
            } else if schema.blocks.contains_key(&block.type_name) {
                let found = Found { block: Cow::Borrowed(block), bound: self.bound.clone() };
                by_type.entry(block.type_name.clone()).or_default().push(found);
            } else {
                self.unsupported_block(block, schema, path);
            }
        }
        for (name, nested) in &schema.blocks {
            if unknown.contains(name) {
                object.insert(name.clone(), Value::unknown());
                continue;
            }
            let blocks = by_type.remove(name.as_str()).unwrap_or_default();
            let value = self.nested(name, nested, &blocks, body, path);
            object.insert(name.clone(), value);
        }
        Value::Object(object)
    }

    /// The blocks a `dynamic "TYPE" { for_each, iterator, labels, content }`
    /// block makes: one per element of `for_each`, whose `content` sees the
    /// iterator (`TYPE.key`, `TYPE.value`, or the `iterator` name). `None`
    /// when `for_each` is not known yet (nor, then, are the blocks); errors
    /// are recorded and make no blocks.
    fn dynamic<'b>(&mut self, block: &'b Block, path: &Path) -> Option<Vec<Found<'b>>> {
        let fail = |this: &mut Self, location: &Location, detail: String| {
            this.diags.push(error_at("Invalid dynamic block", detail, location).at_path(path.clone()));
            Some(Vec::new())
        };
        let body = &block.body;
        if let Some(extra) = body.attributes.iter().find(|a| !DYNAMIC_ARGUMENTS.contains(&a.name.as_str())) {
            let detail = format!(
                "A dynamic block takes for_each, iterator, labels and a content block; not \"{}\".",
                extra.name
            );
            return fail(self, &extra.location, detail);
        }
        let contents: Vec<&Block> = body.blocks.iter().filter(|b| b.type_name == "content").collect();
        if let Some(other) = body.blocks.iter().find(|b| b.type_name != "content") {
            let detail = format!(
                "Blocks of type \"{}\" are not expected in a dynamic block: only one content block.",
                other.type_name
            );
            return fail(self, &other.location, detail);
        }
        let [content] = contents.as_slice() else {
            return fail(
                self,
                &block.location,
                format!("A dynamic block needs exactly one content block, found {}.", contents.len()),
            );
        };
        let Some(for_each) = body.attribute("for_each") else {
            return fail(self, &block.location, "A dynamic block needs a for_each argument.".into());
        };
        let collection = match eval_within(&for_each.expr, self.ctx, &self.bound) {
            Ok(v) if v.is_unknown() => return None,
            Ok(v) => v,
            Err(diags) => {
                self.diags.extend(diags);
                return Some(Vec::new());
            }
        };
        let pairs: Vec<(Value, Value)> = match collection {
            Value::List(items) | Value::Tuple(items) => {
                items.into_iter().enumerate().map(|(i, v)| (Value::int(i as i64), v)).collect()
            }
            Value::Set(items) => items.into_iter().map(|v| (v.clone(), v)).collect(),
            Value::Map(m) | Value::Object(m) => m.into_iter().map(|(k, v)| (Value::string(k), v)).collect(),
            other => {
                let detail =
                    format!("The for_each of a dynamic block must be a collection, got {}.", other.kind_name());
                return fail(self, &for_each.location, detail);
            }
        };
        let iterator = block.dynamic_iterator().unwrap_or_default();
        let mut found = Vec::new();
        for (key, value) in pairs {
            let mut bound = self.bound.clone();
            bound.push((iterator.clone(), Value::object([("key", key), ("value", value)])));
            let labels = match body.attribute("labels") {
                None => Vec::new(),
                Some(attr) => match eval_within(&attr.expr, self.ctx, &bound) {
                    Ok(Value::List(items) | Value::Tuple(items)) => {
                        items.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect()
                    }
                    Ok(other) => {
                        let detail = format!(
                            "The labels of a dynamic block must be a list of strings, got {}.",
                            other.kind_name()
                        );
                        return fail(self, &attr.location, detail);
                    }
                    Err(diags) => {
                        self.diags.extend(diags);
                        return Some(Vec::new());
                    }
                },
            };
            let made = Block {
                type_name: block.labels[0].clone(),
                labels,
                body: content.body.clone(),
                location: block.location.clone(),
            };
            found.push(Found { block: Cow::Owned(made), bound });
        }
        Some(found)
    }

    /// Decodes one found block's body with its iterators in scope.
    fn found_block(&mut self, found: &Found, schema: &schema::Block, path: &Path) -> Value {
        let outer = std::mem::replace(&mut self.bound, found.bound.clone());
        let value = self.block(&found.block.body, schema, path);
        self.bound = outer;
        value
    }

    fn unsupported_dynamic(&mut self, block: &Block, schema: &schema::Block, path: &Path) {
        let detail = match block.labels.first() {
            None => "A dynamic block needs one label: the type of the blocks it makes.".to_string(),
            Some(name) => format!("Blocks of type \"{name}\" are not expected here.{}", hint(name, schema)),
        };
        self.diags.push(error_at("Unsupported block type", detail, &block.location).at_path(path.clone()));
    }

    /// One attribute's value converted to its type, or `None` after
    /// recording why it cannot be used.
    fn attribute(&mut self, attr: &Attribute, schema: &schema::Block, path: &Path) -> Option<Value> {
        let attr_path = path.attr(&attr.name);
        let Some(attr_schema) = schema.attributes.get(&attr.name) else {
            let detail = if schema.blocks.contains_key(&attr.name) {
                format!(
                    "An argument named \"{}\" is not expected here. Did you mean to define a block of type \"{}\"?",
                    attr.name, attr.name
                )
            } else {
                format!("An argument named \"{}\" is not expected here.{}", attr.name, hint(&attr.name, schema))
            };
            self.diags.push(error_at("Unsupported argument", detail, &attr.location).at_path(attr_path));
            return None;
        };
        if attr_schema.computed && !attr_schema.optional && !attr_schema.required {
            self.diags.push(
                error_at(
                    "Value for unconfigurable attribute",
                    format!("The argument \"{}\" is decided by the provider and cannot be set.", attr.name),
                    &attr.location,
                )
                .at_path(attr_path),
            );
            return None;
        }
        let value = match eval_within(&attr.expr, self.ctx, &self.bound) {
            Ok(value) => value,
            Err(diags) => {
                self.diags.extend(diags.into_iter().map(|d| with_default_path(d, &attr_path)));
                return None;
            }
        };
        match attr_schema.ty.convert(&value) {
            Ok(value) => {
                // A nested attribute's objects are configuration: their
                // required and computed-only attributes are checked too.
                for problem in attr_schema.nested.iter().flat_map(|n| n.config_problems(&value, &attr_path)) {
                    self.diags.push(nested_problem(problem, &attr.location));
                }
                Some(value)
            }
            Err(e) => {
                self.diags.push(
                    error_at(
                        "Incorrect attribute value type",
                        format!("Inappropriate value for attribute \"{}\": {}.", attr.name, e.message),
                        &attr.location,
                    )
                    .at_path(join(&attr_path, &e.path)),
                );
                None
            }
        }
    }

    fn missing_required(&mut self, name: &str, written: Option<&Attribute>, body: &Body, path: &Path) {
        let (detail, location) = match written {
            Some(attr) => (format!("The argument \"{name}\" is required, but its value is null."), &attr.location),
            None => (format!("The argument \"{name}\" is required, but no definition was found."), &body.location),
        };
        self.diags.push(error_at("Missing required argument", detail, location).at_path(path.attr(name)));
    }

    fn unsupported_block(&mut self, block: &Block, schema: &schema::Block, path: &Path) {
        let name = &block.type_name;
        let detail = if schema.attributes.contains_key(name) {
            format!(
                "Blocks of type \"{name}\" are not expected here. Did you mean to define argument \"{name}\"? \
                 If so, use the equals sign to assign it a value."
            )
        } else {
            format!("Blocks of type \"{name}\" are not expected here.{}", hint(name, schema))
        };
        self.diags.push(error_at("Unsupported block type", detail, &block.location).at_path(path.attr(name)));
    }

    /// The value of nested block type `name` from its blocks in `parent`.
    fn nested(
        &mut self,
        name: &str,
        nested: &schema::NestedBlock,
        blocks: &[Found],
        parent: &Body,
        path: &Path,
    ) -> Value {
        let block_path = path.attr(name);
        self.check_labels(name, nested.nesting, blocks, &block_path);
        self.check_count(name, nested, blocks, parent, &block_path);
        let schema = &nested.block;
        match nested.nesting {
            Nesting::Single => match blocks.first() {
                Some(found) => self.found_block(found, schema, &block_path),
                None => Value::Null,
            },
            Nesting::List | Nesting::Set => {
                let objects: Vec<Value> = blocks
                    .iter()
                    .enumerate()
                    .map(|(i, found)| self.found_block(found, schema, &block_path.index(i)))
                    .collect();
                if nested.nesting == Nesting::List { Value::List(objects) } else { Value::set(objects) }
            }
            Nesting::Map => {
                // Sorted once at the end (`collect`), not shifted at every
                // insert: blocks come in the order written.
                let mut entries = Vec::with_capacity(blocks.len());
                let mut seen: BTreeMap<&str, &Location> = BTreeMap::new();
                for found in blocks {
                    let block = &found.block;
                    let Some(key) = block.labels.first() else {
                        continue;
                    };
                    if let Some(first) = seen.insert(key, &block.location) {
                        self.diags.push(
                            error_at(
                                "Duplicate block",
                                format!("A \"{name}\" block with the key \"{key}\" was already defined at {first}."),
                                &block.location,
                            )
                            .at_path(block_path.key(key)),
                        );
                        continue;
                    }
                    entries.push((key.clone(), self.found_block(found, schema, &block_path.key(key))));
                }
                Value::Map(entries.into_iter().collect())
            }
        }
    }

    /// Map blocks take exactly one label (their key); others none.
    fn check_labels(&mut self, name: &str, nesting: Nesting, blocks: &[Found], path: &Path) {
        let wanted = usize::from(nesting == Nesting::Map);
        for block in blocks.iter().map(|f| &f.block).filter(|b| b.labels.len() != wanted) {
            let (summary, detail) = if block.labels.len() < wanted {
                ("Missing key for block", format!("A \"{name}\" block needs one label: its key in the map."))
            } else {
                (
                    "Extraneous label for block",
                    format!("A \"{name}\" block takes {wanted} labels, got {}.", block.labels.len()),
                )
            };
            self.diags.push(error_at(summary, detail, &block.location).at_path(path.clone()));
        }
    }

    fn check_count(&mut self, name: &str, nested: &schema::NestedBlock, blocks: &[Found], parent: &Body, path: &Path) {
        let max = if nested.nesting == Nesting::Single { 1 } else { nested.max_items as usize };
        let min = nested.min_items as usize;
        let plural = |n: usize| if n == 1 { "block" } else { "blocks" };
        if blocks.len() < min {
            self.diags.push(
                error_at(
                    "Too few blocks",
                    format!(
                        "At least {min} \"{name}\" {} required, found {}.",
                        if min == 1 { "block is" } else { "blocks are" },
                        blocks.len()
                    ),
                    &parent.location,
                )
                .at_path(path.clone()),
            );
        }
        if max > 0 && blocks.len() > max {
            self.diags.push(
                error_at(
                    "Too many blocks",
                    format!("No more than {max} \"{name}\" {} allowed, found {}.", plural(max), blocks.len()),
                    &blocks[max].block.location,
                )
                .at_path(path.clone()),
            );
        }
    }
}

/// A did-you-mean among the attribute and block names of a schema.
fn hint(name: &str, schema: &schema::Block) -> String {
    suggest::did_you_mean(name, schema.attributes.keys().chain(schema.blocks.keys()).map(String::as_str))
}

/// `a` followed by the steps of `b`.
fn join(a: &Path, b: &Path) -> Path {
    Path::from_steps(a.steps().iter().chain(b.steps()).cloned().collect())
}

/// The error for a mistake inside a nested attribute's objects, worded as
/// for the attributes of a block.
fn nested_problem(problem: schema::NestedProblem, location: &Location) -> Diagnostic {
    let (summary, path, why) = match problem {
        schema::NestedProblem::MissingRequired(p) => {
            ("Missing required argument", p, "is required, but its value is null")
        }
        schema::NestedProblem::Unconfigurable(p) => {
            ("Value for unconfigurable attribute", p, "is decided by the provider and cannot be set")
        }
    };
    let name = match path.steps().last() {
        Some(PathStep::Attr(name)) => name.clone(),
        _ => path.to_string(),
    };
    error_at(summary, format!("The argument \"{name}\" {why}."), location).at_path(path)
}

/// The diagnostic about the attribute at `path` unless it names another.
fn with_default_path(d: Diagnostic, path: &Path) -> Diagnostic {
    if d.path.is_some() { d } else { d.at_path(path.clone()) }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main, shown};
    use super::*;
    use crate::schema::{Attribute as SchemaAttribute, NestedBlock};
    use crate::value::Type;

    fn attr(ty: Type, required: bool, optional: bool, computed: bool) -> SchemaAttribute {
        SchemaAttribute { required, optional, computed, ..SchemaAttribute::optional(ty) }
    }

    fn nested(nesting: Nesting, min_items: u32, max_items: u32) -> NestedBlock {
        let block = schema::Block {
            attributes: [("port".to_string(), attr(Type::Number, true, false, false))].into(),
            ..Default::default()
        };
        NestedBlock { nesting, block, min_items, max_items }
    }

    /// A schema like a small file resource.
    fn file_schema() -> schema::Block {
        schema::Block {
            attributes: [
                ("filename".to_string(), attr(Type::String, true, false, false)),
                ("content".to_string(), attr(Type::String, false, true, false)),
                ("tags".to_string(), attr(Type::Map(Box::new(Type::Number)), false, true, false)),
                ("id".to_string(), attr(Type::String, false, false, true)),
                ("mode".to_string(), attr(Type::String, false, true, true)),
            ]
            .into(),
            blocks: [
                ("single".to_string(), nested(Nesting::Single, 0, 0)),
                ("rule".to_string(), nested(Nesting::List, 0, 2)),
                ("tag".to_string(), nested(Nesting::Set, 0, 0)),
                ("listener".to_string(), nested(Nesting::Map, 0, 0)),
            ]
            .into(),
            description: String::new(),
        }
    }

    /// Decodes the body of the only resource in `main.tf`.
    fn decode(text: &str, schema: &schema::Block) -> Result<Value, Vec<Diagnostic>> {
        let (dir, config) = load_main(text);
        decode_body(&config.resources[0].body, schema, &EvalContext::new(dir.path()))
    }

    fn errors(text: &str, schema: &schema::Block) -> String {
        shown(&decode(text, schema).expect_err("expected errors"))
    }

    #[test]
    fn decodes_attributes_and_fills_nulls() {
        let v = decode(
            "resource \"local_file\" \"f\" {\n  filename = \"a.txt\"\n  tags = { a = \"1\" }\n}\n",
            &file_schema(),
        )
        .unwrap();
        assert_eq!(v.get_attr("filename"), &Value::string("a.txt"));
        assert_eq!(v.get_attr("tags"), &Value::Map([("a".to_string(), Value::int(1))].into_iter().collect()));
        assert_eq!(v.get_attr("content"), &Value::Null);
        assert_eq!(v.get_attr("id"), &Value::Null);
        assert_eq!(v.get_attr("single"), &Value::Null);
        assert_eq!(v.get_attr("rule"), &Value::List(vec![]));
        assert_eq!(v.get_attr("tag"), &Value::Set(vec![]));
        assert_eq!(v.get_attr("listener"), &Value::Map(Map::new()));
        // The value has exactly the schema's type.
        assert!(file_schema().implied_type().check(&v).is_ok());
    }

    #[test]
    fn type_mismatches_name_line_and_path() {
        let text =
            "resource \"local_file\" \"f\" {\n  filename = \"a\"\n  content = [\"x\"]\n  tags = { a = \"one\" }\n}\n";
        let diags = decode(text, &file_schema()).unwrap_err();
        assert_eq!(diags.len(), 2);
        assert_eq!(
            diags[0].to_string(),
            "Error: main.tf:3: Incorrect attribute value type\n  at attribute .content\n  Inappropriate value for attribute \"content\": a string is required, got a tuple."
        );
        assert_eq!(diags[1].location.as_ref().unwrap().line, 4);
        assert_eq!(diags[1].path.as_ref().unwrap().to_string(), ".tags[\"a\"]");
        assert!(diags[1].detail.contains("a number is required, got the string \"one\""));
    }

    #[test]
    fn missing_required_and_unsupported_arguments() {
        let text = "resource \"local_file\" \"f\" {\n  contnt = \"x\"\n  id = \"i\"\n  nope { }\n  content { }\n  rule = []\n}\n";
        let shown = errors(text, &file_schema());
        assert!(
            shown.contains("Error: main.tf:2: Unsupported argument\n  at attribute .contnt\n  An argument named \"contnt\" is not expected here. Did you mean \"content\"?"),
            "{shown}"
        );
        assert!(shown.contains("Error: main.tf:3: Value for unconfigurable attribute\n  at attribute .id\n  The argument \"id\" is decided by the provider and cannot be set."), "{shown}");
        assert!(shown.contains("Error: main.tf:4: Unsupported block type\n  at attribute .nope"), "{shown}");
        assert!(shown.contains("Error: main.tf:5: Unsupported block type\n  at attribute .content\n  Blocks of type \"content\" are not expected here. Did you mean to define argument \"content\"?"), "{shown}");
        assert!(shown.contains("Error: main.tf:6: Unsupported argument\n  at attribute .rule\n  An argument named \"rule\" is not expected here. Did you mean to define a block of type \"rule\"?"), "{shown}");
        assert!(shown.contains("Error: main.tf:1: Missing required argument\n  at attribute .filename\n  The argument \"filename\" is required, but no definition was found."), "{shown}");
    }

    #[test]
    fn nested_attribute_objects_are_checked_like_blocks() {
        let inner: BTreeMap<String, SchemaAttribute> = [
            ("port".to_string(), attr(Type::Number, true, false, false)),
            ("id".to_string(), attr(Type::String, false, false, true)),
        ]
        .into();
        let schema = schema::Block {
            attributes: [("rules".to_string(), SchemaAttribute::nested(Nesting::List, inner))].into(),
            ..Default::default()
        };
        let shown = errors("resource \"x\" \"y\" {\n  rules = [{ port = 1 }, { id = \"i\" }]\n}\n", &schema);
        assert!(shown.contains("Error: main.tf:2: Missing required argument\n  at attribute .rules[1].port\n  The argument \"port\" is required, but its value is null."), "{shown}");
        assert!(
            shown.contains("Error: main.tf:2: Value for unconfigurable attribute\n  at attribute .rules[1].id"),
            "{shown}"
        );
        let ok = decode("resource \"x\" \"y\" {\n  rules = [{ port = 1 }]\n}\n", &schema).unwrap();
        assert_eq!(ok.get_attr("rules").elements().map(<[Value]>::len), Some(1));
    }

    #[test]
    fn required_null_is_missing_and_optional_computed_may_be_set() {
        let shown = errors("resource \"local_file\" \"f\" {\n  filename = null\n}\n", &file_schema());
        assert_eq!(
            shown,
            "Error: main.tf:2: Missing required argument\n  at attribute .filename\n  The argument \"filename\" is required, but its value is null."
        );
        let v =
            decode("resource \"local_file\" \"f\" {\n  filename = \"a\"\n  mode = 644\n}\n", &file_schema()).unwrap();
        assert_eq!(v.get_attr("mode"), &Value::string("644"));
    }

    #[test]
    fn evaluation_errors_carry_the_attribute_path() {
        let diags =
            decode("resource \"local_file\" \"f\" {\n  filename = \"a\"\n  content = upper([])\n}\n", &file_schema())
                .unwrap_err();
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].path.as_ref().unwrap().to_string(), ".content");
        assert_eq!(diags[0].location.as_ref().unwrap().line, 3);
    }

    #[test]
    fn nested_blocks_by_nesting_mode() {
        let text = r#"resource "local_file" "f" {
  filename = "a"
  single {
    port = 1
  }
  rule {
    port = 2
  }
  rule {
    port = "3"
  }
  tag {
    port = 5
  }
  tag {
    port = 4
  }
  listener "http" {
    port = 80
  }
  listener "https" {
    port = 443
  }
}
"#;
        let v = decode(text, &file_schema()).unwrap();
        let port = |p: i64| Value::object([("port", Value::int(p))]);
        assert_eq!(v.get_attr("single"), &port(1));
        assert_eq!(v.get_attr("rule"), &Value::List(vec![port(2), port(3)]));
        assert_eq!(v.get_attr("tag"), &Value::set(vec![port(4), port(5)]));
        assert_eq!(
            v.get_attr("listener"),
            &Value::Map([("http".to_string(), port(80)), ("https".to_string(), port(443))].into_iter().collect())
        );
    }

    #[test]
    fn nested_block_errors() {
        let text = r#"resource "local_file" "f" {
  filename = "a"
  single {
    port = 1
  }
  single {
    port = 2
  }
  rule {
    port = 1
  }
  rule {
    port = 2
  }
  rule {
    prt = 3
  }
  listener {
    port = 80
  }
  tag "x" {
    port = 1
  }
}
"#;
        let shown = errors(text, &file_schema());
        assert!(shown.contains("Error: main.tf:6: Too many blocks\n  at attribute .single\n  No more than 1 \"single\" block allowed, found 2."), "{shown}");
        assert!(shown.contains("Error: main.tf:15: Too many blocks\n  at attribute .rule\n  No more than 2 \"rule\" blocks allowed, found 3."), "{shown}");
        assert!(shown.contains("Error: main.tf:16: Unsupported argument\n  at attribute .rule[2].prt"), "{shown}");
        assert!(
            shown.contains("Error: main.tf:15: Missing required argument\n  at attribute .rule[2].port"),
            "{shown}"
        );
        assert!(shown.contains("Error: main.tf:18: Missing key for block\n  at attribute .listener"), "{shown}");
        assert!(shown.contains("Error: main.tf:21: Extraneous label for block\n  at attribute .tag"), "{shown}");
    }

    #[test]
    fn too_few_blocks() {
        let mut schema = file_schema();
        schema.blocks.insert("rule".to_string(), nested(Nesting::List, 1, 0));
        let shown = errors("resource \"local_file\" \"f\" {\n  filename = \"a\"\n}\n", &schema);
        assert_eq!(
            shown,
            "Error: main.tf:1: Too few blocks\n  at attribute .rule\n  At least 1 \"rule\" block is required, found 0."
        );
    }

    #[test]
    fn unknown_values_pass_through() {
        let (dir, config) = load_main(
            "variable \"v\" {}\nresource \"local_file\" \"f\" {\n  filename = var.v\n  tags = { a = var.v }\n}\n",
        );
        let mut ctx = EvalContext::new(dir.path());
        ctx.variables.insert("v".into(), Value::unknown());
        let v = decode_body(&config.resources[0].body, &file_schema(), &ctx).unwrap();
        assert_eq!(v.get_attr("filename"), &Value::unknown());
        assert_eq!(v.get_attr("tags"), &Value::Map([("a".to_string(), Value::unknown())].into_iter().collect()));
    }

    #[test]
    fn dynamic_blocks_make_one_block_per_element() {
        let text = r#"
locals {
  ports = [80, 443]
}
resource "local_file" "f" {
  filename = "a"
  dynamic "rule" {
    for_each = [80, 443]
    content {
      port = rule.value + rule.key
    }
  }
  dynamic "listener" {
    for_each = { web = 8080, api = 9090 }
    iterator = l
    labels   = [l.key]
    content {
      port = l.value
    }
  }
}
"#;
        let v = decode(text, &file_schema()).unwrap();
        let port = |p: i64| Value::object([("port", Value::int(p))]);
        assert_eq!(v.get_attr("rule"), &Value::List(vec![port(80), port(444)]));
        assert_eq!(
            v.get_attr("listener"),
            &Value::Map([("api".to_string(), port(9090)), ("web".to_string(), port(8080))].into_iter().collect())
        );
        // The blocks' own rules still hold: at most two `rule` blocks.
        assert!(errors(&text.replace("[80, 443]", "[80, 443, 8443]"), &file_schema()).contains("Too many blocks"));
        // The iterator exists only inside the content.
        let outside = text.replace("filename = \"a\"", "filename = rule.key");
        let errors = load_errors(&outside).join("\n");
        assert!(errors.contains("Reference to undeclared resource"), "{errors}");
    }

    #[test]
    fn a_dynamic_block_over_an_unknown_collection_is_unknown() {
        let (dir, config) = load_main(
            "variable \"ports\" {}\nresource \"local_file\" \"f\" {\n  filename = \"a\"\n  dynamic \"rule\" {\n    for_each = var.ports\n    content {\n      port = rule.value\n    }\n  }\n}\n",
        );
        let ctx =
            EvalContext { variables: [("ports".to_string(), Value::unknown())].into(), ..EvalContext::new(dir.path()) };
        let v = decode_body(&config.resources[0].body, &file_schema(), &ctx).unwrap();
        assert!(v.get_attr("rule").is_unknown());
    }

    #[test]
    fn malformed_dynamic_blocks_say_what_is_wrong() {
        let with = |inner: &str| {
            format!("resource \"local_file\" \"f\" {{\n  filename = \"a\"\n  dynamic \"rule\" {{\n{inner}\n  }}\n}}\n")
        };
        assert!(errors(&with("    for_each = [1]"), &file_schema()).contains("exactly one content block, found 0"));
        assert!(errors(&with("    content {\n      port = 1\n    }"), &file_schema()).contains("needs a for_each"));
        assert!(
            errors(&with("    for_each = 3\n    content {\n      port = 1\n    }"), &file_schema())
                .contains("must be a collection")
        );
        let unknown_type = with("    for_each = [1]\n    content {}").replace("dynamic \"rule\"", "dynamic \"rules\"");
        assert!(errors(&unknown_type, &file_schema()).contains("Blocks of type \"rules\" are not expected here"));
    }
}
