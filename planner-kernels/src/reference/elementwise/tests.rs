//! The int16, int32 and int64 element types of `ADD`, `SUB`, `MUL`, `DIV`, `MAXIMUM` and
//! `MINIMUM`: what the TFLM goldens (`op_b4_*`) cannot show (refusals, in place, values TFLM
//! is undefined on).

use planner_rt::TensorInfo;
use planner_rt::kernel::{In, Out};
use planner_rt::options::{Activation, AddOptions, DivOptions, MulOptions};

use super::{add, arithmetic, min_max, mul, sub};
use crate::reference::KernelError;
use crate::reference::test_support::{run, tensor_info};

fn info<T>(shape: &'static [usize], q: Option<(&'static [f32], &'static [i64])>) -> TensorInfo<T> {
    tensor_info(shape, q, 0)
}

#[test]
fn int32_add_sub_mul_wrap_broadcast_and_clamp_as_tflm() {
    let a = [i32::MAX, i32::MIN, 7, -7, 100_000, -3];
    let b = [1i32, -1, 65_536];
    let (ai, bi, yi) = (
        info::<i32>(&[2, 3], None),
        info::<i32>(&[3], None),
        info(&[2, 3], None),
    );
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
    let mut y = [0i32; 6];
    // ADD ignores its fused activation on int32, as TFLM does.
    let relu = AddOptions {
        activation: Activation::Relu,
        ..Default::default()
    };
    run(&inputs, Out::new(&mut y, &yi), |op| add(op, &relu, false)).unwrap();
    assert_eq!(y, [i32::MIN, i32::MAX, 65_543, -6, 99_999, 65_533]);
    // SUB clamps to it.
    run(&inputs, Out::new(&mut y, &yi), |op| sub(op, &relu, false)).unwrap();
    assert_eq!(y, [i32::MAX - 1, 0, 0, 0, 100_001, 0]);
    let relu6 = MulOptions {
        activation: Activation::Relu6,
    };
    run(&inputs, Out::new(&mut y, &yi), |op| mul(op, &relu6, false)).unwrap();
    // i32::MIN · -1 wraps to i32::MIN, clamped to 0.
    assert_eq!(y, [6, 0, 6, 0, 0, 0]);
    let none = MulOptions::default();
    run(&inputs, Out::new(&mut y, &yi), |op| mul(op, &none, false)).unwrap();
    assert_eq!(y, [i32::MAX, i32::MIN, 458_752, -7, -100_000, -196_608]);
    // 100_000 · 65_536 wraps.
    let (c, d) = ([100_000i32], [65_536i32]);
    let one = info::<i32>(&[1], None);
    let mut z = [0i32];
    let inputs = [Some(In::new(&c, &one)), Some(In::new(&d, &one))];
    run(&inputs, Out::new(&mut z, &one), |op| mul(op, &none, false)).unwrap();
    assert_eq!(z, [100_000i32.wrapping_mul(65_536)]);
}

#[test]
fn int32_add_runs_in_place_and_refuses_quantised_inputs() {
    let b = [10i32, -20];
    let xi = info::<i32>(&[2], None);
    let mut y = [5i32, 6];
    let inputs = [Some(In::in_place(0, &xi)), Some(In::new(&b, &xi))];
    run(&inputs, Out::new(&mut y, &xi), |op| {
        sub(op, &AddOptions::default(), true)
    })
    .unwrap();
    assert_eq!(y, [-5, 26]);
    let q = info::<i32>(&[2], Some((&[0.5], &[0])));
    let a = [1i32, 2];
    let inputs = [Some(In::new(&a, &q)), Some(In::new(&b, &xi))];
    let e = run(&inputs, Out::new(&mut y, &xi), |op| {
        add(op, &AddOptions::default(), false)
    });
    assert!(matches!(e, Err(KernelError::Quantization { .. })), "{e:?}");
    // MUL ignores int32 quantisations, as TFLM does.
    run(&inputs, Out::new(&mut y, &xi), |op| {
        mul(op, &MulOptions::default(), false)
    })
    .unwrap();
    assert_eq!(y, [10, -40]);
}

