//! `CUSTOM:SignalStacker`: TFLM's stacker, int16 only. Each run appends one vector of
//! `num_channels` values (the rank-1 input) to a ring of `num_channels · (left + right +
//! 1)` values; the first vector is appended `left + 1` times (the left context's padding).
//! When the ring is full, output 0 (rank 1, the ring's length) gets all of it, oldest
//! vector first, and the oldest `stacker_step` vectors are dropped; output 1, a bool
//! scalar, says whether output 0 was written (it keeps what it held otherwise).
//!
//! Options (the flexbuffer map, read by TFLM by position in key order): `num_channels`,
//! `stacker_left_context`, `stacker_right_context`, `stacker_step` (all int).

use super::framer::{Framing, at_least, push};
use crate::reference::KernelError;
use planner_rt::options::SignalStackerOptions;

/// The checked sizes of one stacker, in values: one vector, the ring (= the output), the
/// drop after an output, and the first vector's padding.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    /// Values per vector.
    channels: usize,
    /// Values the ring holds, and output 0's length.
    window: usize,
    /// Values dropped after each output.
    drop: usize,
    /// Extra copies of the first vector.
    left: usize,
}

impl Geometry {
    /// The sizes of `options`, or the option TFLM cannot run with: no channels, a negative
    /// context, or a step below one or above the window (TFLM's ring would drop values it
    /// does not hold).
    fn new(options: &SignalStackerOptions) -> Result<Self, KernelError> {
        let channels = at_least(options.num_channels, 1, "num_channels below 1")?;
        let step = at_least(options.stacker_step, 1, "stacker_step below 1")?;
        let left = at_least(
            options.stacker_left_context,
            0,
            "negative stacker_left_context",
        )?;
        let right = at_least(
            options.stacker_right_context,
            0,
            "negative stacker_right_context",
        )?;
        let vectors = left.saturating_add(right).saturating_add(1);
        if step > vectors {
            return Err(KernelError::Options {
                what: "stacker_step above the window's vectors",
            });
        }
        Ok(Geometry {
            channels,
            window: channels.saturating_mul(vectors),
            drop: channels.saturating_mul(step),
            left,
        })
    }
}

#[cfg(test)] // The plan's rule is `planner_rt::op_kinds::state`; a test checks they agree.
/// Elements of the stacker's sample state: `num_channels · (stacker_left_context +
/// stacker_right_context + 1)` int16 values (output 0's length); 0 for options the
/// kernel refuses.
pub(crate) fn stacker_state_len(options: &SignalStackerOptions) -> usize {
    Geometry::new(options).map_or(0, |g| g.window)
}

/// Elements of the stacker's counter state: 2 int32.
pub(crate) const STACKER_COUNTERS_LEN: usize = 2;

/// Runs `SignalStacker` once: `input` one vector of `num_channels` values, `output` the
/// window ([`stacker_state_len`] values); returns its bool output 1 (valid).
///
/// State, all zeros after TFLM's reset:
/// * `samples` ([`stacker_state_len`]): the ring's values in time order, the newest at the
///   end (slots not yet written hold zeros);
/// * `counters` ([`STACKER_COUNTERS_LEN`]): the values the ring holds (TFLM's available
///   count), and 1 once the first vector has come (0 before).
///
/// Refuses options as [`SignalStackerOptions`] says, slices of other lengths, and counters TFLM
/// could not reach ([`KernelError::Value`]).
pub(crate) fn stacker(
    options: &SignalStackerOptions,
    input: &[i16],
    io: Framing<'_>,
) -> Result<bool, KernelError> {
    let g = Geometry::new(options)?;
    let Framing {
        output,
        samples,
        counters,
    } = io;
    if input.len() != g.channels {
        return Err(KernelError::Shape {
            what: "stacker input length is not num_channels",
        });
    }
    if output.len() != g.window {
        return Err(KernelError::Shape {
            what: "stacker output length is not num_channels · (left + right + 1)",
        });
    }
    if samples.len() != g.window || counters.len() != STACKER_COUNTERS_LEN {
        return Err(KernelError::Shape {
            what: "stacker state length differs from stacker_state_len or STACKER_COUNTERS_LEN",
        });
    }
    // TFLM's ring always holds whole vectors, leaves room for the next one, and holds none
    // before the first.
    let started = counters[1];
    let held = usize::try_from(counters[0])
        .ok()
        .filter(|&h| h % g.channels == 0 && h <= g.window - g.channels)
        .filter(|&h| started == 1 || (started == 0 && h == 0))
        .ok_or(KernelError::Value {
            what: "stacker counters TFLM's ring cannot reach",
        })?;
    let copies = if started == 0 { 1 + g.left } else { 1 };
    for _ in 0..copies {
        push(samples, input);
    }
    let mut held = held + copies * g.channels;
    let valid = held >= g.window;
    if valid {
        output.copy_from_slice(samples);
        held -= g.drop;
    }
    // `held` is below the window's length, which TFLM's int32 options bound.
    counters[0] = i32::try_from(held).unwrap_or(i32::MAX);
    counters[1] = 1;
    Ok(valid)
}

