//! How close the executor gets to a graph's critical path.
//!
//! Random DAGs of 1,000 resources, applied by the real engine (re-plan,
//! contract checks, every operation's intent and result flushed to the
//! state's journal, the state written at the end) with an in-process
//! provider whose create waits 10 ms on a timer (holding no thread), at
//! parallelism 10, 64 and 256 (issue 17 asks for a ratio of at most 1.05 at
//! each, also with `--resources 10000`).
//! For each it prints the measured wall time, the lower bound
//! `max(longest chain, ceil(N / P)) × 10 ms`, their ratio, how long the
//! provider's creates really took on average, and the executor's hand-off
//! (median and 90th percentile): how long after the last dependency's
//! create returned a resource's own create started — the re-plan, the
//! intent reaching the disk, the wake-ups — which each step of the longest
//! chain pays on top of its create.
//!
//! ```sh
//! cargo bench -p cairn --bench apply_dag            # optimised
//! cargo bench -p cairn --bench apply_dag --profile dev
//! ```
//!
//! Options (after `--`): `--resources N` (default 1000), `--sleep-ms MS`
//! (10), `--parallelism P` (repeatable; default 10, 64 and 256), `--seed S`,
//! `--state-dir DIR` (where the state and its journal are written, default a
//! temporary directory: a tmpfs such as `/dev/shm` leaves out the disk's
//! `fsync`), `--tokio-timer` (the create waits on tokio's timer, whose 1 ms
//! ticks make a 10 ms wait last about 11 ms), `--blocking` (the create holds
//! its thread while it sleeps).
//! It prints numbers, not pass or fail.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

mod common;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::engine::{Engine, Intent, RunOptions, Workspace};
use cairn::plan::Providers;
use cairn::provider::{
    ApplyRequest, ApplyResponse, CallFuture, PlanRequest, PlanResponse, Provider, ReadResponse, ready,
};
use cairn::schema::ProviderSchema;
use cairn::value::Value;

use common::Quiet;

/// `bench_thing`: `name`, `deps` (ids of other things), computed `id`;
/// create waits (see [`Wait`]).
struct Sleepy {
    schema: ProviderSchema,
    sleep: Duration,
    wait: Wait,
    timer: Timer,
    /// Nanoseconds the creates really took, summed.
    slept: std::sync::atomic::AtomicU64,
    /// When each thing's create started and ended, by its number.
    creates: std::sync::Mutex<Vec<Option<(Instant, Instant)>>>,
}

impl Sleepy {
    fn new(sleep: Duration, wait: Wait) -> Sleepy {
        Sleepy {
            schema: common::thing_schema(),
            sleep,
            wait,
            timer: Timer::start(),
            slept: Default::default(),
            creates: Default::default(),
        }
    }
}

impl Provider for Sleepy {
    bench_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(common::plan_with_unknown_id(r)))
    }
    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        Box::pin(async move {
            let started = Instant::now();
            match self.wait {
                Wait::Blocking => tokio::task::block_in_place(|| std::thread::sleep(self.sleep)),
                Wait::Tokio => tokio::time::sleep(self.sleep).await,
                Wait::Timer => self.timer.sleep(self.sleep).await,
            }
            let ended = Instant::now();
            self.slept.fetch_add((ended - started).as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
            let response = common::apply_with_id_from_name(r);
            self.note_create(&response.new_state, started, ended);
            Ok(response)
        })
    }
    fn read_resource<'a>(&'a self, _: &'a str, current: &'a Value, private: &'a [u8]) -> CallFuture<'a, ReadResponse> {
        ready(Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() }))
    }
}

impl Sleepy {
    /// Remembers when thing `rN` was created.
    fn note_create(&self, state: &Value, started: Instant, ended: Instant) {
        let Some(n) = state.get_attr("name").as_str().and_then(|n| n.strip_prefix('r')?.parse::<usize>().ok()) else {
            return;
        };
        let mut creates = self.creates.lock().unwrap();
        if creates.len() <= n {
            creates.resize(n + 1, None);
        }
        creates[n] = Some((started, ended));
    }

