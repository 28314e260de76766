//! `postgresql_grant`: the privileges one role holds on a database, a
//! schema, or tables, sequences or routines of a schema (named in
//! `objects`, or all of them when `objects` is empty). As in Terraform's
//! provider the grant is the whole set: applying it revokes everything the
//! role holds on the target, then grants `privileges`, in one transaction.
//! A change of `privileges` or `with_grant_option` is made in place;
//! another target (`role`, `database`, `schema`, `object_type`, `objects`)
//! replaces the grant.
//!
//! Read compares the catalog's access lists (`aclexplode`) with the
//! configured privileges: a privilege revoked (or one added) out of band
//! is drift that the next plan puts back. With `objects` empty, the
//! privileges read are those every object of the schema has.
//!
//! Import takes a JSON object naming the target, e.g.
//! `{"role":"app","database":"appdb","schema":"public","object_type":"table"}`
//! (with `"objects":["t1"]` when it names objects): names may hold any
//! character, so no separator could be safe.

use std::collections::BTreeSet;

use cairn_sdk::{Attr, Diagnostic, Path, PlanRequest, PlanResponse, Schema, Type, Value};

use crate::conn::Row;
use crate::sql::{grantee, ident, identifier_problem, literal, qualified};
use crate::values::{column, flag, string_set, strings, text};

/// What a grant can be on: `object_type`, the privileges it takes, and
/// whether it is an object in a schema (needs `schema`, may name `objects`).
const OBJECT_TYPES: &[(&str, &[&str], bool)] = &[
    ("database", &["CREATE", "CONNECT", "TEMPORARY"], false),
    ("schema", &["CREATE", "USAGE"], false),
    ("table", &["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"], true),
    ("sequence", &["USAGE", "SELECT", "UPDATE"], true),
    ("function", &["EXECUTE"], true),
    ("procedure", &["EXECUTE"], true),
    ("routine", &["EXECUTE"], true),
];

/// The resource's schema.
pub fn schema() -> Schema {
    Schema::new(0)
        .description("The privileges of a role on a database, a schema, or objects of a schema.")
        .attribute("role", Attr::string().required().description("The role granted to (\"public\" for every role). A change replaces the grant."))
        .attribute("database", Attr::string().required().description("The database. A change replaces the grant."))
        .attribute("schema", Attr::string().optional().description("The schema: the one granted on (object_type \"schema\"), or the one holding the objects. A change replaces the grant."))
        .attribute("object_type", Attr::string().required().description("database, schema, table, sequence, function, procedure or routine. A change replaces the grant."))
        .attribute("objects", Attr::set(Type::String).optional().computed().description("Names of the tables, sequences or routines; empty (default) for all of them in the schema. A change replaces the grant."))
        .attribute("privileges", Attr::set(Type::String).required().description("The privileges, e.g. [\"SELECT\", \"INSERT\"], or [\"ALL\"]; an empty set revokes all. Changed in place."))
        .attribute("with_grant_option", Attr::bool().optional().computed().description("The role may grant them on (default false). Changed in place."))
        .attribute("id", Attr::string().computed().description("ROLE_DATABASE_SCHEMA_OBJECTTYPE, as Terraform's provider makes it."))
}

fn object_type(state: &Value) -> Option<&'static (&'static str, &'static [&'static str], bool)> {
    let name = state.get_attr("object_type").as_str()?;
    OBJECT_TYPES.iter().find(|(t, _, _)| *t == name)
}

/// `privilege` in the catalog's spelling (upper case, `TEMP` as
/// `TEMPORARY`).
fn canonical(privilege: &str) -> String {
    let upper = privilege.trim().to_ascii_uppercase();
    match upper.as_str() {
        "TEMP" => "TEMPORARY".to_string(),
        "ALL PRIVILEGES" => "ALL".to_string(),
        _ => upper,
    }
}

