// Tamper suite, group sets and arenas: `pair.plan.json` (models a, b, c; b and c may run at
// the same time, c keeps state) with one edit each (hashes restated); each must be refused,
// by the loader or by the group's `const` check: one error per plan below.
mod set_twice {
    planner_macros::include_model!("../plans/tamper-group-set-twice.plan.json");
}
mod set_unknown {
    planner_macros::include_model!("../plans/tamper-group-set-unknown.plan.json");
}
mod set_overlap {
    planner_macros::include_model!("../plans/tamper-group-set-overlap.plan.json");
}
mod arena_size {
    planner_macros::include_model!("../plans/tamper-group-arena-size.plan.json");
}
mod model_twice {
    planner_macros::include_model!("../plans/tamper-group-model-twice.plan.json");
}
mod persistent_shared {
    planner_macros::include_model!("../plans/tamper-group-persistent-shared.plan.json");
}

fn main() {}
