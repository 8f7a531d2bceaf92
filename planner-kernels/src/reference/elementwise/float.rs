//! float32 `ADD`, `SUB` and `MUL` with broadcasting, out of place or in place, with TFLite
//! Micro's float reference arithmetic.

use planner_rt::kernel::{Data, OpView};
use planner_rt::options::{Activation, AddOptions, MulOptions};

use crate::reference::KernelError;
use crate::reference::common::float::{clamp, float_activation_range};
use crate::reference::common::index::{NOT_BROADCAST, RANK, broadcast_dims, broadcast_strides};
use crate::reference::common::output;

/// One float operand: its elements, or (in place) output 0's.
#[derive(Clone, Copy)]
enum Operand<'a> {
    Slice(&'a [f32]),
    InPlace,
}

/// A float binary op (`ADD`, `SUB`, `MUL`) with broadcasting: `clamp(f(a, b))` per output
/// element. In place, one input is output 0's bytes and has its exact shape.
fn binary(
    op: &mut OpView<'_, '_>,
    in_place: bool,
    activation: Activation,
    f: fn(f32, f32) -> f32,
) -> Result<(), KernelError> {
    let (lo, hi) = float_activation_range(activation)?;
    let mut operands = [(Operand::InPlace, &[][..]); 2];
    for (i, (slot, tensor)) in operands.iter_mut().zip(["input 0", "input 1"]).enumerate() {
        let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
        *slot = match (x.data, in_place) {
            (Data::F32(d), _) => (Operand::Slice(d), x.shape),
            (Data::InPlace(0), true) => (Operand::InPlace, x.shape),
            (Data::InPlace(_), _) => {
                return Err(KernelError::Missing { tensor });
            }
            _ => return Err(KernelError::Type { tensor }),
        };
    }
    let [(a, a_shape), (b, b_shape)] = operands;
    if in_place != (matches!(a, Operand::InPlace) ^ matches!(b, Operand::InPlace)) {
        return Err(KernelError::Shape {
            what: "in place, exactly one input must be the output's bytes",
        });
    }
    let out = output(op)?;
    let out_shape = out.shape;
    let y = out.f32().ok_or(KernelError::Type { tensor: "output 0" })?;
    let dims = broadcast_dims(out_shape)?;
    for (x, shape) in [(a, a_shape), (b, b_shape)] {
        if matches!(x, Operand::InPlace) && shape != out_shape {
            return Err(KernelError::Shape {
                what: "the in-place input's shape is not the output's",
            });
        }
    }
    let sa = broadcast_strides(a_shape, &dims).ok_or(NOT_BROADCAST)?;
    let sb = broadcast_strides(b_shape, &dims).ok_or(NOT_BROADCAST)?;
    if y.len() != dims.iter().product::<usize>() {
        return Err(NOT_BROADCAST);
    }
    let mut index = [0usize; RANK];
    for i in 0..y.len() {
        let at = |s: &[usize; RANK]| -> usize { index.iter().zip(s).map(|(i, s)| i * s).sum() };
        let get = |x: Operand<'_>, at: usize, y: &[f32]| match x {
            Operand::Slice(s) => s.get(at).copied(),
            Operand::InPlace => y.get(i).copied(),
        };
        let (Some(va), Some(vb)) = (get(a, at(&sa), y), get(b, at(&sb), y)) else {
            return Err(NOT_BROADCAST);
        };
        y[i] = clamp(f(va, vb), lo, hi);
        for d in (0..RANK).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

/// `ADD`, float: `a + b` through the fused activation.
pub(crate) fn add(
    op: &mut OpView<'_, '_>,
    o: &AddOptions,
    in_place: bool,
) -> Result<(), KernelError> {
    binary(op, in_place, o.activation, |a, b| a + b)
}

/// `SUB`, float: `a - b` through the fused activation.
pub(crate) fn sub(
    op: &mut OpView<'_, '_>,
    o: &AddOptions,
    in_place: bool,
) -> Result<(), KernelError> {
    binary(op, in_place, o.activation, |a, b| a - b)
}

/// `MUL`, float: `a · b` through the fused activation.
pub(crate) fn mul(
    op: &mut OpView<'_, '_>,
    o: &MulOptions,
    in_place: bool,
) -> Result<(), KernelError> {
    binary(op, in_place, o.activation, |a, b| a * b)
}
