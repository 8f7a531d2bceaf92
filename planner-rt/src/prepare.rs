//! What a kernel set that reads prepared constants gets from the build, computed once: the
//! one definition both sides use, so the planner's constant and a kernel's own computation
//! can never disagree.
//!
//! With `[kernels] set = "optimized"` in the manifest, the planner adds to every int8
//! `CONV_2D`, `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED` op (int8 input and output, an int8
//! constant filter with zero filter zero points, an int32 constant bias or none) a constant
//! int32 tensor of shape `[3, c_out]` as the op's input 3, laid out as [`requant_v1`] writes
//! it (layout `requant-v1` in the plan file):
//!
//! - row 0, the effective bias of each output channel `c`: `bias[c] - zx · Σw[c]`, wrapping
//!   in `i32` (`zx` the input's zero point, `Σw[c]` the sum of the filter elements of
//!   channel `c`, [`channel_sum`]), so that `acc = Σ x·w + row0[c]` is the accumulator a
//!   kernel computes from `Σ (x - zx)·w + bias[c]`;
//! - row 1, the Q31 multiplier of `input_scale · filter_scale[c] / output_scale`, and row 2
//!   its shift ([`channel_multiplier`], [`quantize_multiplier`]).
//!
//! A kernel set that reads the layout declares it with
//! [`kernel::RequantV1`](crate::kernel::RequantV1); a kernel that computes the same values
//! per call (for an op the planner did not prepare) calls [`requant_v1_channels`], a bounded
//! run of channels at a time.
//!
//! `no_std`, no allocation: the caller owns every buffer.

/// A real multiplier as TFLite stores it: `real ≈ multiplier · 2^(shift − 31)`, with
/// `multiplier` in `[2^30, 2^31)` (or 0 for a zero multiplier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantizedMultiplier {
    /// Q31 mantissa.
    pub multiplier: i32,
    /// Power-of-two exponent; positive shifts left.
    pub shift: i32,
}

/// The zero multiplier.
const ZERO: QuantizedMultiplier = QuantizedMultiplier {
    multiplier: 0,
    shift: 0,
};

/// Splits `real` (finite, non-negative) into a Q31 mantissa and an exponent, rounding the
/// mantissa half away from zero. Values too small to represent (below 2^-31 after
/// normalising) become zero; negative or non-finite values also give zero.
pub fn quantize_multiplier(real: f64) -> QuantizedMultiplier {
    if !(real.is_finite() && real > 0.0) {
        return ZERO;
    }
    // In integers, from the bits (kernels call this per op, and cores without a
    // double-precision unit would emulate every `f64` step): `real = m · 2^(e - 1075)`
    // with `m` the 53-bit significand, so the mantissa in `[0.5, 1)` is `m / 2^53` and the
    // Q31 value rounded half away from zero is `(m + 2^21) >> 22` (positive: half up).
    let bits = real.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    if exponent == 0 {
        // Subnormal: far below 2^-31.
        return ZERO;
    }
    let significand = (bits & ((1 << 52) - 1)) | (1 << 52);
    q31((significand + (1 << 21)) >> 22, exponent - 1022)
}

/// The multiplier of the rounded Q31 mantissa `q` (in `[2^30, 2^31]`) and `shift`: halved
/// with the shift one higher when the rounding carried to `2^31`, zero when the shift is
/// below -31.
fn q31(q: u64, shift: i32) -> QuantizedMultiplier {
    let (q, shift) = if q == 1 << 31 {
        (q >> 1, shift + 1)
    } else {
        (q, shift)
    };
    if shift < -31 {
        return ZERO;
    }
    QuantizedMultiplier {
        multiplier: q as i32,
        shift,
    }
}

/// The multiplier of output channel `c`: `input_scale · filter_scale / output_scale` in
/// `f64` from the `f32` scales, where `filter_scale` is `filter_scales[c]` (per-channel
/// quantisation), the last scale when `c` is past the end (one scale: per-tensor), or 0
/// when there is none.
pub fn channel_multiplier(
    input_scale: f32,
    filter_scales: &[f32],
    output_scale: f32,
    c: usize,
) -> QuantizedMultiplier {
    let filter_scale = filter_scales
        .get(c)
        .or(filter_scales.last())
        .copied()
        .unwrap_or(0.0);
    quantize_multiplier(f64::from(input_scale) * f64::from(filter_scale) / f64::from(output_scale))
}

