//! The placement engine every heuristic shares: items go in one at a time, each at an aligned
//! gap among the already placed items that overlap it in time.
//!
//! Finding those items is what costs time on large problems, so the engine indexes the
//! problem's lifetimes once: an adjacency list of time-overlapping items when the number of
//! overlapping pairs is moderate (the usual case: most activations live a few ops), and
//! otherwise a static interval tree (items sorted by start, with the largest end of every
//! subtree), whose memory stays linear even when every item overlaps every other. Placing one
//! item then costs its number of neighbours in time (times a log), never a scan of all items.
//! Where the tree indexes the lifetimes, passes from scratch place by the busy tree
//! ([`BusyTree`]), which reads merged byte ranges instead of neighbours; a dense problem whose
//! ranges turn out not to merge gets the lists back after its first pass
//! ([`Placer::relist_if_unmerged`]).

use std::sync::Arc;
use std::vec::Vec;

use super::busy::BusyTree;
use super::gaps::{GapRule, SortScratch, choose_gap, sort_starts};
use super::{Item, Packing, Problem};

/// Overlapping pairs above which the adjacency list gives way to the interval tree
/// (4 bytes per pair: 640 MiB). Both give the same offsets; the lists are the faster: on
/// 10^6 CSV rows with 100 live at a step (some 10^8 pairs) the command took 14.3 s of CPU
/// with the tree (595 MiB) and 6.7 s with the lists (701 MiB).
const MAX_LISTED_PAIRS: usize = 160 << 20;

/// Overlapping pairs per item from which the overlaps are indexed by the interval tree, not
/// listed, and so passes from scratch use the busy tree ([`BusyTree`]). A listed placement
/// reads and sorts every placed neighbour; the busy tree reads merged ranges, and on dense
/// problems a neighbourhood's ranges merge into few; the lists themselves take 4 bytes a
/// pair to build and hold. Measured on the allocation traces (same offsets, same plan):
/// `S_1.csv` (1515 pairs per item) 0.06-0.28 s per pass with the tree against 0.11-1.34 s
/// with the lists, and 0.3 s building its 43 million pairs; `pangu_2.6B.csv` (652) and
/// `bert_base.csv` (526) about half the time per pass. On the real-trace-like stand-ins
/// (below 100 pairs per item) the lists were as fast or faster.
const TREE_FROM_PAIRS_PER_ITEM: usize = 256;

/// Which items overlap which in time.
#[derive(Debug, Clone)]
pub(crate) enum Overlaps {
    /// Every item's overlapping items listed.
    Lists(Lists),
    /// An interval tree over the lifetimes, for dense problems.
    Tree(StartTree),
}

/// Items numbered by rank in start order, so that items near in time are near in memory:
/// `of[r]` is the item of rank `r` and `rank[i]` the rank of item `i`. The later items
/// overlapping rank `r` are the ranks `r + 1..=r + later[r]` (they start within its
/// lifetime); the earlier ones are listed, `adj[first[r]..first[r + 1]]`.
#[derive(Debug, Clone)]
pub(crate) struct Lists {
    first: Vec<usize>,
    adj: Vec<u32>,
    later: Vec<u32>,
    of: Vec<u32>,
    rank: Vec<u32>,
}

/// Items sorted by start; `max_end[node]` is the largest end in a subtree of the implicit
/// segment tree over that order (`leaves` a power of two).
#[derive(Debug, Clone)]
pub(crate) struct StartTree {
    by_start: Vec<usize>,
    starts: Vec<u32>,
    ends: Vec<u32>,
    max_end: Vec<u32>,
    leaves: usize,
    /// Every end, sorted (for [`Overlaps::degree`]).
    sorted_ends: Vec<u32>,
    /// The overlapping pairs, when the lists could hold them (the tree was chosen for
    /// being dense): see [`Placer::relist_if_unmerged`].
    listable_pairs: Option<usize>,
}

impl Overlaps {
    /// Indexes the lifetimes of `items`: listed unless there are more pairs than
    /// [`MAX_LISTED_PAIRS`] or at least [`TREE_FROM_PAIRS_PER_ITEM`] per item.
    pub(crate) fn new(items: &[Item]) -> Overlaps {
        Overlaps::listed_below(items, TREE_FROM_PAIRS_PER_ITEM)
    }

