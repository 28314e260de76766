//! What keeping the state costs an apply (issue 16): a 10,000-resource
//! apply by the real engine with an in-process provider, once with
//! persistence off (a backend that keeps nothing), once with the local
//! backend and once with PostgreSQL, each printed with the bytes written
//! for the state and the wall time, beside the issue's targets: at most
//! 2× the final state's size written, at most 1.3× the wall time of the
//! apply with persistence off.
//!
//! Bytes written are what the apply asks its backend to make durable: the
//! journal's lines (as both backends write them: `state::Encoder`) and
//! every state written (the JSON of the whole state), counted by a wrapper
//! around the backend in one more run of each (the wrapper encodes every
//! record a second time, so the timed runs go without it); for
//! the local backend also what the process really wrote to files
//! (`wchar` of `/proc/self/io`, with the state file's layout and the
//! journal's newlines). The final state's size is its compact JSON.
//!
//! ```sh
//! PG_CONN_STR=postgres://postgres@127.0.0.1:5432/postgres cargo bench -p cairn --bench state_backends
//! cargo bench -p cairn --bench state_backends -- --resources 1000 --sleep-ms 0
//! ```
//!
//! Each backend is timed `--runs N` times (default 3), the backends taking
//! turns, and the table shows each one's median run.
//!
//! The wall time (`wall`, `x wall`) is the apply of a plan made before it
//! starts: the part of the run whose every step the state's journal
//! touches, so the ratio is the journal's cost at its harshest. Beside it,
//! `load+plan+it` (and `x that`) is the whole command as `cairn apply
//! -auto-approve` runs it: loading the configuration, planning (which
//! also reads the state through the backend) and applying.
//!
//! Options (after `--`): `--resources N` (default 10000), `--runs N`, `--sleep-ms MS`
//! (each create waits that long on tokio's timer, default 10: a provider
//! call; 0 measures persistence against an instant provider),
//! `--parallelism P` (default 10), `--bundled` (`null_resource`s of the
//! bundled `null` provider, a WebAssembly component as `cairn apply` runs
//! it, instead of the in-process provider), `--only NAME` (only the backend
//! whose name starts so, `persistence`, `local` or `postgresql`, and no
//! counting run: to profile one). `CAIRN_LOG=cairn=debug` prints the
//! engine's phases, as for `cairn`. Without `PG_CONN_STR` the PostgreSQL
//! row is left out (it says so); each run takes a fresh schema, left in
//! the database. It prints numbers, not pass or fail.
//!
//! Measured 2026-11-25 (release, `-parallelism` 10, on the 2-core machine
//! with nothing else running; PostgreSQL 15 on loopback with `fsync=off`,
//! as the end-to-end tests start it):
//!
//! | provider create | persistence off | local | PostgreSQL | bytes written |
//! | --- | --- | --- | --- | --- |
//! | 10 ms | 11.46 s | 1.005× | 1.006× | 2.93 MB, 1.87× the 1.57 MB final state |
//! | instant (5 runs) | 0.17–0.30 s | median 1.56× | median 1.97× | the same |
//! | `--bundled` (3 runs) | 0.32–0.37 s | median 1.53× | 1.77–1.89× | 1.88× |
//!
//! (Before issue 16's work: 5.23 MB, 3.34×; instant 1.73–1.93× local,
//! 2.62–3.31× PostgreSQL.)
//!
//! Measured 2026-11-28 with the whole command beside the apply (instant
//! provider, three runs of five, each ratio against its own run's
//! persistence off: 0.10–0.12 s apply, 0.21–0.24 s whole):
//!
//! | backend | apply | × | load+plan+apply | × |
//! | --- | --- | --- | --- | --- |
//! | local | 0.17–0.22 s | 1.60–1.88 | 0.26–0.32 s | 1.26–1.35 |
//! | PostgreSQL | 0.31–0.35 s | 2.87–3.01 | 0.42–0.50 s | 2.00–2.09 |

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

mod common;

/// The allocator the `cairn` binary uses, so that the apply measured here
/// costs what it costs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cairn::engine::{Engine, Intent, RunOptions, Workspace};
use cairn::plan::Providers;
use cairn::provider::{
    ApplyRequest, ApplyResponse, CallFuture, PlanRequest, PlanResponse, Provider, ReadResponse, ready,
};
use cairn::schema::ProviderSchema;
use cairn::state::{Backend, Encoder, LocalBackend, PgBackend, Record, State, StateError, StateJournal, Unsynced};
use cairn::value::Value;

