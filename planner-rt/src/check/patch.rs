//! The `const fn` check of a model's patch stage: rustc evaluates it on the region tables
//! `include_model!` emits for a plan with `patches`, beside the plan's own [`super::check`].
//!
//! The generated `run()` loops over the patches and hands each stage op views over its
//! tensors' regions: a *dense* view (a stage tensor placed with its largest region's size)
//! is the first `height · width · channels` elements of the tensor's slot, a *whole* view
//! (the split tensor, a resident input) is the whole slot with the region set. This check
//! proves, whatever the tables say:
//!
//! - every region lies inside its tensor's `[1, H, W, C]` shape, and there is one per patch;
//! - a dense region's elements fit the tensor's view (so the generated code never cuts a
//!   region short), and a whole view holds the whole tensor;
//! - a tensor viewed whole (the split tensor, whose tiles accumulate patch after patch; a
//!   resident input, read by every patch) is live over the whole stage (ops `0..=split`),
//!   so its bytes survive the other patches' runs of every stage op, which the plan check
//!   then proves no other tensor touches; a streamed input, filled before each patch's
//!   first op, is live from op 0. A dense tensor needs nothing more than the plan check:
//!   every patch runs the stage's ops in plan order, so it is written and read within one
//!   patch exactly as in a run per layer;
//! - the split tensor's regions (the patches' tiles) partition it: each element is written
//!   by exactly one patch.

use super::{Msg, PlanTable, SlotRow};

/// A model's patch stage, as `const` data.
#[derive(Clone, Copy, Debug)]
pub struct PatchTable<'a> {
    /// The split op (the stage is ops `0..=split`).
    pub split: u32,
    /// Number of patches.
    pub patches: u32,
    /// Every tensor of the stage.
    pub tensors: &'a [PatchRow<'a>],
}

/// One tensor of a patch stage.
#[derive(Clone, Copy, Debug)]
pub struct PatchRow<'a> {
    /// Its slot (index into [`PlanTable::slots`]).
    pub slot: u32,
    /// Its shape `[1, H, W, C]`.
    pub shape: [u64; 4],
    /// True when the stage views it whole (the split tensor, a resident input); false when
    /// dense (its slot holds one region at a time).
    pub whole: bool,
    /// True for the split tensor: its regions are the patches' tiles.
    pub split: bool,
    /// True for a streamed model input: filled before each patch's first op.
    pub streamed: bool,
    /// `[top, left, height, width]` per patch.
    pub regions: &'a [[u32; 4]],
}

/// Checks the patch stage `patches` of the plan `plan`; panics (a compile error) naming
/// the tensor, the patch and the numbers when a rule above is broken.
pub const fn check_patches(plan: &PlanTable<'_>, patches: &PatchTable<'_>) {
    if patches.split as usize >= plan.ops.len() {
        Msg::model(plan)
            .s("the patch stage ends at op ")
            .n(patches.split as u64)
            .has(", but the model has ", plan.ops.len() as u64, " ops")
            .rebuild();
    }
    let mut i = 0;
    while i < patches.tensors.len() {
        check_row(plan, patches, &patches.tensors[i]);
        i += 1;
    }
}

