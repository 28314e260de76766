//! Building SQL text safely: every identifier and every literal goes
//! through PostgreSQL's own quoting rules (`postgres-protocol`'s escape
//! functions, a translation of libpq's `PQescapeInternal`), so a name with
//! quotes, spaces, backslashes or `;` is one name and injects nothing.
//!
//! The simple query protocol has no parameters for DDL (`CREATE ROLE $1`
//! does not exist), so quoting is the only way; these helpers are the one
//! place it is done.

use postgres_protocol::escape::{escape_identifier, escape_literal};

/// The longest identifier PostgreSQL keeps (`NAMEDATALEN - 1` bytes);
/// longer ones are cut, which would make the object's name differ from the
/// configured one.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// `name` as a quoted identifier: `"a ""b"""`.
pub fn ident(name: &str) -> String {
    escape_identifier(name)
}

/// `text` as a quoted literal: `'it''s'` (or ` E'a\\b'` with a backslash).
pub fn literal(text: &str) -> String {
    escape_literal(text)
}

/// A role as a grantee: `PUBLIC` (the pseudo-role every role belongs to,
/// spelt `public` in configuration as Terraform's provider spells it) or the
/// quoted name.
pub fn grantee(role: &str) -> String {
    if role.eq_ignore_ascii_case("public") { "PUBLIC".to_string() } else { ident(role) }
}

/// `schema.object`, both quoted.
pub fn qualified(schema: &str, object: &str) -> String {
    format!("{}.{}", ident(schema), ident(object))
}

/// Why `name` cannot name a PostgreSQL object as given, if it cannot: empty,
/// a NUL byte (which the protocol cannot carry), or longer than
/// [`MAX_IDENTIFIER_BYTES`].
pub fn identifier_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        Some("must not be empty".to_string())
    } else if name.contains('\0') {
        Some("must not contain a NUL character".to_string())
    } else if name.len() > MAX_IDENTIFIER_BYTES {
        Some(format!(
            "is {} bytes long; PostgreSQL keeps at most {MAX_IDENTIFIER_BYTES} bytes of a name and would cut it",
            name.len()
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_and_inner_quotes_doubled() {
        assert_eq!(ident("app"), r#""app""#);
        assert_eq!(ident(r#"a "b"; DROP ROLE x; --"#), r#""a ""b""; DROP ROLE x; --""#);
        assert_eq!(qualified("my schema", "t"), r#""my schema"."t""#);
    }

    #[test]
    fn literals_are_quoted_and_backslashes_use_escape_syntax() {
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal(r"a\b"), r" E'a\\b'");
        assert_eq!(literal("'; DROP DATABASE x; --"), "'''; DROP DATABASE x; --'");
    }

    #[test]
    fn public_is_the_pseudo_role() {
        assert_eq!(grantee("public"), "PUBLIC");
        assert_eq!(grantee("PUBLIC"), "PUBLIC");
        assert_eq!(grantee("publicity"), r#""publicity""#);
    }

    #[test]
    fn names_postgresql_would_change_are_refused() {
        assert!(identifier_problem("").is_some());
        assert!(identifier_problem("a\0b").is_some());
        assert!(identifier_problem(&"x".repeat(64)).is_some());
        assert_eq!(identifier_problem(&"x".repeat(63)), None);
        assert_eq!(identifier_problem("with space; and \"quotes\""), None);
    }
}