    /// [`Overlaps::new`] with the tree from `dense` pairs per item.
    fn listed_below(items: &[Item], dense: usize) -> Overlaps {
        // Sorted as (start, end, index) triples, not indices sorting by a key read through
        // `items`: on 10^6 items those reads missed the cache at every comparison.
        let mut keyed: Vec<(u32, u32, usize)> = items
            .iter()
            .enumerate()
            .map(|(i, it)| (it.start, it.end, i))
            .collect();
        keyed.sort_unstable_by_key(|&(start, _, i)| (start, i));
        let by_start: Vec<usize> = keyed.iter().map(|&(_, _, i)| i).collect();
        // Items sorted by start: the later items overlapping item `a` are exactly the ones
        // after it whose start is at most its end, a contiguous run, found by bisection.
        let starts: Vec<u32> = keyed.iter().map(|&(start, _, _)| start).collect();
        let later: Vec<usize> = keyed
            .iter()
            .enumerate()
            .map(|(a, &(_, end, _))| starts[a + 1..].partition_point(|&s| s <= end))
            .collect();
        drop(keyed);
        let pairs = later.iter().fold(0usize, |p, &n| p.saturating_add(n));
        let listable = u32::try_from(items.len()).is_ok()
            && pairs <= MAX_LISTED_PAIRS
            && pairs < dense.saturating_mul(items.len());
        if listable {
            // Every rank and count fits in u32: `listable` checked the item count.
            let later: Vec<u32> = later.iter().map(|&n| n as u32).collect();
            // How many earlier items overlap each rank: rank `a` adds one to the ranks
            // `a + 1..=a + later[a]`, summed as differences (one pass, not one per pair).
            let mut delta = vec![0isize; items.len() + 2];
            for (a, &n) in later.iter().enumerate() {
                delta[a + 1] += 1;
                delta[a + 1 + n as usize] -= 1;
            }
            let mut first = Vec::with_capacity(items.len() + 1);
            let (mut total, mut earlier) = (0usize, 0isize);
            for d in &delta[..=items.len()] {
                earlier += d;
                first.push(total);
                total += earlier.unsigned_abs();
            }
            let mut fill = first.clone();
            let mut adj = vec![0u32; total];
            for (a, &n) in later.iter().enumerate() {
                for b in a + 1..=a + n as usize {
                    adj[fill[b]] = a as u32;
                    fill[b] += 1;
                }
            }
            let of: Vec<u32> = by_start.iter().map(|&i| i as u32).collect();
            let mut rank = vec![0u32; items.len()];
            for (r, &i) in by_start.iter().enumerate() {
                rank[i] = r as u32;
            }
            return Overlaps::Lists(Lists {
                first,
                adj,
                later,
                of,
                rank,
            });
        }
        let mut tree = StartTree::new(items, by_start);
        if u32::try_from(items.len()).is_ok() && pairs <= MAX_LISTED_PAIRS {
            tree.listable_pairs = Some(pairs);
        }
        Overlaps::Tree(tree)
    }

    /// The interval tree over `by_start` (item indices sorted by start).
    #[cfg(test)]
    fn tree(items: &[Item], by_start: Vec<usize>) -> Overlaps {
        Overlaps::Tree(StartTree::new(items, by_start))
    }

    /// Calls `f` with every item other than `i` that overlaps item `i` in time.
    pub(crate) fn for_each(&self, items: &[Item], i: usize, f: impl FnMut(usize)) {
        match self {
            Overlaps::Lists(lists) => lists.for_each(i, f),
            Overlaps::Tree(tree) => tree.for_each(items, i, f),
        }
    }

    /// Number of items overlapping item `i` in time.
    pub(crate) fn degree(&self, items: &[Item], i: usize) -> usize {
        match self {
            Overlaps::Lists(lists) => {
                let r = lists.rank[i] as usize;
                lists.first[r + 1] - lists.first[r] + lists.later[r] as usize
            }
            Overlaps::Tree(tree) => tree.degree(items, i),
        }
    }
}

impl Lists {
    /// Calls `f` with every item other than `i` that overlaps item `i` in time.
    fn for_each(&self, i: usize, mut f: impl FnMut(usize)) {
        let r = self.rank[i] as usize;
        let after = r + 1..=r + self.later[r] as usize;
        for b in self.adj[self.first[r]..self.first[r + 1]]
            .iter()
            .map(|&b| b as usize)
            .chain(after)
        {
            f(self.of[b] as usize);
        }
    }
}

impl StartTree {

