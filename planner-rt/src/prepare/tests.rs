use super::*;

const Q30: i32 = 1 << 30;

fn inputs<'a>(
    filter: &'a [i8],
    layout: FilterLayout,
    bias: Option<&'a [i32]>,
) -> RequantInputs<'a> {
    RequantInputs {
        filter,
        layout,
        channels: 2,
        bias,
        input_scale: 0.5,
        input_zero_point: -3,
        filter_scales: &[0.25, 0.125],
        output_scale: 1.0,
    }
}

/// Rows of effective biases `bias`, multipliers `mult` and shifts `shift`.
fn rows<'o>(bias: &'o mut [i32], mult: &'o mut [i32], shift: &'o mut [i32]) -> RequantRows<'o> {
    RequantRows { bias, mult, shift }
}

#[test]
fn rows_of_a_channel_first_filter() {
    // Two output channels of three taps: sums 6 and -5.
    let filter = [1, 2, 3, -4, 5, -6];
    let mut out = [0i32; 6];
    requant_v1(
        &inputs(&filter, FilterLayout::ChannelFirst, Some(&[10, -20])),
        &mut out,
    )
    .unwrap();
    // 10 - (-3 · 6) = 28, -20 - (-3 · -5) = -35; 0.5 · 0.25 = 2^-3 and 0.5 · 0.125 = 2^-4
    // are 2^30 · 2^(shift - 31) with shifts -2 and -3.
    assert_eq!(out, [28, -35, Q30, Q30, -2, -3]);
}

#[test]
fn rows_of_a_channel_last_filter_without_bias() {
    // [1, 2, 1, 2]: channel 0 is 1 + 3, channel 1 is 2 + 4.
    let filter = [1, 2, 3, 4];
    let mut out = [0i32; 6];
    requant_v1(&inputs(&filter, FilterLayout::ChannelLast, None), &mut out).unwrap();
    assert_eq!(out, [12, 18, Q30, Q30, -2, -3]);
    assert_eq!(channel_sum(&filter, FilterLayout::ChannelLast, 2, 1), Ok(6));
    assert_eq!(
        channel_sum(&filter, FilterLayout::ChannelFirst, 2, 1),
        Ok(7)
    );
}

#[test]
fn one_filter_scale_serves_every_channel() {
    let filter = [1, 1, 1];
    let p = RequantInputs {
        filter_scales: &[0.75],
        channels: 3,
        ..inputs(&filter, FilterLayout::ChannelFirst, None)
    };
    let mut out = [0i32; 9];
    requant_v1(&p, &mut out).unwrap();
    // 0.375 = 0.75 · 2^-1: 0.75 · 2^31 = 3 · 2^29.
    assert_eq!(&out[3..], &[3 << 29, 3 << 29, 3 << 29, -1, -1, -1]);
    assert_eq!(out[..3], [3, 3, 3]);
}

#[test]
fn sums_and_biases_wrap() {
    let filter = [127i8; 4];
    let p = RequantInputs {
        bias: Some(&[i32::MIN]),
        input_zero_point: 1,
        channels: 1,
        ..inputs(&filter, FilterLayout::ChannelFirst, None)
    };
    assert_eq!(
        requant_v1_channel(&p, 0).unwrap()[0],
        i32::MIN.wrapping_sub(508)
    );
}

#[test]
fn refuses_buffers_that_do_not_fit() {
    let filter = [1, 2, 3];
    let p = inputs(&filter, FilterLayout::ChannelFirst, None);
    assert_eq!(
        requant_v1(&p, &mut [0; 4]),
        Err(PrepareError::Output {
            len: 4,
            channels: 2
        })
    );
    assert_eq!(
        requant_v1(&p, &mut [0; 6]),
        Err(PrepareError::Filter {
            len: 3,
            channels: 2
        })
    );
    let one = RequantInputs { channels: 1, ..p };
    let two_biases = RequantInputs {
        bias: Some(&[1, 2]),
        ..one
    };
    assert_eq!(
        requant_v1(&two_biases, &mut [0; 3]),
        Err(PrepareError::Bias {
            len: 2,
            channels: 1
        })
    );
    assert_eq!(
        requant_v1_channel(&one, 1),
        Err(PrepareError::Channel {
            channel: 1,
            channels: 1
        })
    );
    // Rows of different lengths, or past the channels.
    let (mut b3, mut m3, mut s2) = ([0; 1], [0; 1], [0; 2]);
    assert_eq!(
        requant_v1_channels(&one, 0, rows(&mut b3, &mut m3, &mut s2)),
        Err(PrepareError::Channel {
            channel: 0,
            channels: 1
        })
    );
    let (mut b, mut m, mut s) = ([0; 1], [0; 1], [0; 1]);
    assert!(requant_v1_channels(&one, 1, rows(&mut b, &mut m, &mut s)).is_err());
    // Empty rows only check the inputs.
    let empty_rows = || rows(&mut [], &mut [], &mut []);
    assert_eq!(requant_v1_channels(&one, 0, empty_rows()), Ok(()));
    assert!(requant_v1_channels(&two_biases, 0, empty_rows()).is_err());
    // No channels and no filter: nothing to write. An empty filter with channels: every
    // sum is 0, the effective bias is the bias.
    let none = RequantInputs {
        channels: 0,
        ..inputs(&[], FilterLayout::ChannelFirst, None)
    };
    assert_eq!(requant_v1(&none, &mut []), Ok(()));
    let empty = RequantInputs {
        channels: 1,
        bias: Some(&[7]),
        ..none
    };
    let mut out = [0; 3];
    assert_eq!(requant_v1(&empty, &mut out), Ok(()));
    assert_eq!(out[0], 7);
    assert_eq!(
        requant_v1(&RequantInputs { channels: 0, ..p }, &mut []),
        Err(PrepareError::Filter {
            len: 3,
            channels: 0
        })
    );
    let text = std::format!(
        "{}",
        PrepareError::Bias {
            len: 2,
            channels: 1
        }
    );
    assert_eq!(
        text,
        "the bias has 2 elements, not one per each of 1 output channels"
    );
}

