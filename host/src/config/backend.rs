//! The `backend` block of the `terraform { … }` (or `cairn { … }`) block:
//! where the state is kept. Without one the state is the local file beside
//! the configuration; `backend "local" {}` says so explicitly, and
//! `backend "pg" { conn_str = "…"  schema_name = "…" }` keeps it in
//! PostgreSQL (see `state::pg`).
//!
//! This module only reads what is written; `PG_CONN_STR` and the default
//! schema are filled in where the backend is opened (`engine`), so that a
//! configuration means the same thing whatever the environment.

use std::path::Path;

use crate::diag::{Diagnostic, Location};

use super::blocks::{literal_string, unsupported_block};
use super::{Attribute, Block, error_at, suggest};

/// The backend types cairn supports.
pub const BACKEND_TYPES: &[&str] = &["local", "pg"];

/// The arguments of `backend "pg"`.
const PG_ARGUMENTS: &[&str] = &["conn_str", "schema_name"];

/// A `backend "TYPE" { … }` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendBlock {
    /// What it says.
    pub kind: BackendKind,
    /// The block header.
    pub location: Location,
}

/// The backend a `backend` block names, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendKind {
    /// `backend "local" {}`: the state file beside the configuration.
    Local,
    /// `backend "pg" { … }`: PostgreSQL.
    Pg {
        /// `conn_str`, when written (else `PG_CONN_STR` is used).
        conn_str: Option<String>,
        /// `schema_name`, when written (else `terraform_remote_state`).
        schema_name: Option<String>,
    },
}

/// Reads a `backend` block; `None` (after recording why) when it is not
/// one cairn supports.
pub(super) fn backend(block: &Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<BackendBlock> {
    let [kind] = block.labels.as_slice() else {
        diags.push(error_at(
            "Wrong number of labels for a backend block",
            format!(
                "A backend block takes one label, the backend type: backend \"pg\" {{ … }}. Supported types: {}.",
                quoted(BACKEND_TYPES)
            ),
            &block.location,
        ));
        return None;
    };
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "backend", &[]));
    }
    let before = diags.len();
    let kind = match kind.as_str() {
        "local" => {
            for attr in &block.body.attributes {
                diags.push(unsupported_argument(attr, "local", &[]));
            }
            BackendKind::Local
        }
        "pg" => {
            let (mut conn_str, mut schema_name) = (None, None);
            for attr in &block.body.attributes {
                match attr.name.as_str() {
                    "conn_str" => conn_str = literal_string(attr, dir, diags),
                    "schema_name" => schema_name = literal_string(attr, dir, diags),
                    _ => diags.push(unsupported_argument(attr, "pg", PG_ARGUMENTS)),
                }
            }
            if schema_name.as_deref() == Some("") {
                diags.push(error_at(
                    "Invalid value",
                    "The \"schema_name\" argument must not be empty.",
                    &block.location,
                ));
            }
            BackendKind::Pg { conn_str, schema_name }
        }
        other => {
            diags.push(error_at(
                "Unsupported backend type",
                format!(
                    "There is no backend type named \"{other}\"; cairn supports {}.{}",
                    quoted(BACKEND_TYPES),
                    suggest::did_you_mean(other, BACKEND_TYPES.iter().copied())
                ),
                &block.location,
            ));
            return None;
        }
    };
    (diags.len() == before).then(|| BackendBlock { kind, location: block.location.clone() })
}

/// "Unsupported argument" in a `backend "KIND"` block, naming the ones it
/// takes.
fn unsupported_argument(attr: &Attribute, kind: &str, expected: &[&str]) -> Diagnostic {
    let takes = if expected.is_empty() { "no arguments".to_string() } else { quoted(expected) };
    error_at(
        "Unsupported argument",
        format!(
            "An argument named \"{}\" is not expected here: the \"{kind}\" backend takes {takes}.{}",
            attr.name,
            suggest::did_you_mean(&attr.name, expected.iter().copied())
        ),
        &attr.location,
    )
}

/// `"local" and "pg"`.
fn quoted(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testutil::{load_errors, load_main};

    fn load_str(text: &str) -> crate::config::Config {
        load_main(text).1
    }

    fn errors(text: &str) -> String {
        load_errors(text).join("\n")
    }

    #[test]
    fn a_pg_backend_is_read_from_a_terraform_or_cairn_block() {
        let config = load_str(
            "terraform {\n  backend \"pg\" {\n    conn_str = \"postgres://h/db\"\n    schema_name = \"s\"\n  }\n}\n",
        );
        let b = config.backend.unwrap();
        assert_eq!(b.kind, BackendKind::Pg { conn_str: Some("postgres://h/db".into()), schema_name: Some("s".into()) });
        assert_eq!(b.location.line, 2);
        let config = load_str("cairn {\n  backend \"pg\" {}\n}\n");
        assert_eq!(config.backend.unwrap().kind, BackendKind::Pg { conn_str: None, schema_name: None });
        assert_eq!(load_str("cairn {\n  backend \"local\" {}\n}\n").backend.unwrap().kind, BackendKind::Local);
        assert!(load_str("terraform {}\n").backend.is_none());
    }

    #[test]
    fn unknown_types_and_arguments_name_what_is_supported() {
        let e = errors("terraform {\n  backend \"s3\" {}\n}\n");
        assert!(
            e.contains("main.tf:2") && e.contains("no backend type named \"s3\"") && e.contains("\"local\" and \"pg\""),
            "{e}"
        );
        let e = errors("terraform {\n  backend \"pg\" {\n    conn = \"x\"\n  }\n}\n");
        assert!(
            e.contains("main.tf:3")
                && e.contains(
                    "\"conn\" is not expected here: the \"pg\" backend takes \"conn_str\" and \"schema_name\""
                ),
            "{e}"
        );
        let e = errors("terraform {\n  backend \"pg\" {}\n}\ncairn {\n  backend \"local\" {}\n}\n");
        assert!(e.contains("main.tf:5") && e.contains("main.tf:2"), "{e}");
        let e = errors("terraform {\n  backend {}\n}\n");
        assert!(e.contains("one label"), "{e}");
    }
}
