// The scratch arena needs 20 bytes; its budget was cut to 16.
planner_macros::include_model!("../plans/over-budget.plan.json");

fn main() {}
