//! `FULLY_CONNECTED`, int8 with an optional int32 bias: `y[b][o] = act(requant(Σ_d (x[b][d]
//! − x_zero) · (w[o][d] − w_zero) + bias[o]))`, per-tensor or per-channel weights.

use planner_rt::kernel::OpView;
use planner_rt::options::FullyConnectedOptions;

use crate::multiply_by_quantized_multiplier;
use crate::reference::common::float::{clamp, float_activation_range};
use crate::reference::common::window::channel_multiplier;
use crate::reference::conv::fc_shape::{batches, default_weights, units_depth};
use crate::reference::{
    KernelError,
    common::{activation_range, input_i8, output, params},
};

pub(crate) fn fully_connected(
    op: OpView<'_, '_>,
    o: &FullyConnectedOptions,
) -> Result<(), KernelError> {
    if crate::reference::conv::int16::int16_input(&op) {
        return crate::reference::conv::int16::fully_connected(op, o);
    }
    crate::reference::common::by_output(op, o, fully_connected_f32, fully_connected_i8)
}

/// The int8 `FULLY_CONNECTED`.
fn fully_connected_i8(
    mut op: OpView<'_, '_>,
    o: &FullyConnectedOptions,
) -> Result<(), KernelError> {
    default_weights(o)?;
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (w, wi) = input_i8(&op, 1, "input 1 (weights)")?;
    let (in_scale, in_zero) = params(xi.quant, "input 0")?;
    let wq = wi.quant.ok_or(KernelError::Quantization {
        tensor: "input 1 (weights)",
    })?;
    let (_, w_zero) = params(wi.quant, "input 1 (weights)")?;
    let (units, depth) = units_depth(wi.shape)?;
    let bias = match op.input(2) {
        Some(b) => Some(b.i32().ok_or(KernelError::Type {
            tensor: "input 2 (bias)",
        })?),
        None => None,
    };
    let out = output(&mut op)?;
    let (out_scale, out_zero) = params(out.quant, "output 0")?;
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    let batches = batches(
        [x.len(), w.len(), y.len()],
        (units, depth),
        bias.map(<[_]>::len),
    )?;
    let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
    for u in 0..units {
        let m = channel_multiplier(in_scale, &wq, out_scale, u);
        let row = &w[u * depth..(u + 1) * depth];
        for b in 0..batches {
            let mut acc: i32 = 0;
            for (xv, wv) in x[b * depth..(b + 1) * depth].iter().zip(row) {
                acc = acc.wrapping_add((i32::from(*xv) - in_zero) * (i32::from(*wv) - w_zero));
            }
            if let Some(bias) = bias {
                acc = acc.wrapping_add(bias[u]);
            }
            y[b * units + u] = multiply_by_quantized_multiplier(acc, m)
                .saturating_add(out_zero)
                .clamp(lo, hi) as i8;
        }
    }
    Ok(())
}

/// `FULLY_CONNECTED`, float: per batch and unit, `Σ_d x[d] · w[u][d]` accumulated in `f32`
/// from `d = 0`, plus the bias, through the fused activation.
fn fully_connected_f32(
    mut op: OpView<'_, '_>,
    o: &FullyConnectedOptions,
) -> Result<(), KernelError> {
    default_weights(o)?;
    let f32_input = |i: usize, tensor: &'static str| {
        let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
        x.f32()
            .map(|d| (d, x.shape))
            .ok_or(KernelError::Type { tensor })
    };
    let (x, _) = f32_input(0, "input 0 (float output, so float input)")?;
    let (w, w_shape) = f32_input(1, "input 1 (weights; float output, so float weights)")?;
    let bias = match op.input(2) {
        Some(_) => Some(f32_input(2, "input 2 (bias; float output, so float bias)")?.0),
        None => None,
    };
    let (units, depth) = units_depth(w_shape)?;
    let (lo, hi) = float_activation_range(o.activation)?;
    let y = output(&mut op)?
        .f32()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    let batches = batches(
        [x.len(), w.len(), y.len()],
        (units, depth),
        bias.map(<[_]>::len),
    )?;
    for b in 0..batches {
        let row = &x[b * depth..(b + 1) * depth];
        for u in 0..units {
            let mut total = 0.0f32;
            for (xv, wv) in row.iter().zip(&w[u * depth..(u + 1) * depth]) {
                total += xv * wv;
            }
            let bias = bias.map_or(0.0, |b| b[u]);
            y[b * units + u] = clamp(total + bias, lo, hi);
        }
    }
    Ok(())
}
