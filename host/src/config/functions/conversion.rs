//! Type conversion functions: `tostring`, `tonumber`, `tobool`, `tolist`,
//! `toset`, `tomap`. Null converts to null. Collections of mixed primitive
//! elements convert them all to strings, as Terraform does.

use crate::value::{Map, Type, Value};

use super::{Args, FnError};

pub(super) fn tostring(args: &Args) -> Result<Value, FnError> {
    primitive(args, &Type::String)
}

pub(super) fn tonumber(args: &Args) -> Result<Value, FnError> {
    primitive(args, &Type::Number)
}

pub(super) fn tobool(args: &Args) -> Result<Value, FnError> {
    primitive(args, &Type::Bool)
}

/// Converts a primitive (or null) argument to a primitive type.
fn primitive(args: &Args, ty: &Type) -> Result<Value, FnError> {
    let v = args.get(0);
    if matches!(v, Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) {
        ty.convert(v).map_err(|_| FnError::arg(0, format!("cannot convert {} to {ty}", v.to_hcl())))
    } else {
        Err(FnError::arg(0, format!("cannot convert {} to {ty}", v.kind_name())))
    }
}

pub(super) fn tolist(args: &Args) -> Result<Value, FnError> {
    Ok(match args.get(0) {
        Value::Null => Value::Null,
        v => Value::List(sequence(v)?),
    })
}

/// `toset`: unknown elements make the whole set unknown (the function is
/// not shallow), since two unknowns might turn out equal.
pub(super) fn toset(args: &Args) -> Result<Value, FnError> {
    Ok(match args.get(0) {
        Value::Null => Value::Null,
        v => Value::set(sequence(v)?),
    })
}

pub(super) fn tomap(args: &Args) -> Result<Value, FnError> {
    let entries = match args.get(0) {
        Value::Null => return Ok(Value::Null),
        Value::Map(m) | Value::Object(m) => m,
        other => {
            return Err(FnError::arg(0, format!("cannot convert {} to map", other.kind_name())));
        }
    };
    let values: Vec<Value> = entries.values().cloned().collect();
    let unified = unify(&values).map_err(|e| FnError::arg(0, e))?;
    Ok(Value::Map(entries.keys().cloned().zip(unified).collect::<Map>()))
}

/// The elements of a sequence argument, converted to one type.
fn sequence(v: &Value) -> Result<Vec<Value>, FnError> {
    let elements =
        v.elements().ok_or_else(|| FnError::arg(0, format!("cannot convert {} to a list or set", v.kind_name())))?;
    unify(elements).map_err(|e| FnError::arg(0, e))
}

/// The values converted to their common type.
fn unify(values: &[Value]) -> Result<Vec<Value>, String> {
    let mut common = Type::Dynamic;
    for v in values.iter().filter(|v| !v.is_null() && !v.is_unknown()) {
        let ty = Type::of(v);
        common = unify_types(&common, &ty)
            .ok_or_else(|| format!("all elements must have the same type, found {common} and {ty}"))?;
    }
    values.iter().map(|v| common.convert(v).map_err(|e| e.message)).collect()
}

/// The type both `a` and `b` convert to, if there is one: equal types,
/// anything with `any`, primitives as strings, and structures whose parts
/// unify.
fn unify_types(a: &Type, b: &Type) -> Option<Type> {
    let primitive = |t: &Type| matches!(t, Type::String | Type::Number | Type::Bool);
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Type::Dynamic, t) | (t, Type::Dynamic) => t.clone(),
        _ if primitive(a) && primitive(b) => Type::String,
        (Type::List(x), Type::List(y)) => Type::List(Box::new(unify_types(x, y)?)),
        (Type::Set(x), Type::Set(y)) => Type::Set(Box::new(unify_types(x, y)?)),
        (Type::Map(x), Type::Map(y)) => Type::Map(Box::new(unify_types(x, y)?)),
        (Type::Tuple(xs), Type::Tuple(ys)) if xs.len() == ys.len() => {
            Type::Tuple(xs.iter().zip(ys).map(|(x, y)| unify_types(x, y)).collect::<Option<_>>()?)
        }
        (Type::Object(xs), Type::Object(ys)) if xs.keys().eq(ys.keys()) => Type::Object(
            xs.iter()
                .zip(ys.values())
                .map(|((k, x), y)| Some((k.clone(), unify_types(x, y)?)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::*;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn primitives() {
        assert_eq!(value("tostring(1.5)"), s("1.5"));
        assert_eq!(value("tostring(true)"), s("true"));
        assert_eq!(value("tostring(null)"), Value::Null);
        assert_eq!(value("tonumber(\"42\")"), Value::int(42));
        assert_eq!(value("tobool(\"false\")"), Value::Bool(false));
        assert!(error("tonumber(\"abc\")").contains("cannot convert \"abc\" to number"));
        assert!(error("tostring([])").contains("cannot convert tuple to string"));
        assert!(error("tobool(1)").contains("cannot convert 1 to bool"));
    }

    #[test]
    fn collections() {
        assert_eq!(value("tolist([\"a\", 1, true])"), Value::List(vec![s("a"), s("1"), s("true")]));
        assert_eq!(value("tolist([])"), Value::List(vec![]));
        assert_eq!(value("toset([\"b\", \"a\", \"b\"])"), Value::set(vec![s("a"), s("b")]));
        assert_eq!(
            value("tomap({a = 1, b = \"x\"})"),
            Value::Map([("a".into(), s("1")), ("b".into(), s("x"))].into_iter().collect())
        );
        assert_eq!(
            value("tolist([{a = 1}, {a = null}])"),
            Value::List(vec![Value::object([("a", Value::int(1))]), Value::object([("a", Value::Null)])])
        );
        assert!(
            error("tolist([1, [2]])")
                .contains("all elements must have the same type, found number and tuple([number])")
        );
        assert!(error("tomap([1])").contains("cannot convert tuple to map"));
    }

    #[test]
    fn unknown_elements_survive_tolist_but_not_toset() {
        let mut ctx = super::super::super::EvalContext::new(".");
        ctx.variables.insert("u".into(), Value::unknown());
        let eval = |t: &str| super::super::super::testutil::eval_in(t, &ctx).unwrap();
        assert_eq!(eval("tolist([\"a\", var.u])"), Value::List(vec![s("a"), Value::unknown()]));
        assert_eq!(eval("toset([\"a\", var.u])"), Value::unknown());
    }
}
