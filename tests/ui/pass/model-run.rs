// `run()` walks the ops in plan order through the kernel trait of their kind, with each op's
// tensors, options and quantisation; hooks see every op; a kernel error names the op.
planner_macros::include_model!("../plans/stateful.plan.json");

use planner::rt::kernel::{Add, Data, FullyConnected, Hooks, Kernel, OpView, Reshape};
use planner::rt::options::{Activation, AddOptions, FullyConnectedOptions, ReshapeOptions};

#[derive(Default)]
struct Sums {
    seen: Vec<&'static str>,
    fail_add: bool,
}

impl Kernel for Sums {
    type Error = &'static str;
}

impl FullyConnected for Sums {
    fn fully_connected(&mut self, op: OpView<'_, '_>, o: &FullyConnectedOptions) -> Result<(), &'static str> {
        assert_eq!(o.activation, Activation::None);
        self.seen.push(op.opcode);
        let x = op.input(0).and_then(|x| x.i8()).ok_or("input 0")?;
        let w = op.input(1).and_then(|w| w.i8()).ok_or("input 1")?;
        assert!(op.input(2).is_none(), "the bias is left out");
        assert_eq!(op.input(1).unwrap().quant.unwrap().zero_point, &[-1]);
        let y = op.outputs[0].i8().ok_or("output 0")?;
        for (r, out) in y.iter_mut().enumerate() {
            *out = x.iter().zip(&w[r * 4..r * 4 + 4]).map(|(a, b)| a.wrapping_mul(*b)).fold(0i8, i8::wrapping_add);
        }
        Ok(())
    }
}

impl Reshape for Sums {
    fn reshape(&mut self, op: OpView<'_, '_>, o: &ReshapeOptions) -> Result<(), &'static str> {
        assert_eq!(o.new_shape.as_slice(), &[4]);
        // The plan made the reshape's output its input's bytes.
        assert!(matches!(op.input(0).unwrap().data, Data::InPlace(0)));
        self.seen.push(op.opcode);
        Ok(())
    }
}

impl Add for Sums {
    fn add(&mut self, op: OpView<'_, '_>, _: &AddOptions) -> Result<(), &'static str> {
        self.seen.push(op.opcode);
        if self.fail_add {
            return Err("no add today");
        }
        // The state is both an input and the output: read in place.
        assert!(matches!(op.input(1).unwrap().data, Data::InPlace(0)));
        let r = op.input(0).and_then(|r| r.i8()).ok_or("input 0")?;
        let state = op.outputs[0].i16().ok_or("output 0")?;
        for (s, v) in state.iter_mut().zip(r) {
            *s += i16::from(*v);
        }
        Ok(())
    }
}

struct Count(Vec<(usize, &'static str, bool)>);

impl Hooks for Count {
    fn before_op(&mut self, index: usize, opcode: &'static str) {
        self.0.push((index, opcode, false));
    }
    fn after_op(&mut self, index: usize, opcode: &'static str) {
        self.0.push((index, opcode, true));
    }
}

fn main() {
    let mut model = stateful::Model::take().unwrap().init();
    assert_eq!(stateful::ops::Op0::OPTIONS.activation, Activation::None);
    assert_eq!(stateful::ops::Op1::OPTIONS.new_shape.as_slice(), &[4]);
    assert_eq!(stateful::OPTIONS.len(), 3);
    model.input_in_mut().copy_from_slice(&[1, 0, 0, 0]);
    let mut kernels = Sums::default();
    let mut hooks = Count(Vec::new());
    model.run_with(&mut kernels, &mut hooks).unwrap();
    assert_eq!(kernels.seen, ["FULLY_CONNECTED", "RESHAPE", "ADD"]);
    assert_eq!(hooks.0.len(), 6);
    assert_eq!(hooks.0[0], (0, "FULLY_CONNECTED", false));
    assert_eq!(hooks.0[5], (2, "ADD", true));
    // out[r] = w[r][0] (the input is [1, 0, 0, 0]); the state accumulates it.
    let w: Vec<i16> = model.tensor_tiny_w().chunks(4).map(|r| i16::from(r[0])).collect();
    assert_eq!(model.output_state(), &w[..]);
    model.run(&mut kernels).unwrap();
    let twice: Vec<i16> = w.iter().map(|v| v * 2).collect();
    assert_eq!(model.output_state(), &twice[..]);

    let mut failing = Sums { fail_add: true, ..Sums::default() };
    let e = model.run(&mut failing).unwrap_err();
    assert_eq!((e.op, e.opcode, e.error), (2, "ADD", "no add today"));
}
