//! `postgresql_role`: a role (a user when it may log in), its attributes and
//! the roles it is a member of. Renamed, altered and re-granted in place;
//! nothing forces a replacement. `id` is the name; import by name.
//!
//! The password cannot be read back (PostgreSQL keeps only a hash), so it
//! is set on create and whenever the configured value changes. `password`
//! is kept in state (sensitive), as Terraform's provider keeps it;
//! `password_wo` is write-only, never stored, and set again when
//! `password_wo_version` changes.

use cairn_sdk::{Attr, Diagnostic, Path, PlanRequest, PlanResponse, Schema, Type, Value};

use crate::conn::Row;
use crate::sql::{ident, identifier_problem, literal};
use crate::values::{column, column_bool, column_int, flag, int, keep_spelling, string_set, strings, text};

/// The boolean attributes: name in configuration, catalog column, keyword
/// for `CREATE/ALTER ROLE` when true (the `NO` form when false), default.
const FLAGS: [(&str, &str, &str, bool); 6] = [
    ("superuser", "rolsuper", "SUPERUSER", false),
    ("create_database", "rolcreatedb", "CREATEDB", false),
    ("create_role", "rolcreaterole", "CREATEROLE", false),
    ("inherit", "rolinherit", "INHERIT", true),
    ("login", "rolcanlogin", "LOGIN", false),
    ("replication", "rolreplication", "REPLICATION", false),
];

/// The resource's schema.
pub fn schema() -> Schema {
    let mut s = Schema::new(0)
        .description("A PostgreSQL role: a user when `login` is true.")
        .attribute(
            "name",
            Attr::string().required().description("The role's name; changed in place (ALTER ROLE … RENAME)."),
        )
        .attribute(
            "password",
            Attr::string()
                .optional()
                .sensitive()
                .description("Its password; kept in state (sensitive). Set on create and when it changes."),
        )
        .attribute(
            "password_wo",
            Attr::string().optional().sensitive().write_only().description(
                "Its password, write-only: never stored. Set on create and when password_wo_version changes.",
            ),
        )
        .attribute("password_wo_version", Attr::number().optional().description("Change it to set password_wo again."))
        .attribute(
            "connection_limit",
            Attr::number()
                .optional()
                .computed()
                .description("How many connections it may have at once; -1 (default) for no limit."),
        )
        .attribute(
            "valid_until",
            Attr::string()
                .optional()
                .computed()
                .description("When its password stops working, a timestamp; default \"infinity\"."),
        )
        .attribute(
            "roles",
            Attr::set(Type::String).optional().computed().description("Roles it is a member of; default none."),
        )
        .attribute("id", Attr::string().computed().description("The role's name."));
    for (name, _, keyword, default) in FLAGS {
        s = s.attribute(name, Attr::bool().optional().computed().description(format!("{keyword}; default {default}.")));
    }
    s
}

/// Checks beyond the schema's.
pub fn validate(config: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(problem) = config.get_attr("name").as_str().and_then(identifier_problem) {
        out.push(Diagnostic::error(format!("The role's name {problem}")).at(Path::attr("name")));
    }
    if let Some(roles) = config.get_attr("roles").as_slice() {
        for role in roles.iter().filter_map(Value::as_str) {
            if let Some(problem) = identifier_problem(role) {
                out.push(
                    Diagnostic::error(format!("Member of role {role:?}: the name {problem}")).at(Path::attr("roles")),
                );
            }
        }
    }
    if !config.get_attr("password").is_null() && !config.get_attr("password_wo").is_null() {
        out.push(Diagnostic::error("Set `password` or `password_wo`, not both").at(Path::attr("password_wo")));
    }
    out
}

/// The plan: Terraform's provider's defaults; `id` is the name.
pub fn plan(req: &PlanRequest) -> PlanResponse {
    let mut resp = PlanResponse::from_proposed(req)
        .default("connection_limit", -1)
        .default("valid_until", "infinity")
        .default("roles", string_set([]));
    for (name, _, _, default) in FLAGS {
        resp = resp.default(name, default);
    }
    let name = resp.planned_state.get_attr("name").clone();
    resp.set("id", name)
}

/// The attribute clauses of `CREATE ROLE`/`ALTER ROLE` for `state`; only
/// those that differ from `prior` when there is one (a role that is not a
/// superuser may not even repeat `NOSUPERUSER`).
fn options(state: &Value, prior: Option<&Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, _, keyword, default) in FLAGS {
        let on = flag(state, name, default);
        if prior.is_none_or(|p| flag(p, name, default) != on) {
            out.push(if on { keyword.to_string() } else { format!("NO{keyword}") });
        }
    }
    let limit = int(state, "connection_limit", -1);
    if prior.is_none_or(|p| int(p, "connection_limit", -1) != limit) {
        out.push(format!("CONNECTION LIMIT {limit}"));
    }
    let until = text(state, "valid_until").unwrap_or_else(|| "infinity".into());
    if prior.is_none_or(|p| text(p, "valid_until").unwrap_or_else(|| "infinity".into()) != until) {
        out.push(format!("VALID UNTIL {}", literal(&until)));
    }
    out
}

