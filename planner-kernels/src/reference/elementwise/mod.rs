//! Element-wise kinds: `ADD`, `SUB` and `MUL` (int8, int16 and int32 here, float32 in
//! `float`), `MAXIMUM` and `MINIMUM` (float32, int8, int16, int32, int64), `QUANTIZE` and
//! `DEQUANTIZE` (int8 and int16 here), `DIV`, `SQUARED_DIFFERENCE`, `PRELU`, `LEAKY_RELU`
//! and `CAST` (`arithmetic`), comparisons and logic (`compare`) and the math functions
//! (`math`).
//!
//! `ADD`, `SUB` and `MUL` (with broadcasting), `QUANTIZE` and `DEQUANTIZE`, out of place or
//! in place.

pub(crate) mod arithmetic;
pub(crate) mod compare;
pub(crate) mod float;
pub(crate) mod math;
#[cfg(test)]
mod tests;

use crate::reference::common::index::{
    NOT_BROADCAST, RANK, broadcast_dims, broadcast_strides, next_row,
};
use planner_rt::kernel::{Data, DataMut, In, OpView};
use planner_rt::options::{Activation, AddOptions, MulOptions};

use crate::reference::common::operands::El;
use crate::reference::common::region::Plane;
use crate::reference::common::unary::{InType, unary as op_unary};
use crate::reference::{
    KernelError,
    common::{kind_error, output, params, round_f32, three_quants},
};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// One operand of a binary op: its elements, or (in place) the output's.
#[derive(Clone, Copy)]
enum Operand<'a, T> {
    Slice(&'a [T]),
    InPlace,
}

/// Operand `i` of a binary op; in place, exactly one operand is the output's bytes.
fn operand<'a, T: El>(
    op: &OpView<'_, 'a>,
    i: usize,
    tensor: &'static str,
    in_place: bool,
) -> Result<(Operand<'a, T>, In<'a>), KernelError> {
    let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
    match (x.data, in_place) {
        (Data::InPlace(0), true) => Ok((Operand::InPlace, x)),
        (Data::InPlace(_), true) => Err(KernelError::Shape {
            what: "an in-place input taken over by another output than output 0",
        }),
        (data, _) => match T::of(data) {
            Some(d) => Ok((Operand::Slice(d), x)),
            None => Err(kind_error(&x, tensor)),
        },
    }
}

/// Where the elements of a tensor lie in its data, seen from an output of `RANK`
/// dimensions: element `index` is at `base + Σ index[d] · strides[d]` (wrapping; strides
/// 0 where it broadcasts).
struct Layout {
    base: usize,
    strides: [usize; RANK],
}

impl Layout {
    /// The layout of a region view's plane, as the last 4 of `RANK` dimensions.
    fn of_plane(p: &Plane) -> Layout {
        let (base, s) = p.strides();
        let mut strides = [0; RANK];
        strides[RANK - 4..].copy_from_slice(&s);
        Layout { base, strides }
    }

    /// The index of element `index`.
    fn at(&self, index: &[usize; RANK]) -> usize {
        index
            .iter()
            .zip(&self.strides)
            .fold(self.base, |a, (i, s)| a.wrapping_add(i.wrapping_mul(*s)))
    }
}

