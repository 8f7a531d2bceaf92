// `h` moved onto `in`s bytes while both are live at op 0.
planner_macros::include_model!("../plans/overlap.plan.json");

fn main() {}
