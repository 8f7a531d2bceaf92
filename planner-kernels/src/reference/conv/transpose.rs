//! `TRANSPOSE_CONV`, NHWC: int8 with per-channel (or per-tensor) filter quantisation and an
//! optional int32 bias, or float32 with an optional float bias; SAME or VALID padding, any
//! stride.
//!
//! Inputs as TFLite orders them: 0 the output shape (a constant; the output tensor's shape
//! is used), 1 the filter `[out_channels, filter_h, filter_w, in_channels]`, 2 the input,
//! 3 the bias (optional). The padding is the one a convolution from the output's size back
//! to the input's would have (TFLM's `ComputePaddingHeightWidth` over the output's height
//! and width): `max(0, (in - 1) · stride + filter - out) / 2` before, with SAME, and 0 with
//! VALID.
//!
//! Input pixel `(y, x)` adds `x · w[fy][fx]` to output pixel `(y · stride - pad + fy, x ·
//! stride - pad + fx)`. TFLM scatters each input pixel in turn; this kernel gathers, per
//! output element, the same products in the same order (input row, column, channel
//! ascending), so the float sums round alike. int8: `Σ (x - input_zero) · w` in int32, plus
//! the bias, through the channel's multiplier `input_scale · filter_scale[c] /
//! output_scale`, plus the output zero point, clamped to the fused activation's range.

use planner_rt::kernel::{Data, DataMut, In, OpView};
use planner_rt::options::{Padding, TransposeConvOptions};

use crate::multiply_by_quantized_multiplier;
use crate::reference::common::window::channel_multiplier;
use crate::reference::{
    KernelError,
    common::{activation_range, output, params},
};

/// Padding before the first element of one axis: TFLM's padding of a convolution of
/// `out` (the transposed convolution's output) to `input` elements.
fn pad_before(
    padding: Padding,
    stride: usize,
    input: usize,
    filter: usize,
    out: usize,
) -> Result<usize, KernelError> {
    let expected = match padding {
        Padding::Same => out.div_ceil(stride),
        Padding::Valid => (out + stride).saturating_sub(filter) / stride,
        Padding::Explicit => {
            return Err(KernelError::Options {
                what: "TRANSPOSE_CONV with explicit padding",
            });
        }
    };
    if expected != input {
        return Err(KernelError::Shape {
            what: "TRANSPOSE_CONV input size differs from the one the output size, padding and stride give",
        });
    }
    let total = ((input.max(1) - 1) * stride + filter).saturating_sub(out);
    Ok(total / 2)
}

/// The geometry of one op.
struct Geometry {
    batches: usize,
    in_h: usize,
    in_w: usize,
    in_c: usize,
    out_h: usize,
    out_w: usize,
    out_c: usize,
    f_h: usize,
    f_w: usize,
    stride_h: usize,
    stride_w: usize,
    pad_h: usize,
    pad_w: usize,
}

impl Geometry {
    /// Calls `f(input index, filter index)` for each product that output element
    /// `(b, oy, ox, oc)` sums, input row, column and channel ascending.
    fn taps(&self, b: usize, oy: usize, ox: usize, oc: usize, mut f: impl FnMut(usize, usize)) {
        // Output row oy takes input row iy through filter row oy + pad - iy · stride.
        for iy in 0..self.in_h {
            let Some(fy) = (oy + self.pad_h).checked_sub(iy * self.stride_h) else {
                break;
            };
            if fy >= self.f_h {
                continue;
            }
            for ix in 0..self.in_w {
                let Some(fx) = (ox + self.pad_w).checked_sub(ix * self.stride_w) else {
                    break;
                };
                if fx >= self.f_w {
                    continue;
                }
                let x0 = ((b * self.in_h + iy) * self.in_w + ix) * self.in_c;
                let w0 = ((oc * self.f_h + fy) * self.f_w + fx) * self.in_c;
                for ic in 0..self.in_c {
                    f(x0 + ic, w0 + ic);
                }
            }
        }
    }
}

