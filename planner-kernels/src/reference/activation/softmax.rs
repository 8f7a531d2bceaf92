//! `SOFTMAX`, int8 in, int8 or int16 out, over the last dimension, in TFLite's fixed-point
//! scheme: differences to the row's maximum scaled by `beta · input_scale` into a Q5.26
//! number, `exp` of them in Q0.31 (a Taylor polynomial on `[-1/4, 0)` and a product of
//! constants `exp(-2^k)` for the rest), their sum in Q12.19, its reciprocal by
//! Newton-Raphson, and each `exp` times the reciprocal, scaled to the output type.
//!
//! int16 in and out (zero points 0, output scale 2^-15), as TFLM: `exp` of the scaled
//! differences and the reciprocal of their sum from two interpolated 513-entry tables
//! ([`Lut`]), built as TFLite's `LUTPopulate<int16_t>` builds them (in `f32`).

use planner_rt::kernel::{In, OpView};
use planner_rt::options::SoftmaxOptions;

use crate::reference::common::fixed::{exp_negative, mul, mul_pot, one_over_one_plus};
use crate::reference::common::float::expf;
use crate::reference::common::operands::{El, input};
use crate::reference::{
    KernelError,
    common::{input_i8, output, params},
};
use crate::{multiply_by_quantized_multiplier, quantize_multiplier, rounding_divide_by_pot};

/// Integer bits of the scaled differences (Q5.26).
const DIFF_INTEGER_BITS: u32 = 5;
/// Integer bits of the sum of exponentials (Q12.19).
const SUM_INTEGER_BITS: u32 = 12;

/// The reciprocal of a Q12.19 sum, as a Q0.31 scale and the bits the sum has over one.
fn reciprocal(sum: i32) -> (i32, i32) {
    let headroom_plus_one = (sum as u32).leading_zeros();
    let over = SUM_INTEGER_BITS as i32 - headroom_plus_one as i32;
    let shifted_minus_one = ((sum as u32) << headroom_plus_one).wrapping_sub(1 << 31) as i32;
    (one_over_one_plus(shifted_minus_one), over)
}

pub(crate) fn softmax(op: OpView<'_, '_>, o: &SoftmaxOptions) -> Result<(), KernelError> {
    if matches!(
        op.input(0).map(|x| x.data),
        Some(planner_rt::kernel::Data::I16(_))
    ) {
        return softmax_i16(op, o);
    }
    crate::reference::common::by_output(op, o, softmax_f32, softmax_i8)
}

/// The int8 `SOFTMAX`.
fn softmax_i8(mut op: OpView<'_, '_>, o: &SoftmaxOptions) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (in_scale, _) = params(xi.quant, "input 0")?;
    let depth = *xi.shape.last().ok_or(KernelError::Shape {
        what: "softmax of a scalar",
    })?;
    // beta · input_scale · 2^(31 - 5), capped below 2^31, as a multiplier and left shift.
    let real =
        (f64::from(o.beta) * f64::from(in_scale) * f64::from(1u32 << (31 - DIFF_INTEGER_BITS)))
            .min(f64::from(i32::MAX));
    let m = quantize_multiplier(real);
    let left_shift = m.shift.max(0);
    // The most negative difference that still counts: -floor(radius).
    let radius = f64::from((1i32 << DIFF_INTEGER_BITS) - 1)
        * f64::from(1u32 << (31 - DIFF_INTEGER_BITS))
        / (1u64 << left_shift) as f64;
    let diff_min = -(radius as i64 as i32);
    let scaled = |v: i8, max: i32| -> Option<i32> {
        let diff = i32::from(v) - max;
        (diff >= diff_min).then(|| mul(diff.wrapping_mul(1 << left_shift), m.multiplier))
    };
    output_quantisation(&op)?;
    let out = output(&mut op)?;
    if depth == 0 || x.len() % depth != 0 {
        return Err(KernelError::Shape {
            what: "softmax input length is not a multiple of its last dimension",
        });
    }
    match &mut out.data {
        planner_rt::kernel::DataMut::I8(y) if y.len() == x.len() => {
            rows(x, y, depth, &scaled, 8, |v| v.clamp(-128, 127) as i8);
        }
        planner_rt::kernel::DataMut::I16(y) if y.len() == x.len() => {
            rows(x, y, depth, &scaled, 16, |v| v.clamp(-32768, 32767) as i16);
        }
        _ => return Err(KernelError::Type { tensor: "output 0" }),
    }
    Ok(())
}

