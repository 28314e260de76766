//! The bundled `postgresql` provider (issue 34) against a real server: the
//! test run's PostgreSQL ([`Postgres::shared`], the one the state backend
//! tests use), reached through the provider's `connect` grant. Every test
//! names its roles and databases apart ([`names`]): roles and databases
//! belong to the whole server, which the tests share.
//!
//! For each resource type the whole lifecycle: validate, plan, apply, a
//! plan with no changes, an update in place, a replacement, drift made
//! with psql and planned back, import, destroy. Then names with quotes,
//! spaces and `;`, a role that still owns objects, a server stopped in the
//! middle of an apply, a TLS `sslmode`, and `cairn providers check` against
//! a test database.

use cairn_e2e::{Postgres, Run, Workdir, cairn_command};

/// A working directory with a `postgresql` provider block for `server`.
struct Pg {
    w: Workdir,
    server: &'static Postgres,
}

/// The provider block for the server on `port`, granted that one target.
fn provider_block(port: u16) -> String {
    format!(
        r#"provider "postgresql" {{
  host     = "127.0.0.1"
  port     = {port}
  username = "postgres"
  sslmode  = "disable"
  sandbox {{
    connect = ["127.0.0.1:{port}"]
  }}
}}
"#
    )
}

impl Pg {
    fn new(resources: &str) -> Pg {
        let pg = Pg { w: Workdir::new(), server: Postgres::shared() };
        pg.configure(resources);
        pg
    }

    fn configure(&self, resources: &str) {
        self.w.write("main.tf", &format!("{}{resources}", provider_block(self.server.port)));
    }

    fn cairn(&self, args: &[&str]) -> Run {
        self.w.cairn(args)
    }

    fn apply(&self) -> Run {
        self.cairn(&["apply", "-auto-approve"]).success()
    }

    /// A plan that must propose nothing.
    fn assert_no_changes(&self) {
        let plan = self.cairn(&["plan"]).success();
        assert!(plan.stdout.contains("No changes."), "{}", plan.all());
    }

    fn sql(&self, database: &str, sql: &str) -> String {
        self.server.psql(database, sql)
    }
}

/// A name no other test of this run uses, from `base`.
fn names(base: &str) -> String {
    Postgres::shared().schema(base)
}

