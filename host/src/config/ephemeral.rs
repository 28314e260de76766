//! Ephemeral values (Terraform 1.10): which expressions are derived from a
//! value that must never be persisted, and where such values may not go.
//!
//! A value is ephemeral when it is derived from an input variable declared
//! `ephemeral = true`, from `terraform.applying`, from an ephemeral
//! resource (`ephemeral.TYPE.NAME`), or from a local (a
//! module's variable or output after [expansion](super::expand_modules))
//! that is. `ephemeralasnull(x)` is not: it is `x` with its ephemeral
//! parts made null. Unlike sensitivity this is followed per expression,
//! not per path: anything that reads an ephemeral value is ephemeral as a
//! whole, as Terraform's ephemeral mark makes it for every place the
//! checks below look at.
//!
//! Ephemeral values may go into locals, provider configurations,
//! ephemeral outputs of child modules and write-only attributes; they may
//! not go into a resource's other attributes, `count` or `for_each`, a
//! root module output, or a child module's output or variable not declared
//! ephemeral. Each check gives Terraform's error at Terraform's location.

use std::collections::BTreeSet;

use crate::addr::Mode;
use crate::diag::Diagnostic;
use crate::schema;

use super::expr::{ExprKind, Expression, Reference, TemplatePart};
use super::{Body, Config, error_at};

/// The function that strips ephemerality: `ephemeralasnull(x)`.
pub const EPHEMERAL_AS_NULL: &str = "ephemeralasnull";

/// What is ephemeral in a (module-expanded) configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ephemerality {
    /// Root input variables declared `ephemeral = true`.
    pub variables: BTreeSet<String>,
    /// Locals (module variables and outputs among them) derived from an
    /// ephemeral value.
    pub locals: BTreeSet<String>,
    /// Whether the configuration declares `ephemeral` resource blocks
    /// (every reference to one is ephemeral).
    pub resources: bool,
}

impl Ephemerality {
    /// What is ephemeral in `config`: its ephemeral variables and every
    /// local derived from one, found by following locals to a fixed point.
    pub fn of(config: &Config) -> Ephemerality {
        let mut found = Ephemerality {
            variables: config.variables.values().filter(|v| v.ephemeral).map(|v| v.name.clone()).collect(),
            locals: BTreeSet::new(),
            resources: config.resources.iter().any(|r| r.addr.mode == Mode::Ephemeral),
        };
        // Most configurations have no ephemeral value at all: nothing to follow.
        let seeded =
            !found.variables.is_empty() || found.resources || config.locals.values().any(|l| reads_applying(&l.expr));
        if !seeded {
            return found;
        }
        loop {
            let more: Vec<String> = config
                .locals
                .values()
                .filter(|l| !found.locals.contains(&l.name) && found.is_ephemeral(&l.expr))
                .map(|l| l.name.clone())
                .collect();
            if more.is_empty() {
                return found;
            }
            found.locals.extend(more);
        }
    }

    /// Whether nothing is ephemeral.
    pub fn is_empty(&self) -> bool {
        self.variables.is_empty() && self.locals.is_empty() && !self.resources
    }

    /// Whether the value of `expr` is derived from an ephemeral value
    /// (other than through `ephemeralasnull`).
    pub fn is_ephemeral(&self, expr: &Expression) -> bool {
        match &expr.kind {
            ExprKind::Literal(_) => false,
            ExprKind::Call { name, .. } if name == EPHEMERAL_AS_NULL => false,
            ExprKind::Call { args, .. } => args.iter().any(|a| self.is_ephemeral(a)),
            ExprKind::Tuple(items) => items.iter().any(|e| self.is_ephemeral(e)),
            ExprKind::Object(items) => items.iter().any(|(k, v)| self.is_ephemeral(k) || self.is_ephemeral(v)),
            ExprKind::Template(parts) => parts.iter().any(|p| self.template_part(p)),
            ExprKind::Unary { operand, .. } => self.is_ephemeral(operand),
            ExprKind::Binary { lhs, rhs, .. } => self.is_ephemeral(lhs) || self.is_ephemeral(rhs),
            ExprKind::Conditional { condition, then, otherwise } => {
                self.is_ephemeral(condition) || self.is_ephemeral(then) || self.is_ephemeral(otherwise)
            }
            // A reference (with the expressions of its index steps), or a
            // `for` expression: what it refers to decides.
            ExprKind::Variable(_) | ExprKind::Traversal { .. } | ExprKind::For(_) => {
                expr.references().iter().any(|(r, _)| self.is_ephemeral_reference(r))
            }
        }
    }

