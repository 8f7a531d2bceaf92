//! The `const fn` check of a group plan: rustc evaluates it on the table
//! `include_model!("<group>")` builds, beside each model's own [`super::check`].
//!
//! Each model's check proves its own slots; this one proves what holds between models:
//! every model arena is the group arena of the same name and size (so the model's slots lie
//! in the group's `static`), models that may run at the same time share no byte of a
//! writable arena, and no two models share a byte of a persistent arena (state survives the
//! other models' runs). Models that run one after another may share scratch bytes: the
//! group handle lends one model at a time, so their views never coexist.

use super::{Msg, PlanTable, SlotRow};

/// A group plan, as `const` data.
#[derive(Clone, Copy, Debug)]
pub struct GroupTable<'a> {
    /// The group's name, for messages.
    pub group: &'a str,
    /// The group's arenas.
    pub arenas: &'a [GroupArenaRow<'a>],
    /// Its models, each with its own plan table.
    pub models: &'a [GroupModelRow<'a>],
    /// Pairs of model indices (into `models`) that may run at the same time.
    pub concurrent: &'a [[u32; 2]],
}

/// One arena of the group.
#[derive(Clone, Copy, Debug)]
pub struct GroupArenaRow<'a> {
    /// `role.MEMORY`.
    pub name: &'a str,
    /// Its length in bytes (the `static`'s length).
    pub size: u64,
    /// True for scratch and persistent arenas.
    pub writable: bool,
    /// True for a persistent arena: no two models may share its bytes.
    pub persistent: bool,
}

/// One model of the group.
#[derive(Clone, Copy, Debug)]
pub struct GroupModelRow<'a> {
    /// The model's plan table.
    pub plan: &'a PlanTable<'a>,
    /// For each of the model's arenas, the group arena (index into
    /// [`GroupTable::arenas`]) it is.
    pub arenas: &'a [u32],
}

/// Checks the group; panics (a compile error in a `const` item) on the first fault.
pub const fn check_group(g: &GroupTable<'_>) {
    let mut m = 0;
    while m < g.models.len() {
        check_arenas(g, m);
        m += 1;
    }
    let mut i = 0;
    while i < g.models.len() {
        let mut j = i + 1;
        while j < g.models.len() {
            check_pair(g, i, j);
            j += 1;
        }
        i += 1;
    }
}

