//! `resource` and `data` blocks: the meta-arguments (`count`, `for_each`,
//! `provider`, `depends_on`, `lifecycle`) taken out of the body, which is
//! left for the provider's schema.

use std::path::Path as FsPath;

use crate::addr::{Mode, ResourceAddr};
use crate::diag::{Diagnostic, Location};
use crate::value::{Path, Value};

use super::blocks::{literal_bool, take_attribute, take_blocks, unsupported_argument, unsupported_block};
use super::conditions::condition_block;
use super::expr::{ExprKind, Expression, Reference, Step};
use super::{Attribute, Block, Body, ConditionKind, Lifecycle, ReplaceTrigger, Resource, error_at};

const LIFECYCLE_ARGUMENTS: &[&str] =
    &["create_before_destroy", "prevent_destroy", "ignore_changes", "replace_triggered_by"];

/// Takes `count` and `for_each` out of a resource or module block's body;
/// both at once is an error.
pub(super) fn take_count_and_for_each(
    body: &mut Body,
    diags: &mut Vec<Diagnostic>,
) -> (Option<Expression>, Option<Expression>) {
    let count = take_attribute(body, "count").map(|a| a.expr);
    let for_each = take_attribute(body, "for_each").map(|a| a.expr);
    if let (Some(_), Some(for_each)) = (&count, &for_each) {
        diags.push(error_at(
            "Invalid combination of \"count\" and \"for_each\"",
            "The \"count\" and \"for_each\" meta-arguments are mutually exclusive; only one may be used.",
            &for_each.location,
        ));
    }
    (count, for_each)
}

/// A resource from its block; `addr` comes from the already checked labels.
pub(super) fn resource(addr: ResourceAddr, block: Block, dir: &FsPath, diags: &mut Vec<Diagnostic>) -> Resource {
    let Block { mut body, location, .. } = block;
    let (count, for_each) = take_count_and_for_each(&mut body, diags);
    let provider = take_attribute(&mut body, "provider")
        .and_then(|a| provider_name(&a, diags))
        .unwrap_or_else(|| addr.implied_provider().to_string());
    let depends_on = take_attribute(&mut body, "depends_on").map(|a| depends_on(&a, diags)).unwrap_or_default();
    let mut lifecycles = take_blocks(&mut body, "lifecycle").into_iter();
    let lifecycle = lifecycles.next().map(|b| lifecycle(b, addr.mode, dir, diags)).unwrap_or_default();
    for extra in lifecycles {
        diags.push(error_at(
            "Duplicate lifecycle block",
            "A resource may have only one lifecycle block.",
            &extra.location,
        ));
    }
    let (count, for_each, lifecycle) = (count.map(Box::new), for_each.map(Box::new), Box::new(lifecycle));
    Resource { addr, provider, body, depends_on, count, for_each, lifecycle, location }
}