/// `text` as an HCL string literal.
fn hcl(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// `text` as a SQL literal, for psql.
fn lit(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `text` as a SQL identifier, for psql.
fn ident(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

fn role(name: &str, extra: &str) -> String {
    format!("resource \"postgresql_role\" \"r\" {{\n  name = {}\n{extra}}}\n", hcl(name))
}

#[test]
fn role_lifecycle() {
    let name = names("role");
    let pg = Pg::new(&role(&name, "  login = true\n  password = \"s3cret\"\n"));
    pg.cairn(&["init"]).success();
    pg.cairn(&["validate"]).success();
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("postgresql_role.r will be created"), "{}", plan.all());
    assert!(plan.stdout.contains("(sensitive value)"), "the password is not shown:\n{}", plan.all());
    pg.apply();
    let row = format!(
        "SELECT rolcanlogin, rolconnlimit, rolpassword IS NOT NULL FROM pg_authid WHERE rolname = {}",
        lit(&name)
    );
    assert_eq!(pg.sql("postgres", &row), "t|-1|t");
    pg.assert_no_changes();

    // In place: attributes and a membership.
    let member_of = names("role_group");
    pg.sql("postgres", &format!("CREATE ROLE {}", ident(&member_of)));
    pg.configure(&role(
        &name,
        &format!("  login = true\n  password = \"s3cret\"\n  connection_limit = 5\n  roles = [{}]\n", hcl(&member_of)),
    ));
    let update = pg.apply();
    assert!(update.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", update.all());
    assert_eq!(pg.sql("postgres", &row), "t|5|t");
    let members = format!(
        "SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member JOIN pg_roles g ON g.oid = m.roleid \
         WHERE r.rolname = {} AND g.rolname = {}",
        lit(&name),
        lit(&member_of)
    );
    assert_eq!(pg.sql("postgres", &members), "1");
    pg.assert_no_changes();

    // Drift: altered and a membership revoked out of band, planned back.
    pg.sql("postgres", &format!("ALTER ROLE {} NOLOGIN CONNECTION LIMIT 1", ident(&name)));
    pg.sql("postgres", &format!("REVOKE {} FROM {}", ident(&member_of), ident(&name)));
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "{}", plan.all());
    pg.apply();
    assert_eq!(pg.sql("postgres", &row), "t|5|t");
    assert_eq!(pg.sql("postgres", &members), "1");

    // Replaced on request; the new role is the configured one.
    let replace = pg.cairn(&["apply", "-auto-approve", "-replace=postgresql_role.r"]).success();
    assert!(replace.stdout.contains("1 added, 0 changed, 1 destroyed"), "{}", replace.all());
    assert_eq!(pg.sql("postgres", &row), "t|5|t");

    // Import by name.
    pg.w.cairn_here(&["state", "rm", "postgresql_role.r"]).success();
    pg.cairn(&["import", "postgresql_role.r", &name]).success();
    let plan = pg.cairn(&["plan"]).success();
    // The password cannot be read back: import does not know it, so it is set once.
    assert!(plan.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "{}", plan.all());
    pg.apply();
    pg.assert_no_changes();

    pg.cairn(&["destroy", "-auto-approve"]).success();
    assert_eq!(pg.sql("postgres", &format!("SELECT count(*) FROM pg_roles WHERE rolname = {}", lit(&name))), "0");
    // Gone already: a destroy of a state that still lists it succeeds.
    pg.apply();
    pg.sql("postgres", &format!("DROP ROLE {}", ident(&name)));
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("will be created"), "dropped out of band, planned back:\n{}", plan.all());
    pg.cairn(&["destroy", "-auto-approve", "-refresh=false"]).success();
}

fn database(name: &str, extra: &str) -> String {
    format!("resource \"postgresql_database\" \"d\" {{\n  name = {}\n{extra}}}\n", hcl(name))
}

#[test]
fn database_lifecycle() {
    let name = names("db");
    let pg = Pg::new(&database(&name, ""));
    pg.cairn(&["init"]).success();
    pg.cairn(&["validate"]).success();
    pg.apply();
    let row = format!(
        "SELECT pg_encoding_to_char(encoding), datconnlimit, datallowconn FROM pg_database WHERE datname = {}",
        lit(&name)
    );
    assert_eq!(pg.sql("postgres", &row), "UTF8|-1|t");
    let state = pg.w.attributes("postgresql_database.d");
    assert_eq!((state["owner"].as_str(), state["template"].as_str()), (Some("postgres"), Some("template0")));
    pg.assert_no_changes();

    // In place.
    pg.configure(&database(&name, "  connection_limit = 7\n"));
    let update = pg.apply();
    assert!(update.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", update.all());
    assert_eq!(pg.sql("postgres", &row), "UTF8|7|t");

    // Drift: altered out of band.
    pg.sql("postgres", &format!("ALTER DATABASE {} CONNECTION LIMIT 1", ident(&name)));
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("= 1 -> 7"), "{}", plan.all());
    pg.apply();
    assert_eq!(pg.sql("postgres", &row), "UTF8|7|t");

    // An encoding is fixed at creation: the database is replaced.
    pg.configure(&database(&name, "  connection_limit = 7\n  encoding = \"SQL_ASCII\"\n"));
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("must be replaced"), "{}", plan.all());
    let replace = pg.apply();
    assert!(replace.stdout.contains("1 added, 0 changed, 1 destroyed"), "{}", replace.all());
    assert_eq!(pg.sql("postgres", &row), "SQL_ASCII|7|t");
    pg.assert_no_changes();

    // Dropped out of band: planned back.
    pg.sql("postgres", &format!("DROP DATABASE {}", ident(&name)));
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("postgresql_database.d will be created"), "{}", plan.all());
    pg.apply();

    // Import by name; the template is not in the catalog, and is not a change.
    pg.w.cairn_here(&["state", "rm", "postgresql_database.d"]).success();
    pg.configure(&database(&name, "  connection_limit = 7\n  encoding = \"SQL_ASCII\"\n"));
    pg.cairn(&["import", "postgresql_database.d", &name]).success();
    pg.configure(&database(&name, "  connection_limit = 7\n"));
    pg.assert_no_changes();

    pg.cairn(&["destroy", "-auto-approve"]).success();
    assert_eq!(pg.sql("postgres", &format!("SELECT count(*) FROM pg_database WHERE datname = {}", lit(&name))), "0");
}

