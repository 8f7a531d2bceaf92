//! `SQUEEZE`, `EXPAND_DIMS`, `SLICE` and `PADV2`: elements moved without arithmetic, any
//! element type.

use planner_rt::kernel::{Data, DataMut, In, OpView};
use planner_rt::options::{
    ExpandDimsOptions, PadOptions, ReshapeOptions, SliceOptions, SqueezeOptions,
};

use crate::reference::KernelError;
use crate::reference::common::index::{RANK, next, strides};
use crate::reference::common::operands::{El, input, same_type};
use crate::reference::common::{elements, output};
use crate::reference::shape::pad_fits;

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
    pad_fits(x_shape, y_shape, before)?;
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
