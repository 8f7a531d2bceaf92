//! `CUSTOM:SignalFramer`: TFLM's framer, int16 only. Each row of the input (the innermost
//! dimension; the leading dimensions are independent rows with their own state) is a run
//! of `frame_step`-sample chunks; each chunk goes into the row's ring of held samples, and
//! once the ring holds `frame_size` samples the oldest `frame_size` of them make one
//! output frame and the oldest `frame_step` are dropped. Output 1, a bool scalar, says
//! whether every frame of the run was ready; a frame that was not keeps what the output
//! held.
//!
//! Options (the flexbuffer map, read by TFLM by position in key order): `frame_size`
//! (int), `frame_step` (int), `prefill` (bool).
//!
//! TFLM's ring holds `capacity = ceil(frame_size / frame_step) · frame_step` samples.
//! With `prefill` it starts holding `frame_size - frame_step` zeros, so each chunk
//! completes a frame that ends with it; without, the first frame is ready after
//! `capacity / frame_step` chunks and, when `frame_size` is not a multiple of
//! `frame_step`, every frame ends `capacity - frame_size` samples before the newest chunk.

use crate::reference::KernelError;
use planner_rt::options::SignalFramerOptions;

/// The checked geometry of one framer: frame size, step, ring capacity, prefill samples.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    /// Samples in one frame.
    size: usize,
    /// Samples per chunk.
    step: usize,
    /// Samples each row's ring holds at most.
    capacity: usize,
    /// Zeros the ring holds after a reset.
    base: usize,
}

impl Geometry {
    /// The geometry of `options`, or the option TFLM cannot run with: a size or step below
    /// one (TFLM divides by the step and writes into a ring of no room), or `prefill` with
    /// a step above the size (TFLM would prefill a negative count of zeros).
    fn new(options: &SignalFramerOptions) -> Result<Self, KernelError> {
        let size = at_least(options.frame_size, 1, "frame_size below 1")?;
        let step = at_least(options.frame_step, 1, "frame_step below 1")?;
        if options.prefill && step > size {
            return Err(KernelError::Options {
                what: "prefill with frame_step above frame_size",
            });
        }
        let capacity = size.div_ceil(step).saturating_mul(step);
        let base = if options.prefill { size - step } else { 0 };
        Ok(Geometry {
            size,
            step,
            capacity,
            base,
        })
    }
}

/// What a framing kernel (the framer, the stacker) writes: output 0, its int16 sample state
/// and its int32 counter state.
#[derive(Debug)]
pub(crate) struct Framing<'a> {
    /// Output 0.
    pub(crate) output: &'a mut [i16],
    /// The sample state.
    pub(crate) samples: &'a mut [i16],
    /// The counter state.
    pub(crate) counters: &'a mut [i32],
}

impl<'a> Framing<'a> {
    /// Output 0 and the sample and counter state.
    pub(crate) fn new(
        output: &'a mut [i16],
        samples: &'a mut [i16],
        counters: &'a mut [i32],
    ) -> Self {
        Framing {
            output,
            samples,
            counters,
        }
    }
}

/// Moves `ring`'s values `chunk.len()` places towards its start (its oldest drop out) and
/// puts `chunk` at its end; `chunk` is at most as long as `ring`.
pub(super) fn push<T: Copy>(ring: &mut [T], chunk: &[T]) {
    ring.copy_within(chunk.len().., 0);
    let at = ring.len() - chunk.len();
    ring[at..].copy_from_slice(chunk);
}

// Checks the signal kernels share.

/// `value` (an int option or input) as a `T`, when the conversion is exact and `ok`
/// accepts it.
pub(super) fn checked<T: TryFrom<i32>>(value: i32, ok: impl FnOnce(&T) -> bool) -> Option<T> {
    T::try_from(value).ok().filter(ok)
}

/// An int option as a count of at least `least`, or the [`KernelError::Options`] `what`.
pub(super) fn at_least(value: i32, least: usize, what: &'static str) -> Result<usize, KernelError> {
    checked(value, |&v| v >= least).ok_or(KernelError::Options { what })
}

/// `value` as a shift C defines on a `bits`-bit integer (0 to `bits - 1`), or `None`.
pub(super) fn shift_of(value: i32, bits: u32) -> Option<u32> {
    checked(value, |&s| s < bits)
}

/// An int option as a shift C defines on a `bits`-bit integer, or the
/// [`KernelError::Options`] `what`.
pub(super) fn shift_option(value: i32, bits: u32, what: &'static str) -> Result<u32, KernelError> {
    shift_of(value, bits).ok_or(KernelError::Options { what })
}

/// An output of `output` elements holds the `input` elements a kernel writes, or the
/// [`KernelError::Shape`] `what`.
pub(super) fn holds(output: usize, input: usize, what: &'static str) -> Result<(), KernelError> {
    if output < input {
        return Err(KernelError::Shape { what });
    }
    Ok(())
}

