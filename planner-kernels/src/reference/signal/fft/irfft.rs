//! `SignalIrfft`: the inverse real FFT of each row of `fft_length / 2 + 1` complex values,
//! `fft_length` real values (kiss FFT's `kiss_fftri`; float32 then divides by
//! `fft_length`).

use super::kiss::{Cpx, FftScalar, cadd, cfixdiv, conj, csub, load, store, transform};
use super::{halved_pair, plan_for, split_state};
use crate::reference::KernelError;
use crate::reference::signal::framer::is_rows;

/// `SignalIrfft`: `input` is rows of `fft_length + 2` values (`fft_length / 2 + 1`
/// interleaved complex values; the imaginary parts of the first and last are not read),
/// `output` the same number of rows of `fft_length` values. `state` must have been filled
/// by [`irfft_init`](super::irfft_init) with the same `fft_length` and element type. Integer outputs are the
/// inverse DFT without the `1 / fft_length` factor but halved at each butterfly stage (so
/// scaled by `1 / fft_length` against the plain sum); float32 outputs are the inverse DFT.
pub(crate) fn irfft<T: FftScalar>(
    fft_length: usize,
    state: &mut [T],
    input: &[T],
    output: &mut [T],
) -> Result<(), KernelError> {
    let what = "IRFFT state length is not irfft_state_len(fft_length)";
    let (half, stages) = plan_for(fft_length, state, what)?;
    let row_in = fft_length + 2;
    let what = "IRFFT input rows must be fft_length + 2 long and the output's fft_length, one per input row";
    if !input.len().is_multiple_of(row_in) {
        return Err(KernelError::Shape { what });
    }
    is_rows(output.len(), input.len() / row_in, fft_length, what)?;
    let (twiddles, split, buffer) = split_state(state, half);
    for (x, y) in input
        .chunks_exact(row_in)
        .zip(output.chunks_exact_mut(fft_length))
    {
        pack(x, split, half, buffer);
        let packed: &[T] = buffer;
        transform(y, &|k| load(packed, k), twiddles, &stages, true);
        T::scale_inverse(y, fft_length);
    }
    Ok(())
}

/// Turns the `half + 1` values of a real transform in `x` into the complex transform `z`
/// (`half` values) whose inverse interleaves the even and odd samples.
fn pack<T: FftScalar>(x: &[T], split: &[T], half: usize, z: &mut [T]) {
    let first = load(x, 0).r;
    let last = load(x, half).r;
    let dc = Cpx {
        r: first.add(last),
        i: first.sub(last),
    };
    store(z, 0, cfixdiv(dc, 2));
    for k in 1..=half / 2 {
        let (fk, fnkc) = halved_pair(x, k, half);
        let fek = cadd(fk, fnkc);
        let fok = T::cmul(csub(fk, fnkc), load(split, k - 1));
        store(z, k, cadd(fek, fok));
        store(z, half - k, conj(csub(fek, fok)));
    }
}
