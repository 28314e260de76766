//! Unique identifiers: `uuid()` (random, version 4; known only at apply)
//! and `uuidv5(namespace, name)` (derived, version 5).

use sha1::{Digest, Sha1};
use uuid::Uuid;

use crate::value::Value;

use super::{Args, FnError};

/// `uuid()`: a new random UUID on every call. While planning the phase
/// rule in `call` makes it unknown, as Terraform's.
pub(super) fn uuid(_args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(Uuid::new_v4().to_string()))
}

/// `uuidv5(namespace, name)`: the name-based UUID (RFC 4122 §4.3, SHA-1)
/// of `name` in `namespace`: `dns`, `url`, `oid`, `x500` or a UUID.
pub(super) fn uuidv5(args: &Args) -> Result<Value, FnError> {
    let namespace = args.string(0)?;
    let namespace = match namespace.as_str() {
        "dns" => Uuid::NAMESPACE_DNS,
        "url" => Uuid::NAMESPACE_URL,
        "oid" => Uuid::NAMESPACE_OID,
        "x500" => Uuid::NAMESPACE_X500,
        other => Uuid::parse_str(other)
            .map_err(|e| FnError::arg(0, format!("uuidv5() doesn't support namespace prefix {other:?}: {e}")))?,
    };
    let mut hasher = Sha1::new();
    hasher.update(namespace.as_bytes());
    hasher.update(args.string(1)?.as_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Ok(Value::String(uuid::Builder::from_sha1_bytes(bytes).into_uuid().to_string()))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::super::Phase;
    use crate::value::Value;

    #[test]
    fn uuidv5_agrees_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/uuidv5
        let s = |t: &str| Value::string(t);
        assert_eq!(value("uuidv5(\"dns\", \"www.terraform.io\")"), s("a5008fae-b28c-5ba5-96cd-82b4c53552d6"));
        assert_eq!(value("uuidv5(\"url\", \"https://www.terraform.io/\")"), s("9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5"));
        assert_eq!(value("uuidv5(\"oid\", \"1.3.6.1.4\")"), s("af9d40a5-7a36-5c07-b23a-851cd99fbfa5"));
        assert_eq!(
            value("uuidv5(\"x500\", \"CN=Terraform,OU=Engineering,O=HashiCorp,C=US\")"),
            s("8426197d-c278-5ef0-a218-7bb95b858d7d")
        );
        assert_eq!(
            value("uuidv5(\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\", \"www.terraform.io\")"),
            s("a5008fae-b28c-5ba5-96cd-82b4c53552d6")
        );
        assert!(error("uuidv5(\"nope\", \"x\")").contains("doesn't support namespace"));
    }

    #[test]
    fn uuid_is_unknown_while_planning_and_new_at_apply() {
        let planned = value("uuid()");
        assert!(planned.is_unknown() && planned.refinements().is_some_and(|r| r.not_null));
        let apply =
            super::super::super::EvalContext { phase: Phase::Apply, ..super::super::super::EvalContext::new(".") };
        let one = super::super::super::testutil::eval_in("uuid()", &apply).unwrap();
        let two = super::super::super::testutil::eval_in("uuid()", &apply).unwrap();
        assert_eq!(one.as_str().map(str::len), Some(36));
        assert_ne!(one, two);
    }
}
