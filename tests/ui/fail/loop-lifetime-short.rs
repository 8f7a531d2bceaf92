// A plan file whose loop value `count` (a WHILE output, copied back at the end of each pass)
// was edited to die at op 7, one op before the loop's last: its bytes could be reused by the
// last op of a pass and read by the next pass. The loader refuses it, naming the tensor and
// the loop.
planner_macros::include_model!("../plans/tamper-loop-lifetime.plan.json");

fn main() {}
