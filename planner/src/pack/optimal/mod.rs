//! Exact packing: "does every item fit below this capacity?" and "what is the lowest height?".
//!
//! The search follows the ideas published for MiniMalloc (Moffitt, ASPLOS 2024). The code is
//! written from that description and from comparing the two searches' placements on the same
//! instances; none of MiniMalloc's code is ported.
//!
//! - **Canonical solutions.** Push every item of any packing down as far as it goes (repeat
//!   until nothing moves) and sort the items by offset: each one then sits at the lowest
//!   feasible offset above the time-overlapping items before it (0, or the top of one of them,
//!   rounded up to its alignment and past any fixed item in the way). The search builds only
//!   such sequences, with offsets that never decrease, so it branches on *which* item comes
//!   next, never on *where* it goes. It misses no packing: if one fits, a canonical one does.
//! - **Dominance of holes.** Offsets never decrease, so a hole left below the last offset can
//!   never be filled. If some unplaced item would fit entirely below the offset about to be
//!   used, every packing below this node could push that item down, so none is canonical and
//!   the node is cut. This leaves few candidates per node: the next item must start below the
//!   lowest top any other unplaced item could reach.
//! - **Inference by time sections.** Between consecutive start/end times the set of live items
//!   is constant. The unplaced items live in a section must stack above the lowest offset any
//!   of them can take, so `lowest + their sizes > capacity` cuts the node; and those that
//!   cannot go that low stack above the next lowest offset, which is checked the same way.
//!   (Checking every such offset, not just two, cut no more nodes on MiniMalloc's
//!   challenging instances and cost a sort per node.) Nearly every check fails, so the
//!   section that failed last and those of the item just placed are tried alone first.
//!   Sections that belong to other sides are left out: their floor is not this side's.
//! - **Decomposition.** Where no item crosses a time boundary, the two sides are independent
//!   problems, solved one after the other. When a placement leaves a boundary uncrossed, the
//!   whole range is first checked with the current floor; then each side is searched as a
//!   problem of its own: the floor drops back to 0 and its items are ranked afresh from the
//!   loads left in it. A side that fails then fails for every prefix that leaves the same
//!   state, not just for this floor. During the search, an item whose time-overlapping items
//!   are all placed is placed at once at its lowest offset and leaves the search.
//! - **Equivalent partial packings.** Two partial packings that leave the same unplaced items
//!   with the same lowest offsets leave the same problem, however the holes below are
//!   arranged. Failed states are remembered by a 128-bit Zobrist hash, with the floor they
//!   failed at: the same state with a floor at or above it fails too. Ranks change when a
//!   side is ranked afresh, so the key also holds the state the side was entered at.
//! - **Branching order.** Candidates go lowest offset first, then by a rank. Items at equal
//!   offsets never overlap in time, so only rising rank is explored among them; identical
//!   items (same lifetime, size and alignment) go in index order. Five rankings take turns
//!   with node limits that double every round: search times are heavy-tailed, and an order
//!   that stalls on one instance is often quick with another. They combine, larger first,
//!   the heaviest load among an item's time sections (recomputed whenever a side is ranked
//!   afresh), its lifetime length, its area (size times lifetime) and the number of
//!   sections it spans; the first three are MiniMalloc's default preorders.
//!
//! The search counts nodes: with the same problem and options it explores the same nodes and
//! returns the same offsets on every machine. A wall-clock limit is an optional extra stop.
//! Spilling does not apply here: every item is placed (`Item::spillable` is ignored).

use std::collections::HashMap;
use std::time::{Duration, Instant};
use std::vec::Vec;

use super::options::with_defaults;
use super::{Packing, Problem, greedy_order, place_in_order, size_order};

mod component;
mod tops;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tiling;

use component::Component;

with_defaults! {
    /// Options of the exact search.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct OptimalOptions {
        /// Most search nodes (placements tried) in one call, counted over all the sub-searches of
        /// [`minimize`]. The search stops with [`Outcome::Unknown`] when it runs out. In a time
        /// slice of 10,000 items or more, each candidate a node scans counts as a node too;
        /// and the search also stops once its section checks have read 32,768 items per node
        /// of the budget (where every step has thousands of items live, a node reads them).
        pub node_budget: u64 = 1_000_000,
        /// Optional wall-clock stop. Results then depend on the machine's speed; leave it `None`
        /// wherever the output must be reproducible and rely on `node_budget`.
        pub time_limit: Option<Duration> = None,
    }
}

