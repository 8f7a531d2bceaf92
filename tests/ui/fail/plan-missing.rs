// A plan path that does not exist.
planner_macros::include_model!("../plans/no-such-model.plan.json");

fn main() {
    // The stub keeps this from adding a second error.
    let _ = no_such_model::Model::take();
}
