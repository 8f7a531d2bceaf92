//! The search over one independent group of free items ([`Component`]): its set-up, the
//! section checks and the branching.

use super::tops::{TOPS_FROM, Tops};
use super::*;
use crate::pack::Item;

/// The search state of one independent group of free items (local indices `0..n`).
pub(super) struct Component {
    cap: u64,
    pub(super) size: Vec<u64>,
    align: Vec<u64>,
    /// Time sections `[sa, sb)` each item is live in.
    sa: Vec<u32>,
    sb: Vec<u32>,
    /// Position in `by_start` of the first item starting in each section (and `n` at the
    /// end). An item's time-overlapping items are those live in its first section and those
    /// starting in its later ones: the section lists and `by_start` hold them, where a list
    /// of pairs took 800 MB on a dense 10^6-item problem.
    first_start: Vec<u32>,
    /// Fixed items in the way of each item, as merged sorted byte ranges (CSR).
    ob_at: Vec<u32>,
    ob: Vec<(u64, u64)>,
    /// The previous identical item, which must be placed first.
    twin: Vec<u32>,
    rank: Vec<u32>,
    /// Lifetime length of each item.
    width: Vec<u64>,
    /// Items by first section, then index.
    by_start: Vec<u32>,
    /// Position of each item in `by_start`.
    pos: Vec<u32>,
    /// A doubly linked list over `by_start` of the unplaced items: node `p + 1` is position
    /// `p`, node 0 the head and node `n + 1` the tail.
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The two lowest tops and the lowest offset of the unplaced items, over `by_start`;
    /// only on components of at least [`TOPS_FROM`] items (on fewer a sweep is faster).
    tops: Option<Tops>,

    placed: Vec<bool>,
    pub(super) off: Vec<u64>,
    /// Highest top of the placed items overlapping each item.
    top: Vec<u64>,
    /// Lowest offset each unplaced item can take now.
    low: Vec<u64>,
    /// Unplaced time-overlapping items of each item.
    open: Vec<u32>,
    /// Bytes of unplaced items per section.
    load: Vec<u64>,
    /// Unplaced items crossing each section boundary (`cut[t]`: between `t - 1` and `t`).
    cut: Vec<u32>,
    /// Set when a placement brings some `cut` to 0: the range falls apart.
    new_cut: bool,
    /// The items live in each section (CSR).
    sec_at: Vec<u32>,
    sec_items: Vec<u32>,
    /// The item placed last by `place`, and the section that failed the last check: where
    /// the next check looks first.
    last_placed: u32,
    last_fail: u32,
    /// Item-sections the section checks read since the budget last counted them
    /// ([`Component::charge`]).
    scanned: u64,
    /// Set when `search` has just checked the sections of the side `branch` is entered on.
    checked: bool,
    /// The state the section check last passed in, over a range holding the one searched
    /// now: the lengths of `trail` and `log` then, and the floor it used. A section that no
    /// item has entered or left since, where no item's lowest offset (floored) has moved,
    /// still passes: [`Component::check`] tries only the others.
    reference: Option<(usize, usize, u64)>,
    /// The sections [`Component::check`] tries, as ranges.
    dirty: Vec<(u32, u32)>,
    floor: u64,
    /// One more than the rank of the last item placed at `floor` (0: none). Items at equal
    /// offsets never overlap in time, so their order is free: only rising rank is explored.
    floor_rank: u32,
    remaining: usize,
    trail: Vec<(u32, u64, u64)>,
    log: Vec<u32>,
    cands: Vec<u32>,
    /// Positions [`Tops::below`] lists for `branch` (kept to reuse its allocation).
    found: Vec<u32>,
    parts: Vec<(u32, u32)>,
    /// Per section during the section check: the lowest offset an unplaced item can take,
    /// the bytes of the items that can take no higher one, and the next lowest offset.
    scratch: Vec<(u64, u64, u64)>,
    /// Zobrist hash of the unplaced items and their lowest offsets: two partial packings
    /// with the same hash leave the same problem (the placed items matter only through
    /// those offsets), however their holes are arranged.
    hash: (u64, u64),
    /// Failed states: (hash, section range) to the lowest (floor, floor rank) it failed at.
    /// The same state with a floor at or above fails too (it has fewer choices).
    /// One table per branching order (floor ranks mean different things in each), kept
    /// across restarts.
    memos: Vec<Memo>,
    order: usize,
    /// Ranks replaced by `rerank`, to restore when the side is left.
    rank_trail: Vec<(u32, u32)>,
    /// Hash of the state the current side was ranked at (0 at the root).
    epoch: u64,
}

