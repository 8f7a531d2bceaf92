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

use planner_rt::Quant;
use planner_rt::kernel::{Data, In, OpView};
use planner_rt::options::{
    Activation, Conv2dOptions, DepthwiseConv2dOptions, FullyConnectedOptions,
};

use crate::reference::KernelError;
use crate::reference::common::window::{Spatial, Window, channel_multiplier};
use crate::reference::common::{
    dims4, input_i8, int16_activation_range, kind_error, output, params,
};
use crate::reference::conv::fc_shape::{batches, default_weights, units_depth};
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

/// What a 16x8 op reads first: the int16 input 0 and its scale, the int8 filter (input 1)
/// and its quantisation, the output's scale and the int16 clamp of the fused activation.
struct Ends<'a> {
    x: &'a [i16],
    xi: In<'a>,
    w: &'a [i8],
    wi: In<'a>,
    wq: Quant,
    in_scale: f32,
    out_scale: f32,
    lo: i32,
    hi: i32,
}

impl<'a> Ends<'a> {
    /// The ends of a 16x8 op on whole tensors; zero points other than 0 are refused (TFLM's
    /// 16x8 convolutions ignore them).
    fn read(op: &mut OpView<'_, 'a>, activation: Activation) -> Result<Self, KernelError> {
        crate::reference::common::whole_tensors(op)?;
        let xi = op
            .input(0)
            .ok_or(KernelError::Missing { tensor: "input 0" })?;
        let x = xi.i16().ok_or_else(|| kind_error(&xi, "input 0"))?;
        let (w, wi) = input_i8(op, 1, "input 1 (filter)")?;
        let wq = wi.quant.ok_or(KernelError::Quantization {
            tensor: "input 1 (filter)",
        })?;
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
            w,
            wi,
            wq,
            in_scale,
            out_scale,
            lo,
            hi,
        })
    }

    /// The input's, the filter's and the output's dimensions as NHWC, with the output.
    fn dims4<'o>(&self, op: &'o mut OpView<'_, 'a>) -> Result<Dims4<'o>, KernelError> {
        let shape4 = |s: &[usize]| {
            dims4(s).ok_or(KernelError::Shape {
                what: "rank above 4",
            })
        };
        let (x4, f4) = (shape4(self.xi.shape)?, shape4(self.wi.shape)?);
        let out = output(op)?;
        let y4 = shape4(out.shape)?;
        let y = out.i16().ok_or(KernelError::Type { tensor: "output 0" })?;
        Ok((x4, f4, y4, y))
    }

    /// Output channel `c`'s value from the sum `acc` of its products, clamped.
    fn out(&self, bias: Bias<'_>, acc: i64, c: usize) -> i16 {
        let m = channel_multiplier(self.in_scale, &self.wq, self.out_scale, c);
        bias.finish(acc, c, m).clamp(self.lo, self.hi) as i16
    }
}

/// Input, filter and output dimensions (NHWC) and the output's elements.
type Dims4<'o> = ([usize; 4], [usize; 4], [usize; 4], &'o mut [i16]);

/// Writes every element of the NHWC output `y` (`[_, out_h, out_w, out_c]`) from the sum
/// of its products `acc(batch, row, column, channel)`.
fn each_output(
    e: &Ends<'_>,
    bias: Bias<'_>,
    y: &mut [i16],
    [out_h, out_w, out_c]: [usize; 3],
    acc: impl Fn(usize, usize, usize, usize) -> i64,
) {
    let per_batch = out_h * out_w * out_c;
    for (i, v) in y.iter_mut().enumerate() {
        let (b, px, c) = (i / per_batch, (i % per_batch) / out_c, i % out_c);
        *v = e.out(bias, acc(b, px / out_w, px % out_w, c), c);
    }
}