/// Runs `f(a, b)` over the broadcast of two inputs into the output, all of type `T`: over the
/// output's region when it has one (a `[1, h, w, c]` output; an operand with a region has
/// the output's shape and a region holding the output's, an operand without one is read
/// whole, broadcasting or not), else over every element. When `in_place`, one input is the
/// output's bytes (`Data::InPlace(0)`); it must have the output's exact shape (the other
/// may broadcast), and output element `i` reads only its element `i` before writing it.
fn binary<T: El>(
    op: &mut OpView<'_, '_>,
    in_place: bool,
    f: &dyn Fn(T, T) -> T,
) -> Result<(), KernelError> {
    let (a, ai) = operand::<T>(op, 0, "input 0", in_place)?;
    let (b, bi) = operand::<T>(op, 1, "input 1", in_place)?;
    match (a, b, in_place) {
        (Operand::InPlace, Operand::InPlace, _) => {
            return Err(KernelError::Shape {
                what: "both inputs in place (an op reading one tensor twice cannot run in place)",
            });
        }
        (Operand::Slice(_), Operand::Slice(_), true) => {
            return Err(KernelError::Type {
                tensor: "input 0 and input 1 (neither is in place)",
            });
        }
        _ => {}
    }
    let out = output(op)?;
    let (out_shape, out_region) = (out.shape, out.region);
    let y = T::of_mut(&mut out.data).ok_or(KernelError::Type { tensor: "output 0" })?;
    let dims = broadcast_dims(out_shape)?;
    // The box of output elements to compute, `lo[d]..hi[d]` along dimension `d`.
    let (mut lo, mut hi) = ([0; RANK], dims);
    let out_layout = match out_region {
        Some(_) => {
            let p = Plane::new(out_shape, out_region, y.len())?;
            for (d, range) in [(RANK - 3, p.rows()), (RANK - 2, p.cols())] {
                (lo[d], hi[d]) = (range.start, range.end);
            }
            Layout::of_plane(&p)
        }
        None => {
            if y.len() != dims.iter().product::<usize>() {
                return Err(NOT_BROADCAST);
            }
            let strides = broadcast_strides(out_shape, &dims).ok_or(NOT_BROADCAST)?;
            Layout { base: 0, strides }
        }
    };
    let mut layouts = [(), ()].map(|_| Layout {
        base: 0,
        strides: [0; RANK],
    });
    for ((x, xi), layout) in [(a, ai), (b, bi)].into_iter().zip(&mut layouts) {
        if matches!(x, Operand::InPlace) && xi.shape != out_shape {
            return Err(KernelError::Shape {
                what: "the in-place input's shape is not the output's",
            });
        }
        *layout = match (x, xi.region) {
            (Operand::InPlace, _) => Layout {
                base: out_layout.base,
                strides: out_layout.strides,
            },
            (Operand::Slice(_), None) => Layout {
                base: 0,
                strides: broadcast_strides(xi.shape, &dims).ok_or(NOT_BROADCAST)?,
            },
            (Operand::Slice(d), region) => {
                if xi.shape != out_shape {
                    return Err(KernelError::Shape {
                        what: "an input with a region has another shape than the output; give a broadcast input no region",
                    });
                }
                let p = Plane::new(xi.shape, region, d.len())?;
                let rows = (lo[RANK - 3], hi[RANK - 3].saturating_sub(1));
                let cols = (lo[RANK - 2], hi[RANK - 2].saturating_sub(1));
                p.holds(Some(rows), Some(cols))?;
                Layout::of_plane(&p)
            }
        };
    }
    if (0..RANK).any(|d| lo[d] >= hi[d]) {
        return Ok(());
    }
    let [la, lb] = &layouts;
    // Row by row along the last dimension: the outer index in `index[..RANK - 1]`, each
    // tensor's element stepping by its last stride.
    let last = RANK - 1;
    let mut index = lo;
    loop {
        let (mut i, mut ia, mut ib) = (out_layout.at(&index), la.at(&index), lb.at(&index));
        for _ in lo[last]..hi[last] {
            let get = |x: Operand<'_, T>, at: usize, y: &[T]| match x {
                Operand::Slice(s) => s.get(at).copied(),
                Operand::InPlace => y.get(i).copied(),
            };
            let (va, vb) = match (get(a, ia, y), get(b, ib, y)) {
                (Some(va), Some(vb)) => (va, vb),
                _ => return Err(NOT_BROADCAST),
            };
            *y.get_mut(i).ok_or(NOT_BROADCAST)? = f(va, vb);
            i = i.wrapping_add(out_layout.strides[last]);
            ia = ia.wrapping_add(la.strides[last]);
            ib = ib.wrapping_add(lb.strides[last]);
        }
        if !next_row(&mut index, &lo, &hi) {
            return Ok(());
        }
    }
}

/// `ADD`: each input's offset value scaled to a common Q20 (int16: Q15) scale (twice the
/// larger input scale), summed, and scaled to the output; int32 summed as they are.
pub(crate) fn add(op: OpView<'_, '_>, o: &AddOptions, in_place: bool) -> Result<(), KernelError> {
    add_sub(op, o, in_place, false)
}

/// `SUB`: as `ADD`, the second scaled input subtracted from the first.
pub(crate) fn sub(op: OpView<'_, '_>, o: &AddOptions, in_place: bool) -> Result<(), KernelError> {
    add_sub(op, o, in_place, true)
}

