// The model runs SQUARED_DIFFERENCE and the custom op `SignalWindow`: a kernel set
// with the builtin but not the custom op does not run it, and the error names the custom
// code.
planner_macros::include_model!("../plans/untyped.plan.json");

use planner::rt::kernel::{Builtin, Kernel, OpView, op_key};

struct NoWindow;

impl Kernel for NoWindow {
    type Error = ();
}

impl Builtin<{ op_key("SQUARED_DIFFERENCE") }> for NoWindow {
    fn builtin(&mut self, _: OpView<'_, '_>) -> Result<(), ()> {
        Ok(())
    }
}

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    let _ = model.run(&mut NoWindow);
}
