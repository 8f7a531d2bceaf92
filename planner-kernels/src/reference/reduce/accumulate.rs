//! Kinds that accumulate (issue 39): `ADD_N`, `CUMSUM`, `L2_NORMALIZATION` and
//! `L2_POOL_2D`, with TFLite Micro's arithmetic: sums in `f32` in TFLM's order for float32,
//! and for int8 its fixed-point scheme (operands shifted left by 20 and halved, summed in
//! int32, then rescaled to the output), including TFLM's starting value of that sum: the
//! negated input zero point, scaled as an operand is, rather than 0.

use planner_rt::kernel::{Data, DataMut, In, OpView};
use planner_rt::options::{CumsumOptions, L2NormOptions, Pool2dOptions};

use crate::reference::common::float::{clamp, float_activation_range};
use crate::reference::common::operands::{input, multiply_exp, resolve_axis};
use crate::reference::elementwise::math::inv_sqrt;
use crate::reference::pool::Window;
use crate::reference::{
    KernelError,
    common::{dims4, elements, no_activation, output, params},
};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// TFLM's int8 scheme of `ADD_N` and `CUMSUM`: every operand `(q - z_in) · 2^20` times the
/// multiplier of `1/2`, the sum times that of `2 · s_in / (2^20 · s_out)`, plus `z_out`.
#[derive(Clone, Copy)]
struct Summing {
    zero: i32,
    input: QuantizedMultiplier,
    output: QuantizedMultiplier,
    output_zero: i32,
}

impl Summing {
    const LEFT_SHIFT: u32 = 20;

    fn new((si, zi): (f32, i32), (so, zo): (f32, i32)) -> Summing {
        let twice = 2.0 * f64::from(si);
        Summing {
            zero: zi,
            input: quantize_multiplier(f64::from(si) / twice),
            output: quantize_multiplier(
                twice / (f64::from(1u32 << Self::LEFT_SHIFT) * f64::from(so)),
            ),
            output_zero: zo,
        }
    }

    /// The summing of an int8 `x` into output 0 of `op`; `None` for other types.
    fn of(op: &OpView<'_, '_>, x: &In<'_>) -> Result<Option<Summing>, KernelError> {
        Ok(match x.data {
            Data::I8(_) => Some(Summing::new(
                params(x.quant, "input 0")?,
                params(op.outputs.first().and_then(|o| o.quant), "output 0")?,
            )),
            _ => None,
        })
    }

    /// One operand, scaled.
    fn operand(&self, q: i32) -> i32 {
        let shifted = q.wrapping_sub(self.zero).wrapping_shl(Self::LEFT_SHIFT);
        multiply_exp(shifted, self.input.multiplier, self.input.shift)
    }

    /// The sum's start: the operand of a value 0 (TFLM scales the offset itself).
    fn start(&self) -> i32 {
        self.operand(0)
    }

    /// The int8 output of a scaled sum.
    fn finish(&self, sum: i32) -> i8 {
        multiply_exp(sum, self.output.multiplier, self.output.shift)
            .saturating_add(self.output_zero)
            .clamp(-128, 127) as i8
    }
}

/// `ADD_N`: the element-wise sum of two or more inputs of the output's shape. float32
/// summed from 0 in input order; int8 (every input quantised alike, as TFLM requires)
/// through [`Summing`].
pub(crate) fn add_n(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let inputs: &[_] = op.inputs;
    if inputs.len() < 2 {
        return Err(KernelError::Missing {
            tensor: "input 1 (ADD_N adds two or more inputs)",
        });
    }
    let first = input(&op, 0, "input 0")?;
    let n = elements(first.shape);
    let mismatch = KernelError::Shape {
        what: "ADD_N's inputs and output do not have one shape",
    };
    for x in inputs.iter() {
        let x = x.ok_or(KernelError::Missing {
            tensor: "an ADD_N input",
        })?;
        if x.shape != first.shape || (x.quant != first.quant && matches!(x.data, Data::I8(_))) {
            return Err(match x.shape == first.shape {
                true => KernelError::Quantization {
                    tensor: "an ADD_N input quantised otherwise than input 0",
                },
                false => mismatch,
            });
        }
    }
    let summing = Summing::of(&op, &first)?;
    let out = output(&mut op)?;
    if out.data.as_data().len() != Some(n) {
        return Err(mismatch);
    }
    let wrong = KernelError::Type {
        tensor: "an input or output 0 (ADD_N runs float32 or int8, one type throughout)",
    };
    match (&mut out.data, summing) {
        (DataMut::F32(y), _) => {
            y.fill(0.0);
            for x in inputs.iter().flatten() {
                let Data::F32(v) = x.data else {
                    return Err(wrong);
                };
                for (o, &v) in y.iter_mut().zip(v.get(..n).ok_or(mismatch)?) {
                    *o += v;
                }
            }
            Ok(())
        }
        (DataMut::I8(y), Some(s)) => {
            let mut columns = inputs.iter().flatten().map(|x| match x.data {
                Data::I8(v) if v.len() == n => Ok(v),
                Data::I8(_) => Err(mismatch),
                _ => Err(wrong),
            });
            if columns.any(|c| c.is_err()) {
                return Err(mismatch);
            }
            for (i, o) in y.iter_mut().enumerate() {
                let mut sum = s.start();
                for x in inputs.iter().flatten() {
                    if let Data::I8(v) = x.data {
                        sum = sum.wrapping_add(s.operand(i32::from(v[i])));
                    }
                }
                *o = s.finish(sum);
            }
            Ok(())
        }
        _ => Err(wrong),
    }
}

