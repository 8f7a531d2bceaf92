//! Large items first: the exact search over the few items that decide the height, then the
//! rest around them.
//!
//! On real allocation traces sizes spread over eight orders of magnitude. The height is
//! decided by the few hundred items within a couple of orders of magnitude of the lower bound;
//! the thousands of small ones fit in the holes any packing of the large ones leaves. The
//! greedy orders and the climb place both kinds together and leave the large ones badly
//! stacked (real-trace-like 5k #1: every classic order and the climb at 1.092 times the
//! bound), while the exact search over all of them runs out of nodes long before the bottom
//! of a 5000-item tree. So: take the items of at least a share of the lower bound, give them
//! to the exact search ([`super::optimal::minimize`]) alone, where they usually reach their
//! own lower bound within about one node per item, fix them there, and place the others by
//! `greedy_by_size` around them. Two shares are tried, the larger first (fewer items), and the
//! lowest packing wins.
//!
//! Every limit counts nodes, and time only under a deadline (`auto` with a time limit):
//! without one, same input, same result.

use std::time::Instant;
use std::vec::Vec;

use super::deadline;
use super::optimal::{OptimalOptions, minimize_with_stats};
use super::{Packing, PlannerKind, Problem, height_lower_bound, pack};

/// The shares of the lower bound, as divisors, above which an item counts as large: 1 %,
/// then 0.3 %. Measured on the real-trace-like problems of `examples/pack_scale.rs` (3k to
/// 60k items), each was the better one on some and neither on all; a third, 3 %, left too
/// much to the greedy fill.
const SHARES: [u64; 2] = [100, 333];

/// A share whose large items have more than this many live at one op is skipped. A node of the
/// exact search costs about as much as the items live where it places one: on the random
/// problems of `examples/pack_scale.rs` (20k buffers, lifetimes of up to 1000 ops) the 0.3 %
/// share has up to 99 live at once and a node took 100 us (50 000 nodes: 5 s, in vain), while
/// the 1 % share (up to 42) took 0.1 s; on the real-trace-like ones both shares stay under 35
/// and their searches take hundredths of a second.
const MAX_LIVE: usize = 64;

/// Lowers the packing of `search` (which must place every item) by placing the large items
/// exactly and the rest around them; returns the lower of the two (the packing on ties) and
/// the search nodes used. Stops at the target. A share with fewer than two large items, all
/// of the movable ones, or more than `max_items`, is skipped. The flag: the deadline cut it.
pub(crate) fn lower(mut search: Lowering<'_>, max_items: usize) -> (Packing, u64, bool) {
    let problem = search.problem;
    let items = &problem.items;
    if search.best.offsets.iter().any(Option::is_none) {
        return (search.best, 0, false);
    }
    let bound = height_lower_bound(problem);
    let movable = items.iter().filter(|it| it.fixed.is_none()).count();
    for (k, share) in SHARES.into_iter().enumerate() {
        if search.stops() {
            break;
        }
        let min_size = bound / share;
        let large: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].fixed.is_none() && items[i].size >= min_size.max(1))
            .collect();
        if large.len() < 2
            || large.len() >= movable
            || large.len() > max_items
            || most_live(problem, &large) > MAX_LIVE
        {
            continue;
        }
        // The sub-problem: the large items and every fixed item (which they must avoid).
        let keep: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].fixed.is_some() || large.binary_search(&i).is_ok())
            .collect();
        let sub = Problem {
            items: keep.iter().map(|&i| items[i].clone()).collect(),
            capacity: None,
        };
        // The shares left split what is left of the budget.
        search.fill_around(&keep, &sub, SHARES.len() - k);
    }
    (search.best, search.used, search.cut)
}

/// A packing being lowered by exact searches ([`lower`], [`peak_window`]): the lowest one
/// so far and the search nodes spent, against the height to stop at, the node budget and the
/// deadline.
#[derive(Debug)]
pub(crate) struct Lowering<'p> {
    problem: &'p Problem,
    target: u64,
    node_budget: u64,
    deadline: Option<Instant>,
    best: Packing,
    used: u64,
    /// The deadline stopped a search, or the next one.
    cut: bool,
}

