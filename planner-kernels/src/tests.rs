extern crate std;

use super::*;

#[test]
fn multipliers_split_into_q31_and_shift() {
    assert_eq!(
        quantize_multiplier(0.5),
        QuantizedMultiplier {
            multiplier: 1 << 30,
            shift: 0
        }
    );
    assert_eq!(
        quantize_multiplier(0.25),
        QuantizedMultiplier {
            multiplier: 1 << 30,
            shift: -1
        }
    );
    assert_eq!(
        quantize_multiplier(1.0),
        QuantizedMultiplier {
            multiplier: 1 << 30,
            shift: 1
        }
    );
    assert_eq!(
        quantize_multiplier(3.0),
        QuantizedMultiplier {
            multiplier: 3 << 29,
            shift: 2
        }
    );
    // Just below 1: the mantissa rounds up to 2^31 and renormalises.
    let m = quantize_multiplier(1.0 - 1e-12);
    assert_eq!(
        m,
        QuantizedMultiplier {
            multiplier: 1 << 30,
            shift: 1
        }
    );
    // Subnormal, zero, negative and NaN multipliers.
    assert_eq!(quantize_multiplier(f64::MIN_POSITIVE / 4.0).multiplier, 0);
    assert_eq!(quantize_multiplier(0.0).multiplier, 0);
    assert_eq!(quantize_multiplier(-1.0).multiplier, 0);
    assert_eq!(quantize_multiplier(f64::NAN).multiplier, 0);
}

#[test]
fn the_multiplier_reproduces_the_real_value() {
    for real in [0.000_123_4, 0.003_9, 0.07, 0.5, 0.9, 1.7, 42.0] {
        let m = quantize_multiplier(real);
        let back = f64::from(m.multiplier) * 2f64.powi(m.shift - 31);
        assert!(
            (back - real).abs() <= real * 1e-9,
            "{real} -> {m:?} -> {back}"
        );
    }
}

#[test]
fn rounding_follows_tflite() {
    assert_eq!(rounding_divide_by_pot(5, 1), 3);
    assert_eq!(rounding_divide_by_pot(-5, 1), -3);
    assert_eq!(rounding_divide_by_pot(4, 1), 2);
    assert_eq!(rounding_divide_by_pot(-7, 2), -2);
    assert_eq!(rounding_divide_by_pot(7, 0), 7);
    assert_eq!(
        saturating_rounding_doubling_high_mul(i32::MIN, i32::MIN),
        i32::MAX
    );
    assert_eq!(
        saturating_rounding_doubling_high_mul(1 << 30, 1 << 30),
        1 << 29
    );
    // The high multiply rounds halves up (gemmlowp's nudge): -1.5 -> -1, 1.5 -> 2.
    assert_eq!(saturating_rounding_doubling_high_mul(-3, 1 << 30), -1);
    assert_eq!(saturating_rounding_doubling_high_mul(3, 1 << 30), 2);
}

fn quantize(x: f32, q: Quant) -> i8 {
    ((x / q.scale).round() as i32 + q.zero_point).clamp(-128, 127) as i8
}

fn dequantize(v: i8, q: Quant) -> f32 {
    (i32::from(v) - q.zero_point) as f32 * q.scale
}

/// A layer with TFLite's requantisation: input, filter and output `(scale, zero point)`.
fn layer(q: [(f32, i32); 3], activation: Activation) -> FullyConnected {
    let [input, filter, output] = q.map(|(scale, zero_point)| Quant { scale, zero_point });
    FullyConnected {
        input,
        filter,
        output,
        activation,
        requantize: Requantize::Tflite,
    }
}

