//! Exact search in a window around the peak, for problems too large to search whole.
//!
//! On a large problem the greedy orders and the climb leave the height a little above the
//! lower bound, and the reason is local: a few items placed badly where the height is
//! reached. So take the item reaching the height, a time window around its lifetime, and
//! the items live only inside that window: those are re-packed by the exact search
//! ([`super::optimal::minimize`]) while every other item live in the window keeps its
//! offset (a fixed item of the sub-problem, its lifetime clipped to the window). Items live
//! only inside the window meet no item outside it, so any packing the search finds is valid
//! for the whole problem. When the window's height drops below the old height, the next
//! item reaching the (maybe lower) height gets its own window; when it does not, a wider
//! window is tried, up to [`WIDTHS`]; when the widest fails, the stage stops.
//!
//! Every limit counts work (items in a window, windows, search nodes), and time only under
//! a deadline (`auto` with a time limit): without one, the result is the same on every
//! machine.

use std::time::Instant;
use std::vec::Vec;

use super::deadline;
use super::optimal::{OptimalOptions, Outcome, fits_with_stats, is_valid};
use super::{Item, Packing, Problem};

/// Most items a window holds, tried in turn while the peak does not drop; whether the items
/// live with the peak item (and the items they meet) are re-packed too; and the most nodes
/// the window may search. The 4096-item window gets 1000: a node there costs several times
/// one in a 1024-item window (the section check sweeps every item of the window), and on
/// the real-trace-like problems a gain, when there was one, came within the first few
/// hundred (real-like 60k #1: the same height with 300 nodes as with 5000).
const WIDTHS: [(usize, bool, u64); 6] = [
    (128, false, u64::MAX),
    (384, false, u64::MAX),
    (1024, false, u64::MAX),
    (384, true, u64::MAX),
    (1024, true, u64::MAX),
    (4096, false, 1000),
];

/// Most windows one call searches.
const MAX_WINDOWS: u32 = 64;

/// Lowers `packing`'s height towards `target` by exact searches in windows around the peak,
/// within `node_budget` search nodes in all and before `deadline`; returns the packing (never
/// higher), the nodes used and whether the deadline cut it. Only for packings that place
/// every item, without a capacity (a decomposition's parts); any other packing is returned
/// as it is.
pub(crate) fn lower_peak(
    problem: &Problem,
    packing: Packing,
    target: u64,
    (node_budget, deadline): (u64, Option<Instant>),
) -> (Packing, u64, bool) {
    let items = &problem.items;
    if problem.capacity.is_some() || packing.offsets.iter().any(Option::is_none) {
        return (packing, 0, false);
    }
    let mut offsets: Vec<u64> = packing.offsets.iter().map(|o| o.unwrap_or(0)).collect();
    let mut height = packing.height;
    let (mut used, mut windows, mut width) = (0u64, 0u32, 0usize);
    let mut cut = false;
    while height > target && windows < MAX_WINDOWS && used < node_budget {
        if deadline::passed(deadline) {
            cut = true;
            break;
        }
        let Some(peak) =
            (0..items.len()).find(|&i| offsets[i].saturating_add(items[i].size) == height)
        else {
            break;
        };
        windows += 1;
        let Some((lo, hi, chain)) = place_window(items, &offsets, peak, WIDTHS[width].0) else {
            if width + 1 < WIDTHS.len() {
                width += 1;
                continue;
            }
            break;
        };
        // Each window gets at most a quarter of the nodes left, so a hopeless one leaves
        // some for the next.
        let nodes = ((node_budget - used) / 4)
            .max(1000)
            .min(node_budget - used)
            .min(WIDTHS[width].2);
        let w = Window {
            lo,
            hi,
            column: WIDTHS[width]
                .1
                .then_some((items[peak].start, items[peak].end)),
            chain,
        };
        let limits = (nodes, deadline);
        let (found, spent, timed_out) = search_window(problem, &offsets, &w, (height, target), limits);
        used += spent;
        cut |= timed_out;
        match found {
            Some(free) => {
                for (i, o) in free {
                    offsets[i] = o;
                }
                height = top(items, &offsets);
                width = 0;
            }
            None if width + 1 < WIDTHS.len() => width += 1,
            None => break,
        }
    }
    let packing = Packing {
        offsets: offsets.into_iter().map(Some).collect(),
        height,
    };
    (packing, used, cut)
}

fn top(items: &[Item], offsets: &[u64]) -> u64 {
    items
        .iter()
        .zip(offsets)
        .map(|(it, &o)| o.saturating_add(it.size))
        .max()
        .unwrap_or(0)
}

/// The window for `peak`: around its lifetime when few enough items live inside it; else
/// around the lifetime of the item it rests on (the largest one whose top is its offset),
/// or of the item that one rests on, and so on, with the items on the way (`peak` first)
/// moved too.
fn place_window(
    items: &[Item],
    offsets: &[u64],
    peak: usize,
    most: usize,
) -> Option<(u32, u32, Vec<usize>)> {
    let mut chain = Vec::new();
    let mut cur = peak;
    for _ in 0..8 {
        if let Some((lo, hi)) = window(items, cur, most) {
            return Some((lo, hi, chain));
        }
        chain.push(cur);
        let it = &items[cur];
        cur = (0..items.len())
            .filter(|&j| {
                items[j].overlaps_in_time(it)
                    && items[j].fixed.is_none()
                    && offsets[j].saturating_add(items[j].size) == offsets[cur]
            })
            .max_by_key(|&j| (items[j].size, std::cmp::Reverse(j)))?;
    }
    None
}

