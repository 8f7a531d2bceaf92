//! `BATCH_MATMUL` (issue 39): `out[b] = X'[b] · Y'[b]`, `X'` input 0 with its last two
//! dimensions swapped when `adj_x`, `Y'` input 1 likewise with `adj_y`, the batch
//! dimensions (up to 3, ranks 2 to 5) broadcast. float32 summed in `f32` from 0 along the
//! shared dimension; int8 as TFLM: int32 sums of `(x - z_x) · (y - z_y)`, the Q31
//! multiplier of `s_x · s_y / s_out` (the product in `f32`), plus `z_out`, saturated; int16
//! likewise (zero points 0) with int64 sums and TFLM's 64-bit multiply (the multiplier
//! rounded to 15 bits).

use planner_rt::kernel::{Data, DataMut, OpView};
use planner_rt::options::BatchMatMulOptions;

use crate::reference::common::operands::input;
use crate::reference::{
    KernelError,
    common::{output, params},
};
use crate::{multiply_by_quantized_multiplier, quantize_multiplier};

/// Most dimensions of a `BATCH_MATMUL` operand.
const RANK: usize = 5;

/// The shapes of one product: batch dimensions (output's, and each operand's, padded to 3),
/// and `m`, `k`, `n`.
struct Dims {
    batch: [usize; 3],
    x_batch: [usize; 3],
    y_batch: [usize; 3],
    m: usize,
    k: usize,
    n: usize,
}

impl Dims {
    fn new(
        x: &[usize],
        y: &[usize],
        out: &[usize],
        o: &BatchMatMulOptions,
    ) -> Result<Dims, KernelError> {
        let bad = KernelError::Shape {
            what: "BATCH_MATMUL's operands and output do not fit",
        };
        let split = |s: &[usize]| -> Result<([usize; 3], usize, usize), KernelError> {
            if !(2..=RANK).contains(&s.len()) {
                return Err(KernelError::Shape {
                    what: "a BATCH_MATMUL operand of fewer than 2 or more than 5 dimensions",
                });
            }
            let (batch, last) = s.split_at(s.len() - 2);
            let mut b = [1; 3];
            b[3 - batch.len()..].copy_from_slice(batch);
            Ok((b, last[0], last[1]))
        };
        let (x_batch, xr, xc) = split(x)?;
        let (y_batch, yr, yc) = split(y)?;
        let (m, kx) = if o.adj_x { (xc, xr) } else { (xr, xc) };
        let (ky, n) = if o.adj_y { (yc, yr) } else { (yr, yc) };
        let mut batch = [1; 3];
        for d in 0..3 {
            batch[d] = match (x_batch[d], y_batch[d]) {
                (a, b) if a == b => a,
                (1, b) => b,
                (a, 1) => a,
                _ => return Err(bad),
            };
        }
        let rank = x.len().max(y.len());
        let want = [batch[0], batch[1], batch[2], m, n];
        if kx != ky || out.len() != rank || out != &want[RANK - rank..] {
            return Err(bad);
        }
        Ok(Dims {
            batch,
            x_batch,
            y_batch,
            m,
            k: kx,
            n,
        })
    }

    /// Calls `f(output index, x index of (m, k) at k = 0 and its step, y index at k = 0 and
    /// its step)` for every output element, in output order.
    fn each(
        &self,
        o: &BatchMatMulOptions,
        mut f: impl FnMut(usize, (usize, usize), (usize, usize)),
    ) {
        let (m, k, n) = (self.m, self.k, self.n);
        let mut at = 0;
        for b0 in 0..self.batch[0] {
            for b1 in 0..self.batch[1] {
                for b2 in 0..self.batch[2] {
                    let index = |dims: &[usize; 3]| {
                        let pick = |d: usize, b: usize| if dims[d] == 1 { 0 } else { b };
                        (pick(0, b0) * dims[1] + pick(1, b1)) * dims[2] + pick(2, b2)
                    };
                    let x0 = index(&self.x_batch) * m * k;
                    let y0 = index(&self.y_batch) * k * n;
                    for i in 0..m {
                        for j in 0..n {
                            // X' is [m, k]: X is [m, k] (step 1 along k) or, with adj_x, [k, m].
                            let xs = if o.adj_x {
                                (x0 + i, m)
                            } else {
                                (x0 + i * k, 1)
                            };
                            // Y' is [k, n]: Y is [k, n] (step n) or, with adj_y, [n, k].
                            let ys = if o.adj_y {
                                (y0 + j * k, 1)
                            } else {
                                (y0 + j, n)
                            };
                            f(at, xs, ys);
                            at += 1;
                        }
                    }
                }
            }
        }
    }
}

