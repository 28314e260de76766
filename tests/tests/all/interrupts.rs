//! Interrupting an apply (issue 16, item 2), through the real binary and
//! the `recorder` test provider's slow objects (`sleep_ms`):
//!
//! - the first SIGINT starts nothing new, lets the provider calls under way
//!   finish, records them, commits the state and exits non-zero, saying
//!   what was done and what was not;
//! - a second SIGINT cancels the calls under way and exits at once; their
//!   intents stay pending, and the next apply resolves them by asking the
//!   provider.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;

use cairn_e2e::{Run, Workdir, recorder_workdir};
use serde_json::Value;

/// Three slow objects that start at once, and one object depending on each.
fn slow_graph(sleep_ms: u64) -> String {
    let mut config = String::new();
    for i in 1..=3 {
        config.push_str(&format!(
            "resource \"recorder_thing\" \"slow{i}\" {{\n  name = \"slow{i}\"\n  sleep_ms = {sleep_ms}\n}}\n\
             resource \"recorder_thing\" \"after{i}\" {{\n  name = \"after{i}\"\n  value = recorder_thing.slow{i}.id\n}}\n"
        ));
    }
    config
}

/// A cairn process running in the background, its output read as it comes.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<(bool, String)>,
    stdout: String,
    stderr: String,
}

