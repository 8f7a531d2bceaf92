//! `ADD` and `MUL` (int8, with broadcasting), `QUANTIZE` and `DEQUANTIZE`.

use planner::rt::kernel::{Data, DataMut, OpView};
use planner::rt::options::{AddOptions, MulOptions};

use super::{KernelError, activation_range, input_i8, output, params, round_f32};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// Most dimensions broadcasting handles.
const RANK: usize = 6;

/// Element strides of `shape` seen from an output of `RANK` dimensions: 0 where the input
/// broadcasts (size 1 against a larger output size). `None` when the shapes do not
/// broadcast.
fn broadcast_strides(shape: &[usize], out: &[usize; RANK]) -> Option<[usize; RANK]> {
    let pad = RANK.checked_sub(shape.len())?;
    let mut dims = [1; RANK];
    dims[pad..].copy_from_slice(shape);
    let mut strides = [0; RANK];
    let mut stride = 1;
    for d in (0..RANK).rev() {
        if dims[d] == out[d] {
            strides[d] = stride;
        } else if dims[d] != 1 {
            return None;
        }
        stride *= dims[d];
    }
    Some(strides)
}

/// Runs `f(a, b)` over the broadcast of two int8 inputs into the int8 output.
fn binary(op: &mut OpView<'_, '_>, f: &dyn Fn(i32, i32) -> i32) -> Result<(), KernelError> {
    let (a, ai) = input_i8(op, 0, "input 0")?;
    let (b, bi) = input_i8(op, 1, "input 1")?;
    let out = output(op)?;
    let out_shape = out.shape;
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    let pad = RANK
        .checked_sub(out_shape.len())
        .ok_or(KernelError::Shape {
            what: "rank above 6",
        })?;
    let mut dims = [1; RANK];
    dims[pad..].copy_from_slice(out_shape);
    let not_broadcast = KernelError::Shape {
        what: "the inputs do not broadcast to the output",
    };
    let sa = broadcast_strides(ai.shape, &dims).ok_or(not_broadcast)?;
    let sb = broadcast_strides(bi.shape, &dims).ok_or(not_broadcast)?;
    if y.len() != dims.iter().product::<usize>() {
        return Err(not_broadcast);
    }
    let mut index = [0usize; RANK];
    for out in y.iter_mut() {
        let ia: usize = index.iter().zip(&sa).map(|(i, s)| i * s).sum();
        let ib: usize = index.iter().zip(&sb).map(|(i, s)| i * s).sum();
        let (va, vb) = match (a.get(ia), b.get(ib)) {
            (Some(&va), Some(&vb)) => (va, vb),
            _ => return Err(not_broadcast),
        };
        *out = f(i32::from(va), i32::from(vb)) as i8;
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

/// `ADD`: each input's offset value scaled to a common Q20 scale (twice the larger input
/// scale), summed, and scaled to the output.
pub(crate) fn add(mut op: OpView<'_, '_>, o: &AddOptions) -> Result<(), KernelError> {
    let q = |i: usize, t| params(op.input(i).and_then(|x| x.quant), t);
    let (s1, z1) = q(0, "input 0")?;
    let (s2, z2) = q(1, "input 1")?;
    let (so, zo) = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
    const LEFT_SHIFT: u32 = 20;
    let twice_max = 2.0 * f64::from(s1.max(s2));
    let m1 = quantize_multiplier(f64::from(s1) / twice_max);
    let m2 = quantize_multiplier(f64::from(s2) / twice_max);
    let mo = quantize_multiplier(twice_max / (f64::from(1u32 << LEFT_SHIFT) * f64::from(so)));
    let (lo, hi) = activation_range(o.activation, so, zo)?;
    let scale = |v: i32, z: i32, m: QuantizedMultiplier| {
        multiply_by_quantized_multiplier((v - z).wrapping_mul(1 << LEFT_SHIFT), m)
    };
    binary(&mut op, &|a, b| {
        let sum = scale(a, z1, m1).wrapping_add(scale(b, z2, m2));
        multiply_by_quantized_multiplier(sum, mo)
            .saturating_add(zo)
            .clamp(lo, hi)
    })
}

/// `MUL`: the product of the offset values times `s1 · s2 / s_out`.
pub(crate) fn mul(mut op: OpView<'_, '_>, o: &MulOptions) -> Result<(), KernelError> {
    let q = |i: usize, t| params(op.input(i).and_then(|x| x.quant), t);
    let (s1, z1) = q(0, "input 0")?;
    let (s2, z2) = q(1, "input 1")?;
    let (so, zo) = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
    let m = quantize_multiplier(f64::from(s1) * f64::from(s2) / f64::from(so));
    let (lo, hi) = activation_range(o.activation, so, zo)?;
    binary(&mut op, &|a, b| {
        multiply_by_quantized_multiplier((a - z1).wrapping_mul(b - z2), m)
            .saturating_add(zo)
            .clamp(lo, hi)
    })
}

/// `QUANTIZE`: float to int8 (`round(x / scale) + zero_point`, the division in `f32` as TFLite Micro does it), or
/// int16 to int8 or int32 (requantisation by `input_scale / output_scale`).
pub(crate) fn quantize(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let out = output(&mut op)?;
    let (so, zo) = params(out.quant, "output 0")?;
    let mismatch = KernelError::Shape {
        what: "input and output lengths differ",
    };
    match (x.data, &mut out.data) {
        (Data::F32(x), DataMut::I8(y)) => {
            if x.len() != y.len() {
                return Err(mismatch);
            }
            for (v, o) in x.iter().zip(y.iter_mut()) {
                // TFLM divides in f32 and rounds half away from zero: 0.5918677 /
                // 0.007839307 is 75.5 in f32 (76), 75.49999... in f64 (75).
                let q = round_f32(*v / so);
                *o = q.saturating_add(zo).clamp(-128, 127) as i8;
            }
        }
        (Data::I16(x16), out_data) => {
            let (si, zi) = params(x.quant, "input 0")?;
            let m = quantize_multiplier(f64::from(si) / f64::from(so));
            let requant = |v: i16| {
                i64::from(multiply_by_quantized_multiplier(i32::from(v) - zi, m)) + i64::from(zo)
            };
            match out_data {
                DataMut::I8(y) if y.len() == x16.len() => {
                    for (v, o) in x16.iter().zip(y.iter_mut()) {
                        *o = requant(*v).clamp(-128, 127) as i8;
                    }
                }
                DataMut::I32(y) if y.len() == x16.len() => {
                    for (v, o) in x16.iter().zip(y.iter_mut()) {
                        *o = requant(*v).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
                    }
                }
                _ => return Err(KernelError::Type { tensor: "output 0" }),
            }
        }
        _ => return Err(KernelError::Type { tensor: "input 0" }),
    }
    Ok(())
}

/// `DEQUANTIZE`: int8 to float, `scale · (q - zero_point)` in `f64`, rounded to `f32`.
pub(crate) fn dequantize(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (s, z) = params(xi.quant, "input 0")?;
    let out = output(&mut op)?;
    let y = out.f32().ok_or(KernelError::Type { tensor: "output 0" })?;
    if x.len() != y.len() {
        return Err(KernelError::Shape {
            what: "input and output lengths differ",
        });
    }
    for (v, o) in x.iter().zip(y.iter_mut()) {
        *o = (f64::from(s) * f64::from(i32::from(*v) - z)) as f32;
    }
    Ok(())
}