/// The answer to "does it fit below the capacity?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every item fits; the packing's height is at most the capacity.
    Fits(Packing),
    /// Proven: no packing of these items fits below the capacity.
    DoesNotFit,
    /// The budget ran out before an answer. Carries the lowest packing found (from the greedy
    /// orders tried first); its height is above the capacity.
    Unknown(Packing),
}

/// What a search did, for benchmarks and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Search nodes explored.
    pub nodes: u64,
    /// Independent time slices the problem split into.
    pub components: usize,
    /// Most items placed at once in one slice's search (how deep it got).
    pub deepest: usize,
    /// The search stopped at its wall-clock limit ([`OptimalOptions::time_limit`]) before
    /// its node budget: its answer depends on the machine. False when the node budget (or
    /// an answer) came first, which every machine reaches alike.
    pub timed_out: bool,
}

/// Does every item of `problem` fit below `capacity`? Fixed items keep their offsets, every
/// offset is a multiple of its item's alignment. `problem.capacity` is not used.
pub fn fits(problem: &Problem, capacity: u64, opts: &OptimalOptions) -> Outcome {
    fits_with_stats(problem, capacity, opts).0
}

/// [`fits`], also returning what the search did.
#[doc(hidden)]
pub fn fits_with_stats(
    problem: &Problem,
    capacity: u64,
    opts: &OptimalOptions,
) -> (Outcome, SearchStats) {
    let mut budget = Budget::new(opts);
    let best = best_greedy(problem);
    let outcome = fits_inner(problem, capacity, &mut budget, best);
    let stats = SearchStats {
        nodes: budget.used,
        components: budget.components,
        deepest: budget.deepest,
        timed_out: budget.timed_out,
    };
    (outcome, stats)
}

/// The lowest height of `problem`, and whether it is proven optimal.
///
/// Starts from `upper_bound_hint` when it is a complete, valid packing, from the best of a
/// few greedy orders otherwise, tries the lower bound first, then bisects between the highest
/// height ruled out and the best height found. Each probe may use half the nodes left, so a
/// height the budget cannot decide (then taken as ruled out, unproven) leaves nodes for
/// the heights above it. Without proof the packing is the best found and the flag is
/// `false`; it is also `false` when fixed items overlap (then no packing is valid).
/// `problem.capacity` is not used.
pub fn minimize(
    problem: &Problem,
    opts: &OptimalOptions,
    upper_bound_hint: Option<Packing>,
) -> (Packing, bool) {
    let (p, proven, _) = minimize_with_stats(problem, opts, upper_bound_hint);
    (p, proven)
}

/// [`minimize`], also returning what the search did.
#[doc(hidden)]
pub fn minimize_with_stats(
    problem: &Problem,
    opts: &OptimalOptions,
    upper_bound_hint: Option<Packing>,
) -> (Packing, bool, SearchStats) {
    let mut budget = Budget::new(opts);
    // A hint comes from the heuristics' best (best-of-greedy's orders and the climb):
    // the orders of `best_greedy` are among those, and on 10^6 items they took 4 s.
    let mut best = match upper_bound_hint {
        Some(hint) if is_valid(problem, &hint.offsets, hint.height) => hint,
        _ => best_greedy(problem),
    };
    let lb = exact_lower_bound(problem);
    let mut lo = lb;
    let mut proven = true;
    let mut first = true;
    while lo < best.height {
        // The lower bound is the usual optimum: try it before bisecting.
        let mid = if first {
            lo
        } else {
            lo + (best.height - lo - 1) / 2
        };
        first = false;
        // Each probe gets half the nodes left (all of them once few are left), so a height
        // that cannot be decided does not starve the probes above it.
        let left = budget.limit.saturating_sub(budget.used);
        let total = budget.limit;
        budget.limit = budget
            .used
            .saturating_add(if left > PROBE_MIN { left / 2 } else { left });
        let outcome = fits_inner(problem, mid, &mut budget, best.clone());
        budget.limit = total;
        match outcome {
            Outcome::Fits(p) => best = p,
            Outcome::DoesNotFit => lo = mid + 1,
            Outcome::Unknown(_) => {
                // Not a proof: heights above are still worth a probe.
                proven = false;
                if budget.exhausted() {
                    break;
                }
                lo = mid + 1;
            }
        }
    }
    // Fixed items on the same bytes: no packing is valid, so nothing is proven.
    let proven = proven && is_valid(problem, &best.offsets, best.height);
    let stats = SearchStats {
        nodes: budget.used,
        components: budget.components,
        deepest: budget.deepest,
        timed_out: budget.timed_out,
    };
    (best, proven, stats)
}

