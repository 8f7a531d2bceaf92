//! Comparisons, logical ops and selection (issue 39): `EQUAL`, `NOT_EQUAL`, `GREATER`,
//! `GREATER_EQUAL`, `LESS`, `LESS_EQUAL`, `LOGICAL_AND`, `LOGICAL_OR`, `LOGICAL_NOT` and
//! `SELECT_V2`, with broadcasting as TFLM's (up to 6 dimensions here).
//!
//! A bool tensor is viewed as `u8` (0 or 1): the kernels read any non-zero byte as true and
//! write 0 or 1. The view does not say whether a `u8` tensor is bool or uint8; TFLM runs
//! these kinds on bool only, so a uint8 tensor is computed here as if it held bools (its
//! bytes compared as they are).

use planner_rt::kernel::{Data, DataMut, OpView};

use crate::quantize_multiplier;
use crate::reference::common::index::{RANK, broadcast_strides, next};
use crate::reference::common::operands::{broadcast, input, multiply_exp};
use crate::reference::{
    KernelError,
    common::{elements, output, params},
};

/// Which comparison a kind makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    /// `EQUAL`.
    Equal,
    /// `NOT_EQUAL`.
    NotEqual,
    /// `GREATER`.
    Greater,
    /// `GREATER_EQUAL`.
    GreaterEqual,
    /// `LESS`.
    Less,
    /// `LESS_EQUAL`.
    LessEqual,
}

impl Cmp {
    fn test<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Equal => a == b,
            Cmp::NotEqual => a != b,
            Cmp::Greater => a > b,
            Cmp::GreaterEqual => a >= b,
            Cmp::Less => a < b,
            Cmp::LessEqual => a <= b,
        }
    }

    /// `EQUAL` and `NOT_EQUAL` also compare bools; the orderings do not.
    fn equality(self) -> bool {
        matches!(self, Cmp::Equal | Cmp::NotEqual)
    }
}

/// The comparison `cmp` of inputs 0 and 1, broadcast, into bool output 0. float32, int32
/// and int64 compare the values; int8 compares them after TFLM's rescaling: each operand
/// `(q - zero_point) · 2^8` times the Q31 multiplier of its own scale, so operands of
/// different quantisations compare by their real values, rounded as TFLM rounds them.
/// `EQUAL` and `NOT_EQUAL` compare bools too. int16 is refused: TFLM's orderings accept it
/// but never compute its rescaling parameters.
pub(crate) fn compare(mut op: OpView<'_, '_>, cmp: Cmp) -> Result<(), KernelError> {
    let a = input(&op, 0, "input 0")?;
    let b = input(&op, 1, "input 1")?;
    let int8 = match (a.data, b.data) {
        (Data::I8(_), Data::I8(_)) => {
            let scaled = |q, tensor| -> Result<(i32, i32, i32), KernelError> {
                let (scale, zero) = params(q, tensor)?;
                let m = quantize_multiplier(f64::from(scale));
                Ok((zero, m.multiplier, m.shift))
            };
            Some((scaled(a.quant, "input 0")?, scaled(b.quant, "input 1")?))
        }
        _ => None,
    };
    let out = output(&mut op)?;
    let DataMut::U8(y) = &mut out.data else {
        return Err(KernelError::Type {
            tensor: "output 0 (a comparison writes bool)",
        });
    };
    let shapes = (a.shape, b.shape, out.shape);
    match (a.data, b.data, int8) {
        (Data::F32(p), Data::F32(q), _) => to_bool((p, q), shapes, y, cmp),
        (Data::I32(p), Data::I32(q), _) => to_bool((p, q), shapes, y, cmp),
        (Data::I64(p), Data::I64(q), _) => to_bool((p, q), shapes, y, cmp),
        (Data::U8(p), Data::U8(q), _) if cmp.equality() => {
            broadcast((p, a.shape), (q, b.shape), (y, out.shape), |u, v| {
                u8::from(cmp.test(u != 0, v != 0))
            })
        }
        (Data::I8(p), Data::I8(q), Some((pa, pb))) => {
            // TFLM shifts each offset value left by 8 before the multiplier.
            let scale = |v: i8, (zero, m, shift): (i32, i32, i32)| {
                multiply_exp((i32::from(v) - zero) << 8, m, shift)
            };
            broadcast((p, a.shape), (q, b.shape), (y, out.shape), |u, v| {
                u8::from(cmp.test(scale(u, pa), scale(v, pb)))
            })
        }
        (Data::InPlace(_), _, _) | (_, Data::InPlace(_), _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (comparisons do not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or 1 (comparisons take two float32, int32, int64 or int8 inputs, \
                     EQUAL and NOT_EQUAL bools too)",
        }),
    }
}