/// The element type of output 0's data, when it has one.
fn output_type<'o>(op: &'o OpView<'_, '_>) -> Option<&'o DataMut<'o>> {
    op.outputs.first().map(|y| &y.data)
}

/// `ADD` or (`subtract`) `SUB`: float32 in [`crate::reference::common::float`]; int8 and
/// int16 as TFLM: both offset inputs shifted left by 20 (int16: 15) and scaled by `scale /
/// (2 · max scale)`, summed (or subtracted), scaled by `2 · max scale / (2^shift · output
/// scale)` ([`AddSub`]). int32 as TFLM's unquantised kernel: `a + b` or `a - b` wrapping
/// (TFLM's plain `int32_t` sum, which wraps on the hosts and cores it runs on), clamped to
/// `ADD`'s full int32 range (TFLM ignores `ADD`'s fused activation on int32) or to `SUB`'s
/// activation range; a quantised int32 input (or `SUB` output) is refused, as TFLM refuses
/// it when preparing the op.
fn add_sub(
    mut op: OpView<'_, '_>,
    o: &AddOptions,
    in_place: bool,
    subtract: bool,
) -> Result<(), KernelError> {
    if crate::reference::common::float::float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return if subtract {
            float::sub(&mut op, o, in_place)
        } else {
            float::add(&mut op, o, in_place)
        };
    }
    match output_type(&op) {
        Some(DataMut::I32(_)) => {
            unquantised(&op, if subtract { 3 } else { 2 })?;
            let (lo, hi) = if subtract {
                int32_activation_range(o.activation)
            } else {
                (i32::MIN, i32::MAX)
            };
            binary::<i32>(&mut op, in_place, &|a, b| {
                let v = if subtract {
                    a.wrapping_sub(b)
                } else {
                    a.wrapping_add(b)
                };
                v.max(lo).min(hi)
            })
        }
        Some(DataMut::I16(_)) => {
            let p = AddSub::new(&op, o, subtract)?;
            binary::<i16>(&mut op, in_place, &|a, b| {
                p.finish(p.scale(i32::from(a), i32::from(b))) as i16
            })
        }
        _ => {
            let p = AddSub::new(&op, o, subtract)?;
            binary::<i8>(&mut op, in_place, &|a, b| {
                p.finish(p.scale(i32::from(a), i32::from(b))) as i8
            })
        }
    }
}

/// Refuses a quantised input among the first `count` tensors of inputs 0 and 1 and output 0
/// (TFLM prepares unquantised int32 `ADD`, `SUB` and `DIV` only).
fn unquantised(op: &OpView<'_, '_>, count: usize) -> Result<(), KernelError> {
    let quants = [
        op.input(0).and_then(|x| x.quant),
        op.input(1).and_then(|x| x.quant),
        op.outputs.first().and_then(|y| y.quant),
    ];
    let names = [
        "input 0 (int32 quantised: TFLM runs unquantised int32 only)",
        "input 1 (int32 quantised: TFLM runs unquantised int32 only)",
        "output 0 (int32 quantised: TFLM runs unquantised int32 only)",
    ];
    for (q, tensor) in quants.into_iter().zip(names).take(count) {
        if q.and_then(|q| q.params(0)).is_some() {
            return Err(KernelError::Quantization { tensor });
        }
    }
    Ok(())
}

/// The int32 range a fused activation leaves, TFLite's `CalculateActivationRange` on
/// `int32_t`: RELU `[0, max]`, RELU6 `[0, 6]`, RELU_N1_TO_1 `[-1, 1]`, anything else the
/// whole range.
pub(crate) fn int32_activation_range(a: Activation) -> (i32, i32) {
    match a {
        Activation::Relu => (0, i32::MAX),
        Activation::Relu6 => (0, 6),
        Activation::ReluN1To1 => (-1, 1),
        _ => (i32::MIN, i32::MAX),
    }
}

/// The int8 or (`int16`) int16 range an activation leaves: TFLite's
/// `CalculateActivationRangeQuantized`, with the bounds quantised as `zero_point +
/// round(real / scale)` in `f32`. TANH and SIGN_BIT are refused on int8 (as everywhere in
/// these kernels); on int16 they leave the whole range, as in TFLM.
fn quantized_range(
    activation: Activation,
    scale: f32,
    zero: i32,
    int16: bool,
) -> Result<(i32, i32), KernelError> {
    if !int16 {
        return crate::reference::common::activation_range(activation, scale, zero);
    }
    Ok(crate::reference::common::int16_activation_range(
        activation, scale, zero,
    ))
}

