// ADD(r, state) -> state: state is the op's output, so the view has no shared `input1` of
// the same bytes.
planner_macros::include_model!("../plans/stateful.plan.json");

fn main() {
    let mut model = stateful::Model::take().unwrap().init();
    let op = model.op2();
    let _ = op.input1;
}
