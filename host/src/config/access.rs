//! Attribute access and indexing on values: the steps of a traversal
//! (`value.name`, `value[key]`), with Terraform's messages when a step
//! leads nowhere. Through an unknown value, every step gives unknown.

use crate::diag::Diagnostic;
use crate::value::{Type, Value};

use super::suggest;

/// `value.name`.
pub(crate) fn get_attr(value: Value, name: &str) -> Result<Value, Diagnostic> {
    match value {
        Value::Unknown(_) => Ok(Value::unknown()),
        Value::Null => Err(Diagnostic::error("Attempt to get attribute from null value")
            .with_detail(format!("This value is null, so it does not have an attribute named \"{name}\"."))),
        Value::Object(mut m) => m.remove(name).ok_or_else(|| {
            let hint = suggest::did_you_mean(name, m.keys().map(String::as_str));
            Diagnostic::error("Unsupported attribute")
                .with_detail(format!("This object does not have an attribute named \"{name}\".{hint}"))
        }),
        Value::Map(mut m) => m.remove(name).ok_or_else(|| {
            Diagnostic::error("Missing map element")
                .with_detail(format!("This map does not have an element with the key \"{name}\"."))
        }),
        Value::List(_) | Value::Tuple(_) | Value::Set(_) => Err(Diagnostic::error("Unsupported attribute")
            .with_detail(format!(
                "Can't access attribute \"{name}\" on a {}. To read it from every element, use a splat: [*].{name}",
                value.kind_name()
            ))),
        other => Err(Diagnostic::error("Unsupported attribute").with_detail(format!(
            "Can't access attribute \"{name}\" on a primitive-typed value ({}).",
            other.kind_name()
        ))),
    }
}

/// `value.name` when the attribute or element is there: the part of
/// `value` itself, without copying it. `None` when [`get_attr`] would give
/// anything else (an unknown, an error).
pub(crate) fn get_attr_ref<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    match value {
        Value::Object(m) | Value::Map(m) => m.get(name),
        _ => None,
    }
}

/// `value[key]` when the element is there: the part of `value` itself,
/// without copying it. `None` when [`index`] would give anything else (an
/// unknown, an error).
pub(crate) fn index_ref<'v>(value: &'v Value, key: &Value) -> Option<&'v Value> {
    match (value, key) {
        (Value::List(v) | Value::Tuple(v), Value::Number(n)) => v.get(usize::try_from(n.as_i64()?).ok()?),
        (Value::Map(m) | Value::Object(m), Value::String(k)) => m.get(k),
        _ => None,
    }
}

/// `value[key]`.
pub(crate) fn index(value: Value, key: &Value) -> Result<Value, Diagnostic> {
    let invalid = |detail: String| Diagnostic::error("Invalid index").with_detail(detail);
    if value.is_unknown() || key.is_unknown() {
        return Ok(Value::unknown());
    }
    if key.is_null() {
        return Err(invalid("Can't use a null value as an indexing key.".into()));
    }
    match value {
        Value::Null => Err(Diagnostic::error("Attempt to index null value")
            .with_detail("This value is null, so it does not have any indices.")),
        Value::List(mut v) | Value::Tuple(mut v) => {
            let len = v.len();
            let position = match Type::Number.convert(key) {
                Ok(Value::Number(n)) => n.as_i64().filter(|i| (0..len as i64).contains(i)),
                _ => return Err(invalid(format!("A list or tuple is indexed by a number, got {}.", key.kind_name()))),
            };
            let i = position.ok_or_else(|| {
                invalid(format!("The given key does not identify an element in this collection value: it has {len} elements, and {key} is not an index of one."))
            })?;
            Ok(v.swap_remove(i as usize))
        }
        Value::Map(mut m) | Value::Object(mut m) => {
            let Ok(Value::String(k)) = Type::String.convert(key) else {
                return Err(invalid(format!("A map or object is indexed by a string, got {}.", key.kind_name())));
            };
            m.remove(&k).ok_or_else(|| {
                invalid(format!(
                    "The given key does not identify an element in this collection value: there is no \"{k}\"."
                ))
            })
        }
        Value::Set(_) => Err(invalid(
            "Elements of a set are identified only by their value and don't have any separate index or key to select \
             with, so it's only possible to perform operations across all elements of the set."
                .into(),
        )),
        other => Err(invalid(format!("A {} value does not have any indices.", other.kind_name()))),
    }
}
