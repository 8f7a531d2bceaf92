// `pair.plan.json` with model `b` edited (hashes restated): `e` is an alias of `y`, op 1's
// in-place output over `x`, but live at op 0, where op 0 reads `x` and writes `e`. A group
// member's own check must refuse it as a single model's does.
planner_macros::include_model!("../plans/pair-in-place-alias-early.plan.json");

fn main() {}
