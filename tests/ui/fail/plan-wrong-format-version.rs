// A plan file from an older planner (format version 3).
planner_macros::include_model!("../plans/version.plan.json");

fn main() {}
