//! Edge cases of the reference kernels, with values worked out by hand.

extern crate std;

use std::vec::Vec;

use planner_rt::TensorInfo;
use planner_rt::kernel::{In, OpView, Out};
use planner_rt::options::{
    Activation, ConcatenationOptions, Conv2dOptions, DepthwiseConv2dOptions, Dims,
    FullyConnectedOptions, MeanOptions, PadOptions, Padding, SoftmaxOptions, TransposeOptions,
};

use super::activation::softmax;
use super::conv::fc;
use super::test_support::{pool_options, run, run_with_state, tensor_info};
use super::{KernelError, conv, elementwise, pool, reduce, shape};

pub(super) fn info<T>(
    shape: &'static [usize],
    scale: &'static [f32],
    zero: &'static [i64],
) -> TensorInfo<T> {
    tensor_info(shape, Some((scale, zero)), 0)
}

/// What `kernel` writes to an int8 output described by `yi` from the one input `x`.
fn out_i8(
    x: In<'_>,
    yi: &TensorInfo<i8>,
    kernel: impl FnOnce(OpView<'_, '_>) -> Result<(), KernelError>,
) -> Vec<i8> {
    let mut y = std::vec![0; yi.elements];
    run(&[Some(x)], Out::new(&mut y, yi), kernel).unwrap_or_else(|e| panic!("{e}"));
    y
}

fn conv_opts(padding: Padding, stride: i32) -> Conv2dOptions {
    Conv2dOptions {
        padding,
        pads: Dims::EMPTY,
        stride_w: stride,
        stride_h: stride,
        dilation_w: 1,
        dilation_h: 1,
        activation: Activation::None,
    }
}

#[test]
fn conv_same_padding_on_an_odd_size_with_stride_two() {
    // 5x5 ones, 3x3 ones, stride 2: SAME pads one on each side, so corners see 4 taps,
    // edges 6, the centre 9.
    let x = [1i8; 25];
    let w = [1i8; 9];
    let mut y = [0i8; 9];
    let xi = info::<i8>(&[1, 5, 5, 1], &[1.0], &[0]);
    let wi = info::<i8>(&[1, 3, 3, 1], &[1.0], &[0]);
    let yi = info::<i8>(&[1, 3, 3, 1], &[1.0], &[0]);
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&w, &wi)), None];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        conv::conv_2d(op, &conv_opts(Padding::Same, 2))
    })
    .unwrap();
    assert_eq!(y, [4, 6, 4, 6, 9, 6, 4, 6, 4]);
    // VALID on the same input: only the windows inside, 2x2 outputs of 9.
    let yi = info::<i8>(&[1, 2, 2, 1], &[1.0], &[0]);
    let mut y = [0i8; 4];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        conv::conv_2d(op, &conv_opts(Padding::Valid, 2))
    })
    .unwrap();
    assert_eq!(y, [9; 4]);
    // An output size the padding does not give is refused.
    let mut y = [0i8; 9];
    let yi = info::<i8>(&[1, 3, 3, 1], &[1.0], &[0]);
    let e = run(&inputs, Out::new(&mut y, &yi), |op| {
        conv::conv_2d(op, &conv_opts(Padding::Valid, 2))
    });
    assert!(matches!(e, Err(KernelError::Shape { .. })));
}

