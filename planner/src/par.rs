//! Work on several threads, for the stages whose cost grows with the problem. Every helper
//! here gives the same results on any number of threads, and falls back to this thread when
//! the system refuses to start one (a build script must not panic because threads ran out).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::vec;
use std::vec::Vec;

/// Graphs with at least this many tensors have their checker and binding split over two
/// threads; below it, a thread costs more than it saves.
pub(crate) const PARALLEL_FROM: usize = 50_000;

/// `a()` and `b()`, on two threads when `parallel`. When no thread can be started, or the
/// other thread panics, its work is done on this one (where a panic then shows).
pub(crate) fn both<A: Send, B: Send>(
    parallel: bool,
    a: impl Fn() -> A + Sync,
    b: impl Fn() -> B + Sync,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let Ok(other) = std::thread::Builder::new().spawn_scoped(s, &b) else {
            return (a(), b());
        };
        let first = a();
        (first, other.join().unwrap_or_else(|_| b()))
    })
}

/// Runs `work(k)` for the indices of `queue` (an order of `0..queue.len()`), in that order,
/// on up to `threads` threads (this one included), each thread taking the next index of the
/// queue. Returns the results by index: `None` for an index that was not run.
///
/// Once `enough(k, &result)` holds for the result at queue position `q`, no position after
/// `q` is started (positions before it still run). An index whose work panicked is `None`
/// too, and its thread goes on with the queue: the caller runs that index again itself,
/// where the panic then shows. Which thread ran an index is not observable, so with a
/// deterministic `work` the results are the same on any number of threads, except for the
/// indices after an `enough`, which may or may not have run.
pub(crate) fn each<T: Send>(
    threads: usize,
    queue: &[usize],
    work: impl Fn(usize) -> T + Sync,
    enough: impl Fn(usize, &T) -> bool + Sync,
) -> Vec<Option<T>> {
    let next = AtomicUsize::new(0);
    let stop_after = AtomicUsize::new(usize::MAX);
    let worker = || {
        let mut mine = Vec::new();
        loop {
            let q = next.fetch_add(1, Ordering::Relaxed);
            if q > stop_after.load(Ordering::Relaxed) {
                break;
            }
            let Some(&k) = queue.get(q) else { break };
            let Ok(r) = std::panic::catch_unwind(AssertUnwindSafe(|| work(k))) else {
                continue;
            };
            if enough(k, &r) {
                stop_after.fetch_min(q, Ordering::Relaxed);
            }
            mine.push((k, r));
        }
        mine
    };
    let mut results: Vec<Option<T>> = std::iter::repeat_with(|| None).take(queue.len()).collect();
    let others = threads.clamp(1, queue.len().max(1)) - 1;
    let done: Vec<Vec<(usize, T)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..others)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, worker).ok())
            .collect();
        let mut done = vec![worker()];
        done.extend(handles.into_iter().map(|h| h.join().unwrap_or_default()));
        done
    });
    for (k, r) in done.into_iter().flatten() {
        if let Some(slot) = results.get_mut(k) {
            *slot = Some(r);
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::assert_eq;

    #[test]
    fn each_gives_the_same_results_on_any_number_of_threads() {
        let queue: Vec<usize> = (0..50).rev().collect();
        let square = |k: usize| k * k;
        let one = each(1, &queue, square, |_, _| false);
        assert_eq!(one.len(), 50);
        assert!(one.iter().enumerate().all(|(k, r)| *r == Some(k * k)));
        for threads in [2, 3, 8, 100] {
            assert_eq!(each(threads, &queue, square, |_, _| false), one);
        }
        assert!(each(4, &[], square, |_, _| false).is_empty());
    }

    #[test]
    fn each_runs_every_position_before_the_first_that_is_enough() {
        let queue: Vec<usize> = (0..40).collect();
        for threads in [1, 2, 5] {
            let r = each(threads, &queue, |k| k, |_, &v| v == 17 || v == 30);
            assert!(r[..=17].iter().enumerate().all(|(k, v)| *v == Some(k)));
            if threads == 1 {
                assert!(r[18..].iter().all(Option::is_none));
            }
        }
    }

    #[test]
    fn each_leaves_a_panicked_index_to_the_caller() {
        let queue: Vec<usize> = (0..6).collect();
        for threads in [1, 3] {
            let r = each(
                threads,
                &queue,
                |k| {
                    assert!(k != 4, "index 4 fails");
                    k
                },
                |_, _| false,
            );
            for (k, v) in r.iter().enumerate() {
                assert_eq!(*v, (k != 4).then_some(k));
            }
        }
    }
}
