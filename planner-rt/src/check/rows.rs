//! The rules each row of the table keeps on its own: memories and arenas (indices,
//! alignment, budgets, blob lengths), slots (inside and aligned in their arena, sorted,
//! aliases at their root), and ops (slots live at the op, no write to a read-only arena).

use super::{Msg, NONE, PlanTable};
use crate::arena::MAX_ALIGN;

pub(super) const fn check_memories(p: &PlanTable<'_>) {
    let mut a = 0;
    while a < p.arenas.len() {
        let arena = &p.arenas[a];
        if arena.memory as usize >= p.memories.len() || arena.source as usize >= p.memories.len() {
            Msg::model(p)
                .s("arena ")
                .s(arena.name)
                .s(" names memory #")
                .n(if arena.memory > arena.source {
                    arena.memory
                } else {
                    arena.source
                } as u64)
                .has(" but the plan has ", p.memories.len() as u64, " memories")
                .rebuild();
        }
        if !arena.align.is_power_of_two() || arena.align > MAX_ALIGN {
            Msg::model(p)
                .s("arena ")
                .s(arena.name)
                .s(" has alignment ")
                .n(arena.align)
                .s(", which is not a power of two up to 65536; use 1, 2, 4, ..., 65536")
                .panic();
        }
        if arena.budget != NONE && arena.size > arena.budget {
            Msg::model(p)
                .s("arena ")
                .s(arena.name)
                .s(" is ")
                .n(arena.size)
                .s(" bytes, over its budget of ")
                .n(arena.budget)
                .s(" by ")
                .n(arena.size - arena.budget)
                .s(" bytes; raise the memory's max_size in the manifest or re-plan")
                .panic();
        }
        if arena.blob_len != NONE && arena.blob_len != arena.size {
            Msg::model(p)
                .s("the blob of arena ")
                .s(arena.name)
                .s(" is ")
                .n(arena.blob_len)
                .s(" bytes but the arena is ")
                .n(arena.size)
                .s(" bytes; the blob and the plan file come from different builds, re-run planner-build")
                .panic();
        }
        a += 1;
    }
    let mut m = 0;
    while m < p.memories.len() {
        let mem = &p.memories[m];
        let mut total: u64 = 0;
        let mut a = 0;
        while a < p.arenas.len() {
            let arena = &p.arenas[a];
            if arena.memory as usize == m {
                total = total.saturating_add(arena.size);
            }
            if arena.source as usize == m && arena.source != arena.memory && arena.blob_len != NONE
            {
                total = total.saturating_add(arena.blob_len);
            }
            a += 1;
        }
        if mem.budget != NONE && total > mem.budget {
            Msg::model(p)
                .s("the arenas in memory ")
                .s(mem.name)
                .s(" take ")
                .n(total)
                .s(" bytes, over its max_size of ")
                .n(mem.budget)
                .s(" by ")
                .n(total - mem.budget)
                .s(" bytes; raise max_size in the manifest or re-plan")
                .panic();
        }
        m += 1;
    }
}