/// The time sections of `group`'s items (between consecutive starts and ends): the
/// boundaries' times, and each item's first section and the section after its last.
fn sections_of(items: &[Item], group: &[usize]) -> (Vec<u64>, Vec<u32>, Vec<u32>) {
    let mut times: Vec<u64> = Vec::with_capacity(2 * group.len());
    for &i in group {
        times.push(u64::from(items[i].start));
        times.push(u64::from(items[i].end) + 1);
    }
    times.sort_unstable();
    times.dedup();
    let sec = |t: u64| times.partition_point(|&x| x < t) as u32;
    let sa = group
        .iter()
        .map(|&i| sec(u64::from(items[i].start)))
        .collect();
    let sb = group
        .iter()
        .map(|&i| sec(u64::from(items[i].end) + 1))
        .collect();
    (times, sa, sb)
}

/// Position in `by_start` of the first item starting at or after each section, for
/// sections `0..=sections`.
fn first_starts(by_start: &[u32], sa: &[u32], sections: usize) -> Vec<u32> {
    let mut first = vec![by_start.len() as u32; sections + 1];
    for (p, &k) in by_start.iter().enumerate().rev() {
        first[sa[k as usize] as usize] = p as u32;
    }
    for t in (0..sections).rev() {
        first[t] = first[t].min(first[t + 1]);
    }
    first
}

/// The fixed items in the way of each item of `group` (live beside it), as merged sorted
/// byte ranges (CSR).
fn fixed_in_the_way(
    items: &[Item],
    group: &[usize],
    fixed: &[usize],
) -> (Vec<u32>, Vec<(u64, u64)>) {
    let n = group.len();
    let mut ob_at = Vec::with_capacity(n + 1);
    let mut ob: Vec<(u64, u64)> = Vec::new();
    for &g in group {
        let at = ob.len();
        ob_at.push(at as u32);
        let mut mine: Vec<(u64, u64)> = fixed
            .iter()
            .filter(|&&f| items[f].size > 0 && items[f].overlaps_in_time(&items[g]))
            .map(|&f| {
                let o = items[f].fixed.unwrap_or(0);
                (o, o.saturating_add(items[f].size))
            })
            .collect();
        mine.sort_unstable();
        for r in mine {
            match ob[at..].last_mut() {
                Some(last) if r.0 <= last.1 => last.1 = last.1.max(r.1),
                _ => ob.push(r),
            }
        }
    }
    ob_at.push(ob.len() as u32);
    (ob_at, ob)
}

/// Per section: the bytes of the items live in it and those items (CSR); per boundary
/// between sections, the items crossing it.
struct SectionTables {
    load: Vec<u64>,
    sec_at: Vec<u32>,
    sec_items: Vec<u32>,
    cut: Vec<u32>,
}

/// The [`SectionTables`] of items live in sections `sa[k]..sb[k]`.
fn section_tables(
    sa: &[u32],
    sb: &[u32],
    size: &[u64],
    sections: usize,
) -> SectionTables {
    let n = sa.len();
    let mut load = vec![0u64; sections];
    let mut sec_at = vec![0u32; sections + 1];
    let mut cut = vec![0u32; sections + 1];
    for k in 0..n {
        for t in sa[k]..sb[k] {
            load[t as usize] = load[t as usize].saturating_add(size[k]);
            sec_at[t as usize + 1] += 1;
        }
        for b in sa[k] + 1..sb[k] {
            cut[b as usize] += 1;
        }
    }
    for t in 0..sections {
        sec_at[t + 1] += sec_at[t];
    }
    let mut sec_items = vec![0u32; sec_at[sections] as usize];
    let mut fill = sec_at.clone();
    for k in 0..n {
        for t in sa[k]..sb[k] {
            sec_items[fill[t as usize] as usize] = k as u32;
            fill[t as usize] += 1;
        }
    }
    SectionTables {
        load,
        sec_at,
        sec_items,
        cut,
    }
}

/// Each item's twin: the last item before it with the same sections, size and alignment,
/// which must be placed first ([`NONE`] for none; one map pass: a pairwise scan was
/// quadratic at 10^6 items).
fn twins(sa: &[u32], sb: &[u32], size: &[u64], align: &[u64]) -> Vec<u32> {
    let mut last_alike: HashMap<(u32, u32, u64, u64), u32> = HashMap::with_capacity(sa.len());
    (0..sa.len())
        .map(|a| {
            last_alike
                .insert((sa[a], sb[a], size[a], align[a]), a as u32)
                .unwrap_or(NONE)
        })
        .collect()
}

