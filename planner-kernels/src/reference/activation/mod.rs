//! Activations: `RELU`, `RELU6`, `LOGISTIC`, `TANH` and `HARD_SWISH` here, `SOFTMAX`
//! (`softmax`) and `LOG_SOFTMAX` (`log_softmax`).
//!
//! `RELU`, `RELU6`, `LOGISTIC` and `TANH` (float32, int8 and int16), and `HARD_SWISH` (float32
//! and int8), with TFLite Micro's arithmetic, out of place or in place (one driver, [`crate::reference::common::unary::unary`]).

pub(crate) mod log_softmax;
pub(crate) mod softmax;

use planner_rt::kernel::OpView;

use crate::reference::common::fixed::{exp_negative, one_minus_over_one_plus, one_over_one_plus};
use crate::reference::common::unary::unary;
use crate::reference::{
    KernelError,
    common::{params, round_f32},
};
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
/// offset times the multiplier of `input_scale / output_scale`, plus the output zero point, clamped below at the output's zero point.
/// int8, or int16 with both zero points 0 (TFLM's requirement).
pub(crate) fn relu(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    if crate::reference::common::float::float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return unary_f32(&mut op, in_place, crate::reference::common::float::relu_f32);
    }
    let ((si, zi), (so, zo)) = quants(&op)?;
    let m = quantize_multiplier(f64::from(si) / f64::from(so));
    let requantized = move |v: i32| zo.saturating_add(multiply_by_quantized_multiplier(v - zi, m));
    let lo = zo.saturating_add(round_f32(0.0 / so));
    if int16_output(&op) {
        if zi != 0 || zo != 0 {
            return Err(KernelError::Quantization {
                tensor: "input 0 (int16 RELU needs zero points 0)",
            });
        }
        let lo = lo.max(i32::from(i16::MIN));
        return unary(&mut op, in_place, |v: i16| {
            requantized(i32::from(v)).clamp(lo, i32::from(i16::MAX)) as i16
        });
    }
    let lo = lo.max(-128);
    unary(&mut op, in_place, |v: i8| {
        requantized(i32::from(v)).clamp(lo, 127) as i8
    })
}

/// `RELU6`: TFLM clamps in the input's quantisation, between the input's zero point and
/// `round(6 / input_scale) + zero point` (saturated to the type), without requantising
/// (the output is expected to share the input's quantisation). int8 or int16.
pub(crate) fn relu6(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    if crate::reference::common::float::float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return unary_f32(
            &mut op,
            in_place,
            crate::reference::common::float::relu6_f32,
        );
    }
    let ((si, zi), _) = quants(&op)?;
    let six = round_f32(6.0 / si).saturating_add(zi);
    if int16_output(&op) {
        let (lo, hi) = (i32::from(i16::MIN), i32::from(i16::MAX));
        let (zero, six) = (zi.clamp(lo, hi), six.clamp(lo, hi));
        return unary(&mut op, in_place, move |v: i16| {
            i32::from(v).max(zero).min(six) as i16
        });
    }
    let six = six.clamp(-128, 127);
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

/// `LOGISTIC`, int16 (see [`SIGMOID_Q16`]) or int8 in and out (output scale 1/256, zero
/// point -128), as TFLM; int8: inputs past
/// the radius saturate, the others are scaled into Q4.27, go through the fixed-point
/// logistic, and are shifted right by 23 with rounding.
pub(crate) fn logistic(op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    sigmoid_like(op, in_place, &LOGISTIC)
}

/// `TANH`, int16 (see [`SIGMOID_Q16`]) or int8 in and out (output scale 1/128, zero point
/// 0), as TFLM; int8: inputs past the
/// radius saturate, the others are scaled into Q4.27, go through the fixed-point tanh, and
/// are shifted right by 24 with rounding.
pub(crate) fn tanh(op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    sigmoid_like(op, in_place, &TANH)
}

