//! `GATHER`, any element type, int32 or int64 indices, with `batch_dims`.

use planner_rt::kernel::{Data, DataMut, OpView};
use planner_rt::options::GatherOptions;

use crate::reference::KernelError;
use crate::reference::common::operands::{El, input, resolve_axis, same_type};
use crate::reference::common::output;

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
