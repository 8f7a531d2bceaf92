// A tampered plan file that declares an op in place wrongly: an input read by a later op.
planner_macros::include_model!("../plans/in-place-read-later.plan.json");

fn main() {}
