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

/// An `import { to = ADDR  id = "…" }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// The instance that adopts the object.
    pub to: InstanceAddr,
    /// The object's id, as the provider knows it; may use input variables.
    pub id: Expression,
    /// The block header.
    pub location: Location,
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
        (MoveAddr::Resource(f), MoveAddr::Resource(t)) if f.resource.type_name != t.resource.type_name => {
            diags.push(error_at(
                "Resource type mismatch",
                format!(
                    "This statement declares a move from {from} to {to}, which is a resource of a different \
                     type. A moved block can only change the name or key of a resource."
                ),
                &location,
            ));
            None
        }
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
    let to = required_address(&mut body, "to", "import", &location, diags);
    let id = take_attribute(&mut body, "id");
    reject_rest(&body, "import", &["to", "id"], diags);
    let Some(id) = id else {
        diags.push(missing_argument("id", "import", &location));
        return None;
    };
    for (reference, at) in id.expr.references() {
        if !matches!(reference, Reference::Variable(_)) {
            diags.push(error_at(
                "Invalid import id argument",
                format!("The import ID may refer only to input variables, not to {reference}."),
                &at,
            ));
        }
    }
    Some(Import { to: to?, id: id.expr, location })
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
            "Error: main.tf:12: Resource type mismatch",
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
