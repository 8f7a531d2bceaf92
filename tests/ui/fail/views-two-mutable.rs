// Two mutable views at once would alias the arena: the borrow checker refuses.
planner_macros::include_model!("../plans/tiny.plan.json");

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let a = model.tensor_tiny_in_mut();
    let b = model.tensor_tiny_h_mut();
    a[0] = b[0];
}