impl Component {
    pub(super) fn new(problem: &Problem, group: &[usize], fixed: &[usize], cap: u64) -> Component {
        let items = &problem.items;
        let n = group.len();
        let (times, sa, sb) = sections_of(items, group);
        let sections = times.len().saturating_sub(1);
        let size: Vec<u64> = group.iter().map(|&i| items[i].size).collect();
        let align: Vec<u64> = group.iter().map(|&i| items[i].align.max(1)).collect();
        let mut by_start: Vec<u32> = (0..n as u32).collect();
        by_start.sort_unstable_by_key(|&k| (sa[k as usize], k));
        let first_start = first_starts(&by_start, &sa, sections);
        let (ob_at, ob) = fixed_in_the_way(items, group, fixed);
        let SectionTables {
            load,
            sec_at,
            sec_items,
            cut,
        } = section_tables(&sa, &sb, &size, sections);
        let width: Vec<u64> = (0..n)
            .map(|k| times[sb[k] as usize] - times[sa[k] as usize])
            .collect();
        let twin = twins(&sa, &sb, &size, &align);
        let open: Vec<u32> = (0..n)
            .map(|k| {
                let (a, b) = (sa[k] as usize, sb[k] as usize);
                let live_at_start = sec_at[a + 1] - sec_at[a] - 1;
                live_at_start + first_start[b] - first_start[a + 1]
            })
            .collect();
        let mut pos = vec![0u32; n];
        for (p, &k) in by_start.iter().enumerate() {
            pos[k as usize] = p as u32;
        }
        let next: Vec<u32> = (1..=n as u32 + 1).chain([n as u32 + 1]).collect();
        let prev: Vec<u32> = [0].into_iter().chain(0..=n as u32).collect();
        let mut c = Component {
            cap,
            size,
            align,
            sa,
            sb,
            first_start,
            ob_at,
            ob,
            twin,
            rank: vec![0; n],
            width,
            by_start,
            pos,
            next,
            prev,
            tops: (n >= TOPS_FROM).then(|| Tops::new(n)),
            placed: vec![false; n],
            off: vec![0; n],
            top: vec![0; n],
            low: vec![0; n],
            open,
            load,
            cut,
            new_cut: false,
            checked: false,
            reference: None,
            dirty: Vec::new(),
            sec_at,
            sec_items,
            last_placed: NONE,
            last_fail: 0,
            scanned: 0,
            floor: 0,
            floor_rank: 0,
            remaining: n,
            trail: Vec::new(),
            log: Vec::new(),
            cands: Vec::new(),
            found: Vec::new(),
            parts: Vec::new(),
            scratch: vec![(0, 0, 0); sections],
            hash: (0, 0),
            memos: vec![HashMap::new(); ORDERS as usize],
            order: 0,
            rank_trail: Vec::new(),
            epoch: 0,
        };
        for k in 0..n {
            c.low[k] = c.lowest(k, 0);
            c.flip(k, c.low[k]);
        }
        if let Some(tops) = &mut c.tops {
            for k in 0..n {
                tops.leaf(c.pos[k] as usize, (c.low[k], c.size[k]), c.sb[k]);
            }
            tops.build();
        }
        c
    }

    /// Writes item `k`'s lowest offset into [`Component::tops`] (an empty slot once placed).
    fn retop(&mut self, k: usize) {
        let Some(tops) = &mut self.tops else { return };
        let p = self.pos[k] as usize;
        if self.placed[k] {
            tops.clear(p);
        } else {
            tops.set(p, (self.low[k], self.size[k]), self.sb[k]);
        }
    }

    /// Adds or removes item `k` at lowest offset `low` from the state hash.
    fn flip(&mut self, k: usize, low: u64) {
        let a = mix((k as u64) << 1 ^ low.rotate_left(17));
        let b = mix(a ^ 0x5851_f42d_4c95_7f2d ^ (k as u64));
        self.hash.0 ^= a;
        self.hash.1 ^= b;
    }

    /// Lowest offset at or above `from`, aligned, clear of the fixed items, for item `k`.
    fn lowest(&self, k: usize, from: u64) -> u64 {
        let (s, a) = (self.size[k], self.align[k]);
        let mut y = round_up(from, a);
        for &(lo, hi) in &self.ob[self.ob_at[k] as usize..self.ob_at[k + 1] as usize] {
            if hi <= y {
                continue;
            }
            if y.saturating_add(s) <= lo {
                break;
            }
            y = round_up(hi, a);
        }
        y
    }

