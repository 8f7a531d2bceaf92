//! Builtin op kinds of batch 1 (issue 25): `DIV`, `SQUARED_DIFFERENCE`, `PRELU` (with
//! broadcasting), `LEAKY_RELU`, `LOG_SOFTMAX`, `CAST`, `ARG_MAX`, `GATHER`, `SUM`,
//! `REDUCE_MAX`, `SQUEEZE`, `EXPAND_DIMS`, `SLICE` and `PADV2`, each with TFLite Micro's
//! arithmetic: its integer scheme for int8 (the multipliers computed from the scales as
//! TFLM's prepare computes them, in `f32` where it does) and plain `f32` arithmetic for
//! float. Element types TFLM does not run either are refused with [`KernelError::Type`].

use super::index::{RANK, broadcast_strides, next, strides};
use planner_rt::kernel::{Data, DataMut, In, OpView};
use planner_rt::options::{
    Activation, ArgMaxOptions, DivOptions, ExpandDimsOptions, GatherOptions, LeakyReluOptions,
    PadOptions, ReduceOptions, ReshapeOptions, SliceOptions, SqueezeOptions,
};

use super::softmax::{exp_negative, mul, mul_pot, one_over_one_plus};
use super::{KernelError, activation_range, elements, output, params};
use crate::{
    QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier,
    rounding_divide_by_pot, saturating_rounding_doubling_high_mul,
};

const RANK_ERROR: KernelError = KernelError::Shape {
    what: "a tensor of more than 6 dimensions",
};

/// `axis` (negative counts from the end) as an index below `rank`.
fn resolve_axis(axis: i32, rank: usize) -> Option<usize> {
    let rank_i = i32::try_from(rank).ok()?;
    let a = if axis < 0 { axis + rank_i } else { axis };
    usize::try_from(a).ok().filter(|&a| a < rank)
}

/// An element type the data-moving kernels copy, with its input and output views.
trait El: Copy + Default {
    fn of(data: Data<'_>) -> Option<&[Self]>;
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

/// Input `i`, or `Missing`.
fn input<'a>(op: &OpView<'_, 'a>, i: usize, tensor: &'static str) -> Result<In<'a>, KernelError> {
    op.input(i).ok_or(KernelError::Missing { tensor })
}

