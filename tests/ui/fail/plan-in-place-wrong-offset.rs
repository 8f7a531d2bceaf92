// A tampered plan file that declares an op in place wrongly: an output off its input's offset.
planner_macros::include_model!("../plans/in-place-wrong-offset.plan.json");

fn main() {}
