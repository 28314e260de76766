//! CPU-bound work shared out between the machine's cores, keeping order:
//! parsing a large configuration file, rendering a large plan.

/// `f` applied to runs of `items`, one run per core (each of at least
/// `min_run` items), the results in the items' order. A panic in `f` is
/// resumed on the calling thread.
pub fn map_runs<T: Sync, R: Send>(items: &[T], min_run: usize, f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let runs = cores.min(items.len() / min_run.max(1)).max(1);
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
        let runs = map_runs(&items, 10, <[usize]>::to_vec);
        assert_eq!(runs.concat(), items);
        // Too few items for two runs of ten: one run.
        assert_eq!(map_runs(&items[..15], 10, <[usize]>::len), vec![15]);
        assert_eq!(map_runs(&[] as &[usize], 1, <[usize]>::len), vec![0]);
    }
}