/// `CUMSUM` along the axis of input 1 (int32, one value, negative counts from the end),
/// `exclusive` and `reverse` as the options say: float32 summed in `f32` from 0 along the
/// axis; int8 through [`Summing`], each output the running sum rescaled.
pub(crate) fn cumsum(mut op: OpView<'_, '_>, o: &CumsumOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let axis = match input(&op, 1, "input 1 (axis)")?.data {
        Data::I32([a]) => *a,
        Data::I32(_) => {
            return Err(KernelError::Shape {
                what: "CUMSUM's axis is not one value",
            });
        }
        _ => {
            return Err(KernelError::Type {
                tensor: "input 1 (CUMSUM's axis is int32)",
            });
        }
    };
    let rank = x.shape.len();
    let axis = resolve_axis(axis, rank).ok_or(KernelError::Value {
        what: "CUMSUM's axis is outside the input's dimensions",
    })?;
    let outer: usize = x.shape[..axis].iter().product();
    let depth = x.shape[axis];
    let inner: usize = x.shape[axis + 1..].iter().product();
    let summing = Summing::of(&op, &x)?;
    let out = output(&mut op)?;
    let n = outer * depth * inner;
    let lines = |f: &mut dyn FnMut(&mut dyn Iterator<Item = usize>)| {
        for a in 0..outer {
            for b in 0..inner {
                let at = move |k: usize| (a * depth + k) * inner + b;
                if o.reverse {
                    f(&mut (0..depth).rev().map(at));
                } else {
                    f(&mut (0..depth).map(at));
                }
            }
        }
    };
    let short = KernelError::Shape {
        what: "CUMSUM's output does not have the input's shape",
    };
    match (x.data, &mut out.data, summing) {
        (Data::F32(v), DataMut::F32(y), _) if v.len() == n && y.len() == n => {
            lines(&mut |line| {
                let mut acc = 0.0f32;
                for i in line {
                    if o.exclusive {
                        y[i] = acc;
                        acc += v[i];
                    } else {
                        acc += v[i];
                        y[i] = acc;
                    }
                }
            });
            Ok(())
        }
        (Data::I8(v), DataMut::I8(y), Some(s)) if v.len() == n && y.len() == n => {
            lines(&mut |line| {
                let mut acc = s.start();
                for i in line {
                    let scaled = s.operand(i32::from(v[i]));
                    let value = if o.exclusive {
                        let before = acc;
                        acc = acc.wrapping_add(scaled);
                        before
                    } else {
                        acc = acc.wrapping_add(scaled);
                        acc
                    };
                    y[i] = s.finish(value);
                }
            });
            Ok(())
        }
        (Data::F32(_), DataMut::F32(_), _) | (Data::I8(_), DataMut::I8(_), _) => Err(short),
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (CUMSUM runs float32 or int8, one type throughout)",
        }),
    }
}

