//! `postgresql_extension`: an extension installed in a database (the
//! server must have its files: `pgcrypto`, `citext` and the rest of
//! postgresql-contrib come with Debian's package). Its `schema` and
//! `version` change in place; another `name` or `database` replaces it.
//! `id` is `DATABASE.EXTENSION`, and import takes that form.

use cairn_sdk::{Attr, Diagnostic, Path, PlanRequest, PlanResponse, Schema, Value};

use crate::Defaults;
use crate::conn::Row;
use crate::schema::dotted_id;
use crate::sql::{ident, identifier_problem, literal};
use crate::values::{column, flag, text};

/// The resource's schema.
pub fn schema() -> Schema {
    Schema::new(0)
        .description("A PostgreSQL extension installed in a database.")
        .attribute(
            "name",
            Attr::string().required().description("The extension, e.g. \"pgcrypto\". A change replaces it."),
        )
        .attribute(
            "database",
            Attr::string()
                .optional()
                .computed()
                .description("The database it is installed in; default the provider's. A change replaces it."),
        )
        .attribute(
            "schema",
            Attr::string()
                .optional()
                .computed()
                .description("The schema its objects go in; default the first of the search path. Changed in place."),
        )
        .attribute(
            "version",
            Attr::string().optional().computed().description(
                "Its version; default the extension's default. Changed in place (ALTER EXTENSION … UPDATE TO).",
            ),
        )
        .attribute(
            "create_cascade",
            Attr::bool().optional().computed().description("Also install the extensions it needs (default false)."),
        )
        .attribute(
            "drop_cascade",
            Attr::bool().optional().computed().description("Also drop the objects that depend on it (default false)."),
        )
        .attribute("id", Attr::string().computed().description("DATABASE.EXTENSION"))
}

/// Checks beyond the schema's.
pub fn validate(config: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for attr in ["name", "database", "schema"] {
        if let Some(problem) = config.get_attr(attr).as_str().and_then(identifier_problem) {
            out.push(Diagnostic::error(format!("`{attr}` {problem}")).at(Path::attr(attr)));
        }
    }
    out
}

/// The plan: the provider's database by default.
pub fn plan(req: &PlanRequest, defaults: &Defaults) -> PlanResponse {
    let resp = PlanResponse::from_proposed(req)
        .default("database", defaults.database.clone())
        .default("create_cascade", false)
        .default("drop_cascade", false)
        .requires_replace(["name", "database"]);
    let id = dotted_id(&resp.planned_state, "database", "name");
    resp.set("id", id)
}

/// `CREATE EXTENSION`, adopting one already installed.
pub fn create(planned: &Value) -> Vec<String> {
    let mut sql = format!("CREATE EXTENSION IF NOT EXISTS {}", ident(&text(planned, "name").unwrap_or_default()));
    if let Some(schema) = text(planned, "schema") {
        sql.push_str(&format!(" SCHEMA {}", ident(&schema)));
    }
    if let Some(version) = text(planned, "version") {
        sql.push_str(&format!(" VERSION {}", literal(&version)));
    }
    if flag(planned, "create_cascade", false) {
        sql.push_str(" CASCADE");
    }
    vec![sql]
}

/// The statements that change the extension from `prior` to `planned`.
pub fn update(prior: &Value, planned: &Value) -> Vec<String> {
    let name = ident(&text(planned, "name").unwrap_or_default());
    let mut out = Vec::new();
    if let Some(schema) = text(planned, "schema").filter(|s| Some(s) != text(prior, "schema").as_ref()) {
        out.push(format!("ALTER EXTENSION {name} SET SCHEMA {}", ident(&schema)));
    }
    if let Some(version) = text(planned, "version").filter(|v| Some(v) != text(prior, "version").as_ref()) {
        out.push(format!("ALTER EXTENSION {name} UPDATE TO {}", literal(&version)));
    }
    out
}

/// Drops the extension.
pub fn delete(state: &Value) -> Vec<String> {
    let cascade = if flag(state, "drop_cascade", false) { "CASCADE" } else { "RESTRICT" };
    vec![format!("DROP EXTENSION IF EXISTS {} {cascade}", ident(&text(state, "name").unwrap_or_default()))]
}

