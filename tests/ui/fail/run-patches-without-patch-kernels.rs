// A kernel set with every op kind of a model planned with patches, but without `Patches`
// (its kernels would compute whole-tensor arithmetic on a region): `run` does not compile,
// and the error says the model was planned with patches.
planner_macros::include_model!("../plans/patches.plan.json");

include!("../kernels.rs");

struct WholeOnly;

kernels!(WholeOnly { MaxPool2d::max_pool_2d(Pool2dOptions), Relu::relu(NoOptions) });

fn main() {
    let mut model = patches::Model::take().unwrap().init();
    let _ = model.run(&mut WholeOnly);
}
