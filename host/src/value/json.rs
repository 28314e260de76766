//! Values as JSON: how state files record attributes (as Terraform does,
//! plain JSON read back with the schema's types) and how `jsonencode` writes.
//!
//! Attributes of dynamic type cannot be read back from plain JSON alone (is
//! `[1]` a list or a tuple?), so where the type is [`Type::Dynamic`] the value
//! is written as `{"value": …, "type": …}` with the type in Terraform's JSON
//! type syntax (`"string"`, `["list","number"]`, `["object",{"a":"bool"}]`).

use serde::ser::SerializeMap;
use serde_json::{Map, Value as Json, json};

use super::{Bound, Number, Path, Refinements, Type, TypeError, Value};

/// Refinements as a JSON object with only the keys that say something:
/// `not_null` (true), `prefix` (a string), `lower` / `upper` (a number, or
/// `{"value": n, "inclusive": false}` for an exclusive bound),
/// `min_length` / `max_length` (whole numbers).
pub fn refinements_to_json(r: &Refinements) -> Json {
    let mut o = Map::new();
    if r.not_null {
        o.insert("not_null".into(), Json::Bool(true));
    }
    if let Some(p) = &r.prefix {
        o.insert("prefix".into(), Json::String(p.clone()));
    }
    let bound = |b: &Bound| {
        let n = to_json(&Value::Number(b.value));
        if b.inclusive { n } else { json!({"value": n, "inclusive": false}) }
    };
    if let Some(b) = &r.lower {
        o.insert("lower".into(), bound(b));
    }
    if let Some(b) = &r.upper {
        o.insert("upper".into(), bound(b));
    }
    if let Some(n) = r.min_length {
        o.insert("min_length".into(), Json::from(n));
    }
    if let Some(n) = r.max_length {
        o.insert("max_length".into(), Json::from(n));
    }
    Json::Object(o)
}

/// Reads what [`refinements_to_json`] writes; `true` is no refinement.
/// Unknown keys are an error, so a typo cannot drop a promise.
pub fn refinements_from_json(j: &Json) -> Result<Refinements, String> {
    let o = match j {
        Json::Bool(true) => return Ok(Refinements::default()),
        Json::Object(o) => o,
        other => return Err(format!("refinements are `true` or an object, not {other}")),
    };
    let mut r = Refinements::default();
    let bound = |j: &Json| -> Result<Bound, String> {
        let (n, inclusive) = match j {
            Json::Object(b) => (b.get("value").unwrap_or(&Json::Null), b.get("inclusive") != Some(&Json::Bool(false))),
            n => (n, true),
        };
        match n {
            Json::Number(n) => Ok(Bound { value: json_number(n), inclusive }),
            other => Err(format!("a bound is a number, not {other}")),
        }
    };
    let length = |j: &Json| j.as_u64().ok_or_else(|| format!("a length bound is a whole number, not {j}"));
    for (k, v) in o {
        match k.as_str() {
            "not_null" => r.not_null = v.as_bool().ok_or("`not_null` is true or false")?,
            "prefix" => r.prefix = Some(v.as_str().ok_or("`prefix` is a string")?.to_string()),
            "lower" => r.lower = Some(bound(v)?),
            "upper" => r.upper = Some(bound(v)?),
            "min_length" => r.min_length = Some(length(v)?),
            "max_length" => r.max_length = Some(length(v)?),
            other => return Err(format!("unknown refinement `{other}`")),
        }
    }
    Ok(r)
}

/// The value as plain JSON. Sets and tuples become arrays, maps and objects
/// become JSON objects. An unknown (which never reaches a state) becomes the
/// object `{"$unknown": true}`, or `{"$unknown": {…}}` with its refinements
/// (see [`refinements_to_json`]).
pub fn to_json(v: &Value) -> Json {
    serde_json::to_value(PlainJson(v)).expect("a value serializes: its keys are strings")
}

