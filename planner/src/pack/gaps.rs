//! Choosing a gap among placed byte ranges: the one step of placing an item that the
//! greedy engine ([`super::greedy`]) and the busy tree ([`super::busy`]) share, below both.

use std::vec::Vec;

use crate::plan::align_up;

/// How a gap is chosen among the free ranges where an item fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GapRule {
    /// The lowest aligned offset where the item fits (first fit).
    Lowest,
    /// The smallest free range between placed items where the item fits (best fit), lowest
    /// first among equal ones; above everything when no such range exists.
    BestFit,
}

/// Reused buffers of [`sort_starts`].
#[derive(Debug, Clone, Default)]
pub(crate) struct SortScratch {
    out: Vec<(u64, u64)>,
    ends: Vec<u32>,
}

/// Sorts ranges by start (ties in any order: [`choose_gap`] does not look at them).
///
/// Placing an item sorts its placed neighbours, hundreds of them on dense problems, and that
/// sort was half the time of a greedy pass. Above a few dozen ranges this distributes them
/// into about as many buckets as ranges by their start, then sorts each (mostly one or two
/// ranges) on its own: linear time when the starts are spread, as offsets in an arena are.
pub(crate) fn sort_starts(busy: &mut Vec<(u64, u64)>, scratch: &mut SortScratch) {
    let n = busy.len();
    if n < 64 {
        busy.sort_unstable_by_key(|&(lo, _)| lo);
        return;
    }
    let (min, max) = busy
        .iter()
        .fold((u64::MAX, 0), |(a, b), &(lo, _)| (a.min(lo), b.max(lo)));
    let bucket_bits = n.next_power_of_two().trailing_zeros();
    let span_bits = u64::BITS - (max - min).leading_zeros();
    let shift = span_bits.saturating_sub(bucket_bits);
    let bucket = |lo: u64| ((lo - min) >> shift) as usize;
    let ends = &mut scratch.ends;
    ends.clear();
    ends.resize((1usize << bucket_bits) + 1, 0);
    for &(lo, _) in busy.iter() {
        ends[bucket(lo) + 1] += 1;
    }
    for b in 1..ends.len() {
        ends[b] += ends[b - 1];
    }
    // `ends[b]` is where bucket `b` starts; filling moves it to where it ends.
    let out = &mut scratch.out;
    out.clear();
    out.resize(n, (0, 0));
    for &r in busy.iter() {
        let b = bucket(r.0);
        out[ends[b] as usize] = r;
        ends[b] += 1;
    }
    let mut start = 0usize;
    for &end in &ends[..ends.len() - 1] {
        let end = end as usize;
        if end - start > 1 {
            out[start..end].sort_unstable_by_key(|&(lo, _)| lo);
        }
        start = end;
    }
    std::mem::swap(busy, out);
}

/// Picks an aligned offset for `size` bytes among `busy` ranges sorted by start.
pub(crate) fn choose_gap(busy: &[(u64, u64)], size: u64, align: u64, rule: GapRule) -> u64 {
    if size == 0 {
        return 0; // takes no bytes, overlaps nothing
    }
    // `top` is the end of everything seen so far: free space runs from it to the next start.
    let mut top = 0u64;
    let mut best: Option<(u64, u64)> = None; // (gap length, offset)
    for &(lo, hi) in busy {
        if lo > top {
            let off = align_up(top, align).unwrap_or(u64::MAX);
            if off.saturating_add(size) <= lo {
                match rule {
                    GapRule::Lowest => return off,
                    GapRule::BestFit => {
                        let gap = lo - top;
                        if best.is_none_or(|(g, _)| gap < g) {
                            best = Some((gap, off));
                        }
                    }
                }
            }
        }
        top = top.max(hi);
    }
    match best {
        Some((_, off)) => off,
        None => align_up(top, align).unwrap_or(u64::MAX),
    }
}
