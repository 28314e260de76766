//! The refactoring blocks at the top level of a configuration: `moved` (an
//! object changed address), `import` (adopt an object that already exists)
//! and `removed` (stop managing an object, destroying it or not). They name
//! resources by address, written as references (`local_file.a`,
//! `local_file.b[0]`), never as strings; what they do to the state is the
//! planner's business.

use std::collections::BTreeMap;
use std::path::Path as FsPath;

use std::fmt;

use crate::addr::{InstanceAddr, InstanceKey, Mode, ModuleInstance, ResourceAddr};
use crate::diag::{Diagnostic, Location};
use crate::value::Value;

use super::blocks::{
    expect_no_labels, literal_bool, take_attribute, take_blocks, unsupported_argument, unsupported_block,
};
use super::expr::{ExprKind, Expression, Reference, Step};
use super::{Block, Config, error_at};

/// A `moved { from = ADDR  to = ADDR }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// The old address.
    pub from: MoveAddr,
    /// The new address (of the same kind as `from`).
    pub to: MoveAddr,
    /// The block header.
    pub location: Location,
}

/// What a `moved` block names: a resource (or one of its instances), or a
/// module call (or one of its instances), with everything in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum MoveAddr {
    /// `local_file.a`, `module.m.local_file.a[0]`.
    Resource(InstanceAddr),
    /// `module.a`, `module.a["x"]`, `module.a.module.b`.
    Module(ModuleInstance),
}

impl fmt::Display for MoveAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveAddr::Resource(a) => write!(f, "{a}"),
            MoveAddr::Module(m) => write!(f, "{m}"),
        }
    }
}

impl Moved {
    /// Whether the block moves whole resources (every instance, keys kept)
    /// rather than one instance: neither address has an instance key.
    pub fn whole_resources(&self) -> bool {
        matches!((&self.from, &self.to), (MoveAddr::Resource(from), MoveAddr::Resource(to))
            if from.key.is_none() && to.key.is_none())
    }

    /// Where this block sends the object at `addr`, if it moves it.
    pub fn destination(&self, addr: &InstanceAddr) -> Option<InstanceAddr> {
        match (&self.from, &self.to) {
            (MoveAddr::Resource(from), MoveAddr::Resource(to)) if self.whole_resources() => (addr.resource
                == from.resource)
                .then(|| InstanceAddr { resource: to.resource.clone(), key: addr.key.clone() }),
            (MoveAddr::Resource(from), MoveAddr::Resource(to)) => (addr == from).then(|| to.clone()),
            (MoveAddr::Module(from), MoveAddr::Module(to)) => {
                let module = addr.resource.module.moved(from, to)?;
                Some(InstanceAddr { resource: addr.resource.clone().in_module(module), key: addr.key.clone() })
            }
            _ => None,
        }
    }

    /// Where this block sends what `at` names, if it moves it: for
    /// following chains of moves.
    fn destination_of(&self, at: &MoveAddr) -> Option<MoveAddr> {
        match (at, &self.from, &self.to) {
            (MoveAddr::Resource(a), _, _) => self.destination(a).map(MoveAddr::Resource),
            (MoveAddr::Module(m), MoveAddr::Module(from), MoveAddr::Module(to)) => {
                m.moved(from, to).map(MoveAddr::Module)
            }
            _ => None,
        }
    }
}

/// An `import { to = ADDR  id = "…" }` block; with `for_each`, one per
/// element once the configuration is loaded ([`expand_imports`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// The instance that adopts the object (with `for_each`, its resource
    /// until expanded).
    pub to: InstanceAddr,
    /// The object's id, as the provider knows it; may use input variables
    /// (and `each`, with `for_each`).
    pub id: Expression,
    /// `for_each = …` and the key of `to` (`terraform_data.x[each.key]`),
    /// until expanded.
    pub for_each: Option<Box<ImportForEach>>,
    /// The block header.
    pub location: Location,
}

/// The `for_each` of an `import` block and the instance key its `to`
/// names for each element.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportForEach {
    /// `for_each = …`: a map, or a set of strings, known from input
    /// variables.
    pub collection: Expression,
    /// The expression in brackets after `to`'s resource.
    pub key: Expression,
}

/// A `removed { from = ADDR  lifecycle { destroy = false } }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    /// The resource no longer in the configuration.
    pub from: ResourceAddr,
    /// Destroy its objects (the default, as without the block) or only
    /// forget them.
    pub destroy: bool,
    /// The block header.
    pub location: Location,
}

