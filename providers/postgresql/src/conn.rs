//! One connection to a PostgreSQL server: a blocking [`TcpStream`] (on
//! `wasm32-wasip2`, `wasi:sockets`, which the host allows only to the
//! targets of the provider's `connect` grant) carrying the messages of
//! `postgres-protocol`. Startup, authentication (trust, cleartext, md5,
//! SCRAM-SHA-256) and the simple query protocol; values come back as text.
//!
//! This module does not build SQL (see [`crate::sql`]) and knows nothing of
//! resources.

use std::fmt;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator as _;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::{ErrorFields, Message};
use postgres_protocol::message::frontend;

/// Where and as whom to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnParams {
    /// Host name or address of the server.
    pub host: String,
    /// TCP port of the server.
    pub port: u16,
    /// The role to log in as.
    pub username: String,
    /// Its password, when the server asks for one.
    pub password: Option<String>,
}

impl ConnParams {
    /// `host:port`, as the `connect` grant names it.
    pub fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// An error the server reported (an `ErrorResponse`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerError {
    /// `ERROR`, `FATAL` or `PANIC`.
    pub severity: String,
    /// The SQLSTATE code, e.g. `42704` (undefined object).
    pub code: String,
    /// The primary message.
    pub message: String,
    /// The server's detail, if any (for a role that still owns objects:
    /// which).
    pub detail: Option<String>,
    /// The server's hint, if any.
    pub hint: Option<String>,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.severity, self.code, self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL: {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT: {hint}")?;
        }
        Ok(())
    }
}

/// Why a connection or a query failed.
#[derive(Debug)]
pub enum PgError {
    /// The network: connecting, reading or writing (`what` says which).
    Io {
        /// What was being done, e.g. "connect to 127.0.0.1:5432".
        what: String,
        /// The operating system's (or WASI's) error.
        err: std::io::Error,
    },
    /// The server answered with an error.
    Server(ServerError),
    /// The server said something this client does not speak, or asked
    /// for an authentication it cannot do.
    Protocol(String),
}

impl PgError {
    /// The SQLSTATE of a server error.
    pub fn code(&self) -> Option<&str> {
        match self {
            PgError::Server(e) => Some(&e.code),
            _ => None,
        }
    }

    /// Whether the connection is unusable after this error (network or
    /// protocol), so that it must be dropped and a new one opened.
    pub fn breaks_connection(&self) -> bool {
        !matches!(self, PgError::Server(e) if e.severity == "ERROR")
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgError::Io { what, err } => write!(f, "cannot {what}: {err}"),
            PgError::Server(e) => e.fmt(f),
            PgError::Protocol(text) => f.write_str(text),
        }
    }
}

/// One row of a result, each value as text (`None` for SQL NULL).
pub type Row = Vec<Option<String>>;

/// An open, authenticated connection to one database.
pub struct Connection {
    stream: TcpStream,
    /// Bytes read but not yet parsed into messages.
    incoming: BytesMut,
    /// The target, for messages.
    target: String,
    /// The number of round trips (queries) made on it, for the benchmark's
    /// log line.
    pub round_trips: u64,
}

impl Connection {
    /// Connects to `params` and logs into `database`.
    pub fn open(params: &ConnParams, database: &str) -> Result<Connection, PgError> {
        let target = params.target();
        let stream = TcpStream::connect((params.host.as_str(), params.port))
            .map_err(|err| PgError::Io { what: format!("connect to {target}"), err })?;
        // Statements are small and each waits for its answer.
        let _ = stream.set_nodelay(true);
        let mut conn = Connection { stream, incoming: BytesMut::with_capacity(8192), target, round_trips: 0 };
        conn.startup(params, database)?;
        Ok(conn)
    }

