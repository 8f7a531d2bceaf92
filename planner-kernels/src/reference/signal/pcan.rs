//! TFLM's `SignalPCAN` (custom op): per-channel automatic gain control (PCAN) of uint32
//! filter bank channels by a gain looked up from each channel's noise estimate (an int16
//! piecewise-quadratic table), then a compressing "shrink"; uint32 in, uint32 out.

use super::framer::shift_option;
use crate::reference::KernelError;

/// Bits of the signal-to-noise value the shrink reads (TFLM's `kPcanSnrBits`).
const SNR_BITS: u32 = 12;
/// Bits of the shrink's output fraction (TFLM's `kPcanOutputBits`).
const OUTPUT_BITS: u32 = 6;

/// `SignalPCAN`: for each channel, the gain `g` is the table's value at the channel's noise
/// estimate (see [`gain`]; an int16 taken as uint32, so a negative gain is 2³² plus it), the
/// signal-to-noise value `(input · g) >> snr_shift` in uint64 kept as uint32, and the output
/// its [`shrink`].
///
/// Inputs: the channels `input` (uint32), `noise_estimate` (uint32, at least the input's
/// channels; the spectral subtraction's output 1) and the gain table `gain_lut` (int16;
/// TFLM's generator makes 125 entries: the gains at 0, 1 and 2, then four slots per octave
/// of the estimate, three used, octave `b` (bit length) from entry `4b - 6`). `snr_shift` is
/// the flexbuffer option of that name (an int, read as int32). `output` has the input's
/// length (TFLM copies the input into it first).
///
/// Refused, where TFLM would read outside its tensors or shift by an amount C does not
/// define: a `snr_shift` outside 0..=63 ([`KernelError::Options`]); an output not of the
/// input's length, a short noise estimate, or a table too short for an estimate's octave
/// ([`KernelError::Shape`]), checked before anything is written.
pub(crate) fn pcan(
    input: &[u32],
    noise_estimate: &[u32],
    gain_lut: &[i16],
    snr_shift: i32,
    output: &mut [u32],
) -> Result<(), KernelError> {
    let shift = shift_option(snr_shift, 64, "pcan snr_shift outside 0..=63")?;
    if output.len() != input.len() || noise_estimate.len() < input.len() {
        return Err(KernelError::Shape {
            what: "pcan output not the input's length, or noise estimate shorter",
        });
    }
    let noise = &noise_estimate[..input.len()];
    if noise.iter().any(|&n| last_entry(n) >= gain_lut.len()) {
        return Err(KernelError::Shape {
            what: "pcan gain table too short for a noise estimate",
        });
    }
    for ((&x, &n), y) in input.iter().zip(noise).zip(output) {
        let g = gain(n, gain_lut) as i32 as u32;
        let snr = ((u64::from(x) * u64::from(g)) >> shift) as u32;
        *y = shrink(snr);
    }
    Ok(())
}

/// The octave of `n` (its bit length, 2 to 32, for `n > 2`) and where its three table
/// entries start.
fn octave(n: u32) -> (u32, usize) {
    let bits = u32::BITS - n.leading_zeros();
    (bits, 4 * bits as usize - 6)
}

/// The last table entry [`gain`] reads for noise estimate `n`.
fn last_entry(n: u32) -> usize {
    if n <= 2 { n as usize } else { octave(n).1 + 2 }
}

/// The gain at noise estimate `n` as TFLM's `WideDynamicFunction` computes it: entry `n`
/// for `n <= 2`; otherwise, with the octave's entries `c0, c1, c2` and `f` the 10 bits
/// below `n`'s highest set bit (shifted up for short `n`), `c0 + round((((c2 · f) >> 5) +
/// (c1 << 5)) · f / 2¹⁵)` in int32 (which holds every product: at most 2,096,064 · 1,023 <
/// 2³¹), the sum kept as int16 (its low 16 bits). `lut` is long enough ([`last_entry`]).
fn gain(n: u32, lut: &[i16]) -> i16 {
    if n <= 2 {
        return lut[n as usize];
    }
    let (bits, base) = octave(n);
    let f = if bits < 11 {
        n << (11 - bits)
    } else {
        n >> (bits - 11)
    };
    let f = (f & 0x3FF) as i32;
    let (c0, c1, c2) = (
        i32::from(lut[base]),
        i32::from(lut[base + 1]),
        i32::from(lut[base + 2]),
    );
    let slope = ((c2 * f) >> 5).wrapping_add(c1 << 5);
    let curve = slope.wrapping_mul(f).wrapping_add(1 << 14) >> 15;
    curve.wrapping_add(c0) as i16
}

/// TFLM's `PcanShrink`: for a signal-to-noise value `x` (Q12), `x² >> 20` below 2 (Q12),
/// `(x >> 6) - 64` from 2 up: a Q6 output, quadratic near zero, linear above.
fn shrink(x: u32) -> u32 {
    if x < 2 << SNR_BITS {
        (x * x) >> (2 + 2 * SNR_BITS - OUTPUT_BITS)
    } else {
        (x >> (SNR_BITS - OUTPUT_BITS)) - (1 << OUTPUT_BITS)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{goldens, outputs_match};
    use super::*;
    use std::vec::Vec;

    const GOLDENS: &[(&str, &str)] = &goldens![
        "pcan_typical",
        "pcan_random_lut_shift0",
        "pcan_shift20",
        "pcan_odd_shift12",
        "pcan_interpolation_wraps",
    ];

    #[test]
    fn pcan_is_tflms() {
        outputs_match(GOLDENS, "SignalPCAN", 0x5A5A_u32, |g| {
            let (lut, shift): (Vec<i16>, i32) = (g.konst("gain_lut"), g.opt("snr_shift"));
            move |run, y| {
                let (x, noise): (Vec<u32>, Vec<u32>) =
                    (run.input("input"), run.input("noise_estimate"));
                pcan(&x, &noise, &lut, shift, y).unwrap();
            }
        });
    }

    #[test]
    fn pcan_refuses_reads_outside_its_tables() {
        let lut = [100_i16; 10];
        let mut out = [9_u32; 2];
        for shift in [-1, 64] {
            assert!(matches!(
                pcan(&[1, 2], &[1, 2], &lut, shift, &mut out),
                Err(KernelError::Options { .. })
            ));
        }
        let shape = |r| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(pcan(&[1, 2], &[1], &lut, 0, &mut out)));
        assert!(shape(pcan(&[1], &[1], &lut, 0, &mut out)));
        // 16 is in octave 5, entries 14 to 16: past a table of 10.
        assert!(shape(pcan(&[1, 2], &[1, 16], &lut, 0, &mut out)));
        assert_eq!(out, [9, 9]);
        // Estimate 7, octave 3 (entries 6 to 8): f = (7 << 8) & 0x3FF = 768, gain 100 +
        // round(((100 · 768 >> 5) + 100 · 32) · 768 / 2¹⁵) = 100 + 131; snr 50 · 231 = 11,550
        // ≥ 2 · 2¹², shrink (11,550 >> 6) - 64 = 116. Estimate 2: entry 2, gain 100, snr
        // 4,000, shrink 4,000² >> 20 = 15.
        pcan(&[50, 40], &[7, 2], &lut, 0, &mut out).unwrap();
        assert_eq!(out, [116, 15]);
    }
}
