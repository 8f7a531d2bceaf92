//! `CUSTOM:SignalDelay`: TFLM's delay line, int16 only. Each row of the input (the
//! innermost dimension; the leading dimensions are independent rows with their own
//! state) comes out `delay_length` samples later: the output row is the last
//! `delay_length` samples of the row's earlier runs (zeros at first) followed by the
//! input row's first samples. The output has the input's shape.
//!
//! Options (the flexbuffer map, read by TFLM by position in key order): `delay_length`
//! (int).

use super::framer::{at_least, is_rows, push, rows_and_inner};
use crate::reference::KernelError;

#[cfg(test)] // The plan's rule is `planner_rt::op_kinds::state`; a test checks they agree.
/// Elements of the delay's state: `delay_length` int16 samples per row, rows the product
/// of the input's leading dimensions; 0 for a negative `delay_length` or a scalar input.
pub(crate) fn delay_state_len(delay_length: i32, input_shape: &[usize]) -> usize {
    match (usize::try_from(delay_length), rows_and_inner(input_shape)) {
        (Ok(d), Some((rows, _))) => rows.saturating_mul(d),
        _ => 0,
    }
}

/// Runs `SignalDelay` once: `input` of shape `input_shape`, `output` of the same length.
///
/// State ([`delay_state_len`], all zeros after TFLM's reset): per row, the last
/// `delay_length` samples that went in and have not come out, oldest first.
///
/// Refuses a negative `delay_length` ([`KernelError::Options`]; TFLM would fill its ring
/// with a negative count of zeros), a scalar or an innermost dimension of 0 (TFLM divides
/// by it), and slices of other lengths.
pub(crate) fn delay(
    delay_length: i32,
    input: &[i16],
    input_shape: &[usize],
    output: &mut [i16],
    state: &mut [i16],
) -> Result<(), KernelError> {
    let d = at_least(delay_length, 0, "negative delay_length")?;
    let (rows, frame) = rows_and_inner(input_shape)
        .filter(|&(_, inner)| inner > 0)
        .ok_or(KernelError::Shape {
            what: "delay input is a scalar or its innermost dimension is 0",
        })?;
    let what = "delay input or output length is not the input shape's";
    is_rows(input.len(), rows, frame, what)?;
    is_rows(output.len(), rows, frame, what)?;
    is_rows(
        state.len(),
        rows,
        d,
        "delay state length is not delay_state_len",
    )?;
    let rows_in = input.chunks_exact(frame);
    let rows_out = output.chunks_exact_mut(frame);
    for (row, (x, y)) in rows_in.zip(rows_out).enumerate() {
        let line = &mut state[row * d..(row + 1) * d];
        if d >= frame {
            // The output is all held samples; the input joins the end of the line.
            y.copy_from_slice(&line[..frame]);
            push(line, x);
        } else {
            // The whole line comes out, then the input's head; its tail stays.
            y[..d].copy_from_slice(line);
            y[d..].copy_from_slice(&x[..frame - d]);
            line.copy_from_slice(&x[frame - d..]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The delay against TFLM's goldens.

    extern crate std;

    use super::{delay, delay_state_len};
    use crate::reference::KernelError;
    use crate::reference::signal::golden::{goldens, on_lengths, replay_with_state};

    /// The delay's goldens.
    const GOLDENS: &[(&str, &str)] = &goldens![
        "delay_short",
        "delay_long_outer",
        "delay_zero",
        "delay_frame",
    ];

    /// Every run of every delay golden, bit for bit, through one state per golden.
    #[test]
    fn delay_matches_tflm() {
        replay_with_state(GOLDENS, "delay", delay, |g| {
            assert_eq!(g.input_shape, g.output_shape);
            let length = g.opt("delay_length");
            (length, delay_state_len(length, &g.input_shape))
        });
    }

    /// Options and lengths TFLM cannot run with are refused, never a panic.
    #[test]
    fn delay_refuses() {
        let run = on_lengths(delay);
        assert_eq!(run(3, &[2, 4], 8, 8, 6), Ok(()));
        assert!(matches!(
            run(-1, &[4], 4, 4, 0),
            Err(KernelError::Options { .. })
        ));
        let shape = |r| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(run(1, &[], 1, 1, 1)));
        assert!(shape(run(1, &[3, 0], 0, 0, 3)));
        assert!(shape(run(1, &[4], 5, 5, 1)));
        assert!(shape(run(1, &[4], 4, 3, 1)));
        assert!(shape(run(1, &[4], 4, 4, 2)));
        assert_eq!(delay_state_len(-1, &[4]), 0);
        assert_eq!(delay_state_len(2, &[3, 4]), 6);
    }
}
