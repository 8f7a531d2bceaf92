//! Folded PADs (explicit padding) and in-place kernels against the plain kernels, on random
//! data over edge cases: odd sizes, strides, dilations, per-channel quantisation,
//! asymmetric pads, broadcasting, every activation.

extern crate std;

use std::boxed::Box;
use std::vec;
use std::vec::Vec;

use planner_rt::TensorInfo;
use planner_rt::kernel::{In, OpView, Out};
use planner_rt::options::{
    Activation, AddOptions, Conv2dOptions, DepthwiseConv2dOptions, Dims, MulOptions, PadOptions,
    Padding,
};

use super::common::unary::Elem;
use super::test_support::{run, run_op, tensor_info};
use super::{KernelError, activation, conv, elementwise, shape};

/// A small deterministic generator (xorshift64*).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    /// A random NHWC image size: height and width in `hw.0..=hw.1`, channels in `1..=c`.
    pub(crate) fn hwc(&mut self, hw: (i64, i64), c: i64) -> (usize, usize, usize) {
        let h = self.range(hw.0, hw.1) as usize;
        let w = self.range(hw.0, hw.1) as usize;
        (h, w, self.range(1, c) as usize)
    }
    pub(crate) fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.range(-128, 127) as i8).collect()
    }
    /// A scale in roughly `[lo, hi)`.
    pub(crate) fn scale(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next() % 10_000) as f32 / 10_000.0
    }
}

/// A tensor description with leaked (test-only) shape and quantisation.
pub(crate) fn info<T>(shape: &[usize], scale: &[f32], zero: &[i64]) -> TensorInfo<T> {
    let leak_f32 = |v: &[f32]| -> &'static [f32] { Box::leak(v.to_vec().into_boxed_slice()) };
    let leak_i64 = |v: &[i64]| -> &'static [i64] { Box::leak(v.to_vec().into_boxed_slice()) };
    let shape: &'static [usize] = Box::leak(shape.to_vec().into_boxed_slice());
    let quant = (!scale.is_empty()).then(|| (leak_f32(scale), leak_i64(zero)));
    tensor_info(shape, quant, 3)
}

pub(crate) const ACTIVATIONS: [Activation; 4] = [
    Activation::None,
    Activation::Relu,
    Activation::Relu6,
    Activation::ReluN1To1,
];

/// One random convolution case: input `[n, h, w, c]`, filter `fh × fw`, stride, dilation,
/// pads `[top, bottom, left, right]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Case {
    pub(crate) n: usize,
    pub(crate) h: usize,
    pub(crate) w: usize,
    pub(crate) c: usize,
    pub(crate) fh: usize,
    pub(crate) fw: usize,
    pub(crate) stride: (usize, usize),
    pub(crate) dilation: (usize, usize),
    pub(crate) pads: [usize; 4],
}

impl Case {
    /// A case without dilation: `n` images of `(h, w, c)`, a `(fh, fw)` filter.
    pub(crate) fn undilated(
        n: usize,
        (h, w, c): (usize, usize, usize),
        (fh, fw): (usize, usize),
        stride: (usize, usize),
        pads: [usize; 4],
    ) -> Case {
        Case {
            n,
            h,
            w,
            c,
            fh,
            fw,
            stride,
            dilation: (1, 1),
            pads,
        }
    }
    fn random(r: &mut Rng) -> Case {
        loop {
            let case = Case {
                n: r.range(1, 2) as usize,
                h: r.range(1, 9) as usize,
                w: r.range(1, 9) as usize,
                c: r.range(1, 5) as usize,
                fh: r.range(1, 3) as usize,
                fw: r.range(1, 3) as usize,
                stride: (r.range(1, 2) as usize, r.range(1, 3) as usize),
                dilation: (r.range(1, 2) as usize, r.range(1, 2) as usize),
                pads: [
                    r.range(0, 3) as usize,
                    r.range(0, 3) as usize,
                    r.range(0, 3) as usize,
                    r.range(0, 3) as usize,
                ],
            };
            if case.out_h() > 0 && case.out_w() > 0 {
                return case;
            }
        }
    }
    fn padded(&self) -> (usize, usize) {
        (
            self.h + self.pads[0] + self.pads[1],
            self.w + self.pads[2] + self.pads[3],
        )
    }
    fn out_h(&self) -> usize {
        let extent = (self.fh - 1) * self.dilation.0 + 1;
        (self.padded().0 + self.stride.0)
            .saturating_sub(extent)
            .div_euclid(self.stride.0)
    }
    fn out_w(&self) -> usize {
        let extent = (self.fw - 1) * self.dilation.1 + 1;
        (self.padded().1 + self.stride.1)
            .saturating_sub(extent)
            .div_euclid(self.stride.1)
    }
    /// `DEPTHWISE_CONV_2D` options of the case's strides and dilations, with `padding`
    /// (and its pads), a depth multiplier and an activation.
    pub(crate) fn depthwise_options(
        &self,
        (padding, pads): (Padding, Dims),
        multiplier: usize,
        activation: Activation,
    ) -> DepthwiseConv2dOptions {
        DepthwiseConv2dOptions {
            padding,
            pads,
            stride_h: self.stride.0 as i32,
            stride_w: self.stride.1 as i32,
            depth_multiplier: multiplier as i32,
            dilation_h: self.dilation.0 as i32,
            dilation_w: self.dilation.1 as i32,
            activation,
        }
    }
    fn explicit(&self) -> Dims {
        let p = self.pads.map(|p| p as i32);
        Dims::new(&p).unwrap()
    }
    /// The input padded with its zero point by the PAD kernel.
    fn pad(&self, x: &[i8], xi: &TensorInfo<i8>) -> (Vec<i8>, TensorInfo<i8>) {
        let (ph, pw) = self.padded();
        let q = xi.quant.unwrap();
        let pi = info::<i8>(&[self.n, ph, pw, self.c], q.scale, q.zero_point);
        let mut padded = vec![0i8; self.n * ph * pw * self.c];
        let o = PadOptions {
            before: Dims::new(&[0, self.pads[0] as i32, self.pads[2] as i32, 0]).unwrap(),
            after: Dims::new(&[0, self.pads[1] as i32, self.pads[3] as i32, 0]).unwrap(),
        };
        run(&[Some(In::new(x, xi))], Out::new(&mut padded, &pi), |op| {
            shape::pad(op, &o)
        })
        .unwrap();
        (padded, pi)
    }
}