    /// Item `k`'s time-overlapping items, by index `0..len`, as ranges of `sec_items` (the
    /// items live in its first section, `k` among them) and of `by_start` (those starting
    /// in its later sections): see [`Component::neighbour`].
    fn overlaps(&self, k: usize) -> std::ops::Range<usize> {
        let (a, b) = (self.sa[k] as usize, self.sb[k] as usize);
        let live = (self.sec_at[a + 1] - self.sec_at[a]) as usize;
        0..live + (self.first_start[b] - self.first_start[a + 1]) as usize
    }

    /// The `j`-th item of `k`'s [`Component::overlaps`]: `k` itself once, which callers skip.
    fn neighbour(&self, k: usize, j: usize) -> usize {
        let a = self.sa[k] as usize;
        let (at, live) = (self.sec_at[a] as usize, (self.sec_at[a + 1] - self.sec_at[a]) as usize);
        if j < live {
            self.sec_items[at + j] as usize
        } else {
            self.by_start[self.first_start[a + 1] as usize + j - live] as usize
        }
    }

    /// Item `k`'s time-overlapping items (not `k`) and its count of unplaced ones, as the
    /// search reads them (for tests).
    #[cfg(test)]
    pub(super) fn neighbours(&self, k: usize) -> (Vec<usize>, u32) {
        let mut out: Vec<usize> = self
            .overlaps(k)
            .map(|j| self.neighbour(k, j))
            .filter(|&u| u != k)
            .collect();
        out.sort_unstable();
        (out, self.open[k])
    }

    pub(super) fn solve(&mut self, budget: &mut Budget) -> Res {
        if (0..self.size.len()).any(|k| self.low[k].saturating_add(self.size[k]) > self.cap) {
            return Res::Fail;
        }
        // Items that overlap nothing go straight to their lowest offset.
        for k in 0..self.size.len() {
            if self.open[k] == 0 {
                self.set(k, self.low[k]);
            }
        }
        // Restarts: each branching order gets a node limit in turn, the limit doubling every
        // round. Search times are heavy-tailed, and an order that stalls on one instance is
        // often quick with another. A run that ends (found or failed) is final: every order
        // explores all canonical packings.
        let sections = self.load.len() as u32;
        let (trail, log, hash) = (self.trail.len(), self.log.len(), self.hash);
        let mut limit = RESTART_NODES;
        loop {
            for order in 0..ORDERS {
                self.order = order as usize;
                self.rerank(0, sections);
                self.rank_trail.clear();
                self.new_cut = false;
                budget.local = budget.used.saturating_add(limit);
                self.reference = None;
                match self.search(0, sections, false, budget) {
                    Res::Abort if !budget.exhausted() => self.undo(trail, log, (0, 0), hash),
                    res => return res,
                }
            }
            limit = limit.saturating_mul(2);
        }
    }

    /// The rank key of item `k` in the current order, larger first, with `load` its heaviest
    /// section now: 0: load, lifetime, area; 1: load, area, lifetime; 2: lifetime, area,
    /// load; 3: sections spanned times size, then load; 4: sections spanned times load, then
    /// size. (Measured on MiniMalloc's challenging instances: each order solves some quickly
    /// that the others do not.)
    fn rank_key(&self, k: usize, load: u64) -> RankKey {
        let (size, width) = (self.size[k], self.width[k]);
        let area = width.saturating_mul(size);
        let span = u64::from(self.sb[k] - self.sa[k]);
        match self.order {
            0 => (load, width, area),
            1 => (load, area, width),
            2 => (width, area, load),
            3 => (span.saturating_mul(size), load, 0),
            _ => (span.saturating_mul(load), size, 0),
        }
    }

    /// Ranks the unplaced items of sections `lo..hi` afresh, from the loads left now (index
    /// breaks ties). The old ranks go on `rank_trail`.
    fn rerank(&mut self, lo: u32, hi: u32) {
        let mut items: Vec<(RankKey, u32)> = Vec::new();
        let mut node = self.first_unplaced(lo, hi);
        while let Some(k) = self.item_at(node, hi) {
            node = self.next[node] as usize;
            let load = (self.sa[k]..self.sb[k])
                .map(|t| self.load[t as usize])
                .max()
                .unwrap_or(0);
            items.push((self.rank_key(k, load), k as u32));
        }
        items.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (r, &(_, k)) in items.iter().enumerate() {
            self.rank_trail.push((k, self.rank[k as usize]));
            self.rank[k as usize] = r as u32;
        }
    }

