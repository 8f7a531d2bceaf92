//! What the kernels of many kinds share about their operands: an input of any type, two
//! broadcast operands, an axis counted from the end, and the fixed-point exponent and
//! reciprocal steps of `DIV`, `LOG_SOFTMAX` and the math kinds.

use crate::reference::common::index::{RANK, broadcast_strides, next};
use planner_rt::kernel::{Data, DataMut, In, OpView, Out};

use crate::reference::common::fixed::one_over_one_plus;
use crate::reference::{
    KernelError,
    common::{elements, output, params, three_quants},
};
use crate::{
    QuantizedMultiplier, multiply_by_quantized_multiplier, rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
};

pub(crate) const RANK_ERROR: KernelError = KernelError::Shape {
    what: "a tensor of more than 6 dimensions",
};

/// A binary op's two inputs, when both are int8 the inputs' and the output's (scale, zero
/// point), and its output.
pub(crate) type Binary<'o, 'a> = (In<'a>, In<'a>, Option<[(f32, i32); 3]>, &'o mut Out<'a>);

/// Inputs 0 and 1 of a binary op (`second` names input 1 in errors), when both are int8
/// the (scale, zero point) of both and of output 0, and output 0.
pub(crate) fn binary_operands<'o, 'a>(
    op: &'o mut OpView<'_, 'a>,
    second: &'static str,
) -> Result<Binary<'o, 'a>, KernelError> {
    let a = input(op, 0, "input 0")?;
    let b = input(op, 1, second)?;
    let quants = match (a.data, b.data) {
        (Data::I8(_), Data::I8(_)) => Some(three_quants(op)?),
        _ => None,
    };
    Ok((a, b, quants, output(op)?))
}

/// An op's input 0 and, when it is int8, its and the output's (scale, zero point).
pub(crate) type Int8Input<'a> = (In<'a>, Option<((f32, i32), (f32, i32))>);

/// Input 0 of an op and, when it is int8, the (scale, zero point) of it and of output 0.
pub(crate) fn input_and_quants<'a>(op: &OpView<'_, 'a>) -> Result<Int8Input<'a>, KernelError> {
    let x = input(op, 0, "input 0")?;
    let q = match x.data {
        Data::I8(_) => Some((
            params(x.quant, "input 0")?,
            params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
        )),
        _ => None,
    };
    Ok((x, q))
}

/// `axis` (negative counts from the end) as an index below `rank`.
pub(crate) fn resolve_axis(axis: i32, rank: usize) -> Option<usize> {
    let rank_i = i32::try_from(rank).ok()?;
    let a = if axis < 0 { axis + rank_i } else { axis };
    usize::try_from(a).ok().filter(|&a| a < rank)
}

/// An element type the kernels read and write, with its elements in an input's and in an
/// output's data.
pub(crate) trait El: Copy + Default + 'static {
    /// The input's elements, when they are of this type.
    fn of(data: Data<'_>) -> Option<&[Self]>;
    /// The output's elements, when they are of this type.
    fn of_mut<'o>(data: &'o mut DataMut<'_>) -> Option<&'o mut [Self]>;
}

macro_rules! el {
    ($($t:ty => $v:ident,)*) => {
        $(impl El for $t {
            fn of(data: Data<'_>) -> Option<&[Self]> {
                match data {
                    Data::$v(s) => Some(s),
                    _ => None,
                }
            }

            fn of_mut<'o>(data: &'o mut DataMut<'_>) -> Option<&'o mut [Self]> {
                match data {
                    DataMut::$v(s) => Some(s),
                    _ => None,
                }
            }
        })*
    };
}

el! {
    i8 => I8,
    u8 => U8,
    i16 => I16,
    i32 => I32,
    i64 => I64,
    f32 => F32,
}

/// Calls `$f::<T>(x, y, ...)` for the element type `T` input and output share.
macro_rules! same_type {
    ($x:expr, $y:expr, $f:ident ($($arg:expr),*)) => {
        match ($x, $y) {
            (Data::I8(a), DataMut::I8(b)) => $f::<i8>(a, b, $($arg),*),
            (Data::U8(a), DataMut::U8(b)) => $f::<u8>(a, b, $($arg),*),
            (Data::I16(a), DataMut::I16(b)) => $f::<i16>(a, b, $($arg),*),
            (Data::I32(a), DataMut::I32(b)) => $f::<i32>(a, b, $($arg),*),
            (Data::I64(a), DataMut::I64(b)) => $f::<i64>(a, b, $($arg),*),
            (Data::F32(a), DataMut::F32(b)) => $f::<f32>(a, b, $($arg),*),
            (Data::InPlace(_), _) => Err(KernelError::Missing { tensor: "input 0" }),
            _ => Err(KernelError::Type {
                tensor: "output 0 (not of the input's element type, or of a type this kernel does not move)",
            }),
        }
    };
}

