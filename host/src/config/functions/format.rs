//! `format(spec, args...)`: Terraform's printf-style formatting.
//!
//! Verbs: `%v` (any value; collections as JSON), `%s`, `%q` (a JSON-quoted
//! string), `%d`, `%b`, `%o`, `%x`, `%X`, `%f`, `%e`, `%E`, `%g`, `%t` and
//! `%%`. Flags `-` (left-justify), `+`, ` `, `0`; a width; a precision
//! (`%.2f`, or the number of characters for `%s`); and an explicit argument
//! index (`%[2]s`).

use std::iter::Peekable;
use std::str::Chars;

use crate::value::{Number, Value, to_json_text};

use super::{Args, FnError};

pub(super) fn format(args: &Args) -> Result<Value, FnError> {
    let spec = args.string(0)?;
    render(&spec, args.rest()).map(Value::String).map_err(FnError::call)
}

/// Formats `values` according to `spec`.
fn render(spec: &str, values: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = spec.chars().peekable();
    let mut next = 0;
    let mut used = vec![false; values.len()];
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.next_if_eq(&'%').is_some() {
            out.push('%');
            continue;
        }
        let verb = Verb::parse(&mut chars)?;
        let i = verb.index.unwrap_or(next);
        let value = values.get(i).ok_or_else(|| {
            format!(
                "not enough arguments for \"%{}\": it needs argument {}, but only {} were given",
                verb.letter,
                i + 1,
                values.len()
            )
        })?;
        used[i] = true;
        next = i + 1;
        let text = verb
            .apply(value)
            .map_err(|e| format!("unsupported value for \"%{}\" at argument {}: {e}", verb.letter, i + 1))?;
        out.push_str(&text);
    }
    if let Some(unused) = used.iter().position(|u| !u) {
        return Err(format!("too many arguments: argument {} is not used by the format string", unused + 1));
    }
    Ok(out)
}

/// One `%…` directive.
#[derive(Default)]
struct Verb {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
    /// 0-based, from `%[n]`.
    index: Option<usize>,
    letter: char,
}

impl Verb {
    /// Parses what follows a `%`.
    fn parse(chars: &mut Peekable<Chars>) -> Result<Verb, String> {
        let mut verb = Verb::default();
        while let Some(flag) = chars.next_if(|c| "-+ 0#".contains(*c)) {
            match flag {
                '-' => verb.left = true,
                '+' => verb.plus = true,
                ' ' => verb.space = true,
                '0' => verb.zero = true,
                _ => {}
            }
        }
        if chars.next_if_eq(&'[').is_some() {
            let n = digits(chars).filter(|n| *n > 0).ok_or("an argument index must be a number from 1")?;
            chars.next_if_eq(&']').ok_or("an argument index must end with ]")?;
            verb.index = Some(n - 1);
        }
        verb.width = digits(chars);
        if chars.next_if_eq(&'.').is_some() {
            verb.precision = Some(digits(chars).unwrap_or(0));
        }
        verb.letter = chars.next().ok_or("the format string ends in the middle of a verb")?;
        Ok(verb)
    }

    /// The formatted, padded text for one value.
    fn apply(&self, value: &Value) -> Result<String, String> {
        if value.is_null() {
            return Err("null value cannot be formatted".into());
        }
        let numeric = "dboxXfeEgG".contains(self.letter);
        let body = match self.letter {
            'v' => match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => self.signed(n.to_string(), n.as_f64()),
                Value::Bool(b) => b.to_string(),
                other => to_json_text(other),
            },
            's' => {
                let s = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(format!("a string is required, got {}", other.kind_name()));
                    }
                };
                match self.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'q' => match value {
                Value::String(s) => serde_json::Value::String(s.clone()).to_string(),
                other => return Err(format!("a string is required, got {}", other.kind_name())),
            },
            't' => match value {
                Value::Bool(b) => b.to_string(),
                other => return Err(format!("a bool is required, got {}", other.kind_name())),
            },
            'd' | 'b' | 'o' | 'x' | 'X' => {
                if let (Value::String(s), 'x' | 'X') = (value, self.letter) {
                    let hex = hex::encode(s);
                    if self.letter == 'X' { hex.to_uppercase() } else { hex }
                } else {
                    let i = number(value)?.as_i64().ok_or("a whole number is required")?;
                    let magnitude = match self.letter {
                        'd' => i.unsigned_abs().to_string(),
                        'b' => format!("{:b}", i.unsigned_abs()),
                        'o' => format!("{:o}", i.unsigned_abs()),
                        'x' => format!("{:x}", i.unsigned_abs()),
                        _ => format!("{:X}", i.unsigned_abs()),
                    };
                    self.signed(if i < 0 { format!("-{magnitude}") } else { magnitude }, i as f64)
                }
            }
            'f' | 'e' | 'E' | 'g' | 'G' => {
                let x = number(value)?.as_f64();
                let text = match self.letter {
                    'f' => format!("{:.*}", self.precision.unwrap_or(6), x),
                    'e' | 'E' => {
                        let text = go_exponent(&format!("{:.*e}", self.precision.unwrap_or(6), x));
                        if self.letter == 'E' { text.to_uppercase() } else { text }
                    }
                    _ => Number::from_f64(x).to_string(),
                };
                self.signed(text, x)
            }
            other => return Err(format!("unrecognized format verb %{other}")),
        };
        Ok(self.pad(body, numeric))
    }

    /// Adds the `+` or ` ` sign flag to a non-negative number's text.
    fn signed(&self, text: String, x: f64) -> String {
        match (x >= 0.0, self.plus, self.space) {
            (true, true, _) => format!("+{text}"),
            (true, false, true) => format!(" {text}"),
            _ => text,
        }
    }

    /// Pads to the width: spaces on the left (or right with `-`), or zeros
    /// after the sign for numbers with `0`.
    fn pad(&self, body: String, numeric: bool) -> String {
        let len = body.chars().count();
        let Some(width) = self.width.filter(|w| *w > len) else {
            return body;
        };
        let fill = width - len;
        if self.left {
            format!("{body}{}", " ".repeat(fill))
        } else if self.zero && numeric {
            let sign_len = usize::from(body.starts_with(['-', '+', ' ']));
            format!("{}{}{}", &body[..sign_len], "0".repeat(fill), &body[sign_len..])
        } else {
            format!("{}{body}", " ".repeat(fill))
        }
    }
}

