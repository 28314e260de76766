//! cairn's log: what `CAIRN_LOG` asks for, on standard error.
//!
//! `CAIRN_LOG` is a `tracing` filter (`debug`, `cairn::engine=debug`,
//! `info,cranelift=debug`…) with one difference: a bare level is cairn's
//! own, and every other crate stays at `warn` unless the filter names it.
//! wasmtime and Cranelift log at debug level, Cranelift a line for every
//! timing of every function it compiles: 822,341 of the 822,356 lines of a
//! first run with a Python provider at `CAIRN_LOG=debug`, which buried
//! cairn's own lines. `CAIRN_LOG=debug,cranelift=debug` still shows them.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// The target of cairn's own log lines (the library and the binary, which
/// share the name; providers' lines are `cairn::provider`).
const OWN: &str = "cairn";

/// The level of every other crate unless `CAIRN_LOG` names it.
const OTHERS: LevelFilter = LevelFilter::WARN;

/// Logs to standard error what `CAIRN_LOG` asks for (see the module), or
/// warnings only.
pub fn init_logging() {
    let asked = std::env::var("CAIRN_LOG").ok();
    let filter = EnvFilter::try_new(directives(asked.as_deref())).unwrap_or_else(|e| {
        eprintln!("cairn: CAIRN_LOG={:?} is not a log filter ({e}); logging warnings only", asked.unwrap_or_default());
        EnvFilter::new(level_name(OTHERS))
    });
    // Colour codes only for a terminal: in a file or a pipe they are noise.
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).try_init();
}

/// The filter directives for `CAIRN_LOG` set to `asked` (`None`: unset).
/// A bare level more verbose than [`OTHERS`] becomes cairn's own (unless
/// the filter names `cairn` itself) and the others stay at [`OTHERS`]; a
/// quieter one (`error`, `off`) holds for everything. Every directive that
/// names a target is kept as written, and the most specific wins.
pub(crate) fn directives(asked: Option<&str>) -> String {
    let mut bare = None;
    let mut named = Vec::new();
    for directive in asked.unwrap_or_default().split(',').map(str::trim).filter(|d| !d.is_empty()) {
        match directive.parse::<LevelFilter>() {
            Ok(level) => bare = Some(level),
            Err(_) => named.push(directive),
        }
    }
    let names_own = named.iter().any(|d| target(d) == OWN);
    let mut out = Vec::new();
    match bare {
        Some(level) if level > OTHERS => {
            out.push(level_name(OTHERS).to_string());
            if !names_own {
                out.push(format!("{OWN}={}", level_name(level)));
            }
        }
        Some(level) => out.push(level_name(level).to_string()),
        None => out.push(level_name(OTHERS).to_string()),
    }
    out.extend(named.into_iter().map(str::to_string));
    out.join(",")
}

/// The target a directive names: `cranelift` in `cranelift=debug` or
/// `cranelift[span]=debug`.
fn target(directive: &str) -> &str {
    directive.split(['[', '=']).next().unwrap_or_default().trim()
}

fn level_name(level: LevelFilter) -> &'static str {
    match level {
        LevelFilter::OFF => "off",
        LevelFilter::ERROR => "error",
        LevelFilter::WARN => "warn",
        LevelFilter::INFO => "info",
        LevelFilter::DEBUG => "debug",
        _ => "trace",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_level_is_cairns_own_and_other_crates_stay_at_warn() {
        // Issue 32, item 9: `CAIRN_LOG=debug` printed Cranelift's timings.
        assert_eq!(directives(None), "warn");
        assert_eq!(directives(Some("")), "warn");
        assert_eq!(directives(Some("debug")), "warn,cairn=debug");
        assert_eq!(directives(Some("TRACE")), "warn,cairn=trace");
        assert_eq!(directives(Some("info")), "warn,cairn=info");
        assert_eq!(directives(Some("warn")), "warn");
    }

    #[test]
    fn a_crate_named_is_logged_as_asked() {
        assert_eq!(directives(Some("debug,cranelift=debug")), "warn,cairn=debug,cranelift=debug");
        assert_eq!(directives(Some("wasmtime=info")), "warn,wasmtime=info");
        assert_eq!(directives(Some("cairn::provider=debug")), "warn,cairn::provider=debug");
        assert_eq!(directives(Some("debug, cairn::engine=trace")), "warn,cairn=debug,cairn::engine=trace");
        // cairn named outright: its own directive, not the bare level.
        assert_eq!(directives(Some("debug,cairn=info")), "warn,cairn=info");
        assert_eq!(directives(Some("cranelift[compile]=debug")), "warn,cranelift[compile]=debug");
    }

    #[test]
    fn a_quieter_bare_level_holds_for_everything() {
        assert_eq!(directives(Some("error")), "error");
        assert_eq!(directives(Some("off")), "off");
        assert_eq!(directives(Some("off,cairn=debug")), "off,cairn=debug");
    }

    #[test]
    fn every_result_is_a_valid_filter() {
        for asked in ["debug", "debug,cranelift=debug", "off,cairn=debug", "cranelift[compile]=debug"] {
            assert!(EnvFilter::try_new(directives(Some(asked))).is_ok(), "{asked}");
        }
    }
}
