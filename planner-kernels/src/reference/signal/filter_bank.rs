//! TFLM's `SignalFilterBank` (custom op): a mel filter bank over a uint32 energy spectrum,
//! with int16 weight tables, into uint64 channels.

use crate::reference::KernelError;

/// The five constant int16 tables of a `SignalFilterBank` (its inputs 1 to 5), as TFLM's
/// filter bank generator lays them out: `num_channels + 1` channels, channel `c` summing the
/// `channel_widths[c]` bins from `channel_frequency_starts[c]` with the weights (and
/// unweights) from `channel_weight_starts[c]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FilterBankTables<'a> {
    /// Input 1: each bin's weight in its channel.
    pub(crate) weights: &'a [i16],
    /// Input 2: each bin's weight in the next channel.
    pub(crate) unweights: &'a [i16],
    /// Input 3: each channel's first bin.
    pub(crate) channel_frequency_starts: &'a [i16],
    /// Input 4: each channel's first weight.
    pub(crate) channel_weight_starts: &'a [i16],
    /// Input 5: each channel's number of bins (not positive: none).
    pub(crate) channel_widths: &'a [i16],
}

/// `SignalFilterBank`: channel `c` (of `0..=num_channels`) is the sum of its bins `x` times
/// their weights, plus the sum of channel `c - 1`'s bins times their unweights; `output`
/// gets channels `1..=output.len()` (channel 0 only carries its unweighted sum over). TFLM
/// computes in uint64 with wrapping arithmetic and each int16 weight widened with its sign
/// (a negative weight is 2⁶⁴ plus it), which this does too.
///
/// `num_channels` is the flexbuffer option of that name (an int, read as int32). TFLM keeps
/// a persistent work area of `num_channels + 1` uint64 that each run overwrites whole
/// before reading, so it carries nothing across runs: this kernel needs no state.
///
/// Refused, where TFLM would read or write outside its tensors or work area: a negative
/// `num_channels` ([`KernelError::Options`]); an output longer than `num_channels`, a
/// channel table shorter than `num_channels + 1`, or a channel with a positive width whose
/// bins or weights start below 0 or end past the input or a weight table
/// ([`KernelError::Shape`]).
pub(crate) fn filter_bank(
    input: &[u32],
    tables: &FilterBankTables<'_>,
    num_channels: i32,
    output: &mut [u64],
) -> Result<(), KernelError> {
    let channels = usize::try_from(num_channels)
        .ok()
        .and_then(|n| n.checked_add(1))
        .ok_or(KernelError::Options {
            what: "filter bank num_channels is negative",
        })?;
    if output.len() >= channels {
        return Err(KernelError::Shape {
            what: "filter bank output is longer than num_channels",
        });
    }
    let ranges = channel_ranges(input.len(), tables, channels)?;
    let mut carried = 0_u64;
    let mut outputs = output.iter_mut();
    for (c, (bins, first_weight)) in ranges.enumerate() {
        let mut weighted = carried;
        let mut unweighted = 0_u64;
        for (k, &x) in input[bins].iter().enumerate() {
            let w = first_weight + k;
            weighted = weighted.wrapping_add(widen(tables.weights[w]).wrapping_mul(u64::from(x)));
            unweighted =
                unweighted.wrapping_add(widen(tables.unweights[w]).wrapping_mul(u64::from(x)));
        }
        carried = unweighted;
        if c > 0 {
            match outputs.next() {
                Some(y) => *y = weighted,
                None => break,
            }
        }
    }
    Ok(())
}

/// An int16 weight as TFLM multiplies it with a uint64: sign-extended, modulo 2⁶⁴.
fn widen(w: i16) -> u64 {
    i64::from(w) as u64
}

