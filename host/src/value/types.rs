//! Value types and conversion of values into them.

use std::collections::BTreeMap;
use std::fmt;

use super::{Map, Number, Path, PathStep, Value};

/// The type of a value, as schemas declare it.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// true or false.
    Bool,
    /// Any number.
    Number,
    /// A string.
    String,
    /// Any type; the value decides.
    Dynamic,
    /// A list of the element type.
    List(Box<Type>),
    /// A set of the element type.
    Set(Box<Type>),
    /// A map of the element type.
    Map(Box<Type>),
    /// An object with exactly these attributes.
    Object(BTreeMap<String, Type>),
    /// A tuple with exactly these element types.
    Tuple(Vec<Type>),
}

/// A value that does not fit a type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct TypeError {
    /// Where inside the value.
    pub path: Path,
    /// What is wrong, e.g. `a string is required, got a bool`.
    pub message: String,
}

impl Type {
    /// Converts `value` to this type the way Terraform converts configuration
    /// values: numbers and bools become strings where strings are wanted,
    /// numeric and boolean strings become numbers and bools, tuples become
    /// lists and sets, objects become maps. Null and unknown convert to
    /// anything. Errors name the path inside the value.
    pub fn convert(&self, value: &Value) -> Result<Value, TypeError> {
        self.convert_at(value, &Path::root())
    }

    fn convert_at(&self, value: &Value, path: &Path) -> Result<Value, TypeError> {
        let mismatch = || TypeError {
            path: path.clone(),
            message: format!("{} is required, got {}", self.article_name(), article(value.kind_name())),
        };
        if value.is_null() || value.is_unknown() {
            return Ok(value.clone());
        }
        Ok(match (self, value) {
            (Type::Dynamic, v) => v.clone(),
            (Type::Bool, Value::Bool(_)) | (Type::Number, Value::Number(_)) | (Type::String, Value::String(_)) => {
                value.clone()
            }
            (Type::String, Value::Number(n)) => Value::String(n.to_string()),
            (Type::String, Value::Bool(b)) => Value::String(b.to_string()),
            (Type::Number, Value::String(s)) => Value::Number(parse_number(s).ok_or_else(|| TypeError {
                path: path.clone(),
                message: format!("a number is required, got the string {}", super::quote(s)),
            })?),
            (Type::Bool, Value::String(s)) if s == "true" || s == "false" => Value::Bool(s == "true"),
            (Type::List(t), Value::List(v) | Value::Tuple(v) | Value::Set(v)) => Value::List(convert_all(t, v, path)?),
            (Type::Set(t), Value::List(v) | Value::Tuple(v) | Value::Set(v)) => Value::set(convert_all(t, v, path)?),
            (Type::Tuple(ts), Value::List(v) | Value::Tuple(v)) => {
                if ts.len() != v.len() {
                    return Err(TypeError {
                        path: path.clone(),
                        message: format!("a tuple of {} elements is required, got {}", ts.len(), v.len()),
                    });
                }
                let elements = ts
                    .iter()
                    .zip(v)
                    .enumerate()
                    .map(|(i, (t, e))| t.convert_at(e, &path.index(i)))
                    .collect::<Result<_, _>>()?;
                Value::Tuple(elements)
            }
            (Type::Map(t), Value::Map(m) | Value::Object(m)) => {
                let mut out = Map::with_capacity(m.len());
                for (k, e) in m {
                    out.insert(k.clone(), t.convert_at(e, &path.key(k))?);
                }
                Value::Map(out)
            }
            (Type::Object(attrs), Value::Object(m) | Value::Map(m)) => {
                if let Some(extra) = m.keys().find(|k| !attrs.contains_key(*k)) {
                    return Err(TypeError {
                        path: path.clone(),
                        message: format!("unexpected attribute {}", super::quote(extra)),
                    });
                }
                let mut out = Map::with_capacity(attrs.len());
                for (name, t) in attrs {
                    let e = m.get(name).unwrap_or(&Value::Null);
                    out.insert(name.clone(), t.convert_at(e, &path.attr(name))?);
                }
                Value::Object(out)
            }
            _ => return Err(mismatch()),
        })
    }

    /// Checks that `value` is exactly of this type, with no conversion:
    /// what the host demands of a provider's answers.
    pub fn check(&self, value: &Value) -> Result<(), TypeError> {
        self.check_at(value, &Path::root())
    }

