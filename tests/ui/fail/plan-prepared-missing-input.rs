// A plan whose op 2 says its prepared input is #4, which the op does not have: the macro
// refuses it, naming the op.
planner_macros::include_model!("../plans/prepared-missing-input.plan.json");

fn main() {}