const fn check_row(plan: &PlanTable<'_>, patches: &PatchTable<'_>, row: &PatchRow<'_>) {
    if row.slot as usize >= plan.slots.len() {
        Msg::model(plan).no_slot("the patch table names slot #", row.slot as u64);
    }
    let s = &plan.slots[row.slot as usize];
    if row.regions.len() != patches.patches as usize {
        tensor(plan, s)
            .s(" has ")
            .n(row.regions.len() as u64)
            .s(" regions but the stage runs ")
            .n(patches.patches as u64)
            .s(" patches; give it one region per patch")
            .panic();
    }
    let pinned = if row.whole {
        s.start != 0 || s.end < patches.split
    } else {
        row.streamed && s.start != 0
    };
    if pinned {
        let what = if row.whole {
            " is read or written by every patch"
        } else {
            " is filled before every patch"
        };
        tensor(plan, s)
            .s(what)
            .s(" of the patch stage but is live at ops ")
            .lifetime(s)
            .s(", and every patch runs ops 0..=")
            .n(patches.split as u64)
            .s(" again; re-plan so its lifetime covers the whole stage")
            .panic();
    }
    let [_, h, w, c] = row.shape;
    let whole = mul(mul(h, w), c);
    if row.whole && s.elements != whole {
        tensor(plan, s)
            .s(" is viewed whole by the patch stage but its view has ")
            .n(s.elements)
            .s(" elements, not the shape's ")
            .n(whole)
            .s("; place it whole")
            .panic();
    }
    let mut area = 0u64;
    let mut p = 0;
    while p < row.regions.len() {
        let [top, left, rh, rw] = row.regions[p];
        let (top, left, rh, rw) = (top as u64, left as u64, rh as u64, rw as u64);
        if top + rh > h || left + rw > w {
            region(plan, s, p, row.regions[p])
                .s(" is not inside its shape of ")
                .n(h)
                .s("x")
                .n(w)
                .s(" pixels; fix the region")
                .panic();
        }
        let dense = mul(mul(rh, rw), c);
        if !row.whole && dense > s.elements {
            region(plan, s, p, row.regions[p])
                .s(" holds ")
                .n(mul(dense, s.elem_size))
                .s(" bytes but the tensor is placed with ")
                .n(mul(s.elements, s.elem_size))
                .s(" (its largest region); place it with its largest region's size")
                .panic();
        }
        if row.split {
            area += rh * rw;
            let mut q = 0;
            while q < p {
                if overlap(row.regions[p], row.regions[q]) {
                    region(plan, s, p, row.regions[p])
                        .s(" overlaps the tile of patch ")
                        .n(q as u64)
                        .s("; the split tensor's tiles must partition it")
                        .panic();
                }
                q += 1;
            }
        }
        p += 1;
    }
    if row.split && area != mul(h, w) {
        tensor(plan, s)
            .s(" is the split tensor, but its tiles cover ")
            .n(area)
            .s(" of its ")
            .n(mul(h, w))
            .s(" pixels; the split tensor's tiles must partition it")
            .panic();
    }
}

/// True when two `[top, left, height, width]` regions share a pixel.
const fn overlap(a: [u32; 4], b: [u32; 4]) -> bool {
    let (at, al, ab, ar) = (
        a[0] as u64,
        a[1] as u64,
        a[0] as u64 + a[2] as u64,
        a[1] as u64 + a[3] as u64,
    );
    let (bt, bl, bb, br) = (
        b[0] as u64,
        b[1] as u64,
        b[0] as u64 + b[2] as u64,
        b[1] as u64 + b[3] as u64,
    );
    at < bb && bt < ab && al < br && bl < ar
}

const fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

const fn tensor(plan: &PlanTable<'_>, s: &SlotRow<'_>) -> Msg {
    Msg::tensor(plan, s.id)
}

