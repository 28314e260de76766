//! The `postgresql` provider: PostgreSQL roles, databases, schemas, grants
//! and extensions, with the resource and attribute names of Terraform's
//! community provider (`cyrilgdn/postgresql`), so a configuration moves with
//! few edits.
//!
//! It talks to the server itself over one TCP connection per database it
//! works in (the `connect` grant of its `sandbox` block must name the
//! server's `host:port`), with the simple query protocol of
//! `postgres-protocol`; every name and value in a statement is quoted by
//! [`sql`]. TLS is not available in the sandbox: `sslmode` `disable`,
//! `allow` and `prefer` connect without it, `require` and `verify-*` are
//! refused with a message saying so.
//!
//! - `postgresql_role`: [`role`]
//! - `postgresql_database`: [`database`]
//! - `postgresql_schema`: [`mod@schema`]
//! - `postgresql_grant`: [`grant`]
//! - `postgresql_extension`: [`extension`]
//!
//! Each resource module builds SQL and reads catalog rows (pure functions,
//! unit-tested natively); this file holds the provider's configuration,
//! its connections, and the one apply/read/import driver they share.

#![warn(missing_docs)]

use std::cell::RefCell;

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, Path, PlanRequest, PlanResponse, Provider, ProviderSchema,
    ReadRequest, Schema, Value,
};

pub mod conn;
pub mod database;
pub mod extension;
pub mod grant;
pub mod role;
pub mod schema;
pub mod sql;
mod values;

use conn::{ConnParams, Connection, PgError};

/// The provider, configured: where the server is, and the connections
/// this instance holds (one per database, the most recently used last).
pub struct Postgresql {
    params: ConnParams,
    /// The database the provider connects to by default (`database`), where
    /// roles and databases are managed, and schemas, grants and extensions
    /// that name no other.
    default_database: String,
    /// The most connections this instance holds at once (`max_connections`).
    max_connections: usize,
    connections: RefCell<Vec<(String, Connection)>>,
}

/// SQLSTATEs that mean the object (or what it lives in) does not exist:
/// a read answers "gone", a delete succeeds.
const GONE_CODES: &[&str] = &[
    "3D000", // invalid_catalog_name: the database
    "42704", // undefined_object: a role, an extension
    "3F000", // invalid_schema_name
    "42P01", // undefined_table
    "42883", // undefined_function
];

/// What every resource kind implements: its schema, its checks and plan,
/// and its SQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Role,
    Database,
    Schema,
    Grant,
    Extension,
}

impl Kind {
    fn of(type_name: &str) -> Result<Kind, Diagnostic> {
        Ok(match type_name {
            "postgresql_role" => Kind::Role,
            "postgresql_database" => Kind::Database,
            "postgresql_schema" => Kind::Schema,
            "postgresql_grant" => Kind::Grant,
            "postgresql_extension" => Kind::Extension,
            other => return Err(Diagnostic::error(format!("Unknown resource type `{other}`"))),
        })
    }
}

/// Values the provider block supplies to resources that leave them out.
#[derive(Clone, Debug)]
pub struct Defaults {
    /// The provider's `database`.
    pub database: String,
}

impl Provider for Postgresql {
    fn schema() -> ProviderSchema {
        ProviderSchema::new()
            .provider(provider_schema())
            .resource("postgresql_role", role::schema())
            .resource("postgresql_database", database::schema())
            .resource("postgresql_schema", schema::schema())
            .resource("postgresql_grant", grant::schema())
            .resource("postgresql_extension", extension::schema())
    }

