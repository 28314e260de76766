//! How a command shows a run's events: human progress lines ([`Human`]), a
//! live status line on a terminal ([`Live`]), or the `-json` stream of one
//! JSON object a line ([`JsonLines`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::diag::Diagnostic;
use crate::engine::{Event, EventSink, Outcome};

/// The `-json` stream: each event as one line of JSON.
pub struct JsonLines<W: Write + Send> {
    out: Mutex<W>,
}

impl<W: Write + Send> JsonLines<W> {
    /// Writes events to `out`.
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines { out: Mutex::new(out) }
    }

    /// The writer back, when done.
    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<W: Write + Send> EventSink for JsonLines<W> {
    fn emit(&self, event: Event) {
        let lines = super::ui_json::lines(&event);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        // A closed stdout is not worth failing an apply for: the state is
        // the record of what happened.
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
}

/// The progress line of an event for people, as Terraform prints them
/// (`local_file.a: Creating...`), if it has one.
pub fn human_line(event: &Event) -> Option<String> {
    match event {
        Event::NodeStart { address, action, deposed_key, .. } => {
            let what = deposed_suffix(deposed_key);
            let verb = match action.as_str() {
                "create" => "Creating...",
                "update" => "Modifying...",
                "delete" => "Destroying...",
                _ => "Reading...",
            };
            Some(format!("{address}{what}: {verb}"))
        }
        Event::NodeFinish { address, action, deposed_key, outcome: Outcome::Done, duration_ms, id, .. } => {
            let what = deposed_suffix(deposed_key);
            let verb = match action.as_str() {
                "create" => "Creation",
                "update" => "Modifications",
                "delete" => "Destruction",
                _ => "Read",
            };
            let id = id.as_ref().map(|id| format!(" [id={id}]")).unwrap_or_default();
            Some(format!("{address}{what}: {verb} complete after {}s{id}", duration_ms / 1000))
        }
        Event::RefreshStart { address, id } => {
            let id = id.as_ref().map(|id| format!(" [id={id}]")).unwrap_or_default();
            Some(format!("{address}: Refreshing state...{id}"))
        }
        Event::Recovered { message, .. } => Some(message.clone()),
        Event::EphemeralStart { address, action } => Some(format!("{address}: {}...", ephemeral_verb(action))),
        Event::EphemeralFinish { address, action, done: true, duration_ms } => {
            Some(format!("{address}: {} complete after {}s", ephemeral_verb(action), duration_ms / 1000))
        }
        _ => None,
    }
}

/// Terraform's word for an operation on an ephemeral resource.
fn ephemeral_verb(action: &str) -> &'static str {
    match action {
        "open" => "Opening",
        "renew" => "Renewing",
        _ => "Closing",
    }
}

/// Progress lines for people on standard output; diagnostics go to
/// standard error. Run-level events are printed by the command itself.
pub struct Human;

impl EventSink for Human {
    fn emit(&self, event: Event) {
        if let Some(line) = human_line(&event) {
            println!("{line}");
        }
    }

    fn diagnostic(&self, d: &Diagnostic) {
        eprintln!("{}\n", crate::diag::source::render(d));
    }
}

/// `-compact-warnings`: passes everything on to another sink but the
/// warnings, which it keeps for [`CompactWarnings::finish`] to show as
/// one summary line each, as Terraform does.
pub struct CompactWarnings {
    inner: Arc<dyn EventSink>,
    warnings: Mutex<Vec<Diagnostic>>,
    /// Whether an error went by: then the warnings are shown in full at
    /// the end, as Terraform does, since a warning can explain an error.
    saw_error: std::sync::atomic::AtomicBool,
}

impl CompactWarnings {
    /// Keeps the warnings meant for `inner`.
    pub fn new(inner: Arc<dyn EventSink>) -> CompactWarnings {
        CompactWarnings { inner, warnings: Mutex::new(Vec::new()), saw_error: Default::default() }
    }

