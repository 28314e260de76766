//! A provider's standard output and error: each line becomes a `tracing`
//! event (target `cairn::provider`, debug level, with the provider's name),
//! and the last lines of standard error of the current call are kept for the
//! message when the call crashes (a Rust panic prints its message there).
//!
//! Nothing a provider prints ever reaches the host's own stdout or stderr,
//! where it would corrupt `-json` output or the plan display.
//!
//! A provider cannot flood the log: a line is cut at [`MAX_LINE`] bytes, and
//! one call logs at most [`MAX_LINES_PER_CALL`] lines (standard output,
//! standard error and the `log` import together); the rest are counted and
//! reported in one `… N lines dropped` line when the call ends.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How many lines of standard error a crash message quotes.
const RECENT_LINES: usize = 10;

/// A line longer than this is cut there (the rest of it is dropped), so that
/// a provider printing without newlines cannot make the host buffer without
/// bound.
pub(crate) const MAX_LINE: usize = 16 * 1024;

/// The most lines one call may log by default (the sandbox's
/// `max_log_lines`); later ones are only counted.
#[cfg(test)]
pub(crate) const MAX_LINES_PER_CALL: usize = super::sandbox::DEFAULT_MAX_LOG_LINES;

/// How much a provider may write in one go (the WASI `check-write` permit).
const WRITE_PERMIT: usize = 64 * 1024;

/// The standard output and error of one provider instance.
#[derive(Clone)]
pub(crate) struct GuestOutput {
    provider: Arc<str>,
    stdout: Arc<Mutex<LineBuffer>>,
    stderr: Arc<Mutex<LineBuffer>>,
    budget: Arc<Mutex<LineBudget>>,
}

/// Bytes not yet ending in a newline (and whether the line was already cut
/// there), and the recent complete lines.
#[derive(Default)]
struct LineBuffer {
    partial: Vec<u8>,
    cut: bool,
    recent: VecDeque<String>,
}

/// How many lines the current call may log, logged, and was not allowed to.
struct LineBudget {
    limit: usize,
    logged: usize,
    dropped: usize,
}

/// Which stream a line came from.
#[derive(Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

impl GuestOutput {
    /// The output of an instance of provider `provider`, which may log
    /// `max_lines` lines per call.
    pub(crate) fn new(provider: Arc<str>, max_lines: usize) -> GuestOutput {
        let budget = LineBudget { limit: max_lines, logged: 0, dropped: 0 };
        GuestOutput { provider, stdout: Arc::default(), stderr: Arc::default(), budget: Arc::new(Mutex::new(budget)) }
    }

    /// Whether the current call may log one more line; counts it either way.
    pub(crate) fn admit(&self) -> bool {
        admit(&self.budget)
    }

    /// The stream to give WASI as standard output.
    pub(crate) fn stdout(&self) -> LogStream {
        LogStream {
            provider: self.provider.clone(),
            stream: Stream::Stdout,
            buffer: self.stdout.clone(),
            budget: self.budget.clone(),
        }
    }

    /// The stream to give WASI as standard error.
    pub(crate) fn stderr(&self) -> LogStream {
        LogStream {
            provider: self.provider.clone(),
            stream: Stream::Stderr,
            buffer: self.stderr.clone(),
            budget: self.budget.clone(),
        }
    }

    /// Forget the previous call's lines: called before each call.
    pub(crate) fn start_call(&self) {
        lock(&self.stderr).recent.clear();
        lock(&self.stdout).recent.clear();
        let mut budget = lock(&self.budget);
        (budget.logged, budget.dropped) = (0, 0);
    }

    /// Log what is left of unterminated lines, and how many lines were
    /// dropped: called after each call.
    pub(crate) fn end_call(&self) {
        self.stdout().flush_partial();
        self.stderr().flush_partial();
        let (dropped, limit) = {
            let mut budget = lock(&self.budget);
            let dropped = std::mem::take(&mut budget.dropped);
            budget.logged = 0;
            (dropped, budget.limit)
        };
        if dropped > 0 {
            tracing::warn!(
                target: "cairn::provider",
                provider = %self.provider,
                "… {dropped} lines dropped (a provider call may log at most {limit} lines)"
            );
        }
    }

    /// The last lines the current call wrote to standard error.
    pub(crate) fn recent_stderr(&self) -> Vec<String> {
        lock(&self.stderr).recent.iter().cloned().collect()
    }
}

fn admit(budget: &Mutex<LineBudget>) -> bool {
    let mut budget = lock(budget);
    if budget.logged < budget.limit {
        budget.logged += 1;
        true
    } else {
        budget.dropped += 1;
        false
    }
}

