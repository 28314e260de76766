//! Log lines into the host: they land in its `tracing` output tagged with
//! the provider's name, filtered by `CAIRN_LOG`.
//!
//! ```
//! # let (n, path) = (5, "out/a.txt");
//! cairn_sdk::log::info(format!("wrote {n} bytes"));
//! cairn_sdk::log!(debug, "wrote {} bytes to {}", n, path);
//! ```
//!
//! Outside a component (native unit tests) lines go to standard error,
//! since there is no host to receive them.

/// How important a log line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Very detailed tracing.
    Trace,
    /// Useful when debugging the provider.
    Debug,
    /// Normal progress.
    Info,
    /// Something looks wrong but the call goes on.
    Warn,
    /// Something failed.
    Error,
}

/// Write one log line at `level`.
pub fn log(level: Level, message: impl AsRef<str>) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::cairn::provider::log as host;
        let level = match level {
            Level::Trace => host::Level::Trace,
            Level::Debug => host::Level::Debug,
            Level::Info => host::Level::Info,
            Level::Warn => host::Level::Warn,
            Level::Error => host::Level::Error,
        };
        host::log(level, message.as_ref());
    }
    // Natively the import is an unreachable stub; standard error is the
    // nearest thing to a host log.
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {}", message.as_ref());
}

/// Write a trace line.
pub fn trace(message: impl AsRef<str>) {
    log(Level::Trace, message);
}

/// Write a debug line.
pub fn debug(message: impl AsRef<str>) {
    log(Level::Debug, message);
}

/// Write an info line.
pub fn info(message: impl AsRef<str>) {
    log(Level::Info, message);
}

/// Write a warning line.
pub fn warn(message: impl AsRef<str>) {
    log(Level::Warn, message);
}

/// Write an error line.
pub fn error(message: impl AsRef<str>) {
    log(Level::Error, message);
}

/// Format and log a line: `cairn_sdk::log!(info, "wrote {n} bytes")`. The
/// first argument names the level (`trace`, `debug`, `info`, `warn`,
/// `error`).
#[macro_export]
macro_rules! log {
    ($level:ident, $($arg:tt)+) => {
        $crate::log::$level(::std::format!($($arg)+))
    };
}
