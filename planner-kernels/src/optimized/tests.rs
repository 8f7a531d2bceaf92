//! `Optimized == Reference`, op by op, through both sets' trait impls, on seeded random
//! int8 convolutions, depthwise convolutions (out of place and in place) and
//! fully-connected layers: odd channel counts, strides 1-3, dilations 1-2, SAME, VALID and
//! explicit pads, depth multipliers 1-3, groups, per-channel and per-tensor filters,
//! extreme zero points, saturating multipliers, every activation, with and without bias,
//! with and without the prepared input 3 and an im2col scratch tensor.

extern crate std;

use std::vec;
use std::vec::Vec;

use planner_rt::TensorInfo;
use planner_rt::kernel::{
    Add, AddInPlace, Conv2d, DepthwiseConv2d, DepthwiseConv2dInPlace, FullyConnected, In, Kernel,
    Mean, Mul, MulInPlace, OpView, Out, Pad, Quantize, Sub, SubInPlace,
};
use planner_rt::options::{
    Activation, AddOptions, Conv2dOptions, DepthwiseConv2dOptions, Dims, FullyConnectedOptions,
    MeanOptions, MulOptions, NoOptions, PadOptions, Padding, WeightsFormat,
};

use crate::golden::SplitMix64;
use crate::prepare::{FilterLayout, RequantInputs, requant_v1};
use crate::reference::in_place_tests::{ACTIVATIONS, Case, info};
use crate::reference::test_support::run_op;
use crate::{KernelError, Optimized, Reference};

/// Seeded test values from the golden scripts' SplitMix64.
pub(crate) struct Rng(SplitMix64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(SplitMix64(seed))
    }
    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.0.next_u64() % (hi - lo + 1) as u64) as i64
    }
    /// Uniform in `lo..=hi`.
    pub(crate) fn size(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as i64, hi as i64) as usize
    }
    /// True one time in `n`.
    pub(crate) fn one_in(&mut self, n: u64) -> bool {
        self.0.next_u64().is_multiple_of(n)
    }
    pub(crate) fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.range(-128, 127) as i8).collect()
    }
    pub(crate) fn i32s(&mut self, n: usize, lo: i64, hi: i64) -> Vec<i32> {
        (0..n).map(|_| self.range(lo, hi) as i32).collect()
    }
    /// A scale in `[lo, hi)`.
    pub(crate) fn scale(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.0.next_u64() % 10_000) as f32 / 10_000.0
    }
    /// A zero point: often an extreme.
    fn zero(&mut self) -> i64 {
        match self.range(0, 3) {
            0 => -128,
            1 => 127,
            _ => self.range(-128, 127),
        }
    }
}

/// The spatial part of a random convolution: the in-place tests' case (`n` images of `h ×
/// w × c`, a `fh × fw` filter, stride, dilation, pads `[top, bottom, left, right]`) and the
/// padding (the pads count only when it is explicit).
#[derive(Debug, Clone, Copy)]
struct Geometry {
    k: Case,
    padding: Padding,
}

impl core::ops::Deref for Geometry {
    type Target = Case;
    fn deref(&self) -> &Case {
        &self.k
    }
}

impl core::ops::DerefMut for Geometry {
    fn deref_mut(&mut self) -> &mut Case {
        &mut self.k
    }
}

impl Geometry {
    /// One 4x5 image of `c` channels, a 3x3 filter, SAME padding.
    fn same_3x3(c: usize, stride: (usize, usize)) -> Geometry {
        Geometry {
            k: Case::undilated(1, (4, 5, c), (3, 3), stride, [0; 4]),
            padding: Padding::Same,
        }
    }

    fn random(r: &mut Rng, max_hw: usize, max_c: usize) -> Geometry {
        loop {
            let k = Case {
                n: if r.one_in(5) { 2 } else { 1 },
                h: r.size(1, max_hw),
                w: r.size(1, max_hw),
                c: r.size(1, max_c),
                fh: r.size(1, 5),
                fw: r.size(1, 5),
                stride: (r.size(1, 3), r.size(1, 3)),
                dilation: (r.size(1, 2), r.size(1, 2)),
                pads: [r.size(0, 3), r.size(0, 3), r.size(0, 3), r.size(0, 3)],
            };
            let padding = [Padding::Same, Padding::Valid, Padding::Explicit][r.size(0, 2)];
            let g = Geometry { k, padding };
            if g.out().0 > 0 && g.out().1 > 0 {
                return g;
            }
        }
    }