    /// Shows the warnings kept, on standard error: as a compact summary,
    /// or in full when the run `failed` or an error went by.
    pub fn finish(&self, failed: bool) {
        let warnings = std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()));
        if warnings.is_empty() {
            return;
        }
        if failed || self.saw_error.load(std::sync::atomic::Ordering::SeqCst) {
            for w in &warnings {
                self.inner.diagnostic(w);
            }
        } else {
            eprint!("{}", compact_summary(&warnings));
        }
    }
}

impl EventSink for CompactWarnings {
    fn emit(&self, event: Event) {
        self.inner.emit(event);
    }

    fn diagnostic(&self, d: &Diagnostic) {
        if d.is_error() {
            self.saw_error.store(true, std::sync::atomic::Ordering::SeqCst);
            self.inner.diagnostic(d);
        } else {
            self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(d.clone());
        }
    }
}

/// Warnings as Terraform's `-compact-warnings` shows them: each summary,
/// with where it is when known, then how to see them in full.
pub fn compact_summary(warnings: &[Diagnostic]) -> String {
    let mut out = String::from("\nWarnings:\n\n");
    for w in warnings {
        out.push_str(&format!("- {}\n", w.summary));
        if let Some(at) = &w.location {
            out.push_str(&format!("  on {} line {}\n", at.file.display(), at.line));
        }
    }
    out.push_str("\nTo see the full warning notes, run cairn without -compact-warnings.\n");
    out
}

/// How often a long operation is reported as still running.
const STILL_RUNNING_EVERY: Duration = Duration::from_secs(10);

/// [`Human`] for a terminal: the same progress lines, a last line that
/// shows what is running now (redrawn as it changes), and a
/// `Still creating... [10s elapsed]` line every ten seconds for each long
/// operation.
pub struct Live {
    shared: Arc<Mutex<LiveState>>,
    _stop: mpsc::Sender<()>,
}

struct LiveState {
    /// Running operations by label: (verb for "Still ...", started, last report).
    running: BTreeMap<String, (String, Instant, u64)>,
    width: usize,
    drawn: bool,
}

impl Live {
    /// A live display on standard output, `width` columns wide.
    pub fn new(width: usize) -> Live {
        let shared = Arc::new(Mutex::new(LiveState { running: BTreeMap::new(), width, drawn: false }));
        let (stop, stopped) = mpsc::channel::<()>();
        let ticking = Arc::clone(&shared);
        // Ends when the display is dropped (the sender with it).
        let _ = std::thread::Builder::new().name("cairn-progress".into()).spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(Duration::from_secs(1)) {
                let mut state = ticking.lock().unwrap_or_else(|e| e.into_inner());
                let mut lines = Vec::new();
                for (label, (verb, started, reported)) in state.running.iter_mut() {
                    let marks = started.elapsed().as_secs() / STILL_RUNNING_EVERY.as_secs();
                    if marks > *reported {
                        *reported = marks;
                        lines.push(format!(
                            "{label}: Still {verb}... [{}s elapsed]",
                            marks * STILL_RUNNING_EVERY.as_secs()
                        ));
                    }
                }
                if !lines.is_empty() {
                    state.print(&lines);
                }
            }
            ticking.lock().unwrap_or_else(|e| e.into_inner()).clear();
        });
        Live { shared, _stop: stop }
    }
}

impl LiveState {
    /// Prints `lines` above the status line and redraws it.
    fn print(&mut self, lines: &[String]) {
        let mut out = std::io::stdout().lock();
        if self.drawn {
            let _ = write!(out, "\r\x1b[2K");
        }
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let status = status_line(self.running.keys().map(String::as_str), self.width);
        self.drawn = !status.is_empty();
        let _ = write!(out, "{status}");
        let _ = out.flush();
    }

    fn clear(&mut self) {
        if self.drawn {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
            self.drawn = false;
        }
    }
}

