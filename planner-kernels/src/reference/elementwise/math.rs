//! Element-wise math (issue 39): `ABS`, `NEG`, `FLOOR`, `CEIL`, `ROUND`, `SQRT`, `RSQRT`,
//! `SQUARE`, `SIN`, `COS`, `LOG`, `EXP`, `ELU`, `FLOOR_DIV` and `FLOOR_MOD`, with TFLite
//! Micro's arithmetic for each type it runs.
//!
//! float32 as TFLM computes it in `f32` (`FLOOR_DIV` divides in `f64`, as TFLM does).
//! `sqrt`, `floor`, `ceil` and `fmod` are exact in `libm` as in the C library. `sin`,
//! `cos`, `log`, `exp` and `expm1` are not correctly rounded in glibc, whose results TFLM
//! gives on a Linux host: `log` is `libm::log` in `f64` rounded to `f32`, `exp`
//! [`crate::reference::common::float::expf`], `expm1` `libm::expm1f`, `sin` and `cos` `libm`'s `sinf` and
//! `cosf`, which differ from glibc 2.36's by one ulp on 0.13 % and 0.08 % of the arguments
//! in [-100, 100] (every 7th bit pattern; `tests/run-models`' `WITHIN_ONE_ULP` allows that
//! one ulp in their one-op goldens).

use planner_rt::kernel::{Data, DataMut, OpView};

use crate::reference::common::operands::{broadcast, input};
use crate::reference::{
    KernelError,
    common::{output, params},
};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// A float32 element-wise kind and its function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Float {
    /// `NEG`.
    Neg,
    /// `FLOOR`.
    Floor,
    /// `CEIL`.
    Ceil,
    /// `ROUND`.
    Round,
    /// `SQRT`.
    Sqrt,
    /// `SQUARE`.
    Square,
    /// `SIN`.
    Sin,
    /// `COS`.
    Cos,
    /// `LOG`.
    Log,
    /// `EXP`.
    Exp,
}

impl Float {
    fn apply(self, x: f32) -> f32 {
        match self {
            Float::Neg => -x,
            Float::Floor => libm::floorf(x),
            Float::Ceil => libm::ceilf(x),
            Float::Round => round_half_even(x),
            Float::Sqrt => libm::sqrtf(x),
            Float::Square => x * x,
            Float::Sin => sinf(x),
            Float::Cos => cosf(x),
            Float::Log => libm::log(f64::from(x)) as f32,
            Float::Exp => crate::reference::common::float::expf(x),
        }
    }
}

/// A float32-only element-wise kind: `y = f(x)`, input and output float32 of one length.
pub(crate) fn float(mut op: OpView<'_, '_>, f: Float) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    match (x.data, &mut out.data) {
        (Data::F32(v), DataMut::F32(y)) => each(v, y, |x| f.apply(x)),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (TFLM runs this kind on float32 only)",
        }),
    }
}

/// `y[i] = f(x[i])`, or a shape error when the lengths differ.
pub(super) fn each<T: Copy, U>(
    x: &[T],
    y: &mut [U],
    f: impl Fn(T) -> U,
) -> Result<(), KernelError> {
    try_each(x, y, |v| Ok(f(v)))
}

/// TFLM's `RoundToNearest`: the floor, plus one above a fraction of one half or at one half
/// when the floor is odd (so ties go to even); a NaN or an infinity gives itself.
fn round_half_even(x: f32) -> f32 {
    let floor = libm::floorf(x);
    let diff = x - floor;
    // At a tie |x| < 2^23, so the floor fits an i32, as TFLM's cast needs.
    if diff < 0.5 || (diff == 0.5 && (floor as i32) % 2 == 0) {
        floor
    } else {
        floor + 1.0
    }
}

/// A quantised tensor's scale and zero point, for the int8 and int16 paths.
type Q = (f32, i32);

/// The quantisations of input 0 and output 0, when both have one.
fn in_out_quants(op: &OpView<'_, '_>) -> Option<(Q, Q)> {
    let x = op.input(0)?.quant?;
    let y = op.outputs.first()?.quant?;
    Some((
        params(Some(x), "input 0").ok()?,
        params(Some(y), "output 0").ok()?,
    ))
}