    /// Output rows and columns (0 when the padding leaves none).
    fn out(&self) -> (usize, usize) {
        let axis = |size: usize, f: usize, s: usize, d: usize, before: usize, after: usize| {
            let extent = (f - 1) * d + 1;
            match self.padding {
                Padding::Same => size.div_ceil(s),
                Padding::Valid if size >= extent => (size - extent) / s + 1,
                Padding::Explicit if size + before + after >= extent => {
                    (size + before + after - extent) / s + 1
                }
                _ => 0,
            }
        };
        let [t, b, l, rr] = self.pads;
        (
            axis(self.h, self.fh, self.stride.0, self.dilation.0, t, b),
            axis(self.w, self.fw, self.stride.1, self.dilation.1, l, rr),
        )
    }

    /// Random tensors of a convolution of this geometry with a filter of shape `filter`
    /// (its output channels last when `layout` is channel-last, else first).
    fn tensors(&self, r: &mut Rng, q: &Quants, filter: &[usize], layout: FilterLayout) -> Tensors {
        let out_c = match layout {
            FilterLayout::ChannelFirst => filter[0],
            FilterLayout::ChannelLast => filter[3],
        };
        let (oh, ow) = self.out();
        let x = [self.n, self.h, self.w, self.c];
        Tensors::random(r, q, (&x, filter, &[self.n, oh, ow, out_c]), out_c, layout)
    }

    fn dims(&self) -> Dims {
        match self.padding {
            Padding::Explicit => Dims::new(&self.pads.map(|p| p as i32)).unwrap_or(Dims::EMPTY),
            _ => Dims::EMPTY,
        }
    }
}

/// A random quantisation of an op with `channels` output channels and `taps` products per
/// output: input, per-channel or per-tensor filter scales, output; now and then a
/// saturating (large) or a vanishing (tiny) multiplier.
#[derive(Debug, Clone)]
struct Quants {
    input: (f32, i64),
    filter: Vec<f32>,
    output: (f32, i64),
    activation: Activation,
}

impl Quants {
    fn random(r: &mut Rng, channels: usize, taps: usize) -> Quants {
        let in_scale = r.scale(0.01, 0.1);
        let filter: Vec<f32> = if r.one_in(3) {
            vec![r.scale(0.001, 0.02)]
        } else {
            (0..channels).map(|_| r.scale(0.001, 0.02)).collect()
        };
        let mut out_scale =
            in_scale * 0.01 * (taps as f32).sqrt() * 64.0 * r.scale(0.5, 2.0) / 16.0;
        match r.range(0, 7) {
            0 => out_scale /= 2000.0,
            1 => out_scale *= 40.0,
            _ => {}
        }
        Quants {
            input: (in_scale, r.zero()),
            filter,
            output: (out_scale, r.zero()),
            activation: ACTIVATIONS[r.size(0, 3)],
        }
    }
}

/// The tensors of one random op: input, filter, bias, prepared constants, output info.
struct Tensors {
    x: Vec<i8>,
    xi: TensorInfo<i8>,
    w: Vec<i8>,
    wi: TensorInfo<i8>,
    bias: Option<(Vec<i32>, TensorInfo<i32>)>,
    prepared: Option<(Vec<i32>, TensorInfo<i32>)>,
    yi: TensorInfo<i8>,
}

impl Tensors {
    /// `x` of shape `x_shape`, a filter of shape `w_shape` laid out as `layout` for
    /// `channels` outputs, a bias half the time, prepared constants a third of the time.
    fn random(
        r: &mut Rng,
        q: &Quants,
        (x_shape, w_shape, y_shape): (&[usize], &[usize], &[usize]),
        channels: usize,
        layout: FilterLayout,
    ) -> Tensors {
        let elements = |s: &[usize]| s.iter().product::<usize>();
        let x = r.i8s(elements(x_shape));
        let w = r.i8s(elements(w_shape));
        let bias = (!r.one_in(3)).then(|| r.i32s(channels, -3000, 3000));
        let zeros = vec![0i64; q.filter.len()];
        let axis_info =
            |shape: &[usize], scales: &[f32], zeros: &[i64]| info::<i8>(shape, scales, zeros);
        let mut t = Tensors {
            xi: info::<i8>(x_shape, &[q.input.0], &[q.input.1]),
            wi: axis_info(w_shape, &q.filter, &zeros),
            bias: None,
            prepared: None,
            yi: info::<i8>(y_shape, &[q.output.0], &[q.output.1]),
            x,
            w,
        };
        if r.one_in(3) {
            let mut out = vec![0i32; 3 * channels];
            let inputs = RequantInputs {
                filter: &t.w,
                layout,
                channels,
                bias: bias.as_deref(),
                input_scale: q.input.0,
                input_zero_point: q.input.1 as i32,
                filter_scales: &q.filter,
                output_scale: q.output.0,
            };
            requant_v1(&inputs, &mut out).unwrap();
            t.prepared = Some((out, info::<i32>(&[3, channels], &[], &[])));
        }
        t.bias = bias.map(|b| (b, info::<i32>(&[channels], &[], &[])));
        t
    }

