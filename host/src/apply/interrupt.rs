//! How a run is asked to stop, in two steps (as Terraform does on Ctrl-C):
//!
//! 1. [`Interrupt::stop`]: start nothing new. Provider calls already under
//!    way finish (or reach their time limit), their results are recorded,
//!    and the state is committed.
//! 2. [`Interrupt::abort`]: also cancel the calls under way. Their intents
//!    stay in the state's journal as pending operations, which the next run
//!    resolves by asking the provider (`apply::recover`).
//!
//! This module only carries the request; who sends it (the signal handler
//! of `engine::signals`, a test) is not its business.

use tokio_util::sync::CancellationToken;

/// A request to stop a run, shared by whoever may send it and the steps
/// that honour it. Clones share the same request.
#[derive(Clone, Debug, Default)]
pub struct Interrupt {
    stop: CancellationToken,
    abort: CancellationToken,
}

impl Interrupt {
    /// A request not made yet.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Asks the run to start nothing new and finish what it started.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Asks the run to cancel what it started, too, and end at once.
    pub fn abort(&self) {
        self.stop.cancel();
        self.abort.cancel();
    }

    /// Whether the run was asked to start nothing new.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Whether the run was asked to cancel what it started.
    pub fn is_aborted(&self) -> bool {
        self.abort.is_cancelled()
    }

    /// Resolves once the run is asked to start nothing new.
    pub async fn stopped(&self) {
        self.stop.cancelled().await;
    }

    /// Resolves once the run is asked to cancel what it started.
    pub async fn aborted(&self) {
        self.abort.cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_implies_stop_and_clones_share_the_request() {
        let interrupt = Interrupt::new();
        let sender = interrupt.clone();
        assert!(!interrupt.is_stopped() && !interrupt.is_aborted());
        sender.stop();
        assert!(interrupt.is_stopped() && !interrupt.is_aborted());
        sender.abort();
        assert!(interrupt.is_stopped() && interrupt.is_aborted());
    }
}
