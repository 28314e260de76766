//! `postgresql_schema`: a schema in a database. Renamed and re-owned in
//! place; moving it to another `database` replaces it. `id` is
//! `DATABASE.SCHEMA`, and import takes that form (split at the first `.`,
//! as Terraform's provider does).

use cairn_sdk::{Attr, Diagnostic, Path, PlanRequest, PlanResponse, Schema, Value};

use crate::Defaults;
use crate::conn::Row;
use crate::sql::{ident, identifier_problem, literal};
use crate::values::{column, flag, text};

/// The resource's schema.
pub fn schema() -> Schema {
    Schema::new(0)
        .description("A schema in a PostgreSQL database.")
        .attribute("name", Attr::string().required().description("The schema's name; changed in place."))
        .attribute(
            "database",
            Attr::string()
                .optional()
                .computed()
                .description("The database it is in; default the provider's. A change replaces it."),
        )
        .attribute(
            "owner",
            Attr::string().optional().computed().description("The role that owns it; default the provider's user."),
        )
        .attribute(
            "if_not_exists",
            Attr::bool()
                .optional()
                .computed()
                .description("Adopt a schema of that name that already exists (default true)."),
        )
        .attribute(
            "drop_cascade",
            Attr::bool().optional().computed().description(
                "Drop the objects in it with it (default false: a schema that is not empty is not dropped).",
            ),
        )
        .attribute("id", Attr::string().computed().description("DATABASE.SCHEMA"))
}

/// Checks beyond the schema's.
pub fn validate(config: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for attr in ["name", "database", "owner"] {
        if let Some(problem) = config.get_attr(attr).as_str().and_then(identifier_problem) {
            out.push(Diagnostic::error(format!("`{attr}` {problem}")).at(Path::attr(attr)));
        }
    }
    out
}

/// The plan: the provider's database by default; another database
/// replaces the schema.
pub fn plan(req: &PlanRequest, defaults: &Defaults) -> PlanResponse {
    let resp = PlanResponse::from_proposed(req)
        .default("database", defaults.database.clone())
        .default("if_not_exists", true)
        .default("drop_cascade", false)
        .requires_replace(["database"]);
    let id = dotted_id(&resp.planned_state, "database", "name");
    resp.set("id", id)
}

/// `A.B` from two string attributes, unknown while either is.
pub fn dotted_id(state: &Value, first: &str, second: &str) -> Value {
    match (state.get_attr(first).as_str(), state.get_attr(second).as_str()) {
        (Some(a), Some(b)) => Value::from(format!("{a}.{b}")),
        _ => Value::unknown().not_null(),
    }
}

/// `CREATE SCHEMA`, and its owner set even when it already existed.
pub fn create(planned: &Value) -> Vec<String> {
    let name = ident(&text(planned, "name").unwrap_or_default());
    let if_not_exists = if flag(planned, "if_not_exists", true) { "IF NOT EXISTS " } else { "" };
    let owner = text(planned, "owner");
    let mut out = vec![match &owner {
        Some(o) => format!("CREATE SCHEMA {if_not_exists}{name} AUTHORIZATION {}", ident(o)),
        None => format!("CREATE SCHEMA {if_not_exists}{name}"),
    }];
    if let (Some(o), true) = (owner, !if_not_exists.is_empty()) {
        out.push(format!("ALTER SCHEMA {name} OWNER TO {}", ident(&o)));
    }
    out
}

/// The statements that change the schema from `prior` to `planned`.
pub fn update(prior: &Value, planned: &Value) -> Vec<String> {
    let old = text(prior, "name").unwrap_or_default();
    let name = text(planned, "name").unwrap_or_default();
    let mut out = Vec::new();
    if old != name {
        out.push(format!("ALTER SCHEMA {} RENAME TO {}", ident(&old), ident(&name)));
    }
    if let Some(owner) = text(planned, "owner").filter(|o| Some(o) != text(prior, "owner").as_ref()) {
        out.push(format!("ALTER SCHEMA {} OWNER TO {}", ident(&name), ident(&owner)));
    }
    out
}

/// Drops the schema (with what is in it only when `drop_cascade`).
pub fn delete(state: &Value) -> Vec<String> {
    let cascade = if flag(state, "drop_cascade", false) { "CASCADE" } else { "RESTRICT" };
    vec![format!("DROP SCHEMA IF EXISTS {} {cascade}", ident(&text(state, "name").unwrap_or_default()))]
}

