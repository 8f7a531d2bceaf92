//! Kernels on patch regions against the same kernels on whole tensors: for random shapes,
//! windows and output regions, the output region computed from the input region (its
//! receptive field, found here by brute force) equals the whole output's crop, in the
//! dense and the whole layouts; a conv -> depthwise -> pool chain run patch by patch
//! equals the chain run whole; and the refusals (missing pixels, regions on kinds that do
//! not run on them).

extern crate std;

use std::format;
use std::vec;
use std::vec::Vec;

use planner_rt::TensorInfo;
use planner_rt::kernel::{
    Add, AveragePool2d, Conv2d, DepthwiseConv2d, FullyConnected, In, MaxPool2d, Mul, OpView, Out,
    Pad, Region, ReluInPlace, Sub,
};
use planner_rt::options::{
    Activation, AddOptions, Conv2dOptions, DepthwiseConv2dOptions, Dims, FullyConnectedOptions,
    MulOptions, NoOptions, PadOptions, Padding,
};

use super::in_place_tests::{Rng, info, unary_kernels};
use super::test_support::{pool_options, run, run_op};
use super::{KernelError, Reference};

const ACTIVATIONS: [Activation; 4] = [
    Activation::None,
    Activation::Relu,
    Activation::Relu6,
    Activation::ReluN1To1,
];

/// A kernel called on an op view.
type Kernel<'k> = &'k dyn Fn(OpView<'_, '_>) -> Result<(), KernelError>;

/// The window of a convolution or pool along both axes: filter, stride, dilation, padding
/// before, over an input of `input` rows and columns.
#[derive(Debug, Clone, Copy)]
struct Geo {
    filter: (usize, usize),
    stride: (usize, usize),
    dilation: (usize, usize),
    before: (usize, usize),
    input: (usize, usize),
}

impl Geo {
    /// The bounding box of the input pixels inside the image that the windows of the
    /// output pixels of `out` read, by brute force over every tap; `None` when none is
    /// inside.
    fn field(&self, out: Region) -> Option<Region> {
        let mut span: Option<(usize, usize, usize, usize)> = None;
        for oy in out.top..out.top + out.height {
            for ox in out.left..out.left + out.width {
                for fy in 0..self.filter.0 {
                    for fx in 0..self.filter.1 {
                        let iy = (oy * self.stride.0 + fy * self.dilation.0) as i64
                            - self.before.0 as i64;
                        let ix = (ox * self.stride.1 + fx * self.dilation.1) as i64
                            - self.before.1 as i64;
                        if iy < 0
                            || ix < 0
                            || iy >= self.input.0 as i64
                            || ix >= self.input.1 as i64
                        {
                            continue;
                        }
                        let (iy, ix) = (iy as usize, ix as usize);
                        span = Some(match span {
                            None => (iy, iy, ix, ix),
                            Some((a, b, c, d)) => (a.min(iy), b.max(iy), c.min(ix), d.max(ix)),
                        });
                    }
                }
            }
        }
        span.map(|(a, b, c, d)| Region::new(a, c, b - a + 1, d - c + 1))
    }
}

/// Padding before, output size along one axis: SAME (`ceil(in / stride)`, half the total
/// padding before, rounded down), VALID, or explicit pads; `None` when no output fits.
fn axis(
    padding: Padding,
    pads: (usize, usize),
    input: usize,
    filter: usize,
    stride: usize,
    dilation: usize,
) -> Option<(usize, usize)> {
    let extent = (filter - 1) * dilation + 1;
    let (before, out) = match padding {
        Padding::Same => {
            let out = input.div_ceil(stride);
            let total = ((out - 1) * stride + extent).saturating_sub(input);
            (total / 2, out)
        }
        Padding::Valid => (0, (input + stride).checked_sub(extent)? / stride),
        Padding::Explicit => (
            pads.0,
            (input + pads.0 + pads.1).checked_sub(extent)? / stride + 1,
        ),
    };
    (out > 0).then_some((before, out))
}

/// A random region of an `h × w` image: one pixel, one touching the top-left or the
/// bottom-right border, the whole image, or any.
fn random_region(r: &mut Rng, h: usize, w: usize) -> Region {
    let span = |r: &mut Rng, n: usize| {
        let a = r.range(0, n as i64 - 1) as usize;
        let b = r.range(a as i64, n as i64 - 1) as usize;
        (a, b - a + 1)
    };
    match r.range(0, 5) {
        0 => Region::new(
            r.range(0, h as i64 - 1) as usize,
            r.range(0, w as i64 - 1) as usize,
            1,
            1,
        ),
        1 => Region::new(
            0,
            0,
            r.range(1, h as i64) as usize,
            r.range(1, w as i64) as usize,
        ),
        2 => {
            let (hh, ww) = (r.range(1, h as i64) as usize, r.range(1, w as i64) as usize);
            Region::new(h - hh, w - ww, hh, ww)
        }
        3 => Region::new(0, 0, h, w),
        _ => {
            let ((top, height), (left, width)) = (span(r, h), span(r, w));
            Region::new(top, left, height, width)
        }
    }
}

