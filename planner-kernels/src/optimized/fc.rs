//! The fast int8 `FULLY_CONNECTED`: a GEMM of the batches by the units; anything else runs
//! the reference kernel.

use planner_rt::kernel::OpView;
use planner_rt::options::{FullyConnectedOptions, WeightsFormat};

use super::mac::gemm_s8;
use super::{Constants, filter_scales, int8_whole, int32_bias};
use crate::prepare::{FilterLayout, RequantInputs};
use crate::reference::conv::fc_shape::{batches, units_depth};
use crate::reference::{
    self, KernelError,
    common::{activation_range, params},
};

/// `FULLY_CONNECTED` (module docs): the fast path when it applies, the reference kernel
/// otherwise.
pub(crate) fn fully_connected(
    op: OpView<'_, '_>,
    o: &FullyConnectedOptions,
) -> Result<(), KernelError> {
    let Some(fc) = plan(&op, o)? else {
        return reference::conv::fc::fully_connected(op, o);
    };
    let Some(y) = op.outputs.first_mut().and_then(|y| y.i8()) else {
        return Err(KernelError::Type { tensor: "output 0" });
    };
    let (units, depth) = (fc.units, fc.depth);
    fc.consts.each(0..units, fc.out, |c0, q| {
        gemm_s8(
            fc.x,
            depth,
            fc.batches,
            &fc.w[c0 * depth..],
            depth,
            q,
            &mut y[c0..],
            units,
        );
    })
}

/// A checked int8 fully-connected layer.
struct Fc<'a> {
    x: &'a [i8],
    w: &'a [i8],
    consts: Constants<'a>,
    batches: usize,
    units: usize,
    depth: usize,
    out: (i32, i32, i32),
}

/// The layer's fast plan; `None` when the reference kernel runs it (another element type,
/// shuffled weights, a weights zero point other than 0, or shapes it refuses).
fn plan<'a>(op: &OpView<'_, 'a>, o: &FullyConnectedOptions) -> Result<Option<Fc<'a>>, KernelError> {
    if o.weights_format != WeightsFormat::Default || !int8_whole(op) || !int32_bias(op) {
        return Ok(None);
    }
    let (Some(xi), Some(wi), Some(out)) = (op.input(0), op.input(1), op.outputs.first()) else {
        return Ok(None);
    };
    let (Some(x), Some(w), Some(wq)) = (xi.i8(), wi.i8(), wi.quant) else {
        return Ok(None);
    };
    let (Ok((in_scale, in_zero)), Ok((_, w_zero)), Ok((out_scale, out_zero))) = (
        params(xi.quant, "input 0"),
        params(wi.quant, "input 1 (weights)"),
        params(out.quant, "output 0"),
    ) else {
        return Ok(None);
    };
    let Ok((units, depth)) = units_depth(wi.shape) else {
        return Ok(None);
    };
    let bias = op.input(2).and_then(|b| b.i32());
    let y_len = match &out.data {
        planner_rt::kernel::DataMut::I8(y) => y.len(),
        _ => return Ok(None),
    };
    let Ok(batches) = batches(
        [x.len(), w.len(), y_len],
        (units, depth),
        bias.map(<[_]>::len),
    ) else {
        return Ok(None);
    };
    let Ok((lo, hi)) = activation_range(o.activation, out_scale, out_zero) else {
        return Ok(None);
    };
    if w_zero != 0 || lo > hi {
        return Ok(None);
    }
    let consts = Constants::new(
        op,
        RequantInputs {
            filter: w,
            layout: FilterLayout::ChannelFirst,
            channels: units,
            bias,
            input_scale: in_scale,
            input_zero_point: in_zero,
            filter_scales: filter_scales(&wq),
            output_scale: out_scale,
        },
    )?;
    Ok(Some(Fc {
        x,
        w,
        consts,
        batches,
        units,
        depth,
        out: (out_zero, lo, hi),
    }))
}