/// What tells `LOGISTIC` from `TANH` in [`sigmoid_like`]: the float function, the fixed
/// int8 output quantisation, the Q4.27 -> Q0.31 function and the final shift.
struct SigmoidLike {
    float: fn(f32) -> f32,
    tanh: bool,
    scale: f32,
    zero_point: i32,
    wrong_output: &'static str,
    q4: fn(i32) -> i32,
    shift: u32,
}

const LOGISTIC: SigmoidLike = SigmoidLike {
    float: crate::reference::common::float::logistic_f32,
    tanh: false,
    scale: 1.0 / 256.0,
    zero_point: -128,
    wrong_output: "LOGISTIC int8 with an output quantisation other than scale 1/256, zero point -128",
    q4: logistic_q4,
    shift: 23,
};

const TANH: SigmoidLike = SigmoidLike {
    float: crate::reference::common::float::tanhf,
    tanh: true,
    scale: 1.0 / 128.0,
    zero_point: 0,
    wrong_output: "TANH int8 with an output quantisation other than scale 1/128, zero point 0",
    q4: tanh_q4,
    shift: 24,
};

/// `LOGISTIC` or `TANH` (as `f` says) for float, int16 and int8 tensors.
fn sigmoid_like(
    mut op: OpView<'_, '_>,
    in_place: bool,
    f: &SigmoidLike,
) -> Result<(), KernelError> {
    if crate::reference::common::float::float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return unary_f32(&mut op, in_place, f.float);
    }
    if int16_output(&op) {
        return sigmoid_like16(&mut op, in_place, f.tanh);
    }
    let ((si, zi), _) = quants(&op)?;
    fixed_output(&op, f.scale, f.zero_point, f.wrong_output)?;
    let (m, radius) = q4_scaling(si)?;
    let zero_point = f.zero_point;
    unary(&mut op, in_place, |v: i8| {
        let x = i32::from(v) - zi;
        if x <= -radius {
            -128
        } else if x >= radius {
            127
        } else {
            let q = (f.q4)(multiply_by_quantized_multiplier(x, m));
            (rounding_divide_by_pot(q, f.shift) + zero_point).clamp(-128, 127) as i8
        }
    })
}

/// `sigmoid(i / 24)` in unsigned Q0.16 for `i` in `0..256` (the last entry saturated at
/// 65535), the table TFLM's int16 `LOGISTIC` and `TANH` interpolate in. The entries are
/// within one of `round(65536 · sigmoid(i / 24))`; they were measured from TFLM's int16
/// outputs over every input (four models: two scales each, one a power of two), which they
/// reproduce exactly.
pub(crate) static SIGMOID_Q16: [u16; 256] = [
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
];

/// The input scaling of TFLM's int16 `LOGISTIC` and `TANH`: `(multiplier, shift)` taking
/// the input to the table's scale (`1 / (3 · 4096)` per step). For an input scale of
/// `2^-12` (within 0.1% in log2) the multiplier is 3 and the shift 0; otherwise the
/// multiplier is `input_scale · 3 · 4096` doubled (the shift counting the doublings, at
/// most 31) until above 32767 / 2, truncated to an integer.
fn q16_scaling(input_scale: f32) -> Result<(i32, u32), KernelError> {
    let ratio = f64::from(input_scale) * 4096.0;
    if (0.999_307..=1.000_694).contains(&ratio) {
        return Ok((3, 0));
    }
    let mut m = f64::from(input_scale) * 4096.0 * 3.0;
    let mut shift = 0u32;
    while m <= 32767.0 / 2.0 && shift <= 30 {
        shift += 1;
        m *= 2.0;
    }
    if !(m.is_finite() && m < f64::from(i32::MAX) / 65536.0) {
        return Err(KernelError::Quantization {
            tensor: "input 0 (an int16 LOGISTIC or TANH input scale too large for TFLM's table)",
        });
    }
    Ok((m as i32, shift))
}

/// An int16 input on the table's scale: `(v · multiplier + round) >> shift`.
fn on_table_scale(v: i16, (m, shift): (i32, u32)) -> i32 {
    let round = if shift > 0 { 1i32 << (shift - 1) } else { 0 };
    (i32::from(v).wrapping_mul(m).wrapping_add(round)) >> shift
}