    /// The op's inputs: input 0 (`x0`), filter, bias (or none), prepared constants.
    fn inputs<'a>(&'a self, x0: In<'a>) -> Vec<Option<In<'a>>> {
        let mut v = vec![
            Some(x0),
            Some(In::new(&self.w, &self.wi)),
            self.bias.as_ref().map(|(b, bi)| In::new(b, bi)),
        ];
        if let Some((p, pi)) = &self.prepared {
            v.push(Some(In::new(p, pi)));
        }
        v
    }

    /// Runs `f` on the op with output 0 of `yi`'s size and, when `scratch` gives its
    /// length, one int8 scratch tensor.
    fn run(
        &self,
        scratch: Option<usize>,
        f: impl FnOnce(OpView<'_, '_>) -> Result<(), KernelError>,
    ) -> Result<Vec<i8>, KernelError> {
        let mut y = vec![0i8; self.yi.elements];
        let mut s = vec![0x55i8; scratch.unwrap_or(0)];
        let si = info::<i8>(&[s.len()], &[], &[]);
        let scratch = if scratch.is_some() {
            &mut [Out::new(&mut s, &si)][..]
        } else {
            &mut []
        };
        let inputs = self.inputs(In::new(&self.x, &self.xi));
        run_op(&inputs, &mut [Out::new(&mut y, &self.yi)], scratch, f)?;
        Ok(y)
    }
}

/// Counts the cases whose outputs are not all equal (so the comparison could fail).
#[derive(Default)]
struct Varied(usize, usize);

impl Varied {
    fn see(&mut self, y: &[i8]) {
        self.0 += 1;
        self.1 += usize::from(y.iter().any(|&v| v != y[0]));
    }
    /// Checks that the optimized set's outputs (`got`) are the reference's (`want`), both
    /// without error, naming `context` when not, and counts the case.
    fn both(
        &mut self,
        context: impl core::fmt::Display,
        want: Result<Vec<i8>, KernelError>,
        got: Result<Vec<i8>, KernelError>,
    ) -> Vec<i8> {
        let want = want.unwrap_or_else(|e| panic!("{context}: reference: {e}"));
        let got = got.unwrap_or_else(|e| panic!("{context}: optimized: {e}"));
        assert_eq!(got, want, "{context}");
        self.see(&want);
        want
    }

    /// [`Varied::both`] of `f`'s results with the reference set and the optimized set.
    fn sets(
        &mut self,
        context: impl core::fmt::Display,
        mut f: impl FnMut(&mut dyn Kinds) -> Result<Vec<i8>, KernelError>,
    ) -> Vec<i8> {
        self.both(context, f(&mut Reference), f(&mut Optimized))
    }

    /// At least `share` of the cases varied.
    fn check(&self, what: &str, share: f64) {
        assert!(
            self.1 as f64 >= share * self.0 as f64,
            "{what}: only {} of {} cases had varied outputs",
            self.1,
            self.0
        );
    }
}

/// The kinds these tests run, for either set as a trait object.
trait Kinds:
    Kernel<Error = KernelError>
    + Conv2d
    + DepthwiseConv2d
    + DepthwiseConv2dInPlace
    + FullyConnected
    + Add
    + AddInPlace
    + Sub
    + SubInPlace
    + Mul
    + MulInPlace
    + Mean
    + Pad
    + Quantize
{
}

impl Kinds for Reference {}
impl Kinds for Optimized {}

/// `cases` random cases from `seed`: `case(r, i, varied)` draws case `i` and compares the
/// sets' results, counting the case in `varied`, which it returns.
fn each_case(
    seed: u64,
    cases: usize,
    mut case: impl FnMut(&mut Rng, usize, &mut Varied),
) -> Varied {
    let mut r = Rng::new(seed);
    let mut varied = Varied::default();
    for i in 0..cases {
        case(&mut r, i, &mut varied);
    }
    varied
}

