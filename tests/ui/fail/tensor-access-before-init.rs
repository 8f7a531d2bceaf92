// A handle fresh from take() has no tensor access until init().
planner_macros::include_model!("../plans/tiny.plan.json");

fn main() {
    let model = tiny::Model::take().unwrap();
    let _ = model.tensor_tiny_in();
}
