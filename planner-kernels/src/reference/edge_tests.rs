//! Edge cases of the batch-1 kernels that the TFLM goldens cannot show: inputs where TFLM
//! is undefined, types TFLM does not run, refusals instead of panics.

use planner_rt::TensorInfo;
use planner_rt::kernel::{In, Out};
use planner_rt::options::{Activation, ArgMaxOptions, Dims, DivOptions, GatherOptions, PadOptions};

use super::KernelError;
use super::elementwise::arithmetic;
use super::index::gather;
use super::reduce::axes;
use super::shape::slice;
use super::test_support::{run, tensor_info};

fn info<T>(shape: &'static [usize], q: Option<(&'static [f32], &'static [i64])>) -> TensorInfo<T> {
    tensor_info(shape, q, 0)
}

#[test]
fn div_by_zero_and_tiny_quotients_are_defined() {
    // Offsets: dividends 5, -5, 0, 0; divisors 0, 0, 0, 138. s1 / (s2 · so) = 6.25, so
    // 0 / 138 shifts right by more than 31 bits in TFLM (its x86 build gives zero point
    // plus one there); here the quotient is 0, the output the zero point.
    let a = [2i8, -8, -3, -3];
    let b = [10i8, 10, 10, -128];
    let mut y = [0i8; 4];
    let ai = info::<i8>(&[4], Some((&[0.05], &[-3])));
    let bi = info::<i8>(&[4], Some((&[0.1], &[10])));
    let yi = info::<i8>(&[4], Some((&[0.08], &[5])));
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
    let o = DivOptions {
        activation: Activation::None,
    };
    run(&inputs, Out::new(&mut y, &yi), |op| arithmetic::div(op, &o)).unwrap();
    assert_eq!(y, [127, -128, 5, 5]);
}

#[test]
fn arg_max_writes_int64_and_keeps_the_first_of_ties() {
    let x = [3i8, 7, 7, -1, 0, 0];
    let mut y = [9i64; 2];
    let xi = info::<i8>(&[2, 3], Some((&[0.1], &[0])));
    let yi = info::<i64>(&[2], None);
    let inputs = [Some(In::new(&x, &xi))];
    let o = ArgMaxOptions { axis: -1 };
    run(&inputs, Out::new(&mut y, &yi), |op| axes::arg_max(op, &o)).unwrap();
    assert_eq!(y, [1, 1]);
}

#[test]
fn gather_refuses_an_index_outside_the_axis() {
    let x = [1i8, 2, 3];
    let idx = [3i32];
    let mut y = [0i8; 1];
    let xi = info::<i8>(&[3], None);
    let ii = info::<i32>(&[1], None);
    let yi = info::<i8>(&[1], None);
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&idx, &ii))];
    let o = GatherOptions {
        axis: 0,
        batch_dims: 0,
    };
    let e = run(&inputs, Out::new(&mut y, &yi), |op| gather::gather(op, &o)).unwrap_err();
    assert!(matches!(e, KernelError::Shape { .. }), "{e}");
    // An index of -1 too.
    let idx = [-1i32];
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&idx, &ii))];
    assert!(run(&inputs, Out::new(&mut y, &yi), |op| gather::gather(op, &o)).is_err());
}

#[test]
fn cast_of_out_of_range_floats_does_not_panic() {
    let x = [1e10f32, -1e10, f32::NAN, 300.7, -2.9];
    let mut y = [0i8; 5];
    let xi = info::<f32>(&[5], None);
    let yi = info::<i8>(&[5], None);
    let inputs = [Some(In::new(&x, &xi))];
    run(&inputs, Out::new(&mut y, &yi), arithmetic::cast).unwrap();
    // Saturated to int32, then wrapped; truncation toward zero in range.
    assert_eq!(y, [-1, 0, 0, 44, -2]);
}

#[test]
fn padv2_without_a_value_pads_with_the_zero_point() {
    let x = [1i8, 2];
    let mut y = [0i8; 4];
    let xi = info::<i8>(&[2], Some((&[0.5], &[-7])));
    let yi = info::<i8>(&[4], Some((&[0.5], &[-7])));
    let inputs = [Some(In::new(&x, &xi)), None, None];
    let o = PadOptions {
        before: Dims::new(&[1]).unwrap(),
        after: Dims::new(&[1]).unwrap(),
    };
    run(&inputs, Out::new(&mut y, &yi), |op| slice::padv2(op, &o)).unwrap();
    assert_eq!(y, [-7, 1, 2, -7]);
}

#[test]
fn squared_difference_int16_takes_zero_points_of_0() {
    // TFLM's int16 path does not shift the inputs: each is halved (scale 0.5 over twice the
    // larger scale) and rounded before the difference, 1 and 3 to 1 and 2, 2 and -2 to 1
    // and -1; the squares 1 and 4 times 1 / 0.5.
    let a = [1i16, 2];
    let b = [3i16, -2];
    let mut y = [0i16; 2];
    let ai = info::<i16>(&[2], Some((&[0.5], &[0])));
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &ai))];
    run(
        &inputs,
        Out::new(&mut y, &ai),
        arithmetic::squared_difference,
    )
    .unwrap();
    assert_eq!(y, [2, 8]);
    let zi = info::<i16>(&[2], Some((&[0.5], &[1])));
    let inputs = [Some(In::new(&a, &zi)), Some(In::new(&b, &ai))];
    let e = run(
        &inputs,
        Out::new(&mut y, &ai),
        arithmetic::squared_difference,
    )
    .unwrap_err();
    assert!(matches!(e, KernelError::Quantization { .. }), "{e}");
}
