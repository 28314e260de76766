//! Rewriting a module instance's expressions into the names of the flat
//! configuration (see the parent module): `var.x` becomes the local
//! `module.a.var.x`, `local_file.f` the resource `module.a.local_file.f`,
//! `path.module` the module's directory, and in a module call's arguments
//! `each` and `count.index` become the instance's values. Names bound by
//! `for` expressions and `dynamic` blocks are left alone.

use crate::diag::Location;
use crate::value::Value;

use super::super::expr::{ExprKind, Expression, ForExpr, Reference, Step, TemplatePart};
use super::super::instances::Instance;
use super::super::{Attribute, Block, Body, Check, Condition, Resource};
use super::Scope;

/// Rewrites a module instance's expressions into the flat configuration's
/// names (see the module documentation).
pub(super) struct Rewriter<'a> {
    /// The module instance whose expressions these are.
    pub(super) scope: &'a Scope,
    /// For the arguments of a module call with `count` or `for_each`: the
    /// instance, whose `count.index` or `each` become literals.
    pub(super) instance: Option<&'a Instance>,
    /// For the arguments of a module call whose `for_each` was evaluated
    /// while planning: the local holding it. An `each.value` not wholly
    /// known then is read from it (`local["module.m.for_each"]["k"]`), so
    /// that apply sees its final value rather than an unknown literal.
    pub(super) expansion: Option<&'a str>,
}

