//! The wasmtime [`Engine`]s of a runtime (one per compiler tier) and their
//! epoch ticker: the clock that per-call deadlines are measured in.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Engine};

/// How often the epoch advances: the resolution of call deadlines, and how
/// long a computing provider runs before it lets other calls have its thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Which compiler makes a provider's machine code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Cranelift: optimised code, what the compiled-code cache keeps.
    Optimized,
    /// Winch: a single-pass compiler, several times faster to compile and
    /// slower to run, for a first run that has no cached code.
    Baseline,
}

/// An engine providers of `tier` are compiled for and run in.
pub(crate) fn new_engine(tier: Tier) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    if tier == Tier::Baseline {
        config.strategy(wasmtime::Strategy::Winch);
    }
    // Every epoch tick interrupts running WebAssembly: the store's callback
    // then yields to the executor, or traps past the call's deadline, so a
    // provider stuck in a loop is stopped without cooperating.
    config.epoch_interruption(true);
    // For provider authors profiling with `perf` (docs/writing-providers.md):
    // names the compiled functions in /tmp/perf-<pid>.map.
    if std::env::var_os("CAIRN_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    // The default on-demand allocator: instances are few and long-lived (a
    // pool per provider), so a pooling allocator's sizing is not worth it.
    Engine::new(&config)
}

/// A thread that advances the engines' epochs every [`EPOCH_TICK`] until
/// the ticker is dropped.
pub(crate) struct EpochTicker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    /// Starts ticking `engines`.
    pub(crate) fn start(engines: &[&Engine]) -> std::io::Result<EpochTicker> {
        let (stop, stopped) = mpsc::channel::<()>();
        let engines: Vec<Engine> = engines.iter().map(|&engine| engine.clone()).collect();
        let thread = std::thread::Builder::new().name("cairn-epoch".into()).spawn(move || {
            // Wakes every tick; ends when the sender is dropped.
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(EPOCH_TICK) {
                engines.iter().for_each(Engine::increment_epoch);
            }
        })?;
        Ok(EpochTicker { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // The thread only sleeps and ticks; it cannot panic.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ticker_stops_when_dropped() {
        let engine = new_engine(Tier::Optimized).unwrap();
        let ticker = EpochTicker::start(&[&engine]).unwrap();
        drop(ticker); // joins the thread: returning at all means it stopped
    }
}
