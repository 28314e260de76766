//! `wasi:clocks/monotonic-clock` with sleeps cut at the call deadline.
//!
//! Epoch interruption stops a provider only while it runs WebAssembly code;
//! a provider blocked in the host (sleeping, or polling a clock) would hold
//! its call, and the thread, until it wakes. Stdin is closed and HTTP
//! requests end at the deadline (see `http`), so a sleep is the other way a
//! provider can block for long in this host: the clock's subscriptions end
//! at the call's deadline (plus
//! one epoch tick): the provider wakes early and the call fails as timed
//! out, whether the epoch deadline traps it first or it returns an answer
//! built on a sleep it did not get. Only a call that ends past its deadline
//! after such a wait has timed out: a shortened timer that never fired
//! (the loser of a `poll`) costs nothing.

use std::time::{Duration, Instant};

use wasmtime::component::{HasData, Linker, Resource};
use wasmtime_wasi::clocks::WasiClocksCtxView;
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;

use super::engine::EPOCH_TICK;

/// Replaces WASI's monotonic clock in `linker` (which must already have
/// the WASI interfaces) by the deadline-aware one; `view` finds its state.
pub(crate) fn shadow_monotonic_clock<T: 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> DeadlineClockView<'_>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    monotonic_clock::add_to_linker::<T, DeadlineClock>(linker, view)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The [`HasData`] of the deadline-aware clock.
struct DeadlineClock;

impl HasData for DeadlineClock {
    type Data<'a> = DeadlineClockView<'a>;
}

/// WASI's clock state and the deadline of the call in progress.
pub(crate) struct DeadlineClockView<'a> {
    /// WASI's own clock state.
    pub clocks: WasiClocksCtxView<'a>,
    /// When the call in progress must end.
    pub deadline: Option<Instant>,
    /// Set when a wait was shortened to end at the deadline: if the call
    /// then ends past its deadline, it timed out. (Creating a long timer
    /// is not waiting on it: a provider may `poll` a short and a long one
    /// and go on when the short one fires.)
    pub cut_short: &'a mut bool,
}

impl monotonic_clock::Host for DeadlineClockView<'_> {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        self.clocks.now()
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        self.clocks.resolution()
    }

    fn subscribe_instant(&mut self, when: monotonic_clock::Instant) -> wasmtime::Result<Resource<DynPollable>> {
        let now = self.clocks.now()?;
        self.subscribe_duration(when.saturating_sub(now))
    }

    fn subscribe_duration(&mut self, nanos: monotonic_clock::Duration) -> wasmtime::Result<Resource<DynPollable>> {
        let clamped = clamp(nanos, self.deadline, Instant::now());
        if clamped < nanos {
            *self.cut_short = true;
        }
        self.clocks.subscribe_duration(clamped)
    }
}

/// A wait of `nanos` from `now`, ending no later than one tick after
/// `deadline`.
fn clamp(nanos: u64, deadline: Option<Instant>, now: Instant) -> u64 {
    let Some(deadline) = deadline else { return nanos };
    let left = deadline.saturating_duration_since(now) + EPOCH_TICK;
    nanos.min(u64::try_from(left.as_nanos()).unwrap_or(u64::MAX))
}

/// The deadline of a call of `timeout` starting now.
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_end_one_tick_after_the_deadline() {
        let now = Instant::now();
        let tick = EPOCH_TICK.as_nanos() as u64;
        assert_eq!(clamp(5, Some(now + Duration::from_secs(1)), now), 5);
        assert_eq!(clamp(u64::MAX, Some(now + Duration::from_secs(1)), now), 1_000_000_000 + tick);
        assert_eq!(clamp(u64::MAX, Some(now), now + Duration::from_secs(3)), tick);
        assert_eq!(clamp(u64::MAX, None, now), u64::MAX);
    }
}
