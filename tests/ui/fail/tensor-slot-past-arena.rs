// `h` at offset 32 of a 20-byte arena.
planner_macros::include_model!("../plans/past-arena.plan.json");

fn main() {}