#[test]
fn conv_2d_equals_reference() {
    each_case(0xC0_2D, 700, |r, case, varied| {
        let mut g = Geometry::random(r, 9, 19);
        // A 1x1 filter often, to take the pointwise path.
        if r.one_in(3) {
            (g.fh, g.fw) = (1, 1);
            if r.one_in(2) {
                g.padding = Padding::Valid;
            }
        }
        let groups = if g.c > 1 && r.one_in(4) {
            let d: Vec<usize> = (2..=g.c).filter(|d| g.c.is_multiple_of(*d)).collect();
            d[r.size(0, d.len() - 1)]
        } else {
            1
        };
        let f_c = g.c / groups;
        let out_c = groups
            * if r.one_in(10) {
                r.size(60, 70)
            } else {
                r.size(1, 13)
            };
        let q = Quants::random(r, out_c, g.fh * g.fw * f_c);
        let filter = [out_c, g.fh, g.fw, f_c];
        let t = g.tensors(r, &q, &filter, FilterLayout::ChannelFirst);
        let o = Conv2dOptions {
            padding: g.padding,
            pads: g.dims(),
            stride_h: g.stride.0 as i32,
            stride_w: g.stride.1 as i32,
            dilation_h: g.dilation.0 as i32,
            dilation_w: g.dilation.1 as i32,
            activation: q.activation,
        };
        // An im2col scratch tensor now and then: large enough, or too small (ignored).
        let row = g.fh * g.fw * f_c;
        let len = if r.one_in(2) {
            4 * row + r.size(0, 40)
        } else {
            row
        };
        varied.both(
            format_args!("case {case}: {g:?}, groups {groups}, out_c {out_c}, {q:?}"),
            t.run(None, |op| Reference.conv_2d(op, &o)),
            t.run(r.one_in(3).then_some(len), |op| Optimized.conv_2d(op, &o)),
        );
    })
    .check("conv_2d", 0.6);
}

#[test]
fn conv_2d_rows_longer_than_the_stack_buffer() {
    // 3x3 x 240 channels: 2160-byte rows, more than IM2COL_STACK; the reference runs it
    // without a scratch tensor, im2col with one.
    let mut r = Rng::new(7);
    let g = Geometry::same_3x3(240, (1, 2));
    assert!(g.fh * g.fw * g.c > crate::IM2COL_STACK);
    let (oh, ow) = g.out();
    let out_c = 67;
    let mut q = Quants::random(&mut r, out_c, 9 * 240);
    q.activation = Activation::None;
    q.output.1 = 3;
    let t = Tensors::random(
        &mut r,
        &q,
        (&[1, 4, 5, 240], &[out_c, 3, 3, 240], &[1, oh, ow, out_c]),
        out_c,
        FilterLayout::ChannelFirst,
    );
    let o = Conv2dOptions {
        padding: g.padding,
        pads: Dims::EMPTY,
        stride_h: 1,
        stride_w: 2,
        dilation_h: 1,
        dilation_w: 1,
        activation: Activation::None,
    };
    let want = t.run(None, |op| Reference.conv_2d(op, &o)).unwrap();
    let got = t.run(None, |op| Optimized.conv_2d(op, &o)).unwrap();
    assert_eq!(got, want);
    let got = t
        .run(Some(4 * 9 * 240), |op| Optimized.conv_2d(op, &o))
        .unwrap();
    assert_eq!(got, want);
    let mut v = Varied::default();
    v.see(&want);
    v.check("wide conv", 1.0);
}

/// A random depthwise case: geometry, multiplier, quantisation and tensors.
fn depthwise_case(
    r: &mut Rng,
    g: &Geometry,
    multiplier: usize,
) -> (Tensors, DepthwiseConv2dOptions) {
    let out_c = g.c * multiplier;
    let q = Quants::random(r, out_c, g.fh * g.fw);
    let t = g.tensors(r, &q, &[1, g.fh, g.fw, out_c], FilterLayout::ChannelLast);
    let o = DepthwiseConv2dOptions {
        padding: g.padding,
        pads: g.dims(),
        stride_h: g.stride.0 as i32,
        stride_w: g.stride.1 as i32,
        depth_multiplier: multiplier as i32,
        dilation_h: g.dilation.0 as i32,
        dilation_w: g.dilation.1 as i32,
        activation: q.activation,
    };
    (t, o)
}

#[test]
fn depthwise_conv_2d_equals_reference() {
    each_case(0xD3_9C, 900, |r, case, varied| {
        let mut g = Geometry::random(r, 11, 37);
        if r.one_in(8) {
            g.c = r.size(60, 90);
            (g.h, g.w) = (r.size(1, 5), r.size(1, 5));
            if g.out().0 == 0 || g.out().1 == 0 {
                g.padding = Padding::Same;
            }
        }
        let multiplier = if r.one_in(2) { 1 } else { r.size(2, 3) };
        let (t, o) = depthwise_case(r, &g, multiplier);
        varied.sets(
            format_args!("case {case}: {g:?}, multiplier {multiplier}, {o:?}"),
            |set| t.run(None, |op| set.depthwise_conv_2d(op, &o)),
        );
    })
    .check("depthwise_conv_2d", 0.6);
}