    /// The interval tree over `by_start` (item indices sorted by start).
    fn new(items: &[Item], by_start: Vec<usize>) -> StartTree {
        let starts: Vec<u32> = by_start.iter().map(|&i| items[i].start).collect();
        let ends: Vec<u32> = by_start.iter().map(|&i| items[i].end).collect();
        let leaves = items.len().next_power_of_two().max(1);
        let mut max_end = vec![0u32; 2 * leaves];
        for (k, &e) in ends.iter().enumerate() {
            max_end[leaves + k] = e;
        }
        for node in (1..leaves).rev() {
            max_end[node] = max_end[2 * node].max(max_end[2 * node + 1]);
        }
        // Left empty when some lifetime is inverted: counting then takes the slow way.
        let mut sorted_ends = Vec::new();
        if items.iter().all(|it| it.start <= it.end) {
            sorted_ends = ends.clone();
            sorted_ends.sort_unstable();
        }
        StartTree {
            by_start,
            starts,
            ends,
            max_end,
            leaves,
            sorted_ends,
            listable_pairs: None,
        }
    }

    /// Calls `f` with every item other than `i` that overlaps item `i` in time.
    fn for_each(&self, items: &[Item], i: usize, mut f: impl FnMut(usize)) {
        let (s, e) = (items[i].start, items[i].end);
        // Candidates start at or before `e`: a prefix of the start order.
        let hi = self.starts.partition_point(|&x| x <= e);
        let mut stack = vec![(1usize, 0usize, self.leaves)];
        while let Some((node, lo, len)) = stack.pop() {
            if lo >= hi || self.max_end[node] < s {
                continue;
            }
            if len == 1 {
                let j = self.by_start[lo];
                if j != i && self.ends[lo] >= s {
                    f(j);
                }
                continue;
            }
            let half = len / 2;
            stack.push((2 * node + 1, lo + half, half));
            stack.push((2 * node, lo, half));
        }
    }

    /// Number of items overlapping item `i` in time.
    fn degree(&self, items: &[Item], i: usize) -> usize {
        let (s, e) = (items[i].start, items[i].end);
        if self.sorted_ends.len() != self.starts.len() {
            let mut n = 0;
            self.for_each(items, i, |_| n += 1);
            return n;
        }
        // The others starting at or before `e`, less those ending before `s` (which
        // started before it too).
        let started = self.starts.partition_point(|&x| x <= e);
        let ended = self.sorted_ends.partition_point(|&x| x < s);
        started.saturating_sub(ended + 1)
    }
}

/// What a listed pass reads of the item it places next.
struct Next {
    rank: usize,
    /// Its earlier neighbours, a range of the adjacency list.
    earlier: std::ops::Range<usize>,
    /// How many items after it in start order it overlaps.
    later: usize,
    size: u64,
    align: u64,
    spillable: bool,
}

/// How many items ahead a listed pass asks for the neighbour list it will read.
const AHEAD: usize = 8;

/// Bytes of a cache line: [`prefetch`] asks for each line of a list once.
const LINE: usize = 64;

/// Asks for each cache line of `data` ahead of its use: a prefetch hint on x86-64, a load
/// of the line's first element elsewhere.
#[inline]
fn prefetch<T: Copy>(data: &[T]) {
    let step = (LINE / std::mem::size_of::<T>().max(1)).max(1);
    #[cfg(target_arch = "x86_64")]
    for line in data.chunks(step) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `prefetch` only hints the cache: it reads nothing the program sees and
        // never faults, and SSE, which it needs, is part of every x86-64 processor.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    for line in data.chunks(step) {
        std::hint::black_box(line.first().copied());
    }
}

/// The placement engine for one problem: its overlap index and a reusable buffer.
#[derive(Debug, Clone)]
pub(crate) struct Placer<'p> {
    pub(crate) problem: &'p Problem,
    /// Shared with the placers of the same lifetimes (the passes of one seed, on threads).
    pub(crate) overlaps: Arc<Overlaps>,
    busy: Vec<(u64, u64)>,
    /// Scratch of [`sort_starts`].
    sort: SortScratch,
    /// The busy bytes over time for passes from scratch, built on first use.
    tree: Option<BusyTree>,
    /// Items placed so far.
    pub(crate) placements: u64,
    /// Items placed plus neighbours examined so far: a deterministic measure of work for
    /// search budgets, roughly proportional to time.
    pub(crate) work: u64,
    /// [`Placer::place_from`] gives up (`None`) once `work` passes this.
    pub(crate) work_cap: u64,
}

