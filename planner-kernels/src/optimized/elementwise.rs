//! The fast int8 `ADD`, `SUB` and `MUL` (out of place and in place), without patch
//! regions, where each operand has the output's shape or is one row of its last
//! dimension's length broadcast over the others (a per-channel vector, as
//! squeeze-and-excitation blocks multiply by). `ADD` and `SUB` take each input's scaled
//! value from a 256-entry table, one requantisation per element; `MUL` requantises each
//! product. Anything else (other broadcasts, regions, other types) runs the reference
//! kernel.
//!
//! `QUANTIZE` from int8 or int16 to int8 (out of place, whole) requantises runs of
//! [`RUN`] values at a time into the output ([`Scalar::scatter`]: four per vector on
//! Helium, stored as bytes by the DSP extension's assembly); the rest (from
//! float, to int32, in place) runs the reference kernel.

use planner_rt::kernel::{Data, DataMut, OpView};
use planner_rt::options::{AddOptions, MulOptions};

use super::mac::Scalar;
use crate::quantize_multiplier;
use crate::reference::common::params;
use crate::reference::elementwise::{AddSub, Mul};
use crate::reference::{self, KernelError};

/// Values [`quantize`] requantises per call of [`Scalar::scatter`].
const RUN: usize = 64;

/// `QUANTIZE` (module docs): TFLite Micro's `Requantize`, `clamp(mbqm(x - x_zero, m) +
/// y_zero, -128, 127)` with `m` the multiplier of `x_scale / y_scale` (computed in `f64`, as
/// the reference does).
pub(crate) fn quantize(op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let (Some(x), Some(y)) = (op.input(0), op.outputs.first()) else {
        return reference::elementwise::quantize(op, in_place);
    };
    let whole = !in_place && x.region.is_none() && y.region.is_none();
    let n = match (&x.data, &y.data) {
        (Data::I8(d), DataMut::I8(o)) if d.len() == o.len() => d.len(),
        (Data::I16(d), DataMut::I8(o)) if d.len() == o.len() => d.len(),
        _ => 0,
    };
    let (Ok((si, zi)), Ok((so, zo))) = (params(x.quant, "input 0"), params(y.quant, "output 0"))
    else {
        return reference::elementwise::quantize(op, in_place);
    };
    if !whole || n == 0 {
        return reference::elementwise::quantize(op, in_place);
    }
    let m = quantize_multiplier(f64::from(si) / f64::from(so));
    let q = Scalar::new(m.multiplier, m.shift, zo, -128, 127);
    let Some(yd) = op.outputs.first_mut().and_then(|y| y.i8()) else {
        return Err(KernelError::Type { tensor: "output 0" });
    };
    let mut run = [0i32; RUN];
    for (i, ys) in yd.chunks_mut(RUN).enumerate() {
        let vs = &mut run[..ys.len()];
        match x.data {
            Data::I8(d) => widen(&d[i * RUN..], zi, vs),
            Data::I16(d) => widen(&d[i * RUN..], zi, vs),
            _ => {}
        }
        q.scatter(vs, 0, (ys, 1));
    }
    Ok(())
}

/// `out[i] = x[i] - zero` (wrapping, as the reference's release build) for every `out[i]`.
fn widen<T: Copy + Into<i32>>(x: &[T], zero: i32, out: &mut [i32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v.into().wrapping_sub(zero);
    }
}

/// `ADD` (module docs).
pub(crate) fn add(op: OpView<'_, '_>, o: &AddOptions, in_place: bool) -> Result<(), KernelError> {
    match operands(&op, in_place) {
        Some(ops) => add_sub(op, o, ops, false),
        None => reference::elementwise::add(op, o, in_place),
    }
}

/// `SUB` (module docs).
pub(crate) fn sub(op: OpView<'_, '_>, o: &AddOptions, in_place: bool) -> Result<(), KernelError> {
    match operands(&op, in_place) {
        Some(ops) => add_sub(op, o, ops, true),
        None => reference::elementwise::sub(op, o, in_place),
    }
}

/// `MUL` (module docs).
pub(crate) fn mul(op: OpView<'_, '_>, o: &MulOptions, in_place: bool) -> Result<(), KernelError> {
    let Some(ops) = operands(&op, in_place) else {
        return reference::elementwise::mul(op, o, in_place);
    };
    let p = Mul::new(&op, o)?;
    let out = Scalar::new(p.output.multiplier, p.output.shift, p.zero, p.lo, p.hi);
    each(op, ops, |a, b| {
        out.output(p.product(i32::from(a), i32::from(b)))
    })
}

