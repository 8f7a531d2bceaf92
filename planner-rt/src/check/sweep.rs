//! The overlap check: the slot orders are what they claim, and a sweep over time finds any
//! two live tensors of a writable arena that share a byte.

use super::in_place::check_in_place;
use super::scratch::{Levels, NO_SLOT, Words, scratch_len, words};
use super::{Msg, PlanTable};

/// `order` lists every slot once, sorted by `start` (or by `end`).
const fn check_order(
    p: &PlanTable<'_>,
    order: &[u32],
    by_end: bool,
    seen: &mut [u64],
    base: usize,
) {
    let what = if by_end {
        "last live op"
    } else {
        "first live op"
    };
    if order.len() != p.slots.len() {
        Msg::model(p)
            .s("the slot order by ")
            .s(what)
            .s(" has ")
            .n(order.len() as u64)
            .s(" entries for ")
            .n(p.slots.len() as u64)
            .s(" slots; generated code must list every slot once, rebuild")
            .panic();
    }
    let mut w = 0;
    while w < words(p.slots.len()) {
        seen[base + w] = 0;
        w += 1;
    }
    let mut k = 0;
    while k < order.len() {
        let s = order[k] as usize;
        if s >= p.slots.len() || seen[base + s / 64] & (1u64 << (s % 64)) != 0 {
            Msg::model(p)
                .s("the slot order by ")
                .s(what)
                .s(" names slot #")
                .n(s as u64)
                .s(" twice or out of range; generated code must list every slot once, rebuild")
                .panic();
        }
        seen[base + s / 64] |= 1u64 << (s % 64);
        if k > 0 {
            let (a, b) = (&p.slots[order[k - 1] as usize], &p.slots[s]);
            let sorted = if by_end {
                a.end <= b.end
            } else {
                a.start <= b.start
            };
            if !sorted {
                Msg::model(p)
                    .s("the slot order by ")
                    .s(what)
                    .s(" is not sorted at tensor `")
                    .s(b.id)
                    .s("`; generated code must sort it, rebuild")
                    .panic();
            }
        }
        k += 1;
    }
}

/// Live tensors of a writable arena share no byte, unless they are the same bytes (one is an
/// alias of the other).
///
/// A sweep over time: tensors enter the live set in order of their first op and leave it in
/// order of their last (entering first on ties, since lifetimes are inclusive), so two
/// tensors live at a common op are both in the set when the later one enters. The set holds
/// one entry per alias class (its root's slot, with the class's longest size), kept in a
/// bitset over slot positions, which are sorted by (arena, offset): the entries of an arena
/// are disjoint, so a new entry overlaps one of them exactly when it overlaps its neighbour
/// below or above. Each step costs a few word operations, so the check is linear in the slots.
pub(super) const fn check_overlaps(p: &PlanTable<'_>, scratch: &mut [u64]) {
    let n = p.slots.len();
    if scratch.len() < scratch_len(n) {
        Msg::model(p)
            .s("the plan check was given ")
            .n(scratch.len() as u64)
            .s(" scratch words for ")
            .n(n as u64)
            .s(" slots, which need ")
            .n(scratch_len(n) as u64)
            .s("; generated code must size it with scratch_len, rebuild")
            .panic();
    }
    let w = Words::new(n);
    check_order(p, p.by_start, false, scratch, w.seen);
    check_order(p, p.by_end, true, scratch, w.seen);
    let live = Levels::new(n, w.seen + words(n));
    let mut i = 0;
    while i < live.end {
        scratch[i] = 0;
        i += 1;
    }
    // Each class's bytes: from its root's offset, as long as its longest member; and its
    // first and last live op.
    let mut i = 0;
    while i < n {
        scratch[w.start + i] = u64::MAX;
        i += 1;
    }
    let mut i = 0;
    while i < n {
        let s = &p.slots[i];
        let r = s.root as usize;
        if s.size > scratch[w.hull + r] {
            scratch[w.hull + r] = s.size;
        }
        if s.end as u64 > scratch[w.end + r] {
            scratch[w.end + r] = s.end as u64;
        }
        if (s.start as u64) < scratch[w.start + r] {
            scratch[w.start + r] = s.start as u64;
        }
        i += 1;
    }
    let mut i = 0;
    while i < n {
        scratch[w.span + i] = scratch[w.hull + i];
        i += 1;
    }
    check_in_place(p, scratch, w);
    let (mut x, mut y) = (0, 0);
    while x < n {
        let entering = &p.slots[p.by_start[x] as usize];
        let leaving = &p.slots[p.by_end[y] as usize];
        if leaving.end < entering.start {
            let r = leaving.root as usize;
            if p.arenas[leaving.arena as usize].writable && scratch[w.hull + r] > 0 {
                scratch[w.count + r] -= 1;
                if scratch[w.count + r] == 0 {
                    live.remove(scratch, r);
                    // The input of an in-place op is gone: its output's entry shrinks back
                    // to the output's own bytes.
                    let by = scratch[w.taken_by + r] as usize;
                    if by != 0 {
                        scratch[w.span + by - 1] = scratch[w.hull + by - 1];
                    }
                }
            }
            y += 1;
            continue;
        }
        let r = entering.root as usize;
        if p.arenas[entering.arena as usize].writable && scratch[w.hull + r] > 0 {
            if scratch[w.count + r] == 0 {
                // The output of an in-place op replaces the entry of the input it takes over
                // (live until the op's other tensors have entered) with one entry over both.
                let takes = scratch[w.takes + r] as usize;
                if takes != 0 {
                    let ri = p.slots[takes - 1].root as usize;
                    if scratch[w.count + ri] > 0 {
                        live.remove(scratch, ri);
                    }
                    if scratch[w.hull + ri] > scratch[w.span + r] {
                        scratch[w.span + r] = scratch[w.hull + ri];
                    }
                }
                // An in-place input entering after the output that takes it over (both
                // first live at the op: a model input) is inside the output's entry already.
                let by = scratch[w.taken_by + r] as usize;
                if by != 0 && scratch[w.count + by - 1] > 0 {
                    scratch[w.count + r] += 1;
                    x += 1;
                    continue;
                }
                let below = live.prev(scratch, r);
                if below != NO_SLOT {
                    check_disjoint(p, scratch, w, below, r, entering.start);
                }
                let above = live.next(scratch, r);
                if above != NO_SLOT {
                    check_disjoint(p, scratch, w, r, above, entering.start);
                }
                live.insert(scratch, r);
            }
            scratch[w.count + r] += 1;
        }
        x += 1;
    }
}

/// Class `lo` (at a position below class `hi`) does not reach into `hi`'s bytes in the
/// same arena; both are live at op `op`.
const fn check_disjoint(
    p: &PlanTable<'_>,
    scratch: &[u64],
    w: Words,
    lo: usize,
    hi: usize,
    op: u32,
) {
    let (a, b) = (&p.slots[lo], &p.slots[hi]);
    let a_end = a.offset.saturating_add(scratch[w.span + lo]);
    if a.arena != b.arena || a_end <= b.offset {
        return;
    }
    let b_end = b.offset.saturating_add(scratch[w.span + hi]);
    let arena = &p.arenas[a.arena as usize];
    Msg::model(p)
        .s("tensors ")
        .live(a, a_end)
        .s(" and ")
        .live(b, b_end)
        .s(" are both live at op ")
        .n(op as u64)
        .s(" and share bytes ")
        .span(b.offset, if a_end < b_end { a_end } else { b_end })
        .s(" of arena ")
        .s(arena.name)
        .s("; re-plan so live tensors are disjoint")
        .panic()
}
