//! The busy bytes over time, for full greedy passes: where a new item may go, found without
//! visiting the placed items that overlap it in time one by one.
//!
//! A segment tree over the distinct item starts (two items overlap in time exactly when the
//! later start lies in both lifetimes) holds, per node, two merged lists of byte ranges:
//! `cover`, the union of the items whose lifetime covers the node's whole span and not its
//! parent's (the node is one of the item's canonical nodes), and `sub`, the union of the items
//! canonical at the node or below it. The items overlapping a lifetime are then those
//! canonical at or below one of its canonical nodes, or at one of their ancestors: a query
//! reads `O(log n)` lists, and an insertion writes `O(log n)` of them. Lists are unions, so
//! neighbouring items merge and a dense packing keeps them short.
//!
//! The offsets are exactly those of [`super::gaps::choose_gap`] over the placed items that
//! overlap in time: the lowest aligned free offset, or the smallest free range (lowest on
//! ties) for best fit. The tree cannot remove an item, so it serves passes that place items
//! from scratch; the hill climb's partial re-packs use the overlap index.

use std::vec::Vec;

use super::Item;
use super::gaps::{GapRule, SortScratch, choose_gap, sort_starts};
use crate::plan::align_up;

/// Merged byte ranges, sorted, neither overlapping nor touching: one kept in place, more
/// in a vector. Most lists of a tree over a real trace hold a single range, and a vector
/// of its own took a 64-byte allocation for it (on 10^6 items, some 350 MB of lists).
#[derive(Debug, Clone)]
enum Ranges {
    Empty,
    One((u64, u64)),
    Many(Vec<(u64, u64)>),
}

