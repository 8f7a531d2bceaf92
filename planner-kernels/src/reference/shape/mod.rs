//! Kinds that move values without arithmetic on them: `RESHAPE`, `PAD`, `TRANSPOSE`,
//! `CONCATENATION`, `STRIDED_SLICE` and `RESIZE_NEAREST_NEIGHBOR` here; `SQUEEZE`,
//! `EXPAND_DIMS`, `SLICE` and `PADV2` (`slice`); `SPLIT`, `SPLIT_V`, `PACK` and `UNPACK`
//! (`split`); the space and depth kinds (`space`); `RESIZE_BILINEAR` (`resize`).
//!
//! Ops that move values without arithmetic on them (`RESHAPE`, `PAD`, `TRANSPOSE`,
//! `CONCATENATION`, `STRIDED_SLICE`, `RESIZE_NEAREST_NEIGHBOR`), and `MEAN`.

pub(crate) mod resize;
pub(crate) mod slice;
pub(crate) mod space;
pub(crate) mod split;

use crate::reference::common::index::{RANK, next, next_row, strides};
use planner_rt::kernel::{Data, DataMut, In, OpView, Region};
use planner_rt::options::{
    ConcatenationOptions, PadOptions, ReshapeOptions, ResizeNearestNeighborOptions,
    TransposeOptions,
};

use crate::reference::common::region::Plane;
use crate::reference::{
    KernelError,
    common::{elements, kind_error, no_activation, output, params},
};

/// `RESHAPE`: the same bytes under another shape (nothing to do when the plan made the
/// output the input's bytes).
pub(crate) fn reshape(mut op: OpView<'_, '_>, _: &ReshapeOptions) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    if let Data::InPlace(_) = x.data {
        return Ok(());
    }
    let out = output(&mut op)?;
    macro_rules! copy {
        ($($v:ident),*) => {
            match (x.data, &mut out.data) {
                $((Data::$v(a), planner_rt::kernel::DataMut::$v(b)) if a.len() == b.len() => b.copy_from_slice(a),)*
                _ => return Err(KernelError::Type { tensor: "output 0" }),
            }
        };
    }
    copy!(I8, U8, I16, U16, I32, U32, I64, U64, F32, F64);
    Ok(())
}

/// `PAD`: the input at offset `before` in an output filled with the output's zero point
/// (int8) or zero (int16, int32 and float32, as TFLM pads them without a pad value).
/// With regions (`[1, h, w, c]` tensors), the output's region is computed: its pixel `p`
/// is the input's pixel `p - before` when inside the input (which the input's region must
/// hold), the fill elsewhere.
pub(crate) fn pad(mut op: OpView<'_, '_>, o: &PadOptions) -> Result<(), KernelError> {
    let xi = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let out = output(&mut op)?;
    let (out_shape, out_region) = (out.shape, out.region);
    let tensors = (xi.shape, xi.region, out_shape, out_region);
    let before = o.before.as_slice();
    let type_error = KernelError::Type {
        tensor: "input 0 or output 0 (PAD runs int8, int16, int32 or float32, one type throughout)",
    };
    match xi.data {
        Data::I8(x) => {
            let (_, zero) = params(out.quant, "output 0")?;
            let y = out.i8().ok_or(type_error)?;
            pad_view(x, y, tensors, before, zero.clamp(-128, 127) as i8)
        }
        Data::I16(x) => pad_view(x, out.i16().ok_or(type_error)?, tensors, before, 0),
        Data::I32(x) => pad_view(x, out.i32().ok_or(type_error)?, tensors, before, 0),
        Data::F32(x) => pad_view(x, out.f32().ok_or(type_error)?, tensors, before, 0.0),
        _ => Err(kind_error(&xi, "input 0")),
    }
}

/// The input's and output's shapes and regions.
type Views<'a> = (&'a [usize], Option<Region>, &'a [usize], Option<Region>);

/// Checks that an input of `x_shape` padded by `before` (one amount per dimension, at most
/// `RANK` of them) fits in an output of `y_shape`.
pub(super) fn pad_fits(
    x_shape: &[usize],
    y_shape: &[usize],
    before: &[i32],
) -> Result<(), KernelError> {
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
    Ok(())
}

