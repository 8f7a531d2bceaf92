//! The `tflm` planner: TensorFlow Lite Micro's `GreedyMemoryPlanner`, rebuilt from its
//! documented behaviour, so that `planner compare` can say what TFLM would need for the same
//! tensors.
//!
//! What TFLM does, and what this planner does the same way:
//!
//! - **Sizes.** Every buffer's size is rounded up to 16 bytes (`MicroArenaBufferAlignment`)
//!   before it reaches the planner, and the planner works on those rounded sizes only: offsets
//!   are sums of them, so every offset is a multiple of 16, and the arena it asks for (the
//!   "head" of TFLM's arena) is the highest rounded end, padding of the top buffer included.
//!   Here the unit is 16, or the largest alignment among the items when one asks for more, so
//!   that every offset stays aligned.
//! - **Order.** Buffers with an offline-planned offset (here: fixed items) go first at their
//!   offsets. The others are placed largest rounded size first. TFLM fills its sort array
//!   from the back in the order the buffers were added (tensor index order, then kernel
//!   scratch buffers) and sorts it with a stable descending bubble sort, so among equal
//!   sizes the buffer added *last* goes first: ties go to the higher item index.
//! - **Gap.** Each buffer takes the lowest offset where it overlaps, in bytes, none of the
//!   already placed buffers whose lifetime overlaps its own: TFLM walks those buffers in
//!   offset order and stops at the first gap (between the highest end seen so far and the
//!   next buffer's offset) that holds it, else goes above them all. That walk finds exactly
//!   the lowest free offset, which is what the shared placement engine computes.
//!
//! - **Head.** The bytes TFLM reserves are the highest end of the rounded buffers, so a
//!   plan's end is rounded up to 16 ([`head`]) even for buffers TFLM does not place itself:
//!   an exported model's offline offsets come with their tensors' unrounded sizes, and TFLM
//!   rounds those too.
//!
//! What TFLM has no notion of, and this planner adds: a spillable item whose rounded end
//! would pass the arena's capacity is left out (spilled to the next memory), and items
//! pinned to the arena (unspillable) are placed before spillable ones. With one bank and no
//! pins, which is TFLM's setting, neither rule changes anything.
//!
//! Lifetimes are the pipeline's ([`crate::lifetimes`]); they agree with TFLM's allocation
//! scopes (model inputs live from the first op, outputs to the last, every other activation
//! from its producer to its last reader). TFLM also plans the scratch buffers its kernels
//! request at `Prepare` time, which a `.tflite` file does not describe: on models whose
//! kernels ask for them, TFLM's head is larger than this planner's height (see `docs/tflm.md`
//! and `tests/data/tflm_figures.json`).

use std::sync::Arc;
use std::vec::Vec;

use super::gaps::GapRule;
use super::greedy::Placer;
use super::{Item, Packing, Problem};
use crate::plan::align_up;

/// TFLM's `MicroArenaBufferAlignment()`: every buffer size is rounded up to it.
pub const TFLM_ALIGNMENT: u64 = 16;

/// TFLM's head for a plan whose buffers sit at multiples of 16 and whose highest end is
/// `end`: TFLM rounds every buffer's size up to 16 before planning it, the offline-planned
/// ones of an exported model too (`CreatePlan`: `AlignSizeUp(bytes,
/// MicroArenaBufferAlignment())`), and its head is the highest rounded end
/// (`GetMaximumMemorySize`), which is `end` rounded up to 16. A plan of unrounded sizes (any
/// planner but this one) can end 1 to 15 bytes below the head TFLM reserves for it.
pub fn head(end: u64) -> u64 {
    align_up(end, TFLM_ALIGNMENT).unwrap_or(u64::MAX)
}

/// The problem TFLM's planner sees: every size rounded up to the unit (16, or the largest
/// item alignment when larger) and every alignment set to it. Items keep their index, so
/// offsets and spills carry over to `problem` one to one.
pub fn rounded(problem: &Problem) -> Problem {
    let unit = unit(problem);
    Problem {
        items: problem
            .items
            .iter()
            .map(|it| Item {
                size: align_up(it.size, unit).unwrap_or(u64::MAX),
                align: unit,
                ..it.clone()
            })
            .collect(),
        capacity: problem.capacity,
    }
}

/// The rounding unit: 16, or the largest alignment among the items when one is larger.
fn unit(problem: &Problem) -> u64 {
    problem
        .items
        .iter()
        .map(|it| it.align)
        .fold(TFLM_ALIGNMENT, u64::max)
        .max(1)
}

