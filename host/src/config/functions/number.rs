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
}