#[test]
fn int16_add_and_mul_scale_saturate_and_check_zero_points() {
    // Equal scales: ADD gives the sum, saturated to int16.
    let a = [1000i16, 30_000, -30_000, 0];
    let b = [24i16, 30_000, -30_000, -1];
    let q = info::<i16>(&[4], Some((&[0.001], &[0])));
    let inputs = [Some(In::new(&a, &q)), Some(In::new(&b, &q))];
    let mut y = [0i16; 4];
    run(&inputs, Out::new(&mut y, &q), |op| {
        add(op, &AddOptions::default(), false)
    })
    .unwrap();
    assert_eq!(y, [1024, 32_767, -32_768, -1]);
    // MUL: the product times 0.001 · 0.001 / 0.001, saturated to int16.
    run(&inputs, Out::new(&mut y, &q), |op| {
        mul(op, &MulOptions::default(), false)
    })
    .unwrap();
    assert_eq!(y, [24, 32_767, 32_767, 0]);
    // TFLM's int16 MUL takes zero points of 0 only.
    let z = info::<i16>(&[4], Some((&[0.001], &[3])));
    let inputs = [Some(In::new(&a, &z)), Some(In::new(&b, &q))];
    let e = run(&inputs, Out::new(&mut y, &q), |op| {
        mul(op, &MulOptions::default(), false)
    });
    assert!(matches!(e, Err(KernelError::Quantization { .. })), "{e:?}");
    // An int8 output of int16 inputs is refused.
    let mut y8 = [0i8; 4];
    let q8 = info::<i8>(&[4], Some((&[0.001], &[0])));
    let inputs = [Some(In::new(&a, &q)), Some(In::new(&b, &q))];
    let e = run(&inputs, Out::new(&mut y8, &q8), |op| {
        add(op, &AddOptions::default(), false)
    });
    assert!(matches!(e, Err(KernelError::Type { .. })), "{e:?}");
}

#[test]
fn int32_div_truncates_wraps_and_refuses_a_zero_divisor() {
    let a = [7i32, -7, 7, -7, i32::MIN, 5];
    let b = [2i32, 2, -2, -2, -1, 6];
    let xi = info::<i32>(&[6], None);
    let inputs = [Some(In::new(&a, &xi)), Some(In::new(&b, &xi))];
    let mut y = [0i32; 6];
    let none = DivOptions::default();
    run(&inputs, Out::new(&mut y, &xi), |op| {
        arithmetic::div(op, &none)
    })
    .unwrap();
    assert_eq!(y, [3, -3, -3, 3, i32::MIN, 0]);
    let relu_n1 = DivOptions {
        activation: Activation::ReluN1To1,
    };
    run(&inputs, Out::new(&mut y, &xi), |op| {
        arithmetic::div(op, &relu_n1)
    })
    .unwrap();
    assert_eq!(y, [1, -1, -1, 1, -1, 0]);
    let zero = [1i32, 0, 1, 1, 1, 1];
    let inputs = [Some(In::new(&a, &xi)), Some(In::new(&zero, &xi))];
    let e = run(&inputs, Out::new(&mut y, &xi), |op| {
        arithmetic::div(op, &none)
    });
    assert!(matches!(e, Err(KernelError::Value { .. })), "{e:?}");
    let q = info::<i32>(&[6], Some((&[1.0], &[0])));
    let inputs = [Some(In::new(&a, &q)), Some(In::new(&b, &xi))];
    let e = run(&inputs, Out::new(&mut y, &xi), |op| {
        arithmetic::div(op, &none)
    });
    assert!(matches!(e, Err(KernelError::Quantization { .. })), "{e:?}");
}

#[test]
fn min_max_keep_tflm_s_operand_on_nan_and_ties() {
    let a = [f32::NAN, 1.0, 0.0, -0.0, 2.0];
    let b = [1.0f32, f32::NAN, -0.0, 0.0, f32::NEG_INFINITY];
    let xi = info::<f32>(&[5], None);
    let inputs = [Some(In::new(&a, &xi)), Some(In::new(&b, &xi))];
    let mut y = [0f32; 5];
    for max in [true, false] {
        run(&inputs, Out::new(&mut y, &xi), |op| min_max(op, max)).unwrap();
        let bits = y.map(f32::to_bits);
        // NaN first: the second operand; NaN second: NaN; equal zeros: the second.
        let last = if max { 2.0 } else { f32::NEG_INFINITY };
        let want = [1.0, f32::NAN, -0.0, 0.0, last].map(f32::to_bits);
        assert_eq!(bits, want, "max {max}");
    }
    let c = [i64::MIN, 5, i64::MAX];
    let d = [3i64];
    let (ci, di) = (info::<i64>(&[3], None), info::<i64>(&[1], None));
    let inputs = [Some(In::new(&c, &ci)), Some(In::new(&d, &di))];
    let mut z = [0i64; 3];
    run(&inputs, Out::new(&mut z, &ci), |op| min_max(op, false)).unwrap();
    assert_eq!(z, [i64::MIN, 3, 3]);
    let mut u = [0u8; 3];
    let ui = info::<u8>(&[3], None);
    let e = run(&inputs, Out::new(&mut u, &ui), |op| min_max(op, true));
    assert!(matches!(e, Err(KernelError::Type { .. })), "{e:?}");
}