/// The table interpolated at `|d|` with `bits` fraction bits per entry: `(a << bits) + t ·
/// (b - a)`; past the table, `saturated`.
fn interpolate(abs: u32, bits: u32, saturated: u32) -> u32 {
    let uh = (abs >> bits) as usize;
    if uh >= 255 {
        return saturated;
    }
    let (a, b) = (u32::from(SIGMOID_Q16[uh]), u32::from(SIGMOID_Q16[uh + 1]));
    let t = abs & ((1 << bits) - 1);
    (a << bits).wrapping_add(t.wrapping_mul(b.wrapping_sub(a)))
}

/// int16 `LOGISTIC` as TFLM: the table at 9 fraction bits, mirrored for negative inputs,
/// to Q0.15.
pub(crate) fn logistic16(v: i16, scaling: (i32, u32)) -> i16 {
    let d = on_table_scale(v, scaling);
    let r = interpolate(d.unsigned_abs(), 9, 0x7fff << 10);
    let r = if d >= 0 {
        r.wrapping_add(1 << 9)
    } else {
        (1u32 << 25).wrapping_sub(r).wrapping_add((1 << 9) - 1)
    };
    (r >> 10) as i16
}

/// int16 `TANH` as TFLM (`tanh(x) = 2 · sigmoid(2x) - 1`): the table at 8 fraction bits,
/// to Q0.15.
pub(crate) fn tanh16(v: i16, scaling: (i32, u32)) -> i16 {
    let d = on_table_scale(v, scaling);
    let r = interpolate(d.unsigned_abs(), 8, 0xffff << 8) as i32;
    let r = if d >= 0 {
        r.wrapping_sub(1 << 23).wrapping_add(1 << 7)
    } else {
        r.wrapping_neg()
            .wrapping_add(1 << 23)
            .wrapping_add((1 << 7) - 1)
    };
    (r >> 8) as i16
}

/// int16 `LOGISTIC` or `TANH` (`tanh`): input and output zero points 0, output scale 2^-15.
fn sigmoid_like16(op: &mut OpView<'_, '_>, in_place: bool, tanh: bool) -> Result<(), KernelError> {
    let ((si, zi), _) = quants(op)?;
    fixed_output(
        op,
        1.0 / 32768.0,
        0,
        "int16 LOGISTIC or TANH with an output quantisation other than scale 2^-15, zero point 0",
    )?;
    if zi != 0 {
        return Err(KernelError::Quantization {
            tensor: "input 0 (int16 LOGISTIC and TANH need zero point 0)",
        });
    }
    let scaling = q16_scaling(si)?;
    if tanh {
        unary(op, in_place, |v: i16| tanh16(v, scaling))
    } else {
        unary(op, in_place, |v: i16| logistic16(v, scaling))
    }
}

/// True when output 0 holds int16 elements.
fn int16_output(op: &OpView<'_, '_>) -> bool {
    matches!(
        op.outputs.first().map(|o| &o.data),
        Some(planner_rt::kernel::DataMut::I16(_))
    )
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
    if crate::reference::common::float::float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return unary_f32(&mut op, in_place, hard_swish_f32);
    }
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

/// `HARD_SWISH`, float, as TFLM: `x · min(6, max(0, x + 3)) / 6` in `f32`, C++'s
/// `std::min` and `std::max` (a NaN `x + 3` gives 0).
pub(crate) fn hard_swish_f32(x: f32) -> f32 {
    let shifted = x + 3.0;
    let relu = if 0.0 < shifted { shifted } else { 0.0 };
    let relu6 = if relu < 6.0 { relu } else { 6.0 };
    x * relu6 / 6.0
}

/// A float unary op (`RELU`, `RELU6`, `LOGISTIC`, `TANH`, `HARD_SWISH`), out of place or in place.
pub(crate) fn unary_f32(
    op: &mut OpView<'_, '_>,
    in_place: bool,
    f: fn(f32) -> f32,
) -> Result<(), KernelError> {
    unary(op, in_place, f)
}
