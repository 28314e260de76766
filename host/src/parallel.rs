//! CPU-bound work shared out between the machine's cores, keeping order:
//! parsing a large configuration file, reading and writing a large state,
//! rendering a large plan; and how many threads the engine's own pools use.
//!
//! `CAIRN_THREADS=N` sets that number (default: the cores this process may
//! use): the async runtime's workers, which run the plan and apply walks
//! and the provider calls, and the runs of [`map_runs`]. It lets a
//! benchmark (`cargo bench -p cairn --bench phases`) time every phase on
//! 1, 2 and all cores of one machine, which shows what is still serial. It
//! does not bound `-parallelism` (how many provider calls are in flight)
//! or Cranelift's compile threads.

use std::sync::OnceLock;

/// The environment variable that sets how many threads the engine's pools
/// use (see the module).
pub const THREADS_VAR: &str = "CAIRN_THREADS";

/// How many threads the engine's pools use: `CAIRN_THREADS` if it is set
/// (and valid: [`check_threads_var`] says when it is not), else the cores
/// this process may use. Read once.
pub fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        let asked = std::env::var(THREADS_VAR).ok();
        parse_threads(asked.as_deref()).ok().flatten().unwrap_or_else(cores)
    })
}

/// An error naming `CAIRN_THREADS` if it is set to anything but a whole
/// number of threads from 1 up, so that a typo is not silently the default.
pub fn check_threads_var() -> Result<(), String> {
    let asked = std::env::var(THREADS_VAR).ok();
    parse_threads(asked.as_deref()).map(|_| ())
}

/// The number of threads `value` (the variable's value, `None` when unset
/// or empty) asks for.
fn parse_threads(value: Option<&str>) -> Result<Option<usize>, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => match text.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!("{THREADS_VAR}={text:?} is not a number of threads (a whole number from 1 up)")),
        },
    }
}

/// The cores this process may use.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `f` applied to runs of `items`, one run per thread (see [`threads`];
/// each run of at least `min_run` items), the results in the items' order.
/// A panic in `f` is resumed on the calling thread.
pub fn map_runs<T: Sync, R: Send>(items: &[T], min_run: usize, f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    map_runs_on(threads(), items, min_run, f)
}

/// [`map_runs`] on at most `threads` threads.
pub fn map_runs_on<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    min_run: usize,
    f: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let runs = threads.min(items.len() / min_run.max(1)).max(1);
    if runs == 1 {
        return vec![f(items)];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = items.chunks(items.len().div_ceil(runs)).map(|run| scope.spawn(|| f(run))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_every_item_in_order() {
        let items: Vec<usize> = (0..1000).collect();
        let runs = map_runs_on(4, &items, 10, <[usize]>::to_vec);
        assert_eq!(runs.len(), 4);
        assert_eq!(runs.concat(), items);
        // Too few items for two runs of ten: one run.
        assert_eq!(map_runs_on(4, &items[..15], 10, <[usize]>::len), vec![15]);
        assert_eq!(map_runs_on(4, &[] as &[usize], 1, <[usize]>::len), vec![0]);
        // One thread: one run, whatever the items.
        assert_eq!(map_runs_on(1, &items, 10, <[usize]>::len), vec![1000]);
    }

    #[test]
    fn the_thread_count_is_a_whole_number_from_one_up() {
        assert_eq!(parse_threads(None), Ok(None));
        assert_eq!(parse_threads(Some("")), Ok(None));
        assert_eq!(parse_threads(Some("1")), Ok(Some(1)));
        assert_eq!(parse_threads(Some(" 16 ")), Ok(Some(16)));
        for wrong in ["0", "-2", "two", "1.5"] {
            let error = parse_threads(Some(wrong)).unwrap_err();
            assert!(error.contains("CAIRN_THREADS") && error.contains(wrong), "{error}");
        }
    }
}
