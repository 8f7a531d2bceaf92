//! TFLM's `SignalFilterBankSquareRoot` (custom op): the rounded square root of each uint64
//! filter bank channel, shifted right, as uint32.

use super::framer::{holds, shift_of};
use crate::reference::KernelError;

/// `SignalFilterBankSquareRoot`: `output[i] = sqrt(input[i]) >> scale_bits` for each of the
/// input's channels (uint64 in, uint32 out), the square root as TFLM's [`square_root_64`]
/// rounds it. `scale_bits` is the op's second input, a scalar int32 tensor (the op has no
/// options).
///
/// `output` holds at least the input's channels; elements past them are left as they are
/// (TFLM writes only the input's count). TFLM shifts a uint32 by `scale_bits`, which C does
/// not define outside 0..=31: such a value is refused ([`KernelError::Value`]).
pub(crate) fn filter_bank_square_root(
    input: &[u64],
    scale_bits: i32,
    output: &mut [u32],
) -> Result<(), KernelError> {
    let shift = shift_of(scale_bits, 32).ok_or(KernelError::Value {
        what: "filter bank square root scale_bits outside 0..=31",
    })?;
    let what = "filter bank square root output is shorter than its input";
    holds(output.len(), input.len(), what)?;
    for (&x, y) in input.iter().zip(output) {
        *y = square_root_64(x) >> shift;
    }
    Ok(())
}

/// The square root of `x` rounded to the nearest integer as TFLM's signal library rounds it
/// (its `Sqrt64`, and `Sqrt32` below 2³²): the integer root `r`, plus one when the remainder
/// `x - r²` exceeds `r` (then `x` is past `(r + ½)²`), unless `r` is already the largest
/// root of its width (65,535 below 2³², 2³² - 1 above).
fn square_root_64(x: u64) -> u32 {
    let root = x.isqrt();
    let cap = if x >> 32 == 0 {
        u64::from(u16::MAX)
    } else {
        u64::from(u32::MAX)
    };
    // root ≤ 2³² - 1, so root² does not overflow.
    let rounded = if x - root * root > root && root != cap {
        root + 1
    } else {
        root
    };
    // At most the cap, which fits.
    u32::try_from(rounded).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{goldens, outputs_match};
    use super::*;
    use std::vec::Vec;

    const GOLDENS: &[(&str, &str)] = &goldens!["fbsqrt_scale0", "fbsqrt_scale7", "fbsqrt_scale31"];

    #[test]
    fn filter_bank_square_root_is_tflms() {
        outputs_match(
            GOLDENS,
            "SignalFilterBankSquareRoot",
            0xA5A5_A5A5_u32,
            |g| {
                let scale = g.konst::<i32>("scale_bits")[0];
                move |run, y| {
                    let input: Vec<u64> = run.input("input");
                    filter_bank_square_root(&input, scale, y).unwrap();
                }
            },
        );
    }

    #[test]
    fn square_roots_round_to_nearest_below_their_cap() {
        let cases = [
            (0, 0),
            (1, 1),
            (2, 1),
            (3, 2),
            (6, 2),
            (7, 3),
            (65_535 * 65_535 + 65_535, 65_535),
            (65_535 * 65_535 + 65_536, 65_535),
            (u64::from(u32::MAX), 65_535),
            (1 << 32, 65_536),
            (u64::MAX, u32::MAX),
        ];
        for (x, root) in cases {
            assert_eq!(square_root_64(x), root, "sqrt({x})");
        }
    }

    #[test]
    fn filter_bank_square_root_refuses_undefined_shifts() {
        let mut out = [0_u32; 2];
        for bits in [-1, 32] {
            assert!(matches!(
                filter_bank_square_root(&[4, 9], bits, &mut out),
                Err(KernelError::Value { .. })
            ));
        }
        assert!(matches!(
            filter_bank_square_root(&[4, 9, 16], 0, &mut out),
            Err(KernelError::Shape { .. })
        ));
        filter_bank_square_root(&[16, 1 << 40], 2, &mut out).unwrap();
        assert_eq!(out, [1, 1 << 18]);
    }
}