/// One row: the schema named in `state`, in the connection's database.
pub fn read_sql(state: &Value) -> String {
    format!(
        "SELECT n.nspname, pg_get_userbyid(n.nspowner) FROM pg_namespace n WHERE n.nspname = {}",
        literal(&text(state, "name").unwrap_or_default())
    )
}

/// The schema's state from [`read_sql`]'s rows; `None` when it does not
/// exist.
pub fn from_rows(state: &Value, rows: &[Row]) -> Option<Value> {
    let row = rows.first()?;
    let mut out = Value::object([
        ("name", Value::from(column(row, 0)?)),
        ("owner", Value::from(column(row, 1).unwrap_or_default())),
        ("database", state.get_attr("database").clone()),
        ("if_not_exists", Value::from(flag(state, "if_not_exists", true))),
        ("drop_cascade", Value::from(flag(state, "drop_cascade", false))),
    ]);
    let id = dotted_id(&out, "database", "name");
    out.set_attr("id", id);
    Some(out)
}

/// The state `read` starts from to import `DATABASE.SCHEMA`.
pub fn import(id: &str) -> Result<Value, Diagnostic> {
    let Some((database, name)) = id.split_once('.') else {
        return Err(Diagnostic::error(format!("Cannot import postgresql_schema {id:?}"))
            .detail("The id is DATABASE.SCHEMA, e.g. \"app.reporting\"."));
    };
    Ok(Value::object([("database", Value::from(database)), ("name", Value::from(name))]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn config(attrs: &[(&str, Value)]) -> Value {
        crate::values::test_config(&schema(), &[("name", Value::from("my schema"))], attrs)
    }

    fn plan_of(prior: Value, config: Value) -> PlanResponse {
        let defaults = Defaults { database: "postgres".into() };
        plan(&PlanRequest::proposed("postgresql_schema", Arc::new(schema()), prior, config), &defaults)
    }

    #[test]
    fn the_default_database_and_id_are_planned() {
        let p = plan_of(Value::Null, config(&[])).planned_state;
        assert_eq!(p.get_attr("database").as_str(), Some("postgres"));
        assert_eq!(p.get_attr("id").as_str(), Some("postgres.my schema"));
        assert!(p.get_attr("owner").is_unknown());
        assert_eq!(create(&p), [r#"CREATE SCHEMA IF NOT EXISTS "my schema""#]);
    }

    #[test]
    fn an_owner_is_given_even_to_a_schema_that_existed() {
        let p = plan_of(Value::Null, config(&[("owner", "app".into())])).planned_state;
        assert_eq!(
            create(&p),
            [
                r#"CREATE SCHEMA IF NOT EXISTS "my schema" AUTHORIZATION "app""#,
                r#"ALTER SCHEMA "my schema" OWNER TO "app""#
            ]
        );
    }

    #[test]
    fn another_database_replaces_and_a_rename_alters() {
        let prior = plan_of(Value::Null, config(&[("owner", "app".into())])).planned_state;
        let moved = plan_of(prior.clone(), config(&[("owner", "app".into()), ("database", "other".into())]));
        assert!(moved.requires_replace.contains(&Path::attr("database")));
        assert!(moved.planned_state.get_attr("id").as_str() == Some("other.my schema"));
        let mut renamed = config(&[("owner", "app".into())]);
        renamed.set_attr("name", "s2");
        let resp = plan_of(prior.clone(), renamed);
        assert_eq!(update(&prior, &resp.planned_state), [r#"ALTER SCHEMA "my schema" RENAME TO "s2""#]);
    }

    #[test]
    fn import_splits_at_the_first_dot() {
        let s = import("app.my.schema").unwrap();
        assert_eq!((s.get_attr("database").as_str(), s.get_attr("name").as_str()), (Some("app"), Some("my.schema")));
        assert!(import("nodot").is_err());
    }

    #[test]
    fn delete_restricts_unless_cascade() {
        assert_eq!(delete(&config(&[])), [r#"DROP SCHEMA IF EXISTS "my schema" RESTRICT"#]);
        assert_eq!(delete(&config(&[("drop_cascade", true.into())])), [r#"DROP SCHEMA IF EXISTS "my schema" CASCADE"#]);
    }
}