impl Running {
    /// Starts `cairn ARGS DIR` with extra environment variables; its
    /// standard input stays open, and nothing is typed there.
    pub fn start(w: &Workdir, args: &[&str], env: &[(&str, &str)]) -> Running {
        let mut child = w
            .command(args, env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cairn starts");
        let (tx, lines) = mpsc::channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        let err = BufReader::new(child.stderr.take().unwrap());
        let tx_err = tx.clone();
        std::thread::spawn(move || out.lines().map_while(Result::ok).for_each(|l| drop(tx.send((false, l)))));
        std::thread::spawn(move || err.lines().map_while(Result::ok).for_each(|l| drop(tx_err.send((true, l)))));
        Running { child, lines, stdout: String::new(), stderr: String::new() }
    }

    /// Reads output until a line of standard error (`stderr`) or standard
    /// output satisfies `found`; panics if the process ends first.
    pub fn wait_for(&mut self, stderr: bool, found: impl Fn(&str) -> bool) {
        while let Ok((is_err, line)) = self.lines.recv() {
            let hit = is_err == stderr && found(&line);
            let to = if is_err { &mut self.stderr } else { &mut self.stdout };
            to.push_str(&line);
            to.push('\n');
            if hit {
                return;
            }
        }
        panic!("cairn ended before the awaited line:\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
    }

    /// Sends the process `signal` (`INT`, `TERM`).
    pub fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args(["-s", signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -s {signal} failed");
    }

    /// Kills the process with SIGKILL and waits for it.
    pub fn kill(mut self) {
        self.child.kill().expect("cairn can be killed");
        let status = self.child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9), "{status:?}");
    }

    /// Waits for the process to end; returns what it printed.
    pub fn finish(mut self) -> Run {
        let status = self.child.wait().unwrap();
        for (is_err, line) in self.lines.iter() {
            let to = if is_err { &mut self.stderr } else { &mut self.stdout };
            to.push_str(&line);
            to.push('\n');
        }
        Run { code: status.code().unwrap_or(-1), stdout: self.stdout, stderr: self.stderr }
    }
}

/// Waits until `n` of the recorder's calls are under way: each marks its
/// start (`log/under-way/<name>`) before it sleeps. (An intent in the
/// journal is not enough: its step starts the call once the intent is on
/// disk, and the flush may still be running when the line can be read.)
fn wait_for_calls(w: &Workdir, run: &mut Running, n: usize) {
    let dir = w.path().join("log/under-way");
    loop {
        if std::fs::read_dir(&dir).map_or(0, Iterator::count) >= n {
            return;
        }
        if let Ok(Some(status)) = run.child.try_wait() {
            panic!("cairn ended ({status}) before {n} calls were under way");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The state as `cairn state pull` reads it (the journal replayed).
pub fn shown_state(w: &Workdir) -> Value {
    let run = w.cairn_here(&["state", "pull"]).success();
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.all()))
}

/// The addresses in a state, sorted.
pub fn addresses(state: &Value) -> Vec<String> {
    let mut addrs: Vec<String> = state["resources"]
        .as_array()
        .map(|r| r.iter().map(|r| r["addr"].as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    addrs.sort();
    addrs
}

/// The objects the recorder really made: the files in `log/objects`.
pub fn objects(w: &Workdir) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(w.path().join("log/objects")) else { return Vec::new() };
    let mut ids: Vec<String> = dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    ids.sort();
    ids
}

/// The `id` attributes of the objects in a state, sorted.
pub fn ids(state: &Value) -> Vec<String> {
    let mut ids: Vec<String> = state["resources"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["attributes"]["id"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    ids.sort();
    ids
}

#[test]
fn the_first_interrupt_lets_calls_under_way_finish_and_records_them() {
    let w = recorder_workdir(&slow_graph(1500));
    let mut run = Running::start(&w, &["apply", "-auto-approve", "-json"], &[]);
    wait_for_calls(&w, &mut run, 3);
    run.signal("INT");
    let run = run.finish();
    assert_eq!(run.code, 1, "an interrupted apply fails:\n{}", run.all());
    let events = run.events();
    let summary = events.iter().find(|e| e["type"] == "summary").expect("a summary");
    assert_eq!(summary["outcome"], "interrupted", "{}", run.all());
    assert_eq!(summary["added"], 3, "{}", run.all());
    let finished = |address: &str| {
        events
            .iter()
            .find(|e| e["type"] == "node_finish" && e["address"] == address)
            .unwrap_or_else(|| panic!("no node_finish for {address}:\n{}", run.all()))["outcome"]
            .clone()
    };
    for i in 1..=3 {
        assert_eq!(finished(&format!("recorder_thing.slow{i}")), "done", "{}", run.all());
        assert_eq!(finished(&format!("recorder_thing.after{i}")), "interrupted", "{}", run.all());
        assert!(
            !events.iter().any(|e| e["type"] == "node_start" && e["address"] == format!("recorder_thing.after{i}"))
        );
    }
    assert!(events.iter().any(|e| e["type"] == "diagnostic" && e["summary"] == "Interrupt received"), "{}", run.all());

    // The calls under way finished and are in the committed state; nothing
    // is pending, and no journal is left.
    let state = w.state().expect("the state was written");
    assert_eq!(addresses(&state), ["recorder_thing.slow1", "recorder_thing.slow2", "recorder_thing.slow3"]);
    assert!(state.get("pending").is_none(), "{state:#}");
    assert!(!w.exists("cairn.state.json.journal"));
    assert_eq!(objects(&w), ids(&state), "every object made is in the state");

    // The next apply does the rest.
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(objects(&w).len(), 6);
}

#[test]
fn the_first_interrupt_is_reported_to_people_with_what_was_not_done() {
    let w = recorder_workdir(&slow_graph(1500));
    let mut run = Running::start(&w, &["apply", "-auto-approve"], &[]);
    wait_for_calls(&w, &mut run, 3);
    run.signal("TERM");
    let run = run.finish();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stderr.contains(
            "Interrupt received.\nPlease wait for cairn to exit or data loss may occur.\nGracefully shutting down..."
        ),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains("Apply interrupted: 3 added, 0 changed, 0 destroyed."), "{}", run.all());
    for i in 1..=3 {
        assert!(run.stderr.contains(&format!("  recorder_thing.after{i}: create not started")), "{}", run.all());
    }
}

#[test]
fn a_second_interrupt_cancels_calls_under_way_and_leaves_them_pending() {
    // Calls that would take ten minutes: only a cancel ends them.
    let w = recorder_workdir(&slow_graph(600_000));
    let mut run = Running::start(&w, &["apply", "-auto-approve"], &[]);
    wait_for_calls(&w, &mut run, 3);
    run.signal("INT");
    run.wait_for(true, |l| l == "Gracefully shutting down...");
    run.signal("INT");
    let run = run.finish();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stderr.contains("Two interrupts received. Exiting immediately. Note that data loss may have occurred."),
        "{}",
        run.all()
    );
    for i in 1..=3 {
        assert!(run.stderr.contains(&format!("  recorder_thing.slow{i}: create cancelled")), "{}", run.all());
    }
    // The cancelled calls made nothing; their intents are pending.
    assert!(objects(&w).is_empty(), "{:?}", objects(&w));
    let state = shown_state(&w);
    let mut pending: Vec<&str> =
        state["pending"].as_array().expect("pending operations").iter().map(|p| p["addr"].as_str().unwrap()).collect();
    pending.sort();
    assert_eq!(pending, ["recorder_thing.slow1", "recorder_thing.slow2", "recorder_thing.slow3"]);

    // The next apply asks the provider, which made nothing, says so, and
    // creates everything.
    w.configure_recorder(&slow_graph(0));
    let next = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(
        next.stdout.contains("recorder_thing.slow1: recovered the interrupted create: the provider did not find"),
        "{}",
        next.all()
    );
    let state = shown_state(&w);
    assert!(state.get("pending").is_none(), "{state:#}");
    assert_eq!(objects(&w), ids(&state));
    assert_eq!(objects(&w).len(), 6);
}

#[test]
fn an_interrupt_at_the_prompt_cancels_with_nothing_written() {
    let w = recorder_workdir(&slow_graph(0));
    let mut run = Running::start(&w, &["apply"], &[]);
    run.wait_for(false, |l| l == "Do you want to perform these actions?");
    run.signal("INT");
    let run = run.finish();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("Apply cancelled."), "{}", run.all());
    assert!(w.state().is_none(), "nothing was written");
    assert!(objects(&w).is_empty());
}
