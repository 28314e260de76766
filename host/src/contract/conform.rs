//! Type conformance of a provider's answer, reporting every mismatch (where
//! `Type::check` stops at the first).

use super::{RULE_TYPE, Redactor, Violation, key};
use crate::value::{Path, Type, Value};

/// Every place where `v` does not conform to `ty`. Null and unknown conform
/// to every type; an attribute absent from an object counts as null.
pub(super) fn check(r: &Redactor, ty: &Type, v: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    walk(r, ty, v, &Path::root(), &mut out);
    out
}

fn walk(r: &Redactor, ty: &Type, v: &Value, path: &Path, out: &mut Vec<Violation>) {
    let mut wrong = |path: &Path, message: String| out.push(Violation { path: path.clone(), message, rule: RULE_TYPE });
    match (ty, v) {
        (ty, Value::Unknown(Some(refined))) => {
            // A refinement about another kind of value (a prefix on a
            // number) is a promise no value of the type can keep.
            let fits = |kinds: &[fn(&Type) -> bool]| kinds.iter().any(|k| k(ty)) || matches!(ty, Type::Dynamic);
            let string = |t: &Type| matches!(t, Type::String);
            let number = |t: &Type| matches!(t, Type::Number);
            let collection = |t: &Type| matches!(t, Type::List(_) | Type::Set(_) | Type::Map(_));
            let misfit = if refined.prefix.is_some() && !fits(&[string]) {
                Some("a string prefix")
            } else if (refined.lower.is_some() || refined.upper.is_some()) && !fits(&[number]) {
                Some("number bounds")
            } else if (refined.min_length.is_some() || refined.max_length.is_some()) && !fits(&[collection]) {
                Some("length bounds")
            } else {
                None
            };
            if let Some(what) = misfit {
                wrong(path, format!("an unknown {} cannot have {what}", ty));
            }
        }
        (_, Value::Null | Value::Unknown(_)) | (Type::Dynamic, _) => {}
        (Type::Bool, Value::Bool(_)) | (Type::Number, Value::Number(_)) | (Type::String, Value::String(_)) => {}
        (Type::List(t), Value::List(items)) => {
            for (i, e) in items.iter().enumerate() {
                walk(r, t, e, &path.index(i), out);
            }
        }
        (Type::Set(t), Value::Set(items)) => {
            // A set holds each known element once; a provider that sends
            // duplicates on the wire has sent something that is not a set.
            let mut seen = std::collections::HashSet::new();
            for (i, e) in items.iter().enumerate() {
                if e.is_wholly_known() && !seen.insert(key(e)) {
                    let message = format!("the set holds the element {} more than once", r.show(&path.index(i), e));
                    wrong(path, message);
                }
            }
            for (i, e) in items.iter().enumerate() {
                walk(r, t, e, &path.index(i), out);
            }
        }
        (Type::Map(t), Value::Map(entries)) => {
            for (k, e) in entries {
                walk(r, t, e, &path.key(k), out);
            }
        }
        (Type::Tuple(ts), Value::Tuple(items)) if ts.len() == items.len() => {
            for (i, (t, e)) in ts.iter().zip(items).enumerate() {
                walk(r, t, e, &path.index(i), out);
            }
        }
        (Type::Tuple(ts), Value::Tuple(items)) => {
            wrong(path, format!("a tuple of {} elements is required, got {}", ts.len(), items.len()));
        }
        (Type::Object(attrs), Value::Object(m)) => {
            for name in m.keys().filter(|k| !attrs.contains_key(*k)) {
                wrong(&path.attr(name), "this attribute is not in the schema".to_string());
            }
            for (name, t) in attrs {
                walk(r, t, m.get(name).unwrap_or(&Value::Null), &path.attr(name), out);
            }
        }
        (ty, v) => {
            // The value itself only when it may be shown.
            let got = if r.is_sensitive(path) {
                article(v.kind_name())
            } else {
                format!("the {} {}", v.kind_name(), r.show(path, v))
            };
            wrong(path, format!("{} is required, got {got}", article(&ty.to_string())));
        }
    }
}

/// `a string`, `an object(…)`.
fn article(name: &str) -> String {
    let vowel = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if vowel { "an" } else { "a" })
}
