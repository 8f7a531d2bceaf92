//! float32 `CONV_2D` and `DEPTHWISE_CONV_2D` (NHWC; SAME, VALID or explicit padding, strides,
//! dilations, optional float bias), with TFLM's float reference arithmetic: per output
//! element, `Σ x · w` in `f32` from 0, filter row, column and (for `CONV_2D`) input channel
//! ascending, taps outside the image skipped, then the bias added and the fused activation
//! applied. The int8 kernels call in here when output 0 holds `f32` elements.

use planner_rt::kernel::OpView;
use planner_rt::options::{Conv2dOptions, DepthwiseConv2dOptions, Dims, Padding};

use super::b2_float::{clamp, float_activation_range};
use super::conv::pad_before;
use super::{KernelError, output};

/// Positive `i32` option as `usize`.
fn positive(v: i32, what: &'static str) -> Result<usize, KernelError> {
    usize::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or(KernelError::Options { what })
}

/// Input `i` as `f32` elements and shape.
fn input_f32<'a>(
    op: &OpView<'_, 'a>,
    i: usize,
    tensor: &'static str,
) -> Result<(&'a [f32], &'static [usize]), KernelError> {
    let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
    Ok((x.f32().ok_or(KernelError::Type { tensor })?, x.shape))
}

/// The geometry of one float convolution.
struct Conv {
    n: usize,
    in_h: usize,
    in_w: usize,
    in_c: usize,
    out_h: usize,
    out_w: usize,
    out_c: usize,
    stride: (usize, usize),
    dilation: (usize, usize),
    pad: (usize, usize),
}

impl Conv {
    #[allow(clippy::too_many_arguments)]
    fn new(
        x: &[usize],
        filter: (usize, usize),
        out: &[usize],
        padding: Padding,
        pads: &Dims,
        stride: (i32, i32),
        dilation: (i32, i32),
    ) -> Result<Conv, KernelError> {
        let nhwc = |s: &[usize]| match *s {
            [a, b, c, d] => Ok([a, b, c, d]),
            _ => Err(KernelError::Shape {
                what: "a convolution tensor is not 4-dimensional NHWC",
            }),
        };
        let [n, in_h, in_w, in_c] = nhwc(x)?;
        let [on, out_h, out_w, out_c] = nhwc(out)?;
        if on != n {
            return Err(KernelError::Shape {
                what: "input and output batches differ",
            });
        }
        let stride = (
            positive(stride.0, "stride_h below 1")?,
            positive(stride.1, "stride_w below 1")?,
        );
        let dilation = (
            positive(dilation.0, "dilation_h below 1")?,
            positive(dilation.1, "dilation_w below 1")?,
        );
        let (f_h, f_w) = filter;
        let pad = (
            pad_before(padding, pads, 0, stride.0, dilation.0, in_h, f_h, out_h)?,
            pad_before(padding, pads, 1, stride.1, dilation.1, in_w, f_w, out_w)?,
        );
        Ok(Conv {
            n,
            in_h,
            in_w,
            in_c,
            out_h,
            out_w,
            out_c,
            stride,
            dilation,
            pad,
        })
    }

    /// The input pixel filter tap `(fy, fx)` of output `(oy, ox)` reads, when inside.
    fn tap(&self, oy: usize, ox: usize, fy: usize, fx: usize) -> Option<(usize, usize)> {
        let y = (oy * self.stride.0 + fy * self.dilation.0).checked_sub(self.pad.0)?;
        let x = (ox * self.stride.1 + fx * self.dilation.1).checked_sub(self.pad.1)?;
        (y < self.in_h && x < self.in_w).then_some((y, x))
    }
}

/// Input 2 as a float bias of `n` elements, when present.
fn bias<'a>(op: &OpView<'_, 'a>, n: usize) -> Result<Option<&'a [f32]>, KernelError> {
    let Some(b) = op.input(2) else {
        return Ok(None);
    };
    let b = b.f32().ok_or(KernelError::Type {
        tensor: "input 2 (bias; a float convolution takes a float bias)",
    })?;
    if b.len() != n {
        return Err(KernelError::Shape {
            what: "bias length differs from the output channels",
        });
    }
    Ok(Some(b))
}