/// `y[i] = f(a[..], b[..])` over the broadcast of `a` and `b` to the output's shape.
fn broadcast<A: Copy, B: Copy, C>(
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

/// The float bounds of a fused activation (TFLite's `CalculateActivationRange`).
fn float_range(activation: Activation) -> Result<(f32, f32), KernelError> {
    Ok(match activation {
        Activation::None => (f32::MIN, f32::MAX),
        Activation::Relu => (0.0, f32::MAX),
        Activation::ReluN1To1 => (-1.0, 1.0),
        Activation::Relu6 => (0.0, 6.0),
        Activation::Tanh | Activation::SignBit => {
            return Err(KernelError::Options {
                what: "fused activation TANH or SIGN_BIT",
            });
        }
    })
}

/// `min(max(v, lo), hi)` as C++'s `std::max` and `std::min` give it (a NaN stays NaN).
fn clamp_f32(v: f32, lo: f32, hi: f32) -> f32 {
    let v = if v < lo { lo } else { v };
    if hi < v { hi } else { v }
}

/// The quantisations of inputs 0 and 1 and output 0.
fn three_quants(op: &OpView<'_, '_>) -> Result<[(f32, i32); 3], KernelError> {
    Ok([
        params(op.input(0).and_then(|x| x.quant), "input 0")?,
        params(op.input(1).and_then(|x| x.quant), "input 1")?,
        params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
    ])
}

/// The number of redundant sign bits of `x` (GCC's `__builtin_clrsb`; 31 for 0 and -1).
fn leading_sign_bits(x: i32) -> i32 {
    let u = if x < 0 { !x } else { x };
    u.leading_zeros() as i32 - 1
}

/// TFLite's `GetReciprocal(x, 31)` for `x >= 1`: `1 / x` as a Q0.31 mantissa in `(0.5, 1]`
/// and the bits `x` has above one.
fn reciprocal(x: i32) -> (i32, i32) {
    let headroom_plus_one = (x as u32).leading_zeros();
    let over = 31 - headroom_plus_one as i32;
    let shifted_minus_one = ((x as u32) << headroom_plus_one.min(31)).wrapping_sub(1 << 31) as i32;
    (one_over_one_plus(shifted_minus_one), over)
}

/// `round(x · multiplier · 2^shift / 2^31)`: TFLite's
/// `MultiplyByQuantizedMultiplierSmallerThanOneExp` for `shift <= 0` (a right shift past
/// 31 bits gives the rounded 0 or -0), the left-shifting form above.
fn multiply_exp(x: i32, m: i32, shift: i32) -> i32 {
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

/// `DIV`, float32 (`a / b`, then the activation's bounds) or int8 with broadcasting, as
/// TFLM: the offset divisor made positive (the dividend's sign flipped with it), its
/// reciprocal as a Q0.31 number by Newton-Raphson, the dividend shifted left by its
/// headroom and multiplied by it, then scaled by the Q31 multiplier of `s1 / (s2 · s_out)`
/// with the reciprocal's and the headroom's shifts folded into the exponent, the output
/// zero point, and the activation's clamp.
///
/// Where TFLM's C++ is undefined this kernel gives the defined limit: a zero divisor gives
/// the clamp's bound of the dividend's sign (the zero point for 0 / 0), and a total right
/// shift past 31 bits (a dividend near its zero point over a large divisor when `s1 / (s2
/// · s_out)` is below 64) gives 0 before the zero point is added, where TFLM shifts an
/// `int32` by 32 or more: on an x86 host that shifts by the count modulo 32 and gives
/// values up to saturation (5 / 138 at 6.25 gives 127; 0 / d gives the zero point plus
/// one), and Cortex-M gives yet another result.
pub(crate) fn div(mut op: OpView<'_, '_>, o: &DivOptions) -> Result<(), KernelError> {
    let a = input(&op, 0, "input 0")?;
    let b = input(&op, 1, "input 1")?;
    let quants = match (a.data, b.data) {
        (Data::I8(_), Data::I8(_)) => Some(three_quants(&op)?),
        _ => None,
    };
    let out = output(&mut op)?;
    let y_shape = out.shape;
    match (a.data, b.data, &mut out.data, quants) {
        (Data::F32(x), Data::F32(z), DataMut::F32(y), _) => {
            let (lo, hi) = float_range(o.activation)?;
            broadcast((x, a.shape), (z, b.shape), (y, y_shape), |p, q| {
                clamp_f32(p / q, lo, hi)
            })
        }
        (Data::I8(x), Data::I8(z), DataMut::I8(y), Some([(s1, z1), (s2, z2), (so, zo)])) => {
            // In f64 from the f32 scales: TFLM's goldens match this and not the f32
            // quotient (0.05 / (0.1 · 0.08) is 6.25 in f32, 6.2500001 in f64, and -14 / 1
            // gives -88, not -87).
            let m = quantize_multiplier(f64::from(s1) / (f64::from(s2) * f64::from(so)));
            let (lo, hi) = activation_range(o.activation, so, zo)?;
            broadcast((x, a.shape), (z, b.shape), (y, y_shape), |p, q| {
                let (mut n, mut d) = (i32::from(p) - z1, i32::from(q) - z2);
                if d == 0 {
                    let v = match n.signum() {
                        1 => hi,
                        -1 => lo,
                        _ => zo.clamp(lo, hi),
                    };
                    return v as i8;
                }
                if d < 0 {
                    n = -n;
                    d = -d;
                }
                let (inv, over) = reciprocal(d);
                let headroom = leading_sign_bits(n);
                let unscaled = saturating_rounding_doubling_high_mul(n << headroom, inv);
                let shift = m.shift - over - headroom;
                multiply_exp(unscaled, m.multiplier, shift)
                    .saturating_add(zo)
                    .clamp(lo, hi) as i8
            })
        }
        (Data::I8(_) | Data::F32(_), _, DataMut::I8(_) | DataMut::F32(_), _) => {
            Err(KernelError::Type {
                tensor: "input 1 (not of input 0's type: DIV takes two float32 or two int8 inputs)",
            })
        }
        (Data::InPlace(_), _, _, _) | (_, Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (DIV does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "output 0 (DIV runs float32 and int8)",
        }),
    }
}

/// `SQUARED_DIFFERENCE`, float32 (`(a - b)²`) or int8 with broadcasting, as TFLM: each
/// offset input shifted left by 7 and scaled by `s / (2 · max scale)`, the difference
/// squared in int32, scaled by `(2 · max scale)² / (2^14 · s_out)`, the output zero point,
/// saturated to int8.
pub(crate) fn squared_difference(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let a = input(&op, 0, "input 0")?;
    let b = input(&op, 1, "input 1")?;
    let quants = match (a.data, b.data) {
        (Data::I8(_), Data::I8(_)) => Some(three_quants(&op)?),
        _ => None,
    };
    let out = output(&mut op)?;
    let y_shape = out.shape;
    match (a.data, b.data, &mut out.data, quants) {
        (Data::F32(x), Data::F32(z), DataMut::F32(y), _) => {
            broadcast((x, a.shape), (z, b.shape), (y, y_shape), |p, q| {
                let d = p - q;
                d * d
            })
        }
        (Data::I8(x), Data::I8(z), DataMut::I8(y), Some([(s1, z1), (s2, z2), (so, zo)])) => {
            const LEFT_SHIFT: u32 = 7;
            let twice_max = 2.0 * f64::from(s1.max(s2));
            let m1 = quantize_multiplier(f64::from(s1) / twice_max);
            let m2 = quantize_multiplier(f64::from(s2) / twice_max);
            // The denominator's product is in f32 in TFLM (an int times a float).
            let mo = quantize_multiplier(
                twice_max * twice_max / f64::from((1u32 << (2 * LEFT_SHIFT)) as f32 * so),
            );
            broadcast((x, a.shape), (z, b.shape), (y, y_shape), |p, q| {
                let p = multiply_by_quantized_multiplier((i32::from(p) - z1) << LEFT_SHIFT, m1);
                let q = multiply_by_quantized_multiplier((i32::from(q) - z2) << LEFT_SHIFT, m2);
                let d = p.wrapping_sub(q);
                multiply_by_quantized_multiplier(d.wrapping_mul(d), mo)
                    .saturating_add(zo)
                    .clamp(-128, 127) as i8
            })
        }
        (Data::InPlace(_), _, _, _) | (_, Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (SQUARED_DIFFERENCE does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0, input 1 or output 0 (SQUARED_DIFFERENCE runs float32 or int8 throughout)",
        }),
    }
}

/// The Q31 multiplier of a real of either sign (TFLite's `QuantizeMultiplier` keeps the
/// sign in the mantissa).
fn signed_multiplier(real: f64) -> QuantizedMultiplier {
    let m = quantize_multiplier(if real < 0.0 { -real } else { real });
    QuantizedMultiplier {
        multiplier: if real < 0.0 {
            m.multiplier.wrapping_neg()
        } else {
            m.multiplier
        },
        shift: m.shift,
    }
}

/// `PRELU`: `x` where it is at least zero, `alpha · x` elsewhere, `alpha` broadcast to the
/// input. float32, or int8 as TFLM: the offset input scaled by `s_in / s_out` where it is
/// at least zero, else its product with the offset alpha scaled by `s_in · s_alpha /
/// s_out`, plus the output zero point, saturated.
pub(crate) fn prelu(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let alpha = input(&op, 1, "input 1 (alpha)")?;
    let quants = match (x.data, alpha.data) {
        (Data::I8(_), Data::I8(_)) => Some(three_quants(&op)?),
        _ => None,
    };
    let out = output(&mut op)?;
    let y_shape = out.shape;
    match (x.data, alpha.data, &mut out.data, quants) {
        (Data::F32(v), Data::F32(a), DataMut::F32(y), _) => {
            broadcast((v, x.shape), (a, alpha.shape), (y, y_shape), |v, a| {
                if v >= 0.0 { v } else { v * a }
            })
        }
        (Data::I8(v), Data::I8(a), DataMut::I8(y), Some([(si, zi), (sa, za), (so, zo)])) => {
            let m1 = quantize_multiplier(f64::from(si) / f64::from(so));
            let m2 = signed_multiplier(f64::from(si) * f64::from(sa) / f64::from(so));
            broadcast((v, x.shape), (a, alpha.shape), (y, y_shape), |v, a| {
                let v = i32::from(v) - zi;
                let r = if v >= 0 {
                    multiply_by_quantized_multiplier(v, m1)
                } else {
                    multiply_by_quantized_multiplier(v * (i32::from(a) - za), m2)
                };
                r.saturating_add(zo).clamp(-128, 127) as i8
            })
        }
        (Data::InPlace(_), _, _, _) => Err(KernelError::Missing {
            tensor: "input 0 (PRELU does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0, alpha or output 0 (PRELU runs float32 or int8 throughout)",
        }),
    }
}

/// `LEAKY_RELU`: `x` where it is at least zero, `alpha · x` elsewhere. float32, or int8
/// as TFLM: the offset input scaled by `s_in / s_out` (where at least zero) or by `s_in ·
/// alpha / s_out` (both computed in `f32`), plus the output zero point, saturated.
pub(crate) fn leaky_relu(mut op: OpView<'_, '_>, o: &LeakyReluOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let q = match x.data {
        Data::I8(_) => Some((
            params(x.quant, "input 0")?,
            params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
        )),
        _ => None,
    };
    let out = output(&mut op)?;
    let alpha = o.alpha;
    match (x.data, &mut out.data, q) {
        (Data::F32(v), DataMut::F32(y), _) if v.len() == y.len() => {
            for (y, &v) in y.iter_mut().zip(v) {
                *y = if v > 0.0 { v } else { v * alpha };
            }
            Ok(())
        }
        (Data::I8(v), DataMut::I8(y), Some(((si, zi), (so, zo)))) if v.len() == y.len() => {
            let identity = quantize_multiplier(f64::from(si / so));
            let leak = signed_multiplier(f64::from(si * alpha / so));
            for (y, &v) in y.iter_mut().zip(v) {
                let v = i32::from(v) - zi;
                let m = if v >= 0 { identity } else { leak };
                *y = multiply_by_quantized_multiplier(v, m)
                    .saturating_add(zo)
                    .clamp(-128, 127) as i8;
            }
            Ok(())
        }
        (Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 (LEAKY_RELU does not run in place)",
        }),
        (Data::F32(_) | Data::I8(_), DataMut::F32(_) | DataMut::I8(_), _) => {
            Err(KernelError::Shape {
                what: "LEAKY_RELU's output is not the input's size and type",
            })
        }
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (LEAKY_RELU runs float32 or int8)",
        }),
    }
}