#[test]
fn conv_per_channel_scales_zero_points_and_saturation() {
    // Input zero point -3: q = -1 is real 2 (scale 1). Two output channels with filter
    // scales 1 and 0.25, bias 1 and 100 (in accumulator units), output scale 1, zero point
    // 10: channel 0 = 2·1·4 taps + 1 = 9 → 19; channel 1 = (2·2·4 + 100)·0.25 = 29 → 39.
    let x = [-1i8; 4];
    let w = [1i8, 1, 1, 1, 2, 2, 2, 2];
    let bias = [1i32, 100];
    let mut y = [0i8; 2];
    let xi = info::<i8>(&[1, 2, 2, 1], &[1.0], &[-3]);
    let wi = info::<i8>(&[2, 2, 2, 1], &[1.0, 0.25], &[0, 0]);
    let bi = info::<i32>(&[2], &[1.0, 0.25], &[0, 0]);
    let yi = info::<i8>(&[1, 1, 1, 2], &[1.0], &[10]);
    let inputs = [
        Some(In::new(&x, &xi)),
        Some(In::new(&w, &wi)),
        Some(In::new(&bias, &bi)),
    ];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        conv::conv_2d(op, &conv_opts(Padding::Valid, 1))
    })
    .unwrap();
    assert_eq!(y, [19, 39]);
    // Large accumulators saturate at 127 and -128.
    let x = [127i8; 4];
    let w = [127i8, 127, 127, 127, -128, -128, -128, -128];
    let xi = info::<i8>(&[1, 2, 2, 1], &[1.0], &[0]);
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&w, &wi)), None];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        conv::conv_2d(op, &conv_opts(Padding::Valid, 1))
    })
    .unwrap();
    assert_eq!(y, [127, -128]);
    // RELU6 with output scale 0.5 and zero point 10: clamps to [10, 22].
    let mut o = conv_opts(Padding::Valid, 1);
    o.activation = Activation::Relu6;
    let yi = info::<i8>(&[1, 1, 1, 2], &[0.5], &[10]);
    run(&inputs, Out::new(&mut y, &yi), |op| conv::conv_2d(op, &o)).unwrap();
    assert_eq!(y, [22, 10]);
}

#[test]
fn depthwise_with_a_multiplier_of_two() {
    // Two input channels [1, 2] at every pixel of 2x2, multiplier 2, 2x2 filter of ones
    // scaled per output channel by [1, 2, 1, 0.5]: sums 4 and 8 per input channel.
    let x = [1i8, 2, 1, 2, 1, 2, 1, 2];
    let w = [1i8; 16];
    let mut y = [0i8; 4];
    let xi = info::<i8>(&[1, 2, 2, 2], &[1.0], &[0]);
    let wi = info::<i8>(&[1, 2, 2, 4], &[1.0, 2.0, 1.0, 0.5], &[0, 0, 0, 0]);
    let yi = info::<i8>(&[1, 1, 1, 4], &[1.0], &[0]);
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&w, &wi)), None];
    let o = DepthwiseConv2dOptions {
        padding: Padding::Valid,
        pads: Dims::EMPTY,
        stride_w: 1,
        stride_h: 1,
        depth_multiplier: 2,
        dilation_w: 1,
        dilation_h: 1,
        activation: Activation::None,
    };
    run(&inputs, Out::new(&mut y, &yi), |op| {
        conv::depthwise_conv_2d(op, &o)
    })
    .unwrap();
    assert_eq!(y, [4, 8, 8, 4]);
}

#[test]
fn average_pool_rounds_half_away_from_zero_and_skips_padding() {
    // 1x3x3x1, 2x2 windows, stride 2, SAME: windows of 4, 2, 2 and 1 values.
    let x = [1i8, 2, 3, 4, 5, -6, 7, -8, -9];
    let mut y = [0i8; 4];
    let xi = info::<i8>(&[1, 3, 3, 1], &[1.0], &[0]);
    let yi = info::<i8>(&[1, 2, 2, 1], &[1.0], &[0]);
    let o = pool_options(Padding::Same, (2, 2), (2, 2), Activation::None);
    let inputs = [Some(In::new(&x, &xi))];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        pool::pool_2d(op, &o, pool::Pool::Average)
    })
    .unwrap();
    // (1+2+4+5)/4 = 3; (3-6)/2 = -1.5 → -2; (7-8)/2 = -0.5 → -1; -9.
    assert_eq!(y, [3, -2, -1, -9]);
    run(&inputs, Out::new(&mut y, &yi), |op| {
        pool::pool_2d(op, &o, pool::Pool::Max)
    })
    .unwrap();
    assert_eq!(y, [5, 3, 7, -9]);
}

#[test]
fn fully_connected_relu_clamps_at_the_output_zero_point() {
    let x = [1i8, 2, 3];
    let w = [1i8, 1, 1, -1, -1, -1];
    let mut y = [0i8; 2];
    let xi = info::<i8>(&[1, 3], &[1.0], &[0]);
    let wi = info::<i8>(&[2, 3], &[1.0], &[0]);
    let yi = info::<i8>(&[1, 2], &[1.0], &[-5]);
    let o = FullyConnectedOptions {
        activation: Activation::Relu,
        ..FullyConnectedOptions::default()
    };
    let inputs = [Some(In::new(&x, &xi)), Some(In::new(&w, &wi)), None];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        fc::fully_connected(op, &o)
    })
    .unwrap();
    // 6 - 5 = 1; -6 - 5 = -11, clamped to the zero point -5.
    assert_eq!(y, [1, -5]);
}

