//! `CONV_2D` and `DEPTHWISE_CONV_2D`, int8 with int32 bias, per-channel or per-tensor
//! filter quantisation, NHWC.

use planner::rt::Quant;
use planner::rt::kernel::OpView;
use planner::rt::options::{Conv2dOptions, DepthwiseConv2dOptions, Padding};

use super::{KernelError, activation_range, dims4, input_i8, output, params};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// The multiplier of output channel `c`: `input_scale · filter_scale[c] / output_scale`,
/// in `f64` from the `f32` scales (one filter scale for per-tensor quantisation).
pub(crate) fn channel_multiplier(
    input_scale: f32,
    filter: &Quant,
    output_scale: f32,
    c: usize,
) -> QuantizedMultiplier {
    let filter_scale = filter.params(c).map_or(0.0, |(s, _)| s);
    quantize_multiplier(f64::from(input_scale) * f64::from(filter_scale) / f64::from(output_scale))
}

/// Padding before the first element along one axis, and a check that the output size is
/// the one the padding gives: `ceil(in / stride)` for SAME, `ceil((in - extent + 1) /
/// stride)` for VALID, where `extent = (filter - 1) · dilation + 1`.
pub(crate) fn pad_before(
    padding: Padding,
    stride: usize,
    dilation: usize,
    input: usize,
    filter: usize,
    out: usize,
) -> Result<usize, KernelError> {
    let extent = filter.saturating_sub(1) * dilation + 1;
    let expected = match padding {
        Padding::Same => input.div_ceil(stride),
        Padding::Valid => (input + stride).saturating_sub(extent) / stride,
        Padding::Explicit => {
            return Err(KernelError::Shape {
                what: "explicit padding (a folded PAD) is not supported by this kernel yet",
            });
        }
    };
    if expected != out || out == 0 {
        return Err(KernelError::Shape {
            what: "output size differs from the one the padding and stride give",
        });
    }
    let total = ((out - 1) * stride + extent).saturating_sub(input);
    Ok(total / 2)
}

/// The window geometry shared by convolutions: input size, strides, dilations and
/// padding.
pub(crate) struct Window {
    pub(crate) in_h: usize,
    pub(crate) in_w: usize,
    pub(crate) stride: (usize, usize),
    pub(crate) dilation: (usize, usize),
    pub(crate) pad: (usize, usize),
}

impl Window {
    /// The input row and column of filter tap `(fy, fx)` for output `(oy, ox)`, when inside.
    fn tap(&self, oy: usize, ox: usize, fy: usize, fx: usize) -> Option<(usize, usize)> {
        let y = (oy * self.stride.0 + fy * self.dilation.0).checked_sub(self.pad.0)?;
        let x = (ox * self.stride.1 + fx * self.dilation.1).checked_sub(self.pad.1)?;
        (y < self.in_h && x < self.in_w).then_some((y, x))
    }
}

/// Positive `i32` option as `usize`.
fn positive(v: i32, what: &'static str) -> Result<usize, KernelError> {
    usize::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or(KernelError::Options { what })
}

/// Input 2 as an int32 bias of `n` elements, when present.
fn bias<'a>(op: &OpView<'_, 'a>, n: usize) -> Result<Option<&'a [i32]>, KernelError> {
    let Some(b) = op.input(2) else {
        return Ok(None);
    };
    let b = b.i32().ok_or(KernelError::Type {
        tensor: "input 2 (bias)",
    })?;
    if b.len() != n {
        return Err(KernelError::Shape {
            what: "bias length differs from the output channels",
        });
    }
    Ok(Some(b))
}

/// Requantises an accumulator and clamps it.
fn finish(acc: i32, m: QuantizedMultiplier, zero: i32, lo: i32, hi: i32) -> i8 {
    multiply_by_quantized_multiplier(acc, m)
        .saturating_add(zero)
        .clamp(lo, hi) as i8
}

