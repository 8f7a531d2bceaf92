//! Local search over placement orders.
//!
//! The state is an order of the items the reference (`greedy_by_size`) placed, with a gap
//! rule; its packing is the greedy placement of that order. A move changes the order from
//! some position on; the items before that position keep their offsets, so only the rest is
//! re-packed, and the re-pack is abandoned as soon as it passes the current height. A move
//! is kept when the height does not rise (equal heights let the search cross plateaus), and
//! the search stops at the lower bound.
//!
//! Moves aim at the peak: the item reaching the height (moved earlier, so it gets a lower
//! gap) and the items below it that were placed before it and so pushed it up (moved after
//! it, or swapped with it). When that stalls, the candidates widen to every item overlapping
//! the peak in time, then to every item. Randomness comes from a seeded SplitMix64 generator
//! and budgets count re-packs and placements, never seconds: same input, same result.

use std::vec::Vec;

use super::Packing;
use super::best_of::Seed;
use super::gaps::GapRule;
use super::greedy::Placer;

/// Limits of one climb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Re-packs to try.
    pub(crate) iterations: u32,
    /// Stop after this many re-packs in a row that do not lower the height.
    pub(crate) max_stall: Option<u32>,
    /// Stop once the climb's work (items placed plus neighbours examined) reaches this.
    pub(crate) work: Option<u64>,
    /// Seed of the move generator.
    pub(crate) seed: u64,
    /// Stop at this time (only under a user's time limit: it makes the result depend on
    /// the machine).
    pub(crate) deadline: Option<std::time::Instant>,
}

/// What a climb did, for reports and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ClimbStats {
    /// Re-packs tried.
    pub(crate) iterations: u32,
    /// Re-packs that lowered the height.
    pub(crate) improvements: u32,
    /// The climb stopped at its deadline.
    pub(crate) timed_out: bool,
}

/// SplitMix64: tiny, fast and the same on every machine.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        // The modulo bias is below 2^-40 for any order length we see, and deterministic.
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// [`Rng::below`] over `u64`, for tests.
    #[cfg(test)]
    pub(crate) fn below_u64(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// A change to the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    /// Take the item at `from` out and insert it at `to`.
    Shift { from: usize, to: usize },
    /// Exchange the items at the two positions.
    Swap(usize, usize),
}

impl Move {
    /// First position whose item changes.
    fn first(self) -> usize {
        match self {
            Move::Shift { from, to } => from.min(to),
            Move::Swap(a, b) => a.min(b),
        }
    }

    fn apply(self, order: &mut [usize]) {
        match self {
            Move::Shift { from, to } if from < to => order[from..=to].rotate_left(1),
            Move::Shift { from, to } => order[to..=from].rotate_right(1),
            Move::Swap(a, b) => order.swap(a, b),
        }
    }
}

/// The search state.
struct Climb<'a, 'p> {
    placer: &'a mut Placer<'p>,
    rule: GapRule,
    order: Vec<usize>,
    /// Position of each item in `order` (`usize::MAX`: fixed or spilled).
    pos: Vec<usize>,
    offsets: Vec<Option<u64>>,
    /// `prefix[q]`: height of the fixed items and `order[..q]`.
    prefix: Vec<u64>,
    trial_order: Vec<usize>,
    trial_offsets: Vec<Option<u64>>,
}

impl Climb<'_, '_> {
    fn height(&self) -> u64 {
        self.prefix[self.order.len()]
    }

    fn refresh_from(&mut self, from: usize) {
        let items = &self.placer.problem.items;
        for q in from..self.order.len() {
            let i = self.order[q];
            self.pos[i] = q;
            let end = self.offsets[i].map_or(0, |o| o.saturating_add(items[i].size));
            self.prefix[q + 1] = self.prefix[q].max(end);
        }
    }

    /// Tries `mv`; keeps it when the height does not rise above `limit`. Returns the new
    /// height if kept.
    fn try_move(&mut self, mv: Move, limit: u64) -> Option<u64> {
        let from = mv.first();
        let n = self.order.len();
        mv.apply(&mut self.trial_order);
        for &i in &self.trial_order[from..] {
            self.trial_offsets[i] = None;
        }
        let kept = self.placer.place_from(
            &self.trial_order,
            from,
            &mut self.trial_offsets,
            self.prefix[from],
            self.rule,
            limit,
        );
        if kept.is_some() {
            self.order[from..].copy_from_slice(&self.trial_order[from..]);
            for q in from..n {
                let i = self.order[q];
                self.offsets[i] = self.trial_offsets[i];
            }
            self.refresh_from(from);
        } else {
            self.trial_order[from..].copy_from_slice(&self.order[from..]);
            for q in from..n {
                let i = self.order[q];
                self.trial_offsets[i] = self.offsets[i];
            }
        }
        kept
    }

    /// One of the items that reach the height, picked at random; `None` when only fixed
    /// items do.
    fn peak(&self, rng: &mut Rng) -> Option<usize> {
        let h = self.height();
        let items = &self.placer.problem.items;
        let first = self.prefix.iter().position(|&p| p == h)?.checked_sub(1)?;
        let at_top: Vec<usize> = self.order[first..]
            .iter()
            .copied()
            .filter(|&i| self.offsets[i].is_some_and(|o| o.saturating_add(items[i].size) == h))
            .collect();
        Some(at_top[rng.below(at_top.len())])
    }