#[test]
fn softmax_of_equal_values_is_uniform() {
    let x = [7i8; 4];
    let mut y = [0i8; 4];
    let xi = info::<i8>(&[1, 4], &[0.1], &[0]);
    let yi = info::<i8>(&[1, 4], &[1.0 / 256.0], &[-128]);
    let inputs = [Some(In::new(&x, &xi))];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        softmax::softmax(op, &SoftmaxOptions { beta: 1.0 })
    })
    .unwrap();
    // 1/4 is 64/256: -128 + 64.
    assert_eq!(y, [-64; 4]);
    // One large value takes (nearly) everything.
    let x = [127i8, -128, -128, -128];
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| softmax::softmax(
            op,
            &SoftmaxOptions { beta: 1.0 }
        )),
        [127, -128, -128, -128]
    );
}

/// TFLM's int8 `SOFTMAX` refuses an output quantisation other than 1/256 and -128 (int8) or
/// 1/65536 and -32768 (int16) at prepare; this kernel refuses it too, rather than write
/// values on another scale.
#[test]
fn int8_softmax_refuses_another_output_quantisation() {
    let x = [0i8, 10, 20, 30];
    let xi = info::<i8>(&[1, 4], &[0.1], &[0]);
    let o = SoftmaxOptions { beta: 1.0 };
    let inputs = [Some(In::new(&x, &xi))];
    let mut y = [0i8; 4];
    // 1/256 is 0.00390625: one a little below, the right one with zero point 0, one 0.01 %
    // above.
    for yi in [
        info::<i8>(&[1, 4], &[0.0039], &[-128]),
        info::<i8>(&[1, 4], &[0.00390625], &[0]),
        info::<i8>(&[1, 4], &[0.0039066], &[-128]),
    ] {
        let r = run(&inputs, Out::new(&mut y, &yi), |op| {
            softmax::softmax(op, &o)
        });
        assert!(
            matches!(r, Err(KernelError::Options { .. })),
            "{yi:?}: {r:?}"
        );
    }
    let mut y16 = [0i16; 4];
    let good = info::<i16>(&[1, 4], &[1.0 / 65536.0], &[-32768]);
    run(&inputs, Out::new(&mut y16, &good), |op| {
        softmax::softmax(op, &o)
    })
    .unwrap();
    assert!(y16.windows(2).all(|w| w[0] < w[1]), "{y16:?}");
    let bad = info::<i16>(&[1, 4], &[1.0 / 65536.0], &[0]);
    let r = run(&inputs, Out::new(&mut y16, &bad), |op| {
        softmax::softmax(op, &o)
    });
    assert!(matches!(r, Err(KernelError::Options { .. })), "{r:?}");
}

#[test]
fn add_and_mul_broadcast_and_respect_zero_points() {
    // a: [2, 2] real values 1..4 (zero point 1); b: [2] = [10, 20] (zero point 0).
    let a = [2i8, 3, 4, 5];
    let b = [10i8, 20];
    let mut y = [0i8; 4];
    let ai = info::<i8>(&[2, 2], &[1.0], &[1]);
    let bi = info::<i8>(&[2], &[1.0], &[0]);
    let yi = info::<i8>(&[2, 2], &[1.0], &[0]);
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        elementwise::add(op, &Default::default(), false)
    })
    .unwrap();
    assert_eq!(y, [11, 22, 13, 24]);
    run(&inputs, Out::new(&mut y, &yi), |op| {
        elementwise::mul(op, &Default::default(), false)
    })
    .unwrap();
    assert_eq!(y, [10, 40, 30, 80]);
    // Saturation.
    let b = [100i8, 100];
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
    run(&inputs, Out::new(&mut y, &yi), |op| {
        elementwise::mul(op, &Default::default(), false)
    })
    .unwrap();
    assert_eq!(y, [100, 127, 127, 127]);
}

