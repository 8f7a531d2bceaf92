//! TFLM's signal FFT ops: `SignalRfft` and `SignalIrfft` (int16, int32 and float32: the
//! real FFT of each row of the input's last dimension and its inverse, through kiss FFT
//! v130 as TFLM builds and patches it) and `SignalFftAutoScale` (int16: the input shifted
//! left as far as its largest magnitude allows, and the shift).
//!
//! The two FFTs keep, like TFLM, a state made once per op (TFLM's `Init`): the complex
//! FFT's twiddles, the real FFT's split twiddles and a buffer for the complex transform,
//! all of the op's element type (see [`rfft_state_len`] and [`rfft_init`]). Their options
//! are the flexbuffer map's `"T"` (a `TensorType`: 7 int16, 2 int32, 0 float32; TFLM reads
//! it with `AsInt32`) and `"fft_length"` (read as an int32, the second entry of the map,
//! keys in sorted order). `SignalFftAutoScale` has no options and no state.
//!
//! Integer FFTs come out scaled by `1 / fft_length` (each butterfly stage divides by its
//! radix); the float IRFFT divides by `fft_length` at the end.

mod auto_scale;
mod irfft;
mod kiss;
mod rfft;
#[cfg(test)]
mod tests;

pub(crate) use auto_scale::fft_auto_scale;
pub(crate) use irfft::irfft;
pub(crate) use kiss::FftScalar;
pub(crate) use rfft::rfft;
// An IRFFT's state is an RFFT's. The plan's rule is `planner_rt::op_kinds::state`; a test
// checks they agree.
#[cfg(test)]
pub(crate) use rfft_state_len as irfft_state_len;

use crate::reference::KernelError;
use kiss::{Cpx, Stages, cfixdiv, conj, fill_twiddles, load, stages, store};

/// The complex length (`fft_length / 2`) and its stages, or why TFLM cannot run the length:
/// odd or zero (kiss FFT's real transform packs pairs of samples), or a half with a prime
/// factor above 5, or a half of 1 (TFLM's build crashes in the generic butterfly).
fn plan(fft_length: usize) -> Result<(usize, Stages), KernelError> {
    if fft_length == 0 || !fft_length.is_multiple_of(2) {
        return Err(KernelError::Options {
            what: "fft_length must be even and positive",
        });
    }
    let half = fft_length / 2;
    let stages = stages(half).ok_or(KernelError::Options {
        what: "fft_length / 2 must be at least 2 with no prime factor above 5 (TFLM's kiss FFT build crashes on other lengths)",
    })?;
    Ok((half, stages))
}

/// Elements of `T` in the state of an RFFT or IRFFT of `fft_length` (5/2 `fft_length`,
/// rounded down to even): the twiddles of the complex FFT of `fft_length / 2` points, the
/// `fft_length / 4` split twiddles and the `fft_length / 2` points of the complex
/// transform, all interleaved complex values. Fill it once with [`rfft_init`] or
/// [`irfft_init`].
pub(crate) fn rfft_state_len(fft_length: usize) -> usize {
    let half = fft_length / 2;
    half.saturating_mul(2)
        .saturating_add(half / 2)
        .saturating_mul(2)
}

/// [`plan`] of `fft_length`, after checking `state` is [`rfft_state_len`] long (else a
/// [`KernelError::Shape`] of `what`).
fn plan_for<T>(
    fft_length: usize,
    state: &[T],
    what: &'static str,
) -> Result<(usize, Stages), KernelError> {
    let planned = plan(fft_length)?;
    if state.len() != rfft_state_len(fft_length) {
        return Err(KernelError::Shape { what });
    }
    Ok(planned)
}

/// Value `k` of the interleaved `values` and the conjugate of value `half - k`, both
/// halved as kiss FFT's real transforms halve them (`C_FIXDIV(., 2)`).
fn halved_pair<T: FftScalar>(values: &[T], k: usize, half: usize) -> (Cpx<T>, Cpx<T>) {
    let mirror = conj(load(values, half - k));
    (cfixdiv(load(values, k), 2), cfixdiv(mirror, 2))
}

/// The state's parts: twiddles, split twiddles, transform buffer.
fn split_state<T>(state: &mut [T], half: usize) -> (&mut [T], &mut [T], &mut [T]) {
    let (twiddles, rest) = state.split_at_mut(2 * half);
    let (split, buffer) = rest.split_at_mut(2 * (half / 2));
    (twiddles, split, buffer)
}

/// Fills `state` (of [`rfft_state_len`] elements) for RFFTs of `fft_length`, as TFLM's
/// `Init` does: the forward twiddles in the element type. The state holds nothing from one
/// run to the next beyond these constants (its buffer part is overwritten by each run).
pub(crate) fn rfft_init<T: FftScalar>(n: usize, state: &mut [T]) -> Result<(), KernelError> {
    init(n, state, false)
}

/// Fills `state` (of [`irfft_state_len`] elements) for IRFFTs of `fft_length`, as
/// [`rfft_init`] does with the inverse twiddles.
pub(crate) fn irfft_init<T: FftScalar>(n: usize, state: &mut [T]) -> Result<(), KernelError> {
    init(n, state, true)
}

/// Computes the state of a forward (`inverse` false) or inverse real FFT of `fft_length`.
fn init<T: FftScalar>(
    fft_length: usize,
    state: &mut [T],
    inverse: bool,
) -> Result<(), KernelError> {
    let what = "FFT state length is not rfft_state_len(fft_length)";
    let (half, _) = plan_for(fft_length, state, what)?;
    let (twiddles, split, buffer) = split_state(state, half);
    fill_twiddles(twiddles, half, inverse);
    let pi = core::f64::consts::PI;
    for k in 0..half / 2 {
        let mut phase = -pi * ((k + 1) as f64 / half as f64 + 0.5);
        if inverse {
            phase = -phase;
        }
        store(split, k, T::twiddle(phase));
    }
    buffer.fill(T::default());
    Ok(())
}