impl EventSink for Live {
    fn emit(&self, event: Event) {
        let mut state = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        match &event {
            Event::NodeStart { address, action, deposed_key, .. } => {
                let verb = match action.as_str() {
                    "create" => "creating",
                    "update" => "modifying",
                    "delete" => "destroying",
                    _ => "reading",
                };
                let label = format!("{address}{}", deposed_suffix(deposed_key));
                state.running.insert(label, (verb.to_string(), Instant::now(), 0));
            }
            Event::NodeFinish { address, deposed_key, .. } => {
                state.running.remove(&format!("{address}{}", deposed_suffix(deposed_key)));
            }
            _ => {}
        }
        let lines: Vec<String> = human_line(&event).into_iter().collect();
        state.print(&lines);
    }

    fn diagnostic(&self, d: &Diagnostic) {
        let mut state = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        state.clear();
        eprintln!("{}\n", crate::diag::source::render(d));
        state.print(&[]);
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.shared.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// The status line of a live display: how many operations run and which,
/// cut to `width` columns; empty when nothing runs.
pub fn status_line<'a>(running: impl Iterator<Item = &'a str>, width: usize) -> String {
    let names: Vec<&str> = running.collect();
    if names.is_empty() {
        return String::new();
    }
    let line = format!("Running {}: {}", names.len(), names.join(", "));
    if line.chars().count() <= width {
        return line;
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn deposed_suffix(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!(" (deposed object {k})")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_warnings_are_one_line_each_with_where_they_are() {
        let at = crate::diag::Location::new(std::path::Path::new("main.tf"), 3, 5);
        let warnings = [Diagnostic::warning("First").with_detail("long"), Diagnostic::warning("Second").at(&at)];
        assert_eq!(
            compact_summary(&warnings),
            "\nWarnings:\n\n- First\n- Second\n  on main.tf line 3\n\nTo see the full warning notes, run cairn \
             without -compact-warnings.\n"
        );
    }

    #[test]
    fn the_status_line_names_what_runs_and_fits_the_terminal() {
        assert_eq!(status_line(std::iter::empty(), 80), "");
        assert_eq!(status_line(["a.x", "b.y"].into_iter(), 80), "Running 2: a.x, b.y");
        let cut = status_line(["null_resource.long_name"; 5].into_iter(), 20);
        assert_eq!(cut.chars().count(), 20);
        assert!(cut.ends_with('…'), "{cut}");
    }

    #[test]
    fn json_lines_are_whole_objects_with_a_type() {
        let sink = JsonLines::new(Vec::new());
        sink.emit(Event::ChangeSummary { add: 1, change: 0, destroy: 2, import: 0, forget: 0 });
        sink.diagnostic(&Diagnostic::warning("careful"));
        let text = String::from_utf8(sink.into_inner()).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["type"], "change_summary");
        assert_eq!((lines[0]["add"].as_u64(), lines[0]["destroy"].as_u64()), (Some(1), Some(2)));
        assert_eq!(
            lines[0]["changes"],
            serde_json::json!({"add": 1, "change": 0, "import": 0, "remove": 2, "operation": "plan"})
        );
        assert_eq!(lines[1]["type"], "diagnostic");
        assert_eq!(lines[1]["severity"], "warning");
    }

    #[test]
    fn human_lines_read_like_terraform_s() {
        let start = Event::NodeStart {
            address: "a.b".into(),
            action: "delete".into(),
            deposed: true,
            deposed_key: Some("k".into()),
            replace: true,
        };
        assert_eq!(human_line(&start).unwrap(), "a.b (deposed object k): Destroying...");
        let finish = Event::NodeFinish {
            address: "a.b".into(),
            action: "create".into(),
            deposed: false,
            deposed_key: None,
            replace: false,
            outcome: Outcome::Done,
            duration_ms: 2500,
            id: Some("x".into()),
        };
        assert_eq!(human_line(&finish).unwrap(), "a.b: Creation complete after 2s [id=x]");
    }
}
