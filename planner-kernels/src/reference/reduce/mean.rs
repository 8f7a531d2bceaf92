//! `MEAN`, int8, with TFLite Micro's integer arithmetic.

use planner_rt::kernel::OpView;
use planner_rt::options::MeanOptions;

use crate::reference::KernelError;
use crate::reference::common::index::{RANK, next, strides};
use crate::reference::common::{elements, input_i8, output, params};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// `MEAN` over the given axes, with TFLite Micro's integer arithmetic: the int32 sum `sum`
/// of the raw values over the `n` elements of each output position, then `(sum -
/// input_zero_point · n) · input_scale / output_scale / n` as one fixed-point multiplier
/// (the Q31 multiplier of `input_scale / output_scale`, shifted left by `s = floor(log2
/// n)`, at most 32 and at most 31 plus its exponent, divided by `n` in integers, its
/// exponent lowered by `s`), then the output zero point, saturated to int8. TFLM does so
/// when input and output share their quantisation too (a plain integer division differs
/// from its outputs on 175 of 480 elements of te_mcunet_vww's first MEAN).
///
/// This is not `round(mean · scale)`: with the 1/n folded into the multiplier and two
/// roundings (the doubling high multiply, then the shift), a sum of 23 over 49 elements
/// can give -8 where rounding the float mean gives -9.
pub(crate) fn mean(mut op: OpView<'_, '_>, o: &MeanOptions) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (si, zi) = params(xi.quant, "input 0")?;
    let out = output(&mut op)?;
    let (so, zo) = params(out.quant, "output 0")?;
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    let rank = xi.shape.len();
    let bad = KernelError::Shape {
        what: "mean axes do not fit the input and output",
    };
    if rank > RANK || x.len() != elements(xi.shape) {
        return Err(bad);
    }
    let mut reduced = [false; RANK];
    for &a in o.axes.as_slice() {
        let a = if a < 0 { a + rank as i32 } else { a };
        let a = usize::try_from(a).ok().filter(|&a| a < rank).ok_or(bad)?;
        reduced[a] = true;
    }
    // Each output sums the box of the reduced dimensions at its kept coordinates.
    let in_strides = strides(xi.shape);
    let mut outputs = 1usize;
    let mut count = 1usize;
    let mut kept = [1usize; RANK];
    let mut boxed = [1usize; RANK];
    for d in 0..rank {
        if reduced[d] {
            count *= xi.shape[d];
            boxed[d] = xi.shape[d];
        } else {
            outputs *= xi.shape[d];
            kept[d] = xi.shape[d];
        }
    }
    if y.len() != outputs || count == 0 {
        return Err(bad);
    }
    let n = i64::try_from(count).map_err(|_| bad)?;
    let m = mean_multiplier(si, so, n);
    let (zi, zo) = (i64::from(zi), i64::from(zo));
    let mut at = [0usize; RANK];
    for out in y.iter_mut() {
        let mut sum: i32 = 0;
        let mut r = [0usize; RANK];
        loop {
            let i: usize = (0..rank).map(|d| (at[d] + r[d]) * in_strides[d]).sum();
            sum = sum.wrapping_add(i32::from(x[i]));
            if !next(&mut r, &boxed[..rank]) {
                break;
            }
        }
        next(&mut at, &kept[..rank]);
        *out = mean_output(sum, (zi, zo), n, m);
    }
    Ok(())
}

/// The int8 mean of `n` elements summing to `sum` (input and output zero points `zi`,
/// `zo`; `m` from [`mean_multiplier`]): the offset sum in int32, as TFLM computes it,
/// scaled, plus the output zero point, saturated.
pub(crate) fn mean_output(sum: i32, (zi, zo): (i64, i64), n: i64, m: QuantizedMultiplier) -> i8 {
    let shifted = (i64::from(sum) - zi * n) as i32;
    let v = i64::from(multiply_by_quantized_multiplier(shifted, m)) + zo;
    v.clamp(-128, 127) as i8
}

/// The multiplier of a mean over `n` elements: that of `input_scale / output_scale` with
/// `1/n` folded in, as TFLite Micro folds it.
pub(crate) fn mean_multiplier(input_scale: f32, output_scale: f32, n: i64) -> QuantizedMultiplier {
    let m = quantize_multiplier(f64::from(input_scale) / f64::from(output_scale));
    if n <= 0 {
        return m;
    }
    let log2 = 63 - (n as u64).leading_zeros() as i32;
    let shift = log2.min(32).min(31 + m.shift).max(0);
    let multiplier = (i64::from(m.multiplier) << shift) / n;
    QuantizedMultiplier {
        multiplier: i32::try_from(multiplier).unwrap_or(i32::MAX),
        shift: m.shift - shift,
    }
}