/// True when output 0 holds int16 elements.
fn int16_output(op: &OpView<'_, '_>) -> bool {
    matches!(output_type(op), Some(DataMut::I16(_)))
}

/// The int8 or int16 `ADD` or `SUB` of an op, as TFLM computes it: each offset input shifted
/// left by [`AddSub::left_shift`] and scaled by `scale / (2 · max scale)`
/// ([`AddSub::input`]), summed or subtracted, scaled by `2 · max scale / (2^shift · output
/// scale)`, the output zero point added and the activation's clamp ([`AddSub::finish`]).
pub(crate) struct AddSub {
    /// Each input's zero point and multiplier.
    pub(crate) inputs: [(i32, QuantizedMultiplier); 2],
    /// The output's multiplier and zero point, and the activation's clamp.
    pub(crate) output: QuantizedMultiplier,
    pub(crate) zero: i32,
    pub(crate) lo: i32,
    pub(crate) hi: i32,
    /// The shift of the offset inputs: 20 for int8, 15 for int16.
    left_shift: u32,
    /// `SUB`: the second input is subtracted.
    pub(crate) subtract: bool,
}

impl AddSub {
    /// The parameters of an int8 or int16 (output 0's type) `ADD` (or `SUB`) op from its
    /// quantisations and options, the ratios in `f64` (the `tflite-micro` package's `SUB`
    /// agrees with this and not with ratios taken in `f32`: `op_b4_sub_i8_scale_ratios`).
    pub(crate) fn new(
        op: &OpView<'_, '_>,
        o: &AddOptions,
        subtract: bool,
    ) -> Result<AddSub, KernelError> {
        let [(s1, z1), (s2, z2), (so, zo)] = three_quants(op)?;
        let int16 = int16_output(op);
        let left_shift = if int16 { 15 } else { 20 };
        let twice_max = 2.0 * f64::from(s1.max(s2));
        let shifted = f64::from(1u32 << left_shift) * f64::from(so);
        let [m1, m2, mo] = [
            f64::from(s1) / twice_max,
            f64::from(s2) / twice_max,
            twice_max / shifted,
        ]
        .map(quantize_multiplier);
        let (lo, hi) = quantized_range(o.activation, so, zo, int16)?;
        Ok(AddSub {
            inputs: [(z1, m1), (z2, m2)],
            output: mo,
            zero: zo,
            lo,
            hi,
            left_shift,
            subtract,
        })
    }

    /// Input `i`'s value `v`, offset, shifted and scaled.
    pub(crate) fn input(&self, i: usize, v: i32) -> i32 {
        let (z, m) = self.inputs[i & 1];
        multiply_by_quantized_multiplier((v - z).wrapping_mul(1 << self.left_shift), m)
    }

    /// The sum (or difference) of the two scaled inputs.
    fn scale(&self, a: i32, b: i32) -> i32 {
        let (a, b) = (self.input(0, a), self.input(1, b));
        if self.subtract {
            a.wrapping_sub(b)
        } else {
            a.wrapping_add(b)
        }
    }

    /// The output of a sum (or difference) of scaled inputs (TFLM's `min(max(v, lo), hi)`).
    pub(crate) fn finish(&self, sum: i32) -> i32 {
        multiply_by_quantized_multiplier(sum, self.output)
            .saturating_add(self.zero)
            .max(self.lo)
            .min(self.hi)
    }
}