/// Per-channel filter scales and an output quantisation that keeps most outputs unsaturated.
fn quant(r: &mut Rng, channels: usize, taps: usize) -> (Vec<f32>, i64, f32, i64, f32) {
    let in_scale = r.scale(0.01, 0.1);
    let in_zero = r.range(-128, 127);
    let filter: Vec<f32> = (0..channels).map(|_| r.scale(0.001, 0.02)).collect();
    // Accumulators reach about taps · 128 · 64: spread them over the int8 range.
    let out_scale = in_scale * 0.01 * (taps as f32).sqrt() * 64.0 * r.scale(0.5, 2.0) / 16.0;
    let out_zero = r.range(-20, 20);
    (filter, in_zero, in_scale, out_zero, out_scale)
}

#[test]
fn conv_with_explicit_pads_equals_pad_then_valid() {
    let mut r = Rng::new(1);
    let mut varied = 0;
    for round in 0..300 {
        let k = Case::random(&mut r);
        let groups = if round % 3 == 0 { k.c } else { 1 };
        let (f_c, out_c) = (k.c / groups, r.range(1, 4) as usize * groups);
        let (fs, in_zero, in_scale, out_zero, out_scale) = quant(&mut r, out_c, k.fh * k.fw * f_c);
        let x = r.i8s(k.n * k.h * k.w * k.c);
        let xi = info::<i8>(&[k.n, k.h, k.w, k.c], &[in_scale], &[in_zero]);
        let w = r.i8s(out_c * k.fh * k.fw * f_c);
        let wi = info::<i8>(&[out_c, k.fh, k.fw, f_c], &fs, &vec![0; out_c]);
        let bias: Vec<i32> = (0..out_c).map(|_| r.range(-2000, 2000) as i32).collect();
        let bi = info::<i32>(&[out_c], &[], &[]);
        let yi = info::<i8>(
            &[k.n, k.out_h(), k.out_w(), out_c],
            &[out_scale],
            &[out_zero],
        );
        let mut o = Conv2dOptions {
            padding: Padding::Explicit,
            pads: k.explicit(),
            stride_h: k.stride.0 as i32,
            stride_w: k.stride.1 as i32,
            dilation_h: k.dilation.0 as i32,
            dilation_w: k.dilation.1 as i32,
            activation: ACTIVATIONS[round % 4],
        };
        // The conv of `x` with options `o`, out of place.
        let conv = |x: &[i8], xi: &TensorInfo<i8>, o: &Conv2dOptions| {
            let mut y = vec![0i8; yi.elements];
            let inputs = [
                Some(In::new(x, xi)),
                Some(In::new(&w, &wi)),
                Some(In::new(&bias, &bi)),
            ];
            run_op(&inputs, &mut [Out::new(&mut y, &yi)], &mut [], |op| {
                conv::conv_2d(op, o)
            })
            .map(|()| y)
        };
        let got = conv(&x, &xi, &o).unwrap_or_else(|e| panic!("{k:?}: {e}"));
        let (padded, pi) = k.pad(&x, &xi);
        o.padding = Padding::Valid;
        o.pads = Dims::EMPTY;
        let want = conv(&padded, &pi, &o).unwrap();
        assert_eq!(got, want, "{k:?}");
        varied += usize::from(want.iter().any(|&v| v != want[0]));
    }
    assert!(varied > 200, "only {varied} cases with varied outputs");
}

