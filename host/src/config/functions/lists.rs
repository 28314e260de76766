//! List functions beyond the basics of `collection`: chunking, reversing,
//! filtering by keys, transposing a map of lists, and the boolean folds
//! `alltrue`/`anytrue`.

use std::collections::BTreeMap;

use crate::value::{Type, Value};

use super::{Args, FnError};

/// `chunklist(list, size)`: consecutive lists of at most `size` elements;
/// size 0 is one chunk of everything, as Terraform's.
pub(super) fn chunklist(args: &Args) -> Result<Value, FnError> {
    let elements = args.elements(0)?;
    let size = args.integer(1)?;
    if size < 0 {
        return Err(FnError::arg(1, "the size argument must be positive"));
    }
    if size == 0 {
        return Ok(Value::List(vec![Value::List(elements.to_vec())]));
    }
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    Ok(Value::List(elements.chunks(size).map(|c| Value::List(c.to_vec())).collect()))
}

/// `reverse(list)`: the same elements, last first.
pub(super) fn reverse(args: &Args) -> Result<Value, FnError> {
    let mut elements = args.elements(0)?.to_vec();
    elements.reverse();
    Ok(match args.get(0) {
        Value::List(_) => Value::List(elements),
        _ => Value::Tuple(elements),
    })
}

/// `coalescelist(lists...)`: the first non-empty list.
pub(super) fn coalescelist(args: &Args) -> Result<Value, FnError> {
    if args.values.is_empty() {
        return Err(FnError::call("at least one argument is required"));
    }
    for i in 0..args.values.len() {
        if !args.elements(i)?.is_empty() {
            return Ok(args.get(i).clone());
        }
    }
    Ok(args.get(args.values.len() - 1).clone())
}

/// `matchkeys(values, keys, searchset)`: the elements of `values` whose
/// element at the same index of `keys` is in `searchset`.
pub(super) fn matchkeys(args: &Args) -> Result<Value, FnError> {
    let (values, keys, search) = (args.elements(0)?, args.elements(1)?, args.elements(2)?);
    if values.len() != keys.len() {
        return Err(FnError::call("length of keys and values should be equal"));
    }
    let picked = values.iter().zip(keys).filter(|(_, k)| search.contains(k)).map(|(v, _)| v.clone());
    Ok(Value::List(picked.collect()))
}

/// `transpose(map)`: a map of lists of strings turned inside out: each
/// string of the lists maps to the keys whose list holds it.
pub(super) fn transpose(args: &Args) -> Result<Value, FnError> {
    let entries = match args.not_null(0)? {
        Value::Map(m) | Value::Object(m) => m,
        other => {
            return Err(FnError::arg(0, format!("a map of lists of strings is required, got {}", other.kind_name())));
        }
    };
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (key, list) in entries {
        let elements =
            list.elements().ok_or_else(|| FnError::arg(0, format!("the value of key {key:?} is not a list")))?;
        for element in elements {
            let Ok(Value::String(name)) = Type::String.convert(element) else {
                return Err(FnError::arg(
                    0,
                    format!("the list of key {key:?} holds {}, not a string", element.kind_name()),
                ));
            };
            out.entry(name).or_default().push(Value::string(key.clone()));
        }
    }
    Ok(Value::Map(out.into_iter().map(|(k, v)| (k, Value::List(v))).collect()))
}

/// `alltrue(list)`: whether every element is true (`"true"` counts).
pub(super) fn alltrue(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Bool(bools(args)?.into_iter().all(|b| b)))
}

/// `anytrue(list)`: whether any element is true (`"true"` counts).
pub(super) fn anytrue(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Bool(bools(args)?.into_iter().any(|b| b)))
}

/// The elements of argument 0 as booleans (null is false, as in Terraform).
fn bools(args: &Args) -> Result<Vec<bool>, FnError> {
    args.elements(0)?
        .iter()
        .map(|v| match v {
            Value::Null => Ok(false),
            v => match Type::Bool.convert(v) {
                Ok(Value::Bool(b)) => Ok(b),
                _ => Err(FnError::arg(0, format!("a list of bool is required, got an element of {}", v.kind_name()))),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use crate::value::Value;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    fn list(values: &[Value]) -> Value {
        Value::List(values.to_vec())
    }

    #[test]
    fn list_functions_agree_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/chunklist
        assert_eq!(
            value("chunklist([\"a\", \"b\", \"c\", \"d\", \"e\"], 2)"),
            list(&[list(&[s("a"), s("b")]), list(&[s("c"), s("d")]), list(&[s("e")])])
        );
        assert_eq!(value("chunklist([\"a\"], 0)"), list(&[list(&[s("a")])]));
        // …/functions/reverse
        assert_eq!(value("reverse([1, 2, 3])"), Value::Tuple(vec![Value::int(3), Value::int(2), Value::int(1)]));
        // …/functions/coalescelist
        assert_eq!(value("coalescelist([\"a\", \"b\"], [\"c\", \"d\"])"), Value::Tuple(vec![s("a"), s("b")]));
        assert_eq!(value("coalescelist([], [\"c\", \"d\"])"), Value::Tuple(vec![s("c"), s("d")]));
        // …/functions/matchkeys
        assert_eq!(
            value(
                "matchkeys([\"i-123\", \"i-abc\", \"i-def\"], [\"us-west\", \"us-east\", \"us-east\"], [\"us-east\"])"
            ),
            list(&[s("i-abc"), s("i-def")])
        );
        assert!(error("matchkeys([1], [], [])").contains("length of keys and values should be equal"));
        // …/functions/alltrue, …/functions/anytrue
        assert_eq!(value("alltrue([\"true\", true])"), Value::Bool(true));
        assert_eq!(value("alltrue([true, false])"), Value::Bool(false));
        assert_eq!(value("alltrue([])"), Value::Bool(true));
        assert_eq!(value("anytrue([\"true\"])"), Value::Bool(true));
        assert_eq!(value("anytrue([])"), Value::Bool(false));
        assert!(error("alltrue([1])").contains("a list of bool is required"));
        // …/functions/transpose
        assert_eq!(
            value("transpose({\"a\" = [\"1\", \"2\"], \"b\" = [\"2\", \"3\"]})"),
            Value::Map(
                [("1", list(&[s("a")])), ("2", list(&[s("a"), s("b")])), ("3", list(&[s("b")]))]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect()
            )
        );
    }
}
