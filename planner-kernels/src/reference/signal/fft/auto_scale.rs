//! `SignalFftAutoScale` (int16): the input shifted left by as many bits as its largest
//! magnitude leaves free, and that shift.

use crate::reference::KernelError;

/// TFLM's `MaxAbs16` as written: the running maximum starts at 0 and takes a value above
/// it, or the negation of one whose negation is above it, truncated to 16 bits (so -32768
/// makes it -32768, which every later value but -32768 then exceeds).
fn max_abs(input: &[i16]) -> i16 {
    let mut max = 0i16;
    for &v in input {
        if v > max {
            max = v;
        } else if -i32::from(v) > i32::from(max) {
            max = (-i32::from(v)) as i16;
        }
    }
    max
}

/// `SignalFftAutoScale`: `output[i] = input[i] * 2^s` (truncated to 16 bits) and
/// `scale_bits[0] = s`, where `s = max(0, 15 - b)` and `b` is the bit length of the
/// maximum magnitude (TFLM's `MostSignificantBit32` as its GCC build computes it: 32 for
/// 0, and for -32768, which it reads as a 32-bit `0xFFFF8000`). `input` and `output` have
/// the same length (TFLM's 1-D tensors); `scale_bits` is the scalar int32 output.
pub(crate) fn fft_auto_scale(
    input: &[i16],
    output: &mut [i16],
    scale_bits: &mut [i32],
) -> Result<(), KernelError> {
    if input.len() != output.len() {
        return Err(KernelError::Shape {
            what: "FFT auto scale output must be as long as its input",
        });
    }
    let [bits] = scale_bits else {
        return Err(KernelError::Shape {
            what: "FFT auto scale's scale_bits output must be one int32",
        });
    };
    // The maximum's bits as an unsigned 32-bit number (sign-extended), 32 for zero.
    let wide = i32::from(max_abs(input)) as u32;
    let msb = if wide == 0 {
        32
    } else {
        32 - wide.leading_zeros() as i32
    };
    let shift = (15 - msb).max(0);
    for (y, &x) in output.iter_mut().zip(input) {
        *y = (i32::from(x) << shift) as i16;
    }
    *bits = shift;
    Ok(())
}