/// `MAXIMUM` (`max`) or `MINIMUM`, float32, int8, int16, int32 or int64 with broadcasting,
/// as TFLM: `a > b ? a : b` (`a < b ? a : b`) on the raw values, so a NaN second operand
/// wins and a NaN first one loses, and of `0.0` and `-0.0` the second is kept. Refuses an
/// output quantised otherwise than the inputs (TFLM compares the raw values whatever their
/// quantisations).
pub(crate) fn min_max(mut op: OpView<'_, '_>, max: bool) -> Result<(), KernelError> {
    let q = |x: Option<planner_rt::Quant>| x.and_then(|q| q.params(0));
    let out_q = q(op.outputs.first().and_then(|o| o.quant));
    for (i, tensor) in [
        (0, "input 0 (quantised otherwise than the output)"),
        (1, "input 1 (quantised otherwise than the output)"),
    ] {
        if q(op.input(i).and_then(|x| x.quant)) != out_q {
            return Err(KernelError::Quantization { tensor });
        }
    }
    fn pick<T: El + PartialOrd>(op: &mut OpView<'_, '_>, max: bool) -> Result<(), KernelError> {
        binary::<T>(op, false, &|a, b| match (max, a > b, a < b) {
            (true, true, _) | (false, _, true) => a,
            _ => b,
        })
    }
    match output_type(&op) {
        Some(DataMut::F32(_)) => pick::<f32>(&mut op, max),
        Some(DataMut::I16(_)) => pick::<i16>(&mut op, max),
        Some(DataMut::I32(_)) => pick::<i32>(&mut op, max),
        Some(DataMut::I64(_)) => pick::<i64>(&mut op, max),
        Some(DataMut::I8(_)) => pick::<i8>(&mut op, max),
        _ => Err(KernelError::Type {
            tensor: "output 0 (MAXIMUM and MINIMUM run float32, int8, int16, int32 and int64)",
        }),
    }
}

/// `MUL`: the product of the offset values times `s1 · s2 / s_out` (int8, int16); int32
/// the wrapping product (TFLM's `WrappingMul`) clamped to the fused activation's int32
/// range, whatever the quantisations (TFLM ignores them).
pub(crate) fn mul(
    mut op: OpView<'_, '_>,
    o: &MulOptions,
    in_place: bool,
) -> Result<(), KernelError> {
    if crate::reference::common::float::float_output(&op) {
        crate::reference::common::whole_tensors(&op)?;
        return float::mul(&mut op, o, in_place);
    }
    match output_type(&op) {
        Some(DataMut::I32(_)) => {
            let (lo, hi) = int32_activation_range(o.activation);
            binary::<i32>(&mut op, in_place, &|a, b| a.wrapping_mul(b).max(lo).min(hi))
        }
        Some(DataMut::I16(_)) => {
            let p = Mul::new(&op, o)?;
            if p.zeros != (0, 0) || p.zero != 0 {
                return Err(KernelError::Quantization {
                    tensor: "input 0, input 1 or output 0 (int16 MUL takes zero points of 0)",
                });
            }
            binary::<i16>(&mut op, in_place, &|a, b| {
                p.finish(p.product(i32::from(a), i32::from(b))) as i16
            })
        }
        _ => {
            let p = Mul::new(&op, o)?;
            binary::<i8>(&mut op, in_place, &|a, b| {
                p.finish(p.product(i32::from(a), i32::from(b))) as i8
            })
        }
    }
}

/// The int8 or int16 `MUL` of an op, as TFLM computes it: the product of the offset inputs
/// ([`Mul::product`]) times `s1 · s2 / s_out`, the output zero point added and the
/// activation's clamp ([`Mul::finish`]).
pub(crate) struct Mul {
    /// The inputs' zero points.
    zeros: (i32, i32),
    /// The output's multiplier and zero point, and the activation's clamp.
    pub(crate) output: QuantizedMultiplier,
    pub(crate) zero: i32,
    pub(crate) lo: i32,
    pub(crate) hi: i32,
}

impl Mul {
    /// The parameters of an int8 or int16 (output 0's type) `MUL` op from its quantisations
    /// and options.
    pub(crate) fn new(op: &OpView<'_, '_>, o: &MulOptions) -> Result<Mul, KernelError> {
        let [(s1, z1), (s2, z2), (so, zo)] = three_quants(op)?;
        let output = quantize_multiplier(f64::from(s1) * f64::from(s2) / f64::from(so));
        let (lo, hi) = quantized_range(o.activation, so, zo, int16_output(op))?;
        Ok(Mul {
            zeros: (z1, z2),
            output,
            zero: zo,
            lo,
            hi,
        })
    }

    /// The product of the offset inputs.
    pub(crate) fn product(&self, a: i32, b: i32) -> i32 {
        (a - self.zeros.0).wrapping_mul(b - self.zeros.1)
    }

    /// The output of a product (TFLM's `min(max(v, lo), hi)`).
    fn finish(&self, product: i32) -> i32 {
        multiply_by_quantized_multiplier(product, self.output)
            .saturating_add(self.zero)
            .max(self.lo)
            .min(self.hi)
    }
}