/// Where a filter keeps the elements of one output channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterLayout {
    /// Output channel first: row `c` of `[c_out, ...]` (`CONV_2D`'s `[c_out, fh, fw, c_in /
    /// groups]`, `FULLY_CONNECTED`'s `[c_out, k]`).
    ChannelFirst,
    /// Output channel last: element `c` of every tap of `[1, fh, fw, c_out]`
    /// (`DEPTHWISE_CONV_2D`).
    ChannelLast,
}

/// What the `requant-v1` constants of one op are computed from.
#[derive(Debug, Clone, Copy)]
pub struct RequantInputs<'a> {
    /// The int8 filter, all of it.
    pub filter: &'a [i8],
    /// How the filter orders its output channels.
    pub layout: FilterLayout,
    /// Output channels (`c_out`, or a fully-connected layer's units); the filter holds a
    /// whole number of elements per channel (none is allowed: every sum is then 0).
    pub channels: usize,
    /// The int32 bias, one per output channel; `None` for an op without one (a zero bias).
    pub bias: Option<&'a [i32]>,
    /// The input's scale.
    pub input_scale: f32,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The filter's scales: one per output channel, or one for all (none: a zero
    /// multiplier, as the reference kernels give a filter without parameters).
    pub filter_scales: &'a [f32],
    /// The output's scale.
    pub output_scale: f32,
}

impl RequantInputs<'_> {
    /// Checks the filter and the bias against the channels: `Ok` when [`requant_v1`] and
    /// [`requant_v1_channel`] can compute every channel.
    pub fn check(&self) -> Result<(), PrepareError> {
        let channels = self.channels;
        let whole = match channels {
            0 => self.filter.is_empty(),
            c => self.filter.len().is_multiple_of(c),
        };
        if !whole {
            return Err(PrepareError::Filter {
                len: self.filter.len(),
                channels,
            });
        }
        if let Some(b) = self.bias
            && b.len() != channels
        {
            return Err(PrepareError::Bias {
                len: b.len(),
                channels,
            });
        }
        Ok(())
    }

    /// The multiplier of output channel `c` ([`channel_multiplier`]).
    pub fn multiplier(&self, c: usize) -> QuantizedMultiplier {
        channel_multiplier(self.input_scale, self.filter_scales, self.output_scale, c)
    }
}

/// Why [`requant_v1`] or [`requant_v1_channel`] could not compute the constants: the buffers
/// do not fit together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrepareError {
    /// The output buffer is not three rows of one element per output channel.
    Output {
        /// Elements in the output buffer.
        len: usize,
        /// Output channels.
        channels: usize,
    },
    /// The filter's length is not a multiple of the output channels.
    Filter {
        /// Elements in the filter.
        len: usize,
        /// Output channels.
        channels: usize,
    },
    /// The bias is not one element per output channel.
    Bias {
        /// Elements in the bias.
        len: usize,
        /// Output channels.
        channels: usize,
    },
    /// The channels asked for are not all below the output channels, or the rows given
    /// for them differ in length.
    Channel {
        /// The first channel asked for.
        channel: usize,
        /// Output channels.
        channels: usize,
    },
}

impl core::fmt::Display for PrepareError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            PrepareError::Output { len, channels } => write!(
                f,
                "the requant-v1 buffer has {len} elements, not three rows of one per each of {channels} output channels"
            ),
            PrepareError::Filter { len, channels } => write!(
                f,
                "the filter has {len} elements, not a whole number per each of {channels} output channels"
            ),
            PrepareError::Bias { len, channels } => write!(
                f,
                "the bias has {len} elements, not one per each of {channels} output channels"
            ),
            PrepareError::Channel { channel, channels } => {
                write!(
                    f,
                    "channels from {channel} are past the {channels} output channels, or their rows differ in length"
                )
            }
        }
    }
}

/// The sum of the filter elements of output channel `c` of `channels`, wrapping in `i32`.
pub fn channel_sum(
    filter: &[i8],
    layout: FilterLayout,
    channels: usize,
    c: usize,
) -> Result<i32, PrepareError> {
    if c >= channels {
        return Err(PrepareError::Channel {
            channel: c,
            channels,
        });
    }
    if !filter.len().is_multiple_of(channels) {
        return Err(PrepareError::Filter {
            len: filter.len(),
            channels,
        });
    }
    let per_channel = filter.len() / channels;
    let add = |sum: i32, w: &i8| sum.wrapping_add(i32::from(*w));
    Ok(match layout {
        FilterLayout::ChannelFirst => filter
            .get(c * per_channel..(c + 1) * per_channel)
            .map_or(0, |row| row.iter().fold(0, add)),
        FilterLayout::ChannelLast => filter.iter().skip(c).step_by(channels).fold(0, add),
    })
}