/// [`to_json`] as compact text, written without building the tree: what
/// idempotency keys hash and what orders a set's elements.
pub fn to_json_text(v: &Value) -> String {
    serde_json::to_string(&PlainJson(v)).expect("a value serializes: its keys are strings")
}

/// The value as JSON for a state file, following `ty` so that dynamic parts
/// carry their type.
pub fn to_json_typed(v: &Value, ty: &Type) -> Json {
    serde_json::to_value(TypedJson(v, ty)).expect("a value serializes: its keys are strings")
}

/// Serializes a value as [`to_json`] describes it; [`to_json`] collects
/// this into a tree, and text is written from it without one.
struct PlainJson<'a>(&'a Value);

impl serde::Serialize for PlainJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Null => s.serialize_unit(),
            Value::Unknown(r) => {
                let mut m = s.serialize_map(Some(1))?;
                match r {
                    None => m.serialize_entry("$unknown", &true)?,
                    Some(r) => m.serialize_entry("$unknown", &refinements_to_json(r))?,
                }
                m.end()
            }
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(Number::Int(i)) => s.serialize_i64(*i),
            // A number JSON cannot hold is written as null.
            Value::Number(Number::Float(f)) if f.is_finite() => s.serialize_f64(*f),
            Value::Number(Number::Float(_)) => s.serialize_unit(),
            Value::String(x) => s.serialize_str(x),
            Value::List(e) | Value::Set(e) | Value::Tuple(e) => s.collect_seq(e.iter().map(PlainJson)),
            Value::Map(m) | Value::Object(m) => s.collect_map(m.iter().map(|(k, v)| (k, PlainJson(v)))),
        }
    }
}

/// Serializes a value as [`to_json_typed`] describes it: a state records
/// every new object's attributes as this text.
pub struct TypedJson<'a>(pub &'a Value, pub &'a Type);

impl serde::Serialize for TypedJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.1, self.0) {
            (_, Value::Null) => s.serialize_unit(),
            // Keys in the order a JSON object sorts them.
            (Type::Dynamic, v) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", &type_to_json(&Type::of(v)))?;
                m.serialize_entry("value", &PlainJson(v))?;
                m.end()
            }
            (Type::List(t) | Type::Set(t), Value::List(e) | Value::Set(e)) => {
                s.collect_seq(e.iter().map(|x| TypedJson(x, t)))
            }
            (Type::Tuple(ts), Value::Tuple(e)) => s.collect_seq(e.iter().zip(ts).map(|(x, t)| TypedJson(x, t))),
            (Type::Map(t), Value::Map(m)) => s.collect_map(m.iter().map(|(k, x)| (k, TypedJson(x, t)))),
            (Type::Object(attrs), Value::Object(m)) => s.collect_map(m.iter().map(|(k, x)| {
                let either = match attrs.get(k) {
                    Some(t) => Either::Typed(TypedJson(x, t)),
                    None => Either::Plain(PlainJson(x)),
                };
                (k, either)
            })),
            (_, v) => PlainJson(v).serialize(s),
        }
    }
}

/// An attribute with or without a type in the schema.
enum Either<'a> {
    Typed(TypedJson<'a>),
    Plain(PlainJson<'a>),
}

impl serde::Serialize for Either<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Either::Typed(t) => t.serialize(s),
            Either::Plain(p) => p.serialize(s),
        }
    }
}

/// Reads JSON written by [`to_json_typed`] (or plain JSON) as a value of type `ty`.
pub fn from_json(j: &Json, ty: &Type) -> Result<Value, TypeError> {
    from_json_at(j, ty, &Path::root())
}

