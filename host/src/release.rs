//! Large values a command is done with, when the process exits next.
//!
//! Freeing a plan, a state or an apply's values one allocation at a time
//! takes a noticeable share of a large run (a quarter of a second after
//! an apply of 100,000 resources), and an exiting process gets its memory
//! back whole anyway. So the command-line tool, which exits when its
//! command ends, asks for [`exit_reclaims`]; then [`release`] leaves a
//! value to the exit. A library user (tests, benchmarks, a long-lived
//! process) never asks, and its values are dropped as usual.
//!
//! Only plain data goes through [`release`]: nothing whose drop releases a
//! lock, flushes a file or stops a provider.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the process exits when the command in progress ends.
static EXIT_RECLAIMS: AtomicBool = AtomicBool::new(false);

/// Says that the process exits when its command ends, so that values
/// [`release`]d from now on are left to the exit to reclaim.
pub fn exit_reclaims() {
    EXIT_RECLAIMS.store(true, Ordering::Relaxed);
}

/// Drops `value`, or, once [`exit_reclaims`] was called, leaves its
/// memory to the process's exit.
pub fn release<T>(value: T) {
    release_or_drop(value, EXIT_RECLAIMS.load(Ordering::Relaxed));
}

fn release_or_drop<T>(value: T, exit_reclaims: bool) {
    if exit_reclaims {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts its drops.
    struct Counted<'a>(&'a std::sync::atomic::AtomicUsize);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn values_are_dropped_unless_the_exit_reclaims_them() {
        let drops = std::sync::atomic::AtomicUsize::new(0);
        release_or_drop(Counted(&drops), false);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        release_or_drop(Counted(&drops), true);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        // No command-line run in this process: dropped as usual.
        release(Counted(&drops));
        assert_eq!(drops.load(Ordering::Relaxed), 2);
    }
}