/// The password to set, from `password` or the write-only `password_wo`
/// (found only in the configuration).
fn password(planned: &Value, config: &Value) -> Option<String> {
    text(planned, "password").or_else(|| text(config, "password_wo"))
}

/// The statements that create the role and its memberships.
pub fn create(planned: &Value, config: &Value) -> Vec<String> {
    let name = text(planned, "name").unwrap_or_default();
    let mut clauses = options(planned, None);
    if let Some(p) = password(planned, config) {
        clauses.push(format!("PASSWORD {}", literal(&p)));
    }
    let mut out = vec![format!("CREATE ROLE {} WITH {}", ident(&name), clauses.join(" "))];
    for role in strings(planned, "roles") {
        out.push(format!("GRANT {} TO {}", ident(&role), ident(&name)));
    }
    out
}

/// The statements that change the role from `prior` to `planned`.
pub fn update(prior: &Value, planned: &Value, config: &Value) -> Vec<String> {
    let old = text(prior, "name").unwrap_or_default();
    let name = text(planned, "name").unwrap_or_default();
    let mut out = Vec::new();
    if old != name {
        out.push(format!("ALTER ROLE {} RENAME TO {}", ident(&old), ident(&name)));
    }
    let mut clauses = options(planned, Some(prior));
    let new_password = text(planned, "password");
    if new_password != text(prior, "password") {
        clauses.push(match &new_password {
            Some(p) => format!("PASSWORD {}", literal(p)),
            None => "PASSWORD NULL".to_string(),
        });
    } else if planned.get_attr("password_wo_version") != prior.get_attr("password_wo_version")
        && let Some(p) = text(config, "password_wo")
    {
        clauses.push(format!("PASSWORD {}", literal(&p)));
    }
    if !clauses.is_empty() {
        out.push(format!("ALTER ROLE {} WITH {}", ident(&name), clauses.join(" ")));
    }
    let (had, wants) = (strings(prior, "roles"), strings(planned, "roles"));
    for role in wants.iter().filter(|r| !had.contains(r)) {
        out.push(format!("GRANT {} TO {}", ident(role), ident(&name)));
    }
    for role in had.iter().filter(|r| !wants.contains(r)) {
        out.push(format!("REVOKE {} FROM {}", ident(role), ident(&name)));
    }
    out
}

/// Drops the role. One that still owns objects or holds privileges is not
/// dropped: the server's error says what it still owns.
pub fn delete(state: &Value) -> Vec<String> {
    vec![format!("DROP ROLE IF EXISTS {}", ident(&text(state, "name").unwrap_or_default()))]
}

/// One row: the catalog's view of the role named in `state`; whether its
/// `valid_until` is the moment the state's names; its memberships as JSON.
pub fn read_sql(state: &Value) -> String {
    let name = text(state, "name").unwrap_or_default();
    let until = text(state, "valid_until").unwrap_or_else(|| "infinity".into());
    let flags: Vec<String> = FLAGS.iter().map(|(_, column, _, _)| format!("r.{column}")).collect();
    format!(
        "SELECT r.rolname, {flags}, r.rolconnlimit, coalesce(r.rolvaliduntil::text, 'infinity'), \
         coalesce(r.rolvaliduntil, 'infinity') = {until}::timestamptz, \
         (SELECT coalesce(json_agg(b.rolname ORDER BY b.rolname), '[]') FROM pg_auth_members m \
          JOIN pg_roles b ON b.oid = m.roleid WHERE m.member = r.oid)::text \
         FROM pg_roles r WHERE r.rolname = {name}",
        flags = flags.join(", "),
        until = literal(&until),
        name = literal(&name),
    )
}