/// `CAST` between the types TFLM casts: int8, int16, int32, uint32, float32 and bool (a
/// `u8` tensor, read as its value) to int8, int16, int32, uint32 or float32, as C++'s
/// `static_cast`: integers wrap, floats truncate toward zero (a float outside the target's
/// range, undefined in C++, saturates to int32 before it wraps), integers round to the
/// nearest float.
pub(crate) fn cast(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    /// A value on its way from one type to another: an integer or a float.
    #[derive(Clone, Copy)]
    enum V {
        I(i64),
        F(f32),
    }
    fn run<T: Copy, U>(
        x: &[T],
        y: &mut [U],
        get: impl Fn(T) -> V,
        put: impl Fn(V) -> U,
    ) -> Result<(), KernelError> {
        if x.len() != y.len() {
            return Err(KernelError::Shape {
                what: "CAST's output does not have the input's number of elements",
            });
        }
        for (y, &x) in y.iter_mut().zip(x) {
            *y = put(get(x));
        }
        Ok(())
    }
    // The integer a float truncates to, saturated to 32 bits as x86's conversion does.
    let int = |v: V| match v {
        V::I(i) => i,
        V::F(f) => i64::from(f as i32),
    };
    macro_rules! to {
        ($x:expr, $get:expr) => {
            match &mut out.data {
                DataMut::I8(y) => run($x, y, $get, |v| int(v) as i8),
                DataMut::I16(y) => run($x, y, $get, |v| int(v) as i16),
                DataMut::I32(y) => run($x, y, $get, |v| int(v) as i32),
                DataMut::U32(y) => run($x, y, $get, |v| match v {
                    V::I(i) => i as u32,
                    V::F(f) => f as i64 as u32,
                }),
                DataMut::F32(y) => run($x, y, $get, |v| match v {
                    V::I(i) => i as f32,
                    V::F(f) => f,
                }),
                _ => Err(KernelError::Type {
                    tensor: "output 0 (CAST writes int8, int16, int32, uint32 or float32)",
                }),
            }
        };
    }
    match x.data {
        Data::I8(x) => to!(x, |v: i8| V::I(i64::from(v))),
        Data::I16(x) => to!(x, |v: i16| V::I(i64::from(v))),
        Data::I32(x) => to!(x, |v: i32| V::I(i64::from(v))),
        Data::U32(x) => to!(x, |v: u32| V::I(i64::from(v))),
        Data::U8(x) => to!(x, |v: u8| V::I(i64::from(v))),
        Data::F32(x) => to!(x, V::F),
        Data::InPlace(_) => Err(KernelError::Missing {
            tensor: "input 0 (CAST does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 (CAST reads int8, int16, int32, uint32, float32 or bool)",
        }),
    }
}

