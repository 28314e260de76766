//! The PostgreSQL backend (`backend "pg"`): the state of a configuration
//! kept in one schema of a PostgreSQL database, so that a team shares it.
//!
//! It keeps, in `schema_name` (created with its tables when missing):
//!
//! - `cairn_states`: every version of the state ever written (lineage,
//!   serial, the state's JSON, when it was written), one row each, keyed by
//!   serial. The newest row is the state; the others are its history.
//! - `cairn_journal`: the journal of the apply under way, one row per
//!   flush, holding the lines the local journal writes for its records:
//!   an intent is inserted (and committed) before its provider call; a
//!   result, which no step waits for, goes with the next intent's insert
//!   or within 20 ms; records written while a flush runs share the next.
//!   A crash leaves exactly what the local journal leaves, and the next
//!   [`Backend::lock`] replays it with the same code
//!   (`journal::replay_lines`).
//! - `cairn_lock`: who holds the lock (the same [`LockHolder`] the local
//!   lock file holds, plus the database session that holds it), for the
//!   message a second run gets and for `cairn force-unlock`.
//!
//! The lock itself is a session-level advisory lock
//! (`pg_try_advisory_lock`) on a key derived from the schema's name, held
//! by a connection of its own for the whole run: PostgreSQL releases it when
//! that connection ends, however the process ends. Writes go through a
//! second connection, each in a transaction that locks `cairn_states` and
//! refuses a state whose serial is older than the newest row's (or of
//! another lineage), so two writers can never interleave even if the lock
//! was broken; and a run whose lock connection was closed (by
//! `force-unlock`) writes nothing more.
//!
//! PostgreSQL is reached with tokio-postgres on a thread of the backend's
//! own (one current-thread tokio runtime, which runs both connections):
//! the [`Backend`] trait is synchronous and is called from inside the
//! engine's runtime, where blocking on another runtime is not allowed.
//! Requests run on that thread one after the other, in the order they were
//! made.

use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError, mpsc};

use futures_util::future::BoxFuture;
use sha2::{Digest, Sha256};
use tokio_postgres::config::SslMode;
use tokio_postgres::{Client, IsolationLevel, NoTls};

use super::journal::{self, Encoder, Found, Record, Tail};
use super::lock::LockHolder;
use super::{Backend, State, StateError, StateJournal, Unsynced};

/// The schema Terraform's `pg` backend uses when none is given.
pub const DEFAULT_SCHEMA: &str = "terraform_remote_state";

/// The environment variable that holds the connection string when the
/// configuration does not (the one Terraform's `pg` backend reads).
pub const CONN_STR_VARIABLE: &str = "PG_CONN_STR";

/// How many times, and how far apart, a refused run looks for the lock
/// holder's details.
const HOLDER_TRIES: usize = 20;
const HOLDER_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// What the connection string's `sslmode` may be.
const SUPPORTED_SSLMODES: &str = "the pg backend connects without TLS, so sslmode may be disable or prefer (the \
     default, which connects without TLS here); use it over a network you trust (a loopback, a tunnel)";

/// A state kept in PostgreSQL.
pub struct PgBackend {
    /// The connection string.
    conn_str: String,
    /// The schema holding the tables.
    schema: String,
    /// For messages: where the state is, without the password.
    describe: String,
    /// The connections, made on first use.
    worker: Option<Worker>,
    /// This run's lock, while held.
    holder: Option<LockHolder>,
    /// Writes allowed without the lock (`-lock=false`).
    unlocked: bool,
}

impl std::fmt::Debug for PgBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the connection string: it may hold a password.
        f.debug_struct("PgBackend").field("state", &self.describe).finish_non_exhaustive()
    }
}

impl PgBackend {
    /// The state in schema `schema` of the database `conn_str` names
    /// (a `postgres://` URL or `key=value` pairs), not connected yet: a
    /// connection is made on first use.
    ///
    /// Fails when the connection string cannot be read, or asks for TLS,
    /// which this backend does not speak yet (`sslmode=disable` or the
    /// default `prefer` connect without it).
    pub fn new(conn_str: &str, schema: &str) -> Result<PgBackend, StateError> {
        let describe = describe(conn_str, schema);
        let err = |message: String| StateError::Database { state: describe.clone(), message };
        let config = tokio_postgres::Config::from_str(conn_str).map_err(|e| {
            let tls = if conn_str.contains("sslmode") { format!(" ({SUPPORTED_SSLMODES})") } else { String::new() };
            err(format!("the connection string is not valid: {e}{tls}"))
        })?;
        if !matches!(config.get_ssl_mode(), SslMode::Disable | SslMode::Prefer) {
            return Err(err(format!("a TLS sslmode is not supported: {SUPPORTED_SSLMODES}")));
        }
        Ok(PgBackend {
            conn_str: conn_str.to_string(),
            schema: schema.to_string(),
            describe,
            worker: None,
            holder: None,
            unlocked: false,
        })
    }

