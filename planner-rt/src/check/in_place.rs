//! The in-place declarations: each op that writes its output over an input it takes over
//! does so in a way the overlap sweep may accept.

use super::scratch::Words;
use super::{Msg, PlanTable, SlotRow, in_place_bytes};
use crate::rows::Rows;

/// True when `slots` lists `s`.
const fn lists(slots: &[u32], s: usize) -> bool {
    let mut i = 0;
    while i < slots.len() {
        if slots[i] as usize == s {
            return true;
        }
        i += 1;
    }
    false
}

/// Every in-place declaration is one [`check_overlaps`](super::sweep::check_overlaps) may accept: the op reads the input
/// and writes the output, the output is at the input's offset in the same arena, the input's
/// bytes (every member of its alias class) are last live at the op and the output's (every
/// member of its class) first live there, the op's buffer stays inside the arena and inside the two slots, and the op
/// sees the input's bytes only through that buffer. Records the links for the sweep.
pub(super) const fn check_in_place(p: &PlanTable<'_>, scratch: &mut [u64], w: Words) {
    let n = p.slots.len();
    let mut k = 0;
    while k < p.ops.len() {
        let op = &p.ops[k];
        let Some(ip) = op.in_place else {
            k += 1;
            continue;
        };
        let (i, o) = (ip.input as usize, ip.output as usize);
        if i >= n || o >= n {
            Msg::op(p, k, op.opcode).no_slot(
                " runs in place on slot #",
                if i >= n { i } else { o } as u64,
            );
        }
        let (si, so) = (&p.slots[i], &p.slots[o]);
        if !lists(op.reads, i) || !lists(op.writes, o) {
            Msg::op(p, k, op.opcode)
                .s(" declares output `")
                .s(so.id)
                .s("` written over input `")
                .s(si.id)
                .s("`, but it does not read that input or write that output")
                .rebuild();
        }
        let ri = si.root as usize;
        if so.root as usize != o || ri == o {
            Msg::op(p, k, op.opcode)
                .s(" writes `")
                .s(so.id)
                .s("` in place over `")
                .s(si.id)
                .s("`, but the output is an alias or shares the input's bytes already")
                .rebuild();
        }
        if let Some(rows) = ip.rows {
            check_rows(p, k, si, so, &rows);
        } else if si.arena != so.arena || si.offset != so.offset {
            Msg::op(p, k, op.opcode)
                .s(" runs in place, so its output `")
                .s(so.id)
                .s("` must start at its input `")
                .s(si.id)
                .s("` (")
                .at(si)
                .s("), but it is at ")
                .at(so)
                .s("; re-plan so the output sits at the input's offset")
                .panic();
        }
        if so.start as usize != k || scratch[w.end + ri] != k as u64 {
            Msg::op(p, k, op.opcode)
                .s(" writes `")
                .s(so.id)
                .s("` (live from op ")
                .n(so.start as u64)
                .s(") over `")
                .s(si.id)
                .s("` (its bytes live until op ")
                .n(scratch[w.end + ri])
                .s("); in place needs the input's bytes to die and the output to start at op ")
                .n(k as u64)
                .s(", re-plan")
                .panic();
        }
        // The sweep lets the output's class take over the input's entry (both are one
        // buffer at the op): a member of that class live before the op would share the
        // input's bytes while the input is live elsewhere.
        if scratch[w.start + o] != k as u64 {
            let early = first_member(p, o);
            Msg::op(p, k, op.opcode)
                .s(" writes `")
                .s(so.id)
                .s("` in place over `")
                .s(si.id)
                .s("`, but `")
                .s(p.slots[early].id)
                .s("`, an alias of `")
                .s(so.id)
                .s("`, is live from op ")
                .n(p.slots[early].start as u64)
                .s("; every alias of an in-place output must start at op ")
                .n(k as u64)
                .s(", where the input's bytes die, re-plan")
                .panic();
        }
        let bytes = in_place_bytes(si, so);
        // With row overlap the two slots touch or overlap (`check_rows`): their union.
        let shifted = si.size.saturating_add(si.offset.saturating_sub(so.offset));
        let union = if shifted > so.size { shifted } else { so.size };
        let arena = &p.arenas[so.arena as usize];
        if bytes > union || so.offset.saturating_add(bytes) > arena.size {
            Msg::op(p, k, op.opcode)
                .s(" sees `")
                .s(si.id)
                .s("` and `")
                .s(so.id)
                .s("` as one buffer of ")
                .n(bytes)
                .s(" bytes from offset ")
                .n(so.offset)
                .s(", past their slots (")
                .n(union)
                .s(" bytes) or arena ")
                .s(arena.name)
                .s(" (")
                .n(arena.size)
                .s(" bytes); re-plan with slots that hold both tensors")
                .panic();
        }
        if scratch[w.taken_by + ri] != 0 || scratch[w.takes + o] != 0 {
            Msg::op(p, k, op.opcode)
                .s(" runs in place over `")
                .s(si.id)
                .s("`, whose bytes another op already takes over")
                .rebuild();
        }
        check_in_place_views(p, k, op.reads, i, ri);
        check_in_place_views(p, k, op.writes, o, ri);
        scratch[w.takes + o] = i as u64 + 1;
        scratch[w.taken_by + ri] = o as u64 + 1;
        k += 1;
    }
}

