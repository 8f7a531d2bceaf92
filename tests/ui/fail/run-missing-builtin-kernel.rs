// Both ops of this model are RESIZE_NEAREST_NEIGHBOR, a builtin op without typed options:
// a kernel set without it does not run the model, and the one error (one per missing op
// kind, not per op) names the op.
planner_macros::include_model!("../plans/untyped-twice.plan.json");

use planner::rt::kernel::Kernel;

struct NoResize;

impl Kernel for NoResize {
    type Error = ();
}

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let _ = model.run(&mut NoResize);
}
