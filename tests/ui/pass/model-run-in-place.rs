// An in-place plan: QUANTIZE writes its `i8` output over its `f32` input (the model input),
// then RELU writes over that. `run()` asks for the in-place kernel traits only; each op's
// output buffer spans the longer tensor with the input's bytes at its start; the tap shows
// the output with its own element count.
planner_macros::include_model!("../plans/inplace.plan.json");

use planner::rt::kernel::{Data, Hooks, Kernel, OpView, QuantizeInPlace, ReluInPlace, Tap};
use planner::rt::options::NoOptions;

struct InPlace;

impl Kernel for InPlace {
    type Error = &'static str;
}

impl QuantizeInPlace for InPlace {
    fn quantize_in_place(&mut self, op: OpView<'_, '_>, _: &NoOptions) -> Result<(), &'static str> {
        assert!(matches!(op.input(0).unwrap().data, Data::InPlace(0)));
        assert_eq!(op.input(0).unwrap().shape, &[1, 6]);
        let zero = op.outputs[0].quant.unwrap().zero_point[0] as i32;
        let buf = op.outputs[0].i8().ok_or("output 0")?;
        // Six f32 (24 bytes) in a buffer of 24 i8; element i is written after it is read.
        assert_eq!(buf.len(), 24);
        for i in 0..6 {
            let b: [u8; 4] = core::array::from_fn(|k| buf[4 * i + k] as u8);
            let x = f32::from_ne_bytes(b);
            buf[i] = ((x / 0.5).round() as i32 + zero).clamp(-128, 127) as i8;
        }
        Ok(())
    }
}

impl ReluInPlace for InPlace {
    fn relu_in_place(&mut self, op: OpView<'_, '_>, _: &NoOptions) -> Result<(), &'static str> {
        assert!(matches!(op.input(0).unwrap().data, Data::InPlace(0)));
        let zero = op.outputs[0].quant.unwrap().zero_point[0] as i8;
        let buf = op.outputs[0].i8().ok_or("output 0")?;
        assert_eq!(buf.len(), 6);
        for v in buf.iter_mut() {
            *v = (*v).max(zero);
        }
        Ok(())
    }
}

struct Lens(Vec<(usize, usize)>);

impl Hooks for Lens {
    fn tap(&mut self, op: &Tap<'_, '_>) {
        self.0.push((op.index, op.output(0).unwrap().data.len().unwrap()));
    }
}

fn main() {
    let mut model = inplace::Model::take().unwrap().init();
    assert_eq!(inplace::ops::Op0::OPCODE, "QUANTIZE");
    let x = [-3.0f32, -1.0, 0.0, 0.4, 1.0, 70.0];
    model.input_x_mut().copy_from_slice(&x);
    let mut lens = Lens(Vec::new());
    model.run_with(&mut InPlace, &mut lens).unwrap();
    // q = round(x / 0.5) - 1, then relu at the zero point -1.
    assert_eq!(model.output_y(), &[-1, -1, -1, 0, 1, 127]);
    assert_eq!(lens.0, [(0, 6), (1, 6)]);
}
