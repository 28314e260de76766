//! Collection functions: lists, tuples, sets, maps and objects.

use crate::value::{Map, Number, Value};

use super::{Args, FnError};

/// The most elements `range` produces, as in Terraform: a typo in a bound
/// should not build a huge list.
const RANGE_LIMIT: usize = 1024;

/// `length(value)`: characters of a string, elements of a collection. A
/// known collection has a known length even when its elements are unknown.
pub(super) fn length(args: &Args) -> Result<Value, FnError> {
    let n = match args.not_null(0)? {
        Value::String(s) => s.chars().count(),
        Value::List(v) | Value::Tuple(v) | Value::Set(v) => v.len(),
        Value::Map(m) | Value::Object(m) => m.len(),
        other => {
            return Err(FnError::arg(0, format!("a string or collection is required, got {}", other.kind_name())));
        }
    };
    Ok(Value::int(n as i64))
}

/// `concat(seqs...)`: a list when every argument is a list, else a tuple.
pub(super) fn concat(args: &Args) -> Result<Value, FnError> {
    let mut all = Vec::new();
    for i in 0..args.values.len() {
        all.extend_from_slice(args.elements(i)?);
    }
    Ok(if args.values.iter().all(|v| matches!(v, Value::List(_))) { Value::List(all) } else { Value::Tuple(all) })
}

/// `merge(maps...)`: later keys win; a map when every argument is a map,
/// else an object. Null arguments are skipped.
pub(super) fn merge(args: &Args) -> Result<Value, FnError> {
    let mut merged = Map::new();
    let mut all_maps = true;
    for (i, v) in args.values.iter().enumerate() {
        match v {
            Value::Null => {}
            Value::Map(m) => merged.extend(m.clone()),
            Value::Object(m) => {
                all_maps = false;
                merged.extend(m.clone());
            }
            other => {
                return Err(FnError::arg(i, format!("a map or object is required, got {}", other.kind_name())));
            }
        }
    }
    Ok(if all_maps { Value::Map(merged) } else { Value::Object(merged) })
}

/// The entries of a map or object argument.
fn mapping<'a>(args: &'a Args, i: usize) -> Result<&'a Map, FnError> {
    match args.not_null(i)? {
        Value::Map(m) | Value::Object(m) => Ok(m),
        other => Err(FnError::arg(i, format!("a map or object is required, got {}", other.kind_name()))),
    }
}

/// `keys(map)`: the keys, sorted.
pub(super) fn keys(args: &Args) -> Result<Value, FnError> {
    let keys: Vec<Value> = mapping(args, 0)?.keys().map(Value::string).collect();
    // As Terraform's: a list of a map's keys, a tuple of an object's.
    Ok(if matches!(args.get(0), Value::Map(_)) { Value::List(keys) } else { Value::Tuple(keys) })
}

/// `values(map)`: the values in key order; a tuple for an object.
pub(super) fn values(args: &Args) -> Result<Value, FnError> {
    let values: Vec<Value> = mapping(args, 0)?.values().cloned().collect();
    Ok(if matches!(args.get(0), Value::Map(_)) { Value::List(values) } else { Value::Tuple(values) })
}

/// `lookup(map, key, default)`: the element, or the default when absent.
pub(super) fn lookup(args: &Args) -> Result<Value, FnError> {
    let (map, key) = (mapping(args, 0)?, args.string(1)?);
    if args.rest().len() > 1 {
        return Err(FnError::call("lookup takes at most one default value"));
    }
    match (map.get(&key), args.rest().first()) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) => Err(FnError::arg(1, format!("there is no element with the key \"{key}\" and no default"))),
    }
}

/// `contains(list, value)`.
pub(super) fn contains(args: &Args) -> Result<Value, FnError> {
    let wanted = args.get(1);
    Ok(Value::Bool(args.elements(0)?.iter().any(|e| e == wanted)))
}

/// `coalesce(vals...)`: the first argument that is neither null nor an
/// empty string. An unknown before it makes the result unknown, since that
/// unknown could turn out to be the answer.
pub(super) fn coalesce(args: &Args) -> Result<Value, FnError> {
    for v in &args.values {
        match v {
            Value::Null => {}
            Value::String(s) if s.is_empty() => {}
            Value::Unknown(_) => return Ok(Value::unknown()),
            v => return Ok(v.clone()),
        }
    }
    Err(FnError::call("no non-null, non-empty-string arguments"))
}

