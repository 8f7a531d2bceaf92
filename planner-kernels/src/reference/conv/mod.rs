//! Convolutions and matrix products: `CONV_2D` and `DEPTHWISE_CONV_2D` (int8 here, float32
//! in `float`), `TRANSPOSE_CONV` (`transpose`), `FULLY_CONNECTED` (`fc`) and `BATCH_MATMUL`
//! (`matmul`).
//!
//! `CONV_2D` and `DEPTHWISE_CONV_2D`, int8 with int32 bias, per-channel or per-tensor
//! filter quantisation, NHWC; the 16x8 ones (int16 activations) in `int16`.

pub(crate) mod fc;
pub(crate) mod fc_shape;
pub(crate) mod float;
pub(crate) mod int16;
pub(crate) mod matmul;
pub(crate) mod transpose;

use core::ops::Range;

use planner_rt::Quant;
use planner_rt::kernel::{Data, In, OpView};
use planner_rt::options::{Conv2dOptions, DepthwiseConv2dOptions};

use crate::reference::common::region::Plane;
use crate::reference::common::window::{Spatial, Window, bias, channel_multiplier};
use crate::reference::{
    KernelError,
    common::{activation_range, dims4, input_i8, output, params},
};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier};

/// Requantises an accumulator and clamps it.
fn finish(acc: i32, m: QuantizedMultiplier, zero: i32, lo: i32, hi: i32) -> i8 {
    multiply_by_quantized_multiplier(acc, m)
        .saturating_add(zero)
        .clamp(lo, hi) as i8
}

/// `CONV_2D`: input `[n, h, w, c_in]`, filter `[c_out, fh, fw, c_in / groups]`, bias
/// `[c_out]`, output `[n, oh, ow, c_out]`. Computes the output's region (the whole output
/// when it has none) from the input's region, which must hold every pixel inside the
/// image those outputs read.
pub(crate) fn conv_2d(op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    if int16::int16_input(&op) {
        return int16::conv_2d(op, o);
    }
    crate::reference::common::by_output(op, o, crate::reference::conv::float::conv_2d, conv_2d_i8)
}

/// The int8 `CONV_2D`.
fn conv_2d_i8(mut op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let (out_shape, out_quant, out_region) = (out.shape, out.quant, out.region);
    let ops = Operands::new(&op, &xi, out_shape, out_quant, |[out_c, ..]| out_c)?;
    let (w, wq, b) = (ops.w, ops.wq, ops.bias);
    let ((in_scale, in_zero), (out_scale, out_zero)) = (ops.input, ops.output);
    let ([n, in_h, in_w, in_c], [out_c, f_h, f_w, f_c]) = (ops.x, ops.f);
    let [on, out_h, out_w, oc] = ops.y;
    let y = output(&mut op)?
        .i8()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    if on != n
        || oc != out_c
        || f_c == 0
        || in_c == 0
        || in_c % f_c != 0
        || out_c % (in_c / f_c) != 0
    {
        return Err(KernelError::Shape {
            what: "conv channels do not fit",
        });
    }
    if w.len() != out_c * f_h * f_w * f_c {
        return Err(KernelError::Shape {
            what: "a conv tensor's length differs from its shape",
        });
    }
    let xp = Plane::new(xi.shape, xi.region, x.len())?;
    let yp = Plane::new(out_shape, out_region, y.len())?;
    let win = Spatial::from(o).window((in_h, in_w), (f_h, f_w), (out_h, out_w))?;
    win.read_by(&xp, &yp, (f_h, f_w))?;
    let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
    let per_group = out_c / (in_c / f_c);
    let short = KernelError::Shape {
        what: "a conv tensor's length differs from its shape",
    };
    for c in 0..out_c {
        let m = channel_multiplier(in_scale, &wq, out_scale, c);
        let first_in = (c / per_group) * f_c;
        let filter = &w[c * f_h * f_w * f_c..(c + 1) * f_h * f_w * f_c];
        for b_i in 0..n {
            for oy in yp.rows() {
                for ox in yp.cols() {
                    let mut acc: i32 = 0;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            let Some((iy, ix)) = win.tap(oy, ox, fy, fx) else {
                                continue;
                            };
                            let px = xp.at(b_i, iy, ix).wrapping_add(first_in);
                            let xs = x.get(px..px.wrapping_add(f_c)).ok_or(short)?;
                            let taps = &filter[(fy * f_w + fx) * f_c..][..f_c];
                            for (xv, wv) in xs.iter().zip(taps) {
                                acc = acc.wrapping_add((i32::from(*xv) - in_zero) * i32::from(*wv));
                            }
                        }
                    }
                    if let Some(b) = b {
                        acc = acc.wrapping_add(b[c]);
                    }
                    let v = finish(acc, m, out_zero, lo, hi);
                    *y.get_mut(yp.at(b_i, oy, ox).wrapping_add(c)).ok_or(short)? = v;
                }
            }
        }
    }
    Ok(())
}

