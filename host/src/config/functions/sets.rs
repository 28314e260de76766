//! Set functions: union, intersection, difference and the Cartesian
//! product. Lists and tuples are taken as sets (duplicates dropped).

use crate::value::Value;

use super::{Args, FnError};

/// `setunion(sets...)`: the elements in any of the sets.
pub(super) fn setunion(args: &Args) -> Result<Value, FnError> {
    let mut all = Vec::new();
    for i in 0..args.values.len() {
        all.extend_from_slice(args.elements(i)?);
    }
    Ok(Value::set(all))
}

/// `setintersection(sets...)`: the elements in every set.
pub(super) fn setintersection(args: &Args) -> Result<Value, FnError> {
    let mut common = args.elements(0)?.to_vec();
    for i in 1..args.values.len() {
        let other = args.elements(i)?;
        common.retain(|v| other.contains(v));
    }
    Ok(Value::set(common))
}

/// `setsubtract(a, b)`: the elements of `a` not in `b`.
pub(super) fn setsubtract(args: &Args) -> Result<Value, FnError> {
    let b = args.elements(1)?;
    Ok(Value::set(args.elements(0)?.iter().filter(|v| !b.contains(v)).cloned().collect()))
}

/// `setproduct(sets...)`: every combination of one element from each, in
/// order; a list of tuples (a set when every argument is a set).
pub(super) fn setproduct(args: &Args) -> Result<Value, FnError> {
    if args.values.len() < 2 {
        return Err(FnError::call("at least two arguments are required"));
    }
    let mut combinations: Vec<Vec<Value>> = vec![Vec::new()];
    for i in 0..args.values.len() {
        let elements = args.elements(i)?;
        combinations = combinations
            .iter()
            .flat_map(|prefix| {
                elements.iter().map(move |e| {
                    let mut next = prefix.clone();
                    next.push(e.clone());
                    next
                })
            })
            .collect();
    }
    let tuples: Vec<Value> = combinations.into_iter().map(Value::Tuple).collect();
    Ok(if args.values.iter().all(|v| matches!(v, Value::Set(_))) { Value::set(tuples) } else { Value::List(tuples) })
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::value;
    use crate::value::Value;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn set_functions_agree_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/setintersection
        assert_eq!(value("setintersection([\"a\", \"b\"], [\"b\", \"c\"], [\"b\", \"d\"])"), Value::set(vec![s("b")]));
        // …/functions/setsubtract
        assert_eq!(value("setsubtract([\"a\", \"b\", \"c\"], [\"a\", \"c\"])"), Value::set(vec![s("b")]));
        // …/functions/setunion
        assert_eq!(
            value("setunion([\"a\", \"b\"], [\"b\", \"c\"], [\"d\"])"),
            Value::set(vec![s("a"), s("b"), s("c"), s("d")])
        );
        // …/functions/setproduct
        let pair = |a: &str, b: &str| Value::Tuple(vec![s(a), s(b)]);
        assert_eq!(
            value("setproduct([\"development\", \"staging\", \"production\"], [\"app1\", \"app2\"])"),
            Value::List(vec![
                pair("development", "app1"),
                pair("development", "app2"),
                pair("staging", "app1"),
                pair("staging", "app2"),
                pair("production", "app1"),
                pair("production", "app2"),
            ])
        );
        assert_eq!(value("setproduct([], [1])"), Value::List(vec![]));
    }
}
