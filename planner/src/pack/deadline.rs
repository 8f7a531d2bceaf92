//! Wall-clock stops, for the stages that run under a time limit (`auto`'s `time_limit`, the
//! CLI's `--time-limit`). Without a deadline nothing here stops anything, and the packers
//! stay deterministic.

use std::time::{Duration, Instant};

/// Whether `deadline` has passed; never without one.
pub(crate) fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// The time left before `deadline`, as an exact search's `time_limit`; none without one.
pub(crate) fn left(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}
