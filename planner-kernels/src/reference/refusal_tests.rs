//! Refusals of issue 39's kernels that the TFLM goldens cannot show (TFLM aborts or is
//! undefined there): operand values far outside the tensors are errors, not panics or
//! overflows.

use planner_rt::TensorInfo;
use planner_rt::kernel::{In, Out};
use planner_rt::options::{MirrorPadMode, MirrorPadOptions};

use super::KernelError;
use super::index::lookup;
use super::shape::space;
use super::test_support::{run, tensor_info};

fn info<T>(shape: &'static [usize]) -> TensorInfo<T> {
    tensor_info(shape, None, 0)
}

#[test]
fn gather_nd_refuses_indices_far_outside_the_params() {
    let p = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let pi = info::<f32>(&[2, 3]);
    let ii = info::<i32>(&[1, 2]);
    let yi = info::<f32>(&[1]);
    for idx in [[i32::MAX, i32::MAX], [i32::MIN, 0], [0, -1], [1, 3]] {
        let mut y = [0.0f32; 1];
        let inputs = [Some(In::new(&p, &pi)), Some(In::new(&idx, &ii))];
        let e = run(&inputs, Out::new(&mut y, &yi), lookup::gather_nd).unwrap_err();
        assert!(matches!(e, KernelError::Value { .. }), "{idx:?}: {e}");
    }
    // In range: row 1, column 2.
    let idx = [1i32, 2];
    let mut y = [0.0f32; 1];
    let inputs = [Some(In::new(&p, &pi)), Some(In::new(&idx, &ii))];
    run(&inputs, Out::new(&mut y, &yi), lookup::gather_nd).unwrap();
    assert_eq!(y, [6.0]);
}

#[test]
fn mirror_pad_refuses_amounts_outside_the_dimension() {
    let x = [1i8, 2, 3];
    let xi = info::<i8>(&[3]);
    let pi = info::<i64>(&[1, 2]);
    let yi = info::<i8>(&[5]);
    let o = MirrorPadOptions {
        mode: MirrorPadMode::Reflect,
    };
    for pads in [[i64::MIN, 2], [i64::MAX, 0], [-1, 3], [0, i64::MAX], [4, 0]] {
        let mut y = [0i8; 5];
        let inputs = [Some(In::new(&x, &xi)), Some(In::new(&pads, &pi))];
        let e = run(&inputs, Out::new(&mut y, &yi), |op| {
            space::mirror_pad(op, &o)
        })
        .unwrap_err();
        assert!(matches!(e, KernelError::Value { .. }), "{pads:?}: {e}");
    }
    let pads = [2i64, 0];
    let mut y = [0i8; 5];
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&pads, &pi))];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        space::mirror_pad(op, &o)
    })
    .unwrap();
    assert_eq!(y, [3, 2, 1, 2, 3]);
}