    /// Marks `k` placed at `x`: loads, counts of unplaced neighbours, the log.
    fn set(&mut self, k: usize, x: u64) {
        self.placed[k] = true;
        self.unlink(k);
        self.retop(k);
        self.off[k] = x;
        self.flip(k, self.low[k]);
        self.remaining -= 1;
        for t in self.sa[k]..self.sb[k] {
            self.load[t as usize] -= self.size[k];
        }
        for b in self.sa[k] + 1..self.sb[k] {
            self.cut[b as usize] -= 1;
            self.new_cut |= self.cut[b as usize] == 0;
        }
        for j in self.overlaps(k) {
            let u = self.neighbour(k, j);
            if !self.placed[u] {
                self.open[u] -= 1;
            }
        }
        self.log.push(k as u32);
    }

    /// Places `v` at its lowest offset and propagates; false when a consequence cannot fit.
    fn place(&mut self, v: usize) -> bool {
        let x = self.low[v];
        self.new_cut = false;
        self.last_placed = v as u32;
        self.floor = x;
        self.floor_rank = self.rank[v] + 1;
        self.set(v, x);
        let t = x + self.size[v];
        for j in self.overlaps(v) {
            let u = self.neighbour(v, j);
            if self.placed[u] || t <= self.top[u] {
                continue;
            }
            self.trail.push((u as u32, self.top[u], self.low[u]));
            self.top[u] = t;
            let old = self.low[u];
            self.low[u] = self.lowest(u, t);
            if self.low[u] != old {
                self.flip(u, old);
                self.flip(u, self.low[u]);
                self.retop(u);
            }
            if self.low[u].saturating_add(self.size[u]) > self.cap {
                return false;
            }
        }
        for j in self.overlaps(v) {
            let u = self.neighbour(v, j);
            if !self.placed[u] && self.open[u] == 0 {
                self.set(u, self.low[u]);
            }
        }
        true
    }

    fn undo(&mut self, trail: usize, log: usize, floor: (u64, u32), hash: (u64, u64)) {
        self.hash = hash;
        while self.trail.len() > trail {
            let Some((u, top, low)) = self.trail.pop() else {
                break;
            };
            let u = u as usize;
            self.top[u] = top;
            if self.low[u] != low {
                self.low[u] = low;
                // A placed item's slot is refilled when its placement is undone, below.
                if !self.placed[u] {
                    self.retop(u);
                }
            }
        }
        while self.log.len() > log {
            let Some(k) = self.log.pop() else { break };
            let k = k as usize;
            self.placed[k] = false;
            self.relink(k);
            self.retop(k);
            self.remaining += 1;
            for t in self.sa[k]..self.sb[k] {
                self.load[t as usize] += self.size[k];
            }
            for b in self.sa[k] + 1..self.sb[k] {
                self.cut[b as usize] += 1;
            }
            for j in self.overlaps(k) {
                let u = self.neighbour(k, j);
                if u != k && !self.placed[u] {
                    self.open[u] += 1;
                }
            }
        }
        (self.floor, self.floor_rank) = floor;
    }

    /// The first list node at or after the items starting in section `lo` whose item is
    /// unplaced. Placed items are unlinked from the list, so scans over the unplaced ones
    /// skip them; an unlinked node still points forward past nodes unlinked before it (they
    /// are relinked only after it), so starting from one skips no unplaced item.
    fn first_unplaced(&self, lo: u32, hi: u32) -> usize {
        let r = self.in_range(lo, hi);
        let mut node = r.start + 1;
        while node <= r.end && self.placed[self.by_start[node - 1] as usize] {
            node = self.next[node] as usize;
        }
        node
    }

    /// The item at list node `node` when it starts before section `hi`.
    fn item_at(&self, node: usize, hi: u32) -> Option<usize> {
        let k = *self.by_start.get(node.checked_sub(1)?)? as usize;
        (self.sa[k] < hi).then_some(k)
    }

    fn unlink(&mut self, k: usize) {
        let x = self.pos[k] as usize + 1;
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    /// Undoes `unlink(k)`; unlinks must be undone in reverse order.
    fn relink(&mut self, k: usize) {
        let x = self.pos[k] as usize + 1;
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p as usize] = x as u32;
        self.prev[n as usize] = x as u32;
    }

    /// Items whose sections start in `lo..hi`, as a range of `by_start`.
    fn in_range(&self, lo: u32, hi: u32) -> std::ops::Range<usize> {
        self.first_start[lo as usize] as usize..self.first_start[hi as usize] as usize
    }

    /// Nearly every check fails, mostly in the section that failed last or in one the last
    /// placement touched: trying those alone is much cheaper than the full pass.
    fn likely_fails(&mut self, lo: u32, hi: u32) -> bool {
        let last = self.last_placed;
        let likely = [self.last_fail].into_iter().chain(
            (last != NONE)
                .then(|| self.sa[last as usize]..self.sb[last as usize])
                .into_iter()
                .flatten(),
        );
        for t in likely {
            if (lo..hi).contains(&t) && self.section_fails(t as usize) {
                self.last_fail = t;
                return true;
            }
        }
        false
    }