    fn configure(config: Value) -> Result<Self, Vec<Diagnostic>> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let text = |attr: &str, var: &str, default: &str| -> String {
            config.get_attr(attr).as_str().map(str::to_owned).or_else(|| env(var)).unwrap_or_else(|| default.to_owned())
        };
        let mut problems = Vec::new();
        let port = match config.get_attr("port").as_number() {
            Some(n) => n.as_i64().and_then(|p| u16::try_from(p).ok()).filter(|p| *p > 0),
            None => env("PGPORT").map_or(Some(5432), |p| p.parse().ok()),
        };
        let port = port.unwrap_or_else(|| {
            problems.push(Diagnostic::error("`port` must be a TCP port, 1 to 65535").at(Path::attr("port")));
            5432
        });
        let sslmode = text("sslmode", "PGSSLMODE", "prefer");
        if let Some(problem) = sslmode_problem(&sslmode) {
            problems.push(problem);
        }
        let max_connections = match config.get_attr("max_connections").as_i64() {
            // Unknown while planning (a block configured from planned
            // values): the default until apply says.
            None if config.get_attr("max_connections").is_null() || config.get_attr("max_connections").is_unknown() => {
                20
            }
            Some(n) if n >= 1 => n as usize,
            _ => {
                problems.push(
                    Diagnostic::error("`max_connections` must be a whole number of at least 1")
                        .at(Path::attr("max_connections")),
                );
                1
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let password = config.get_attr("password").as_str().map(str::to_owned).or_else(|| env("PGPASSWORD"));
        Ok(Postgresql {
            params: ConnParams {
                host: text("host", "PGHOST", "localhost"),
                port,
                username: text("username", "PGUSER", "postgres"),
                password,
            },
            default_database: text("database", "PGDATABASE", "postgres"),
            max_connections,
            connections: RefCell::new(Vec::new()),
        })
    }

    fn validate(&self, type_name: &str, config: &Value) -> Vec<Diagnostic> {
        match Kind::of(type_name) {
            Ok(Kind::Role) => role::validate(config),
            Ok(Kind::Database) => database::validate(config),
            Ok(Kind::Schema) => schema::validate(config),
            Ok(Kind::Grant) => grant::validate(config),
            Ok(Kind::Extension) => extension::validate(config),
            Err(d) => vec![d],
        }
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        let defaults = self.defaults();
        Ok(match Kind::of(&req.type_name)? {
            Kind::Role => role::plan(&req),
            Kind::Database => database::plan(&req),
            Kind::Schema => schema::plan(&req, &defaults),
            Kind::Grant => grant::plan(&req),
            Kind::Extension => extension::plan(&req, &defaults),
        })
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        let kind = Kind::of(&req.type_name)?;
        if req.is_delete() {
            self.delete(kind, &req.prior_state)?;
            return Ok(ApplyResponse::deleted());
        }
        let planned = &req.planned_state;
        let statements = match (kind, req.is_create()) {
            (Kind::Role, true) => role::create(planned, &req.config),
            (Kind::Role, false) => role::update(&req.prior_state, planned, &req.config),
            (Kind::Database, true) => database::create(planned),
            (Kind::Database, false) => database::update(&req.prior_state, planned),
            (Kind::Schema, true) => schema::create(planned),
            (Kind::Schema, false) => schema::update(&req.prior_state, planned),
            (Kind::Grant, _) => grant::apply(planned),
            (Kind::Extension, true) => extension::create(planned),
            (Kind::Extension, false) => extension::update(&req.prior_state, planned),
        };
        let db = self.database_of(kind, planned);
        if kind == Kind::Database {
            // CREATE/ALTER DATABASE cannot share a transaction: one at a time.
            for statement in &statements {
                self.execute(&db, statement)?;
            }
        } else if !statements.is_empty() {
            // One simple query: one transaction, all or nothing.
            self.execute(&db, &statements.join(";\n"))?;
        }
        // Nothing left to learn: the statements made exactly the plan (one
        // round trip instead of two).
        if planned.find_unknown().is_none() {
            return Ok(ApplyResponse::new(planned.clone()));
        }
        let Some(read) = self.read_object(kind, planned)? else {
            return Err(Diagnostic::error(format!("{} was not found right after it was written", req.type_name))
                .detail("Something else dropped it at the same time, or the server did not keep it.")
                .into());
        };
        Ok(ApplyResponse::new(values::fill_unknowns(planned, &read)))
    }

    fn read(&self, req: ReadRequest) -> Result<Option<Value>, Vec<Diagnostic>> {
        let kind = Kind::of(&req.type_name)?;
        Ok(self.read_object(kind, &req.current_state)?)
    }

    /// Import by the ids Terraform's provider documents. cairn also calls
    /// this with an interrupted create's idempotency key: this provider
    /// records none (a create is one transaction, so it made the whole
    /// object or nothing), and says how to adopt the object by its name.
    fn import(&self, type_name: &str, id: &str) -> Result<Value, Vec<Diagnostic>> {
        let kind = Kind::of(type_name)?;
        let defaults = self.defaults();
        let skeleton = match kind {
            Kind::Role => role::import(id),
            Kind::Database => database::import(id),
            Kind::Schema => schema::import(id),
            Kind::Grant => grant::import(id),
            Kind::Extension => extension::import(id, &defaults),
        };
        let found = match skeleton {
            Ok(skeleton) => self.read_object(kind, &skeleton)?,
            Err(_) if is_idempotency_key(id) => None,
            Err(e) => return Err(e.into()),
        };
        match found {
            Some(state) => Ok(state),
            None if is_idempotency_key(id) => Err(not_found_by_key(type_name).into()),
            None => Err(Diagnostic::error(format!("Cannot import {type_name} {id:?}"))
                .detail(format!("There is no such object on {}.", self.params.target()))
                .into()),
        }
    }
}

impl Postgresql {
    fn defaults(&self) -> Defaults {
        Defaults { database: self.default_database.clone() }
    }

