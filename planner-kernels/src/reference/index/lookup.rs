//! Kinds that look up, fill or describe tensors (issue 39): `GATHER_ND`,
//! `EMBEDDING_LOOKUP`, `DYNAMIC_UPDATE_SLICE`, `FILL`, `ZEROS_LIKE`, `SHAPE`,
//! `BROADCAST_TO` and `BROADCAST_ARGS`. Their operands (indices, shapes, the fill value)
//! are read when the op runs, as TFLM reads them; an index TFLM refuses is refused
//! ([`KernelError::Value`]).

use planner_rt::kernel::{Data, DataMut, OpView};

use crate::reference::common::index::{RANK, broadcast_dims, broadcast_strides, next};
use crate::reference::common::operands::input;
use crate::reference::shape::space::{Ty, ints, remap, remap_from};
use crate::reference::{
    KernelError,
    common::{elements, output, params},
};

/// `GATHER_ND` (float32 or int8 params, int32 indices `[..., nd]`, `nd` at most 5 and at
/// most the params' rank): each index tuple picks the slice of the params' trailing
/// dimensions at its flat offset. As in TFLM only that offset is checked: a tuple whose
/// slice lies outside the params is refused, one whose single index exceeds its dimension
/// but stays inside is taken as TFLM takes it.
pub(crate) fn gather_nd(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let p = input(&op, 0, "input 0 (params)")?;
    let ix = input(&op, 1, "input 1 (indices)")?;
    let indices = ix.i32().ok_or(KernelError::Type {
        tensor: "input 1 (GATHER_ND's indices are int32)",
    })?;
    let nd = ix.shape.last().copied().unwrap_or(0);
    if ix.shape.is_empty() || p.shape.is_empty() || nd > p.shape.len() || nd > 5 {
        return Err(KernelError::Shape {
            what: "GATHER_ND's indices' last dimension is above 5 or above the params' rank",
        });
    }
    let slices: usize = ix.shape[..ix.shape.len() - 1].iter().product();
    let slice: usize = p.shape[nd..].iter().product();
    let total = elements(p.shape);
    let mut strides = [0usize; 5];
    let mut remain = total;
    for (s, &d) in strides.iter_mut().zip(&p.shape[..nd]) {
        remain = remain.checked_div(d).unwrap_or(0);
        *s = remain;
    }
    let out = output(&mut op)?;
    if indices.len() != slices * nd || out.data.as_data().len() != Some(slices * slice) {
        return Err(KernelError::Shape {
            what: "GATHER_ND's output is not the indices' leading shape by the params' slice",
        });
    }
    let error = KernelError::Type {
        tensor: "input 0 or output 0 (GATHER_ND gathers float32 or int8, one type throughout)",
    };
    remap(p.data, &mut out.data, &[Ty::F32, Ty::I8], error, |i| {
        let (s, e) = (i / slice.max(1), i % slice.max(1));
        // Checked: an index far outside the params is refused, never an overflow.
        let from = (0..nd).try_fold(0i64, |acc, j| {
            let stride = i64::try_from(strides[j]).ok()?;
            acc.checked_add(i64::from(indices[s * nd + j]).checked_mul(stride)?)
        });
        match from.and_then(|f| usize::try_from(f).ok()) {
            Some(f) if f.checked_add(slice).is_some_and(|end| end <= total) => Ok(Some(f + e)),
            _ => Err(KernelError::Value {
                what: "a GATHER_ND index tuple outside the params",
            }),
        }
    })
}

