//! `postgresql_database`: a database. Renamed, re-owned and altered in
//! place; a change of `template`, `encoding`, `lc_collate` or `lc_ctype`
//! replaces it (PostgreSQL fixes them at creation). `id` is the name;
//! import by name.
//!
//! `CREATE DATABASE` and `DROP DATABASE` cannot run inside a transaction,
//! so each statement here is sent on its own. A drop ends the sessions
//! still connected to the database (`WITH (FORCE)`, PostgreSQL 13 and
//! later), as Terraform's provider does.

use cairn_sdk::{Attr, Diagnostic, Path, PlanRequest, PlanResponse, Schema, Value};

use crate::conn::Row;
use crate::sql::{ident, identifier_problem, literal};
use crate::values::{column, column_bool, column_int, flag, int, keep_spelling, text};

/// The attributes PostgreSQL fixes when it creates a database.
const FIXED: [&str; 3] = ["encoding", "lc_collate", "lc_ctype"];

/// The resource's schema.
pub fn schema() -> Schema {
    Schema::new(0)
        .description("A PostgreSQL database.")
        .attribute(
            "name",
            Attr::string().required().description("The database's name; changed in place (ALTER DATABASE … RENAME)."),
        )
        .attribute(
            "owner",
            Attr::string().optional().computed().description("The role that owns it; default the provider's user."),
        )
        .attribute(
            "template",
            Attr::string()
                .optional()
                .computed()
                .description("The database it is copied from; default \"template0\". A change replaces it."),
        )
        .attribute(
            "encoding",
            Attr::string()
                .optional()
                .computed()
                .description("Its character set; default \"UTF8\". A change replaces it."),
        )
        .attribute(
            "lc_collate",
            Attr::string()
                .optional()
                .computed()
                .description("Its collation (LC_COLLATE); default the template's. A change replaces it."),
        )
        .attribute(
            "lc_ctype",
            Attr::string()
                .optional()
                .computed()
                .description("Its character classes (LC_CTYPE); default the template's. A change replaces it."),
        )
        .attribute(
            "connection_limit",
            Attr::number()
                .optional()
                .computed()
                .description("How many connections it accepts at once; -1 (default) for no limit."),
        )
        .attribute(
            "allow_connections",
            Attr::bool().optional().computed().description("Whether it accepts connections; default true."),
        )
        .attribute(
            "is_template",
            Attr::bool()
                .optional()
                .computed()
                .description("Whether any role with CREATEDB may copy it; default false."),
        )
        .attribute("id", Attr::string().computed().description("The database's name."))
}

/// Checks beyond the schema's.
pub fn validate(config: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for attr in ["name", "owner", "template"] {
        if let Some(problem) = config.get_attr(attr).as_str().and_then(identifier_problem) {
            out.push(Diagnostic::error(format!("`{attr}` {problem}")).at(Path::attr(attr)));
        }
    }
    out
}

/// The plan: Terraform's provider's defaults; the attributes PostgreSQL
/// fixes at creation force a replacement.
pub fn plan(req: &PlanRequest) -> PlanResponse {
    let mut resp = PlanResponse::from_proposed(req)
        .default("connection_limit", -1)
        .default("allow_connections", true)
        .default("is_template", false);
    // Defaults of what is fixed at creation apply to a creation only: an
    // imported database keeps what it was made with unless configured.
    // The catalog does not remember the template, so only a known one can
    // differ.
    let template_known = !req.prior_state.get_attr("template").is_null();
    if req.is_create() {
        resp = resp.default("template", "template0").default("encoding", "UTF8");
    }
    let mut fixed: Vec<&str> = FIXED.to_vec();
    if template_known {
        fixed.push("template");
    }
    let resp = resp.requires_replace(fixed);
    let name = resp.planned_state.get_attr("name").clone();
    resp.set("id", name)
}

/// `CREATE DATABASE` with every option the plan knows.
pub fn create(planned: &Value) -> Vec<String> {
    let name = text(planned, "name").unwrap_or_default();
    let mut options = Vec::new();
    if let Some(owner) = text(planned, "owner") {
        options.push(format!("OWNER {}", ident(&owner)));
    }
    if let Some(template) = text(planned, "template") {
        options.push(format!("TEMPLATE {}", ident(&template)));
    }
    for (attr, keyword) in [("encoding", "ENCODING"), ("lc_collate", "LC_COLLATE"), ("lc_ctype", "LC_CTYPE")] {
        if let Some(value) = text(planned, attr) {
            options.push(format!("{keyword} {}", literal(&value)));
        }
    }
    options.push(format!("CONNECTION LIMIT {}", int(planned, "connection_limit", -1)));
    options.push(format!("ALLOW_CONNECTIONS {}", flag(planned, "allow_connections", true)));
    options.push(format!("IS_TEMPLATE {}", flag(planned, "is_template", false)));
    vec![format!("CREATE DATABASE {} WITH {}", ident(&name), options.join(" "))]
}

/// The statements (each on its own) that change the database from `prior`
/// to `planned`.
pub fn update(prior: &Value, planned: &Value) -> Vec<String> {
    let old = text(prior, "name").unwrap_or_default();
    let name = text(planned, "name").unwrap_or_default();
    let mut out = Vec::new();
    if old != name {
        out.push(format!("ALTER DATABASE {} RENAME TO {}", ident(&old), ident(&name)));
    }
    let db = ident(&name);
    if let Some(owner) = text(planned, "owner").filter(|o| Some(o) != text(prior, "owner").as_ref()) {
        out.push(format!("ALTER DATABASE {db} OWNER TO {}", ident(&owner)));
    }
    let limit = int(planned, "connection_limit", -1);
    if limit != int(prior, "connection_limit", -1) {
        out.push(format!("ALTER DATABASE {db} WITH CONNECTION LIMIT {limit}"));
    }
    for (attr, keyword, default) in
        [("allow_connections", "ALLOW_CONNECTIONS", true), ("is_template", "IS_TEMPLATE", false)]
    {
        let on = flag(planned, attr, default);
        if on != flag(prior, attr, default) {
            out.push(format!("ALTER DATABASE {db} WITH {keyword} {on}"));
        }
    }
    out
}