/// The sum over the filter taps `(fy, fx)` of output pixel `(oy, ox)` that fall inside the
/// image, at input pixel `(iy, ix)`, of `tap((fy, fx), (iy, ix))`.
fn sum_taps(
    win: &Window,
    (oy, ox): (usize, usize),
    (f_h, f_w): (usize, usize),
    tap: impl Fn((usize, usize), (usize, usize)) -> i64,
) -> i64 {
    let mut acc = 0i64;
    for fy in 0..f_h {
        for fx in 0..f_w {
            if let Some(at) = win.tap(oy, ox, fy, fx) {
                acc += tap((fy, fx), at);
            }
        }
    }
    acc
}

/// True when input 0 holds int16 elements: the op is a 16x8 one.
pub(crate) fn int16_input(op: &OpView<'_, '_>) -> bool {
    op.input(0).is_some_and(|x| x.i16().is_some())
}

/// The 16x8 `CONV_2D`: input `[n, h, w, c_in]`, filter `[c_out, fh, fw, c_in / groups]`.
pub(crate) fn conv_2d(mut op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    let e = Ends::read(&mut op, o.activation)?;
    let bias = Bias::read(&op, e.wi.shape.first().copied().unwrap_or(0), true)?;
    let (x, w) = (e.x, e.w);
    let ([n, in_h, in_w, in_c], [out_c, f_h, f_w, f_c], [on, out_h, out_w, oc], y) =
        e.dims4(&mut op)?;
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
    each_output(&e, bias, y, [out_h, out_w, out_c], |b, oy, ox, c| {
        let first_in = (c / per_group) * f_c;
        let filter = &w[c * f_h * f_w * f_c..(c + 1) * f_h * f_w * f_c];
        sum_taps(&win, (oy, ox), (f_h, f_w), |(fy, fx), (iy, ix)| {
            let px = ((b * in_h + iy) * in_w + ix) * in_c + first_in;
            let taps = &filter[(fy * f_w + fx) * f_c..][..f_c];
            x[px..px + f_c]
                .iter()
                .zip(taps)
                .map(|(xv, wv)| i64::from(*xv) * i64::from(*wv))
                .sum()
        })
    });
    Ok(())
}

/// The 16x8 `DEPTHWISE_CONV_2D`: input `[n, h, w, c_in]`, filter `[1, fh, fw, c_out]`,
/// `c_out = c_in · multiplier`, an int64 bias (TFLM reads no other here).
pub(crate) fn depthwise_conv_2d(
    mut op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let e = Ends::read(&mut op, o.activation)?;
    let bias = Bias::read(&op, e.wi.shape.last().copied().unwrap_or(0), false)?;
    let (x, w) = (e.x, e.w);
    let ([n, in_h, in_w, in_c], [_, f_h, f_w, out_c], [on, out_h, out_w, oc], y) =
        e.dims4(&mut op)?;
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
    each_output(&e, bias, y, [out_h, out_w, out_c], |b, oy, ox, c| {
        sum_taps(&win, (oy, ox), (f_h, f_w), |(fy, fx), (iy, ix)| {
            let xv = x[((b * in_h + iy) * in_w + ix) * in_c + c / multiplier];
            i64::from(xv) * i64::from(w[(fy * f_w + fx) * out_c + c])
        })
    });
    Ok(())
}

/// The 16x8 `FULLY_CONNECTED`: weights `[units, depth]`, per tensor or per unit.
pub(crate) fn fully_connected(
    mut op: OpView<'_, '_>,
    o: &FullyConnectedOptions,
) -> Result<(), KernelError> {
    default_weights(o)?;
    let e = Ends::read(&mut op, o.activation)?;
    let (units, depth) = units_depth(e.wi.shape)?;
    let bias = Bias::read(&op, units, true)?;
    let (x, w) = (e.x, e.w);
    let y = output(&mut op)?
        .i16()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    let batches = batches([x.len(), w.len(), y.len()], (units, depth), None)?;
    for u in 0..units {
        let row = &w[u * depth..(u + 1) * depth];
        for b in 0..batches {
            let xs = &x[b * depth..(b + 1) * depth];
            let acc: i64 = xs
                .iter()
                .zip(row)
                .map(|(xv, wv)| i64::from(*xv) * i64::from(*wv))
                .sum();
            y[b * units + u] = e.out(bias, acc, u);
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