/// `range(limit)`, `range(start, limit)`, `range(start, limit, step)`.
pub(super) fn range(args: &Args) -> Result<Value, FnError> {
    let numbers = (0..args.values.len()).map(|i| args.number(i).map(Number::as_f64)).collect::<Result<Vec<_>, _>>()?;
    let (start, limit, step) = match numbers.as_slice() {
        [limit] => (0.0, *limit, 1.0),
        [start, limit] => (*start, *limit, if start <= limit { 1.0 } else { -1.0 }),
        [start, limit, step] => (*start, *limit, *step),
        _ => return Err(FnError::call("range takes one, two or three numbers")),
    };
    if step == 0.0 {
        return Err(FnError::arg(2, "the step must not be zero"));
    }
    let mut out = Vec::new();
    let mut x = start;
    while (step > 0.0 && x < limit) || (step < 0.0 && x > limit) {
        if out.len() == RANGE_LIMIT {
            return Err(FnError::call(format!("more than {RANGE_LIMIT} numbers would be produced")));
        }
        out.push(Value::Number(Number::from_f64(x)));
        x = start + step * out.len() as f64;
    }
    Ok(Value::List(out))
}

/// `element(list, index)`: wraps around, as in Terraform.
pub(super) fn element(args: &Args) -> Result<Value, FnError> {
    let (elements, i) = (args.elements(0)?, args.integer(1)?);
    if elements.is_empty() {
        return Err(FnError::arg(0, "cannot use element function with an empty list"));
    }
    if i < 0 {
        return Err(FnError::arg(1, "the index must not be negative"));
    }
    Ok(elements[i as usize % elements.len()].clone())
}

/// `slice(list, start, end)`: elements `start` up to but not including `end`.
pub(super) fn slice(args: &Args) -> Result<Value, FnError> {
    let (elements, start, end) = (args.elements(0)?, args.integer(1)?, args.integer(2)?);
    if start < 0 || start > end {
        return Err(FnError::arg(1, format!("the start index {start} must be between 0 and the end index {end}")));
    }
    if end as usize > elements.len() {
        return Err(FnError::arg(2, format!("the end index {end} is past the end of a list of {}", elements.len())));
    }
    let part = elements[start as usize..end as usize].to_vec();
    Ok(if matches!(args.get(0), Value::Tuple(_)) { Value::Tuple(part) } else { Value::List(part) })
}

/// `flatten(list)`: nested lists, tuples and sets become one sequence.
pub(super) fn flatten(args: &Args) -> Result<Value, FnError> {
    fn into(elements: &[Value], out: &mut Vec<Value>) {
        for e in elements {
            match e.elements() {
                Some(inner) => into(inner, out),
                None => out.push(e.clone()),
            }
        }
    }
    let mut out = Vec::new();
    into(args.elements(0)?, &mut out);
    Ok(if matches!(args.get(0), Value::List(_)) { Value::List(out) } else { Value::Tuple(out) })
}