#[test]
fn pad_transpose_and_mean() {
    let x = [1i8, 2, 3, 4, 5, 6];
    let xi = info::<i8>(&[2, 3], &[1.0], &[0]);
    let yi = info::<i8>(&[3, 4], &[1.0], &[-7]);
    let o = PadOptions {
        before: Dims::new(&[1, 0]).unwrap(),
        after: Dims::new(&[0, 1]).unwrap(),
    };
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| shape::pad(op, &o)),
        [-7, -7, -7, -7, 1, 2, 3, -7, 4, 5, 6, -7]
    );

    let yi = info::<i8>(&[3, 2], &[1.0], &[0]);
    let o = TransposeOptions {
        perm: Dims::new(&[1, 0]).unwrap(),
    };
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| shape::transpose(op, &o)),
        [1, 4, 2, 5, 3, 6]
    );

    // Mean over axis 1 (and -1, the same axis): (1+2+3)/3 = 2, (4+5+6)/3 = 5; with input
    // zero point 1 and output scale 2: (2-1)/2 = 0.5 → 1, (5-1)/2 = 2.
    let xi = info::<i8>(&[2, 3], &[1.0], &[1]);
    let yi = info::<i8>(&[2, 1], &[2.0], &[0]);
    let o = MeanOptions {
        axes: Dims::new(&[1, -1]).unwrap(),
        keep_dims: true,
    };
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| reduce::mean::mean(op, &o)),
        [1, 2]
    );
}

#[test]
fn quantize_and_dequantize() {
    let x = [0.5f32, -0.26, 100.0, -100.0];
    let xi = info::<f32>(&[4], &[1.0], &[0]);
    let yi = info::<i8>(&[4], &[0.1], &[3]);
    let y = out_i8(In::new(&x, &xi), &yi, |op| elementwise::quantize(op, false));
    assert_eq!(y, [8, 0, 127, -128]);
    let mut z = [0f32; 4];
    let zi = info::<f32>(&[4], &[1.0], &[0]);
    run(&[Some(In::new(&y, &yi))], Out::new(&mut z, &zi), |op| {
        elementwise::dequantize(op, false)
    })
    .unwrap();
    let want: Vec<f32> = [5, -3, 124, -131]
        .iter()
        .map(|&q| (0.1f32 as f64 * f64::from(q)) as f32)
        .collect();
    assert_eq!(z.to_vec(), want);
}

#[test]
fn svdf_steps_its_state_and_sums_it_against_the_time_weights() {
    // Features: [1, 1]·[1, 2] = 3 and [1, -1]·[1, 2] = -1 become the newest step of each
    // filter's memory, after the state moved one step back: [5, 6 | 7, 8] → [6, 3 | 8, -1].
    // Time weights [1, 2 | 3, 4]: 6 + 6 = 12 and 24 - 4 = 20, plus the bias [1, 2].
    let x = [1i8, 2];
    let wf = [1i8, 1, 1, -1];
    let wt = [1i8, 2, 3, 4];
    let bias = [1i32, 2];
    let mut state = [5i8, 6, 7, 8];
    let mut y = [0i8; 2];
    let xi = info::<i8>(&[1, 2], &[1.0], &[0]);
    let wfi = info::<i8>(&[2, 2], &[1.0], &[0]);
    let wti = info::<i8>(&[2, 2], &[1.0], &[0]);
    let bi = info::<i32>(&[2], &[1.0], &[0]);
    let si = info::<i8>(&[1, 4], &[1.0], &[0]);
    let yi = info::<i8>(&[1, 2], &[1.0], &[0]);
    let inputs = [
        Some(In::new(&x, &xi)),
        Some(In::new(&wf, &wfi)),
        Some(In::new(&wt, &wti)),
        Some(In::new(&bias, &bi)),
        Some(In::variable(0, &si)),
    ];
    let mut outputs = [Out::new(&mut y, &yi)];
    let mut variables = [Out::new(&mut state, &si)];
    let o = planner_rt::options::SvdfOptions {
        rank: 1,
        ..Default::default()
    };
    let (outputs, variables) = (&mut outputs[..], &mut variables[..]);
    run_with_state(&inputs, (outputs, &mut []), variables, |op| {
        super::recurrent::svdf::svdf(op, &o)
    })
    .unwrap();
    assert_eq!(y, [13, 22]);
    assert_eq!(state, [6, 3, 8, -1]);
}