impl<'p> Lowering<'p> {
    /// Lowering `packing` of `problem` down to `target`, within `node_budget` nodes and
    /// before `deadline`.
    pub(crate) fn new(
        problem: &'p Problem,
        packing: Packing,
        target: u64,
        (node_budget, deadline): (u64, Option<Instant>),
    ) -> Self {
        Lowering {
            problem,
            target,
            node_budget,
            deadline,
            best: packing,
            used: 0,
            cut: false,
        }
    }

    /// At the target, out of nodes, or past the deadline (then `cut`).
    fn stops(&mut self) -> bool {
        if self.best.height <= self.target || self.used >= self.node_budget {
            return true;
        }
        self.cut |= deadline::passed(self.deadline);
        self.cut
    }

    /// Packs `sub` (the items `keep` of the problem, in that order) by
    /// [`minimize_with_stats`] within the nodes not used yet split among `tries` tries; where
    /// it places them all below the best, the movable ones keep the offsets found and
    /// `greedy_by_size` places the other items around them. That packing becomes the best if
    /// it places every item, fits the capacity and is lower.
    fn fill_around(&mut self, keep: &[usize], sub: &Problem, tries: usize) {
        let problem = self.problem;
        let opts = OptimalOptions {
            node_budget: (self.node_budget - self.used) / tries as u64,
            time_limit: deadline::left(self.deadline),
        };
        let (found, _, stats) = minimize_with_stats(sub, &opts, None);
        self.used += stats.nodes;
        self.cut |= stats.timed_out;
        if found.offsets.len() != keep.len() || found.height >= self.best.height {
            return;
        }
        let mut fixed = problem.clone();
        for (&i, o) in keep.iter().zip(&found.offsets) {
            if problem.items[i].fixed.is_none() {
                fixed.items[i].fixed = *o;
            }
        }
        let filled = pack(&PlannerKind::GreedyBySize, &fixed);
        let fits = problem.capacity.is_none_or(|c| filled.height <= c);
        if fits && filled.offsets.iter().all(Option::is_some) && filled.height < self.best.height
        {
            self.best = filled;
        }
    }
}

/// The most items of `some` live at one op.
fn most_live(problem: &Problem, some: &[usize]) -> usize {
    let mut events: Vec<(u32, bool)> = Vec::with_capacity(2 * some.len());
    for &i in some {
        let it = &problem.items[i];
        // Ends sort before starts at the same op: an item ending at op t is gone at t + 1.
        events.push((it.start, true));
        if let Some(after) = it.end.checked_add(1) {
            events.push((after, false));
        }
    }
    events.sort_unstable();
    let (mut live, mut most) = (0usize, 0usize);
    for (_, starts) in events {
        if starts {
            live += 1;
            most = most.max(live);
        } else {
            live = live.saturating_sub(1);
        }
    }
    most
}

/// Most items (clipped to the window) the windows around the op of most load hold, tried in
/// turn: the exact search packs them, every item live in the window keeps the offset found
/// there and `greedy_by_size` places the others around them.
const PEAK_WINDOWS: [usize; 3] = [256, 1024, 2048];

