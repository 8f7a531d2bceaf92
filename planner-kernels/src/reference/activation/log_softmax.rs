//! `LOG_SOFTMAX`, int8, with TFLite Micro's fixed-point arithmetic, and float32.

use planner_rt::kernel::{Data, DataMut, OpView};

use super::softmax::{RowErrors, float_rows, last_dim, row_max};
use crate::reference::KernelError;
use crate::reference::common::fixed::{exp_negative, mul, mul_pot, one_over_one_plus};
use crate::reference::common::float::{expf, float_output, logf};
use crate::reference::common::operands::input;
use crate::reference::common::{output, params};
use crate::{multiply_by_quantized_multiplier, quantize_multiplier, rounding_divide_by_pot};

/// `log(x)` for a Q12.19 `x >= 1`, as a Q5.26 number: TFLite's
/// `log_x_for_x_greater_than_or_equal_to_1`, which splits `x` into a power of two (taken
/// at two offsets, `x` and `x · sqrt(1/2)`, the larger exponent kept) and a mantissa `r`
/// near one whose log is a rational approximation around `2^-1/4`.
fn log_q12_to_q5(x: i32) -> i32 {
    const INPUT_INTEGER_BITS: i32 = 12;
    const OUTPUT_INTEGER_BITS: i32 = 5;
    const ACCUM_INTEGER_BITS: i32 = OUTPUT_INTEGER_BITS + 1;
    // Q0.31 constants: log 2, 2^-1/4, 2^-1/2, 1/4, and the approximation's coefficients.
    const LOG_2: i32 = 1_488_522_236;
    const SQRT_SQRT_HALF: i32 = 1_805_811_301;
    const SQRT_HALF: i32 = 1_518_500_250;
    const ONE_QUARTER: i32 = 536_870_912;
    const ALPHA_N: i32 = 117_049_297;
    const ALPHA_D: i32 = 127_690_142;
    const ALPHA_I: i32 = 1_057_819_769;
    const ALPHA_F: i32 = 638_450_708;
    // 1/4 in Q6.25.
    let shifted_quarter = mul_pot(ONE_QUARTER, -ACCUM_INTEGER_BITS);
    let z_a = x;
    let z_a_headroom_plus_1 = (z_a as u32).leading_zeros() as i32;
    let r_a_tmp = mul_pot(z_a, z_a_headroom_plus_1 - 1);
    let r_a_raw = mul_pot(mul(r_a_tmp, SQRT_HALF), 1);
    let z_a_pow_2_adj = mul_pot(
        INPUT_INTEGER_BITS - z_a_headroom_plus_1,
        31 - ACCUM_INTEGER_BITS,
    )
    .saturating_add(shifted_quarter);
    let z_b = mul(z_a, SQRT_HALF);
    let z_b_headroom = (z_b as u32).leading_zeros() as i32 - 1;
    let r_b_raw = mul_pot(z_a, z_b_headroom);
    let z_b_pow_2_adj = mul_pot(INPUT_INTEGER_BITS - z_b_headroom, 31 - ACCUM_INTEGER_BITS)
        .saturating_sub(shifted_quarter);
    let r = r_a_raw.min(r_b_raw);
    let z_pow_2_adj = z_a_pow_2_adj.max(z_b_pow_2_adj);
    let p = rounding_half_sum(r, SQRT_SQRT_HALF);
    let q = r.wrapping_sub(SQRT_SQRT_HALF);
    let q = q.wrapping_add(q);
    let common_sq = mul(q, q);
    let num = mul(q, r).wrapping_add(mul(mul(q, common_sq), ALPHA_N));
    let denom_minus_one = mul(
        p,
        ALPHA_I
            .wrapping_add(q)
            .wrapping_add(mul(ALPHA_D, common_sq)),
    )
    .wrapping_add(mul(ALPHA_F, q));
    let recip_denom = one_over_one_plus(denom_minus_one);
    let num_scaled = mul_pot(num, -ACCUM_INTEGER_BITS);
    let sum = mul(z_pow_2_adj, LOG_2).wrapping_add(mul(num_scaled, recip_denom));
    mul_pot(sum, ACCUM_INTEGER_BITS - OUTPUT_INTEGER_BITS)
}

/// `LOG_SOFTMAX`'s row errors.
const LOG_SOFTMAX_ROWS: RowErrors = RowErrors {
    scalar: "LOG_SOFTMAX of a scalar",
    lengths: "LOG_SOFTMAX's output is not the input's size, or a row is empty",
};

/// `(a + b) / 2` rounded half away from zero (gemmlowp's `RoundingHalfSum`).
fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let sum = i64::from(a) + i64::from(b);
    let sign = if sum >= 0 { 1 } else { -1 };
    ((sum + sign) / 2) as i32
}