impl Ranges {
    fn as_slice(&self) -> &[(u64, u64)] {
        match self {
            Ranges::Empty => &[],
            Ranges::One(r) => std::slice::from_ref(r),
            Ranges::Many(v) => v,
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// Removes every range (a vector keeps its capacity for the next pass).
    fn clear(&mut self) {
        match self {
            Ranges::Many(v) => v.clear(),
            _ => *self = Ranges::Empty,
        }
    }

    /// Adds `[lo, hi)`, merging it with the ranges it overlaps or touches.
    fn add(&mut self, lo: u64, hi: u64) {
        match self {
            Ranges::Empty => *self = Ranges::One((lo, hi)),
            Ranges::One(r) => {
                *self = if r.1 < lo {
                    Ranges::Many(vec![*r, (lo, hi)])
                } else if hi < r.0 {
                    Ranges::Many(vec![(lo, hi), *r])
                } else {
                    Ranges::One((lo.min(r.0), hi.max(r.1)))
                }
            }
            Ranges::Many(v) => add(v, lo, hi),
        }
    }
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct BusyTree {
    /// Distinct starts, sorted: leaf `k` is the time `points[k]`.
    points: Vec<u32>,
    leaves: usize,
    cover: Vec<Ranges>,
    sub: Vec<Ranges>,
    /// Nodes whose lists are not empty, to clear them quickly.
    dirty: Vec<usize>,
    /// Lists a query reads (node, whether `sub`), reused.
    lists: Vec<(usize, bool)>,
    /// Scratch of the lowest fit: per list read, the first range not yet passed.
    cursors: Vec<usize>,
    /// Scratch: canonical nodes and ancestors of the current lifetime.
    nodes: Vec<usize>,
    ancestors: Vec<usize>,
    /// Scratch of best fit: the ranges of the lists a query reads.
    gathered: Vec<(u64, u64)>,
    sort: SortScratch,
    /// Ranges moved or read by insertions since the last [`BusyTree::clear`]: how well the
    /// ranges merge ([`super::greedy::Placer::relist_if_unmerged`]).
    pub(crate) touched: u64,
}

impl BusyTree {
    /// An empty tree for the lifetimes of `items`.
    pub(crate) fn new(items: &[Item]) -> BusyTree {
        let mut points: Vec<u32> = items.iter().map(|it| it.start).collect();
        points.sort_unstable();
        points.dedup();
        let leaves = points.len().next_power_of_two().max(1);
        BusyTree {
            points,
            leaves,
            cover: vec![Ranges::Empty; 2 * leaves],
            sub: vec![Ranges::Empty; 2 * leaves],
            dirty: Vec::new(),
            lists: Vec::new(),
            cursors: Vec::new(),
            nodes: Vec::new(),
            ancestors: Vec::new(),
            gathered: Vec::new(),
            sort: SortScratch::default(),
            touched: 0,
        }
    }

    /// Removes every range.
    pub(crate) fn clear(&mut self) {
        for &node in &self.dirty {
            self.cover[node].clear();
            self.sub[node].clear();
        }
        self.dirty.clear();
        self.touched = 0;
    }

    /// The leaves `[lo, hi)` an item live over `start..=end` covers (empty when it starts at
    /// no point, which only an item absent from the tree's problem does).
    fn leaf_span(&self, start: u32, end: u32) -> (usize, usize) {
        let lo = self.points.partition_point(|&p| p < start);
        let hi = self.points.partition_point(|&p| p <= end);
        (lo, hi.max(lo))
    }

    /// Canonical nodes of leaves `[lo, hi)`, bottom-up.
    fn canonical(&self, lo: usize, hi: usize, mut f: impl FnMut(usize)) {
        let (mut l, mut r) = (lo + self.leaves, hi + self.leaves);
        while l < r {
            if l & 1 == 1 {
                f(l);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                f(r);
            }
            l >>= 1;
            r >>= 1;
        }
    }

    /// Fills `self.nodes` with the canonical nodes of `start..=end` and `self.ancestors`
    /// with their proper ancestors (sorted, once each).
    fn cover_nodes(&mut self, start: u32, end: u32) {
        let (a, b) = self.leaf_span(start, end);
        let mut nodes = std::mem::take(&mut self.nodes);
        nodes.clear();
        self.canonical(a, b, |n| nodes.push(n));
        self.nodes = nodes;
        let mut ancestors = std::mem::take(&mut self.ancestors);
        ancestors.clear();
        self.ancestors_of(a, b, |n| ancestors.push(n));
        self.ancestors = ancestors;
    }

    /// The proper ancestors of the canonical nodes of leaves `[a, b)`, in increasing order,
    /// once each: the nodes above leaf `a` or leaf `b - 1` whose span leaves `[a, b)` (a
    /// node that spans part of the range and more holds one of its two ends). Walked level
    /// by level from the leaves, where collecting every canonical node's path to the root
    /// and sorting it took a fifth of a pass on 10^6 items.
    fn ancestors_of(&self, a: usize, b: usize, mut f: impl FnMut(usize)) {
        if a >= b {
            return;
        }
        let depth = self.leaves.trailing_zeros();
        // Bottom-up, each level's right node before its left; reversed at the end.
        let mut up: [usize; 128] = [0; 128];
        let mut count = 0;
        let (mut l, mut r) = (a + self.leaves, b - 1 + self.leaves);
        for level in 0..=depth {
            let inside = |n: usize| {
                let lo = (n << level) - self.leaves;
                let hi = ((n + 1) << level) - self.leaves;
                a <= lo && hi <= b
            };
            if r != l && !inside(r) {
                up[count] = r;
                count += 1;
            }
            if !inside(l) {
                up[count] = l;
                count += 1;
            }
            l >>= 1;
            r >>= 1;
        }
        for &n in up[..count].iter().rev() {
            f(n);
        }
    }

    /// Marks bytes `[lo, hi)` busy over `start..=end`.
    pub(crate) fn insert(&mut self, start: u32, end: u32, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        self.cover_nodes(start, end);
        for &n in &self.nodes {
            self.touched = self
                .touched
                .saturating_add((self.cover[n].len() + self.sub[n].len()) as u64);
            // Listed once, when its lists are still empty (`sub` holds every range `cover`
            // does): listing it at every insertion took 268 MB on 10^6 items.
            if self.sub[n].is_empty() {
                self.dirty.push(n);
            }
            self.cover[n].add(lo, hi);
            self.sub[n].add(lo, hi);
        }
        for &n in &self.ancestors {
            self.touched = self.touched.saturating_add(self.sub[n].len() as u64);
            if self.sub[n].is_empty() {
                self.dirty.push(n);
            }
            self.sub[n].add(lo, hi);
        }
    }

    /// Collects the lists the busy bytes over `start..=end` are the union of.
    fn gather(&mut self, start: u32, end: u32) {
        self.cover_nodes(start, end);
        let mut lists = std::mem::take(&mut self.lists);
        lists.clear();
        lists.extend(
            self.nodes
                .iter()
                .filter(|&&n| !self.sub[n].is_empty())
                .map(|&n| (n, true)),
        );
        lists.extend(
            self.ancestors
                .iter()
                .filter(|&&n| !self.cover[n].is_empty())
                .map(|&n| (n, false)),
        );
        self.lists = lists;
    }

    fn list(&self, (node, sub): (usize, bool)) -> &[(u64, u64)] {
        if sub {
            self.sub[node].as_slice()
        } else {
            self.cover[node].as_slice()
        }
    }

    /// The offset `rule` picks for `size` bytes aligned to `align` over `start..=end`, and
    /// the number of list reads it took.
    pub(crate) fn fit(
        &mut self,
        start: u32,
        end: u32,
        size: u64,
        align: u64,
        rule: GapRule,
    ) -> (u64, u64) {
        if size == 0 {
            return (0, 1);
        }
        self.gather(start, end);
        let n = self.lists.len();
        if n == 0 {
            return (0, 1);
        }
        match rule {
            GapRule::Lowest => self.lowest(size, align),
            GapRule::BestFit => self.best_fit(size, align),
        }
    }

    /// The lowest fit: `y` rises past every range that blocks it, list by list, until a
    /// round of every list finds none. As `y` only rises, each list is read from where its
    /// last read stopped, galloping forward: on random lifetimes, whose ranges do not merge,
    /// a fit read some 60 ranges per list, and a binary search over the whole list for each
    /// read missed the cache at most of its steps.
    fn lowest(&mut self, size: u64, align: u64) -> (u64, u64) {
        let n = self.lists.len();
        let mut at = std::mem::take(&mut self.cursors);
        at.clear();
        at.resize(n, 0);
        let mut y = 0u64;
        let (mut k, mut clean, mut reads) = (0usize, 0usize, 0u64);
        while clean < n {
            reads += 1;
            let list = self.list(self.lists[k]);
            at[k] = first_ending_after(list, at[k], y);
            match list.get(at[k]) {
                // Blocked: move above the range and read the same list again.
                Some(&(lo, hi)) if lo < y.saturating_add(size) => {
                    y = align_up(hi, align).unwrap_or(u64::MAX);
                    clean = 0;
                }
                _ => {
                    clean += 1;
                    k = (k + 1) % n;
                }
            }
        }
        self.cursors = at;
        (y, reads)
    }

    /// Best fit: the ranges of every list gathered, sorted by start, and the gaps between
    /// them measured by [`choose_gap`] (which merges overlapping ranges). Walking the union
    /// list by list instead (the next range start of every list after each gap) read every
    /// list once per gap: on a 28 526-buffer trace with some 3000 neighbours per buffer a
    /// best-fit pass took several times as long as the same pass over the overlap lists.
    fn best_fit(&mut self, size: u64, align: u64) -> (u64, u64) {
        let mut busy = std::mem::take(&mut self.gathered);
        busy.clear();
        for k in 0..self.lists.len() {
            busy.extend_from_slice(self.list(self.lists[k]));
        }
        sort_starts(&mut busy, &mut self.sort);
        let reads = busy.len() as u64 + self.lists.len() as u64;
        let off = choose_gap(&busy, size, align, GapRule::BestFit);
        self.gathered = busy;
        (off, reads)
    }
}

/// The index of the first range of `list` at or after `from` that ends after `y` (the
/// list's length when none does), given that none before `from` does: a gallop from
/// `from`, then a binary search within the last step.
fn first_ending_after(list: &[(u64, u64)], from: usize, y: u64) -> usize {
    let passed = |k: usize| list[k].1 <= y;
    if from >= list.len() || !passed(from) {
        return from;
    }
    // `list[lo]` ends at or before `y`.
    let (mut lo, mut step) = (from, 1usize);
    loop {
        let hi = lo.saturating_add(step).min(list.len());
        if hi == list.len() || !passed(hi) {
            return lo + 1 + list[lo + 1..hi].partition_point(|&(_, h)| h <= y);
        }
        lo = hi;
        step = step.saturating_mul(2);
    }
}

/// Adds `[lo, hi)` to a merged list.
fn add(list: &mut Vec<(u64, u64)>, lo: u64, hi: u64) {
    // Ranges that overlap or touch `[lo, hi)`: those from the first ending at or after `lo`
    // to the last starting at or before `hi`, found by a scan (few lie inside one item's
    // bytes).
    let a = list.partition_point(|&(_, h)| h < lo);
    let b = a + list[a..].iter().take_while(|&&(l, _)| l <= hi).count();
    if a == b {
        list.insert(a, (lo, hi));
        return;
    }
    let merged = (lo.min(list[a].0), hi.max(list[b - 1].1));
    list[a] = merged;
    list.drain(a + 1..b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::tests::{random_item, random_rounds};

    #[test]
    fn merges_ranges() {
        let mut l = Vec::new();
        add(&mut l, 10, 20);
        add(&mut l, 30, 40);
        add(&mut l, 0, 5);
        assert_eq!(l, [(0, 5), (10, 20), (30, 40)]);
        add(&mut l, 20, 30);
        assert_eq!(l, [(0, 5), (10, 40)]);
        add(&mut l, 3, 50);
        assert_eq!(l, [(0, 50)]);
    }

    /// A list of one range kept in place merges as a vector does.
    #[test]
    fn one_range_in_place_merges_as_a_vector() {
        let adds = [(10, 20), (20, 25), (5, 8), (30, 40), (0, 100), (200, 300), (150, 160)];
        for start in 0..adds.len() {
            let (mut r, mut v) = (Ranges::Empty, Vec::new());
            for &(lo, hi) in &adds[start..] {
                r.add(lo, hi);
                add(&mut v, lo, hi);
                assert_eq!(r.as_slice(), v.as_slice(), "from {start}");
            }
            r.clear();
            assert!(r.is_empty());
        }
        assert!(std::mem::size_of::<Ranges>() <= 32);
    }

    /// The gallop finds what a scan from the start finds, from every valid starting index.
    #[test]
    fn gallops_to_the_first_range_ending_after() {
        let list: Vec<(u64, u64)> = (0..37u64).map(|k| (10 * k, 10 * k + 5)).collect();
        for y in 0..400 {
            let want = list.iter().position(|&(_, h)| h > y).unwrap_or(list.len());
            for from in 0..=want {
                assert_eq!(first_ending_after(&list, from, y), want, "y {y}, from {from}");
            }
        }
        assert_eq!(first_ending_after(&[], 0, 7), 0);
    }

    /// The ancestors walked level by level are the canonical nodes' ancestors, sorted, once
    /// each.
    #[test]
    fn ancestors_are_those_of_the_canonical_nodes() {
        let starts: Vec<Item> = (0..37).map(|t| Item::new(1, t, t)).collect();
        let tree = BusyTree::new(&starts);
        for a in 0..tree.points.len() {
            for b in a..=tree.points.len() {
                let mut want = Vec::new();
                tree.canonical(a, b, |n| {
                    let mut up = n >> 1;
                    while up >= 1 {
                        want.push(up);
                        up >>= 1;
                    }
                });
                want.sort_unstable();
                want.dedup();
                let mut got = Vec::new();
                tree.ancestors_of(a, b, |n| got.push(n));
                assert_eq!(got, want, "leaves {a}..{b}");
            }
        }
    }

    /// Random lifetimes and placements: the tree's offsets equal `choose_gap` over the placed
    /// items that overlap in time, for both rules.
    #[test]
    fn agrees_with_choose_gap() {
        let draw = |round: usize, _, next: &mut dyn FnMut(u64) -> u64| {
            let lens = if round.is_multiple_of(2) { 8 } else { 50 };
            random_item(next, (60, 40, lens), [1, 4, 16])
        };
        random_rounds(99, (20, 150), draw, |round, items| {
            let mut tree = BusyTree::new(&items);
            for rule in [GapRule::Lowest, GapRule::BestFit] {
                tree.clear();
                let mut placed: Vec<(usize, u64)> = Vec::new();
                for (i, it) in items.iter().enumerate() {
                    let mut busy: Vec<(u64, u64)> = placed
                        .iter()
                        .filter(|&&(j, _)| items[j].overlaps_in_time(it) && items[j].size > 0)
                        .map(|&(j, o)| (o, o + items[j].size))
                        .collect();
                    busy.sort_unstable();
                    let want = choose_gap(&busy, it.size, it.align, rule);
                    let (got, _) = tree.fit(it.start, it.end, it.size, it.align, rule);
                    assert_eq!(got, want, "round {round}, item {i}, {rule:?}");
                    tree.insert(it.start, it.end, got, got + it.size);
                    placed.push((i, got));
                }
            }
        });
    }
}