/// [`pad`] of `x` into `y`, the padding `fill`.
fn pad_view<T: Copy>(
    x: &[T],
    y: &mut [T],
    (x_shape, x_region, out_shape, out_region): Views<'_>,
    before: &[i32],
    fill: T,
) -> Result<(), KernelError> {
    pad_fits(x_shape, out_shape, before)?;
    let rank = x_shape.len();
    // Dimensions aligned right in `RANK`. Each tensor's box of elements held (`lo..hi` per
    // dimension) and where its element `index` lies: `base + Σ index[d] · strides[d]`,
    // wrapping.
    let off = RANK - rank;
    let mut pads = [0usize; RANK];
    for (p, &b) in pads[off..].iter_mut().zip(before) {
        *p = b as usize;
    }
    let view = |shape: &[usize], region: Option<Region>, len: usize| -> Result<_, KernelError> {
        let (mut lo, mut hi) = ([0; RANK], [1; RANK]);
        hi[off..].copy_from_slice(shape);
        let mut st = [0; RANK];
        if region.is_none() {
            if len != elements(shape) {
                return Err(KernelError::Shape {
                    what: "pad amounts do not fit the input and output",
                });
            }
            st[off..].copy_from_slice(&strides(shape)[..rank]);
            return Ok((lo, hi, 0, st));
        }
        let p = Plane::new(shape, region, len)?;
        for (d, range) in [(RANK - 3, p.rows()), (RANK - 2, p.cols())] {
            (lo[d], hi[d]) = (range.start, range.end);
        }
        let (base, s) = p.strides();
        st[RANK - 4..].copy_from_slice(&s);
        Ok((lo, hi, base, st))
    };
    let (lo, hi, y_base, y_strides) = view(out_shape, out_region, y.len())?;
    let (x_lo, x_hi, x_base, x_strides) = view(x_shape, x_region, x.len())?;
    if (0..RANK).any(|d| lo[d] >= hi[d]) {
        return Ok(());
    }
    let at = |base: usize, strides: &[usize; RANK], index: &[usize; RANK]| {
        index
            .iter()
            .zip(strides)
            .fold(base, |a, (i, s)| a.wrapping_add(i.wrapping_mul(*s)))
    };
    let short = KernelError::Shape {
        what: "pad amounts do not fit the input and output",
    };
    // Row by row along the last dimension (contiguous in every layout): the row of the
    // input it copies, at `pads[last]`, between fills, or only the fill when the row lies
    // in the padding.
    let last = RANK - 1;
    let (in_last, out_last) = (x_hi[last], hi[last]);
    let mut index = lo;
    let mut from = [0; RANK];
    loop {
        let start = at(y_base, &y_strides, &index);
        let row = y
            .get_mut(start..start.wrapping_add(out_last))
            .ok_or(short)?;
        let mut inside = true;
        for d in 0..last {
            match index[d].checked_sub(pads[d]) {
                Some(i) if i < in_dim(x_shape, off, d) => from[d] = i,
                _ => inside = false,
            }
        }
        if inside {
            if (0..last).any(|d| from[d] < x_lo[d] || from[d] >= x_hi[d]) {
                return Err(KernelError::Shape {
                    what: "the input's region lacks pixels inside the input that the output's region copies; trace the input region back through the pads",
                });
            }
            let src = at(x_base, &x_strides, &from);
            let src = x.get(src..src.wrapping_add(in_last)).ok_or(short)?;
            let (head, rest) = row.split_at_mut(pads[last].min(out_last));
            head.fill(fill);
            let (body, tail) = rest.split_at_mut(in_last.min(rest.len()));
            body.copy_from_slice(src.get(..body.len()).ok_or(short)?);
            tail.fill(fill);
        } else {
            row.fill(fill);
        }
        if !next_row(&mut index, &lo, &hi) {
            return Ok(());
        }
    }
}

