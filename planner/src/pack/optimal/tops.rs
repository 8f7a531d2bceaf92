//! The segment tree over the unplaced items' lowest tops that each node of the search
//! reads ([`Tops`]).

use super::*;

/// One node of [`Tops`]: over the unplaced items of a run of `by_start` positions, the lowest
/// top (`low + size`) and its position (the first on ties), the second lowest top (equal to
/// the lowest on ties), the lowest `low` and the last section end (`sb`). Empty runs hold
/// `u64::MAX`, [`NONE`] and an end of 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TopNode {
    pub(super) t1: u64,
    pub(super) p1: u32,
    pub(super) t2: u64,
    pub(super) low: u64,
    pub(super) end: u32,
}

const EMPTY: TopNode = TopNode {
    t1: u64::MAX,
    p1: NONE,
    t2: u64::MAX,
    low: u64::MAX,
    end: 0,
};

impl TopNode {
    /// `self` then `next` (the positions after it).
    fn then(self, next: TopNode) -> TopNode {
        let (low, end) = (self.low.min(next.low), self.end.max(next.end));
        if self.t1 <= next.t1 {
            TopNode {
                t1: self.t1,
                p1: self.p1,
                t2: self.t2.min(next.t1),
                low,
                end,
            }
        } else {
            TopNode {
                t1: next.t1,
                p1: next.p1,
                t2: self.t1.min(next.t2),
                low,
                end,
            }
        }
    }
}

/// Components of at least this many items keep a [`Tops`]. On fewer, sweeping the unplaced
/// items is cheaper than keeping the tree: MiniMalloc's challenging set (215 to 454 items)
/// searched two to four times slower with it, real-trace-like parts of 5000 items about
/// twice as fast.
pub(super) const TOPS_FROM: usize = 1024;

/// A segment tree over `by_start` positions of the unplaced items' lowest offsets, so each
/// node of the search finds the two lowest tops of a range, and the items below the lowest,
/// in time logarithmic in the items (times the candidates), not linear: on a part of 5000
/// items a sweep read about 3000 unplaced items twice per node.
#[derive(Debug, Clone)]
pub(super) struct Tops {
    /// Leaves start here (a power of two); node `i`'s children are `2i` and `2i + 1`.
    base: usize,
    node: Vec<TopNode>,
}

impl Tops {
    pub(super) fn new(n: usize) -> Tops {
        let base = n.next_power_of_two().max(1);
        Tops {
            base,
            node: vec![EMPTY; 2 * base],
        }
    }

    /// Fills leaf `p` without updating the nodes above (see [`Tops::build`]).
    pub(super) fn leaf(&mut self, p: usize, (low, size): (u64, u64), end: u32) {
        let t1 = low.saturating_add(size);
        self.node[self.base + p] = TopNode {
            t1,
            // As a sweep finds it: a top of `u64::MAX` is never the lowest.
            p1: if t1 == u64::MAX { NONE } else { p as u32 },
            t2: u64::MAX,
            low,
            end,
        };
    }

    /// Computes every inner node from the leaves.
    pub(super) fn build(&mut self) {
        for i in (1..self.base).rev() {
            self.node[i] = self.node[2 * i].then(self.node[2 * i + 1]);
        }
    }

    pub(super) fn set(&mut self, p: usize, item: (u64, u64), end: u32) {
        self.leaf(p, item, end);
        self.lift(self.base + p);
    }

    pub(super) fn clear(&mut self, p: usize) {
        self.node[self.base + p] = EMPTY;
        self.lift(self.base + p);
    }

    fn lift(&mut self, mut i: usize) {
        while i > 1 {
            i /= 2;
            self.node[i] = self.node[2 * i].then(self.node[2 * i + 1]);
        }
    }

    /// The two lowest tops, the lowest offset and the last end over positions `r`.
    pub(super) fn lowest(&self, r: std::ops::Range<usize>) -> TopNode {
        let (mut l, mut h) = (r.start + self.base, r.end + self.base);
        let (mut left, mut right) = (EMPTY, EMPTY);
        while l < h {
            if l & 1 == 1 {
                left = left.then(self.node[l]);
                l += 1;
            }
            if h & 1 == 1 {
                h -= 1;
                right = self.node[h].then(right);
            }
            l /= 2;
            h /= 2;
        }
        left.then(right)
    }

    /// Appends to `out`, in order, the positions in `r` of the unplaced items whose lowest
    /// offset is below `limit`, and position `also` if it is in `r` (and unplaced).
    pub(super) fn below(&self, r: std::ops::Range<usize>, limit: u64, also: u32, out: &mut Vec<u32>) {
        if r.start < r.end {
            self.collect(1, 0..self.base, &r, (limit, also as usize), out);
        }
    }

    fn collect(
        &self,
        i: usize,
        span: std::ops::Range<usize>,
        r: &std::ops::Range<usize>,
        (limit, also): (u64, usize),
        out: &mut Vec<u32>,
    ) {
        if span.end <= r.start || r.end <= span.start {
            return;
        }
        let n = self.node[i];
        if n.low == u64::MAX || (n.low >= limit && !span.contains(&also)) {
            return;
        }
        if i >= self.base {
            out.push(span.start as u32);
            return;
        }
        let mid = span.start + (span.end - span.start) / 2;
        self.collect(2 * i, span.start..mid, r, (limit, also), out);
        self.collect(2 * i + 1, mid..span.end, r, (limit, also), out);
    }
}