/// The rows (product of the leading dimensions) and the innermost dimension of
/// `input_shape`, or `None` for a scalar (or a product past `usize`).
pub(super) fn rows_and_inner(input_shape: &[usize]) -> Option<(usize, usize)> {
    let (&inner, outer) = input_shape.split_last()?;
    let rows = outer
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    Some((rows, inner))
}

/// A slice of `len` elements is `rows` rows of `per_row` (their product not overflowing),
/// or the [`KernelError::Shape`] `what`.
pub(super) fn is_rows(
    len: usize,
    rows: usize,
    per_row: usize,
    what: &'static str,
) -> Result<(), KernelError> {
    if rows.checked_mul(per_row) != Some(len) {
        return Err(KernelError::Shape { what });
    }
    Ok(())
}

/// Elements of the framer's sample state: `capacity` int16 samples per row, `capacity =
/// ceil(frame_size / frame_step) · frame_step`, rows the product of the input's leading
/// dimensions. 0 for options the kernel refuses or a scalar input.
pub(crate) fn framer_state_len(options: &SignalFramerOptions, input_shape: &[usize]) -> usize {
    match (Geometry::new(options), rows_and_inner(input_shape)) {
        (Ok(g), Some((rows, _))) => rows.saturating_mul(g.capacity),
        _ => 0,
    }
}

#[cfg(test)] // The plan's rule is `planner_rt::op_kinds::state`; a test checks they agree.
/// Elements of the framer's counter state: one int32 per row (the product of the input's
/// leading dimensions); 0 for a scalar input.
pub(crate) fn framer_counters_len(input_shape: &[usize]) -> usize {
    rows_and_inner(input_shape).map_or(0, |(rows, _)| rows)
}

/// Runs `SignalFramer` once: `input` of shape `input_shape` (`[..., n · frame_step]`),
/// `output` of shape `[..., n, frame_size]`; returns its bool output 1 (valid).
///
/// State, all zeros after TFLM's reset (the prefill zeros are zeros of `samples`):
/// * `samples` ([`framer_state_len`]): per row, the ring's last `capacity` samples in
///   time order, the newest at the end (slots not yet written hold zeros);
/// * `counters` ([`framer_counters_len`]): per row, how many samples the ring holds
///   (TFLM's available count) minus the prefill's `frame_size - frame_step` (or 0).
///
/// Refuses options as [`SignalFramerOptions`] says, an innermost dimension that is not a
/// positive multiple of `frame_step` (TFLM's prepare does), slices of other lengths, and
/// a counter TFLM's ring could not reach ([`KernelError::Value`]: negative, not a multiple
/// of `frame_step`, or leaving no room for a chunk).
pub(crate) fn framer(
    options: &SignalFramerOptions,
    input: &[i16],
    input_shape: &[usize],
    io: Framing<'_>,
) -> Result<bool, KernelError> {
    let g = Geometry::new(options)?;
    let (rows, inner) = rows_and_inner(input_shape).ok_or(KernelError::Shape {
        what: "framer input is a scalar",
    })?;
    if inner < g.step || inner % g.step != 0 {
        return Err(KernelError::Shape {
            what: "framer input's innermost dimension is not a multiple of frame_step",
        });
    }
    let frames = inner / g.step;
    let frames_len = frames.checked_mul(g.size).ok_or(KernelError::Shape {
        what: "framer output length overflows",
    })?;
    let what = "framer input length is not its shape's";
    is_rows(input.len(), rows, inner, what)?;
    let what = "framer output length is not rows · frames · frame_size";
    is_rows(io.output.len(), rows, frames_len, what)?;
    if io.samples.len() != framer_state_len(options, input_shape) || io.counters.len() != rows {
        return Err(KernelError::Shape {
            what: "framer state length differs from framer_state_len or framer_counters_len",
        });
    }
    // What a ring can hold before a chunk, beyond the prefill (`capacity ≥ base + step`).
    let room = g.capacity - g.step - g.base;
    let mut all_ready = true;
    // Every row, ring and frame is at least one element long: the chunks are the rows.
    let rings = io
        .samples
        .chunks_exact_mut(g.capacity)
        .zip(io.counters.iter_mut());
    let rows_io = input
        .chunks_exact(inner)
        .zip(io.output.chunks_exact_mut(frames_len));
    for ((ring, counter), (row_in, row_out)) in rings.zip(rows_io) {
        let held = checked(*counter, |&c: &usize| c <= room && c % g.step == 0)
            .map(|c| c + g.base)
            .ok_or(KernelError::Value {
                what: "framer counter outside what its ring can hold",
            })?;
        let held = frame_row(&g, row_in, row_out, ring, held, &mut all_ready);
        // `base ≤ held ≤ capacity - step`, and the capacity fits an int32 when
        // `frame_size + frame_step` does.
        *counter = i32::try_from(held - g.base).unwrap_or(i32::MAX);
    }
    Ok(all_ready)
}

