// An op view borrows the whole handle mutably: no tensor view may outlive into it.
planner_macros::include_model!("../plans/tiny.plan.json");

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let input = model.input_x();
    let op = model.op0();
    op.output0[0] = input[0];
}