    /// For each thing with dependencies, how long after the last of them
    /// was created its own create started: the executor's hand-off, which
    /// every step of the longest chain pays. Sorted.
    fn hand_offs(&self, deps: &[Vec<usize>]) -> Vec<Duration> {
        let creates = self.creates.lock().unwrap();
        let mut out: Vec<Duration> = deps
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.is_empty())
            .map(|(i, d)| {
                let started = creates[i].unwrap().0;
                let ready = d.iter().map(|j| creates[*j].unwrap().1).max().unwrap();
                started.saturating_duration_since(ready)
            })
            .collect();
        out.sort();
        out
    }
}

/// How the provider's create waits.
#[derive(Clone, Copy, PartialEq)]
enum Wait {
    /// On [`Timer`]: to within a few microseconds, holding no thread.
    Timer,
    /// On tokio's timer, whose 1 ms ticks make a 10 ms wait last 10-11 ms.
    Tokio,
    /// Holding its thread (`std::thread::sleep`).
    Blocking,
}

/// Wakes waiters at their deadline, to within the OS's timer slack (50 µs
/// on Linux): one thread for all of them, so a wait holds no thread.
/// (tokio's timer rounds every deadline up to its next 1 ms tick, which
/// would add about a millisecond to each create and hide the executor's
/// own overhead.)
struct Timer {
    shared: Arc<(std::sync::Mutex<Vec<Waiter>>, std::sync::Condvar)>,
}

/// A deadline and whom to wake then.
type Waiter = (Instant, tokio::sync::oneshot::Sender<()>);

impl Timer {
    fn start() -> Timer {
        let shared = Arc::new((std::sync::Mutex::new(Vec::<Waiter>::new()), std::sync::Condvar::new()));
        let theirs = Arc::clone(&shared);
        std::thread::spawn(move || {
            let (waiters, changed) = &*theirs;
            let mut waiters = waiters.lock().unwrap();
            loop {
                let now = Instant::now();
                let (due, later): (Vec<_>, Vec<_>) = waiters.drain(..).partition(|(at, _)| *at <= now);
                *waiters = later;
                for (_, wake) in due {
                    let _ = wake.send(());
                }
                waiters = match waiters.iter().map(|(at, _)| *at).min() {
                    Some(next) => changed.wait_timeout(waiters, next - now).unwrap().0,
                    None => changed.wait(waiters).unwrap(),
                };
            }
        });
        Timer { shared }
    }

    async fn sleep(&self, duration: Duration) {
        let (wake, woken) = tokio::sync::oneshot::channel();
        self.shared.0.lock().unwrap().push((Instant::now() + duration, wake));
        self.shared.1.notify_one();
        let _ = woken.await;
    }
}

/// A small deterministic generator (xorshift64*), so runs are comparable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random DAG: each resource depends on up to three earlier ones, chosen
/// mostly among the recent ones so that chains get long. Returns the
/// dependencies of each resource and the longest chain, in resources.
fn random_dag(n: usize, seed: u64) -> (Vec<Vec<usize>>, usize) {
    let mut rng = Rng(seed.max(1));
    let mut deps = Vec::with_capacity(n);
    let mut depth = vec![1usize; n];
    for i in 0..n {
        let mut d: Vec<usize> = Vec::new();
        if i > 0 {
            for _ in 0..rng.below(4) {
                let window = (i as u64).min(60);
                let j = i - 1 - rng.below(window) as usize;
                if !d.contains(&j) {
                    d.push(j);
                }
            }
        }
        depth[i] = 1 + d.iter().map(|j| depth[*j]).max().unwrap_or(0);
        deps.push(d);
    }
    let longest = depth.iter().copied().max().unwrap_or(0);
    (deps, longest)
}

fn config_text(deps: &[Vec<usize>]) -> String {
    let mut out = String::new();
    for (i, d) in deps.iter().enumerate() {
        let refs: Vec<String> = d.iter().map(|j| format!("bench_thing.r{j}.id")).collect();
        let _ = writeln!(
            out,
            "resource \"bench_thing\" \"r{i}\" {{\n  name = \"r{i}\"\n  deps = [{}]\n}}",
            refs.join(", ")
        );
    }
    out
}

