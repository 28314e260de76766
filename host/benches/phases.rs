//! Where the time of a large plan and apply goes, phase by phase, on 1, 2
//! and all cores: the serial share of each phase, visible on any machine.
//!
//! The `cairn` binary (release build, bundled `null` provider) applies a
//! random DAG of N `null_resource`s (default 100,000; the graph of `--bench
//! scale`) from empty, then runs a no-op plan with refresh and one with
//! `-refresh=false`, once for each thread count T. Each run has
//! `CAIRN_THREADS=T` (the engine's own pools: the async workers that run
//! the plan and apply walks and the provider calls, and the runs that
//! parse the configuration and read and write the state) and, where
//! `taskset` exists, is pinned to T cores so that nothing else it starts
//! (the journal's writer, blocking threads) uses another core.
//! `-parallelism` (the number of provider calls in flight, default 10)
//! stays the same for every T: it bounds how many calls wait at once, not
//! how many cores run them. The phases are the lines the binary logs at
//! `CAIRN_LOG=cairn=debug` (each with its `elapsed`), and "rest" is the
//! wall time they do not cover (starting the process and its runtime,
//! loading the provider's code from the cache, exiting).
//!
//! For each command it prints every phase's seconds at each T, the speed-up
//! from 1 to the most threads, and the serial share Amdahl's law gives for
//! the whole command (`s` in `t(T) = t(1) × (s + (1 − s) / T)`).
//!
//! ```sh
//! cargo bench -p cairn --bench phases                            # 100,000; 1, 2, all cores
//! cargo bench -p cairn --bench phases -- --size 10000 --runs 3
//! cargo bench -p cairn --bench phases -- --threads 1,2,4,8,16    # a 16-core machine
//! ```
//!
//! Options (after `--`): `--size N`, `--threads T,T,…` (default 1, 2 and
//! the machine's cores), `--runs R` (medians of R, default 1; the thread
//! counts take turns within each run), `--parallelism P`, `--seed S`,
//! `--dir DIR` (where to generate, default a temporary directory),
//! `--cairn PATH` (time another build of the binary, such as one from
//! before a change). It prints numbers, never pass or fail.

// A benchmark that cannot set itself up should stop.
#![allow(clippy::unwrap_used)]

