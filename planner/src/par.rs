//! Two pieces of work on two threads, for the stages whose cost grows with the graph.

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
