//! What the kernels of every family share, below all of them: the operand accessors and
//! quantisation parameters of this module, multi-index arithmetic (`index`), patch regions
//! (`region`), the convolution window (`window`), the element-by-element driver (`unary`),
//! float scalar functions (`float`), fixed-point arithmetic (`fixed`) and operand helpers
//! (`operands`). Nothing here imports a family module.

pub(crate) mod fixed;
pub(crate) mod float;
pub(crate) mod index;
pub(crate) mod operands;
pub(crate) mod region;
pub(crate) mod unary;
pub(crate) mod window;

use planner_rt::Quant;
use planner_rt::kernel::{In, OpView, Out};
use planner_rt::options::Activation;

use super::KernelError;

/// A kernel of an op with options `O`.
pub(crate) type OpKernel<O> = fn(OpView<'_, '_>, &O) -> Result<(), KernelError>;

/// Runs `float` when output 0 holds `f32` elements (on whole tensors only), else `int8`.
pub(crate) fn by_output<O>(
    op: OpView<'_, '_>,
    o: &O,
    float: OpKernel<O>,
    int8: OpKernel<O>,
) -> Result<(), KernelError> {
    if float::float_output(&op) {
        whole_tensors(&op)?;
        return float(op, o);
    }
    int8(op, o)
}

/// Refuses a view with a patch region: the float kernels run on whole tensors only.
pub(crate) fn whole_tensors(op: &OpView<'_, '_>) -> Result<(), KernelError> {
    let input = op.inputs.iter().flatten().any(|x| x.region.is_some());
    if input || op.outputs.iter().any(|y| y.region.is_some()) {
        return Err(KernelError::Region { tensor: "input 0" });
    }
    Ok(())
}

/// The quantisations of inputs 0 and 1 and output 0.
pub(crate) fn three_quants(op: &OpView<'_, '_>) -> Result<[(f32, i32); 3], KernelError> {
    Ok([
        params(op.input(0).and_then(|x| x.quant), "input 0")?,
        params(op.input(1).and_then(|x| x.quant), "input 1")?,
        params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
    ])
}

/// Per-tensor quantisation of one tensor: `(scale, zero point)`.
pub(crate) fn params(q: Option<Quant>, tensor: &'static str) -> Result<(f32, i32), KernelError> {
    let (scale, zero) = q
        .and_then(|q| q.params(0))
        .ok_or(KernelError::Quantization { tensor })?;
    let zero = i32::try_from(zero).map_err(|_| KernelError::Quantization { tensor })?;
    Ok((scale, zero))
}

/// Input `i` as int8 with its shape and quantisation.
pub(crate) fn input_i8<'a>(
    op: &OpView<'_, 'a>,
    i: usize,
    tensor: &'static str,
) -> Result<(&'a [i8], In<'a>), KernelError> {
    let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
    match x.i8() {
        Some(d) => Ok((d, x)),
        None => Err(kind_error(&x, tensor)),
    }
}

/// `Missing` for an in-place input, `Type` otherwise.
pub(crate) fn kind_error(x: &In<'_>, tensor: &'static str) -> KernelError {
    match x.data {
        planner_rt::kernel::Data::InPlace(_) => KernelError::Missing { tensor },
        _ => KernelError::Type { tensor },
    }
}

/// Output 0 of the op.
pub(crate) fn output<'o, 'a>(op: &'o mut OpView<'_, 'a>) -> Result<&'o mut Out<'a>, KernelError> {
    op.outputs
        .first_mut()
        .ok_or(KernelError::Missing { tensor: "output 0" })
}

/// Refuses a fused activation other than none, for a kernel that runs none (`what` says
/// which).
pub(crate) fn no_activation(activation: Activation, what: &'static str) -> Result<(), KernelError> {
    if activation != Activation::None {
        return Err(KernelError::Options { what });
    }
    Ok(())
}

/// The int8 range an activation leaves: TFLite's `CalculateActivationRangeQuantized`, with
/// the bounds quantised as `zero_point + round(real / scale)` in `f32`.
pub(crate) fn activation_range(
    activation: Activation,
    scale: f32,
    zero: i32,
) -> Result<(i32, i32), KernelError> {
    let q = |real: f32| zero.saturating_add(round_f32(real / scale));
    let (lo, hi) = (i32::from(i8::MIN), i32::from(i8::MAX));
    Ok(match activation {
        Activation::None => (lo, hi),
        Activation::Relu => (lo.max(q(0.0)), hi),
        Activation::Relu6 => (lo.max(q(0.0)), hi.min(q(6.0))),
        Activation::ReluN1To1 => (lo.max(q(-1.0)), hi.min(q(1.0))),
        Activation::Tanh | Activation::SignBit => {
            return Err(KernelError::Options {
                what: "fused activation TANH or SIGN_BIT",
            });
        }
    })
}

/// The int16 range an activation leaves: TFLite's `CalculateActivationRangeQuantized`
/// (`zero_point + round(real / scale)`, in `f32`, within int16); TANH and SIGN_BIT leave
/// the whole range, as there.
pub(crate) fn int16_activation_range(a: Activation, scale: f32, zero: i32) -> (i32, i32) {
    let q = |real: f32| zero.saturating_add(round_f32(real / scale));
    let (lo, hi) = (i32::from(i16::MIN), i32::from(i16::MAX));
    match a {
        Activation::Relu => (lo.max(q(0.0)), hi),
        Activation::Relu6 => (lo.max(q(0.0)), hi.min(q(6.0))),
        Activation::ReluN1To1 => (lo.max(q(-1.0)), hi.min(q(1.0))),
        _ => (lo, hi),
    }
}

round_half_away! {
    /// `v` rounded half away from zero, saturating to `i32` (NaN gives 0), without `std`.
    pub(crate) fn round_f32(f32) -> i32
}

/// A shape as 4 dimensions, leading ones added (`None` past rank 4).
pub(crate) fn dims4(shape: &[usize]) -> Option<[usize; 4]> {
    let pad = 4usize.checked_sub(shape.len())?;
    let mut out = [1; 4];
    out[pad..].copy_from_slice(shape);
    Some(out)
}

/// Product of a shape.
pub(crate) fn elements(shape: &[usize]) -> usize {
    shape.iter().product()
}