    /// The startup message, authentication, and the server's parameters up
    /// to its first `ReadyForQuery`.
    fn startup(&mut self, params: &ConnParams, database: &str) -> Result<(), PgError> {
        let mut out = BytesMut::new();
        let startup = [
            ("user", params.username.as_str()),
            ("database", database),
            ("application_name", "cairn-provider-postgresql"),
            ("client_encoding", "UTF8"),
            // Timestamps (a role's `valid_until`) read the same everywhere.
            ("TimeZone", "UTC"),
        ];
        frontend::startup_message(startup.iter().copied(), &mut out).map_err(|e| self.io("encode startup", e))?;
        self.send(&out)?;
        let mut scram: Option<ScramSha256> = None;
        loop {
            match self.receive()? {
                Message::AuthenticationOk => {}
                Message::AuthenticationCleartextPassword => {
                    let password = need_password(params)?;
                    self.send_with(|buf| frontend::password_message(password.as_bytes(), buf))?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let password = need_password(params)?;
                    let hash = md5_hash(params.username.as_bytes(), password.as_bytes(), body.salt());
                    self.send_with(|buf| frontend::password_message(hash.as_bytes(), buf))?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut mechanisms = body.mechanisms();
                    let mut offered = Vec::new();
                    while let Some(m) = mechanisms.next().map_err(|e| self.io("read SASL mechanisms", e))? {
                        offered.push(m.to_string());
                    }
                    if !offered.iter().any(|m| m == SCRAM_SHA_256) {
                        return Err(PgError::Protocol(format!(
                            "the server at {} offers SASL mechanisms {offered:?}; this provider speaks {SCRAM_SHA_256}",
                            self.target
                        )));
                    }
                    let password = need_password(params)?;
                    // No TLS, so no channel binding.
                    let s = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
                    self.send_with(|buf| frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), buf))?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram.as_mut().ok_or_else(|| unexpected("SASL continue before SASL start"))?;
                    s.update(body.data())
                        .map_err(|e| PgError::Protocol(format!("SCRAM authentication failed: {e}")))?;
                    let reply = s.message().to_vec();
                    self.send_with(|buf| frontend::sasl_response(&reply, buf))?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram.as_mut().ok_or_else(|| unexpected("SASL final before SASL start"))?;
                    s.finish(body.data())
                        .map_err(|e| PgError::Protocol(format!("the server's SCRAM signature did not verify: {e}")))?;
                }
                Message::ParameterStatus(_) | Message::BackendKeyData(_) | Message::NoticeResponse(_) => {}
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(PgError::Server(server_error(body.fields()))),
                Message::AuthenticationGss | Message::AuthenticationSspi | Message::AuthenticationKerberosV5 => {
                    return Err(PgError::Protocol(format!(
                        "the server at {} asks for GSSAPI/SSPI/Kerberos authentication, which this provider does not \
                         speak; use password (scram-sha-256 or md5) authentication",
                        self.target
                    )));
                }
                _ => return Err(unexpected("a message during startup")),
            }
        }
    }

    /// Runs `sql` (one or more statements, in one implicit transaction)
    /// with the simple query protocol, and returns the rows of its last
    /// result. The first error ends it, and the whole string is rolled back.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Row>, PgError> {
        self.round_trips += 1;
        self.send_with(|buf| frontend::query(sql, buf))?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            match self.receive()? {
                Message::RowDescription(_) => rows.clear(),
                Message::DataRow(body) => {
                    let mut values = Vec::new();
                    let mut ranges = body.ranges();
                    while let Some(range) = ranges.next().map_err(|e| self.io("read a row", e))? {
                        values.push(range.map(|r| String::from_utf8_lossy(&body.buffer()[r]).into_owned()));
                    }
                    rows.push(values);
                }
                Message::ErrorResponse(body) => error = Some(server_error(body.fields())),
                Message::CommandComplete(_)
                | Message::EmptyQueryResponse
                | Message::NoticeResponse(_)
                | Message::ParameterStatus(_)
                | Message::NotificationResponse(_) => {}
                Message::ReadyForQuery(_) => {
                    return match error {
                        Some(e) => Err(PgError::Server(e)),
                        None => Ok(rows),
                    };
                }
                _ => return Err(unexpected("a message in a query's answer")),
            }
        }
    }

    /// Says goodbye; the server ends the session.
    pub fn close(mut self) {
        let _ = self.send_with(|buf| {
            frontend::terminate(buf);
            Ok(())
        });
    }

    fn send_with(&mut self, encode: impl FnOnce(&mut BytesMut) -> std::io::Result<()>) -> Result<(), PgError> {
        let mut out = BytesMut::new();
        encode(&mut out).map_err(|e| self.io("encode a message", e))?;
        self.send(&out)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), PgError> {
        let target = self.target.clone();
        self.stream.write_all(bytes).map_err(|err| PgError::Io { what: format!("write to {target}"), err })
    }

    /// The next message from the server, reading as much as it takes.
    fn receive(&mut self) -> Result<Message, PgError> {
        loop {
            if let Some(message) = Message::parse(&mut self.incoming).map_err(|e| self.io("parse a message", e))? {
                return Ok(message);
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).map_err(|e| self.io("read", e))?;
            if n == 0 {
                return Err(PgError::Io {
                    what: format!("read from {}", self.target),
                    err: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the server closed the connection"),
                });
            }
            self.incoming.extend_from_slice(&chunk[..n]);
        }
    }

    fn io(&self, what: &str, err: std::io::Error) -> PgError {
        PgError::Io { what: format!("{what} ({})", self.target), err }
    }
}

fn need_password(params: &ConnParams) -> Result<&str, PgError> {
    params.password.as_deref().ok_or_else(|| {
        PgError::Protocol(format!(
            "the server at {} asks role {:?} for a password, and none is configured: set `password` in the provider \
             block, or grant PGPASSWORD (sandbox {{ env = [\"PGPASSWORD\"] }})",
            params.target(),
            params.username
        ))
    })
}

fn unexpected(what: &str) -> PgError {
    PgError::Protocol(format!("the server sent {what} this client did not expect"))
}

/// The fields of an `ErrorResponse`.
fn server_error(mut fields: ErrorFields<'_>) -> ServerError {
    let mut e = ServerError::default();
    while let Ok(Some(field)) = fields.next() {
        let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'V' => e.severity = value,
            b'S' if e.severity.is_empty() => e.severity = value,
            b'C' => e.code = value,
            b'M' => e.message = value,
            b'D' => e.detail = Some(value),
            b'H' => e.hint = Some(value),
            _ => {}
        }
    }
    e
}
