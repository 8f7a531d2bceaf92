// Ops without typed options run through `Builtin` (by TFLite name) and `Custom` (by custom
// code), with their tensors; the tap sees each op's outputs after it ran.
planner_macros::include_model!("../plans/untyped.plan.json");

use planner::rt::kernel::{Builtin, Custom, Hooks, Kernel, OpView, Tap, op_key};

#[derive(Default)]
struct Kernels {
    seen: Vec<&'static str>,
}

impl Kernel for Kernels {
    type Error = &'static str;
}

impl Kernels {
    /// Notes the op and writes `f` of each input element to the output.
    fn map(&mut self, op: OpView<'_, '_>, f: impl Fn(i8) -> i8) -> Result<(), &'static str> {
        self.seen.push(op.opcode);
        let x = op.input(0).and_then(|x| x.i8()).ok_or("input 0")?;
        let y = op.outputs[0].i8().ok_or("output 0")?;
        for (o, v) in y.iter_mut().zip(x) {
            *o = f(*v);
        }
        Ok(())
    }
}

impl Builtin<{ op_key("SQUARED_DIFFERENCE") }> for Kernels {
    fn builtin(&mut self, op: OpView<'_, '_>) -> Result<(), &'static str> {
        self.map(op, |v| v.wrapping_add(1))
    }
}

impl Custom<{ op_key("SignalWindow") }> for Kernels {
    fn custom(&mut self, op: OpView<'_, '_>) -> Result<(), &'static str> {
        self.map(op, |v| v.wrapping_mul(2))
    }
}

/// Keeps each op's first output, as the tap shows it.
#[derive(Default)]
struct Outputs(Vec<Vec<i8>>);

impl Hooks for Outputs {
    fn tap(&mut self, op: &Tap<'_, '_>) {
        let y = op.output(0).and_then(|y| y.i8()).unwrap_or_default();
        self.0.push(y.to_vec());
    }
}

fn main() {
    let mut model = tiny::Model::take().unwrap().init();
    model.input_x_mut().copy_from_slice(&[1, 2, 3, 4]);
    let mut kernels = Kernels::default();
    let mut tap = Outputs::default();
    model.run_with(&mut kernels, &mut tap).unwrap();
    assert_eq!(kernels.seen, ["SQUARED_DIFFERENCE", "CUSTOM:SignalWindow"]);
    assert_eq!(tap.0, [vec![2, 3, 4, 5], vec![4, 6, 8, 10]]);
    assert_eq!(model.output_y(), &[4, 6, 8, 10]);
}