/// The output quantisation TFLM's int8 `SOFTMAX` requires (its `CalculateSoftmaxParams`),
/// and the one [`rows`] writes: an int8 output of scale exactly 1/256 and zero point -128,
/// or an int16 one of zero point -32768 and scale 1/65536 (within 0.1 %). TFLM refuses
/// another at prepare; so does this kernel, rather than write values on the wrong scale.
fn output_quantisation(op: &OpView<'_, '_>) -> Result<(), KernelError> {
    let y = op
        .outputs
        .first()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    let (scale, zero) = params(y.quant, "output 0")?;
    let ok = match &y.data {
        planner_rt::kernel::DataMut::I16(_) => {
            zero == -32768 && (scale - 1.0 / 65536.0).abs() <= 0.001 / 65536.0
        }
        _ => zero == -128 && scale == 1.0 / 256.0,
    };
    if ok {
        Ok(())
    } else {
        Err(KernelError::Options {
            what: "SOFTMAX of an int8 input needs an output of scale 1/256 and zero point -128 (int8) or of scale 1/65536 and zero point -32768 (int16), as TFLM",
        })
    }
}

/// Softmax of each row of `depth` values into an output of `bits` bits.
fn rows<T: Copy>(
    x: &[i8],
    y: &mut [T],
    depth: usize,
    scaled: &dyn Fn(i8, i32) -> Option<i32>,
    bits: u32,
    narrow: impl Fn(i32) -> T,
) {
    let min = -(1i32 << (bits - 1));
    for (row, out) in x.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
        let max = row.iter().map(|&v| i32::from(v)).max().unwrap_or(0);
        let mut sum: i32 = 0;
        for &v in row {
            if let Some(d) = scaled(v, max) {
                sum = sum.wrapping_add(mul_pot(
                    exp_negative(d, DIFF_INTEGER_BITS),
                    -(SUM_INTEGER_BITS as i32),
                ));
            }
        }
        let (scale, over) = reciprocal(sum);
        for (&v, o) in row.iter().zip(out.iter_mut()) {
            *o = narrow(match scaled(v, max) {
                Some(d) => {
                    let shift = (over + 31 - bits as i32).clamp(0, 31) as u32;
                    rounding_divide_by_pot(mul(scale, exp_negative(d, DIFF_INTEGER_BITS)), shift)
                        + min
                }
                None => min,
            });
        }
    }
}

/// A 513-entry int16 table of a function (TFLite's int16 `LUTPopulate`): 512 steps over
/// the inputs of int16 values quantised with `(input_scale, input_zero)`, onto outputs of
/// scale `output_scale` (zero point 0), each sample lowered by half the error of linear
/// interpolation at its step's midpoint; read by [`Lut::lookup`].
struct Lut([i16; 513]);

impl Lut {
    fn new(input_scale: f32, input_zero: i32, output_scale: f32, f: fn(f32) -> f32) -> Lut {
        let (lo, hi) = (f32::from(i16::MIN), f32::from(i16::MAX));
        let input_min = input_scale * (-32768 - input_zero) as f32;
        let input_max = input_scale * (32767 - input_zero) as f32;
        let output_min = output_scale * -32768.0;
        let output_max = output_scale * 32767.0;
        let step = (input_max - input_min) / 512.0;
        let half_step = step / 2.0;
        let inv = 65536.0 / (output_max - output_min);
        let round = libm::roundf;
        let mut t = [0i16; 513];
        for (i, e) in t.iter_mut().enumerate().take(512) {
            let val = f(input_min + i as f32 * step);
            let mid = f(input_min + i as f32 * step + half_step);
            let next = f(input_min + (i + 1) as f32 * step);
            let sample = round(val * inv);
            let interpolated = round((next * inv + round(val * inv)) / 2.0);
            let bias = round((interpolated - round(mid * inv)) / 2.0);
            *e = (sample - bias).max(lo).min(hi) as i16;
        }
        t[512] = round(f(input_max) * inv).max(lo).min(hi) as i16;
        Lut(t)
    }

