//! `SOFTMAX`, int8 in, int8 or int16 out, over the last dimension, in TFLite's fixed-point
//! scheme: differences to the row's maximum scaled by `beta · input_scale` into a Q5.26
//! number, `exp` of them in Q0.31 (a Taylor polynomial on `[-1/4, 0)` and a product of
//! constants `exp(-2^k)` for the rest), their sum in Q12.19, its reciprocal by
//! Newton-Raphson, and each `exp` times the reciprocal, scaled to the output type.

use planner_rt::kernel::OpView;
use planner_rt::options::SoftmaxOptions;

use super::{KernelError, input_i8, output, params};
use crate::{quantize_multiplier, rounding_divide_by_pot, saturating_rounding_doubling_high_mul};

/// Integer bits of the scaled differences (Q5.26).
const DIFF_INTEGER_BITS: u32 = 5;
/// Integer bits of the sum of exponentials (Q12.19).
const SUM_INTEGER_BITS: u32 = 12;

/// Fixed-point product of two Q-numbers: the raw values' rounding doubling high product.
pub(crate) fn mul(a: i32, b: i32) -> i32 {
    saturating_rounding_doubling_high_mul(a, b)
}

/// `x · 2^exponent`, rounding for negative exponents and saturating for positive ones.
pub(crate) fn mul_pot(x: i32, exponent: i32) -> i32 {
    if exponent <= 0 {
        return rounding_divide_by_pot(x, exponent.unsigned_abs());
    }
    let e = exponent.unsigned_abs().min(31);
    let threshold = (1i64 << (31 - e)) - 1;
    if i64::from(x) > threshold {
        i32::MAX
    } else if i64::from(x) < -threshold {
        i32::MIN
    } else {
        x << e
    }
}

/// `exp(a)` for `a` in `[-1/4, 0)`, Q0.31 in and out: a Taylor polynomial of degree 4
/// around `-1/8`.
fn exp_quarter(a: i32) -> i32 {
    // exp(-1/8) and 1/3 in Q0.31.
    const EXP_MINUS_EIGHTH: i32 = 1_895_147_668;
    const ONE_THIRD: i32 = 715_827_883;
    let x = a.wrapping_add(1 << 28); // a + 1/8
    let x2 = mul(x, x);
    let x3 = mul(x2, x);
    let x4 = mul(x2, x2);
    let x4_over_4 = mul_pot(x4, -2);
    let poly = mul_pot(
        mul(x4_over_4.wrapping_add(x3), ONE_THIRD).wrapping_add(x2),
        -1,
    );
    EXP_MINUS_EIGHTH.wrapping_add(mul(EXP_MINUS_EIGHTH, x.wrapping_add(poly)))
}

/// `exp(a)` for `a <= 0` with `integer_bits` integer bits (Q5.26 for softmax), as Q0.31:
/// `exp` of `a` modulo 1/4 on `[-1/4, 0)`, times `exp(-2^k)` for each bit `k` of the rest
/// that the format has.
pub(crate) fn exp_negative(a: i32, integer_bits: u32) -> i32 {
    let fraction_bits = 31 - integer_bits;
    let quarter = 1i32 << (fraction_bits - 2);
    let mask = quarter - 1;
    let a_mod_quarter_minus_quarter = (a & mask).wrapping_sub(quarter);
    let mut result = exp_quarter(mul_pot(a_mod_quarter_minus_quarter, integer_bits as i32));
    let remainder = a_mod_quarter_minus_quarter.wrapping_sub(a);
    // exp(-2^k) in Q0.31 for k = -2 ..= 4: applied for each set bit of the remainder.
    const FACTORS: [(i32, i32); 7] = [
        (-2, 1_672_461_947),
        (-1, 1_302_514_674),
        (0, 790_015_084),
        (1, 290_630_308),
        (2, 39_332_535),
        (3, 720_401),
        (4, 242),
    ];
    for (k, factor) in FACTORS {
        if integer_bits as i32 > k {
            let bit = (fraction_bits as i32 + k) as u32;
            if remainder & (1 << bit) != 0 {
                result = mul(result, factor);
            }
        }
    }
    // Below -32 the result is zero (only formats with more than 5 integer bits reach it).
    if integer_bits > 5 && a < -(1i32 << (36 - integer_bits).min(31)) {
        result = 0;
    }
    if a == 0 { i32::MAX } else { result }
}

/// Newton-Raphson reciprocal of `(1 + x) / 2` for `x` in `[0, 1)` Q0.31: three steps from
/// `48/17 - 32/17 · d`, the result in Q2.29.
fn half_reciprocal(x: i32) -> i32 {
    // (x + 1) / 2, rounded.
    let sum = i64::from(x) + i64::from(i32::MAX);
    let half_denominator = ((sum + if sum >= 0 { 1 } else { -1 }) / 2) as i32;
    const C48_OVER_17: i32 = 1_515_870_810;
    const CNEG32_OVER_17: i32 = -1_010_580_540;
    const ONE_Q2: i32 = 1 << 29;
    let mut r = C48_OVER_17.wrapping_add(mul(half_denominator, CNEG32_OVER_17));
    for _ in 0..3 {
        let product = mul(half_denominator, r);
        let error = ONE_Q2.wrapping_sub(product);
        r = r.wrapping_add(mul_pot(mul(r, error), 2));
    }
    r
}

/// `1 / (1 + x)` for `x` in `[0, 1)`, Q0.31 in and out.
pub(crate) fn one_over_one_plus(x: i32) -> i32 {
    // r / 2 in Q1.30 is the same raw value; into Q0.31.
    mul_pot(half_reciprocal(x), 1)
}

/// `(1 - x) / (1 + x)` for `x` in `[0, 1)`, Q0.31 in and out.
pub(crate) fn one_minus_over_one_plus(x: i32) -> i32 {
    // 2 / (1 + x) - 1 in Q2.29, into Q0.31.
    mul_pot(half_reciprocal(x).wrapping_sub(1 << 29), 2)
}

/// The reciprocal of a Q12.19 sum, as a Q0.31 scale and the bits the sum has over one.
fn reciprocal(sum: i32) -> (i32, i32) {
    let headroom_plus_one = (sum as u32).leading_zeros();
    let over = SUM_INTEGER_BITS as i32 - headroom_plus_one as i32;
    let shifted_minus_one = ((sum as u32) << headroom_plus_one).wrapping_sub(1 << 31) as i32;
    (one_over_one_plus(shifted_minus_one), over)
}

pub(crate) fn softmax(op: OpView<'_, '_>, o: &SoftmaxOptions) -> Result<(), KernelError> {
    super::by_output(op, o, super::b2_float::softmax, softmax_i8)
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