    /// The lock ID of this run's lock, while it holds it.
    pub fn lock_id(&self) -> Option<&str> {
        self.holder.as_ref().map(|h| h.id.as_str())
    }

    /// The connections, made now if not yet.
    fn worker(&mut self) -> Result<&Worker, StateError> {
        if self.worker.is_none() {
            self.worker = Some(Worker::start(&self.conn_str, &self.schema, &self.describe)?);
        }
        self.worker.as_ref().ok_or_else(|| unreachable_worker(&self.describe))
    }

    /// The connections, for methods that take `&self` (reading): made on
    /// first use like [`PgBackend::worker`], through a fresh worker when
    /// none is running yet.
    fn reader(&self) -> Result<ReaderRef<'_>, StateError> {
        match &self.worker {
            Some(w) => Ok(ReaderRef::Borrowed(w)),
            None => Ok(ReaderRef::Owned(Worker::start(&self.conn_str, &self.schema, &self.describe)?)),
        }
    }

    /// Releases a lock this process does not hold: ends the database
    /// session that holds it (which releases its advisory lock) and forgets
    /// its holder. `id` must be the holder's lock ID, as the `Locked` error
    /// shows it.
    fn break_lock(&mut self, id: &str) -> Result<(), StateError> {
        let id = id.to_string();
        let state = self.describe.clone();
        self.worker()?.call(move |s| Box::pin(s.force_unlock(id, state)))
    }
}

impl Drop for PgBackend {
    /// Releases the lock before returning, so that the next run (or the
    /// next command of a script) finds it free; closing the connection
    /// would release it too, a moment later.
    fn drop(&mut self) {
        if let (Some(worker), Some(_)) = (&self.worker, &self.holder) {
            let _ = worker.call(|s| {
                Box::pin(async move {
                    s.release().await;
                    Ok(())
                })
            });
        }
    }
}

/// A worker borrowed from the backend, or one made for a single read.
enum ReaderRef<'a> {
    Borrowed(&'a Worker),
    Owned(Worker),
}

impl std::ops::Deref for ReaderRef<'_> {
    type Target = Worker;
    fn deref(&self) -> &Worker {
        match self {
            ReaderRef::Borrowed(w) => w,
            ReaderRef::Owned(w) => w,
        }
    }
}

impl Backend for PgBackend {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn lock(&mut self) -> Result<(), StateError> {
        if self.holder.is_some() {
            return Ok(());
        }
        let holder = LockHolder::current();
        let for_worker = holder.clone();
        let state = self.describe.clone();
        self.worker()?.call(move |s| Box::pin(s.lock(for_worker, state)))?;
        self.holder = Some(holder);
        self.recover()
    }

    fn read(&self) -> Result<State, StateError> {
        let (mut state, rows) = self.reader()?.call(|s| Box::pin(s.read()))?;
        if !rows.is_empty() {
            replay_rows(&self.describe, &rows, &mut state)?;
        }
        Ok(state)
    }

    fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        self.expect_lock()?;
        let previous_serial = state.serial;
        state.serial += 1;
        state.format_version = super::FORMAT_VERSION;
        state.cairn_version = super::CAIRN_VERSION.to_string();
        state.normalize();
        let text = match serde_json::to_string(&*state) {
            Ok(text) => text,
            Err(source) => {
                state.serial = previous_serial;
                return Err(StateError::Encode { path: self.describe.clone().into(), source });
            }
        };
        let (lineage, serial) = (state.lineage.clone(), state.serial);
        let describe = self.describe.clone();
        let result = self.worker()?.call(move |s| Box::pin(s.write(lineage, serial, text, describe)));
        if result.is_err() {
            // The serial counts writes that landed; the next attempt reuses it.
            state.serial = previous_serial;
        }
        result
    }

    fn start_journal(&mut self, state: &State) -> Result<Box<dyn StateJournal>, StateError> {
        self.expect_lock()?;
        let (encoder, text) = Encoder::start(&state.lineage, state.serial)
            .map_err(|source| StateError::Encode { path: self.describe.clone().into(), source })?;
        let worker = self.worker()?;
        worker.call(move |s| Box::pin(s.start_journal(text)))?;
        Ok(Box::new(PgJournal {
            worker: worker.clone(),
            describe: self.describe.clone(),
            pending: Arc::new(Mutex::new(Pending::default())),
            next_seq: 1,
            encoder,
        }))
    }

    fn history(&self) -> Result<Vec<State>, StateError> {
        self.reader()?.call(|s| Box::pin(s.history()))
    }

    fn force_unlock(&mut self, id: &str) -> Result<(), StateError> {
        self.break_lock(id)
    }

    fn proceed_unlocked(&mut self) -> Result<(), StateError> {
        let (_, rows) = self.worker()?.call(|s| Box::pin(s.read()))?;
        if !rows.is_empty() {
            return Err(StateError::JournalWithoutLock { state: self.describe.clone() });
        }
        self.worker()?.call(|s| {
            Box::pin(async move {
                s.unlocked = true;
                Ok(())
            })
        })?;
        self.unlocked = true;
        Ok(())
    }
}