/// A role, a database it owns, and `resources` in it.
fn in_database(owner: &str, db: &str, resources: &str) -> String {
    format!(
        "{}resource \"postgresql_database\" \"d\" {{\n  name  = {}\n  owner = postgresql_role.r.name\n}}\n{resources}",
        role(owner, ""),
        hcl(db)
    )
}

fn schema(name: &str, extra: &str) -> String {
    format!(
        "resource \"postgresql_schema\" \"s\" {{\n  name     = {}\n  database = postgresql_database.d.name\n{extra}}}\n",
        hcl(name)
    )
}

#[test]
fn schema_lifecycle() {
    let (owner, db) = (names("schema_owner"), names("schema_db"));
    let pg = Pg::new(&in_database(&owner, &db, &schema("reports", "")));
    pg.cairn(&["init"]).success();
    pg.cairn(&["validate"]).success();
    pg.apply();
    let row = "SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname LIKE 'report%'";
    assert_eq!(pg.sql(&db, row), "reports|postgres");
    assert_eq!(pg.w.attributes("postgresql_schema.s")["id"], format!("{db}.reports"));
    pg.assert_no_changes();

    // In place: a new owner and a new name.
    pg.configure(&in_database(&owner, &db, &schema("reporting", "  owner = postgresql_role.r.name\n")));
    let update = pg.apply();
    assert!(update.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", update.all());
    assert_eq!(pg.sql(&db, row), format!("reporting|{owner}"));

    // Drift: another owner, set back.
    pg.sql(&db, "ALTER SCHEMA reporting OWNER TO postgres");
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "{}", plan.all());
    pg.apply();
    assert_eq!(pg.sql(&db, row), format!("reporting|{owner}"));

    // Another database replaces it.
    let other = names("schema_other");
    let moved = format!(
        "{}resource \"postgresql_database\" \"other\" {{\n  name = {}\n}}\nresource \"postgresql_schema\" \"s\" {{\n  name     = \"reporting\"\n  database = postgresql_database.other.name\n  owner    = postgresql_role.r.name\n}}\n",
        in_database(&owner, &db, ""),
        hcl(&other)
    );
    pg.configure(&moved);
    let replace = pg.apply();
    assert!(replace.stdout.contains("2 added, 0 changed, 1 destroyed"), "{}", replace.all());
    assert_eq!(pg.sql(&db, row), "");
    assert_eq!(pg.sql(&other, row), format!("reporting|{owner}"));

    // Dropped out of band, planned back; then imported as DATABASE.SCHEMA.
    pg.sql(&other, "DROP SCHEMA reporting");
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("postgresql_schema.s will be created"), "{}", plan.all());
    pg.apply();
    pg.w.cairn_here(&["state", "rm", "postgresql_schema.s"]).success();
    pg.cairn(&["import", "postgresql_schema.s", &format!("{other}.reporting")]).success();
    pg.assert_no_changes();

    pg.cairn(&["destroy", "-auto-approve"]).success();
    assert_eq!(
        pg.sql(
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname IN ({}, {})", lit(&db), lit(&other))
        ),
        "0"
    );
}

fn grant(extra: &str) -> String {
    format!(
        "resource \"postgresql_schema\" \"s\" {{\n  name     = \"app\"\n  database = postgresql_database.d.name\n}}\n\
         resource \"postgresql_grant\" \"g\" {{\n  role        = postgresql_role.r.name\n  database    = postgresql_database.d.name\n  schema      = postgresql_schema.s.name\n  object_type = \"table\"\n{extra}}}\n"
    )
}

