// A tensor view borrows the handle: moving the handle ends the view.
planner_macros::include_model!("../plans/tiny.plan.json");

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let input = model.input_x_mut();
    let moved = model;
    input[0] = 1;
    drop(moved);
}