impl PgBackend {
    /// Refuses to change the state without this run's lock, or once it was
    /// lost (another process forced it open).
    fn expect_lock(&mut self) -> Result<(), StateError> {
        if self.unlocked {
            return Ok(());
        }
        if self.holder.is_none() {
            return Err(StateError::ReadOnly { path: self.describe.clone().into() });
        }
        let state = self.describe.clone();
        self.worker()?.call(move |s| Box::pin(async move { s.check_lock(&state) }))
    }

    /// Folds the journal an apply that crashed left into a new version of
    /// the state, then clears it, as the local backend does with its file.
    fn recover(&mut self) -> Result<(), StateError> {
        let (mut state, rows) = self.worker()?.call(|s| Box::pin(s.read()))?;
        if rows.is_empty() {
            return Ok(());
        }
        if replay_rows(&self.describe, &rows, &mut state)? == Found::Replayed {
            tracing::warn!(state = %self.describe, "recovering the state from the journal of an interrupted apply");
            self.write(&mut state)?;
        }
        self.worker()?.call(|s| Box::pin(s.clear_journal()))
    }
}

/// Replays the journal's rows, in order, over `state`: each holds the
/// lines of the records one flush wrote (one record a row before format 2).
fn replay_rows(describe: &str, rows: &[String], state: &mut State) -> Result<Found, StateError> {
    let lines: Vec<&[u8]> = rows.iter().flat_map(|row| row.split('\n')).map(str::as_bytes).collect();
    journal::replay_lines(std::path::Path::new(describe), &lines, Tail::Whole, state)
}

/// The journal of one apply, as rows of `cairn_journal`.
///
/// Records are numbered here, in the order they are written, and queued.
/// An intent, and any record somebody waits for ([`Unsynced`]), asks the
/// backend's thread to insert what is queued, so records written while an
/// insert runs share the next one (as the local journal shares an
/// `fdatasync`). A record nobody waits for (an instance's new state, an
/// intent's end) asks for no insert of its own: it goes with the next one,
/// or within [`journal::LINGER_FOR`], or when the journal is dropped — as
/// the local journal's lingering records do.
struct PgJournal {
    worker: Worker,
    describe: String,
    pending: Arc<Mutex<Pending>>,
    next_seq: i64,
    /// Turns records into rows, and knows the intents still open.
    encoder: Encoder,
}

/// Records queued for the journal table.
#[derive(Default)]
struct Pending {
    rows: Vec<(i64, String)>,
    /// Why an insert failed; nothing is inserted after it, so that the
    /// rows stay a prefix of what the apply did.
    failed: Option<String>,
    /// An insert of what is queued is due within [`journal::LINGER_FOR`].
    lingering: bool,
}

impl StateJournal for PgJournal {
    fn write(&mut self, record: &Record) -> Result<Unsynced, StateError> {
        if let Some(message) = &self.pending.lock().unwrap_or_else(PoisonError::into_inner).failed {
            return Err(StateError::Database { state: self.describe.clone(), message: message.clone() });
        }
        let text = self
            .encoder
            .encode(record)
            .map_err(|source| StateError::Encode { path: self.describe.clone().into(), source })?;
        // An intent is inserted at once, as the local journal flushes one:
        // its step waits for it before the provider call.
        let intent = matches!(record, Record::Intent(_));
        if let Some(text) = text {
            let linger = {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                pending.rows.push((self.next_seq, text));
                !intent && !std::mem::replace(&mut pending.lingering, true)
            };
            self.next_seq += 1;
            if linger {
                self.flush_soon();
            }
        }
        let flush = self.flush();
        if intent {
            return Ok(Unsynced::new(flush()?.answer()));
        }
        // Any other record's insert is asked for only when somebody waits
        // (the future is lazy); with nothing new queued, it waits for what
        // was queued before.
        Ok(Unsynced::new(async move { flush()?.answer().await }))
    }

    fn end(&mut self, key: &str) -> Result<Option<Unsynced>, StateError> {
        if !self.encoder.is_open(key) {
            return Ok(None);
        }
        self.write(&Record::End { key: key.to_string() }).map(Some)
    }

    fn discard(self: Box<Self>) -> Result<(), StateError> {
        // The state is written: what is still queued is in it, and must
        // not be inserted after the journal is cleared.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).rows.clear();
        self.worker.call(|s| Box::pin(s.clear_journal()))
    }
}