/// A mean over 49 elements whose zero-point-free sum is 23, with input scale 0.11841,
/// output scale 0.0234 and output zero point -11: the real mean is 2.3752 output steps,
/// -8.62 with the zero point. TFLite Micro folds 1/49 into the fixed-point multiplier and
/// rounds twice (the doubling high multiply, then the shift), which gives 3, so -8;
/// rounding the float mean would give -9.
#[test]
fn mean_folds_one_over_n_into_the_multiplier_as_tflite_micro() {
    // 48 elements at the input zero point -128, one 23 above it.
    let mut x = [-128i8; 49];
    x[24] = -105;
    let xi = info::<i8>(&[1, 7, 7, 1], &[0.11841], &[-128]);
    let yi = info::<i8>(&[1, 1, 1, 1], &[0.0234], &[-11]);
    let o = MeanOptions {
        axes: Dims::new(&[1, 2]).unwrap(),
        keep_dims: true,
    };
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| reduce::mean::mean(op, &o)),
        [-8]
    );
    let m = reduce::mean::mean_multiplier(0.11841, 0.0234, 49);
    // floor(log2 49) = 5: the multiplier of 5.06 (exponent 3) times 2^5 / 49, exponent -2.
    assert_eq!(m.shift, -2);
}

/// With the input's scale and zero point, TFLite Micro's mean still goes through the
/// fixed-point multiplier, whose rounding takes halves up: (-5 - 6)/2 + 4 = -1.5 gives -1,
/// so -5 (rounding the float mean half away from zero gives -6; an integer division, -5
/// too, but 7 where the multiplier gives (7 + 8)/2 = 7.5 → 8).
#[test]
fn mean_with_the_input_quantisation_rounds_halves_up() {
    let x = [-5i8, -6, 7, 8];
    let xi = info::<i8>(&[2, 2], &[0.5], &[-4]);
    let yi = info::<i8>(&[2], &[0.5], &[-4]);
    let o = MeanOptions {
        axes: Dims::new(&[-1]).unwrap(),
        keep_dims: false,
    };
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| reduce::mean::mean(op, &o)),
        [-5, 8]
    );
}

/// 0.5918677 / 0.007839307 is exactly 75.5 in f32, which TFLite Micro rounds half away
/// from zero to 76; in f64 the quotient is 75.49999905, which rounds to 75.
#[test]
fn quantize_divides_in_f32_as_tflite_micro() {
    let x = [0.5918677f32, -0.5918677];
    let xi = info::<f32>(&[2], &[1.0], &[0]);
    let yi = info::<i8>(&[2], &[0.007839307], &[0]);
    assert_eq!(
        out_i8(In::new(&x, &xi), &yi, |op| elementwise::quantize(op, false)),
        [76, -76]
    );
}

#[test]
fn concatenation_along_a_middle_and_a_negative_axis() {
    // [2, 1, 2] and [2, 2, 2] along axis 1 (and -2): each of the 2 rows is a's 2 values,
    // then b's 4.
    let a = [1i8, 2, 3, 4];
    let b = [10i8, 11, 12, 13, 14, 15, 16, 17];
    let ai = info::<i8>(&[2, 1, 2], &[0.5], &[3]);
    let bi = info::<i8>(&[2, 2, 2], &[0.5], &[3]);
    let yi = info::<i8>(&[2, 3, 2], &[0.5], &[3]);
    for axis in [1, -2] {
        let mut y = [0i8; 12];
        let o = ConcatenationOptions {
            axis,
            activation: Activation::None,
        };
        let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
        run(&inputs, Out::new(&mut y, &yi), |op| {
            shape::concatenation(op, &o)
        })
        .unwrap();
        assert_eq!(y, [1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17]);
    }
    // An input quantised otherwise than the output: refused, as TFLM refuses it.
    let ci = info::<i8>(&[2, 2, 2], &[0.25], &[3]);
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &ci))];
    let mut y = [0i8; 12];
    let o = ConcatenationOptions {
        axis: 1,
        activation: Activation::None,
    };
    let e = run(&inputs, Out::new(&mut y, &yi), |op| {
        shape::concatenation(op, &o)
    });
    assert!(matches!(e, Err(KernelError::Quantization { .. })), "{e:?}");
    // Shapes that do not add up along the axis.
    let yi = info::<i8>(&[2, 4, 2], &[0.5], &[3]);
    let mut y = [0i8; 16];
    let inputs = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
    let e = run(&inputs, Out::new(&mut y, &yi), |op| {
        shape::concatenation(op, &o)
    });
    assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
}