/// A random depthwise case: input, filter, bias, options and the tensors' descriptions.
struct Dw {
    k: Case,
    multiplier: usize,
    x: Vec<i8>,
    xi: TensorInfo<i8>,
    w: Vec<i8>,
    wi: TensorInfo<i8>,
    bias: Vec<i32>,
    bi: TensorInfo<i32>,
    yi: TensorInfo<i8>,
    o: DepthwiseConv2dOptions,
}

impl Dw {
    fn random(r: &mut Rng, k: Case, multiplier: usize, activation: Activation) -> Dw {
        let out_c = k.c * multiplier;
        let (fs, in_zero, in_scale, out_zero, out_scale) = quant(r, out_c, k.fh * k.fw);
        Dw {
            k,
            multiplier,
            x: r.i8s(k.n * k.h * k.w * k.c),
            xi: info::<i8>(&[k.n, k.h, k.w, k.c], &[in_scale], &[in_zero]),
            w: r.i8s(k.fh * k.fw * out_c),
            wi: info::<i8>(&[1, k.fh, k.fw, out_c], &fs, &vec![0; out_c]),
            bias: (0..out_c).map(|_| r.range(-2000, 2000) as i32).collect(),
            bi: info::<i32>(&[out_c], &[], &[]),
            yi: info::<i8>(
                &[k.n, k.out_h(), k.out_w(), out_c],
                &[out_scale],
                &[out_zero],
            ),
            o: k.depthwise_options((Padding::Explicit, k.explicit()), multiplier, activation),
        }
    }

    /// The op's inputs: input 0 (`x0`), the filter and the bias.
    fn inputs<'a>(&'a self, x0: In<'a>) -> [Option<In<'a>>; 3] {
        [
            Some(x0),
            Some(In::new(&self.w, &self.wi)),
            Some(In::new(&self.bias, &self.bi)),
        ]
    }

    /// The plain kernel's output on `x` (padded by `o.pads` unless VALID).
    fn out_of_place(&self, x: &[i8], xi: &TensorInfo<i8>, o: &DepthwiseConv2dOptions) -> Vec<i8> {
        let mut y = vec![0i8; self.yi.elements];
        let inputs = self.inputs(In::new(x, xi));
        run_op(&inputs, &mut [Out::new(&mut y, &self.yi)], &mut [], |op| {
            conv::depthwise_conv_2d(op, o)
        })
        .unwrap_or_else(|e| panic!("{:?}: {e}", self.k));
        y
    }

    /// The in-place kernel's output with `temp` elements of temporary ([`run_in_place`]).
    fn in_place(&self, temp: usize) -> Result<Vec<i8>, KernelError> {
        let inputs = self.inputs(In::in_place(0, &self.xi));
        run_in_place(&self.x, &inputs, &self.yi, vec![0; temp], |op| {
            conv::depthwise_conv_2d_in_place(op, &self.o)
        })
    }
}

