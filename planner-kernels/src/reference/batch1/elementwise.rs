//! Batch 1's elementwise kinds: `DIV`, `SQUARED_DIFFERENCE`, `PRELU`, `LEAKY_RELU`, `CAST`
//! and `LOG_SOFTMAX`.

use super::*;

/// `DIV`, float32 (`a / b`, then the activation's bounds) or int8 with broadcasting, as
/// TFLM: the offset divisor made positive (the dividend's sign flipped with it), its
/// reciprocal as a Q0.31 number by Newton-Raphson, the dividend shifted left by its
/// headroom and multiplied by it, then scaled by the Q31 multiplier of `s1 / (s2 · s_out)`
/// with the reciprocal's and the headroom's shifts folded into the exponent, the output
/// zero point, and the activation's clamp.
///
/// Where TFLM's C++ is undefined this kernel gives the defined limit: a zero divisor gives
/// the clamp's bound of the dividend's sign (the zero point for 0 / 0), and a total right
/// shift past 31 bits (a dividend near its zero point over a large divisor when `s1 / (s2
/// · s_out)` is below 64) gives 0 before the zero point is added, where TFLM shifts an
/// `int32` by 32 or more: on an x86 host that shifts by the count modulo 32 and gives
/// values up to saturation (5 / 138 at 6.25 gives 127; 0 / d gives the zero point plus
/// one), and Cortex-M gives yet another result.
pub(crate) fn div(mut op: OpView<'_, '_>, o: &DivOptions) -> Result<(), KernelError> {
    let (a, b, quants, out) = binary_operands(&mut op, "input 1")?;
    match (a.data, b.data, &mut out.data, quants) {
        (Data::F32(x), Data::F32(z), DataMut::F32(y), _) => {
            let (lo, hi) = float_range(o.activation)?;
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                clamp_f32(p / q, lo, hi)
            })
        }
        (Data::I8(x), Data::I8(z), DataMut::I8(y), Some([(s1, z1), (s2, z2), (so, zo)])) => {
            // In f64 from the f32 scales: TFLM's goldens match this and not the f32
            // quotient (0.05 / (0.1 · 0.08) is 6.25 in f32, 6.2500001 in f64, and -14 / 1
            // gives -88, not -87).
            let m = quantize_multiplier(f64::from(s1) / (f64::from(s2) * f64::from(so)));
            let (lo, hi) = activation_range(o.activation, so, zo)?;
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                let (mut n, mut d) = (i32::from(p) - z1, i32::from(q) - z2);
                if d == 0 {
                    let v = match n.signum() {
                        1 => hi,
                        -1 => lo,
                        _ => zo.clamp(lo, hi),
                    };
                    return v as i8;
                }
                if d < 0 {
                    n = -n;
                    d = -d;
                }
                let (inv, over) = reciprocal(d);
                let headroom = leading_sign_bits(n);
                let unscaled = saturating_rounding_doubling_high_mul(n << headroom, inv);
                let shift = m.shift - over - headroom;
                multiply_exp(unscaled, m.multiplier, shift)
                    .saturating_add(zo)
                    .clamp(lo, hi) as i8
            })
        }
        (Data::I8(_) | Data::F32(_), _, DataMut::I8(_) | DataMut::F32(_), _) => {
            Err(KernelError::Type {
                tensor: "input 1 (not of input 0's type: DIV takes two float32 or two int8 inputs)",
            })
        }
        (Data::InPlace(_), _, _, _) | (_, Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (DIV does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "output 0 (DIV runs float32 and int8)",
        }),
    }
}

