//! Reductions along axes: `SUM`, `REDUCE_MAX`, `REDUCE_MIN` and `REDUCE_ALL` over the
//! given axes, `ARG_MAX` and `ARG_MIN` along one.

use planner_rt::kernel::{Data, DataMut, OpView};
use planner_rt::options::{ArgMaxOptions, ReduceOptions};

use crate::reference::KernelError;
use crate::reference::common::index::{RANK, next, strides};
use crate::reference::common::operands::{RANK_ERROR, input, input_and_quants, resolve_axis};
use crate::reference::common::{elements, output, params};
use crate::{multiply_by_quantized_multiplier, quantize_multiplier};

/// `ARG_MAX` along one axis (negative counts from the end): the index of the first
/// largest element, as int32 or int64. Inputs of int8, uint8, int16, int32 or float32.
pub(crate) fn arg_max(op: OpView<'_, '_>, o: &ArgMaxOptions) -> Result<(), KernelError> {
    arg_extreme(op, o, true)
}

/// `ARG_MIN` along one axis (negative counts from the end): the index of the first
/// smallest element, as int32, of a float32 or int8 input (the types TFLM runs it on).
pub(crate) fn arg_min(op: OpView<'_, '_>, o: &ArgMaxOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    match (x.data, op.outputs.first().map(|y| &y.data)) {
        (Data::F32(_) | Data::I8(_), Some(DataMut::I32(_))) => arg_extreme(op, o, false),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (ARG_MIN reads float32 or int8 and writes int32)",
        }),
    }
}

/// `ARG_MAX` (`max`) or `ARG_MIN`: ties give the first index.
fn arg_extreme(mut op: OpView<'_, '_>, o: &ArgMaxOptions, max: bool) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let rank = x.shape.len();
    let axis = resolve_axis(o.axis, rank).ok_or(KernelError::Shape {
        what: "ARG_MAX's axis is outside the input's dimensions",
    })?;
    let outer: usize = x.shape[..axis].iter().product();
    let size = x.shape[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    let out = output(&mut op)?;
    fn run<T: Copy + PartialOrd, I>(
        x: &[T],
        y: &mut [I],
        (outer, size, inner, max): (usize, usize, usize, bool),
        index: impl Fn(usize) -> I,
    ) -> Result<(), KernelError> {
        if x.len() != outer * size * inner || y.len() != outer * inner || size == 0 {
            return Err(KernelError::Shape {
                what: "ARG_MAX's output is not the input without its axis (or the axis is empty)",
            });
        }
        for o in 0..outer {
            for i in 0..inner {
                let at = |k: usize| x[(o * size + k) * inner + i];
                let (mut best, mut best_k) = (at(0), 0);
                for k in 1..size {
                    if (max && at(k) > best) || (!max && at(k) < best) {
                        best = at(k);
                        best_k = k;
                    }
                }
                y[o * inner + i] = index(best_k);
            }
        }
        Ok(())
    }
    let dims = (outer, size, inner, max);
    macro_rules! out {
        ($x:expr) => {
            match &mut out.data {
                DataMut::I32(y) => run($x, y, dims, |k| k as i32),
                DataMut::I64(y) => run($x, y, dims, |k| k as i64),
                _ => Err(KernelError::Type {
                    tensor: "output 0 (ARG_MAX writes int32 or int64)",
                }),
            }
        };
    }
    match x.data {
        Data::I8(x) => out!(x),
        Data::U8(x) => out!(x),
        Data::I16(x) => out!(x),
        Data::I32(x) => out!(x),
        Data::F32(x) => out!(x),
        Data::InPlace(_) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 (ARG_MAX reads int8, uint8, int16, int32 or float32)",
        }),
    }
}

/// The reduction of `SUM`, `REDUCE_MAX` and `MEAN`: which dimensions are reduced, and the
/// output positions and the reduced box.
pub(crate) struct Reduction {
    rank: usize,
    in_strides: [usize; RANK],
    kept: [usize; RANK],
    boxed: [usize; RANK],
    outputs: usize,
    pub(crate) count: usize,
}