#[test]
fn depthwise_with_one_input_channel_equals_reference() {
    // One input channel runs as a GEMM over im2col rows of the taps (person detection's first
    // layer: 1 channel, multiplier 8, 3x3, stride 2); multipliers up to 70 cross a CHUNK.
    each_case(0x1C_4A, 300, |r, case, varied| {
        let mut g = Geometry::random(r, 13, 1);
        g.c = 1;
        let multiplier = if r.one_in(6) {
            r.size(60, 70)
        } else {
            r.size(1, 16)
        };
        let (t, o) = depthwise_case(r, &g, multiplier);
        varied.sets(
            format_args!("case {case}: {g:?}, multiplier {multiplier}, {o:?}"),
            |set| t.run(None, |op| set.depthwise_conv_2d(op, &o)),
        );
    })
    .check("depthwise_conv_2d with one input channel", 0.6);
}

/// The in-place kernel of `set` on `t`: the buffer starts as the input and spans the longer
/// of input and output, with a temporary of `temp` elements.
fn in_place(
    set: &mut dyn Kinds,
    t: &Tensors,
    o: &DepthwiseConv2dOptions,
    temp: usize,
) -> Result<Vec<i8>, KernelError> {
    let mut buf = t.x.clone();
    buf.resize(t.x.len().max(t.yi.elements), 0);
    let mut tmp = vec![0x33i8; temp];
    let ti = info::<i8>(&[temp], &[], &[]);
    let inputs = t.inputs(In::in_place(0, &t.xi));
    run_op(
        &inputs,
        &mut [Out::new(&mut buf, &t.yi)],
        &mut [Out::new(&mut tmp, &ti)],
        |op| set.depthwise_conv_2d_in_place(op, o),
    )?;
    buf.truncate(t.yi.elements);
    Ok(buf)
}

#[test]
fn depthwise_in_place_equals_reference() {
    each_case(0x1_9ACE, 500, |r, case, varied| {
        // A geometry whose output is no larger than its input.
        let g = loop {
            let g = Geometry::random(r, 9, 40);
            let (oh, ow) = g.out();
            if oh * ow <= g.h * g.w {
                break g;
            }
        };
        let (t, o) = depthwise_case(r, &g, 1);
        // One channel of temporary, a few, or all of them.
        let temp = g.h * g.w * [1, r.size(2, 5), g.c, 70][r.size(0, 3)] + r.size(0, 2);
        let got = varied.sets(format_args!("case {case}: {g:?}, temp {temp}"), |set| {
            in_place(set, &t, &o, temp)
        });
        // And the same bytes as out of place.
        let out = t.run(None, |op| Optimized.depthwise_conv_2d(op, &o));
        assert_eq!(out, Ok(got), "case {case}: {g:?}");
    })
    .check("depthwise in place", 0.6);
}

#[test]
fn in_place_refusals_are_the_references() {
    let mut r = Rng::new(5);
    let g = Geometry::same_3x3(3, (1, 1));
    let (t, o) = depthwise_case(&mut r, &g, 1);
    // A temporary smaller than one channel.
    let want = in_place(&mut Reference, &t, &o, 19);
    assert!(matches!(want, Err(KernelError::Shape { .. })), "{want:?}");
    assert_eq!(in_place(&mut Optimized, &t, &o, 19), want);
    // A depth multiplier of 2.
    let (t2, o2) = depthwise_case(&mut r, &g, 2);
    let want = in_place(&mut Reference, &t2, &o2, 60);
    assert!(matches!(want, Err(KernelError::Options { .. })), "{want:?}");
    assert_eq!(in_place(&mut Optimized, &t2, &o2, 60), want);
}

#[test]
fn fully_connected_equals_reference() {
    each_case(0xFC, 500, |r, case, varied| {
        let batches = r.size(1, 4);
        let depth = r.size(1, 70);
        let units = if r.one_in(5) {
            r.size(60, 140)
        } else {
            r.size(1, 20)
        };
        let q = Quants::random(r, units, depth);
        let t = Tensors::random(
            r,
            &q,
            (&[batches, depth], &[units, depth], &[batches, units]),
            units,
            FilterLayout::ChannelFirst,
        );
        let o = FullyConnectedOptions {
            activation: q.activation,
            weights_format: WeightsFormat::Default,
            keep_num_dims: false,
            asymmetric_quantize_inputs: false,
        };
        varied.sets(
            format_args!("case {case}: {batches}x{depth} -> {units}, {q:?}"),
            |set| t.run(None, |op| set.fully_connected(op, &o)),
        );
    })
    .check("fully_connected", 0.6);
}

