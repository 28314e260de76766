//! Sensitivity marks: which parts of an expression's value are sensitive.
//!
//! A value is sensitive when it is derived from something sensitive: an
//! input variable declared `sensitive = true`, an attribute a provider's
//! schema or answer marks sensitive, a local or resource attribute built
//! from one, or a call to `sensitive()`. The marks of an expression are
//! paths into its value, found by following the expression the way its
//! value is derived, as Terraform's marks travel with values:
//!
//! - a reference has the marks of what it refers to, narrowed by the
//!   attribute and index steps after it (`local.m.b` is not sensitive when
//!   only `local.m.a` is);
//! - a tuple or object constructor keeps each element's marks at its
//!   place;
//! - a conditional has the marks of both branches (Terraform marks the
//!   result when either is sensitive), and all of it when the condition is;
//! - `nonsensitive(x)` has none and `sensitive(x)` all;
//! - anything else that reads a marked value (operators, other functions,
//!   string templates, `for` expressions) is sensitive as a whole.
//!
//! The marks are a side table next to [`Value`] rather than inside it, so
//! that the rest of the engine keeps comparing and matching plain values;
//! [`conform`] fits them to the value they describe (map keys, set
//! elements). This module does not decide how a sensitive value is shown:
//! the CLI's renderers redact every path the marks cover.

use std::collections::{BTreeMap, BTreeSet};

use crate::addr::ResourceAddr;
use crate::schema;
use crate::value::{Path, PathStep, Value};

use super::expr::{ExprKind, Expression, Reference, Step, TemplatePart};
use super::{Body, EvalContext};

/// What is sensitive where an expression is evaluated.
#[derive(Debug, Clone, Default)]
pub struct Sensitivity {
    /// Input variables declared `sensitive = true`.
    pub variables: BTreeSet<String>,
    /// The marks of each local value.
    pub locals: BTreeMap<String, Vec<Path>>,
    /// The marks of each resource's value (for `count` and `for_each`,
    /// paths start with the instance's index or key).
    pub resources: BTreeMap<ResourceAddr, Vec<Path>>,
    /// The marks of `each.value` (an element of a `for_each` map may be
    /// sensitive; its key may not).
    pub each_value: Vec<Path>,
}

/// The paths of the value of `expr` (in `ctx`) that are sensitive; the
/// root path when all of it is; empty when none of it is.
pub fn marks(expr: &Expression, ctx: &EvalContext) -> Vec<Path> {
    Marker { sensitivity: &ctx.sensitivity, bound: Vec::new() }.marks(expr)
}

/// The marks of the object a body decodes to: each attribute's marks under
/// its name, and a nested block type as a whole when anything in it is
/// sensitive.
pub fn body_marks(body: &Body, ctx: &EvalContext) -> Vec<Path> {
    let mut marker = Marker { sensitivity: &ctx.sensitivity, bound: Vec::new() };
    marker.body(body, &Path::root())
}

/// The marks fitted to `value`: an attribute step into a map becomes a key
/// step, a path into a set stops at the set (its elements have no stable
/// position), a path into an unknown value is kept whole (it fits the
/// value once known), and a path that leads nowhere in the value is
/// dropped when the value is known there.
pub fn conform(marks: &[Path], value: &Value) -> Vec<Path> {
    let mut out: Vec<Path> = marks.iter().filter_map(|m| conform_one(m, value)).collect();
    out.sort();
    out.dedup();
    out
}

fn conform_one(mark: &Path, value: &Value) -> Option<Path> {
    let mut here = value;
    let mut steps = Vec::new();
    for (at, step) in mark.steps().iter().enumerate() {
        if let Value::Unknown(_) = here {
            // What the value will be is not known yet, so the mark stays
            // where it was known to be: an unknown object whose secret is
            // one attribute is not secret as a whole (Terraform keeps
            // `(known after apply)` for its other attributes).
            steps.extend(mark.steps()[at..].iter().cloned());
            break;
        }
        let name = match step {
            PathStep::Attr(n) | PathStep::Key(n) => Some(n.as_str()),
            PathStep::Index(_) => None,
        };
        let (next, fitted) = match (here, step, name) {
            (Value::Object(m), _, Some(n)) => (m.get(n)?, PathStep::Attr(n.to_string())),
            (Value::Map(m), _, Some(n)) => (m.get(n)?, PathStep::Key(n.to_string())),
            (Value::List(v) | Value::Tuple(v), PathStep::Index(i), _) => (v.get(*i as usize)?, step.clone()),
            // Null or a set: the mark covers it all from here.
            (Value::Null | Value::Set(_), _, _) => break,
            _ => return None,
        };
        steps.push(fitted);
        here = next;
    }
    Some(Path::from_steps(steps))
}