/// The elements of region `g` of a whole `[1, h, w, c]` tensor, dense.
fn crop<T: Copy>(data: &[T], shape: [usize; 4], g: Region) -> Vec<T> {
    let [_, _, w, c] = shape;
    let mut out = Vec::new();
    for y in g.top..g.top + g.height {
        let row = (y * w + g.left) * c;
        out.extend_from_slice(&data[row..row + g.width * c]);
    }
    out
}

/// Writes the dense elements of region `g` into a whole `[1, h, w, c]` tensor.
fn paste<T: Copy>(data: &mut [T], shape: [usize; 4], g: Region, dense: &[T]) {
    let [_, _, w, c] = shape;
    for (i, y) in (g.top..g.top + g.height).enumerate() {
        let row = (y * w + g.left) * c;
        data[row..row + g.width * c].copy_from_slice(&dense[i * g.width * c..][..g.width * c]);
    }
}

/// The shape of a tensor description as 4 dimensions.
fn dims<T>(t: &TensorInfo<T>) -> [usize; 4] {
    [t.shape[0], t.shape[1], t.shape[2], t.shape[3]]
}

/// Runs `kernel` with input 0 `x` (whole, `xi`) viewed over `in_region` (dense or whole,
/// by `in_dense`), the `rest` of the inputs, and output 0 (`yi`) viewed over `out_region`
/// (dense or whole, by `out_dense`, filled with noise first): the output region's
/// elements, dense. In the whole layout, the elements outside the region must be left
/// as they were.
#[allow(clippy::too_many_arguments)]
fn on_region(
    r: &mut Rng,
    x: &[i8],
    xi: &TensorInfo<i8>,
    in_region: Option<Region>,
    rest: &[Option<In<'_>>],
    yi: &TensorInfo<i8>,
    out_region: Region,
    kernel: Kernel<'_>,
) -> Result<Vec<i8>, KernelError> {
    let (in_dense, out_dense) = (r.range(0, 1) == 1, r.range(0, 1) == 1);
    let xv = match in_region {
        Some(g) if in_dense => crop(x, dims(xi), g),
        _ => x.to_vec(),
    };
    let mut x_in = In::new(&xv, xi);
    if let Some(g) = in_region {
        x_in = x_in.with_region(g);
    }
    let mut inputs = vec![Some(x_in)];
    inputs.extend_from_slice(rest);
    let out_len = if out_dense {
        out_region.height * out_region.width * dims(yi)[3]
    } else {
        yi.shape.iter().product()
    };
    let noise = r.i8s(out_len);
    let mut y = noise.clone();
    run_op(
        &inputs,
        &mut [Out::new(&mut y, yi).with_region(out_region)],
        &mut [],
        kernel,
    )?;
    if out_dense {
        return Ok(y);
    }
    let got = crop(&y, dims(yi), out_region);
    // Outside the region, nothing changed.
    paste(
        &mut y,
        dims(yi),
        out_region,
        &crop(&noise, dims(yi), out_region),
    );
    assert_eq!(y, noise, "an element outside the output region was written");
    Ok(got)
}

/// `g` less its first row (`side` 0), last row (1), first column (2) or last column (3),
/// when it has more than one.
fn shrink(g: Region, side: i64) -> Option<Region> {
    match side {
        0 if g.height > 1 => Some(Region::new(g.top + 1, g.left, g.height - 1, g.width)),
        1 if g.height > 1 => Some(Region::new(g.top, g.left, g.height - 1, g.width)),
        2 if g.width > 1 => Some(Region::new(g.top, g.left + 1, g.height, g.width - 1)),
        3 if g.width > 1 => Some(Region::new(g.top, g.left, g.height, g.width - 1)),
        _ => None,
    }
}

/// Checks a single-input windowed op on a random region against its whole output, and
/// that an input region short of one row or column it reads is refused.
#[allow(clippy::too_many_arguments)]
fn check_windowed(
    r: &mut Rng,
    x: &[i8],
    xi: &TensorInfo<i8>,
    rest: &[Option<In<'_>>],
    yi: &TensorInfo<i8>,
    geo: Geo,
    kernel: Kernel<'_>,
    what: &str,
) {
    let [_, out_h, out_w, _] = dims(yi);
    let mut whole = vec![0i8; yi.shape.iter().product()];
    let mut inputs = vec![Some(In::new(x, xi))];
    inputs.extend_from_slice(rest);
    run_op(&inputs, &mut [Out::new(&mut whole, yi)], &mut [], kernel).unwrap();
    let g = random_region(r, out_h, out_w);
    let field = geo.field(g);
    // No pixel read (all padding): any input region does.
    let in_region = field.unwrap_or(Region::new(0, 0, 1, 1));
    let got = on_region(r, x, xi, Some(in_region), rest, yi, g, kernel)
        .unwrap_or_else(|e| panic!("{what}, out {g:?}, in {in_region:?}: {e:?}"));
    assert_eq!(
        got,
        crop(&whole, dims(yi), g),
        "{what}, out {g:?}, in {in_region:?}"
    );
    // The same from an input region larger than the receptive field.
    let [_, in_h, in_w, _] = dims(xi);
    let grow = |r: &mut Rng, start: usize, len: usize, size: usize| {
        let a = start.saturating_sub(r.range(0, 2) as usize);
        let b = (start + len + r.range(0, 2) as usize).min(size);
        (a, b - a)
    };
    let (top, height) = grow(r, in_region.top, in_region.height, in_h);
    let (left, width) = grow(r, in_region.left, in_region.width, in_w);
    let larger = Region::new(top, left, height, width);
    let got = on_region(r, x, xi, Some(larger), rest, yi, g, kernel)
        .unwrap_or_else(|e| panic!("{what}, out {g:?}, in {larger:?}: {e:?}"));
    assert_eq!(got, crop(&whole, dims(yi), g), "{what}, in {larger:?}");
    // The same with the input whole and no region.
    let got = on_region(r, x, xi, None, rest, yi, g, kernel).unwrap();
    assert_eq!(
        got,
        crop(&whole, dims(yi), g),
        "{what}, input without region"
    );
    // An input region short of a row or column the output reads is refused.
    if let Some(short) = field.and_then(|f| shrink(f, r.range(0, 3))) {
        let e = on_region(r, x, xi, Some(short), rest, yi, g, kernel);
        assert!(
            matches!(e, Err(KernelError::Shape { .. })),
            "{what}, out {g:?}, short {short:?}: {e:?}"
        );
    }
}

/// A random convolution window: size, padding, output size.
struct Conv {
    geo: Geo,
    padding: Padding,
    pads: [usize; 4],
    out: (usize, usize),
}

fn random_conv(r: &mut Rng, h: usize, w: usize, sizes: &[usize], dilate: bool) -> Option<Conv> {
    let pick = |r: &mut Rng| sizes[r.range(0, sizes.len() as i64 - 1) as usize];
    let filter = (pick(r), pick(r));
    let stride = (r.range(1, 2) as usize, r.range(1, 2) as usize);
    let dilation = if dilate {
        (r.range(1, 2) as usize, r.range(1, 2) as usize)
    } else {
        (1, 1)
    };
    let padding = [Padding::Same, Padding::Valid, Padding::Explicit][r.range(0, 2) as usize];
    let pads = if padding == Padding::Explicit {
        [0; 4].map(|_| r.range(0, 3) as usize)
    } else {
        [0; 4]
    };
    // Along the rows (`d` 0) or the columns (1).
    let along = |d: usize| {
        let pick = |t: (usize, usize)| if d == 0 { t.0 } else { t.1 };
        let (input, pads) = (pick((h, w)), (pads[2 * d], pads[2 * d + 1]));
        axis(
            padding,
            pads,
            input,
            pick(filter),
            pick(stride),
            pick(dilation),
        )
    };
    let ((bh, oh), (bw, ow)) = (along(0)?, along(1)?);
    Some(Conv {
        geo: Geo {
            filter,
            stride,
            dilation,
            before: (bh, bw),
            input: (h, w),
        },
        padding,
        pads,
        out: (oh, ow),
    })
}

/// A random image of height and width in `hw.0` and up to `hw.1` channels
/// ([`Rng::hwc`]) and a random pool window on it (pools have no explicit padding); `None`
/// when the window drawn does not fit or has explicit padding.
fn random_pool(
    r: &mut Rng,
    hw: ((i64, i64), i64),
    sizes: &[usize],
) -> Option<((usize, usize, usize), Conv)> {
    let (h, w, c) = r.hwc(hw.0, hw.1);
    let k = random_conv(r, h, w, sizes, false)?;
    (k.padding != Padding::Explicit).then_some(((h, w, c), k))
}

impl Conv {
    fn pads(&self) -> Dims {
        if self.padding == Padding::Explicit {
            Dims::new(&self.pads.map(|p| p as i32)).unwrap()
        } else {
            Dims::EMPTY
        }
    }
}

/// Random per-channel quantisation: `(filter scales, input (scale, zero), output (scale,
/// zero))`, the output spread so that most values do not saturate.
fn quant(r: &mut Rng, channels: usize, taps: usize) -> (Vec<f32>, (f32, i64), (f32, i64)) {
    let input = (r.scale(0.01, 0.1), r.range(-128, 127));
    let filter = (0..channels).map(|_| r.scale(0.001, 0.02)).collect();
    let out = input.0 * 0.01 * (taps as f32).sqrt() * 4.0 * r.scale(0.5, 2.0);
    (filter, input, (out, r.range(-20, 20)))
}

#[test]
fn conv_and_depthwise_on_regions_equal_the_whole_output_cropped() {
    let mut r = Rng::new(27);
    let (mut seen_7x7, mut seen_dilated, mut seen_even_stride2) = (0, 0, 0);
    let mut rounds = 0;
    while rounds < 1500 {
        let depthwise = rounds % 2 == 1;
        let (h, w, c) = r.hwc((1, 13), 4);
        let Some(k) = random_conv(&mut r, h, w, &[1, 2, 3, 5, 7], true) else {
            continue;
        };
        rounds += 1;
        seen_7x7 += usize::from(k.geo.filter == (7, 7) || k.geo.filter.0 == 7);
        seen_dilated += usize::from(k.geo.dilation != (1, 1));
        seen_even_stride2 += usize::from(k.geo.stride.0 == 2 && h % 2 == 0);
        let activation = ACTIVATIONS[r.range(0, 3) as usize];
        let (fh, fw) = k.geo.filter;
        let (out_c, f_c, w_shape) = if depthwise {
            let m = r.range(1, 2) as usize;
            (c * m, 1, [1, fh, fw, c * m])
        } else {
            let groups = if r.range(0, 3) == 0 { c } else { 1 };
            let out_c = r.range(1, 3) as usize * groups;
            (out_c, c / groups, [out_c, fh, fw, c / groups])
        };
        let (fs, (si, zi), (so, zo)) = quant(&mut r, out_c, fh * fw * f_c);
        let x = r.i8s(h * w * c);
        let xi = info::<i8>(&[1, h, w, c], &[si], &[zi]);
        let wt = r.i8s(w_shape.iter().product());
        let wi = info::<i8>(&w_shape, &fs, &vec![0; out_c]);
        let bias: Vec<i32> = (0..out_c).map(|_| r.range(-3000, 3000) as i32).collect();
        let bi = info::<i32>(&[out_c], &[], &[]);
        let yi = info::<i8>(&[1, k.out.0, k.out.1, out_c], &[so], &[zo]);
        let rest = [Some(In::new(&wt, &wi)), Some(In::new(&bias, &bi))];
        let (s, d) = (k.geo.stride, k.geo.dilation);
        if depthwise {
            let o = DepthwiseConv2dOptions {
                padding: k.padding,
                pads: k.pads(),
                stride_h: s.0 as i32,
                stride_w: s.1 as i32,
                depth_multiplier: (out_c / c) as i32,
                dilation_h: d.0 as i32,
                dilation_w: d.1 as i32,
                activation,
            };
            let kernel = |op: OpView<'_, '_>| Reference.depthwise_conv_2d(op, &o);
            check_windowed(&mut r, &x, &xi, &rest, &yi, k.geo, &kernel, "depthwise");
        } else {
            let o = Conv2dOptions {
                padding: k.padding,
                pads: k.pads(),
                stride_h: s.0 as i32,
                stride_w: s.1 as i32,
                dilation_h: d.0 as i32,
                dilation_w: d.1 as i32,
                activation,
            };
            let kernel = |op: OpView<'_, '_>| Reference.conv_2d(op, &o);
            check_windowed(&mut r, &x, &xi, &rest, &yi, k.geo, &kernel, "conv");
        }
    }
    assert!(seen_7x7 > 30 && seen_dilated > 300 && seen_even_stride2 > 100);
}

#[test]
fn pools_on_regions_equal_the_whole_output_cropped() {
    let mut r = Rng::new(28);
    let mut rounds = 0;
    while rounds < 400 {
        let Some(((h, w, c), k)) = random_pool(&mut r, ((1, 13), 4), &[1, 2, 3, 7]) else {
            continue;
        };
        rounds += 1;
        let (si, zi) = (r.scale(0.01, 0.1), r.range(-128, 127));
        let x = r.i8s(h * w * c);
        let xi = info::<i8>(&[1, h, w, c], &[si], &[zi]);
        let yi = info::<i8>(&[1, k.out.0, k.out.1, c], &[si], &[zi]);
        let o = pool_options(
            k.padding,
            k.geo.filter,
            k.geo.stride,
            ACTIVATIONS[r.range(0, 3) as usize],
        );
        if rounds % 2 == 0 {
            let kernel = |op: OpView<'_, '_>| Reference.average_pool_2d(op, &o);
            check_windowed(&mut r, &x, &xi, &[], &yi, k.geo, &kernel, "average pool");
        } else {
            let kernel = |op: OpView<'_, '_>| Reference.max_pool_2d(op, &o);
            check_windowed(&mut r, &x, &xi, &[], &yi, k.geo, &kernel, "max pool");
        }
    }
}

#[test]
fn average_pool_on_a_border_region_divides_by_the_pixels_inside_the_image() {
    // 3x3 SAME average over a 4x4 image of 1..16: the corner output (0, 0) averages the 4
    // pixels inside (1, 2, 5, 6: 3.5, rounded away from zero to 4), computed from a
    // dense 2x2 input region.
    let x: Vec<i8> = (1..=16).collect();
    let xi = info::<i8>(&[1, 4, 4, 1], &[1.0], &[0]);
    let yi = info::<i8>(&[1, 4, 4, 1], &[1.0], &[0]);
    let o = pool_options(Padding::Same, (3, 3), (1, 1), Activation::None);
    let dense = [1i8, 2, 5, 6];
    let mut y = [0i8];
    run_op(
        &[Some(
            In::new(&dense, &xi).with_region(Region::new(0, 0, 2, 2)),
        )],
        &mut [Out::new(&mut y, &yi).with_region(Region::new(0, 0, 1, 1))],
        &mut [],
        |op| Reference.average_pool_2d(op, &o),
    )
    .unwrap();
    assert_eq!(y, [4]);
    let _ = x;
}

/// A random `PAD` of an `[1, h, w, c]` input (up to 2 rows and columns each side, and with
/// `channels` up to 1 channel each side; pads drawn before first, then after, each in
/// dimension order): its options, output shape and window geometry.
fn random_pad(
    r: &mut Rng,
    (h, w, c): (usize, usize, usize),
    channels: bool,
) -> (PadOptions, [usize; 4], Geo) {
    let mut side = || {
        [
            0,
            r.range(0, 3),
            r.range(0, 3),
            if channels { r.range(0, 1) } else { 0 },
        ]
    };
    let (before, after) = (side(), side());
    let out = [
        1,
        h + (before[1] + after[1]) as usize,
        w + (before[2] + after[2]) as usize,
        c + (before[3] + after[3]) as usize,
    ];
    let o = PadOptions {
        before: Dims::new(&before.map(|b| b as i32)).unwrap(),
        after: Dims::new(&after.map(|b| b as i32)).unwrap(),
    };
    let geo = Geo {
        filter: (1, 1),
        stride: (1, 1),
        dilation: (1, 1),
        before: (before[1] as usize, before[2] as usize),
        input: (h, w),
    };
    (o, out, geo)
}

#[test]
fn pad_on_regions_equals_the_whole_output_cropped() {
    let mut r = Rng::new(29);
    for _ in 0..300 {
        let (h, w, c) = r.hwc((1, 9), 3);
        let (o, out, geo) = random_pad(&mut r, (h, w, c), true);
        let zero = r.range(-128, 127);
        let x = r.i8s(h * w * c);
        let xi = info::<i8>(&[1, h, w, c], &[0.1], &[zero]);
        let yi = info::<i8>(&out, &[0.1], &[zero]);
        let kernel = |op: OpView<'_, '_>| Reference.pad(op, &o);
        check_windowed(&mut r, &x, &xi, &[], &yi, geo, &kernel, "pad");
    }
}

#[test]
fn binary_ops_on_regions_equal_the_whole_output_cropped() {
    let mut r = Rng::new(30);
    for round in 0..300 {
        let (h, w, c) = r.hwc((1, 9), 4);
        let shape = [1, h, w, c];
        let q = |r: &mut Rng| (r.scale(0.01, 0.1), r.range(-128, 127));
        let (qa, qb, qo) = (q(&mut r), q(&mut r), q(&mut r));
        let a = r.i8s(h * w * c);
        let ai = info::<i8>(&shape, &[qa.0], &[qa.1]);
        // The second operand: the same shape (with the region), or broadcast and whole.
        let b_shape: Vec<usize> = match round % 3 {
            0 => shape.to_vec(),
            1 => vec![1, 1, 1, c],
            _ => vec![c],
        };
        let b = r.i8s(b_shape.iter().product());
        let bi = info::<i8>(&b_shape, &[qb.0], &[qb.1]);
        let yi = info::<i8>(&shape, &[qo.0], &[qo.1]);
        let activation = ACTIVATIONS[r.range(0, 3) as usize];
        let add = AddOptions {
            activation,
            ..Default::default()
        };
        let mul = MulOptions { activation };
        let kernel = |op: OpView<'_, '_>| match round % 4 {
            0 | 3 => Reference.add(op, &add),
            1 => Reference.sub(op, &add),
            _ => Reference.mul(op, &mul),
        };
        let mut whole = vec![0i8; h * w * c];
        run(
            &[Some(In::new(&a, &ai)), Some(In::new(&b, &bi))],
            Out::new(&mut whole, &yi),
            kernel,
        )
        .unwrap();
        let g = random_region(&mut r, h, w);
        let b_dense = r.range(0, 1) == 1;
        let bv = if round % 3 == 0 && b_dense {
            crop(&b, shape, g)
        } else {
            b.clone()
        };
        let mut b_in = In::new(&bv, &bi);
        if round % 3 == 0 {
            b_in = b_in.with_region(g);
        }
        let got = on_region(&mut r, &a, &ai, Some(g), &[Some(b_in)], &yi, g, &kernel).unwrap();
        assert_eq!(got, crop(&whole, shape, g), "round {round}, {g:?}");
        // An operand whose region lacks part of the output's is refused.
        if let Some(short) = shrink(g, r.range(0, 3)) {
            let e = on_region(&mut r, &a, &ai, Some(short), &[Some(b_in)], &yi, g, &kernel);
            assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
        }
    }
}

#[test]
fn unary_ops_on_regions_equal_the_whole_output_cropped() {
    let mut r = Rng::new(31);
    for round in 0..60 {
        for (name, kernel, qi, qo) in unary_kernels(&mut r) {
            let (h, w, c) = r.hwc((1, 9), 4);
            let shape = [1, h, w, c];
            let x = r.i8s(h * w * c);
            let xi = info::<i8>(&shape, &[qi.0], &[qi.1]);
            let yi = info::<i8>(&shape, &[qo.0], &[qo.1]);
            let whole_op = |op: OpView<'_, '_>| kernel(op, false);
            let mut whole = vec![0i8; h * w * c];
            run(
                &[Some(In::new(&x, &xi))],
                Out::new(&mut whole, &yi),
                whole_op,
            )
            .unwrap();
            let g = random_region(&mut r, h, w);
            let got = on_region(&mut r, &x, &xi, Some(g), &[], &yi, g, &whole_op).unwrap();
            assert_eq!(got, crop(&whole, shape, g), "{name}, round {round}, {g:?}");
            if let Some(short) = shrink(g, r.range(0, 3)) {
                let e = on_region(&mut r, &x, &xi, Some(short), &[], &yi, g, &whole_op);
                assert!(matches!(e, Err(KernelError::Shape { .. })), "{name}: {e:?}");
            }
        }
    }
    // DEQUANTIZE, int8 to float, on a dense region into a whole output.
    let x: Vec<i8> = (0..24).map(|v| v as i8 - 12).collect();
    let xi = info::<i8>(&[1, 2, 3, 4], &[0.5], &[2]);
    let yi = info::<f32>(&[1, 2, 3, 4], &[], &[]);
    let g = Region::new(1, 1, 1, 2);
    let dense = crop(&x, [1, 2, 3, 4], g);
    let mut y = vec![-1.0f32; 24];
    run(
        &[Some(In::new(&dense, &xi).with_region(g))],
        Out::new(&mut y, &yi).with_region(g),
        |op| super::elementwise::dequantize(op, false),
    )
    .unwrap();
    let expected: Vec<f32> = (0..24)
        .map(|i| {
            let (row, col) = (i / 12, (i / 4) % 3);
            if g.contains(row, col) {
                0.5 * (x[i] as f32 - 2.0)
            } else {
                -1.0
            }
        })
        .collect();
    assert_eq!(y, expected);
}

#[test]
fn a_conv_dw_pool_chain_run_patch_by_patch_equals_the_whole_chain() {
    let mut r = Rng::new(32);
    let mut rounds = 0;
    let mut uneven = 0;
    while rounds < 150 {
        let (h, w, c) = r.hwc((6, 20), 3);
        let Some(k1) = random_conv(&mut r, h, w, &[1, 3, 5], true) else {
            continue;
        };
        let Some(k2) = random_conv(&mut r, k1.out.0, k1.out.1, &[3, 5, 7], true) else {
            continue;
        };
        let Some(k3) = random_conv(&mut r, k2.out.0, k2.out.1, &[2, 3], false) else {
            continue;
        };
        if k3.padding == Padding::Explicit {
            continue;
        }
        let (gh, gw) = (r.range(2, 4) as usize, r.range(1, 3) as usize);
        let (out_h, out_w) = k3.out;
        if out_h < gh || out_w < gw {
            continue;
        }
        rounds += 1;
        uneven += usize::from(out_h % gh != 0);
        let c1 = r.range(1, 3) as usize;
        let (fs1, (si, zi), (s1, z1)) = quant(&mut r, c1, k1.geo.filter.0 * k1.geo.filter.1 * c);
        let (fs2, _, (s2, z2)) = quant(&mut r, c1, k2.geo.filter.0 * k2.geo.filter.1);
        let x = r.i8s(h * w * c);
        let xi = info::<i8>(&[1, h, w, c], &[si], &[zi]);
        let w1_shape = [c1, k1.geo.filter.0, k1.geo.filter.1, c];
        let w1 = r.i8s(w1_shape.iter().product());
        let w1i = info::<i8>(&w1_shape, &fs1, &vec![0; c1]);
        let w2_shape = [1, k2.geo.filter.0, k2.geo.filter.1, c1];
        let w2 = r.i8s(w2_shape.iter().product());
        let w2i = info::<i8>(&w2_shape, &fs2, &vec![0; c1]);
        let y1i = info::<i8>(&[1, k1.out.0, k1.out.1, c1], &[s1], &[z1]);
        let y2i = info::<i8>(&[1, k2.out.0, k2.out.1, c1], &[s2], &[z2]);
        let y3i = info::<i8>(&[1, out_h, out_w, c1], &[s2], &[z2]);
        let o1 = Conv2dOptions {
            padding: k1.padding,
            pads: k1.pads(),
            stride_h: k1.geo.stride.0 as i32,
            stride_w: k1.geo.stride.1 as i32,
            dilation_h: k1.geo.dilation.0 as i32,
            dilation_w: k1.geo.dilation.1 as i32,
            activation: ACTIVATIONS[r.range(0, 3) as usize],
        };
        let o2 = DepthwiseConv2dOptions {
            padding: k2.padding,
            pads: k2.pads(),
            stride_h: k2.geo.stride.0 as i32,
            stride_w: k2.geo.stride.1 as i32,
            depth_multiplier: 1,
            dilation_h: k2.geo.dilation.0 as i32,
            dilation_w: k2.geo.dilation.1 as i32,
            activation: ACTIVATIONS[r.range(0, 3) as usize],
        };
        let o3 = pool_options(k3.padding, k3.geo.filter, k3.geo.stride, Activation::None);
        // The chain run whole.
        let (mut y1, mut y2, mut whole) = (
            vec![0i8; y1i.elements],
            vec![0i8; y2i.elements],
            vec![0i8; y3i.elements],
        );
        let f1 = [Some(In::new(&w1, &w1i)), None];
        let f2 = [Some(In::new(&w2, &w2i)), None];
        let step = |x: In<'_>, f: &[Option<In<'_>>], y: Out<'_>, k: usize| {
            let mut inputs = vec![Some(x)];
            inputs.extend_from_slice(f);
            run_op(&inputs, &mut [y], &mut [], |op| match k {
                1 => Reference.conv_2d(op, &o1),
                2 => Reference.depthwise_conv_2d(op, &o2),
                _ => Reference.average_pool_2d(op, &o3),
            })
        };
        step(In::new(&x, &xi), &f1, Out::new(&mut y1, &y1i), 1).unwrap();
        step(In::new(&y1, &y1i), &f2, Out::new(&mut y2, &y2i), 2).unwrap();
        step(In::new(&y2, &y2i), &[], Out::new(&mut whole, &y3i), 3).unwrap();
        // Patch by patch: the input resident (whole, with a region), the stage tensors
        // dense, the last output whole (each patch writes its tile in place).
        let mut split = vec![0i8; y3i.elements];
        let (th, tw) = (out_h.div_ceil(gh), out_w.div_ceil(gw));
        for py in 0..gh {
            for px in 0..gw {
                let (top, left) = (py * th, px * tw);
                if top >= out_h || left >= out_w {
                    continue;
                }
                let tile = Region::new(top, left, th.min(out_h - top), tw.min(out_w - left));
                let g2 = k3.geo.field(tile).unwrap();
                let g1 = k2.geo.field(g2).unwrap_or(Region::new(0, 0, 1, 1));
                let g0 = k1.geo.field(g1).unwrap_or(Region::new(0, 0, 1, 1));
                let mut t1 = vec![0i8; g1.height * g1.width * c1];
                let mut t2 = vec![0i8; g2.height * g2.width * c1];
                let what = format!("patch ({py}, {px}) of {gh}x{gw}, tile {tile:?}");
                step(
                    In::new(&x, &xi).with_region(g0),
                    &f1,
                    Out::new(&mut t1, &y1i).with_region(g1),
                    1,
                )
                .expect(&what);
                step(
                    In::new(&t1, &y1i).with_region(g1),
                    &f2,
                    Out::new(&mut t2, &y2i).with_region(g2),
                    2,
                )
                .expect(&what);
                step(
                    In::new(&t2, &y2i).with_region(g2),
                    &[],
                    Out::new(&mut split, &y3i).with_region(tile),
                    3,
                )
                .expect(&what);
            }
        }
        assert_eq!(split, whole, "round {rounds}: grid {gh}x{gw}");
    }
    assert!(uneven > 30, "{uneven} grids did not divide the height");
}

