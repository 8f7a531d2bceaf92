//! The state an op kind keeps between runs outside its tensors (TFLM's persistent buffers
//! of the signal library's framing, noise-reduction and FFT ops): the planner gives each one a
//! variable tensor of this rule's element type and length, appended to the op's inputs,
//! zeroed at init like every variable; the kernels check the length they are handed
//! against the same rule.

use crate::options::OpOptions;

/// The element type of a state tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateElement {
    /// `i16` samples.
    I16,
    /// `i32` counters.
    I32,
    /// `u32` estimates.
    U32,
    /// `f32` values.
    F32,
    /// The element type of the op's input 0.
    Input,
}

/// One state tensor of an op: its element type and element count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateTensor {
    /// Element type.
    pub element: StateElement,
    /// Element count (at least 1: TFLM's buffers of zero length need no tensor).
    pub elements: usize,
}

/// The rows of an input shape split before its last `inner` dimensions (the product of the
/// others), `None` for a shape of fewer dimensions or an overflowing product.
fn rows(shape: &[usize], inner: usize) -> Option<usize> {
    let outer = shape.len().checked_sub(inner)?;
    shape[..outer]
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// A state or scratch tensor of `element`s, at least one.
fn one(element: StateElement, elements: usize) -> Option<StateTensor> {
    Some(StateTensor {
        element,
        elements: elements.max(1),
    })
}

/// A non-negative option as a `usize`.
fn count(v: i32) -> Option<usize> {
    usize::try_from(v).ok()
}

/// Whether an op with `options` keeps state between runs ([`state`] gives its tensors).
pub fn keeps_state(options: &OpOptions) -> bool {
    matches!(
        options,
        OpOptions::SignalDelay(_)
            | OpOptions::SignalFramer(_)
            | OpOptions::SignalStacker(_)
            | OpOptions::SignalOverlapAdd(_)
            | OpOptions::SignalFilterBankSpectralSubtraction(_)
            | OpOptions::SignalRfft(_)
            | OpOptions::SignalIrfft(_)
    )
}

/// The state tensors of an op with `options` whose input 0 has shape `input` (at most two,
/// in the order the kernel takes them), `None` when the options and shape give no valid
/// length (the importer refuses the op then, naming it). An op kind without state has none.
pub fn state(options: &OpOptions, input: &[usize]) -> Option<[Option<StateTensor>; 2]> {
    Some(match options {
        // Per row of the input's leading dimensions, the last `delay_length` samples.
        OpOptions::SignalDelay(o) => {
            let n = rows(input, 1)?.checked_mul(count(o.delay_length)?)?;
            [(n > 0).then(|| one(StateElement::I16, n)).flatten(), None]
        }
        // Per row, a ring of `ceil(frame_size / frame_step) * frame_step` samples, and one
        // counter.
        OpOptions::SignalFramer(o) => {
            let (size, step) = (count(o.frame_size)?, count(o.frame_step)?);
            if step == 0 {
                return None;
            }
            let r = rows(input, 1)?;
            let ring = size.div_ceil(step).checked_mul(step)?;
            [
                one(StateElement::I16, r.checked_mul(ring)?),
                one(StateElement::I32, r),
            ]
        }
        // The stacked window of `num_channels * (left + right + 1)` values, and two
        // counters.
        OpOptions::SignalStacker(o) => {
            let frames = count(o.stacker_left_context)?
                .checked_add(count(o.stacker_right_context)?)?
                .checked_add(1)?;
            let n = count(o.num_channels)?.checked_mul(frames)?;
            [one(StateElement::I16, n), one(StateElement::I32, 2)]
        }
        // Per row of the dimensions before the last two, one frame of the input's type.
        OpOptions::SignalOverlapAdd(_) => {
            let frame = *input.last()?;
            let n = rows(input, 2)?.checked_mul(frame)?;
            [one(StateElement::Input, n), None]
        }
        // One noise estimate per channel.
        OpOptions::SignalFilterBankSpectralSubtraction(o) => {
            [one(StateElement::U32, count(o.num_channels)?), None]
        }
        // The FFT's twiddles, split twiddles and transform buffer, of the input's type:
        // computed at the first run (TFLM computes them at `Init`), the buffer overwritten
        // by every run.
        OpOptions::SignalRfft(o) | OpOptions::SignalIrfft(o) => {
            let half = count(o.fft_length)? / 2;
            let n = half.checked_mul(2)?.checked_add(half / 2)?.checked_mul(2)?;
            [one(StateElement::Input, n), None]
        }
        _ => [None, None],
    })
}

/// The op-local scratch tensors the bundled kernel of an op with `options` needs (live
/// during the op only, like TFLite's intermediates; the importer appends them to the op's
/// scratch), given its inputs' shapes; `None` when they give no valid length. Kinds without
/// kernel scratch have none.
pub fn kernel_scratch(
    options: &OpOptions,
    inputs: &[&[usize]],
) -> Option<[Option<StateTensor>; 2]> {
    Some(match options {
        // The SSD decoder: the decoded boxes (4 floats a box), and the NMS's sorted indices,
        // merge buffer and selections (int32).
        OpOptions::DetectionPostprocess(o) => {
            let n = *inputs.first()?.get(1)?;
            let d = count(o.max_detections.max(0))?;
            let c = count(o.num_classes.max(0))?;
            let ints = if o.use_regular_nms {
                let m = d.checked_add(n.min(count(o.detections_per_class.max(0))?))?;
                n.checked_mul(2)?.max(m).checked_add(m)?
            } else {
                let k = count(o.max_classes_per_detection.max(0))?.min(c);
                n.checked_mul(2)?.max(c).checked_add(n.checked_mul(k)?)?
            };
            [
                one(StateElement::F32, n.checked_mul(4)?),
                one(StateElement::I32, ints),
            ]
        }
        _ => [None, None],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{
        SignalDelayOptions, SignalFramerOptions, SignalOverlapAddOptions, SignalStackerOptions,
    };

    fn lens(o: OpOptions, input: &[usize]) -> Option<[usize; 2]> {
        let s = state(&o, input)?;
        Some(s.map(|t| t.map_or(0, |t| t.elements)))
    }

    #[test]
    fn state_lengths_follow_options_and_shapes() {
        let delay = |delay_length| OpOptions::SignalDelay(SignalDelayOptions { delay_length });
        assert_eq!(lens(delay(3), &[2, 5]), Some([6, 0]));
        assert_eq!(lens(delay(0), &[2, 5]), Some([0, 0]));
        assert_eq!(lens(delay(-1), &[5]), None);
        assert_eq!(lens(delay(3), &[]), None);
        let framer = OpOptions::SignalFramer(SignalFramerOptions {
            frame_size: 5,
            frame_step: 2,
            prefill: false,
        });
        assert_eq!(lens(framer, &[3, 4]), Some([18, 3]));
        let stacker = OpOptions::SignalStacker(SignalStackerOptions {
            num_channels: 4,
            stacker_left_context: 2,
            stacker_right_context: 1,
            stacker_step: 1,
        });
        assert_eq!(lens(stacker, &[4]), Some([16, 2]));
        let ola = OpOptions::SignalOverlapAdd(SignalOverlapAddOptions { frame_step: 2 });
        assert_eq!(lens(ola, &[3, 2, 8]), Some([24, 0]));
        assert_eq!(lens(ola, &[8]), None);
        assert_eq!(lens(OpOptions::None, &[8]), Some([0, 0]));
        let rfft = OpOptions::SignalRfft(crate::options::SignalFftOptions { fft_length: 512 });
        assert_eq!(lens(rfft, &[480]), Some([1280, 0]));
        assert_eq!(lens(delay(i32::MAX), &[usize::MAX, 2]), None);
        // Exactly the kinds with a state rule keep state.
        for o in [delay(1), framer, stacker, ola] {
            assert!(keeps_state(&o));
        }
        assert!(!keeps_state(&OpOptions::None));
    }
}
