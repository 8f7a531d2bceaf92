//! TFLM's `SignalEnergy` (custom op): the energy `re² + im²` of each bin of a spectrum of
//! int16 complex values (interleaved real and imaginary parts), as uint32, over a range of
//! bins.

use super::framer::at_least;
use crate::reference::KernelError;

/// `SignalEnergy`: for each bin `i` in `start_index..end_index`, `output[i] = re² + im²` of
/// the spectrum `input` (int16 pairs `re, im`: bin `i` is `input[2i]`, `input[2i + 1]`);
/// `output` is uint32, one element per bin. TFLM sums in int32 and stores as uint32: the one
/// sum past int32's range, `(-32768)² + (-32768)²`, is 2³¹, which uint32 holds.
///
/// The elements of `output` outside the range are left as they are (TFLM does not write
/// them either). `start_index` and `end_index` are the flexbuffer options of those names
/// (ints, read as int32). An empty range (`start_index >= end_index`) writes nothing; a
/// negative start ([`KernelError::Options`]) or an end past the input's bins or the
/// output's length ([`KernelError::Shape`]) is refused: TFLM would read or write outside
/// the tensors.
pub(crate) fn energy(
    input: &[i16],
    start_index: i32,
    end_index: i32,
    output: &mut [u32],
) -> Result<(), KernelError> {
    if start_index >= end_index {
        return Ok(());
    }
    let start = at_least(start_index, 0, "energy start_index is negative")?;
    let end = at_least(end_index, 0, "energy end_index is negative")?;
    if end > input.len() / 2 {
        return Err(KernelError::Shape {
            what: "energy end_index is past the input's bins",
        });
    }
    let Some(out) = output.get_mut(start..end) else {
        return Err(KernelError::Shape {
            what: "energy end_index is past the output's length",
        });
    };
    for (bin, y) in input[2 * start..2 * end].chunks_exact(2).zip(out) {
        let re = u32::from(bin[0].unsigned_abs());
        let im = u32::from(bin[1].unsigned_abs());
        *y = re * re + im * im;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{each_run, goldens};
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const GOLDENS: &[(&str, &str)] = &goldens![
        "energy_full33",
        "energy_part",
        "energy_odd9",
        "energy_one_bin",
    ];

    /// Compares the written range with TFLM's and checks nothing else was written.
    #[test]
    fn energy_is_tflms() {
        const UNTOUCHED: u32 = 0xDEAD_BEEF;
        each_run(GOLDENS, "SignalEnergy", |g| {
            let (start, end): (i32, i32) = (g.opt("start_index"), g.opt("end_index"));
            let range = start as usize..end as usize;
            move |run| {
                let input: Vec<i16> = run.input("input");
                let expected: Vec<u32> = run.output("output");
                let mut output = vec![UNTOUCHED; expected.len()];
                energy(&input, start, end, &mut output).unwrap();
                assert_eq!(output[range.clone()], expected[range.clone()]);
                assert!(output[..range.start].iter().all(|&v| v == UNTOUCHED));
                assert!(output[range.end..].iter().all(|&v| v == UNTOUCHED));
            }
        });
    }

    #[test]
    fn energy_refuses_ranges_outside_the_tensors() {
        let mut out = [7_u32; 4];
        assert_eq!(energy(&[1; 8], 3, 3, &mut out), Ok(()));
        assert_eq!(energy(&[1; 8], 5, -2, &mut out), Ok(()));
        assert!(matches!(
            energy(&[1; 8], -1, 2, &mut out),
            Err(KernelError::Options { .. })
        ));
        assert!(matches!(
            energy(&[1; 7], 0, 4, &mut out),
            Err(KernelError::Shape { .. })
        ));
        assert!(matches!(
            energy(&[1; 10], 0, 5, &mut out),
            Err(KernelError::Shape { .. })
        ));
        assert_eq!(out, [7; 4]);
        energy(&[i16::MIN, i16::MIN, 3, -4], 0, 2, &mut out).unwrap();
        assert_eq!(out, [1 << 31, 25, 7, 7]);
    }
}
