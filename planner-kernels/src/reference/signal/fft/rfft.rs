//! `SignalRfft`: the real FFT of each row, zero-padded to `fft_length`, as
//! `fft_length / 2 + 1` complex values (kiss FFT's `kiss_fftr`).

use super::kiss::{Cpx, FftScalar, cadd, cfixdiv, csub, load, store, transform};
use super::{halved_pair, plan_for, split_state};
use crate::reference::KernelError;
use crate::reference::signal::framer::is_rows;

/// `SignalRfft`: `input` is rows of `input_length` real values (the input's last
/// dimension, at most `fft_length`; TFLM pads each with zeros to `fft_length`), `output`
/// the same number of rows of `fft_length + 2` values (`fft_length / 2 + 1` interleaved
/// complex values). `state` must have been filled by [`rfft_init`](super::rfft_init) with the same
/// `fft_length` and element type. Integer outputs are the DFT scaled by `1 / fft_length`.
pub(crate) fn rfft<T: FftScalar>(
    fft_length: usize,
    state: &mut [T],
    input: &[T],
    input_length: usize,
    output: &mut [T],
) -> Result<(), KernelError> {
    let what = "RFFT state length is not rfft_state_len(fft_length)";
    let (half, stages) = plan_for(fft_length, state, what)?;
    if input_length == 0 || input_length > fft_length || !input.len().is_multiple_of(input_length) {
        return Err(KernelError::Shape {
            what: "RFFT input rows must be 1..=fft_length long and the input whole rows",
        });
    }
    let rows = input.len() / input_length;
    let row_out = fft_length + 2;
    let what = "RFFT output rows must be fft_length + 2 long, one per input row";
    is_rows(output.len(), rows, row_out, what)?;
    let (twiddles, split, buffer) = split_state(state, half);
    for (x, y) in input
        .chunks_exact(input_length)
        .zip(output.chunks_exact_mut(row_out))
    {
        let at = |j: usize| x.get(j).copied().unwrap_or_default();
        let src = |k: usize| Cpx {
            r: at(2 * k),
            i: at(2 * k + 1),
        };
        transform(buffer, &src, twiddles, &stages, false);
        unpack(buffer, split, half, y);
    }
    Ok(())
}

/// Turns the complex transform `z` of the even and odd samples (`half` values) into the
/// real transform's `half + 1` values in `y`, with the split twiddles `split`.
fn unpack<T: FftScalar>(z: &[T], split: &[T], half: usize, y: &mut [T]) {
    let dc = cfixdiv(load(z, 0), 2);
    y[0] = dc.r.add(dc.i);
    y[2 * half] = dc.r.sub(dc.i);
    y[1] = T::default();
    y[2 * half + 1] = T::default();
    for k in 1..=half / 2 {
        let (fpk, fpnk) = halved_pair(z, k, half);
        let f1k = cadd(fpk, fpnk);
        let f2k = csub(fpk, fpnk);
        let tw = T::cmul(f2k, load(split, k - 1));
        store(
            y,
            k,
            Cpx {
                r: f1k.r.half_add(tw.r),
                i: f1k.i.half_add(tw.i),
            },
        );
        store(
            y,
            half - k,
            Cpx {
                r: f1k.r.half_sub(tw.r),
                i: tw.i.half_sub(f1k.i),
            },
        );
    }
}
