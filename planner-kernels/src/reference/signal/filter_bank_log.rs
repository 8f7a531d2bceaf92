//! TFLM's `SignalFilterBankLog` (custom op): the scaled natural log of each uint32 filter
//! bank channel, in TFLM's fixed-point arithmetic, as int16.

use super::framer::{holds, shift_option};
use crate::reference::KernelError;

/// The correction the log's fraction gets over `log2(1 + f) ≈ f`, at the start of each of
/// 128 equal segments of the fraction `f` in `[0, 1)` (Q16), plus the segment end and a
/// spare: TFLM's table (a fact of its arithmetic, the interpolation's ends).
const LOG_CORRECTION: [u16; 130] = [
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944,
    3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714,
    4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533,
    5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568,
    5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944,
    4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848, 3759,
    3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090,
    1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0,
];

/// Bits of the fixed-point logs (Q16).
const Q: u32 = 16;
/// Bits of the segment index in [`LOG_CORRECTION`].
const SEGMENT_BITS: u32 = 7;
/// `ln 2` in Q16, rounded.
const LN_2: u64 = 45_426;

/// `SignalFilterBankLog`: for each channel `x` of `input` (uint32), `x << input_correction_bits`
/// (uint32, high bits lost) is `s`; the output (int16) is 0 when `s` is 0 or 1, otherwise
/// `ln(s) · output_scale` as [`log_scaled`] computes it, capped at 32,767.
///
/// `input_correction_bits` and `output_scale` are the flexbuffer options of those names
/// (ints, read as int32; TFLM uses the scale as uint32, so a negative one is 2³² plus it).
/// `output` holds at least the input's channels; elements past them are left as they are.
/// A correction outside 0..=31, a shift of a uint32 C does not define, is refused
/// ([`KernelError::Options`]).
pub(crate) fn filter_bank_log(
    input: &[u32],
    output_scale: i32,
    input_correction_bits: i32,
    output: &mut [i16],
) -> Result<(), KernelError> {
    let what = "filter bank log input_correction_bits outside 0..=31";
    let correction = shift_option(input_correction_bits, 32, what)?;
    let what = "filter bank log output is shorter than its input";
    holds(output.len(), input.len(), what)?;
    let scale = output_scale as u32;
    for (&x, y) in input.iter().zip(output) {
        let scaled = x << correction;
        *y = if scaled > 1 {
            // At most 32,767 after the cap: the conversion cannot fail.
            i16::try_from(log_scaled(scaled, scale).min(i16::MAX as u32)).unwrap_or(i16::MAX)
        } else {
            0
        };
    }
    Ok(())
}

/// `ln(x) · scale` for `x >= 2` as TFLM's `Log32` computes it: `log2(x)` in Q16 (the
/// integer part from the highest set bit, the fraction `f` interpolated linearly within its
/// segment of [`LOG_CORRECTION`] as `f + correction`), times `ln 2` in Q16 rounded to Q16,
/// then times `scale` in uint32 arithmetic (wrapping, as TFLM's does) rounded back from Q16.
fn log_scaled(x: u32, scale: u32) -> u32 {
    let integer = x.ilog2();
    let log2 = (integer << Q).wrapping_add(log2_fraction(x, integer));
    let half = 1_u32 << (Q - 1);
    // At most 45,426 · 2²¹ + 2¹⁵ < 2⁴⁸, and the result below 2³²: the conversion is exact.
    let ln = ((LN_2 * u64::from(log2) + u64::from(half)) >> Q) as u32;
    scale.wrapping_mul(ln).wrapping_add(half) >> Q
}

/// The fraction of `log2(x)` in Q16, for `x` whose highest set bit is `integer`: the bits
/// below it as a Q16 fraction `f` (shifted up or truncated), plus the correction at `f`'s
/// segment start and the correction's change across the segment times `f`'s offset in it
/// (Q16, rounded towards minus infinity).
fn log2_fraction(x: u32, integer: u32) -> u32 {
    let below = x - (1 << integer);
    let f = if integer < Q {
        below << (Q - integer)
    } else {
        below >> (integer - Q)
    };
    // f < 2¹⁶: the segment is below 128, and the offset below 512.
    let segment = (f >> (Q - SEGMENT_BITS)) as usize;
    let offset = (f & ((1 << (Q - SEGMENT_BITS)) - 1)) as i32;
    let start = i32::from(LOG_CORRECTION[segment]);
    let end = i32::from(LOG_CORRECTION[segment + 1]);
    let within = ((end - start) * offset) >> Q;
    // A non-negative sum: f + start ≥ 0 and |within| < 1.
    (f as i32 + start + within) as u32
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{goldens, outputs_match};
    use super::*;

    const GOLDENS: &[(&str, &str)] = &goldens![
        "fblog_typical",
        "fblog_corr0_scale32768",
        "fblog_corr31",
        "fblog_scale_wraps",
        "fblog_negative_scale",
    ];

    #[test]
    fn filter_bank_log_is_tflms() {
        outputs_match(GOLDENS, "SignalFilterBankLog", 0x5A5A_i16, |g| {
            let (scale, bits) = (g.opt("output_scale"), g.opt("input_correction_bits"));
            move |run, y| filter_bank_log(&run.input::<u32>("input"), scale, bits, y).unwrap()
        });
    }

    #[test]
    fn filter_bank_log_refuses_undefined_shifts() {
        let mut out = [0_i16; 3];
        for bits in [-1, 32] {
            assert!(matches!(
                filter_bank_log(&[4, 9], 1, bits, &mut out),
                Err(KernelError::Options { .. })
            ));
        }
        assert!(matches!(
            filter_bank_log(&[4, 9, 1, 1], 1, 0, &mut out),
            Err(KernelError::Shape { .. })
        ));
        // ln 2 = 0.693 in Q16 is 45,426; scale 1 << 16 keeps it in Q16, 1 << 10 in Q10.
        filter_bank_log(&[0, 1, 2], 1 << 10, 0, &mut out).unwrap();
        assert_eq!(out, [0, 0, 710]);
        // ln(2³² - 1) · 2¹¹ is past 32,767: capped.
        filter_bank_log(&[1, u32::MAX, 2], 1 << 11, 0, &mut out).unwrap();
        assert_eq!(out, [0, i16::MAX, 1420]);
    }
}