struct Options {
    wait: Wait,
    state_dir: Option<std::path::PathBuf>,
    resources: usize,
    sleep_ms: u64,
    parallelism: Vec<usize>,
    seed: u64,
}

fn options() -> Options {
    let mut o = Options {
        wait: Wait::Timer,
        state_dir: None,
        resources: 1000,
        sleep_ms: 10,
        parallelism: Vec::new(),
        seed: 42,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--blocking" {
            o.wait = Wait::Blocking;
            continue;
        }
        if a == "--tokio-timer" {
            o.wait = Wait::Tokio;
            continue;
        }
        if a == "--state-dir" {
            o.state_dir = args.next().map(Into::into);
            continue;
        }
        let mut value =
            || args.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or_else(|| panic!("{a} needs a number"));
        match a.as_str() {
            "--resources" => o.resources = value() as usize,
            "--sleep-ms" => o.sleep_ms = value(),
            "--parallelism" => o.parallelism.push(value() as usize),
            "--seed" => o.seed = value(),
            // `cargo bench` passes --bench; ignore what is not ours.
            _ => {}
        }
    }
    if o.parallelism.is_empty() {
        o.parallelism = vec![10, 64, 256];
    }
    o
}

fn main() {
    let o = options();
    let (deps, longest) = random_dag(o.resources, o.seed);
    let base = tempfile::tempdir().expect("a temporary directory");
    let sleepy = Arc::new(Sleepy::new(Duration::from_millis(o.sleep_ms), o.wait));
    let providers: Providers = [("bench".to_string(), sleepy.clone() as Arc<dyn Provider>)].into();
    let engine = Engine::in_process(providers).expect("an engine");
    println!(
        "{} resources, longest chain {longest}, create sleeps {} ms, {} worker threads",
        o.resources,
        o.sleep_ms,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:>11} {:>10} {:>10} {:>7} {:>12} {:>14}",
        "parallelism", "wall", "bound", "ratio", "mean create", "hand-off p50/p90"
    );
    for p in &o.parallelism {
        // The state (and its journal) is written beside the configuration.
        let dir = tempfile::tempdir_in(o.state_dir.as_deref().unwrap_or(base.path())).expect("a state directory");
        std::fs::write(dir.path().join("main.tf"), config_text(&deps)).unwrap();
        let ws = Workspace::load(dir.path(), &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let options = RunOptions { parallelism: *p, intent: Intent::Change, ..RunOptions::default() };
        let planned = engine.plan(&ws, options, true, &Quiet).unwrap_or_else(|e| panic!("{e:#}"));
        sleepy.slept.store(0, std::sync::atomic::Ordering::Relaxed);
        sleepy.creates.lock().unwrap().clear();
        let started = Instant::now();
        let (report, _) = engine.apply(&ws, planned, Arc::new(Quiet));
        let wall = started.elapsed();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(report.added, o.resources);
        let bound = Duration::from_millis(o.sleep_ms) * longest.max(o.resources.div_ceil(*p)) as u32;
        let mean_create = sleepy.slept.load(std::sync::atomic::Ordering::Relaxed) as f64 / o.resources as f64 / 1e6;
        let hand_offs = sleepy.hand_offs(&deps);
        let quantile =
            |q: f64| hand_offs.get((hand_offs.len() as f64 * q) as usize).map_or(0.0, |d| d.as_secs_f64() * 1e3);
        println!(
            "{p:>11} {:>9.3}s {:>9.3}s {:>7.3} {mean_create:>10.2}ms {:>6.2}/{:.2}ms",
            wall.as_secs_f64(),
            bound.as_secs_f64(),
            wall.as_secs_f64() / bound.as_secs_f64(),
            quantile(0.5),
            quantile(0.9),
        );
    }
    println!("target: ratio <= 1.05 at every parallelism (issue 17)");
}
