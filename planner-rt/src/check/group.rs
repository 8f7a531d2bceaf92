//! The `const fn` check of a group plan: rustc evaluates it on the table
//! `include_model!("<group>")` builds, beside each model's own [`super::check`].
//!
//! Each model's check proves its own slots; this one proves what the group's generated code
//! relies on between models, whatever table it is given:
//!
//! - the models have distinct names (each row is its own model and module);
//! - every model arena is the group arena of the same name, size, alignment and
//!   writability (so the model's slots lie in the group's `static`, aligned as the model's
//!   check assumed, and a model views as mutable only bytes the group holds as mutable);
//! - every concurrent set names existing models, each at most once: its method lends one
//!   handle per entry, so a repeated model would be two handles to the same bytes;
//! - any two distinct models of a concurrent set share no byte of a writable arena, and no
//!   two models share a byte of a persistent arena (state survives the other models' runs).
//!
//! Overlap is symmetric, so each unordered pair is checked once; a pair of a model with
//! itself cannot arise once sets are proven free of repeats. Models that run one after
//! another may share scratch bytes: the group handle lends one model at a time, so their
//! views never coexist.

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
    /// Sets of model indices (into `models`) that may run at the same time: the generated
    /// code lends the handles of each set's models together, one per entry.
    pub concurrent: &'a [&'a [u32]],
}

/// One arena of the group.
#[derive(Clone, Copy, Debug)]
pub struct GroupArenaRow<'a> {
    /// `role.MEMORY`.
    pub name: &'a str,
    /// Its length in bytes (the `static`'s length).
    pub size: u64,
    /// Alignment of its base (the `static`'s alignment).
    pub align: u64,
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
    check_names(g);
    let mut m = 0;
    while m < g.models.len() {
        check_arenas(g, m);
        m += 1;
    }
    let mut s = 0;
    while s < g.concurrent.len() {
        check_set(g, s);
        s += 1;
    }
    // Persistent arenas: every pair of models.
    let mut i = 0;
    while i < g.models.len() {
        let mut j = i + 1;
        while j < g.models.len() {
            check_pair(g, i, j, false);
            j += 1;
        }
        i += 1;
    }
    // Every writable arena: every pair of distinct models of each concurrent set.
    let mut s = 0;
    while s < g.concurrent.len() {
        let set = g.concurrent[s];
        let mut p = 0;
        while p < set.len() {
            let mut q = p + 1;
            while q < set.len() {
                check_pair(g, set[p] as usize, set[q] as usize, true);
                q += 1;
            }
            p += 1;
        }
        s += 1;
    }
}

/// No two rows are the same model: each row's plan and module stand for one model.
const fn check_names(g: &GroupTable<'_>) {
    let mut i = 0;
    while i < g.models.len() {
        let mut j = i + 1;
        while j < g.models.len() {
            if str_eq(g.models[i].plan.model, g.models[j].plan.model) {
                msg(g)
                    .s("models #")
                    .n(i as u64)
                    .s(" and #")
                    .n(j as u64)
                    .s(" are both named `")
                    .s(g.models[i].plan.model)
                    .s("`; a group's models need distinct names, rebuild the plan file with planner-build")
                    .panic();
            }
            j += 1;
        }
        i += 1;
    }
}

/// Set `s` names existing models, each once.
const fn check_set(g: &GroupTable<'_>, s: usize) {
    let set = g.concurrent[s];
    let mut p = 0;
    while p < set.len() {
        if set[p] as usize >= g.models.len() {
            msg(g)
                .s("concurrent set #")
                .n(s as u64)
                .s(" names model #")
                .n(set[p] as u64)
                .s(" but the group has ")
                .n(g.models.len() as u64)
                .s(" models")
                .rebuild();
        }
        let mut q = 0;
        while q < p {
            if set[q] == set[p] {
                msg(g)
                    .s("concurrent set #")
                    .n(s as u64)
                    .s(" names model `")
                    .s(g.models[set[p] as usize].plan.model)
                    .s("` twice, which would lend two handles to the same bytes; a set lists distinct models, rebuild the plan file with planner-build")
                    .panic();
            }
            q += 1;
        }
        p += 1;
    }
}

/// A message starting with the group's name.
const fn msg(g: &GroupTable<'_>) -> Msg {
    Msg::named("group", g.group)
}

/// How an arena of that writability reads in a message.
const fn access(writable: bool) -> &'static str {
    if writable {
        " and writable"
    } else {
        " and read-only"
    }
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
            .rebuild();
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
                .s("` is not an arena of the group")
                .rebuild();
        }
        let group = &g.arenas[k];
        if group.align != own.align || group.writable != own.writable {
            msg(g)
                .s("arena ")
                .s(own.name)
                .s(" of model `")
                .s(model.plan.model)
                .s("` is aligned to ")
                .n(own.align)
                .s(access(own.writable))
                .s(" but the group's is aligned to ")
                .n(group.align)
                .s(access(group.writable))
                .rebuild();
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
                .s(" bytes")
                .rebuild();
        }
        a += 1;
    }
}