#[test]
fn a_prepared_tensor_of_the_wrong_shape_or_type_is_refused() {
    let mut r = Rng::new(11);
    let q = Quants::random(&mut r, 5, 7);
    let mut t = Tensors::random(
        &mut r,
        &q,
        (&[2, 7], &[5, 7], &[2, 5]),
        5,
        FilterLayout::ChannelFirst,
    );
    let o = FullyConnectedOptions {
        activation: Activation::None,
        weights_format: WeightsFormat::Default,
        keep_num_dims: false,
        asymmetric_quantize_inputs: false,
    };
    for shape in [&[3usize, 4][..], &[15], &[5, 3], &[3, 6]] {
        t.prepared = Some((
            vec![0; shape.iter().product()],
            info::<i32>(shape, &[], &[]),
        ));
        let e = t.run(None, |op| Optimized.fully_connected(op, &o));
        assert!(
            matches!(
                e,
                Err(KernelError::Prepared {
                    channels: 5,
                    int32: true,
                    ..
                })
            ),
            "{shape:?}: {e:?}"
        );
        let message = std::format!("{}", e.unwrap_err());
        assert!(
            message.contains("[3, 5]") && message.contains("requant_v1"),
            "{message}"
        );
        // The reference ignores input 3.
        assert!(t.run(None, |op| Reference.fully_connected(op, &o)).is_ok());
    }
    // int8 instead of int32.
    let p = vec![0i8; 15];
    let pi = info::<i8>(&[3, 5], &[], &[]);
    let mut y = vec![0i8; 10];
    let mut inputs = t.inputs(In::new(&t.x, &t.xi));
    inputs.truncate(3);
    inputs.push(Some(In::new(&p, &pi)));
    let e = run_op(&inputs, &mut [Out::new(&mut y, &t.yi)], &mut [], |op| {
        Optimized.fully_connected(op, &o)
    });
    assert!(
        matches!(e, Err(KernelError::Prepared { int32: false, .. })),
        "{e:?}"
    );
}

#[test]
fn requant_v1_is_the_reference_multiplier() {
    // The multipliers and shifts requant_v1 writes are the reference kernels' per-channel
    // ones, per-tensor and per-channel, and the effective bias is bias - x_zero · Σ w.
    let mut r = Rng::new(3);
    for _ in 0..200 {
        let channels = r.size(1, 9);
        let k = r.size(0, 11);
        let q = Quants::random(&mut r, channels, k.max(1));
        let w = r.i8s(channels * k);
        let bias = r.i32s(channels, -5000, 5000);
        let wi = info::<i8>(&[channels, k], &q.filter, &vec![0; q.filter.len()]);
        let p = RequantInputs {
            filter: &w,
            layout: FilterLayout::ChannelFirst,
            channels,
            bias: Some(&bias),
            input_scale: q.input.0,
            input_zero_point: q.input.1 as i32,
            filter_scales: &q.filter,
            output_scale: q.output.0,
        };
        let mut out = vec![0i32; 3 * channels];
        requant_v1(&p, &mut out).unwrap();
        for c in 0..channels {
            let m = crate::reference::common::window::channel_multiplier(
                q.input.0,
                wi.quant.as_ref().unwrap(),
                q.output.0,
                c,
            );
            assert_eq!(
                (out[channels + c], out[2 * channels + c]),
                (m.multiplier, m.shift)
            );
            let sum: i32 = w[c * k..(c + 1) * k].iter().map(|&v| i32::from(v)).sum();
            assert_eq!(out[c], bias[c] - q.input.1 as i32 * sum);
        }
        // A tensor of the wrong length is refused.
        assert!(requant_v1(&p, &mut out[1..]).is_err());
    }
}

/// The binary kinds with a fast path.
#[derive(Debug, Clone, Copy)]
enum Binary {
    Add,
    Sub,
    Mul,
}

/// A set's `ADD`, `SUB` or `MUL` of `a` and `b` into `yi`, out of place or with input
/// `in_place` (0 or 1) taken over by the output.
fn binary(
    set: &mut dyn Kinds,
    kind: Binary,
    (a, ai): (&[i8], &TensorInfo<i8>),
    (b, bi): (&[i8], &TensorInfo<i8>),
    yi: &TensorInfo<i8>,
    in_place: Option<usize>,
    activation: Activation,
) -> Result<Vec<i8>, KernelError> {
    let o = AddOptions {
        activation,
        pot_scale_int16: false,
    };
    let m = MulOptions { activation };
    let mut y = vec![0i8; yi.elements];
    let mut inputs = vec![Some(In::new(a, ai)), Some(In::new(b, bi))];
    if let Some(i) = in_place {
        y.copy_from_slice([a, b][i]);
        inputs[i] = Some(In::in_place(0, [ai, bi][i]));
    }
    run_op(&inputs, &mut [Out::new(&mut y, yi)], &mut [], |op| {
        match (kind, in_place) {
            (Binary::Add, None) => set.add(op, &o),
            (Binary::Add, Some(_)) => set.add_in_place(op, &o),
            (Binary::Sub, None) => set.sub(op, &o),
            (Binary::Sub, Some(_)) => set.sub_in_place(op, &o),
            (Binary::Mul, None) => set.mul(op, &m),
            (Binary::Mul, Some(_)) => set.mul_in_place(op, &m),
        }
    })?;
    Ok(y)
}

