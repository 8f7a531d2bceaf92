//! TFLM's `SignalFilterBankSpectralSubtraction` (custom op): noise reduction of uint32 filter
//! bank channels by a running per-channel noise estimate (state kept across runs), with a
//! floor of the signal left; uint32 in, uint32 out, and the estimate as a second output.

use super::framer::{at_least, checked};
use crate::reference::KernelError;
use planner_rt::options::SignalSpectralSubtractionOptions;

#[cfg(test)] // The plan's rule is `planner_rt::op_kinds::state`; a test checks they agree.
/// The state's length, in uint32 elements: one noise estimate per channel,
/// `num_channels` (0 for a negative count, which [`spectral_subtraction`] refuses).
pub(crate) fn spectral_subtraction_state_len(options: &SignalSpectralSubtractionOptions) -> usize {
    usize::try_from(options.num_channels).unwrap_or(0)
}

/// `SignalFilterBankSpectralSubtraction`: for each channel `i < num_channels`, with `s` the
/// input shifted left by `smoothing_bits` (uint32, high bits lost) and the even or odd
/// channel's weights: the noise estimate `state[i]` becomes `(s · smoothing + state[i] ·
/// one_minus_smoothing) >> spectral_subtraction_bits` (uint64, wrapping, kept as uint32);
/// an estimate above `s` counts as `s` (and is stored so when `clamping`); `output[i]` is
/// `(s - estimate) >> smoothing_bits`, at least `(input · min_signal_remaining) >>
/// spectral_subtraction_bits`. Then `noise_estimate` (the op's output 1) gets a copy of the
/// first `noise_estimate.len()` estimates.
///
/// `state` is [`spectral_subtraction_state_len`] uint32, zero before the first run (TFLM
/// zeroes it when it prepares the op and when the interpreter is reset) and kept by the
/// caller between runs. `input` and `output` hold at least `num_channels` elements; output
/// elements past them are left as they are. Refused, where TFLM would read or write
/// outside its tensors or buffer, or shift by an amount C does not define: a negative
/// `num_channels`, `smoothing_bits` outside 0..=31 or `spectral_subtraction_bits` outside
/// 0..=63 ([`KernelError::Options`]); a short input, output or state, or a
/// `noise_estimate` longer than `num_channels` ([`KernelError::Shape`]).
pub(crate) fn spectral_subtraction(
    options: &SignalSpectralSubtractionOptions,
    input: &[u32],
    output: &mut [u32],
    noise_estimate: &mut [u32],
    state: &mut [u32],
) -> Result<(), KernelError> {
    let what = "spectral subtraction num_channels is negative";
    let channels = at_least(options.num_channels, 0, what)?;
    let below = |value: i32, bits: u32, what| {
        checked::<u32>(value, |b| *b < bits).ok_or(KernelError::Options { what })
    };
    let what = "spectral subtraction smoothing_bits outside 0..=31";
    let smoothing_bits = below(options.smoothing_bits, 32, what)?;
    let what = "spectral subtraction spectral_subtraction_bits outside 0..=63";
    let bits = below(options.spectral_subtraction_bits, 64, what)?;
    if input.len() < channels || output.len() < channels || state.len() < channels {
        return Err(KernelError::Shape {
            what: "spectral subtraction input, output or state shorter than num_channels",
        });
    }
    if noise_estimate.len() > channels {
        return Err(KernelError::Shape {
            what: "spectral subtraction noise estimate longer than num_channels",
        });
    }
    let weight = |w: i32| u64::from(w as u32);
    let even = (
        weight(options.smoothing),
        weight(options.one_minus_smoothing),
    );
    let odd = (
        weight(options.alternate_smoothing),
        weight(options.alternate_one_minus_smoothing),
    );
    let floor_fraction = weight(options.min_signal_remaining);
    let lanes = input.iter().zip(output.iter_mut()).zip(state.iter_mut());
    for (i, ((&x, y), estimate)) in lanes.take(channels).enumerate() {
        let (new, old) = if i % 2 == 0 { even } else { odd };
        let signal = x << smoothing_bits;
        let sum = (u64::from(signal).wrapping_mul(new))
            .wrapping_add(u64::from(*estimate).wrapping_mul(old));
        // TFLM stores the shifted sum in a uint32: the high bits are dropped.
        *estimate = (sum >> bits) as u32;
        let mut noise = *estimate;
        if noise > signal {
            noise = signal;
            if options.clamping {
                *estimate = signal;
            }
        }
        let floor = ((u64::from(x) * floor_fraction) >> bits) as u32;
        *y = ((signal - noise) >> smoothing_bits).max(floor);
    }
    noise_estimate.copy_from_slice(&state[..noise_estimate.len()]);
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{Golden, each_run, goldens};
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const GOLDENS: &[(&str, &str)] = &goldens![
        "specsub_typical",
        "specsub_clamping_alt_odd",
        "specsub_wraps",
        "specsub_bits0",
        "specsub_fewer_channels",
        "specsub_sum_wraps",
    ];

    fn options(g: &Golden) -> SignalSpectralSubtractionOptions {
        SignalSpectralSubtractionOptions {
            num_channels: g.opt("num_channels"),
            smoothing: g.opt("smoothing"),
            one_minus_smoothing: g.opt("one_minus_smoothing"),
            alternate_smoothing: g.opt("alternate_smoothing"),
            alternate_one_minus_smoothing: g.opt("alternate_one_minus_smoothing"),
            min_signal_remaining: g.opt("min_signal_remaining"),
            smoothing_bits: g.opt("smoothing_bits"),
            spectral_subtraction_bits: g.opt("spectral_subtraction_bits"),
            clamping: g.opt::<u8>("clamping") != 0,
        }
    }

    /// Runs every golden's runs in order on one state, as TFLM's interpreter did.
    #[test]
    fn spectral_subtraction_is_tflms() {
        const UNTOUCHED: u32 = 0xDEAD_BEEF;
        each_run(GOLDENS, "SignalFilterBankSpectralSubtraction", |g| {
            let o = options(g);
            let channels = spectral_subtraction_state_len(&o);
            let mut state = vec![0_u32; channels];
            move |run| {
                let input: Vec<u32> = run.input("input");
                let expected: Vec<u32> = run.output("output");
                let mut output = vec![UNTOUCHED; expected.len()];
                let mut noise = vec![0_u32; channels];
                spectral_subtraction(&o, &input, &mut output, &mut noise, &mut state).unwrap();
                assert_eq!(output[..channels], expected[..channels]);
                assert!(output[channels..].iter().all(|&v| v == UNTOUCHED));
                assert_eq!(noise, run.output::<u32>("noise_estimate"));
                assert_eq!(state, noise);
            }
        });
    }

    #[test]
    fn spectral_subtraction_refuses_what_tflm_cannot_run() {
        let o = SignalSpectralSubtractionOptions {
            num_channels: 2,
            smoothing: 1 << 13,
            one_minus_smoothing: 1 << 13,
            alternate_smoothing: 1 << 14,
            alternate_one_minus_smoothing: 0,
            min_signal_remaining: 1 << 12,
            smoothing_bits: 2,
            spectral_subtraction_bits: 14,
            clamping: false,
        };
        let (mut out, mut noise, mut state) = ([0_u32; 2], [0_u32; 2], [0_u32; 2]);
        let mut run = |o: &SignalSpectralSubtractionOptions, input: &[u32], noise: &mut [u32]| {
            spectral_subtraction(o, input, &mut out, noise, &mut state)
        };
        for bad in [
            SignalSpectralSubtractionOptions {
                num_channels: -1,
                ..o
            },
            SignalSpectralSubtractionOptions {
                smoothing_bits: 32,
                ..o
            },
            SignalSpectralSubtractionOptions {
                smoothing_bits: -1,
                ..o
            },
            SignalSpectralSubtractionOptions {
                spectral_subtraction_bits: 64,
                ..o
            },
        ] {
            assert!(matches!(
                run(&bad, &[1, 2], &mut noise),
                Err(KernelError::Options { .. })
            ));
        }
        let shape = |r| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(run(&o, &[1], &mut noise)));
        assert!(shape(run(&o, &[1, 2], &mut [0; 3])));
        assert!(shape(run(
            &SignalSpectralSubtractionOptions {
                num_channels: 3,
                ..o
            },
            &[1, 2, 3],
            &mut []
        )));
        // Even channel: estimate (400 · 2¹³) >> 14 = 200, output (400 - 200) >> 2 = 50;
        // odd: the whole signal, 800, output the floor 200 · 2¹² >> 14 = 50.
        run(&o, &[100, 200], &mut noise).unwrap();
        assert_eq!((out, noise), ([50, 50], [200, 800]));
    }
}