/// Models `i` and `j` (distinct) share no byte they must not: any writable arena when they
/// may run at the same time (`together`), persistent arenas always.
const fn check_pair(g: &GroupTable<'_>, i: usize, j: usize, together: bool) {
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
        .span(a.offset, a_end)
        .s(") and tensor `")
        .s(b.id)
        .s("` of `")
        .s(nj)
        .s("` (bytes ")
        .span(b.offset, b_end)
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

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::{ArenaRow, MemoryRow, NONE, check, scratch_len};
    use super::*;
    use std::string::String;

    include!("fixture/rows.rs");
    include!("fixture/group.rs");

    fn row(plan: &'static PlanTable<'static>) -> GroupModelRow<'static> {
        GroupModelRow { plan, arenas: &[0] }
    }

    /// The check's panic message, or "" when it passes; each model's own check runs too.
    fn run(
        models: std::vec::Vec<GroupModelRow<'static>>,
        concurrent: &'static [&'static [u32]],
        arenas: &'static [GroupArenaRow<'static>],
    ) -> String {
        // Leaked for the 'static table, and kept reachable from a static so that Miri does
        // not report it as a leak.
        static KEPT: std::sync::Mutex<std::vec::Vec<&'static [GroupModelRow<'static>]>> =
            std::sync::Mutex::new(std::vec::Vec::new());
        let models: &'static [GroupModelRow<'static>] = std::boxed::Box::leak(models.into());
        if let Ok(mut kept) = KEPT.lock() {
            kept.push(models);
        }
        let g = GroupTable {
            group: "g",
            arenas,
            models,
            concurrent,
        };
        super::super::tests::panic_message(|| {
            for m in g.models {
                check(m.plan, &mut std::vec![0; scratch_len(m.plan.slots.len())]);
            }
            check_group(&g)
        })
    }

    #[test]
    fn accepts_disjoint_concurrent_models_and_sequential_sharing() {
        assert_eq!(run(std::vec![row(&A), row(&B)], &[&[0, 1]], ARENAS), "");
        // `a` and `c` share scratch bytes but never run together.
        assert_eq!(
            run(std::vec![row(&A), row(&B), row(&C)], &[&[0, 1]], ARENAS),
            ""
        );
    }

    #[test]
    fn refuses_a_set_naming_one_model_twice() {
        // The tamper_concurrent_self reproducer: `[["a", "a"]]` lent two handles of `a`.
        let m = run(std::vec![row(&A), row(&B)], &[&[0, 0]], ARENAS);
        assert!(
            m.contains("group `g`: concurrent set #0 names model `a` twice")
                && m.contains("rebuild"),
            "{m}"
        );
        let m = run(std::vec![row(&A), row(&B)], &[&[0, 1], &[1, 0, 1]], ARENAS);
        assert!(m.contains("concurrent set #1 names model `b` twice"), "{m}");
    }

    #[test]
    fn refuses_a_set_naming_no_model() {
        let m = run(std::vec![row(&A), row(&B)], &[&[0, 7]], ARENAS);
        assert!(
            m.contains("concurrent set #0 names model #7 but the group has 2 models"),
            "{m}"
        );
    }

    #[test]
    fn refuses_two_models_of_one_name() {
        let m = run(std::vec![row(&A), row(&A2)], &[], ARENAS);
        assert!(
            m.contains("models #0 and #1 are both named `a`") && m.contains("rebuild"),
            "{m}"
        );
    }

    #[test]
    fn checks_every_pair_of_a_set_in_any_order() {
        // Listed high index first, and the overlapping pair is not adjacent in the set.
        let m = run(std::vec![row(&A), row(&B), row(&C)], &[&[2, 1, 0]], ARENAS);
        assert!(
            m.contains("models `c` and `a` may run at the same time")
                && m.contains("share bytes 16..32 of arena scratch.SRAM"),
            "{m}"
        );
    }

    #[test]
    fn a_model_arena_is_the_group_arena_in_alignment_and_writability() {
        const LOOSE: &[GroupArenaRow] = &[GroupArenaRow {
            align: 1,
            ..ARENAS[0]
        }];
        let m = run(std::vec![row(&A)], &[], LOOSE);
        assert!(
            m.contains("arena scratch.SRAM of model `a` is aligned to 16 and writable but the group's is aligned to 1 and writable"),
            "{m}"
        );
        const READ_ONLY: &[GroupArenaRow] = &[GroupArenaRow {
            writable: false,
            ..ARENAS[0]
        }];
        let m = run(std::vec![row(&A)], &[], READ_ONLY);
        assert!(
            m.contains("the group's is aligned to 16 and read-only"),
            "{m}"
        );
    }

    #[test]
    fn persistent_bytes_are_never_shared() {
        const KEPT: &[GroupArenaRow] = &[GroupArenaRow {
            persistent: true,
            ..ARENAS[0]
        }];
        let m = run(std::vec![row(&A), row(&C)], &[], KEPT);
        assert!(
            m.contains("models `a` and `c` keep state across runs"),
            "{m}"
        );
    }
}