/// `EMBEDDING_LOOKUP`: row `ids[i]` of the table (input 1, float32 or int8, 2 or more
/// dimensions) for each of the int32 ids (input 0); an int8 table into a float32 output
/// is dequantised with its scale (zero point 0, as TFLM requires). An id outside the
/// table is refused, as TFLM refuses it.
pub(crate) fn embedding_lookup(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let ids = input(&op, 0, "input 0 (ids)")?;
    let table = input(&op, 1, "input 1 (table)")?;
    let ids = ids.i32().ok_or(KernelError::Type {
        tensor: "input 0 (EMBEDDING_LOOKUP's ids are int32)",
    })?;
    let rows = table.shape.first().copied().unwrap_or(0);
    if table.shape.len() < 2 {
        return Err(KernelError::Shape {
            what: "EMBEDDING_LOOKUP's table has fewer than 2 dimensions",
        });
    }
    let row = elements(&table.shape[1..]);
    let hybrid = match (table.data, op.outputs.first().map(|o| &o.data)) {
        (Data::I8(_), Some(DataMut::F32(_))) => {
            let (scale, zero) = params(table.quant, "input 1")?;
            if zero != 0 {
                return Err(KernelError::Quantization {
                    tensor: "input 1 (an int8 table read as float32 has zero point 0)",
                });
            }
            Some(scale)
        }
        _ => None,
    };
    let out = output(&mut op)?;
    if rows == 0 {
        return Ok(());
    }
    if out.data.as_data().len() != Some(ids.len() * row) {
        return Err(KernelError::Shape {
            what: "EMBEDDING_LOOKUP's output is not one table row per id",
        });
    }
    let source = |i: usize| -> Result<usize, KernelError> {
        let id = ids.get(i / row.max(1)).copied().unwrap_or(-1);
        match usize::try_from(id) {
            Ok(r) if r < rows => Ok(r * row + i % row.max(1)),
            _ => Err(KernelError::Value {
                what: "an EMBEDDING_LOOKUP id outside the table",
            }),
        }
    };
    match (table.data, &mut out.data, hybrid) {
        (Data::I8(t), DataMut::F32(y), Some(scale)) => {
            for (i, v) in y.iter_mut().enumerate() {
                let q = t.get(source(i)?).ok_or(KernelError::Shape {
                    what: "EMBEDDING_LOOKUP's table is shorter than its shape",
                })?;
                *v = scale * f32::from(*q);
            }
            Ok(())
        }
        (data, y, _) => {
            let error = KernelError::Type {
                tensor: "input 1 or output 0 (EMBEDDING_LOOKUP reads float32 or int8 into float32, or int8 into int8)",
            };
            remap(data, y, &[Ty::F32, Ty::I8], error, |i| source(i).map(Some))
        }
    }
}

/// `DYNAMIC_UPDATE_SLICE`: the operand (input 0) with the update (input 1, of the same
/// rank) written at the start indices of input 2 (int32 or int64), each clamped to
/// `[0, dim - update_dim]` as TFLM clamps it. float32, int8, int16 and int32.
pub(crate) fn dynamic_update_slice(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    const BAD: KernelError = KernelError::Type {
        tensor: "input 2 (DYNAMIC_UPDATE_SLICE's start indices are int32 or int64)",
    };
    let x = input(&op, 0, "input 0 (operand)")?;
    let u = input(&op, 1, "input 1 (update)")?;
    let rank = x.shape.len();
    let bad = KernelError::Shape {
        what: "DYNAMIC_UPDATE_SLICE's update is not of the operand's rank and within its shape",
    };
    if u.shape.len() != rank || rank > RANK || u.shape.iter().zip(x.shape).any(|(a, b)| a > b) {
        return Err(bad);
    }
    let mut start = [0usize; RANK];
    let mut count = 0;
    for (d, v) in ints(input(&op, 2, "input 2")?, true, &BAD)?.enumerate() {
        if let (Some(s), Some(&n), Some(&m)) = (start.get_mut(d), x.shape.get(d), u.shape.get(d)) {
            *s = v.clamp(0, (n - m) as i64) as usize;
        }
        count += 1;
    }
    if count != rank {
        return Err(bad);
    }
    let out = output(&mut op)?;
    if out.shape != x.shape {
        return Err(bad);
    }
    let u_strides = crate::reference::common::index::strides(u.shape);
    let mut index = [0usize; RANK];
    let types = &[Ty::F32, Ty::I8, Ty::I16, Ty::I32];
    let error = KernelError::Type {
        tensor: "an input or output 0 (DYNAMIC_UPDATE_SLICE runs float32, int8, int16 or int32, one type throughout)",
    };
    // Operand elements (input 0) where the update (input 1) does not reach.
    remap_from(&[x.data, u.data], &mut out.data, types, error, |i| {
        let inside = (0..rank).all(|d| index[d] >= start[d] && index[d] - start[d] < u.shape[d]);
        let from = if inside {
            (
                1,
                (0..rank)
                    .map(|d| (index[d] - start[d]) * u_strides[d])
                    .sum(),
            )
        } else {
            (0, i)
        };
        next(&mut index, x.shape);
        Ok(Some(from))
    })
}