/// Lowers the packing of `search` (which must place every item; no fixed items or alignments) by
/// an exact search over a time window around the op of most load: the items live there, their
/// lifetimes clipped to the window, are packed by [`minimize_with_stats`] within the node
/// budget (windows of more than `max_items` items are skipped), keep those offsets in the
/// whole problem, and the items outside the window are placed around them by
/// `greedy_by_size`. A clipped packing is a packing of the window's ops, so the
/// items crossing the window's edges are placed where the search found room for them at every
/// op of the window; outside it they meet only the greedy fill. Returns the lowest packing
/// (the given one on ties), the nodes used and whether the deadline cut it. `pangu_2.6B.csv` is at the lower bound on the ops
/// 3000-8000 (4175 items) while every greedy order leaves a 40 MiB hole at its peak op.
pub(crate) fn peak_window(mut search: Lowering<'_>, max_items: usize) -> (Packing, u64, bool) {
    let problem = search.problem;
    let items = &problem.items;
    if search.best.offsets.iter().any(Option::is_none)
        || items.iter().any(|it| it.fixed.is_some() || it.align > 1)
    {
        return (search.best, 0, false);
    }
    let Some(peak) = peak_op(problem) else {
        return (search.best, 0, false);
    };
    // Ops sorted by distance from the peak: the window grows over the item boundaries.
    let mut bounds: Vec<u32> = items.iter().flat_map(|it| [it.start, it.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let at = bounds.partition_point(|&t| t < peak);
    for (k, most) in PEAK_WINDOWS.into_iter().enumerate() {
        if search.stops() || most > max_items {
            break;
        }
        // Widen by one boundary on each side while the window holds at most `most` items.
        let (mut l, mut r) = (at, at.min(bounds.len().saturating_sub(1)));
        let count = |lo: u32, hi: u32| {
            items
                .iter()
                .filter(|it| it.size > 0 && it.start <= it.end && it.start <= hi && lo <= it.end)
                .count()
        };
        let Some(&first) = bounds.get(r) else {
            break;
        };
        let (mut lo, mut hi) = (first.min(peak), first.max(peak));
        let mut step = 1usize;
        loop {
            let nl = l.saturating_sub(step);
            let nr = (r + step).min(bounds.len() - 1);
            if nl == l && nr == r {
                break;
            }
            let (tlo, thi) = (bounds[nl].min(lo), bounds[nr].max(hi));
            if count(tlo, thi) > most {
                if step == 1 {
                    break;
                }
                step /= 2;
                continue;
            }
            (l, r, lo, hi) = (nl, nr, tlo, thi);
            step *= 2;
        }
        let keep: Vec<usize> = (0..items.len())
            .filter(|&i| {
                let it = &items[i];
                it.size > 0 && it.start <= it.end && it.start <= hi && lo <= it.end
            })
            .collect();
        if keep.len() < 2 || keep.len() >= items.len() {
            continue;
        }
        let sub = Problem {
            items: keep
                .iter()
                .map(|&i| {
                    let mut it = items[i].clone();
                    it.start = it.start.max(lo);
                    it.end = it.end.min(hi);
                    it.spillable = false;
                    it
                })
                .collect(),
            capacity: None,
        };
        // No item is fixed here, so every kept one keeps its offset.
        search.fill_around(&keep, &sub, PEAK_WINDOWS.len() - k);
    }
    (search.best, search.used, search.cut)
}

/// The first op of most load (sizes live summed), `None` without a live item.
fn peak_op(problem: &Problem) -> Option<u32> {
    let mut events: Vec<(u32, bool, u64)> = Vec::with_capacity(2 * problem.items.len());
    for it in &problem.items {
        if it.size == 0 || it.start > it.end {
            continue;
        }
        events.push((it.start, true, it.size));
        if let Some(after) = it.end.checked_add(1) {
            events.push((after, false, it.size));
        }
    }
    // At one op, ends (false) sort before starts.
    events.sort_unstable();
    let (mut load, mut most, mut at) = (0u128, 0u128, None);
    for (t, starts, size) in events {
        if starts {
            load += u128::from(size);
            if load > most {
                (most, at) = (load, Some(t));
            }
        } else {
            load = load.saturating_sub(u128::from(size));
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{Item, certify};

    /// Six large items in two phases, and a small one at every op.
    fn problem() -> Problem {
        let mut items = Vec::new();
        for (size, start, end) in [
            (600, 0, 9),
            (400, 0, 4),
            (500, 5, 9),
            (300, 10, 19),
            (700, 10, 14),
            (650, 15, 19),
        ] {
            items.push(Item::new(size, start, end));
        }
        for t in 0..20 {
            items.push(Item::new(1 + u64::from(t % 3), t, t));
        }
        Problem {
            items,
            capacity: None,
        }
    }

    #[test]
    fn most_live_counts_items_live_at_one_op() {
        let p = problem();
        // Items 0 and 1 share ops 0-4, 0 and 2 ops 5-9; item 1 ends at 4 and 2 starts at 5.
        assert_eq!(most_live(&p, &[0, 1, 2]), 2);
        assert_eq!(most_live(&p, &[1, 2]), 1);
        // Ops 0-9 have items 0, 1 or 2 and one small item each: three at op 0.
        assert_eq!(most_live(&p, &[0, 1, 2, 6, 7]), 3);
        assert_eq!(most_live(&p, &[]), 0);
    }

    #[test]
    fn never_higher_and_always_valid() {
        let p = problem();
        let start = pack(&PlannerKind::GreedyBySize, &p);
        let (found, nodes, cut) = lower(Lowering::new(&p, start.clone(), 0, (10_000, None)), 4000);
        assert!(!cut);
        assert!(found.height <= start.height);
        assert!(nodes <= 10_000);
        let c = certify(&p, &found);
        assert_eq!(c.height, found.height);
        assert!(crate::pack::optimal::is_valid(
            &p,
            &found.offsets,
            found.height
        ));
    }

    /// Largest first puts A (5000) at 0, B (4000) above it and D (4000) at 0; C (3000), live
    /// at ops 1 and 2, finds no 3000 bytes free at both below B's top: 12 000 bytes. B at 0
    /// with A above it and C above D makes 9000; the small items then fit on top: 9001, the
    /// bound.
    fn toy() -> Vec<Item> {
        let mut items = vec![
            Item::new(5000, 0, 0),
            Item::new(4000, 0, 1),
            Item::new(3000, 1, 2),
            Item::new(4000, 2, 2),
        ];
        items.extend((0..3).map(|t| Item::new(1, t, t)));
        items
    }

    #[test]
    fn large_items_placed_exactly_reach_the_bound_greedy_by_size_misses() {
        let p = Problem {
            items: toy(),
            capacity: None,
        };
        let start = pack(&PlannerKind::GreedyBySize, &p);
        assert!(start.height >= 12_000, "{start:?}");
        let (found, nodes, cut) = lower(Lowering::new(&p, start.clone(), 0, (10_000, None)), 4000);
        assert!(!cut);
        assert_eq!(found.height, height_lower_bound(&p));
        assert_eq!(found.height, 9001);
        assert!(nodes <= 10_000);
        assert!(crate::pack::optimal::is_valid(
            &p,
            &found.offsets,
            found.height
        ));
        // Past its deadline it searches nothing and says it was cut.
        let passed = Some(std::time::Instant::now());
        let cut = lower(Lowering::new(&p, start.clone(), 0, (10_000, passed)), 4000);
        assert_eq!(cut, (start.clone(), 0, true));
        let cut = peak_window(Lowering::new(&p, start.clone(), 0, (10_000, passed)), 2048);
        assert_eq!(cut, (start, 0, true));
    }

    #[test]
    fn a_spilled_item_or_no_large_items_leave_the_packing_as_it_is() {
        let p = problem();
        let mut start = pack(&PlannerKind::GreedyBySize, &p);
        start.offsets[0] = None;
        assert_eq!(
            lower(Lowering::new(&p, start.clone(), 0, (10_000, None)), 4000),
            (start, 0, false)
        );
        // With at most one large item allowed, every share is skipped.
        let start = pack(&PlannerKind::GreedyBySize, &p);
        assert_eq!(
            lower(Lowering::new(&p, start.clone(), 0, (10_000, None)), 1),
            (start, 0, false)
        );
    }

    #[test]
    fn the_window_around_the_peak_reaches_the_bound_greedy_by_size_misses() {
        // The toy (largest first: 12 000, the bound 9001 at op 0), then 300 items of one op
        // each far after it, so the windows hold only part of the problem.
        let mut items = toy();
        items.extend((0..300).map(|t| Item::new(10 + u64::from(t % 7), 100 + t, 100 + t)));
        let p = Problem {
            items,
            capacity: None,
        };
        assert_eq!(peak_op(&p), Some(0));
        let start = pack(&PlannerKind::GreedyBySize, &p);
        assert!(start.height >= 12_000, "{start:?}");
        let (found, nodes, cut) =
            peak_window(Lowering::new(&p, start.clone(), 0, (10_000, None)), 2048);
        assert!(!cut);
        assert_eq!(found.height, 9001);
        assert_eq!(found.height, height_lower_bound(&p));
        assert!(nodes <= 10_000);
        assert!(crate::pack::optimal::is_valid(
            &p,
            &found.offsets,
            found.height
        ));
        // No window of at most 100 items is tried; nor with a spilled item.
        assert_eq!(
            peak_window(Lowering::new(&p, start.clone(), 0, (10_000, None)), 100),
            (start.clone(), 0, false)
        );
        let mut spilled = start;
        spilled.offsets[0] = None;
        assert_eq!(
            peak_window(Lowering::new(&p, spilled.clone(), 0, (10_000, None)), 2048),
            (spilled, 0, false)
        );
    }
}