/// `ARG_MAX` along one axis (negative counts from the end): the index of the first
/// largest element, as int32 or int64. Inputs of int8, uint8, int16, int32 or float32.
pub(crate) fn arg_max(mut op: OpView<'_, '_>, o: &ArgMaxOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let rank = x.shape.len();
    let axis = resolve_axis(o.axis, rank).ok_or(KernelError::Shape {
        what: "ARG_MAX's axis is outside the input's dimensions",
    })?;
    let outer: usize = x.shape[..axis].iter().product();
    let size = x.shape[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    let out = output(&mut op)?;
    fn run<T: Copy + PartialOrd, I>(
        x: &[T],
        y: &mut [I],
        (outer, size, inner): (usize, usize, usize),
        index: impl Fn(usize) -> I,
    ) -> Result<(), KernelError> {
        if x.len() != outer * size * inner || y.len() != outer * inner || size == 0 {
            return Err(KernelError::Shape {
                what: "ARG_MAX's output is not the input without its axis (or the axis is empty)",
            });
        }
        for o in 0..outer {
            for i in 0..inner {
                let at = |k: usize| x[(o * size + k) * inner + i];
                let (mut best, mut best_k) = (at(0), 0);
                for k in 1..size {
                    if at(k) > best {
                        best = at(k);
                        best_k = k;
                    }
                }
                y[o * inner + i] = index(best_k);
            }
        }
        Ok(())
    }
    let dims = (outer, size, inner);
    macro_rules! out {
        ($x:expr) => {
            match &mut out.data {
                DataMut::I32(y) => run($x, y, dims, |k| k as i32),
                DataMut::I64(y) => run($x, y, dims, |k| k as i64),
                _ => Err(KernelError::Type {
                    tensor: "output 0 (ARG_MAX writes int32 or int64)",
                }),
            }
        };
    }
    match x.data {
        Data::I8(x) => out!(x),
        Data::U8(x) => out!(x),
        Data::I16(x) => out!(x),
        Data::I32(x) => out!(x),
        Data::F32(x) => out!(x),
        Data::InPlace(_) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 (ARG_MAX reads int8, uint8, int16, int32 or float32)",
        }),
    }
}

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