/// Checks beyond the schema's.
pub fn validate(config: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for attr in ["role", "database", "schema"] {
        if let Some(problem) = config.get_attr(attr).as_str().and_then(identifier_problem) {
            out.push(Diagnostic::error(format!("`{attr}` {problem}")).at(Path::attr(attr)));
        }
    }
    let Some(type_name) = config.get_attr("object_type").as_str() else { return out };
    let Some((_, allowed, in_schema)) = object_type(config) else {
        let known: Vec<&str> = OBJECT_TYPES.iter().map(|(t, _, _)| *t).collect();
        out.push(
            Diagnostic::error(format!("Unknown object_type {type_name:?}"))
                .detail(format!("Expected one of {}.", known.join(", ")))
                .at(Path::attr("object_type")),
        );
        return out;
    };
    let schema = config.get_attr("schema");
    let needs_schema = *in_schema || type_name == "schema";
    if needs_schema && schema.is_null() {
        out.push(Diagnostic::error(format!("object_type {type_name:?} needs `schema`")).at(Path::attr("schema")));
    }
    if type_name == "database" && !schema.is_null() {
        out.push(Diagnostic::error("object_type \"database\" takes no `schema`").at(Path::attr("schema")));
    }
    let objects = config.get_attr("objects");
    if !in_schema && objects.as_slice().is_some_and(|o| !o.is_empty()) {
        out.push(
            Diagnostic::error(format!("object_type {type_name:?} takes no `objects`"))
                .detail("`objects` names tables, sequences or routines of the schema.")
                .at(Path::attr("objects")),
        );
    }
    for object in objects.as_slice().unwrap_or_default().iter().filter_map(Value::as_str) {
        if let Some(problem) = identifier_problem(object) {
            out.push(Diagnostic::error(format!("Object {object:?}: the name {problem}")).at(Path::attr("objects")));
        }
    }
    for privilege in config.get_attr("privileges").as_slice().unwrap_or_default().iter().filter_map(Value::as_str) {
        let p = canonical(privilege);
        if p != "ALL" && !allowed.contains(&p.as_str()) {
            out.push(
                Diagnostic::error(format!("Privilege {privilege:?} does not apply to a {type_name}"))
                    .detail(format!("A {type_name} takes {}, or ALL.", allowed.join(", ")))
                    .at(Path::attr("privileges")),
            );
        }
    }
    out
}

/// The plan: every target attribute replaces; privileges change in place.
pub fn plan(req: &PlanRequest) -> PlanResponse {
    let resp = PlanResponse::from_proposed(req)
        .default("objects", string_set([]))
        .default("with_grant_option", false)
        .requires_replace(["role", "database", "schema", "object_type", "objects"]);
    let id = grant_id(&resp.planned_state);
    resp.set("id", id)
}

/// `ROLE_DATABASE_SCHEMA_OBJECTTYPE` (no schema part for a database grant).
fn grant_id(state: &Value) -> Value {
    let parts = ["role", "database", "schema", "object_type"].map(|a| state.get_attr(a));
    if parts.iter().any(|v| !v.is_known()) {
        return Value::unknown().not_null();
    }
    let text: Vec<&str> = parts.iter().filter_map(|v| v.as_str()).collect();
    Value::from(text.join("_"))
}

/// What the privileges are granted on: `DATABASE "d"`, `SCHEMA "s"`,
/// `ALL TABLES IN SCHEMA "s"`, `TABLE "s"."a", "s"."b"`…
fn target(state: &Value) -> String {
    let kind = text(state, "object_type").unwrap_or_default();
    let schema = text(state, "schema").unwrap_or_default();
    match kind.as_str() {
        "database" => format!("DATABASE {}", ident(&text(state, "database").unwrap_or_default())),
        "schema" => format!("SCHEMA {}", ident(&schema)),
        _ => {
            let objects = strings(state, "objects");
            let keyword = kind.to_ascii_uppercase();
            if objects.is_empty() {
                format!("ALL {keyword}S IN SCHEMA {}", ident(&schema))
            } else {
                let names: Vec<String> = objects.iter().map(|o| qualified(&schema, o)).collect();
                format!("{keyword} {}", names.join(", "))
            }
        }
    }
}