/// A message starting with the group's name.
const fn msg(g: &GroupTable<'_>) -> Msg {
    Msg {
        buf: [0; 512],
        len: 0,
    }
    .s("group `")
    .s(g.group)
    .s("`: ")
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Model `m`'s arenas are group arenas of the same name and size.
const fn check_arenas(g: &GroupTable<'_>, m: usize) {
    let model = &g.models[m];
    if model.arenas.len() != model.plan.arenas.len() {
        msg(g)
            .s("model `")
            .s(model.plan.model)
            .s("` lists ")
            .n(model.plan.arenas.len() as u64)
            .s(" arenas but the group maps ")
            .n(model.arenas.len() as u64)
            .s("; rebuild the plan file with planner-build")
            .panic();
    }
    let mut a = 0;
    while a < model.arenas.len() {
        let own = &model.plan.arenas[a];
        let k = model.arenas[a] as usize;
        if k >= g.arenas.len() || !str_eq(g.arenas[k].name, own.name) {
            msg(g)
                .s("arena ")
                .s(own.name)
                .s(" of model `")
                .s(model.plan.model)
                .s("` is not an arena of the group; rebuild the plan file with planner-build")
                .panic();
        }
        if g.arenas[k].size != own.size {
            msg(g)
                .s("arena ")
                .s(own.name)
                .s(" of model `")
                .s(model.plan.model)
                .s("` is ")
                .n(own.size)
                .s(" bytes but the group's is ")
                .n(g.arenas[k].size)
                .s(" bytes; rebuild the plan file with planner-build")
                .panic();
        }
        a += 1;
    }
}

const fn concurrent(g: &GroupTable<'_>, i: usize, j: usize) -> bool {
    let mut k = 0;
    while k < g.concurrent.len() {
        let [a, b] = g.concurrent[k];
        if (a as usize == i && b as usize == j) || (a as usize == j && b as usize == i) {
            return true;
        }
        k += 1;
    }
    false
}

/// Models `i` and `j` share no byte they must not: any writable arena when they may run at
/// the same time, persistent arenas always.
const fn check_pair(g: &GroupTable<'_>, i: usize, j: usize) {
    let together = concurrent(g, i, j);
    let (mi, mj) = (&g.models[i], &g.models[j]);
    let mut a = 0;
    while a < mi.arenas.len() {
        let k = mi.arenas[a] as usize;
        let arena = &g.arenas[k];
        if arena.writable && (together || arena.persistent) {
            let mut b = 0;
            while b < mj.arenas.len() {
                if mj.arenas[b] as usize == k {
                    sweep(g, (i, a as u32), (j, b as u32), together);
                }
                b += 1;
            }
        }
        a += 1;
    }
}

/// The range of `p`'s slots in arena `a` (slots are sorted by arena, then offset).
const fn range(p: &PlanTable<'_>, a: u32) -> (usize, usize) {
    let mut lo = 0;
    while lo < p.slots.len() && p.slots[lo].arena < a {
        lo += 1;
    }
    let mut hi = lo;
    while hi < p.slots.len() && p.slots[hi].arena == a {
        hi += 1;
    }
    (lo, hi)
}

/// Walks both models' slots of one group arena in offset order, keeping each model's slot
/// that ends last so far: a slot starting before the other model's furthest end overlaps
/// it. Linear in the slots.
const fn sweep(g: &GroupTable<'_>, (i, ai): (usize, u32), (j, aj): (usize, u32), together: bool) {
    let (pi, pj) = (g.models[i].plan, g.models[j].plan);
    let (mut x, xe) = range(pi, ai);
    let (mut y, ye) = range(pj, aj);
    let mut far_i: Option<&SlotRow<'_>> = None;
    let mut far_j: Option<&SlotRow<'_>> = None;
    while x < xe || y < ye {
        let take_i = y >= ye || (x < xe && pi.slots[x].offset <= pj.slots[y].offset);
        let (s, far_other) = if take_i {
            (&pi.slots[x], far_j)
        } else {
            (&pj.slots[y], far_i)
        };
        if s.size > 0
            && let Some(o) = far_other
            && s.offset < o.offset.saturating_add(o.size)
        {
            let (a, b) = if take_i { (s, o) } else { (o, s) };
            overlap(g, (i, a), (j, b), g.models[i].arenas[ai as usize], together);
        }
        let end = s.offset.saturating_add(s.size);
        if s.size > 0 {
            let far = if take_i { &mut far_i } else { &mut far_j };
            let further = match *far {
                Some(f) => end > f.offset.saturating_add(f.size),
                None => true,
            };
            if further {
                *far = Some(s);
            }
        }
        if take_i {
            x += 1;
        } else {
            y += 1;
        }
    }
}

const fn overlap(
    g: &GroupTable<'_>,
    (i, a): (usize, &SlotRow<'_>),
    (j, b): (usize, &SlotRow<'_>),
    arena: u32,
    together: bool,
) -> ! {
    let (ni, nj) = (g.models[i].plan.model, g.models[j].plan.model);
    let (a_end, b_end) = (
        a.offset.saturating_add(a.size),
        b.offset.saturating_add(b.size),
    );
    let m = msg(g).s("models `").s(ni).s("` and `").s(nj);
    let m = if together {
        m.s("` may run at the same time, but ")
    } else {
        m.s("` keep state across runs, but ")
    };
    m.s("tensor `")
        .s(a.id)
        .s("` of `")
        .s(ni)
        .s("` (bytes ")
        .n(a.offset)
        .s("..")
        .n(a_end)
        .s(") and tensor `")
        .s(b.id)
        .s("` of `")
        .s(nj)
        .s("` (bytes ")
        .n(b.offset)
        .s("..")
        .n(b_end)
        .s(") share bytes ")
        .n(if a.offset > b.offset {
            a.offset
        } else {
            b.offset
        })
        .s("..")
        .n(if a_end < b_end { a_end } else { b_end })
        .s(" of arena ")
        .s(g.arenas[arena as usize].name)
        .s("; re-plan the group with planner-build so they are disjoint")
        .panic()
}