/// `ABS`: float32; int8 (`|q - z_in|`, rescaled by `s_in / s_out` when the scales differ,
/// plus `z_out`, saturated); int16 with zero points 0, the same arithmetic when quantised,
/// else the plain absolute value (`-32768` stays `-32768`, as C++'s `abs` of a short cast
/// back).
pub(crate) fn abs(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let quants = in_out_quants(&op);
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let rescale = |(si, zi): Q, (so, zo): Q, lo: i32, hi: i32| {
        // TFLM divides the scales in f32, then quantises the quotient.
        let m = (si != so).then(|| quantize_multiplier(f64::from(si / so)));
        move |v: i32| {
            let a = v.wrapping_sub(zi).wrapping_abs();
            let y = match m {
                Some(m) => multiply_by_quantized_multiplier(a, m),
                None => a,
            };
            y.saturating_add(zo).clamp(lo, hi)
        }
    };
    match (x.data, &mut out.data, quants) {
        (Data::F32(v), DataMut::F32(y), _) => each(v, y, libm::fabsf),
        (Data::I8(v), DataMut::I8(y), Some((qi, qo))) => {
            let f = rescale(qi, qo, -128, 127);
            each(v, y, |v| f(i32::from(v)) as i8)
        }
        (Data::I8(_), DataMut::I8(_), None) => Err(KernelError::Quantization {
            tensor: "input 0 or output 0 (int8 ABS is quantised)",
        }),
        (Data::I16(v), DataMut::I16(y), Some((qi, qo))) => {
            if qi.1 != 0 || qo.1 != 0 {
                return Err(KernelError::Quantization {
                    tensor: "input 0 or output 0 (int16 ABS needs zero points 0)",
                });
            }
            let f = rescale(qi, qo, -32768, 32767);
            each(v, y, |v| f(i32::from(v)) as i16)
        }
        (Data::I16(v), DataMut::I16(y), None) => each(v, y, i16::wrapping_abs),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (ABS runs float32, int8 or int16, one type throughout)",
        }),
    }
}

/// `RSQRT`: float32 `1 / sqrt(x)`; int8, and int16 with zero points 0, as TFLM: `v = q -
/// z_in` (negative: refused, as TFLM refuses it; zero: the type's maximum), its inverse
/// square root as TFLM's fixed-point Newton-Raphson gives it, scaled by `2^20`, then by
/// the multiplier of `1 / (sqrt(s_in) · s_out)` and `2^-20`, plus `z_out`, saturated.
pub(crate) fn rsqrt(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let quants = in_out_quants(&op);
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let quantised = |(si, zi): Q, (so, zo): Q, hi: i32| {
        // In f32: sqrtf(scale) · output scale; then 1 / that in f64.
        let m = quantize_multiplier(1.0 / f64::from(libm::sqrtf(si) * so));
        move |q: i32| -> Result<i32, KernelError> {
            const SHIFT: i32 = 20;
            let v = q - zi;
            if v < 0 {
                return Err(KernelError::Value {
                    what: "a quantised RSQRT input below the zero point (a negative value)",
                });
            }
            if v == 0 {
                return Ok(hi);
            }
            let (inv, shift) = inv_sqrt(v);
            let data = multiply_by_quantized_multiplier(
                1,
                QuantizedMultiplier {
                    multiplier: inv,
                    shift: shift + SHIFT,
                },
            );
            let y = multiply_by_quantized_multiplier(
                data,
                QuantizedMultiplier {
                    multiplier: m.multiplier,
                    shift: m.shift - SHIFT,
                },
            );
            Ok(y.saturating_add(zo).clamp(-hi - 1, hi))
        }
    };
    match (x.data, &mut out.data, quants) {
        (Data::F32(v), DataMut::F32(y), _) => each(v, y, |x| 1.0 / libm::sqrtf(x)),
        (Data::I8(v), DataMut::I8(y), Some((qi, qo))) => {
            let f = quantised(qi, qo, 127);
            try_each(v, y, |v| f(i32::from(v)).map(|r| r as i8))
        }
        (Data::I16(v), DataMut::I16(y), Some((qi, qo))) if qi.1 == 0 && qo.1 == 0 => {
            let f = quantised(qi, qo, 32767);
            try_each(v, y, |v| f(i32::from(v)).map(|r| r as i16))
        }
        (Data::I8(_) | Data::I16(_), _, _) => Err(KernelError::Quantization {
            tensor: "input 0 or output 0 (int8 RSQRT is quantised, int16 with zero points 0)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (RSQRT runs float32, int8 or int16, one type throughout)",
        }),
    }
}

/// [`each`] for a function that may refuse an element.
fn try_each<T: Copy, U>(
    x: &[T],
    y: &mut [U],
    f: impl Fn(T) -> Result<U, KernelError>,
) -> Result<(), KernelError> {
    if x.len() != y.len() {
        return Err(KernelError::Shape {
            what: "the output does not have the input's number of elements",
        });
    }
    for (o, &v) in y.iter_mut().zip(x) {
        *o = f(v)?;
    }
    Ok(())
}

