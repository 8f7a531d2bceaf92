// A model name, but no build script told the macro where plans are.
planner_macros::include_model!("tiny");

fn main() {}