/// `QUANTIZE` on the element type pairs TFLite Micro's reference runs: float to int8 or
/// int16 (`round(x / scale) + zero_point`, the division in `f32` as TFLite Micro does
/// it); int8, int16 or int32 to int8 or int16, int8 or int16 to int32, int8 to uint8 and
/// uint8 to int8 (requantisation by the Q31 multiplier of `input_scale / output_scale`,
/// TFLM's `Requantize`, saturated to the output's type; its exclusive-or shortcut for an
/// int8-uint8 shift of 128 gives the same values). In place (`in_place`), the input's bytes
/// are at the start of output 0's buffer (see [`InType`]).
pub(crate) fn quantize(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let out = output(&mut op)?;
    let (so, zo) = params(out.quant, "output 0")?;
    let in_type = InType::of(&x, &out.data)?;
    let requant = |x: &In<'_>| -> Result<_, KernelError> {
        let (si, zi) = params(x.quant, "input 0")?;
        let m = quantize_multiplier(f64::from(si) / f64::from(so));
        Ok(move |v: i32| {
            i64::from(multiply_by_quantized_multiplier(v.wrapping_sub(zi), m)) + i64::from(zo)
        })
    };
    // `v` saturated to the output type `$t`.
    macro_rules! narrow {
        ($t:ty) => {
            |v: i64| v.clamp(i64::from(<$t>::MIN), i64::from(<$t>::MAX)) as $t
        };
    }
    // TFLM divides in f32 and rounds half away from zero: 0.5918677 / 0.007839307 is 75.5
    // in f32 (76), 75.49999... in f64 (75).
    let from_float = |v: f32| i64::from(round_f32(v / so).saturating_add(zo));
    // Requantises inputs of type `$t` to outputs of type `$o`.
    macro_rules! requantize {
        ($t:ty, $o:ty) => {{
            let r = requant(&x)?;
            let n = narrow!($o);
            op_unary(&mut op, in_place, |v: $t| n(r(i32::from(v))))
        }};
    }
    match (in_type, &mut out.data) {
        (InType::F32, DataMut::I8(_)) => {
            op_unary(&mut op, in_place, |v: f32| narrow!(i8)(from_float(v)))
        }
        (InType::F32, DataMut::I16(_)) => {
            op_unary(&mut op, in_place, |v: f32| narrow!(i16)(from_float(v)))
        }
        (InType::I8, DataMut::I8(_)) => requantize!(i8, i8),
        (InType::I16, DataMut::I8(_)) => requantize!(i16, i8),
        (InType::I32, DataMut::I8(_)) => requantize!(i32, i8),
        (InType::U8, DataMut::I8(_)) => requantize!(u8, i8),
        (InType::I8, DataMut::I16(_)) => requantize!(i8, i16),
        (InType::I16, DataMut::I16(_)) => requantize!(i16, i16),
        (InType::I32, DataMut::I16(_)) => requantize!(i32, i16),
        (InType::I8, DataMut::I32(_)) => requantize!(i8, i32),
        (InType::I16, DataMut::I32(_)) => requantize!(i16, i32),
        (InType::I8, DataMut::U8(_)) => requantize!(i8, u8),
        (_, DataMut::I16(_) | DataMut::I32(_) | DataMut::U8(_)) => {
            Err(KernelError::Type { tensor: "input 0" })
        }
        _ => Err(KernelError::Type { tensor: "output 0" }),
    }
}

/// `DEQUANTIZE`: int8, int16 or uint8 to float, `scale · (q - zero_point)` in `f64`, rounded to
/// `f32`. In place, see [`InType`]: an input narrower than the output is taken to be of
/// the output's type, so dequantising in place is refused (the plan never runs it in
/// place, its output being wider than its input).
pub(crate) fn dequantize(mut op: OpView<'_, '_>, in_place: bool) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let (s, z) = params(x.quant, "input 0")?;
    let out = output(&mut op)?;
    let in_type = InType::of(&x, &out.data)?;
    let real = move |v: i32| (f64::from(s) * f64::from(v - z)) as f32;
    match in_type {
        InType::I8 => op_unary(&mut op, in_place, |v: i8| real(i32::from(v))),
        InType::I16 => op_unary(&mut op, in_place, |v: i16| real(i32::from(v))),
        InType::U8 => op_unary(&mut op, in_place, |v: u8| real(i32::from(v))),
        _ => Err(KernelError::Type { tensor: "input 0" }),
    }
}
