//! Custom conditions: the `precondition` and `postcondition` blocks of a
//! resource's `lifecycle`, the `precondition` blocks of an output, and the
//! `assert` blocks of a `check` block. Each is a condition and an error
//! message; this module reads them and decides, for a context, whether one
//! holds, fails (with Terraform's diagnostic) or cannot be known yet.

use crate::diag::{Diagnostic, Location};
use crate::value::{Type, Value};

use super::blocks::{expect_no_labels, unsupported_argument, unsupported_block};
use super::expr::Reference;
use super::{Block, EvalContext, Expression, error_at, eval::eval_within, marks};

/// A `precondition`, `postcondition` or `assert` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Must be true; unknown postpones the decision.
    pub condition: Expression,
    /// What the failure says: a string.
    pub error_message: Expression,
    /// The block.
    pub location: Location,
}

impl Condition {
    /// The references of the condition and its message; `bound` names
    /// (`self` in a postcondition) are not references.
    pub fn references_within(&self, bound: &[String]) -> Vec<(Reference, Location)> {
        [&self.condition, &self.error_message]
            .into_iter()
            .flat_map(|e| e.checked_references_within(bound))
            .filter_map(Result::ok)
            .collect()
    }
}

/// Which kind of condition, which decides what its failure is called and
/// whether it is an error or a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionKind {
    /// A resource's `precondition`.
    ResourcePrecondition,
    /// A resource's `postcondition`: `self` is the object.
    ResourcePostcondition,
    /// An output's `precondition`.
    OutputPrecondition,
    /// A `check` block's `assert`: a failure is only a warning.
    CheckAssertion,
}

impl ConditionKind {
    /// The block's name in the configuration.
    pub fn block_name(self) -> &'static str {
        match self {
            ConditionKind::ResourcePrecondition | ConditionKind::OutputPrecondition => "precondition",
            ConditionKind::ResourcePostcondition => "postcondition",
            ConditionKind::CheckAssertion => "assert",
        }
    }

    /// The summary of a failure, in Terraform's words.
    fn failure_summary(self) -> &'static str {
        match self {
            ConditionKind::ResourcePrecondition => "Resource precondition failed",
            ConditionKind::ResourcePostcondition => "Resource postcondition failed",
            ConditionKind::OutputPrecondition => "Module output value precondition failed",
            ConditionKind::CheckAssertion => "Check block assertion failed",
        }
    }

    /// The names bound inside the condition: `self` in a postcondition.
    pub fn bound_names(self) -> Vec<String> {
        match self {
            ConditionKind::ResourcePostcondition => vec!["self".to_string()],
            _ => Vec::new(),
        }
    }
}

/// What evaluating a condition decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It holds.
    Passed,
    /// It does not: the diagnostic (an error, or a warning for an assertion).
    Failed(Diagnostic),
    /// It refers to values not known yet.
    Unknown,
}

/// Reads a `precondition`, `postcondition` or `assert` block: exactly a
/// `condition` and an `error_message`. A resource condition must refer to
/// something, or it would check nothing (Terraform's rule).
pub(super) fn condition_block(block: &Block, kind: ConditionKind, diags: &mut Vec<Diagnostic>) -> Option<Condition> {
    expect_no_labels(block, diags);
    let name = kind.block_name();
    for attr in &block.body.attributes {
        if !["condition", "error_message"].contains(&attr.name.as_str()) {
            diags.push(unsupported_argument(attr, name, &["condition", "error_message"]));
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, name, &[]));
    }
    let mut required = |key: &str| {
        let found = block.body.attribute(key).map(|a| a.expr.clone());
        if found.is_none() {
            diags.push(error_at(
                "Missing required argument",
                format!("The argument \"{key}\" is required, but no definition was found."),
                &block.location,
            ));
        }
        found
    };
    let (condition, error_message) = (required("condition")?, required("error_message")?);
    let refers = !condition.checked_references_within(&[]).is_empty();
    let resource_condition = matches!(kind, ConditionKind::ResourcePrecondition | ConditionKind::ResourcePostcondition);
    if resource_condition && !refers {
        diags.push(error_at(
            format!("Invalid {name} expression"),
            "The condition expression must refer to at least one object from elsewhere in the configuration, or \
             else its result would not be checking anything.",
            &condition.location,
        ));
    }
    Some(Condition { condition, error_message, location: block.location.clone() })
}

/// Evaluates `condition` in `ctx` with the names `bound` defined (`self`
/// for a postcondition). Errors are what keeps the condition from being
/// decided: an expression that fails, a result that is not a bool (or is
/// null), a message that is not a string.
pub fn evaluate(
    condition: &Condition,
    kind: ConditionKind,
    ctx: &EvalContext,
    bound: &[(String, Value)],
) -> Result<Verdict, Vec<Diagnostic>> {
    let result = eval_within(&condition.condition, ctx, bound)?;
    let invalid = |detail: &str| vec![error_at("Invalid condition result", detail, &condition.condition.location)];
    if result.is_null() {
        return Err(invalid("Condition expression must return either true or false, not null."));
    }
    if !result.is_wholly_known() {
        return Ok(Verdict::Unknown);
    }
    match Type::Bool.convert(&result) {
        Ok(Value::Bool(true)) => Ok(Verdict::Passed),
        Ok(Value::Bool(false)) => {
            let message = error_message(condition, ctx, bound)?;
            let failure = match kind {
                ConditionKind::CheckAssertion => Diagnostic::warning(kind.failure_summary()),
                _ => Diagnostic::error(kind.failure_summary()),
            };
            Ok(Verdict::Failed(failure.with_detail(message).at(&condition.condition.location)))
        }
        _ => Err(invalid("Invalid condition result value: a bool is required.")),
    }
}