/// `TRANSPOSE_CONV`.
pub(crate) fn transpose_conv(
    mut op: OpView<'_, '_>,
    o: &TransposeConvOptions,
) -> Result<(), KernelError> {
    let nhwc = |s: &[usize], what: &'static str| match *s {
        [a, b, c, d] => Ok([a, b, c, d]),
        _ => Err(KernelError::Shape { what }),
    };
    let w = op.input(1).ok_or(KernelError::Missing {
        tensor: "input 1 (filter)",
    })?;
    let x = op.input(2).ok_or(KernelError::Missing {
        tensor: "input 2 (input)",
    })?;
    let bias = op.input(3);
    let [out_c, f_h, f_w, w_in_c] = nhwc(w.shape, "the filter is not [out, h, w, in]")?;
    let [batches, in_h, in_w, in_c] = nhwc(x.shape, "the input is not NHWC")?;
    let stride = |s: i32| {
        usize::try_from(s)
            .ok()
            .filter(|&s| s >= 1)
            .ok_or(KernelError::Options {
                what: "a stride below 1",
            })
    };
    let (stride_h, stride_w) = (stride(o.stride_h)?, stride(o.stride_w)?);
    let out = output(&mut op)?;
    let [ob, out_h, out_w, oc] = nhwc(out.shape, "the output is not NHWC")?;
    if ob != batches || oc != out_c || w_in_c != in_c || f_h == 0 || f_w == 0 {
        return Err(KernelError::Shape {
            what: "TRANSPOSE_CONV batches or channels of input, filter and output differ",
        });
    }
    let g = Geometry {
        batches,
        in_h,
        in_w,
        in_c,
        out_h,
        out_w,
        out_c,
        f_h,
        f_w,
        stride_h,
        stride_w,
        pad_h: pad_before(o.padding, stride_h, in_h, f_h, out_h)?,
        pad_w: pad_before(o.padding, stride_w, in_w, f_w, out_w)?,
    };
    let lengths_ok = |x: usize, w: usize, y: usize, bias: Option<usize>| {
        x == batches * in_h * in_w * in_c
            && w == out_c * f_h * f_w * in_c
            && y == batches * out_h * out_w * out_c
            && bias.is_none_or(|b| b == out_c)
    };
    let bad_length = KernelError::Shape {
        what: "a TRANSPOSE_CONV tensor's length is not its shape's",
    };
    let out_quant = out.quant;
    match (x.data, w.data, &mut out.data) {
        (Data::I8(xs), Data::I8(ws), DataMut::I8(y)) => {
            let bias = typed(bias, In::i32, "input 3 (bias; int8 takes int32)")?;
            let (in_scale, in_zero) = params(x.quant, "input 2 (input)")?;
            let wq = w.quant.ok_or(KernelError::Quantization {
                tensor: "input 1 (filter)",
            })?;
            let (out_scale, out_zero) = params(out_quant, "output 0")?;
            let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
            if !lengths_ok(xs.len(), ws.len(), y.len(), bias.map(<[i32]>::len)) {
                return Err(bad_length);
            }
            for c in 0..g.out_c {
                let m = channel_multiplier(in_scale, &wq, out_scale, c);
                for b in 0..g.batches {
                    for oy in 0..g.out_h {
                        for ox in 0..g.out_w {
                            let mut acc: i32 = 0;
                            g.taps(b, oy, ox, c, |xi, wi| {
                                acc = acc.wrapping_add(
                                    (i32::from(xs[xi]) - in_zero) * i32::from(ws[wi]),
                                );
                            });
                            if let Some(bias) = bias {
                                acc = acc.wrapping_add(bias[c]);
                            }
                            y[((b * g.out_h + oy) * g.out_w + ox) * g.out_c + c] =
                                multiply_by_quantized_multiplier(acc, m)
                                    .saturating_add(out_zero)
                                    .clamp(lo, hi) as i8;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::F32(xs), Data::F32(ws), DataMut::F32(y)) => {
            let bias = typed(bias, In::f32, "input 3 (bias; float32 takes float32)")?;
            if !lengths_ok(xs.len(), ws.len(), y.len(), bias.map(<[f32]>::len)) {
                return Err(bad_length);
            }
            let (lo, hi) = crate::reference::common::float::float_activation_range(o.activation)?;
            for b in 0..g.batches {
                for oy in 0..g.out_h {
                    for ox in 0..g.out_w {
                        for c in 0..g.out_c {
                            let mut acc = 0.0f32;
                            g.taps(b, oy, ox, c, |xi, wi| acc += xs[xi] * ws[wi]);
                            if let Some(bias) = bias {
                                acc += bias[c];
                            }
                            y[((b * g.out_h + oy) * g.out_w + ox) * g.out_c + c] =
                                crate::reference::common::float::clamp(acc, lo, hi);
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::InPlace(_) | Data::Variable(_), _, _) => Err(KernelError::Missing {
            tensor: "input 2 (input)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 2, input 1 and output 0 (TRANSPOSE_CONV takes int8 or float32 throughout)",
        }),
    }
}

/// An optional input (the bias), when present, as the elements `as_type` gives, or the
/// type error naming `tensor`.
fn typed<'a, T>(
    x: Option<In<'a>>,
    as_type: fn(&In<'a>) -> Option<&'a [T]>,
    tensor: &'static str,
) -> Result<Option<&'a [T]>, KernelError> {
    x.map(|x| as_type(&x).ok_or(KernelError::Type { tensor }))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_is_the_forward_convolutions() {
        // 4 to 8 by stride 2, filter 3, SAME: total (4 - 1) · 2 + 3 - 8 = 1, 0 before.
        assert_eq!(pad_before(Padding::Same, 2, 4, 3, 8), Ok(0));
        // 5 to 9, filter 3, SAME (ceil(9 / 2) = 5): total 2, 1 before.
        assert_eq!(pad_before(Padding::Same, 2, 5, 3, 9), Ok(1));
        // VALID: (4 - 1) · 2 + 3 = 9 outputs, no padding.
        assert_eq!(pad_before(Padding::Valid, 2, 4, 3, 9), Ok(0));
        assert!(pad_before(Padding::Valid, 2, 4, 3, 8).is_err());
    }
}
