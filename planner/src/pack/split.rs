//! Decomposition of large problems into independent parts.
//!
//! Two facts make it exact:
//! - A time boundary that no item crosses splits a problem in two: items on either side never
//!   overlap in time, so each side packs on its own and the height is the larger of theirs.
//! - Items live over the whole span of a (sub)problem overlap every other item of it at every
//!   op; stacked at the bottom, they add their sizes to the height of the rest, and no packing
//!   does better: at each op their bytes are taken anyway, the same bytes at every op, so the
//!   rest of any packing slides down over them (up to alignment padding, which the stack
//!   rounds to the largest alignment above it).
//!
//! Peeling the second kind often creates boundaries of the first (real traces keep their
//! weights live for the whole program), so the two alternate, recursively. Parts are then
//! planned independently, in parallel when asked: each part's plan depends only on the part,
//! and the parts are put together in a fixed order, so the result does not depend on the
//! number of threads.

use std::vec::Vec;

use super::Problem;
use crate::plan::align_up;

/// Parts smaller than this are not split further: the overhead would outweigh the gain.
const MIN_PART: usize = 32;

/// Deepest recursion (peel, then cut, then peel within a part, ...).
const MAX_DEPTH: u32 = 16;

/// A problem's decomposition: items stacked at fixed offsets and independent parts, each
/// placed above its own base offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// Items peeled off, with their offsets.
    pub(crate) stacked: Vec<(usize, u64)>,
    /// The parts: base offset and the items (indices into the problem, in index order).
    pub(crate) parts: Vec<(u64, Vec<usize>)>,
}

impl Split {
    /// The decomposition of `problem`, or `None` when it has only one part and nothing to
    /// peel, or has fixed items, or a capacity and spillable items (which items spill would
    /// be for the parts to agree on). Under a capacity with nothing spillable the parts are
    /// planned without it: the whole packing fits when its height does.
    pub(crate) fn of(problem: &Problem) -> Option<Split> {
        let items = &problem.items;
        if (problem.capacity.is_some() && items.iter().any(|it| it.spillable))
            || items
                .iter()
                .any(|it| it.fixed.is_some() || it.start > it.end || it.align == 0)
        {
            return None;
        }
        let mut split = Split::default();
        split.decompose(problem, (0..items.len()).collect(), 0, 0);
        (split.parts.len() > 1 || !split.stacked.is_empty()).then_some(split)
    }

    fn decompose(&mut self, problem: &Problem, idx: Vec<usize>, base: u64, depth: u32) {
        let items = &problem.items;
        if idx.is_empty() {
            return;
        }
        if idx.len() < MIN_PART || depth >= MAX_DEPTH {
            self.parts.push((base, idx));
            return;
        }
        let first = idx.iter().map(|&i| items[i].start).min().unwrap_or(0);
        let last = idx.iter().map(|&i| items[i].end).max().unwrap_or(0);
        let (whole, mut rest): (Vec<usize>, Vec<usize>) = idx
            .iter()
            .partition(|&&i| items[i].start == first && items[i].end == last && items[i].size > 0);
        // Stack the whole-span items, largest first.
        let mut stack = whole;
        stack.sort_by_key(|&i| (std::cmp::Reverse(items[i].size), i));
        let mut top = base;
        for &i in &stack {
            let off = align_up(top, items[i].align).unwrap_or(u64::MAX);
            self.stacked.push((i, off));
            top = off.saturating_add(items[i].size);
        }
        let align = rest.iter().map(|&i| items[i].align).max().unwrap_or(1);
        let above = align_up(top, align).unwrap_or(u64::MAX);
        // Cut where no item of the rest crosses.
        rest.sort_by_key(|&i| (items[i].start, i));
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut reach: Option<u32> = None;
        for i in rest {
            match reach {
                Some(r) if items[i].start <= r => {
                    reach = Some(r.max(items[i].end));
                    if let Some(g) = groups.last_mut() {
                        g.push(i);
                    }
                }
                _ => {
                    reach = Some(items[i].end);
                    groups.push(vec![i]);
                }
            }
        }
        if stack.is_empty() && groups.len() <= 1 {
            let mut part = groups.pop().unwrap_or_default();
            part.sort_unstable();
            self.parts.push((base, part));
            return;
        }
        for mut g in groups {
            g.sort_unstable();
            self.decompose(problem, g, above, depth + 1);
        }
    }

    /// The sub-problem of part `k`.
    pub(crate) fn part_problem(&self, problem: &Problem, k: usize) -> Problem {
        Problem {
            items: self.parts[k]
                .1
                .iter()
                .map(|&i| problem.items[i].clone())
                .collect(),
            capacity: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::tests::item;

    #[test]
    fn peels_and_cuts() {
        // Two whole-span weights, then two phases (0-49 and 50-99) of 40 items each.
        let mut items = vec![item(1000, 0, 99), item(500, 0, 99)];
        for k in 0..80u32 {
            let start = if k < 40 { k } else { 10 + k };
            items.push(item(
                8,
                start,
                start + 9.min(if k < 40 { 49 - k } else { 99 - start }),
            ));
        }
        let p = Problem {
            items,
            capacity: None,
        };
        let s = Split::of(&p).unwrap();
        assert_eq!(s.stacked, [(0, 0), (1, 1000)]);
        assert_eq!(s.parts.len(), 2);
        assert!(
            s.parts
                .iter()
                .all(|(base, part)| *base == 1500 && part.len() == 40)
        );
    }

    #[test]
    fn leaves_unsplittable_problems() {
        let p = Problem {
            items: (0..100).map(|k| item(8, k, k + 1)).collect(),
            capacity: None,
        };
        assert!(Split::of(&p).is_none());
        let mut q = p.clone();
        q.capacity = Some(64);
        assert!(Split::of(&q).is_none());
    }

    #[test]
    fn a_capacity_splits_unless_an_item_may_spill() {
        // Two phases of 20 ops that no item crosses, each a chain of two-op items.
        let mut p = Problem {
            items: (0..38)
                .map(|k| {
                    let start = k / 19 * 20 + k % 19;
                    item(8, start, start + 1)
                })
                .collect(),
            capacity: Some(1 << 20),
        };
        assert_eq!(Split::of(&p).map(|s| s.parts.len()), Some(2));
        p.items[3].spillable = true;
        assert!(Split::of(&p).is_none());
        p.capacity = None;
        assert_eq!(Split::of(&p).map(|s| s.parts.len()), Some(2));
    }
}