/// `y = cmp(p, q)` broadcast, as 0 or 1.
fn to_bool<T: PartialOrd + Copy>(
    (p, q): (&[T], &[T]),
    (ps, qs, ys): (&[usize], &[usize], &[usize]),
    y: &mut [u8],
    cmp: Cmp,
) -> Result<(), KernelError> {
    broadcast((p, ps), (q, qs), (y, ys), |u, v| u8::from(cmp.test(u, v)))
}

/// `LOGICAL_AND` (`and`) or `LOGICAL_OR` of two bool inputs, broadcast.
pub(crate) fn logical(mut op: OpView<'_, '_>, and: bool) -> Result<(), KernelError> {
    let a = input(&op, 0, "input 0")?;
    let b = input(&op, 1, "input 1")?;
    let out = output(&mut op)?;
    match (a.data, b.data, &mut out.data) {
        (Data::U8(p), Data::U8(q), DataMut::U8(y)) => {
            broadcast((p, a.shape), (q, b.shape), (y, out.shape), |u, v| {
                let (u, v) = (u != 0, v != 0);
                u8::from(if and { u && v } else { u || v })
            })
        }
        _ => Err(KernelError::Type {
            tensor: "input 0, input 1 or output 0 (LOGICAL_AND and LOGICAL_OR run bool)",
        }),
    }
}

/// `LOGICAL_NOT` of a bool input.
pub(crate) fn logical_not(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    match (x.data, &mut out.data) {
        (Data::U8(v), DataMut::U8(y)) if v.len() == y.len() => {
            for (o, &i) in y.iter_mut().zip(v) {
                *o = u8::from(i == 0);
            }
            Ok(())
        }
        (Data::U8(_), DataMut::U8(_)) => Err(KernelError::Shape {
            what: "LOGICAL_NOT's output does not have the input's length",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (LOGICAL_NOT runs bool)",
        }),
    }
}

/// `SELECT_V2`: `condition ? x : y` element by element, the three inputs broadcast to the
/// output. `x`, `y` and the output are float32, int8 or int16 of one type; values are
/// copied, not requantised (as in TFLM, whatever the quantisations).
pub(crate) fn select_v2(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let c = input(&op, 0, "input 0 (condition)")?;
    let x = input(&op, 1, "input 1")?;
    let z = input(&op, 2, "input 2")?;
    let out = output(&mut op)?;
    let Data::U8(cond) = c.data else {
        return Err(KernelError::Type {
            tensor: "input 0 (SELECT_V2's condition is bool)",
        });
    };
    let shapes = [c.shape, x.shape, z.shape, out.shape];
    match (x.data, z.data, &mut out.data) {
        (Data::F32(p), Data::F32(q), DataMut::F32(y)) => select(cond, p, q, y, shapes),
        (Data::I8(p), Data::I8(q), DataMut::I8(y)) => select(cond, p, q, y, shapes),
        (Data::I16(p), Data::I16(q), DataMut::I16(y)) => select(cond, p, q, y, shapes),
        _ => Err(KernelError::Type {
            tensor: "input 1, input 2 or output 0 (SELECT_V2 selects float32, int8 or int16 of one type)",
        }),
    }
}

/// `out[i] = cond[i] ? p[i] : q[i]` over the broadcast of the three to `shapes[3]`.
fn select<T: Copy>(
    cond: &[u8],
    p: &[T],
    q: &[T],
    y: &mut [T],
    shapes: [&[usize]; 4],
) -> Result<(), KernelError> {
    let bad = KernelError::Shape {
        what: "SELECT_V2's inputs do not broadcast to its output",
    };
    let dims = crate::reference::common::index::broadcast_dims(shapes[3])?;
    let s = [
        broadcast_strides(shapes[0], &dims).ok_or(bad)?,
        broadcast_strides(shapes[1], &dims).ok_or(bad)?,
        broadcast_strides(shapes[2], &dims).ok_or(bad)?,
    ];
    let lens = [cond.len(), p.len(), q.len()];
    if y.len() != elements(&dims) || (0..3).any(|k| lens[k] != elements(shapes[k])) {
        return Err(bad);
    }
    let mut index = [0usize; RANK];
    let at = |s: &[usize; RANK], index: &[usize; RANK]| -> usize {
        index.iter().zip(s).map(|(i, s)| i * s).sum()
    };
    for v in y.iter_mut() {
        let pick = cond.get(at(&s[0], &index)).ok_or(bad)?;
        let from = if *pick != 0 {
            p.get(at(&s[1], &index))
        } else {
            q.get(at(&s[2], &index))
        };
        *v = *from.ok_or(bad)?;
        next(&mut index, &dims);
    }
    Ok(())
}