impl Reduction {
    /// The reduction of a tensor of `shape` over `axes` (negative counts from the end,
    /// repeats ignored) into `out_len` outputs.
    pub(crate) fn new(
        shape: &[usize],
        axes: &[i32],
        out_len: usize,
    ) -> Result<Reduction, KernelError> {
        let rank = shape.len();
        let bad = KernelError::Shape {
            what: "reduction axes do not fit the input and output",
        };
        if rank > RANK {
            return Err(RANK_ERROR);
        }
        let mut reduced = [false; RANK];
        for &a in axes {
            reduced[resolve_axis(a, rank).ok_or(bad)?] = true;
        }
        let mut r = Reduction {
            rank,
            in_strides: strides(shape),
            kept: [1; RANK],
            boxed: [1; RANK],
            outputs: 1,
            count: 1,
        };
        for d in 0..rank {
            if reduced[d] {
                r.count *= shape[d];
                r.boxed[d] = shape[d];
            } else {
                r.outputs *= shape[d];
                r.kept[d] = shape[d];
            }
        }
        if out_len != r.outputs {
            return Err(bad);
        }
        Ok(r)
    }

    /// Calls `f(output index, input indices of its box)` for each output, the box in
    /// row-major order (the order TFLM accumulates in).
    pub(crate) fn each(&self, mut f: impl FnMut(usize, &mut dyn Iterator<Item = usize>)) {
        let mut at = [0usize; RANK];
        let rank = self.rank;
        for o in 0..self.outputs {
            let base: usize = (0..rank).map(|d| at[d] * self.in_strides[d]).sum();
            let mut r = [0usize; RANK];
            let mut done = self.count == 0;
            let mut it = core::iter::from_fn(|| {
                if done {
                    return None;
                }
                let i = base + (0..rank).map(|d| r[d] * self.in_strides[d]).sum::<usize>();
                done = !next(&mut r, &self.boxed[..rank]);
                Some(i)
            });
            f(o, &mut it);
            next(&mut at, &self.kept[..rank]);
        }
    }
}

/// `SUM` over the given axes. int8 and int16 as TFLM: the int32 sum of the raw values,
/// minus `input_zero_point · n`, scaled by the Q31 multiplier of `s_in / s_out`, plus the
/// output zero point, saturated to the type; float32 summed in `f32` in TFLM's order;
/// int32 wrapping.
pub(crate) fn sum(mut op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    let (x, q) = input_and_quants(&op)?;
    let out = output(&mut op)?;
    let out_quant = out.quant;
    // The reduction into `outputs` elements, when the input holds its shape's elements.
    let reduction = |outputs: usize| {
        let r = Reduction::new(x.shape, o.axes.as_slice(), outputs)?;
        if x.data.len() == Some(elements(x.shape)) || elements(x.shape) == 0 {
            Ok(r)
        } else {
            Err(KernelError::Shape {
                what: "SUM's input length is not its shape's",
            })
        }
    };
    match (x.data, &mut out.data, q) {
        (Data::I8(v), DataMut::I8(y), Some((qi, qo))) => {
            let r = reduction(y.len())?;
            sum_quantized(&r, (v, x.shape), y, qi, qo, |q| q.clamp(-128, 127) as i8);
            Ok(())
        }
        (Data::I16(v), DataMut::I16(y), _) => {
            let qi = params(x.quant, "input 0")?;
            let qo = params(out_quant, "output 0")?;
            let r = reduction(y.len())?;
            sum_quantized(&r, (v, x.shape), y, qi, qo, |q| {
                q.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
            });
            Ok(())
        }
        (Data::F32(v), DataMut::F32(y), _) => {
            let r = reduction(y.len())?;
            r.each(|k, it| y[k] = it.fold(0.0f32, |s, i| s + v[i]));
            Ok(())
        }
        (Data::I32(v), DataMut::I32(y), _) => {
            let r = reduction(y.len())?;
            r.each(|k, it| y[k] = it.fold(0i32, |s, i| s.wrapping_add(v[i])));
            Ok(())
        }
        (Data::InPlace(_), _, _) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (SUM runs int8, int16, int32 or float32 throughout)",
        }),
    }
}

