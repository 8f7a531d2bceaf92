// A kernel set with every op kind of a model planned with patches, but without `Patches`
// (its kernels would compute whole-tensor arithmetic on a region): `run` does not compile,
// and the error says the model was planned with patches.
planner_macros::include_model!("../plans/patches.plan.json");

use planner::rt::kernel::{Kernel, MaxPool2d, OpView, Relu};
use planner::rt::options::{NoOptions, Pool2dOptions};

struct WholeOnly;

impl Kernel for WholeOnly {
    type Error = ();
}

impl MaxPool2d for WholeOnly {
    fn max_pool_2d(&mut self, _: OpView<'_, '_>, _: &Pool2dOptions) -> Result<(), ()> {
        Ok(())
    }
}

impl Relu for WholeOnly {
    fn relu(&mut self, _: OpView<'_, '_>, _: &NoOptions) -> Result<(), ()> {
        Ok(())
    }
}

fn main() {
    let mut model = patches::Model::take().unwrap().init();
    let _ = model.run(&mut WholeOnly);
}
