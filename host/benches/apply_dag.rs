//! How close the executor gets to a graph's critical path.
//!
//! Random DAGs of 1,000 resources, applied by the real [`Applier`] (re-plan,
//! contract checks, every operation's intent and result flushed to the
//! state's journal, the state written at the end) with an in-process
//! provider whose create waits 10 ms on a timer (holding no thread), at
//! parallelism 10 and 64.
//! For each it prints the measured wall time, the lower bound
//! `max(longest chain, ceil(N / P)) × 10 ms`, their ratio, and how long the
//! provider's creates really took on average.
//!
//! ```sh
//! cargo bench -p cairn --bench apply_dag            # optimised
//! cargo bench -p cairn --bench apply_dag --profile dev
//! ```
//!
//! Options (after `--`): `--resources N` (default 1000), `--sleep-ms MS`
//! (10), `--parallelism P` (repeatable; default 10 and 64), `--seed S`,
//! `--state-dir DIR` (where the state and its journal are written, default a
//! temporary directory: a tmpfs such as `/dev/shm` leaves out the disk's
//! `fsync`), `--tokio-timer` (the create waits on tokio's timer, whose 1 ms
//! ticks make a 10 ms wait last about 11 ms), `--blocking` (the create holds
//! its thread while it sleeps, as a provider without
//! `Provider::apply_resource_async` does).
//! It prints numbers, not pass or fail.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::apply::{Applier, Event, EventSink};
use cairn::diag::Diagnostic;
use cairn::graph::DependencyGraph;
use cairn::plan::{PlanOptions, Planner, Providers};
use cairn::provider::{
    ApplyRequest, ApplyResponse, CallFuture, CallResult, PlanRequest, PlanResponse, Provider, ReadResponse,
};
use cairn::schema::{Attribute, Block, ProviderSchema, Schema};
use cairn::state::{LocalBackend, State};
use cairn::value::{Type, Value};

/// `bench_thing`: `name`, `deps` (ids of other things), computed `id`;
/// create waits (see [`Wait`]).
struct Sleepy {
    schema: ProviderSchema,
    sleep: Duration,
    wait: Wait,
    timer: Timer,
    /// Nanoseconds the creates really took, summed.
    slept: std::sync::atomic::AtomicU64,
}

impl Sleepy {
    fn new(sleep: Duration, wait: Wait) -> Sleepy {
        let block = Block {
            attributes: [
                ("name".to_string(), Attribute::required(Type::String)),
                ("deps".to_string(), Attribute::optional(Type::List(Box::new(Type::String)))),
                ("id".to_string(), Attribute::computed(Type::String)),
            ]
            .into(),
            ..Block::default()
        };
        let schema = ProviderSchema {
            resources: [("bench_thing".to_string(), Schema { version: 0, block })].into(),
            ..ProviderSchema::default()
        };
        Sleepy { schema, sleep, wait, timer: Timer::start(), slept: Default::default() }
    }
}

impl Provider for Sleepy {
    fn name(&self) -> &str {
        "bench"
    }
    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }
    fn validate_resource(&self, _: &str, _: &Value) -> CallResult<Vec<Diagnostic>> {
        Ok(Vec::new())
    }
    fn plan_resource(&self, r: PlanRequest) -> CallResult<PlanResponse> {
        let mut planned = r.proposed_new_state;
        if let Value::Object(m) = &mut planned
            && m.get("id").is_none_or(Value::is_null)
        {
            m.insert("id".into(), Value::unknown());
        }
        Ok(PlanResponse { planned_state: planned, ..PlanResponse::default() })
    }
    fn apply_resource(&self, r: ApplyRequest) -> CallResult<ApplyResponse> {
        let mut state = r.planned_state;
        if let Value::Object(m) = &mut state {
            std::thread::sleep(self.sleep);
            let name = m.get("name").cloned().unwrap_or(Value::Null);
            m.insert("id".into(), name);
        }
        Ok(ApplyResponse { new_state: state, ..ApplyResponse::default() })
    }
    fn apply_resource_async(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        Box::pin(async move {
            let started = Instant::now();
            match self.wait {
                Wait::Blocking => return tokio::task::block_in_place(|| self.apply_resource(r)),
                Wait::Tokio => tokio::time::sleep(self.sleep).await,
                Wait::Timer => self.timer.sleep(self.sleep).await,
            }
            self.slept.fetch_add(started.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
            let mut state = r.planned_state;
            if let Value::Object(m) = &mut state {
                let name = m.get("name").cloned().unwrap_or(Value::Null);
                m.insert("id".into(), name);
            }
            Ok(ApplyResponse { new_state: state, ..ApplyResponse::default() })
        })
    }
    fn read_resource(&self, _: &str, current: &Value, private: &[u8]) -> CallResult<ReadResponse> {
        Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() })
    }
    fn read_data_source(&self, _: &str, c: &Value) -> CallResult<(Value, Vec<Diagnostic>)> {
        Ok((c.clone(), Vec::new()))
    }
    fn upgrade_state(&self, _: &str, _: u64, _: &str) -> CallResult<(Value, Vec<Diagnostic>)> {
        unreachable!("no upgrades")
    }
}