#[test]
fn add_sub_and_mul_equal_reference() {
    each_case(0xADD, 900, |r, case, varied| {
        let rank = r.size(1, 4);
        let shape: Vec<usize> = (0..rank).map(|_| r.size(1, 7)).collect();
        let n: usize = shape.iter().product();
        let last = shape[rank - 1];
        // An operand of the output's shape, a row of the last dimension (with or without
        // leading ones), or another broadcast (which the reference kernel runs).
        let operand = |r: &mut Rng| -> Vec<usize> {
            match r.range(0, 5) {
                0 => vec![last],
                1 => {
                    let mut s = vec![1; rank];
                    s[rank - 1] = last;
                    s
                }
                2 => shape
                    .iter()
                    .map(|&d| if r.one_in(2) { 1 } else { d })
                    .collect(),
                _ => shape.clone(),
            }
        };
        let (a_shape, b_shape) = (operand(r), operand(r));
        let q = |r: &mut Rng| (r.scale(0.01, 0.2), r.zero());
        let (qa, qb, qy) = (q(r), q(r), q(r));
        let ai = info::<i8>(&a_shape, &[qa.0], &[qa.1]);
        let bi = info::<i8>(&b_shape, &[qb.0], &[qb.1]);
        // MUL's products reach 2^16 in the inputs' units: a coarser output.
        let kind = [Binary::Add, Binary::Sub, Binary::Mul][r.size(0, 2)];
        let y_scale = match kind {
            Binary::Mul => qy.0 * qa.0 * qb.0 * 2000.0,
            _ => qy.0,
        };
        let yi = info::<i8>(&shape, &[y_scale], &[qy.1]);
        let (a, b) = (r.i8s(ai.elements), r.i8s(bi.elements));
        let activation = ACTIVATIONS[r.size(0, 3)];
        let in_place = match r.range(0, 3) {
            0 if a_shape == shape => Some(0),
            1 if b_shape == shape => Some(1),
            _ => None,
        };
        let want = varied.sets(
            format_args!(
                "case {case}: {kind:?} {a_shape:?} {b_shape:?} -> {shape:?}, in place {in_place:?}"
            ),
            |set| {
                binary(
                    set,
                    kind,
                    (&a[..], &ai),
                    (&b[..], &bi),
                    &yi,
                    in_place,
                    activation,
                )
            },
        );
        assert_eq!(n, want.len());
    })
    .check("add, sub and mul", 0.5);
}

/// What `f` writes to an output described by `yi` (its elements first set to 0x11) from the
/// one input `x`.
fn one_input(
    x: &[i8],
    xi: &TensorInfo<i8>,
    yi: &TensorInfo<i8>,
    f: impl FnOnce(OpView<'_, '_>) -> Result<(), KernelError>,
) -> Result<Vec<i8>, KernelError> {
    let mut y = vec![0x11i8; yi.elements];
    run_op(
        &[Some(In::new(x, xi))],
        &mut [Out::new(&mut y, yi)],
        &mut [],
        f,
    )?;
    Ok(y)
}

#[test]
fn mean_equals_reference() {
    each_case(0x3EA9, 300, |r, case, varied| {
        let shape = [r.size(1, 2), r.size(1, 9), r.size(1, 9), r.size(1, 80)];
        // Over a run of neighbouring axes (the fast path: rows and columns, one axis,
        // the last ones), in any spelling, or axes apart (the reference).
        let axes: &[i32] = match r.range(0, 8) {
            0 => &[1, 2],
            1 => &[2, 1],
            2 => &[-3, -2, 1],
            3 => &[1],
            4 => &[2],
            5 => &[-1],
            6 => &[3, 1, 2],
            7 => &[0, 1],
            _ => &[0, 3],
        };
        let kept: Vec<usize> = (0..4)
            .filter(|d| !axes.iter().any(|&a| (a + 4) as usize % 4 == *d))
            .map(|d| shape[d])
            .collect();
        let xi = info::<i8>(&shape, &[r.scale(0.01, 0.1)], &[r.zero()]);
        let yi = info::<i8>(&kept, &[r.scale(0.005, 0.1)], &[r.zero()]);
        let x = r.i8s(xi.elements);
        let o = MeanOptions {
            axes: Dims::new(axes).unwrap_or(Dims::EMPTY),
            keep_dims: false,
        };
        varied.sets(
            format_args!("case {case}: {shape:?} over {axes:?}"),
            |set| one_input(&x, &xi, &yi, |op| set.mean(op, &o)),
        );
    })
    .check("mean", 0.5);
}