/// A lower bound valid with alignment and fixed items: the largest sum of sizes live at one
/// op, and the top of every fixed item.
#[doc(hidden)]
pub fn exact_lower_bound(problem: &Problem) -> u64 {
    let mut events: Vec<(u32, i128)> = Vec::with_capacity(problem.items.len() * 2);
    let mut fixed_top = 0u64;
    for it in &problem.items {
        if let Some(f) = it.fixed {
            fixed_top = fixed_top.max(f.saturating_add(it.size));
        }
        events.push((it.start, i128::from(it.size)));
        if let Some(after) = it.end.checked_add(1) {
            events.push((after, -i128::from(it.size)));
        }
    }
    events.sort_unstable();
    let (mut cur, mut best) = (0i128, 0i128);
    for (_, d) in events {
        cur += d;
        best = best.max(cur);
    }
    u64::try_from(best).unwrap_or(u64::MAX).max(fixed_top)
}

struct Budget {
    limit: u64,
    used: u64,
    deadline: Option<Instant>,
    timed_out: bool,
    components: usize,
    deepest: usize,
    /// Node count at which the current restart stops.
    local: u64,
    /// Work done so far (nodes plus the candidates they scanned), and the amount at which
    /// the clock is read next: on large components one node scans many items, so reading
    /// it by node count alone could overrun the deadline by minutes.
    work: u64,
    next_clock: u64,
    /// Item-sections the section checks have read ([`Budget::scan`]), and the most they
    /// may read: [`SCANS_PER_BUDGETED_NODE`] per node of the budget.
    scans: u64,
    scan_limit: u64,
}

impl Budget {
    fn new(opts: &OptimalOptions) -> Budget {
        Budget {
            limit: opts.node_budget,
            used: 0,
            deadline: opts.time_limit.map(|d| Instant::now() + d),
            timed_out: false,
            components: 0,
            deepest: 0,
            local: u64::MAX,
            work: 0,
            next_clock: CLOCK_WORK,
            scans: 0,
            scan_limit: opts.node_budget.saturating_mul(SCANS_PER_BUDGETED_NODE),
        }
    }

    fn exhausted(&self) -> bool {
        self.timed_out || self.used >= self.limit || self.scans >= self.scan_limit
    }

    /// Counts one node; false when the search must stop.
    fn tick(&mut self) -> bool {
        if self.exhausted() || self.used >= self.local {
            return false;
        }
        self.used += 1;
        self.spend(1);
        true
    }

    /// Counts `scans` item-sections read by the section checks: the search is exhausted
    /// once they pass [`SCANS_PER_BUDGETED_NODE`] per node of its budget.
    fn scan(&mut self, scans: u64) {
        if scans == 0 {
            return;
        }
        self.spend(usize::try_from(scans).unwrap_or(usize::MAX));
        self.scans = self.scans.saturating_add(scans);
    }

    /// Counts `units` of work, reading the clock every [`CLOCK_WORK`] units.
    fn spend(&mut self, units: usize) {
        self.work = self.work.saturating_add(units as u64);
        if self.work >= self.next_clock {
            self.next_clock = self.work.saturating_add(CLOCK_WORK);
            if let Some(d) = self.deadline
                && Instant::now() >= d
            {
                self.timed_out = true;
            }
        }
    }
}

/// Components of at least this many items count every candidate a node scans as a node of
/// the budget ([`OptimalOptions::node_budget`]): their nodes each scan up to the whole
/// component (10^6 items in one time slice made a node cost about 50 ms).
const WORK_COUNTS_FROM: usize = 10_000;

/// Item-sections the section checks may read, in all, per node of the budget
/// ([`OptimalOptions::node_budget`]): past `node_budget` times this the search stops as it
/// does at its node budget. The checks read 10 to 950 per node on MiniMalloc's challenging
/// instances and 1,600 to 471,000 on three real allocation traces: a 5,620-buffer trace
/// read 17 x 10^9 in 36 k nodes (23 s), and 178 copies of it in one problem ran past ten
/// minutes within the node budget.
const SCANS_PER_BUDGETED_NODE: u64 = 32_768;

/// Work units (nodes, candidates scanned) between two readings of the clock.
const CLOCK_WORK: u64 = 4096;