/// How the provider's create waits.
#[derive(Clone, Copy, PartialEq)]
enum Wait {
    /// On [`Timer`]: to within a few microseconds, holding no thread.
    Timer,
    /// On tokio's timer, whose 1 ms ticks make a 10 ms wait last 10-11 ms.
    Tokio,
    /// Holding its thread (`std::thread::sleep`), as a provider without
    /// `Provider::apply_resource_async` does.
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

/// Drops every event.
struct Quiet;

impl EventSink for Quiet {
    fn emit(&self, _: Event) {}
    fn diagnostic(&self, _: &Diagnostic) {}
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
        o.parallelism = vec![10, 64];
    }
    o
}

fn main() {
    let o = options();
    let (deps, longest) = random_dag(o.resources, o.seed);
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("main.tf"), config_text(&deps)).unwrap();
    let config = cairn::config::load(dir.path()).unwrap_or_else(|d| panic!("{}", cairn::diag::Diagnostics(d)));
    let sleepy = Arc::new(Sleepy::new(Duration::from_millis(o.sleep_ms), o.wait));
    let provider: Arc<dyn Provider> = sleepy.clone();
    let providers: Providers = [("bench".to_string(), provider)].into();
    println!(
        "{} resources, longest chain {longest}, create sleeps {} ms, {} worker threads",
        o.resources,
        o.sleep_ms,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("{:>11} {:>10} {:>10} {:>7} {:>12}", "parallelism", "wall", "bound", "ratio", "mean create");
    for p in &o.parallelism {
        let graph = DependencyGraph::build(&config).expect("acyclic");
        let state_dir = tempfile::tempdir_in(o.state_dir.as_deref().unwrap_or(dir.path())).expect("a state directory");
        let state_path = state_dir.path().join("cairn.state.json");
        let backend = LocalBackend::open(&state_path).expect("state");
        let state = State::new();
        let planner = Planner {
            config: &config,
            graph: &graph,
            providers: &providers,
            state: &state,
            variables: BTreeMap::new(),
            options: PlanOptions::default(),
        };
        let plan = planner.plan().unwrap_or_else(|d| panic!("{}", cairn::diag::Diagnostics(d)));
        let applier = Applier {
            config: config.clone(),
            graph,
            providers: providers.clone(),
            plan,
            variables: BTreeMap::new(),
            parallelism: *p,
            events: Arc::new(Quiet),
        };
        let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        sleepy.slept.store(0, std::sync::atomic::Ordering::Relaxed);
        let started = Instant::now();
        let (report, _) = tokio.block_on(applier.apply(state, backend));
        let wall = started.elapsed();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(report.added, o.resources);
        let bound = Duration::from_millis(o.sleep_ms) * longest.max(o.resources.div_ceil(*p)) as u32;
        let mean_create = sleepy.slept.load(std::sync::atomic::Ordering::Relaxed) as f64 / o.resources as f64 / 1e6;
        println!(
            "{p:>11} {:>9.3}s {:>9.3}s {:>7.3} {mean_create:>10.2}ms",
            wall.as_secs_f64(),
            bound.as_secs_f64(),
            wall.as_secs_f64() / bound.as_secs_f64(),
        );
    }
}
