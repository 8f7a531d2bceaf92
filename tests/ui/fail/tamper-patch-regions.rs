// Tamper suite, patch regions: `patches.plan.json` (a valid stage: two MAX_POOL_2D ops split
// after op 1 into a 2x2 grid) with one edit each (hashes restated); each must be refused,
// by the plan file's reader or by the `const` check of the stage: one error per plan below.
mod region_past_slot {
    planner_macros::include_model!("../plans/tamper-patch-region-past-slot.plan.json");
}
mod region_outside {
    planner_macros::include_model!("../plans/tamper-patch-region-outside.plan.json");
}
mod tiles_overlap {
    planner_macros::include_model!("../plans/tamper-patch-tiles-overlap.plan.json");
}
mod regions_missing {
    planner_macros::include_model!("../plans/tamper-patch-regions-missing.plan.json");
}
mod split_not_pinned {
    planner_macros::include_model!("../plans/tamper-patch-split-not-pinned.plan.json");
}
mod split_past_ops {
    planner_macros::include_model!("../plans/tamper-patch-split-past-ops.plan.json");
}

fn main() {}