#[test]
fn grant_lifecycle() {
    let (grantee, db) = (names("grantee"), names("grant_db"));
    let pg = Pg::new(&in_database(&grantee, &db, &grant("  privileges = [\"SELECT\"]\n")));
    pg.cairn(&["init"]).success();
    pg.cairn(&["validate"]).success();
    pg.apply();
    pg.sql(&db, "CREATE TABLE app.t1 (a int); CREATE TABLE app.t2 (a int)");
    let privileges = |table: &str| {
        pg.sql(
            &db,
            &format!(
                "SELECT string_agg(privilege_type, ',' ORDER BY privilege_type) FROM information_schema.role_table_grants \
                 WHERE grantee = {} AND table_name = {}",
                lit(&grantee),
                lit(table)
            ),
        )
    };
    // Tables made after the grant do not have it: drift, planned back.
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "{}", plan.all());
    pg.apply();
    assert_eq!((privileges("t1"), privileges("t2")), ("SELECT".to_string(), "SELECT".to_string()));
    pg.assert_no_changes();

    // In place: other privileges.
    pg.configure(&in_database(&grantee, &db, &grant("  privileges = [\"select\", \"INSERT\"]\n")));
    let update = pg.apply();
    assert!(update.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", update.all());
    assert_eq!(privileges("t1"), "INSERT,SELECT");
    pg.assert_no_changes();

    // Drift: revoked out of band.
    pg.sql(&db, &format!("REVOKE INSERT ON app.t2 FROM {}", ident(&grantee)));
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "{}", plan.all());
    pg.apply();
    assert_eq!(privileges("t2"), "INSERT,SELECT");

    // Named objects: another target, so a replacement.
    let named = grant("  objects    = [\"t1\"]\n  privileges = [\"SELECT\"]\n");
    pg.configure(&in_database(&grantee, &db, &named));
    let replace = pg.apply();
    assert!(replace.stdout.contains("1 added, 0 changed, 1 destroyed"), "{}", replace.all());
    assert_eq!((privileges("t1"), privileges("t2")), ("SELECT".to_string(), String::new()));

    // Import by its JSON target.
    pg.w.cairn_here(&["state", "rm", "postgresql_grant.g"]).success();
    let id = serde_json::json!({"role": grantee, "database": db, "schema": "app", "object_type": "table", "objects": ["t1"]});
    pg.cairn(&["import", "postgresql_grant.g", &id.to_string()]).success();
    pg.assert_no_changes();

    // Destroy revokes before the role and database are dropped (the graph's
    // order): no error about privileges the role still holds.
    pg.sql(&db, "DROP TABLE app.t1, app.t2");
    pg.cairn(&["destroy", "-auto-approve"]).success();
    assert_eq!(pg.sql("postgres", &format!("SELECT count(*) FROM pg_roles WHERE rolname = {}", lit(&grantee))), "0");
}

fn extension(extra: &str) -> String {
    format!(
        "resource \"postgresql_schema\" \"ext\" {{\n  name     = \"ext\"\n  database = postgresql_database.d.name\n}}\n\
         resource \"postgresql_extension\" \"e\" {{\n  name     = \"citext\"\n  database = postgresql_database.d.name\n{extra}}}\n"
    )
}

#[test]
fn extension_lifecycle() {
    let (owner, db) = (names("ext_owner"), names("ext_db"));
    let pg = Pg::new(&in_database(&owner, &db, &extension("")));
    pg.cairn(&["init"]).success();
    pg.cairn(&["validate"]).success();
    pg.apply();
    let row =
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'citext'";
    assert_eq!(pg.sql(&db, row), "public");
    let version = pg.w.attributes("postgresql_extension.e")["version"].as_str().unwrap().to_string();
    assert!(!version.is_empty());
    pg.assert_no_changes();

    // In place: another schema.
    pg.configure(&in_database(&owner, &db, &extension("  schema = postgresql_schema.ext.name\n")));
    let update = pg.apply();
    assert!(update.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", update.all());
    assert_eq!(pg.sql(&db, row), "ext");

    // Dropped out of band: planned back.
    pg.sql(&db, "DROP EXTENSION citext");
    let plan = pg.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("postgresql_extension.e will be created"), "{}", plan.all());
    pg.apply();
    assert_eq!(pg.sql(&db, row), "ext");

    // Another extension replaces it.
    let other = extension("  schema = postgresql_schema.ext.name\n").replace("\"citext\"", "\"pgcrypto\"");
    pg.configure(&in_database(&owner, &db, &other));
    let replace = pg.apply();
    assert!(replace.stdout.contains("1 added, 0 changed, 1 destroyed"), "{}", replace.all());
    assert_eq!(pg.sql(&db, "SELECT extname FROM pg_extension WHERE extname IN ('citext', 'pgcrypto')"), "pgcrypto");

    // Import as DATABASE.EXTENSION.
    pg.w.cairn_here(&["state", "rm", "postgresql_extension.e"]).success();
    pg.cairn(&["import", "postgresql_extension.e", &format!("{db}.pgcrypto")]).success();
    pg.assert_no_changes();

    pg.cairn(&["destroy", "-auto-approve"]).success();
}