/// The reduction of `SUM` and `REDUCE_MAX`: which dimensions are reduced, and the output
/// positions and the reduced box.
struct Reduction {
    rank: usize,
    in_strides: [usize; RANK],
    kept: [usize; RANK],
    boxed: [usize; RANK],
    outputs: usize,
    count: usize,
}

impl Reduction {
    fn new(shape: &[usize], o: &ReduceOptions, out_len: usize) -> Result<Reduction, KernelError> {
        let rank = shape.len();
        let bad = KernelError::Shape {
            what: "reduction axes do not fit the input and output",
        };
        if rank > RANK {
            return Err(RANK_ERROR);
        }
        let mut reduced = [false; RANK];
        for &a in o.axes.as_slice() {
            reduced[resolve_axis(a, rank).ok_or(bad)?] = true;
        }
        let mut r = Reduction {
            rank,
            in_strides: strides(shape),
            kept: [1; RANK],
            boxed: [1; RANK],
            outputs: 1,
            count: 1,
        };
        for d in 0..rank {
            if reduced[d] {
                r.count *= shape[d];
                r.boxed[d] = shape[d];
            } else {
                r.outputs *= shape[d];
                r.kept[d] = shape[d];
            }
        }
        if out_len != r.outputs {
            return Err(bad);
        }
        Ok(r)
    }

    /// Calls `f(output index, input indices of its box)` for each output, the box in
    /// row-major order (the order TFLM accumulates in).
    fn each(&self, mut f: impl FnMut(usize, &mut dyn Iterator<Item = usize>)) {
        let mut at = [0usize; RANK];
        let rank = self.rank;
        for o in 0..self.outputs {
            let base: usize = (0..rank).map(|d| at[d] * self.in_strides[d]).sum();
            let mut r = [0usize; RANK];
            let mut done = self.count == 0;
            let mut it = core::iter::from_fn(|| {
                if done {
                    return None;
                }
                let i = base + (0..rank).map(|d| r[d] * self.in_strides[d]).sum::<usize>();
                done = !next(&mut r, &self.boxed[..rank]);
                Some(i)
            });
            f(o, &mut it);
            next(&mut at, &self.kept[..rank]);
        }
    }
}

/// `SUM` over the given axes. int8 as TFLM: the int32 sum of the raw values, minus
/// `input_zero_point · n`, scaled by the Q31 multiplier of `s_in / s_out`, plus the output
/// zero point, saturated; float32 summed in `f32` in TFLM's order; int32 wrapping.
pub(crate) fn sum(mut op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let q = match x.data {
        Data::I8(_) => Some((
            params(x.quant, "input 0")?,
            params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
        )),
        _ => None,
    };
    let out = output(&mut op)?;
    let len_ok = |n: usize| {
        if x.data.len() == Some(elements(x.shape)) && n > 0 || elements(x.shape) == 0 {
            Ok(())
        } else {
            Err(KernelError::Shape {
                what: "SUM's input length is not its shape's",
            })
        }
    };
    match (x.data, &mut out.data, q) {
        (Data::I8(v), DataMut::I8(y), Some(((si, zi), (so, zo)))) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            len_ok(v.len().max(1))?;
            let m = quantize_multiplier(f64::from(si) / f64::from(so));
            let n = r.count as i64;
            if elements(x.shape) == 0 {
                y.fill(0);
                return Ok(());
            }
            r.each(|k, it| {
                let total = it.fold(0i32, |s, i| s.wrapping_add(i32::from(v[i])));
                let shifted = (i64::from(total) - i64::from(zi) * n) as i32;
                y[k] = multiply_by_quantized_multiplier(shifted, m)
                    .saturating_add(zo)
                    .clamp(-128, 127) as i8;
            });
            Ok(())
        }
        (Data::F32(v), DataMut::F32(y), _) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            len_ok(v.len().max(1))?;
            r.each(|k, it| y[k] = it.fold(0.0f32, |s, i| s + v[i]));
            Ok(())
        }
        (Data::I32(v), DataMut::I32(y), _) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            len_ok(v.len().max(1))?;
            r.each(|k, it| y[k] = it.fold(0i32, |s, i| s.wrapping_add(v[i])));
            Ok(())
        }
        (Data::InPlace(_), _, _) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (SUM runs int8, int32 or float32 throughout)",
        }),
    }
}