/// `LOG_SOFTMAX`, int8, over the last dimension, as TFLM: the output quantisation fixed at
/// scale 16/256 and zero point 127; differences to the row's maximum scaled to Q5.26 (by
/// `input_scale · 2^26` as a multiplier and left shift), the sum of their exponentials in
/// Q12.19, its log in Q5.26; each difference above a bound (the larger of the input radius
/// and the log sum scaled back to the input) minus the log sum, shifted down to Q4 (22
/// bits), plus 127; the rest -128.
pub(crate) fn log_softmax(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    if float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return log_softmax_f32(op);
    }
    let x = input(&op, 0, "input 0")?;
    let Data::I8(v) = x.data else {
        return Err(match x.data {
            Data::InPlace(_) => KernelError::Missing { tensor: "input 0" },
            _ => KernelError::Type {
                tensor: "input 0 (LOG_SOFTMAX runs int8)",
            },
        });
    };
    let (si, _) = params(x.quant, "input 0")?;
    let (so, zo) = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
    if so != 16.0 / 256.0 || zo != 127 {
        return Err(KernelError::Quantization {
            tensor: "output 0 (LOG_SOFTMAX's int8 output has scale 1/16 and zero point 127)",
        });
    }
    const DIFF_INTEGER_BITS: u32 = 5;
    let real =
        (f64::from(si) * f64::from(1u32 << (31 - DIFF_INTEGER_BITS))).min(f64::from(i32::MAX));
    let m = quantize_multiplier(real);
    let left_shift = m.shift.max(0);
    if m.multiplier == 0 || left_shift > 30 {
        return Err(KernelError::Quantization {
            tensor: "input 0 (a scale LOG_SOFTMAX cannot scale to Q5.26)",
        });
    }
    // TFLM's reverse scaling: 2^(31 - left shift) / multiplier as a multiplier below one.
    let reverse =
        quantize_multiplier(f64::from(1u32 << (31 - left_shift as u32)) / f64::from(m.multiplier));
    let radius = f64::from((1i32 << DIFF_INTEGER_BITS) - 1)
        * f64::from(1u32 << (31 - DIFF_INTEGER_BITS))
        / (1u64 << left_shift) as f64;
    let diff_min = -(radius as i64 as i32);
    let depth = last_dim(&x, LOG_SOFTMAX_ROWS)?;
    let out = output(&mut op)?;
    let DataMut::I8(y) = &mut out.data else {
        return Err(KernelError::Type {
            tensor: "output 0 (LOG_SOFTMAX writes int8)",
        });
    };
    if depth == 0 || v.len() % depth != 0 || y.len() != v.len() {
        return Err(KernelError::Shape {
            what: LOG_SOFTMAX_ROWS.lengths,
        });
    }
    let scaled = |d: i32| mul(d.wrapping_mul(1 << left_shift), m.multiplier);
    for (row, out) in v.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
        let max = row.iter().map(|&v| i32::from(v)).max().unwrap_or(0);
        let mut sum: i32 = 0;
        for &v in row {
            let d = i32::from(v) - max;
            if d >= diff_min {
                sum = sum.wrapping_add(mul_pot(exp_negative(scaled(d), DIFF_INTEGER_BITS), -12));
            }
        }
        let log_sum = log_q12_to_q5(sum);
        let shifted = log_sum.wrapping_add(i32::MIN);
        let adjusted_min = (diff_min - 1).max(multiply_by_quantized_multiplier(shifted, reverse));
        for (&v, o) in row.iter().zip(out.iter_mut()) {
            let d = i32::from(v) - max;
            *o = if d > adjusted_min {
                let q = rounding_divide_by_pot(scaled(d).wrapping_sub(log_sum), 31 - 5 - 4) + 127;
                q.clamp(-128, 127) as i8
            } else {
                -128
            };
        }
    }
    Ok(())
}

/// `LOG_SOFTMAX`, float, over the last dimension, as TFLM: per row, the maximum (from the
/// lowest `f32`, replaced by each larger value), the sum from `c = 0` of `exp(x_c - max)`
/// in `f32`, and `x_c - max - log(sum)` (`exp` and `log` as the C library's, see
/// [`expf`] and [`logf`]).
fn log_softmax_f32(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (x, y, depth) = float_rows(&mut op, LOG_SOFTMAX_ROWS)?;
    for (row, out) in x.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
        let max = row_max(row);
        let mut sum = 0.0f32;
        for &v in row {
            sum += expf(v - max);
        }
        let log_sum = logf(sum);
        for (&v, o) in row.iter().zip(out.iter_mut()) {
            *o = v - max - log_sum;
        }
    }
    Ok(())
}