/// What both int8 convolutions read first, in this order: the filter (input 1) and its
/// quantisation, the input's (`xi`) and the output's scale and zero point, the NHWC
/// dimensions of input, filter and output, and the bias (input 2) of the output channels
/// `out_c` picks from the filter's dimensions.
pub(crate) struct Operands<'a> {
    pub(crate) w: &'a [i8],
    pub(crate) wq: Quant,
    pub(crate) bias: Option<&'a [i32]>,
    pub(crate) input: (f32, i32),
    pub(crate) output: (f32, i32),
    pub(crate) x: [usize; 4],
    pub(crate) f: [usize; 4],
    pub(crate) y: [usize; 4],
}

impl<'a> Operands<'a> {
    pub(crate) fn new(
        op: &OpView<'_, 'a>,
        xi: &In<'a>,
        out_shape: &[usize],
        out_quant: Option<Quant>,
        out_c: fn([usize; 4]) -> usize,
    ) -> Result<Self, KernelError> {
        let (w, wi) = input_i8(op, 1, "input 1 (filter)")?;
        let input = params(xi.quant, "input 0")?;
        let wq = wi.quant.ok_or(KernelError::Quantization {
            tensor: "input 1 (filter)",
        })?;
        let shape = |s: &[usize]| {
            dims4(s).ok_or(KernelError::Shape {
                what: "rank above 4",
            })
        };
        let (x, f) = (shape(xi.shape)?, shape(wi.shape)?);
        let bias = bias(op, out_c(f))?;
        let output = params(out_quant, "output 0")?;
        let y = shape(out_shape)?;
        Ok(Operands {
            w,
            wq,
            bias,
            input,
            output,
            x,
            f,
            y,
        })
    }
}

/// A `DEPTHWISE_CONV_2D` op checked and ready: its geometry, filter, bias and output
/// quantisation. [`depthwise_conv_2d`] and [`depthwise_conv_2d_in_place`] both run
/// [`Depthwise::channel`], so the arithmetic exists once.
pub(crate) struct Depthwise<'a> {
    pub(crate) n: usize,
    pub(crate) in_c: usize,
    pub(crate) out_h: usize,
    pub(crate) out_w: usize,
    pub(crate) out_c: usize,
    pub(crate) f_w: usize,
    pub(crate) f_h: usize,
    pub(crate) multiplier: usize,
    pub(crate) win: Window,
    pub(crate) w: &'a [i8],
    pub(crate) wq: Quant,
    pub(crate) bias: Option<&'a [i32]>,
    pub(crate) in_scale: f32,
    pub(crate) in_zero: i32,
    pub(crate) out_scale: f32,
    pub(crate) out_zero: i32,
    pub(crate) lo: i32,
    pub(crate) hi: i32,
}

