// Both ops of this model are SQUARED_DIFFERENCE, a builtin op without typed options:
// a kernel set without it does not run the model, and the one error (one per missing op
// kind, not per op) names the op.
planner_macros::include_model!("../plans/untyped-twice.plan.json");

include!("../kernels.rs");

struct NoSquaredDifference;

kernels!(NoSquaredDifference {});

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let _ = model.run(&mut NoSquaredDifference);
}
