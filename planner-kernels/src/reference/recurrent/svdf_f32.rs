//! float32 `SVDF`, with TFLite Micro's float arithmetic in its order: the whole state
//! shifted one step back, each filter's projection of the input (`Σ w · x` from `0.0`, one
//! product after another) stored as the newest step of its state row, then per unit the bias
//! (or `0.0`) plus its `rank` filters' time sums (`Σ w_t · s` from `0.0`) in filter order, and
//! the fused activation as TFLM's `ActivationValFloat` applies it.

use planner_rt::kernel::{DataMut, OpView, Out};
use planner_rt::options::{Activation, SvdfOptions};

use super::state_at;
use crate::reference::KernelError;
use crate::reference::common::float::tanhf;
use crate::reference::common::operands::typed_elements;

/// True when input 0 of the op holds `f32` elements: this kernel runs it.
pub(crate) fn is_float(op: &OpView<'_, '_>) -> bool {
    op.input(0).is_some_and(|x| x.f32().is_some())
}

/// float32 `SVDF` (module docs).
pub(crate) fn svdf(op: OpView<'_, '_>, o: &SvdfOptions) -> Result<(), KernelError> {
    let operand = |i: usize, tensor: &'static str| {
        let t = op.input(i).ok_or(KernelError::Missing { tensor })?;
        Ok::<_, KernelError>((t.f32().ok_or(KernelError::Type { tensor })?, t.shape))
    };
    let (x, x_shape) = operand(0, "input 0")?;
    let (wf, wf_shape) = operand(1, "input 1 (feature weights)")?;
    let (wt, wt_shape) = operand(2, "input 2 (time weights)")?;
    let bias = match op.input(3) {
        Some(b) => Some(b.f32().ok_or(KernelError::Type {
            tensor: "input 3 (bias)",
        })?),
        None => None,
    };
    let bad = KernelError::Shape {
        what: "svdf input, weights, bias, state and output do not fit",
    };
    let (&[batch, input], &[filters, input2], &[filters2, memory]) = (x_shape, wf_shape, wt_shape)
    else {
        return Err(bad);
    };
    let rank = usize::try_from(o.rank).unwrap_or(0);
    let units = filters.checked_div(rank).ok_or(bad)?;
    let per_batch = filters.checked_mul(memory).ok_or(bad)?;
    let fits = input == input2
        && filters == filters2
        && memory > 0
        && filters % rank == 0
        && Some(x.len()) == batch.checked_mul(input)
        && Some(wf.len()) == filters.checked_mul(input)
        && wt.len() == per_batch
        && bias.is_none_or(|b| b.len() == units);
    if !fits {
        return Err(bad);
    }
    let activation = activation(o.activation)?;
    let state = match op.variables.get_mut(state_at(&op)?).map(|s| &mut s.data) {
        Some(DataMut::F32(s)) => s,
        _ => {
            return Err(KernelError::Type {
                tensor: "input 4 (state)",
            });
        }
    };
    let y = typed_elements!(op.outputs.first_mut(), F32, "output 0");
    if Some(state.len()) != per_batch.checked_mul(batch)
        || Some(y.len()) != batch.checked_mul(units)
    {
        return Err(bad);
    }
    state.copy_within(1.., 0);
    for b in 0..batch {
        let x = &x[b * input..(b + 1) * input];
        let s = &mut state[b * per_batch..(b + 1) * per_batch];
        for f in 0..filters {
            let mut dot = 0.0f32;
            for (&w, &v) in wf[f * input..(f + 1) * input].iter().zip(x) {
                dot += w * v;
            }
            s[(f + 1) * memory - 1] = dot;
        }
        for u in 0..units {
            let mut v = bias.and_then(|b| b.get(u)).copied().unwrap_or(0.0);
            for f in u * rank..(u + 1) * rank {
                let rows = f * memory..(f + 1) * memory;
                let mut sum = 0.0f32;
                for (&w, &sv) in wt[rows.clone()].iter().zip(&s[rows]) {
                    sum += w * sv;
                }
                v += sum;
            }
            y[b * units + u] = activation(v);
        }
    }
    Ok(())
}

/// TFLM's `ActivationValFloat` for `a`: `std::max` and `std::min` (`max(x, y)` is `x < y ?
/// y : x`), `tanh`, and the sign bit as `0.0` or `1.0`.
fn activation(a: Activation) -> Result<fn(f32) -> f32, KernelError> {
    fn max(x: f32, y: f32) -> f32 {
        if x < y { y } else { x }
    }
    fn min(x: f32, y: f32) -> f32 {
        if y < x { y } else { x }
    }
    Ok(match a {
        Activation::None => |v| v,
        Activation::Relu => |v| max(0.0, v),
        Activation::ReluN1To1 => |v| max(-1.0, min(v, 1.0)),
        Activation::Relu6 => |v| max(0.0, min(v, 6.0)),
        Activation::Tanh => tanhf,
        Activation::SignBit => |v| f32::from(u8::from(v.is_sign_negative())),
    })
}
