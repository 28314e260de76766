//! The expression syntax tree and references.
//!
//! `hcl-edit`'s tree keeps every space and comment so that files can be
//! rewritten; this one keeps only meaning and a [`Location`] per node, which
//! is what evaluation and diagnostics need. [`Reference`] is what a traversal
//! such as `random_id.x.hex` refers to, for the dependency graph.

use std::fmt;

use crate::addr::{Mode, ModuleInstance, ResourceAddr};
use crate::diag::{Diagnostic, Location};
use crate::value::Value;

use super::error_at;

/// An expression and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Expression {
    /// What kind of expression it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub location: Location,
}

/// The kinds of expression.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// `null`, `true`, `42`, `"text"` (a string without `${` or `%{`).
    Literal(Value),
    /// A string or heredoc with interpolations or directives.
    Template(Vec<TemplatePart>),
    /// `[a, b]`
    Tuple(Vec<Expression>),
    /// `{ a = 1, "b" = 2, (var.k) = 3 }`: keys are expressions; a bare name
    /// key is a string literal.
    Object(Vec<(Expression, Expression)>),
    /// A bare name: `var`, `count`, a `for` variable, or a resource type.
    Variable(String),
    /// `source.attr`, `source[key]`, `source.*.attr`, `source[*].attr`.
    Traversal {
        /// What is traversed.
        source: Box<Expression>,
        /// The steps, in order.
        steps: Vec<Step>,
    },
    /// `name(args)` or `name(args...)`.
    Call {
        /// The function's name.
        name: String,
        /// The arguments.
        args: Vec<Expression>,
        /// Whether the last argument ends in `...` and is spread into arguments.
        expand_final: bool,
    },
    /// `-x`, `!x`
    Unary {
        /// The operator.
        op: UnaryOp,
        /// Its operand.
        operand: Box<Expression>,
    },
    /// `a + b`, `a == b`, `a && b`, …
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Box<Expression>,
        /// Right operand.
        rhs: Box<Expression>,
    },
    /// `condition ? then : otherwise`
    Conditional {
        /// Must be a bool.
        condition: Box<Expression>,
        /// The result when true.
        then: Box<Expression>,
        /// The result when false.
        otherwise: Box<Expression>,
    },
    /// `[for … in …: …]` or `{for … in …: … => …}`.
    For(Box<ForExpr>),
}

/// One step of a traversal.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `.name`
    Attr(String),
    /// `[key]` (and the legacy `.0`); boxed, so that the common step, an
    /// attribute name, does not take an expression's room.
    Index(Box<Expression>),
    /// `.*` (`full: false`, applies the following attribute steps to every
    /// element) or `[*]` (`full: true`, applies all following steps).
    Splat {
        /// Whether this is `[*]`.
        full: bool,
    },
}

/// A `for` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct ForExpr {
    /// The key (or index) variable, when two are named.
    pub key_var: Option<String>,
    /// The value variable.
    pub value_var: String,
    /// What is iterated over.
    pub collection: Expression,
    /// `key =>`: present for an object `for`, absent for a tuple `for`.
    pub key: Option<Expression>,
    /// The element (or value) expression.
    pub value: Expression,
    /// The `if` filter.
    pub condition: Option<Expression>,
    /// `...` after the value: group values with equal keys into tuples.
    pub grouping: bool,
}