#[test]
fn hostile_names_are_created_as_named_and_inject_nothing() {
    let canary = names("canary");
    let pg = Pg::new("");
    pg.sql("postgres", &format!("CREATE ROLE {}", ident(&canary)));
    let suffix = names("h");
    let role_name = format!("o'brien \"x\"; DROP ROLE {canary}; -- {suffix}");
    let db_name = format!("db; DROP DATABASE postgres; \\ {suffix}");
    let schema_name = "s \"q\" '; --";
    pg.configure(&format!(
        "{}resource \"postgresql_database\" \"d\" {{\n  name  = {}\n  owner = postgresql_role.r.name\n}}\n\
         resource \"postgresql_schema\" \"s\" {{\n  name     = {}\n  database = postgresql_database.d.name\n  owner    = postgresql_role.r.name\n}}\n\
         resource \"postgresql_grant\" \"g\" {{\n  role        = postgresql_role.r.name\n  database    = postgresql_database.d.name\n  schema      = postgresql_schema.s.name\n  object_type = \"schema\"\n  privileges  = [\"USAGE\"]\n}}\n",
        role(&role_name, "  login = true\n  password = \"p'; DROP ROLE postgres; --\\\\\"\n"),
        hcl(&db_name),
        hcl(schema_name),
    ));
    pg.cairn(&["init"]).success();
    pg.apply();
    assert_eq!(
        pg.sql(
            "postgres",
            &format!("SELECT count(*) FROM pg_roles WHERE rolname IN ({}, {})", lit(&role_name), lit(&canary))
        ),
        "2"
    );
    assert_eq!(
        pg.sql(
            "postgres",
            &format!(
                "SELECT pg_get_userbyid(datdba) = {} FROM pg_database WHERE datname = {}",
                lit(&role_name),
                lit(&db_name)
            )
        ),
        "t"
    );
    assert_eq!(pg.sql("postgres", "SELECT count(*) FROM pg_database WHERE datname = 'postgres'"), "1");
    assert_eq!(
        pg.sql(&db_name, &format!("SELECT has_schema_privilege({}, {}, 'USAGE')", lit(&role_name), lit(schema_name))),
        "t"
    );
    pg.assert_no_changes();
    pg.cairn(&["destroy", "-auto-approve"]).success();
    assert_eq!(
        pg.sql(
            "postgres",
            &format!("SELECT count(*) FROM pg_roles WHERE rolname IN ({}, {})", lit(&role_name), lit(&canary))
        ),
        "1"
    );
}

#[test]
fn a_role_that_still_owns_objects_is_not_dropped_and_the_error_says_why() {
    let name = names("owner");
    let pg = Pg::new(&role(&name, ""));
    pg.cairn(&["init"]).success();
    pg.apply();
    let owned = names("owned");
    pg.sql("postgres", &format!("CREATE DATABASE {} OWNER {}", ident(&owned), ident(&name)));
    let destroy = pg.cairn(&["destroy", "-auto-approve"]).failure();
    assert!(destroy.stderr.contains("postgresql_role.r"), "{}", destroy.all());
    assert!(destroy.stderr.contains("cannot be dropped because some objects depend on it"), "{}", destroy.all());
    assert!(destroy.stderr.contains(&format!("owner of database {owned}")), "{}", destroy.all());
    assert_eq!(pg.w.addresses(), ["postgresql_role.r"], "still in the state");
    pg.sql("postgres", &format!("DROP DATABASE {}", ident(&owned)));
    pg.cairn(&["destroy", "-auto-approve"]).success();
}