/// The paths of `value` that are sensitive by `block`'s schema or by one of
/// `marks`: what references to the object see as sensitive.
pub fn object_marks(value: &Value, block: &schema::Block, marks: &[Path]) -> Vec<Path> {
    let mut out = conform(marks, value);
    if has_sensitive(block) {
        schema_marks(value, block, &Path::root(), &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// Whether any attribute of `block`, at any depth, is sensitive.
fn has_sensitive(block: &schema::Block) -> bool {
    block.attributes.values().any(|a| a.sensitive || a.nested.as_ref().is_some_and(|n| has_sensitive(&n.block)))
        || block.blocks.values().any(|b| has_sensitive(&b.block))
}

fn schema_marks(value: &Value, block: &schema::Block, path: &Path, out: &mut Vec<Path>) {
    if !path.is_root() && block.is_sensitive(path) {
        out.push(path.clone());
        return;
    }
    match value {
        Value::Object(m) => m.iter().for_each(|(k, v)| schema_marks(v, block, &path.attr(k), out)),
        Value::Map(m) => m.iter().for_each(|(k, v)| schema_marks(v, block, &path.key(k), out)),
        Value::List(v) | Value::Set(v) | Value::Tuple(v) => {
            v.iter().enumerate().for_each(|(i, e)| schema_marks(e, block, &path.index(i), out))
        }
        _ => {}
    }
}

/// The known text of every sensitive part of `value` (each string,
/// number or bool inside a marked path): what must not show up elsewhere.
pub fn secrets(value: &Value, marks: &[Path]) -> Vec<String> {
    let mut out = Vec::new();
    for mark in marks {
        leaves(&value.at(mark), &mut out);
    }
    out.sort();
    out.dedup();
    out
}

fn leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.iter().for_each(|e| leaves(e, out)),
        Value::Map(m) | Value::Object(m) => m.values().for_each(|e| leaves(e, out)),
        Value::Null | Value::Unknown(_) | Value::Bool(_) => {}
    }
}

/// The paths of `value` whose string or number is one of `secrets`, or
/// (for a string) contains one at least [`ECHO_MIN`] long: the copies a
/// provider made of a sensitive value it was sent (`output = input`) and
/// returned unmarked. A provider sees no marks on the wire, so the host
/// finds them by value; this may redact a harmless value that happens to
/// equal a secret, never show a secret.
pub fn echoes(value: &Value, secrets: &[String]) -> Vec<Path> {
    let mut out = Vec::new();
    if !secrets.is_empty() {
        find_echoes(value, secrets, &Path::root(), &mut out);
    }
    out
}

/// The shortest secret looked for inside longer strings (shorter ones
/// only as whole values), so that a one-letter secret does not redact
/// every string with that letter.
pub const ECHO_MIN: usize = 4;

fn find_echoes(value: &Value, secrets: &[String], path: &Path, out: &mut Vec<Path>) {
    let echoes = |text: &str| secrets.iter().any(|s| s == text || (s.len() >= ECHO_MIN && text.contains(s.as_str())));
    match value {
        Value::String(s) if echoes(s) => out.push(path.clone()),
        Value::Number(n) if echoes(&n.to_string()) => out.push(path.clone()),
        Value::Object(m) => m.iter().for_each(|(k, v)| find_echoes(v, secrets, &path.attr(k), out)),
        Value::Map(m) => m.iter().for_each(|(k, v)| find_echoes(v, secrets, &path.key(k), out)),
        Value::List(v) | Value::Tuple(v) => {
            v.iter().enumerate().for_each(|(i, e)| find_echoes(e, secrets, &path.index(i), out))
        }
        // A set's elements have no stable place: the set is marked whole.
        Value::Set(v) if !echoes_in(v, secrets) => {}
        Value::Set(_) => out.push(path.clone()),
        _ => {}
    }
}

fn echoes_in(elements: &[Value], secrets: &[String]) -> bool {
    elements.iter().any(|e| !echoes(e, secrets).is_empty())
}

/// The text of the values of the variables declared `sensitive = true`,
/// for a last guard on what is shown (see
/// [`crate::diag::source::remember_secrets`]).
pub fn variable_secrets(config: &super::Config, values: &BTreeMap<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for variable in config.variables.values().filter(|v| v.sensitive) {
        if let Some(value) = values.get(&variable.name) {
            leaves(value, &mut out);
        }
    }
    out
}

/// Whether a path lies under (or is) one of `marks`.
pub fn is_marked(marks: &[Path], path: &Path) -> bool {
    marks.iter().any(|m| path.starts_with(m))
}

/// The marks of a resource's instances, each under its instance's index or
/// key, as a reference to the whole resource sees them.
pub fn under(step: Option<PathStep>, marks: &[Path]) -> Vec<Path> {
    match step {
        None => marks.to_vec(),
        Some(step) => marks.iter().map(|m| Path::root().push(step.clone()).join(m)).collect(),
    }
}

/// Everything, or nothing.
fn whole(any: bool) -> Vec<Path> {
    if any { vec![Path::root()] } else { Vec::new() }
}

struct Marker<'a> {
    sensitivity: &'a Sensitivity,
    /// Names bound by enclosing `for` expressions and dynamic blocks, with
    /// their marks, innermost last.
    bound: Vec<(String, Vec<Path>)>,
}