/// `FILL`: every output element is the scalar of input 1 (float32, int32 or int8, the
/// output's type); the output's shape is the one input 0 states.
pub(crate) fn fill(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let value = input(&op, 1, "input 1 (value)")?;
    if value.data.len() != Some(1) {
        return Err(KernelError::Shape {
            what: "FILL's value is not one element",
        });
    }
    let out = output(&mut op)?;
    let error = KernelError::Type {
        tensor: "input 1 or output 0 (FILL fills float32, int32 or int8 with a value of its type)",
    };
    remap(
        value.data,
        &mut out.data,
        &[Ty::F32, Ty::I32, Ty::I8],
        error,
        |_| Ok(Some(0)),
    )
}

/// `ZEROS_LIKE`: zeros of the input's type (int64, int32, int8 or float32) and shape.
pub(crate) fn zeros_like(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    if out.data.as_data().len() != x.data.len() {
        return Err(KernelError::Shape {
            what: "ZEROS_LIKE's output does not have the input's length",
        });
    }
    let error = KernelError::Type {
        tensor: "input 0 or output 0 (ZEROS_LIKE runs int64, int32, int8 or float32, one type throughout)",
    };
    remap(
        x.data,
        &mut out.data,
        &[Ty::I64, Ty::I32, Ty::I8, Ty::F32],
        error,
        |_| Ok(None),
    )
}

/// `SHAPE`: the input's dimensions, as int32 (TFLM writes no other type).
pub(crate) fn shape(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let DataMut::I32(y) = &mut out.data else {
        return Err(KernelError::Type {
            tensor: "output 0 (TFLM's SHAPE writes int32)",
        });
    };
    if y.len() != x.shape.len() {
        return Err(KernelError::Shape {
            what: "SHAPE's output does not have one element per input dimension",
        });
    }
    for (v, &d) in y.iter_mut().zip(x.shape) {
        *v = i32::try_from(d).map_err(|_| KernelError::Shape {
            what: "a dimension above the int32 range",
        })?;
    }
    Ok(())
}

/// `BROADCAST_TO`: the input repeated along the dimensions where it has size 1 (or which
/// it lacks) to the output's shape (5 dimensions at most, as TFLM), any element type.
pub(crate) fn broadcast_to(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let bad = KernelError::Shape {
        what: "BROADCAST_TO's input does not broadcast to its output (of 5 dimensions at most)",
    };
    if out.shape.len() > 5 || x.shape.len() > out.shape.len() {
        return Err(bad);
    }
    let dims = broadcast_dims(out.shape)?;
    let s = broadcast_strides(x.shape, &dims).ok_or(bad)?;
    let mut index = [0usize; RANK];
    let error = KernelError::Type {
        tensor: "input 0 or output 0 (BROADCAST_TO copies one element type)",
    };
    let all = &[Ty::I8, Ty::U8, Ty::I16, Ty::I32, Ty::I64, Ty::F32];
    remap(x.data, &mut out.data, all, error, |_| {
        let k = index.iter().zip(&s).map(|(i, s)| i * s).sum();
        next(&mut index, &dims);
        Ok(Some(k))
    })
}

/// `BROADCAST_ARGS`: the shape two shapes broadcast to (inputs and output int32, or all
/// int64), aligned at their ends; sizes that differ and are not 1 are refused (TFLM
/// aborts).
pub(crate) fn broadcast_args(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let a = input(&op, 0, "input 0")?;
    let b = input(&op, 1, "input 1")?;
    let out = output(&mut op)?;
    // TFLM reads the sizes as int.
    fn run<T: Copy + Into<i64>>(
        a: &[T],
        b: &[T],
        y: &mut [T],
        back: impl Fn(i64) -> T,
    ) -> Result<(), KernelError> {
        let at = |s: &[T], k: usize| -> i64 {
            s.len()
                .checked_sub(1 + k)
                .and_then(|i| s.get(i))
                .map_or(1, |&v| i64::from(v.into() as i32))
        };
        let n = y.len();
        for k in 0..n {
            let (p, q) = (at(a, k), at(b, k));
            let v = if p == 1 {
                q
            } else if q == 1 || p == q {
                p
            } else {
                return Err(KernelError::Value {
                    what: "BROADCAST_ARGS' shapes do not broadcast",
                });
            };
            y[n - 1 - k] = back(v);
        }
        Ok(())
    }
    match (a.data, b.data, &mut out.data) {
        (Data::I32(p), Data::I32(q), DataMut::I32(y)) => run(p, q, y, |v| v as i32),
        (Data::I64(p), Data::I64(q), DataMut::I64(y)) => run(p, q, y, |v| v),
        _ => Err(KernelError::Type {
            tensor: "an input or output 0 (BROADCAST_ARGS runs int32 or int64, one type throughout)",
        }),
    }
}