/// The widest time window `[lo, hi]` around item `peak`'s lifetime, grown on both sides by
/// a doubling margin, in which at most `most` items (and at least the peak item) live
/// entirely; `None` when the peak item's own lifetime holds more.
fn window(items: &[Item], peak: usize, most: usize) -> Option<(u32, u32)> {
    let (s, e) = (items[peak].start, items[peak].end);
    let inside = |lo: u32, hi: u32| {
        items
            .iter()
            .filter(|it| it.fixed.is_none() && it.start >= lo && it.end <= hi)
            .count()
    };
    if inside(s, e) > most {
        return None;
    }
    let mut best = (s, e);
    let mut margin = 1u32;
    while margin < 1 << 24 {
        let (lo, hi) = (s.saturating_sub(margin), e.saturating_add(margin));
        if inside(lo, hi) > most {
            break;
        }
        best = (lo, hi);
        if lo == 0 && hi == u32::MAX {
            break;
        }
        margin *= 2;
    }
    Some(best)
}

/// A window: the time range whose items move, and the lifetime of a peak item whose
/// time-overlapping items move too.
#[derive(Debug, Clone)]
struct Window {
    lo: u32,
    hi: u32,
    column: Option<(u32, u32)>,
    /// Items moved wherever they live (a chain of long-lived items above the window).
    chain: Vec<usize>,
}

/// The exact search of the window `[lo, hi]`: the items live only inside it re-packed, the
/// other items live in it fixed. The new offsets of the re-packed items when the window's
/// height falls below `height`, the nodes spent and whether the deadline stopped a search.
///
/// It probes two heights: the highest of `target` and the tops of the items it does not
/// move (the most one window can gain), then one byte below `height` (any gain), each with
/// half the nodes.
fn search_window(
    problem: &Problem,
    offsets: &[u64],
    w: &Window,
    (height, target): (u64, u64),
    (nodes, deadline): (u64, Option<Instant>),
) -> (Option<Vec<(usize, u64)>>, u64, bool) {
    let items = &problem.items;
    let moves = |i: usize| {
        let it = &items[i];
        it.fixed.is_none()
            && ((it.start >= w.lo && it.end <= w.hi)
                || w.column.is_some_and(|(s, e)| it.start <= e && s <= it.end)
                || w.chain.contains(&i))
    };
    // The sub-problem spans the lifetimes of the items it moves.
    let (mut lo, mut hi) = (w.lo, w.hi);
    for (_, it) in items.iter().enumerate().filter(|&(i, _)| moves(i)) {
        (lo, hi) = (lo.min(it.start), hi.max(it.end));
    }
    let mut free = Vec::new();
    let mut sub = Problem {
        items: Vec::new(),
        capacity: None,
    };
    let mut goal = target;
    for (i, it) in items.iter().enumerate() {
        let inside = moves(i);
        if !inside {
            goal = goal.max(offsets[i].saturating_add(it.size));
        }
        if it.end < lo || it.start > hi {
            continue;
        }
        let mut s = it.clone();
        if inside {
            free.push((i, sub.items.len()));
        } else {
            s.start = s.start.max(lo);
            s.end = s.end.min(hi);
            s.fixed = Some(offsets[i]);
        }
        s.spillable = false;
        sub.items.push(s);
    }
    let (mut spent, mut timed_out) = (0, false);
    for (k, cap) in [goal, height - 1].into_iter().enumerate() {
        if cap >= height || (k == 1 && cap == goal) {
            continue;
        }
        let opts = OptimalOptions {
            node_budget: nodes / 2,
            time_limit: deadline::left(deadline),
        };
        let (outcome, stats) = fits_with_stats(&sub, cap, &opts);
        spent += stats.nodes;
        timed_out |= stats.timed_out;
        if let Outcome::Fits(found) = outcome
            && is_valid(&sub, &found.offsets, cap)
        {
            let moved = free
                .into_iter()
                .filter_map(|(i, k)| found.offsets[k].map(|o| (i, o)))
                .collect();
            return (Some(moved), spent, timed_out);
        }
    }
    (None, spent, timed_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{PlannerKind, pack};

    #[test]
    fn lowers_a_bad_peak_and_stays_valid() {
        // Two phases; in the second the greedy order leaves a hole.
        let mut items = Vec::new();
        for k in 0..40u32 {
            items.push(Item::new(8 + u64::from(k % 5) * 8, k, k + 2));
        }
        items.extend([
            Item::new(30, 50, 52),
            Item::new(20, 50, 50),
            Item::new(10, 51, 52),
            Item::new(20, 52, 52),
        ]);
        let p = Problem {
            items,
            capacity: None,
        };
        let bound = crate::pack::height_lower_bound(&p);
        let start = pack(&PlannerKind::Greedy, &p);
        assert!(
            start.height > bound,
            "the test needs a packing above the bound"
        );
        let (got, _, cut) = lower_peak(&p, start.clone(), bound, (100_000, None));
        assert!(!cut);
        assert!(got.height <= start.height);
        assert!(is_valid(&p, &got.offsets, got.height));
        assert_eq!(got.height, bound);
    }
}
