// The group `const` check on tables no plan file gives (the loader refuses those plans
// first): it alone must refuse each class of tampering the generated handles rely on.
use planner::rt::check::{
    ArenaRow, GroupArenaRow, GroupModelRow, GroupTable, MemoryRow, NONE, PlanTable, SlotRow,
    check_group,
};

include!("../../../planner-rt/src/check/fixture/rows.rs");
include!("../../../planner-rt/src/check/fixture/group.rs");

const fn group(
    models: &'static [GroupModelRow<'static>],
    concurrent: &'static [&'static [u32]],
    arenas: &'static [GroupArenaRow<'static>],
) -> GroupTable<'static> {
    GroupTable { group: "g", arenas, models, concurrent }
}
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
