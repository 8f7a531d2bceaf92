//! The 16x8 convolutions: `CONV_2D`, `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED` of an int16
//! input and output (zero points 0, as converters write them) and an int8 filter (per
//! channel or, for `FULLY_CONNECTED`, per tensor), on whole tensors, as TFLM's reference
//! kernels compute them: products summed without offsets, the bias added, then
//! requantised per output channel and clamped to the fused activation's int16 range.
//!
//! The bias decides the accumulator, as in TFLM: an int64 bias (what converters write for
//! 16x8 models), or none, sums in 64 bits and requantises with TFLM's 64-bit
//! `MultiplyByQuantizedMultiplier` (the multiplier rounded to 16 bits, one rounding shift);
//! an int32 bias (`CONV_2D` and `FULLY_CONNECTED` only) sums in 32 bits, wrapping, and
//! requantises as the int8 kernels do.

use planner_rt::kernel::{Data, In, OpView};
use planner_rt::options::{
    Activation, Conv2dOptions, DepthwiseConv2dOptions, FullyConnectedOptions,
};

use crate::reference::KernelError;
use crate::reference::common::window::{Spatial, channel_multiplier};
use crate::reference::common::{
    dims4, input_i8, int16_activation_range, kind_error, output, params,
};
use crate::reference::conv::fc::{batches, default_weights, units_depth};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier};

/// TFLM's `MultiplyByQuantizedMultiplier(int64_t x, ...)`: the Q31 multiplier rounded to
/// 16 bits (`0x7FFF` from `0x7FFF0000` up), `x` times it, shifted right by `15 - shift`
/// with rounding, the result truncated to 32 bits.
pub(crate) fn multiply_by_quantized_multiplier_64(x: i64, m: QuantizedMultiplier) -> i32 {
    let reduced = if m.multiplier < 0x7FFF_0000 {
        (i64::from(m.multiplier) + (1 << 15)) >> 16
    } else {
        0x7FFF
    };
    let shift = (15 - m.shift).clamp(1, 63) as u32;
    let round = 1i64 << (shift - 1);
    (x.wrapping_mul(reduced).wrapping_add(round) >> shift) as i32
}

/// The bias of a 16x8 op, which picks its accumulator.
#[derive(Clone, Copy)]
enum Bias<'a> {
    None,
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl<'a> Bias<'a> {
    /// Input 2, when present, of `n` int32 or (when `int32` is false: int64 only) int64
    /// elements.
    fn read(op: &OpView<'_, 'a>, n: usize, int32: bool) -> Result<Self, KernelError> {
        let Some(b) = op.input(2) else {
            return Ok(Bias::None);
        };
        let (bias, len) = match b.data {
            Data::I64(d) => (Bias::I64(d), d.len()),
            Data::I32(d) if int32 => (Bias::I32(d), d.len()),
            _ => {
                return Err(KernelError::Type {
                    tensor: "input 2 (bias: int64, or int32 for CONV_2D and FULLY_CONNECTED, on 16x8 ops)",
                });
            }
        };
        if len != n {
            return Err(KernelError::Shape {
                what: "bias length differs from the output channels",
            });
        }
        Ok(bias)
    }

    /// Output channel `c`'s value from the sum of its products `acc`, before the clamp.
    fn finish(self, acc: i64, c: usize, m: QuantizedMultiplier) -> i32 {
        match self {
            Bias::I32(b) => multiply_by_quantized_multiplier((acc as i32).wrapping_add(b[c]), m),
            Bias::I64(b) => multiply_by_quantized_multiplier_64(acc.wrapping_add(b[c]), m),
            Bias::None => multiply_by_quantized_multiplier_64(acc, m),
        }
    }
}

/// What a 16x8 op reads of its input and output: the int16 input 0, its scale, the output's
/// scale and the int16 clamp of the fused activation.
struct Ends<'a> {
    x: &'a [i16],
    xi: In<'a>,
    in_scale: f32,
    out_scale: f32,
    lo: i32,
    hi: i32,
}

