// The plan with row overlap (`plans/rows.plan.json`) with its depthwise convolution's input
// moved 16 bytes nearer its output: the last output rows would overwrite input rows the op
// has yet to read. The `const` check refuses it, naming the op, both tensors and the least
// distance.
planner_macros::include_model!("../plans/tamper-rows-shift.plan.json");

fn main() {}