impl<'p> Placer<'p> {
    pub(crate) fn new(problem: &'p Problem) -> Placer<'p> {
        Placer::with_overlaps(problem, Arc::new(Overlaps::new(&problem.items)))
    }

    /// A placer for `problem` whose lifetimes `overlaps` already indexes (those of another
    /// problem with the same lifetimes).
    pub(crate) fn with_overlaps(problem: &'p Problem, overlaps: Arc<Overlaps>) -> Placer<'p> {
        Placer {
            problem,
            overlaps,
            busy: Vec::new(),
            sort: SortScratch::default(),
            tree: None,
            placements: 0,
            work: 0,
            work_cap: u64::MAX,
        }
    }

    /// Frees the lifetime index and the scratch ahead of a stage that places nothing (the
    /// exact search indexes its own): on 10^6 items the index is over 128 MiB. The placer
    /// keeps its counts; it must place nothing after this (its index covers no item, so a
    /// pass would stop at the first lookup).
    pub(crate) fn free_index(&mut self) {
        self.overlaps = Arc::new(Overlaps::new(&[]));
        self.tree = None;
        self.busy = Vec::new();
        self.sort = SortScratch::default();
    }

    /// Frees the busy tree of the last pass from scratch (the next one builds it again):
    /// before passes that each build their own, on threads, so that a third one is not
    /// held beside theirs (on 10^6 items of an allocation trace, some 500 MB each).
    pub(crate) fn free_tree(&mut self) {
        self.tree = None;
    }

    /// After a pass from scratch over the busy tree on a problem whose overlaps the tree
    /// indexes for being dense ([`TREE_FROM_PAIRS_PER_ITEM`]): when that pass moved and read
    /// at least half as many ranges as there are overlapping pairs, the ranges did not merge
    /// (lifetimes that do not line up, as in random problems), and the overlaps are listed
    /// for the passes and the climb that follow. Returns whether it listed them.
    ///
    /// On the allocation traces the busy tree's reference pass touched 0.19-0.34 ranges per
    /// pair (`pangu_2.6B.csv`, `S_1.csv`, `bert_base.csv`), on the random problems of
    /// `examples/pack_scale.rs` (20k and 100k buffers) 1.27-1.34, where the tree made the
    /// whole plan a quarter slower than the lists.
    pub(crate) fn relist_if_unmerged(&mut self) -> bool {
        let (
            Overlaps::Tree(StartTree {
                listable_pairs: Some(pairs),
                ..
            }),
            Some(tree),
        ) = (&*self.overlaps, &self.tree)
        else {
            return false;
        };
        if tree.touched < (*pairs as u64) / 2 {
            return false;
        }
        self.overlaps = Arc::new(Overlaps::listed_below(&self.problem.items, usize::MAX));
        self.tree = None;
        true
    }

    /// The offset `rule` picks for item `i` among the placed items of `offsets`.
    pub(crate) fn fit(&mut self, i: usize, offsets: &[Option<u64>], rule: GapRule) -> u64 {
        let items = &self.problem.items;
        let busy = &mut self.busy;
        busy.clear();
        self.overlaps.for_each(items, i, |j| {
            if let Some(o) = offsets[j]
                && items[j].size > 0
            {
                busy.push((o, o.saturating_add(items[j].size)));
            }
        });
        sort_starts(busy, &mut self.sort);
        self.placements += 1;
        self.work += 1 + busy.len() as u64;
        choose_gap(busy, items[i].size, items[i].align, rule)
    }

    /// Places fixed items at their offsets, then the unspillable items of `order`, then its
    /// spillable ones, each by `rule`; a spillable item whose end would pass the capacity is
    /// spilled. Items not in `order` and not fixed are left out (spilled).
    pub(crate) fn place_with_spill(&mut self, order: &[usize], rule: GapRule) -> Packing {
        self.place_with_spill_below(order, rule, u64::MAX)
            .unwrap_or_else(|| Packing {
                offsets: vec![None; self.problem.items.len()],
                height: 0,
            })
    }

    /// [`Placer::place_with_spill`], given up (`None`) as soon as a placed item's end
    /// passes `limit`.
    pub(crate) fn place_with_spill_below(
        &mut self,
        order: &[usize],
        rule: GapRule,
        limit: u64,
    ) -> Option<Packing> {
        let items = &self.problem.items;
        let free = |spillable: bool| {
            order
                .iter()
                .copied()
                .filter(move |&i| items[i].fixed.is_none() && items[i].spillable == spillable)
        };
        let order: Vec<usize> = free(false).chain(free(true)).collect();
        self.place_fresh(&order, rule, limit, true)
    }

    /// Places the fixed items, then `order` (no fixed item in it) by `rule`, from scratch.
    /// A spillable item whose end would pass the capacity is spilled when `spill`, and ends
    /// the pass (`None`) otherwise; so does any item whose end passes `limit`.
    pub(crate) fn place_fresh(
        &mut self,
        order: &[usize],
        rule: GapRule,
        limit: u64,
        spill: bool,
    ) -> Option<Packing> {
        if let Overlaps::Lists(lists) = &*Arc::clone(&self.overlaps) {
            return self.place_fresh_listed(lists, order, rule, limit, spill);
        }
        let problem = self.problem;
        let items = &problem.items;
        let mut tree = match self.tree.take() {
            Some(mut t) => {
                t.clear();
                t
            }
            None => BusyTree::new(items),
        };
        let mut offsets: Vec<Option<u64>> = vec![None; items.len()];
        let mut height = 0u64;
        for (i, it) in items.iter().enumerate() {
            if let Some(off) = it.fixed {
                offsets[i] = Some(off);
                height = height.max(off.saturating_add(it.size));
                tree.insert(it.start, it.end, off, off.saturating_add(it.size));
            }
        }
        let mut result = Some(());
        for &i in order {
            let it = &items[i];
            let (off, reads) = tree.fit(it.start, it.end, it.size, it.align, rule);
            self.placements += 1;
            self.work += reads;
            let end = off.saturating_add(it.size);
            match admit(
                it.spillable && problem.capacity.is_some_and(|c| end > c),
                end,
                limit,
                spill,
            ) {
                Admit::Place => {}
                Admit::Spill => continue,
                Admit::Stop => {
                    result = None;
                    break;
                }
            }
            offsets[i] = Some(off);
            height = height.max(end);
            tree.insert(it.start, it.end, off, end);
        }
        self.tree = Some(tree);
        result.map(|()| Packing { offsets, height })
    }

    /// [`Placer::place_fresh`] over the overlap lists: each item's placed neighbours,
    /// sorted, give its gap. The pass works in start-rank numbering, where an item's
    /// neighbours lie close to it in memory, which is what makes it fast on large problems.
    fn place_fresh_listed(
        &mut self,
        lists: &Lists,
        order: &[usize],
        rule: GapRule,
        limit: u64,
        spill: bool,
    ) -> Option<Packing> {
        let problem = self.problem;
        let items = &problem.items;
        // By rank: the bytes every item takes, empty until it is placed (and for items that
        // take none), and whether it is placed.
        let mut slot = vec![(0u64, 0u64); items.len()];
        let mut placed = vec![false; items.len()];
        let mut height = 0u64;
        for (r, &i) in lists.of.iter().enumerate() {
            let it = &items[i as usize];
            if let Some(off) = it.fixed {
                slot[r] = (off, off.saturating_add(it.size));
                placed[r] = true;
                height = height.max(slot[r].1);
            }
        }
        // What the loop reads of each item, gathered in order first: independent reads that
        // the processor overlaps, where the loop's own reads would wait one by one (on 10^6
        // items, the loads of `first`, `later` and `adj` missed the cache once per item each).
        let seq: Vec<Next> = order
            .iter()
            .map(|&i| {
                let it = &items[i];
                let r = lists.rank[i] as usize;
                Next {
                    rank: r,
                    earlier: lists.first[r]..lists.first[r + 1],
                    later: lists.later[r] as usize,
                    size: it.size,
                    align: it.align,
                    spillable: it.spillable,
                }
            })
            .collect();
        let busy = &mut self.busy;
        for (k, next) in seq.iter().enumerate() {
            // Ask for the neighbour list an item a few places on will read, so that its cache
            // misses overlap this item's work (`perf annotate`: the first read of each list
            // held 38 % of a dense pass's samples; the slots it reads next come in order,
            // which the processor's own prefetching follows).
            if let Some(ahead) = seq.get(k + AHEAD) {
                prefetch(lists.adj.get(ahead.earlier.clone()).unwrap_or(&[]));
            }
            let &Next {
                rank: r,
                ref earlier,
                later,
                size,
                align,
                spillable,
            } = next;
            busy.clear();
            for b in lists.adj[earlier.clone()]
                .iter()
                .map(|&b| b as usize)
                .chain(r + 1..=r + later)
            {
                let (lo, hi) = slot[b];
                if hi > lo {
                    busy.push((lo, hi));
                }
            }
            sort_starts(busy, &mut self.sort);
            self.placements += 1;
            self.work += 1 + busy.len() as u64;
            let off = choose_gap(busy, size, align, rule);
            let end = off.saturating_add(size);
            match admit(
                spillable && problem.capacity.is_some_and(|c| end > c),
                end,
                limit,
                spill,
            ) {
                Admit::Place => {}
                Admit::Spill => continue,
                Admit::Stop => return None,
            }
            slot[r] = (off, end);
            placed[r] = true;
            height = height.max(end);
        }
        let mut offsets: Vec<Option<u64>> = vec![None; items.len()];
        for (r, &i) in lists.of.iter().enumerate() {
            if placed[r] {
                offsets[i as usize] = Some(slot[r].0);
            }
        }
        Some(Packing { offsets, height })
    }

    /// Places `order[from..]` by `rule` into `offsets`, which must hold the fixed items and
    /// `order[..from]` and nothing of `order[from..]`; `height` is their height. Returns the
    /// new height, or `None` as soon as it passes `limit`, a spillable item passes the
    /// capacity or the work passes [`Placer::work_cap`] (the caller then restores `offsets`).
    pub(crate) fn place_from(
        &mut self,
        order: &[usize],
        from: usize,
        offsets: &mut [Option<u64>],
        mut height: u64,
        rule: GapRule,
        limit: u64,
    ) -> Option<u64> {
        let capacity = self.problem.capacity;
        for &i in &order[from..] {
            let off = self.fit(i, offsets, rule);
            let it = &self.problem.items[i];
            let end = off.saturating_add(it.size);
            if end > limit
                || (it.spillable && capacity.is_some_and(|c| end > c))
                || self.work > self.work_cap
            {
                return None;
            }
            offsets[i] = Some(off);
            height = height.max(end);
        }
        Some(height)
    }
}

/// What a pass from scratch does with an item it has found an offset for.
enum Admit {
    Place,
    /// Leave it out: it is spillable and would pass the capacity.
    Spill,
    /// End the pass.
    Stop,
}

/// The rule of [`Placer::place_fresh`]: an item past the capacity (`over`) is spilled when
/// `spill` and ends the pass otherwise; so does one ending past `limit`.
fn admit(over: bool, end: u64, limit: u64, spill: bool) -> Admit {
    match (over, spill) {
        (true, true) => Admit::Spill,
        (true, false) => Admit::Stop,
        _ if end > limit => Admit::Stop,
        _ => Admit::Place,
    }
}

/// Item indices in lifetime-start order (then larger first, then index).
pub fn greedy_order(problem: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..problem.items.len()).collect();
    order.sort_by_key(|&i| {
        let it = &problem.items[i];
        (it.start, std::cmp::Reverse(it.size), i)
    });
    order
}

/// Item indices largest first, then earliest start, then index.
pub fn size_order(problem: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..problem.items.len()).collect();
    order.sort_by_key(|&i| {
        let it = &problem.items[i];
        (std::cmp::Reverse(it.size), it.start, i)
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::tests::{item, random_item, random_rounds};

    fn neighbours(o: &Overlaps, items: &[Item], i: usize) -> Vec<usize> {
        let mut v = Vec::new();
        o.for_each(items, i, |j| v.push(j));
        v.sort_unstable();
        v
    }

    #[test]
    fn lists_and_tree_agree_with_brute_force() {
        let mut items = Vec::new();
        let mut x = 12345u64;
        for _ in 0..200 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let start = ((x >> 33) % 50) as u32;
            let len = ((x >> 20) % 12) as u32;
            items.push(item(8, start, start + len));
        }
        let lists = Overlaps::new(&items);
        assert!(matches!(lists, Overlaps::Lists(_)));
        let mut by_start: Vec<usize> = (0..items.len()).collect();
        by_start.sort_unstable_by_key(|&i| (items[i].start, i));
        let tree = Overlaps::tree(&items, by_start);
        for i in 0..items.len() {
            let brute: Vec<usize> = (0..items.len())
                .filter(|&j| j != i && items[i].overlaps_in_time(&items[j]))
                .collect();
            assert_eq!(neighbours(&lists, &items, i), brute, "lists, item {i}");
            assert_eq!(neighbours(&tree, &items, i), brute, "tree, item {i}");
            assert_eq!(tree.degree(&items, i), brute.len());
        }
    }

    /// A pass over the overlap lists (in start-rank numbering) and a pass over the busy
    /// tree give the same packing, with fixed items, zero sizes and spills.
    #[test]
    fn listed_and_tree_passes_agree() {
        let draw = |round: usize, k: usize, next: &mut dyn FnMut(u64) -> u64| {
            let mut it = random_item(next, (50, 64, 12), [1, 8, 32]);
            it.spillable = round.is_multiple_of(3) && k.is_multiple_of(4);
            if k.is_multiple_of(17) {
                it.fixed = Some(64 * next(8));
            }
            it
        };
        random_rounds(777, (30, 120), draw, |round, items| {
            let problem = Problem {
                items,
                capacity: (round % 3 == 0).then_some(600),
            };
            let mut by_start: Vec<usize> = (0..problem.items.len()).collect();
            by_start.sort_unstable_by_key(|&i| (problem.items[i].start, i));
            let mut listed = Placer::new(&problem);
            assert!(matches!(*listed.overlaps, Overlaps::Lists(_)));
            let mut tree =
                Placer::with_overlaps(&problem, Arc::new(Overlaps::tree(&problem.items, by_start)));
            let order: Vec<usize> = size_order(&problem)
                .into_iter()
                .filter(|&i| problem.items[i].fixed.is_none())
                .collect();
            for rule in [GapRule::Lowest, GapRule::BestFit] {
                let a = listed.place_with_spill(&order, rule);
                let b = tree.place_with_spill(&order, rule);
                assert_eq!(a, b, "round {round}, {rule:?}");
                let limit = a.height.saturating_sub(1);
                assert_eq!(
                    listed.place_fresh(&order, rule, limit, false),
                    tree.place_fresh(&order, rule, limit, false)
                );
            }
        });
    }

    /// Offsets near `u64::MAX` (saturated ends, alignments that overflow): both kinds of
    /// pass still agree and place every item.
    #[test]
    fn listed_and_tree_agree_near_the_top_of_u64() {
        let mut top = item(100, 0, 3);
        top.fixed = Some(u64::MAX - 4);
        let mut huge = item(8, 1, 2);
        huge.align = 1 << 63;
        let mut after = item(16, 0, 3);
        after.align = 1 << 63;
        let problem = Problem {
            items: vec![top, item(u64::MAX - 10, 0, 3), huge, after, item(0, 1, 1)],
            capacity: None,
        };
        let order: Vec<usize> = vec![1, 2, 3, 4];
        let mut by_start: Vec<usize> = (0..problem.items.len()).collect();
        by_start.sort_unstable_by_key(|&i| (problem.items[i].start, i));
        let mut listed = Placer::new(&problem);
        let mut tree =
            Placer::with_overlaps(&problem, Arc::new(Overlaps::tree(&problem.items, by_start)));
        for rule in [GapRule::Lowest, GapRule::BestFit] {
            let a = listed.place_with_spill(&order, rule);
            assert_eq!(a, tree.place_with_spill(&order, rule), "{rule:?}");
            assert!(a.offsets.iter().all(Option::is_some), "{rule:?}: {a:?}");
        }
    }

    /// On a dense problem (at least [`TREE_FROM_PAIRS_PER_ITEM`] overlapping pairs per item)
    /// the overlaps are indexed by the tree and passes from scratch take the busy tree, which
    /// gives the lists' offsets, for both rules, with spills and a limit.
    #[test]
    fn dense_problems_take_the_trees_and_agree_with_the_lists() {
        let mut rng = crate::pack::Rng::new(31);
        let mut next = |m: u64| rng.below_u64(m);
        let items: Vec<Item> = (0..1500)
            .map(|k| {
                let start = next(400) as u32;
                let mut it = item(1 + next(5000), start, start + 150 + next(300) as u32);
                it.align = [1, 8, 64][next(3) as usize];
                it.spillable = k % 5 == 0;
                it
            })
            .collect();
        let problem = Problem {
            items,
            capacity: Some(2_000_000),
        };
        // Unspillable items first, as `place_with_spill` takes them.
        let mut order = size_order(&problem);
        order.sort_by_key(|&i| problem.items[i].spillable);
        let lists = Arc::new(Overlaps::listed_below(&problem.items, usize::MAX));
        let Overlaps::Lists(pairs) = &*lists else {
            panic!("the overlap lists");
        };
        assert!(pairs.adj.len() >= TREE_FROM_PAIRS_PER_ITEM * problem.items.len());
        for rule in [GapRule::Lowest, GapRule::BestFit] {
            let mut placer = Placer::new(&problem);
            assert!(matches!(*placer.overlaps, Overlaps::Tree(_)));
            let a = placer.place_with_spill(&order, rule);
            assert!(placer.tree.is_some(), "{rule:?}: the pass took the lists");
            let mut listed = Placer::with_overlaps(&problem, Arc::clone(&lists));
            let b = listed
                .place_fresh_listed(pairs, &order, rule, u64::MAX, true)
                .expect("no limit");
            assert_eq!(a, b, "{rule:?}");
            assert!(
                a.offsets.iter().any(Option::is_none),
                "{rule:?}: nothing spilled"
            );
            let limit = a.height / 2;
            assert_eq!(
                placer.place_fresh(&order, rule, limit, true),
                listed.place_fresh_listed(pairs, &order, rule, limit, true)
            );
        }
    }

    /// A dense problem whose ranges merge in the busy tree (every item lives over the same
    /// ops, packed end to end) keeps the tree; one whose ranges do not (lifetimes spread at
    /// random) gets the lists after its first pass, and its passes give the same offsets.
    #[test]
    fn unmerged_ranges_bring_the_lists_back() {
        let mut rng = crate::pack::Rng::new(8);
        let mut next = |m: u64| rng.below_u64(m);
        let same: Vec<Item> = (0..600).map(|_| item(1 + next(900), 0, 9)).collect();
        let spread: Vec<Item> = (0..1500)
            .map(|_| {
                let start = next(400) as u32;
                item(1 + next(5000), start, start + 150 + next(300) as u32)
            })
            .collect();
        for (items, relisted) in [(same, false), (spread, true)] {
            let problem = Problem {
                items,
                capacity: None,
            };
            let order = size_order(&problem);
            let mut placer = Placer::new(&problem);
            assert!(matches!(*placer.overlaps, Overlaps::Tree(_)));
            assert!(!placer.relist_if_unmerged(), "no pass yet");
            let first = placer.place_with_spill(&order, GapRule::Lowest);
            assert_eq!(placer.relist_if_unmerged(), relisted);
            assert_eq!(matches!(*placer.overlaps, Overlaps::Lists(_)), relisted);
            assert!(first == placer.place_with_spill(&order, GapRule::Lowest));
        }
    }

    #[test]
    fn sort_starts_sorts() {
        let mut rng = crate::pack::Rng::new(5);
        let mut next = |m: u64| rng.below_u64(m);
        let mut scratch = SortScratch::default();
        for round in 0..200u64 {
            let n = next(400) as usize;
            // Spread, clustered, equal and huge starts.
            let mut v: Vec<(u64, u64)> = (0..n)
                .map(|_| {
                    let lo = match round % 4 {
                        0 => next(1 << 30),
                        1 => 1000 + next(8),
                        2 => 77,
                        _ => u64::MAX - next(1 << 40),
                    };
                    (lo, lo.saturating_add(next(100)))
                })
                .collect();
            let mut want: Vec<u64> = v.iter().map(|r| r.0).collect();
            want.sort_unstable();
            let mut all = v.clone();
            sort_starts(&mut v, &mut scratch);
            assert_eq!(v.iter().map(|r| r.0).collect::<Vec<_>>(), want);
            all.sort_unstable();
            v.sort_unstable();
            assert_eq!(v, all, "the same ranges");
        }
    }

    #[test]
    fn gap_rules() {
        // Free: [0,10) of 10, [20,24) of 4, [30,..).
        let busy = [(10, 20), (24, 30)];
        assert_eq!(choose_gap(&busy, 4, 1, GapRule::Lowest), 0);
        assert_eq!(choose_gap(&busy, 4, 1, GapRule::BestFit), 20);
        assert_eq!(choose_gap(&busy, 5, 1, GapRule::BestFit), 0);
        assert_eq!(choose_gap(&busy, 11, 1, GapRule::BestFit), 30);
        assert_eq!(choose_gap(&busy, 4, 16, GapRule::Lowest), 0);
        assert_eq!(choose_gap(&[(0, 3)], 4, 16, GapRule::Lowest), 16);
        // Overlapping busy ranges merge.
        assert_eq!(
            choose_gap(&[(0, 10), (2, 5), (12, 14)], 2, 1, GapRule::Lowest),
            10
        );
        assert_eq!(choose_gap(&[], 7, 8, GapRule::BestFit), 0);
    }
}