/// The bins (a range of the input) and first weight of each of the `channels` channels,
/// after checking every channel's reads fit the input and weight tables.
fn channel_ranges<'t>(
    bins: usize,
    tables: &'t FilterBankTables<'_>,
    channels: usize,
) -> Result<impl Iterator<Item = (core::ops::Range<usize>, usize)> + 't, KernelError> {
    let short = |t: &[i16]| t.len() < channels;
    if short(tables.channel_frequency_starts)
        || short(tables.channel_weight_starts)
        || short(tables.channel_widths)
    {
        return Err(KernelError::Shape {
            what: "filter bank channel table shorter than num_channels + 1",
        });
    }
    let weights = tables.weights.len().min(tables.unweights.len());
    let range = move |c: usize| {
        let width = usize::try_from(tables.channel_widths[c]).unwrap_or(0);
        if width == 0 {
            return Some((0..0, 0));
        }
        let start = usize::try_from(tables.channel_frequency_starts[c]).ok()?;
        let first_weight = usize::try_from(tables.channel_weight_starts[c]).ok()?;
        (start + width <= bins && first_weight + width <= weights)
            .then_some((start..start + width, first_weight))
    };
    if (0..channels).any(|c| range(c).is_none()) {
        return Err(KernelError::Shape {
            what: "filter bank channel reads outside the input or weight tables",
        });
    }
    Ok((0..channels).filter_map(range))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{goldens, outputs_match};
    use super::*;
    use std::vec::Vec;

    const GOLDENS: &[(&str, &str)] = &goldens![
        "filter_bank_mel",
        "filter_bank_signed_wraps",
        "filter_bank_short_output",
        "filter_bank_max",
    ];

    #[test]
    fn filter_bank_is_tflms() {
        outputs_match(GOLDENS, "SignalFilterBank", 0x5A5A_u64, |g| {
            let tables: [Vec<i16>; 5] = [
                "weights",
                "unweights",
                "channel_frequency_starts",
                "channel_weight_starts",
                "channel_widths",
            ]
            .map(|name| g.konst(name));
            let channels: i32 = g.opt("num_channels");
            move |run, y| {
                let [w, u, f, s, n] = &tables;
                let tables = FilterBankTables {
                    weights: w,
                    unweights: u,
                    channel_frequency_starts: f,
                    channel_weight_starts: s,
                    channel_widths: n,
                };
                filter_bank(&run.input::<u32>("input"), &tables, channels, y).unwrap();
            }
        });
    }

    #[test]
    fn filter_bank_refuses_reads_outside_its_tables() {
        let w = [1_i16, 2, 3, -1];
        let run = |(f, s, n): (&[i16], &[i16], &[i16]), channels, out: &mut [u64]| {
            let t = FilterBankTables {
                weights: &w,
                unweights: &w,
                channel_frequency_starts: f,
                channel_weight_starts: s,
                channel_widths: n,
            };
            filter_bank(&[10, 20, 30], &t, channels, out)
        };
        let good: (&[i16], &[i16], &[i16]) = (&[0, 1, -9], &[0, 1, -9], &[1, 2, 0]);
        let mut out = [0_u64; 2];
        run(good, 2, &mut out).unwrap();
        // Channel 1: 20·2 + 30·3 plus channel 0's 10·1; channel 2: channel 1's unweights.
        assert_eq!(out, [140, 130]);
        let shape = |r: Result<(), KernelError>| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(run(good, 1, &mut out)));
        assert!(shape(run(good, 3, &mut [0; 2])));
        // Channel 1's bins past the input, its weights past the tables, its bins below 0.
        for (f, s) in [
            ([0, 2, 0], [0, 1, 0]),
            ([0, 1, 0], [0, 3, 0]),
            ([0, -1, 0], [0, 1, 0]),
        ] {
            assert!(shape(run((&f, &s, &[1, 2, 0]), 2, &mut out)));
        }
        assert!(matches!(
            run(good, -1, &mut []),
            Err(KernelError::Options { .. })
        ));
        let mut one = [0_u64; 1];
        run((&[0, 0], &[3, 3], &[1, 1]), 1, &mut one).unwrap();
        // Weight -1 widened to 2⁶⁴ - 1: 10·(2⁶⁴ - 1) + 10·(2⁶⁴ - 1) wraps to -20.
        assert_eq!(one, [20_u64.wrapping_neg()]);
    }
}