/// `provider = name`: a bare provider name.
fn provider_name(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Option<String> {
    match &attr.expr.kind {
        ExprKind::Variable(name) => return Some(name.clone()),
        ExprKind::Traversal { source, steps } => match (&source.kind, steps.as_slice()) {
            (ExprKind::Variable(name), [Step::Attr(alias)]) => return Some(format!("{name}.{alias}")),
            _ => diags.push(error_at(
                "Invalid provider reference",
                "The provider argument takes a provider name, optionally with an alias, like provider = local \
                 or provider = local.other.",
                &attr.expr.location,
            )),
        },
        _ => diags.push(error_at(
            "Invalid provider reference",
            "The provider argument takes a provider name without quotes, like provider = local.",
            &attr.expr.location,
        )),
    }
    None
}

/// `depends_on = [random_id.x, data.local_file.t, module.m]`: whole
/// resources and module calls only.
/// Shared with `output` blocks.
pub(crate) fn depends_on(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Vec<(Reference, Location)> {
    let ExprKind::Tuple(items) = &attr.expr.kind else {
        diags.push(error_at(
            "Invalid depends_on",
            "depends_on takes a list of resources, like [random_id.x, data.local_file.t].",
            &attr.expr.location,
        ));
        return Vec::new();
    };
    items.iter().filter_map(|item| whole_resource(item).map_err(|d| diags.push(d)).ok()).collect()
}

/// The resource a `depends_on` element names; nothing more may follow it.
fn whole_resource(expr: &Expression) -> Result<(Reference, Location), Diagnostic> {
    let invalid = |detail: &str| error_at("Invalid depends_on reference", detail, &expr.location);
    let (root, steps): (&str, &[Step]) = match &expr.kind {
        ExprKind::Variable(root) => (root, &[]),
        ExprKind::Traversal { source, steps } => match &source.kind {
            ExprKind::Variable(root) => (root, steps),
            _ => {
                return Err(invalid("depends_on may only list resources, like random_id.x."));
            }
        },
        _ => {
            return Err(invalid("depends_on may only list resources, like random_id.x."));
        }
    };
    match Reference::from_traversal(root, steps) {
        Ok((reference @ (Reference::Resource(_) | Reference::Module(_)), consumed)) if consumed == steps.len() => {
            Ok((reference, expr.location.clone()))
        }
        Ok((Reference::Module(name), _)) => Err(invalid(&format!(
            "References in depends_on must be to a whole module call, like module.{name}, not to an output or \
             instance of it."
        ))),
        Ok((Reference::Resource(addr), _)) => Err(invalid(&format!(
            "References in depends_on must be to a whole resource, like {addr}, not to an attribute or instance of it."
        ))),
        Ok(_) => Err(invalid("depends_on may only list resources, data resources and module calls, like random_id.x.")),
        Err((summary, detail)) => Err(error_at(summary, detail, &expr.location)),
    }
}

/// The `lifecycle` block of a resource or, with only conditions, of a
/// data source.
fn lifecycle(block: Block, mode: Mode, dir: &FsPath, diags: &mut Vec<Diagnostic>) -> Lifecycle {
    let mut lifecycle = Lifecycle { location: Some(block.location.clone()), ..Lifecycle::default() };
    for attr in &block.body.attributes {
        if mode != Mode::Managed && LIFECYCLE_ARGUMENTS.contains(&attr.name.as_str()) {
            let (kind, kinds) = match mode {
                Mode::Ephemeral => ("ephemeral", "ephemeral resources"),
                _ => ("data", "data resources"),
            };
            diags.push(error_at(
                format!("Invalid {kind} resource lifecycle argument"),
                format!(
                    "The lifecycle argument \"{}\" is defined only for managed resources (\"resource\" blocks), and \
                     is not valid for {kinds}.",
                    attr.name
                ),
                &attr.location,
            ));
            continue;
        }
        match attr.name.as_str() {
            "create_before_destroy" => lifecycle.create_before_destroy = literal_bool(attr, dir, diags),
            "prevent_destroy" => lifecycle.prevent_destroy = literal_bool(attr, dir, diags),
            "ignore_changes" => lifecycle.ignore_changes = ignore_changes(attr, diags),
            "replace_triggered_by" => lifecycle.replace_triggered_by = replace_triggered_by(attr, diags),
            _ => diags.push(unsupported_argument(attr, "lifecycle", LIFECYCLE_ARGUMENTS)),
        }
    }
    for nested in &block.body.blocks {
        match nested.type_name.as_str() {
            "precondition" => {
                lifecycle.preconditions.extend(condition_block(nested, ConditionKind::ResourcePrecondition, diags))
            }
            "postcondition" => {
                lifecycle.postconditions.extend(condition_block(nested, ConditionKind::ResourcePostcondition, diags))
            }
            _ => diags.push(unsupported_block(nested, "lifecycle", &["precondition", "postcondition"])),
        }
    }
    lifecycle
}

/// `ignore_changes = [content, tags["a"]]`, or `all` (the root path).
fn ignore_changes(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Vec<Path> {
    match &attr.expr.kind {
        ExprKind::Variable(keyword) if keyword == "all" => vec![Path::root()],
        ExprKind::Tuple(items) => {
            items.iter().filter_map(|e| attribute_path(e).map_err(|d| diags.push(d)).ok()).collect()
        }
        _ => {
            diags.push(error_at(
                "Invalid ignore_changes",
                "ignore_changes takes a list of this resource's attributes, like [content, tags[\"a\"]], or the keyword all.",
                &attr.expr.location,
            ));
            Vec::new()
        }
    }
}

/// A path into the resource's own attributes, written as a traversal
/// (`tags["a"]`) or, as older configurations do, a quoted name.
fn attribute_path(expr: &Expression) -> Result<Path, Diagnostic> {
    let invalid = || {
        error_at(
            "Invalid ignore_changes",
            "Each element must be an attribute of this resource, like content or tags[\"a\"].",
            &expr.location,
        )
    };
    let (root, steps): (&str, &[Step]) = match &expr.kind {
        ExprKind::Variable(root) => (root, &[]),
        ExprKind::Literal(Value::String(name)) => (name, &[]),
        ExprKind::Traversal { source, steps } => match &source.kind {
            ExprKind::Variable(root) => (root, steps),
            _ => return Err(invalid()),
        },
        _ => return Err(invalid()),
    };
    let mut path = Path::root().attr(root);
    for step in steps {
        path = match step {
            Step::Attr(name) => path.attr(name),
            Step::Index(key) => match &key.kind {
                ExprKind::Literal(Value::String(k)) => path.key(k),
                ExprKind::Literal(Value::Number(n)) => match n.as_i64() {
                    Some(i) if i >= 0 => path.index(i as usize),
                    _ => return Err(invalid()),
                },
                _ => return Err(invalid()),
            },
            Step::Splat { .. } => return Err(invalid()),
        };
    }
    Ok(path)
}

/// `replace_triggered_by = [random_id.x, local_file.f[count.index].content]`:
/// each element is a reference to a managed resource, optionally one
/// instance of it (its key a literal or made of `count.index`, `each.key`
/// and `each.value`), optionally followed by an attribute path.
fn replace_triggered_by(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Vec<ReplaceTrigger> {
    let ExprKind::Tuple(items) = &attr.expr.kind else {
        diags.push(error_at(
            "Invalid replace_triggered_by",
            "replace_triggered_by takes a list of resources or their attributes, like [random_id.x].",
            &attr.expr.location,
        ));
        return Vec::new();
    };
    items.iter().filter_map(|item| replace_trigger(item).map_err(|d| diags.push(d)).ok()).collect()
}

/// One element of `replace_triggered_by`.
fn replace_trigger(expr: &Expression) -> Result<ReplaceTrigger, Diagnostic> {
    let invalid = |detail: &str| error_at("Invalid replace_triggered_by expression", detail, &expr.location);
    const EXPECTED: &str = "Each element must refer to a managed resource, one of its instances or one of their \
                            attributes, like random_id.x, random_id.x[count.index] or local_file.f.content.";
    let (root, steps): (&str, &[Step]) = match &expr.kind {
        ExprKind::Variable(root) => (root, &[]),
        ExprKind::Traversal { source, steps } => match &source.kind {
            ExprKind::Variable(root) => (root, steps),
            _ => return Err(invalid(EXPECTED)),
        },
        _ => return Err(invalid(EXPECTED)),
    };
    let resource = match Reference::from_traversal(root, steps) {
        Ok((Reference::Resource(addr), consumed)) if addr.mode == Mode::Managed => (addr, consumed),
        _ => return Err(invalid(EXPECTED)),
    };
    let (resource, consumed) = resource;
    let mut rest = &steps[consumed..];
    let key = match rest.first() {
        Some(Step::Index(key)) => {
            let repetition =
                |r: &Reference| matches!(r, Reference::CountIndex | Reference::EachKey | Reference::EachValue);
            if !key.references().iter().all(|(r, _)| repetition(r)) {
                return Err(invalid(
                    "Only count.index, each.key and each.value may pick the instance in replace_triggered_by.",
                ));
            }
            rest = &rest[1..];
            Some(key.clone())
        }
        _ => None,
    };
    let mut path = Path::root();
    for step in rest {
        path = match step {
            Step::Attr(name) => path.attr(name),
            Step::Index(k) => match &k.kind {
                ExprKind::Literal(Value::String(s)) => path.key(s),
                ExprKind::Literal(Value::Number(n)) => match n.as_i64() {
                    Some(i) if i >= 0 => path.index(i as usize),
                    _ => return Err(invalid(EXPECTED)),
                },
                _ => return Err(invalid("An attribute path in replace_triggered_by takes only literal keys.")),
            },
            Step::Splat { .. } => return Err(invalid(EXPECTED)),
        };
    }
    Ok(ReplaceTrigger { resource, key: key.map(|k| *k), path, expr: expr.clone() })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main};
    use super::*;

    #[test]
    fn meta_arguments_leave_the_body() {
        let (_dir, config) = load_main(
            r#"
resource "random_id" "x" {
  byte_length = 4
}
data "local_file" "t" {
  filename = "t.txt"
}
resource "local_file" "f" {
  count      = 2
  provider   = other
  depends_on = [random_id.x, data.local_file.t]
  content    = "x"
  lifecycle {
    create_before_destroy = true
    prevent_destroy       = false
    ignore_changes        = [content, tags["a"], rule[0].port, "legacy"]
    replace_triggered_by  = [random_id.x, random_id.x.hex]
  }
}
provider "other" {}
"#,
        );
        let f = &config.resources[2];
        assert_eq!(f.addr, ResourceAddr::managed("local_file", "f"));
        assert_eq!(f.provider, "other");
        assert_eq!(f.body.attributes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["content"]);
        assert!(f.body.blocks.is_empty());
        assert!(f.count.is_some() && f.for_each.is_none());
        let deps: Vec<(String, usize)> = f.depends_on.iter().map(|(r, l)| (r.to_string(), l.line)).collect();
        assert_eq!(deps, [("random_id.x".to_string(), 11), ("data.local_file.t".to_string(), 11)]);
        let lc = &f.lifecycle;
        assert!(lc.create_before_destroy && !lc.prevent_destroy);
        let paths: Vec<String> = lc.ignore_changes.iter().map(Path::to_string).collect();
        assert_eq!(paths, [".content", ".tags[\"a\"]", ".rule[0].port", ".legacy"]);
        assert_eq!(lc.replace_triggered_by.len(), 2);
        assert_eq!(lc.location.as_ref().unwrap().line, 13);
        assert_eq!(config.resources[0].provider, "random");
        assert_eq!(config.resources[1].addr.mode, Mode::Data);
        let refs: Vec<String> = f.references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(refs, ["random_id.x", "random_id.x", "random_id.x", "data.local_file.t"]);
    }

    #[test]
    fn ignore_changes_all() {
        let (_dir, config) =
            load_main("resource \"local_file\" \"f\" {\n  lifecycle {\n    ignore_changes = all\n  }\n}\n");
        assert_eq!(config.resources[0].lifecycle.ignore_changes, [Path::root()]);
    }

    #[test]
    fn meta_argument_errors() {
        let errors = load_errors(
            r#"resource "random_id" "x" {
  count    = 1
  for_each = {}
  provider = "random"
  depends_on = [random_id.y.hex, var.v]
  lifecycle {
    prevent_destroy = var.v
    ignore_changes  = [tags[var.v], x.*.y]
    replace_triggered_by = [var.v]
    create_before_destory = true
  }
  lifecycle {}
}
resource "random_id" "y" {
  depends_on = random_id.x
}
variable "v" {}
"#,
        );
        let expected = [
            "Error: main.tf:3: Invalid combination of \"count\" and \"for_each\"",
            "Error: main.tf:4: Invalid provider reference",
            "Error: main.tf:5: Invalid depends_on reference\n  References in depends_on must be to a whole resource, like random_id.y, not to an attribute or instance of it.",
            "Error: main.tf:5: Invalid depends_on reference\n  depends_on may only list resources, data resources and module calls",
            "Error: main.tf:7: Variables not allowed\n  The \"prevent_destroy\" argument must be a literal value; it cannot refer to var.v.",
            "Error: main.tf:8: Invalid ignore_changes",
            "Error: main.tf:9: Invalid replace_triggered_by expression",
            "Error: main.tf:10: Unsupported argument\n  An argument named \"create_before_destory\" is not expected in a lifecycle block. Did you mean \"create_before_destroy\"?",
            "Error: main.tf:12: Duplicate lifecycle block",
            "Error: main.tf:15: Invalid depends_on\n",
        ];
        for e in expected {
            assert!(errors.iter().any(|shown| shown.starts_with(e)), "missing {e:?} in:\n{}", errors.join("\n"));
        }
        // Both bad ignore_changes elements are reported.
        assert_eq!(errors.iter().filter(|e| e.starts_with("Error: main.tf:8: Invalid ignore_changes")).count(), 2);
    }

    #[test]
    fn dynamic_blocks_load_and_their_iterators_are_no_references() {
        let (_, config) = super::super::testutil::load_main(
            "resource \"a\" \"b\" {\n  rule {\n    dynamic \"x\" {\n      for_each = [1]\n      iterator = it\n      content { v = it.value }\n    }\n  }\n}\n",
        );
        assert!(config.resources[0].references().is_empty());
    }

    #[test]
    fn data_resources_have_only_conditions_in_their_lifecycle() {
        let errors = load_errors(
            "data \"local_file\" \"t\" {\n  lifecycle {\n    create_before_destroy = true\n    postcondition {\n      condition = self.content != \"\"\n      error_message = \"empty\"\n    }\n  }\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:3: Invalid data resource lifecycle argument\n  The lifecycle argument \"create_before_destroy\" is defined only for managed resources (\"resource\" blocks), and is not valid for data resources."
            ]
        );
    }

    #[test]
    fn conditions_are_read_from_the_lifecycle_block() {
        let (_, config) = super::super::testutil::load_main(
            r#"variable "n" {}
resource "terraform_data" "a" {
  input = var.n
  lifecycle {
    precondition {
      condition     = var.n < 2
      error_message = "n is too big."
    }
    postcondition {
      condition     = self.output == terraform_data.b.id
      error_message = "no."
    }
  }
}
resource "terraform_data" "b" {}
"#,
        );
        let lifecycle = &config.resources[0].lifecycle;
        assert_eq!((lifecycle.preconditions.len(), lifecycle.postconditions.len()), (1, 1));
        let refs: Vec<String> = config.resources[0].references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(refs, ["var.n", "var.n", "terraform_data.b"], "self is no reference");
    }

    #[test]
    fn a_condition_must_refer_to_something_and_self_only_in_a_postcondition() {
        let errors = load_errors(
            r#"resource "terraform_data" "a" {
  lifecycle {
    precondition {
      condition     = false
      error_message = "never"
    }
    precondition {
      condition     = self.input == 1
      error_message = "m"
    }
  }
}
"#,
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:4: Invalid precondition expression\n  The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
                "Error: main.tf:8: Invalid \"self\" reference\n  The \"self\" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks.",
            ]
        );
    }
}