/// The role's state from [`read_sql`]'s rows; `None` when it does not exist.
pub fn from_rows(state: &Value, rows: &[Row]) -> Option<Value> {
    let row = rows.first()?;
    let name = column(row, 0)?.to_string();
    let mut out = Value::object([
        ("name", Value::from(name.clone())),
        ("id", Value::from(name)),
        ("password", state.get_attr("password").clone()),
        ("password_wo", Value::Null),
        ("password_wo_version", state.get_attr("password_wo_version").clone()),
    ]);
    for (i, (attr, _, _, _)) in FLAGS.iter().enumerate() {
        out.set_attr(*attr, column_bool(row, 1 + i));
    }
    let at = 1 + FLAGS.len();
    out.set_attr("connection_limit", column_int(row, at));
    let same_until = column_bool(row, at + 2);
    out.set_attr(
        "valid_until",
        keep_spelling(state, "valid_until", column(row, at + 1).unwrap_or("infinity"), |_, _| same_until),
    );
    let roles: Vec<String> = column(row, at + 3).and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
    out.set_attr("roles", string_set(roles));
    Some(out)
}

/// The state `read` starts from to import role `id` (its name).
pub fn import(id: &str) -> Result<Value, Diagnostic> {
    Ok(Value::object([("name", Value::from(id))]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn config(name: &str) -> Value {
        let mut v = Value::object([("name", Value::from(name))]);
        for attr in schema().block.attributes.iter().map(|(n, _)| n) {
            if attr != "name" {
                v.set_attr(attr.clone(), Value::Null);
            }
        }
        v
    }

    fn planned(config: Value) -> Value {
        plan(&PlanRequest::proposed("postgresql_role", Arc::new(schema()), Value::Null, config)).planned_state
    }

    #[test]
    fn create_quotes_the_name_and_states_every_default() {
        let mut c = config(r#"app "x"; DROP ROLE postgres; --"#);
        c.set_attr("login", true);
        c.set_attr("password", "it's");
        c.set_attr("roles", Value::set(["readers"]));
        let p = planned(c.clone());
        assert_eq!(p.get_attr("id"), p.get_attr("name"));
        assert_eq!(
            create(&p, &c),
            [
                r#"CREATE ROLE "app ""x""; DROP ROLE postgres; --" WITH NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT LOGIN NOREPLICATION CONNECTION LIMIT -1 VALID UNTIL 'infinity' PASSWORD 'it''s'"#,
                r#"GRANT "readers" TO "app ""x""; DROP ROLE postgres; --""#,
            ]
        );
    }

    #[test]
    fn update_alters_only_what_changed() {
        let prior = planned(config("app"));
        let mut c = config("app2");
        c.set_attr("create_database", true);
        c.set_attr("roles", Value::set(["readers"]));
        let next = planned(c.clone());
        assert_eq!(
            update(&prior, &next, &c),
            [
                r#"ALTER ROLE "app" RENAME TO "app2""#,
                r#"ALTER ROLE "app2" WITH CREATEDB"#,
                r#"GRANT "readers" TO "app2""#
            ]
        );
        // Back again: the membership is revoked.
        assert_eq!(update(&next, &prior, &config("app"))[2], r#"REVOKE "readers" FROM "app""#);
        assert!(update(&prior, &prior, &config("app")).is_empty(), "no change, no statement");
    }

    #[test]
    fn write_only_password_is_set_when_its_version_changes() {
        let mut c = config("app");
        c.set_attr("password_wo", "pw1");
        c.set_attr("password_wo_version", 1);
        let prior = planned(c.clone());
        assert!(prior.get_attr("password_wo").is_null(), "never planned");
        assert!(create(&prior, &c)[0].ends_with("PASSWORD 'pw1'"));
        c.set_attr("password_wo", "pw2");
        assert!(update(&prior, &planned(c.clone()), &c).is_empty(), "same version: not set again");
        c.set_attr("password_wo_version", 2);
        assert_eq!(update(&prior, &planned(c.clone()), &c), [r#"ALTER ROLE "app" WITH PASSWORD 'pw2'"#]);
    }

    #[test]
    fn a_read_row_becomes_the_state() {
        let state = planned(config("app"));
        let row: Row = ["app", "f", "t", "f", "t", "t", "f", "5", "infinity", "t", r#"["a b","readers"]"#]
            .map(|s| Some(s.to_string()))
            .to_vec();
        let read = from_rows(&state, &[row]).unwrap();
        assert_eq!(read.get_attr("create_database").as_bool(), Some(true));
        assert_eq!(read.get_attr("login").as_bool(), Some(true));
        assert_eq!(read.get_attr("connection_limit").as_i64(), Some(5));
        assert_eq!(read.get_attr("valid_until").as_str(), Some("infinity"));
        assert_eq!(read.get_attr("roles"), &Value::set(["a b", "readers"]));
        assert!(from_rows(&state, &[]).is_none(), "no row: gone");
    }

    #[test]
    fn hostile_names_are_literals_in_the_read() {
        let state = planned(config("x' OR '1'='1"));
        assert!(read_sql(&state).ends_with("WHERE r.rolname = 'x'' OR ''1''=''1'"), "{}", read_sql(&state));
    }
}