const fn region(plan: &PlanTable<'_>, s: &SlotRow<'_>, p: usize, r: [u32; 4]) -> Msg {
    tensor(plan, s)
        .s(": region [")
        .n(r[0] as u64)
        .s(", ")
        .n(r[1] as u64)
        .s(", ")
        .n(r[2] as u64)
        .s(", ")
        .n(r[3] as u64)
        .s("] (top, left, height, width) of patch ")
        .n(p as u64)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::{ArenaRow, MemoryRow, NONE, OpRow};
    use super::*;
    use std::string::String;

    const ARENAS: &[ArenaRow] = &[ArenaRow {
        name: "scratch.SRAM",
        memory: 0,
        source: 0,
        size: 256,
        budget: NONE,
        align: 16,
        writable: true,
        blob_len: NONE,
    }];
    const OP: OpRow = OpRow {
        opcode: "MAX_POOL_2D",
        reads: &[],
        writes: &[],
        in_place: None,
    };

    fn slot(id: &'static str, elements: u64, start: u32, end: u32) -> SlotRow<'static> {
        SlotRow {
            id,
            arena: 0,
            offset: 0,
            size: elements,
            align: 16,
            elem_size: 1,
            elem_align: 1,
            elements,
            start,
            end,
            root: 0,
        }
    }

    /// The message of the check of a 6x6x1 split tensor `b` (slot 1, tiles `tiles`) fed by a
    /// dense `a` (slot 0, regions `regions`, a view of `dense` elements live from `start`);
    /// empty when it passes.
    fn run(dense: u64, start: u32, regions: &[[u32; 4]], tiles: &[[u32; 4]]) -> String {
        run_with(dense, start, false, 0, regions, tiles)
    }

    /// [`run`], with `a` streamed or not and `b` live from `split_start`.
    fn run_with(
        dense: u64,
        start: u32,
        streamed: bool,
        split_start: u32,
        regions: &[[u32; 4]],
        tiles: &[[u32; 4]],
    ) -> String {
        let slots = [slot("a", dense, start, 1), slot("b", 36, split_start, 2)];
        let ops = [OP, OP, OP];
        let plan = PlanTable {
            model: "m",
            memories: &[MemoryRow {
                name: "SRAM",
                budget: NONE,
            }],
            arenas: ARENAS,
            slots: &slots,
            ops: &ops,
            by_start: &[],
            by_end: &[],
        };
        let rows = [
            PatchRow {
                slot: 0,
                shape: [1, 6, 6, 1],
                whole: false,
                split: false,
                streamed,
                regions,
            },
            PatchRow {
                slot: 1,
                shape: [1, 6, 6, 1],
                whole: true,
                split: true,
                streamed: false,
                regions: tiles,
            },
        ];
        let table = PatchTable {
            split: 1,
            patches: tiles.len() as u32,
            tensors: &rows,
        };
        super::super::tests::panic_message(|| check_patches(&plan, &table))
    }

    const TILES: [[u32; 4]; 2] = [[0, 0, 3, 6], [3, 0, 3, 6]];
    const HALOS: [[u32; 4]; 2] = [[0, 0, 4, 6], [2, 0, 4, 6]];

    #[test]
    fn a_valid_stage_passes() {
        assert_eq!(run(24, 0, &HALOS, &TILES), "");
    }

    #[test]
    fn a_region_larger_than_the_placed_tensor_fails() {
        let m = run(23, 0, &HALOS, &TILES);
        assert!(
            m.contains("tensor `a`: region [0, 0, 4, 6] (top, left, height, width) of patch 0 holds 24 bytes but the tensor is placed with 23"),
            "{m}"
        );
    }

    #[test]
    fn a_region_outside_the_shape_fails() {
        let m = run(24, 0, &[[0, 0, 4, 6], [3, 0, 4, 6]], &TILES);
        assert!(
            m.contains("of patch 1 is not inside its shape of 6x6 pixels"),
            "{m}"
        );
    }

    #[test]
    fn a_region_count_other_than_the_patches_fails() {
        let m = run(24, 0, &HALOS[..1], &TILES);
        assert!(
            m.contains("has 1 regions but the stage runs 2 patches"),
            "{m}"
        );
    }

    #[test]
    fn whole_and_streamed_tensors_not_live_over_the_stage_fail() {
        // A dense intermediate may live per layer: each patch writes it before reading it.
        assert_eq!(run(24, 1, &HALOS, &TILES), "");
        let m = run_with(24, 1, true, 0, &HALOS, &TILES);
        assert!(
            m.contains("tensor `a` is filled before every patch of the patch stage but is live at ops 1..=1, and every patch runs ops 0..=1 again"),
            "{m}"
        );
        let m = run_with(24, 0, false, 1, &HALOS, &TILES);
        assert!(
            m.contains("tensor `b` is read or written by every patch of the patch stage but is live at ops 1..=2"),
            "{m}"
        );
    }

    #[test]
    fn tiles_that_do_not_partition_the_split_tensor_fail() {
        let m = run(24, 0, &HALOS, &[[0, 0, 4, 6], [3, 0, 3, 6]]);
        assert!(m.contains("overlaps the tile of patch 0"), "{m}");
        let m = run(24, 0, &HALOS, &[[0, 0, 3, 6], [3, 0, 2, 6]]);
        assert!(m.contains("its tiles cover 30 of its 36 pixels"), "{m}");
    }
}
