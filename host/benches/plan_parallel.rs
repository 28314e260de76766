//! How close a no-op plan gets to its floor when providers are slow.
//!
//! N resources already exist (default 40); the in-process provider's
//! refresh (`read-resource`) and plan each wait D ms on a timer (default
//! 100, a provider behind a cloud API), holding no thread. A no-op plan at
//! parallelism P can take no less than `2 × ceil(N / P) × D` (each
//! resource's refresh, then its plan); a plan that calls providers one at a
//! time takes `2 × N × D`. It prints the wall time of the plan, that floor,
//! their ratio, and what a serial plan would take.
//!
//! ```sh
//! cargo bench -p cairn --bench plan_parallel
//! cargo bench -p cairn --bench plan_parallel -- --resources 200 --parallelism 10 --parallelism 50
//! ```
//!
//! Options (after `--`): `--resources N`, `--wait-ms D`, `--parallelism P`
//! (repeatable; default 1, 10 and 40). It prints numbers, not pass or fail.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

mod common;

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

/// `bench_thing` whose refresh and plan each wait (when `slow` is on).
struct Slow {
    schema: ProviderSchema,
    wait: Duration,
    slow: std::sync::atomic::AtomicBool,
}

impl Slow {
    async fn pause(&self) {
        if self.slow.load(std::sync::atomic::Ordering::Relaxed) {
            tokio::time::sleep(self.wait).await;
        }
    }
}

impl Provider for Slow {
    bench_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        Box::pin(async move {
            self.pause().await;
            Ok(common::plan_with_unknown_id(r))
        })
    }
    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        ready(Ok(common::apply_with_id_from_name(r)))
    }
    fn read_resource<'a>(&'a self, _: &'a str, current: &'a Value, private: &'a [u8]) -> CallFuture<'a, ReadResponse> {
        Box::pin(async move {
            self.pause().await;
            Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() })
        })
    }
}

fn main() {
    let (mut resources, mut wait_ms, mut parallelism) = (40usize, 100u64, Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value =
            || args.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or_else(|| panic!("{a} needs a number"));
        match a.as_str() {
            "--resources" => resources = value() as usize,
            "--wait-ms" => wait_ms = value(),
            "--parallelism" => parallelism.push(value() as usize),
            // `cargo bench` passes --bench; ignore what is not ours.
            _ => {}
        }
    }
    if parallelism.is_empty() {
        parallelism = vec![1, 10, 40];
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let hcl: String =
        (0..resources).map(|i| format!("resource \"bench_thing\" \"r{i}\" {{\n  name = \"r{i}\"\n}}\n")).collect();
    std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
    let slow =
        Arc::new(Slow { schema: common::thing_schema(), wait: Duration::from_millis(wait_ms), slow: false.into() });
    let providers: Providers = [("bench".to_string(), slow.clone() as Arc<dyn Provider>)].into();
    let engine = Engine::in_process(providers).expect("an engine");
    let ws = Workspace::load(dir.path(), &[]).unwrap_or_else(|e| panic!("{e:#}"));
    let change = RunOptions { parallelism: 64, intent: Intent::Change, ..RunOptions::default() };
    let planned = engine.plan(&ws, change, true, &Quiet).unwrap_or_else(|e| panic!("{e:#}"));
    let (report, _) = engine.apply(&ws, planned, Arc::new(Quiet));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    slow.slow.store(true, std::sync::atomic::Ordering::Relaxed);

    let wait = Duration::from_millis(wait_ms);
    println!("no-op plan of {resources} resources, refresh and plan wait {wait_ms} ms each");
    println!("{:>11} {:>10} {:>10} {:>7} {:>10}", "parallelism", "wall", "floor", "ratio", "serial");
    for p in parallelism {
        let options = RunOptions { parallelism: p, ..RunOptions::default() };
        let started = Instant::now();
        let planned = engine.plan(&ws, options, true, &Quiet).unwrap_or_else(|e| panic!("{e:#}"));
        let wall = started.elapsed();
        assert!(!planned.plan.has_changes(), "a no-op plan");
        drop(planned);
        let floor = wait * 2 * resources.div_ceil(p) as u32;
        let serial = wait * 2 * resources as u32;
        println!(
            "{p:>11} {:>9.3}s {:>9.3}s {:>7.3} {:>9.3}s",
            wall.as_secs_f64(),
            floor.as_secs_f64(),
            wall.as_secs_f64() / floor.as_secs_f64(),
            serial.as_secs_f64()
        );
    }
}