/// `CONV_2D`: input `[n, h, w, c_in]`, filter `[c_out, fh, fw, c_in / groups]`, bias
/// `[c_out]`, output `[n, oh, ow, c_out]`.
pub(crate) fn conv_2d(mut op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (w, wi) = input_i8(&op, 1, "input 1 (filter)")?;
    let (in_scale, in_zero) = params(xi.quant, "input 0")?;
    let wq = wi.quant.ok_or(KernelError::Quantization {
        tensor: "input 1 (filter)",
    })?;
    let shape = |s: &[usize]| {
        dims4(s).ok_or(KernelError::Shape {
            what: "rank above 4",
        })
    };
    let [n, in_h, in_w, in_c] = shape(xi.shape)?;
    let [out_c, f_h, f_w, f_c] = shape(wi.shape)?;
    let b = bias(&op, out_c)?;
    let out = output(&mut op)?;
    let (out_scale, out_zero) = params(out.quant, "output 0")?;
    let [on, out_h, out_w, oc] = shape(out.shape)?;
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
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
    if x.len() != n * in_h * in_w * in_c
        || w.len() != out_c * f_h * f_w * f_c
        || y.len() != n * out_h * out_w * out_c
    {
        return Err(KernelError::Shape {
            what: "a conv tensor's length differs from its shape",
        });
    }
    let stride = (
        positive(o.stride_h, "stride")?,
        positive(o.stride_w, "stride")?,
    );
    let dilation = (
        positive(o.dilation_h, "dilation")?,
        positive(o.dilation_w, "dilation")?,
    );
    let win = Window {
        in_h,
        in_w,
        stride,
        dilation,
        pad: (
            pad_before(o.padding, stride.0, dilation.0, in_h, f_h, out_h)?,
            pad_before(o.padding, stride.1, dilation.1, in_w, f_w, out_w)?,
        ),
    };
    let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
    let per_group = out_c / (in_c / f_c);
    for c in 0..out_c {
        let m = channel_multiplier(in_scale, &wq, out_scale, c);
        let first_in = (c / per_group) * f_c;
        let filter = &w[c * f_h * f_w * f_c..(c + 1) * f_h * f_w * f_c];
        for b_i in 0..n {
            for oy in 0..out_h {
                for ox in 0..out_w {
                    let mut acc: i32 = 0;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            let Some((iy, ix)) = win.tap(oy, ox, fy, fx) else {
                                continue;
                            };
                            let px = ((b_i * in_h + iy) * in_w + ix) * in_c + first_in;
                            let taps = &filter[(fy * f_w + fx) * f_c..][..f_c];
                            for (xv, wv) in x[px..px + f_c].iter().zip(taps) {
                                acc = acc.wrapping_add((i32::from(*xv) - in_zero) * i32::from(*wv));
                            }
                        }
                    }
                    if let Some(b) = b {
                        acc = acc.wrapping_add(b[c]);
                    }
                    y[((b_i * out_h + oy) * out_w + ox) * out_c + c] =
                        finish(acc, m, out_zero, lo, hi);
                }
            }
        }
    }
    Ok(())
}

/// `DEPTHWISE_CONV_2D`: input `[n, h, w, c_in]`, filter `[1, fh, fw, c_out]` with `c_out =
/// c_in · multiplier`, bias `[c_out]`, output `[n, oh, ow, c_out]`.
pub(crate) fn depthwise_conv_2d(
    mut op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (w, wi) = input_i8(&op, 1, "input 1 (filter)")?;
    let (in_scale, in_zero) = params(xi.quant, "input 0")?;
    let wq = wi.quant.ok_or(KernelError::Quantization {
        tensor: "input 1 (filter)",
    })?;
    let shape = |s: &[usize]| {
        dims4(s).ok_or(KernelError::Shape {
            what: "rank above 4",
        })
    };
    let [n, in_h, in_w, in_c] = shape(xi.shape)?;
    let [_, f_h, f_w, out_c] = shape(wi.shape)?;
    let b = bias(&op, out_c)?;
    let out = output(&mut op)?;
    let (out_scale, out_zero) = params(out.quant, "output 0")?;
    let [on, out_h, out_w, oc] = shape(out.shape)?;
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    if on != n || oc != out_c || in_c == 0 || out_c % in_c != 0 {
        return Err(KernelError::Shape {
            what: "depthwise channels do not fit",
        });
    }
    if x.len() != n * in_h * in_w * in_c
        || w.len() != f_h * f_w * out_c
        || y.len() != n * out_h * out_w * out_c
    {
        return Err(KernelError::Shape {
            what: "a depthwise tensor's length differs from its shape",
        });
    }
    let multiplier = out_c / in_c;
    let stride = (
        positive(o.stride_h, "stride")?,
        positive(o.stride_w, "stride")?,
    );
    let dilation = (
        positive(o.dilation_h, "dilation")?,
        positive(o.dilation_w, "dilation")?,
    );
    let win = Window {
        in_h,
        in_w,
        stride,
        dilation,
        pad: (
            pad_before(o.padding, stride.0, dilation.0, in_h, f_h, out_h)?,
            pad_before(o.padding, stride.1, dilation.1, in_w, f_w, out_w)?,
        ),
    };
    let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
    for c in 0..out_c {
        let m = channel_multiplier(in_scale, &wq, out_scale, c);
        let ic = c / multiplier;
        for b_i in 0..n {
            for oy in 0..out_h {
                for ox in 0..out_w {
                    let mut acc: i32 = 0;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            if let Some((iy, ix)) = win.tap(oy, ox, fy, fx) {
                                let xv = x[((b_i * in_h + iy) * in_w + ix) * in_c + ic];
                                let wv = w[(fy * f_w + fx) * out_c + c];
                                acc = acc.wrapping_add((i32::from(xv) - in_zero) * i32::from(wv));
                            }
                        }
                    }
                    if let Some(b) = b {
                        acc = acc.wrapping_add(b[c]);
                    }
                    y[((b_i * out_h + oy) * out_w + ox) * out_c + c] =
                        finish(acc, m, out_zero, lo, hi);
                }
            }
        }
    }
    Ok(())
}
