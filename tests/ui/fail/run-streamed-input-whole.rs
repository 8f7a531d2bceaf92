// A plan whose input is streamed: there is no `run()` (the input never sits whole in RAM,
// so there is nothing to fill beforehand) and no whole-input accessor; `run_streamed`
// takes a callback that fills one region per patch.
planner_macros::include_model!("../plans/patches-streamed.plan.json");

include!("../kernels.rs");

struct K;

kernels!(K { MaxPool2d::max_pool_2d(Pool2dOptions), Relu::relu(NoOptions) } + Patches);

fn main() {
    let mut model = patches_streamed::Model::take().unwrap().init();
    model.input_x_mut().fill(0);
    let _ = model.run(&mut K);
}
