//! Evaluation: an [`Expression`] and an [`EvalContext`] give a [`Value`].
//!
//! Unknown values propagate: an operator, function, traversal, condition or
//! interpolation that depends on an unknown gives unknown, so a plan can be
//! made before apply knows everything. A conditional evaluates only the branch
//! it chooses, so `var.x != null ? var.x.a : ""` never touches a null `var.x`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::addr::ResourceAddr;
use crate::diag::{Diagnostic, Location};
use crate::value::{Map, Type, Value};

use super::access::{get_attr, get_attr_ref, index, index_ref};
use super::expr::{ExprKind, Expression, ForExpr, Reference, Step, TemplatePart};
use super::{error_at, functions, ops};

/// Everything an expression may refer to.
#[derive(Debug, Clone, Default)]
pub struct EvalContext {
    /// The configuration directory: `file()` reads only below it, and
    /// relative paths are relative to it. `path.module` and `path.root` are
    /// `"."`, so `"${path.module}/out.txt"` stays relative to it too.
    pub dir: PathBuf,
    /// Input variable values by name.
    pub variables: BTreeMap<String, Value>,
    /// Local values by name.
    pub locals: BTreeMap<String, Value>,
    /// The value of each resource: an object, or a tuple (count) or object
    /// (for_each) of instance objects. Shared, because a block of many
    /// instances is seen whole by every instance that refers to it: copying
    /// it into each instance's context would make planning quadratic.
    pub resources: BTreeMap<ResourceAddr, Arc<Value>>,
    /// `count.index`, inside a resource with `count`.
    pub count_index: Option<i64>,
    /// `each.key` and `each.value`, inside a resource with `for_each`.
    pub each: Option<(Value, Value)>,
    /// Planning or applying: `timestamp()` and `uuid()` are known only when
    /// applying.
    pub phase: functions::Phase,
    /// What is sensitive among the above ([`super::marks`] follows it).
    pub sensitivity: super::marks::Sensitivity,
    /// What is ephemeral among the above, for `ephemeralasnull`; shared,
    /// as it is the same for every expression of a run.
    pub ephemeral: Arc<super::Ephemerality>,
}

impl EvalContext {
    /// A context with nothing in it for the configuration in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> EvalContext {
        EvalContext { dir: dir.into(), ..EvalContext::default() }
    }
}

/// Evaluates an expression; every error, each with `file:line`.
pub fn eval(expr: &Expression, ctx: &EvalContext) -> Result<Value, Vec<Diagnostic>> {
    Evaluator { ctx, bound: Vec::new() }.eval(expr)
}

/// [`eval`] with the names `bound` defined (the iterators of enclosing
/// `dynamic` blocks), innermost last.
pub fn eval_within(expr: &Expression, ctx: &EvalContext, bound: &[(String, Value)]) -> Result<Value, Vec<Diagnostic>> {
    Evaluator { ctx, bound: bound.to_vec() }.eval(expr)
}

/// What evaluating gives: a value or the errors that stopped it.
type EvalResult = Result<Value, Vec<Diagnostic>>;

struct Evaluator<'a> {
    ctx: &'a EvalContext,
    /// Variables bound by enclosing `for` expressions, innermost last.
    bound: Vec<(String, Value)>,
}

impl<'a> Evaluator<'a> {
    fn eval(&mut self, expr: &Expression) -> EvalResult {
        let location = &expr.location;
        match &expr.kind {
            ExprKind::Literal(v) => Ok(v.clone()),
            ExprKind::Template(parts) => self.template(parts),
            ExprKind::Tuple(items) => Ok(Value::Tuple(self.eval_all(items)?)),
            ExprKind::Object(items) => self.object(items),
            ExprKind::Variable(root) => self.rooted_traversal(root, &[], location),
            ExprKind::Traversal { source, steps } => match &source.kind {
                ExprKind::Variable(root) => self.rooted_traversal(root, steps, location),
                _ => {
                    let value = self.eval(source)?;
                    self.apply_steps(value, steps, location)
                }
            },
            ExprKind::Call { name, args, expand_final } => self.call(name, args, *expand_final, location),
            ExprKind::Unary { op, operand } => {
                let value = self.eval(operand)?;
                ops::unary(*op, &value).map_err(|e| vec![e.at(location)])
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (lhs, rhs) = both(self.eval(lhs), self.eval(rhs))?;
                ops::binary(*op, &lhs, &rhs).map_err(|e| vec![e.at(location)])
            }
            ExprKind::Conditional { condition, then, otherwise } => match self.condition(condition, "condition")? {
                Some(true) => self.eval(then),
                Some(false) => self.eval(otherwise),
                None => Ok(Value::unknown()),
            },
            ExprKind::For(f) => self.for_expr(f, location),
        }
    }

    /// Evaluates every expression, collecting the errors of all of them.
    fn eval_all(&mut self, exprs: &[Expression]) -> Result<Vec<Value>, Vec<Diagnostic>> {
        let mut values = Vec::with_capacity(exprs.len());
        let mut errors = Vec::new();
        for expr in exprs {
            match self.eval(expr) {
                Ok(v) => values.push(v),
                Err(e) => errors.extend(e),
            }
        }
        if errors.is_empty() { Ok(values) } else { Err(errors) }
    }