/// Dimension `d` of `RANK` of a shape of rank `RANK - off` aligned right (1 before it).
fn in_dim(shape: &[usize], off: usize, d: usize) -> usize {
    d.checked_sub(off)
        .and_then(|i| shape.get(i))
        .copied()
        .unwrap_or(1)
}

/// `TRANSPOSE`: output dimension `i` is input dimension `perm[i]`. Of int8, int16 or
/// float32 elements, the types TFLite Micro's kernel moves (it refuses others at prepare).
pub(crate) fn transpose(mut op: OpView<'_, '_>, o: &TransposeOptions) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    match x.data {
        Data::I8(_) | Data::I16(_) | Data::F32(_) => {}
        _ => return Err(kind_error(&x, "input 0")),
    }
    let out = output(&mut op)?;
    let out_shape = out.shape;
    let rank = x.shape.len();
    let perm = o.perm.as_slice();
    let mut seen = [false; RANK];
    let n = elements(x.shape);
    let fits = rank <= RANK
        && perm.len() == rank
        && out_shape.len() == rank
        && x.data.len() == Some(n)
        && out.data.as_data().len() == Some(n)
        && perm.iter().enumerate().all(|(i, &p)| {
            usize::try_from(p).is_ok_and(|p| {
                p < rank && !core::mem::replace(&mut seen[p], true) && x.shape[p] == out_shape[i]
            })
        });
    if !fits {
        return Err(KernelError::Shape {
            what: "the permutation does not fit the input and output",
        });
    }
    copy_indexed(x, &mut out.data, (out_shape, n), |index, in_strides| {
        (0..rank)
            .map(|i| index[i] * in_strides[perm[i] as usize])
            .sum()
    })
}

/// `CONCATENATION` along `axis` (negative counts from the end), of any element type: each
/// output row (the dimensions before the axis) is the inputs' rows one after the other.
/// TFLite Micro copies quantised inputs as they are, and refuses (at prepare) an input
/// whose scale is not the output's; this kernel refuses an input whose scale or zero point
/// is not the output's, and fused activations.
pub(crate) fn concatenation(
    mut op: OpView<'_, '_>,
    o: &ConcatenationOptions,
) -> Result<(), KernelError> {
    no_activation(o.activation, "CONCATENATION with a fused activation")?;
    let inputs = op.inputs;
    let out = output(&mut op)?;
    let (out_shape, out_quant) = (out.shape, out.quant);
    let rank = out_shape.len();
    let bad = KernelError::Shape {
        what: "concatenation inputs do not fit the output along the axis",
    };
    let axis = if o.axis < 0 {
        o.axis + rank as i32
    } else {
        o.axis
    };
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a < rank)
        .ok_or(bad)?;
    let outer: usize = out_shape[..axis].iter().product();
    let out_row: usize = out_shape[axis..].iter().product();
    let mut along = 0usize;
    for x in inputs {
        let x = x.ok_or(KernelError::Missing { tensor: "an input" })?;
        let fits = x.shape.len() == rank
            && (0..rank).all(|d| d == axis || x.shape[d] == out_shape[d])
            && x.data.len() == Some(elements(x.shape));
        if !fits {
            return Err(bad);
        }
        along += x.shape[axis];
        if let (Some(q), Some(oq)) = (x.quant, out_quant)
            && (q.params(0) != oq.params(0) || q.scale.len() > 1)
        {
            return Err(KernelError::Quantization {
                tensor: "an input whose scale or zero point is not the output's",
            });
        }
    }
    if along != out_shape[axis] {
        return Err(bad);
    }
    if out.data.as_data().len() != Some(outer * out_row) {
        return Err(bad);
    }
    let mut at = 0usize;
    for x in inputs.iter().flatten() {
        let row: usize = x.shape[axis..].iter().product();
        macro_rules! copy {
            ($($v:ident),*) => {
                match (x.data, &mut out.data) {
                    $((Data::$v(a), DataMut::$v(b)) => {
                        for r in 0..outer {
                            b[r * out_row + at..r * out_row + at + row]
                                .copy_from_slice(&a[r * row..(r + 1) * row]);
                        }
                    })*
                    (Data::InPlace(_) | Data::Variable(_), _) => {
                        return Err(KernelError::Missing { tensor: "an input" })
                    }
                    _ => return Err(KernelError::Type { tensor: "an input" }),
                }
            };
        }
        copy!(I8, U8, I16, U16, I32, U32, I64, U64, F32, F64);
        at += row;
    }
    Ok(())
}

