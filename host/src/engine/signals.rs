//! Ctrl-C and SIGTERM during a run, as Terraform handles them: the first
//! asks the run to stop gracefully ([`Interrupt::stop`]), the second to
//! stop at once ([`Interrupt::abort`]). What the run does about it is the
//! executor's business (`apply`); what the user is told, the command's.

use anyhow::{Context, Result};

use crate::apply::Interrupt;

/// Which interrupt arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// The first: start nothing new, finish what runs.
    First,
    /// The second: cancel what runs, too.
    Second,
}

/// Listens for SIGINT and SIGTERM on `tokio` from now on (instead of
/// letting them end the process), turning them into requests on
/// `interrupt` and calling `notice` with each.
pub(super) fn listen(
    tokio: &tokio::runtime::Runtime,
    interrupt: Interrupt,
    notice: impl Fn(Received) + Send + 'static,
) -> Result<()> {
    // Registered here, not in the task, so that a signal that arrives
    // before the task first runs is not missed.
    let _context = tokio.enter();
    let mut signals = Signals::new().context("cannot listen for interrupts")?;
    tokio.spawn(async move {
        signals.next().await;
        interrupt.stop();
        notice(Received::First);
        signals.next().await;
        interrupt.abort();
        notice(Received::Second);
    });
    Ok(())
}

/// The signals that interrupt a run.
#[cfg(unix)]
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
    }

    /// Waits for the next SIGINT or SIGTERM.
    async fn next(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

/// The signals that interrupt a run: Ctrl-C.
#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> std::io::Result<Signals> {
        Ok(Signals)
    }

    /// Waits for the next Ctrl-C.
    async fn next(&mut self) {
        // An error means no more Ctrl-C can be received: wait for ever.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
