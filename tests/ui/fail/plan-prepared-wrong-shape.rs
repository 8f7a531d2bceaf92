// A plan whose prepared requant-v1 input of op 0 was edited from [3, 16] to [6, 8] (the same
// bytes): the macro refuses it, naming the op, the tensor and the shape it must have.
planner_macros::include_model!("../plans/prepared-wrong-shape.plan.json");

fn main() {}