fn lock<T>(buffer: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The buffer stays consistent even if a holder panicked (it cannot:
    // nothing here panics), so a poisoned lock is still usable.
    buffer.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One of an instance's output streams, as WASI sees it.
#[derive(Clone)]
pub(crate) struct LogStream {
    provider: Arc<str>,
    stream: Stream,
    buffer: Arc<Mutex<LineBuffer>>,
    budget: Arc<Mutex<LineBudget>>,
}

impl LogStream {
    /// Takes bytes the provider wrote and logs every complete line.
    fn write_bytes(&self, bytes: &[u8]) {
        let mut buffer = lock(&self.buffer);
        for &byte in bytes {
            if byte == b'\n' {
                let line = std::mem::take(&mut buffer.partial);
                self.emit(&mut buffer, &line);
            } else if buffer.partial.len() < MAX_LINE {
                buffer.partial.push(byte);
            } else {
                buffer.cut = true;
            }
        }
    }

    /// Logs an unterminated last line, if any.
    fn flush_partial(&self) {
        let mut buffer = lock(&self.buffer);
        if !buffer.partial.is_empty() || buffer.cut {
            let line = std::mem::take(&mut buffer.partial);
            self.emit(&mut buffer, &line);
        }
    }

    /// Logs one line (if the call's budget allows) and remembers it.
    fn emit(&self, buffer: &mut LineBuffer, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let mut text = text.strip_suffix('\r').unwrap_or(&text).to_string();
        if std::mem::take(&mut buffer.cut) {
            text.push_str(&format!(" … (line cut at {MAX_LINE} bytes)"));
        }
        if admit(&self.budget) {
            tracing::debug!(target: "cairn::provider", provider = %self.provider, stream = self.stream.name(), "{text}");
        }
        if buffer.recent.len() == RECENT_LINES {
            buffer.recent.pop_front();
        }
        buffer.recent.push_back(text);
    }
}

impl IsTerminal for LogStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

// The WASI p2 view of the stream: writes never block, so it is always ready.
impl OutputStream for LogStream {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.write_bytes(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for LogStream {
    async fn ready(&mut self) {}
}

// The async view (used by WASI p3 and by adapters); same behaviour.
impl tokio::io::AsyncWrite for LogStream {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.write_bytes(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_stderr_remembered() {
        let output = GuestOutput::new("p".into(), MAX_LINES_PER_CALL);
        let mut err = output.stderr();
        OutputStream::write(&mut err, bytes::Bytes::from_static(b"first\r\nsec")).unwrap();
        OutputStream::write(&mut err, bytes::Bytes::from_static(b"ond\nthird")).unwrap();
        assert_eq!(output.recent_stderr(), ["first", "second"]);
        output.end_call();
        assert_eq!(output.recent_stderr(), ["first", "second", "third"]);
        output.start_call();
        assert!(output.recent_stderr().is_empty());
    }

    #[test]
    fn only_the_last_lines_are_kept_and_long_lines_are_cut() {
        let output = GuestOutput::new("p".into(), MAX_LINES_PER_CALL);
        let err = output.stderr();
        for i in 0..(RECENT_LINES + 5) {
            err.write_bytes(format!("line {i}\n").as_bytes());
        }
        let recent = output.recent_stderr();
        assert_eq!(recent.len(), RECENT_LINES);
        assert_eq!(recent.last().unwrap(), &format!("line {}", RECENT_LINES + 4));
        err.write_bytes(&vec![b'x'; MAX_LINE * 2 + 1]);
        err.write_bytes(b"\nnext\n");
        let recent = output.recent_stderr();
        let cut = &recent[recent.len() - 2];
        assert!(cut.starts_with(&"x".repeat(MAX_LINE)) && cut.ends_with("(line cut at 16384 bytes)"), "{cut}");
        assert_eq!(recent.last().unwrap(), "next");
    }

    #[test]
    fn a_call_logs_a_bounded_number_of_lines() {
        let output = GuestOutput::new("p".into(), MAX_LINES_PER_CALL);
        output.start_call();
        let out = output.stdout();
        for i in 0..(MAX_LINES_PER_CALL + 50) {
            out.write_bytes(format!("line {i}\n").as_bytes());
        }
        assert!(!output.admit(), "the budget is spent, for the log import too");
        assert_eq!(lock(&output.budget).dropped, 51);
        output.end_call();
        assert_eq!(lock(&output.budget).dropped, 0, "the count is reported and reset");
        assert!(output.admit(), "the next call has a fresh budget");
    }
}