#[test]
fn a_server_stopped_during_an_apply_fails_clearly_and_the_state_keeps_what_was_created() {
    const ROLES: usize = 600;
    let server = Postgres::private();
    let w = Workdir::new();
    let roles: String = (0..ROLES)
        .map(|i| format!("resource \"postgresql_role\" \"r{i}\" {{\n  name = \"stopped_{i}\"\n}}\n"))
        .collect();
    w.write("main.tf", &format!("{}{roles}", provider_block(server.port)));
    w.cairn(&["init"]).success();
    // The plan's text goes to a file: a full pipe would stop the apply.
    let stdout = std::fs::File::create(w.path().join("apply.out")).unwrap();
    let apply = w
        .command(&["apply", "-auto-approve", "-parallelism=1"], &[])
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Stop the server once some roles exist (polled; no timing assumed).
    loop {
        let made: usize =
            server.psql("postgres", "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'stopped%'").parse().unwrap();
        if made >= 5 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.stop();
    let run: Run = apply.wait_with_output().unwrap().into();
    assert_ne!(run.code, 0, "{}", run.all());
    assert!(run.stderr.contains("Cannot reach PostgreSQL at 127.0.0.1:"), "{}", run.all());
    assert!(run.stderr.contains("Connection refused") || run.stderr.contains("connection refused"), "{}", run.all());
    let kept = w.addresses();
    assert!(
        kept.len() >= 5 && kept.len() < ROLES,
        "the roles made before the stop are in the state: {kept:?}\n{}",
        run.all()
    );
}

#[test]
fn tls_sslmodes_are_refused_saying_the_sandbox_has_none() {
    let pg = Pg::new(&role(&names("tls"), ""));
    pg.w.write("main.tf", &pg.w.read("main.tf").replace("sslmode  = \"disable\"", "sslmode  = \"require\""));
    pg.cairn(&["init"]).success();
    let plan = pg.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("sslmode \"require\" is not available: the sandbox has no TLS"), "{}", plan.all());
}

#[test]
fn providers_check_passes_against_a_test_database() {
    let port = Postgres::shared().port.to_string();
    let env = [("PGHOST", "127.0.0.1"), ("PGPORT", port.as_str()), ("PGSSLMODE", "disable")];
    let target = format!("127.0.0.1:{port}");
    let args = [
        "providers",
        "check",
        "postgresql",
        "-connect",
        &target,
        "-env",
        "PGHOST",
        "-env",
        "PGPORT",
        "-env",
        "PGSSLMODE",
    ];
    let run: Run = cairn_command(&args, &env).output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(!run.stdout.contains("FAIL"), "{}", run.all());
    // The lines of one resource type's steps.
    let section = |type_name: &str| -> String {
        let header = format!("resource {type_name:?}");
        let lines = run.stdout.lines().skip_while(|l| *l != header).skip(1);
        lines.take_while(|l| l.starts_with(' ')).collect::<Vec<_>>().join("\n")
    };
    // Generated names make real roles, databases and schemas on the test
    // server: created, read, planned again, replaced (a database's
    // generated encoding, a schema's generated database, do not exist, so
    // their replacements are skipped), deleted.
    let lifecycle = ["apply the create", "read what apply made", "plan again: no changes"];
    for (type_name, more) in [
        ("postgresql_role", &["delete", "read after delete"][..]),
        ("postgresql_database", &["plan a change that forces replacement", "delete the replaced object"][..]),
        ("postgresql_schema", &["plan a change that forces replacement", "delete the replaced object"][..]),
    ] {
        let steps = section(type_name);
        for step in lifecycle.iter().chain(more) {
            assert!(steps.contains(&format!("ok    {step}")), "{type_name}: {step}:\n{}", run.all());
        }
    }
    // A generated extension or object type does not exist: skipped, in
    // the server's or the provider's words.
    assert!(section("postgresql_extension").contains("is not available"), "{}", run.all());
    assert!(section("postgresql_grant").contains("Unknown object_type"), "{}", run.all());
}

