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
        bias,
        input_scale: 0.5,
        input_zero_point: -3,
        filter_scales: &[0.25, 0.125],
        output_scale: 1.0,
    }
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
        ..inputs(&filter, FilterLayout::ChannelFirst, None)
    };
    assert_eq!(
        requant_v1_channel(&p, 1, 0).unwrap()[0],
        i32::MIN.wrapping_sub(508)
    );
}

#[test]
fn refuses_buffers_that_do_not_fit() {
    let filter = [1, 2, 3];
    let p = inputs(&filter, FilterLayout::ChannelFirst, None);
    assert_eq!(
        requant_v1(&p, &mut [0; 4]),
        Err(PrepareError::Output { len: 4 })
    );
    assert_eq!(
        requant_v1(&p, &mut [0; 6]),
        Err(PrepareError::Filter {
            len: 3,
            channels: 2
        })
    );
    let b = inputs(&filter, FilterLayout::ChannelFirst, Some(&[1, 2]));
    assert_eq!(
        requant_v1(&b, &mut [0; 3]),
        Err(PrepareError::Bias {
            len: 2,
            channels: 1
        })
    );
    assert_eq!(
        requant_v1_channel(&p, 1, 1),
        Err(PrepareError::Channel {
            channel: 1,
            channels: 1
        })
    );
    let empty = inputs(&[], FilterLayout::ChannelFirst, None);
    assert_eq!(requant_v1(&empty, &mut []), Ok(()));
    assert_eq!(
        requant_v1(&empty, &mut [0; 3]),
        Err(PrepareError::Filter {
            len: 0,
            channels: 1
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
    // A subnormal input goes through frexp's scaling, then is too small.
    assert_eq!(quantize_multiplier(f64::MIN_POSITIVE / 4.0).multiplier, 0);
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(quantize_multiplier(bad).multiplier, 0);
    }
    assert_eq!(channel_multiplier(1.0, &[], 1.0, 0).multiplier, 0);
}
