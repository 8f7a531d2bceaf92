// A kernel set with QUANTIZE and RELU kernels but no in-place ones, for a plan that runs
// both in place: `run` does not compile, and the errors name the ops.
planner_macros::include_model!("../plans/inplace.plan.json");

include!("../kernels.rs");

struct OutOfPlace;

kernels!(OutOfPlace { Quantize::quantize(NoOptions), Relu::relu(NoOptions) });

fn main() {
    let mut model = inplace::Model::take().unwrap().init();
    let _ = model.run(&mut OutOfPlace);
}