/// Runs `kernel` on an op with input `x`, weights `w`, no bias and the output `y`.
fn weighted<'a>(
    x: In<'a>,
    w: In<'a>,
    y: Out<'a>,
    kernel: impl FnOnce(OpView<'_, 'a>) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    run_op(&[Some(x), Some(w), None], &mut [y], &mut [], kernel)
}

#[test]
fn regions_are_refused_where_kernels_do_not_run_on_them() {
    let x = [1i8; 8];
    let xi = info::<i8>(&[1, 2, 2, 2], &[0.5], &[0]);
    let wi = info::<i8>(&[2, 2], &[0.5], &[0]);
    let yi = info::<i8>(&[1, 2], &[0.5], &[0]);
    let w = [1i8; 4];
    let mut y = [0i8; 2];
    let whole = Region::new(0, 0, 2, 2);
    // FULLY_CONNECTED is not a stage kind: a region on its input is refused.
    let fc_x = info::<i8>(&[2, 2], &[0.5], &[0]);
    let e = weighted(
        In::new(&x[..4], &fc_x).with_region(whole),
        In::new(&w, &wi),
        Out::new(&mut y, &yi),
        |op| Reference.fully_connected(op, &FullyConnectedOptions::default()),
    );
    assert_eq!(e, Err(KernelError::Region { tensor: "input 0" }));
    // The in-place variants refuse regions.
    let mut buf = [0i8; 8];
    let e = run(
        &[Some(In::in_place(0, &xi))],
        Out::new(&mut buf, &xi).with_region(whole),
        |op| Reference.relu_in_place(op, &NoOptions {}),
    );
    assert_eq!(e, Err(KernelError::Region { tensor: "output 0" }));
    // A conv's filter does not take a region.
    let cw = [1i8; 8];
    let cwi = info::<i8>(&[1, 2, 2, 2], &[0.5], &[0]);
    let cyi = info::<i8>(&[1, 1, 1, 1], &[0.5], &[0]);
    let mut cy = [0i8; 1];
    let o = Conv2dOptions {
        padding: Padding::Valid,
        pads: Dims::EMPTY,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        activation: Activation::None,
    };
    let e = weighted(
        In::new(&x, &xi),
        In::new(&cw, &cwi).with_region(whole),
        Out::new(&mut cy, &cyi),
        |op| Reference.conv_2d(op, &o),
    );
    assert_eq!(e, Err(KernelError::Region { tensor: "input 1" }));
    // A 2x2 VALID conv's one output reads all 4 pixels: a 1-row input region lacks some.
    let top_row = Region::new(0, 0, 1, 2);
    let e = weighted(
        In::new(&x[..4], &xi).with_region(top_row),
        In::new(&cw, &cwi),
        Out::new(&mut cy, &cyi),
        |op| Reference.conv_2d(op, &o),
    );
    assert!(matches!(e, Err(KernelError::Shape { .. })), "{e:?}");
    // Regions outside the tensor, of a length of neither layout, or over two batches.
    for (len, region, shape) in [
        (8, Region::new(1, 1, 2, 1), [1, 2, 2, 2]),
        (8, Region::new(0, 0, 0, 2), [1, 2, 2, 2]),
        (6, Region::new(0, 0, 1, 2), [1, 2, 2, 2]),
        (16, Region::new(0, 0, 2, 2), [2, 2, 2, 2]),
    ] {
        let data = vec![0i8; len];
        let di = info::<i8>(&shape, &[0.5], &[0]);
        let mut out = vec![0i8; len];
        let e = run(
            &[Some(In::new(&data, &di).with_region(region))],
            Out::new(&mut out, &di),
            |op| super::activation::relu(op, false),
        );
        assert!(
            matches!(e, Err(KernelError::Shape { .. })),
            "{region:?} {shape:?}: {e:?}"
        );
    }
}