/// `BATCH_MATMUL` of float32, int8 or int16 operands and output of one type.
pub(crate) fn batch_matmul(
    mut op: OpView<'_, '_>,
    o: &BatchMatMulOptions,
) -> Result<(), KernelError> {
    let x = input(&op, 0, "input 0")?;
    let y = input(&op, 1, "input 1")?;
    let quants = match x.data {
        Data::I8(_) | Data::I16(_) => Some([
            params(x.quant, "input 0")?,
            params(y.quant, "input 1")?,
            params(op.outputs.first().and_then(|t| t.quant), "output 0")?,
        ]),
        _ => None,
    };
    let out = output(&mut op)?;
    let d = Dims::new(x.shape, y.shape, out.shape, o)?;
    let count = |b: &[usize; 3], r: usize, c: usize| b.iter().product::<usize>() * r * c;
    let (nx, ny) = (count(&d.x_batch, d.m, d.k), count(&d.y_batch, d.k, d.n));
    let ny_out = count(&d.batch, d.m, d.n);
    let lens_ok = x.data.len() == Some(nx)
        && y.data.len() == Some(ny)
        && out.data.as_data().len() == Some(ny_out);
    if !lens_ok {
        return Err(KernelError::Shape {
            what: "a BATCH_MATMUL tensor's length is not its shape's",
        });
    }
    let k = d.k;
    match (x.data, y.data, &mut out.data, quants) {
        (Data::F32(p), Data::F32(q), DataMut::F32(r), _) => {
            d.each(o, |at, (xi, xs), (yi, ys)| {
                let mut total = 0.0f32;
                for t in 0..k {
                    total += q[yi + t * ys] * p[xi + t * xs];
                }
                r[at] = total;
            });
            Ok(())
        }
        (Data::I8(p), Data::I8(q), DataMut::I8(r), Some([(sx, zx), (sy, zy), (so, zo)])) => {
            let m = quantize_multiplier(f64::from(sx * sy) / f64::from(so));
            d.each(o, |at, (xi, xs), (yi, ys)| {
                let mut total = 0i32;
                for t in 0..k {
                    let a = i32::from(q[yi + t * ys]) - zy;
                    let b = i32::from(p[xi + t * xs]) - zx;
                    total = total.wrapping_add(a * b);
                }
                let v = multiply_by_quantized_multiplier(total, m).saturating_add(zo);
                r[at] = v.clamp(-128, 127) as i8;
            });
            Ok(())
        }
        (Data::I16(p), Data::I16(q), DataMut::I16(r), Some([(sx, zx), (sy, zy), (so, zo)])) => {
            if zx != 0 || zy != 0 || zo != 0 {
                return Err(KernelError::Quantization {
                    tensor: "an int16 BATCH_MATMUL tensor (TFLM needs zero points 0)",
                });
            }
            let m = quantize_multiplier(f64::from(sx * sy) / f64::from(so));
            d.each(o, |at, (xi, xs), (yi, ys)| {
                let mut total = 0i64;
                for t in 0..k {
                    let a = i64::from(q[yi + t * ys]);
                    let b = i64::from(p[xi + t * xs]);
                    total = total.wrapping_add(a * b);
                }
                let v = multiply_wide(total, m.multiplier, m.shift);
                r[at] = v.clamp(-32768, 32767) as i16;
            });
            Ok(())
        }
        _ => Err(KernelError::Type {
            tensor: "input 0, input 1 or output 0 (BATCH_MATMUL runs float32, int8 or int16, one type throughout)",
        }),
    }
}

/// TFLite's `MultiplyByQuantizedMultiplier` of an int64: the multiplier rounded to 15
/// bits, one rounding shift of `15 - shift`, the result truncated to 32 bits.
pub(crate) fn multiply_wide(x: i64, multiplier: i32, shift: i32) -> i32 {
    let reduced = if multiplier < 0x7FFF_0000 {
        i64::from((multiplier + (1 << 15)) >> 16)
    } else {
        0x7FFF
    };
    let total_shift = (15 - shift).clamp(1, 63) as u32;
    let round = 1i64 << (total_shift - 1);
    (x.wrapping_mul(reduced).wrapping_add(round) >> total_shift) as i32
}