pub(crate) use same_type;

/// Input `i`, or `Missing`.
pub(crate) fn input<'a>(
    op: &OpView<'_, 'a>,
    i: usize,
    tensor: &'static str,
) -> Result<In<'a>, KernelError> {
    op.input(i).ok_or(KernelError::Missing { tensor })
}

/// `y[i] = f(a[..], b[..])` over the broadcast of `a` and `b` to the output's shape.
pub(crate) fn broadcast<A: Copy, B: Copy, C>(
    (a, a_shape): (&[A], &[usize]),
    (b, b_shape): (&[B], &[usize]),
    (y, y_shape): (&mut [C], &[usize]),
    mut f: impl FnMut(A, B) -> C,
) -> Result<(), KernelError> {
    let bad = KernelError::Shape {
        what: "the inputs do not broadcast to the output",
    };
    let pad = RANK.checked_sub(y_shape.len()).ok_or(RANK_ERROR)?;
    let mut dims = [1; RANK];
    dims[pad..].copy_from_slice(y_shape);
    let sa = broadcast_strides(a_shape, &dims).ok_or(bad)?;
    let sb = broadcast_strides(b_shape, &dims).ok_or(bad)?;
    if y.len() != elements(&dims) || a.len() != elements(a_shape) || b.len() != elements(b_shape) {
        return Err(bad);
    }
    let mut index = [0usize; RANK];
    for v in y.iter_mut() {
        let ia: usize = index.iter().zip(&sa).map(|(i, s)| i * s).sum();
        let ib: usize = index.iter().zip(&sb).map(|(i, s)| i * s).sum();
        match (a.get(ia), b.get(ib)) {
            (Some(&p), Some(&q)) => *v = f(p, q),
            _ => return Err(bad),
        }
        next(&mut index, &dims);
    }
    Ok(())
}

/// The number of redundant sign bits of `x` (GCC's `__builtin_clrsb`; 31 for 0 and -1).
pub(crate) fn leading_sign_bits(x: i32) -> i32 {
    let u = if x < 0 { !x } else { x };
    u.leading_zeros() as i32 - 1
}

/// TFLite's `GetReciprocal(x, 31)` for `x >= 1`: `1 / x` as a Q0.31 mantissa in `(0.5, 1]`
/// and the bits `x` has above one.
pub(crate) fn reciprocal(x: i32) -> (i32, i32) {
    let headroom_plus_one = (x as u32).leading_zeros();
    let over = 31 - headroom_plus_one as i32;
    let shifted_minus_one = ((x as u32) << headroom_plus_one.min(31)).wrapping_sub(1 << 31) as i32;
    (one_over_one_plus(shifted_minus_one), over)
}

/// `round(x · multiplier · 2^shift / 2^31)`: TFLite's
/// `MultiplyByQuantizedMultiplierSmallerThanOneExp` for `shift <= 0` (a right shift past
/// 31 bits gives the rounded 0 or -0), the left-shifting form above.
pub(crate) fn multiply_exp(x: i32, m: i32, shift: i32) -> i32 {
    if shift > 0 {
        return multiply_by_quantized_multiplier(
            x,
            QuantizedMultiplier {
                multiplier: m,
                shift,
            },
        );
    }
    let high = saturating_rounding_doubling_high_mul(x, m);
    if shift < -31 {
        return 0;
    }
    rounding_divide_by_pot(high, shift.unsigned_abs())
}

/// Input `$i`'s elements as `Data::$v` (`$op` an [`OpView`]), or the error naming `$what`.
macro_rules! typed_input {
    ($op:expr, $i:expr, $v:ident, $what:literal) => {
        match $op.input($i).map(|x| x.data) {
            Some(Data::$v(s)) => s,
            Some(_) => return Err(KernelError::Type { tensor: $what }),
            None => return Err(KernelError::Missing { tensor: $what }),
        }
    };
}

/// A tensor's elements as `DataMut::$v`, or the error naming `$what`.
macro_rules! typed_elements {
    ($out:expr, $v:ident, $what:literal) => {
        match $out {
            Some(Out {
                data: DataMut::$v(s),
                ..
            }) => s,
            Some(_) => return Err(KernelError::Type { tensor: $what }),
            None => return Err(KernelError::Missing { tensor: $what }),
        }
    };
}

pub(crate) use {typed_elements, typed_input};