use common::Quiet;

/// `bench_thing`, whose create waits `sleep` on tokio's timer.
struct Thing {
    schema: ProviderSchema,
    sleep: Duration,
}

impl Provider for Thing {
    bench_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(common::plan_with_unknown_id(r)))
    }
    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        Box::pin(async move {
            if !self.sleep.is_zero() {
                tokio::time::sleep(self.sleep).await;
            }
            Ok(common::apply_with_id_from_name(r))
        })
    }
    fn read_resource<'a>(&'a self, _: &'a str, current: &'a Value, private: &'a [u8]) -> CallFuture<'a, ReadResponse> {
        ready(Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() }))
    }
}

/// Persistence off: every write and record is accepted and dropped.
struct Nowhere;

impl Backend for Nowhere {
    fn describe(&self) -> String {
        "nowhere".to_string()
    }
    fn lock(&mut self) -> Result<(), StateError> {
        Ok(())
    }
    fn read(&self) -> Result<State, StateError> {
        Ok(State::new())
    }
    fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        state.serial += 1;
        Ok(())
    }
    fn start_journal(&mut self, _: &State) -> Result<Box<dyn StateJournal>, StateError> {
        Ok(Box::new(Nowhere))
    }
    fn force_unlock(&mut self, _: &str) -> Result<(), StateError> {
        Ok(())
    }
    fn history(&self) -> Result<Vec<State>, StateError> {
        Ok(Vec::new())
    }
}

impl StateJournal for Nowhere {
    fn write(&mut self, _: &Record) -> Result<Unsynced, StateError> {
        Ok(Unsynced::done())
    }
    fn end(&mut self, _: &str) -> Result<Option<Unsynced>, StateError> {
        Ok(None)
    }
    fn discard(self: Box<Self>) -> Result<(), StateError> {
        Ok(())
    }
}

/// A backend that counts the bytes it is asked to make durable.
struct Counting {
    inner: Box<dyn Backend>,
    bytes: Arc<AtomicU64>,
}

impl Backend for Counting {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn lock(&mut self) -> Result<(), StateError> {
        self.inner.lock()
    }
    fn read(&self) -> Result<State, StateError> {
        self.inner.read()
    }
    fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        self.inner.write(state)?;
        self.bytes.fetch_add(serde_json::to_vec(&*state).unwrap().len() as u64, Ordering::Relaxed);
        Ok(())
    }
    fn start_journal(&mut self, state: &State) -> Result<Box<dyn StateJournal>, StateError> {
        let inner = self.inner.start_journal(state)?;
        let (encoder, first_line) = Encoder::start(&state.lineage, state.serial).unwrap();
        self.bytes.fetch_add(first_line.len() as u64 + 1, Ordering::Relaxed);
        Ok(Box::new(CountingJournal { inner, encoder, bytes: Arc::clone(&self.bytes) }))
    }
    fn force_unlock(&mut self, id: &str) -> Result<(), StateError> {
        self.inner.force_unlock(id)
    }
    fn history(&self) -> Result<Vec<State>, StateError> {
        self.inner.history()
    }
}

/// Counts each record's line (and its newline) as the backends' journals
/// encode it, with an encoder of its own fed the same records.
struct CountingJournal {
    inner: Box<dyn StateJournal>,
    encoder: Encoder,
    bytes: Arc<AtomicU64>,
}

impl CountingJournal {
    fn count(&mut self, record: &Record) {
        if let Some(line) = self.encoder.encode(record).unwrap() {
            self.bytes.fetch_add(line.len() as u64 + 1, Ordering::Relaxed);
        }
    }
}

impl StateJournal for CountingJournal {
    fn write(&mut self, record: &Record) -> Result<Unsynced, StateError> {
        self.count(record);
        self.inner.write(record)
    }
    fn end(&mut self, key: &str) -> Result<Option<Unsynced>, StateError> {
        let ended = self.inner.end(key)?;
        if ended.is_some() {
            self.count(&Record::End { key: key.to_string() });
        }
        Ok(ended)
    }
    fn discard(self: Box<Self>) -> Result<(), StateError> {
        self.inner.discard()
    }
}

/// CPU seconds this process has used in user and in system (kernel) mode,
/// all threads, from `/proc/self/stat` (in clock ticks of 10 ms).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) / 100.0, ticks(12) / 100.0)
}