impl Marker<'_> {
    fn marks(&mut self, expr: &Expression) -> Vec<Path> {
        match &expr.kind {
            ExprKind::Literal(_) => Vec::new(),
            ExprKind::Template(parts) => match parts.as_slice() {
                [TemplatePart::Interpolation(e)] => self.marks(e),
                _ => whole(self.template_reads_marks(parts)),
            },
            ExprKind::Tuple(items) => items
                .iter()
                .enumerate()
                .flat_map(|(i, e)| under(Some(PathStep::Index(i as u64)), &self.marks(e)))
                .collect(),
            ExprKind::Object(items) => self.object(items),
            ExprKind::Variable(root) => self.rooted(root, &[]),
            ExprKind::Traversal { source, steps } => match &source.kind {
                ExprKind::Variable(root) => self.rooted(root, steps),
                _ => {
                    let marks = self.marks(source);
                    self.narrow(marks, steps)
                }
            },
            ExprKind::Call { name, args, .. } => match name.as_str() {
                "sensitive" => vec![Path::root()],
                // Whether a value is sensitive is no secret.
                "nonsensitive" | "issensitive" => Vec::new(),
                _ => whole(self.any(args.iter())),
            },
            ExprKind::Unary { operand, .. } => whole(self.any([operand.as_ref()])),
            ExprKind::Binary { lhs, rhs, .. } => whole(self.any([lhs.as_ref(), rhs.as_ref()])),
            ExprKind::Conditional { condition, then, otherwise } => {
                if !self.marks(condition).is_empty() {
                    return vec![Path::root()];
                }
                let mut marks = self.marks(then);
                marks.extend(self.marks(otherwise));
                marks
            }
            ExprKind::For(f) => {
                let collection = self.marks(&f.collection);
                let names: Vec<&str> = f.key_var.iter().map(String::as_str).chain([f.value_var.as_str()]).collect();
                let parts = [Some(&f.value), f.key.as_ref(), f.condition.as_ref()];
                let inner = self.with_bound(&names, &collection, |m| m.any(parts.into_iter().flatten()));
                whole(!collection.is_empty() || inner)
            }
        }
    }

    /// Whether any of `exprs` has a mark.
    fn any<'e>(&mut self, exprs: impl IntoIterator<Item = &'e Expression>) -> bool {
        exprs.into_iter().any(|e| !self.marks(e).is_empty())
    }

    fn object(&mut self, items: &[(Expression, Expression)]) -> Vec<Path> {
        let mut marks = Vec::new();
        for (key, value) in items {
            let value_marks = self.marks(value);
            if !self.marks(key).is_empty() {
                return vec![Path::root()];
            }
            match &key.kind {
                ExprKind::Literal(Value::String(k)) => {
                    marks.extend(under(Some(PathStep::Attr(k.clone())), &value_marks))
                }
                // A computed key: which attribute it names is not known here.
                _ if !value_marks.is_empty() => return vec![Path::root()],
                _ => {}
            }
        }
        marks
    }

    fn template_reads_marks(&mut self, parts: &[TemplatePart]) -> bool {
        parts.iter().any(|part| match part {
            TemplatePart::Literal(_) => false,
            TemplatePart::Interpolation(e) => !self.marks(e).is_empty(),
            TemplatePart::If { condition, then, otherwise } => {
                !self.marks(condition).is_empty()
                    || self.template_reads_marks(then)
                    || self.template_reads_marks(otherwise)
            }
            TemplatePart::For { key_var, value_var, collection, body } => {
                let collection = self.marks(collection);
                let names: Vec<&str> = key_var.iter().map(String::as_str).chain([value_var.as_str()]).collect();
                !collection.is_empty() || self.with_bound(&names, &collection, |m| m.template_reads_marks(body))
            }
        })
    }

    /// Runs `f` with `names` bound, each sensitive as a whole when the
    /// collection they iterate over has any mark.
    fn with_bound<T>(&mut self, names: &[&str], collection: &[Path], f: impl FnOnce(&mut Self) -> T) -> T {
        let depth = self.bound.len();
        self.bound.extend(names.iter().map(|n| (n.to_string(), whole(!collection.is_empty()))));
        let result = f(self);
        self.bound.truncate(depth);
        result
    }

    /// A traversal from a bare name: a bound name or a reference.
    fn rooted(&mut self, root: &str, steps: &[Step]) -> Vec<Path> {
        if let Some((_, marks)) = self.bound.iter().rev().find(|(name, _)| name == root) {
            let marks = marks.clone();
            return self.narrow(marks, steps);
        }
        let Ok((reference, consumed)) = Reference::from_traversal(root, steps) else { return Vec::new() };
        let marks = self.reference(&reference);
        self.narrow(marks, &steps[consumed..])
    }

    fn reference(&self, reference: &Reference) -> Vec<Path> {
        let s = self.sensitivity;
        match reference {
            Reference::Variable(name) => whole(s.variables.contains(name)),
            Reference::Local(name) => s.locals.get(name).cloned().unwrap_or_default(),
            Reference::Resource(addr) => s.resources.get(addr).cloned().unwrap_or_default(),
            Reference::EachValue => s.each_value.clone(),
            _ => Vec::new(),
        }
    }

    /// The marks of a value's part that `steps` lead to.
    fn narrow(&mut self, mut marks: Vec<Path>, steps: &[Step]) -> Vec<Path> {
        for step in steps {
            if marks.is_empty() || marks.iter().any(Path::is_root) {
                break;
            }
            let selected = match step {
                Step::Attr(name) => Some(name.clone()),
                Step::Index(key) => {
                    if !self.marks(key).is_empty() {
                        return vec![Path::root()];
                    }
                    match &key.kind {
                        ExprKind::Literal(Value::String(s)) => Some(s.clone()),
                        ExprKind::Literal(Value::Number(n)) => Some(n.to_string()),
                        _ => None,
                    }
                }
                Step::Splat { .. } => None,
            };
            // A key known only when evaluated, or a splat: any mark inside
            // may be in the result.
            let Some(selected) = selected else { return vec![Path::root()] };
            marks = marks.iter().filter_map(|m| below(m, &selected)).collect();
        }
        marks
    }

    fn body(&mut self, body: &Body, at: &Path) -> Vec<Path> {
        let mut marks = Vec::new();
        for attr in &body.attributes {
            marks.extend(self.marks(&attr.expr).iter().map(|m| at.attr(&attr.name).join(m)));
        }
        for block in &body.blocks {
            let (name, sensitive) = match block.dynamic_iterator() {
                Some(iterator) => {
                    let for_each = block.body.attribute("for_each").map(|a| self.marks(&a.expr)).unwrap_or_default();
                    let content = block.body.blocks.iter().filter(|b| b.type_name == "content");
                    let inside = self.with_bound(&[iterator.as_str()], &for_each, |m| {
                        content.into_iter().any(|c| !m.body(&c.body, &Path::root()).is_empty())
                    });
                    (block.labels.first().cloned().unwrap_or_default(), !for_each.is_empty() || inside)
                }
                None => (block.type_name.clone(), !self.body(&block.body, &Path::root()).is_empty()),
            };
            if sensitive {
                marks.push(at.attr(&name));
            }
        }
        marks
    }
}

