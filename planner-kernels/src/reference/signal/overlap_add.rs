//! `CUSTOM:SignalOverlapAdd`: TFLM's overlap-add, int16 (saturating sums) and float32.
//! The input is `[..., n_frames, frame_size]`, the output `[..., n_frames · frame_step]`;
//! each leading index is an independent row with its own accumulator of `frame_size`
//! values. Each frame is added onto the accumulator, the accumulator's first
//! `frame_step` values are the frame's output, and the accumulator moves left by
//! `frame_step`, zeros coming in at its end.
//!
//! Options (the flexbuffer map, read by TFLM by position in key order): `T` (int, the
//! element type as a TFLite `TensorType`: 7 int16, 0 float32; TFLM picks its kernel by
//! it), `frame_step` (int).

use super::framer::{checked, is_rows, rows_and_inner};
use crate::reference::KernelError;

/// An element type of the overlap-add: int16 or float32.
pub(crate) trait OverlapAddValue: Copy + Default {
    /// The accumulator's value plus an input value, as TFLM sums them.
    fn accumulate(self, x: Self) -> Self;
}

impl OverlapAddValue for i16 {
    /// The 32-bit sum clamped to int16.
    fn accumulate(self, x: Self) -> Self {
        self.saturating_add(x)
    }
}

impl OverlapAddValue for f32 {
    /// The float32 sum.
    fn accumulate(self, x: Self) -> Self {
        self + x
    }
}

/// The rows (product of the dimensions before the last two), the frames and the frame
/// size of `input_shape`, or `None` below rank 2.
fn geometry(input_shape: &[usize]) -> Option<(usize, usize, usize)> {
    let (&size, frames) = input_shape.split_last()?;
    let (rows, frames) = rows_and_inner(frames)?;
    Some((rows, frames, size))
}

#[cfg(test)] // The plan's rule is `planner_rt::op_kinds::state`; a test checks they agree.
/// Elements of the overlap-add's state: `frame_size` (the input's last dimension) values
/// of the element type per row, rows the product of the dimensions before the last two;
/// 0 below rank 2.
pub(crate) fn overlap_add_state_len(input_shape: &[usize]) -> usize {
    geometry(input_shape).map_or(0, |(rows, _, size)| rows.saturating_mul(size))
}

