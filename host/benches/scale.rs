//! How cairn's cost grows with the size of a configuration: the `cairn`
//! binary itself (release build, bundled providers), on generated
//! configurations, each figure printed beside its target. It prints
//! numbers, never pass or fail.
//!
//! - **Random DAG** of N `null_resource`s, each referring to up to two
//!   earlier ones (the configuration `scripts/bench-vs-terraform.sh` gives cairn and Terraform):
//!   apply from empty at `-parallelism=10`, then a no-op plan with refresh
//!   and one with `-refresh=false`; the peak RSS of the largest run and the
//!   state file's bytes per resource; and, for every N whose half was
//!   measured too, how much doubling N multiplied each time.
//! - **Reference-heavy graph**: `--refs N` `null_resource.base` (count),
//!   as many `null_resource.ref` each referring to one of them, and a
//!   `for_each` over all of `ref`: apply, then the no-op plans (default
//!   N = 10,000, as issue 17 asks: references share one copy of a block's
//!   value and the apply graph joins large blocks, so this costs about as
//!   much as a random DAG of 3N resources).
//! - **State load and save** of 100,000 resources through the local
//!   backend (atomic write with fsync), in this process.
//!
//! ```sh
//! cargo bench -p cairn --bench scale                      # 1k, 5k, 10k, 50k, 100k
//! cargo bench -p cairn --bench scale -- --sizes 1000,10000 --runs 1
//! ```
//!
//! Options (after `--`): `--sizes N,N,…`, `--runs R` (medians of R, default
//! 3), `--seed S`, `--refs N` (default 10000), `--skip-refs`, `--skip-state`, `--dir DIR` (where to
//! generate, default a temporary directory). Peak RSS needs `/usr/bin/time`
//! (Debian package `time`); without it RSS shows as `-`.
//!
//! The apply-DAG ratio to the critical path is `--bench apply_dag`, and the
//! provider's start and call costs `--bench provider_calls`.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn::addr::InstanceAddr;
use cairn::state::{InstanceState, LocalBackend, State};

mod dag;

use dag::random_dag;

/// The cairn binary this benchmark was built with.
const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// The targets of issue 17, by phase: seconds at 10,000 and at 100,000.
const TARGETS: [(&str, f64, f64); 3] = [("apply", 1.0, 10.0), ("plan", 0.5, 5.0), ("plan -refresh=false", 0.15, 2.0)];

struct Options {
    sizes: Vec<usize>,
    runs: usize,
    seed: u64,
    refs: bool,
    refs_n: usize,
    state: bool,
    dir: Option<PathBuf>,
}

