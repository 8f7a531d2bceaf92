//! The `PLAN` table `include_model!` generates (`codegen/table.rs`), built at run time from
//! a plan file and an analysis of it, so the `const` checker can run on it here. Shared by
//! the property tests (`props.rs`, from the macro's own analysis) and the fuzz targets
//! (`fuzz/fuzz_targets/common.rs` includes this file, with an analysis of its own).

use planner::graph::DType;
use planner::plan::ArenaRole;
use planner::planfile::PlanFile;
use planner::rt::check::{self, ArenaRow, InPlaceRow, MemoryRow, OpRow, PlanTable, SlotRow};

/// One op's row lists: the slots it reads, the slots it writes, its in-place declaration.
pub type OpLists = (Vec<u32>, Vec<u32>, Option<InPlaceRow>);

/// What the table takes from an analysis of the plan file, per tensor (by index) or per op.
pub struct Analysis<'a> {
    /// The tensors in slot order (by arena, offset, index).
    pub order: &'a [usize],
    /// Each tensor's slot.
    pub slot: &'a [usize],
    /// Each tensor's alias root.
    pub roots: &'a [usize],
    /// Each tensor's element count.
    pub elements: &'a [u64],
    /// Each op's row lists.
    pub ops: &'a [OpLists],
}

/// `size_of` and `align_of` of the element type the macro's views use (`codegen::elem_type`):
/// whole bytes per element (at least one), aligned as [`DType::align`].
pub fn elem_layout(d: DType) -> (u64, u64) {
    (d.bits().map_or(1, |b| (b / 8).max(1)), d.align())
}

/// Builds the table of `f` with analysis `a` and calls `run` with it; `None` when an arena
/// names a memory the file does not list (the macro's load refuses that before any table).
pub fn with_table<R>(
    f: &PlanFile,
    a: &Analysis<'_>,
    run: impl FnOnce(&PlanTable<'_>) -> R,
) -> Option<R> {
    let memories: Vec<MemoryRow<'_>> = f
        .memories
        .iter()
        .map(|m| MemoryRow {
            name: &m.name,
            budget: m.budget.unwrap_or(check::NONE),
        })
        .collect();
    let index = |name: &str| f.memories.iter().position(|m| m.name == name);
    let mut arenas = Vec::new();
    for e in &f.arenas {
        arenas.push(ArenaRow {
            name: &e.name,
            memory: index(&e.memory)? as u32,
            source: index(&e.source_memory)? as u32,
            size: e.size,
            budget: e.budget.unwrap_or(check::NONE),
            align: e.alignment,
            writable: e.role != ArenaRole::Constant,
            blob_len: e.blob.as_ref().map_or(check::NONE, |b| b.size),
        });
    }
    let slots: Vec<SlotRow<'_>> = a
        .order
        .iter()
        .map(|&t| {
            let e = &f.tensors[t];
            let (elem_size, elem_align) = elem_layout(e.dtype);
            SlotRow {
                id: &e.id,
                arena: e.arena,
                offset: e.offset,
                size: e.size,
                align: e.alignment,
                elem_size,
                elem_align,
                elements: a.elements[t],
                start: e.lifetime.start_op,
                end: e.lifetime.end_op,
                root: a.slot[a.roots[t]] as u32,
            }
        })
        .collect();
    let ops: Vec<OpRow<'_>> = f
        .ops
        .iter()
        .zip(a.ops)
        .map(|(op, (r, w, p))| OpRow {
            opcode: &op.opcode,
            reads: r,
            writes: w,
            in_place: *p,
        })
        .collect();
    let (mut by_start, mut by_end) = (vec![0; slots.len()], vec![0; slots.len()]);
    check::time_orders(&slots, &mut by_start, &mut by_end);
    Some(run(&PlanTable {
        model: &f.model,
        memories: &memories,
        arenas: &arenas,
        slots: &slots,
        ops: &ops,
        by_start: &by_start,
        by_end: &by_end,
    }))
}