/// Copies output element `at` from input element `from`, any element type.
fn copy_element(
    x: Data<'_>,
    y: &mut DataMut<'_>,
    pairs: impl Iterator<Item = (usize, usize)>,
) -> Result<(), KernelError> {
    macro_rules! copy {
        ($($v:ident),*) => {
            match (x, y) {
                $((Data::$v(a), DataMut::$v(b)) => {
                    for (from, at) in pairs {
                        match (a.get(from), b.get_mut(at)) {
                            (Some(v), Some(o)) => *o = *v,
                            _ => return Err(KernelError::Shape { what: "an index past a tensor's end" }),
                        }
                    }
                })*
                (Data::InPlace(_) | Data::Variable(_), _) => {
                    return Err(KernelError::Missing { tensor: "input 0" })
                }
                _ => return Err(KernelError::Type { tensor: "output 0 (not input 0's type)" }),
            }
        };
    }
    copy!(I8, U8, I16, U16, I32, U32, I64, U64, F32, F64);
    Ok(())
}

/// Copies the `n` elements of an output of dimensions `dims` in order, each from the
/// element of `x` that `from` gives for its multi-index and `x`'s strides (nothing when `n`
/// is 0).
fn copy_indexed(
    x: In<'_>,
    y: &mut DataMut<'_>,
    (dims, n): (&[usize], usize),
    from: impl Fn(&[usize; RANK], &[usize; RANK]) -> usize,
) -> Result<(), KernelError> {
    if n == 0 {
        return Ok(());
    }
    let in_strides = strides(x.shape);
    let mut index = [0usize; RANK];
    let pairs = (0..n).map(|at| {
        let i = from(&index, &in_strides);
        next(&mut index, dims);
        (i, at)
    });
    copy_element(x.data, y, pairs)
}

/// Checks a resize's size operand (input 1, when present: int32 `[height, width]`)
/// against output 0's height and width, naming the op in `what`.
pub(crate) fn resize_size(op: &OpView<'_, '_>, what: &'static str) -> Result<(), KernelError> {
    let Some(size) = op.input(1) else {
        return Ok(());
    };
    let size = size.i32().ok_or(KernelError::Type {
        tensor: "input 1 (size)",
    })?;
    let out = op
        .outputs
        .first()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    let ok = out.shape.len() == 4
        && size.len() == 2
        && usize::try_from(size[0]).ok() == Some(out.shape[1])
        && usize::try_from(size[1]).ok() == Some(out.shape[2]);
    if !ok {
        return Err(KernelError::Shape { what });
    }
    Ok(())
}

/// First index of a strided slice along an axis of `size` (TFLite's `StartForAxis`):
/// `begin` (negative counts from the end), or the first element in the direction of the
/// stride under the begin mask, clamped to `[0, size]` (forward) or `[-1, size - 1]`
/// (backward).
fn slice_start(begin: i64, masked: bool, stride: i64, size: i64) -> i64 {
    slice_bound(begin, masked, stride <= 0, stride, size)
}

/// The index a strided slice stops before (TFLite's `StopForAxis`): `start + 1` for a
/// shrunk axis, else `end` (negative counts from the end; past the last element in the
/// direction of the stride under the end mask), clamped as [`slice_start`] clamps.
fn slice_stop(end: i64, masked: bool, shrink: bool, start: i64, stride: i64, size: i64) -> i64 {
    if shrink {
        return start + 1;
    }
    slice_bound(end, masked, stride > 0, stride, size)
}

