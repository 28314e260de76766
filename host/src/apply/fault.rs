//! Crash points for the crash tests: places in an apply where a crash
//! leaves a distinct mark on the state and the outside world (before an
//! intent is journaled, after it, after the provider answered, after the
//! answer is recorded).
//!
//! Only with the `testing` feature, and only when `CAIRN_TEST_CRASH_AT=N`
//! is set: the Nth point the process reaches prints
//! `cairn: crash point N reached (<point> <address>)` on standard error and
//! stops there for good, so that the test can SIGKILL it at a known place.
//! Without the feature a point is nothing at all.

/// The environment variable naming the point to stop at (1 is the first).
#[cfg(any(test, feature = "testing"))]
pub const CRASH_AT: &str = "CAIRN_TEST_CRASH_AT";

/// Marks a crash point: `what` happened (or is about to) for `addr`.
#[cfg(any(test, feature = "testing"))]
pub fn point(what: &str, addr: &crate::addr::InstanceAddr) {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static AT: OnceLock<Option<usize>> = OnceLock::new();
    static REACHED: AtomicUsize = AtomicUsize::new(0);
    let Some(at) = *AT.get_or_init(|| std::env::var(CRASH_AT).ok().and_then(|v| v.parse().ok())) else { return };
    let n = REACHED.fetch_add(1, Ordering::SeqCst) + 1;
    if n == at {
        eprintln!("cairn: crash point {n} reached ({what} {addr})");
        // Waits for the SIGKILL; the rest of the run may go on meanwhile,
        // as it would until a real crash.
        loop {
            std::thread::park();
        }
    }
}

/// Marks a crash point (nothing without the `testing` feature).
#[cfg(not(any(test, feature = "testing")))]
#[inline(always)]
pub fn point(_what: &str, _addr: &crate::addr::InstanceAddr) {}