    /// The table at `v`: the entry of its top 9 bits plus the slope to the next times its
    /// low 7 bits, rounded.
    fn lookup(&self, v: i16) -> i16 {
        let index = (256 + (i32::from(v) >> 7)) as usize;
        let offset = i32::from(v & 0x7f);
        let base = i32::from(self.0[index]);
        let slope = i32::from(self.0[index + 1]) - base;
        (base + ((slope * offset + 64) >> 7)) as i16
    }
}

fn exp_f32(v: f32) -> f32 {
    expf(v)
}

fn one_over_one_plus_f32(v: f32) -> f32 {
    1.0 / (1.0 + v)
}

/// The int16 `SOFTMAX` (module docs): differences to the row's maximum times the
/// multiplier of `input_scale · beta / (10 / 65535)` (so `[-10, 0]` spans 65535 steps),
/// recentred by 32767 and saturated, through the `exp` table (Q0.15); their sum normalised
/// to 16 bits through the `1 / (1 + x)` table; each `exp` times the reciprocal, shifted back
/// with rounding and clamped to `[0, 32767]`.
fn softmax_i16(mut op: OpView<'_, '_>, o: &SoftmaxOptions) -> Result<(), KernelError> {
    let xi = input(&op, 0, "input 0")?;
    let Some(x) = xi.i16() else {
        return Err(KernelError::Type { tensor: "input 0" });
    };
    let (si, zi) = params(xi.quant, "input 0")?;
    let (so, zo) = params(op.outputs.first().and_then(|y| y.quant), "output 0")?;
    if zi != 0 || zo != 0 || (so - 1.0 / 32768.0).abs() > 0.001 / 32768.0 {
        return Err(KernelError::Quantization {
            tensor: "output 0 (int16 SOFTMAX needs zero points 0 and output scale 2^-15)",
        });
    }
    let depth = last_dim(&xi, SOFTMAX_ROWS)?;
    let m = quantize_multiplier(f64::from(si) * f64::from(o.beta) / (10.0 / 65535.0));
    let exp_lut = Lut::new(10.0 / 65535.0, 32767, 2.0 / 65535.0, exp_f32);
    let recip_lut = Lut::new(1.0 / 65535.0, -32768, 2.0 / 65535.0, one_over_one_plus_f32);
    let y = row_output::<i16>(&mut op, x.len(), depth, SOFTMAX_ROWS)?;
    for (row, out) in x.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
        let max = row.iter().copied().max().unwrap_or(i16::MIN);
        let mut sum: i32 = 0;
        for (&v, e) in row.iter().zip(out.iter_mut()) {
            let scaled = multiply_by_quantized_multiplier(i32::from(v) - i32::from(max), m);
            let centred = scaled.wrapping_add(32767).clamp(-32768, 32767) as i16;
            *e = exp_lut.lookup(centred);
            sum = sum.wrapping_add(i32::from(*e));
        }
        let headroom_plus_one = (sum as u32).leading_zeros();
        let shifted = ((i64::from(sum) << headroom_plus_one.saturating_sub(1)) + (1 << 13)) >> 14;
        let centred = (shifted - (1 << 15) - (1 << 16)).clamp(-32768, 32767) as i16;
        let reciprocal = i64::from(recip_lut.lookup(centred));
        let right_shift = 31u32.saturating_sub(headroom_plus_one);
        let round = (1i64 << right_shift) >> 1;
        for e in out.iter_mut() {
            let r = (i64::from(*e) * reciprocal + round) >> right_shift;
            *e = r.clamp(0, 32767) as i16;
        }
    }
    Ok(())
}