    /// Picks a move; `level` 0 aims at the peak and its blockers, 1 at anything overlapping
    /// the peak in time, 2 at any item.
    fn pick(&self, rng: &mut Rng, level: usize, peak: usize, scratch: &mut Vec<usize>) -> Move {
        let n = self.order.len();
        let items = &self.placer.problem.items;
        let qp = self.pos[peak];
        let random = |rng: &mut Rng| {
            let from = rng.below(n);
            let to = rng.below(n);
            if rng.below(2) == 0 {
                Move::Shift { from, to }
            } else {
                Move::Swap(from, to)
            }
        };
        match rng.below(level + 1) {
            0 => {
                // Blockers: placed before the peak, below it, overlapping it in time.
                scratch.clear();
                let top = self.offsets[peak].unwrap_or(0);
                self.placer.overlaps.for_each(items, peak, |j| {
                    if self.pos[j] < qp
                        && items[j].size > 0
                        && self.offsets[j].is_some_and(|o| o < top)
                    {
                        scratch.push(j);
                    }
                });
                scratch.sort_unstable();
                if scratch.is_empty() || rng.below(2) == 0 {
                    if qp == 0 {
                        return random(rng);
                    }
                    return Move::Shift {
                        from: qp,
                        to: rng.below(qp),
                    };
                }
                let b = scratch[rng.below(scratch.len())];
                let qb = self.pos[b];
                if rng.below(2) == 0 {
                    Move::Swap(qb, qp)
                } else {
                    Move::Shift {
                        from: qb,
                        to: qp + rng.below(n - qp),
                    }
                }
            }
            1 => {
                scratch.clear();
                self.placer.overlaps.for_each(items, peak, |j| {
                    if self.pos[j] != usize::MAX {
                        scratch.push(j);
                    }
                });
                scratch.sort_unstable();
                if scratch.is_empty() {
                    return random(rng);
                }
                let j = scratch[rng.below(scratch.len())];
                Move::Shift {
                    from: self.pos[j],
                    to: rng.below(n),
                }
            }
            _ => random(rng),
        }
    }
}

/// Climbs from `seed` within `budget`; returns the best packing (never higher than the seed's)
/// and what the climb did.
pub(crate) fn climb(placer: &mut Placer<'_>, seed: Seed, budget: Budget) -> (Packing, ClimbStats) {
    let mut stats = ClimbStats::default();
    let n = seed.order.len();
    if n < 2 || seed.packing.height <= seed.lower_bound || budget.iterations == 0 {
        return (seed.packing, stats);
    }
    let items_len = placer.problem.items.len();
    let (_, base_height) = super::best_of::fixed_only(placer);
    let mut c = Climb {
        rule: seed.rule,
        pos: vec![usize::MAX; items_len],
        offsets: seed.packing.offsets.clone(),
        prefix: vec![base_height; n + 1],
        trial_order: seed.order.clone(),
        trial_offsets: seed.packing.offsets,
        order: seed.order,
        placer,
    };
    c.refresh_from(0);
    let mut rng = Rng::new(budget.seed);
    let start_work = c.placer.work;
    // A re-pack that would pass the work budget stops there and is not kept.
    let cap = budget
        .work
        .map_or(u64::MAX, |w| start_work.saturating_add(w));
    c.placer.work_cap = cap;
    let mut best = (c.height(), c.offsets.clone());
    // Re-packs since the best last improved (for `max_stall`), and since the current state
    // last did (for widening).
    let mut stall = 0u32;
    let mut local_stall = 0u32;
    let mut scratch = Vec::new();
    while stats.iterations < budget.iterations
        && best.0 > seed.lower_bound
        && budget.max_stall.is_none_or(|m| stall < m)
        && budget.work.is_none_or(|w| c.placer.work - start_work < w)
    {
        if super::deadline::passed(budget.deadline) {
            stats.timed_out = true;
            break;
        }
        stats.iterations += 1;
        let Some(peak) = c.peak(&mut rng) else {
            break;
        };
        let level = ((local_stall / WIDEN_AFTER) as usize).min(2);
        let mv = c.pick(&mut rng, level, peak, &mut scratch);
        let before = c.height();
        match c.try_move(mv, before) {
            Some(h) if h < before => local_stall = 0,
            _ => local_stall += 1,
        }
        if c.height() < best.0 {
            best = (c.height(), c.offsets.clone());
            stats.improvements += 1;
            stall = 0;
        } else {
            stall += 1;
        }
    }
    c.placer.work_cap = u64::MAX;
    (
        Packing {
            offsets: best.1,
            height: best.0,
        },
        stats,
    )
}

/// Re-packs without progress before the candidate moves widen by one level.
const WIDEN_AFTER: u32 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_permute() {
        let mut v = vec![0, 1, 2, 3, 4];
        Move::Shift { from: 1, to: 3 }.apply(&mut v);
        assert_eq!(v, [0, 2, 3, 1, 4]);
        Move::Shift { from: 3, to: 0 }.apply(&mut v);
        assert_eq!(v, [1, 0, 2, 3, 4]);
        Move::Swap(4, 0).apply(&mut v);
        assert_eq!(v, [4, 0, 2, 3, 1]);
        assert_eq!(Move::Shift { from: 3, to: 1 }.first(), 1);
    }

    #[test]
    fn rng_is_fixed() {
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut r = Rng::new(7);
        assert!((0..100).all(|_| r.below(3) < 3));
    }
}