/// `REDUCE_MAX` over the given axes: the largest raw value (TFLM requires int8 input and
/// output to share their quantisation, and so does this kernel); float32 too. An empty
/// box gives the type's lowest value.
pub(crate) fn reduce_max(mut op: OpView<'_, '_>, o: &ReduceOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    if let Data::I8(_) = x.data {
        let qi = params(x.quant, "input 0")?;
        let qo = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
        if qi != qo {
            return Err(KernelError::Quantization {
                tensor: "output 0 (quantised otherwise than the input)",
            });
        }
    }
    let out = output(&mut op)?;
    match (x.data, &mut out.data) {
        (Data::I8(v), DataMut::I8(y)) if v.len() == elements(x.shape) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            r.each(|k, it| y[k] = it.fold(i8::MIN, |m, i| m.max(v[i])));
            Ok(())
        }
        (Data::F32(v), DataMut::F32(y)) if v.len() == elements(x.shape) => {
            let r = Reduction::new(x.shape, o, y.len())?;
            // TFLM keeps the current value unless the new one is greater.
            r.each(|k, it| {
                y[k] = it.fold(f32::MIN, |m, i| if v[i] > m { v[i] } else { m });
            });
            Ok(())
        }
        (Data::InPlace(_), _) => Err(KernelError::Missing { tensor: "input 0" }),
        (Data::I8(_) | Data::F32(_), DataMut::I8(_) | DataMut::F32(_)) => Err(KernelError::Shape {
            what: "REDUCE_MAX's input length is not its shape's, or its types differ",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (REDUCE_MAX runs int8 or float32)",
        }),
    }
}

/// `SQUEEZE`: the same bytes under the shape without the size-1 dimensions.
pub(crate) fn squeeze(op: OpView<'_, '_>, _: &SqueezeOptions) -> Result<(), KernelError> {
    super::shape::reshape(op, &ReshapeOptions::default())
}

/// `EXPAND_DIMS`: the same bytes under the shape with a size-1 dimension added.
pub(crate) fn expand_dims(op: OpView<'_, '_>, _: &ExpandDimsOptions) -> Result<(), KernelError> {
    super::shape::reshape(op, &ReshapeOptions::default())
}

/// `SLICE`: the box of the output's shape at `begin` of the input, of any element type the
/// data-moving kernels handle.
pub(crate) fn slice(mut op: OpView<'_, '_>, o: &SliceOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let (x_shape, y_shape) = (x.shape, out.shape);
    let begin = o.begin.as_slice();
    let size = o.size.as_slice();
    let rank = x_shape.len();
    let fits = rank <= RANK
        && begin.len() == rank
        && size.len() == rank
        && y_shape.len() == rank
        && (0..rank).all(|d| {
            usize::try_from(begin[d]).is_ok_and(|b| {
                let n = if size[d] < 0 {
                    x_shape[d].checked_sub(b)
                } else {
                    usize::try_from(size[d]).ok()
                };
                n == Some(y_shape[d]) && b + y_shape[d] <= x_shape[d]
            })
        });
    if !fits {
        return Err(KernelError::Shape {
            what: "SLICE's begin and size do not fit the input and output",
        });
    }
    let mut offset = [0usize; RANK];
    for d in 0..rank {
        offset[d] = begin[d] as usize;
    }
    same_type!(x.data, &mut out.data, slice_t(x_shape, y_shape, &offset))
}

fn slice_t<T: El>(
    x: &[T],
    y: &mut [T],
    x_shape: &[usize],
    y_shape: &[usize],
    offset: &[usize; RANK],
) -> Result<(), KernelError> {
    if x.len() != elements(x_shape) || y.len() != elements(y_shape) {
        return Err(KernelError::Shape {
            what: "SLICE's tensors are not their shapes' length",
        });
    }
    let s = strides(x_shape);
    let rank = x_shape.len();
    let mut index = [0usize; RANK];
    for v in y.iter_mut() {
        let at: usize = (0..rank).map(|d| (index[d] + offset[d]) * s[d]).sum();
        *v = x[at];
        next(&mut index, y_shape);
    }
    Ok(())
}