    /// The database whose connection an object is managed through.
    fn database_of(&self, kind: Kind, state: &Value) -> String {
        match kind {
            Kind::Role | Kind::Database => self.default_database.clone(),
            // A database's access list is in the shared catalog: read it
            // from the default database, which is there even when the
            // granted one does not accept connections.
            Kind::Grant if state.get_attr("object_type").as_str() == Some("database") => self.default_database.clone(),
            Kind::Schema | Kind::Grant | Kind::Extension => {
                values::text(state, "database").unwrap_or_else(|| self.default_database.clone())
            }
        }
    }

    /// The object as the catalog has it now, `None` when it (or the
    /// database it lives in) does not exist.
    fn read_object(&self, kind: Kind, state: &Value) -> Result<Option<Value>, Diagnostic> {
        let db = self.database_of(kind, state);
        let query = match kind {
            Kind::Role => role::read_sql(state),
            Kind::Database => database::read_sql(state),
            Kind::Schema => schema::read_sql(state),
            Kind::Grant => grant::read_sql(state),
            Kind::Extension => extension::read_sql(state),
        };
        let rows = match self.query(&db, &query) {
            Ok(rows) => rows,
            Err(e) if e.code().is_some_and(|c| GONE_CODES.contains(&c)) => return Ok(None),
            Err(e) => return Err(self.diagnostic(&db, e)),
        };
        Ok(match kind {
            Kind::Role => role::from_rows(state, &rows),
            Kind::Database => database::from_rows(state, &rows),
            Kind::Schema => schema::from_rows(state, &rows),
            Kind::Grant => grant::from_rows(state, &rows),
            Kind::Extension => extension::from_rows(state, &rows),
        })
    }

    /// Drops the object; one already gone (or in a database already gone)
    /// is success.
    fn delete(&self, kind: Kind, state: &Value) -> Result<(), Diagnostic> {
        let db = self.database_of(kind, state);
        let statements = match kind {
            Kind::Role => role::delete(state),
            Kind::Database => {
                // This instance's own connections to it would keep it alive.
                let name = values::text(state, "name").unwrap_or_default();
                self.connections.borrow_mut().retain(|(d, _)| *d != name);
                database::delete(state)
            }
            Kind::Schema => schema::delete(state),
            Kind::Grant => grant::revoke(state),
            Kind::Extension => extension::delete(state),
        };
        let batches = if kind == Kind::Database { statements } else { vec![statements.join(";\n")] };
        for batch in batches {
            match self.execute(&db, &batch) {
                Ok(()) => {}
                Err(d) if d.code.as_deref().is_some_and(|c| GONE_CODES.contains(&c)) => return Ok(()),
                Err(d) => return Err(d.diagnostic),
            }
        }
        Ok(())
    }

    /// Runs statements in `database`, for their effect.
    fn execute(&self, database: &str, sql: &str) -> Result<(), CodedDiagnostic> {
        match self.query(database, sql) {
            Ok(_) => Ok(()),
            Err(e) => {
                Err(CodedDiagnostic { code: e.code().map(str::to_owned), diagnostic: self.diagnostic(database, e) })
            }
        }
    }

    /// Runs `sql` on this instance's connection to `database`, opening one
    /// when there is none. A kept connection found broken (the server
    /// restarted, or ended the idle session) is replaced once, so that the
    /// error a user sees is about the server now, not about an old session.
    fn query(&self, database: &str, sql: &str) -> Result<Vec<conn::Row>, PgError> {
        let reused = self.take_connection(database);
        let was_reused = reused.is_some();
        let mut conn = match reused {
            Some(c) => c,
            None => Connection::open(&self.params, database)?,
        };
        let mut result = conn.query(sql);
        if was_reused && result.as_ref().is_err_and(PgError::breaks_connection) {
            conn = Connection::open(&self.params, database)?;
            result = conn.query(sql);
        }
        match &result {
            Err(e) if e.breaks_connection() => {}
            _ => self.keep_connection(database, conn),
        }
        result
    }