mod dag;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The cairn binary this benchmark was built with (`--cairn PATH` times
/// another, such as a build from before a change).
const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// The commands timed, in the order they run in one directory.
const COMMANDS: [(&str, &[&str]); 3] = [
    ("apply from empty", &["apply", "-auto-approve"]),
    ("no-op plan", &["plan", "-detailed-exitcode"]),
    ("no-op plan -refresh=false", &["plan", "-refresh=false", "-detailed-exitcode"]),
];

struct Options {
    size: usize,
    threads: Vec<usize>,
    runs: usize,
    parallelism: usize,
    seed: u64,
    dir: Option<PathBuf>,
    cairn: PathBuf,
}

/// One command's timings at one thread count: its wall time and each
/// phase's, in the order the phases were logged.
#[derive(Default)]
struct Timing {
    wall: f64,
    phases: Vec<(String, f64)>,
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut o = Options {
        size: 100_000,
        threads: vec![1, 2, cores],
        runs: 1,
        parallelism: 10,
        seed: 1,
        dir: None,
        cairn: CAIRN.into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--size" => o.size = args.next().unwrap().parse().unwrap(),
            "--threads" => o.threads = args.next().unwrap().split(',').map(|n| n.trim().parse().unwrap()).collect(),
            "--runs" => o.runs = args.next().unwrap().parse().unwrap(),
            "--parallelism" => o.parallelism = args.next().unwrap().parse().unwrap(),
            "--seed" => o.seed = args.next().unwrap().parse().unwrap(),
            "--dir" => o.dir = Some(PathBuf::from(args.next().unwrap())),
            "--cairn" => o.cairn = PathBuf::from(args.next().unwrap()),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    o.threads.sort_unstable();
    o.threads.dedup();
    let temp = tempfile::tempdir().unwrap();
    let root = o.dir.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let pin = Path::new("/usr/bin/taskset").exists();
    println!("cairn {}", o.cairn.display());
    println!(
        "{} null_resources (random DAG, seed {}), -parallelism={}, threads {:?} of {cores} cores, {}; {} run(s) a figure (median)",
        o.size,
        o.seed,
        o.parallelism,
        o.threads,
        if pin { "pinned with taskset" } else { "not pinned (no /usr/bin/taskset)" },
        o.runs
    );
    let config = dag::random_dag(o.size, o.seed);
    // By command, by thread count: the timings of every run.
    let mut all: BTreeMap<usize, BTreeMap<usize, Vec<Timing>>> = BTreeMap::new();
    for run in 0..o.runs {
        for &threads in &o.threads {
            let dir = root.join(format!("phases-{threads}-{run}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("main.tf"), &config).unwrap();
            for (c, (_, args)) in COMMANDS.iter().enumerate() {
                let parallelism = format!("-parallelism={}", o.parallelism);
                let args: Vec<&str> = args.iter().copied().chain([parallelism.as_str()]).collect();
                let timing = timed(&o.cairn, &dir, &args, threads, pin && threads <= cores);
                all.entry(c).or_default().entry(threads).or_default().push(timing);
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    for (c, by_threads) in &all {
        println!();
        print_command(COMMANDS[*c].0, by_threads);
    }
}

/// Runs `cairn args .` in `dir` on `threads` threads (pinned to as many
/// cores when `pin`), logging its phases; panics if it fails.
fn timed(cairn: &Path, dir: &Path, args: &[&str], threads: usize, pin: bool) -> Timing {
    let mut cmd = if pin {
        let mut c = Command::new("/usr/bin/taskset");
        c.arg("-c").arg(format!("0-{}", threads - 1)).arg(cairn);
        c
    } else {
        Command::new(cairn)
    };
    cmd.args(args).arg(".").current_dir(dir).env("CAIRN_THREADS", threads.to_string()).env("CAIRN_LOG", "cairn=debug");
    let started = Instant::now();
    let out = cmd.output().unwrap();
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "cairn {args:?} failed in {} (CAIRN_THREADS={threads}):\n{}{stderr}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
    );
    Timing { wall, phases: stderr.lines().filter_map(phase).collect() }
}

/// The phase and its seconds from a log line such as
/// `2026-11-29T02:13:12.237105Z DEBUG cairn::engine: configuration expanded resources=2000 elapsed=72.956548ms`.
fn phase(line: &str) -> Option<(String, f64)> {
    let (_, rest) = line.split_once(" DEBUG cairn")?;
    let (_, rest) = rest.split_once(": ")?;
    let elapsed = rest.split_whitespace().find_map(|field| field.strip_prefix("elapsed="))?;
    let name: Vec<&str> = rest.split_whitespace().take_while(|word| !word.contains('=')).collect();
    Some((name.join(" "), seconds(elapsed)?))
}

/// Seconds in a `Duration`'s debug form: `1.5s`, `72.9ms`, `21.0µs`, `80ns`.
fn seconds(text: &str) -> Option<f64> {
    let units = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];
    units.iter().find_map(|(unit, scale)| Some(text.strip_suffix(unit)?.parse::<f64>().ok()? * scale))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One command's table: a row a phase, a column a thread count, then the
/// speed-up from the fewest threads to the most.
fn print_command(name: &str, by_threads: &BTreeMap<usize, Vec<Timing>>) {
    let threads: Vec<usize> = by_threads.keys().copied().collect();
    // Phases in the order the first run logged them.
    let names: Vec<String> = by_threads.values().next().unwrap()[0].phases.iter().map(|(n, _)| n.clone()).collect();
    let phase_median = |timings: &[Timing], name: &str| {
        median(
            timings.iter().map(|t| t.phases.iter().filter(|(n, _)| n == name).map(|(_, s)| s).sum::<f64>()).collect(),
        )
    };
    let rest_median = |timings: &[Timing]| {
        median(timings.iter().map(|t| t.wall - t.phases.iter().map(|(_, s)| s).sum::<f64>()).collect())
    };
    let wall_median = |timings: &[Timing]| median(timings.iter().map(|t| t.wall).collect());
    let mut header = format!("{name:<28}");
    for t in &threads {
        header.push_str(&format!(" {:>10}", format!("{t} thr s")));
    }
    header.push_str(&format!(" {:>9}", "speed-up"));
    println!("{header}");
    let row = |label: &str, values: Vec<f64>| {
        let mut line = format!("  {label:<26}");
        for v in &values {
            line.push_str(&format!(" {v:>10.3}"));
        }
        let (first, last) = (values[0], values[values.len() - 1]);
        if values.len() > 1 && last > 0.0 {
            line.push_str(&format!(" {:>8.2}x", first / last));
        }
        println!("{line}");
    };
    for phase in &names {
        row(phase, by_threads.values().map(|t| phase_median(t, phase)).collect());
    }
    row("rest (start, exit)", by_threads.values().map(|t| rest_median(t)).collect());
    let walls: Vec<f64> = by_threads.values().map(|t| wall_median(t)).collect();
    row("wall", walls.clone());
    let (t1, tn, n) = (walls[0], walls[walls.len() - 1], threads[threads.len() - 1] as f64 / threads[0] as f64);
    if n > 1.0 {
        // t(n) / t(1) = s + (1 − s) / n, solved for s.
        let serial = ((tn / t1) - 1.0 / n) / (1.0 - 1.0 / n);
        println!(
            "  serial share (Amdahl, {} → {} threads): {:.0}%",
            threads[0],
            threads[threads.len() - 1],
            serial.clamp(0.0, 1.0) * 100.0
        );
    }
}