    /// The section check of [`Component::full_check`] over `lo..hi`, trying only the
    /// sections whose inputs changed since [`Component::reference`]: those of the items
    /// placed since, of the items whose lowest offset may have moved, and, when the floor
    /// moved, of the items below the higher of the two floors. The others passed then and
    /// see the same items at the same offsets now. Sections go in order, so the first that
    /// fails is the one the full check would report.
    fn check(&mut self, lo: u32, hi: u32) -> bool {
        let Some((trail, log, floor)) = self.reference else {
            return self.full_check(lo, hi);
        };
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.clear();
        let span = |k: usize| (self.sa[k].max(lo), self.sb[k].min(hi));
        dirty.extend(
            self.trail[trail..]
                .iter()
                .map(|&(u, _, _)| span(u as usize)),
        );
        dirty.extend(self.log[log..].iter().map(|&k| span(k as usize)));
        if floor != self.floor {
            let f = floor.max(self.floor);
            let mut node = self.first_unplaced(lo, hi);
            while let Some(k) = self.item_at(node, hi) {
                node = self.next[node] as usize;
                if self.low[k] < f {
                    dirty.push(span(k));
                }
            }
        }
        dirty.retain(|&(a, b)| a < b);
        dirty.sort_unstable();
        let mut done = lo;
        let mut failed = None;
        'ranges: for &(a, b) in &dirty {
            for t in a.max(done)..b {
                if self.section_fails(t as usize) {
                    failed = Some(t);
                    break 'ranges;
                }
            }
            done = done.max(b);
        }
        self.dirty = dirty;
        // The full pass sets `last_fail` only when it fails, and then to its first failing
        // section, which must be this one.
        #[cfg(debug_assertions)]
        {
            let full = self.full_check(lo, hi);
            debug_assert_eq!(full, failed.is_none(), "incremental section check");
            if let Some(t) = failed {
                debug_assert_eq!(self.last_fail, t, "first failing section");
            }
        }
        if let Some(t) = failed {
            self.last_fail = t;
        }
        failed.is_none()
    }

    /// Section inference over sections `lo..hi`: the unplaced items live in a section stack
    /// above the lowest offset any of them can take; and those that cannot go that low stack
    /// above the next lowest offset any of them can take. `search` tries the likely sections
    /// (`likely_fails`) before it, at every node, so this pass does not repeat them.
    fn full_check(&mut self, lo: u32, hi: u32) -> bool {
        let (lo, hi) = (lo as usize, hi as usize);
        self.scratch[lo..hi].fill((u64::MAX, 0, u64::MAX));
        let mut node = self.first_unplaced(lo as u32, hi as u32);
        while let Some(k) = self.item_at(node, hi as u32) {
            node = self.next[node] as usize;
            let v = self.low[k].max(self.floor);
            let size = self.size[k];
            self.scanned = self
                .scanned
                .saturating_add(u64::from(self.sb[k] - self.sa[k]) + 1);
            for t in self.sa[k]..self.sb[k] {
                let s = &mut self.scratch[t as usize];
                if v < s.0 {
                    *s = (v, size, s.0);
                } else if v == s.0 {
                    s.1 += size;
                } else if v < s.2 {
                    s.2 = v;
                }
            }
        }
        let failed = self.scratch[lo..hi]
            .iter()
            .zip(&self.load[lo..hi])
            .position(|(&(l1, s1, l2), &load)| !self.stack_fits(l1, s1, l2, load));
        if let Some(t) = failed {
            self.last_fail = (lo + t) as u32;
        }
        failed.is_none()
    }

    /// The section check for one section: `l1` the lowest offset its unplaced items can take
    /// (at or above the floor), `s1` the bytes of those that can take no higher one, `l2` the
    /// next lowest offset, `load` the bytes of all of them.
    fn stack_fits(&self, l1: u64, s1: u64, l2: u64, load: u64) -> bool {
        load == 0
            || (l1.saturating_add(load) <= self.cap
                && (l2 == u64::MAX || l2.saturating_add(load - s1) <= self.cap))
    }

    /// The section check of [`Component::full_check`] on section `t` alone.
    fn section_fails(&mut self, t: usize) -> bool {
        let (mut l1, mut s1, mut l2) = (u64::MAX, 0, u64::MAX);
        let items = &self.sec_items[self.sec_at[t] as usize..self.sec_at[t + 1] as usize];
        self.scanned = self.scanned.saturating_add(items.len() as u64);
        for &k in items {
            let k = k as usize;
            if self.placed[k] {
                continue;
            }
            let v = self.low[k].max(self.floor);
            if v < l1 {
                (l1, s1, l2) = (v, self.size[k], l1);
            } else if v == l1 {
                s1 += self.size[k];
            } else if v < l2 {
                l2 = v;
            }
        }
        !self.stack_fits(l1, s1, l2, self.load[t])
    }

    /// What [`Tops`] gives `branch`, by a sweep over the unplaced items of `lo..hi`: the
    /// lowest top, the item reaching it (`usize::MAX`: none), the second lowest top; and in
    /// `found`, the positions of the items below the lowest top and of that item.
    fn sweep_tops(&self, lo: u32, hi: u32, found: &mut Vec<u32>) -> (u64, usize, u64) {
        let (mut m1, mut a1, mut m2) = (u64::MAX, usize::MAX, u64::MAX);
        let mut node = self.first_unplaced(lo, hi);
        while let Some(k) = self.item_at(node, hi) {
            node = self.next[node] as usize;
            let t = self.low[k].saturating_add(self.size[k]);
            if t < m1 {
                (m2, m1, a1) = (m1, t, k);
            } else if t < m2 {
                m2 = t;
            }
        }
        let mut node = self.first_unplaced(lo, hi);
        while let Some(k) = self.item_at(node, hi) {
            node = self.next[node] as usize;
            if self.low[k] < m1 || k == a1 {
                found.push(self.pos[k]);
            }
        }
        (m1, a1, m2)
    }

    /// Appends to `parts` the sides of `lo..hi`: the runs of sections whose unplaced items
    /// overlap, in order.
    fn sweep_sides(&mut self, lo: u32, hi: u32) {
        let mut cur: Option<(u32, u32)> = None;
        let mut node = self.first_unplaced(lo, hi);
        while let Some(k) = self.item_at(node, hi) {
            node = self.next[node] as usize;
            let (a, b) = (self.sa[k], self.sb[k]);
            cur = match cur {
                Some((s, e)) if a < e => Some((s, e.max(b))),
                Some(done) => {
                    self.parts.push(done);
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        self.parts.extend(cur);
    }

    /// Places every unplaced item of sections `lo..hi`. Where no unplaced item crosses a
    /// section boundary, the two sides are solved one after the other: a failure on one side
    /// cannot be mended by another order on the other side. When the last placement opened
    /// such a boundary, each side starts afresh: floor 0, ranks from the loads left.
    ///
    /// `whole` says that `lo..hi` was one side (no boundary split its unplaced items)
    /// before the last placement.
    fn search(&mut self, lo: u32, hi: u32, whole: bool, budget: &mut Budget) -> Res {
        // Most placements fail the section check at once: find that before splitting the
        // range (the check over all of it, with this floor, is sound). It counts as a node.
        let fails = self.likely_fails(lo, hi);
        self.charge(budget);
        if fails {
            return if budget.tick() { Res::Fail } else { Res::Abort };
        }
        let base = self.parts.len();
        if let Some(tops) = self.tops.as_ref().filter(|_| whole && !self.new_cut) {
            // Still one side: a boundary where the unplaced items fall apart would have had
            // its last crossing item placed just now, which sets `new_cut`. So the side runs
            // from the first unplaced item's start to the last end, no sweep needed.
            let side = self
                .item_at(self.first_unplaced(lo, hi), hi)
                .map(|k| (self.sa[k], tops.lowest(self.in_range(lo, hi)).end));
            #[cfg(debug_assertions)]
            {
                self.sweep_sides(lo, hi);
                assert_eq!(self.parts[base..], *Vec::from_iter(side));
                self.parts.truncate(base);
            }
            self.parts.extend(side);
        } else {
            self.sweep_sides(lo, hi);
        }
        if self.parts.len() == base {
            return Res::Found;
        }
        let fresh = std::mem::take(&mut self.new_cut);
        // The sides are checked together, with the floor this prefix has reached, before
        // each is searched from floor 0 (a part's own check sees only its own range).
        let checked = fresh || self.parts.len() - base > 1;
        if checked && !self.check(lo, hi) {
            self.parts.truncate(base);
            return Res::Fail;
        }
        // What the sides' searches compare with: this check, when it ran.
        let eval = (self.trail.len(), self.log.len(), self.floor);
        let floor = if fresh {
            (0, 0)
        } else {
            (self.floor, self.floor_rank)
        };
        let epoch = self.epoch;
        let mut res = Res::Found;
        for p in base..self.parts.len() {
            let (s, e) = self.parts[p];
            (self.floor, self.floor_rank) = floor;
            let ranks = self.rank_trail.len();
            if fresh {
                self.rerank(s, e);
                self.epoch = self.hash.0 ^ mix(u64::from(s) << 32 | u64::from(e));
            }
            // Solving one side changes nothing the check saw on the others.
            self.checked = checked;
            if checked {
                self.reference = Some(eval);
            }
            res = self.branch(s, e, budget);
            while self.rank_trail.len() > ranks {
                let Some((k, r)) = self.rank_trail.pop() else {
                    break;
                };
                self.rank[k as usize] = r;
            }
            self.epoch = epoch;
            if !matches!(res, Res::Found) {
                break;
            }
        }
        self.parts.truncate(base);
        res
    }

    /// Counts the section checks' reads since the last call against `budget`
    /// ([`Budget::scan`]).
    fn charge(&mut self, budget: &mut Budget) {
        budget.scan(std::mem::take(&mut self.scanned));
    }

    /// Branches on the next item of one connected group of sections `lo..hi`.
    fn branch(&mut self, lo: u32, hi: u32, budget: &mut Budget) -> Res {
        let checked = std::mem::take(&mut self.checked);
        self.charge(budget);
        if !budget.tick() {
            return Res::Abort;
        }
        budget.deepest = budget.deepest.max(self.log.len());
        let key = (self.hash.0, self.hash.1 ^ self.epoch, lo, hi);
        let here = (self.floor, self.floor_rank);
        if self.memos[self.order]
            .get(&key)
            .is_some_and(|&failed| failed <= here)
        {
            return Res::Fail;
        }
        if !checked && !self.check(lo, hi) {
            return Res::Fail;
        }
        // The state each candidate's search compares its checks with.
        let eval = if checked {
            self.reference
        } else {
            Some((self.trail.len(), self.log.len(), self.floor))
        };
        // The two lowest tops any unplaced item can reach: nothing may start at or above
        // the lowest of the others' (it would leave a hole that item fits in).
        // Only items below the lowest (and the one reaching it, below the second) can be
        // candidates: `found` lists those, in `by_start` order.
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        let (m1, a1, m2) = match &self.tops {
            Some(tops) => {
                let range = self.in_range(lo, hi);
                let lowest = tops.lowest(range.clone());
                tops.below(range, lowest.t1, lowest.p1, &mut found);
                let a1 = match lowest.p1 {
                    NONE => usize::MAX,
                    p => self.by_start[p as usize] as usize,
                };
                #[cfg(debug_assertions)]
                {
                    let mut swept = Vec::new();
                    let sweep = self.sweep_tops(lo, hi, &mut swept);
                    assert_eq!((sweep, &swept), ((lowest.t1, a1, lowest.t2), &found));
                }
                (lowest.t1, a1, lowest.t2)
            }
            None => self.sweep_tops(lo, hi, &mut found),
        };
        budget.spend(found.len());
        if self.size.len() >= WORK_COUNTS_FROM {
            // On a component this large a node's cost is its candidate scan, not one step:
            // count the scan against the node budget too, so the budget bounds the work.
            budget.used = budget.used.saturating_add(found.len() as u64);
        }
        let base = self.cands.len();
        for &p in &found {
            let k = self.by_start[p as usize] as usize;
            let l = self.low[k];
            let limit = if k == a1 { m2 } else { m1 };
            if (l, self.rank[k] + 1) <= (self.floor, self.floor_rank) || l >= limit {
                continue;
            }
            let tw = self.twin[k];
            if tw != NONE && !self.placed[tw as usize] {
                continue;
            }
            self.cands.push(k as u32);
        }
        self.found = found;
        let (low, rank) = (&self.low, &self.rank);
        self.cands[base..].sort_unstable_by_key(|&k| (low[k as usize], rank[k as usize]));
        let end = self.cands.len();
        let floor = (self.floor, self.floor_rank);
        let hash = self.hash;
        let mut res = Res::Fail;
        for c in base..end {
            let v = self.cands[c] as usize;
            let (trail, log) = (self.trail.len(), self.log.len());
            self.reference = eval;
            if self.place(v) {
                match self.search(lo, hi, true, budget) {
                    Res::Found => {
                        res = Res::Found;
                        break;
                    }
                    Res::Abort => {
                        res = Res::Abort;
                        break;
                    }
                    Res::Fail => {}
                }
            }
            self.undo(trail, log, floor, hash);
        }
        self.cands.truncate(base);
        if matches!(res, Res::Fail) {
            let memo = &mut self.memos[self.order];
            if memo.len() >= MEMO_ENTRIES {
                memo.clear();
            }
            let e = memo.entry(key).or_insert(here);
            *e = (*e).min(here);
        }
        res
    }
}