/// Checks `conditions` of one `kind` in `ctx` with the names `bound`:
/// every failure, and every error that keeps one from being decided. A
/// condition that is unknown is left for later (it is checked again when
/// its values are known, after apply).
pub fn check_all(
    conditions: &[Condition],
    kind: ConditionKind,
    ctx: &EvalContext,
    bound: &[(String, Value)],
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for c in conditions {
        match evaluate(c, kind, ctx, bound) {
            Ok(Verdict::Passed | Verdict::Unknown) => {}
            Ok(Verdict::Failed(d)) => found.push(d),
            Err(d) => found.extend(d),
        }
    }
    found
}

/// The failure's message: the `error_message` as a string, hidden when it
/// shows a sensitive value.
fn error_message(
    condition: &Condition,
    ctx: &EvalContext,
    bound: &[(String, Value)],
) -> Result<String, Vec<Diagnostic>> {
    let expr = &condition.error_message;
    let invalid = |detail: &str| vec![error_at("Invalid error message", detail, &expr.location)];
    let value = eval_within(expr, ctx, bound)?;
    if value.is_null() {
        return Err(invalid("Unsuitable value for error message: must not be null."));
    }
    if !value.is_wholly_known() {
        return Ok("The error message could not be evaluated: it refers to values known only after apply.".into());
    }
    let Ok(Value::String(message)) = Type::String.convert(&value) else {
        return Err(invalid("Unsuitable value for error message: string required."));
    };
    if !marks(expr, ctx).is_empty() {
        return Ok("The error message included a sensitive value, so it will not be displayed.".to_string());
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{expr, shown};
    use super::*;

    fn condition(condition: &str, message: &str) -> Condition {
        Condition { condition: expr(condition), error_message: expr(message), location: Location::default() }
    }

    fn ctx_with(name: &str, value: Value) -> EvalContext {
        let mut ctx = EvalContext::new(".");
        ctx.variables.insert(name.to_string(), value);
        ctx
    }

    #[test]
    fn a_false_condition_fails_with_its_message_at_the_condition() {
        let ctx = ctx_with("n", Value::int(3));
        let c = condition("var.n < 2", "\"n is ${var.n}, too big.\"");
        let Verdict::Failed(d) = evaluate(&c, ConditionKind::ResourcePrecondition, &ctx, &[]).unwrap() else {
            panic!("expected a failure")
        };
        assert_eq!(d.to_string(), "Error: test.tf:1: Resource precondition failed\n  n is 3, too big.");
        let Verdict::Failed(w) = evaluate(&c, ConditionKind::CheckAssertion, &ctx, &[]).unwrap() else {
            panic!("expected a failure")
        };
        assert!(!w.is_error(), "an assertion fails as a warning");
        assert_eq!(w.summary, "Check block assertion failed");
        let ok = condition("var.n > 2", "\"unused\"");
        assert_eq!(evaluate(&ok, ConditionKind::OutputPrecondition, &ctx, &[]).unwrap(), Verdict::Passed);
    }

    #[test]
    fn self_is_bound_in_a_postcondition_and_unknown_postpones_the_decision() {
        let ctx = EvalContext::new(".");
        let c = condition("self.out == \"y\"", "\"out is ${self.out}\"");
        let planned = Value::object([("out".to_string(), Value::unknown())]);
        let verdict = evaluate(&c, ConditionKind::ResourcePostcondition, &ctx, &[("self".into(), planned)]);
        assert_eq!(verdict.unwrap(), Verdict::Unknown);
        let applied = Value::object([("out".to_string(), Value::string("x"))]);
        let Verdict::Failed(d) =
            evaluate(&c, ConditionKind::ResourcePostcondition, &ctx, &[("self".into(), applied)]).unwrap()
        else {
            panic!("expected a failure")
        };
        assert_eq!(d.summary, "Resource postcondition failed");
        assert_eq!(d.detail, "out is x");
    }

    #[test]
    fn null_conditions_and_unsuitable_messages_are_errors() {
        let ctx = ctx_with("z", Value::Null);
        let null = condition("var.z", "\"x\"");
        let err = evaluate(&null, ConditionKind::ResourcePrecondition, &ctx, &[]).unwrap_err();
        assert_eq!(
            shown(&err),
            "Error: test.tf:1: Invalid condition result\n  Condition expression must return either true or false, not null."
        );
        let null_message = condition("var.z == 1", "var.z");
        let err = evaluate(&null_message, ConditionKind::ResourcePrecondition, &ctx, &[]).unwrap_err();
        assert!(shown(&err).contains("Invalid error message\n  Unsuitable value for error message: must not be null."));
        let list_message = condition("var.z == 1", "[1]");
        let err = evaluate(&list_message, ConditionKind::ResourcePrecondition, &ctx, &[]).unwrap_err();
        assert!(shown(&err).contains("string required"), "{}", shown(&err));
        let number_message = condition("var.z == 1", "12");
        let Verdict::Failed(d) = evaluate(&number_message, ConditionKind::ResourcePrecondition, &ctx, &[]).unwrap()
        else {
            panic!("expected a failure")
        };
        assert_eq!(d.detail, "12", "a number converts to a string");
    }

    #[test]
    fn a_message_showing_a_sensitive_value_is_hidden() {
        let mut ctx = ctx_with("secret", Value::string("hunter2"));
        ctx.sensitivity.variables.insert("secret".to_string());
        let c = condition("var.secret == \"x\"", "\"secret is ${var.secret}\"");
        let Verdict::Failed(d) = evaluate(&c, ConditionKind::ResourcePrecondition, &ctx, &[]).unwrap() else {
            panic!("expected a failure")
        };
        assert!(!d.detail.contains("hunter2"), "{d}");
        assert!(d.detail.contains("sensitive value"), "{d}");
    }
}