/// `CONV_2D`, float: filter `[c_out, fh, fw, c_in / groups]`.
pub(crate) fn conv_2d(mut op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    let (x, x_shape) = input_f32(&op, 0, "input 0 (float output, so float input)")?;
    let (w, w_shape) = input_f32(&op, 1, "input 1 (filter; float output, so float filter)")?;
    let [w_out, f_h, f_w, f_in] = match *w_shape {
        [a, b, c, d] => [a, b, c, d],
        _ => {
            return Err(KernelError::Shape {
                what: "the filter is not [out, h, w, in]",
            });
        }
    };
    let (lo, hi) = float_activation_range(o.activation)?;
    let bias = bias(&op, w_out)?;
    let out = output(&mut op)?;
    let g = Conv::new(
        x_shape,
        (f_h, f_w),
        out.shape,
        o.padding,
        &o.pads,
        (o.stride_h, o.stride_w),
        (o.dilation_h, o.dilation_w),
    )?;
    let y = out.f32().ok_or(KernelError::Type { tensor: "output 0" })?;
    let groups = g.in_c.checked_div(f_in).unwrap_or(0);
    if groups == 0 || g.in_c % f_in != 0 || w_out != g.out_c || g.out_c % groups != 0 {
        return Err(KernelError::Shape {
            what: "filter channels do not divide the input's into groups of the output's",
        });
    }
    let per_group = g.out_c / groups;
    if x.len() != g.n * g.in_h * g.in_w * g.in_c
        || w.len() != w_out * f_h * f_w * f_in
        || y.len() != g.n * g.out_h * g.out_w * g.out_c
    {
        return Err(KernelError::Shape {
            what: "a convolution tensor's length differs from its shape",
        });
    }
    let mut k = 0;
    for b in 0..g.n {
        for oy in 0..g.out_h {
            for ox in 0..g.out_w {
                for oc in 0..g.out_c {
                    let first = (oc / per_group) * f_in;
                    let mut total = 0.0f32;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            let Some((iy, ix)) = g.tap(oy, ox, fy, fx) else {
                                continue;
                            };
                            let xs = &x[((b * g.in_h + iy) * g.in_w + ix) * g.in_c + first..];
                            let ws = &w[((oc * f_h + fy) * f_w + fx) * f_in..];
                            for (xv, wv) in xs[..f_in].iter().zip(&ws[..f_in]) {
                                total += xv * wv;
                            }
                        }
                    }
                    let bias = bias.map_or(0.0, |b| b[oc]);
                    y[k] = clamp(total + bias, lo, hi);
                    k += 1;
                }
            }
        }
    }
    Ok(())
}

/// `DEPTHWISE_CONV_2D`, float: filter `[1, fh, fw, c_out]`, `c_out = c_in · multiplier`.
pub(crate) fn depthwise_conv_2d(
    mut op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let (x, x_shape) = input_f32(&op, 0, "input 0 (float output, so float input)")?;
    let (w, w_shape) = input_f32(&op, 1, "input 1 (filter; float output, so float filter)")?;
    let [1, f_h, f_w, w_out] = *w_shape else {
        return Err(KernelError::Shape {
            what: "the depthwise filter is not [1, h, w, out]",
        });
    };
    let (lo, hi) = float_activation_range(o.activation)?;
    let bias = bias(&op, w_out)?;
    let out = output(&mut op)?;
    let g = Conv::new(
        x_shape,
        (f_h, f_w),
        out.shape,
        o.padding,
        &o.pads,
        (o.stride_h, o.stride_w),
        (o.dilation_h, o.dilation_w),
    )?;
    let y = out.f32().ok_or(KernelError::Type { tensor: "output 0" })?;
    if g.in_c == 0 || w_out != g.out_c || g.out_c % g.in_c != 0 {
        return Err(KernelError::Shape {
            what: "the output channels are not a multiple of the input's",
        });
    }
    let multiplier = g.out_c / g.in_c;
    if o.depth_multiplier != 0 && usize::try_from(o.depth_multiplier).ok() != Some(multiplier) {
        return Err(KernelError::Shape {
            what: "depth_multiplier differs from output channels / input channels",
        });
    }
    if x.len() != g.n * g.in_h * g.in_w * g.in_c
        || w.len() != f_h * f_w * w_out
        || y.len() != g.n * g.out_h * g.out_w * g.out_c
    {
        return Err(KernelError::Shape {
            what: "a depthwise tensor's length differs from its shape",
        });
    }
    for b in 0..g.n {
        for oy in 0..g.out_h {
            for ox in 0..g.out_w {
                for oc in 0..g.out_c {
                    let ic = oc / multiplier;
                    let mut total = 0.0f32;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            let Some((iy, ix)) = g.tap(oy, ox, fy, fx) else {
                                continue;
                            };
                            total += x[((b * g.in_h + iy) * g.in_w + ix) * g.in_c + ic]
                                * w[(fy * f_w + fx) * w_out + oc];
                        }
                    }
                    let bias = bias.map_or(0.0, |b| b[oc]);
                    y[((b * g.out_h + oy) * g.out_w + ox) * g.out_c + oc] =
                        clamp(total + bias, lo, hi);
                }
            }
        }
    }
    Ok(())
}