#[test]
fn a_terraform_configuration_naming_the_community_provider_runs_on_the_bundled_one() {
    let pg = Pg::new(&role(&names("community"), ""));
    let main = pg.w.read("main.tf");
    pg.w.write(
        "main.tf",
        &format!(
            "terraform {{\n  required_providers {{\n    postgresql = {{\n      source  = \"cyrilgdn/postgresql\"\n      version = \"~> 1.22\"\n    }}\n  }}\n}}\n{main}"
        ),
    );
    let init = pg.cairn(&["init"]).success();
    assert!(init.stdout.contains("postgresql: bundled with cairn"), "{}", init.all());
    pg.cairn(&["validate"]).success();
}

/// A `postgresql` provider block for the shared server that logs in as
/// `username`: with `password` in the block when given, with `alias` when
/// given, and granted the environment variables `env`.
fn login_block(alias: Option<&str>, username: &str, password: Option<&str>, env: &[&str]) -> String {
    let port = Postgres::shared().port;
    let alias = alias.map(|a| format!("  alias    = {}\n", hcl(a))).unwrap_or_default();
    let password = password.map(|p| format!("  password = {}\n", hcl(p))).unwrap_or_default();
    let env = serde_json::to_string(env).unwrap();
    format!(
        "provider \"postgresql\" {{\n{alias}  host     = \"127.0.0.1\"\n  port     = {port}\n  username = {}\n{password}  \
         sslmode  = \"disable\"\n  sandbox {{\n    connect = [\"127.0.0.1:{port}\"]\n    env     = {env}\n  }}\n}}\n",
        hcl(username)
    )
}

/// A schema `name` in database `db`, made by the provider `provider`;
/// owned by whoever logs in there.
fn schema_by(provider: &str, name: &str, db: &str) -> String {
    format!(
        "resource \"postgresql_schema\" \"s\" {{\n  provider = {provider}\n  name     = {}\n  database = {db}\n}}\n",
        hcl(name)
    )
}

/// Who owns schema `schema` of database `db`, and how `role`'s password is
/// stored (`scram-sha-256` or `md5`), by psql as `postgres`.
fn owner_and_password_kind(pg: &Pg, db: &str, schema: &str, role: &str) -> (String, String) {
    let owner =
        pg.sql(db, &format!("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = {}", lit(schema)));
    let kind = pg.sql(
        "postgres",
        &format!(
            "SELECT CASE WHEN rolpassword LIKE 'SCRAM-SHA-256$%' THEN 'scram-sha-256' WHEN rolpassword LIKE 'md5%' \
             THEN 'md5' ELSE 'other' END FROM pg_authid WHERE rolname = {}",
            lit(role)
        ),
    );
    (owner, kind)
}

#[test]
fn a_role_cairn_made_with_a_password_logs_in_by_scram_sha_256_and_creates_a_schema() {
    let (app, db) = (names("scram_app"), names("scram_db"));
    let password = "correct horse; 'battery' \"staple\"";
    let pg = Pg::new(&format!(
        "{}{}resource \"postgresql_database\" \"d\" {{\n  name  = {}\n  owner = postgresql_role.r.name\n}}\n{}",
        role(&app, &format!("  login    = true\n  password = {}\n", hcl(password))),
        login_block(Some("app"), &app, Some(password), &[]),
        hcl(&db),
        schema_by("postgresql.app", "owned_by_app", "postgresql_database.d.name"),
    ));
    pg.cairn(&["init"]).success();
    pg.apply();
    // The schema's owner is the role the aliased provider logged in as, and
    // the server checked that login by SCRAM-SHA-256 (the only method
    // pg_hba.conf allows that role, and how its password is stored).
    assert_eq!(owner_and_password_kind(&pg, &db, "owned_by_app", &app), (app.clone(), "scram-sha-256".to_string()));
    pg.assert_no_changes();
    pg.cairn(&["destroy", "-auto-approve"]).success();
    assert_eq!(pg.sql("postgres", &format!("SELECT count(*) FROM pg_roles WHERE rolname = {}", lit(&app))), "0");
}

