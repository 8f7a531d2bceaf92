//! Row overlap in a plan file ([`InPlaceEntry::rows`](crate::InPlaceEntry::rows)): the
//! geometry `include_model!` checks and runs such an op with.

use std::string::String;
use std::vec::Vec;

use planner_rt::rows::Rows;

use crate::{OpEntry, PlanFile};

/// The rows of op `op` of `file`, which the file runs with row overlap: its output 0
/// written over its input 0 ([`Rows::of`] from the op's options and the shapes of its
/// input 0, output 0 and, for a convolution, filter), on regions of one element type the
/// kernels run (the patch stage's rule, [`crate::patch::stage_op`]). `Err` says why not,
/// worded to follow "op 3 (CONV_2D) runs with row overlap, but ".
pub fn op_rows(file: &PlanFile, op: &OpEntry) -> Result<Rows, String> {
    let tensor = |t: Option<u32>| t.and_then(|t| file.tensors.get(t as usize));
    let dims = |t: Option<u32>| -> Option<Vec<usize>> {
        tensor(t)?
            .shape
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect()
    };
    let (input, output) = (
        op.inputs.first().copied().flatten(),
        op.outputs.first().copied(),
    );
    let filter = op.inputs.get(1).copied().flatten();
    let (Some(x), Some(y)) = (tensor(input), tensor(output)) else {
        return Err("it has no input 0 or output 0".into());
    };
    let rows = match (dims(input), dims(output)) {
        (Some(xs), Some(ys)) => Rows::of(&op.options, &xs, &ys, dims(filter).as_deref()),
        _ => None,
    };
    let rows = rows.ok_or_else(|| {
        format!(
            "it does not slide a window down a [1, H, W, C] input (`{}` {:?} into `{}` {:?}); \
             row overlap runs CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D",
            x.id, x.shape, y.id, y.shape
        )
    })?;
    crate::patch::stage_op(&op.opcode, y.dtype, false)
        .map_err(|why| format!("its kernel runs it on row bands as regions, and {why}"))?;
    if x.dtype != y.dtype {
        return Err(format!(
            "its input `{}` is {:?} and its output `{}` {:?}; both must be of one element type",
            x.id, x.dtype, y.id, y.dtype
        ));
    }
    match op.in_place {
        Some(ip) if ip.input == 0 && ip.output == 0 && ip.temp.is_none() => Ok(rows),
        _ => Err("it must write output 0 over input 0, without a temporary".into()),
    }
}