/// `v` (negative counts from the end), or under the mask far past the end (`to_end`) or
/// before the start, clamped to `[0, size]` for a forward `stride`, else `[-1, size - 1]`.
fn slice_bound(v: i64, masked: bool, to_end: bool, stride: i64, size: i64) -> i64 {
    let mut at = match (masked, to_end) {
        (true, true) => i64::MAX / 2,
        (true, false) => i64::MIN / 2,
        (false, _) => v,
    };
    if at < 0 {
        at += size;
    }
    if stride > 0 {
        at.clamp(0, size)
    } else {
        at.clamp(-1, size - 1)
    }
}

/// `STRIDED_SLICE`, any element type, as TFLite's reference: per axis, from the start to
/// the stop (exclusive) by the stride, with begin, end and shrink-axis masks. Ellipsis and
/// new-axis masks and `offset` are refused (TFLM's reference does not take them either).
pub(crate) fn strided_slice(
    mut op: OpView<'_, '_>,
    o: &planner_rt::options::StridedSliceOptions,
) -> Result<(), KernelError> {
    if o.ellipsis_mask != 0 || o.new_axis_mask != 0 || o.offset {
        return Err(KernelError::Options {
            what: "STRIDED_SLICE with an ellipsis or new-axis mask or offset",
        });
    }
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let rank = x.shape.len();
    let (begin, end, steps) = (o.begin.as_slice(), o.end.as_slice(), o.strides.as_slice());
    if rank > RANK || begin.len() != rank || end.len() != rank || steps.len() != rank {
        return Err(KernelError::Shape {
            what: "STRIDED_SLICE begin, end and strides need one entry per input dimension (at most 6)",
        });
    }
    if x.data.len() != Some(elements(x.shape)) {
        return Err(KernelError::Shape {
            what: "input 0's length differs from its shape",
        });
    }
    let mut start = [0i64; RANK];
    let mut count = [0usize; RANK];
    let mut step = [0i64; RANK];
    for d in 0..rank {
        let stride = i64::from(steps[d]);
        if stride == 0 {
            return Err(KernelError::Options {
                what: "STRIDED_SLICE with a stride of 0",
            });
        }
        let size = x.shape[d] as i64;
        let bit = |m: i32| m & (1 << d) != 0;
        let s = slice_start(i64::from(begin[d]), bit(o.begin_mask), stride, size);
        let e = slice_stop(
            i64::from(end[d]),
            bit(o.end_mask),
            bit(o.shrink_axis_mask),
            s,
            stride,
            size,
        );
        let n = if stride > 0 {
            (e - s).max(0).div_euclid(stride) + i64::from((e - s).max(0) % stride != 0)
        } else {
            (s - e).max(0).div_euclid(-stride) + i64::from((s - e).max(0) % -stride != 0)
        };
        if size == 0 {
            count[d] = 0;
        } else {
            count[d] = n as usize;
        }
        start[d] = s;
        step[d] = stride;
    }
    let total: usize = count[..rank].iter().product();
    let out = output(&mut op)?;
    if elements(out.shape) != total || out.data.as_data().len() != Some(total) {
        return Err(KernelError::Shape {
            what: "STRIDED_SLICE output size differs from the slice's",
        });
    }
    copy_indexed(
        x,
        &mut out.data,
        (&count[..rank], total),
        |index, in_strides| {
            let from: i64 = (0..rank)
                .map(|d| (start[d] + index[d] as i64 * step[d]) * in_strides[d] as i64)
                .sum();
            from as usize
        },
    )
}

