//! `RELU`, `RELU6`, `LOGISTIC`, `TANH` and `HARD_SWISH`, int8, with TFLite Micro's
//! arithmetic, out of place or in place (one driver, [`super::unary::unary`]).

use planner::rt::kernel::OpView;

use super::softmax::{exp_negative, one_minus_over_one_plus, one_over_one_plus};
use super::unary::unary;
use super::{KernelError, params, round_f32};
use crate::{
    QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier,
    rounding_divide_by_pot,
};

/// A tensor's `(scale, zero point)`.
type Params = (f32, i32);

/// `(scale, zero point)` of input 0 and of output 0.
fn quants(op: &OpView<'_, '_>) -> Result<(Params, Params), KernelError> {
    let x = params(op.input(0).and_then(|x| x.quant), "input 0")?;
    let y = params(op.outputs.first().and_then(|y| y.quant), "output 0")?;
    Ok((x, y))
}

/// `RELU`: `max(0, x)` requantised to the output, as TFLM's `ReluQuantized`: the input
/// offset times the multiplier of `input_scale / output_scale`, plus the output zero point,
/// clamped below at the output's zero point.
pub(crate) fn relu(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let ((si, zi), (so, zo)) = quants(&op)?;
    let m = quantize_multiplier(f64::from(si) / f64::from(so));
    let lo = zo.saturating_add(round_f32(0.0 / so)).max(-128);
    unary(&mut op, in_place, |v: i8| {
        zo.saturating_add(multiply_by_quantized_multiplier(i32::from(v) - zi, m))
            .clamp(lo, 127) as i8
    })
}

/// `RELU6`: TFLM clamps in the input's quantisation, between the input's zero point and
/// `round(6 / input_scale) + zero point`, without requantising (the output is expected to
/// share the input's quantisation).
pub(crate) fn relu6(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let ((si, zi), _) = quants(&op)?;
    let six = round_f32(6.0 / si).saturating_add(zi).clamp(-128, 127);
    let zero = zi.clamp(-128, 127);
    unary(&mut op, in_place, |v: i8| {
        i32::from(v).max(zero).min(six) as i8
    })
}

/// The input scaling of TFLM's int8 `LOGISTIC` and `TANH`: the input offset times
/// `input_scale · 2^27` (4 integer bits), split by `frexp` into a Q31 multiplier (rounded
/// half away from zero) and a left shift, and the radius beyond which the output
/// saturates, `floor(15 · 2^27 / 2^shift)`.
fn q4_scaling(input_scale: f32) -> Result<(QuantizedMultiplier, i32), KernelError> {
    let real = f64::from(input_scale) * f64::from(1u32 << 27);
    let m = quantize_multiplier(real);
    if m.multiplier == 0 || m.shift < 0 || m.shift > 30 {
        return Err(KernelError::Quantization {
            tensor: "input 0 (a scale outside [2^-28, 2^3])",
        });
    }
    let radius = 15.0 * f64::from(1u32 << 27) / f64::from(1u32 << m.shift);
    Ok((m, radius as i32))
}

/// Checks that output 0 has the fixed quantisation TFLM requires.
fn fixed_output(
    op: &OpView<'_, '_>,
    scale: f32,
    zero: i32,
    what: &'static str,
) -> Result<(), KernelError> {
    let (so, zo) = params(op.outputs.first().and_then(|y| y.quant), "output 0")?;
    if zo != zero || (so - scale).abs() > scale * 1e-3 {
        return Err(KernelError::Options { what });
    }
    Ok(())
}

/// `logistic(a)` for `a` in Q4.27, as Q0.31 (gemmlowp's fixed-point logistic):
/// `1 / (1 + exp(-|a|))`, and one minus it for negative `a`.
pub(crate) fn logistic_q4(a: i32) -> i32 {
    if a == 0 {
        return 1 << 30;
    }
    let abs = if a > 0 { a } else { a.wrapping_neg() };
    let positive = one_over_one_plus(exp_negative(abs.wrapping_neg(), 4));
    if a > 0 {
        positive
    } else {
        i32::MAX.wrapping_sub(positive)
    }
}

/// `tanh(a)` for `a` in Q4.27, as Q0.31 (gemmlowp's fixed-point tanh): `(1 - exp(-2|a|)) /
/// (1 + exp(-2|a|))`, negated for negative `a`.
pub(crate) fn tanh_q4(a: i32) -> i32 {
    if a == 0 {
        return 0;
    }
    let negative = if a < 0 { a } else { a.wrapping_neg() };
    // The same raw value read with 5 integer bits is 2·negative.
    let t = one_minus_over_one_plus(exp_negative(negative, 5));
    if a < 0 { t.wrapping_neg() } else { t }
}