/// A piece of a template.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplatePart {
    /// Text, escapes already decoded and `~` strip markers already applied.
    Literal(String),
    /// `${expr}`
    Interpolation(Expression),
    /// `%{if c}…%{else}…%{endif}`
    If {
        /// Must be a bool.
        condition: Expression,
        /// Rendered when true.
        then: Vec<TemplatePart>,
        /// Rendered when false.
        otherwise: Vec<TemplatePart>,
    },
    /// `%{for k, v in coll}…%{endfor}`
    For {
        /// The key (or index) variable, when two are named.
        key_var: Option<String>,
        /// The value variable.
        value_var: String,
        /// What is iterated over.
        collection: Expression,
        /// Rendered once per element.
        body: Vec<TemplatePart>,
    },
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-`
    Negate,
    /// `!`
    Not,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Subtract,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
    /// `<`
    Less,
    /// `<=`
    LessEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterEqual,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Equal => "==",
            BinaryOp::NotEqual => "!=",
            BinaryOp::Less => "<",
            BinaryOp::LessEqual => "<=",
            BinaryOp::Greater => ">",
            BinaryOp::GreaterEqual => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

/// Something an expression refers to: what the dependency graph connects.
#[derive(Clone, PartialEq, Eq, Hash, Ord, PartialOrd, Debug)]
pub enum Reference {
    /// `var.NAME`
    Variable(String),
    /// `local.NAME`. Inside a module, after [expansion](super::expand_modules),
    /// the module's locals, input variables, outputs and calls are locals
    /// named after their module instance: `module.a.local.x`,
    /// `module.a.var.y`, `module.a.output.z`, `module.a.module.b`.
    Local(String),
    /// `module.NAME`: the outputs of a module call, as an object (a list or
    /// map of objects with `count` or `for_each`).
    Module(String),
    /// `TYPE.NAME` or `data.TYPE.NAME`, whatever follows (`.hex`, `[0]`).
    Resource(ResourceAddr),
    /// `count.index`
    CountIndex,
    /// `each.key`
    EachKey,
    /// `each.value`
    EachValue,
    /// `path.module`
    PathModule,
    /// `path.root`
    PathRoot,
    /// `path.cwd`
    PathCwd,
    /// `terraform.workspace`: the name of the workspace of the run.
    TerraformWorkspace,
    /// `terraform.applying` (Terraform 1.10): true while applying, false
    /// while planning; an ephemeral value.
    TerraformApplying,
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reference::Variable(name) => write!(f, "var.{name}"),
            Reference::Local(name) => f.write_str(&super::local_address(name)),
            Reference::Module(name) => write!(f, "module.{name}"),
            Reference::Resource(addr) => write!(f, "{addr}"),
            Reference::CountIndex => f.write_str("count.index"),
            Reference::EachKey => f.write_str("each.key"),
            Reference::EachValue => f.write_str("each.value"),
            Reference::PathModule => f.write_str("path.module"),
            Reference::PathRoot => f.write_str("path.root"),
            Reference::PathCwd => f.write_str("path.cwd"),
            Reference::TerraformWorkspace => f.write_str("terraform.workspace"),
            Reference::TerraformApplying => f.write_str("terraform.applying"),
        }
    }
}

/// Why a traversal is not a valid reference: a summary and a detail.
pub(crate) type InvalidReference = (&'static str, String);

impl Reference {
    /// The reference a traversal from the unbound name `root` makes, and how
    /// many of `steps` it consumes (`var.x` consumes one, `data.t.n` two);
    /// the remaining steps go into the referenced value.
    pub(crate) fn from_traversal(root: &str, steps: &[Step]) -> Result<(Reference, usize), InvalidReference> {
        let attr = |i: usize| match steps.get(i) {
            Some(Step::Attr(name)) => Some(name.as_str()),
            _ => None,
        };
        let named = |what: &str, example: &str| -> Result<String, InvalidReference> {
            attr(0).map(str::to_string).ok_or_else(|| {
                ("Invalid reference", format!("A reference to {what} must be followed by a name, like {example}."))
            })
        };
        if let Some((module, inner)) = super::module::scoped_root(root) {
            let (reference, consumed) = Reference::from_traversal(inner, steps)?;
            return Ok(match reference {
                Reference::Resource(addr) => (Reference::Resource(addr.in_module(module)), consumed),
                other => (other, consumed),
            });
        }
        let reference = match root {
            "module" => Reference::Module(named("a module", "module.name")?),
            "var" => Reference::Variable(named("an input variable", "var.name")?),
            "local" => Reference::Local(named("a local value", "local.name")?),
            "count" => match attr(0) {
                Some("index") => Reference::CountIndex,
                _ => {
                    return Err((
                        "Invalid \"count\" attribute",
                        "The only attribute of \"count\" is count.index.".into(),
                    ));
                }
            },
            "each" => match attr(0) {
                Some("key") => Reference::EachKey,
                Some("value") => Reference::EachValue,
                _ => {
                    return Err((
                        "Invalid \"each\" attribute",
                        "The attributes of \"each\" are each.key and each.value.".into(),
                    ));
                }
            },
            "path" => match attr(0) {
                Some("module") => Reference::PathModule,
                Some("root") => Reference::PathRoot,
                Some("cwd") => Reference::PathCwd,
                _ => {
                    return Err((
                        "Invalid \"path\" attribute",
                        "The attributes of \"path\" are path.module, path.root and path.cwd.".into(),
                    ));
                }
            },
            "data" => match (attr(0), attr(1)) {
                (Some(type_name), Some(name)) => {
                    return Ok((Reference::Resource(ResourceAddr::data(type_name, name)), 2));
                }
                _ => {
                    return Err((
                        "Invalid data resource reference",
                        "A reference to a data resource must name its type and name, like data.local_file.name.".into(),
                    ));
                }
            },
            "ephemeral" => match (attr(0), attr(1)) {
                (Some(type_name), Some(name)) => {
                    let addr = ResourceAddr::new(ModuleInstance::root(), Mode::Ephemeral, type_name, name);
                    return Ok((Reference::Resource(addr), 2));
                }
                _ => {
                    return Err((
                        "Invalid ephemeral resource reference",
                        "The \"ephemeral\" object must be followed by two attribute names: the ephemeral resource \
                         type and name."
                            .into(),
                    ));
                }
            },
            "self" => {
                return Err((
                    "Invalid \"self\" reference",
                    "The \"self\" object is not available in this context. This object can be used only in resource \
                     provisioner, connection, and postcondition blocks."
                        .into(),
                ));
            }
            "terraform" => match attr(0) {
                Some("workspace") => Reference::TerraformWorkspace,
                Some("applying") => Reference::TerraformApplying,
                _ => {
                    return Err((
                        "Invalid \"terraform\" attribute",
                        "The \"terraform\" object has the attributes \"workspace\", the name of the workspace \
                         in use, and \"applying\", whether cairn is applying."
                            .into(),
                    ));
                }
            },
            type_name => match attr(0) {
                Some(name) => Reference::Resource(ResourceAddr::managed(type_name, name)),
                None => {
                    return Err((
                        "Invalid reference",
                        format!(
                            "\"{type_name}\" is not declared. A reference to a resource type must be followed by \
                             the resource name, like {type_name}.name."
                        ),
                    ));
                }
            },
        };
        Ok((reference, 1))
    }
}

impl Expression {
    /// Every reference inside the expression, in source order, with where it
    /// is written. Names bound by `for` expressions and template `for`
    /// directives are not references. Traversals that are not valid
    /// references (`var` alone) are left out; [`load`](super::load) reports them.
    pub fn references(&self) -> Vec<(Reference, Location)> {
        self.checked_references().into_iter().filter_map(Result::ok).collect()
    }

    /// Every reference inside, or the diagnostic for a traversal that is not
    /// a valid reference.
    pub(crate) fn checked_references(&self) -> Vec<Result<(Reference, Location), Diagnostic>> {
        self.checked_references_within(&[])
    }

    /// [`Expression::checked_references`] where the names `bound` (the
    /// iterators of enclosing `dynamic` blocks) are not references.
    pub(crate) fn checked_references_within(&self, bound: &[String]) -> Vec<Result<(Reference, Location), Diagnostic>> {
        let mut out = Vec::new();
        self.collect_references(&mut bound.to_vec(), &mut out);
        out
    }

    /// Walks the tree; `bound` holds the names of enclosing `for` variables.
    fn collect_references(&self, bound: &mut Vec<String>, out: &mut Vec<Result<(Reference, Location), Diagnostic>>) {
        self.visit_traversals(bound, &mut |root, steps, location| reference_at(root, steps, location, out));
    }

    /// Calls `f` with the root name, the steps and the location of every
    /// traversal from a name (`var.x`, `random_id.r[0].hex`, a bare `count`)
    /// that is not bound by an enclosing `for` or one in `bound`, in source
    /// order: the references, before they are resolved.
    pub(crate) fn visit_traversals(&self, bound: &mut Vec<String>, f: &mut dyn FnMut(&str, &[Step], &Location)) {
        match &self.kind {
            ExprKind::Literal(_) => {}
            ExprKind::Variable(root) => visit_unbound(root, &[], &self.location, bound, f),
            ExprKind::Traversal { source, steps } => {
                match &source.kind {
                    ExprKind::Variable(root) => visit_unbound(root, steps, &self.location, bound, f),
                    _ => source.visit_traversals(bound, f),
                }
                for step in steps {
                    if let Step::Index(key) = step {
                        key.visit_traversals(bound, f);
                    }
                }
            }
            ExprKind::Template(parts) => visit_template_traversals(parts, bound, f),
            ExprKind::Tuple(items) | ExprKind::Call { args: items, .. } => {
                items.iter().for_each(|e| e.visit_traversals(bound, f));
            }
            ExprKind::Object(items) => {
                for (key, value) in items {
                    key.visit_traversals(bound, f);
                    value.visit_traversals(bound, f);
                }
            }
            ExprKind::Unary { operand, .. } => operand.visit_traversals(bound, f),
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.visit_traversals(bound, f);
                rhs.visit_traversals(bound, f);
            }
            ExprKind::Conditional { condition, then, otherwise } => {
                condition.visit_traversals(bound, f);
                then.visit_traversals(bound, f);
                otherwise.visit_traversals(bound, f);
            }
            ExprKind::For(for_expr) => {
                for_expr.collection.visit_traversals(bound, f);
                let names = for_expr.key_var.iter().chain([&for_expr.value_var]).cloned().collect::<Vec<_>>();
                with_bound(bound, names, |bound| {
                    for e in for_expr.key.iter().chain([&for_expr.value]).chain(&for_expr.condition) {
                        e.visit_traversals(bound, f);
                    }
                });
            }
        }
    }
}

/// [`Expression::visit_traversals`] for a template's parts.
fn visit_template_traversals(
    parts: &[TemplatePart],
    bound: &mut Vec<String>,
    f: &mut dyn FnMut(&str, &[Step], &Location),
) {
    for part in parts {
        match part {
            TemplatePart::Literal(_) => {}
            TemplatePart::Interpolation(e) => e.visit_traversals(bound, f),
            TemplatePart::If { condition, then, otherwise } => {
                condition.visit_traversals(bound, f);
                visit_template_traversals(then, bound, f);
                visit_template_traversals(otherwise, bound, f);
            }
            TemplatePart::For { key_var, value_var, collection, body } => {
                collection.visit_traversals(bound, f);
                let names = key_var.iter().chain([value_var]).cloned().collect();
                with_bound(bound, names, |bound| visit_template_traversals(body, bound, f));
            }
        }
    }
}

/// Calls `f` for a traversal from `root`, unless `root` is a `for`
/// variable.
fn visit_unbound(
    root: &str,
    steps: &[Step],
    location: &Location,
    bound: &[String],
    f: &mut dyn FnMut(&str, &[Step], &Location),
) {
    if !bound.iter().any(|b| b == root) {
        f(root, steps, location);
    }
}

/// Runs `f` with `names` bound, then unbinds them.
fn with_bound(bound: &mut Vec<String>, names: Vec<String>, f: impl FnOnce(&mut Vec<String>)) {
    let count = names.len();
    bound.extend(names);
    f(bound);
    bound.truncate(bound.len() - count);
}

/// Records the reference a traversal from `root` makes.
fn reference_at(
    root: &str,
    steps: &[Step],
    location: &Location,
    out: &mut Vec<Result<(Reference, Location), Diagnostic>>,
) {
    out.push(match Reference::from_traversal(root, steps) {
        Ok((reference, _)) => Ok((reference, location.clone())),
        Err((summary, detail)) => Err(error_at(summary, detail, location)),
    });
}

#[cfg(test)]
mod tests {
    use super::super::testutil::expr;
    use super::*;

    fn refs(text: &str) -> Vec<String> {
        expr(text).references().into_iter().map(|(r, _)| r.to_string()).collect()
    }

    #[test]
    fn finds_references_everywhere() {
        assert_eq!(refs("random_id.x[0].hex"), ["random_id.x"]);
        assert_eq!(refs("data.local_file.t.content"), ["data.local_file.t"]);
        assert_eq!(
            refs(r#"upper("${var.a}-${local.b}") == (count.index > 0 ? each.key : each.value)"#),
            ["var.a", "local.b", "count.index", "each.key", "each.value"]
        );
        assert_eq!(refs("{ (var.k) = path.module, x = path.root }"), ["var.k", "path.module", "path.root"]);
        assert_eq!(refs("var.m[local.k]"), ["var.m", "local.k"]);
        assert_eq!(refs("-var.n"), ["var.n"]);
        assert_eq!(refs("[var.a, local_file.f.*.id]"), ["var.a", "local_file.f"]);
    }

    #[test]
    fn for_variables_are_not_references() {
        assert_eq!(refs("[for x in var.xs : x.id if x.ok]"), ["var.xs"]);
        assert_eq!(refs("{for k, v in var.m : k => v...}"), ["var.m"]);
        assert_eq!(refs("[for x in local.xs : x]"), ["local.xs"]);
        assert_eq!(refs(r#""%{for s in var.l}${s}${local.sep}%{endfor}""#), ["var.l", "local.sep"]);
    }

    #[test]
    fn invalid_references_are_reported_with_their_location() {
        let results = expr("concat(var, [random_id])").checked_references();
        let errors: Vec<String> = results.into_iter().filter_map(Result::err).map(|d| d.to_string()).collect();
        assert_eq!(errors.len(), 2);
        assert!(errors[0].starts_with("Error: test.tf:1: Invalid reference"), "{}", errors[0]);
        assert!(errors[1].contains("random_id.name"), "{}", errors[1]);
    }

    #[test]
    fn references_display_as_written() {
        let shown: Vec<String> = [
            Reference::Variable("x".into()),
            Reference::Local("y".into()),
            Reference::Resource(ResourceAddr::managed("random_id", "x")),
            Reference::Resource(ResourceAddr::data("local_file", "t")),
            Reference::CountIndex,
            Reference::EachKey,
            Reference::PathModule,
        ]
        .iter()
        .map(Reference::to_string)
        .collect();
        assert_eq!(
            shown,
            ["var.x", "local.y", "random_id.x", "data.local_file.t", "count.index", "each.key", "path.module"]
        );
    }
}
