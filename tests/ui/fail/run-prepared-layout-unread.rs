// A model planned with `[kernels] set = "optimized"` (its FULLY_CONNECTED ops read prepared
// requant-v1 constants as input 3) run with the reference kernels, which do not read them:
// `run` does not compile, and the error says which kernel set the plan was prepared for.
planner_macros::include_model!("../plans/prepared.plan.json");

fn main() {
    let mut model = prepared::Model::take().unwrap().init();
    let _ = model.run(&mut planner_kernels::Reference);
}