/// Revokes everything the role holds on the target. The transaction first
/// takes an advisory lock on the target's name: grants to several roles on
/// one object, made at once, would otherwise fail with "tuple concurrently
/// updated" (each rewrites the object's access list).
pub fn revoke(state: &Value) -> Vec<String> {
    let role = text(state, "role").unwrap_or_default();
    let target = target(state);
    let key = format!("cairn grant {} {target}", text(state, "database").unwrap_or_default());
    vec![
        format!("SELECT pg_advisory_xact_lock(hashtext({}))", literal(&key)),
        format!("REVOKE ALL PRIVILEGES ON {target} FROM {}", grantee(&role)),
    ]
}

/// Makes the role hold exactly the planned privileges: revoke all, grant.
pub fn apply(planned: &Value) -> Vec<String> {
    let mut out = revoke(planned);
    let privileges: BTreeSet<String> = strings(planned, "privileges").iter().map(|p| canonical(p)).collect();
    if !privileges.is_empty() {
        let role = text(planned, "role").unwrap_or_default();
        let privileges = if privileges.contains("ALL") {
            "ALL PRIVILEGES".to_string()
        } else {
            Vec::from_iter(privileges).join(", ")
        };
        let option = if flag(planned, "with_grant_option", false) { " WITH GRANT OPTION" } else { "" };
        out.push(format!("GRANT {privileges} ON {} TO {}{option}", target(planned), grantee(&role)));
    }
    out
}

/// Rows `(kind, object, privilege, grantable)`: a `role` row when the role
/// exists, a `schema` row when the schema does, and an `acl` row per object
/// of the target and privilege the role holds on it (privilege NULL for an
/// object it holds nothing on).
pub fn read_sql(state: &Value) -> String {
    let role = text(state, "role").unwrap_or_default();
    let schema = literal(&text(state, "schema").unwrap_or_default());
    let grantee_oid = if role.eq_ignore_ascii_case("public") {
        "SELECT 0::oid AS oid".to_string()
    } else {
        format!("SELECT oid FROM pg_roles WHERE rolname = {}", literal(&role))
    };
    let objects = strings(state, "objects");
    let only = |column: &str| -> String {
        if objects.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = objects.iter().map(|o| literal(o)).collect();
            format!(" AND {column} IN ({})", names.join(", "))
        }
    };
    let kind = text(state, "object_type").unwrap_or_default();
    // (object name, access list or its default, from, where)
    let (name, acl, from, filter) = match kind.as_str() {
        "database" => (
            "o.datname",
            "coalesce(o.datacl, acldefault('d', o.datdba))",
            "pg_database o",
            format!("o.datname = {}", literal(&text(state, "database").unwrap_or_default())),
        ),
        "schema" => (
            "o.nspname",
            "coalesce(o.nspacl, acldefault('n', o.nspowner))",
            "pg_namespace o",
            format!("o.nspname = {schema}"),
        ),
        "sequence" => (
            "o.relname",
            "coalesce(o.relacl, acldefault('s', o.relowner))",
            "pg_class o JOIN pg_namespace n ON n.oid = o.relnamespace",
            format!("n.nspname = {schema} AND o.relkind = 'S'{}", only("o.relname")),
        ),
        "function" | "procedure" | "routine" => {
            let kinds = match kind.as_str() {
                "function" => "('f')",
                "procedure" => "('p')",
                _ => "('f', 'p')",
            };
            (
                "o.proname",
                "coalesce(o.proacl, acldefault('f', o.proowner))",
                "pg_proc o JOIN pg_namespace n ON n.oid = o.pronamespace",
                format!("n.nspname = {schema} AND o.prokind IN {kinds}{}", only("o.proname")),
            )
        }
        _ => (
            "o.relname",
            "coalesce(o.relacl, acldefault('r', o.relowner))",
            "pg_class o JOIN pg_namespace n ON n.oid = o.relnamespace",
            format!("n.nspname = {schema} AND o.relkind IN ('r', 'v', 'm', 'f', 'p'){}", only("o.relname")),
        ),
    };
    format!(
        "WITH g AS ({grantee_oid}) \
         SELECT 'role', NULL::text, NULL::text, NULL::text WHERE EXISTS (SELECT 1 FROM g) \
         UNION ALL SELECT 'schema', NULL, NULL, NULL WHERE EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = {schema}) \
         UNION ALL SELECT 'acl', {name}::text, a.privilege_type, a.is_grantable::text FROM {from} \
         LEFT JOIN LATERAL aclexplode({acl}) a ON a.grantee = (SELECT oid FROM g) WHERE {filter}"
    )
}

