// The plan says the constant arena is 80 bytes; the blob on disk has 64.
planner_macros::include_model!("../plans/blob-length.plan.json");

fn main() {}