    fn check_at(&self, value: &Value, path: &Path) -> Result<(), TypeError> {
        let mismatch = || TypeError {
            path: path.clone(),
            message: format!("{} is required, got {}", self.article_name(), article(value.kind_name())),
        };
        match (self, value) {
            (_, Value::Null | Value::Unknown(_)) | (Type::Dynamic, _) => Ok(()),
            (Type::Bool, Value::Bool(_)) | (Type::Number, Value::Number(_)) | (Type::String, Value::String(_)) => {
                Ok(())
            }
            (Type::List(t), Value::List(v)) | (Type::Set(t), Value::Set(v)) => {
                v.iter().enumerate().try_for_each(|(i, e)| t.check_at(e, &path.index(i)))
            }
            (Type::Map(t), Value::Map(m)) => m.iter().try_for_each(|(k, e)| t.check_at(e, &path.key(k))),
            (Type::Tuple(ts), Value::Tuple(v)) if ts.len() == v.len() => {
                ts.iter().zip(v).enumerate().try_for_each(|(i, (t, e))| t.check_at(e, &path.index(i)))
            }
            (Type::Object(attrs), Value::Object(m)) => {
                if let Some(extra) = m.keys().find(|k| !attrs.contains_key(*k)) {
                    return Err(TypeError {
                        path: path.attr(extra),
                        message: "this attribute is not in the schema".to_string(),
                    });
                }
                attrs.iter().try_for_each(|(name, t)| t.check_at(m.get(name).unwrap_or(&Value::Null), &path.attr(name)))
            }
            _ => Err(mismatch()),
        }
    }

    /// The natural type of a value (for dynamic attributes): elements of a
    /// list take the first known element's type.
    pub fn of(value: &Value) -> Type {
        let first = |v: &[Value]| Box::new(v.iter().find(|e| !e.is_null()).map(Type::of).unwrap_or(Type::Dynamic));
        match value {
            Value::Null | Value::Unknown(_) => Type::Dynamic,
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(v) => Type::List(first(v)),
            Value::Set(v) => Type::Set(first(v)),
            Value::Map(m) => {
                Type::Map(Box::new(m.values().find(|e| !e.is_null()).map(Type::of).unwrap_or(Type::Dynamic)))
            }
            Value::Object(m) => Type::Object(m.iter().map(|(k, v)| (k.clone(), Type::of(v))).collect()),
            Value::Tuple(v) => Type::Tuple(v.iter().map(Type::of).collect()),
        }
    }

    /// The element type of a collection type at one step of a path.
    pub fn step(&self, step: &PathStep) -> Option<&Type> {
        match (self, step) {
            (Type::Object(attrs), PathStep::Attr(a)) => attrs.get(a),
            (Type::Map(t), PathStep::Key(_)) | (Type::List(t) | Type::Set(t), PathStep::Index(_)) => Some(t),
            (Type::Tuple(ts), PathStep::Index(i)) => ts.get(*i as usize),
            (Type::Dynamic, _) => Some(&Type::Dynamic),
            _ => None,
        }
    }

    fn article_name(&self) -> String {
        article(&self.to_string())
    }
}

fn article(name: &str) -> String {
    let vowel = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if vowel { "an" } else { "a" })
}

fn convert_all(t: &Type, v: &[Value], path: &Path) -> Result<Vec<Value>, TypeError> {
    v.iter().enumerate().map(|(i, e)| t.convert_at(e, &path.index(i))).collect()
}

/// Parses a decimal number string the way HCL reads number literals.
pub fn parse_number(s: &str) -> Option<Number> {
    let s = s.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Some(Number::Int(i));
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite()).map(Number::from_f64)
}

impl fmt::Display for Type {
    /// Type constraints as written in Terraform: `list(string)`, `object({a=number})`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => f.write_str("bool"),
            Type::Number => f.write_str("number"),
            Type::String => f.write_str("string"),
            Type::Dynamic => f.write_str("any"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Set(t) => write!(f, "set({t})"),
            Type::Map(t) => write!(f, "map({t})"),
            Type::Object(attrs) => {
                f.write_str("object({")?;
                for (i, (k, t)) in attrs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}={t}")?;
                }
                f.write_str("})")
            }
            Type::Tuple(ts) => {
                f.write_str("tuple([")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("])")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_like_terraform() {
        assert_eq!(Type::String.convert(&Value::int(4)).unwrap(), Value::string("4"));
        assert_eq!(Type::Number.convert(&Value::string("4")).unwrap(), Value::int(4));
        let tuple = Value::Tuple(vec![Value::string("a"), Value::int(1)]);
        assert_eq!(
            Type::List(Box::new(Type::String)).convert(&tuple).unwrap(),
            Value::List(vec![Value::string("a"), Value::string("1")])
        );
        let obj = Value::object([("k", Value::Bool(true))]);
        assert_eq!(
            Type::Map(Box::new(Type::String)).convert(&obj).unwrap(),
            Value::Map([("k".to_string(), Value::string("true"))].into_iter().collect())
        );
    }

    #[test]
    fn conversion_errors_name_the_path() {
        let t = Type::Map(Box::new(Type::Number));
        let err = t.convert(&Value::object([("k", Value::string("x"))])).unwrap_err();
        assert_eq!(err.path.to_string(), r#"["k"]"#);
        assert!(err.message.contains("a number is required"), "{}", err.message);
        let err = Type::Bool.convert(&Value::List(vec![])).unwrap_err();
        assert_eq!(err.message, "a bool is required, got a list");
    }

    #[test]
    fn check_is_strict() {
        assert!(Type::String.check(&Value::int(1)).is_err());
        assert!(Type::String.check(&Value::unknown()).is_ok());
        let obj = Type::Object([("a".to_string(), Type::Number)].into());
        let err = obj.check(&Value::object([("b", Value::int(1))])).unwrap_err();
        assert_eq!(err.path.to_string(), ".b");
    }
}
