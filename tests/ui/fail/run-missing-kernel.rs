// A kernel set without the FULLY_CONNECTED kernel the tiny model needs: `run` does not
// compile, and the error names the op.
planner_macros::include_model!("../plans/tiny.plan.json");

include!("../kernels.rs");

struct NoKernels;

kernels!(NoKernels {});

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let _ = model.run(&mut NoKernels);
}