/// A run of channels at a time gives the columns of the whole tensor.
#[test]
fn runs_of_channels_are_the_whole_tensors_columns() {
    let filter = [1, -2, 3, 4, 5, -6, 7, 8, -9, 10];
    let p = RequantInputs {
        channels: 5,
        filter_scales: &[0.25, 0.5, 0.125, 1.0, 0.0625],
        bias: Some(&[1, 2, 3, 4, 5]),
        ..inputs(&filter, FilterLayout::ChannelLast, None)
    };
    let mut whole = [0; 15];
    requant_v1(&p, &mut whole).unwrap();
    for first in 0..5 {
        for n in 0..=5 - first {
            let (mut b, mut m, mut s) = ([0; 5], [0; 5], [0; 5]);
            requant_v1_channels(&p, first, rows(&mut b[..n], &mut m[..n], &mut s[..n])).unwrap();
            for i in 0..n {
                let c = first + i;
                assert_eq!([b[i], m[i], s[i]], [whole[c], whole[5 + c], whole[10 + c]]);
                assert_eq!(requant_v1_channel(&p, c), Ok([b[i], m[i], s[i]]));
            }
        }
    }
}

#[test]
fn multipliers_split_into_q31_and_shift() {
    assert_eq!(
        quantize_multiplier(0.5),
        QuantizedMultiplier {
            multiplier: Q30,
            shift: 0
        }
    );
    assert_eq!(
        quantize_multiplier(3.0),
        QuantizedMultiplier {
            multiplier: 3 << 29,
            shift: 2
        }
    );
    // Just below 1 the mantissa rounds up to 2^31 and renormalises.
    assert_eq!(
        quantize_multiplier(1.0 - 1e-12),
        QuantizedMultiplier {
            multiplier: Q30,
            shift: 1
        }
    );
    // 2^-32 is 2^30 · 2^(-31 - 31), the lowest shift; 2^-33 is too small, unless the
    // rounding carries it to 2^-32.
    let lowest = QuantizedMultiplier {
        multiplier: Q30,
        shift: -31,
    };
    assert_eq!(quantize_multiplier(2f64.powi(-32)), lowest);
    assert_eq!(quantize_multiplier(2f64.powi(-33)), ZERO);
    assert_eq!(quantize_multiplier(2f64.powi(-32) * (1.0 - 1e-12)), lowest);
    // A subnormal input is too small.
    assert_eq!(quantize_multiplier(f64::MIN_POSITIVE / 4.0).multiplier, 0);
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(quantize_multiplier(bad).multiplier, 0);
    }
    assert_eq!(channel_multiplier(1.0, &[], 1.0, 0).multiplier, 0);
}

/// The split in floating point, as it was written before the integer form: `frexp`, then
/// the mantissa times 2^31 plus one half, truncated, renormalised as the integer form
/// ([`q31`]).
fn by_floats(real: f64) -> QuantizedMultiplier {
    if !(real.is_finite() && real > 0.0) {
        return ZERO;
    }
    let mut bits = real.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i32;
    let mut bias = 1022;
    if exponent == 0 {
        bits = (real * (1u64 << 54) as f64).to_bits();
        exponent = ((bits >> 52) & 0x7ff) as i32;
        bias += 54;
    }
    let mantissa = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    q31(
        (mantissa * (1u64 << 31) as f64 + 0.5) as u64,
        exponent - bias,
    )
}

#[test]
fn the_integer_split_is_the_floating_point_one() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Plain arithmetic, no unsafe code: under Miri (which interprets it about 10,000 times
    // slower, 100 s for the full set) a hundredth of the cases keeps every branch.
    let cases = if cfg!(miri) { 2_000 } else { 200_000 };
    for case in 0..cases {
        let r = next();
        let real = match case % 5 {
            // Any bit pattern: every exponent, NaNs, infinities, negatives, subnormals.
            0 => f64::from_bits(r),
            // Scales as models hold them: f32 products and quotients, widened.
            1 => f64::from(f32::from_bits((r as u32 & 0x7fff_ffff) % 0x7f80_0000)),
            // Around 2^-31 and 2^31, where the shift leaves its range.
            2 => f64::from_bits((r & ((1 << 52) - 1)) | ((990 + (r >> 58) % 80) << 52)),
            // Significands just below a power of two: the rounding carries out.
            3 => f64::from_bits((r & (0x7ff << 52)) | ((1 << 52) - 1 - (r >> 54) % (1 << 22))),
            _ => (r >> 11) as f64 / (1u64 << 53) as f64 * 8.0,
        };
        let (want, got) = (by_floats(real), quantize_multiplier(real));
        assert_eq!(got, want, "case {case}: {real:e} ({:#x})", real.to_bits());
    }
}
