// A kernel set with QUANTIZE and RELU kernels but no in-place ones, for a plan that runs
// both in place: `run` does not compile, and the errors name the ops.
planner_macros::include_model!("../plans/inplace.plan.json");

use planner::rt::kernel::{Kernel, OpView, Quantize, Relu};
use planner::rt::options::NoOptions;

struct OutOfPlace;

impl Kernel for OutOfPlace {
    type Error = ();
}

impl Quantize for OutOfPlace {
    fn quantize(&mut self, _: OpView<'_, '_>, _: &NoOptions) -> Result<(), ()> {
        Ok(())
    }
}

impl Relu for OutOfPlace {
    fn relu(&mut self, _: OpView<'_, '_>, _: &NoOptions) -> Result<(), ()> {
        Ok(())
    }
}

fn main() {
    let mut model = inplace::Model::take().unwrap().init();
    let _ = model.run(&mut OutOfPlace);
}
