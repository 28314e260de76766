//! Number functions. Integers stay exact.

use std::cmp::Ordering;

use crate::value::{Number, Value};

use super::super::ops::compare;
use super::{Args, FnError};

pub(super) fn abs(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Number(match args.number(0)? {
        Number::Int(i) => i.checked_abs().map_or_else(|| Number::from_f64((i as f64).abs()), Number::Int),
        Number::Float(f) => Number::Float(f.abs()),
    }))
}

pub(super) fn ceil(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Number(Number::from_f64(args.number(0)?.as_f64().ceil())))
}

pub(super) fn floor(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Number(Number::from_f64(args.number(0)?.as_f64().floor())))
}

pub(super) fn min(args: &Args) -> Result<Value, FnError> {
    extreme(args, Ordering::Less)
}

pub(super) fn max(args: &Args) -> Result<Value, FnError> {
    extreme(args, Ordering::Greater)
}

/// The number that compares `wanted` to all others.
fn extreme(args: &Args, wanted: Ordering) -> Result<Value, FnError> {
    if args.values.is_empty() {
        return Err(FnError::call("at least one number is required"));
    }
    let mut best = args.number(0)?;
    for i in 1..args.values.len() {
        let n = args.number(i)?;
        if compare(n, best) == wanted {
            best = n;
        }
    }
    Ok(Value::Number(best))
}

/// `log(num, base)`: the logarithm of `num` in `base`.
pub(super) fn log(args: &Args) -> Result<Value, FnError> {
    let (n, base) = (args.number(0)?.as_f64(), args.number(1)?.as_f64());
    Ok(float(n.ln() / base.ln()))
}

/// `pow(base, exponent)`.
pub(super) fn pow(args: &Args) -> Result<Value, FnError> {
    Ok(float(args.number(0)?.as_f64().powf(args.number(1)?.as_f64())))
}

/// `signum(num)`: -1, 0 or 1 by the sign of the number.
pub(super) fn signum(args: &Args) -> Result<Value, FnError> {
    let n = args.number(0)?.as_f64();
    Ok(Value::int(if n > 0.0 {
        1
    } else if n < 0.0 {
        -1
    } else {
        0
    }))
}

/// `parseint(number, base)`: a string of digits in `base` (2 to 62: `0-9`,
/// then `a-z`, then, above base 36, `A-Z`; letters either case up to 36).
pub(super) fn parseint(args: &Args) -> Result<Value, FnError> {
    let text = args.string(0)?;
    let base = args.integer(1)?;
    if !(2..=62).contains(&base) {
        return Err(FnError::arg(1, format!("base must be a whole number between 2 and 62 inclusive, got {base}")));
    }
    let fail = || FnError::arg(0, format!("cannot parse {text:?} as a base {base} integer"));
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(&text)),
    };
    if digits.is_empty() {
        return Err(fail());
    }
    let mut total: i128 = 0;
    for c in digits.chars() {
        let digit = digit_value(c, base).ok_or_else(fail)?;
        total = total.checked_mul(i128::from(base)).and_then(|t| t.checked_add(digit)).ok_or_else(fail)?;
    }
    let total = if negative { -total } else { total };
    Ok(Value::Number(i64::try_from(total).map_or_else(|_| Number::Float(total as f64), Number::Int)))
}

/// The value of one digit in `base`, as Go's `big.Int.SetString`.
fn digit_value(c: char, base: i64) -> Option<i128> {
    let value = match c {
        '0'..='9' => c as i128 - '0' as i128,
        'a'..='z' => c as i128 - 'a' as i128 + 10,
        'A'..='Z' if base <= 36 => c as i128 - 'A' as i128 + 10,
        'A'..='Z' => c as i128 - 'A' as i128 + 36,
        _ => return None,
    };
    (value < i128::from(base)).then_some(value)
}

/// A computed float as a number: whole results are integers.
fn float(f: f64) -> Value {
    if f.is_finite() { Value::Number(Number::from_f64(f)) } else { Value::Number(Number::Float(f)) }
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(value("abs(-3)"), Value::int(3));
        assert_eq!(value("abs(-1.5)"), Value::Number(Number::Float(1.5)));
        assert_eq!(value("ceil(1.2)"), Value::int(2));
        assert_eq!(value("floor(-1.2)"), Value::int(-2));
        assert_eq!(value("max(1, 9223372036854775807, 3)"), Value::int(i64::MAX));
        assert_eq!(value("min(3, -2.5, \"1\")"), Value::Number(Number::Float(-2.5)));
        assert!(error("min()").contains("at least one number is required"));
        assert!(error("max(1, \"x\")").contains("Invalid value for \"numbers\" parameter of max()"));
    }

    #[test]
    fn more_number_functions_agree_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/log
        assert_eq!(value("log(50, 10)"), Value::Number(Number::Float(1.6989700043360185)));
        assert_eq!(value("log(16, 2)"), Value::int(4));
        // …/functions/pow
        assert_eq!(value("pow(3, 2)"), Value::int(9));
        assert_eq!(value("pow(4, 0)"), Value::int(1));
        // …/functions/signum
        assert_eq!(value("signum(-13)"), Value::int(-1));
        assert_eq!(value("signum(0)"), Value::int(0));
        assert_eq!(value("signum(344)"), Value::int(1));
        // …/functions/parseint
        assert_eq!(value("parseint(\"100\", 10)"), Value::int(100));
        assert_eq!(value("parseint(\"FF\", 16)"), Value::int(255));
        assert_eq!(value("parseint(\"-10\", 16)"), Value::int(-16));
        assert_eq!(value("parseint(\"1011111011101111\", 2)"), Value::int(48879));
        assert_eq!(value("parseint(\"aA\", 62)"), Value::int(656));
        assert!(error("parseint(\"12\", 2)").contains("cannot parse \"12\" as a base 2 integer"));
        assert!(error("parseint(\"1\", 63)").contains("between 2 and 62"));
    }
}