/// `SQUARED_DIFFERENCE`, float32 (`(a - b)²`) or int8 with broadcasting, as TFLM: each
/// offset input shifted left by 7 and scaled by `s / (2 · max scale)`, the difference
/// squared in int32, scaled by `(2 · max scale)² / (2^14 · s_out)`, the output zero point,
/// saturated to int8.
pub(crate) fn squared_difference(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (a, b, quants, out) = binary_operands(&mut op, "input 1")?;
    match (a.data, b.data, &mut out.data, quants) {
        (Data::F32(x), Data::F32(z), DataMut::F32(y), _) => {
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                let d = p - q;
                d * d
            })
        }
        (Data::I8(x), Data::I8(z), DataMut::I8(y), Some([(s1, z1), (s2, z2), (so, zo)])) => {
            const LEFT_SHIFT: u32 = 7;
            let twice_max = 2.0 * f64::from(s1.max(s2));
            let m1 = quantize_multiplier(f64::from(s1) / twice_max);
            let m2 = quantize_multiplier(f64::from(s2) / twice_max);
            // The denominator's product is in f32 in TFLM (an int times a float).
            let mo = quantize_multiplier(
                twice_max * twice_max / f64::from((1u32 << (2 * LEFT_SHIFT)) as f32 * so),
            );
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                let p = multiply_by_quantized_multiplier((i32::from(p) - z1) << LEFT_SHIFT, m1);
                let q = multiply_by_quantized_multiplier((i32::from(q) - z2) << LEFT_SHIFT, m2);
                let d = p.wrapping_sub(q);
                multiply_by_quantized_multiplier(d.wrapping_mul(d), mo)
                    .saturating_add(zo)
                    .clamp(-128, 127) as i8
            })
        }
        (Data::InPlace(_), _, _, _) | (_, Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (SQUARED_DIFFERENCE does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0, input 1 or output 0 (SQUARED_DIFFERENCE runs float32 or int8 throughout)",
        }),
    }
}

/// The Q31 multiplier of a real of either sign (TFLite's `QuantizeMultiplier` keeps the
/// sign in the mantissa).
fn signed_multiplier(real: f64) -> QuantizedMultiplier {
    let m = quantize_multiplier(if real < 0.0 { -real } else { real });
    QuantizedMultiplier {
        multiplier: if real < 0.0 {
            m.multiplier.wrapping_neg()
        } else {
            m.multiplier
        },
        shift: m.shift,
    }
}

/// `PRELU`: `x` where it is at least zero, `alpha · x` elsewhere, `alpha` broadcast to the
/// input. float32, or int8 as TFLM: the offset input scaled by `s_in / s_out` where it is
/// at least zero, else its product with the offset alpha scaled by `s_in · s_alpha /
/// s_out`, plus the output zero point, saturated.
pub(crate) fn prelu(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (x, alpha, quants, out) = binary_operands(&mut op, "input 1 (alpha)")?;
    match (x.data, alpha.data, &mut out.data, quants) {
        (Data::F32(v), Data::F32(a), DataMut::F32(y), _) => {
            broadcast((v, x.shape), (a, alpha.shape), (y, out.shape), |v, a| {
                if v >= 0.0 { v } else { v * a }
            })
        }
        (Data::I8(v), Data::I8(a), DataMut::I8(y), Some([(si, zi), (sa, za), (so, zo)])) => {
            let m1 = quantize_multiplier(f64::from(si) / f64::from(so));
            let m2 = signed_multiplier(f64::from(si) * f64::from(sa) / f64::from(so));
            broadcast((v, x.shape), (a, alpha.shape), (y, out.shape), |v, a| {
                let v = i32::from(v) - zi;
                let r = if v >= 0 {
                    multiply_by_quantized_multiplier(v, m1)
                } else {
                    multiply_by_quantized_multiplier(v * (i32::from(a) - za), m2)
                };
                r.saturating_add(zo).clamp(-128, 127) as i8
            })
        }
        (Data::InPlace(_), _, _, _) => Err(KernelError::Missing {
            tensor: "input 0 (PRELU does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0, alpha or output 0 (PRELU runs float32 or int8 throughout)",
        }),
    }
}

