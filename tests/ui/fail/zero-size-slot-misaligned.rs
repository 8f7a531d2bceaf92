// `out` is a zero-size f64 slot at offset 8 of a scratch arena that asks for alignment 1:
// bound to a buffer one byte past a boundary, its empty `&[f64]` would be misaligned.
planner_macros::include_model!("../plans/zero-size-misaligned.plan.json");

fn main() {}