/// The `requant-v1` column of output channel `c`: `[effective bias, multiplier, shift]`
/// (see the [module](self) docs).
pub fn requant_v1_channel(p: &RequantInputs<'_>, c: usize) -> Result<[i32; 3], PrepareError> {
    p.check()?;
    column(p, c)
}

/// [`requant_v1_channel`] of inputs [`RequantInputs::check`] accepted.
fn column(p: &RequantInputs<'_>, c: usize) -> Result<[i32; 3], PrepareError> {
    let sum = channel_sum(p.filter, p.layout, p.channels, c)?;
    let bias = p.bias.and_then(|b| b.get(c)).copied().unwrap_or(0);
    let m = p.multiplier(c);
    Ok([
        bias.wrapping_sub(p.input_zero_point.wrapping_mul(sum)),
        m.multiplier,
        m.shift,
    ])
}

/// The three rows of [`requant_v1`] for a run of consecutive output channels, one element
/// per channel in each: what a kernel computes per call, a bounded run at a time, for an
/// op the build did not prepare.
#[derive(Debug)]
pub struct RequantRows<'o> {
    /// Effective biases, `bias[c] - input_zero_point · Σ w[c]` (wrapping).
    pub bias: &'o mut [i32],
    /// Q31 multipliers.
    pub mult: &'o mut [i32],
    /// Shifts (positive: left).
    pub shift: &'o mut [i32],
}

/// Writes the `requant-v1` constants of output channels `first..first + n` into `rows` (`n`
/// the length of each row: they must be equal and stay within the channels). With empty
/// rows it only checks the inputs ([`RequantInputs::check`]).
pub fn requant_v1_channels(
    p: &RequantInputs<'_>,
    first: usize,
    rows: RequantRows<'_>,
) -> Result<(), PrepareError> {
    p.check()?;
    let n = rows.bias.len();
    if rows.mult.len() != n
        || rows.shift.len() != n
        || first.checked_add(n).is_none_or(|end| end > p.channels)
    {
        return Err(PrepareError::Channel {
            channel: first,
            channels: p.channels,
        });
    }
    let columns = rows
        .bias
        .iter_mut()
        .zip(rows.mult.iter_mut())
        .zip(rows.shift.iter_mut());
    for (i, ((b, m), s)) in columns.enumerate() {
        [*b, *m, *s] = column(p, first + i)?;
    }
    Ok(())
}

/// Writes the `requant-v1` constants of one op into `out`, row-major `[3, channels]`: row
/// 0 the effective biases, row 1 the multipliers, row 2 the shifts (see the [module](self)
/// docs). `out` must hold exactly `3 · channels` elements.
pub fn requant_v1(p: &RequantInputs<'_>, out: &mut [i32]) -> Result<(), PrepareError> {
    if Some(out.len()) != p.channels.checked_mul(3) {
        return Err(PrepareError::Output {
            len: out.len(),
            channels: p.channels,
        });
    }
    let (bias, rest) = out.split_at_mut(p.channels);
    let (mult, shift) = rest.split_at_mut(p.channels);
    requant_v1_channels(p, 0, RequantRows { bias, mult, shift })
}

/// im2col rows a planned kernel scratch buffer holds: the fewest with which the optimized
/// `CONV_2D` reads it (it fills and multiplies this many output pixels' rows at a time).
pub const IM2COL_ROWS: usize = 4;

/// Bytes of the kernel scratch an int8 `CONV_2D` with a `fh x fw` filter of `c` channels
/// (`c_in / groups`) gets for its im2col rows: [`IM2COL_ROWS`] rows of `fh · fw · c` int8
/// elements. `None` on overflow.
pub fn im2col_bytes(fh: usize, fw: usize, c: usize) -> Option<usize> {
    IM2COL_ROWS.checked_mul(fh)?.checked_mul(fw)?.checked_mul(c)
}

/// int32 elements of the kernel scratch an int8 `UNIDIRECTIONAL_SEQUENCE_LSTM` of `units`
/// units gets (`13 · units`): per gate, one sum per row of its input weights and one per
/// row of its recurrent weights, which the optimized kernel computes once per call instead
/// of once per step; then the four gates' int16 values of one step (one int32 each) and
/// one gate's recurrent products. `None` on overflow.
pub fn lstm_scratch_len(units: usize) -> Option<usize> {
    units.checked_mul(13)
}

#[cfg(test)]
mod tests;