/// `1 / sqrt(x)` for `x >= 0` as TFLite's `GetInvSqrtQuantizedMultiplierExp` with its
/// reverse shift: `(multiplier, shift)` with `1 / sqrt(x) ≈ multiplier · 2^(shift - 31)`.
/// `x` is brought into `[2^27, 2^29)` by shifting pairs of bits, five Newton-Raphson steps
/// `y ← 1.5 y - x/2 · y³` run in Q3.28 from `y = 1`, and the result is times `sqrt(2)/2`.
/// 0 and 1 give `(i32::MAX, 0)`.
pub(crate) fn inv_sqrt(x: i32) -> (i32, i32) {
    use crate::reference::common::fixed::mul;
    if x <= 1 {
        return (i32::MAX, 0);
    }
    let mut input = x;
    let mut shift = 11;
    while input >= 1 << 29 {
        input /= 4;
        shift += 1;
    }
    let max_left_shift_bits = (input as u32).leading_zeros() as i32 - 1;
    let left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
    shift -= left_shift_bit_pairs;
    input <<= 2 * left_shift_bit_pairs;
    // Q3.28 values; a product of Qa and Qb values is Q(a + b), rescaled to Q3 by a
    // saturating left shift.
    let rescale = |v: i32, from_bits: u32| saturating_shl(v, from_bits - 3);
    let fixed_input = input >> 1;
    let half_input = crate::reference::common::fixed::mul_pot(fixed_input, -1);
    let half_three = (1 << 28) + (1 << 27);
    let mut y = 1 << 28;
    for _ in 0..5 {
        let y3 = rescale(mul(mul(y, y), y), 9);
        y = rescale(mul(half_three, y).wrapping_sub(mul(half_input, y3)), 6);
    }
    const HALF_SQRT_2: i32 = 1_518_500_250;
    let mut inv = mul(y, HALF_SQRT_2);
    if shift < 0 {
        inv <<= -shift;
        shift = 0;
    }
    (inv, -shift)
}

/// `v · 2^bits`, saturating (gemmlowp's `SaturatingRoundingMultiplyByPOT` for a positive
/// exponent).
fn saturating_shl(v: i32, bits: u32) -> i32 {
    let wide = i64::from(v) << bits;
    wide.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `ELU`: float32 `x < 0 ? expm1(x) : x`; int8 through TFLM's 256-entry table, each entry
/// `round(f(s_in · (q - z_in)) / s_out) + z_out` saturated, with `f(x) = exp(x) - 1` below
/// zero (in `f32`, `exp` as [`crate::reference::common::float::expf`]).
pub(crate) fn elu(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let quants = in_out_quants(&op);
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    match (x.data, &mut out.data, quants) {
        (Data::F32(v), DataMut::F32(y), _) => {
            each(v, y, |x| if x < 0.0 { libm::expm1f(x) } else { x })
        }
        (Data::I8(v), DataMut::I8(y), Some(((si, zi), (so, zo)))) => {
            let inverse = 1.0 / so;
            let entry = |q: i8| -> i8 {
                let real = si * (i32::from(q) - zi) as f32;
                let f = if real < 0.0 {
                    crate::reference::common::float::expf(real) - 1.0
                } else {
                    real
                };
                let rescaled = libm::roundf(f * inverse);
                ((rescaled + zo as f32) as i32).clamp(-128, 127) as i8
            };
            let mut table = [0i8; 256];
            for q in i8::MIN..=i8::MAX {
                table[usize::from(q as u8)] = entry(q);
            }
            each(v, y, |q| table[usize::from(q as u8)])
        }
        (Data::I8(_), DataMut::I8(_), None) => Err(KernelError::Quantization {
            tensor: "input 0 or output 0 (int8 ELU is quantised)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (ELU runs float32 or int8, one type throughout)",
        }),
    }
}

/// `FLOOR_DIV` (float32): `floor(a / b)` with the quotient in `f64`, inputs broadcast. A
/// zero anywhere in the divisor is refused, as TFLM refuses it.
pub(crate) fn floor_div(op: OpView<'_, '_>) -> Result<(), KernelError> {
    float_binary(op, true, |a, b| {
        libm::floor(f64::from(a) / f64::from(b)) as f32
    })
}

/// `FLOOR_MOD` (float32): C's `fmodf(a, b)`, plus `b` when that is non-zero and of the
/// other sign than `b`; inputs broadcast. A zero divisor gives NaN, as in TFLM.
pub(crate) fn floor_mod(op: OpView<'_, '_>) -> Result<(), KernelError> {
    float_binary(op, false, |a, b| {
        let m = libm::fmodf(a, b);
        if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
            m + b
        } else {
            m
        }
    })
}

/// A float32 binary kind over broadcast inputs; with `nonzero`, a divisor with a zero is
/// refused.
fn float_binary(
    mut op: OpView<'_, '_>,
    nonzero: bool,
    f: impl Fn(f32, f32) -> f32,
) -> Result<(), KernelError> {
    let a = input(&op, 0, "input 0")?;
    let b = input(&op, 1, "input 1")?;
    let out = output(&mut op)?;
    match (a.data, b.data, &mut out.data) {
        (Data::F32(p), Data::F32(q), DataMut::F32(y)) => {
            if nonzero && q.contains(&0.0) {
                return Err(KernelError::Value {
                    what: "a FLOOR_DIV divisor of zero",
                });
            }
            broadcast((p, a.shape), (q, b.shape), (y, out.shape), f)
        }
        _ => Err(KernelError::Type {
            tensor: "input 0, input 1 or output 0 (TFLM runs FLOOR_DIV and FLOOR_MOD on float32 only)",
        }),
    }
}

/// `sinf`: `libm`'s (see the module's notes on glibc).
pub(crate) fn sinf(x: f32) -> f32 {
    libm::sinf(x)
}

/// `cosf`: `libm`'s (see the module's notes on glibc).
pub(crate) fn cosf(x: f32) -> f32 {
    libm::cosf(x)
}