#[test]
fn the_reference_set_runs_patch_planned_models() {
    fn patches<K: planner_rt::kernel::Patches>(_: &K) {}
    patches(&Reference);
}

#[test]
fn pad_of_every_rank_equals_a_brute_force_copy() {
    let mut r = Rng::new(33);
    for round in 0..200 {
        let rank = 1 + round % 6;
        let shape: Vec<usize> = (0..rank).map(|_| r.range(1, 4) as usize).collect();
        let before: Vec<usize> = (0..rank).map(|_| r.range(0, 2) as usize).collect();
        let after: Vec<usize> = (0..rank).map(|_| r.range(0, 2) as usize).collect();
        let out: Vec<usize> = (0..rank).map(|d| shape[d] + before[d] + after[d]).collect();
        let x = r.i8s(shape.iter().product());
        let zero = r.range(-128, 127);
        let xi = info::<i8>(&shape, &[0.1], &[zero]);
        let yi = info::<i8>(&out, &[0.1], &[zero]);
        let o = PadOptions {
            before: Dims::new(&before.iter().map(|&b| b as i32).collect::<Vec<_>>()).unwrap(),
            after: Dims::new(&after.iter().map(|&b| b as i32).collect::<Vec<_>>()).unwrap(),
        };
        let mut y = vec![0i8; yi.elements];
        run(&[Some(In::new(&x, &xi))], Out::new(&mut y, &yi), |op| {
            Reference.pad(op, &o)
        })
        .unwrap();
        let mut expected = vec![zero as i8; yi.elements];
        for (i, v) in x.iter().enumerate() {
            // Input element i's multi-index, moved by the pads, in the output's order.
            let (mut rest, mut at, mut stride) = (i, 0, 1);
            for d in (0..rank).rev() {
                at += (rest % shape[d] + before[d]) * stride;
                rest /= shape[d];
                stride *= out[d];
            }
            expected[at] = *v;
        }
        assert_eq!(
            y, expected,
            "rank {rank}, {shape:?} + {before:?} / {after:?}"
        );
    }
}