impl PgJournal {
    /// A request to insert what is queued then, to submit when needed.
    fn flush(&self) -> impl FnOnce() -> Result<Reply<()>, StateError> + Send + 'static {
        let (worker, pending, describe) = (self.worker.clone(), Arc::clone(&self.pending), self.describe.clone());
        move || worker.submit(move |s| Box::pin(s.flush_journal(pending, describe)))
    }

    /// Has what is queued inserted within [`journal::LINGER_FOR`], unless
    /// an insert somebody waits for takes it first. Outside an async
    /// runtime, where nothing can wait on a timer, at once.
    fn flush_soon(&self) {
        let flush = self.flush();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(journal::LINGER_FOR).await;
                    // A failure is the next waiter's to report.
                    let _ = flush();
                });
            }
            Err(_) => {
                let _ = flush();
            }
        }
    }
}

impl Drop for PgJournal {
    /// What is queued is inserted before the backend's thread stops (it
    /// runs requests in order), as a dropped local journal writes what it
    /// holds: results nobody waited for are not lost with the journal.
    fn drop(&mut self) {
        let _ = self.flush()();
    }
}

/// A request to the backend's thread.
type Job = Box<dyn for<'a> FnOnce(&'a mut Session) -> BoxFuture<'a, ()> + Send>;

/// `f` as a [`Job`] (a function, so that the closure's signature is the
/// job's, borrowed session and all).
fn job<F>(f: F) -> Job
where
    F: for<'a> FnOnce(&'a mut Session) -> BoxFuture<'a, ()> + Send + 'static,
{
    Box::new(f)
}

/// The backend's thread: it owns the connections and runs requests one at
/// a time, in order. Cloned handles share it; it stops (closing the
/// connections, and so releasing the lock) when the last is dropped.
#[derive(Clone)]
struct Worker {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
    describe: String,
}

/// The answer to a request, once it has run.
struct Reply<T> {
    answer: tokio::sync::oneshot::Receiver<Result<T, StateError>>,
    describe: String,
}

impl<T> Reply<T> {
    /// Waits for the answer, blocking the calling thread.
    fn wait(self) -> Result<T, StateError> {
        journal::block_on(self.answer())
    }

    /// Completes with the answer (a task awaiting it holds no thread).
    async fn answer(self) -> Result<T, StateError> {
        self.answer.await.unwrap_or_else(|_| Err(unreachable_worker(&self.describe)))
    }
}

/// The error for a worker thread that is gone (it stops only when its last
/// handle is dropped, so this means it panicked).
fn unreachable_worker(describe: &str) -> StateError {
    StateError::Database { state: describe.to_string(), message: "the connection thread stopped".to_string() }
}

impl Worker {
    /// Starts the thread, connects, and creates the schema and its tables
    /// when missing.
    fn start(conn_str: &str, schema: &str, describe: &str) -> Result<Worker, StateError> {
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (ready_tx, ready) = mpsc::sync_channel(1);
        let (conn_str, schema, for_thread) = (conn_str.to_string(), schema.to_string(), describe.to_string());
        let db_err = |message: String| StateError::Database { state: describe.to_string(), message };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| db_err(format!("cannot start its async runtime: {e}")))?;
        std::thread::Builder::new()
            .name("cairn-pg".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let mut session = match Session::open(&conn_str, &schema, &for_thread).await {
                        Ok(session) => {
                            let _ = ready_tx.send(Ok(()));
                            session
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    while let Some(job) = queue.recv().await {
                        job(&mut session).await;
                    }
                    session.release().await;
                });
            })
            .map_err(|e| db_err(format!("cannot start its thread: {e}")))?;
        ready.recv().unwrap_or_else(|_| Err(unreachable_worker(describe)))?;
        Ok(Worker { jobs, describe: describe.to_string() })
    }

    /// Queues `f` to run on the thread.
    fn submit<T: Send + 'static>(
        &self,
        f: impl for<'a> FnOnce(&'a mut Session) -> BoxFuture<'a, Result<T, StateError>> + Send + 'static,
    ) -> Result<Reply<T>, StateError> {
        let (tx, answer) = tokio::sync::oneshot::channel();
        let job = job(move |s| {
            Box::pin(async move {
                let _ = tx.send(f(s).await);
            })
        });
        self.jobs.send(job).map_err(|_| unreachable_worker(&self.describe))?;
        Ok(Reply { answer, describe: self.describe.clone() })
    }

    /// Runs `f` on the thread and waits for its answer.
    fn call<T: Send + 'static>(
        &self,
        f: impl for<'a> FnOnce(&'a mut Session) -> BoxFuture<'a, Result<T, StateError>> + Send + 'static,
    ) -> Result<T, StateError> {
        self.submit(f)?.wait()
    }
}

/// The connections, on the backend's thread.
struct Session {
    /// Reads and writes.
    data: Client,
    /// Holds the advisory lock; made when the lock is taken.
    lock: Option<Client>,
    /// The lock's ID, while held.
    lock_id: Option<String>,
    /// Writes allowed without the lock (`-lock=false`); they still
    /// compare and swap on the serial.
    unlocked: bool,
    /// The statement appending a row to the journal, prepared when a
    /// journal starts: a flush is then one round trip.
    append_journal: Option<tokio_postgres::Statement>,
    conn_str: String,
    /// The schema, quoted as an identifier.
    schema: String,
    /// The advisory lock's key.
    key: i64,
    describe: String,
}