/// The number in a value (numeric strings convert).
fn number(value: &Value) -> Result<Number, String> {
    match crate::value::Type::Number.convert(value) {
        Ok(Value::Number(n)) => Ok(n),
        _ => Err(format!("a number is required, got {}", value.kind_name())),
    }
}

/// Rust writes `1.5e3`; Go (and Terraform) write `1.5e+03`.
fn go_exponent(rust: &str) -> String {
    match rust.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = exponent.strip_prefix('-').map_or(("+", exponent), |d| ("-", d));
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => rust.to_string(),
    }
}

/// A run of decimal digits, if there is one.
fn digits(chars: &mut Peekable<Chars>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.next_if(char::is_ascii_digit) {
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize - '0' as usize));
    }
    n
}

/// `formatlist(spec, values...)`: `format` once per element of the list
/// arguments (all of one length); other arguments repeat in every call.
pub(super) fn formatlist(args: &Args) -> Result<Value, FnError> {
    let spec = args.string(0)?;
    let rest = args.rest();
    let mut length = None;
    for (i, v) in rest.iter().enumerate() {
        if let Some(elements) = v.elements() {
            match length {
                Some(n) if n != elements.len() => {
                    return Err(FnError::arg(
                        i + 1,
                        format!("argument {} has length {}, which does not match {n}", i + 1, elements.len()),
                    ));
                }
                _ => length = Some(elements.len()),
            }
        }
    }
    let lines = (0..length.unwrap_or(1))
        .map(|n| {
            let values: Vec<Value> =
                rest.iter().map(|v| v.elements().map_or_else(|| v.clone(), |e| e[n].clone())).collect();
            render(&spec, &values).map(Value::String).map_err(FnError::call)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::List(lines))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::*;

    fn f(text: &str) -> String {
        match value(text) {
            Value::String(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn verbs() {
        assert_eq!(f(r#"format("Hello, %s!", "Ander")"#), "Hello, Ander!");
        assert_eq!(f(r#"format("%d items, %v, %v", 3, true, [1, "a"])"#), "3 items, true, [1,\"a\"]");
        assert_eq!(f(r#"format("%q", "a\"b")"#), "\"a\\\"b\"");
        assert_eq!(f(r#"format("%.2f|%f|%e", 3.14159, 1, 1500)"#), "3.14|1.000000|1.500000e+03");
        assert_eq!(f(r#"format("%b %o %x %X %x", 5, 8, 255, 255, "hi")"#), "101 10 ff FF 6869");
        assert_eq!(f(r#"format("%t %g %%", false, 0.5)"#), "false 0.5 %");
        assert_eq!(f(r#"format("%s %s", 1, 2.5)"#), "1 2.5");
    }

    #[test]
    fn flags_width_precision_and_indexes() {
        assert_eq!(
            f(r#"format("[%5s][%-5s][%05d][%+d][%.2s]", "ab", "ab", -42, 7, "abc")"#),
            "[   ab][ab   ][-0042][+7][ab]"
        );
        assert_eq!(f(r#"format("%[2]s %[1]s %s", "a", "b")"#), "b a b");
    }

    #[test]
    fn errors() {
        assert!(
            error(r#"format("%s %s", "a")"#)
                .contains("not enough arguments for \"%s\": it needs argument 2, but only 1 were given")
        );
        assert!(error(r#"format("%s", "a", "b")"#).contains("too many arguments: argument 2 is not used"));
        assert!(error(r#"format("%d", 1.5)"#).contains("a whole number is required"));
        assert!(error(r#"format("%s", [1])"#).contains("a string is required, got tuple"));
        assert!(error(r#"format("%s", null)"#).contains("null value cannot be formatted"));
        assert!(error(r#"format("%y", 1)"#).contains("unrecognized format verb %y"));
        assert!(error(r#"format("%", 1)"#).contains("ends in the middle of a verb"));
    }
}
