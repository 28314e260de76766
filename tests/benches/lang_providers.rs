//! What a Python, JavaScript or C provider costs the host, next to a Rust one:
//! component size, cold compile (Cranelift, nothing cached), the first
//! answer of a tiered first run (Winch's baseline code: compile, then the
//! first instance), warm start
//! (the compiled code loaded back from the cache, then the first instance:
//! instantiate, `schema`, `configure`), and the round trip of a no-op call
//! (`validate-resource`, averaged over many calls on a configured
//! provider). The providers are built from source as the e2e tests build
//! them (so the Python and JavaScript toolchains must be installed; see
//! `scripts/test.sh`).
//!
//! ```sh
//! cargo bench -p cairn-e2e --bench lang_providers            # release-built host
//! cargo bench -p cairn-e2e --bench lang_providers -- --calls 1000
//! cargo bench -p cairn-e2e --bench lang_providers -- --only go
//! ```
//!
//! It prints numbers, not pass or fail.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::runtime::{CompileMode, Runtime, Sandbox};
use cairn::value::Value;
use cairn_e2e::bundled_component;
use cairn_e2e::languages::{Lang, built_component};

fn main() {
    let mut calls = 300u32;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--calls" => calls = args.next().and_then(|v| v.parse().ok()).expect("--calls needs a number"),
            "--bench" => {}
            // `--only go`: the providers whose label contains the word.
            "--only" => only = Some(args.next().expect("--only needs a word")),
            other => panic!("unknown option {other}"),
        }
    }
    let providers = [
        ("rust (null)", bundled_component("null"), "null_resource", Value::object([("triggers", Value::Null)])),
        (
            "python (archive)",
            built_component(Lang::Python, "archive"),
            "archive_file",
            Value::object([
                ("type", Value::string("zip")),
                ("source_file", Value::string("src/a.txt")),
                ("source_dir", Value::Null),
                ("output_path", Value::string("out/a.zip")),
                ("output_sha256", Value::Null),
                ("output_size", Value::Null),
                ("id", Value::Null),
            ]),
        ),
        // `http` has no resource type: the call is answered with one
        // diagnostic, after the same decoding and lookup.
        ("javascript (http)", built_component(Lang::JavaScript, "http"), "http", Value::Null),
        // The smallest Go provider here (no net/http): the Go runtime's own
        // cost.
        (
            "go (gomisbehave)",
            built_component(Lang::Go, "testing/gomisbehave"),
            "gomisbehave_ok",
            Value::object([("id", Value::Null)]),
        ),
        // A Terraform provider written with terraform-plugin-framework,
        // through the bridge (providers/tfbridge): the framework, gRPC
        // (linked, never started) and net/http on top of the Go runtime.
        (
            "go tf (tfhttp)",
            built_component(Lang::Go, "testing/tfhttp"),
            "tfhttp_misbehave",
            Value::object([("id", Value::Null), ("action", Value::string("none"))]),
        ),
        (
            "c (kv)",
            built_component(Lang::C, "kv"),
            "kv_entry",
            Value::object([
                ("path", Value::string("store/a")),
                ("value", Value::string("a")),
                ("labels", Value::Null),
                ("secret", Value::Null),
                ("id", Value::Null),
                ("revision", Value::Null),
                ("size", Value::Null),
            ]),
        ),
    ];
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!(
        "{:<18} {:>12} {:>13} {:>20} {:>13} {:>15} {:>13}",
        "provider", "size", "cold compile", "baseline 1st answer", "warm load", "first instance", "no-op call"
    );
    for (label, wasm_path, type_name, config) in providers {
        if only.as_ref().is_some_and(|word| !label.contains(word.as_str())) {
            continue;
        }
        let wasm = std::fs::read(&wasm_path).unwrap();
        let baseline = baseline_first_answer(&tokio, &wasm);
        let cache = tempfile::tempdir().unwrap();

        let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
        let started = Instant::now();
        let loaded = runtime.load("bench", &wasm).unwrap();
        let cold = started.elapsed();
        assert!(!loaded.from_cache(), "the first load must compile");
        drop((loaded, runtime));

        // A new runtime, as a second `cairn` run would make.
        let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
        let started = Instant::now();
        let loaded = runtime.load("bench", &wasm).unwrap();
        let warm = started.elapsed();
        assert!(loaded.from_cache(), "the second load must come from the cache");
        let started = Instant::now();
        let provider = tokio.block_on(loaded.configure(Sandbox::default(), Value::Null)).unwrap();
        let first = started.elapsed();

        let started = Instant::now();
        for _ in 0..calls {
            tokio.block_on(provider.validate_resource(type_name, &config)).unwrap();
        }
        let call = started.elapsed() / calls;
        println!(
            "{label:<18} {:>9} KB {:>13} {:>20} {:>13} {:>15} {:>13}",
            wasm.len() / 1000,
            ms(cold),
            ms(baseline),
            ms(warm),
            ms(first),
            format!("{:.1} µs", call.as_secs_f64() * 1e6)
        );
    }
}

/// A tiered first run's wait for its first answer: Winch's compile, then
/// the first instance (instantiate, `schema`, `configure`). Returns once
/// the background compile it started has ended, so that it does not take
/// the cores from the next measurement.
fn baseline_first_answer(tokio: &tokio::runtime::Runtime, wasm: &[u8]) -> Duration {
    let cache = tempfile::tempdir().unwrap();
    let runtime = Runtime::with_cache_dir_and_mode(Some(cache.path().to_path_buf()), CompileMode::Tiered).unwrap();
    let started = Instant::now();
    let loaded = runtime.load("bench", wasm).unwrap();
    tokio.block_on(loaded.configure(Sandbox::default(), Value::Null)).unwrap();
    let first_answer = started.elapsed();
    cairn_e2e::wait_for_background_compiles(&cache.path().join("components"));
    first_answer
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