/// The grant's state from [`read_sql`]'s rows; `None` when the role, the
/// schema or (for a database grant) the database is gone.
pub fn from_rows(state: &Value, rows: &[Row]) -> Option<Value> {
    let kind_of = |row: &Row| column(row, 0).unwrap_or_default().to_string();
    if !rows.iter().any(|r| kind_of(r) == "role") {
        return None;
    }
    let (type_name, all_privileges, in_schema) = *object_type(state)?;
    if (in_schema || type_name == "schema") && !rows.iter().any(|r| kind_of(r) == "schema") {
        return None;
    }
    // Each object's privileges: (privilege, grantable).
    let mut per_object: std::collections::BTreeMap<String, Vec<(String, bool)>> = Default::default();
    for row in rows.iter().filter(|r| kind_of(r) == "acl") {
        let entry = per_object.entry(column(row, 1).unwrap_or_default().to_string()).or_default();
        if let Some(privilege) = column(row, 2) {
            entry.push((privilege.to_string(), column(row, 3) == Some("true")));
        }
    }
    if !in_schema && per_object.is_empty() {
        // The database or schema itself is gone.
        return None;
    }
    let mut out = state.clone();
    let objects = strings(state, "objects");
    let missing_object = objects.iter().any(|o| !per_object.contains_key(o));
    if per_object.is_empty() && objects.is_empty() {
        // All of a schema that has none: nothing differs from the grant.
        out.set_attr("id", grant_id(state));
        return Some(out);
    }
    let mut held: Option<BTreeSet<String>> = None;
    let mut grantable = true;
    for privileges in per_object.values() {
        let set: BTreeSet<String> = privileges.iter().map(|(p, _)| p.clone()).collect();
        grantable &= privileges.iter().all(|(_, g)| *g);
        held = Some(match held {
            None => set,
            Some(h) => h.intersection(&set).cloned().collect(),
        });
    }
    let held = if missing_object { BTreeSet::new() } else { held.unwrap_or_default() };
    let wanted: BTreeSet<String> = strings(state, "privileges").iter().map(|p| canonical(p)).collect();
    let same = if wanted.contains("ALL") { all_privileges.iter().all(|p| held.contains(*p)) } else { wanted == held };
    if !same {
        out.set_attr("privileges", string_set(held.iter().cloned()));
    }
    // With nothing held, there is no option to read: the state's stands.
    if !held.is_empty() {
        out.set_attr("with_grant_option", grantable);
    }
    out.set_attr("id", grant_id(state));
    Some(out)
}

