// `h` at offset 8 though the plan aligns slots to 16 bytes.
planner_macros::include_model!("../plans/misaligned.plan.json");

fn main() {}