#[cfg(test)]
mod tests {
    //! The stacker against TFLM's goldens.

    extern crate std;

    use super::{Framing, STACKER_COUNTERS_LEN, SignalStackerOptions, stacker, stacker_state_len};
    use crate::reference::KernelError;
    use crate::reference::signal::golden::{goldens, replay};

    /// The stacker's goldens.
    const GOLDENS: &[(&str, &str)] = &goldens![
        "stacker_context",
        "stacker_no_context",
        "stacker_step2",
        "stacker_step_window",
        "stacker_right_only",
    ];

    /// Every run of every stacker golden, bit for bit, through one state per golden.
    #[test]
    fn stacker_matches_tflm() {
        replay(GOLDENS, "stacker", 0x5a5a_i16, |g| {
            let options = SignalStackerOptions {
                num_channels: g.opt("num_channels"),
                stacker_left_context: g.opt("stacker_left_context"),
                stacker_right_context: g.opt("stacker_right_context"),
                stacker_step: g.opt("stacker_step"),
            };
            assert_eq!(g.input_shape, [options.num_channels as usize]);
            let mut samples = std::vec![0i16; stacker_state_len(&options)];
            let mut counters = [0i32; STACKER_COUNTERS_LEN];
            move |x, y| {
                Some(stacker(&options, x, Framing::new(y, &mut samples, &mut counters)).unwrap())
            }
        });
    }

    /// Options, lengths and counters TFLM cannot run with are refused, never a panic.
    #[test]
    fn stacker_refuses() {
        let ok = SignalStackerOptions {
            num_channels: 2,
            stacker_left_context: 1,
            stacker_right_context: 1,
            stacker_step: 1,
        };
        let run =
            |o: &SignalStackerOptions, input: usize, out: usize, state: usize, c: [i32; 2]| {
                let input = std::vec![3i16; input];
                let mut output = std::vec![0i16; out];
                let mut samples = std::vec![0i16; state];
                let mut counters = c;
                let io = Framing::new(&mut output, &mut samples, &mut counters);
                stacker(o, &input, io).map(|_valid| ())
            };
        assert_eq!(run(&ok, 2, 6, 6, [0, 0]), Ok(()));
        assert_eq!(run(&ok, 2, 6, 6, [4, 1]), Ok(()));
        // Options TFLM cannot run with: num_channels, left and right context and step, with
        // the input's length and the output's and the state's.
        for (channels, left, right, step, input, len) in [
            (0, 1, 1, 1, 0, 0),
            (2, 1, 1, 0, 2, 6),
            (2, 1, 1, 4, 2, 6),
            (2, -1, 1, 1, 2, 2),
            (2, 1, -1, 1, 2, 2),
        ] {
            let o = SignalStackerOptions {
                num_channels: channels,
                stacker_left_context: left,
                stacker_right_context: right,
                stacker_step: step,
            };
            let refused = run(&o, input, len, len, [0, 0]);
            assert!(matches!(refused, Err(KernelError::Options { .. })), "{o:?}");
        }
        let shape = |r| matches!(r, Err(KernelError::Shape { .. }));
        assert!(shape(run(&ok, 3, 6, 6, [0, 0])));
        assert!(shape(run(&ok, 2, 5, 6, [0, 0])));
        assert!(shape(run(&ok, 2, 6, 5, [0, 0])));
        let value = |r| matches!(r, Err(KernelError::Value { .. }));
        assert!(value(run(&ok, 2, 6, 6, [2, 0])));
        assert!(value(run(&ok, 2, 6, 6, [0, 2])));
        assert!(value(run(&ok, 2, 6, 6, [6, 1])));
        assert!(value(run(&ok, 2, 6, 6, [3, 1])));
        assert!(value(run(&ok, 2, 6, 6, [-2, 1])));
        assert_eq!(
            stacker_state_len(&SignalStackerOptions {
                stacker_step: 0,
                ..ok
            }),
            0
        );
    }
}