    fn template_part(&self, part: &TemplatePart) -> bool {
        match part {
            TemplatePart::Literal(_) => false,
            TemplatePart::Interpolation(e) => self.is_ephemeral(e),
            TemplatePart::If { condition, then, otherwise } => {
                self.is_ephemeral(condition)
                    || then.iter().any(|p| self.template_part(p))
                    || otherwise.iter().any(|p| self.template_part(p))
            }
            TemplatePart::For { collection, body, .. } => {
                self.is_ephemeral(collection) || body.iter().any(|p| self.template_part(p))
            }
        }
    }

    /// Whether what `reference` names is ephemeral.
    pub fn is_ephemeral_reference(&self, reference: &Reference) -> bool {
        match reference {
            Reference::Variable(name) => self.variables.contains(name),
            Reference::Local(name) => self.locals.contains(name),
            Reference::TerraformApplying => true,
            Reference::Resource(addr) => addr.mode == Mode::Ephemeral,
            _ => false,
        }
    }

    /// The first ephemeral reference inside `expr`, for the
    /// "… has an ephemeral value" line under an error.
    fn first_ephemeral_reference(&self, expr: &Expression) -> Option<Reference> {
        expr.references().into_iter().map(|(r, _)| r).find(|r| self.is_ephemeral_reference(r))
    }
}

/// Whether `expr` reads `terraform.applying`.
fn reads_applying(expr: &Expression) -> bool {
    expr.references().iter().any(|(r, _)| *r == Reference::TerraformApplying)
}

/// Finds what is ephemeral in the module-expanded `config` and records it
/// there; the errors of ephemeral values where the configuration's
/// structure forbids them (see [`check_config`]).
pub fn mark(config: &mut Config) -> Result<(), Vec<Diagnostic>> {
    let ephemeral = Ephemerality::of(config);
    let errors = check_config(config, &ephemeral);
    config.ephemeral = std::sync::Arc::new(ephemeral);
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// The errors of ephemeral values where the configuration's structure
/// forbids them, whatever the providers' schemas say: resources' `count`
/// and `for_each`, root outputs (which may not be ephemeral themselves),
/// and child modules' variables and outputs not declared ephemeral.
pub fn check_config(config: &Config, ephemeral: &Ephemerality) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for output in config.outputs.values() {
        if output.ephemeral {
            errors.push(error_at(
                "Ephemeral output not allowed",
                "Ephemeral outputs are not allowed in context of a root module",
                &output.location,
            ));
        } else if ephemeral.is_ephemeral(&output.expr) {
            errors.push(output_not_ephemeral(&output.expr));
        }
    }
    for local in config.locals.values() {
        if let Some(variable) = &local.input
            && !variable.ephemeral
            && ephemeral.is_ephemeral(&local.expr)
        {
            errors.push(error_at(
                "Ephemeral value not allowed",
                "This input variable is not declared as accepting a ephemeral values, so it cannot be set to a \
                 result derived from an ephemeral value.",
                &local.expr.location,
            ));
        }
        if local.output_ephemeral == Some(false) && ephemeral.is_ephemeral(&local.expr) {
            errors.push(output_not_ephemeral(&local.expr));
        }
    }
    if ephemeral.is_empty() {
        return errors;
    }
    // An ephemeral resource's own repetition may be ephemeral: it is
    // expanded anew in every run and never stored.
    for resource in config.resources.iter().filter(|r| r.addr.mode != Mode::Ephemeral) {
        if let Some(count) = &resource.count
            && ephemeral.is_ephemeral(count)
        {
            errors.push(repetition_error(ephemeral, count, "count", "the number of resource instances"));
        }
        if let Some(for_each) = &resource.for_each
            && ephemeral.is_ephemeral(for_each)
        {
            errors.push(repetition_error(ephemeral, for_each, "for_each", "a resource's instance keys"));
        }
    }
    errors
}