fn from_json_at(j: &Json, ty: &Type, path: &Path) -> Result<Value, TypeError> {
    let err = |message: String| TypeError { path: path.clone(), message };
    Ok(match (ty, j) {
        (_, Json::Null) => Value::Null,
        (Type::Dynamic, Json::Object(o)) if o.contains_key("type") && o.contains_key("value") => {
            let inner = type_from_json(&o["type"]).map_err(err)?;
            from_json_at(&o["value"], &inner, path)?
        }
        (Type::Dynamic, j) => from_json_untyped(j),
        (Type::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Type::Number, Json::Number(n)) => Value::Number(json_number(n)),
        (Type::String, Json::String(s)) => Value::String(s.clone()),
        (Type::List(t), Json::Array(a)) => Value::List(from_json_all(a, t, path)?),
        (Type::Set(t), Json::Array(a)) => Value::set(from_json_all(a, t, path)?),
        (Type::Tuple(ts), Json::Array(a)) if ts.len() == a.len() => Value::Tuple(
            a.iter()
                .zip(ts)
                .enumerate()
                .map(|(i, (x, t))| from_json_at(x, t, &path.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        (Type::Map(t), Json::Object(o)) => {
            // Sized up front, here and below: a map collected or grown from
            // empty has room for four entries, and a state holds a great
            // many maps of one or two.
            let mut out = super::Map::with_capacity(o.len());
            for (k, x) in o {
                out.insert(k.clone(), from_json_at(x, t, &path.key(k))?);
            }
            Value::Map(out)
        }
        (Type::Object(attrs), Json::Object(o)) => {
            let mut out = super::Map::with_capacity(attrs.len());
            for (name, t) in attrs {
                let x = o.get(name).unwrap_or(&Json::Null);
                out.insert(name.clone(), from_json_at(x, t, &path.attr(name))?);
            }
            Value::Object(out)
        }
        (ty, j) => return Err(err(format!("expected {ty}, found JSON {j}"))),
    })
}

fn from_json_all(a: &[Json], t: &Type, path: &Path) -> Result<Vec<Value>, TypeError> {
    a.iter().enumerate().map(|(i, x)| from_json_at(x, t, &path.index(i))).collect()
}

/// Reads JSON with no type to go by: arrays become tuples and JSON objects
/// become objects, as `jsondecode` does.
pub fn from_json_untyped(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Number(json_number(n)),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(a) => Value::Tuple(a.iter().map(from_json_untyped).collect()),
        Json::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), from_json_untyped(v))).collect()),
    }
}

