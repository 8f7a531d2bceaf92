// A tampered plan file that declares an op in place wrongly: an input whose lifetime the plan says outlives the op (the const check refuses the overlap).
planner_macros::include_model!("../plans/in-place-input-outlives.plan.json");

fn main() {}