/// `PADV2`: the input at offset `before` in an output filled with the constant pad value
/// (input 2, a scalar of the input's type; the output's zero point for int8, else zero,
/// when it is left out), of any element type the data-moving kernels handle. TFLM pads
/// int8 with the value's raw byte (its prepare requires it to share the output's
/// quantisation).
pub(crate) fn padv2(mut op: OpView<'_, '_>, o: &PadOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let value = op.input(2);
    let out = output(&mut op)?;
    let zero = match out.quant.and_then(|q| q.params(0)) {
        Some((_, z)) => z,
        None => 0,
    };
    let (x_shape, y_shape) = (x.shape, out.shape);
    let before = o.before.as_slice();
    let rank = x_shape.len();
    let fits = rank <= RANK
        && before.len() == rank
        && y_shape.len() == rank
        && (0..rank)
            .all(|d| usize::try_from(before[d]).is_ok_and(|b| b + x_shape[d] <= y_shape[d]));
    if !fits {
        return Err(KernelError::Shape {
            what: "pad amounts do not fit the input and output",
        });
    }
    let mut offset = [0usize; RANK];
    for d in 0..rank {
        offset[d] = before[d] as usize;
    }
    /// The pad value of type `T`: input 2's one element, or `default`.
    fn value_of<T: El>(value: Option<In<'_>>, default: T) -> Result<T, KernelError> {
        match value {
            None => Ok(default),
            Some(v) => T::of(v.data)
                .and_then(|s| s.first().copied())
                .ok_or(KernelError::Type {
                    tensor: "input 2 (the pad value: one element of the input's type)",
                }),
        }
    }
    let v8 = value_of(value, zero.clamp(-128, 127) as i8);
    let v16 = value_of(value, 0i16);
    let v32 = value_of(value, 0i32);
    let vf = value_of(value, 0.0f32);
    match (x.data, &mut out.data) {
        (Data::I8(a), DataMut::I8(b)) => pad_t(a, b, x_shape, y_shape, &offset, v8?),
        (Data::I16(a), DataMut::I16(b)) => pad_t(a, b, x_shape, y_shape, &offset, v16?),
        (Data::I32(a), DataMut::I32(b)) => pad_t(a, b, x_shape, y_shape, &offset, v32?),
        (Data::F32(a), DataMut::F32(b)) => pad_t(a, b, x_shape, y_shape, &offset, vf?),
        (Data::InPlace(_), _) => Err(KernelError::Missing { tensor: "input 0" }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (PADV2 runs int8, int16, int32 or float32 throughout)",
        }),
    }
}

fn pad_t<T: El>(
    x: &[T],
    y: &mut [T],
    x_shape: &[usize],
    y_shape: &[usize],
    offset: &[usize; RANK],
    value: T,
) -> Result<(), KernelError> {
    if x.len() != elements(x_shape) || y.len() != elements(y_shape) {
        return Err(KernelError::Shape {
            what: "PADV2's tensors are not their shapes' length",
        });
    }
    y.fill(value);
    if x.is_empty() {
        return Ok(());
    }
    let s = strides(y_shape);
    let rank = x_shape.len();
    let mut index = [0usize; RANK];
    for &v in x {
        let at: usize = (0..rank).map(|d| (index[d] + offset[d]) * s[d]).sum();
        y[at] = v;
        next(&mut index, x_shape);
    }
    Ok(())
}

/// `log(x)` for a Q12.19 `x >= 1`, as a Q5.26 number: TFLite's
/// `log_x_for_x_greater_than_or_equal_to_1`, which splits `x` into a power of two (taken
/// at two offsets, `x` and `x · sqrt(1/2)`, the larger exponent kept) and a mantissa `r`
/// near one whose log is a rational approximation around `2^-1/4`.
fn log_q12_to_q5(x: i32) -> i32 {
    const INPUT_INTEGER_BITS: i32 = 12;
    const OUTPUT_INTEGER_BITS: i32 = 5;
    const ACCUM_INTEGER_BITS: i32 = OUTPUT_INTEGER_BITS + 1;
    // Q0.31 constants: log 2, 2^-1/4, 2^-1/2, 1/4, and the approximation's coefficients.
    const LOG_2: i32 = 1_488_522_236;
    const SQRT_SQRT_HALF: i32 = 1_805_811_301;
    const SQRT_HALF: i32 = 1_518_500_250;
    const ONE_QUARTER: i32 = 536_870_912;
    const ALPHA_N: i32 = 117_049_297;
    const ALPHA_D: i32 = 127_690_142;
    const ALPHA_I: i32 = 1_057_819_769;
    const ALPHA_F: i32 = 638_450_708;
    // 1/4 in Q6.25.
    let shifted_quarter = mul_pot(ONE_QUARTER, -ACCUM_INTEGER_BITS);
    let z_a = x;
    let z_a_headroom_plus_1 = (z_a as u32).leading_zeros() as i32;
    let r_a_tmp = mul_pot(z_a, z_a_headroom_plus_1 - 1);
    let r_a_raw = mul_pot(mul(r_a_tmp, SQRT_HALF), 1);
    let z_a_pow_2_adj = mul_pot(
        INPUT_INTEGER_BITS - z_a_headroom_plus_1,
        31 - ACCUM_INTEGER_BITS,
    )
    .saturating_add(shifted_quarter);
    let z_b = mul(z_a, SQRT_HALF);
    let z_b_headroom = (z_b as u32).leading_zeros() as i32 - 1;
    let r_b_raw = mul_pot(z_a, z_b_headroom);
    let z_b_pow_2_adj = mul_pot(INPUT_INTEGER_BITS - z_b_headroom, 31 - ACCUM_INTEGER_BITS)
        .saturating_sub(shifted_quarter);
    let r = r_a_raw.min(r_b_raw);
    let z_pow_2_adj = z_a_pow_2_adj.max(z_b_pow_2_adj);
    let p = rounding_half_sum(r, SQRT_SQRT_HALF);
    let q = r.wrapping_sub(SQRT_SQRT_HALF);
    let q = q.wrapping_add(q);
    let common_sq = mul(q, q);
    let num = mul(q, r).wrapping_add(mul(mul(q, common_sq), ALPHA_N));
    let denom_minus_one = mul(
        p,
        ALPHA_I
            .wrapping_add(q)
            .wrapping_add(mul(ALPHA_D, common_sq)),
    )
    .wrapping_add(mul(ALPHA_F, q));
    let recip_denom = one_over_one_plus(denom_minus_one);
    let num_scaled = mul_pot(num, -ACCUM_INTEGER_BITS);
    let sum = mul(z_pow_2_adj, LOG_2).wrapping_add(mul(num_scaled, recip_denom));
    mul_pot(sum, ACCUM_INTEGER_BITS - OUTPUT_INTEGER_BITS)
}