#[test]
fn mean_of_empty_tensors_is_the_references() {
    // A dimension of 0 before, inside or after the averaged axes: no panic, and the same
    // outcome as the reference (an empty output, or its error).
    let mut r = Rng::new(0xE3);
    for (shape, axes) in [
        (&[1usize, 4, 0][..], &[1i32][..]),
        (&[0, 4, 3], &[1]),
        (&[2, 0, 3], &[1]),
        (&[1, 3, 0, 5], &[1, 2]),
    ] {
        let kept: Vec<usize> = (0..shape.len())
            .filter(|d| !axes.contains(&(*d as i32)))
            .map(|d| shape[d])
            .collect();
        let xi = info::<i8>(shape, &[0.05], &[3]);
        let yi = info::<i8>(&kept, &[0.05], &[3]);
        let x = r.i8s(xi.elements);
        let o = MeanOptions {
            axes: Dims::new(axes).unwrap_or(Dims::EMPTY),
            keep_dims: false,
        };
        let want = one_input(&x, &xi, &yi, |op| Reference.mean(op, &o));
        let got = one_input(&x, &xi, &yi, |op| Optimized.mean(op, &o));
        assert_eq!(got, want, "{shape:?} over {axes:?}");
    }
}

#[test]
fn pad_equals_reference() {
    each_case(0x9AD, 300, |r, case, varied| {
        let shape = [r.size(1, 2), r.size(1, 7), r.size(1, 7), r.size(1, 9)];
        // Rows and columns (the fast path), now and then the batch or channels too.
        let mut before = [0, r.size(0, 3), r.size(0, 3), 0];
        let mut after = [0, r.size(0, 3), r.size(0, 3), 0];
        if r.one_in(5) {
            let d = [0, 3][r.size(0, 1)];
            (before[d], after[d]) = (r.size(0, 2), r.size(0, 2));
        }
        let out: Vec<usize> = (0..4).map(|d| shape[d] + before[d] + after[d]).collect();
        let xi = info::<i8>(&shape, &[r.scale(0.01, 0.1)], &[r.zero()]);
        let yi = info::<i8>(&out, &[r.scale(0.01, 0.1)], &[r.zero()]);
        let x = r.i8s(xi.elements);
        let dims = |p: [usize; 4]| Dims::new(&p.map(|v| v as i32)).unwrap_or(Dims::EMPTY);
        let o = PadOptions {
            before: dims(before),
            after: dims(after),
        };
        varied.sets(
            format_args!("case {case}: {shape:?} padded {before:?} {after:?}"),
            |set| one_input(&x, &xi, &yi, |op| set.pad(op, &o)),
        );
    })
    .check("pad", 0.8);
}

/// A set's `QUANTIZE` of `x` (int8 or int16) into int8, out of place.
fn quantize(set: &mut dyn Kinds, x: In<'_>, yi: &TensorInfo<i8>) -> Result<Vec<i8>, KernelError> {
    let mut y = vec![0x11i8; yi.elements];
    run_op(&[Some(x)], &mut [Out::new(&mut y, yi)], &mut [], |op| {
        set.quantize(op, &NoOptions {})
    })?;
    Ok(y)
}

#[test]
fn quantize_to_int8_equals_reference() {
    each_case(0x9A7, 400, |r, case, varied| {
        // Lengths across the fast path's runs of 64 values.
        let n = r.size(1, 200);
        let yi = info::<i8>(&[n], &[r.scale(0.001, 0.2)], &[r.zero()]);
        let scale = r.scale(0.00005, 0.5);
        if r.one_in(2) {
            let xi = info::<i8>(&[n], &[scale], &[r.zero()]);
            let x = r.i8s(n);
            varied.sets(format_args!("case {case}: int8 x {n}"), |set| {
                quantize(set, In::new(&x[..], &xi), &yi)
            });
        } else {
            let zero = [0, -32768, 32767, r.range(-32768, 32767)][r.size(0, 3)];
            let xi = info::<i16>(&[n], &[scale], &[zero]);
            let x: Vec<i16> = (0..n).map(|_| r.range(-32768, 32767) as i16).collect();
            varied.sets(format_args!("case {case}: int16 x {n}"), |set| {
                quantize(set, In::new(&x[..], &xi), &yi)
            });
        }
    })
    .check("quantize", 0.5);
}