fn output_not_ephemeral(expr: &Expression) -> Diagnostic {
    error_at(
        "Ephemeral value not allowed",
        "This output value is not declared as returning an ephemeral value, so it cannot be set to a result \
         derived from an ephemeral value.",
        &expr.location,
    )
}

/// Terraform's error for a `count` or `for_each` (`argument`, which
/// decides `what`) derived from an ephemeral value, at `expr`.
pub(crate) fn repetition_error(ephemeral: &Ephemerality, expr: &Expression, argument: &str, what: &str) -> Diagnostic {
    let culprit = match ephemeral.first_ephemeral_reference(expr) {
        Some(r) => format!("{r} has an ephemeral value.\n\n"),
        None => String::new(),
    };
    // Terraform's wording: "The given "for_each" value is …" but "The given
    // "count" is …".
    let (summary, given) = if argument == "count" {
        ("Invalid count argument", "\"count\"")
    } else {
        ("Invalid for_each argument", "\"for_each\" value")
    };
    error_at(
        summary,
        format!(
            "{culprit}The given {given} is derived from an ephemeral value, which means that cairn cannot persist \
             it between plan/apply rounds. Use only non-ephemeral values to specify {what}."
        ),
        &expr.location,
    )
}

/// The errors of ephemeral values in a resource's attributes that its
/// schema does not declare write-only: such a value would be persisted in
/// the state and the plan. `what` names the resource for the message.
pub fn check_resource_body(
    body: &Body,
    block: &schema::Block,
    ephemeral: &Ephemerality,
    what: &str,
) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    if ephemeral.is_empty() {
        return errors;
    }
    for attr in &body.attributes {
        let write_only = block.attributes.get(&attr.name).is_some_and(|a| a.write_only);
        if !write_only && ephemeral.is_ephemeral(&attr.expr) {
            errors.push(error_at(
                "Invalid use of ephemeral value",
                format!(
                    "Ephemeral values are not valid for \"{}\", because it is not a write-only attribute and must \
                     be persisted to state (in {what}).",
                    attr.name
                ),
                &attr.expr.location,
            ));
        }
    }
    for nested in &body.blocks {
        // A `dynamic "x"` block's content is the body of the `x` blocks.
        let (name, inner) = match (nested.type_name.as_str(), nested.labels.first()) {
            ("dynamic", Some(label)) => match nested.body.blocks.iter().find(|b| b.type_name == "content") {
                Some(content) => (label.as_str(), &content.body),
                None => continue,
            },
            (name, _) => (name, &nested.body),
        };
        if let Some(inner_block) = block.blocks.get(name) {
            errors.extend(check_resource_body(inner, &inner_block.block, ephemeral, what));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_expression;

    fn expr(text: &str) -> Expression {
        parse_expression(text, "test.tf").expect("parses")
    }

    fn with_variable(name: &str) -> Ephemerality {
        Ephemerality { variables: [name.to_string()].into(), ..Ephemerality::default() }
    }

    #[test]
    fn anything_that_reads_an_ephemeral_variable_is_ephemeral() {
        let e = with_variable("pw");
        for text in [
            "var.pw",
            "\"x-${var.pw}\"",
            "upper(var.pw)",
            "[var.pw]",
            "{ a = var.pw }",
            "true ? var.pw : \"\"",
            "[for c in var.pw : c]",
            "length(var.pw) > 3",
        ] {
            assert!(e.is_ephemeral(&expr(text)), "{text} should be ephemeral");
        }
    }

    #[test]
    fn ephemeralasnull_and_other_values_are_not_ephemeral() {
        let e = with_variable("pw");
        for text in ["var.other", "ephemeralasnull(var.pw)", "\"${ephemeralasnull(var.pw)}\"", "local.x", "1 + 2"] {
            assert!(!e.is_ephemeral(&expr(text)), "{text} should not be ephemeral");
        }
    }

    #[test]
    fn ephemeralasnull_nulls_the_ephemeral_parts_of_what_it_is_given() {
        use crate::config::{EvalContext, Phase, eval};
        use crate::value::Value;
        let mut ctx = EvalContext::new(".");
        ctx.variables.insert("pw".into(), Value::string("secret"));
        ctx.variables.insert("plain".into(), Value::string("d"));
        ctx.ephemeral = std::sync::Arc::new(with_variable("pw"));
        let value = |text: &str, ctx: &EvalContext| eval(&expr(text), ctx).expect("evaluates");
        assert_eq!(value("ephemeralasnull(\"x-${var.pw}\")", &ctx), Value::Null);
        assert_eq!(value("ephemeralasnull(var.plain)", &ctx), Value::string("d"));
        assert_eq!(
            value("ephemeralasnull({ a = var.pw, b = var.plain })", &ctx),
            Value::object([("a", Value::Null), ("b", Value::string("d"))])
        );
        assert_eq!(value("ephemeralasnull([var.pw, 1])", &ctx), Value::Tuple(vec![Value::Null, Value::int(1)]));
        assert_eq!(value("terraform.applying", &ctx), Value::Bool(false));
        ctx.phase = Phase::Apply;
        assert_eq!(value("terraform.applying", &ctx), Value::Bool(true));
    }

    #[test]
    fn root_outputs_may_not_be_or_hold_ephemeral_values() {
        let (_dir, config) = crate::config::testutil::load_main(
            r#"
variable "pw" {
  ephemeral = true
}
output "declared" {
  value     = "x"
  ephemeral = true
}
output "derived" {
  value = "${var.pw}!"
}
output "fine" {
  value = ephemeralasnull(var.pw)
}
"#,
        );
        let errors: Vec<String> =
            check_config(&config, &Ephemerality::of(&config)).iter().map(|d| d.to_string()).collect();
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].starts_with("Error: main.tf:5: Ephemeral output not allowed"), "{errors:#?}");
        assert!(errors[1].starts_with("Error: main.tf:10: Ephemeral value not allowed"), "{errors:#?}");
    }

    #[test]
    fn an_ephemeral_resource_is_read_as_ephemeral_and_may_not_count_a_resource() {
        let (_dir, config) = crate::config::testutil::load_main(
            r#"
ephemeral "random_password" "db" {
  count  = 2
  length = 20
}
locals {
  pw = ephemeral.random_password.db[0].result
}
resource "random_id" "x" {
  count       = length(local.pw)
  byte_length = 4
}
"#,
        );
        let lease = &config.resources[0];
        assert_eq!(lease.addr.to_string(), "ephemeral.random_password.db");
        assert_eq!(lease.addr.mode, Mode::Ephemeral);
        let e = Ephemerality::of(&config);
        assert!(e.resources && e.locals.contains("pw"), "{e:?}");
        assert!(e.is_ephemeral(&expr("ephemeral.random_password.db[0].result")));
        let errors: Vec<String> = check_config(&config, &e).iter().map(|d| d.to_string()).collect();
        // The managed resource's count, not the ephemeral one's own.
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].starts_with("Error: main.tf:10: Invalid count argument"), "{errors:#?}");
        let parsed: crate::addr::InstanceAddr = "ephemeral.random_password.db[1]".parse().unwrap();
        assert_eq!(parsed.resource, lease.addr);
    }

    #[test]
    fn terraform_applying_is_ephemeral() {
        assert!(Ephemerality::default().is_ephemeral(&expr("terraform.applying ? 1 : 0")));
    }

    #[test]
    fn locals_derived_from_ephemeral_values_are_found_through_chains() {
        let (_dir, config) = crate::config::testutil::load_main(
            r#"
variable "pw" {
  ephemeral = true
}
variable "plain" {
  default = "x"
}
locals {
  c = local.b
  b = "${local.a}!"
  a = var.pw
  d = var.plain
  e = ephemeralasnull(local.c)
}
"#,
        );
        let e = Ephemerality::of(&config);
        assert_eq!(e.variables, BTreeSet::from(["pw".to_string()]));
        assert_eq!(e.locals, BTreeSet::from(["a".to_string(), "b".to_string(), "c".to_string()]));
    }
}