/// User and system CPU seconds as `1.23+0.45`.
fn cpu_text((user, system): (f64, f64)) -> String {
    format!("{user:.2}+{system:.2}")
}

/// Bytes this process has written through `write(2)` and friends.
fn written_by_process() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines().find_map(|l| l.strip_prefix("wchar: ")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

struct Options {
    resources: usize,
    /// Timed runs of each backend; the table shows the median.
    runs: usize,
    sleep_ms: u64,
    parallelism: usize,
    /// The bundled `null` provider (a WebAssembly component, as `cairn
    /// apply` runs it) instead of the in-process `bench_thing`.
    bundled: bool,
    /// Only the backend whose name starts so (to profile one).
    only: Option<String>,
}

fn options() -> Options {
    let mut o = Options { resources: 10_000, runs: 3, sleep_ms: 10, parallelism: 10, bundled: false, only: None };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value =
            || args.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or_else(|| panic!("{a} needs a number"));
        match a.as_str() {
            "--bundled" => o.bundled = true,
            "--only" => o.only = args.next(),
            "--resources" => o.resources = value() as usize,
            "--runs" => o.runs = (value() as usize).max(1),
            "--sleep-ms" => o.sleep_ms = value(),
            "--parallelism" => o.parallelism = value() as usize,
            // `cargo bench` passes --bench; ignore what is not ours.
            _ => {}
        }
    }
    o
}

/// One measured apply.
struct Measure {
    /// The apply of the plan: what keeping the state adds to.
    wall: Duration,
    /// Loading the configuration, planning and applying, as `cairn apply
    /// -auto-approve` runs them.
    whole: Duration,
    /// CPU seconds the process used meanwhile (every thread), in user and
    /// in system mode.
    cpu: (f64, f64),
    /// Bytes the backend was asked to make durable; only counted when
    /// asked for, since counting encodes every record a second time.
    bytes: Option<u64>,
    /// Bytes the process wrote meanwhile.
    process_bytes: u64,
    /// The final state's compact JSON size.
    final_size: u64,
}

/// Makes a backend for a workspace: what each row of the table measures.
type BackendFn = dyn Fn(&Workspace) -> Box<dyn Backend>;

/// Applies `config` from an empty state in `backend`; with `count`, through
/// [`Counting`] (which costs time of its own, so a timed run goes without).
fn measure(engine: &Engine, config: &str, o: &Options, backend: &BackendFn, count: bool) -> Measure {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), config).unwrap();
    let loading = Instant::now();
    let ws = Workspace::load(dir.path(), &[]).unwrap_or_else(|e| panic!("{e:#}"));
    let bytes = Arc::new(AtomicU64::new(0));
    let backend =
        if count { Box::new(Counting { inner: backend(&ws), bytes: Arc::clone(&bytes) }) } else { backend(&ws) };
    let options = RunOptions { parallelism: o.parallelism, intent: Intent::Change, ..RunOptions::default() };
    let planned = engine.plan_on(&ws, backend, options, true, &Quiet).unwrap_or_else(|e| panic!("{e:#}"));
    let before = written_by_process();
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let (report, state) = engine.apply(&ws, planned, Arc::new(Quiet));
    let wall = started.elapsed();
    let whole = loading.elapsed();
    let cpu_after = cpu_seconds();
    let cpu = (cpu_after.0 - cpu_before.0, cpu_after.1 - cpu_before.1);
    let process_bytes = written_by_process() - before;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.added, o.resources);
    let final_size = serde_json::to_vec(&state).unwrap().len() as u64;
    Measure { wall, whole, cpu, bytes: count.then(|| bytes.load(Ordering::Relaxed)), process_bytes, final_size }
}

/// The run with the median wall time of `runs` (an odd number of them),
/// with the median of their whole commands' times as its `whole`.
fn median(mut runs: Vec<Measure>) -> Measure {
    let mut wholes: Vec<Duration> = runs.iter().map(|m| m.whole).collect();
    wholes.sort();
    runs.sort_by_key(|m| m.wall);
    let mut middle = runs.swap_remove(runs.len() / 2);
    middle.whole = wholes[wholes.len() / 2];
    middle
}