/// The [`Ends`] of a 16x8 op on whole tensors; zero points other than 0 are refused
/// (TFLM's 16x8 convolutions ignore them).
fn int16_ends<'a>(
    op: &mut OpView<'_, 'a>,
    activation: Activation,
) -> Result<Ends<'a>, KernelError> {
    crate::reference::common::whole_tensors(op)?;
    let xi = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let x = xi.i16().ok_or_else(|| kind_error(&xi, "input 0"))?;
    let (in_scale, in_zero) = params(xi.quant, "input 0")?;
    let (out_scale, out_zero) = params(output(op)?.quant, "output 0")?;
    if in_zero != 0 || out_zero != 0 {
        return Err(KernelError::Quantization {
            tensor: "input 0 or output 0 (16x8 ops take zero points of 0)",
        });
    }
    let (lo, hi) = int16_activation_range(activation, out_scale, 0);
    Ok(Ends {
        x,
        xi,
        in_scale,
        out_scale,
        lo,
        hi,
    })
}

/// True when input 0 holds int16 elements: the op is a 16x8 one.
pub(crate) fn int16_input(op: &OpView<'_, '_>) -> bool {
    op.input(0).is_some_and(|x| x.i16().is_some())
}

/// A 4-D shape, or the error that names `what`.
fn shape4(s: &[usize]) -> Result<[usize; 4], KernelError> {
    dims4(s).ok_or(KernelError::Shape {
        what: "rank above 4",
    })
}

/// The 16x8 `CONV_2D`: input `[n, h, w, c_in]`, filter `[c_out, fh, fw, c_in / groups]`.
pub(crate) fn conv_2d(mut op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    let Ends {
        x,
        xi,
        in_scale,
        out_scale,
        lo,
        hi,
    } = int16_ends(&mut op, o.activation)?;
    let (w, wi) = input_i8(&op, 1, "input 1 (filter)")?;
    let wq = wi.quant.ok_or(KernelError::Quantization {
        tensor: "input 1 (filter)",
    })?;
    let [n, in_h, in_w, in_c] = shape4(xi.shape)?;
    let [out_c, f_h, f_w, f_c] = shape4(wi.shape)?;
    let bias = Bias::read(&op, out_c, true)?;
    let out = output(&mut op)?;
    let [on, out_h, out_w, oc] = shape4(out.shape)?;
    let y = out.i16().ok_or(KernelError::Type { tensor: "output 0" })?;
    let groups = in_c.checked_div(f_c).unwrap_or(0);
    if on != n
        || oc != out_c
        || groups == 0
        || in_c % f_c != 0
        || out_c % groups != 0
        || x.len() != n * in_h * in_w * in_c
        || y.len() != n * out_h * out_w * out_c
        || w.len() != out_c * f_h * f_w * f_c
    {
        return Err(KernelError::Shape {
            what: "conv channels or lengths do not fit",
        });
    }
    let win = Spatial::from(o).window((in_h, in_w), (f_h, f_w), (out_h, out_w))?;
    let per_group = out_c / groups;
    for c in 0..out_c {
        let m = channel_multiplier(in_scale, &wq, out_scale, c);
        let first_in = (c / per_group) * f_c;
        let filter = &w[c * f_h * f_w * f_c..(c + 1) * f_h * f_w * f_c];
        for b in 0..n {
            for oy in 0..out_h {
                for ox in 0..out_w {
                    let mut acc = 0i64;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            let Some((iy, ix)) = win.tap(oy, ox, fy, fx) else {
                                continue;
                            };
                            let px = ((b * in_h + iy) * in_w + ix) * in_c + first_in;
                            let taps = &filter[(fy * f_w + fx) * f_c..][..f_c];
                            for (xv, wv) in x[px..px + f_c].iter().zip(taps) {
                                acc += i64::from(*xv) * i64::from(*wv);
                            }
                        }
                    }
                    let v = bias.finish(acc, c, m).clamp(lo, hi);
                    y[((b * out_h + oy) * out_w + ox) * out_c + c] = v as i16;
                }
            }
        }
    }
    Ok(())
}

