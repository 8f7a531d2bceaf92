//! `DIV`, `SQUARED_DIFFERENCE`, `PRELU`, `LEAKY_RELU` (float32 and int8; `DIV` and
//! `SQUARED_DIFFERENCE` int32, `SQUARED_DIFFERENCE`, `PRELU` and `LEAKY_RELU` int16 too; with
//! broadcasting where the op has it) and `CAST`.

use planner_rt::kernel::{Data, DataMut, In, OpView};
use planner_rt::options::{DivOptions, LeakyReluOptions};

use crate::reference::KernelError;
use crate::reference::common::float::{clamp, float_activation_range};
use crate::reference::common::operands::{
    binary_operands, broadcast, input, leading_sign_bits, multiply_exp, reciprocal,
};
use crate::reference::common::{activation_range, output, params, three_quants};
use crate::reference::elementwise::int32_activation_range;
use crate::reference::elementwise::math::each;
use crate::{
    QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier,
    saturating_rounding_doubling_high_mul,
};

/// `DIV`, float32 (`a / b`, then the activation's bounds), int32 (C++'s division, truncating
/// toward zero, then the activation's int32 bounds; `i32::MIN / -1` wraps to `i32::MIN` as
/// Cortex-M's `SDIV` gives it; a zero divisor, which TFLM divides by (undefined in C++: a
/// trap on x86, 0 on Cortex-M), is a [`KernelError::Value`], and a quantised input is
/// refused, as TFLM refuses it when preparing the op) or int8 with broadcasting, as TFLM: the offset divisor made positive (the dividend's sign flipped with it), its
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
    let (a, b, quants, out) = binary_operands(&mut op, "input 1")?;
    match (a.data, b.data, &mut out.data, quants) {
        (Data::F32(x), Data::F32(z), DataMut::F32(y), _) => {
            let (lo, hi) = float_activation_range(o.activation)?;
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                clamp(p / q, lo, hi)
            })
        }
        (Data::I32(x), Data::I32(z), DataMut::I32(y), _) => {
            for (q, tensor) in [(a.quant, "input 0"), (b.quant, "input 1")] {
                if q.and_then(|q| q.params(0)).is_some() {
                    return Err(KernelError::Quantization { tensor });
                }
            }
            if z.contains(&0) {
                return Err(KernelError::Value {
                    what: "an int32 DIV divisor of 0",
                });
            }
            let (lo, hi) = int32_activation_range(o.activation);
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                p.wrapping_div(q).max(lo).min(hi)
            })
        }
        (Data::I8(x), Data::I8(z), DataMut::I8(y), Some([(s1, z1), (s2, z2), (so, zo)])) => {
            // In f64 from the f32 scales: TFLM's goldens match this and not the f32
            // quotient (0.05 / (0.1 · 0.08) is 6.25 in f32, 6.2500001 in f64, and -14 / 1
            // gives -88, not -87).
            let m = quantize_multiplier(f64::from(s1) / (f64::from(s2) * f64::from(so)));
            let (lo, hi) = activation_range(o.activation, so, zo)?;
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
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
        (
            Data::I8(_) | Data::I32(_) | Data::F32(_),
            _,
            DataMut::I8(_) | DataMut::I32(_) | DataMut::F32(_),
            _,
        ) => Err(KernelError::Type {
            tensor: "input 1 or output 0 (not of input 0's type: DIV takes float32, int32 or int8 throughout)",
        }),
        (Data::InPlace(_), _, _, _) | (_, Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (DIV does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "output 0 (DIV runs float32, int32 and int8)",
        }),
    }
}

