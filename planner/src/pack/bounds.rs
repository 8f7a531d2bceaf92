//! Placing items in a given order, and the lower bounds a packing is certified against.

use std::collections::BTreeMap;
use std::vec::Vec;

use crate::plan::align_up;

use super::gaps::GapRule;
use super::greedy::Placer;
use super::problem::{Certificate, Packing, Problem};

/// Places items one by one: fixed items at their offsets, then unspillable items in `order`,
/// then spillable ones in `order`, each at the lowest aligned offset where it overlaps no
/// time-overlapping item placed so far. A spillable item whose end would pass the capacity
/// is spilled; an item in neither `order` nor fixed is left out.
pub fn place_in_order(problem: &Problem, order: &[usize]) -> Packing {
    place_in_order_by(problem, order, GapRule::Lowest)
}

/// [`place_in_order`] with a choice of gap rule.
pub fn place_in_order_by(problem: &Problem, order: &[usize], rule: GapRule) -> Packing {
    Placer::new(problem).place_with_spill(order, rule)
}

/// The largest sum of sizes, each rounded up to its alignment, live at one op (`LB16` when
/// every alignment is 16): a figure for benchmarks and for comparing with other planners'
/// reports, not a lower bound.
///
/// A packing can beat it, because the highest item needs no padding after it: two 10-byte
/// items aligned to 16 fit in 26 bytes, not 32. [`height_lower_bound`] is the bound that no
/// packing beats, the one reports print; the two are equal when every size is a multiple of
/// its alignment.
pub fn aligned_live_sum(problem: &Problem) -> u64 {
    aligned_live_sum_of(problem, None)
}

/// [`aligned_live_sum`] of the items `placed` marks (all when `None`).
fn aligned_live_sum_of(problem: &Problem, placed: Option<&[bool]>) -> u64 {
    let mut events: Vec<(u32, i128)> = Vec::with_capacity(problem.items.len() * 2);
    for (i, it) in problem.items.iter().enumerate() {
        if it.start > it.end || placed.is_some_and(|p| !p.get(i).copied().unwrap_or(false)) {
            continue;
        }
        let size = align_up(it.size, it.align).unwrap_or(u64::MAX);
        events.push((it.start, i128::from(size)));
        if let Some(after) = it.end.checked_add(1) {
            events.push((after, -i128::from(size)));
        }
    }
    events.sort_unstable();
    let mut cur = 0i128;
    let mut best = 0i128;
    for (_, d) in events {
        cur += d;
        best = best.max(cur);
    }
    u64::try_from(best).unwrap_or(u64::MAX)
}

/// A lower bound on the height of any packing of `problem`'s items: no packing is lower.
///
/// At every op, the items live there sit in disjoint byte ranges. Of those whose alignment
/// is at least `a`, each starts at a multiple of `a`, so each but the highest takes its size
/// rounded up to `a`; the bound is the largest, over ops and over the alignments present, of
/// the sum of the sizes so rounded less the largest rounding of one item. With `a = 1` that
/// is the plain sum of the sizes live at one op; when every size is a multiple of its
/// alignment it equals [`aligned_live_sum`]. The highest end of a fixed item is a bound too.
pub fn height_lower_bound(problem: &Problem) -> u64 {
    lower_bound_of(problem, None)
}

/// [`height_lower_bound`] of the items `included` marks (all when `None`).
pub(crate) fn lower_bound_of(problem: &Problem, included: Option<&[bool]>) -> u64 {
    let items = &problem.items;
    let counted = |i: usize| included.is_none_or(|m| m.get(i).copied().unwrap_or(false));
    let mut best = items
        .iter()
        .enumerate()
        .filter(|&(i, _)| counted(i))
        .filter_map(|(_, it)| it.fixed.map(|o| o.saturating_add(it.size)))
        .max()
        .unwrap_or(0);
    let live: Vec<usize> = (0..items.len())
        .filter(|&i| counted(i) && items[i].size > 0 && items[i].start <= items[i].end)
        .collect();
    let mut classes: Vec<u64> = live.iter().map(|&i| items[i].align.max(1)).collect();
    classes.push(1);
    classes.sort_unstable();
    classes.dedup();
    // Per class: sum of rounded sizes live now, and how many live items have each rounding.
    let mut sums = vec![0u128; classes.len()];
    let mut pads: Vec<BTreeMap<u64, u32>> = vec![BTreeMap::new(); classes.len()];
    // (time, is_start, item): at one time, ends (the op after the last) before starts.
    let mut events: Vec<(u32, bool, usize)> = Vec::with_capacity(live.len() * 2);
    for &i in &live {
        events.push((items[i].start, true, i));
        if let Some(after) = items[i].end.checked_add(1) {
            events.push((after, false, i));
        }
    }
    events.sort_unstable();
    let mut k = 0;
    while k < events.len() {
        let time = events[k].0;
        while k < events.len() && events[k].0 == time {
            let (_, add, i) = events[k];
            let it = &items[i];
            for (c, &a) in classes.iter().enumerate() {
                if a > it.align.max(1) {
                    break;
                }
                let rounded = align_up(it.size, a).unwrap_or(u64::MAX);
                let pad = rounded - it.size;
                if add {
                    sums[c] += u128::from(rounded);
                    *pads[c].entry(pad).or_insert(0) += 1;
                } else {
                    sums[c] -= u128::from(rounded);
                    if let Some(n) = pads[c].get_mut(&pad) {
                        *n -= 1;
                        if *n == 0 {
                            pads[c].remove(&pad);
                        }
                    }
                }
            }
            k += 1;
        }
        for c in 0..classes.len() {
            if let Some((&pad, _)) = pads[c].last_key_value() {
                let v = sums[c] - u128::from(pad);
                best = best.max(u64::try_from(v).unwrap_or(u64::MAX));
            }
        }
    }
    best
}

/// The certificate of `packing`: its height against the bounds of the items it placed.
pub fn certify(problem: &Problem, packing: &Packing) -> Certificate {
    certify_known(problem, packing, None)
}

/// What a run knows of the set of items its first stage placed, which the searches after it
/// keep: their [`lower_bound_of`], and their [`aligned_live_sum`] once a report has taken it.
/// A certificate of a packing of exactly those items need not sweep every item again (on
/// 10^6 items each sweep sorts 2 x 10^6 events).
#[derive(Debug)]
pub(super) struct Known {
    pub(super) placed: Vec<bool>,
    pub(super) bound: u64,
    pub(super) aligned: std::cell::OnceCell<u64>,
}

/// [`certify`], with what is [`Known`] of a set of placed items, used when the packing
/// places exactly those items.
pub(super) fn certify_known(
    problem: &Problem,
    packing: &Packing,
    known: Option<&Known>,
) -> Certificate {
    let placed: Vec<bool> = packing.offsets.iter().map(Option::is_some).collect();
    let (bound, aligned) = match known {
        Some(k) if k.placed == placed => (
            k.bound,
            *k.aligned
                .get_or_init(|| aligned_live_sum_of(problem, Some(&placed))),
        ),
        _ => (
            lower_bound_of(problem, Some(&placed)),
            aligned_live_sum_of(problem, Some(&placed)),
        ),
    };
    Certificate::new(packing.height, bound, aligned)
}