/// `(a + b) / 2` rounded half away from zero (gemmlowp's `RoundingHalfSum`).
fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let sum = i64::from(a) + i64::from(b);
    let sign = if sum >= 0 { 1 } else { -1 };
    ((sum + sign) / 2) as i32
}

/// `LOG_SOFTMAX`, int8, over the last dimension, as TFLM: the output quantisation fixed at
/// scale 16/256 and zero point 127; differences to the row's maximum scaled to Q5.26 (by
/// `input_scale · 2^26` as a multiplier and left shift), the sum of their exponentials in
/// Q12.19, its log in Q5.26; each difference above a bound (the larger of the input radius
/// and the log sum scaled back to the input) minus the log sum, shifted down to Q4 (22
/// bits), plus 127; the rest -128.
pub(crate) fn log_softmax(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let Data::I8(v) = x.data else {
        return Err(match x.data {
            Data::InPlace(_) => KernelError::Missing { tensor: "input 0" },
            _ => KernelError::Type {
                tensor: "input 0 (LOG_SOFTMAX runs int8)",
            },
        });
    };
    let (si, _) = params(x.quant, "input 0")?;
    let (so, zo) = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
    if so != 16.0 / 256.0 || zo != 127 {
        return Err(KernelError::Quantization {
            tensor: "output 0 (LOG_SOFTMAX's int8 output has scale 1/16 and zero point 127)",
        });
    }
    const DIFF_INTEGER_BITS: u32 = 5;
    let real =
        (f64::from(si) * f64::from(1u32 << (31 - DIFF_INTEGER_BITS))).min(f64::from(i32::MAX));
    let m = quantize_multiplier(real);
    let left_shift = m.shift.max(0);
    if m.multiplier == 0 || left_shift > 30 {
        return Err(KernelError::Quantization {
            tensor: "input 0 (a scale LOG_SOFTMAX cannot scale to Q5.26)",
        });
    }
    // TFLM's reverse scaling: 2^(31 - left shift) / multiplier as a multiplier below one.
    let reverse =
        quantize_multiplier(f64::from(1u32 << (31 - left_shift as u32)) / f64::from(m.multiplier));
    let radius = f64::from((1i32 << DIFF_INTEGER_BITS) - 1)
        * f64::from(1u32 << (31 - DIFF_INTEGER_BITS))
        / (1u64 << left_shift) as f64;
    let diff_min = -(radius as i64 as i32);
    let depth = *x.shape.last().ok_or(KernelError::Shape {
        what: "LOG_SOFTMAX of a scalar",
    })?;
    let out = output(&mut op)?;
    let DataMut::I8(y) = &mut out.data else {
        return Err(KernelError::Type {
            tensor: "output 0 (LOG_SOFTMAX writes int8)",
        });
    };
    if depth == 0 || v.len() % depth != 0 || y.len() != v.len() {
        return Err(KernelError::Shape {
            what: "LOG_SOFTMAX's output is not the input's size, or a row is empty",
        });
    }
    let scaled = |d: i32| mul(d.wrapping_mul(1 << left_shift), m.multiplier);
    for (row, out) in v.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
        let max = row.iter().map(|&v| i32::from(v)).max().unwrap_or(0);
        let mut sum: i32 = 0;
        for &v in row {
            let d = i32::from(v) - max;
            if d >= diff_min {
                sum = sum.wrapping_add(mul_pot(exp_negative(scaled(d), DIFF_INTEGER_BITS), -12));
            }
        }
        let log_sum = log_q12_to_q5(sum);
        let shifted = log_sum.wrapping_add(i32::MIN);
        let adjusted_min = (diff_min - 1).max(multiply_by_quantized_multiplier(shifted, reverse));
        for (&v, o) in row.iter().zip(out.iter_mut()) {
            let d = i32::from(v) - max;
            *o = if d > adjusted_min {
                let q = rounding_divide_by_pot(scaled(d).wrapping_sub(log_sum), 31 - 5 - 4) + 127;
                q.clamp(-128, 127) as i8
            } else {
                -128
            };
        }
    }
    Ok(())
}