/// splitmix64's finaliser: a well-spread 64-bit hash of `z`.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn round_up(v: u64, align: u64) -> u64 {
    let a = align.max(1);
    v.div_ceil(a).saturating_mul(a)
}

/// The lowest packing among a few greedy orders.
fn best_greedy(problem: &Problem) -> Packing {
    let mut plain = problem.clone();
    plain.capacity = None;
    for it in &mut plain.items {
        it.spillable = false;
    }
    let n = plain.items.len();
    let mut orders = vec![size_order(&plain), greedy_order(&plain)];
    let mut by_area: Vec<usize> = (0..n).collect();
    by_area.sort_by_key(|&i| {
        let it = &plain.items[i];
        let len = u64::from(it.end.saturating_sub(it.start)) + 1;
        (std::cmp::Reverse(it.size.saturating_mul(len)), i)
    });
    orders.push(by_area);
    let mut by_len: Vec<usize> = (0..n).collect();
    by_len.sort_by_key(|&i| {
        let it = &plain.items[i];
        (
            std::cmp::Reverse(it.end.saturating_sub(it.start)),
            std::cmp::Reverse(it.size),
            i,
        )
    });
    orders.push(by_len);
    let mut best: Option<Packing> = None;
    for order in &orders {
        let p = place_in_order(&plain, order);
        if best.as_ref().is_none_or(|b| p.height < b.height) {
            best = Some(p);
        }
    }
    best.unwrap_or(Packing {
        offsets: Vec::new(),
        height: 0,
    })
}

/// True when `offsets` places every item, aligned, fixed items at their offsets, no two
/// time-overlapping items sharing a byte, all below `capacity`.
#[doc(hidden)]
pub fn is_valid(problem: &Problem, offsets: &[Option<u64>], capacity: u64) -> bool {
    let items = &problem.items;
    if offsets.len() != items.len() {
        return false;
    }
    let mut placed: Vec<(u64, u64, usize)> = Vec::with_capacity(items.len());
    for (i, (it, off)) in items.iter().zip(offsets).enumerate() {
        let Some(off) = *off else { return false };
        if off % it.align.max(1) != 0 && it.fixed.is_none() {
            return false;
        }
        if it.fixed.is_some_and(|f| f != off) {
            return false;
        }
        let Some(end) = off.checked_add(it.size) else {
            return false;
        };
        if end > capacity {
            return false;
        }
        if it.size > 0 {
            placed.push((off, end, i));
        }
    }
    !shares_bytes(items, &mut placed)
}

/// True when two items of `spans` (`(offset, end, item)`, nonempty) that overlap in time
/// share a byte: a sweep in start order, each item compared with the items still live when
/// it starts, so the work is the number of pairs that overlap in time (what the packers
/// index anyway). A sweep by offset compared every pair sharing bytes instead, which in a
/// valid packing of 10^6 items is most of them (1.4 * 10^10 on the 10^6-row benchmark).
fn shares_bytes(items: &[super::Item], spans: &mut [(u64, u64, usize)]) -> bool {
    spans.sort_unstable_by_key(|&(off, _, i)| (items[i].start, off, i));
    // The items live at the sweep's step: (last step, offset, end).
    let mut live: Vec<(u32, u64, u64)> = Vec::new();
    for &(off, end, i) in spans.iter() {
        let start = items[i].start;
        let mut clash = false;
        live.retain(|&(last, o, e)| {
            let alive = last >= start;
            clash |= alive && o < end && off < e;
            alive
        });
        if clash {
            return true;
        }
        live.push((items[i].end, off, end));
    }
    false
}

