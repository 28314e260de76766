//! Unary and binary operators on values.
//!
//! Numbers stay exact where they can: integer arithmetic is done in `i64`
//! and falls back to `f64` only on overflow or a fractional result. Unknown
//! operands give unknown results, except where the known operand decides
//! alone (`false && x`, `true || x`, `x == null` for a known non-null `x`).

use std::cmp::Ordering;

use crate::diag::Diagnostic;
use crate::value::{Number, Type, Value};

use super::expr::{BinaryOp, UnaryOp};

/// `-x` or `!x`.
pub(crate) fn unary(op: UnaryOp, operand: &Value) -> Result<Value, Diagnostic> {
    Ok(match op {
        UnaryOp::Negate => match number_operand(operand, "operand")? {
            Some(n) => Value::Number(negate(n)),
            None => Value::unknown(),
        },
        UnaryOp::Not => match bool_operand(operand, "operand")? {
            Some(b) => Value::Bool(!b),
            None => Value::unknown(),
        },
    })
}

/// `lhs op rhs`.
pub(crate) fn binary(op: BinaryOp, lhs: &Value, rhs: &Value) -> Result<Value, Diagnostic> {
    match op {
        BinaryOp::Equal => Ok(equality(lhs, rhs)),
        BinaryOp::NotEqual => Ok(match equality(lhs, rhs) {
            Value::Bool(b) => Value::Bool(!b),
            unknown => unknown,
        }),
        BinaryOp::And | BinaryOp::Or => logical(op, lhs, rhs),
        _ => {
            // Check both operands before giving up on an unknown, so that
            // `unknown + true` is still reported as wrong.
            let a = number_operand(lhs, "left operand")?;
            let b = number_operand(rhs, "right operand")?;
            let (Some(a), Some(b)) = (a, b) else {
                return Ok(Value::unknown());
            };
            numeric(op, a, b)
        }
    }
}

fn numeric(op: BinaryOp, a: Number, b: Number) -> Result<Value, Diagnostic> {
    let ordering = || compare(a, b);
    Ok(match op {
        BinaryOp::Add => Value::Number(arithmetic(a, b, i64::checked_add, |x, y| x + y)?),
        BinaryOp::Subtract => Value::Number(arithmetic(a, b, i64::checked_sub, |x, y| x - y)?),
        BinaryOp::Multiply => Value::Number(arithmetic(a, b, i64::checked_mul, |x, y| x * y)?),
        BinaryOp::Divide => {
            check_divisor(b)?;
            // An integer result only when the division is exact: 7 / 2 is 3.5.
            let exact = |x: i64, y: i64| x.checked_rem(y).filter(|r| *r == 0).and_then(|_| x.checked_div(y));
            Value::Number(arithmetic(a, b, exact, |x, y| x / y)?)
        }
        BinaryOp::Modulo => {
            check_divisor(b)?;
            Value::Number(arithmetic(a, b, i64::checked_rem, |x, y| x % y)?)
        }
        BinaryOp::Less => Value::Bool(ordering() == Ordering::Less),
        BinaryOp::LessEqual => Value::Bool(ordering() != Ordering::Greater),
        BinaryOp::Greater => Value::Bool(ordering() == Ordering::Greater),
        BinaryOp::GreaterEqual => Value::Bool(ordering() != Ordering::Less),
        BinaryOp::Equal | BinaryOp::NotEqual | BinaryOp::And | BinaryOp::Or => {
            unreachable!("{} is not a numeric operator", op.symbol())
        }
    })
}

/// Applies `int_op` when both are integers and it does not overflow,
/// else `float_op`.
fn arithmetic(
    a: Number,
    b: Number,
    int_op: impl Fn(i64, i64) -> Option<i64>,
    float_op: impl Fn(f64, f64) -> f64,
) -> Result<Number, Diagnostic> {
    if let (Number::Int(x), Number::Int(y)) = (a, b)
        && let Some(result) = int_op(x, y)
    {
        return Ok(Number::Int(result));
    }
    let result = float_op(a.as_f64(), b.as_f64());
    if result.is_finite() {
        Ok(Number::from_f64(result))
    } else {
        Err(Diagnostic::error("Invalid arithmetic result").with_detail("The result is not a finite number."))
    }
}

fn check_divisor(b: Number) -> Result<(), Diagnostic> {
    if b.as_f64() == 0.0 {
        return Err(Diagnostic::error("Division by zero").with_detail("The right operand of / and % must not be zero."));
    }
    Ok(())
}

/// Orders two numbers, exactly when both are integers.
pub(crate) fn compare(a: Number, b: Number) -> Ordering {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => x.cmp(&y),
        _ => a.as_f64().partial_cmp(&b.as_f64()).unwrap_or(Ordering::Equal),
    }
}

fn negate(n: Number) -> Number {
    match n {
        Number::Int(i) => i.checked_neg().map_or_else(|| Number::from_f64(-(i as f64)), Number::Int),
        Number::Float(f) => Number::Float(-f),
    }
}

/// `==`: unknown when either side is (or contains) unknown, except that a
/// known null or non-null value decides a comparison with null.
fn equality(lhs: &Value, rhs: &Value) -> Value {
    if lhs.is_unknown() || rhs.is_unknown() {
        return Value::unknown();
    }
    if lhs.is_null() || rhs.is_null() {
        return Value::Bool(lhs.is_null() && rhs.is_null());
    }
    if !lhs.is_wholly_known() || !rhs.is_wholly_known() {
        return Value::unknown();
    }
    Value::Bool(lhs == rhs)
}

/// `&&` and `||`: a known operand equal to the operator's deciding value
/// (false for `&&`, true for `||`) decides even when the other is unknown.
fn logical(op: BinaryOp, lhs: &Value, rhs: &Value) -> Result<Value, Diagnostic> {
    let a = bool_operand(lhs, "left operand")?;
    let b = bool_operand(rhs, "right operand")?;
    let decisive = op == BinaryOp::Or;
    Ok(if a == Some(decisive) || b == Some(decisive) {
        Value::Bool(decisive)
    } else if a.is_none() || b.is_none() {
        Value::unknown()
    } else {
        Value::Bool(!decisive)
    })
}

/// An operand as a number (numeric strings convert); `None` when unknown.
fn number_operand(v: &Value, which: &str) -> Result<Option<Number>, Diagnostic> {
    match convert_operand(&Type::Number, v, which)? {
        Value::Number(n) => Ok(Some(n)),
        _ => Ok(None),
    }
}

/// An operand as a bool (`"true"` converts); `None` when unknown.
fn bool_operand(v: &Value, which: &str) -> Result<Option<bool>, Diagnostic> {
    match convert_operand(&Type::Bool, v, which)? {
        Value::Bool(b) => Ok(Some(b)),
        _ => Ok(None),
    }
}

fn convert_operand(ty: &Type, v: &Value, which: &str) -> Result<Value, Diagnostic> {
    let invalid = |message: String| {
        Diagnostic::error("Invalid operand").with_detail(format!("Unsuitable value for {which}: {message}."))
    };
    if v.is_null() {
        return Err(invalid(format!("a {ty} is required, got null")));
    }
    ty.convert(v).map_err(|e| invalid(e.message))
}
