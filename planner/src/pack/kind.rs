//! [`PlannerKind`]: which packer to run, with its options (the packers themselves and their
//! table sit above it, in `auto` and `registry`).

use super::optimal::OptimalOptions;
use super::options::{AutoOptions, HillClimbOptions};

/// Which packer to run, with its options.
///
/// The default ([`PlannerKind::Auto`]) is what runs when a manifest names no planner:
///
/// 1. `greedy_by_size`; done if it reaches the lower bound.
/// 2. Best-of-greedy: TFLM's planner's packing (`pack::tflm`), then six orders (size, start,
///    end, area, duration, number of conflicts) times two gap rules (lowest offset, best fit)
///    over the items `greedy_by_size` placed, on [`AutoOptions::threads`] threads; done at
///    the lower bound, and passes only while [`AutoOptions::seed_budget`] covers them.
/// 3. Large items first, on problems where step 5 or the windows may run (or under a time
///    limit) and that spill nothing: the items of at least 1 %, then 0.3 %, of the lower
///    bound get the exact search alone, within [`AutoOptions::node_budget`] nodes, and the
///    others are placed around them by `greedy_by_size`; done when that reaches the lower
///    bound (see [`AutoOptions::large_max_items`]).
///    Where it runs, next and while still above the target, the items
///    live in a window around the op of most load are packed exactly with their lifetimes
///    clipped to it and the rest placed around them ([`AutoOptions::peak_max_items`]);
///    done when the lower of the two reaches the lower bound.
/// 4. The hill climb from the best of steps 1-2, stopping at the lower bound, after
///    [`AutoOptions::iterations`] re-packs, [`AutoOptions::max_stall_iterations`] re-packs
///    without progress, or [`AutoOptions::budget`] units of work, whichever comes first; the
///    lower of its packing and step 3's goes on.
/// 5. While the gap is still open, on problems of at most [`AutoOptions::exact_max_items`]
///    items, the exact search ([`optimal::minimize`](super::optimal::minimize)) over the same items, from that
///    packing, for at most [`AutoOptions::node_budget`] nodes; it either proves the packing
///    optimal, finds a lower one, or leaves it as it is.
///
/// Problems of at least [`AutoOptions::split_min_items`] items are first decomposed: items
/// live over the whole span are stacked at the bottom, the rest is cut at time boundaries no
/// item crosses (recursively), and each part runs the stages above on its own, in parallel on
/// [`AutoOptions::threads`] threads, stopping once it is at the whole problem's lower bound.
/// On a part, step 5 runs up to [`AutoOptions::part_exact_max_items`] items. A part of more
/// than `exact_max_items` items still above its target after that gets exact searches in
/// windows around its peak (`pack/window.rs`): the items live only near the item reaching
/// the height are re-packed, the others stay fixed, within [`AutoOptions::node_budget`]
/// nodes more.
///
/// Every limit counts work, not time, so the plan is the same on every machine, unless
/// [`AutoOptions::time_limit`] is set.
///
/// Every stage keeps the items `greedy_by_size` spills spilled and replaces the best only by a
/// strictly lower packing, so `auto`, `best_of_greedy` and `hill_climb` are never worse than
/// `greedy_by_size`, in this arena or, since the same items spill, in the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannerKind {
    /// First fit in lifetime-start order, lowest aligned offset.
    Greedy,
    /// Largest first (then start, then index), lowest aligned gap among time-overlapping
    /// items.
    GreedyBySize,
    /// The best of several orders and both gap rules.
    BestOfGreedy,
    /// Seeded local search over placement orders, from the best of greedy.
    HillClimb(HillClimbOptions),
    /// Exact search over the items `greedy_by_size` places, from the default hill climb's
    /// packing: the lowest height, proven, unless the node budget runs out first.
    Optimal(OptimalOptions),
    /// The default policy: greedy rules, then a bounded hill climb and a bounded exact
    /// search while the gap to the lower bound is open.
    Auto(AutoOptions),
    /// TensorFlow Lite Micro's `GreedyMemoryPlanner` (`pack::tflm`): sizes rounded up to 16,
    /// largest first (ties to the later item), lowest gap; what TFLM would need.
    Tflm,
}

impl Default for PlannerKind {
    fn default() -> Self {
        PlannerKind::Auto(AutoOptions::default())
    }
}