/// One row: the extension named in `state`, in the connection's database.
pub fn read_sql(state: &Value) -> String {
    format!(
        "SELECT e.extname, n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
         WHERE e.extname = {}",
        literal(&text(state, "name").unwrap_or_default())
    )
}

/// The extension's state from [`read_sql`]'s rows; `None` when it is not
/// installed.
pub fn from_rows(state: &Value, rows: &[Row]) -> Option<Value> {
    let row = rows.first()?;
    let mut out = Value::object([
        ("name", Value::from(column(row, 0)?)),
        ("schema", Value::from(column(row, 1).unwrap_or_default())),
        ("version", Value::from(column(row, 2).unwrap_or_default())),
        ("database", state.get_attr("database").clone()),
        ("create_cascade", Value::from(flag(state, "create_cascade", false))),
        ("drop_cascade", Value::from(flag(state, "drop_cascade", false))),
    ]);
    let id = dotted_id(&out, "database", "name");
    out.set_attr("id", id);
    Some(out)
}

/// The state `read` starts from to import `DATABASE.EXTENSION` (or a bare
/// `EXTENSION`, in the provider's database).
pub fn import(id: &str, defaults: &Defaults) -> Result<Value, Diagnostic> {
    let (database, name) = id.split_once('.').unwrap_or((&defaults.database, id));
    if name.is_empty() {
        return Err(Diagnostic::error(format!("Cannot import postgresql_extension {id:?}"))
            .detail("The id is DATABASE.EXTENSION, e.g. \"app.pgcrypto\"."));
    }
    Ok(Value::object([("database", Value::from(database)), ("name", Value::from(name))]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn config(attrs: &[(&str, Value)]) -> Value {
        crate::values::test_config(&schema(), &[("name", Value::from("pgcrypto"))], attrs)
    }

    fn plan_of(prior: Value, config: Value) -> PlanResponse {
        let defaults = Defaults { database: "postgres".into() };
        plan(&PlanRequest::proposed("postgresql_extension", Arc::new(schema()), prior, config), &defaults)
    }

    #[test]
    fn create_names_schema_and_version_when_configured() {
        let p = plan_of(Value::Null, config(&[])).planned_state;
        assert_eq!(create(&p), [r#"CREATE EXTENSION IF NOT EXISTS "pgcrypto""#]);
        assert!(p.get_attr("version").is_unknown() && p.get_attr("schema").is_unknown());
        let p = plan_of(Value::Null, config(&[("schema", "ext s".into()), ("version", "1.3".into())])).planned_state;
        assert_eq!(create(&p), [r#"CREATE EXTENSION IF NOT EXISTS "pgcrypto" SCHEMA "ext s" VERSION '1.3'"#]);
    }

    #[test]
    fn schema_moves_in_place_and_the_database_replaces() {
        let row: Row = ["pgcrypto", "public", "1.3"].map(|s| Some(s.to_string())).to_vec();
        let prior = from_rows(&plan_of(Value::Null, config(&[])).planned_state, &[row]).unwrap();
        assert_eq!(prior.get_attr("id").as_str(), Some("postgres.pgcrypto"));
        let moved = plan_of(prior.clone(), config(&[("schema", "ext".into())]));
        assert!(moved.planned_state.get_attr("version").as_str() == Some("1.3"), "kept");
        assert_eq!(update(&prior, &moved.planned_state), [r#"ALTER EXTENSION "pgcrypto" SET SCHEMA "ext""#]);
        let other = plan_of(prior, config(&[("database", "app".into())]));
        assert!(other.requires_replace.contains(&Path::attr("database")));
    }

    #[test]
    fn import_takes_database_dot_name() {
        let defaults = Defaults { database: "postgres".into() };
        let s = import("app.citext", &defaults).unwrap();
        assert_eq!((s.get_attr("database").as_str(), s.get_attr("name").as_str()), (Some("app"), Some("citext")));
        let s = import("citext", &defaults).unwrap();
        assert_eq!(s.get_attr("database").as_str(), Some("postgres"));
    }
}
