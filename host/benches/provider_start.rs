//! What starting a provider costs, for each bundled provider: a cold
//! compile (Cranelift, no cache), a warm start (the compiled code loaded
//! back from the authenticated cache), one instantiation, and the round
//! trip of a call that does nothing (`validate-resource` of a null
//! configuration, through the instance pool and the wire conversions).
//!
//! ```sh
//! cargo bench -p cairn --bench provider_start
//! cargo bench -p cairn --bench provider_start -- --runs 50
//! ```
//!
//! Each figure is the median of `--runs` runs (default 20; cold compiles
//! 5). Targets on the 2-core reference machine: warm start ≤ 5 ms,
//! instantiation ≤ 50 µs, no-op call ≤ 5 µs. It prints numbers, not pass
//! or fail.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::runtime::{BUILTIN_NAMES, Runtime, Sandbox, builtin};
use cairn::value::Value;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize =
        args.iter().position(|a| a == "--runs").and_then(|i| args.get(i + 1)).map_or(20, |n| n.parse().unwrap());
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let cache = tempfile::tempdir().unwrap();
    println!(
        "{:<8} {:>14} {:>14} {:>14} {:>14}",
        "provider", "cold compile", "warm start", "instantiate", "no-op call"
    );
    for name in BUILTIN_NAMES {
        let wasm = builtin(name).unwrap();
        let cold = median(runs.min(5), || {
            let runtime = Runtime::with_cache_dir(None).unwrap();
            let start = Instant::now();
            runtime.load(name, wasm).unwrap();
            start.elapsed()
        });
        let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
        runtime.load(name, wasm).unwrap();
        let warm = median(runs, || {
            let start = Instant::now();
            let loaded = runtime.load(name, wasm).unwrap();
            let elapsed = start.elapsed();
            assert!(loaded.from_cache(), "the warm start compiled: is there a cache key?");
            elapsed
        });
        let loaded = runtime.load(name, wasm).unwrap();
        let sandbox = Sandbox::default();
        let instantiate = tokio.block_on(async {
            let mut times = Vec::new();
            for _ in 0..runs * 10 {
                let start = Instant::now();
                loaded.instantiate(&sandbox).await.unwrap();
                times.push(start.elapsed());
            }
            middle(times)
        });
        let call = tokio.block_on(async {
            let provider = loaded.configure(Sandbox::default(), Value::Null).await.unwrap();
            let type_name = provider.schema().resources.keys().next().unwrap().clone();
            let mut times = Vec::new();
            for _ in 0..runs * 100 {
                let start = Instant::now();
                provider.validate_resource(&type_name, &Value::Null).await.unwrap();
                times.push(start.elapsed());
            }
            middle(times)
        });
        println!("{name:<8} {:>14} {:>14} {:>14} {:>14}", show(cold), show(warm), show(instantiate), show(call));
    }
    println!("\ntargets: warm start <= 5 ms, instantiate <= 50 µs, no-op call <= 5 µs (medians)");
}

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    middle((0..runs.max(1)).map(|_| f()).collect())
}

fn middle(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn show(d: Duration) -> String {
    if d >= Duration::from_millis(1) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    }
}