/// The 16x8 `DEPTHWISE_CONV_2D`: input `[n, h, w, c_in]`, filter `[1, fh, fw, c_out]`,
/// `c_out = c_in · multiplier`, an int64 bias (TFLM reads no other here).
pub(crate) fn depthwise_conv_2d(
    mut op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let Ends {
        x,
        xi,
        in_scale,
        out_scale,
        lo,
        hi,
    } = int16_ends(&mut op, o.activation)?;
    let (w, wi) = input_i8(&op, 1, "input 1 (filter)")?;
    let wq = wi.quant.ok_or(KernelError::Quantization {
        tensor: "input 1 (filter)",
    })?;
    let [n, in_h, in_w, in_c] = shape4(xi.shape)?;
    let [_, f_h, f_w, out_c] = shape4(wi.shape)?;
    let bias = Bias::read(&op, out_c, false)?;
    let out = output(&mut op)?;
    let [on, out_h, out_w, oc] = shape4(out.shape)?;
    let y = out.i16().ok_or(KernelError::Type { tensor: "output 0" })?;
    if on != n
        || oc != out_c
        || in_c == 0
        || out_c % in_c != 0
        || x.len() != n * in_h * in_w * in_c
        || y.len() != n * out_h * out_w * out_c
        || w.len() != f_h * f_w * out_c
    {
        return Err(KernelError::Shape {
            what: "depthwise channels or lengths do not fit",
        });
    }
    let win = Spatial::from(o).window((in_h, in_w), (f_h, f_w), (out_h, out_w))?;
    let multiplier = out_c / in_c;
    for c in 0..out_c {
        let m = channel_multiplier(in_scale, &wq, out_scale, c);
        let ic = c / multiplier;
        for b in 0..n {
            for oy in 0..out_h {
                for ox in 0..out_w {
                    let mut acc = 0i64;
                    for fy in 0..f_h {
                        for fx in 0..f_w {
                            if let Some((iy, ix)) = win.tap(oy, ox, fy, fx) {
                                let xv = x[((b * in_h + iy) * in_w + ix) * in_c + ic];
                                acc += i64::from(xv) * i64::from(w[(fy * f_w + fx) * out_c + c]);
                            }
                        }
                    }
                    let v = bias.finish(acc, c, m).clamp(lo, hi);
                    y[((b * out_h + oy) * out_w + ox) * out_c + c] = v as i16;
                }
            }
        }
    }
    Ok(())
}

/// The 16x8 `FULLY_CONNECTED`: weights `[units, depth]`, per tensor or per unit.
pub(crate) fn fully_connected(
    mut op: OpView<'_, '_>,
    o: &FullyConnectedOptions,
) -> Result<(), KernelError> {
    default_weights(o)?;
    let Ends {
        x,
        in_scale,
        out_scale,
        lo,
        hi,
        ..
    } = int16_ends(&mut op, o.activation)?;
    let (w, wi) = input_i8(&op, 1, "input 1 (weights)")?;
    let wq = wi.quant.ok_or(KernelError::Quantization {
        tensor: "input 1 (weights)",
    })?;
    let (units, depth) = units_depth(wi.shape)?;
    let bias = Bias::read(&op, units, true)?;
    let y = output(&mut op)?
        .i16()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    let batches = batches([x.len(), w.len(), y.len()], (units, depth), None)?;
    for u in 0..units {
        let m = channel_multiplier(in_scale, &wq, out_scale, u);
        let row = &w[u * depth..(u + 1) * depth];
        for b in 0..batches {
            let xs = &x[b * depth..(b + 1) * depth];
            let acc: i64 = xs
                .iter()
                .zip(row)
                .map(|(xv, wv)| i64::from(*xv) * i64::from(*wv))
                .sum();
            y[b * units + u] = bias.finish(acc, u, m).clamp(lo, hi) as i16;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::multiply_by_quantized_multiplier_64;
    use crate::quantize_multiplier;

    #[test]
    fn the_64_bit_requantisation_rounds_as_tflm() {
        // 0.25: multiplier 2^30, shift -1; reduced to 2^14, total shift 16.
        let m = quantize_multiplier(0.25);
        assert_eq!(multiply_by_quantized_multiplier_64(1000, m), 250);
        assert_eq!(multiply_by_quantized_multiplier_64(1002, m), 251); // 250.5 up
        assert_eq!(multiply_by_quantized_multiplier_64(-1002, m), -250); // -250.5 up
        // An accumulator beyond 32 bits (1/1024: multiplier 2^30, shift -9).
        let small = quantize_multiplier(1.0 / 1024.0);
        assert_eq!(multiply_by_quantized_multiplier_64(1 << 40, small), 1 << 30);
        // A multiplier near 1 saturates its 16-bit reduction at 0x7FFF.
        let near_one = quantize_multiplier(0.99999);
        assert_eq!(
            multiply_by_quantized_multiplier_64(1 << 20, near_one),
            1048544
        );
    }
}