/// Runs `SignalOverlapAdd` once: `input` of shape `input_shape` (`[..., n_frames,
/// frame_size]`), `output` of `rows · n_frames · frame_step` values.
///
/// State ([`overlap_add_state_len`], all zeros after TFLM's reset): per row, the
/// accumulator, its value for the next output first.
///
/// Refuses a `frame_step` below 0 or above `frame_size` ([`KernelError::Options`]; TFLM
/// would move a negative count), an input below rank 2 or without elements per row
/// (TFLM divides by them), and slices of other lengths.
pub(crate) fn overlap_add<T: OverlapAddValue>(
    frame_step: i32,
    input: &[T],
    input_shape: &[usize],
    output: &mut [T],
    state: &mut [T],
) -> Result<(), KernelError> {
    let (rows, frames, size) = geometry(input_shape)
        .filter(|&(_, frames, size)| frames > 0 && size > 0)
        .ok_or(KernelError::Shape {
            what: "overlap-add input below rank 2 or with empty frames",
        })?;
    let step = checked(frame_step, |&s| s <= size).ok_or(KernelError::Options {
        what: "frame_step below 0 or above the frame size",
    })?;
    let overflow = KernelError::Shape {
        what: "overlap-add lengths overflow",
    };
    let per_row = frames.checked_mul(size).ok_or(overflow)?;
    // `step ≤ size`: fits when `per_row` does.
    let out_row = frames * step;
    is_rows(
        input.len(),
        rows,
        per_row,
        "overlap-add input length is not its shape's",
    )?;
    let what = "overlap-add output length is not rows · n_frames · frame_step";
    is_rows(output.len(), rows, out_row, what)?;
    let what = "overlap-add state length is not overlap_add_state_len";
    is_rows(state.len(), rows, size, what)?;
    for row in 0..rows {
        let acc = &mut state[row * size..(row + 1) * size];
        let row_in = &input[row * per_row..(row + 1) * per_row];
        let row_out = &mut output[row * out_row..(row + 1) * out_row];
        for (f, frame) in row_in.chunks_exact(size).enumerate() {
            for (a, &x) in acc.iter_mut().zip(frame) {
                *a = a.accumulate(x);
            }
            row_out[f * step..(f + 1) * step].copy_from_slice(&acc[..step]);
            acc.copy_within(step.., 0);
            acc[size - step..].fill(T::default());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The overlap-add against TFLM's goldens.

    extern crate std;

    use super::{OverlapAddValue, overlap_add, overlap_add_state_len};
    use crate::reference::KernelError;
    use crate::reference::signal::golden::{Value, goldens, on_lengths, replay_with_state};

    /// The int16 goldens.
    const GOLDENS_I16: &[(&str, &str)] = &goldens![
        "overlap_add_i16_frames",
        "overlap_add_i16_outer",
        "overlap_add_i16_no_overlap",
        "overlap_add_i16_step1",
    ];

    /// The float32 goldens.
    const GOLDENS_F32: &[(&str, &str)] = &goldens![
        "overlap_add_f32_frames",
        "overlap_add_f32_outer",
        "overlap_add_f32_no_overlap",
        "overlap_add_f32_step1",
    ];

    /// Runs every golden of `goldens` (of element type `T`) through one state each.
    fn matches<T: OverlapAddValue + Value>(goldens: &[(&str, &str)]) {
        replay_with_state(goldens, "overlap_add", overlap_add::<T>, |g| {
            (g.opt("frame_step"), overlap_add_state_len(&g.input_shape))
        });
    }

    /// Every run of every int16 golden, bit for bit.
    #[test]
    fn overlap_add_i16_matches_tflm() {
        matches::<i16>(GOLDENS_I16);
    }

    /// Every run of every float32 golden, bit for bit.
    #[test]
    fn overlap_add_f32_matches_tflm() {
        matches::<f32>(GOLDENS_F32);
    }

    /// Options and lengths TFLM cannot run with are refused, never a panic.
    #[test]
    fn overlap_add_refuses() {
        let run = on_lengths(overlap_add);
        assert_eq!(run(2, &[2, 3, 4], 24, 12, 8), Ok(()));
        assert_eq!(run(0, &[3, 4], 12, 0, 4), Ok(()));
        let options = |r| matches!(r, Err(KernelError::Options { .. }));
        assert!(options(run(-1, &[3, 4], 12, 0, 4)));
        assert!(options(run(5, &[3, 4], 12, 15, 4)));
        let shape = |r| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(run(1, &[4], 4, 4, 4)));
        assert!(shape(run(1, &[0, 4], 0, 0, 4)));
        assert!(shape(run(1, &[3, 0], 0, 0, 0)));
        assert!(shape(run(1, &[3, 4], 11, 3, 4)));
        assert!(shape(run(1, &[3, 4], 12, 4, 4)));
        assert!(shape(run(1, &[3, 4], 12, 3, 3)));
        assert_eq!(overlap_add_state_len(&[2, 5, 3, 4]), 40);
        assert_eq!(overlap_add_state_len(&[4]), 0);
    }

    /// int16 sums saturate at both ends.
    #[test]
    fn overlap_add_i16_saturates() {
        let mut out = [0i16; 2];
        let mut acc = [30000i16, -30000];
        overlap_add(2, &[10000i16, -10000], &[1, 2], &mut out, &mut acc).unwrap();
        assert_eq!(out, [i16::MAX, i16::MIN]);
        assert_eq!(acc, [0, 0]);
    }
}