/// Frames one row: pushes each `step` chunk of `row_in` into `ring` (holding `held`
/// samples, at most `capacity - step`), writes the ready frames to `row_out` and clears
/// `all_ready` at a frame that is not; returns the samples held afterwards.
fn frame_row(
    g: &Geometry,
    row_in: &[i16],
    row_out: &mut [i16],
    ring: &mut [i16],
    mut held: usize,
    all_ready: &mut bool,
) -> usize {
    for (chunk, frame) in row_in
        .chunks_exact(g.step)
        .zip(row_out.chunks_exact_mut(g.size))
    {
        push(ring, chunk);
        held += g.step;
        if held >= g.size {
            let start = g.capacity - held;
            frame.copy_from_slice(&ring[start..start + g.size]);
            held -= g.step;
        } else {
            *all_ready = false;
        }
    }
    held
}

#[cfg(test)]
mod tests {
    //! The framer against TFLM's goldens.

    extern crate std;

    use super::{Framing, SignalFramerOptions, framer, framer_counters_len, framer_state_len};
    use crate::reference::KernelError;
    use crate::reference::signal::golden::{goldens, replay};

    /// The framer's goldens.
    const GOLDENS: &[(&str, &str)] = &goldens![
        "framer_multi_frame",
        "framer_outer_prefill",
        "framer_lagging",
        "framer_lagging_prefill",
        "framer_size_eq_step_prefill",
        "framer_step_above_size",
        "framer_audio_like",
    ];

    /// Every run of every framer golden, bit for bit, through one state per golden.
    #[test]
    fn framer_matches_tflm() {
        replay(GOLDENS, "framer", 0x5a5a_i16, |g| {
            let options = SignalFramerOptions {
                frame_size: g.opt("frame_size"),
                frame_step: g.opt("frame_step"),
                prefill: g.opt::<u8>("prefill") != 0,
            };
            let shape = g.input_shape.clone();
            let mut samples = std::vec![0i16; framer_state_len(&options, &shape)];
            let mut counters = std::vec![0i32; framer_counters_len(&shape)];
            move |x, y| {
                let io = Framing::new(y, &mut samples, &mut counters);
                Some(framer(&options, x, &shape, io).unwrap())
            }
        });
    }

    /// Options and lengths TFLM cannot run with are refused, never a panic.
    #[test]
    fn framer_refuses() {
        let ok = SignalFramerOptions {
            frame_size: 4,
            frame_step: 2,
            prefill: false,
        };
        let run = |o: &SignalFramerOptions, shape: &[usize], out: usize, state: usize, c: i32| {
            let input = std::vec![1i16; shape.iter().product()];
            let mut output = std::vec![0i16; out];
            let mut samples = std::vec![0i16; state];
            let mut counters = std::vec![c; framer_counters_len(shape)];
            let io = Framing::new(&mut output, &mut samples, &mut counters);
            framer(o, &input, shape, io).map(|_valid| ())
        };
        assert_eq!(run(&ok, &[2, 4], 16, 8, 0), Ok(()));
        let bad_step = SignalFramerOptions {
            frame_step: 0,
            ..ok
        };
        assert!(matches!(
            run(&bad_step, &[4], 8, 4, 0),
            Err(KernelError::Options { .. })
        ));
        let bad_size = SignalFramerOptions {
            frame_size: -1,
            ..ok
        };
        assert!(matches!(
            run(&bad_size, &[4], 8, 4, 0),
            Err(KernelError::Options { .. })
        ));
        let prefill = SignalFramerOptions {
            frame_size: 2,
            frame_step: 3,
            prefill: true,
        };
        assert!(matches!(
            run(&prefill, &[3], 2, 3, 0),
            Err(KernelError::Options { .. })
        ));
        let shape = |r| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(run(&ok, &[], 4, 0, 0)));
        assert!(shape(run(&ok, &[3], 4, 4, 0)));
        assert!(shape(run(&ok, &[1], 4, 4, 0)));
        assert!(shape(run(&ok, &[4], 7, 4, 0)));
        assert!(shape(run(&ok, &[4], 8, 3, 0)));
        let value = |r| matches!(r, Err(KernelError::Value { .. }));
        assert!(value(run(&ok, &[4], 8, 4, -1)));
        assert!(value(run(&ok, &[4], 8, 4, 3)));
        assert!(value(run(&ok, &[4], 8, 4, 1)));
        assert_eq!(run(&ok, &[4], 8, 4, 2), Ok(()));
        assert_eq!(framer_state_len(&bad_step, &[4]), 0);
        assert_eq!(framer_state_len(&ok, &[]), 0);
    }
}
