//! `SPLIT`, `SPLIT_V`, `UNPACK` and `PACK`: blocks copied along one axis, any element type
//! (input and outputs of one type; int8 values are copied as they are, as TFLM does, without
//! requantising).
//!
//! Seen around the axis, a tensor is `[outer, size, inner]`: `SPLIT`, `SPLIT_V` and `UNPACK`
//! cut the input's `size` into the outputs' (each output's from its element count, so
//! `UNPACK`'s outputs, which drop the axis, take 1 each), and `PACK` puts its inputs side by
//! side along the output's new axis.

use planner_rt::kernel::{Data, DataMut, OpView};
use planner_rt::options::{PackOptions, SplitOptions, SplitVOptions, UnpackOptions};

use crate::reference::KernelError;

/// `axis` (negative counts from the end) of a tensor of `rank` dimensions.
fn axis_of(axis: i32, rank: usize, what: &'static str) -> Result<usize, KernelError> {
    let rank_i = i64::try_from(rank).unwrap_or(i64::MAX);
    let a = i64::from(axis);
    let a = if a < 0 { a + rank_i } else { a };
    if (0..rank_i).contains(&a) {
        Ok(a as usize)
    } else {
        Err(KernelError::Shape { what })
    }
}

/// Copies `len` elements of `x` from `from` into `y` at `at`; both of one element type.
fn copy_block(
    x: Data<'_>,
    from: usize,
    y: &mut DataMut<'_>,
    at: usize,
    len: usize,
    tensor: &'static str,
) -> Result<(), KernelError> {
    let past = KernelError::Shape {
        what: "a block past a tensor's end",
    };
    macro_rules! copy {
        ($($v:ident),*) => {
            match (x, y) {
                $((Data::$v(a), DataMut::$v(b)) => {
                    let src = a.get(from..from + len).ok_or(past)?;
                    b.get_mut(at..at + len).ok_or(past)?.copy_from_slice(src);
                })*
                (Data::InPlace(_) | Data::Variable(_), _) => {
                    return Err(KernelError::Missing { tensor })
                }
                _ => return Err(KernelError::Type { tensor }),
            }
        };
    }
    copy!(I8, U8, I16, U16, I32, U32, I64, U64, F32, F64);
    Ok(())
}

/// Cuts input `input` along `axis` into the outputs, in order.
fn split_along(
    op: &mut OpView<'_, '_>,
    input: usize,
    axis: i32,
    tensor: &'static str,
) -> Result<(), KernelError> {
    let x = op.input(input).ok_or(KernelError::Missing { tensor })?;
    let a = axis_of(
        axis,
        x.shape.len(),
        "the axis is outside the input's dimensions",
    )?;
    let outer: usize = x.shape[..a].iter().product();
    let total = x.shape[a];
    let inner: usize = x.shape[a + 1..].iter().product();
    if x.data.len() != Some(outer * total * inner) {
        return Err(match x.data {
            Data::InPlace(_) | Data::Variable(_) => KernelError::Missing { tensor },
            _ => KernelError::Shape {
                what: "the input's length is not its shape's",
            },
        });
    }
    let block = outer * inner;
    let mut start = 0;
    for out in op.outputs.iter_mut() {
        let len = out.data.as_data().len().unwrap_or(0);
        let size = len.checked_div(block).unwrap_or(0);
        if size * block != len {
            return Err(KernelError::Shape {
                what: "an output is not whole slices of the input along the axis",
            });
        }
        for o in 0..outer {
            copy_block(
                x.data,
                (o * total + start) * inner,
                &mut out.data,
                o * size * inner,
                size * inner,
                tensor,
            )?;
        }
        start += size;
    }
    if block != 0 && start != total {
        return Err(KernelError::Shape {
            what: "the outputs' sizes along the axis do not add up to the input's",
        });
    }
    Ok(())
}

/// `SPLIT`: input 1 cut into equal parts along the axis (the outputs' shapes say how).
pub(crate) fn split(mut op: OpView<'_, '_>, o: &SplitOptions) -> Result<(), KernelError> {
    split_along(&mut op, 1, o.axis, "input 1")
}

/// `SPLIT_V`: input 0 cut along the axis into the outputs' sizes.
pub(crate) fn split_v(mut op: OpView<'_, '_>, o: &SplitVOptions) -> Result<(), KernelError> {
    split_along(&mut op, 0, o.axis, "input 0")
}

/// `UNPACK`: input 0 taken apart along the axis, one slice per output.
pub(crate) fn unpack(mut op: OpView<'_, '_>, o: &UnpackOptions) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let a = axis_of(
        o.axis,
        x.shape.len(),
        "the axis is outside the input's dimensions",
    )?;
    if x.shape[a] != op.outputs.len() {
        return Err(KernelError::Shape {
            what: "UNPACK has not one output per slice along the axis",
        });
    }
    split_along(&mut op, 0, o.axis, "input 0")
}

/// `PACK`: the inputs (of one shape) side by side along the output's new axis.
pub(crate) fn pack(mut op: OpView<'_, '_>, o: &PackOptions) -> Result<(), KernelError> {
    let count = op.inputs.len();
    let inputs = op.inputs;
    let out = crate::reference::common::output(&mut op)?;
    let a = axis_of(
        o.axis,
        out.shape.len(),
        "the axis is outside the output's dimensions",
    )?;
    let outer: usize = out.shape[..a].iter().product();
    let inner: usize = out.shape[a + 1..].iter().product();
    if out.shape[a] != count {
        return Err(KernelError::Shape {
            what: "PACK's output has not one slice per input along the axis",
        });
    }
    for (k, x) in inputs.iter().enumerate() {
        let x = x.ok_or(KernelError::Missing {
            tensor: "an input of PACK",
        })?;
        if x.data.len().is_some_and(|n| n != outer * inner) {
            return Err(KernelError::Shape {
                what: "a PACK input's length is not one slice of the output",
            });
        }
        for o in 0..outer {
            copy_block(
                x.data,
                o * inner,
                &mut out.data,
                (o * count + k) * inner,
                inner,
                "an input of PACK",
            )?;
        }
    }
    Ok(())
}