#[test]
fn a_wrong_password_fails_naming_the_role_and_the_server() {
    let name = names("wrong_pw");
    let pg = Pg::new("");
    pg.sql("postgres", &format!("CREATE ROLE {} LOGIN PASSWORD 'right'", ident(&name)));
    pg.w.write(
        "main.tf",
        &format!("{}{}", login_block(None, &name, Some("wrong"), &[]), schema_by("postgresql", &name, "\"postgres\"")),
    );
    pg.cairn(&["init"]).success();
    let apply = pg.cairn(&["apply", "-auto-approve"]).failure();
    let server = format!("127.0.0.1:{}", pg.server.port);
    assert!(
        apply.stderr.contains(&format!("PostgreSQL at {server} refused the login of role \"{name}\"")),
        "{}",
        apply.all()
    );
    assert!(apply.stderr.contains(&format!("password authentication failed for user \"{name}\"")), "{}", apply.all());
    assert!(apply.stderr.contains("postgresql_schema.s"), "{}", apply.all());
    assert!(pg.w.addresses().is_empty(), "nothing was made:\n{}", apply.all());
    pg.sql("postgres", &format!("DROP ROLE {}", ident(&name)));
}

#[test]
fn the_password_can_come_from_a_granted_pgpassword() {
    let name = names("env_pw");
    let pg = Pg::new("");
    pg.sql("postgres", &format!("CREATE ROLE {} LOGIN PASSWORD 'from the environment'", ident(&name)));
    pg.sql("postgres", &format!("CREATE DATABASE {} OWNER {}", ident(&name), ident(&name)));
    let config = |env: &[&str]| {
        format!("{}{}", login_block(None, &name, None, env), schema_by("postgresql", "from_env", &hcl(&name)))
    };
    let pgpassword = [("PGPASSWORD", "from the environment")];

    // Set but not granted: the provider does not see it, and says what to do.
    pg.w.write("main.tf", &config(&[]));
    pg.cairn(&["init"]).success();
    let apply = pg.w.cairn_env(&["apply", "-auto-approve"], &pgpassword).failure();
    assert!(
        apply.stderr.contains(&format!("asks role \"{name}\" for a password, and none is configured")),
        "{}",
        apply.all()
    );

    // Granted: SCRAM-SHA-256 with it.
    pg.w.write("main.tf", &config(&["PGPASSWORD"]));
    pg.w.cairn_env(&["apply", "-auto-approve"], &pgpassword).success();
    assert_eq!(owner_and_password_kind(&pg, &name, "from_env", &name), (name.clone(), "scram-sha-256".to_string()));
    pg.w.cairn_env(&["destroy", "-auto-approve"], &pgpassword).success();
    pg.sql("postgres", &format!("DROP DATABASE {}", ident(&name)));
    pg.sql("postgres", &format!("DROP ROLE {}", ident(&name)));
}

#[test]
fn a_role_with_an_md5_password_logs_in_by_md5() {
    let name = Postgres::MD5_ROLE;
    let pg = Pg::new("");
    // The one test that uses this role: a server started for this run has
    // none yet.
    pg.sql(
        "postgres",
        &format!("SET password_encryption = 'md5'; CREATE ROLE {} LOGIN PASSWORD 'md5 s3cret'", ident(name)),
    );
    pg.sql("postgres", &format!("CREATE DATABASE {} OWNER {}", ident(name), ident(name)));
    pg.w.write(
        "main.tf",
        &format!(
            "{}{}",
            login_block(None, name, Some("md5 s3cret"), &[]),
            schema_by("postgresql", "by_md5", &hcl(name))
        ),
    );
    pg.cairn(&["init"]).success();
    pg.apply();
    assert_eq!(owner_and_password_kind(&pg, name, "by_md5", name), (name.to_string(), "md5".to_string()));
    pg.assert_no_changes();
    pg.cairn(&["destroy", "-auto-approve"]).success();
    pg.sql("postgres", &format!("DROP DATABASE {}", ident(name)));
    pg.sql("postgres", &format!("DROP ROLE {}", ident(name)));
}
