//! The fast int8 `MEAN` over the rows and columns of an NHWC tensor (a global average, as
//! squeeze-and-excitation blocks and classifier heads take it): channel sums a pixel at a
//! time, vectorised across the channels; and `PAD` of the rows and columns of an NHWC
//! tensor, a whole input row copied at once. Any other `MEAN` or `PAD` runs the reference
//! kernel.

use planner_rt::kernel::{DataMut, OpView};
use planner_rt::options::{MeanOptions, PadOptions};

use super::CHUNK;
use crate::reference::reduce::mean::{mean_multiplier, mean_output};
use crate::reference::{self, KernelError, common::params};

/// `MEAN` (module docs).
pub(crate) fn mean(op: OpView<'_, '_>, o: &MeanOptions) -> Result<(), KernelError> {
    match spatial(&op, o) {
        Some(dims) => global(op, dims),
        None => reference::reduce::mean::mean(op, o),
    }
}

/// `[n, h, w, c]` when the op averages an int8 rank-4 input over axes 1 and 2 (in any
/// order, negative or repeated) into an int8 output of `n · c` elements, neither with a
/// region.
fn spatial(op: &OpView<'_, '_>, o: &MeanOptions) -> Option<[usize; 4]> {
    let x = op.input(0)?;
    let y = op.outputs.first()?;
    let (Some(xd), DataMut::I8(yd)) = (x.i8(), &y.data) else {
        return None;
    };
    let &[n, h, w, c] = x.shape else {
        return None;
    };
    let mut axes = [false; 4];
    for &a in o.axes.as_slice() {
        let a = usize::try_from(if a < 0 { a + 4 } else { a }).ok()?;
        *axes.get_mut(a)? = true;
    }
    let fits = axes == [false, true, true, false]
        && x.region.is_none()
        && y.region.is_none()
        && xd.len() == n * h * w * c
        && yd.len() == n * c
        && h * w > 0;
    fits.then_some([n, h, w, c])
}

/// The mean over rows and columns of `[n, h, w, c]`, as the reference computes it.
fn global(op: OpView<'_, '_>, [n, h, w, c]: [usize; 4]) -> Result<(), KernelError> {
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
    let count = i64::try_from(h * w).map_err(|_| KernelError::Shape {
        what: "mean axes do not fit the input and output",
    })?;
    let m = mean_multiplier(si, so, count);
    for b in 0..n {
        let image = &x[b * h * w * c..(b + 1) * h * w * c];
        let mut c0 = 0;
        while c0 < c {
            let len = CHUNK.min(c - c0);
            let mut sums = [0i32; CHUNK];
            let sums = &mut sums[..len];
            for px in image.chunks_exact(c) {
                for (s, &v) in sums.iter_mut().zip(&px[c0..c0 + len]) {
                    *s = s.wrapping_add(i32::from(v));
                }
            }
            for (yv, &s) in y[b * c + c0..b * c + c0 + len].iter_mut().zip(sums.iter()) {
                *yv = mean_output(s, (i64::from(zi), i64::from(zo)), count, m);
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
