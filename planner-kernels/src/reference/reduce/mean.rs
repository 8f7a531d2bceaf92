//! `MEAN` on int8 and int16, with TFLite Micro's integer arithmetic, and on float32.

use planner_rt::kernel::{Data, OpView};
use planner_rt::options::MeanOptions;

use crate::reference::KernelError;
use crate::reference::common::{elements, kind_error, output, params};
use crate::reference::reduce::axes::Reduction;
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// `MEAN` over the given axes. int8 and int16 with TFLite Micro's integer arithmetic: the
/// int32 sum `sum` of the raw values over the `n` elements of each output position, then
/// `(sum - input_zero_point · n) · input_scale / output_scale / n` as one fixed-point
/// multiplier (the Q31 multiplier of `input_scale / output_scale`, shifted left by `s =
/// floor(log2 n)`, at most 32 and at most 31 plus its exponent, divided by `n` in
/// integers, its exponent lowered by `s`), then the output zero point, saturated to the
/// type. TFLM does so when input and output share their quantisation too (a plain integer
/// division differs from its outputs on 175 of 480 elements of te_mcunet_vww's first MEAN).
///
/// This is not `round(mean · scale)`: with the 1/n folded into the multiplier and two
/// roundings (the doubling high multiply, then the shift), a sum of 23 over 49 elements
/// can give -8 where rounding the float mean gives -9.
///
/// float32: the `f32` sum of each box in row-major order (TFLM's order, on both its
/// paths), divided by `n` as `f32`; 0 when the box is empty.
pub(crate) fn mean(mut op: OpView<'_, '_>, o: &MeanOptions) -> Result<(), KernelError> {
    let xi = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let out = output(&mut op)?;
    let bad = KernelError::Shape {
        what: "mean axes do not fit the input and output",
    };
    let type_error = KernelError::Type {
        tensor: "input 0 or output 0 (MEAN runs int8, int16 or float32, one type throughout)",
    };
    let axes = o.axes.as_slice();
    let shape = xi.shape;
    match xi.data {
        Data::I8(x) => {
            let q = (params(xi.quant, "input 0")?, params(out.quant, "output 0")?);
            let y = out.i8().ok_or(type_error)?;
            let r = integer_reduction(shape, axes, x.len(), y.len())?;
            int_mean(x, y, &r, q, |v| mean_output(v.0, v.1, v.2, v.3))
        }
        Data::I16(x) => {
            let q = (params(xi.quant, "input 0")?, params(out.quant, "output 0")?);
            let y = out.i16().ok_or(type_error)?;
            let r = integer_reduction(shape, axes, x.len(), y.len())?;
            int_mean(x, y, &r, q, |v| {
                let wide = mean_output_i32(v.0, v.1, v.2, v.3);
                wide.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
            })
        }
        Data::F32(x) => {
            let y = out.f32().ok_or(type_error)?;
            if x.len() != elements(shape) {
                return Err(bad);
            }
            let r = Reduction::new(shape, axes, y.len()).map_err(|_| bad)?;
            let n = r.count as f32;
            r.each(|k, it| {
                let sum = it.fold(0.0f32, |s, i| s + x[i]);
                y[k] = if r.count > 0 { sum / n } else { 0.0 };
            });
            Ok(())
        }
        _ => Err(kind_error(&xi, "input 0")),
    }
}

/// The reduction of an integer `MEAN` of `len` input elements of `shape` into `out_len`
/// outputs, with a box of at least one element.
fn integer_reduction(
    shape: &[usize],
    axes: &[i32],
    len: usize,
    out_len: usize,
) -> Result<Reduction, KernelError> {
    let bad = KernelError::Shape {
        what: "mean axes do not fit the input and output",
    };
    let r = Reduction::new(shape, axes, out_len).map_err(|_| bad)?;
    if len != elements(shape) || r.count == 0 || i64::try_from(r.count).is_err() {
        return Err(bad);
    }
    Ok(r)
}

/// The integer mean of each box (`finish` gets its sum, the zero points, `n` and the
/// multiplier, as [`mean_output`] takes them).
fn int_mean<T: Copy + Into<i32>>(
    x: &[T],
    y: &mut [T],
    r: &Reduction,
    ((si, zi), (so, zo)): ((f32, i32), (f32, i32)),
    finish: impl Fn((i32, (i64, i64), i64, QuantizedMultiplier)) -> T,
) -> Result<(), KernelError> {
    let n = r.count as i64;
    let m = mean_multiplier(si, so, n);
    let z = (i64::from(zi), i64::from(zo));
    r.each(|k, it| {
        let sum = it.fold(0i32, |s, i| s.wrapping_add(x[i].into()));
        y[k] = finish((sum, z, n, m));
    });
    Ok(())
}

/// The int8 mean of `n` elements summing to `sum` (input and output zero points `zi`,
/// `zo`; `m` from [`mean_multiplier`]): the offset sum in int32, as TFLM computes it,
/// scaled, plus the output zero point, saturated.
pub(crate) fn mean_output(sum: i32, z: (i64, i64), n: i64, m: QuantizedMultiplier) -> i8 {
    mean_output_i32(sum, z, n, m).clamp(-128, 127) as i8
}

/// [`mean_output`] before the saturation.
fn mean_output_i32(sum: i32, (zi, zo): (i64, i64), n: i64, m: QuantizedMultiplier) -> i64 {
    let shifted = (i64::from(sum) - zi * n) as i32;
    i64::from(multiply_by_quantized_multiplier(shifted, m)) + zo
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
