//! Batch 1's kinds that pick, reduce or move elements: `ARG_MAX`, `GATHER`, `SUM`,
//! `REDUCE_MAX`, `SQUEEZE`, `EXPAND_DIMS`, `SLICE` and `PADV2`; and, with the same code,
//! issue 39's `ARG_MIN`, `REDUCE_MIN` and `REDUCE_ALL`.

use super::*;

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

/// `GATHER` along `axis` with `batch_dims` leading batch dimensions, as TFLM: for each
/// batch, each outer index (the dimensions between the batch ones and the axis) and each
/// coordinate, the inner block at that coordinate. Indices int32 or int64; an index
/// outside the axis (undefined in TFLM) is refused.
pub(crate) fn gather(mut op: OpView<'_, '_>, o: &GatherOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let coords = input(&op, 1, "input 1 (indices)")?;
    let rank = x.shape.len();
    let bad = KernelError::Shape {
        what: "GATHER's axis or batch_dims do not fit the input and indices",
    };
    let axis = resolve_axis(o.axis, rank).ok_or(bad)?;
    let batch_dims = if o.batch_dims < 0 {
        o.batch_dims + coords.shape.len() as i32
    } else {
        o.batch_dims
    };
    let batch_dims = usize::try_from(batch_dims)
        .ok()
        .filter(|&b| b <= axis && b < rank && b <= coords.shape.len())
        .ok_or(bad)?;
    if x.shape[..batch_dims] != coords.shape[..batch_dims] {
        return Err(bad);
    }
    let batches: usize = x.shape[..batch_dims].iter().product();
    let outer: usize = x.shape[batch_dims..axis].iter().product();
    let axis_size = x.shape[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    let per_batch: usize = coords.shape[batch_dims..].iter().product();
    let index: &dyn Fn(usize) -> Option<i64> = match coords.data {
        Data::I32(c) => &move |k| c.get(k).map(|&v| i64::from(v)),
        Data::I64(c) => &move |k| c.get(k).copied(),
        _ => {
            return Err(KernelError::Type {
                tensor: "input 1 (GATHER's indices are int32 or int64)",
            });
        }
    };
    if coords.data.len() != Some(batches * per_batch) {
        return Err(bad);
    }
    let out = output(&mut op)?;
    let dims = Dims {
        batches,
        outer,
        axis_size,
        inner,
        per_batch,
    };
    same_type!(x.data, &mut out.data, gather_t(dims, index))
}

/// The sizes a gather works over.
#[derive(Clone, Copy)]
struct Dims {
    batches: usize,
    outer: usize,
    axis_size: usize,
    inner: usize,
    per_batch: usize,
}

fn gather_t<T: El>(
    x: &[T],
    y: &mut [T],
    d: Dims,
    index: &dyn Fn(usize) -> Option<i64>,
) -> Result<(), KernelError> {
    if x.len() != d.batches * d.outer * d.axis_size * d.inner
        || y.len() != d.batches * d.outer * d.per_batch * d.inner
    {
        return Err(KernelError::Shape {
            what: "GATHER's output is not the input with the axis replaced by the indices' shape",
        });
    }
    let mut at = 0;
    for b in 0..d.batches {
        for o in 0..d.outer {
            for c in 0..d.per_batch {
                let k = index(b * d.per_batch + c)
                    .and_then(|k| usize::try_from(k).ok())
                    .filter(|&k| k < d.axis_size)
                    .ok_or(KernelError::Shape {
                        what: "a GATHER index outside the gathered axis",
                    })?;
                let from = ((b * d.outer + o) * d.axis_size + k) * d.inner;
                y[at..at + d.inner].copy_from_slice(&x[from..from + d.inner]);
                at += d.inner;
            }
        }
    }
    Ok(())
}

/// The reduction of `SUM` and `REDUCE_MAX`: which dimensions are reduced, and the output
/// positions and the reduced box.
struct Reduction {
    rank: usize,
    in_strides: [usize; RANK],
    kept: [usize; RANK],
    boxed: [usize; RANK],
    outputs: usize,
    count: usize,
}

impl Reduction {
    fn new(shape: &[usize], o: &ReduceOptions, out_len: usize) -> Result<Reduction, KernelError> {
        let rank = shape.len();
        let bad = KernelError::Shape {
            what: "reduction axes do not fit the input and output",
        };
        if rank > RANK {
            return Err(RANK_ERROR);
        }
        let mut reduced = [false; RANK];
        for &a in o.axes.as_slice() {
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
    fn each(&self, mut f: impl FnMut(usize, &mut dyn Iterator<Item = usize>)) {
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

/// `SUM` over the given axes. int8 as TFLM: the int32 sum of the raw values, minus
/// `input_zero_point · n`, scaled by the Q31 multiplier of `s_in / s_out`, plus the output
/// zero point, saturated; float32 summed in `f32` in TFLM's order; int32 wrapping.
pub(crate) fn sum(mut op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    let (x, q) = input_and_quants(&op)?;
    let out = output(&mut op)?;
    let len_ok = |n: usize| {
        if x.data.len() == Some(elements(x.shape)) && n > 0 || elements(x.shape) == 0 {
            Ok(())
        } else {
            Err(KernelError::Shape {
                what: "SUM's input length is not its shape's",
            })
        }
    };
    match (x.data, &mut out.data, q) {
        (Data::I8(v), DataMut::I8(y), Some(((si, zi), (so, zo)))) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            len_ok(v.len().max(1))?;
            let m = quantize_multiplier(f64::from(si) / f64::from(so));
            let n = r.count as i64;
            if elements(x.shape) == 0 {
                y.fill(0);
                return Ok(());
            }
            r.each(|k, it| {
                let total = it.fold(0i32, |s, i| s.wrapping_add(i32::from(v[i])));
                let shifted = (i64::from(total) - i64::from(zi) * n) as i32;
                y[k] = multiply_by_quantized_multiplier(shifted, m)
                    .saturating_add(zo)
                    .clamp(-128, 127) as i8;
            });
            Ok(())
        }
        (Data::F32(v), DataMut::F32(y), _) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            len_ok(v.len().max(1))?;
            r.each(|k, it| y[k] = it.fold(0.0f32, |s, i| s + v[i]));
            Ok(())
        }
        (Data::I32(v), DataMut::I32(y), _) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            len_ok(v.len().max(1))?;
            r.each(|k, it| y[k] = it.fold(0i32, |s, i| s.wrapping_add(v[i])));
            Ok(())
        }
        (Data::InPlace(_), _, _) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (SUM runs int8, int32 or float32 throughout)",
        }),
    }
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
            let r = Reduction::new(x.shape, o, y.len())?;
            let (start, f) = (if max { i8::MIN } else { i8::MAX }, pick(max));
            r.each(|k, it| y[k] = it.fold(start, |m, i| f(m, v[i])));
            Ok(())
        }
        (Data::F32(v), DataMut::F32(y)) if v.len() == elements(x.shape) => {
            let r = Reduction::new(x.shape, o, y.len())?;
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
            let r = Reduction::new(x.shape, o, y.len())?;
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

/// `SQUEEZE`: the same bytes under the shape without the size-1 dimensions.
pub(crate) fn squeeze(op: OpView<'_, '_>, _: &SqueezeOptions) -> Result<(), KernelError> {
    crate::reference::shape::reshape(op, &ReshapeOptions::default())
}

/// `EXPAND_DIMS`: the same bytes under the shape with a size-1 dimension added.
pub(crate) fn expand_dims(op: OpView<'_, '_>, _: &ExpandDimsOptions) -> Result<(), KernelError> {
    crate::reference::shape::reshape(op, &ReshapeOptions::default())
}

/// `SLICE`: the box of the output's shape at `begin` of the input, of any element type the
/// data-moving kernels handle.
pub(crate) fn slice(mut op: OpView<'_, '_>, o: &SliceOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let (x_shape, y_shape) = (x.shape, out.shape);
    let begin = o.begin.as_slice();
    let size = o.size.as_slice();
    let rank = x_shape.len();
    let fits = rank <= RANK
        && begin.len() == rank
        && size.len() == rank
        && y_shape.len() == rank
        && (0..rank).all(|d| {
            usize::try_from(begin[d]).is_ok_and(|b| {
                let n = if size[d] < 0 {
                    x_shape[d].checked_sub(b)
                } else {
                    usize::try_from(size[d]).ok()
                };
                n == Some(y_shape[d]) && b + y_shape[d] <= x_shape[d]
            })
        });
    if !fits {
        return Err(KernelError::Shape {
            what: "SLICE's begin and size do not fit the input and output",
        });
    }
    let offset = offsets(begin);
    same_type!(
        x.data,
        &mut out.data,
        copy_box((x_shape, y_shape), &offset, None)
    )
}

/// Per-dimension offsets (checked non-negative and at most [`RANK`] of them by the caller)
/// as a [`RANK`]-array, zeros after the last.
fn offsets(v: &[i32]) -> [usize; RANK] {
    let mut offset = [0usize; RANK];
    for (o, &v) in offset.iter_mut().zip(v) {
        *o = usize::try_from(v).unwrap_or(0);
    }
    offset
}

/// Copies the box where the output sits in the input (`SLICE`, no `pad`), or where the
/// input sits in the output (`PADV2`, the rest filled with `pad`), at `offset`.
fn copy_box<T: El>(
    x: &[T],
    y: &mut [T],
    (x_shape, y_shape): (&[usize], &[usize]),
    offset: &[usize; RANK],
    pad: Option<T>,
) -> Result<(), KernelError> {
    if x.len() != elements(x_shape) || y.len() != elements(y_shape) {
        return Err(KernelError::Shape {
            what: match pad {
                None => "SLICE's tensors are not their shapes' length",
                Some(_) => "PADV2's tensors are not their shapes' length",
            },
        });
    }
    let (inner, outer) = match pad {
        None => (y_shape, x_shape),
        Some(value) => {
            y.fill(value);
            (x_shape, y_shape)
        }
    };
    let s = strides(outer);
    let rank = inner.len();
    let mut index = [0usize; RANK];
    for i in 0..elements(inner) {
        let at: usize = (0..rank).map(|d| (index[d] + offset[d]) * s[d]).sum();
        match pad {
            None => y[i] = x[at],
            Some(_) => y[at] = x[i],
        }
        next(&mut index, inner);
    }
    Ok(())
}

/// `PADV2`: the input at offset `before` in an output filled with the constant pad value
/// (input 2, a scalar of the input's type; the output's zero point for int8, else zero,
/// when it is left out), of any element type the data-moving kernels handle. TFLM pads
/// int8 with the value's raw byte (its prepare requires it to share the output's
/// quantisation).
pub(crate) fn padv2(mut op: OpView<'_, '_>, o: &PadOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let value = op.input(2);
    let out = output(&mut op)?;
    let zero = match out.quant.and_then(|q| q.params(0)) {
        Some((_, z)) => z,
        None => 0,
    };
    let (x_shape, y_shape) = (x.shape, out.shape);
    let before = o.before.as_slice();
    let rank = x_shape.len();
    let fits = rank <= RANK
        && before.len() == rank
        && y_shape.len() == rank
        && (0..rank)
            .all(|d| usize::try_from(before[d]).is_ok_and(|b| b + x_shape[d] <= y_shape[d]));
    if !fits {
        return Err(KernelError::Shape {
            what: "pad amounts do not fit the input and output",
        });
    }
    let offset = offsets(before);
    /// The pad value of type `T`: input 2's one element, or `default`.
    fn value_of<T: El>(value: Option<In<'_>>, default: T) -> Result<T, KernelError> {
        match value {
            None => Ok(default),
            Some(v) => T::of(v.data)
                .and_then(|s| s.first().copied())
                .ok_or(KernelError::Type {
                    tensor: "input 2 (the pad value: one element of the input's type)",
                }),
        }
    }
    let v8 = value_of(value, zero.clamp(-128, 127) as i8);
    let v16 = value_of(value, 0i16);
    let v32 = value_of(value, 0i32);
    let vf = value_of(value, 0.0f32);
    match (x.data, &mut out.data) {
        (Data::I8(a), DataMut::I8(b)) => copy_box(a, b, (x_shape, y_shape), &offset, Some(v8?)),
        (Data::I16(a), DataMut::I16(b)) => copy_box(a, b, (x_shape, y_shape), &offset, Some(v16?)),
        (Data::I32(a), DataMut::I32(b)) => copy_box(a, b, (x_shape, y_shape), &offset, Some(v32?)),
        (Data::F32(a), DataMut::F32(b)) => copy_box(a, b, (x_shape, y_shape), &offset, Some(vf?)),
        (Data::InPlace(_), _) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (PADV2 runs int8, int16, int32 or float32 throughout)",
        }),
    }
}