/// `RESIZE_NEAREST_NEIGHBOR`, any element type, NHWC, as TFLM's reference kernel computes
/// it: output row `y` reads input row `min(floor((y + o) · s), in_h - 1)`, or with
/// `align_corners` `min(round((y + o) · s), in_h - 1)` (half away from zero), where `o` is
/// 0.5 with `half_pixel_centers` (else 0) and the scale `s` is `in_h / out_h` in `f32`, or
/// `(in_h - 1) / (out_h - 1)` with `align_corners` and `out_h > 1`; the index is at least 0
/// with `half_pixel_centers`. Likewise for columns. The size operand (input 1, int32
/// `[out_h, out_w]`) must agree with the output.
pub(crate) fn resize_nearest_neighbor(
    mut op: OpView<'_, '_>,
    options: &ResizeNearestNeighborOptions,
) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let shape = |s: &[usize]| {
        crate::reference::common::dims4(s)
            .filter(|_| s.len() == 4)
            .ok_or(KernelError::Shape {
                what: "RESIZE_NEAREST_NEIGHBOR needs 4-dimensional NHWC tensors",
            })
    };
    let [n, in_h, in_w, c] = shape(x.shape)?;
    resize_size(
        &op,
        "RESIZE_NEAREST_NEIGHBOR size operand differs from the output's height and width",
    )?;
    let out = output(&mut op)?;
    let [on, out_h, out_w, oc] = shape(out.shape)?;
    if on != n || oc != c || x.data.len() != Some(n * in_h * in_w * c) {
        return Err(KernelError::Shape {
            what: "RESIZE_NEAREST_NEIGHBOR input and output batches or channels differ",
        });
    }
    if in_h == 0 || in_w == 0 {
        return Err(KernelError::Shape {
            what: "RESIZE_NEAREST_NEIGHBOR of an empty image",
        });
    }
    let nearest = |v: usize, input: usize, output: usize| nearest_index(v, input, output, options);
    let pairs = (0..n * out_h * out_w * c).map(|at| {
        let ch = at % c;
        let ox = (at / c) % out_w;
        let oy = (at / (c * out_w)) % out_h;
        let b = at / (c * out_w * out_h);
        let (iy, ix) = (nearest(oy, in_h, out_h), nearest(ox, in_w, out_w));
        (((b * in_h + iy) * in_w + ix) * c + ch, at)
    });
    copy_element(x.data, &mut out.data, pairs)
}

/// The input index output index `v` reads along one axis of `input` to `output` elements:
/// TFLM's `GetNearestNeighbor`, in `f32` as it computes it (`input` at least 1).
fn nearest_index(
    v: usize,
    input: usize,
    output: usize,
    options: &ResizeNearestNeighborOptions,
) -> usize {
    let scale = if options.align_corners && output > 1 {
        (input - 1) as f32 / (output - 1) as f32
    } else {
        input as f32 / output as f32
    };
    let offset = if options.half_pixel_centers { 0.5 } else { 0.0 };
    let at = (v as f32 + offset) * scale;
    // Non-negative, so truncation is floor and `round_f32` rounds half away from zero
    // (TfLiteRound); the upper clamp also covers a saturated conversion.
    let at = if options.align_corners {
        crate::reference::common::round_f32(at)
    } else {
        at as i32
    };
    usize::try_from(at).unwrap_or(0).min(input - 1)
}

#[cfg(test)]
mod resize_tests {
    use super::*;

    fn indices<const N: usize>(input: usize, align_corners: bool, half: bool) -> [usize; N] {
        let o = ResizeNearestNeighborOptions {
            align_corners,
            half_pixel_centers: half,
        };
        core::array::from_fn(|v| nearest_index(v, input, N, &o))
    }

    #[test]
    fn nearest_indices_follow_each_option() {
        // 4 to 7: floor(y · 4/7); align_corners rounds y · 3/6 half away from zero;
        // with both, round((y + 0.5) · 3/6).
        assert_eq!(indices::<7>(4, false, false), [0, 0, 1, 1, 2, 2, 3]);
        assert_eq!(indices::<7>(4, true, false), [0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(indices::<7>(4, true, true), [0, 1, 1, 2, 2, 3, 3]);
        // 11 to 4: the corners meet with align_corners (scale 10/3).
        assert_eq!(indices::<4>(11, false, false), [0, 2, 5, 8]);
        assert_eq!(indices::<4>(11, true, false), [0, 3, 7, 10]);
        assert_eq!(indices::<4>(11, false, true), [1, 4, 6, 9]);
        // One output: align_corners falls back to in / out (and rounds 2.5 up).
        assert_eq!(indices::<1>(5, true, false), [0]);
        assert_eq!(indices::<1>(5, true, true), [3]);
        assert_eq!(indices::<3>(1, true, true), [0, 0, 0]);
    }
}
