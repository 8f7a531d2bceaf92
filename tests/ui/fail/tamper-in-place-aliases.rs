// Tamper suite, in-place outputs with aliases. `tamper-in-place-base` is a valid plan: op 1
// runs RELU in place, its output `y` over the input `x`, and `e` is an alias of `y` live at
// op 2; it compiles (no error below names `ipbase`). Each other plan is the base with one
// edit (hashes restated), and each must be refused: one error per plan below.
mod base {
    planner_macros::include_model!("../plans/tamper-in-place-base.plan.json");
}
mod alias_live_before {
    planner_macros::include_model!("../plans/tamper-in-place-alias-live-before.plan.json");
}
mod alias_written_before {
    planner_macros::include_model!("../plans/tamper-in-place-alias-written-before.plan.json");
}
mod input_alias_outlives {
    planner_macros::include_model!("../plans/tamper-in-place-input-alias-outlives.plan.json");
}
mod output_is_alias {
    planner_macros::include_model!("../plans/tamper-in-place-output-is-alias.plan.json");
}
mod alias_moved {
    planner_macros::include_model!("../plans/tamper-in-place-alias-moved.plan.json");
}

fn main() {}
