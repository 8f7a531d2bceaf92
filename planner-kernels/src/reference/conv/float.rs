//! float32 `CONV_2D` and `DEPTHWISE_CONV_2D` (NHWC; SAME, VALID or explicit padding, strides,
//! dilations, optional float bias), with TFLM's float reference arithmetic: per output
//! element, `Σ x · w` in `f32` from 0, filter row, column and (for `CONV_2D`) input channel
//! ascending, taps outside the image skipped, then the bias added and the fused activation
//! applied. The int8 kernels call in here when output 0 holds `f32` elements.

use planner_rt::kernel::{In, OpView};
use planner_rt::options::{Conv2dOptions, DepthwiseConv2dOptions};

use crate::reference::common::float::{clamp, float_activation_range};
use crate::reference::common::window::{Spatial, Window, bias_of};
use crate::reference::{KernelError, common::output};

/// Input `i` as `f32` elements and shape.
fn input_f32<'a>(
    op: &OpView<'_, 'a>,
    i: usize,
    tensor: &'static str,
) -> Result<(&'a [f32], &'static [usize]), KernelError> {
    let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
    Ok((x.f32().ok_or(KernelError::Type { tensor })?, x.shape))
}

/// The geometry of one float convolution: batches, input channels, output size and
/// channels, and the window (input size, strides, dilations, padding).
struct Conv {
    n: usize,
    in_c: usize,
    out_h: usize,
    out_w: usize,
    out_c: usize,
    win: Window,
}

impl Conv {
    fn new(
        x: &[usize],
        filter: (usize, usize),
        out: &[usize],
        p: &Spatial<'_>,
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
        let win = p.window((in_h, in_w), filter, (out_h, out_w))?;
        Ok(Conv {
            n,
            in_c,
            out_h,
            out_w,
            out_c,
            win,
        })
    }
}

/// A filter's extent: height, width, output channels and input channels per output
/// channel (1 for a depthwise filter).
#[derive(Clone, Copy)]
struct Filter {
    h: usize,
    w: usize,
    out: usize,
    per_out: usize,
}

/// One filter tap of one output element: output channel `oc`, the index of the input
/// pixel's first channel, and the tap's index `fy · fw + fx` in the filter's plane.
struct Tap {
    oc: usize,
    pixel: usize,
    at: usize,
}

/// A float convolution: `filter` reads the filter's extent from its shape, `check` checks
/// it against the geometry and returns what `tap` needs, `length` names the error when a
/// tensor's length is not its shape's; per output element (NHWC order) `tap` adds the
/// products of each filter tap inside the image, row then column ascending, to a sum from
/// 0, then the bias is added and the activation applied.
fn float_conv<K>(
    mut op: OpView<'_, '_>,
    p: &Spatial<'_>,
    filter: impl FnOnce(&[usize]) -> Result<Filter, KernelError>,
    check: impl FnOnce(&Conv, Filter) -> Result<K, KernelError>,
    length: &'static str,
    tap: impl Fn(&mut f32, &K, &[f32], &[f32], Tap),
) -> Result<(), KernelError> {
    let (x, x_shape) = input_f32(&op, 0, "input 0 (float output, so float input)")?;
    let (w, w_shape) = input_f32(&op, 1, "input 1 (filter; float output, so float filter)")?;
    let f = filter(w_shape)?;
    let (lo, hi) = float_activation_range(p.activation)?;
    let bias = bias_of(
        &op,
        f.out,
        In::f32,
        "input 2 (bias; a float convolution takes a float bias)",
    )?;
    let out = output(&mut op)?;
    let g = Conv::new(x_shape, (f.h, f.w), out.shape, p)?;
    let y = out.f32().ok_or(KernelError::Type { tensor: "output 0" })?;
    let k = check(&g, f)?;
    if x.len() != g.n * g.win.in_h * g.win.in_w * g.in_c
        || w.len() != f.out * f.h * f.w * f.per_out
        || y.len() != g.n * g.out_h * g.out_w * g.out_c
    {
        return Err(KernelError::Shape { what: length });
    }
    let mut i = 0;
    for b in 0..g.n {
        for oy in 0..g.out_h {
            for ox in 0..g.out_w {
                for oc in 0..g.out_c {
                    let mut total = 0.0f32;
                    for fy in 0..f.h {
                        for fx in 0..f.w {
                            if let Some((iy, ix)) = g.win.tap(oy, ox, fy, fx) {
                                let pixel = ((b * g.win.in_h + iy) * g.win.in_w + ix) * g.in_c;
                                let at = fy * f.w + fx;
                                tap(&mut total, &k, x, w, Tap { oc, pixel, at });
                            }
                        }
                    }
                    let bias = bias.map_or(0.0, |b| b[oc]);
                    y[i] = clamp(total + bias, lo, hi);
                    i += 1;
                }
            }
        }
    }
    Ok(())
}

/// `CONV_2D`, float: filter `[c_out, fh, fw, c_in / groups]`.
pub(crate) fn conv_2d(op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    let p = Spatial::from(o);
    let filter = |s: &[usize]| match *s {
        [out, h, w, per_out] => Ok(Filter { h, w, out, per_out }),
        _ => Err(KernelError::Shape {
            what: "the filter is not [out, h, w, in]",
        }),
    };
    let check = |g: &Conv, f: Filter| {
        let groups = g.in_c.checked_div(f.per_out).unwrap_or(0);
        if groups == 0
            || !g.in_c.is_multiple_of(f.per_out)
            || f.out != g.out_c
            || !g.out_c.is_multiple_of(groups)
        {
            return Err(KernelError::Shape {
                what: "filter channels do not divide the input's into groups of the output's",
            });
        }
        Ok((f.h * f.w, f.per_out, g.out_c / groups))
    };
    let length = "a convolution tensor's length differs from its shape";
    float_conv(op, &p, filter, check, length, |total, k, x, w, t| {
        let &(plane, f_in, per_group) = k;
        let xs = &x[t.pixel + (t.oc / per_group) * f_in..];
        let ws = &w[(t.oc * plane + t.at) * f_in..];
        for (xv, wv) in xs[..f_in].iter().zip(&ws[..f_in]) {
            *total += xv * wv;
        }
    })
}

/// `DEPTHWISE_CONV_2D`, float: filter `[1, fh, fw, c_out]`, `c_out = c_in · multiplier`.
pub(crate) fn depthwise_conv_2d(
    op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let p = Spatial::from(o);
    let filter = |s: &[usize]| match *s {
        [1, h, w, out] => Ok(Filter {
            h,
            w,
            out,
            per_out: 1,
        }),
        _ => Err(KernelError::Shape {
            what: "the depthwise filter is not [1, h, w, out]",
        }),
    };
    let check = |g: &Conv, f: Filter| {
        if g.in_c == 0 || f.out != g.out_c || !g.out_c.is_multiple_of(g.in_c) {
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
        Ok((f.out, multiplier))
    };
    let length = "a depthwise tensor's length differs from its shape";
    float_conv(op, &p, filter, check, length, |total, k, x, w, t| {
        let &(w_out, multiplier) = k;
        *total += x[t.pixel + t.oc / multiplier] * w[t.at * w_out + t.oc];
    })
}