/// One operand of the fast path.
#[derive(Clone, Copy)]
enum Operand<'a> {
    /// The output's shape.
    Same(&'a [i8]),
    /// One row of the output's last dimension, for every row.
    Row(&'a [i8]),
    /// Output 0's own bytes (in place).
    InPlace,
}

/// The two operands and the output's row length when the fast path runs the op: int8,
/// whole, each of the output's shape or a row broadcast along every other dimension,
/// exactly one of them output 0's bytes when `in_place` and none otherwise; the output
/// int8 and whole.
fn operands<'a>(op: &OpView<'_, 'a>, in_place: bool) -> Option<([Operand<'a>; 2], usize)> {
    let y = op.outputs.first()?;
    let DataMut::I8(yd) = &y.data else {
        return None;
    };
    let row = y.shape.last().copied().unwrap_or(1);
    if y.region.is_some() || yd.len() != y.shape.iter().product::<usize>() || row == 0 {
        return None;
    }
    let operand = |i: usize| {
        let x = op.input(i)?;
        if x.region.is_some() {
            return None;
        }
        let ones = x
            .shape
            .split_last()
            .is_none_or(|(_, lead)| lead.iter().all(|&d| d == 1));
        match x.data {
            Data::I8(d) if x.shape == y.shape && d.len() == yd.len() => Some(Operand::Same(d)),
            Data::I8(d)
                if ones
                    && x.shape.len() <= y.shape.len()
                    && d.len() == row
                    && x.shape.last() == Some(&row) =>
            {
                Some(Operand::Row(d))
            }
            Data::InPlace(0) if in_place && x.shape == y.shape => Some(Operand::InPlace),
            _ => None,
        }
    };
    let ops = [operand(0)?, operand(1)?];
    let taken = ops.iter().filter(|o| matches!(o, Operand::InPlace)).count();
    (taken == usize::from(in_place)).then_some((ops, row))
}

/// `ADD` or (`subtract`) `SUB` over `ops`.
fn add_sub(
    op: OpView<'_, '_>,
    o: &AddOptions,
    ops: ([Operand<'_>; 2], usize),
    subtract: bool,
) -> Result<(), KernelError> {
    let p = AddSub::new(&op, o, subtract)?;
    // Each input's scaled value, by its int8 value.
    let mut tables = [[0i32; 256]; 2];
    for (i, table) in tables.iter_mut().enumerate() {
        for (v, t) in (-128..=127).zip(table.iter_mut()) {
            *t = p.input(i, v);
        }
    }
    let [ta, tb] = &tables;
    let out = Scalar::new(p.output.multiplier, p.output.shift, p.zero, p.lo, p.hi);
    each(op, ops, |a, b| {
        let (a, b) = (
            ta[usize::from(a as u8 ^ 0x80)],
            tb[usize::from(b as u8 ^ 0x80)],
        );
        out.output(if subtract {
            a.wrapping_sub(b)
        } else {
            a.wrapping_add(b)
        })
    })
}

/// `y[i] = f(a[i], b[i])` over output 0, row by row, each operand read as `ops` says (an
/// in-place operand's element read before it is written).
fn each<'a>(
    op: OpView<'_, '_>,
    (ops, row): ([Operand<'a>; 2], usize),
    f: impl Fn(i8, i8) -> i8,
) -> Result<(), KernelError> {
    let y = op
        .outputs
        .first_mut()
        .and_then(|y| y.i8())
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    // Row r of an operand: `None` in place.
    let of = |x: Operand<'a>, r: usize| -> Option<&'a [i8]> {
        match x {
            Operand::Same(d) => d.get(r * row..(r + 1) * row),
            Operand::Row(d) => Some(d),
            Operand::InPlace => None,
        }
    };
    for (r, yr) in y.chunks_exact_mut(row).enumerate() {
        match (of(ops[0], r), of(ops[1], r)) {
            (Some(a), Some(b)) => {
                for ((y, &a), &b) in yr.iter_mut().zip(a).zip(b) {
                    *y = f(a, b);
                }
            }
            (None, Some(b)) => {
                for (y, &b) in yr.iter_mut().zip(b) {
                    *y = f(*y, b);
                }
            }
            (Some(a), None) => {
                for (y, &a) in yr.iter_mut().zip(a) {
                    *y = f(a, *y);
                }
            }
            (None, None) => {
                return Err(KernelError::Shape {
                    what: "both inputs in place (an op reading one tensor twice cannot run in place)",
                });
            }
        }
    }
    Ok(())
}
