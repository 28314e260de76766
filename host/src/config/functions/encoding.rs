//! Encoding and hashing functions: JSON, CSV, URL query encoding, base64
//! (of UTF-8 or of another character encoding), MD5, SHA-1, SHA-256,
//! SHA-512. Strings are hashed and encoded as their UTF-8 bytes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

use crate::value::{Value, from_json_untyped, to_json_text};

use super::{Args, FnError};

pub(super) fn jsonencode(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(to_json_text(args.get(0))))
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

pub(super) fn sha512(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(hex::encode(Sha512::digest(args.string(0)?))))
}

pub(super) fn base64sha512(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(STANDARD.encode(Sha512::digest(args.string(0)?))))
}

/// What Go's `url.QueryEscape` (Terraform's `urlencode`) leaves alone:
/// letters, digits and `-_.~`; a space becomes `+`.
const QUERY_ESCAPED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// `urlencode(str)`: the string escaped for a URL query.
pub(super) fn urlencode(args: &Args) -> Result<Value, FnError> {
    let text = args.string(0)?;
    let escaped: Vec<String> =
        text.split(' ').map(|part| percent_encoding::utf8_percent_encode(part, QUERY_ESCAPED).to_string()).collect();
    Ok(Value::String(escaped.join("+")))
}

/// `csvdecode(str)`: the rows after the header as objects keyed by its
/// field names; every row must have as many fields as the header.
pub(super) fn csvdecode(args: &Args) -> Result<Value, FnError> {
    let text = args.string(0)?;
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let bad = |e: csv::Error| FnError::arg(0, format!("invalid CSV: {e}"));
    let headers: Vec<String> = reader.headers().map_err(bad)?.iter().map(str::to_owned).collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(bad)?;
        let row = headers.iter().zip(record.iter()).map(|(k, v)| (k.clone(), Value::string(v)));
        rows.push(Value::Object(row.collect()));
    }
    Ok(Value::List(rows))
}

/// The character encoding named by argument `i` (`UTF-16LE`, `Windows-1252`, …).
fn text_encoding(args: &Args, i: usize) -> Result<&'static encoding_rs::Encoding, FnError> {
    let name = args.string(i)?;
    encoding_rs::Encoding::for_label(name.as_bytes())
        .ok_or_else(|| FnError::arg(i, format!("{name:?} is not a supported IANA encoding name or alias")))
}

/// `textencodebase64(str, encoding)`: the string in another character
/// encoding, base64-encoded. UTF-16 is written by hand: the WHATWG encoders
/// of encoding_rs only decode it.
pub(super) fn textencodebase64(args: &Args) -> Result<Value, FnError> {
    let text = args.string(0)?;
    let encoding = text_encoding(args, 1)?;
    let bytes: Vec<u8> = if encoding == encoding_rs::UTF_16LE {
        text.encode_utf16().flat_map(u16::to_le_bytes).collect()
    } else if encoding == encoding_rs::UTF_16BE {
        text.encode_utf16().flat_map(u16::to_be_bytes).collect()
    } else {
        let (bytes, _, unmappable) = encoding.encode(&text);
        if unmappable {
            return Err(FnError::arg(0, format!("the string cannot be encoded in {}", encoding.name())));
        }
        bytes.into_owned()
    };
    Ok(Value::String(STANDARD.encode(bytes)))
}

/// `textdecodebase64(source, encoding)`: base64 of text in another
/// character encoding, decoded to a string.
pub(super) fn textdecodebase64(args: &Args) -> Result<Value, FnError> {
    let bytes = STANDARD.decode(args.string(0)?).map_err(|e| FnError::arg(0, format!("invalid base64: {e}")))?;
    let encoding = text_encoding(args, 1)?;
    let (text, malformed) = encoding.decode_without_bom_handling(&bytes);
    if malformed {
        return Err(FnError::arg(0, format!("the bytes are not valid {}", encoding.name())));
    }
    Ok(Value::String(text.into_owned()))
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

    #[test]
    fn more_encodings_agree_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/sha512 (checked with `terraform console` 1.11.4)
        assert_eq!(
            value("sha512(\"hello world\")"),
            s(
                "309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f"
            )
        );
        assert_eq!(
            value("base64sha512(\"hello world\")"),
            s("MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==")
        );
        // …/functions/urlencode
        assert_eq!(value("urlencode(\"Hello World!\")"), s("Hello+World%21"));
        assert_eq!(value("urlencode(\"☃\")"), s("%E2%98%83"));
        assert_eq!(
            value("urlencode(\"foo:bar@localhost?foo=bar&bar=baz\")"),
            s("foo%3Abar%40localhost%3Ffoo%3Dbar%26bar%3Dbaz")
        );
        // …/functions/csvdecode
        let row = |a: &str, b: &str, c: &str| Value::object([("a", s(a)), ("b", s(b)), ("c", s(c))]);
        assert_eq!(
            value("csvdecode(\"a,b,c\\n1,2,3\\n4,5,6\")"),
            Value::List(vec![row("1", "2", "3"), row("4", "5", "6")])
        );
        assert!(error("csvdecode(\"a,b\\n1\")").contains("invalid CSV"));
        // …/functions/textencodebase64, …/functions/textdecodebase64
        assert_eq!(value("textencodebase64(\"Hello World\", \"UTF-16LE\")"), s("SABlAGwAbABvACAAVwBvAHIAbABkAA=="));
        assert_eq!(value("textdecodebase64(\"SABlAGwAbABvACAAVwBvAHIAbABkAA==\", \"UTF-16LE\")"), s("Hello World"));
        assert!(error("textencodebase64(\"a\", \"klingon\")").contains("not a supported IANA encoding"));
    }
}