/// TFLM's placement order over the items without a fixed offset: largest rounded size
/// first, ties to the higher index (the buffer TFLM was given last).
pub fn order(rounded: &Problem) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rounded.items.len())
        .filter(|&i| rounded.items[i].fixed.is_none())
        .collect();
    order.sort_unstable_by(|&a, &b| {
        let (sa, sb) = (rounded.items[a].size, rounded.items[b].size);
        sb.cmp(&sa).then(b.cmp(&a))
    });
    order
}

/// Packs `problem` as TFLM's `GreedyMemoryPlanner` would. The height is the highest
/// *rounded* end: the bytes TFLM reserves for these buffers ([`reserved`]), which is the
/// highest end of the buffers themselves rounded up to the unit when nothing is pinned off
/// it (a 22-byte buffer: height 32).
pub fn pack(problem: &Problem) -> Packing {
    pack_over(&Placer::new(problem))
}

/// [`pack`] of `placer`'s problem over the lifetime index `placer` already holds (the
/// rounded problem has the same lifetimes): a second index of 10^6 dense lifetimes took
/// 400 MB more. The placer's counts are left as they are.
pub(crate) fn pack_over(placer: &Placer<'_>) -> Packing {
    let problem = placer.problem;
    let rounded = rounded(problem);
    let order = order(&rounded);
    let mut packing = Placer::with_overlaps(&rounded, Arc::clone(&placer.overlaps))
        .place_with_spill(&order, GapRule::Lowest);
    packing.height = reserved(problem, &packing.offsets);
    packing
}

/// The bytes TFLM reserves for `problem` placed at `offsets`: the highest end of the
/// buffers with each size rounded up to the unit ([`rounded`]; spilled buffers take none).
/// A check of a packing takes this, or the highest unrounded end, as its height.
pub fn reserved(problem: &Problem, offsets: &[Option<u64>]) -> u64 {
    let unit = unit(problem);
    problem
        .items
        .iter()
        .zip(offsets)
        .filter_map(|(it, off)| {
            let size = align_up(it.size, unit).unwrap_or(u64::MAX);
            off.map(|o| o.saturating_add(size))
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::tests::item;

    #[test]
    fn sizes_are_rounded_to_16_and_the_top_padding_counts() {
        let p = Problem {
            items: vec![item(10, 0, 0), item(10, 0, 0)],
            capacity: None,
        };
        let k = pack(&p);
        assert_eq!(k.height, 32);
        // Equal sizes: the later item goes first, at offset 0.
        assert_eq!(k.offsets, vec![Some(16), Some(0)]);
    }

    #[test]
    fn the_height_is_what_tflm_reserves() {
        // One 22-byte buffer: TFLM reserves 32 (the outside audit's `tflm_22.csv`).
        let p = Problem {
            items: vec![item(22, 0, 1)],
            capacity: None,
        };
        let k = pack(&p);
        assert_eq!((k.offsets.clone(), k.height), (vec![Some(0)], 32));
        assert_eq!(reserved(&p, &k.offsets), 32);
        // A spilled buffer takes none.
        assert_eq!(reserved(&p, &[None]), 0);
    }

    #[test]
    fn largest_first_then_lowest_gap() {
        // 0: 48 bytes at ops 0..=1; 1: 32 bytes at ops 2..=3; 2: 16 bytes at ops 1..=2.
        // Order 0, 1, 2: item 1 reuses offset 0, item 2 overlaps both and goes above 0.
        let p = Problem {
            items: vec![item(48, 0, 1), item(32, 2, 3), item(16, 1, 2)],
            capacity: None,
        };
        let k = pack(&p);
        assert_eq!(k.offsets, vec![Some(0), Some(0), Some(48)]);
        assert_eq!(k.height, 64);
    }

    #[test]
    fn the_head_is_the_highest_end_rounded_to_16() {
        // The three unseen models whose TFLM head was the plan's end rounded up.
        assert_eq!(head(86_948), 86_960);
        assert_eq!(head(3_028), 3_040);
        assert_eq!(head(529), 544);
        assert_eq!(head(544), 544);
        assert_eq!(head(0), 0);
        assert_eq!(head(u64::MAX), u64::MAX);
        // The `tflm` planner's height already is a head: the top buffer's padding counts.
        let p = Problem {
            items: vec![item(529, 0, 0)],
            capacity: None,
        };
        assert_eq!(pack(&p).height, head(529));
    }

    #[test]
    fn larger_alignments_raise_the_unit() {
        let mut a = item(40, 0, 0);
        a.align = 64;
        let p = Problem {
            items: vec![a, item(8, 0, 0)],
            capacity: None,
        };
        let k = pack(&p);
        assert_eq!(k.offsets, vec![Some(64), Some(0)]);
        assert_eq!(k.height, 128);
    }
}