fn main() {
    cairn::cli::init_logging();
    let o = options();
    let mut config = String::new();
    let (engine, provider) = if o.bundled {
        for i in 0..o.resources {
            let _ = writeln!(config, "resource \"null_resource\" \"r{i}\" {{\n  triggers = {{ name = \"r{i}\" }}\n}}");
        }
        (Engine::new().unwrap(), "the bundled null provider".to_string())
    } else {
        let thing = Arc::new(Thing { schema: common::thing_schema(), sleep: Duration::from_millis(o.sleep_ms) });
        let providers: Providers = [("bench".to_string(), thing as Arc<dyn Provider>)].into();
        for i in 0..o.resources {
            let _ = writeln!(config, "resource \"bench_thing\" \"r{i}\" {{\n  name = \"r{i}\"\n}}");
        }
        (Engine::in_process(providers).unwrap(), format!("an in-process provider whose create waits {} ms", o.sleep_ms))
    };
    println!(
        "{} resources, {provider}, parallelism {}; targets: bytes written <= 2.0x the final state, wall <= 1.3x persistence off",
        o.resources, o.parallelism
    );
    // Each backend is timed `runs` times, the backends taking turns so that
    // a slow spell of the machine falls on all of them; bytes come from one
    // more run each, through `Counting`.
    let mut backends: Vec<(&str, Box<BackendFn>)> = vec![
        ("persistence off", Box::new(|_: &Workspace| Box::new(Nowhere) as Box<dyn Backend>)),
        (
            "local",
            Box::new(|ws: &Workspace| Box::new(LocalBackend::open_read_only(&ws.state_path())) as Box<dyn Backend>),
        ),
    ];
    let pg_schema = format!("cairn_bench_{}", std::process::id());
    let pg_conn = std::env::var("PG_CONN_STR").ok();
    if let Some(conn_str) = pg_conn.clone() {
        let schema = pg_schema.clone();
        // A schema of its own for each run: every run applies from empty.
        let runs = AtomicU64::new(0);
        backends.push((
            "postgresql",
            Box::new(move |_: &Workspace| {
                let schema = format!("{schema}_{}", runs.fetch_add(1, Ordering::Relaxed));
                Box::new(PgBackend::new(&conn_str, &schema).unwrap()) as Box<dyn Backend>
            }),
        ));
    }
    if let Some(only) = &o.only {
        backends.retain(|(name, _)| name.starts_with(only.as_str()));
        assert!(!backends.is_empty(), "--only {only}: no such backend");
    }
    let mut timed: Vec<Vec<Measure>> = backends.iter().map(|_| Vec::new()).collect();
    for _ in 0..o.runs {
        for (runs, (_, backend)) in timed.iter_mut().zip(&backends) {
            runs.push(measure(&engine, &config, &o, backend.as_ref(), false));
        }
    }
    let rows: Vec<(&str, Measure, Option<u64>)> = backends
        .iter()
        .zip(timed)
        .map(|((name, backend), runs)| {
            let counted = (*name != "persistence off" && o.only.is_none())
                .then(|| measure(&engine, &config, &o, backend.as_ref(), true));
            (*name, median(runs), counted.and_then(|c| c.bytes))
        })
        .collect();
    println!(
        "{:<18} {:>9} {:>11} {:>14} {:>7} {:>10} {:>13} {:>8} {:>7}",
        "backend", "wall", "cpu usr+sys", "bytes written", "x state", "x wall", "load+plan+it", "x that", ""
    );
    // Alone (`--only`), a backend is its own measure.
    let off_wall = rows[0].1.wall.as_secs_f64();
    let off_whole = rows[0].1.whole.as_secs_f64();
    for (name, m, bytes) in &rows {
        let (bytes, ratio) = match bytes {
            Some(b) => (b.to_string(), format!("{:.2}", *b as f64 / m.final_size as f64)),
            None => ("-".to_string(), "-".to_string()),
        };
        let note = match *name {
            "local" => format!(
                "(final state {} B; the process wrote {} B to files, {:.2}x)",
                m.final_size,
                m.process_bytes,
                m.process_bytes as f64 / m.final_size as f64
            ),
            "postgresql" => format!("(final state {} B; left in schemas {pg_schema}_*)", m.final_size),
            _ => String::new(),
        };
        println!(
            "{name:<18} {:>8.3}s {:>11} {bytes:>14} {ratio:>7} {:>10.3} {:>12.3}s {:>8.3}  {note}",
            m.wall.as_secs_f64(),
            cpu_text(m.cpu),
            m.wall.as_secs_f64() / off_wall,
            m.whole.as_secs_f64(),
            m.whole.as_secs_f64() / off_whole
        );
    }
    if pg_conn.is_none() {
        println!("{:<18} left out: set PG_CONN_STR to a database to measure it", "postgresql");
    }
}
