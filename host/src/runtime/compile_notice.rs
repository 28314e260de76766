//! The one line a slow compile prints: "compiling provider archive
//! (18.3 MB) for the first run…".
//!
//! The first run of a Python or JavaScript provider compiles its
//! interpreter to machine code, tens of seconds during which cairn printed
//! nothing (and at `CAIRN_LOG=debug`, hundreds of thousands of lines). A
//! compile that is still running after [`DEFAULT_AFTER`] (or
//! `CAIRN_COMPILE_NOTICE_AFTER_MS` milliseconds) says so on standard error,
//! once; a fast compile, and a load from the compiled-code cache, say
//! nothing.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a compile runs before it is announced.
pub(crate) const DEFAULT_AFTER: Duration = Duration::from_secs(1);

/// The variable that sets that time in milliseconds (0: announce every
/// compile at once), for tests and for the curious.
pub(crate) const AFTER_VARIABLE: &str = "CAIRN_COMPILE_NOTICE_AFTER_MS";

/// A compile in progress, announced with `line` once it has run `after`:
/// dropping it (when the compile ends) stops the wait.
pub(crate) struct Notice {
    stop: Option<mpsc::Sender<()>>,
    waiter: Option<JoinHandle<()>>,
}

/// What a compile makes, for the line that announces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compile {
    /// Optimised code that later runs load from the cache.
    ForCache,
    /// Optimised code for this run only (no cache).
    Uncached,
    /// Baseline code for this run, while optimised code is compiled into
    /// the cache in the background.
    Baseline,
    /// Baseline code that later runs load from the cache.
    BaselineForCache,
}

impl Notice {
    /// Starts the wait for the compile of the provider `name` from `size`
    /// bytes of WebAssembly, printing to standard error.
    pub(crate) fn start(name: &str, size: usize, what: Compile) -> Notice {
        let line = line(name, size, what);
        Notice::with(after_from(std::env::var(AFTER_VARIABLE).ok().as_deref()), move || eprintln!("{line}"))
    }

    /// Runs `announce` once `after` has passed, unless dropped before: at
    /// once for no time at all (no thread, so that it is certain).
    fn with(after: Duration, announce: impl FnOnce() + Send + 'static) -> Notice {
        if after.is_zero() {
            announce();
            return Notice { stop: None, waiter: None };
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let waiter = std::thread::Builder::new().name("cairn-compile-notice".into()).spawn(move || {
            // Woken early when the sender is dropped: the compile is over.
            if let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(after) {
                announce();
            }
        });
        // Without a thread the compile goes on unannounced.
        Notice { stop: Some(stop), waiter: waiter.ok() }
    }
}

impl Drop for Notice {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(waiter) = self.waiter.take() {
            // The thread only waits and prints; it cannot panic.
            let _ = waiter.join();
        }
    }
}

/// The wait `CAIRN_COMPILE_NOTICE_AFTER_MS` set to `value` asks for; the
/// default when unset or not a number.
fn after_from(value: Option<&str>) -> Duration {
    value.and_then(|v| v.trim().parse().ok()).map_or(DEFAULT_AFTER, Duration::from_millis)
}

/// `compiling provider archive (18.3 MB) for the first run…`.
fn line(name: &str, size: usize, what: Compile) -> String {
    let megabytes = size as f64 / 1e6;
    let when = match what {
        Compile::ForCache => " for the first run",
        Compile::Uncached => " (compiled code is not cached)",
        Compile::Baseline => {
            " for the first run, with the baseline compiler (optimised code follows in the background)"
        }
        Compile::BaselineForCache => " for the first run, with the baseline compiler",
    };
    format!("compiling provider {name} ({megabytes:.1} MB){when}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_provider_and_its_size() {
        assert_eq!(
            line("archive", 18_300_000, Compile::ForCache),
            "compiling provider archive (18.3 MB) for the first run…"
        );
        assert_eq!(
            line("null", 700_000, Compile::Uncached),
            "compiling provider null (0.7 MB) (compiled code is not cached)…"
        );
        assert_eq!(
            line("archive", 18_300_000, Compile::Baseline),
            "compiling provider archive (18.3 MB) for the first run, with the baseline compiler \
             (optimised code follows in the background)…"
        );
        assert_eq!(
            line("archive", 18_300_000, Compile::BaselineForCache),
            "compiling provider archive (18.3 MB) for the first run, with the baseline compiler…"
        );
    }

    #[test]
    fn the_wait_is_a_second_unless_set() {
        assert_eq!(after_from(None), DEFAULT_AFTER);
        assert_eq!(after_from(Some("0")), Duration::ZERO);
        assert_eq!(after_from(Some("250")), Duration::from_millis(250));
        assert_eq!(after_from(Some("soon")), DEFAULT_AFTER);
    }

    #[test]
    fn a_compile_is_announced_once_past_the_wait_and_not_before() {
        let (said, heard) = mpsc::channel();
        let announce = move |said: mpsc::Sender<&'static str>| move || said.send("compiling").unwrap();
        drop(Notice::with(Duration::ZERO, announce(said.clone())));
        assert_eq!(heard.try_recv(), Ok("compiling"), "no wait: announced at once");
        // A compile that ends long before its wait (an hour) is never
        // announced: dropping the notice ends the wait.
        drop(Notice::with(Duration::from_secs(3600), announce(said)));
        assert!(heard.try_recv().is_err());
    }
}