pub(super) const fn check_slots(p: &PlanTable<'_>) {
    let mut i = 0;
    while i < p.slots.len() {
        let s = &p.slots[i];
        if s.arena as usize >= p.arenas.len() {
            Msg::tensor(p, s.id)
                .s(" names arena #")
                .n(s.arena as u64)
                .has(" but the plan has ", p.arenas.len() as u64, " arenas")
                .rebuild();
        }
        let arena = &p.arenas[s.arena as usize];
        if i > 0 {
            let prev = &p.slots[i - 1];
            if prev.arena > s.arena || (prev.arena == s.arena && prev.offset > s.offset) {
                Msg::model(p)
                    .s("the slot table is not sorted by arena and offset at tensor `")
                    .s(s.id)
                    .s("`; generated code must sort it")
                    .panic();
            }
        }
        if s.root as usize >= p.slots.len() {
            Msg::tensor(p, s.id).no_slot(" aliases slot #", s.root as u64);
        }
        check_alias(p, i);
        let end = s.offset.saturating_add(s.size);
        if end > arena.size {
            Msg::tensor(p, s.id)
                .s(" takes bytes ")
                .span(s.offset, end)
                .s(" of arena ")
                .s(arena.name)
                .s(", which has only ")
                .n(arena.size)
                .s(" bytes; the slot passes the arena's end by ")
                .n(end - arena.size)
                .s(" bytes, re-plan or grow the arena")
                .panic();
        }
        let align = if s.align > s.elem_align {
            s.align
        } else {
            s.elem_align
        };
        if !align.is_power_of_two() {
            Msg::tensor(p, s.id)
                .s(" has alignment ")
                .n(align)
                .s(", which is not a power of two; use 1, 2, 4, 8, 16, ...")
                .panic();
        }
        if !s.offset.is_multiple_of(align) {
            Msg::tensor(p, s.id)
                .s(" is at offset ")
                .n(s.offset)
                .s(" of arena ")
                .s(arena.name)
                .s(", not a multiple of its alignment ")
                .n(align)
                .s(" (")
                .n(s.offset % align)
                .s(" bytes past ")
                .n(s.offset - s.offset % align)
                .s("); re-plan so the offset is aligned")
                .panic();
        }
        // A zero-size slot still makes a view at `base + offset`, which must be aligned too.
        if align > arena.align {
            Msg::tensor(p, s.id)
                .s(" needs alignment ")
                .n(align)
                .s(" but its arena ")
                .s(arena.name)
                .s(" is aligned to only ")
                .n(arena.align)
                .s(" bytes; raise the arena's alignment to at least ")
                .n(align)
                .panic();
        }
        let view = s.elements.saturating_mul(s.elem_size);
        if view > s.size {
            Msg::tensor(p, s.id)
                .s(" has ")
                .n(s.elements)
                .s(" elements of ")
                .n(s.elem_size)
                .s(" bytes but its slot is only ")
                .n(s.size)
                .s(" bytes; fix the tensor's size or shape in the plan")
                .panic();
        }
        if s.start > s.end {
            Msg::tensor(p, s.id)
                .s(" is live from op ")
                .n(s.start as u64)
                .s(" to op ")
                .n(s.end as u64)
                .s(", which ends before it starts; fix its lifetime")
                .panic();
        }
        i += 1;
    }
}

/// An alias views its root's bytes: it must sit in the root's arena at the root's offset,
/// or its view would read other bytes than the root's and escape the overlap check. Roots
/// are their own roots, so a class is one link deep.
const fn check_alias(p: &PlanTable<'_>, i: usize) {
    let s = &p.slots[i];
    let r = &p.slots[s.root as usize];
    if r.root != s.root {
        Msg::tensor(p, s.id).s(" names slot #")
            .n(s.root as u64)
            .s(" (`")
            .s(r.id)
            .s("`) as the owner of its bytes, but that slot is an alias itself; generated code must name the root, rebuild")
            .panic();
    }
    if r.arena != s.arena || r.offset != s.offset {
        Msg::tensor(p, s.id)
            .s(" is an alias of `")
            .s(r.id)
            .s("` but sits at ")
            .at(s)
            .s(", not at its ")
            .at(r)
            .s("; an alias shares its root's slot, rebuild the plan file with planner-build")
            .panic();
    }
}

pub(super) const fn check_ops(p: &PlanTable<'_>) {
    let mut k = 0;
    while k < p.ops.len() {
        let op = &p.ops[k];
        check_op_slots(p, k, op.reads, false);
        check_op_slots(p, k, op.writes, true);
        k += 1;
    }
}

const fn check_op_slots(p: &PlanTable<'_>, k: usize, slots: &[u32], write: bool) {
    let op = &p.ops[k];
    let mut i = 0;
    while i < slots.len() {
        if slots[i] as usize >= p.slots.len() {
            Msg::op(p, k, op.opcode).no_slot(" names slot #", slots[i] as u64);
        }
        let s = &p.slots[slots[i] as usize];
        if (k as u64) < s.start as u64 || (k as u64) > s.end as u64 {
            Msg::op(p, k, op.opcode)
                .s(" uses tensor `")
                .s(s.id)
                .s("`, but the plan says it is live only at ops ")
                .lifetime(s)
                .s("; fix its lifetime so it covers op ")
                .n(k as u64)
                .panic();
        }
        if write && !p.arenas[s.arena as usize].writable {
            Msg::op(p, k, op.opcode)
                .s(" writes tensor `")
                .s(s.id)
                .s("`, which is in read-only arena ")
                .s(p.arenas[s.arena as usize].name)
                .s("; place op outputs in a scratch or persistent arena")
                .panic();
        }
        i += 1;
    }
}