/// `LOGISTIC`, int8 in and out (output scale 1/256, zero point -128), as TFLM: inputs past
/// the radius saturate, the others are scaled into Q4.27, go through the fixed-point
/// logistic, and are shifted right by 23 with rounding.
pub(crate) fn logistic(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let ((si, zi), _) = quants(&op)?;
    fixed_output(
        &op,
        1.0 / 256.0,
        -128,
        "LOGISTIC int8 with an output quantisation other than scale 1/256, zero point -128",
    )?;
    let (m, radius) = q4_scaling(si)?;
    unary(&mut op, in_place, |v: i8| {
        let x = i32::from(v) - zi;
        if x <= -radius {
            -128
        } else if x >= radius {
            127
        } else {
            let q = logistic_q4(multiply_by_quantized_multiplier(x, m));
            (rounding_divide_by_pot(q, 23) - 128).clamp(-128, 127) as i8
        }
    })
}

/// `TANH`, int8 in and out (output scale 1/128, zero point 0), as TFLM: inputs past the
/// radius saturate, the others are scaled into Q4.27, go through the fixed-point tanh, and
/// are shifted right by 24 with rounding.
pub(crate) fn tanh(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let ((si, zi), _) = quants(&op)?;
    fixed_output(
        &op,
        1.0 / 128.0,
        0,
        "TANH int8 with an output quantisation other than scale 1/128, zero point 0",
    )?;
    let (m, radius) = q4_scaling(si)?;
    unary(&mut op, in_place, |v: i8| {
        let x = i32::from(v) - zi;
        if x <= -radius {
            -128
        } else if x >= radius {
            127
        } else {
            let q = tanh_q4(multiply_by_quantized_multiplier(x, m));
            rounding_divide_by_pot(q, 24).clamp(-128, 127) as i8
        }
    })
}

/// A Q31 multiplier rounded to Q15 (TFLite's `DownScaleInt32ToInt16Multiplier`).
fn to_q15(m: i32) -> i16 {
    if m >= i32::MAX - (1 << 15) {
        return i16::MAX;
    }
    ((m + (1 << 15)) >> 16) as i16
}

/// gemmlowp's rounding doubling high multiply of two int16 values.
fn rdhm16(a: i16, b: i16) -> i16 {
    if a == i16::MIN && b == i16::MIN {
        return i16::MAX;
    }
    let ab = i32::from(a) * i32::from(b);
    let nudge = if ab >= 0 { 1 << 14 } else { 1 - (1 << 14) };
    ((ab + nudge) / (1 << 15)) as i16
}

/// The doubling high multiply of two int16 values, truncating.
fn dhm16(a: i16, b: i16) -> i16 {
    if a == i16::MIN && b == i16::MIN {
        return i16::MAX;
    }
    ((i32::from(a) * i32::from(b)) / (1 << 15)) as i16
}

/// `x · 2^shift` saturated to int16.
fn saturating_shl16(x: i16, shift: i32) -> i16 {
    (i32::from(x) << shift.clamp(0, 15)).clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// `x / 2^exponent` rounded half away from zero, int16.
fn rdbp16(x: i16, exponent: i32) -> i16 {
    let e = exponent.clamp(0, 15);
    let mask = ((1i32 << e) - 1) as i16;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i16::from(x < 0);
    (x >> e) + i16::from(remainder > threshold)
}

/// `HARD_SWISH` (`x · relu6(x + 3) / 6`), int8, with TFLM's int16 fixed point: the input
/// offset at a 128 times finer scale, times the Q15 multiplier of `hires_scale /
/// output_scale`, times a "relu-ish" factor in `[0, 1]` (the input rescaled so that 3
/// maps to 32768, saturating, then moved from `[-1, 1]` to `[0, 1]`), then the output
/// shift and zero point.
pub(crate) fn hard_swish(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let ((si, zi), (so, zo)) = quants(&op)?;
    let hires_scale = (1.0f32 / 128.0) * si;
    let out_m = quantize_multiplier(f64::from(hires_scale / so));
    if out_m.shift > 0 {
        return Err(KernelError::Quantization {
            tensor: "output 0 (HARD_SWISH needs an output scale above input_scale / 128)",
        });
    }
    let out_m16 = to_q15(out_m.multiplier);
    let reluish_m = quantize_multiplier(f64::from(hires_scale / (3.0f32 / 32768.0)));
    let reluish_m16 = to_q15(reluish_m.multiplier);
    let shift = reluish_m.shift;
    unary(&mut op, in_place, |v: i8| {
        let x = (i32::from(v) - zi) as i16;
        let hires = x.wrapping_mul(1 << 7);
        let preshift_output = rdhm16(hires, out_m16);
        let mut reluish = hires;
        if shift > 0 {
            reluish = saturating_shl16(reluish, shift - 1);
        }
        reluish = rdhm16(reluish, reluish_m16);
        if shift > 0 {
            reluish = saturating_shl16(reluish, 1);
        }
        if shift < 0 {
            reluish = rdbp16(reluish, -shift);
        }
        let reluish = ((i32::from(reluish) + (1 << 15)) >> 1) as i16;
        let out = dhm16(reluish, preshift_output);
        let out = rdbp16(out, -out_m.shift).wrapping_add(zo as i16);
        out.clamp(-128, 127) as i8
    })
}