/// Reads a `moved` block.
pub(super) fn moved(block: Block, diags: &mut Vec<Diagnostic>) -> Option<Moved> {
    expect_no_labels(&block, diags);
    let Block { mut body, location, .. } = block;
    let from = required_move_address(&mut body, "from", &location, diags);
    let to = required_move_address(&mut body, "to", &location, diags);
    reject_rest(&body, "moved", &["from", "to"], diags);
    let (from, to) = (from?, to?);
    match (&from, &to) {
        // Across types too (Terraform 1.8): the target's provider converts
        // the object (`plan::convert_moves_across_types`).
        (MoveAddr::Resource(_), MoveAddr::Resource(_)) | (MoveAddr::Module(_), MoveAddr::Module(_)) => {
            Some(Moved { from, to, location })
        }
        _ => {
            diags.push(error_at(
                "Invalid move",
                format!(
                    "This statement declares a move from {from} to {to}: a moved block moves a resource to a \
                     resource, or a module call to a module call."
                ),
                &location,
            ));
            None
        }
    }
}

/// Reads an `import` block.
pub(super) fn import(block: Block, diags: &mut Vec<Diagnostic>) -> Option<Import> {
    expect_no_labels(&block, diags);
    let Block { mut body, location, .. } = block;
    let collection = take_attribute(&mut body, "for_each").map(|a| a.expr);
    let (to, key) = match &collection {
        None => (required_address(&mut body, "to", "import", &location, diags), None),
        Some(_) => match required_keyed_address(&mut body, &location, diags) {
            Some((to, key)) => (Some(to), Some(key)),
            None => (None, None),
        },
    };
    let id = take_attribute(&mut body, "id");
    reject_rest(&body, "import", &["to", "id", "for_each"], diags);
    let Some(id) = id else {
        diags.push(missing_argument("id", "import", &location));
        return None;
    };
    let each_allowed = collection.is_some();
    let refs = id.expr.references().into_iter().chain(key.iter().flat_map(Expression::references));
    let collection_refs = collection.iter().flat_map(Expression::references);
    for (reference, at) in refs.chain(collection_refs) {
        let allowed = match reference {
            Reference::Variable(_) => true,
            Reference::EachKey | Reference::EachValue => each_allowed,
            _ => false,
        };
        if !allowed {
            diags.push(error_at(
                "Invalid import argument",
                format!(
                    "An import block's id, for_each and target key may refer only to input variables{}, not to \
                     {reference}.",
                    if each_allowed { " and each.key or each.value" } else { "" }
                ),
                &at,
            ));
        }
    }
    let for_each = match (collection, key) {
        (Some(collection), Some(key)) => Some(Box::new(ImportForEach { collection, key })),
        _ => None,
    };
    Some(Import { to: to?, id: id.expr, for_each, location })
}

/// The `to` of an `import` block with `for_each`: a resource and the
/// expression of its instance key (`terraform_data.x[each.key]`).
fn required_keyed_address(
    body: &mut super::Body,
    location: &Location,
    diags: &mut Vec<Diagnostic>,
) -> Option<(InstanceAddr, Expression)> {
    let Some(attr) = take_attribute(body, "to") else {
        diags.push(missing_argument("to", "import", location));
        return None;
    };
    if let super::ExprKind::Traversal { source, steps } = &attr.expr.kind
        && let (super::ExprKind::Variable(root), Some((super::Step::Index(key), head))) =
            (&source.kind, steps.split_last())
        && let Ok((Reference::Resource(resource), consumed)) = Reference::from_traversal(root, head)
        && consumed == head.len()
    {
        return Some((resource.instance(), (**key).clone()));
    }
    diags.push(error_at(
        "Invalid import address",
        "With for_each, an import block's to names a resource and the key of each instance, like \
         terraform_data.x[each.key].",
        &attr.expr.location,
    ));
    None
}