impl Session {
    async fn open(conn_str: &str, schema: &str, describe: &str) -> Result<Session, StateError> {
        let data = connect(conn_str, describe).await?;
        let session = Session {
            data,
            lock: None,
            lock_id: None,
            unlocked: false,
            append_journal: None,
            conn_str: conn_str.to_string(),
            schema: quote_identifier(schema),
            key: lock_key(schema),
            describe: describe.to_string(),
        };
        session.create_tables().await?;
        Ok(session)
    }

    fn err(&self, e: impl std::fmt::Display) -> StateError {
        StateError::Database { state: self.describe.clone(), message: e.to_string() }
    }

    /// The schema and its tables, when missing. Two runs creating them at
    /// once would collide in the catalog, so they take turns (a
    /// transaction-level advisory lock on a key of its own: the state's
    /// lock key would wait for the run holding the state).
    async fn create_tables(&self) -> Result<(), StateError> {
        let s = &self.schema;
        let sql = format!(
            "BEGIN;
             SELECT pg_advisory_xact_lock({key});
             CREATE SCHEMA IF NOT EXISTS {s};
             CREATE TABLE IF NOT EXISTS {s}.cairn_states (
                 serial bigint PRIMARY KEY,
                 lineage text NOT NULL,
                 state text NOT NULL,
                 written_at timestamptz NOT NULL DEFAULT now());
             CREATE TABLE IF NOT EXISTS {s}.cairn_journal (
                 seq bigint PRIMARY KEY,
                 record text NOT NULL);
             CREATE TABLE IF NOT EXISTS {s}.cairn_lock (
                 lock_id text PRIMARY KEY,
                 holder text NOT NULL,
                 backend_pid integer NOT NULL);
             COMMIT;",
            key = lock_key(&format!("{} tables", self.schema))
        );
        self.data.batch_execute(&sql).await.map_err(|e| self.err(format!("cannot create its tables: {e}")))
    }

    /// Takes the advisory lock on a connection of its own and records
    /// `holder`; when another session holds it, fails naming that holder.
    async fn lock(&mut self, holder: LockHolder, state: String) -> Result<(), StateError> {
        let client = connect(&self.conn_str, &self.describe).await?;
        let row = client.query_one("SELECT pg_try_advisory_lock($1)", &[&self.key]).await.map_err(|e| self.err(e))?;
        if !row.get::<_, bool>(0) {
            let holder = self.refusing_holder().await?.map(Box::new);
            return Err(StateError::Locked { path: state.into(), holder });
        }
        let text = serde_json::to_string(&holder).map_err(|e| self.err(e))?;
        let s = &self.schema;
        // A holder's row outlives a crash; the lock is free, so it is stale.
        client.batch_execute(&format!("DELETE FROM {s}.cairn_lock")).await.map_err(|e| self.err(e))?;
        let insert =
            format!("INSERT INTO {s}.cairn_lock (lock_id, holder, backend_pid) VALUES ($1, $2, pg_backend_pid())");
        client.execute(&insert, &[&holder.id, &text]).await.map_err(|e| self.err(e))?;
        self.lock = Some(client);
        self.lock_id = Some(holder.id);
        Ok(())
    }

    /// The holder recorded in `cairn_lock`, with its session's pid, if
    /// that session still holds an advisory lock: the row of a holder that
    /// died stays until the next holder replaces it, and names no one.
    async fn holder(&self) -> Result<Option<(LockHolder, i32)>, StateError> {
        let sql = format!(
            "SELECT holder, backend_pid FROM {}.cairn_lock l WHERE EXISTS ({HOLDS_THE_LOCK} AND pid = l.backend_pid)",
            self.schema
        );
        let (high, low) = lock_parts(self.key);
        let rows = self.data.query(&sql, &[&high, &low]).await.map_err(|e| self.err(e))?;
        Ok(rows.first().and_then(|r| Some((serde_json::from_str(r.get::<_, &str>(0)).ok()?, r.get(1)))))
    }

    /// The holder of a lock this session was just refused: its row may
    /// not be written yet (it takes the lock, then writes who it is), so
    /// it is looked for a few times over about a second.
    async fn refusing_holder(&self) -> Result<Option<LockHolder>, StateError> {
        for _ in 0..HOLDER_TRIES {
            if let Some((holder, _)) = self.holder().await? {
                return Ok(Some(holder));
            }
            tokio::time::sleep(HOLDER_RETRY).await;
        }
        Ok(None)
    }

    /// Fails unless this session still holds the lock (or was told to go
    /// without it).
    fn check_lock(&self, state: &str) -> Result<(), StateError> {
        if self.unlocked {
            return Ok(());
        }
        match &self.lock {
            Some(client) if !client.is_closed() => Ok(()),
            _ => Err(StateError::LockLost { state: state.to_string() }),
        }
    }