    fn object(&mut self, items: &[(Expression, Expression)]) -> EvalResult {
        let mut object = Map::new();
        let mut unknown_key = false;
        let mut errors = Vec::new();
        for (key_expr, value_expr) in items {
            let key = self.eval(key_expr).and_then(|k| object_key(&k, &key_expr.location));
            match both(key, self.eval(value_expr)) {
                Ok((None, _)) => unknown_key = true,
                Ok((Some(key), value)) => {
                    if object.insert(key.clone(), value).is_some() {
                        errors.push(error_at(
                            "Duplicate object attribute",
                            format!("The attribute \"{key}\" is defined more than once in this object."),
                            &key_expr.location,
                        ));
                    }
                }
                Err(e) => errors.extend(e),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        // With a key unknown, not even the object's attribute names are known.
        Ok(if unknown_key { Value::unknown() } else { Value::Object(object) })
    }

    /// Evaluates a condition (of a conditional, an `if` filter or directive):
    /// `None` when it is unknown.
    fn condition(&mut self, expr: &Expression, what: &str) -> Result<Option<bool>, Vec<Diagnostic>> {
        let value = self.eval(expr)?;
        let fail = |detail: String| vec![error_at(format!("Invalid {what} value"), detail, &expr.location)];
        match Type::Bool.convert(&value) {
            Ok(Value::Bool(b)) => Ok(Some(b)),
            Ok(Value::Unknown(_)) => Ok(None),
            Ok(Value::Null) => Err(fail(format!("The {what} is null; it must be true or false."))),
            Ok(other) => Err(fail(format!("The {what} must be a bool, got {}.", other.kind_name()))),
            Err(e) => Err(fail(format!("The {what} must be a bool: {}.", e.message))),
        }
    }

    /// A traversal that starts at a bare name: a `for` variable, or a
    /// reference such as `var.x` or `random_id.x`.
    fn rooted_traversal(&mut self, root: &str, steps: &[Step], location: &Location) -> EvalResult {
        if let Some((_, value)) = self.bound.iter().rev().find(|(name, _)| name == root) {
            let value = value.clone();
            return self.apply_steps(value, steps, location);
        }
        let (reference, consumed) = Reference::from_traversal(root, steps)
            .map_err(|(summary, detail)| vec![error_at(summary, detail, location)])?;
        let steps = &steps[consumed..];
        let Some(whole) = self.stored_value(&reference) else {
            let value = self.reference_value(&reference, location)?;
            return self.apply_steps(value, steps, location);
        };
        // Walk into the stored value without copying it: a reference such
        // as `null_resource.base[7].id` copies only the `id` it ends at.
        let (part, taken) = self.borrow_steps(whole, steps)?;
        self.apply_steps(part.clone(), &steps[taken..], location)
    }

    /// The value a variable, local or resource reference names, where the
    /// context keeps it (`None` for anything else, or an undeclared name,
    /// which [`Self::reference_value`] reports).
    fn stored_value(&self, reference: &Reference) -> Option<&'a Value> {
        let ctx = self.ctx;
        match reference {
            Reference::Variable(name) => ctx.variables.get(name),
            Reference::Local(name) => ctx.locals.get(name),
            Reference::Resource(addr) => ctx.resources.get(addr).map(|v| &**v),
            _ => None,
        }
    }

    /// Follows the leading attribute and index steps that lead to a part of
    /// `value` that is there, by reference; returns that part and how many
    /// steps it took. The first step that would need anything else (an
    /// unknown, a missing key, a conversion, a splat) is left to
    /// [`Self::apply_steps`], which gives the same result or error as if
    /// no step had been taken by reference.
    fn borrow_steps(&mut self, mut value: &'a Value, steps: &[Step]) -> Result<(&'a Value, usize), Vec<Diagnostic>> {
        for (taken, step) in steps.iter().enumerate() {
            let next = match step {
                Step::Attr(name) => get_attr_ref(value, name),
                Step::Index(key) => index_ref(value, &self.eval(key)?),
                Step::Splat { .. } => None,
            };
            match next {
                Some(part) => value = part,
                None => return Ok((value, taken)),
            }
        }
        Ok((value, steps.len()))
    }

    fn reference_value(&self, reference: &Reference, location: &Location) -> EvalResult {
        let ctx = self.ctx;
        let missing = |summary: &str, detail: String| vec![error_at(summary, detail, location)];
        match reference {
            Reference::Variable(name) => ctx.variables.get(name).cloned().ok_or_else(|| {
                missing(
                    "Reference to undeclared input variable",
                    format!("There is no input variable named \"{name}\"."),
                )
            }),
            Reference::Local(name) => ctx.locals.get(name).cloned().ok_or_else(|| {
                missing("Reference to undeclared local value", format!("There is no local value named \"{name}\"."))
            }),
            Reference::Resource(addr) => ctx.resources.get(addr).map(|v| Value::clone(v)).ok_or_else(|| {
                missing("Reference to undeclared resource", format!("There is no value for {addr} here."))
            }),
            Reference::Module(name) => {
                Err(missing("Reference to undeclared module", format!("There is no value for module.{name} here.")))
            }
            Reference::CountIndex => ctx.count_index.map(Value::int).ok_or_else(|| {
                missing(
                    "Reference to \"count\" in non-counted context",
                    "count.index can only be used in a resource or data block that sets \"count\".".into(),
                )
            }),
            Reference::EachKey | Reference::EachValue => match &ctx.each {
                Some((key, value)) => Ok(if *reference == Reference::EachKey { key.clone() } else { value.clone() }),
                None => Err(missing(
                    "Reference to \"each\" in context without for_each",
                    "each.key and each.value can only be used in a resource or data block that sets \"for_each\"."
                        .into(),
                )),
            },
            Reference::PathModule | Reference::PathRoot => Ok(Value::string(".")),
            Reference::PathCwd => std::env::current_dir()
                .map(|d| Value::string(d.to_string_lossy()))
                .map_err(|e| missing("Cannot read the working directory", e.to_string())),
            Reference::TerraformWorkspace => Ok(Value::string(super::workspace::workspace_of(&ctx.dir))),
            Reference::TerraformApplying => Ok(Value::Bool(ctx.phase == functions::Phase::Apply)),
        }
    }

    /// Applies traversal steps to a value, left to right.
    fn apply_steps(&mut self, mut value: Value, steps: &[Step], location: &Location) -> EvalResult {
        let mut i = 0;
        while i < steps.len() {
            match &steps[i] {
                Step::Attr(name) => value = get_attr(value, name).map_err(|d| vec![d.at(location)])?,
                Step::Index(key) => {
                    let key = self.eval(key)?;
                    value = index(value, &key).map_err(|d| vec![d.at(location)])?;
                }
                Step::Splat { full } => {
                    // `[*]` applies every following step to each element;
                    // `.*` only the attribute steps right after it.
                    let rest = &steps[i + 1..];
                    let applies =
                        if *full { rest.len() } else { rest.iter().take_while(|s| matches!(s, Step::Attr(_))).count() };
                    value = self.splat(value, &rest[..applies], location)?;
                    i += applies;
                }
            }
            i += 1;
        }
        Ok(value)
    }

    /// `value[*]` followed by `steps`: the steps applied to each element.
    fn splat(&mut self, value: Value, steps: &[Step], location: &Location) -> EvalResult {
        let each = |this: &mut Self, elements: Vec<Value>| -> Result<Vec<Value>, Vec<Diagnostic>> {
            elements.into_iter().map(|e| this.apply_steps(e, steps, location)).collect()
        };
        Ok(match value {
            Value::Unknown(_) => Value::unknown(),
            // A null splats to nothing, which makes `x[*]` a handy way to
            // turn an optional value into a zero- or one-element list.
            Value::Null => Value::Tuple(Vec::new()),
            Value::List(elements) | Value::Set(elements) => Value::List(each(self, elements)?),
            Value::Tuple(elements) => Value::Tuple(each(self, elements)?),
            single => Value::Tuple(each(self, vec![single])?),
        })
    }

    fn call(&mut self, name: &str, args: &[Expression], expand_final: bool, location: &Location) -> EvalResult {
        match name {
            "try" => return self.try_each(args, location),
            "can" => return self.can(args, location),
            "templatefile" => return self.templatefile(args, location),
            "templatestring" => return self.templatestring(args, location),
            "sensitive" | "nonsensitive" => return self.mark_call(name, args, location),
            "issensitive" => return self.issensitive(args, location),
            super::ephemeral::EPHEMERAL_AS_NULL => return self.ephemeral_as_null(args, location),
            _ => {}
        }
        let mut values = self.eval_all(args)?;
        if expand_final {
            match values.pop() {
                Some(Value::Unknown(_)) => return Ok(Value::unknown()),
                Some(Value::List(rest) | Value::Tuple(rest) | Value::Set(rest)) => values.extend(rest),
                Some(other) => {
                    return Err(vec![error_at(
                        "Invalid expanding argument value",
                        format!(
                            "The expanding argument (indicated by ...) must be a list, tuple or set, got {}.",
                            other.kind_name()
                        ),
                        location,
                    )]);
                }
                None => {}
            }
        }
        functions::call(name, values, &self.ctx.dir, self.ctx.phase).map_err(|d| vec![d.at(location)])
    }

    /// `sensitive(x)` and `nonsensitive(x)`: the value itself; what they
    /// change is its marks, which [`super::marks`] follows.
    fn mark_call(&mut self, name: &str, args: &[Expression], location: &Location) -> EvalResult {
        match args {
            [arg] => self.eval(arg),
            _ => Err(vec![error_at(
                "Invalid function call",
                format!("Function \"{name}\" expects 1 argument, got {}.", args.len()),
                location,
            )]),
        }
    }

    /// `issensitive(x)` (Terraform 1.8): whether the value as a whole is
    /// marked sensitive (a value with only some sensitive parts is not),
    /// known even while the value itself is not.
    fn issensitive(&mut self, args: &[Expression], location: &Location) -> EvalResult {
        let [arg] = args else {
            return Err(vec![error_at(
                "Invalid function call",
                format!("Function \"issensitive\" expects 1 argument, got {}.", args.len()),
                location,
            )]);
        };
        self.eval(arg)?;
        Ok(Value::Bool(super::marks::marks(arg, self.ctx).iter().any(|p| p.is_root())))
    }

    /// `ephemeralasnull(x)` (Terraform 1.10): `x` with its ephemeral parts
    /// null: each element of a tuple or object written out in place is
    /// looked at on its own, anything else is null as a whole when it is
    /// derived from an ephemeral value.
    fn ephemeral_as_null(&mut self, args: &[Expression], location: &Location) -> EvalResult {
        let [arg] = args else {
            return Err(vec![error_at(
                "Invalid function call",
                format!("Function \"ephemeralasnull\" expects 1 argument, got {}.", args.len()),
                location,
            )]);
        };
        self.non_ephemeral_part(arg)
    }

    fn non_ephemeral_part(&mut self, expr: &Expression) -> EvalResult {
        match &expr.kind {
            ExprKind::Tuple(items) => {
                let values: Result<Vec<Value>, Vec<Diagnostic>> =
                    items.iter().map(|e| self.non_ephemeral_part(e)).collect();
                Ok(Value::Tuple(values?))
            }
            ExprKind::Object(items) if !items.iter().any(|(k, _)| self.ctx.ephemeral.is_ephemeral(k)) => {
                let nulled: Vec<(Expression, Expression)> = items
                    .iter()
                    .map(|(k, v)| match self.ctx.ephemeral.is_ephemeral(v) {
                        true => (k.clone(), Expression { kind: ExprKind::Literal(Value::Null), ..v.clone() }),
                        false => (k.clone(), v.clone()),
                    })
                    .collect();
                self.object(&nulled)
            }
            _ if self.ctx.ephemeral.is_ephemeral(expr) => {
                // Still evaluated: its errors are the configuration's.
                self.eval(expr)?;
                Ok(Value::Null)
            }
            _ => self.eval(expr),
        }
    }

    /// `templatefile(path, vars)`: the file (inside the configuration
    /// directory, as `file` reads it) rendered as a template in which only
    /// the keys of `vars` are defined, as Terraform's.
    fn templatefile(&mut self, args: &[Expression], location: &Location) -> EvalResult {
        let fail = |detail: String| vec![error_at("Invalid function argument", detail, location)];
        let [path, vars] = args else {
            return Err(fail(format!("Function \"templatefile\" expects 2 arguments, got {}.", args.len())));
        };
        let path = self.eval(path)?;
        let vars = self.eval(vars)?;
        if path.is_unknown() || vars.is_unknown() {
            return Ok(Value::unknown());
        }
        let name = path.as_str().map(str::to_owned).unwrap_or_default();
        let text =
            functions::call("file", vec![path], &self.ctx.dir, self.ctx.phase).map_err(|d| vec![d.at(location)])?;
        self.render_template(text.as_str().unwrap_or_default(), &name, vars, "templatefile", location)
    }

    /// `templatestring(ref, vars)`: the string `ref` refers to rendered as a
    /// template in which only the keys of `vars` are defined. As in
    /// Terraform, the template must be a reference (`local.t`), not a
    /// literal, which would already have been rendered as a template itself.
    fn templatestring(&mut self, args: &[Expression], location: &Location) -> EvalResult {
        let fail = |detail: String| vec![error_at("Invalid function argument", detail, location)];
        let [template, vars] = args else {
            return Err(fail(format!("Function \"templatestring\" expects 2 arguments, got {}.", args.len())));
        };
        if !matches!(template.kind, ExprKind::Traversal { .. }) {
            return Err(fail(
                "Invalid value for \"template\" parameter of templatestring(): the template must be a reference to \
                 a string (such as local.template), not a literal template."
                    .into(),
            ));
        }
        let text = self.eval(template)?;
        let vars = self.eval(vars)?;
        if !text.is_wholly_known() || vars.is_unknown() {
            return Ok(Value::unknown());
        }
        let Some(text) = text.as_str() else {
            return Err(fail(format!(
                "Invalid value for \"template\" parameter of templatestring(): a string is required, got {}.",
                text.kind_name()
            )));
        };
        self.render_template(text, "<templatestring>", vars, "templatestring", location)
    }

    /// `text` parsed as a template (`name` for messages) and evaluated with
    /// only the keys of `vars` defined: no variables, locals or resources of
    /// the module.
    fn render_template(
        &mut self,
        text: &str,
        name: &str,
        vars: Value,
        function: &str,
        location: &Location,
    ) -> EvalResult {
        let bound: Vec<(String, Value)> = match vars {
            Value::Object(m) | Value::Map(m) => m.into_iter().collect(),
            other => {
                return Err(vec![error_at(
                    "Invalid function argument",
                    format!(
                        "Invalid value for \"vars\" parameter of {function}(): an object or map is required, got {}.",
                        other.kind_name()
                    ),
                    location,
                )]);
            }
        };
        let template = super::parse::parse_template(text, name)?;
        let empty = EvalContext { phase: self.ctx.phase, ..EvalContext::new(&self.ctx.dir) };
        Evaluator { ctx: &empty, bound }.eval(&template)
    }

    /// `try(a, b, …)`: the first argument that evaluates without error.
    fn try_each(&mut self, args: &[Expression], location: &Location) -> EvalResult {
        let mut failures = Vec::new();
        for arg in args {
            match self.eval(arg) {
                // An unknown might still fail once known: the result waits.
                Ok(v) if !v.is_wholly_known() => return Ok(Value::unknown()),
                Ok(v) => return Ok(v),
                Err(e) => failures.extend(e),
            }
        }
        let reasons: Vec<String> = failures.iter().map(|d| format!("- {}: {}", d.summary, d.detail)).collect();
        Err(vec![error_at(
            "Error in function call",
            format!("Call to function \"try\" failed: no expression succeeded:\n{}", reasons.join("\n")),
            location,
        )])
    }

    /// `can(expr)`: whether the expression evaluates without error.
    fn can(&mut self, args: &[Expression], location: &Location) -> EvalResult {
        let [arg] = args else {
            return Err(vec![error_at(
                "Invalid function call",
                format!("Function \"can\" expects 1 argument, got {}.", args.len()),
                location,
            )]);
        };
        Ok(match self.eval(arg) {
            Ok(v) if !v.is_wholly_known() => Value::unknown(),
            Ok(_) => Value::Bool(true),
            Err(_) => Value::Bool(false),
        })
    }

    fn for_expr(&mut self, f: &ForExpr, location: &Location) -> EvalResult {
        let collection = self.eval(&f.collection)?;
        let Some(pairs) = iteration_pairs(&collection, &f.collection.location)? else {
            return Ok(Value::unknown());
        };
        let mut tuple = Vec::new();
        let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut unknown = false;
        for (key, value) in pairs {
            let bound = self.bind(f.key_var.as_deref(), &f.value_var, key, value);
            let element = self.for_element(f);
            self.bound.truncate(self.bound.len() - bound);
            match element? {
                ForElement::Skipped => {}
                ForElement::Unknown => unknown = true,
                ForElement::Value(v) => tuple.push(v),
                ForElement::Entry(k, v) => {
                    let values = groups.entry(k.clone()).or_default();
                    if !f.grouping && !values.is_empty() {
                        return Err(vec![error_at(
                            "Duplicate object key",
                            format!(
                                "Two different items produced the key \"{k}\" in this 'for' expression. If duplicates \
                                 are expected, use the ellipsis (...) after the value expression to group them by key."
                            ),
                            location,
                        )]);
                    }
                    values.push(v);
                }
            }
        }
        if unknown {
            return Ok(Value::unknown());
        }
        Ok(match (&f.key, f.grouping) {
            (None, _) => Value::Tuple(tuple),
            (Some(_), true) => Value::Object(groups.into_iter().map(|(k, v)| (k, Value::Tuple(v))).collect()),
            (Some(_), false) => Value::Object(groups.into_iter().map(|(k, mut v)| (k, v.remove(0))).collect()),
        })
    }

    /// One iteration of a `for` expression, its variables already bound.
    fn for_element(&mut self, f: &ForExpr) -> Result<ForElement, Vec<Diagnostic>> {
        if let Some(condition) = &f.condition {
            match self.condition(condition, "'for' condition")? {
                Some(true) => {}
                Some(false) => return Ok(ForElement::Skipped),
                None => return Ok(ForElement::Unknown),
            }
        }
        let Some(key_expr) = &f.key else {
            return Ok(ForElement::Value(self.eval(&f.value)?));
        };
        let key = self.eval(key_expr).and_then(|k| object_key(&k, &key_expr.location));
        Ok(match both(key, self.eval(&f.value))? {
            (Some(key), value) => ForElement::Entry(key, value),
            (None, _) => ForElement::Unknown,
        })
    }

    /// Binds a `for` variable pair; returns how many names were bound.
    fn bind(&mut self, key_var: Option<&str>, value_var: &str, key: Value, value: Value) -> usize {
        if let Some(k) = key_var {
            self.bound.push((k.to_string(), key));
        }
        self.bound.push((value_var.to_string(), value));
        1 + usize::from(key_var.is_some())
    }

    fn template(&mut self, parts: &[TemplatePart]) -> EvalResult {
        // A template that is only `${x}` is x itself, unconverted, as in HCL.
        if let [TemplatePart::Interpolation(expr)] = parts {
            return self.eval(expr);
        }
        let mut out = String::new();
        Ok(if self.render(parts, &mut out)? { Value::String(out) } else { Value::unknown() })
    }

    /// Renders template parts into `out`; false when the result is unknown.
    fn render(&mut self, parts: &[TemplatePart], out: &mut String) -> Result<bool, Vec<Diagnostic>> {
        let mut known = true;
        for part in parts {
            match part {
                TemplatePart::Literal(text) => out.push_str(text),
                TemplatePart::Interpolation(expr) => match template_string(&self.eval(expr)?, &expr.location)? {
                    Some(s) => out.push_str(&s),
                    None => known = false,
                },
                TemplatePart::If { condition, then, otherwise } => match self.condition(condition, "condition")? {
                    Some(true) => known &= self.render(then, out)?,
                    Some(false) => known &= self.render(otherwise, out)?,
                    None => known = false,
                },
                TemplatePart::For { key_var, value_var, collection, body } => {
                    let value = self.eval(collection)?;
                    let Some(pairs) = iteration_pairs(&value, &collection.location)? else {
                        known = false;
                        continue;
                    };
                    for (k, v) in pairs {
                        let bound = self.bind(key_var.as_deref(), value_var, k, v);
                        let rendered = self.render(body, out);
                        self.bound.truncate(self.bound.len() - bound);
                        known &= rendered?;
                    }
                }
            }
        }
        Ok(known)
    }
}

/// What one iteration of a `for` expression contributes.
enum ForElement {
    /// The `if` filter said no.
    Skipped,
    /// The filter or key is unknown, so the whole result is.
    Unknown,
    /// An element of a tuple `for`.
    Value(Value),
    /// An entry of an object `for`.
    Entry(String, Value),
}

/// Both results, or the errors of either or both.
fn both<A, B>(a: Result<A, Vec<Diagnostic>>, b: Result<B, Vec<Diagnostic>>) -> Result<(A, B), Vec<Diagnostic>> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(mut e), Err(f)) => {
            e.extend(f);
            Err(e)
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

/// An object key: a string, or a number or bool written as one; `None` when unknown.
fn object_key(key: &Value, location: &Location) -> Result<Option<String>, Vec<Diagnostic>> {
    match Type::String.convert(key) {
        Ok(Value::String(s)) => Ok(Some(s)),
        Ok(Value::Unknown(_)) => Ok(None),
        Ok(Value::Null) => Err(vec![error_at("Invalid object key", "An object key must not be null.", location)]),
        Ok(_) | Err(_) => Err(vec![error_at(
            "Invalid object key",
            format!("An object key must be a string, got {}.", key.kind_name()),
            location,
        )]),
    }
}

/// The text an interpolated value contributes; `None` when unknown.
fn template_string(value: &Value, location: &Location) -> Result<Option<String>, Vec<Diagnostic>> {
    let fail = |detail: String| vec![error_at("Invalid template interpolation value", detail, location)];
    match value {
        Value::Unknown(_) => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Null => Err(fail("Cannot include the value in a string template: the value is null.".into())),
        other => Err(fail(format!(
            "Cannot include the value in a string template: a string is required, got {}.",
            other.kind_name()
        ))),
    }
}

/// The (key, value) pairs a `for` iterates over: index and element for
/// lists and tuples, the element twice for sets, key and value for maps and
/// objects. `None` when the collection is unknown.
fn iteration_pairs(collection: &Value, location: &Location) -> Result<Option<Vec<(Value, Value)>>, Vec<Diagnostic>> {
    let fail = |detail: String| vec![error_at("Iteration over non-iterable value", detail, location)];
    Ok(Some(match collection {
        Value::Unknown(_) => return Ok(None),
        Value::List(v) | Value::Tuple(v) => {
            v.iter().enumerate().map(|(i, e)| (Value::int(i as i64), e.clone())).collect()
        }
        Value::Set(v) => v.iter().map(|e| (e.clone(), e.clone())).collect(),
        Value::Map(m) | Value::Object(m) => m.iter().map(|(k, v)| (Value::string(k), v.clone())).collect(),
        Value::Null => {
            return Err(fail("A null value cannot be used as the collection in a 'for' expression.".into()));
        }
        other => {
            return Err(fail(format!("A value of type {} cannot be iterated over.", other.kind_name())));
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{error, eval_in, expr, value};
    use super::*;

    fn list(values: &[Value]) -> Value {
        Value::Tuple(values.to_vec())
    }

    fn ctx() -> EvalContext {
        let mut ctx = EvalContext::new(".");
        ctx.variables.insert("name".into(), Value::string("web"));
        ctx.variables.insert("n".into(), Value::int(3));
        ctx.variables.insert("unknown".into(), Value::unknown());
        ctx.variables.insert("nothing".into(), Value::Null);
        ctx.variables.insert(
            "tags".into(),
            Value::Map(
                [("a".to_string(), Value::string("x")), ("b".to_string(), Value::string("y"))].into_iter().collect(),
            ),
        );
        ctx.locals.insert("items".into(), Value::List(vec![Value::string("p"), Value::string("q")]));
        ctx.resources.insert(
            ResourceAddr::managed("random_id", "x"),
            Arc::new(Value::object([("hex", Value::unknown()), ("byte_length", Value::int(4))])),
        );
        ctx.resources.insert(
            ResourceAddr::managed("local_file", "f"),
            Arc::new(Value::Tuple(vec![
                Value::object([("id", Value::string("1")), ("tags", Value::object([("k", Value::string("v1"))]))]),
                Value::object([("id", Value::string("2")), ("tags", Value::object([("k", Value::string("v2"))]))]),
            ])),
        );
        ctx.resources
            .insert(ResourceAddr::data("local_file", "t"), Arc::new(Value::object([("content", Value::string("hi"))])));
        ctx.count_index = Some(1);
        ctx.each = Some((Value::string("k"), Value::int(7)));
        ctx
    }

    fn ok(text: &str) -> Value {
        eval_in(text, &ctx()).unwrap_or_else(|d| panic!("{text}: {}", super::super::testutil::shown(&d)))
    }

    fn err(text: &str) -> String {
        match eval_in(text, &ctx()) {
            Ok(v) => panic!("{text}: expected an error, got {v}"),
            Err(d) => super::super::testutil::shown(&d),
        }
    }

    #[test]
    fn literals() {
        assert_eq!(value("null"), Value::Null);
        assert_eq!(value("true"), Value::Bool(true));
        assert_eq!(value("42"), Value::int(42));
        assert_eq!(value("-1.5"), Value::Number(crate::value::Number::Float(-1.5)));
        assert_eq!(value(r#""hi""#), Value::string("hi"));
    }

    #[test]
    fn tuples_and_objects() {
        assert_eq!(value("[1, \"a\", [true]]"), list(&[Value::int(1), Value::string("a"), list(&[Value::Bool(true)])]));
        assert_eq!(
            ok(r#"{a = 1, "b c" = 2, (var.name) = 3, 4 = "four"}"#),
            Value::object([
                ("a", Value::int(1)),
                ("b c", Value::int(2)),
                ("web", Value::int(3)),
                ("4", Value::string("four"))
            ])
        );
        assert_eq!(ok("{(var.unknown) = 1}"), Value::unknown());
        // Bare `null` and `true` are names there, as `terraform console` shows.
        assert_eq!(ok("{null = 1, true = 2}"), Value::object([("null", Value::int(1)), ("true", Value::int(2))]));
        assert!(err("{(var.nothing) = 1}").contains("An object key must not be null"));
    }

    #[test]
    fn references_resolve() {
        assert_eq!(ok("var.name"), Value::string("web"));
        assert_eq!(ok("local.items[1]"), Value::string("q"));
        assert_eq!(ok("random_id.x.byte_length"), Value::int(4));
        assert_eq!(ok("random_id.x.hex"), Value::unknown());
        assert_eq!(ok("data.local_file.t.content"), Value::string("hi"));
        assert_eq!(ok("count.index"), Value::int(1));
        assert_eq!(ok("each.key"), Value::string("k"));
        assert_eq!(ok("each.value"), Value::int(7));
        assert_eq!(ok("path.module"), Value::string("."));
        assert_eq!(ok("path.root"), Value::string("."));
        assert!(err("var.missing").contains("Reference to undeclared input variable"));
    }

    #[test]
    fn traversals() {
        assert_eq!(ok("var.tags.a"), Value::string("x"));
        assert_eq!(ok(r#"var.tags["b"]"#), Value::string("y"));
        assert_eq!(ok("local.items.0"), Value::string("p"));
        assert_eq!(ok(r#"local.items["1"]"#), Value::string("q"));
        assert_eq!(ok("local_file.f[1].id"), Value::string("2"));
        // Steps taken by reference and those that need a conversion or
        // fail agree with each other.
        assert_eq!(ok(r#"local_file.f["1"].tags["k"]"#), Value::string("v2"));
        assert!(err("local_file.f[2].id").contains("it has 2 elements"));
        assert!(err("local_file.f[1].tags.zz").contains("does not have an attribute named \"zz\""));
        assert_eq!(ok("local_file.f.*.id"), list(&[Value::string("1"), Value::string("2")]));
        assert_eq!(ok("local_file.f[*].tags.k"), list(&[Value::string("v1"), Value::string("v2")]));
        // `.*` applies only the attribute steps; the index picks from the result.
        assert_eq!(ok("local_file.f.*.id[0]"), Value::string("1"));
        assert_eq!(ok("var.nothing[*]"), list(&[]));
        assert_eq!(ok("var.name[*]"), list(&[Value::string("web")]));
        assert_eq!(ok("var.unknown.a[0].b"), Value::unknown());
        assert_eq!(ok("var.tags[var.unknown]"), Value::unknown());
        assert_eq!(ok("[for x in [{a = 1}] : x.a]"), list(&[Value::int(1)]));
    }

    #[test]
    fn traversal_errors() {
        assert_eq!(
            err("random_id.x.hexx"),
            "Error: test.tf:1: Unsupported attribute\n  This object does not have an attribute named \"hexx\". Did you mean \"hex\"?"
        );
        assert!(err("var.nothing.a").contains("Attempt to get attribute from null value"));
        assert!(err("local.items[5]").contains("it has 2 elements"));
        assert!(err("local.items[-1]").contains("Invalid index"));
        assert!(err("local.items.x").contains("use a splat"));
        assert!(err(r#"var.tags["zz"]"#).contains("there is no \"zz\""));
        assert!(err("var.tags.zz").contains("Missing map element"));
        assert!(err("var.name.x").contains("primitive-typed value (string)"));
        assert!(err("toset([1])[0]").contains("Elements of a set"));
    }

    #[test]
    fn operators() {
        assert_eq!(value("1 + 2 * 3"), Value::int(7));
        assert_eq!(value("(1 + 2) * 3"), Value::int(9));
        assert_eq!(value("7 / 2"), Value::Number(crate::value::Number::Float(3.5)));
        assert_eq!(value("6 / 2"), Value::int(3));
        assert_eq!(value("7 % 3"), Value::int(1));
        assert_eq!(value("-7 % 3"), Value::int(-1));
        assert_eq!(value("\"2\" + 3"), Value::int(5));
        assert_eq!(value("0.1 + 0.2"), Value::Number(crate::value::Number::Float(0.1 + 0.2)));
        assert_eq!(value("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 4 == false"), Value::Bool(true));
        assert_eq!(value("1 == 1.0"), Value::Bool(true));
        assert_eq!(value("\"a\" != \"b\""), Value::Bool(true));
        assert_eq!(value("[1, \"a\"] == [1, \"a\"]"), Value::Bool(true));
        assert_eq!(value("!true || false"), Value::Bool(false));
        assert_eq!(value("-(3)"), Value::int(-3));
        assert_eq!(value("9223372036854775807 + 1"), Value::Number(crate::value::Number::Float(i64::MAX as f64)));
        assert!(error("1 / 0").contains("Division by zero"));
        assert!(error("1 + true").contains("Invalid operand"));
        assert!(error("null + 1").contains("Invalid operand"));
        assert!(error("!1").contains("Invalid operand"));
    }

    #[test]
    fn unknowns_propagate_through_operators() {
        assert_eq!(ok("var.unknown + 1"), Value::unknown());
        assert_eq!(ok("-var.unknown"), Value::unknown());
        assert_eq!(ok("var.unknown == 1"), Value::unknown());
        assert_eq!(ok("var.unknown && true"), Value::unknown());
        // A known operand may decide a logical operator on its own.
        assert_eq!(ok("var.unknown && false"), Value::Bool(false));
        assert_eq!(ok("true || var.unknown"), Value::Bool(true));
        // A known non-null value is not null even with unknowns inside.
        assert_eq!(ok("random_id.x == null"), Value::Bool(false));
        assert_eq!(ok("var.unknown == null"), Value::unknown());
    }

    #[test]
    fn conditionals() {
        assert_eq!(value("true ? 1 : 2"), Value::int(1));
        assert_eq!(value("\"false\" ? 1 : 2"), Value::int(2));
        assert_eq!(ok("var.unknown ? 1 : 2"), Value::unknown());
        // Only the chosen branch is evaluated.
        assert_eq!(ok("var.nothing != null ? var.nothing.a : \"none\""), Value::string("none"));
        assert!(error("null ? 1 : 2").contains("The condition is null"));
        assert!(error("[] ? 1 : 2").contains("Invalid condition value"));
    }

    #[test]
    fn for_expressions() {
        assert_eq!(value("[for x in [1, 2, 3] : x * 2]"), list(&[Value::int(2), Value::int(4), Value::int(6)]));
        assert_eq!(
            value("[for i, x in [\"a\", \"b\"] : \"${i}${x}\"]"),
            list(&[Value::string("0a"), Value::string("1b")])
        );
        assert_eq!(value("[for x in [1, 2, 3, 4] : x if x % 2 == 0]"), list(&[Value::int(2), Value::int(4)]));
        assert_eq!(
            ok("{for k, v in var.tags : v => k}"),
            Value::object([("x", Value::string("a")), ("y", Value::string("b"))])
        );
        assert_eq!(
            value("{for s in [\"ab\", \"ac\", \"b\"] : substr(s, 0, 1) => s...}"),
            Value::object([
                ("a", list(&[Value::string("ab"), Value::string("ac")])),
                ("b", list(&[Value::string("b")]))
            ])
        );
        assert_eq!(value("[for x in toset([\"b\", \"a\"]) : x]"), list(&[Value::string("a"), Value::string("b")]));
        assert_eq!(ok("[for x in var.unknown : x]"), Value::unknown());
        assert_eq!(ok("[for x in [1, 2] : x if var.unknown]"), Value::unknown());
        assert_eq!(ok("[for x in [var.unknown] : x]"), list(&[Value::unknown()]));
        assert!(error("{for x in [\"a\", \"a\"] : x => 1}").contains("Duplicate object key"));
        // As `terraform console` 1.11.4 answers (a tuple `for` with `...` is
        // refused by the parser, as there).
        assert_eq!(
            value("{for k, v in {a = \"x\", b = \"y\", c = \"x\"} : v => k...}"),
            Value::object([("x", list(&[Value::string("a"), Value::string("c")])), ("y", list(&[Value::string("b")]))])
        );
        assert!(error("[for x in null : x]").contains("A null value cannot be used as the collection"));
        assert!(error("[for x in 5 : x]").contains("cannot be iterated"));
        // A for variable shadows a reference of the same name only inside.
        assert_eq!(ok("[for var in [1] : var]"), list(&[Value::int(1)]));
    }

    #[test]
    fn splats_agree_with_terraform() {
        // Each as `terraform console` 1.11.4 answers.
        assert_eq!(value("[{a = 1}, {a = 2}][*].a"), list(&[Value::int(1), Value::int(2)]));
        // A set splats to a list.
        assert_eq!(value("toset([{a = 1}])[*].a"), Value::List(vec![Value::int(1)]));
        assert_eq!(value("{a = 1}[*]"), Value::Tuple(vec![Value::object([("a", Value::int(1))])]));
        assert_eq!(value("tomap({x = \"y\"})[*]").elements().map(<[Value]>::len), Some(1));
        assert_eq!(value("null[*]"), Value::Tuple(vec![]));
        assert_eq!(value("\"x\"[*]"), Value::Tuple(vec![Value::string("x")]));
        assert_eq!(value("[{a = {b = 1}}].*.a.b"), list(&[Value::int(1)]));
        assert_eq!(value("[[1, 2]][*][0]"), list(&[Value::int(1)]));
    }

    #[test]
    fn templates() {
        assert_eq!(ok(r#""${var.name}-${var.n}-${true}""#), Value::string("web-3-true"));
        // A lone interpolation is the value itself, unconverted.
        assert_eq!(ok(r#""${var.n}""#), Value::int(3));
        assert_eq!(ok(r#""${local.items}""#), Value::List(vec![Value::string("p"), Value::string("q")]));
        assert_eq!(ok(r#""id-${random_id.x.hex}""#), Value::unknown());
        assert_eq!(
            ok(r#""%{for i, s in local.items}${i}=${s}%{if i == 0},%{endif}%{endfor}""#),
            Value::string("0=p,1=q")
        );
        assert_eq!(value(r#""%{if false}yes%{else}no%{endif}""#), Value::string("no"));
        assert_eq!(ok(r#""%{if var.unknown}yes%{endif}""#), Value::unknown());
        assert_eq!(
            err(r#""a${var.nothing}""#),
            "Error: test.tf:1: Invalid template interpolation value\n  Cannot include the value in a string template: the value is null."
        );
        assert!(err(r#""a${local.items}""#).contains("a string is required, got list"));
    }

    #[test]
    fn heredocs() {
        assert_eq!(value("<<EOT\nhello\n  ${1 + 1}\nEOT"), Value::string("hello\n  2\n"));
        assert_eq!(value("<<-EOT\n    a\n      b\n    EOT"), Value::string("a\n  b\n"));
    }

    #[test]
    fn function_calls_with_expansion() {
        assert_eq!(value("max([1, 5, 3]...)"), Value::int(5));
        assert_eq!(value("concat([1], [[2]]...)"), list(&[Value::int(1), Value::int(2)]));
        assert_eq!(ok("max(var.unknown...)"), Value::unknown());
        assert!(error("max(1...)").contains("Invalid expanding argument value"));
    }

    #[test]
    fn try_and_can() {
        assert_eq!(ok("try(var.nothing.a, var.tags.zz, \"fallback\")"), Value::string("fallback"));
        assert_eq!(ok("try(var.tags.a, \"fallback\")"), Value::string("x"));
        assert_eq!(ok("try(random_id.x.hex, \"fallback\")"), Value::unknown());
        assert!(err("try(var.nothing.a)").contains("no expression succeeded"));
        assert_eq!(ok("can(var.tags.zz)"), Value::Bool(false));
        assert_eq!(ok("can(var.tags.a)"), Value::Bool(true));
    }

    #[test]
    fn errors_from_every_element_are_collected() {
        let diags = eval(&expr("[var.a,\n var.b]"), &EvalContext::new(".")).unwrap_err();
        let lines: Vec<usize> = diags.iter().map(|d| d.location.as_ref().unwrap().line).collect();
        assert_eq!(lines, [1, 2]);
    }

    #[test]
    fn templatestring_renders_a_referenced_string_with_only_its_vars() {
        // developer.hashicorp.com/terraform/language/functions/templatestring,
        // checked with `terraform console` 1.11.4.
        let mut ctx = EvalContext::new(".");
        ctx.locals.insert("t".into(), Value::string("Hello, ${name}!"));
        ctx.variables.insert("v".into(), Value::string("x"));
        let eval = |text: &str| super::super::testutil::eval_in(text, &ctx);
        assert_eq!(eval("templatestring(local.t, { name = \"world\" })").unwrap(), Value::string("Hello, world!"));
        let literal = super::super::testutil::shown(&eval("templatestring(\"x\", {})").unwrap_err());
        assert!(literal.contains("must be a reference to a string"), "{literal}");
        let missing = super::super::testutil::shown(&eval("templatestring(local.t, {})").unwrap_err());
        assert!(missing.contains("name"), "{missing}");
    }

    #[test]
    fn templatefile_renders_a_file_with_only_its_vars() {
        let dir = super::super::testutil::write_dir(&[(
            "t.tpl",
            "Hello, ${name}!\n%{ for x in items ~}\n- ${upper(x)}\n%{ endfor ~}\nbye",
        )]);
        let ctx =
            EvalContext { variables: [("v".to_string(), Value::string("x"))].into(), ..EvalContext::new(dir.path()) };
        // As `terraform console` 1.11.4 renders it.
        assert_eq!(
            eval_in("templatefile(\"t.tpl\", {name = \"Ann\", items = [\"a\", \"b\"]})", &ctx).unwrap(),
            Value::string("Hello, Ann!\n- A\n- B\nbye")
        );
        let missing =
            super::super::testutil::shown(&eval_in("templatefile(\"t.tpl\", {name = \"Ann\"})", &ctx).unwrap_err());
        assert!(missing.contains("items"), "{missing}");
        // The module's variables are not the template's.
        std::fs::write(dir.path().join("v.tpl"), "${var.v}").unwrap();
        assert!(eval_in("templatefile(\"v.tpl\", {})", &ctx).is_err());
        assert_eq!(
            eval_in(
                "templatefile(\"t.tpl\", var.unknown_yet)",
                &EvalContext {
                    variables: [("unknown_yet".to_string(), Value::unknown())].into(),
                    ..EvalContext::new(dir.path())
                }
            )
            .unwrap(),
            Value::unknown()
        );
        let outside = error("templatefile(\"../outside.tpl\", {})");
        assert!(outside.contains("may only read files inside the configuration directory"), "{outside}");
    }
}
