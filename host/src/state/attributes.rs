//! A stored object's attributes, kept as the compact JSON text they are
//! written as rather than as a parsed tree.
//!
//! A state holds every resource instance's attributes for the whole run,
//! but reads them only where an instance is planned or shown, and then
//! with the schema's type ([`Attributes::decode`]). Parsed, a
//! `serde_json::Value` costs about 2 KB for a small resource (each object
//! a `BTreeMap` of 600-byte nodes); as text it costs its length. At
//! 100,000 resources that difference is about 200 MB.
//!
//! The text is always *canonical*: what `serde_json` writes for a
//! `serde_json::Value` (no whitespace, object keys sorted and unique,
//! numbers and escapes as serde_json spells them). That is what cairn has
//! always written, so the state file, the journal and the PostgreSQL
//! backend keep the same documents; and it makes equal attributes equal
//! text, so comparing is comparing strings. Text read from elsewhere (a
//! state edited by hand, or pushed from another tool) is put in that form
//! when read.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::value::{self, Path, Type, TypeError, Value};

/// An object's attributes as typed JSON ([`value::to_json_typed`] with the
/// schema's implied type), held as canonical compact JSON text (see the
/// module documentation). JSON `null` means "no object".
#[derive(Clone)]
pub struct Attributes(Box<RawValue>);

impl Attributes {
    /// JSON `null`: no object.
    pub fn null() -> Attributes {
        Attributes::from_json(&serde_json::Value::Null)
    }

    /// The attributes of `v`, a value of type `ty` (the schema's implied
    /// type), as the state stores them.
    pub fn new(v: &Value, ty: &Type) -> Attributes {
        // Written straight to text, keys sorted as a JSON object sorts
        // them, so the text is canonical. A map's keys are strings and a
        // number JSON cannot hold is written as null: this cannot fail.
        Attributes(serde_json::value::to_raw_value(&value::TypedJson(v, ty)).expect("a value serializes"))
    }

    /// Attributes from typed JSON already built.
    pub fn from_json(json: &serde_json::Value) -> Attributes {
        // A `serde_json::Value` always serializes: its keys are strings and
        // its numbers finite. Its map sorts the keys, so the text is
        // canonical.
        Attributes(serde_json::value::to_raw_value(json).expect("a JSON value serializes"))
    }

    /// Whether these are JSON `null`, which means "no object".
    pub fn is_null(&self) -> bool {
        self.as_str() == "null"
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The attributes parsed as plain JSON. Fails only for JSON nested
    /// deeper than serde_json reads (128 levels).
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(self.as_str())
    }

    /// The attributes read back as a value of type `ty` (the schema's
    /// implied type), as [`value::from_json`] reads them.
    pub fn decode(&self, ty: &Type) -> Result<Value, TypeError> {
        let json = self.to_json().map_err(|e| TypeError {
            path: Path::root(),
            message: format!("the stored attributes cannot be read: {e}"),
        })?;
        value::from_json(&json, ty)
    }

    /// Attributes from JSON text that may not be canonical.
    fn from_text(raw: Box<RawValue>) -> Result<Attributes, serde_json::Error> {
        if is_canonical(raw.get()) {
            return Ok(Attributes(raw));
        }
        let json: serde_json::Value = serde_json::from_str(raw.get())?;
        Ok(Attributes::from_json(&json))
    }
}

impl Default for Attributes {
    /// JSON `null`: no object.
    fn default() -> Attributes {
        Attributes::null()
    }
}

impl From<serde_json::Value> for Attributes {
    fn from(json: serde_json::Value) -> Attributes {
        Attributes::from_json(&json)
    }
}

impl PartialEq for Attributes {
    /// The same JSON: canonical text is equal exactly when the JSON is.
    fn eq(&self, other: &Attributes) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Attributes {}

impl fmt::Debug for Attributes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Attributes {
    /// The text, verbatim.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Attributes {
    /// Any JSON value, kept as text (made canonical if it is not).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Attributes, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Attributes::from_text(raw).map_err(serde::de::Error::custom)
    }
}

/// Whether `text`, valid JSON, is exactly what serde_json writes for the
/// `serde_json::Value` it parses to. It may say no to some canonical
/// text (keys with escapes), which then only costs a parse.
fn is_canonical(text: &str) -> bool {
    let b = text.as_bytes();
    // The last key of every open object, innermost last.
    let mut keys: Vec<Option<&[u8]>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                keys.push(None);
                i += 1;
            }
            b'}' => {
                keys.pop();
                i += 1;
            }
            b'[' | b']' | b',' | b':' => i += 1,
            b'"' => {
                let start = i + 1;
                let Some(end) = string_end(b, start) else { return false };
                i = end + 1;
                if b.get(i) == Some(&b':') {
                    // A key: keys must be unique and in byte order (the
                    // order of the map serde_json reads them into).
                    let key = &b[start..end];
                    if key.contains(&b'\\') {
                        return false;
                    }
                    match keys.last_mut() {
                        Some(last) if last.is_none_or(|prev| prev < key) => *last = Some(key),
                        _ => return false,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                if !canonical_number(&text[start..i]) {
                    return false;
                }
            }
            b't' | b'f' | b'n' => {
                // true, false, null: valid JSON, so the letters are right.
                while i < b.len() && b[i].is_ascii_lowercase() {
                    i += 1;
                }
            }
            // Whitespace between tokens.
            _ => return false,
        }
    }
    true
}

