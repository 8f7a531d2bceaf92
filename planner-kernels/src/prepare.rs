//! The per-op constants of [`Optimized`](crate::Optimized)'s int8 `CONV_2D`,
//! `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED`, computed by one function for the kernel (on
//! every call, a bounded chunk of output channels at a time) and for a build step that
//! stores them in the model (as the op's input 3), so the two can never disagree.
//!
//! Row 0 is the *effective bias* of each output channel `c`, `bias[c] - x_zero · Σ w[c]`
//! (wrapping `i32`: the accumulator TFLite computes, `Σ (x - x_zero) · w + bias`, equals
//! `Σ x · w + bias - x_zero · Σ w` modulo 2^32, so the kernel's inner loop is a plain int8
//! dot product); row 1 the Q31 multiplier and row 2 the shift of `input_scale ·
//! filter_scale[c] / output_scale` as [`quantize_multiplier`] gives them (the shift
//! positive to the left, TFLite's convention).
//!
//! `no_std`, no allocation; errors instead of panics.

use crate::reference::KernelError;
use crate::{QuantizedMultiplier, quantize_multiplier};

/// How many rows [`requant_v1`] writes: effective bias, multiplier, shift.
pub const REQUANT_V1_ROWS: usize = 3;

/// Where output channel `c`'s weights lie in a filter of `channels` output channels and
/// `k = filter.len() / channels` weights per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterLayout {
    /// `CONV_2D` (`[c_out, fh, fw, c_in / groups]`) and `FULLY_CONNECTED` (`[units,
    /// depth]`): channel `c`'s weights are `filter[c·k..(c + 1)·k]`.
    ChannelMajor,
    /// `DEPTHWISE_CONV_2D` (`[1, fh, fw, c_out]`): channel `c`'s weights are `filter[t·c_out
    /// + c]` for each tap `t` in `0..k`.
    ChannelMinor,
}

/// What [`requant_v1`] needs of an int8 op: its filter, bias and quantisation.
#[derive(Debug, Clone, Copy)]
pub struct RequantInputs<'a> {
    /// The filter's elements (input 1).
    pub filter: &'a [i8],
    /// How the filter's elements are laid out by output channel.
    pub layout: FilterLayout,
    /// Output channels (`c_out`, or a fully-connected layer's units).
    pub channels: usize,
    /// The int32 bias (input 2), one per output channel, when the op has one.
    pub bias: Option<&'a [i32]>,
    /// The input's scale.
    pub input_scale: f32,
    /// The input's zero point.
    pub input_zero: i32,
    /// The filter's scales: one (per-tensor) or one per output channel (a channel past the
    /// end takes the last; none gives a zero multiplier, as the reference kernels do for a
    /// filter without parameters).
    pub filter_scales: &'a [f32],
    /// The output's scale.
    pub output_scale: f32,
}

/// The three rows of [`requant_v1`] for a run of consecutive output channels, one element
/// per channel in each.
#[derive(Debug)]
pub struct RequantRows<'o> {
    /// Effective biases, `bias[c] - input_zero · Σ w[c]` (wrapping).
    pub bias: &'o mut [i32],
    /// Q31 multipliers.
    pub mult: &'o mut [i32],
    /// Shifts (positive: left).
    pub shift: &'o mut [i32],
}

impl RequantInputs<'_> {
    /// Weights per output channel, checking the filter and bias lengths against the
    /// channels.
    fn per_channel(&self) -> Result<usize, KernelError> {
        if self.channels == 0 && self.filter.is_empty() && self.bias.is_none_or(<[_]>::is_empty) {
            return Ok(0);
        }
        let Some(k) = self
            .filter
            .len()
            .checked_div(self.channels)
            .filter(|k| k * self.channels == self.filter.len())
        else {
            return Err(KernelError::Shape {
                what: "the filter's length is not a multiple of its output channels",
            });
        };
        if self.bias.is_some_and(|b| b.len() != self.channels) {
            return Err(KernelError::Shape {
                what: "bias length differs from the output channels",
            });
        }
        Ok(k)
    }

    /// The multiplier of output channel `c` (the reference kernels' `channel_multiplier`).
    pub fn multiplier(&self, c: usize) -> QuantizedMultiplier {
        let last = self.filter_scales.len().checked_sub(1);
        let filter_scale = last
            .and_then(|last| self.filter_scales.get(c.min(last)))
            .copied()
            .unwrap_or(0.0);
        quantize_multiplier(
            f64::from(self.input_scale) * f64::from(filter_scale) / f64::from(self.output_scale),
        )
    }
}

/// Writes the requantisation constants of output channels `first..first + n` into `rows`
/// (`n` the length of each row, which must all be equal and stay within the channels).
pub fn requant_v1_channels(
    p: &RequantInputs<'_>,
    first: usize,
    rows: RequantRows<'_>,
) -> Result<(), KernelError> {
    let k = p.per_channel()?;
    let n = rows.bias.len();
    if rows.mult.len() != n
        || rows.shift.len() != n
        || first.checked_add(n).is_none_or(|end| end > p.channels)
    {
        return Err(KernelError::Shape {
            what: "requantisation rows of different lengths, or past the output channels",
        });
    }
    let zero = p.input_zero;
    let rows = rows
        .bias
        .iter_mut()
        .zip(rows.mult.iter_mut())
        .zip(rows.shift.iter_mut());
    for (i, ((bias, mult), shift)) in rows.enumerate() {
        let c = first + i;
        let sum = match p.layout {
            FilterLayout::ChannelMajor => p
                .filter
                .get(c * k..(c + 1) * k)
                .unwrap_or_default()
                .iter()
                .fold(0i32, |s, &w| s.wrapping_add(i32::from(w))),
            FilterLayout::ChannelMinor => p
                .filter
                .get(c..)
                .unwrap_or_default()
                .iter()
                .step_by(p.channels)
                .fold(0i32, |s, &w| s.wrapping_add(i32::from(w))),
        };
        let b = p.bias.and_then(|b| b.get(c)).copied().unwrap_or(0);
        *bias = b.wrapping_sub(zero.wrapping_mul(sum));
        let m = p.multiplier(c);
        *mult = m.multiplier;
        *shift = m.shift;
    }
    Ok(())
}

/// The requantisation constants of every output channel, as an int32 `[3, channels]`
/// tensor (row-major): row 0 the effective biases, row 1 the multipliers, row 2 the shifts
/// (module docs). A build step stores `out` as the op's input 3; `out` must hold exactly `3
/// · channels` elements.
pub fn requant_v1(p: &RequantInputs<'_>, out: &mut [i32]) -> Result<(), KernelError> {
    if Some(out.len()) != p.channels.checked_mul(REQUANT_V1_ROWS) {
        return Err(KernelError::Shape {
            what: "the requantisation tensor does not hold 3 rows of one element per output channel",
        });
    }
    let (bias, rest) = out.split_at_mut(p.channels);
    let (mult, shift) = rest.split_at_mut(p.channels);
    requant_v1_channels(p, 0, RequantRows { bias, mult, shift })
}