/// Drops the database, ending its sessions; a template is made an ordinary
/// database first (PostgreSQL refuses to drop a template).
pub fn delete(state: &Value) -> Vec<String> {
    let db = ident(&text(state, "name").unwrap_or_default());
    let mut out = Vec::new();
    if flag(state, "is_template", false) {
        out.push(format!("ALTER DATABASE {db} WITH IS_TEMPLATE false"));
    }
    out.push(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"));
    out
}

/// One row: the catalog's view of the database named in `state`.
pub fn read_sql(state: &Value) -> String {
    format!(
        "SELECT d.datname, pg_get_userbyid(d.datdba), pg_encoding_to_char(d.encoding), d.datcollate, d.datctype, \
         d.datconnlimit, d.datallowconn, d.datistemplate FROM pg_database d WHERE d.datname = {}",
        literal(&text(state, "name").unwrap_or_default())
    )
}

/// The database's state from [`read_sql`]'s rows; `None` when it does not
/// exist.
pub fn from_rows(state: &Value, rows: &[Row]) -> Option<Value> {
    let row = rows.first()?;
    let name = column(row, 0)?.to_string();
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    Some(Value::object([
        ("name", Value::from(name.clone())),
        ("id", Value::from(name)),
        ("owner", Value::from(column(row, 1).unwrap_or_default())),
        // Not in the catalog: what was configured stays.
        ("template", state.get_attr("template").clone()),
        ("encoding", keep_spelling(state, "encoding", column(row, 2).unwrap_or_default(), same)),
        ("lc_collate", keep_spelling(state, "lc_collate", column(row, 3).unwrap_or_default(), same)),
        ("lc_ctype", keep_spelling(state, "lc_ctype", column(row, 4).unwrap_or_default(), same)),
        ("connection_limit", Value::from(column_int(row, 5))),
        ("allow_connections", Value::from(column_bool(row, 6))),
        ("is_template", Value::from(column_bool(row, 7))),
    ]))
}

/// The state `read` starts from to import database `id` (its name).
pub fn import(id: &str) -> Result<Value, Diagnostic> {
    Ok(Value::object([("name", Value::from(id))]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn config(attrs: &[(&str, Value)]) -> Value {
        crate::values::test_config(&schema(), &[("name", Value::from("app db"))], attrs)
    }

    fn plan_of(prior: Value, config: Value) -> PlanResponse {
        plan(&PlanRequest::proposed("postgresql_database", Arc::new(schema()), prior, config))
    }

    fn row(encoding: &str) -> Row {
        ["app db", "owner", encoding, "C", "C", "-1", "t", "f"].map(|s| Some(s.to_string())).to_vec()
    }

    #[test]
    fn create_quotes_names_and_literals() {
        let p = plan_of(Value::Null, config(&[("owner", "o\"; --".into()), ("lc_collate", "C".into())])).planned_state;
        assert_eq!(
            create(&p),
            [
                r#"CREATE DATABASE "app db" WITH OWNER "o""; --" TEMPLATE "template0" ENCODING 'UTF8' LC_COLLATE 'C' CONNECTION LIMIT -1 ALLOW_CONNECTIONS true IS_TEMPLATE false"#
            ]
        );
    }

    #[test]
    fn a_fixed_attribute_replaces_and_the_rest_alter() {
        let prior = from_rows(&plan_of(Value::Null, config(&[])).planned_state, &[row("UTF8")]).unwrap();
        let mut prior = prior;
        prior.set_attr("template", "template0");
        let resp = plan_of(prior.clone(), config(&[("encoding", "LATIN1".into())]));
        assert!(resp.requires_replace.contains(&Path::attr("encoding")));
        let resp = plan_of(prior.clone(), config(&[("owner", "other".into()), ("is_template", true.into())]));
        assert_eq!(
            update(&prior, &resp.planned_state),
            [r#"ALTER DATABASE "app db" OWNER TO "other""#, r#"ALTER DATABASE "app db" WITH IS_TEMPLATE true"#]
        );
        assert_eq!(resp.planned_state.get_attr("template").as_str(), Some("template0"), "kept from the prior");
    }

    #[test]
    fn an_imported_database_without_template_is_not_replaced() {
        let imported = from_rows(&import("app db").unwrap(), &[row("UTF8")]).unwrap();
        assert!(imported.get_attr("template").is_null());
        let resp = plan_of(imported.clone(), config(&[]));
        assert_eq!(resp.planned_state, imported, "no change after import");
    }

    #[test]
    fn the_configured_spelling_of_an_encoding_is_kept() {
        let state = plan_of(Value::Null, config(&[("encoding", "utf8".into())])).planned_state;
        assert_eq!(from_rows(&state, &[row("UTF8")]).unwrap().get_attr("encoding").as_str(), Some("utf8"));
    }

    #[test]
    fn a_template_is_unmarked_before_it_is_dropped() {
        let state = config(&[("is_template", true.into())]);
        assert_eq!(
            delete(&state),
            [r#"ALTER DATABASE "app db" WITH IS_TEMPLATE false"#, r#"DROP DATABASE IF EXISTS "app db" WITH (FORCE)"#]
        );
    }
}