/// Where the string whose content starts at `start` ends (the index of its
/// closing quote), or `None` if it has an escape serde_json would not
/// write.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    loop {
        match *b.get(i)? {
            b'"' => return Some(i),
            b'\\' => {
                match *b.get(i + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        // serde_json writes `\u00xx` (lowercase) for the
                        // control characters without a short escape, and
                        // nothing else that way.
                        let hex = b.get(i + 2..i + 6)?;
                        let code = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                        let lowercase = hex.iter().all(|h| !h.is_ascii_uppercase());
                        let short = matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                        if !(hex.starts_with(b"00") && code < 0x20 && lowercase && !short) {
                            return None;
                        }
                        i += 6;
                    }
                    _ => return None,
                }
            }
            _ => i += 1,
        }
    }
}

/// Whether serde_json writes the number it reads from `text` as `text`.
fn canonical_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    // Plain integers that fit an i64 (the common case) are written back
    // as they are, but for leading zeros and `-0` (read as a float).
    if digits.len() <= 18 && digits.bytes().all(|c| c.is_ascii_digit()) {
        return !digits.is_empty() && (digits == "0" || !digits.starts_with('0')) && text != "-0";
    }
    text.parse::<serde_json::Number>().is_ok_and(|n| n.to_string() == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json writes for the JSON `text` parses to.
    fn canonical(text: &str) -> String {
        serde_json::from_str::<serde_json::Value>(text).unwrap().to_string()
    }

    #[test]
    fn canonical_text_is_recognised_and_anything_else_is_rewritten() {
        let texts = [
            "null",
            "true",
            "0",
            "-0",
            "-12",
            "123456789012345678",
            "12345678901234567890",
            "123456789012345678901234",
            "1.0",
            "1.5",
            "1e3",
            "1E3",
            "1.0e300",
            "-0.0",
            "0.1",
            "\"plain\"",
            "\"quote \\\" slash \\\\ newline \\n\"",
            "\"\\u001f \\u001F \\u0041 \\/\"",
            "\"\\u0009\"",
            "\"caf\u{e9}\"",
            r#"{"a":1,"b":[1,2,{"c":null}]}"#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a": 1}"#,
            "[1, 2]",
            " 1",
            "{\n  \"a\": 1\n}",
            r#"{"a\"b":1}"#,
            r#"{"z":{"b":1,"c":2},"y":3}"#,
            r#"{"a":{"z":1},"b":{"a":2}}"#,
            r#"{"aa":1,"b":2}"#,
            r#"{"bb":1,"a":2}"#,
            "[]",
            "{}",
            "[{},[]]",
        ];
        for text in texts {
            let expected = canonical(text);
            if is_canonical(text) {
                assert_eq!(text, expected, "{text} was taken as canonical");
            }
            let read: Attributes = serde_json::from_str(text).unwrap();
            assert_eq!(read.as_str(), expected, "{text}");
            assert!(is_canonical(read.as_str()) || read.as_str().contains('\\'), "{expected}");
        }
        // The common cases take no parse.
        for text in ["null", "-12", "1.5", r#"{"a":1,"b":[1,2,{"c":null}]}"#, "\"a\\nb\\u0001\""] {
            assert!(is_canonical(text), "{text}");
        }
    }

    #[test]
    fn equal_json_is_equal_attributes_however_it_was_written() {
        let pg_style: Attributes = serde_json::from_str(r#"{"id": "x", "n": [1, 2], "a": {"k": true}}"#).unwrap();
        let ours = Attributes::from(serde_json::json!({"a": {"k": true}, "id": "x", "n": [1, 2]}));
        assert_eq!(pg_style, ours);
        assert_eq!(serde_json::to_string(&pg_style).unwrap(), r#"{"a":{"k":true},"id":"x","n":[1,2]}"#);
        assert_ne!(ours, Attributes::from(serde_json::json!({"a": {"k": false}, "id": "x", "n": [1, 2]})));
    }

    #[test]
    fn attributes_round_trip_verbatim_and_decode_with_their_type() {
        let ty = Type::Object(
            [("id".to_string(), Type::String), ("n".to_string(), Type::Number), ("any".to_string(), Type::Dynamic)]
                .into(),
        );
        let v = Value::Object(
            [
                ("id".to_string(), Value::string("x")),
                ("n".to_string(), Value::int(3)),
                ("any".to_string(), Value::List(vec![Value::string("a")])),
            ]
            .into_iter()
            .collect(),
        );
        let attrs = Attributes::new(&v, &ty);
        assert_eq!(attrs.to_json().unwrap(), value::to_json_typed(&v, &ty));
        assert_eq!(attrs.decode(&ty).unwrap(), v);
        let text = serde_json::to_string(&attrs).unwrap();
        assert_eq!(text, attrs.as_str());
        let back: Attributes = serde_json::from_str(&text).unwrap();
        assert_eq!(back, attrs);
        // Through a `serde_json::Value` too, as tests and tools read states.
        let back: Attributes = serde_json::from_value(serde_json::to_value(&attrs).unwrap()).unwrap();
        assert_eq!(back, attrs);
        assert!(Attributes::default().is_null() && !attrs.is_null());
        assert_eq!(Attributes::default().decode(&ty).unwrap(), Value::Null);
    }
}