/// Op `k` runs with row overlap ([`crate::rows`]): input slot `si` and output slot `so`
/// are in one arena, of one element type, the shapes `rows` describes, and the input
/// starts at least [`Rows::min_shift`] elements after the output, inside the output's slot
/// (so the buffer the op sees is the two slots' union, with no gap).
const fn check_rows(p: &PlanTable<'_>, k: usize, si: &SlotRow<'_>, so: &SlotRow<'_>, rows: &Rows) {
    let op = &p.ops[k];
    if si.elem_size != so.elem_size
        || si.elem_size == 0
        || si.elements != (rows.in_rows as u64).saturating_mul(rows.in_row as u64)
        || so.elements != (rows.out_rows as u64).saturating_mul(rows.out_row as u64)
    {
        Msg::op(p, k, op.opcode)
            .s(" runs with row overlap, but its input `")
            .s(si.id)
            .s("` and output `")
            .s(so.id)
            .s("` are not tensors of one element type with the rows the op reads and writes")
            .rebuild();
    }
    let need = (rows.min_shift() as u64).saturating_mul(so.elem_size);
    let shift = si.offset.wrapping_sub(so.offset);
    if si.arena != so.arena
        || si.offset < so.offset
        || shift < need
        || !shift.is_multiple_of(so.elem_size)
        || shift > so.size
    {
        Msg::op(p, k, op.opcode)
            .s(" writes its output `")
            .s(so.id)
            .s("` (")
            .at(so)
            .s(") over the rows of its input `")
            .s(si.id)
            .s("` (")
            .at(si)
            .s(") it has read; the input must start ")
            .n(need)
            .s(" to ")
            .n(so.size)
            .s(" bytes after the output, in whole elements, so that no output row overwrites an input row a later row reads; re-plan")
            .panic();
    }
}

/// The member of class `r` that is live first (the lowest slot on ties).
const fn first_member(p: &PlanTable<'_>, r: usize) -> usize {
    let mut best = r;
    let mut j = 0;
    while j < p.slots.len() {
        if p.slots[j].root as usize == r && p.slots[j].start < p.slots[best].start {
            best = j;
        }
        j += 1;
    }
    best
}

/// Op `k` sees the bytes of class `ri` (an in-place input's) only as slot `only`.
const fn check_in_place_views(p: &PlanTable<'_>, k: usize, slots: &[u32], only: usize, ri: usize) {
    let mut j = 0;
    while j < slots.len() {
        let s = slots[j] as usize;
        if s < p.slots.len() && s != only && p.slots[s].root as usize == ri {
            Msg::op(p, k, p.ops[k].opcode)
                .s(" runs in place over the bytes of `")
                .s(p.slots[ri].id)
                .s("` and also uses them as `")
                .s(p.slots[s].id)
                .s("`; an in-place input must be used once by its op, re-plan")
                .panic();
        }
        j += 1;
    }
}
