// A plan whose input is streamed: there is no `run()` (the input never sits whole in RAM,
// so there is nothing to fill beforehand) and no whole-input accessor; `run_streamed`
// takes a callback that fills one region per patch.
planner_macros::include_model!("../plans/patches-streamed.plan.json");

use planner::rt::kernel::{Kernel, MaxPool2d, OpView, Patches, Relu};
use planner::rt::options::{NoOptions, Pool2dOptions};

struct K;

impl Kernel for K {
    type Error = ();
}

impl Patches for K {}

impl MaxPool2d for K {
    fn max_pool_2d(&mut self, _: OpView<'_, '_>, _: &Pool2dOptions) -> Result<(), ()> {
        Ok(())
    }
}

impl Relu for K {
    fn relu(&mut self, _: OpView<'_, '_>, _: &NoOptions) -> Result<(), ()> {
        Ok(())
    }
}

fn main() {
    let mut model = patches_streamed::Model::take().unwrap().init();
    model.input_x_mut().fill(0);
    let _ = model.run(&mut K);
}