    /// Ends the session holding the lock whose ID is `id`.
    async fn force_unlock(&mut self, id: String, state: String) -> Result<(), StateError> {
        let unlock_err = |reason: String| StateError::Unlock { state: state.clone(), reason };
        let Some((holder, pid)) = self.holder().await? else {
            return Err(unlock_err("it is not locked".to_string()));
        };
        if holder.id != id {
            return Err(unlock_err(format!("it is locked with lock ID {}, not {id}", holder.id)));
        }
        // Only the session that holds the lock is ended, checked again
        // here: the pid of a row may belong to another session by now.
        let (high, low) = lock_parts(self.key);
        let sql = format!("SELECT pg_terminate_backend(pid) FROM ({HOLDS_THE_LOCK} AND pid = $3) holder");
        self.data
            .execute(&sql, &[&high, &low, &pid])
            .await
            .map_err(|e| unlock_err(format!("cannot end the session holding it: {e}")))?;
        self.data
            .execute(&format!("DELETE FROM {}.cairn_lock WHERE lock_id = $1", self.schema), &[&id])
            .await
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The newest state (a new one when none was written) and the journal's
    /// rows, in order.
    async fn read(&mut self) -> Result<(State, Vec<String>), StateError> {
        let s = self.schema.clone();
        let describe = self.describe.clone();
        let err = |e: tokio_postgres::Error| StateError::Database { state: describe.clone(), message: e.to_string() };
        // One snapshot for both: between two plain reads an apply may
        // commit a new version and start its journal over it.
        let tx = self
            .data
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(err)?;
        let newest = tx
            .query(&format!("SELECT state, serial FROM {s}.cairn_states ORDER BY serial DESC LIMIT 1"), &[])
            .await
            .map_err(err)?;
        let rows =
            tx.query(&format!("SELECT record, seq FROM {s}.cairn_journal ORDER BY seq"), &[]).await.map_err(err)?;
        tx.commit().await.map_err(err)?;
        let state = match newest.first() {
            Some(row) => self.parse_version(row.get(0), row.get(1))?,
            None => State::new(),
        };
        Ok((state, rows.iter().map(|row| row.get::<_, String>(0)).collect()))
    }

    /// A stored version, checked as the local backend checks its file.
    fn parse_version(&self, text: &str, serial: i64) -> Result<State, StateError> {
        let at = format!("{} (serial {serial})", self.describe);
        super::local::parse(std::path::Path::new(&at), text.as_bytes())
    }

    /// Every version but the newest, newest first.
    async fn history(&mut self) -> Result<Vec<State>, StateError> {
        let rows = self
            .data
            .query(
                &format!("SELECT state, serial FROM {}.cairn_states ORDER BY serial DESC OFFSET 1", self.schema),
                &[],
            )
            .await
            .map_err(|e| self.err(e))?;
        rows.iter().map(|r| self.parse_version(r.get(0), r.get(1))).collect()
    }

    /// Inserts the version `serial` of lineage `lineage`, in a transaction
    /// that first locks the table against other writers and refuses when
    /// the newest version is of another lineage or at `serial` already or
    /// later (the state being written was read before it).
    async fn write(&mut self, lineage: String, serial: u64, text: String, state: String) -> Result<(), StateError> {
        self.check_lock(&state)?;
        let describe = self.describe.clone();
        let err = |e: tokio_postgres::Error| StateError::Database { state: describe.clone(), message: e.to_string() };
        let serial_i = i64::try_from(serial).map_err(|e| self.err(e))?;
        let s = self.schema.clone();
        let tx = self.data.transaction().await.map_err(err)?;
        tx.batch_execute(&format!("LOCK TABLE {s}.cairn_states IN EXCLUSIVE MODE")).await.map_err(err)?;
        // The lock's row goes when another process forces the lock open:
        // checked here, in the transaction, whatever the lock connection
        // has noticed yet.
        let held = tx
            .query(&format!("SELECT 1 FROM {s}.cairn_lock WHERE lock_id = $1"), &[&self.lock_id])
            .await
            .map_err(err)?;
        if held.is_empty() && !self.unlocked {
            return Err(StateError::LockLost { state });
        }
        let newest = tx
            .query(&format!("SELECT lineage, serial FROM {s}.cairn_states ORDER BY serial DESC LIMIT 1"), &[])
            .await
            .map_err(err)?;
        if let Some(row) = newest.first() {
            let (file, current): (String, i64) = (row.get(0), row.get(1));
            if file != lineage {
                return Err(StateError::LineageMismatch { path: state.into(), file, ours: lineage });
            }
            if current >= serial_i {
                return Err(StateError::StaleSerial {
                    path: state.into(),
                    file: u64::try_from(current).unwrap_or(0),
                    ours: serial - 1,
                });
            }
        }
        tx.execute(
            &format!("INSERT INTO {s}.cairn_states (serial, lineage, state) VALUES ($1, $2, $3)"),
            &[&serial_i, &lineage, &text],
        )
        .await
        .map_err(err)?;
        tx.commit().await.map_err(err)
    }

    /// Replaces the journal with its first record.
    async fn start_journal(&mut self, start: String) -> Result<(), StateError> {
        self.check_lock(&self.describe)?;
        let describe = self.describe.clone();
        let err = |e: tokio_postgres::Error| StateError::Database { state: describe.clone(), message: e.to_string() };
        let s = self.schema.clone();
        let tx = self.data.transaction().await.map_err(err)?;
        tx.batch_execute(&format!("DELETE FROM {s}.cairn_journal")).await.map_err(err)?;
        let append =
            tx.prepare(&format!("INSERT INTO {s}.cairn_journal (seq, record) VALUES ($1, $2)")).await.map_err(err)?;
        tx.execute(&append, &[&0_i64, &start]).await.map_err(err)?;
        tx.commit().await.map_err(err)?;
        self.append_journal = Some(append);
        Ok(())
    }

    /// Inserts every record queued in `pending` as one row: their lines,
    /// in order, one a line. (Many small rows cost the server an index
    /// entry and a tuple each; a flush's records are read back together
    /// anyway.)
    async fn flush_journal(&mut self, pending: Arc<Mutex<Pending>>, describe: String) -> Result<(), StateError> {
        let rows = {
            let mut p = pending.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(message) = &p.failed {
                return Err(StateError::Database { state: describe, message: message.clone() });
            }
            p.lingering = false;
            std::mem::take(&mut p.rows)
        };
        // An earlier request inserted the records of this one.
        if rows.is_empty() {
            return Ok(());
        }
        let result = match (self.check_lock(&describe), &self.append_journal) {
            (Err(e), _) => Err(e),
            (Ok(()), None) => Err(self.err("no journal was started")),
            (Ok(()), Some(append)) => {
                // Numbered by its first record, so that rows keep their order.
                let seq = rows[0].0;
                let text = rows.into_iter().map(|(_, text)| text).collect::<Vec<_>>().join("\n");
                self.data.execute(append, &[&seq, &text]).await.map(drop).map_err(|e| self.err(e))
            }
        };
        if let Err(e) = &result {
            pending.lock().unwrap_or_else(PoisonError::into_inner).failed = Some(e.to_string());
        }
        result
    }

    /// Empties the journal.
    async fn clear_journal(&mut self) -> Result<(), StateError> {
        self.data.batch_execute(&format!("DELETE FROM {}.cairn_journal", self.schema)).await.map_err(|e| self.err(e))
    }

    /// Releases the lock, if held, and forgets its holder. Closing the
    /// connection would release the lock too; this also removes the row
    /// that names the holder.
    async fn release(&mut self) {
        if let (Some(client), Some(id)) = (self.lock.take(), self.lock_id.take()) {
            let _ =
                self.data.execute(&format!("DELETE FROM {}.cairn_lock WHERE lock_id = $1", self.schema), &[&id]).await;
            let _ = client.execute("SELECT pg_advisory_unlock($1)", &[&self.key]).await;
        }
    }
}

/// A connection, its I/O driven by a task on the backend's runtime.
async fn connect(conn_str: &str, describe: &str) -> Result<Client, StateError> {
    let (client, connection) = tokio_postgres::connect(conn_str, NoTls)
        .await
        .map_err(|e| StateError::Database { state: describe.to_string(), message: format!("cannot connect: {e}") })?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("a PostgreSQL connection of the state backend ended: {e}");
        }
    });
    Ok(client)
}