/// Runs `kernel` on the int16 `x` whole and on a dense input region (the receptive field
/// of a random output region), and checks the output region against the whole output
/// cropped.
fn check_dense_i16(
    r: &mut Rng,
    x: &[i16],
    xi: &TensorInfo<i16>,
    yi: &TensorInfo<i16>,
    geo: Geo,
    kernel: Kernel<'_>,
) {
    let [_, out_h, out_w, c] = dims(yi);
    let mut whole = vec![0i16; yi.shape.iter().product()];
    run(&[Some(In::new(x, xi))], Out::new(&mut whole, yi), kernel).unwrap();
    let g = random_region(r, out_h, out_w);
    let field = geo.field(g).unwrap_or(Region::new(0, 0, 1, 1));
    let dense = crop(x, dims(xi), field);
    let mut got = vec![0i16; g.height * g.width * c];
    run(
        &[Some(In::new(&dense, xi).with_region(field))],
        Out::new(&mut got, yi).with_region(g),
        kernel,
    )
    .unwrap_or_else(|e| panic!("out {g:?}, in {field:?}: {e:?}"));
    assert_eq!(got, crop(&whole, dims(yi), g), "out {g:?}, in {field:?}");
}

/// int16 pools and PAD, which a patch stage may hold, on dense regions.
#[test]
fn int16_pools_and_pad_on_regions_equal_the_whole_output_cropped() {
    let mut r = Rng::new(31);
    let mut rounds = 0;
    while rounds < 200 {
        let Some(((h, w, c), k)) = random_pool(&mut r, ((1, 9), 3), &[1, 2, 3]) else {
            continue;
        };
        rounds += 1;
        let x: Vec<i16> = (0..h * w * c)
            .map(|_| r.range(-32768, 32767) as i16)
            .collect();
        let xi = info::<i16>(&[1, h, w, c], &[0.001], &[0]);
        let yi = info::<i16>(&[1, k.out.0, k.out.1, c], &[0.001], &[0]);
        let activation = ACTIVATIONS[r.range(0, 3) as usize];
        let o = pool_options(k.padding, k.geo.filter, k.geo.stride, activation);
        let average = rounds % 2 == 0;
        let kernel = |op: OpView<'_, '_>| match average {
            true => Reference.average_pool_2d(op, &o),
            false => Reference.max_pool_2d(op, &o),
        };
        check_dense_i16(&mut r, &x, &xi, &yi, k.geo, &kernel);
    }
    for _ in 0..100 {
        let (h, w, c) = r.hwc((1, 9), 3);
        let (o, out, geo) = random_pad(&mut r, (h, w, c), false);
        let x: Vec<i16> = (0..h * w * c)
            .map(|_| r.range(-32768, 32767) as i16)
            .collect();
        let xi = info::<i16>(&[1, h, w, c], &[0.001], &[0]);
        let yi = info::<i16>(&out, &[0.001], &[0]);
        let kernel = |op: OpView<'_, '_>| Reference.pad(op, &o);
        check_dense_i16(&mut r, &x, &xi, &yi, geo, &kernel);
    }
}