/// Runs the in-place kernel `f` on `inputs` (one of them taken over by output 0) with
/// `temp` as its temporary: the buffer starts as the input `x` and spans the longer of input
/// and output (`yi`). Returns the output.
pub(crate) fn run_in_place(
    x: &[i8],
    inputs: &[Option<In<'_>>],
    yi: &TensorInfo<i8>,
    mut temp: Vec<i8>,
    f: impl for<'a> FnOnce(OpView<'_, 'a>) -> Result<(), KernelError>,
) -> Result<Vec<i8>, KernelError> {
    let mut buf = x.to_vec();
    buf.resize(x.len().max(yi.elements), 0);
    let ti = info::<i8>(&[temp.len()], &[], &[]);
    let (outputs, scratch) = (Out::new(&mut buf, yi), Out::new(&mut temp, &ti));
    run_op(inputs, &mut [outputs], &mut [scratch], f)?;
    buf.truncate(yi.elements);
    Ok(buf)
}

#[test]
fn depthwise_with_explicit_pads_equals_pad_then_valid() {
    let mut r = Rng::new(2);
    for round in 0..300 {
        let k = Case::random(&mut r);
        let d = Dw::random(&mut r, k, 1 + round % 3, ACTIVATIONS[round % 4]);
        let got = d.out_of_place(&d.x, &d.xi, &d.o);
        let (padded, pi) = k.pad(&d.x, &d.xi);
        let mut o = d.o;
        o.padding = Padding::Valid;
        o.pads = Dims::EMPTY;
        let want = d.out_of_place(&padded, &pi, &o);
        assert_eq!(got, want, "{k:?} multiplier {}", d.multiplier);
    }
}

#[test]
fn explicit_pads_are_checked() {
    let mut r = Rng::new(3);
    let k = Case::undilated(1, (5, 4, 2), (3, 3), (2, 1), [1, 0, 2, 1]);
    let d = Dw::random(&mut r, k, 1, Activation::None);
    let mut y = vec![0i8; d.yi.elements];
    let inputs = d.inputs(In::new(&d.x, &d.xi));
    let mut go = |o: DepthwiseConv2dOptions| {
        run_op(&inputs, &mut [Out::new(&mut y, &d.yi)], &mut [], |op| {
            conv::depthwise_conv_2d(op, &o)
        })
    };
    assert_eq!(go(d.o), Ok(()));
    // Three pads, a negative pad, pads with VALID, and pads that give another output size.
    for (padding, pads) in [
        (Padding::Explicit, &[1, 0, 2][..]),
        (Padding::Explicit, &[1, 0, -2, 1][..]),
        (Padding::Valid, &[1, 0, 2, 1][..]),
        (Padding::Explicit, &[1, 2, 2, 1][..]),
        (Padding::Explicit, &[][..]),
    ] {
        let mut o = d.o;
        o.padding = padding;
        o.pads = Dims::new(pads).unwrap();
        let e = go(o);
        assert!(
            matches!(
                e,
                Err(KernelError::Options { .. } | KernelError::Shape { .. })
            ),
            "{padding:?} {pads:?}: {e:?}"
        );
    }
}

/// Cases a depthwise convolution may run in place in: no more output pixels than input
/// pixels (stride 2, SAME-like pads, VALID shrinking, dilation).
fn in_place_case(r: &mut Rng) -> Case {
    loop {
        let k = Case::random(r);
        if k.out_h() * k.out_w() <= k.h * k.w {
            return k;
        }
    }
}

#[test]
fn depthwise_in_place_equals_out_of_place() {
    let mut r = Rng::new(4);
    let mut shrinking = 0;
    for round in 0..400 {
        let k = in_place_case(&mut r);
        let d = Dw::random(&mut r, k, 1, ACTIVATIONS[round % 4]);
        let want = d.out_of_place(&d.x, &d.xi, &d.o);
        let got = d
            .in_place(k.h * k.w + round % 3)
            .unwrap_or_else(|e| panic!("{k:?}: {e}"));
        assert_eq!(got, want, "{k:?}");
        shrinking += usize::from(k.out_h() * k.out_w() < k.h * k.w);
    }
    assert!(shrinking > 100, "{shrinking} shrinking cases");
}

#[test]
fn depthwise_in_place_refuses_what_it_cannot_do() {
    let mut r = Rng::new(5);
    let k = Case::undilated(2, (3, 5, 3), (3, 3), (1, 1), [1, 1, 1, 1]);
    let d = Dw::random(&mut r, k, 1, Activation::None);
    assert_eq!(d.in_place(15).unwrap(), d.out_of_place(&d.x, &d.xi, &d.o));
    // A temporary smaller than one channel.
    assert!(matches!(d.in_place(14), Err(KernelError::Shape { .. })));
    // A depth multiplier of 2.
    let d2 = Dw::random(&mut r, k, 2, Activation::None);
    assert!(matches!(d2.in_place(15), Err(KernelError::Options { .. })));
    // More output pixels than input pixels (pads of 2 around a 1x1 filter).
    let mut grow = k;
    grow.fh = 1;
    grow.fw = 1;
    grow.pads = [1, 1, 1, 1];
    let d3 = Dw::random(&mut r, grow, 1, Activation::None);
    assert!(matches!(d3.in_place(15), Err(KernelError::Shape { .. })));
    // An input that is not in place, and no temporary.
    let mut y = vec![0i8; d.x.len()];
    let inputs = d.inputs(In::new(&d.x, &d.xi));
    let e = run_op(&inputs, &mut [Out::new(&mut y, &d.yi)], &mut [], |op| {
        conv::depthwise_conv_2d_in_place(op, &d.o)
    });
    assert!(matches!(e, Err(KernelError::Type { .. })), "{e:?}");
    let inputs = d.inputs(In::in_place(0, &d.xi));
    let e = run_op(&inputs, &mut [Out::new(&mut y, &d.yi)], &mut [], |op| {
        conv::depthwise_conv_2d_in_place(op, &d.o)
    });
    assert!(matches!(e, Err(KernelError::Missing { .. })), "{e:?}");
    // A buffer shorter than the input.
    let mut short = vec![0i8; d.x.len() - 1];
    let mut t = vec![0i8; 15];
    let ti = info::<i8>(&[15], &[], &[]);
    let e = run_op(
        &inputs,
        &mut [Out::new(&mut short, &d.yi)],
        &mut [Out::new(&mut t, &ti)],
        |op| conv::depthwise_conv_2d_in_place(op, &d.o),
    );
    assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
}

/// An int8 unary kernel, by `in_place`.
pub(crate) type UnaryKernel = fn(OpView<'_, '_>, bool) -> Result<(), KernelError>;

/// The int8 unary kernels with an input and output quantisation each accepts.
/// A kernel's name, the kernel, and the quantisation of its input and output.
pub(crate) type UnaryCase = (&'static str, UnaryKernel, (f32, i64), (f32, i64));

pub(crate) fn unary_kernels(r: &mut Rng) -> Vec<UnaryCase> {
    let q = |r: &mut Rng, lo, hi| (r.scale(lo, hi), r.range(-128, 127));
    vec![
        ("RELU", activation::relu, q(r, 0.01, 0.1), q(r, 0.01, 0.1)),
        ("RELU6", activation::relu6, q(r, 0.01, 0.1), q(r, 0.01, 0.1)),
        (
            "LOGISTIC",
            activation::logistic,
            q(r, 0.01, 0.2),
            (1.0 / 256.0, -128),
        ),
        ("TANH", activation::tanh, q(r, 0.01, 0.2), (1.0 / 128.0, 0)),
        (
            "HARD_SWISH",
            activation::hard_swish,
            q(r, 0.003, 0.1),
            q(r, 0.02, 0.1),
        ),
        (
            "QUANTIZE",
            |op, p| elementwise::quantize(op, p),
            q(r, 0.01, 0.1),
            q(r, 0.01, 0.1),
        ),
    ]
}

#[test]
fn unary_int8_kernels_in_place_equal_out_of_place() {
    let mut r = Rng::new(6);
    for round in 0..40 {
        for (name, kernel, qi, qo) in unary_kernels(&mut r) {
            let shape = [r.range(1, 3) as usize, r.range(2, 17) as usize];
            let n = shape[0] * shape[1];
            let x = r.i8s(n);
            let xi = info::<i8>(&shape, &[qi.0], &[qi.1]);
            let yi = info::<i8>(&shape, &[qo.0], &[qo.1]);
            let mut want = vec![0i8; n];
            run(&[Some(In::new(&x, &xi))], Out::new(&mut want, &yi), |op| {
                kernel(op, false)
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut buf = x.clone();
            run(
                &[Some(In::in_place(0, &xi))],
                Out::new(&mut buf, &yi),
                |op| kernel(op, true),
            )
            .unwrap_or_else(|e| panic!("{name} in place: {e}"));
            assert_eq!(buf, want, "{name} round {round}");
            // The plain kernel refuses an in-place input; the in-place one a plain input, a
            // buffer of another length and an input taken over by another output.
            let mut y = vec![0i8; n];
            let e = run(&[Some(In::in_place(0, &xi))], Out::new(&mut y, &yi), |op| {
                kernel(op, false)
            });
            assert!(
                matches!(e, Err(KernelError::Missing { .. })),
                "{name}: {e:?}"
            );
            let e = run(&[Some(In::new(&x, &xi))], Out::new(&mut y, &yi), |op| {
                kernel(op, true)
            });
            assert!(matches!(e, Err(KernelError::Type { .. })), "{name}: {e:?}");
            let mut long = vec![0i8; n + 1];
            let e = run(
                &[Some(In::in_place(0, &xi))],
                Out::new(&mut long, &yi),
                |op| kernel(op, true),
            );
            assert!(matches!(e, Err(KernelError::Shape { .. })), "{name}: {e:?}");
            let e = run(&[Some(In::in_place(1, &xi))], Out::new(&mut y, &yi), |op| {
                kernel(op, true)
            });
            assert!(matches!(e, Err(KernelError::Shape { .. })), "{name}: {e:?}");
        }
    }
}

/// `QUANTIZE` of input `x` to int8 (`yi`), out of place, and of `in_place` (the same
/// input over the output buffer) in place on `buf` (`x`'s native bytes); returns both
/// outputs.
fn quantize_both_ways(
    x: In<'_>,
    in_place: In<'_>,
    mut buf: Vec<i8>,
    yi: &TensorInfo<i8>,
) -> (Vec<i8>, Vec<i8>) {
    let mut want = vec![0i8; yi.elements];
    run(&[Some(x)], Out::new(&mut want, yi), |op| {
        elementwise::quantize(op, false)
    })
    .unwrap();
    run(&[Some(in_place)], Out::new(&mut buf, yi), |op| {
        elementwise::quantize(op, true)
    })
    .unwrap();
    (want, buf)
}

#[test]
fn quantize_in_place_reads_wider_inputs_in_native_byte_order() {
    let mut r = Rng::new(7);
    for n in [1usize, 2, 3, 7, 64, 257] {
        // f32 to i8: the buffer is 4n int8 elements holding the floats' bytes.
        let x: Vec<f32> = (0..n).map(|_| r.scale(-2.0, 2.0)).collect();
        let xi = info::<f32>(&[n], &[], &[]);
        let yi = info::<i8>(&[n], &[0.0078], &[r.range(-10, 10)]);
        let bytes = x.iter().flat_map(|v| v.to_ne_bytes()).map(|b| b as i8);
        let (want, buf) =
            quantize_both_ways(In::new(&x, &xi), In::in_place(0, &xi), bytes.collect(), &yi);
        assert_eq!(&buf[..n], &want[..], "f32 -> i8, {n} elements");
        assert!(n < 8 || want.iter().any(|&v| v != want[0]));
        // i16 to i8: 2n elements.
        let x: Vec<i16> = (0..n).map(|_| r.range(-32768, 32767) as i16).collect();
        let xi = info::<i16>(&[n], &[0.0005], &[r.range(-100, 100)]);
        let yi = info::<i8>(&[n], &[0.07], &[r.range(-10, 10)]);
        let bytes = x.iter().flat_map(|v| v.to_ne_bytes()).map(|b| b as i8);
        let (want, buf) =
            quantize_both_ways(In::new(&x, &xi), In::in_place(0, &xi), bytes.collect(), &yi);
        assert_eq!(&buf[..n], &want[..], "i16 -> i8, {n} elements");
        // A buffer of neither the input's nor the output's length.
        let mut odd = vec![0i8; 3 * n];
        let e = run(
            &[Some(In::in_place(0, &xi))],
            Out::new(&mut odd, &yi),
            |op| elementwise::quantize(op, true),
        );
        assert!(e.is_err(), "{n}: {e:?}");
    }
}

#[test]
fn dequantize_in_place_is_refused_as_its_output_is_wider() {
    let x = [1i8, -5, 7];
    let xi = info::<i8>(&[3], &[0.5], &[1]);
    let yi = info::<f32>(&[3], &[], &[]);
    let mut want = [0f32; 3];
    run(&[Some(In::new(&x, &xi))], Out::new(&mut want, &yi), |op| {
        elementwise::dequantize(op, false)
    })
    .unwrap();
    assert_eq!(want, [0.0, -3.0, 3.0]);
    let mut buf = [0f32; 3];
    let e = run(
        &[Some(In::in_place(0, &xi))],
        Out::new(&mut buf, &yi),
        |op| elementwise::dequantize(op, true),
    );
    assert!(matches!(e, Err(KernelError::Type { .. })), "{e:?}");
}

/// A binary kernel (`ADD`, `SUB` or `MUL` with an activation), by `in_place`.
fn binary_kernel(
    kind: usize,
    activation: Activation,
) -> impl Fn(OpView<'_, '_>, bool) -> Result<(), KernelError> {
    let add = AddOptions {
        activation,
        ..Default::default()
    };
    move |op, in_place| match kind {
        0 => elementwise::add(op, &add, in_place),
        1 => elementwise::sub(op, &add, in_place),
        _ => elementwise::mul(op, &MulOptions { activation }, in_place),
    }
}

#[test]
fn binary_kernels_in_place_equal_out_of_place() {
    let mut r = Rng::new(8);
    let mut broadcast = 0;
    for round in 0..600 {
        let kernel = binary_kernel(round % 3, ACTIVATIONS[(round / 3) % 4]);
        let out: Vec<usize> = (0..r.range(1, 4)).map(|_| r.range(1, 5) as usize).collect();
        // The other operand broadcasts: some dimensions 1, maybe fewer dimensions.
        let mut other: Vec<usize> = out
            .iter()
            .map(|&d| if r.range(0, 2) == 0 { 1 } else { d })
            .collect();
        let drop = r.range(0, other.len() as i64 - 1) as usize;
        other.drain(..drop);
        broadcast += usize::from(other.iter().product::<usize>() < out.iter().product());
        let n: usize = out.iter().product();
        let taken = round % 2;
        let shapes = if taken == 0 {
            [&out, &other]
        } else {
            [&other, &out]
        };
        let q = |r: &mut Rng| (r.scale(0.01, 0.1), r.range(-128, 127));
        let (qa, qb, qo) = (q(&mut r), q(&mut r), q(&mut r));
        let ai = info::<i8>(shapes[0], &[qa.0], &[qa.1]);
        let bi = info::<i8>(shapes[1], &[qb.0], &[qb.1]);
        let yi = info::<i8>(&out, &[qo.0], &[qo.1]);
        let a = r.i8s(ai.elements);
        let b = r.i8s(bi.elements);
        let mut want = vec![0i8; n];
        run(
            &[Some(In::new(&a, &ai)), Some(In::new(&b, &bi))],
            Out::new(&mut want, &yi),
            |op| kernel(op, false),
        )
        .unwrap();
        let mut buf = if taken == 0 { a.clone() } else { b.clone() };
        let inputs = if taken == 0 {
            [Some(In::in_place(0, &ai)), Some(In::new(&b, &bi))]
        } else {
            [Some(In::new(&a, &ai)), Some(In::in_place(0, &bi))]
        };
        run_op(&inputs, &mut [Out::new(&mut buf, &yi)], &mut [], |op| {
            kernel(op, true)
        })
        .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(buf, want, "round {round}: {out:?} {other:?}");
        // Both operands in place (ADD(x, x)), no operand in place, and (when the other
        // operand broadcasts) the broadcasting one taken over are refused.
        let both = [Some(In::in_place(0, &yi)), Some(In::in_place(0, &yi))];
        let e = run_op(&both, &mut [Out::new(&mut buf, &yi)], &mut [], |op| {
            kernel(op, true)
        });
        assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
        let plain = [Some(In::new(&a, &ai)), Some(In::new(&b, &bi))];
        let e = run_op(&plain, &mut [Out::new(&mut buf, &yi)], &mut [], |op| {
            kernel(op, true)
        });
        assert!(matches!(e, Err(KernelError::Type { .. })), "{e:?}");
        if other.as_slice() != out.as_slice() {
            let oi = info::<i8>(&other, &[qb.0], &[qb.1]);
            let wrong = [Some(In::new(&a, &ai)), Some(In::in_place(0, &oi))];
            let wrong = if taken == 0 {
                wrong
            } else {
                [Some(In::in_place(0, &oi)), Some(In::new(&b, &bi))]
            };
            let e = run_op(&wrong, &mut [Out::new(&mut buf, &yi)], &mut [], |op| {
                kernel(op, true)
            });
            assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
        }
    }
    assert!(broadcast > 200, "{broadcast} broadcasting cases");
}

#[test]
fn strided_slice_resize_and_min_max_refuse_what_they_cannot_do() {
    use planner_rt::options::StridedSliceOptions;
    let x: Vec<i8> = (0..12).collect();
    let xi = info::<i8>(&[3, 4], &[0.1], &[0]);
    let yi = info::<i8>(&[1, 2], &[0.1], &[0]);
    let slice = |o: StridedSliceOptions, y: &mut [i8]| {
        run(&[Some(In::new(&x, &xi))], Out::new(y, &yi), |op| {
            shape::strided_slice(op, &o)
        })
    };
    let o = StridedSliceOptions {
        begin: Dims::new(&[-1, 3]).unwrap(),
        end: Dims::new(&[0, 0]).unwrap(),
        strides: Dims::new(&[-2, -2]).unwrap(),
        ..Default::default()
    };
    let mut y = [0i8; 2];
    slice(o, &mut y).unwrap();
    // Row 2 (row 0 is the stop, excluded), columns 3 and 1.
    assert_eq!(y, [11, 9]);
    for bad in [
        StridedSliceOptions {
            strides: Dims::new(&[0, 1]).unwrap(),
            ..o
        },
        StridedSliceOptions {
            ellipsis_mask: 1,
            ..o
        },
        StridedSliceOptions {
            begin: Dims::new(&[0]).unwrap(),
            ..o
        },
        // The end mask on rows: rows 2 and 0, more than the output holds.
        StridedSliceOptions { end_mask: 1, ..o },
    ] {
        let e = slice(bad, &mut y);
        assert!(
            matches!(
                e,
                Err(KernelError::Options { .. } | KernelError::Shape { .. })
            ),
            "{bad:?}: {e:?}"
        );
    }
    // MAXIMUM with an input quantised otherwise than the output.
    let other = info::<i8>(&[3, 4], &[0.2], &[0]);
    let mut y = [0i8; 12];
    let out = info::<i8>(&[3, 4], &[0.1], &[0]);
    let e = run(
        &[Some(In::new(&x, &xi)), Some(In::new(&x, &other))],
        Out::new(&mut y, &out),
        |op| elementwise::min_max(op, true),
    );
    assert!(matches!(e, Err(KernelError::Quantization { .. })), "{e:?}");
    // RESIZE_NEAREST_NEIGHBOR whose size operand is not the output's.
    let xi = info::<i8>(&[1, 3, 4, 1], &[0.1], &[0]);
    let size = [6i32, 7];
    let si = info::<i32>(&[2], &[], &[]);
    let yi = info::<i8>(&[1, 6, 8, 1], &[0.1], &[0]);
    let mut y = [0i8; 48];
    let e = run(
        &[Some(In::new(&x, &xi)), Some(In::new(&size, &si))],
        Out::new(&mut y, &yi),
        |op| shape::resize_nearest_neighbor(op, &Default::default()),
    );
    assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
}

#[test]
fn int16_logistic_and_tanh_in_place_equal_out_of_place() {
    let mut r = Rng::new(9);
    for (kernel, scale) in [
        (activation::logistic as UnaryKernel, 0.0003f32),
        (activation::logistic, 1.0 / 4096.0),
        (activation::tanh, 0.00041),
        (activation::tanh, 0.002),
    ] {
        let x: Vec<i16> = (0..301).map(|_| r.range(-32768, 32767) as i16).collect();
        let xi = info::<i16>(&[301], &[scale], &[0]);
        let yi = info::<i16>(&[301], &[1.0 / 32768.0], &[0]);
        let mut want = vec![0i16; 301];
        run(&[Some(In::new(&x, &xi))], Out::new(&mut want, &yi), |op| {
            kernel(op, false)
        })
        .unwrap();
        assert!(want.iter().any(|&v| v != want[0]));
        let mut buf = x.clone();
        run(
            &[Some(In::in_place(0, &xi))],
            Out::new(&mut buf, &yi),
            |op| kernel(op, true),
        )
        .unwrap();
        assert_eq!(buf, want, "scale {scale}");
        // A zero point other than 0 is refused.
        let zi = info::<i16>(&[301], &[scale], &[3]);
        let e = run(&[Some(In::new(&x, &zi))], Out::new(&mut want, &yi), |op| {
            kernel(op, false)
        });
        assert!(matches!(e, Err(KernelError::Quantization { .. })), "{e:?}");
    }
}

/// Runs `kernel` on input `x` out of place and in place (a buffer of `$o` elements holding
/// `x`'s native bytes, spanning the longer of input and output), and checks both agree.
macro_rules! agrees_in_place {
    ($what:expr, $x:expr, $xi:expr, $yi:expr, $o:ty, $kernel:path) => {{
        let (x, xi, yi) = ($x, $xi, $yi);
        let n = x.len();
        let mut want: Vec<$o> = vec![Default::default(); n];
        run(&[Some(In::new(x, xi))], Out::new(&mut want, yi), |op| {
            $kernel(op, false)
        })
        .unwrap();
        let mut buf = in_place_buffer::<_, $o>(x);
        run(&[Some(In::in_place(0, xi))], Out::new(&mut buf, yi), |op| {
            $kernel(op, true)
        })
        .unwrap();
        assert_eq!(&buf[..n], &want[..], "{}", $what);
        assert!(
            n < 8 || want.iter().any(|&v| v != want[0]),
            "{}: {want:?}",
            $what
        );
    }};
}

/// A buffer of `O` elements holding `x`'s native bytes, spanning the longer of `x` and as
/// many `O` elements.
fn in_place_buffer<I: Elem, O: Elem>(x: &[I]) -> Vec<O> {
    let mut bytes: Vec<u8> = x
        .iter()
        .flat_map(|&v| (0..I::SIZE).map(move |k| v.byte(k)))
        .collect();
    bytes.resize(bytes.len().max(x.len() * O::SIZE), 0);
    bytes
        .chunks(O::SIZE)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            O::from_bytes(b)
        })
        .collect()
}

#[test]
fn int16_float_and_uint8_unary_kinds_agree_in_place() {
    let mut r = Rng::new(11);
    for n in [1usize, 3, 17, 64] {
        let i16s: Vec<i16> = (0..n).map(|_| r.range(-32768, 32767) as i16).collect();
        let i32s: Vec<i32> = (0..n)
            .map(|_| r.range(-3_000_000, 3_000_000) as i32)
            .collect();
        let f32s: Vec<f32> = (0..n).map(|_| r.scale(-8.0, 8.0)).collect();
        let i8s = r.i8s(n);
        let q16 = info::<i16>(&[n], &[0.0005], &[0]);
        let q16b = info::<i16>(&[n], &[0.0004], &[0]);
        let f = info::<f32>(&[n], &[], &[]);
        let q16z = info::<i16>(&[n], &[0.0003], &[-77]);
        let q32 = info::<i32>(&[n], &[0.0001], &[5]);
        let q8 = info::<i8>(&[n], &[0.05], &[-3]);
        let qu8 = info::<u8>(&[n], &[0.04], &[200]);
        use activation::{hard_swish, relu, relu6};
        use elementwise::quantize;
        agrees_in_place!("RELU i16", &i16s, &q16, &q16b, i16, relu);
        agrees_in_place!("RELU6 i16", &i16s, &q16, &q16, i16, relu6);
        agrees_in_place!("HARD_SWISH f32", &f32s, &f, &f, f32, hard_swish);
        agrees_in_place!("QUANTIZE i16 -> i16", &i16s, &q16, &q16z, i16, quantize);
        agrees_in_place!("QUANTIZE f32 -> i16", &f32s, &f, &q16z, i16, quantize);
        agrees_in_place!("QUANTIZE i32 -> i16", &i32s, &q32, &q16z, i16, quantize);
        agrees_in_place!("QUANTIZE i32 -> i8", &i32s, &q32, &q8, i8, quantize);
        agrees_in_place!("QUANTIZE i8 -> u8", &i8s, &q8, &qu8, u8, quantize);
    }
}