/// The marks of the element `key` of a value with `marks` (the marks of
/// `each.value` for the instance `key` of a `for_each`).
pub fn element(marks: &[Path], key: &str) -> Vec<Path> {
    if marks.iter().any(Path::is_root) {
        return vec![Path::root()];
    }
    marks.iter().filter_map(|m| below(m, key)).collect()
}

/// The rest of `mark` below the step named `selected` (an attribute, key
/// or index written as text); the root when `mark` ends there.
fn below(mark: &Path, selected: &str) -> Option<Path> {
    let (first, rest) = mark.steps().split_first()?;
    let matches = match first {
        PathStep::Attr(n) | PathStep::Key(n) => n == selected,
        PathStep::Index(i) => i.to_string() == selected,
    };
    matches.then(|| Path::from_steps(rest.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::expr;
    use super::*;

    fn ctx() -> EvalContext {
        let mut ctx = EvalContext::new(".");
        ctx.sensitivity.variables.insert("secret".into());
        ctx.sensitivity.locals.insert("m".into(), vec![Path::root().attr("a")]);
        ctx.sensitivity.resources.insert(ResourceAddr::managed("db", "x"), vec![Path::root().attr("password")]);
        ctx
    }

    fn shown(text: &str) -> Vec<String> {
        marks(&expr(text), &ctx()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn references_narrow_to_the_part_they_read() {
        assert_eq!(shown("var.secret"), ["."]);
        assert_eq!(shown("var.other"), Vec::<String>::new());
        assert_eq!(shown("local.m"), [".a"]);
        assert_eq!(shown("local.m.a"), ["."]);
        assert!(shown("local.m.b").is_empty());
        assert_eq!(shown("local.m[\"a\"]"), ["."]);
        assert_eq!(shown("db.x.password"), ["."]);
        assert!(shown("db.x.user").is_empty());
        // A key known only when evaluated may name the sensitive one.
        assert_eq!(shown("local.m[var.k]"), ["."]);
    }

    #[test]
    fn constructors_keep_marks_in_place_and_everything_else_spreads_them() {
        assert_eq!(shown("[\"a\", var.secret]"), ["[1]"]);
        assert_eq!(shown("{ user = \"u\", pass = var.secret }"), [".pass"]);
        assert_eq!(shown("\"pw=${var.secret}\""), ["."]);
        assert_eq!(shown("upper(var.secret)"), ["."]);
        assert_eq!(shown("length(local.m) + 1"), ["."]);
        assert_eq!(shown("[for s in [var.secret] : s]"), ["."]);
        assert_eq!(shown("true ? \"a\" : var.secret"), ["."]);
        assert_eq!(shown("var.secret == \"\" ? 1 : 2"), ["."]);
    }

    #[test]
    fn sensitive_and_nonsensitive_set_and_clear_marks() {
        assert_eq!(shown("sensitive(\"x\")"), ["."]);
        assert!(shown("nonsensitive(var.secret)").is_empty());
        assert_eq!(shown("\"${nonsensitive(var.secret)}-${var.secret}\""), ["."]);
        assert!(shown("issensitive(var.secret)").is_empty(), "whether a value is sensitive is no secret");
    }

    #[test]
    fn issensitive_is_true_for_a_value_sensitive_as_a_whole() {
        let mut ctx = ctx();
        ctx.variables.insert("secret".into(), Value::string("hunter2"));
        ctx.variables.insert("other".into(), Value::string("x"));
        ctx.locals.insert("m".into(), Value::object([("a", Value::int(1))]));
        let is = |text: &str| super::super::eval(&expr(text), &ctx).unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(is("issensitive(var.secret)"), Value::Bool(true));
        assert_eq!(is("issensitive(sensitive(1))"), Value::Bool(true));
        assert_eq!(is("issensitive(var.other)"), Value::Bool(false));
        assert_eq!(is("issensitive(nonsensitive(var.secret))"), Value::Bool(false));
        // Only a part of it is sensitive: the value as a whole is not.
        assert_eq!(is("issensitive(local.m)"), Value::Bool(false));
    }

    #[test]
    fn copies_of_a_secret_are_found_by_value() {
        let config =
            Value::object([("input", Value::object([("pw", Value::string("hunter2")), ("n", Value::int(1))]))]);
        let found = secrets(&config, &[Path::root().attr("input").attr("pw")]);
        assert_eq!(found, ["hunter2"]);
        let state = Value::object([
            ("input", config.get_attr("input").clone()),
            ("output", Value::object([("pw", Value::string("hunter2")), ("n", Value::int(1))])),
            ("url", Value::string("https://u:hunter2@host")),
            ("tags", Value::set(vec![Value::string("hunter2"), Value::string("b")])),
        ]);
        let shown: Vec<String> = echoes(&state, &found).iter().map(ToString::to_string).collect();
        assert_eq!(shown, [".input.pw", ".output.pw", ".tags", ".url"]);
        // A short secret is only found whole.
        assert!(echoes(&Value::string("a b c"), &["a".to_string()]).is_empty());
        assert_eq!(echoes(&Value::string("a"), &["a".to_string()]), [Path::root()]);
    }

    #[test]
    fn marks_conform_to_maps_and_stop_at_sets() {
        let v = Value::object([
            ("tags", Value::Map([("k".to_string(), Value::string("v"))].into_iter().collect())),
            ("set", Value::set(vec![Value::string("a")])),
        ]);
        let marks = [Path::root().attr("tags").attr("k"), Path::root().attr("set").index(3), Path::root().attr("none")];
        assert_eq!(conform(&marks, &v), vec![Path::root().attr("set"), Path::root().attr("tags").key("k")]);
    }
}