/// `L2_NORMALIZATION` along the last dimension (rank 4 at most): float32 `x / max(sqrt(Σ
/// x²), 1e-6)`, the sum in `f32` in order; int8 as TFLM: the int32 sum of `(q - z_in)²`, its
/// inverse square root as [`inv_sqrt`] gives it, each `q - z_in` times it at `2^7` (the
/// output is at scale 1/128 and zero point 0 whatever its stated quantisation), saturated.
/// TFLM runs no fused activation.
pub(crate) fn l2_normalization(
    mut op: OpView<'_, '_>,
    o: &L2NormOptions,
) -> Result<(), KernelError> {
    no_activation(
        o.activation,
        "a fused activation on L2_NORMALIZATION (TFLM runs none)",
    )?;
    let x = input(&op, 0, "input 0")?;
    if x.shape.len() > 4 {
        return Err(KernelError::Shape {
            what: "L2_NORMALIZATION's input has more than 4 dimensions",
        });
    }
    let depth = x.shape.last().copied().unwrap_or(1);
    let zero = match x.data {
        Data::I8(_) => params(x.quant, "input 0")?.1,
        _ => 0,
    };
    let out = output(&mut op)?;
    let short = KernelError::Shape {
        what: "L2_NORMALIZATION's output does not have the input's shape",
    };
    let n = elements(x.shape);
    if depth == 0 || out.data.as_data().len() != Some(n) || x.data.len() != Some(n) {
        return Err(short);
    }
    match (x.data, &mut out.data) {
        (Data::F32(v), DataMut::F32(y)) => {
            for (row, out) in v.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
                let squares = row.iter().fold(0.0f32, |s, &v| s + v * v);
                let norm = libm::sqrtf(squares).max(1e-6);
                for (o, &v) in out.iter_mut().zip(row) {
                    *o = v / norm;
                }
            }
            Ok(())
        }
        (Data::I8(v), DataMut::I8(y)) => {
            for (row, out) in v.chunks_exact(depth).zip(y.chunks_exact_mut(depth)) {
                let acc = row.iter().fold(0i32, |s, &q| {
                    let d = i32::from(q) - zero;
                    s.wrapping_add(d * d)
                });
                let (multiplier, shift) = inv_sqrt(acc);
                let m = QuantizedMultiplier {
                    multiplier,
                    shift: shift + 7,
                };
                for (o, &q) in out.iter_mut().zip(row) {
                    let r = multiply_by_quantized_multiplier(i32::from(q) - zero, m);
                    *o = r.clamp(-128, 127) as i8;
                }
            }
            Ok(())
        }
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (L2_NORMALIZATION runs float32 or int8, one type throughout)",
        }),
    }
}

/// `L2_POOL_2D` (float32, NHWC): `sqrt(Σ x² / n)` over the window's `n` pixels inside the
/// image, the sum in `f32` in row order, through the fused activation.
pub(crate) fn l2_pool_2d(mut op: OpView<'_, '_>, o: &Pool2dOptions) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let four = |s: &[usize]| match s.len() {
        4 => dims4(s).ok_or(KernelError::Shape { what: "rank 4" }),
        _ => Err(KernelError::Shape {
            what: "L2_POOL_2D's input and output are 4-D",
        }),
    };
    let [n, in_h, in_w, c] = four(x.shape)?;
    let [on, out_h, out_w, oc] = four(out.shape)?;
    let (Data::F32(v), DataMut::F32(y)) = (x.data, &mut out.data) else {
        return Err(KernelError::Type {
            tensor: "input 0 or output 0 (TFLM runs L2_POOL_2D on float32 only)",
        });
    };
    let short = KernelError::Shape {
        what: "L2_POOL_2D's input and output do not fit",
    };
    if on != n || oc != c || v.len() != n * in_h * in_w * c || y.len() != n * out_h * out_w * c {
        return Err(short);
    }
    let win = Window::of(o, [in_h, in_w], [out_h, out_w])?;
    let (lo, hi) = float_activation_range(o.activation)?;
    for b in 0..n {
        for oy in 0..out_h {
            let rows = win.rows(oy, in_h);
            for ox in 0..out_w {
                let cols = win.cols(ox, in_w);
                for ch in 0..c {
                    let mut sum = 0.0f32;
                    let mut count = 0u32;
                    for iy in rows.clone() {
                        for ix in cols.clone() {
                            let v = v[((b * in_h + iy) * in_w + ix) * c + ch];
                            sum += v * v;
                            count += 1;
                        }
                    }
                    let r = libm::sqrtf(sum / count as f32);
                    y[((b * out_h + oy) * out_w + ox) * c + ch] = clamp(r, lo, hi);
                }
            }
        }
    }
    Ok(())
}