impl Rewriter<'_> {
    pub(super) fn expr(&self, expr: &Expression) -> Expression {
        self.expr_within(expr, &mut Vec::new())
    }

    /// Rewrites a `check` block: its data sources' bodies and assertions.
    pub(super) fn check(&self, check: &Check) -> Check {
        Check {
            data: check
                .data
                .iter()
                .map(|d| Resource { body: self.body(&d.body, &mut Vec::new()), ..d.clone() })
                .collect(),
            asserts: check.asserts.iter().map(|a| self.condition(a, &[])).collect(),
            ..check.clone()
        }
    }

    /// Rewrites a condition block's expressions; the names `bound` (`self`
    /// in a postcondition) are not references.
    pub(super) fn condition(&self, condition: &Condition, bound: &[String]) -> Condition {
        Condition {
            condition: self.expr_within(&condition.condition, &mut bound.to_vec()),
            error_message: self.expr_within(&condition.error_message, &mut bound.to_vec()),
            location: condition.location.clone(),
        }
    }

    /// Rewrites `expr`; the names `bound` (of `for` expressions and
    /// `dynamic` iterators) are not references.
    fn expr_within(&self, expr: &Expression, bound: &mut Vec<String>) -> Expression {
        let location = expr.location.clone();
        let kind = match &expr.kind {
            ExprKind::Literal(_) => return expr.clone(),
            ExprKind::Variable(root) => return self.traversal(root, &[], &location, bound),
            ExprKind::Traversal { source, steps } => match &source.kind {
                ExprKind::Variable(root) => return self.traversal(root, steps, &location, bound),
                _ => ExprKind::Traversal {
                    source: Box::new(self.expr_within(source, bound)),
                    steps: self.steps(steps, bound),
                },
            },
            ExprKind::Template(parts) => ExprKind::Template(self.template(parts, bound)),
            ExprKind::Tuple(items) => ExprKind::Tuple(items.iter().map(|e| self.expr_within(e, bound)).collect()),
            ExprKind::Object(items) => ExprKind::Object(
                items.iter().map(|(k, v)| (self.object_key(k, bound), self.expr_within(v, bound))).collect(),
            ),
            ExprKind::Call { name, args, expand_final } => ExprKind::Call {
                name: name.clone(),
                args: args.iter().map(|e| self.expr_within(e, bound)).collect(),
                expand_final: *expand_final,
            },
            ExprKind::Unary { op, operand } => {
                ExprKind::Unary { op: *op, operand: Box::new(self.expr_within(operand, bound)) }
            }
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: Box::new(self.expr_within(lhs, bound)),
                rhs: Box::new(self.expr_within(rhs, bound)),
            },
            ExprKind::Conditional { condition, then, otherwise } => ExprKind::Conditional {
                condition: Box::new(self.expr_within(condition, bound)),
                then: Box::new(self.expr_within(then, bound)),
                otherwise: Box::new(self.expr_within(otherwise, bound)),
            },
            ExprKind::For(f) => {
                let collection = self.expr_within(&f.collection, bound);
                let names: Vec<String> = f.key_var.iter().chain([&f.value_var]).cloned().collect();
                let n = names.len();
                bound.extend(names);
                let rewritten = ForExpr {
                    key_var: f.key_var.clone(),
                    value_var: f.value_var.clone(),
                    collection,
                    key: f.key.as_ref().map(|k| self.expr_within(k, bound)),
                    value: self.expr_within(&f.value, bound),
                    condition: f.condition.as_ref().map(|c| self.expr_within(c, bound)),
                    grouping: f.grouping,
                };
                bound.truncate(bound.len() - n);
                ExprKind::For(Box::new(rewritten))
            }
        };
        Expression { kind, location }
    }

    /// An object key: a bare name is a string, not a reference.
    fn object_key(&self, key: &Expression, bound: &mut Vec<String>) -> Expression {
        match key.kind {
            ExprKind::Variable(_) => key.clone(),
            _ => self.expr_within(key, bound),
        }
    }

    fn steps(&self, steps: &[Step], bound: &mut Vec<String>) -> Vec<Step> {
        steps
            .iter()
            .map(|s| match s {
                Step::Index(e) => Step::Index(Box::new(self.expr_within(e, bound))),
                other => other.clone(),
            })
            .collect()
    }

    fn template(&self, parts: &[TemplatePart], bound: &mut Vec<String>) -> Vec<TemplatePart> {
        parts
            .iter()
            .map(|part| match part {
                TemplatePart::Literal(_) => part.clone(),
                TemplatePart::Interpolation(e) => TemplatePart::Interpolation(self.expr_within(e, bound)),
                TemplatePart::If { condition, then, otherwise } => TemplatePart::If {
                    condition: self.expr_within(condition, bound),
                    then: self.template(then, bound),
                    otherwise: self.template(otherwise, bound),
                },
                TemplatePart::For { key_var, value_var, collection, body } => {
                    let collection = self.expr_within(collection, bound);
                    let names: Vec<String> = key_var.iter().chain([value_var]).cloned().collect();
                    let n = names.len();
                    bound.extend(names);
                    let body = self.template(body, bound);
                    bound.truncate(bound.len() - n);
                    TemplatePart::For { key_var: key_var.clone(), value_var: value_var.clone(), collection, body }
                }
            })
            .collect()
    }

    /// A traversal from the bare name `root`: the reference it makes, in
    /// the flat configuration's names.
    fn traversal(&self, root: &str, steps: &[Step], location: &Location, bound: &mut Vec<String>) -> Expression {
        let steps = self.steps(steps, bound);
        let at = |kind: ExprKind| Expression { kind, location: location.clone() };
        let traverse = |source: Expression, steps: Vec<Step>| {
            if steps.is_empty() { source } else { at(ExprKind::Traversal { source: Box::new(source), steps }) }
        };
        if bound.iter().any(|b| b == root) {
            return traverse(at(ExprKind::Variable(root.to_string())), steps);
        }
        let first = match steps.first() {
            Some(Step::Attr(name)) => Some(name.as_str()),
            _ => None,
        };
        let local = |name: String| {
            let mut rest = vec![Step::Attr(name)];
            rest.extend(steps.iter().skip(1).cloned());
            traverse(at(ExprKind::Variable("local".into())), rest)
        };
        let literal = |value: Value| traverse(at(ExprKind::Literal(value)), steps[1..].to_vec());
        let in_module = !self.scope.module.is_root();
        match (root, first) {
            ("module", Some(name)) => local(self.scope.name("module", name)),
            ("var", Some(name)) if in_module => local(self.scope.name("var", name)),
            ("local", Some(name)) if in_module => local(self.scope.name("local", name)),
            ("path", Some("module")) if in_module => literal(Value::string(self.scope.dir.clone())),
            ("count", Some("index")) if self.instance.is_some_and(|i| i.count_index.is_some()) => {
                literal(Value::int(self.instance.and_then(|i| i.count_index).unwrap_or_default()))
            }
            ("each", Some("key" | "value")) if self.instance.is_some_and(|i| i.each.is_some()) => {
                let (key, value) = self.instance.and_then(|i| i.each.clone()).unwrap_or_default();
                match (first, self.expansion) {
                    (Some("key"), _) => literal(key),
                    (_, Some(expansion)) if !value.is_wholly_known() => {
                        let mut rest =
                            vec![Step::Attr(expansion.to_string()), Step::Index(Box::new(at(ExprKind::Literal(key))))];
                        rest.extend(steps.iter().skip(1).cloned());
                        traverse(at(ExprKind::Variable("local".into())), rest)
                    }
                    _ => literal(value),
                }
            }
            ("var" | "local" | "module" | "path" | "count" | "each" | "self" | "terraform", _) => {
                traverse(at(ExprKind::Variable(root.to_string())), steps)
            }
            // A resource type or `data`: the resource of this module instance.
            _ if in_module => traverse(at(ExprKind::Variable(format!("{}.{root}", self.scope.module))), steps),
            _ => traverse(at(ExprKind::Variable(root.to_string())), steps),
        }
    }

    pub(super) fn body(&self, body: &Body, bound: &mut Vec<String>) -> Body {
        Body {
            attributes: body
                .attributes
                .iter()
                .map(|a| Attribute { expr: self.expr_within(&a.expr, bound), ..a.clone() })
                .collect(),
            blocks: body
                .blocks
                .iter()
                .map(|b| {
                    let mut inside = b.bound_inside(bound);
                    Block { body: self.body(&b.body, &mut inside), ..b.clone() }
                })
                .collect(),
            location: body.location.clone(),
        }
    }

    /// A reference written as a whole (`depends_on`): a resource moves
    /// into the module instance; a module call becomes the local of its
    /// outputs, until [`depend_on_module_resources`] replaces it.
    pub(super) fn reference(&self, reference: &Reference) -> Reference {
        match reference {
            Reference::Resource(addr) => Reference::Resource(addr.clone().in_module(self.scope.module.clone())),
            Reference::Module(name) => Reference::Local(self.scope.name("module", name)),
            other => other.clone(),
        }
    }
}