fn main() {
    let mut o = Options {
        sizes: vec![1_000, 5_000, 10_000, 50_000, 100_000],
        runs: 3,
        seed: 1,
        refs: true,
        refs_n: 10_000,
        state: true,
        dir: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => o.sizes = args.next().unwrap().split(',').map(|n| n.trim().parse().unwrap()).collect(),
            "--runs" => o.runs = args.next().unwrap().parse().unwrap(),
            "--seed" => o.seed = args.next().unwrap().parse().unwrap(),
            "--skip-refs" => o.refs = false,
            "--refs" => o.refs_n = args.next().unwrap().parse().unwrap(),
            "--skip-state" => o.state = false,
            "--dir" => o.dir = Some(PathBuf::from(args.next().unwrap())),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    let temp = tempfile::tempdir().unwrap();
    let root = o.dir.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let rss = Path::new("/usr/bin/time").exists();
    println!("cairn {CAIRN}");
    println!("{} runs a figure (median); peak RSS {}", o.runs, if rss { "by /usr/bin/time" } else { "unavailable" });
    println!();

    random_dags(&o, &root, rss);
    if o.refs {
        reference_heavy(&o, &root, rss);
    }
    if o.state {
        state_io(&root);
    }
}

/// One timed run of the binary: wall seconds and peak RSS in KB (0 when
/// unknown). Panics if it fails.
fn run(dir: &Path, args: &[&str], rss: bool) -> (f64, u64) {
    let usage = dir.join("rusage");
    let mut cmd = if rss {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-f").arg("%M").arg("-o").arg(&usage).arg(CAIRN);
        c
    } else {
        Command::new(CAIRN)
    };
    cmd.args(args).arg(".").current_dir(dir).env_remove("CAIRN_LOG");
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "cairn {args:?} failed in {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let kb = std::fs::read_to_string(&usage).ok().and_then(|t| t.lines().last()?.trim().parse().ok()).unwrap_or(0);
    (wall, kb)
}

/// Per phase, the times of each run.
type Times = BTreeMap<&'static str, Vec<f64>>;

/// Applies `main.tf` in fresh copies of `config` `runs` times, each followed
/// by the no-op plans; returns the times, the peak RSS and the state size.
fn measure(config: &str, root: &Path, name: &str, runs: usize, rss: bool) -> (Times, u64, u64) {
    let mut times = Times::new();
    let (mut peak, mut state_bytes) = (0, 0);
    for r in 0..runs {
        let dir = root.join(format!("{name}-{r}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("main.tf"), config).unwrap();
        for (phase, args) in [
            ("apply", &["apply", "-auto-approve", "-parallelism=10"][..]),
            ("plan", &["plan", "-detailed-exitcode"][..]),
            ("plan -refresh=false", &["plan", "-refresh=false", "-detailed-exitcode"][..]),
        ] {
            // `-detailed-exitcode` makes a plan with changes fail the run:
            // the plans measured are no-ops.
            let (wall, kb) = run(&dir, args, rss);
            times.entry(phase).or_default().push(wall);
            peak = peak.max(kb);
        }
        state_bytes = std::fs::metadata(dir.join("cairn.state.json")).unwrap().len();
        std::fs::remove_dir_all(&dir).unwrap();
    }
    (times, peak, state_bytes)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn random_dags(o: &Options, root: &Path, rss: bool) {
    println!("Random DAG of N null_resources (each refers to up to 2 earlier ones), seed {}", o.seed);
    let mut header = format!("{:>8}", "N");
    for (phase, _, _) in TARGETS {
        write!(header, " {:>20}", format!("{phase} s")).unwrap();
    }
    write!(header, " {:>12} {:>12}", "peak RSS MB", "state B/res").unwrap();
    println!("{header}");
    let mut medians: BTreeMap<usize, BTreeMap<&str, f64>> = BTreeMap::new();
    for &n in &o.sizes {
        let (times, peak, state_bytes) = measure(&random_dag(n, o.seed), root, &format!("dag-{n}"), o.runs, rss);
        let mut line = format!("{n:>8}");
        for (phase, _, _) in TARGETS {
            let m = median(&times[phase]);
            medians.entry(n).or_default().insert(phase, m);
            write!(line, " {:>20.3}", m).unwrap();
        }
        let rss_mb = if peak > 0 { format!("{:.1}", peak as f64 / 1024.0) } else { "-".into() };
        write!(line, " {rss_mb:>12} {:>12.0}", state_bytes as f64 / n as f64).unwrap();
        println!("{line}");
    }
    println!("targets: {}", target_line());
    println!("          peak RSS at 100,000 <= 500 MB; state <= 300 bytes per null_resource");
    let doublings: Vec<(usize, usize)> =
        o.sizes.iter().filter(|n| *n % 2 == 0 && o.sizes.contains(&(*n / 2))).map(|n| (*n / 2, *n)).collect();
    for (half, n) in doublings {
        let mut line = format!("time({n})/time({half}):");
        for (phase, _, _) in TARGETS {
            write!(line, " {phase} x{:.2}", medians[&n][phase] / medians[&half][phase]).unwrap();
        }
        println!("{line}   (target <= x2.2)");
    }
    // Ten times N should cost about ten times as much, not a hundred.
    for &n in o.sizes.iter().filter(|n| o.sizes.contains(&(**n * 10))) {
        let mut line = format!("time({})/time({n}):", n * 10);
        for (phase, _, _) in TARGETS {
            write!(line, " {phase} x{:.1}", medians[&(n * 10)][phase] / medians[&n][phase]).unwrap();
        }
        println!("{line}   (linear: x10)");
    }
    println!();
}

fn target_line() -> String {
    TARGETS
        .iter()
        .map(|(p, a, b)| format!("{p} <= {a} s at 10,000, <= {b} s at 100,000"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// N `base`, N `ref` each referring to one `base`, and a `for_each` over
/// every `ref`, each instance referring to its own `ref`. The `for_each`
/// values are known at plan time: cairn does not yet evaluate a `for_each`
/// again at apply, so `each.value` of an id known only after apply would
/// stay unknown.
fn reference_heavy(o: &Options, root: &Path, rss: bool) {
    let n = o.refs_n;
    let config = format!(
        r#"resource "null_resource" "base" {{
  count = {n}
}}

resource "null_resource" "ref" {{
  count = {n}
  triggers = {{
    base = null_resource.base[(count.index * 7919) % {n}].id
  }}
}}

resource "null_resource" "all" {{
  for_each = {{ for i, r in null_resource.ref : tostring(i) => i }}
  triggers = {{
    ref = null_resource.ref[each.value].id
  }}
}}
"#
    );
    println!("Reference-heavy graph: {n} base (count), {n} ref each referring to one base, for_each over all ref");
    let (times, peak, _) = measure(&config, root, "refs", o.runs, rss);
    for (phase, _, _) in TARGETS {
        println!("  {:<22} {:>8.3} s", phase, median(&times[phase]));
    }
    if peak > 0 {
        println!("  {:<22} {:>8.1} MB", "peak RSS", peak as f64 / 1024.0);
    }
    println!("  ({} instances; compare with the random DAG of as many)", 3 * n);
    println!();
}

/// Writes and reads a state of 100,000 `null_resource`s through the local
/// backend.
fn state_io(root: &Path) {
    const N: usize = 100_000;
    let dir = root.join("state-io");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cairn.state.json");
    let mut state = State::new();
    for i in 0..N {
        let addr: InstanceAddr = format!("null_resource.r{i}").parse().unwrap();
        let mut inst = InstanceState::new(
            addr,
            "null",
            0,
            serde_json::json!({"id": format!("{}", 1_000_000_007u64 * i as u64), "triggers": {"a": "123456789"}}),
        );
        inst.dependencies = vec![format!("null_resource.r{}", i / 2).parse::<InstanceAddr>().unwrap().resource];
        state.set(inst);
    }
    let mut backend = LocalBackend::open(&path).unwrap();
    let mut saves = Vec::new();
    let mut loads = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        backend.write(&mut state).unwrap();
        saves.push(started.elapsed());
        let started = Instant::now();
        let read = backend.read().unwrap();
        loads.push(started.elapsed());
        assert_eq!(read.resources.len(), N);
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64()
    };
    println!("State of {N} null_resources ({:.1} MB, local backend)", size as f64 / 1e6);
    println!("  save (atomic: backup, temp file, fsync, rename) {:>8.3} s", med(&mut saves));
    println!("  load (parse, index by address)                  {:>8.3} s", med(&mut loads));
    std::fs::remove_dir_all(&dir).unwrap();
}