impl<'a> Depthwise<'a> {
    /// Checks the op's shapes, filter, bias and options against each other; `y_len` is the
    /// length of the output's elements.
    pub(crate) fn new(
        op: &OpView<'_, 'a>,
        o: &DepthwiseConv2dOptions,
        out_shape: &[usize],
        out_quant: Option<Quant>,
    ) -> Result<Self, KernelError> {
        let xi = op
            .input(0)
            .ok_or(KernelError::Missing { tensor: "input 0" })?;
        let ops = Operands::new(op, &xi, out_shape, out_quant, |[.., out_c]| out_c)?;
        let (w, wq, bias) = (ops.w, ops.wq, ops.bias);
        let ((in_scale, in_zero), (out_scale, out_zero)) = (ops.input, ops.output);
        let ([n, in_h, in_w, in_c], [_, f_h, f_w, out_c]) = (ops.x, ops.f);
        let [on, out_h, out_w, oc] = ops.y;
        if on != n || oc != out_c || in_c == 0 || out_c % in_c != 0 {
            return Err(KernelError::Shape {
                what: "depthwise channels do not fit",
            });
        }
        if w.len() != f_h * f_w * out_c {
            return Err(KernelError::Shape {
                what: "a depthwise tensor's length differs from its shape",
            });
        }
        let win = Spatial::from(o).window((in_h, in_w), (f_h, f_w), (out_h, out_w))?;
        let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
        Ok(Depthwise {
            n,
            in_c,
            out_h,
            out_w,
            out_c,
            f_w,
            f_h,
            multiplier: out_c / in_c,
            win,
            w,
            wq,
            bias,
            in_scale,
            in_zero,
            out_scale,
            out_zero,
            lo,
            hi,
        })
    }

    /// Input elements: `n · h · w · c_in`.
    pub(crate) fn input_len(&self) -> usize {
        self.n * self.win.in_h * self.win.in_w * self.in_c
    }

    /// Output elements: `n · oh · ow · c_out`.
    pub(crate) fn output_len(&self) -> usize {
        self.n * self.out_h * self.out_w * self.out_c
    }

    /// Output channel `c` of batch `b` at output rows `rows` and columns `cols`: `x(iy,
    /// ix)` reads the input channel `c / multiplier` of batch `b` at a pixel inside the
    /// image, `put(oy, ox, v)` writes an output pixel.
    fn channel(
        &self,
        c: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        x: impl Fn(usize, usize) -> i8,
        mut put: impl FnMut(usize, usize, i8),
    ) {
        let m = channel_multiplier(self.in_scale, &self.wq, self.out_scale, c);
        for oy in rows {
            for ox in cols.clone() {
                let mut acc: i32 = 0;
                for fy in 0..self.f_h {
                    for fx in 0..self.f_w {
                        if let Some((iy, ix)) = self.win.tap(oy, ox, fy, fx) {
                            let wv = self.w[(fy * self.f_w + fx) * self.out_c + c];
                            acc = acc.wrapping_add(
                                (i32::from(x(iy, ix)) - self.in_zero) * i32::from(wv),
                            );
                        }
                    }
                }
                if let Some(b) = self.bias {
                    acc = acc.wrapping_add(b[c]);
                }
                put(oy, ox, finish(acc, m, self.out_zero, self.lo, self.hi));
            }
        }
    }
}

/// `DEPTHWISE_CONV_2D`: input `[n, h, w, c_in]`, filter `[1, fh, fw, c_out]` with `c_out =
/// c_in · multiplier`, bias `[c_out]`, output `[n, oh, ow, c_out]`. Computes the output's
/// region (the whole output when it has none) from the input's region, which must hold
/// every pixel inside the image those outputs read.
pub(crate) fn depthwise_conv_2d(
    op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    if int16::int16_input(&op) {
        return int16::depthwise_conv_2d(op, o);
    }
    crate::reference::common::by_output(
        op,
        o,
        crate::reference::conv::float::depthwise_conv_2d,
        depthwise_i8,
    )
}

