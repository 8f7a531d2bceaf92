//! Fixed-point arithmetic on Q-numbers that the integer `SOFTMAX`, `LOG_SOFTMAX`,
//! `LOGISTIC`, `TANH` and the element-wise math share: products, powers of two, `exp` of
//! a non-positive number and reciprocals, as gemmlowp computes them.

use crate::{rounding_divide_by_pot, saturating_rounding_doubling_high_mul};

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