/// The integer kernel agrees with float arithmetic on the dequantised values to one step.
#[test]
fn fully_connected_matches_float_arithmetic_to_one_step() {
    let layer = layer([(0.05, -3), (0.02, 0), (0.1, 5)], Activation::None);
    let depth = 5;
    let input: [i8; 10] = [-128, -60, -3, 0, 17, 127, 90, -1, 33, -77];
    let filter: [i8; 15] = [1, -2, 3, -4, 5, 127, -128, 64, -64, 0, 9, 9, -9, -9, 100];
    let bias: [i32; 3] = [100, -2000, 50];
    let mut out = [0i8; 6];
    layer
        .run(depth, &input, &filter, Some(&bias), &mut out)
        .unwrap();
    for b in 0..2 {
        for o in 0..3 {
            let mut acc = bias[o] as f32 * layer.input.scale * layer.filter.scale;
            for d in 0..depth {
                acc += dequantize(input[b * depth + d], layer.input)
                    * dequantize(filter[o * depth + d], layer.filter);
            }
            let want = quantize(acc, layer.output);
            let got = out[b * 3 + o];
            assert!(
                (i32::from(got) - i32::from(want)).abs() <= 1,
                "b{b} o{o}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn relu_clamps_at_the_output_zero_point_and_none_does_not() {
    let mut layer = layer([(1.0, 0), (1.0, 0), (1.0, -10)], Activation::Relu);
    let mut out = [0i8; 1];
    layer.run(1, &[-5], &[1], None, &mut out).unwrap();
    assert_eq!(out, [-10]);
    layer.activation = Activation::None;
    layer.run(1, &[-5], &[1], None, &mut out).unwrap();
    assert_eq!(out, [-15]);
    // Saturation at the int8 range.
    layer.run(1, &[100], &[100], None, &mut out).unwrap();
    assert_eq!(out, [127]);
}

#[test]
fn mismatched_slices_are_errors() {
    let layer = layer([(1.0, 0), (1.0, 0), (1.0, 0)], Activation::None);
    let mut out = [0i8; 2];
    assert_eq!(
        layer.run(0, &[1], &[1], None, &mut out),
        Err(ShapeError::Depth {
            depth: 0,
            filter: 1,
            input: 1
        })
    );
    assert_eq!(
        layer.run(2, &[1, 2], &[1, 2, 3, 4, 5, 6], None, &mut out),
        Err(ShapeError::Output {
            len: 2,
            expected: 3
        })
    );
    assert_eq!(
        layer.run(2, &[1, 2], &[1, 2, 3, 4], Some(&[1]), &mut out),
        Err(ShapeError::Bias {
            len: 1,
            expected: 2
        })
    );
}

#[test]
fn round_half_away_matches_std() {
    let cases = [
        0.0,
        -0.0,
        0.49999999999999994,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        2.4999,
        -7.5000001,
        123456.5,
        -123456.5,
        4503599627370495.5,
        4503599627370497.0,
        1e300,
        -1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for v in cases {
        assert_eq!(round_half_away(v), v.round() as i64, "{v}");
    }
}

/// Both requantisations agree with the float reference to one step, and `Double` is that
/// reference exactly.
#[test]
fn both_requantisations_agree_to_one_step() {
    let mut layer = layer(
        [(0.024480116, -128), (0.004039009, 0), (0.013325124, -128)],
        Activation::Relu,
    );
    let filter: [i8; 16] = [
        -9, -54, 57, 71, 104, 115, 98, 99, 64, -26, 127, 25, -82, 68, 95, 86,
    ];
    let bias: [i32; 16] = core::array::from_fn(|i| (i as i32 - 8) * 731);
    let mut differ = 0;
    for x in i8::MIN..=i8::MAX {
        let (mut a, mut b) = ([0i8; 16], [0i8; 16]);
        layer.requantize = Requantize::Tflite;
        layer.run(1, &[x], &filter, Some(&bias), &mut a).unwrap();
        layer.requantize = Requantize::Double;
        layer.run(1, &[x], &filter, Some(&bias), &mut b).unwrap();
        for o in 0..16 {
            let acc = (i64::from(x) + 128) * i64::from(filter[o]) + i64::from(bias[o]);
            let want = ((acc as f64 * f64::from(0.024480116f32) * f64::from(0.004039009f32)
                / f64::from(0.013325124f32))
            .round() as i64
                - 128)
                .clamp(-128, 127) as i8;
            assert_eq!(b[o], want, "x {x} o {o}");
            assert!(
                (i32::from(a[o]) - i32::from(b[o])).abs() <= 1,
                "x {x} o {o}"
            );
            differ += usize::from(a[o] != b[o]);
        }
    }
    // They are different arithmetics: over 4096 outputs, some ties round differently.
    assert!(differ < 4096 / 8, "{differ}");
}

/// `Optimized` declares that it reads the planner's prepared constants; the generated
/// `run()` of a prepared plan asks for that (tests/ui: the reference set is refused).
#[test]
fn optimized_reads_requant_v1() {
    fn reads<K: planner_rt::kernel::RequantV1>(_: &K) -> bool {
        true
    }
    assert!(reads(&crate::Optimized));
}