/// The int8 `DEPTHWISE_CONV_2D`.
fn depthwise_i8(mut op: OpView<'_, '_>, o: &DepthwiseConv2dOptions) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let (out_shape, out_quant, out_region) = (out.shape, out.quant, out.region);
    let d = Depthwise::new(&op, o, out_shape, out_quant)?;
    let y = output(&mut op)?
        .i8()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    let xp = Plane::new(xi.shape, xi.region, x.len())?;
    let yp = Plane::new(out_shape, out_region, y.len())?;
    d.win.read_by(&xp, &yp, (d.f_h, d.f_w))?;
    let out_c = d.out_c;
    for c in 0..out_c {
        let ic = c / d.multiplier;
        for b in 0..d.n {
            // The planes hold every pixel the channel reads and writes (`read_by`, and
            // `Plane::new` for the output region), so `get` finds them all.
            d.channel(
                c,
                yp.rows(),
                yp.cols(),
                |iy, ix| {
                    x.get(xp.at(b, iy, ix).wrapping_add(ic))
                        .copied()
                        .unwrap_or(0)
                },
                |oy, ox, v| {
                    if let Some(o) = y.get_mut(yp.at(b, oy, ox).wrapping_add(c)) {
                        *o = v;
                    }
                },
            );
        }
    }
    Ok(())
}

/// `DEPTHWISE_CONV_2D` in place: the output takes over the input's bytes (`Data::InPlace`
/// of output 0, whose buffer spans the input), with depth multiplier 1, as many output
/// channels as input channels and no more output pixels than input pixels. Batch by batch
/// and channel by channel, input channel `c` is copied into the temporary (the op's last
/// scratch tensor, at least `h · w` int8 elements), and output channel `c` is computed from
/// it and written over channel `c`'s positions: output pixel `p` of channel `c` is at `p ·
/// C + c`, which held only channel `c`'s input (already in the temporary) or an earlier
/// batch's, so no input still needed is overwritten.
pub(crate) fn depthwise_conv_2d_in_place(
    op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let xi = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let at = in_place_output(&xi, "input 0")?;
    let out = op
        .outputs
        .get(at)
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    let (out_shape, out_quant) = (out.shape, out.quant);
    let d = Depthwise::new(&op, o, out_shape, out_quant)?;
    if d.multiplier != 1 {
        return Err(KernelError::Options {
            what: "in-place DEPTHWISE_CONV_2D with a depth multiplier other than 1",
        });
    }
    let (in_h, in_w, c_n) = (d.win.in_h, d.win.in_w, d.in_c);
    let (in_pixels, out_pixels) = (in_h * in_w, d.out_h * d.out_w);
    if out_pixels > in_pixels {
        return Err(KernelError::Shape {
            what: "in-place DEPTHWISE_CONV_2D with more output pixels than input pixels",
        });
    }
    let temp = op
        .scratch
        .last_mut()
        .ok_or(KernelError::Missing {
            tensor: "the in-place temporary (last scratch tensor)",
        })?
        .i8()
        .ok_or(KernelError::Type {
            tensor: "the in-place temporary (last scratch tensor)",
        })?;
    if temp.len() < in_pixels {
        return Err(KernelError::Shape {
            what: "the in-place temporary holds fewer than one input channel (h · w elements)",
        });
    }
    let temp = &mut temp[..in_pixels];
    let y = op.outputs[at]
        .i8()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    if y.len() != d.input_len().max(d.output_len()) {
        return Err(KernelError::Shape {
            what: "the in-place buffer does not span the input and the output",
        });
    }
    for b in 0..d.n {
        for c in 0..c_n {
            let image = &y[b * in_pixels * c_n..];
            for (p, t) in temp.iter_mut().enumerate() {
                *t = image[p * c_n + c];
            }
            let out_image = &mut y[b * out_pixels * c_n..];
            d.channel(
                c,
                0..d.out_h,
                0..d.out_w,
                |iy, ix| temp[iy * in_w + ix],
                |oy, ox, v| out_image[(oy * d.out_w + ox) * c_n + c] = v,
            );
        }
    }
    Ok(())
}

/// The output an in-place input's bytes are in: `n` of `Data::InPlace(n)`.
pub(crate) fn in_place_output(x: &In<'_>, tensor: &'static str) -> Result<usize, KernelError> {
    match x.data {
        Data::InPlace(n) => Ok(n),
        _ => Err(KernelError::Type { tensor }),
    }
}