/// `LEAKY_RELU`: `x` where it is at least zero, `alpha · x` elsewhere. float32, or int8
/// as TFLM: the offset input scaled by `s_in / s_out` (where at least zero) or by `s_in ·
/// alpha / s_out` (both computed in `f32`), plus the output zero point, saturated.
pub(crate) fn leaky_relu(mut op: OpView<'_, '_>, o: &LeakyReluOptions) -> Result<(), KernelError> {
    let (x, q) = input_and_quants(&op)?;
    let out = output(&mut op)?;
    let alpha = o.alpha;
    match (x.data, &mut out.data, q) {
        (Data::F32(v), DataMut::F32(y), _) if v.len() == y.len() => {
            for (y, &v) in y.iter_mut().zip(v) {
                *y = if v > 0.0 { v } else { v * alpha };
            }
            Ok(())
        }
        (Data::I8(v), DataMut::I8(y), Some(((si, zi), (so, zo)))) if v.len() == y.len() => {
            let identity = quantize_multiplier(f64::from(si / so));
            let leak = signed_multiplier(f64::from(si * alpha / so));
            for (y, &v) in y.iter_mut().zip(v) {
                let v = i32::from(v) - zi;
                let m = if v >= 0 { identity } else { leak };
                *y = multiply_by_quantized_multiplier(v, m)
                    .saturating_add(zo)
                    .clamp(-128, 127) as i8;
            }
            Ok(())
        }
        (Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 (LEAKY_RELU does not run in place)",
        }),
        (Data::F32(_) | Data::I8(_), DataMut::F32(_) | DataMut::I8(_), _) => {
            Err(KernelError::Shape {
                what: "LEAKY_RELU's output is not the input's size and type",
            })
        }
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (LEAKY_RELU runs float32 or int8)",
        }),
    }
}

/// `CAST` between the types TFLM casts: int8, int16, int32, uint32, float32 and bool (a
/// `u8` tensor, read as its value) to int8, int16, int32, uint32 or float32, as C++'s
/// `static_cast`: integers wrap, floats truncate toward zero (a float outside the target's
/// range, undefined in C++, saturates to int32 before it wraps), integers round to the
/// nearest float.
pub(crate) fn cast(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    /// A value on its way from one type to another: an integer or a float.
    #[derive(Clone, Copy)]
    enum V {
        I(i64),
        F(f32),
    }
    fn run<T: Copy, U>(
        x: &[T],
        y: &mut [U],
        get: impl Fn(T) -> V,
        put: impl Fn(V) -> U,
    ) -> Result<(), KernelError> {
        if x.len() != y.len() {
            return Err(KernelError::Shape {
                what: "CAST's output does not have the input's number of elements",
            });
        }
        for (y, &x) in y.iter_mut().zip(x) {
            *y = put(get(x));
        }
        Ok(())
    }
    // The integer a float truncates to, saturated to 32 bits as x86's conversion does.
    let int = |v: V| match v {
        V::I(i) => i,
        V::F(f) => i64::from(f as i32),
    };
    macro_rules! to {
        ($x:expr, $get:expr) => {
            match &mut out.data {
                DataMut::I8(y) => run($x, y, $get, |v| int(v) as i8),
                DataMut::I16(y) => run($x, y, $get, |v| int(v) as i16),
                DataMut::I32(y) => run($x, y, $get, |v| int(v) as i32),
                DataMut::U32(y) => run($x, y, $get, |v| match v {
                    V::I(i) => i as u32,
                    V::F(f) => f as i64 as u32,
                }),
                DataMut::F32(y) => run($x, y, $get, |v| match v {
                    V::I(i) => i as f32,
                    V::F(f) => f,
                }),
                _ => Err(KernelError::Type {
                    tensor: "output 0 (CAST writes int8, int16, int32, uint32 or float32)",
                }),
            }
        };
    }
    match x.data {
        Data::I8(x) => to!(x, |v: i8| V::I(i64::from(v))),
        Data::I16(x) => to!(x, |v: i16| V::I(i64::from(v))),
        Data::I32(x) => to!(x, |v: i32| V::I(i64::from(v))),
        Data::U32(x) => to!(x, |v: u32| V::I(i64::from(v))),
        Data::U8(x) => to!(x, |v: u8| V::I(i64::from(v))),
        Data::F32(x) => to!(x, V::F),
        Data::InPlace(_) => Err(KernelError::Missing {
            tensor: "input 0 (CAST does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 (CAST reads int8, int16, int32, uint32, float32 or bool)",
        }),
    }
}

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
    let depth = *x.shape.last().ok_or(KernelError::Shape {
        what: "LOG_SOFTMAX of a scalar",
    })?;
    let out = output(&mut op)?;
    let DataMut::I8(y) = &mut out.data else {
        return Err(KernelError::Type {
            tensor: "output 0 (LOG_SOFTMAX writes int8)",
        });
    };
    if depth == 0 || v.len() % depth != 0 || y.len() != v.len() {
        return Err(KernelError::Shape {
            what: "LOG_SOFTMAX's output is not the input's size, or a row is empty",
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