/// `SQUARED_DIFFERENCE` with broadcasting, as TFLM: float32 `(a - b)²`; int32 the same,
/// wrapping (TFLM's plain `int32_t` arithmetic); int8 and int16 quantised ([`SqDiff`]: each
/// offset input shifted left by 7 (int16: 0) and scaled by `s / (2 · max scale)`, the
/// difference squared in int32, scaled by `(2 · max scale)² / (2^(2·shift) · s_out)`, the
/// output zero point, saturated). int16 takes zero points of 0 only, as TFLM.
pub(crate) fn squared_difference(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let int16 = match (op.input(0).map(|x| x.data), op.input(1).map(|x| x.data)) {
        (Some(Data::I16(_)), Some(Data::I16(_))) => {
            let q = three_quants(&op)?;
            if q.iter().any(|&(_, z)| z != 0) {
                return Err(KernelError::Quantization {
                    tensor: "input 0, input 1 or output 0 (int16 SQUARED_DIFFERENCE takes zero points of 0)",
                });
            }
            Some(SqDiff::new(q, 0, (i16::MIN.into(), i16::MAX.into())))
        }
        _ => None,
    };
    let (a, b, quants, out) = binary_operands(&mut op, "input 1")?;
    match (a.data, b.data, &mut out.data, quants) {
        (Data::F32(x), Data::F32(z), DataMut::F32(y), _) => {
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                let d = p - q;
                d * d
            })
        }
        (Data::I32(x), Data::I32(z), DataMut::I32(y), _) => {
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |p, q| {
                let d = p.wrapping_sub(q);
                d.wrapping_mul(d)
            })
        }
        (Data::I8(x), Data::I8(z), DataMut::I8(y), Some(q)) => {
            let p = SqDiff::new(q, 7, (i8::MIN.into(), i8::MAX.into()));
            broadcast((x, a.shape), (z, b.shape), (y, out.shape), |u, v| {
                p.apply(u.into(), v.into()) as i8
            })
        }
        (Data::I16(x), Data::I16(z), DataMut::I16(y), _) => match int16 {
            Some(p) => broadcast((x, a.shape), (z, b.shape), (y, out.shape), |u, v| {
                p.apply(u.into(), v.into()) as i16
            }),
            None => Err(KernelError::Quantization { tensor: "input 0" }),
        },
        (Data::InPlace(_), _, _, _) | (_, Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 or 1 (SQUARED_DIFFERENCE does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0, input 1 or output 0 (SQUARED_DIFFERENCE runs float32, int32, int16 or int8 throughout)",
        }),
    }
}

/// TFLM's quantised `SQUARED_DIFFERENCE` of one pair of values.
#[derive(Clone, Copy)]
struct SqDiff {
    /// Each input's zero point and multiplier.
    inputs: [(i32, QuantizedMultiplier); 2],
    /// The output's multiplier and zero point.
    output: QuantizedMultiplier,
    zero: i32,
    /// The left shift of the offset inputs.
    shift: u32,
    /// The output type's range.
    range: (i32, i32),
}

impl SqDiff {
    /// The parameters from the (scale, zero point) of the inputs and the output, the inputs'
    /// left shift and the output type's range.
    fn new([(s1, z1), (s2, z2), (so, zo)]: [(f32, i32); 3], shift: u32, range: (i32, i32)) -> Self {
        let twice_max = 2.0 * f64::from(s1.max(s2));
        // The denominator's product is in f32 in TFLM (an int times a float).
        let denominator = f64::from((1u32 << (2 * shift)) as f32 * so);
        SqDiff {
            inputs: [
                (z1, quantize_multiplier(f64::from(s1) / twice_max)),
                (z2, quantize_multiplier(f64::from(s2) / twice_max)),
            ],
            output: quantize_multiplier(twice_max * twice_max / denominator),
            zero: zo,
            shift,
            range,
        }
    }

