// The group `const` check on tables no plan file gives (the loader refuses those plans
// first): it alone must refuse each class of tampering the generated handles rely on.
use planner::rt::check::{
    ArenaRow, GroupArenaRow, GroupModelRow, GroupTable, MemoryRow, NONE, PlanTable, SlotRow,
    check_group,
};

const MEMS: &[MemoryRow] = &[MemoryRow { name: "SRAM", budget: NONE }];
const ARENA: ArenaRow = ArenaRow {
    name: "scratch.SRAM",
    memory: 0,
    source: 0,
    size: 96,
    budget: NONE,
    align: 16,
    writable: true,
    blob_len: NONE,
};
const fn slot(id: &'static str, offset: u64) -> SlotRow<'static> {
    SlotRow {
        id,
        arena: 0,
        offset,
        size: 32,
        align: 16,
        elem_size: 1,
        elem_align: 1,
        elements: 32,
        start: 0,
        end: 0,
        root: 0,
    }
}
const fn model(name: &'static str, slots: &'static [SlotRow<'static>]) -> PlanTable<'static> {
    PlanTable {
        model: name,
        memories: MEMS,
        arenas: &[ARENA],
        slots,
        ops: &[],
        by_start: &[0],
        by_end: &[0],
    }
}
const A: PlanTable = model("a", &[slot("x", 0)]);
const B: PlanTable = model("b", &[slot("y", 64)]);
/// Bytes 16..48: overlaps `a`.
const C: PlanTable = model("c", &[slot("z", 16)]);
/// A second model named `a`.
const A2: PlanTable = model("a", &[slot("w", 64)]);
const GROUP_ARENA: GroupArenaRow = GroupArenaRow {
    name: "scratch.SRAM",
    size: 96,
    align: 16,
    writable: true,
    persistent: false,
};
const fn group(
    models: &'static [GroupModelRow<'static>],
    concurrent: &'static [&'static [u32]],
    arenas: &'static [GroupArenaRow<'static>],
) -> GroupTable<'static> {
    GroupTable { group: "g", arenas, models, concurrent }
}
const ARENAS: &[GroupArenaRow] = &[GROUP_ARENA];
const AB: &[GroupModelRow] = &[
    GroupModelRow { plan: &A, arenas: &[0] },
    GroupModelRow { plan: &B, arenas: &[0] },
];

// A set naming one model twice: `a_and_a()` would lend two handles of `a`.
const _: () = check_group(&group(AB, &[&[0, 0]], ARENAS));

// A set naming a model the group does not have.
const _: () = check_group(&group(AB, &[&[1, 2]], ARENAS));

// Two models of one name.
const _: () = check_group(&group(
    &[GroupModelRow { plan: &A, arenas: &[0] }, GroupModelRow { plan: &A2, arenas: &[0] }],
    &[],
    ARENAS,
));

// Overlapping scratch of a concurrent pair, listed high index first.
const _: () = check_group(&group(
    &[GroupModelRow { plan: &A, arenas: &[0] }, GroupModelRow { plan: &C, arenas: &[0] }],
    &[&[1, 0]],
    ARENAS,
));

// The group arena aligned less than the model's check assumed.
const _: () = check_group(&group(AB, &[], &[GroupArenaRow { align: 1, ..GROUP_ARENA }]));

// The group arena read-only while the model views it as mutable.
const _: () = check_group(&group(AB, &[], &[GroupArenaRow { writable: false, ..GROUP_ARENA }]));

fn main() {}
