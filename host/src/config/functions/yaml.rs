//! `yamldecode` (on serde_norway, a maintained fork of serde_yaml) and
//! `yamlencode`, which writes Terraform's own style: every string and key
//! double-quoted, multi-line strings as literal blocks, sequences under a key
//! not indented. No YAML crate emits that style, so the writer is here.

use crate::value::{Number, Value};

use super::{Args, FnError};

/// `yamldecode(str)`: sequences become tuples and mappings objects, as
/// `jsondecode` does; aliases are resolved.
pub(super) fn yamldecode(args: &Args) -> Result<Value, FnError> {
    let text = args.string(0)?;
    let yaml: serde_norway::Value =
        serde_norway::from_str(&text).map_err(|e| FnError::arg(0, format!("invalid YAML: {e}")))?;
    from_yaml(&yaml).map_err(|e| FnError::arg(0, e))
}

fn from_yaml(yaml: &serde_norway::Value) -> Result<Value, String> {
    use serde_norway::Value as Y;
    Ok(match yaml {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => Value::Number(match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Number::Int(i),
            (None, Some(f)) if f.is_finite() => Number::from_f64(f),
            _ => return Err(format!("the number {n} cannot be represented")),
        }),
        Y::String(s) => Value::string(s.clone()),
        Y::Sequence(items) => Value::Tuple(items.iter().map(from_yaml).collect::<Result<_, _>>()?),
        Y::Mapping(entries) => Value::Object(
            entries.iter().map(|(k, v)| Ok((mapping_key(k)?, from_yaml(v)?))).collect::<Result<_, String>>()?,
        ),
        Y::Tagged(tagged) => return Err(format!("unsupported YAML tag {}", tagged.tag)),
    })
}

/// A mapping key as a string: scalars are written out, as Terraform does.
fn mapping_key(key: &serde_norway::Value) -> Result<String, String> {
    use serde_norway::Value as Y;
    match key {
        Y::String(s) => Ok(s.clone()),
        Y::Bool(b) => Ok(b.to_string()),
        Y::Number(n) => Ok(n.to_string()),
        Y::Null => Ok("null".to_string()),
        _ => Err("mapping keys must be strings, numbers or booleans".to_string()),
    }
}

/// `yamlencode(value)`: the value as a YAML document in Terraform's style.
pub(super) fn yamlencode(args: &Args) -> Result<Value, FnError> {
    let mut out = String::new();
    let value = args.get(0);
    if is_block(value) {
        block(value, 0, &mut out);
    } else {
        out.push_str(&scalar(value, 2));
        out.push('\n');
    }
    Ok(Value::String(out))
}

/// Whether the value is written as an indented block: a non-empty
/// collection.
fn is_block(value: &Value) -> bool {
    match value {
        Value::List(v) | Value::Tuple(v) | Value::Set(v) => !v.is_empty(),
        Value::Map(m) | Value::Object(m) => !m.is_empty(),
        _ => false,
    }
}

/// Writes a non-empty collection, every line indented by `indent`.
fn block(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Map(m) | Value::Object(m) => {
            for (k, v) in m {
                out.push_str(&format!("{pad}{}:", quote(k)));
                match v {
                    Value::Map(_) | Value::Object(_) if is_block(v) => {
                        out.push('\n');
                        block(v, indent + 2, out);
                    }
                    // A sequence under a key is not indented.
                    _ if is_block(v) => {
                        out.push('\n');
                        block(v, indent, out);
                    }
                    _ => out.push_str(&format!(" {}\n", scalar(v, indent + 2))),
                }
            }
        }
        Value::List(items) | Value::Tuple(items) | Value::Set(items) => {
            for item in items {
                out.push_str(&format!("{pad}- "));
                if is_block(item) {
                    // The item's first line follows the dash.
                    let mut nested = String::new();
                    block(item, indent + 2, &mut nested);
                    out.push_str(&nested[indent + 2..]);
                } else {
                    out.push_str(&format!("{}\n", scalar(item, indent + 2)));
                }
            }
        }
        _ => {}
    }
}

/// A value written on one line, or a literal block whose lines are
/// indented by `indent`.
fn scalar(value: &Value, indent: usize) -> String {
    match value {
        Value::Null | Value::Unknown(_) => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.contains('\n') && !s.chars().any(|c| c.is_control() && c != '\n') => {
            literal_block(s, indent)
        }
        Value::String(s) => quote(s),
        Value::List(_) | Value::Tuple(_) | Value::Set(_) => "[]".to_string(),
        Value::Map(_) | Value::Object(_) => "{}".to_string(),
    }
}

/// A multi-line string as `|` (one final newline), `|-` (none) or `|+`
/// (more), its lines indented.
fn literal_block(s: &str, indent: usize) -> String {
    let body = s.trim_end_matches('\n');
    let chomp = match s.len() - body.len() {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let pad = " ".repeat(indent);
    let mut out = format!("|{chomp}");
    for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
        }
        out.push_str(line);
    }
    out
}

/// A double-quoted YAML string.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use crate::value::{Number, Value};

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn yamlencode_agrees_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/yamlencode
        assert_eq!(value("yamlencode({\"a\":\"b\", \"c\":\"d\"})"), s("\"a\": \"b\"\n\"c\": \"d\"\n"));
        assert_eq!(
            value("yamlencode({\"foo\":[1, 2, 3], \"bar\": \"baz\"})"),
            s("\"bar\": \"baz\"\n\"foo\":\n- 1\n- 2\n- 3\n")
        );
        assert_eq!(
            value("yamlencode({\"foo\":[1, {\"a\":\"b\",\"c\":\"d\"}, 3], \"bar\": \"baz\"})"),
            s("\"bar\": \"baz\"\n\"foo\":\n- 1\n- \"a\": \"b\"\n  \"c\": \"d\"\n- 3\n")
        );
        // Checked with `terraform console` 1.11.4.
        assert_eq!(
            value(
                "yamlencode({a = null, b = true, c = 1.5, d = \"\", e = [], f = {}, g = \"multi\\nline\", h = \"yes\"})"
            ),
            s(
                "\"a\": null\n\"b\": true\n\"c\": 1.5\n\"d\": \"\"\n\"e\": []\n\"f\": {}\n\"g\": |-\n  multi\n  line\n\"h\": \"yes\"\n"
            )
        );
    }

    #[test]
    fn yamldecode_agrees_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/yamldecode
        assert_eq!(value("yamldecode(\"hello: world\")"), Value::object([("hello", s("world"))]));
        assert_eq!(value("yamldecode(\"true\")"), Value::Bool(true));
        let one_two_three = Value::Tuple(vec![Value::int(1), Value::int(2), Value::int(3)]);
        assert_eq!(
            value("yamldecode(\"{a: &foo [1, 2, 3], b: *foo}\")"),
            Value::object([("a", one_two_three.clone()), ("b", one_two_three)])
        );
        // Checked with `terraform console` 1.11.4.
        assert_eq!(
            value("yamldecode(\"- 1\\n- x\\n- null\\n- 1.5\")"),
            Value::Tuple(vec![Value::int(1), s("x"), Value::Null, Value::Number(Number::Float(1.5))])
        );
        assert!(error("yamldecode(\"a: [\")").contains("invalid YAML"));
    }
}