/// `distinct(list)`: duplicates removed, first occurrences kept in order.
pub(super) fn distinct(args: &Args) -> Result<Value, FnError> {
    let mut out: Vec<Value> = Vec::new();
    for e in args.elements(0)? {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    Ok(if matches!(args.get(0), Value::Tuple(_)) { Value::Tuple(out) } else { Value::List(out) })
}

/// `compact(list)`: the strings that are neither null nor empty.
pub(super) fn compact(args: &Args) -> Result<Value, FnError> {
    let strings = strings_of(args, 0)?;
    Ok(Value::List(strings.into_iter().flatten().filter(|s| !s.is_empty()).map(Value::String).collect()))
}

/// `sort(list)`: strings in lexical order (numbers and bools as strings).
pub(super) fn sort(args: &Args) -> Result<Value, FnError> {
    let mut strings = Vec::new();
    for (i, s) in strings_of(args, 0)?.into_iter().enumerate() {
        strings.push(s.ok_or_else(|| FnError::arg(0, format!("element {i} is null")))?);
    }
    strings.sort();
    Ok(Value::List(strings.into_iter().map(Value::String).collect()))
}

/// `zipmap(keys, values)`: a map when the values are a list, else an object.
pub(super) fn zipmap(args: &Args) -> Result<Value, FnError> {
    let (keys, values) = (strings_of(args, 0)?, args.elements(1)?);
    if keys.len() != values.len() {
        return Err(FnError::call(format!("{} keys but {} values", keys.len(), values.len())));
    }
    // Collected, not inserted one by one: the map sorts its keys once.
    let m = keys
        .into_iter()
        .zip(values)
        .enumerate()
        .map(|(i, (k, v))| Ok((k.ok_or_else(|| FnError::arg(0, format!("key {i} is null")))?, v.clone())))
        .collect::<Result<Map, FnError>>()?;
    Ok(if matches!(args.get(1), Value::List(_)) { Value::Map(m) } else { Value::Object(m) })
}

/// The elements of argument `i` as strings; `None` for null elements.
fn strings_of(args: &Args, i: usize) -> Result<Vec<Option<String>>, FnError> {
    args.elements(i)?
        .iter()
        .enumerate()
        .map(|(j, e)| match crate::value::Type::String.convert(e) {
            Ok(Value::String(s)) => Ok(Some(s)),
            Ok(_) => Ok(None),
            Err(err) => Err(FnError::arg(i, format!("element {j}: {}", err.message))),
        })
        .collect()
}

/// `one(list)`: null for an empty collection, its element for one of
/// one; more is an error.
pub(super) fn one(args: &Args) -> Result<Value, FnError> {
    match args.elements(0)? {
        [] => Ok(Value::Null),
        [only] => Ok(only.clone()),
        many => Err(FnError::arg(
            0,
            format!("must be a list, set, or tuple value with either zero or one elements, got {}", many.len()),
        )),
    }
}

/// `sum(list)`: the total of a non-empty collection of numbers, whole
/// while every element and partial sum is.
pub(super) fn sum(args: &Args) -> Result<Value, FnError> {
    let elements = args.elements(0)?;
    if elements.is_empty() {
        return Err(FnError::arg(0, "cannot sum an empty list"));
    }
    let mut total = Number::Int(0);
    for (i, element) in elements.iter().enumerate() {
        let n = match crate::value::Type::Number.convert(element) {
            Ok(Value::Number(n)) => n,
            _ => return Err(FnError::arg(0, format!("element {i} is not a number: {}", element.kind_name()))),
        };
        total = match (total, n) {
            (Number::Int(a), Number::Int(b)) if a.checked_add(b).is_some() => Number::Int(a + b),
            (a, b) => Number::from_f64(a.as_f64() + b.as_f64()),
        };
    }
    Ok(Value::Number(total))
}

/// `index(list, value)`: the position of the first element equal to
/// `value`; an error when there is none.
pub(super) fn index(args: &Args) -> Result<Value, FnError> {
    let wanted = args.get(1);
    let found = args.elements(0)?.iter().position(|e| e == wanted);
    found.map(|i| Value::int(i as i64)).ok_or_else(|| FnError::call("item not found"))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::*;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    fn ints(values: &[i64]) -> Vec<Value> {
        values.iter().map(|i| Value::int(*i)).collect()
    }

    #[test]
    fn lengths() {
        assert_eq!(value("length([1, 2])"), Value::int(2));
        assert_eq!(value("length({a = 1})"), Value::int(1));
        assert_eq!(value("length(toset([1, 1, 2]))"), Value::int(2));
        assert_eq!(value("length(\"ab\")"), Value::int(2));
        assert!(error("length(1)").contains("a string or collection is required, got number"));
        assert!(error("length(null)").contains("must not be null"));
    }

    #[test]
    fn concat_and_merge() {
        assert_eq!(value("concat([1], [2, 3])"), Value::Tuple(ints(&[1, 2, 3])));
        assert_eq!(value("concat(tolist([1]), tolist([2]))"), Value::List(ints(&[1, 2])));
        assert!(error("concat([1], 2)").contains("Invalid value for \"seqs\" parameter of concat()"));
        assert_eq!(
            value("merge({a = 1, b = 2}, null, {b = 3})"),
            Value::object([("a", Value::int(1)), ("b", Value::int(3))])
        );
        assert_eq!(
            value("merge(tomap({a = 1}), tomap({b = 2}))"),
            Value::Map([("a".into(), Value::int(1)), ("b".into(), Value::int(2))].into_iter().collect())
        );
        assert!(error("merge({}, [1])").contains("a map or object is required, got tuple"));
    }

    #[test]
    fn keys_values_lookup() {
        assert_eq!(value("keys({b = 1, a = 2})"), Value::Tuple(vec![s("a"), s("b")]));
        assert_eq!(value("keys(tomap({b = 1, a = 2}))"), Value::List(vec![s("a"), s("b")]));
        assert_eq!(value("values({b = 1, a = 2})"), Value::Tuple(ints(&[2, 1])));
        assert_eq!(value("values(tomap({b = 1, a = 2}))"), Value::List(ints(&[2, 1])));
        assert_eq!(value("lookup({a = 1}, \"a\", 0)"), Value::int(1));
        assert_eq!(value("lookup({a = 1}, \"b\", 0)"), Value::int(0));
        assert!(error("lookup({a = 1}, \"b\")").contains("there is no element with the key \"b\" and no default"));
    }

    #[test]
    fn contains_and_coalesce() {
        assert_eq!(value("contains([\"a\", \"b\"], \"b\")"), Value::Bool(true));
        assert_eq!(value("contains([\"a\"], \"c\")"), Value::Bool(false));
        assert_eq!(value("coalesce(null, \"\", \"x\", \"y\")"), s("x"));
        assert_eq!(value("coalesce(null, 2)"), Value::int(2));
        assert!(error("coalesce(null, \"\")").contains("no non-null, non-empty-string arguments"));
        let mut ctx = super::super::super::EvalContext::new(".");
        ctx.variables.insert("u".into(), Value::unknown());
        let eval = |t: &str| super::super::super::testutil::eval_in(t, &ctx).unwrap();
        assert_eq!(eval("coalesce(null, var.u, \"x\")"), Value::unknown());
        assert_eq!(eval("coalesce(\"a\", var.u)"), s("a"));
    }

    #[test]
    fn ranges() {
        assert_eq!(value("range(3)"), Value::List(ints(&[0, 1, 2])));
        assert_eq!(value("range(1, 4)"), Value::List(ints(&[1, 2, 3])));
        assert_eq!(value("range(4, 1)"), Value::List(ints(&[4, 3, 2])));
        assert_eq!(value("range(0, 10, 4)"), Value::List(ints(&[0, 4, 8])));
        assert_eq!(value("range(0)"), Value::List(vec![]));
        assert_eq!(value("range(0, 1, 0.5)"), Value::List(vec![Value::int(0), Value::Number(Number::Float(0.5))]));
        assert!(error("range(0, 1, 0)").contains("the step must not be zero"));
        assert!(error("range(5000)").contains("more than 1024 numbers"));
    }

    #[test]
    fn sequences() {
        assert_eq!(value("element([\"a\", \"b\"], 3)"), s("b"));
        assert!(error("element([], 0)").contains("empty list"));
        assert_eq!(value("slice([1, 2, 3, 4], 1, 3)"), Value::Tuple(ints(&[2, 3])));
        assert!(error("slice([1], 0, 2)").contains("past the end"));
        assert_eq!(value("flatten([[1, [2]], [], 3])"), Value::Tuple(ints(&[1, 2, 3])));
        assert_eq!(value("distinct([1, 2, 1, 3, 2])"), Value::Tuple(ints(&[1, 2, 3])));
        assert_eq!(value("compact([\"a\", \"\", null, \"b\"])"), Value::List(vec![s("a"), s("b")]));
        assert_eq!(value("sort([\"b\", \"a\", \"c\"])"), Value::List(vec![s("a"), s("b"), s("c")]));
        assert_eq!(
            value("zipmap([\"a\", \"b\"], [1, 2])"),
            Value::object([("a", Value::int(1)), ("b", Value::int(2))])
        );
        assert!(error("zipmap([\"a\"], [])").contains("1 keys but 0 values"));
    }
}
