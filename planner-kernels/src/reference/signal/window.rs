//! TFLM's `SignalWindow` (custom op): int16 samples times an int16 window, shifted right and
//! saturated to int16, frame by frame.

use super::framer::{holds, shift_option};
use crate::reference::KernelError;

/// `SignalWindow`: each frame of `weights.len()` samples of `input` (int16, any shape whose
/// element count is a multiple of the window's length; frames are consecutive) times the
/// window, `(x · w) >> shift` in int32 (an arithmetic shift: it rounds towards minus
/// infinity), saturated to int16, into `output` (at least the input's length; elements past
/// it are left as they are, as TFLM leaves them).
///
/// `shift` is the op's flexbuffer option `shift` (an int, read as int32). TFLM shifts an
/// int32 by it, which C does not define outside 0..=31: such a shift is refused
/// ([`KernelError::Options`]). An input whose length is not a multiple of the window's
/// (TFLM's loop would read and write past the tensors), or an empty window with a non-empty
/// input (TFLM's loop would not end), is refused ([`KernelError::Shape`]).
pub(crate) fn window(
    input: &[i16],
    weights: &[i16],
    shift: i32,
    output: &mut [i16],
) -> Result<(), KernelError> {
    holds(
        output.len(),
        input.len(),
        "window output is shorter than its input",
    )?;
    let shift = shift_option(shift, 32, "window shift outside 0..=31")?;
    if input.is_empty() {
        return Ok(());
    }
    if weights.is_empty() || !input.len().is_multiple_of(weights.len()) {
        return Err(KernelError::Shape {
            what: "window input's length is not a multiple of the window's",
        });
    }
    let frames = input.chunks_exact(weights.len());
    for (frame, out) in frames.zip(output.chunks_exact_mut(weights.len())) {
        for ((&x, &w), y) in frame.iter().zip(weights).zip(out) {
            let raw = (i32::from(x) * i32::from(w)) >> shift;
            *y = raw.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::golden::{goldens, outputs_match};
    use super::*;
    use std::vec::Vec;

    const GOLDENS: &[(&str, &str)] = &goldens![
        "window_shift12_frames",
        "window_shift0_saturates",
        "window_shift31",
        "window_hann15_shift14",
        "window_shift15_rank3",
    ];

    #[test]
    fn window_is_tflms() {
        outputs_match(GOLDENS, "SignalWindow", 0x5a5a_i16, |g| {
            let (weights, shift): (Vec<i16>, i32) = (g.konst("weights"), g.opt("shift"));
            move |run, y| window(&run.input::<i16>("input"), &weights, shift, y).unwrap()
        });
    }

    #[test]
    fn window_refuses_what_tflm_cannot_run() {
        let mut out = [0_i16; 6];
        let shape = |what| Err(KernelError::Shape { what });
        let odd = "window input's length is not a multiple of the window's";
        assert_eq!(window(&[1; 6], &[1; 4], 0, &mut out), shape(odd));
        assert_eq!(window(&[1; 6], &[], 0, &mut out), shape(odd));
        let short = "window output is shorter than its input";
        assert_eq!(window(&[1; 8], &[1; 4], 0, &mut out), shape(short));
        window(&[1; 5], &[3; 5], 0, &mut out).unwrap();
        assert_eq!(out, [3, 3, 3, 3, 3, 0]);
        for shift in [-1, 32, i32::MAX] {
            assert!(matches!(
                window(&[1; 6], &[1; 3], shift, &mut out),
                Err(KernelError::Options { .. })
            ));
        }
        assert_eq!(window(&[], &[], 3, &mut []), Ok(()));
        window(&[i16::MIN; 6], &[i16::MIN; 3], 0, &mut out).unwrap();
        assert_eq!(out, [i16::MAX; 6]);
        window(&[i16::MIN; 6], &[i16::MAX; 3], 0, &mut out).unwrap();
        assert_eq!(out, [i16::MIN; 6]);
    }
}