/// The state `read` starts from to import a grant: a JSON object naming
/// `role`, `database`, `object_type`, and where needed `schema` and
/// `objects`.
pub fn import(id: &str) -> Result<Value, Diagnostic> {
    let bad = |why: String| {
        Diagnostic::error(format!("Cannot import postgresql_grant {id:?}")).detail(format!(
            "{why}. The id is a JSON object naming the grant's target, e.g. \
             {{\"role\":\"app\",\"database\":\"appdb\",\"schema\":\"public\",\"object_type\":\"table\"}}."
        ))
    };
    let json: serde_json::Value = serde_json::from_str(id).map_err(|e| bad(format!("It is not JSON ({e})")))?;
    let field = |name: &str| json.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let mut state = Value::object([
        ("role", Value::from(field("role").ok_or_else(|| bad("`role` is missing".into()))?)),
        ("database", Value::from(field("database").ok_or_else(|| bad("`database` is missing".into()))?)),
        ("object_type", Value::from(field("object_type").ok_or_else(|| bad("`object_type` is missing".into()))?)),
        ("schema", Value::from(field("schema"))),
        ("privileges", Value::Null),
        ("with_grant_option", Value::from(false)),
    ]);
    let objects: Vec<String> = match json.get("objects") {
        None => Vec::new(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| bad("`objects` is not a list of names".into()))?,
    };
    state.set_attr("objects", string_set(objects));
    if object_type(&state).is_none() {
        return Err(bad(format!("object_type {:?} is not one this provider grants on", field("object_type"))));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn config(attrs: &[(&str, Value)]) -> Value {
        let given = [
            ("role", Value::from("app")),
            ("database", Value::from("appdb")),
            ("object_type", Value::from("table")),
            ("schema", Value::from("public")),
            ("privileges", Value::set(["SELECT", "insert"])),
        ];
        crate::values::test_config(&schema(), &given, attrs)
    }

    fn planned(config: Value) -> Value {
        plan(&PlanRequest::proposed("postgresql_grant", Arc::new(schema()), Value::Null, config)).planned_state
    }

    fn acl(object: &str, privilege: Option<&str>, grantable: bool) -> Row {
        vec![
            Some("acl".into()),
            Some(object.into()),
            privilege.map(str::to_owned),
            privilege.map(|_| grantable.to_string()),
        ]
    }

    fn marker(kind: &str) -> Row {
        vec![Some(kind.into()), None, None, None]
    }

    #[test]
    fn apply_revokes_then_grants_in_the_catalogs_spelling() {
        let p = planned(config(&[]));
        assert_eq!(p.get_attr("id").as_str(), Some("app_appdb_public_table"));
        assert_eq!(
            apply(&p)[1..],
            [
                r#"REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA "public" FROM "app""#,
                r#"GRANT INSERT, SELECT ON ALL TABLES IN SCHEMA "public" TO "app""#,
            ]
        );
    }

    #[test]
    fn named_objects_and_hostile_names_are_quoted() {
        let p = planned(config(&[
            ("role", "r\"; DROP TABLE t; --".into()),
            ("schema", "my schema".into()),
            ("objects", Value::set(["a\"b", "c"])),
            ("with_grant_option", true.into()),
        ]));
        assert_eq!(
            apply(&p)[2],
            r#"GRANT INSERT, SELECT ON TABLE "my schema"."a""b", "my schema"."c" TO "r""; DROP TABLE t; --" WITH GRANT OPTION"#
        );
        assert!(read_sql(&p).contains("o.relname IN ('a\"b', 'c')"), "{}", read_sql(&p));
    }

    #[test]
    fn database_and_schema_grants_and_public() {
        let db = planned(config(&[
            ("object_type", "database".into()),
            ("schema", Value::Null),
            ("role", "public".into()),
            ("privileges", Value::set(["CONNECT", "temp"])),
        ]));
        assert_eq!(apply(&db)[2], r#"GRANT CONNECT, TEMPORARY ON DATABASE "appdb" TO PUBLIC"#);
        assert_eq!(db.get_attr("id").as_str(), Some("public_appdb_database"));
        let schema = planned(config(&[("object_type", "schema".into()), ("privileges", Value::set(["USAGE"]))]));
        assert_eq!(apply(&schema)[2], r#"GRANT USAGE ON SCHEMA "public" TO "app""#);
        let none = planned(config(&[("privileges", Value::set(Vec::<Value>::new()))]));
        assert_eq!(apply(&none).len(), 2, "an empty set only revokes");
        assert!(apply(&none)[0].starts_with("SELECT pg_advisory_xact_lock(hashtext('cairn grant appdb ALL TABLES"));
    }

    #[test]
    fn validation_names_what_does_not_fit() {
        let problems = validate(&config(&[("privileges", Value::set(["EXECUTE"]))]));
        assert!(problems[0].to_string().contains("does not apply to a table"), "{problems:?}");
        let problems = validate(&config(&[("object_type", "database".into())]));
        assert!(problems.iter().any(|p| p.to_string().contains("takes no `schema`")), "{problems:?}");
        let problems = validate(&config(&[("object_type", "cluster".into())]));
        assert!(problems[0].to_string().contains("Unknown object_type"), "{problems:?}");
        assert!(validate(&config(&[])).is_empty());
    }

    #[test]
    fn read_keeps_the_configured_privileges_when_held() {
        let state = planned(config(&[]));
        let rows = [
            marker("role"),
            marker("schema"),
            acl("t1", Some("SELECT"), false),
            acl("t1", Some("INSERT"), false),
            acl("t2", Some("INSERT"), false),
            acl("t2", Some("SELECT"), false),
        ];
        let read = from_rows(&state, &rows).unwrap();
        assert_eq!(read.get_attr("privileges"), state.get_attr("privileges"), "same set, configured spelling");
        assert_eq!(read.get_attr("with_grant_option").as_bool(), Some(false));
    }

    #[test]
    fn a_privilege_revoked_on_one_object_is_drift() {
        let state = planned(config(&[]));
        let rows = [
            marker("role"),
            marker("schema"),
            acl("t1", Some("SELECT"), false),
            acl("t1", Some("INSERT"), false),
            acl("t2", Some("SELECT"), false),
        ];
        let read = from_rows(&state, &rows).unwrap();
        assert_eq!(read.get_attr("privileges"), &Value::set(["SELECT"]));
    }

    #[test]
    fn a_gone_role_or_schema_is_a_gone_grant() {
        let state = planned(config(&[]));
        assert!(from_rows(&state, &[marker("schema"), acl("t1", Some("SELECT"), false)]).is_none());
        assert!(from_rows(&state, &[marker("role")]).is_none());
        // A schema with no tables: nothing to differ.
        let read = from_rows(&state, &[marker("role"), marker("schema")]).unwrap();
        assert_eq!(read.get_attr("privileges"), state.get_attr("privileges"));
    }

    #[test]
    fn all_is_satisfied_by_every_privilege_of_the_type() {
        let state = planned(config(&[("object_type", "schema".into()), ("privileges", Value::set(["ALL"]))]));
        let rows =
            [marker("role"), marker("schema"), acl("public", Some("USAGE"), true), acl("public", Some("CREATE"), true)];
        let read = from_rows(&state, &rows).unwrap();
        assert_eq!(read.get_attr("privileges"), &Value::set(["ALL"]));
        assert_eq!(read.get_attr("with_grant_option").as_bool(), Some(true), "drift: held with grant option");
    }

    #[test]
    fn import_reads_a_json_target() {
        let s = import(r#"{"role":"a b","database":"d","schema":"s","object_type":"table","objects":["t"]}"#).unwrap();
        assert_eq!(s.get_attr("role").as_str(), Some("a b"));
        assert_eq!(s.get_attr("objects"), &Value::set(["t"]));
        assert!(import("a_b_c").unwrap_err().to_string().contains("not JSON"));
        assert!(import(r#"{"role":"a","database":"d","object_type":"x"}"#).is_err());
    }
}