fn fits_inner(problem: &Problem, capacity: u64, budget: &mut Budget, best: Packing) -> Outcome {
    let items = &problem.items;
    let n = items.len();
    // Fixed items: inside the capacity and apart from each other, or no packing exists.
    let fixed: Vec<usize> = (0..n).filter(|&i| items[i].fixed.is_some()).collect();
    if fixed_clash(items, &fixed, capacity) {
        return Outcome::DoesNotFit;
    }
    if best.height <= capacity && is_valid(problem, &best.offsets, capacity) {
        return Outcome::Fits(best);
    }
    let mut offsets: Vec<Option<u64>> = items.iter().map(|it| it.fixed).collect();
    // Free items of size 0 need no bytes: they go at offset 0.
    let free: Vec<usize> = (0..n)
        .filter(|&i| items[i].fixed.is_none())
        .filter(|&i| {
            if items[i].size == 0 {
                offsets[i] = Some(0);
                false
            } else {
                true
            }
        })
        .collect();
    if free.iter().any(|&i| items[i].size > capacity) {
        return Outcome::DoesNotFit;
    }
    for comp in components(problem, &free) {
        budget.components += 1;
        let mut s = Component::new(problem, &comp, &fixed, capacity);
        match solve_deep(&mut s, budget) {
            Res::Found => {
                for (k, &i) in comp.iter().enumerate() {
                    offsets[i] = Some(s.off[k]);
                }
            }
            Res::Fail => return Outcome::DoesNotFit,
            Res::Abort => return Outcome::Unknown(best),
        }
    }
    let height = offsets
        .iter()
        .zip(items)
        .map(|(o, it)| o.unwrap_or(0).saturating_add(it.size))
        .max()
        .unwrap_or(0);
    Outcome::Fits(Packing { offsets, height })
}

/// Components of at least this many items are searched on a thread of their own, with a
/// stack sized to the search's depth: `search` and `branch` recurse once per item placed, so
/// a part of 4000 items overflowed the 2 MiB of a spawned thread in the test build.
const DEEP_FROM: usize = 256;

/// Stack bytes per item of a component searched on its own thread: twice what was enough
/// on a 4000-item part at opt-level 0 (the profile `build.rs` scripts run in; 512 bytes
/// overflowed at opt-level 1, 2048 did not at 0). The stack is reserved, not touched: pages
/// back only the depth the search reaches.
const STACK_PER_ITEM: usize = 4096;

/// [`Component::solve`], on a thread with a stack deep enough for it when the component is
/// large. A panic there is raised again here; a thread that cannot be started gives up the
/// search ([`Res::Abort`]: the budget's answer, not a crash).
fn solve_deep(s: &mut Component, budget: &mut Budget) -> Res {
    let n = s.size.len();
    if n < DEEP_FROM {
        return s.solve(budget);
    }
    let stack = n.saturating_mul(STACK_PER_ITEM).saturating_add(1 << 20);
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("planner-exact".into())
            .stack_size(stack)
            .spawn_scoped(scope, || s.solve(budget));
        match thread {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            Err(_) => Res::Abort,
        }
    })
}

/// True when a fixed item passes `capacity` or two time-overlapping fixed items share a
/// byte.
fn fixed_clash(items: &[super::Item], fixed: &[usize], capacity: u64) -> bool {
    let mut spans: Vec<(u64, u64, usize)> = Vec::with_capacity(fixed.len());
    for &i in fixed {
        let it = &items[i];
        let off = it.fixed.unwrap_or(0);
        let end = off.saturating_add(it.size);
        if end > capacity {
            return true;
        }
        if it.size > 0 {
            spans.push((off, end, i));
        }
    }
    shares_bytes(items, &mut spans)
}

/// Splits the free items into groups no item's lifetime connects.
fn components(problem: &Problem, free: &[usize]) -> Vec<Vec<usize>> {
    let items = &problem.items;
    let mut order = free.to_vec();
    order.sort_by_key(|&i| (items[i].start, i));
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut reach: Option<u32> = None;
    for i in order {
        let it = &items[i];
        match (reach, out.last_mut()) {
            (Some(r), Some(last)) if it.start <= r => {
                last.push(i);
                reach = Some(r.max(it.end));
            }
            _ => {
                out.push(vec![i]);
                reach = Some(it.end);
            }
        }
    }
    for c in &mut out {
        c.sort_unstable();
    }
    out
}

/// Failed states: (state hash mixed with the side's entry state, first section, end
/// section) to (floor, floor rank).
type Memo = HashMap<(u64, u64, u32, u32), (u64, u32)>;

enum Res {
    Found,
    Fail,
    Abort,
}

const NONE: u32 = u32::MAX;
/// Sort key of an item in a branching order: larger goes first.
type RankKey = (u64, u64, u64);
/// Branching orders tried in turn (see `Component::rank_key`).
const ORDERS: u32 = 5;
/// Failed states remembered per branching order (then forgotten all at once; each table
/// takes about 20 MB when full).
const MEMO_ENTRIES: usize = 1 << 19;
/// Below this many nodes left, a probe of [`minimize`] gets them all rather than half.
const PROBE_MIN: u64 = 4_000;
/// Nodes of the first run of each order; doubled every round.
const RESTART_NODES: u64 = 2_000;