fn json_number(n: &serde_json::Number) -> Number {
    match n.as_i64() {
        Some(i) => Number::Int(i),
        None => Number::from_f64(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// A type in Terraform's JSON type syntax.
pub fn type_to_json(t: &Type) -> Json {
    match t {
        Type::Bool => json!("bool"),
        Type::Number => json!("number"),
        Type::String => json!("string"),
        Type::Dynamic => json!("dynamic"),
        Type::List(e) => json!(["list", type_to_json(e)]),
        Type::Set(e) => json!(["set", type_to_json(e)]),
        Type::Map(e) => json!(["map", type_to_json(e)]),
        Type::Object(a) => {
            let attrs: Map<String, Json> = a.iter().map(|(k, t)| (k.clone(), type_to_json(t))).collect();
            json!(["object", attrs])
        }
        Type::Tuple(ts) => json!(["tuple", ts.iter().map(type_to_json).collect::<Vec<_>>()]),
    }
}

/// Reads a type written by [`type_to_json`].
pub fn type_from_json(j: &Json) -> Result<Type, String> {
    let bad = || format!("not a type: {j}");
    match j {
        Json::String(s) => match s.as_str() {
            "bool" => Ok(Type::Bool),
            "number" => Ok(Type::Number),
            "string" => Ok(Type::String),
            "dynamic" => Ok(Type::Dynamic),
            _ => Err(bad()),
        },
        Json::Array(a) if a.len() == 2 => {
            let inner = || type_from_json(&a[1]).map(Box::new);
            match a[0].as_str().ok_or_else(bad)? {
                "list" => Ok(Type::List(inner()?)),
                "set" => Ok(Type::Set(inner()?)),
                "map" => Ok(Type::Map(inner()?)),
                "object" => {
                    let o = a[1].as_object().ok_or_else(bad)?;
                    Ok(Type::Object(
                        o.iter().map(|(k, t)| Ok((k.clone(), type_from_json(t)?))).collect::<Result<_, String>>()?,
                    ))
                }
                "tuple" => {
                    let ts = a[1].as_array().ok_or_else(bad)?;
                    Ok(Type::Tuple(ts.iter().map(type_from_json).collect::<Result<_, _>>()?))
                }
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &Value, t: &Type) -> Value {
        let text = serde_json::to_string(&to_json_typed(v, t)).unwrap();
        from_json(&serde_json::from_str(&text).unwrap(), t).unwrap()
    }

    #[test]
    fn the_serializers_write_what_the_trees_hold() {
        let t = Type::Object(
            [
                ("n".to_string(), Type::Number),
                ("d".to_string(), Type::Dynamic),
                ("l".to_string(), Type::List(Box::new(Type::Map(Box::new(Type::String))))),
                ("t".to_string(), Type::Tuple(vec![Type::Bool, Type::Number])),
            ]
            .into(),
        );
        let v = Value::object([
            ("n", Value::Number(Number::Float(0.1))),
            ("d", Value::set(vec![Value::int(2), Value::string("x")])),
            (
                "l",
                Value::List(vec![
                    Value::Map([("k".to_string(), Value::string("\"q\"\n"))].into_iter().collect()),
                    Value::Null,
                ]),
            ),
            ("t", Value::Tuple(vec![Value::Bool(true), Value::Number(Number::Float(f64::NAN))])),
            ("extra", Value::object([("u", Value::Unknown(None)), ("i", Value::int(i64::MIN))])),
        ]);
        // The bytes themselves: idempotency keys and state files depend on
        // them. Keys sorted, NaN and unknowns as before, dynamic parts
        // with their type first.
        let plain = r#"{"d":["x",2],"extra":{"i":-9223372036854775808,"u":{"$unknown":true}},"l":[{"k":"\"q\"\n"},null],"n":0.1,"t":[true,null]}"#;
        assert_eq!(to_json_text(&v), plain);
        let typed = plain.replacen(r#""d":["x",2]"#, r#""d":{"type":["set","string"],"value":["x",2]}"#, 1);
        assert_eq!(serde_json::to_string(&TypedJson(&v, &t)).unwrap(), typed);
        assert_eq!(serde_json::to_string(&PlainJson(&v)).unwrap(), to_json(&v).to_string());
        assert_eq!(serde_json::to_string(&TypedJson(&v, &t)).unwrap(), to_json_typed(&v, &t).to_string());
        assert_eq!(
            serde_json::to_string(&TypedJson(&v, &Type::Dynamic)).unwrap(),
            to_json_typed(&v, &Type::Dynamic).to_string()
        );
    }

    #[test]
    fn numbers_round_trip_exactly() {
        for v in [
            Value::int(i64::MAX),
            Value::int(i64::MIN),
            Value::Number(Number::Float(0.1)),
            Value::Number(Number::Float(1e300)),
        ] {
            assert_eq!(round_trip(&v, &Type::Number), v);
        }
    }

    #[test]
    fn dynamic_values_keep_their_type() {
        let list = Value::List(vec![Value::string("a")]);
        let t = Type::Object([("input".to_string(), Type::Dynamic)].into());
        let v = Value::object([("input", list)]);
        assert_eq!(round_trip(&v, &t), v);
        let set = Value::object([("input", Value::set(vec![Value::int(2), Value::int(1)]))]);
        assert_eq!(round_trip(&set, &t), set);
    }

    #[test]
    fn typed_reading_rejects_mismatches() {
        let err = from_json(&json!({"a": "x"}), &Type::Object([("a".to_string(), Type::Number)].into())).unwrap_err();
        assert_eq!(err.path.to_string(), ".a");
    }
}
