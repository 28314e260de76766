//! Encoding and hashing functions: JSON, base64, SHA-1, SHA-256. Strings
//! are hashed and encoded as their UTF-8 bytes. (`md5` is missing: no MD5
//! implementation is among the crate's dependencies.)

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::value::{Value, from_json_untyped, to_json};

use super::{Args, FnError};

pub(super) fn jsonencode(args: &Args) -> Result<Value, FnError> {
    serde_json::to_string(&to_json(args.get(0))).map(Value::String).map_err(|e| FnError::arg(0, e.to_string()))
}

/// `jsondecode(str)`: arrays become tuples and objects become objects.
pub(super) fn jsondecode(args: &Args) -> Result<Value, FnError> {
    let json: serde_json::Value =
        serde_json::from_str(&args.string(0)?).map_err(|e| FnError::arg(0, format!("invalid JSON: {e}")))?;
    Ok(from_json_untyped(&json))
}

pub(super) fn base64encode(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(STANDARD.encode(args.string(0)?)))
}

pub(super) fn base64decode(args: &Args) -> Result<Value, FnError> {
    let bytes = STANDARD.decode(args.string(0)?).map_err(|e| FnError::arg(0, format!("invalid base64: {e}")))?;
    String::from_utf8(bytes).map(Value::String).map_err(|_| FnError::arg(0, "the decoded bytes are not valid UTF-8"))
}

pub(super) fn base64sha256(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(STANDARD.encode(Sha256::digest(args.string(0)?))))
}

pub(super) fn sha256(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(hex::encode(Sha256::digest(args.string(0)?))))
}

pub(super) fn sha1(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(hex::encode(Sha1::digest(args.string(0)?))))
}

/// `md5(str)`: the MD5 digest of the string's UTF-8 bytes, in hex.
pub(super) fn md5(args: &Args) -> Result<Value, FnError> {
    use md5::Digest as _;
    Ok(Value::String(hex::encode(md5::Md5::digest(args.string(0)?))))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::*;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn json() {
        assert_eq!(value("jsonencode({b = [1, 2.5, true, null], a = \"x\"})"), s(r#"{"a":"x","b":[1,2.5,true,null]}"#));
        assert_eq!(
            value("jsondecode(\"{\\\"a\\\": [1, \\\"b\\\"], \\\"n\\\": 9007199254740993}\")"),
            Value::object([("a", Value::Tuple(vec![Value::int(1), s("b")])), ("n", Value::int(9_007_199_254_740_993))])
        );
        assert!(
            error("jsondecode(\"{\")").contains("Invalid value for \"str\" parameter of jsondecode(): invalid JSON")
        );
    }

    #[test]
    fn base64() {
        assert_eq!(value("base64encode(\"héllo\")"), s("aMOpbGxv"));
        assert_eq!(value("base64decode(\"aMOpbGxv\")"), s("héllo"));
        assert!(error("base64decode(\"!!\")").contains("invalid base64"));
        assert!(error("base64decode(\"/w==\")").contains("not valid UTF-8"));
    }

    #[test]
    fn hashes() {
        assert_eq!(value("sha256(\"abc\")"), s("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert_eq!(value("sha1(\"abc\")"), s("a9993e364706816aba3e25717850c26c9cd0d89d"));
        assert_eq!(value("base64sha256(\"abc\")"), s("ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="));
    }
}
