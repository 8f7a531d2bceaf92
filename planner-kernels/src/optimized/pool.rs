//! The fast int8 `MEAN` over a run of neighbouring axes (the rows and columns of an NHWC
//! tensor for a global average, as squeeze-and-excitation blocks and classifier heads take
//! it, or one axis after another): sums a row at a time, vectorised across the values
//! after the axes; and `PAD` of the rows and columns of an NHWC
//! tensor, a whole input row copied at once. Any other `MEAN` or `PAD` runs the reference
//! kernel.

use planner_rt::kernel::{DataMut, OpView};
use planner_rt::options::{MeanOptions, PadOptions};

use super::CHUNK;
use crate::reference::reduce::mean::{mean_multiplier, mean_output};
use crate::reference::{self, KernelError, common::params};

/// `MEAN` (module docs).
pub(crate) fn mean(op: OpView<'_, '_>, o: &MeanOptions) -> Result<(), KernelError> {
    match contiguous(&op, o) {
        Some(dims) => over_run(op, dims),
        None => reference::reduce::mean::mean(op, o),
    }
}

/// `[outer, count, inner]` when the op averages an int8 input over a run of neighbouring
/// axes (given in any order, negative or repeated), so that the input is `outer` blocks of
/// `count` rows of `inner` values and the int8 output `outer · inner` values, neither
/// with a region.
fn contiguous(op: &OpView<'_, '_>, o: &MeanOptions) -> Option<[usize; 3]> {
    let x = op.input(0)?;
    let y = op.outputs.first()?;
    let (Some(xd), DataMut::I8(yd)) = (x.i8(), &y.data) else {
        return None;
    };
    let rank = x.shape.len();
    if rank > MAX_RANK {
        return None;
    }
    let mut axes = [false; MAX_RANK];
    for &a in o.axes.as_slice() {
        let a = if a < 0 {
            a + i32::try_from(rank).ok()?
        } else {
            a
        };
        *axes.get_mut(usize::try_from(a).ok().filter(|&a| a < rank)?)? = true;
    }
    let first = axes.iter().position(|&r| r)?;
    let last = axes.iter().rposition(|&r| r)?;
    let product = |d: &[usize]| d.iter().try_fold(1usize, |p, &v| p.checked_mul(v));
    let (outer, count, inner) = (
        product(&x.shape[..first])?,
        product(&x.shape[first..=last])?,
        product(&x.shape[last + 1..])?,
    );
    // Empty rows (`count` or `inner` 0) go to the reference, as does a block of rows
    // whose size does not fit `usize` (possible beside an outer dimension of 0).
    let fits = axes[first..=last].iter().all(|&r| r)
        && x.region.is_none()
        && y.region.is_none()
        && Some(xd.len()) == outer.checked_mul(count)?.checked_mul(inner)
        && Some(yd.len()) == outer.checked_mul(inner)
        && count > 0
        && inner > 0
        && count.checked_mul(inner).is_some();
    fits.then_some([outer, count, inner])
}

/// Most axes [`contiguous`] looks at (the reference's too).
const MAX_RANK: usize = crate::reference::common::index::RANK;

/// The mean of `[outer, count, inner]` over its middle axis, as the reference computes it:
/// sums [`CHUNK`] columns at a time, row after row (vectorised across the columns), or one
/// contiguous run per output when `inner` is 1.
fn over_run(op: OpView<'_, '_>, [outer, count, inner]: [usize; 3]) -> Result<(), KernelError> {
    let Some((x, xi)) = op.input(0).and_then(|x| Some((x.i8()?, x))) else {
        return Err(KernelError::Type { tensor: "input 0" });
    };
    let (si, zi) = params(xi.quant, "input 0")?;
    let out = op
        .outputs
        .first_mut()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    let (so, zo) = params(out.quant, "output 0")?;
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    let n = i64::try_from(count).map_err(|_| KernelError::Shape {
        what: "mean axes do not fit the input and output",
    })?;
    let m = mean_multiplier(si, so, n);
    let z = (i64::from(zi), i64::from(zo));
    let block = count * inner;
    if inner == 1 {
        for (yv, run) in y.iter_mut().zip(x.chunks_exact(block)) {
            let sum = run.iter().fold(0i32, |s, &v| s.wrapping_add(i32::from(v)));
            *yv = mean_output(sum, z, n, m);
        }
        return Ok(());
    }
    for (rows, yb) in x
        .chunks_exact(block)
        .zip(y.chunks_exact_mut(inner))
        .take(outer)
    {
        let mut c0 = 0;
        while c0 < inner {
            let len = CHUNK.min(inner - c0);
            let mut sums = [0i32; CHUNK];
            let sums = &mut sums[..len];
            for row in rows.chunks_exact(inner) {
                for (s, &v) in sums.iter_mut().zip(&row[c0..c0 + len]) {
                    *s = s.wrapping_add(i32::from(v));
                }
            }
            for (yv, &s) in yb[c0..c0 + len].iter_mut().zip(sums.iter()) {
                *yv = mean_output(s, z, n, m);
            }
            c0 += len;
        }
    }
    Ok(())
}

/// `PAD` of an int8 `[n, h, w, c]` tensor along its rows and columns only (whole tensors):
/// output row by output row, the zero point around the input row's `w · c` bytes, copied
/// at once; any other `PAD` runs the reference kernel.
pub(crate) fn pad(op: OpView<'_, '_>, o: &PadOptions) -> Result<(), KernelError> {
    let Some((x, [n, h, w, c], [top, left])) = spatial_pad(&op, o) else {
        return reference::shape::pad(op, o);
    };
    let out = op
        .outputs
        .first_mut()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    let (_, zero) = params(out.quant, "output 0")?;
    let (out_h, out_w) = (out.shape[1], out.shape[2]);
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    let fill = zero.clamp(-128, 127) as i8;
    let (in_row, out_row) = (w * c, out_w * c);
    for (r, row) in y.chunks_exact_mut(out_row).enumerate() {
        let (b, oy) = (r / out_h, r % out_h);
        match oy.checked_sub(top).filter(|&iy| iy < h) {
            Some(iy) if b < n => {
                let at = (b * h + iy) * in_row;
                let (head, rest) = row.split_at_mut(left * c);
                let (body, tail) = rest.split_at_mut(in_row);
                head.fill(fill);
                body.copy_from_slice(&x[at..at + in_row]);
                tail.fill(fill);
            }
            _ => row.fill(fill),
        }
    }
    Ok(())
}

/// The input, its `[n, h, w, c]` and the `[top, left]` pads when the op pads an int8
/// rank-4 tensor along rows and columns only, into an int8 output of the padded shape,
/// neither with a region.
fn spatial_pad<'a>(
    op: &OpView<'_, 'a>,
    o: &PadOptions,
) -> Option<(&'a [i8], [usize; 4], [usize; 2])> {
    let x = op.input(0)?;
    let y = op.outputs.first()?;
    let (Some(xd), DataMut::I8(yd)) = (x.i8(), &y.data) else {
        return None;
    };
    let (&[n, h, w, c], &[on, oh, ow, oc], &[0, top, left, 0]) =
        (x.shape, y.shape, o.before.as_slice())
    else {
        return None;
    };
    let (top, left) = (usize::try_from(top).ok()?, usize::try_from(left).ok()?);
    let fits = x.region.is_none()
        && y.region.is_none()
        && on == n
        && oc == c
        && oh >= top + h
        && ow >= left + w
        && xd.len() == n * h * w * c
        && yd.len() == on * oh * ow * oc
        && c > 0
        && ow > 0;
    fits.then_some((xd, [n, h, w, c], [top, left]))
}
