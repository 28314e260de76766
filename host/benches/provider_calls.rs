//! What one WebAssembly provider costs: starting it and calling it.
//!
//! With the bundled `null` provider (the component embedded in the
//! binary), it prints the median time of:
//!
//! - cold start: compiling the component with Cranelift (no cache);
//! - warm start: loading it again from the cache of compiled code, as
//!   every run after the first does;
//! - instantiation: a new instance and its `schema` call;
//! - configure: a new instance, `schema` and `configure` (what a run does
//!   once per provider);
//! - a no-op call: `validate-resource` of an empty configuration;
//! - payload round trips: `plan-resource` of a `null_resource` whose
//!   `triggers` hold 4 KB and 1 MB, which travel to the provider (config,
//!   proposed state) and back (planned state).
//!
//! ```sh
//! cargo bench -p cairn --bench provider_calls
//! ```
//!
//! Options (after `--`): `--runs N` (default 5 for starts, 50× that for
//! calls). It prints numbers, not pass or fail.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::provider::PlanRequest;
use cairn::runtime::{Runtime, Sandbox, builtin};
use cairn::value::Value;

fn main() {
    let mut runs = 5usize;
    let mut args = std::env::args().skip(1);
    // Anything else (`cargo bench` passes `--bench`) is ignored.
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs);
        }
    }
    let wasm = builtin("null").expect("the null provider is bundled");
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::resolve(dir.path(), &[], &[]).unwrap();
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();

    println!("provider `null` ({} KB component), medians of {runs} (calls: {})", wasm.len() / 1024, runs * 50);
    println!("{:<44} {:>12}", "", "median");

    let cold = median(runs, || {
        let runtime = Runtime::with_cache_dir(None).unwrap();
        let started = Instant::now();
        runtime.load("null", wasm).unwrap();
        started.elapsed()
    });
    row("cold start (compile, no cache)", cold);

    let cache = tempfile::tempdir().unwrap();
    Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap().load("null", wasm).unwrap();
    let warm = median(runs, || {
        let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
        let started = Instant::now();
        let loaded = runtime.load("null", wasm).unwrap();
        let took = started.elapsed();
        assert!(loaded.from_cache());
        took
    });
    row("warm start (compiled code from the cache)", warm);

    let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
    let loaded = runtime.load("null", wasm).unwrap();
    let instantiate = median(runs, || {
        let started = Instant::now();
        tokio.block_on(loaded.schema(&sandbox)).unwrap();
        started.elapsed()
    });
    row("instantiation (new instance + schema call)", instantiate);
    let configure = median(runs, || {
        let started = Instant::now();
        tokio.block_on(loaded.configure(sandbox.clone(), Value::Null)).unwrap();
        started.elapsed()
    });
    row("configure (instance + schema + configure)", configure);

    let provider = tokio.block_on(loaded.configure(sandbox.clone(), Value::Null)).unwrap();
    let empty = Value::Object([("triggers".to_string(), Value::Null)].into_iter().collect());
    let calls = runs * 50;
    let noop = median(calls, || {
        let started = Instant::now();
        tokio.block_on(provider.validate_resource("null_resource", &empty)).unwrap();
        started.elapsed()
    });
    row("no-op call (validate-resource)", noop);

    for (label, bytes, n) in [("4 KB", 4 * 1024, calls), ("1 MB", 1024 * 1024, runs.max(3) * 4)] {
        let payload = Value::string("x".repeat(bytes));
        let config = Value::Object(
            [
                ("triggers".to_string(), Value::Map([("p".to_string(), payload)].into_iter().collect())),
                ("id".to_string(), Value::Null),
            ]
            .into_iter()
            .collect(),
        );
        let took = median(n, || {
            let request = PlanRequest {
                type_name: "null_resource".to_string(),
                prior_state: Value::Null,
                proposed_new_state: config.clone(),
                config: config.clone(),
                prior_private: Vec::new(),
            };
            let started = Instant::now();
            let planned = tokio.block_on(provider.plan_resource(request)).unwrap();
            let took = started.elapsed();
            assert!(!planned.planned_state.is_null());
            took
        });
        row(&format!("{label} payload round trip (plan-resource)"), took);
    }
}

/// The median of `n` measurements.
fn median(n: usize, mut measure: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..n.max(1)).map(|_| measure()).collect();
    times.sort();
    times[times.len() / 2]
}

fn row(label: &str, took: Duration) {
    let secs = took.as_secs_f64();
    let shown = if secs >= 0.1 {
        format!("{secs:.3} s")
    } else if secs >= 1e-3 {
        format!("{:.2} ms", secs * 1e3)
    } else {
        format!("{:.1} µs", secs * 1e6)
    };
    println!("{label:<44} {shown:>12}");
}
