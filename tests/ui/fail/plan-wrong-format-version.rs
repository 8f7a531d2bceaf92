// A plan file from a newer planner.
planner_macros::include_model!("../plans/version.plan.json");

fn main() {}