/// The sessions holding the advisory lock whose key's halves are `$1`
/// (high) and `$2` (low) in this database, as a query to narrow down.
const HOLDS_THE_LOCK: &str = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted \
     AND objsubid = 1 AND classid::bigint = $1 AND objid::bigint = $2 \
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// How `pg_locks` shows a bigint advisory key: its high and low 32 bits,
/// each unsigned (`classid`, `objid`).
fn lock_parts(key: i64) -> (i64, i64) {
    let bits = key as u64;
    (i64::from((bits >> 32) as u32), i64::from(bits as u32))
}

/// The advisory lock key of a schema's state: the first eight bytes of a
/// SHA-256 of its name, so that two schemas in one database lock apart.
fn lock_key(schema: &str) -> i64 {
    let digest = Sha256::digest(format!("cairn state {schema}").as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

/// `name` as an SQL identifier: in double quotes, inner quotes doubled.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The schemas of the database `conn_str` names whose names start with
/// `prefix`: the workspaces of a state (`engine::workspace_schema`).
pub fn schemas_with_prefix(conn_str: &str, prefix: &str) -> Result<Vec<String>, StateError> {
    let place = describe(conn_str, prefix);
    on_a_connection(conn_str, &place, |client| async move {
        let rows = client
            .query("SELECT schema_name::text FROM information_schema.schemata ORDER BY 1", &[])
            .await
            .map_err(|e| format!("cannot list its schemas: {e}"))?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).filter(|s| s.starts_with(prefix)).collect())
    })
}