    /// The output value of inputs `p` and `q`.
    fn apply(&self, p: i32, q: i32) -> i32 {
        let [(z1, m1), (z2, m2)] = self.inputs;
        let p = multiply_by_quantized_multiplier((p - z1) << self.shift, m1);
        let q = multiply_by_quantized_multiplier((q - z2) << self.shift, m2);
        let d = p.wrapping_sub(q);
        multiply_by_quantized_multiplier(d.wrapping_mul(d), self.output)
            .saturating_add(self.zero)
            .clamp(self.range.0, self.range.1)
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
/// input. float32, or int8 (or an int16 input and output with an int8 alpha) as TFLM: the offset input scaled by `s_in / s_out` where it is
/// at least zero, else its product with the offset alpha scaled by `s_in · s_alpha /
/// s_out`, plus the output zero point, saturated.
pub(crate) fn prelu(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (x, alpha, quants, out) = binary_operands(&mut op, "input 1 (alpha)")?;
    match (x.data, alpha.data, &mut out.data, quants) {
        (Data::F32(v), Data::F32(a), DataMut::F32(y), _) => {
            broadcast((v, x.shape), (a, alpha.shape), (y, out.shape), |v, a| {
                if v >= 0.0 { v } else { v * a }
            })
        }
        (Data::I8(v), Data::I8(a), DataMut::I8(y), Some(q)) => {
            prelu_quantised((v, x.shape), (a, alpha.shape), (y, out.shape), q, |r| {
                r.clamp(-128, 127) as i8
            })
        }
        (Data::I16(v), Data::I8(a), DataMut::I16(y), _) => {
            let q = prelu_quants(x, alpha, &out.quant)?;
            prelu_quantised((v, x.shape), (a, alpha.shape), (y, out.shape), q, |r| {
                r.clamp(i16::MIN.into(), i16::MAX.into()) as i16
            })
        }
        (Data::InPlace(_), _, _, _) => Err(KernelError::Missing {
            tensor: "input 0 (PRELU does not run in place)",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0, alpha or output 0 (PRELU runs float32 or int8 throughout, or an int16 input and output with an int8 alpha)",
        }),
    }
}

/// The quantised `PRELU` ([`prelu`]) of an int8 or int16 input `v` with an int8 alpha `a`
/// (the (scale, zero point) of input, alpha and output in `q`), `narrow` saturating each
/// requantised value to the output's type.
fn prelu_quantised<T: Copy + Into<i32>>(
    v: (&[T], &[usize]),
    a: (&[i8], &[usize]),
    y: (&mut [T], &[usize]),
    [(si, zi), (sa, za), (so, zo)]: [(f32, i32); 3],
    narrow: impl Fn(i32) -> T,
) -> Result<(), KernelError> {
    let m1 = quantize_multiplier(f64::from(si) / f64::from(so));
    let m2 = signed_multiplier(f64::from(si) * f64::from(sa) / f64::from(so));
    broadcast(v, a, y, |v, a| {
        let v = v.into() - zi;
        let r = if v >= 0 {
            multiply_by_quantized_multiplier(v, m1)
        } else {
            multiply_by_quantized_multiplier(v.wrapping_mul(i32::from(a) - za), m2)
        };
        narrow(r.saturating_add(zo))
    })
}

/// The (scale, zero point) of a `PRELU`'s input, alpha and output.
fn prelu_quants(
    x: In<'_>,
    alpha: In<'_>,
    out: &Option<planner_rt::Quant>,
) -> Result<[(f32, i32); 3], KernelError> {
    Ok([
        params(x.quant, "input 0")?,
        params(alpha.quant, "input 1 (alpha)")?,
        params(*out, "output 0")?,
    ])
}

/// `LEAKY_RELU`: `x` where it is at least zero, `alpha · x` elsewhere. float32, or int8
/// and int16 as TFLM: the offset input scaled by `s_in / s_out` (where at least zero) or by
/// `s_in · alpha / s_out` (both computed in `f64`: in `f32`, 0.0005 / 0.0006 falls below 5 /
/// 6 and a tie rounds the other way, `op_b4_leaky_relu_i16_alpha_above_one`), plus the
/// output zero point, saturated to the type.
pub(crate) fn leaky_relu(mut op: OpView<'_, '_>, o: &LeakyReluOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let q = match x.data {
        Data::I8(_) | Data::I16(_) => Some((
            params(x.quant, "input 0")?,
            params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
        )),
        _ => None,
    };
    let out = output(&mut op)?;
    let alpha = o.alpha;
    // The requantised value of an offset input `v`.
    let leaky = |((si, zi), (so, zo)): ((f32, i32), (f32, i32))| {
        let identity = quantize_multiplier(f64::from(si) / f64::from(so));
        let leak = signed_multiplier(f64::from(si) * f64::from(alpha) / f64::from(so));
        move |v: i32| {
            let v = v - zi;
            let m = if v >= 0 { identity } else { leak };
            multiply_by_quantized_multiplier(v, m).saturating_add(zo)
        }
    };
    match (x.data, &mut out.data, q) {
        (Data::F32(v), DataMut::F32(y), _) if v.len() == y.len() => {
            for (y, &v) in y.iter_mut().zip(v) {
                *y = if v > 0.0 { v } else { v * alpha };
            }
            Ok(())
        }
        (Data::I8(v), DataMut::I8(y), Some(q)) if v.len() == y.len() => {
            let f = leaky(q);
            for (y, &v) in y.iter_mut().zip(v) {
                *y = f(i32::from(v)).clamp(-128, 127) as i8;
            }
            Ok(())
        }
        (Data::I16(v), DataMut::I16(y), Some(q)) if v.len() == y.len() => {
            let f = leaky(q);
            for (y, &v) in y.iter_mut().zip(v) {
                *y = f(i32::from(v)).clamp(i16::MIN.into(), i16::MAX.into()) as i16;
            }
            Ok(())
        }
        (Data::InPlace(_), _, _) => Err(KernelError::Missing {
            tensor: "input 0 (LEAKY_RELU does not run in place)",
        }),
        (
            Data::F32(_) | Data::I8(_) | Data::I16(_),
            DataMut::F32(_) | DataMut::I8(_) | DataMut::I16(_),
            _,
        ) => Err(KernelError::Shape {
            what: "LEAKY_RELU's output is not the input's size and type",
        }),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (LEAKY_RELU runs float32, int8 or int16)",
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
        each(x, y, |x| put(get(x))).map_err(|_| KernelError::Shape {
            what: "CAST's output does not have the input's number of elements",
        })
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