/// `SOFTMAX`, float, over the last dimension: per row, the maximum, then
/// `e_c = exp((x_c - max) · beta)` summed in `f32` from `c = 0`, then `e_c / sum`.
pub(crate) fn softmax_f32(mut op: OpView<'_, '_>, o: &SoftmaxOptions) -> Result<(), KernelError> {
    let (x, y, depth) = float_rows(&mut op, SOFTMAX_ROWS)?;
    for (row, out) in x.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
        let max = row_max(row);
        let mut sum = 0.0f32;
        for (&v, e) in row.iter().zip(out.iter_mut()) {
            *e = expf((v - max) * o.beta);
            sum += *e;
        }
        for e in out.iter_mut() {
            *e /= sum;
        }
    }
    Ok(())
}

/// The errors of a kernel over the rows of the last dimension: a scalar input, and an
/// output not of the input's length or rows that are not whole.
#[derive(Clone, Copy)]
pub(super) struct RowErrors {
    /// The input is a scalar.
    pub(super) scalar: &'static str,
    /// The output's length is not the input's, or the rows are empty or not whole.
    pub(super) lengths: &'static str,
}

/// `SOFTMAX`'s row errors.
const SOFTMAX_ROWS: RowErrors = RowErrors {
    scalar: "softmax of a scalar",
    lengths: "softmax input and output lengths differ or are not whole rows",
};

/// The last dimension of `x`: the length of a row.
pub(super) fn last_dim(x: &In<'_>, e: RowErrors) -> Result<usize, KernelError> {
    x.shape
        .last()
        .copied()
        .ok_or(KernelError::Shape { what: e.scalar })
}

/// Output 0's elements of type `T`, when they are `n` elements, whole rows of `depth` (not 0).
pub(super) fn row_output<'o, T: El>(
    op: &'o mut OpView<'_, '_>,
    n: usize,
    depth: usize,
    e: RowErrors,
) -> Result<&'o mut [T], KernelError> {
    let y = T::of_mut(&mut output(op)?.data).ok_or(KernelError::Type { tensor: "output 0" })?;
    if depth == 0 || !n.is_multiple_of(depth) || y.len() != n {
        return Err(KernelError::Shape { what: e.lengths });
    }
    Ok(y)
}

/// A float kernel's rows: input 0's and output 0's elements and the row length.
pub(super) fn float_rows<'o, 'a>(
    op: &'o mut OpView<'_, 'a>,
    e: RowErrors,
) -> Result<(&'a [f32], &'o mut [f32], usize), KernelError> {
    let xi = input(op, 0, "input 0")?;
    let x = xi.f32().ok_or(KernelError::Type {
        tensor: "input 0 (float output, so float input)",
    })?;
    let depth = last_dim(&xi, e)?;
    Ok((x, row_output(op, x.len(), depth, e)?, depth))
}

/// The largest value of a float row as TFLM finds it: from the lowest `f32`, replaced by each
/// larger value in order.
pub(super) fn row_max(row: &[f32]) -> f32 {
    let mut max = f32::MIN;
    for &v in row {
        if max < v {
            max = v;
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_the_real_function() {
        for k in 0..200 {
            let real = -(k as f64) / 10.0;
            let q = (real * f64::from(1u32 << 26)) as i32;
            let got = f64::from(exp_negative(q, DIFF_INTEGER_BITS)) / f64::from(1u32 << 31);
            assert!((got - real.exp()).abs() < 1e-6, "exp({real}) = {got}");
        }
        assert_eq!(exp_negative(0, DIFF_INTEGER_BITS), i32::MAX);
    }

    #[test]
    fn reciprocal_matches_the_real_function() {
        for k in 0..100 {
            let x = f64::from(k) / 100.0;
            let got = f64::from(one_over_one_plus((x * f64::from(i32::MAX)) as i32))
                / f64::from(i32::MAX);
            assert!((got - 1.0 / (1.0 + x)).abs() < 1e-6, "1/(1+{x}) = {got}");
        }
    }
}