/// Drops the schema `schema` with the state it holds: a deleted workspace.
pub fn drop_schema(conn_str: &str, schema: &str) -> Result<(), StateError> {
    let place = describe(conn_str, schema);
    let statement = format!("DROP SCHEMA IF EXISTS {} CASCADE", quote_identifier(schema));
    on_a_connection(conn_str, &place, |client| async move {
        client.batch_execute(&statement).await.map_err(|e| format!("cannot drop it: {e}"))
    })
}

/// Runs `work` on a connection of its own, on a runtime of its own (for
/// the commands that ask a database one thing outside a run).
fn on_a_connection<T, F>(conn_str: &str, place: &str, work: impl FnOnce(Client) -> F) -> Result<T, StateError>
where
    F: std::future::Future<Output = Result<T, String>>,
{
    let err = |message: String| StateError::Database { state: place.to_string(), message };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| err(format!("cannot start the connection's runtime: {e}")))?;
    runtime.block_on(async {
        let client = connect(conn_str, place).await?;
        work(client).await.map_err(err)
    })
}

/// The schema Terraform's `pg` backend keeps its states in by default.
pub const TERRAFORM_PG_SCHEMA: &str = "terraform_remote_state";

/// The state of the workspace `workspace` that Terraform's `pg` backend
/// keeps in the `states` table of schema `schema` (Terraform's layout:
/// `name`, `data`), as its JSON text. For `cairn state migrate`.
pub fn read_terraform_state(conn_str: &str, schema: &str, workspace: &str) -> Result<Vec<u8>, StateError> {
    let place = format!("Terraform's state \"{workspace}\" in {}", describe(conn_str, schema));
    let query = format!("SELECT data FROM {}.states WHERE name = $1", quote_identifier(schema));
    on_a_connection(conn_str, &place, |client| async move {
        let rows = client.query(&query, &[&workspace]).await.map_err(|e| format!("cannot read it: {e}"))?;
        match rows.first() {
            Some(row) => Ok(row.get::<_, String>(0).into_bytes()),
            None => Err("there is no such state".to_string()),
        }
    })
}

/// Where a state is, for messages and for recognising the same backend
/// again: user, hosts, database and schema, never the password.
pub fn describe(conn_str: &str, schema: &str) -> String {
    let Ok(config) = tokio_postgres::Config::from_str(conn_str) else {
        return format!("schema \"{schema}\" of PostgreSQL");
    };
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = config.get_ports().first().map_or(String::new(), |p| format!(":{p}"));
    let user = config.get_user().map_or(String::new(), |u| format!("{u}@"));
    let db = config.get_dbname().map_or(String::new(), |d| format!("/{d}"));
    format!("schema \"{schema}\" of postgres://{user}{}{port}{db}", hosts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_leave_the_password_out() {
        let d = describe("postgres://alice:secret@db.example:5433/infra?sslmode=disable", "s");
        assert_eq!(d, "schema \"s\" of postgres://alice@db.example:5433/infra");
        let d = describe("host=127.0.0.1 port=5432 user=bob password=hunter2 dbname=x", "t");
        assert_eq!(d, "schema \"t\" of postgres://bob@127.0.0.1:5432/x");
    }

    #[test]
    fn identifiers_are_quoted_and_lock_keys_differ_by_schema() {
        assert_eq!(quote_identifier("a\"b"), "\"a\"\"b\"");
        assert_eq!(lock_key("one"), lock_key("one"));
        assert_ne!(lock_key("one"), lock_key("two"));
        // As pg_locks shows -123456789012 (checked against PostgreSQL 15).
        assert_eq!(lock_parts(-123_456_789_012), (4_294_967_267, 1_097_262_572));
        // Creating the tables must not wait for the run holding the state.
        assert_ne!(lock_key("one"), lock_key("\"one\" tables"));
    }

    #[test]
    fn tls_and_bad_connection_strings_are_refused_before_connecting() {
        let e = PgBackend::new("postgres://h/db?sslmode=require", "s").unwrap_err().to_string();
        assert!(e.contains("a TLS sslmode is not supported") && e.contains("disable or prefer"), "{e}");
        let e = PgBackend::new("postgres://h/db?sslmode=verify-full", "s").unwrap_err().to_string();
        assert!(e.contains("not valid") && e.contains("disable or prefer"), "{e}");
        PgBackend::new("host=h dbname=db sslmode=disable", "s").unwrap();
        let e = PgBackend::new("postgres://h:notaport/db", "s").unwrap_err().to_string();
        assert!(e.contains("not valid"), "{e}");
    }
}