/// The int8 or int16 `SUM` of `v` (of `shape`) into `y` ([`sum`]); an input of no elements
/// gives zeros.
fn sum_quantized<T: Copy + Default + Into<i32>>(
    r: &Reduction,
    (v, shape): (&[T], &[usize]),
    y: &mut [T],
    (si, zi): (f32, i32),
    (so, zo): (f32, i32),
    narrow: impl Fn(i32) -> T,
) {
    let m = quantize_multiplier(f64::from(si) / f64::from(so));
    let n = r.count as i64;
    if elements(shape) == 0 {
        y.fill(T::default());
        return;
    }
    r.each(|k, it| {
        let total = it.fold(0i32, |s, i| s.wrapping_add(v[i].into()));
        let shifted = (i64::from(total) - i64::from(zi) * n) as i32;
        y[k] = narrow(multiply_by_quantized_multiplier(shifted, m).saturating_add(zo));
    });
}

/// `REDUCE_MAX` over the given axes: the largest raw value (TFLM requires int8 input and
/// output to share their quantisation, and so does this kernel); float32 too. An empty
/// box gives the type's lowest value.
pub(crate) fn reduce_max(op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    reduce_extreme(op, o, true)
}

/// `REDUCE_MIN` over the given axes: the smallest raw value, as [`reduce_max`] (an empty
/// box gives the type's largest value).
pub(crate) fn reduce_min(op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    reduce_extreme(op, o, false)
}

/// `REDUCE_MAX` (`max`) or `REDUCE_MIN`: TFLM keeps the current value unless the new one
/// is greater (smaller), starting from the type's lowest (largest) value.
fn reduce_extreme(mut op: OpView<'_, '_>, o: &ReduceOptions, max: bool) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    if let Data::I8(_) = x.data {
        let qi = params(x.quant, "input 0")?;
        let qo = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
        if qi != qo {
            return Err(KernelError::Quantization {
                tensor: "output 0 (quantised otherwise than the input)",
            });
        }
    }
    fn pick<T: PartialOrd + Copy>(max: bool) -> impl Fn(T, T) -> T {
        move |current, v| {
            if (max && v > current) || (!max && v < current) {
                v
            } else {
                current
            }
        }
    }
    let out = output(&mut op)?;
    match (x.data, &mut out.data) {
        (Data::I8(v), DataMut::I8(y)) if v.len() == elements(x.shape) => {
            let r = Reduction::new(x.shape, o.axes.as_slice(), y.len())?;
            let (start, f) = (if max { i8::MIN } else { i8::MAX }, pick(max));
            r.each(|k, it| y[k] = it.fold(start, |m, i| f(m, v[i])));
            Ok(())
        }
        (Data::F32(v), DataMut::F32(y)) if v.len() == elements(x.shape) => {
            let r = Reduction::new(x.shape, o.axes.as_slice(), y.len())?;
            let (start, f) = (if max { f32::MIN } else { f32::MAX }, pick(max));
            r.each(|k, it| y[k] = it.fold(start, |m, i| f(m, v[i])));
            Ok(())
        }
        (Data::InPlace(_), _) => Err(KernelError::Missing { tensor: "input 0" }),
        (Data::I8(_) | Data::F32(_), DataMut::I8(_) | DataMut::F32(_)) => Err(KernelError::Shape {
            what: "REDUCE_MAX's or REDUCE_MIN's input length is not its shape's, or its types differ",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (REDUCE_MAX and REDUCE_MIN run int8 or float32)",
        }),
    }
}

/// `REDUCE_ALL` over the given axes of a bool input: true when every element of the box
/// is (an empty box gives true).
pub(crate) fn reduce_all(mut op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    match (x.data, &mut out.data) {
        (Data::U8(v), DataMut::U8(y)) if v.len() == elements(x.shape) => {
            let r = Reduction::new(x.shape, o.axes.as_slice(), y.len())?;
            r.each(|k, mut it| y[k] = u8::from(Iterator::all(&mut it, |i| v[i] != 0)));
            Ok(())
        }
        (Data::U8(_), DataMut::U8(_)) => Err(KernelError::Shape {
            what: "REDUCE_ALL's input length is not its shape's",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (REDUCE_ALL runs bool)",
        }),
    }
}