/// The `import` blocks with `for_each`, one for each element of the
/// collection (which may refer only to input variables, `variables`):
/// `each.key` and `each.value` bound, the target key and the id
/// evaluated. Run once variables are known, before planning.
pub fn expand_imports(
    imports: &mut Vec<Import>,
    variables: &BTreeMap<String, Value>,
    dir: &FsPath,
) -> Result<(), Vec<Diagnostic>> {
    let mut expanded = Vec::with_capacity(imports.len());
    let mut errors = Vec::new();
    for import in std::mem::take(imports) {
        let Some(for_each) = import.for_each.as_deref() else {
            expanded.push(import);
            continue;
        };
        let ctx = super::EvalContext { variables: variables.clone(), ..super::EvalContext::new(dir) };
        let elements = match super::eval(&for_each.collection, &ctx).map(|v| import_elements(&v)) {
            Ok(Ok(elements)) => elements,
            Ok(Err(detail)) => {
                errors.push(error_at("Invalid for_each argument", detail, &for_each.collection.location));
                continue;
            }
            Err(d) => {
                errors.extend(d);
                continue;
            }
        };
        for (key, value) in elements {
            let each = super::EvalContext { each: Some((Value::string(key), value)), ..ctx.clone() };
            match one_import(&import, for_each, &each) {
                Ok(one) => expanded.push(one),
                Err(d) => errors.extend(d),
            }
        }
    }
    *imports = expanded;
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// The elements of an import's `for_each`, as `(each.key, each.value)`.
fn import_elements(collection: &Value) -> Result<Vec<(String, Value)>, String> {
    match collection {
        Value::Map(m) | Value::Object(m) => Ok(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        Value::Set(items) => items
            .iter()
            .map(|v| v.as_str().map(|s| (s.to_string(), v.clone())).ok_or(()))
            .collect::<Result<_, _>>()
            .map_err(|()| "The for_each of an import block must be a map, or a set of strings.".to_string()),
        _ => Err("The for_each of an import block must be a map, or a set of strings.".to_string()),
    }
}

/// One element's import: its target instance and its id as a constant.
fn one_import(import: &Import, for_each: &ImportForEach, ctx: &super::EvalContext) -> Result<Import, Vec<Diagnostic>> {
    let key = match super::eval(&for_each.key, ctx)? {
        Value::String(s) => crate::addr::InstanceKey::String(s),
        Value::Number(n) if n.as_i64().is_some() => crate::addr::InstanceKey::Int(n.as_i64().unwrap_or_default()),
        _ => {
            return Err(vec![error_at(
                "Invalid import address",
                "The key of an import's target must be a string or a whole number.",
                &for_each.key.location,
            )]);
        }
    };
    let id = super::eval(&import.id, ctx)?;
    let id = Expression { kind: super::ExprKind::Literal(id), location: import.id.location.clone() };
    let to = InstanceAddr { resource: import.to.resource.clone(), key: Some(key) };
    Ok(Import { to, id, for_each: None, location: import.location.clone() })
}

/// Reads a `removed` block.
pub(super) fn removed(block: Block, dir: &FsPath, diags: &mut Vec<Diagnostic>) -> Option<Removed> {
    expect_no_labels(&block, diags);
    let Block { mut body, location, .. } = block;
    let from = required_address(&mut body, "from", "removed", &location, diags);
    let mut destroy = true;
    for lifecycle in take_blocks(&mut body, "lifecycle") {
        expect_no_labels(&lifecycle, diags);
        for attr in &lifecycle.body.attributes {
            match attr.name.as_str() {
                "destroy" => destroy = literal_bool(attr, dir, diags),
                _ => diags.push(unsupported_argument(attr, "lifecycle", &["destroy"])),
            }
        }
        for nested in &lifecycle.body.blocks {
            diags.push(unsupported_block(nested, "lifecycle", &[]));
        }
    }
    reject_rest(&body, "removed", &["from"], diags);
    let from = from?;
    if from.key.is_some() {
        diags.push(error_at(
            "Resource instance keys not allowed",
            format!("A removed block names a whole resource, like {}: every instance of it is removed.", from.resource),
            &location,
        ));
        return None;
    }
    Some(Removed { from: from.resource, destroy, location })
}

/// The checks that need the whole configuration: a moved or removed
/// resource is no longer declared, no two moves end at one address, moves
/// make no cycle, and every import target is declared, once.
pub(super) fn check(config: &Config, diags: &mut Vec<Diagnostic>) {
    let declared = |r: &ResourceAddr| config.resource(r).map(|r| r.location.clone());
    let mut destinations: BTreeMap<String, &Location> = BTreeMap::new();
    for m in &config.moved {
        if let MoveAddr::Resource(from) = &m.from
            && m.whole_resources()
            && let Some(at) = declared(&from.resource)
        {
            diags.push(error_at(
                "Moved object still exists",
                format!(
                    "This statement declares a move from {}, but that resource is still declared at {at}. \
                     Change your configuration so that this address is no longer declared.",
                    m.from
                ),
                &m.location,
            ));
        }
        if let Some(first) = destinations.insert(m.to.to_string(), &m.location) {
            diags.push(error_at(
                "Ambiguous move statements",
                format!(
                    "A statement at {first} declared that an object moved to {}, and this statement declares \
                     the same. Each address can have moved from only one other address.",
                    m.to
                ),
                &m.location,
            ));
        }
    }
    check_move_cycles(&config.moved, diags);
    let mut imported: BTreeMap<&InstanceAddr, &Location> = BTreeMap::new();
    for i in &config.imports {
        if config.resource(&i.to.resource).is_none() {
            diags.push(error_at(
                "Configuration for import target does not exist",
                format!(
                    "The configuration for the given import target {} does not exist. Every import target \
                     must have a resource block to be imported into.",
                    i.to
                ),
                &i.location,
            ));
        }
        if let Some(first) = imported.insert(&i.to, &i.location) {
            diags.push(error_at(
                format!("Duplicate import configuration for \"{}\"", i.to),
                format!("An import block for {} was already declared at {first}.", i.to),
                &i.location,
            ));
        }
    }
    for r in &config.removed {
        if let Some(at) = declared(&r.from) {
            diags.push(error_at(
                "Removed resource block still exists",
                format!(
                    "This statement declares that {} was removed, but it is still declared in configuration \
                     at {at}.",
                    r.from
                ),
                &r.location,
            ));
        }
    }
}

/// A move that leads back to where it started, through other moves.
fn check_move_cycles(moves: &[Moved], diags: &mut Vec<Diagnostic>) {
    for (i, start) in moves.iter().enumerate() {
        let mut at = start.to.clone();
        // A chain longer than the number of moves must repeat one.
        for _ in 0..moves.len() {
            if at == start.from {
                diags.push(error_at(
                    "Cyclic dependency in move statements",
                    format!(
                        "The move from {} to {} leads, through other moved blocks, back to {}.",
                        start.from, start.to, start.from
                    ),
                    &moves[i].location,
                ));
                break;
            }
            match moves.iter().find_map(|m| m.destination_of(&at)) {
                Some(next) => at = next,
                None => break,
            }
        }
    }
}

/// The address an attribute gives, or `None` after saying why.
fn required_address(
    body: &mut super::Body,
    name: &str,
    block: &str,
    location: &Location,
    diags: &mut Vec<Diagnostic>,
) -> Option<InstanceAddr> {
    let Some(attr) = take_attribute(body, name) else {
        diags.push(missing_argument(name, block, location));
        return None;
    };
    address(&attr.expr).map_err(|d| diags.push(d)).ok()
}

/// The `from` or `to` of a moved block: a resource's address or a module's.
fn required_move_address(
    body: &mut super::Body,
    name: &str,
    location: &Location,
    diags: &mut Vec<Diagnostic>,
) -> Option<MoveAddr> {
    let Some(attr) = take_attribute(body, name) else {
        diags.push(missing_argument(name, "moved", location));
        return None;
    };
    let module =
        address_text(&attr.expr).ok().and_then(|text| text.parse::<ModuleInstance>().ok()).filter(|m| !m.is_root());
    match module {
        Some(module) => Some(MoveAddr::Module(module)),
        None => address(&attr.expr).map(MoveAddr::Resource).map_err(|d| diags.push(d)).ok(),
    }
}

/// A traversal of names and literal keys as the text of an address
/// (`module.a["x"].local_file.f[0]`), which has one parser.
fn address_text(expr: &Expression) -> Result<String, ()> {
    let (root, steps): (&str, &[Step]) = match &expr.kind {
        ExprKind::Variable(root) => (root, &[]),
        ExprKind::Traversal { source, steps } => match &source.kind {
            ExprKind::Variable(root) => (root, steps),
            _ => return Err(()),
        },
        _ => return Err(()),
    };
    let mut text = root.to_string();
    for step in steps {
        match step {
            Step::Attr(name) => text.push_str(&format!(".{name}")),
            Step::Index(key) => text.push_str(&literal_key(key).ok_or(())?.to_string()),
            Step::Splat { .. } => return Err(()),
        }
    }
    Ok(text)
}

/// A managed resource's address written as a reference: `TYPE.NAME`,
/// optionally followed by one literal instance key, after the module path
/// if it is in a module.
pub(super) fn address(expr: &Expression) -> Result<InstanceAddr, Diagnostic> {
    let invalid = || {
        error_at(
            "Invalid address",
            "Expected the address of a managed resource or one of its instances, like local_file.a or \
             local_file.a[0], written without quotes.",
            &expr.location,
        )
    };
    let text = address_text(expr).map_err(|()| invalid())?;
    let addr: InstanceAddr = text.parse().map_err(|_| invalid())?;
    if addr.resource.mode != Mode::Managed {
        return Err(invalid());
    }
    Ok(addr)
}

/// An instance key written as a literal: `[0]`, `["a"]`.
fn literal_key(expr: &Expression) -> Option<InstanceKey> {
    match &expr.kind {
        ExprKind::Literal(Value::String(s)) => Some(InstanceKey::String(s.clone())),
        ExprKind::Literal(Value::Number(n)) => n.as_i64().map(InstanceKey::Int),
        _ => None,
    }
}

fn missing_argument(name: &str, block: &str, location: &Location) -> Diagnostic {
    error_at("Missing required argument", format!("The argument \"{name}\" is required in a {block} block."), location)
}

/// Anything left in a block's body after its arguments were taken.
fn reject_rest(body: &super::Body, block: &str, expected: &[&str], diags: &mut Vec<Diagnostic>) {
    for attr in &body.attributes {
        diags.push(unsupported_argument(attr, block, expected));
    }
    for nested in &body.blocks {
        diags.push(unsupported_block(nested, block, &[]));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main};
    use super::*;

    #[test]
    fn refactoring_blocks_are_read() {
        let (_dir, config) = load_main(
            r#"
resource "local_file" "b" {
  content = "x"
}
moved {
  from = local_file.a
  to   = local_file.b
}
moved {
  from = local_file.c[0]
  to   = local_file.c["x"]
}
import {
  to = local_file.b
  id = "out/b.txt"
}
removed {
  from = local_file.old
  lifecycle {
    destroy = false
  }
}
removed {
  from = local_file.older
}
"#,
        );
        assert!(config.moved[0].whole_resources() && !config.moved[1].whole_resources());
        assert_eq!(config.moved[1].to.to_string(), "local_file.c[\"x\"]");
        let c0: InstanceAddr = "local_file.c[0]".parse().unwrap();
        assert_eq!(config.moved[1].destination(&c0), Some("local_file.c[\"x\"]".parse().unwrap()));
        assert_eq!(config.moved[0].destination(&c0), None);
        assert_eq!(config.imports[0].to.to_string(), "local_file.b");
        assert_eq!((config.removed[0].destroy, config.removed[1].destroy), (false, true));
    }

    #[test]
    fn moving_module_calls_moves_everything_in_them() {
        let moved = |from: &str, to: &str| Moved {
            from: MoveAddr::Module(from.parse().unwrap()),
            to: MoveAddr::Module(to.parse().unwrap()),
            location: Location::default(),
        };
        let dest = |m: &Moved, addr: &str| m.destination(&addr.parse().unwrap()).map(|a| a.to_string());
        let rename = moved("module.a", "module.b");
        assert_eq!(dest(&rename, "module.a.local_file.f").as_deref(), Some("module.b.local_file.f"));
        assert_eq!(
            dest(&rename, r#"module.a["x"].module.c.local_file.f[0]"#).as_deref(),
            Some(r#"module.b["x"].module.c.local_file.f[0]"#)
        );
        assert_eq!(dest(&rename, "module.ab.local_file.f"), None);
        assert_eq!(dest(&rename, "local_file.f"), None);
        let keyed = moved("module.a", r#"module.a["x"]"#);
        assert_eq!(dest(&keyed, "module.a.local_file.f").as_deref(), Some(r#"module.a["x"].local_file.f"#));
        assert_eq!(dest(&keyed, "module.a[0].local_file.f"), None);
        let (_dir, config) = load_main("moved {\n  from = module.old\n  to   = module.new\n}\n");
        assert_eq!(config.moved[0].from, MoveAddr::Module("module.old".parse().unwrap()));
        let errors = load_errors("moved {\n  from = module.old\n  to   = local_file.x\n}\n");
        assert!(errors[0].starts_with("Error: main.tf:1: Invalid move"), "{errors:?}");
    }

    #[test]
    fn refactoring_errors_say_what_and_where() {
        let errors = load_errors(
            r#"resource "local_file" "a" {
  content = "x"
}
moved {
  from = local_file.a
  to   = local_file.b
}
moved {
  from = local_file.c
  to   = local_file.b
}
moved {
  from = local_file.d
  to   = random_id.d
}
import {
  to = local_file.nowhere
  id = "x"
}
removed {
  from = local_file.a
}
moved {
  from = "local_file.e"
  to   = local_file.f
}
moved {
  from = local_file.g
  to   = local_file.h
}
moved {
  from = local_file.h
  to   = local_file.g
}
"#,
        );
        let expected = [
            "Error: main.tf:4: Moved object still exists",
            "Error: main.tf:8: Ambiguous move statements",
            "Error: main.tf:16: Configuration for import target does not exist",
            "Error: main.tf:20: Removed resource block still exists",
            "Error: main.tf:24: Invalid address",
            "Error: main.tf:27: Cyclic dependency in move statements",
        ];
        for e in expected {
            assert!(errors.iter().any(|shown| shown.starts_with(e)), "missing {e:?} in:\n{}", errors.join("\n"));
        }
    }
}