    fn take_connection(&self, database: &str) -> Option<Connection> {
        let mut connections = self.connections.borrow_mut();
        let at = connections.iter().position(|(d, _)| d == database)?;
        Some(connections.remove(at).1)
    }

    /// Keeps `conn` as the most recently used; closes the least recently
    /// used beyond `max_connections`.
    fn keep_connection(&self, database: &str, conn: Connection) {
        let mut connections = self.connections.borrow_mut();
        connections.push((database.to_string(), conn));
        while connections.len() > self.max_connections {
            let (_, oldest) = connections.remove(0);
            oldest.close();
        }
    }

    /// The user's message for a failed statement or connection.
    fn diagnostic(&self, database: &str, e: PgError) -> Diagnostic {
        let target = self.params.target();
        match e {
            PgError::Server(server) if is_login_refused(&server.code) => {
                let summary = format!(
                    "PostgreSQL at {target} refused the login of role {:?}: {}",
                    self.params.username, server.message
                );
                let detail = format!(
                    "{} {} (database {database:?} on {target}). Check the provider's `username` and `password` (or \
                     the PGUSER and PGPASSWORD its sandbox grants), and the server's pg_hba.conf.",
                    server.severity, server.code
                );
                Diagnostic::error(summary).detail(detail)
            }
            PgError::Server(server) => {
                let summary = format!("PostgreSQL error: {}", server.message);
                let mut detail = format!("{} {} (database {database:?} on {target})", server.severity, server.code);
                if let Some(d) = server.detail {
                    detail.push_str(&format!("\nDETAIL: {d}"));
                }
                if let Some(h) = server.hint {
                    detail.push_str(&format!("\nHINT: {h}"));
                }
                Diagnostic::error(summary).detail(detail)
            }
            PgError::Io { .. } => {
                Diagnostic::error(format!("Cannot reach PostgreSQL at {target}: {e}")).detail(format!(
                    "The provider connects to {target} (database {database:?}) over TCP. Check that the server is \
                 running, and that the provider's sandbox grants the address: sandbox {{ connect = [\"{target}\"] }}."
                ))
            }
            PgError::Protocol(text) => {
                Diagnostic::error(format!("Cannot talk to PostgreSQL at {target} (database {database:?}): {text}"))
            }
        }
    }
}

/// Whether SQLSTATE `code` is the server refusing a login: class 28,
/// `invalid_authorization_specification` (no pg_hba.conf entry, no such
/// role) and `invalid_password`.
fn is_login_refused(code: &str) -> bool {
    code == "28000" || code == "28P01"
}

/// A diagnostic with the SQLSTATE it came from, for callers that forgive
/// some codes.
struct CodedDiagnostic {
    code: Option<String>,
    diagnostic: Diagnostic,
}

impl From<CodedDiagnostic> for Vec<Diagnostic> {
    fn from(d: CodedDiagnostic) -> Vec<Diagnostic> {
        vec![d.diagnostic]
    }
}

/// Whether `id` has the form of cairn's idempotency keys: 20 lowercase hex
/// digits.
fn is_idempotency_key(id: &str) -> bool {
    id.len() == 20 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The answer to recovery's question about an interrupted create.
fn not_found_by_key(type_name: &str) -> Diagnostic {
    Diagnostic::error(format!("{type_name} records no idempotency keys")).detail(
        "The postgresql provider creates each object in one statement or transaction, so an interrupted create \
         made the whole object or nothing. If the object the configuration names exists, adopt it by its id \
         with `cairn import ADDRESS ID` (a role or database by name, a schema or extension as DATABASE.NAME); \
         otherwise the next apply creates it.",
    )
}

/// Why `sslmode` cannot be used, if it cannot.
fn sslmode_problem(sslmode: &str) -> Option<Diagnostic> {
    match sslmode {
        "disable" | "allow" | "prefer" => None,
        "require" | "verify-ca" | "verify-full" => Some(
            Diagnostic::error(format!("sslmode {sslmode:?} is not available: the sandbox has no TLS"))
                .detail(
                    "cairn's postgresql provider connects over the sandbox's plain TCP grant and cannot encrypt the \
                     connection. Use sslmode \"disable\" or \"prefer\" (which connects without TLS) on a trusted \
                     network, or reach the server through a local TLS tunnel.",
                )
                .at(Path::attr("sslmode")),
        ),
        other => Some(
            Diagnostic::error(format!("Unknown sslmode {other:?}"))
                .detail("Expected one of disable, allow, prefer, require, verify-ca, verify-full.")
                .at(Path::attr("sslmode")),
        ),
    }
}

/// The `provider "postgresql"` block.
fn provider_schema() -> Schema {
    Schema::new(0)
        .description("Where the PostgreSQL server is and how to log in. Unset values come from the PG* environment variables the sandbox grants (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE).")
        .attribute("host", Attr::string().optional().description("The server's host name or address; default PGHOST or \"localhost\". The sandbox's `connect` grant must name it with the port."))
        .attribute("port", Attr::number().optional().description("The server's port; default PGPORT or 5432."))
        .attribute("username", Attr::string().optional().description("The role to log in as; default PGUSER or \"postgres\"."))
        .attribute("password", Attr::string().optional().sensitive().description("Its password (md5, SCRAM-SHA-256 or cleartext authentication); default PGPASSWORD."))
        .attribute("database", Attr::string().optional().description("The database to connect to, and the default of resources that name none; default PGDATABASE or \"postgres\"."))
        .attribute("sslmode", Attr::string().optional().description("disable, allow or prefer (all connect without TLS, which the sandbox does not offer); require and verify-* are refused. Default PGSSLMODE or \"prefer\"."))
        .attribute("max_connections", Attr::number().optional().description("The most connections one provider instance holds open (one per database it works in); default 20. At most sandbox max_concurrency instances run at once."))
}

#[cfg(target_arch = "wasm32")]
cairn_sdk::export_provider!(Postgresql, name = "postgresql");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_well_formed() {
        assert_eq!(Postgresql::schema().check(), Ok(()));
    }

    #[test]
    fn an_idempotency_key_is_told_apart_from_a_name() {
        assert!(is_idempotency_key("0123456789abcdef0123"));
        assert!(!is_idempotency_key("0123456789ABCDEF0123"));
        assert!(!is_idempotency_key("app"));
        assert!(not_found_by_key("postgresql_role").to_string().contains("cairn import"));
    }

    #[test]
    fn tls_modes_are_refused_with_the_reason() {
        assert!(sslmode_problem("disable").is_none());
        assert!(sslmode_problem("prefer").is_none());
        let refused = sslmode_problem("require").unwrap();
        assert!(refused.to_string().contains("the sandbox has no TLS"), "{refused}");
        assert!(sslmode_problem("verify-full").is_some());
        assert!(sslmode_problem("bogus").unwrap().to_string().contains("Unknown sslmode"));
    }

    #[test]
    fn configuration_takes_terraform_names_and_defaults() {
        let config = Value::object([
            ("host", Value::from("db.internal")),
            ("port", Value::from(6432)),
            ("username", Value::from("admin")),
            ("password", Value::from("s3cret")),
            ("database", Value::from("app")),
            ("sslmode", Value::from("disable")),
            ("max_connections", Value::from(3)),
        ]);
        let p = Postgresql::configure(config).unwrap_or_else(|_| panic!("configures"));
        assert_eq!(p.params.target(), "db.internal:6432");
        assert_eq!(p.params.username, "admin");
        assert_eq!(p.params.password.as_deref(), Some("s3cret"));
        assert_eq!((p.default_database.as_str(), p.max_connections), ("app", 3));

        let bad = Value::object([("port", Value::from(70000)), ("sslmode", Value::from("require"))]);
        let Err(problems) = Postgresql::configure(bad) else { panic!("a bad port and sslmode are refused") };
        assert_eq!(problems.len(), 2);
    }

    #[test]
    fn a_configuration_unknown_while_planning_is_taken_as_the_defaults() {
        // A provider block configured from values planned but not known
        // yet (a new server's address, a password made in the same run).
        let unknown = ["host", "port", "username", "password", "database", "sslmode", "max_connections"];
        let config = Value::object(unknown.map(|name| (name, Value::unknown())));
        let p = Postgresql::configure(config).unwrap_or_else(|_| panic!("an unknown configuration is refused"));
        assert_eq!(p.max_connections, 20);
    }
}
