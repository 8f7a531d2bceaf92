//! Kinds that move elements between positions (issue 39): `DEPTH_TO_SPACE`,
//! `SPACE_TO_DEPTH`, `BATCH_TO_SPACE_ND`, `SPACE_TO_BATCH_ND`, `MIRROR_PAD` and
//! `REVERSE_V2`. Values are copied, never requantised (as in TFLM), for the element types
//! TFLM runs each kind on; each kernel says which output element comes from which input
//! element ([`remap`]).

use planner_rt::kernel::{Data, DataMut, In, OpView, Out};
use planner_rt::options::{BlockSizeOptions, MirrorPadMode, MirrorPadOptions};

use crate::reference::common::index::{RANK, next, padded, strides};
use crate::reference::common::operands::input;
use crate::reference::{KernelError, common::output};

/// An element type a data-moving kind may copy (bool is [`Ty::U8`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// int8.
    I8,
    /// uint8 or bool.
    U8,
    /// int16.
    I16,
    /// int32.
    I32,
    /// int64.
    I64,
    /// float32.
    F32,
}

/// `y[i] = x[from(i)]` for every output element, or zero bytes where `from` gives `None`,
/// when input and output are of one type of `types`; `from` may refuse an element.
pub(crate) fn remap(
    x: Data<'_>,
    y: &mut DataMut<'_>,
    types: &[Ty],
    type_error: KernelError,
    mut from: impl FnMut(usize) -> Result<Option<usize>, KernelError>,
) -> Result<(), KernelError> {
    remap_from(&[x], y, types, type_error, |i| Ok(from(i)?.map(|k| (0, k))))
}

/// [`remap`] into an output of dimensions `dims` (`RANK` of them, leading ones) of one of
/// the `types` (else the error given with them): `from` gets each output element's
/// multi-index, in order.
fn remap_indexed(
    x: Data<'_>,
    y: &mut DataMut<'_>,
    (types, type_error): (&[Ty], KernelError),
    dims: [usize; RANK],
    mut from: impl FnMut(&[usize; RANK]) -> Result<Option<usize>, KernelError>,
) -> Result<(), KernelError> {
    let mut index = [0usize; RANK];
    remap(x, y, types, type_error, |_| {
        let k = from(&index)?;
        next(&mut index, &dims);
        Ok(k)
    })
}

/// Input 0 of `op` and its dimensions padded to `RANK` with leading ones, or the shape
/// error `what` when it has more.
fn input_dims<'a>(
    op: &OpView<'_, 'a>,
    what: &'static str,
) -> Result<(In<'a>, [usize; RANK]), KernelError> {
    let x = input(op, 0, "input 0")?;
    let dims = padded(x.shape).ok_or(KernelError::Shape { what })?;
    Ok((x, dims))
}

/// [`remap`] of float32 or int8 data into an NHWC output of `[height, width, channels]`
/// per batch: `from` gets each output element's `[batch, y, x, channel]`.
fn remap_nhwc(
    x: Data<'_>,
    y: &mut DataMut<'_>,
    [oh, ow, oc]: [usize; 3],
    mut from: impl FnMut([usize; 4]) -> Result<Option<usize>, KernelError>,
) -> Result<(), KernelError> {
    remap(x, y, FLOAT_INT8, FLOAT_INT8_ERROR, |i| {
        let (d, i) = (i % oc, i / oc);
        let (xw, i) = (i % ow, i / ow);
        let (yh, b) = (i % oh, i / oh);
        from([b, yh, xw, d])
    })
}

/// [`remap`] from several inputs: `from(i)` gives `(input, index)`.
pub(crate) fn remap_from(
    xs: &[Data<'_>],
    y: &mut DataMut<'_>,
    types: &[Ty],
    type_error: KernelError,
    from: impl FnMut(usize) -> Result<Option<(usize, usize)>, KernelError>,
) -> Result<(), KernelError> {
    macro_rules! by_type {
        ($(($v:ident, $t:ident)),*) => {
            match y {
                $(DataMut::$v(b) if types.contains(&Ty::$t) => {
                    let mut srcs: [&[_]; 4] = [&[]; 4];
                    for (k, x) in xs.iter().enumerate() {
                        match (x, srcs.get_mut(k)) {
                            (Data::$v(a), Some(slot)) => *slot = a,
                            (Data::InPlace(_), _) => return Err(KernelError::Missing { tensor: "input 0" }),
                            _ => return Err(type_error),
                        }
                    }
                    copy(&srcs, b, from)
                })*
                _ => Err(type_error),
            }
        };
    }
    by_type!(
        (I8, I8),
        (U8, U8),
        (I16, I16),
        (I32, I32),
        (I64, I64),
        (F32, F32)
    )
}

/// [`remap_from`] of one element type.
fn copy<T: Copy + Default>(
    xs: &[&[T]],
    y: &mut [T],
    mut from: impl FnMut(usize) -> Result<Option<(usize, usize)>, KernelError>,
) -> Result<(), KernelError> {
    for (i, v) in y.iter_mut().enumerate() {
        *v = match from(i)? {
            Some((s, k)) => *xs.get(s).and_then(|x| x.get(k)).ok_or(KernelError::Shape {
                what: "an element outside the input (its length is not its shape's)",
            })?,
            None => T::default(),
        };
    }
    Ok(())
}

/// The integers of input `i` (int32, or int64 when `wide`), for a kind that reads them
/// when it runs (TFLM reads these operands in `Eval`).
pub(crate) fn ints<'a>(
    x: In<'a>,
    wide: bool,
    what: &KernelError,
) -> Result<IntsIter<'a>, KernelError> {
    match x.data {
        Data::I32(v) => Ok(IntsIter::I32(v.iter())),
        Data::I64(v) if wide => Ok(IntsIter::I64(v.iter())),
        _ => Err(*what),
    }
}

/// The values of an int32 or int64 operand, as `i64`.
pub(crate) enum IntsIter<'a> {
    I32(core::slice::Iter<'a, i32>),
    I64(core::slice::Iter<'a, i64>),
}

impl Iterator for IntsIter<'_> {
    type Item = i64;
    fn next(&mut self) -> Option<i64> {
        match self {
            IntsIter::I32(v) => v.next().map(|&v| i64::from(v)),
            IntsIter::I64(v) => v.next().copied(),
        }
    }
}

const FLOAT_INT8: &[Ty] = &[Ty::F32, Ty::I8];
const FLOAT_INT8_ERROR: KernelError = KernelError::Type {
    tensor: "input 0 or output 0 (TFLM runs this kind on float32 or int8, one type throughout)",
};

/// A 4-D shape, or a shape error naming the kind.
fn four(shape: &[usize], what: &'static str) -> Result<[usize; 4], KernelError> {
    match *shape {
        [a, b, c, d] => Ok([a, b, c, d]),
        _ => Err(KernelError::Shape { what }),
    }
}

/// The block size, at least 1.
fn block(o: &BlockSizeOptions) -> Result<usize, KernelError> {
    usize::try_from(o.block_size)
        .ok()
        .filter(|&b| b > 0)
        .ok_or(KernelError::Options {
            what: "a block size below 1",
        })
}

/// The input, the output, the block size and both NHWC shapes.
type DepthOp<'o, 'a> = (In<'a>, &'o mut Out<'a>, usize, [usize; 4], [usize; 4]);

/// The [`DepthOp`] of a `DEPTH_TO_SPACE` (`to_space`)
/// or `SPACE_TO_DEPTH`, checked: the side with the larger height and width has them `b`
/// times the other's, and `b · b` times fewer channels. `what` is the error otherwise.
fn depth_op<'o, 'a>(
    op: &'o mut OpView<'_, 'a>,
    o: &BlockSizeOptions,
    what: &'static str,
    to_space: bool,
) -> Result<DepthOp<'o, 'a>, KernelError> {
    let x = input(op, 0, "input 0")?;
    let out = output(op)?;
    let b = block(o)?;
    let dims = four(x.shape, what)?;
    let out_dims = four(out.shape, what)?;
    let ([n, h, w, c], [bn, bh, bw, bc]) = if to_space {
        (dims, out_dims)
    } else {
        (out_dims, dims)
    };
    // Checked: a block size near 2^31 must be refused, not wrap.
    let times = |v: usize, k: usize| v.checked_mul(k);
    let fits = bn == n
        && times(h, b) == Some(bh)
        && times(w, b) == Some(bw)
        && times(bc, b).and_then(|v| times(v, b)) == Some(c);
    if !fits {
        return Err(KernelError::Shape { what });
    }
    Ok((x, out, b, dims, out_dims))
}

/// `DEPTH_TO_SPACE` (NHWC, float32 or int8): output pixel `(h, w)`, channel `d` is input
/// pixel `(h / b, w / b)`, channel `d + ((h mod b) · b + w mod b) · out_channels`.
pub(crate) fn depth_to_space(
    mut op: OpView<'_, '_>,
    o: &BlockSizeOptions,
) -> Result<(), KernelError> {
    let what = "DEPTH_TO_SPACE's output is not the input's channels moved into blocks";
    let (x, out, b, [_, h, w, c], [_, oh, ow, oc]) = depth_op(&mut op, o, what, true)?;
    remap_nhwc(x.data, &mut out.data, [oh, ow, oc], |[nb, yh, xw, d]| {
        let id = d + ((yh % b) * b + xw % b) * oc;
        Ok(Some(((nb * h + yh / b) * w + xw / b) * c + id))
    })
}

/// `SPACE_TO_DEPTH` (NHWC, float32 or int8): the inverse of [`depth_to_space`].
pub(crate) fn space_to_depth(
    mut op: OpView<'_, '_>,
    o: &BlockSizeOptions,
) -> Result<(), KernelError> {
    let what = "SPACE_TO_DEPTH's output is not the input's blocks moved into channels";
    let (x, out, b, [_, h, w, c], [_, oh, ow, oc]) = depth_op(&mut op, o, what, false)?;
    remap_nhwc(x.data, &mut out.data, [oh, ow, oc], |[nb, yh, xw, d]| {
        let (id, r) = (d % c, d / c);
        let (iy, ix) = (yh * b + r / b, xw * b + r % b);
        Ok(Some(((nb * h + iy) * w + ix) * c + id))
    })
}

/// The block shape (input 1) and the before-amounts along height and width of input 2 (a
/// `[dims, 2]` table), int32, of a `BATCH_TO_SPACE_ND` or `SPACE_TO_BATCH_ND` whose input
/// has `rank` dimensions (3: `[batch, height, channels]`, width 1; or 4).
fn block_and_before(
    op: &OpView<'_, '_>,
    rank: usize,
) -> Result<([usize; 2], [usize; 2]), KernelError> {
    const BAD: KernelError = KernelError::Type {
        tensor: "input 1 or 2 (block shape and crops or paddings are int32)",
    };
    let bad_value = KernelError::Value {
        what: "a block size below 1, a negative crop or padding, or too few of them",
    };
    let spatial = match rank {
        3 => 1,
        4 => 2,
        _ => {
            return Err(KernelError::Shape {
                what: "BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND take inputs of 3 or 4 dimensions",
            });
        }
    };
    let shape: Vec3 = ints(input(op, 1, "input 1 (block shape)")?, false, &BAD)?
        .take(spatial)
        .collect();
    let pads: Vec3 = ints(input(op, 2, "input 2")?, false, &BAD)?
        .step_by(2)
        .take(spatial)
        .collect();
    let size = |v: Option<i64>, min: i64| {
        v.filter(|&v| v >= min)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or(bad_value)
    };
    let bh = size(shape.get(0), 1)?;
    let ph = size(pads.get(0), 0)?;
    let (bw, pw) = if spatial == 2 {
        (size(shape.get(1), 1)?, size(pads.get(1), 0)?)
    } else {
        (1, 0)
    };
    Ok(([bh, bw], [ph, pw]))
}

/// Up to three integers, collected without allocating.
#[derive(Default)]
struct Vec3 {
    v: [i64; 3],
    len: usize,
}

impl Vec3 {
    fn get(&self, i: usize) -> Option<i64> {
        self.v.get(i).copied().filter(|_| i < self.len)
    }
}

impl FromIterator<i64> for Vec3 {
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Vec3 {
        let mut out = Vec3::default();
        for v in iter.into_iter().take(3) {
            out.v[out.len] = v;
            out.len += 1;
        }
        out
    }
}

/// `[batch, height, width, channels]` of a 3- or 4-D shape (3-D: width 1).
fn nhwc(shape: &[usize]) -> [usize; 4] {
    match *shape {
        [n, h, c] => [n, h, 1, c],
        [n, h, w, c] => [n, h, w, c],
        _ => [0; 4],
    }
}

/// What `BATCH_TO_SPACE_ND` and `SPACE_TO_BATCH_ND` read before they move a byte: the
/// input; the output; the block's height and width and the crops or paddings before them;
/// the input's and the output's `[batch, height, width, channels]`.
type BlockOp<'o, 'a> = (In<'a>, &'o mut Out<'a>, [[usize; 2]; 2], [[usize; 4]; 2]);

/// Which of the two block ops [`block_op`] reads, and its errors.
struct BlockKind {
    /// Whether the input holds the blocks as batches (`BATCH_TO_SPACE_ND`), or the output
    /// does (`SPACE_TO_BATCH_ND`).
    batches_in: bool,
    ranks_differ: &'static str,
    no_fit: &'static str,
}

const BATCH_TO_SPACE: BlockKind = BlockKind {
    batches_in: true,
    ranks_differ: "BATCH_TO_SPACE_ND's input and output ranks differ",
    no_fit: "BATCH_TO_SPACE_ND's output batch or channels do not fit the block shape",
};

const SPACE_TO_BATCH: BlockKind = BlockKind {
    batches_in: false,
    ranks_differ: "SPACE_TO_BATCH_ND's input and output ranks differ",
    no_fit: "SPACE_TO_BATCH_ND's output batch or channels do not fit the block shape",
};

/// The [`BlockOp`] of `op`, its ranks, channels and batches checked against the block.
fn block_op<'o, 'a>(
    op: &'o mut OpView<'_, 'a>,
    kind: BlockKind,
) -> Result<BlockOp<'o, 'a>, KernelError> {
    let x = input(op, 0, "input 0")?;
    let rank = x.shape.len();
    let ([bh, bw], before) = block_and_before(op, rank)?;
    let dims = nhwc(x.shape);
    let out = output(op)?;
    if out.shape.len() != rank {
        return Err(KernelError::Shape {
            what: kind.ranks_differ,
        });
    }
    let out_dims = nhwc(out.shape);
    let (blocks, batch) = if kind.batches_in {
        (dims[0], out_dims[0])
    } else {
        (out_dims[0], dims[0])
    };
    // Checked: a block of 2^31 by 2^31 must be refused, not wrap.
    let whole = batch.checked_mul(bh).and_then(|b| b.checked_mul(bw));
    if out_dims[3] != dims[3] || whole != Some(blocks) {
        return Err(KernelError::Shape { what: kind.no_fit });
    }
    Ok((x, out, [[bh, bw], before], [dims, out_dims]))
}

/// `BATCH_TO_SPACE_ND` (float32 or int8, 3 or 4 dimensions): input batch `(s, b)` (the
/// spatial offset `s` within the block, `b` the output batch) goes to the output pixels
/// `(y · bh + s / bw - crop_top, x · bw + s mod bw - crop_left)`.
pub(crate) fn batch_to_space_nd(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (x, out, [[bh, bw], [ct, cl]], [[_, h, w, c], [on, oh, ow, _]]) =
        block_op(&mut op, BATCH_TO_SPACE)?;
    remap_nhwc(x.data, &mut out.data, [oh, ow, c], |[b, yh, xw, d]| {
        let (ty, tx) = (yh + ct, xw + cl);
        let (iy, ix) = (ty / bh, tx / bw);
        let batch = ((ty % bh) * bw + tx % bw) * on + b;
        if iy >= h || ix >= w {
            return Err(KernelError::Shape {
                what: "BATCH_TO_SPACE_ND's output reaches past its input's blocks",
            });
        }
        Ok(Some(((batch * h + iy) * w + ix) * c + d))
    })
}

/// `SPACE_TO_BATCH_ND` (float32 or int8, 3 or 4 dimensions): output batch `(s, b)` holds
/// input batch `b`'s pixels `(y · bh + s / bw - pad_top, x · bw + s mod bw - pad_left)`,
/// zero bytes outside the input. (TFLM fills with an offset field its kernel never sets;
/// the host build that wrote the goldens gives zero bytes, 0 for int8 whatever the zero
/// point.)
pub(crate) fn space_to_batch_nd(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    let (x, out, [[bh, bw], [pt, pl]], [[n, h, w, c], [_, oh, ow, oc]]) =
        block_op(&mut op, SPACE_TO_BATCH)?;
    remap_nhwc(x.data, &mut out.data, [oh, ow, oc], |[ob, yh, xw, d]| {
        let (b, s) = (ob % n, ob / n);
        let (sy, sx) = (yh * bh + s / bw, xw * bw + s % bw);
        if sy < pt || sy - pt >= h || sx < pl || sx - pl >= w {
            return Ok(None);
        }
        Ok(Some(((b * h + sy - pt) * w + sx - pl) * c + d))
    })
}

/// `MIRROR_PAD` (float32 or int8; amounts in input 1, `[rank, 2]` int32 or int64): each
/// output index maps to the input index mirrored about the edge, the edge element left out
/// (`Reflect`) or repeated (`Symmetric`), as TFLM's `GetInputDimension`.
pub(crate) fn mirror_pad(mut op: OpView<'_, '_>, o: &MirrorPadOptions) -> Result<(), KernelError> {
    const BAD: KernelError = KernelError::Type {
        tensor: "input 1 (MIRROR_PAD's paddings are int32 or int64)",
    };
    let (x, dims) = input_dims(&op, "MIRROR_PAD's input has more than 6 dimensions")?;
    let rank = x.shape.len();
    let mut before = [0i64; RANK];
    let mut count = 0;
    for (k, v) in ints(input(&op, 1, "input 1")?, true, &BAD)?.enumerate() {
        let d = RANK - rank + k / 2;
        // An amount outside [0, dim] mirrors nothing (and its arithmetic could overflow).
        if dims.get(d).is_some_and(|&n| !(0..=n as i64).contains(&v)) {
            return Err(KernelError::Value {
                what: "a MIRROR_PAD amount below 0 or above its dimension",
            });
        }
        if let (0, Some(b)) = (k % 2, before.get_mut(d)) {
            *b = v;
        }
        count += 1;
    }
    let out = output(&mut op)?;
    let out_dims = padded(out.shape).ok_or(KernelError::Shape {
        what: "MIRROR_PAD's output has more than 6 dimensions",
    })?;
    if count != 2 * rank || out.shape.len() != rank {
        return Err(KernelError::Shape {
            what: "MIRROR_PAD's paddings are not two per input dimension",
        });
    }
    let offset = i64::from(o.mode == MirrorPadMode::Reflect);
    let in_strides = strides(&dims);
    let types = (FLOAT_INT8, FLOAT_INT8_ERROR);
    remap_indexed(x.data, &mut out.data, types, out_dims, |index| {
        let mut flat = 0usize;
        for d in 0..RANK {
            let k = mirrored(index[d] as i64, before[d], dims[d] as i64, offset).ok_or(
                KernelError::Value {
                    what: "a MIRROR_PAD amount larger than its dimension allows",
                },
            )?;
            flat += k * in_strides[d];
        }
        Ok(Some(flat))
    })
}

/// The input index of output index `p` along a dimension of `size` padded by `before`,
/// mirrored with `offset` 1 (reflect) or 0 (symmetric); `None` outside the input.
fn mirrored(p: i64, before: i64, size: i64, offset: i64) -> Option<usize> {
    let k = if p < before {
        let original = before + offset - 1;
        original - p.min(original - offset)
    } else if p - before >= size {
        let past = p - before - size;
        let original = size - (1 + offset);
        original - past.min(original)
    } else {
        p - before
    };
    usize::try_from(k).ok().filter(|&k| (k as i64) < size)
}

/// `REVERSE_V2` along the axes of input 1 (int32, negative counts from the end; TFLM
/// reverses only contiguous axes and refuses others, as does this kernel). float32, int32,
/// int16, int8, uint8, int64 and bool.
pub(crate) fn reverse_v2(mut op: OpView<'_, '_>) -> Result<(), KernelError> {
    const BAD: KernelError = KernelError::Type {
        tensor: "input 1 (REVERSE_V2's axes are int32)",
    };
    let (x, dims) = input_dims(&op, "REVERSE_V2's input has more than 6 dimensions")?;
    let rank = x.shape.len();
    let mut flip = [false; RANK];
    let mut axes = 0;
    let (mut lo, mut hi) = (usize::MAX, 0);
    for a in ints(input(&op, 1, "input 1 (axes)")?, false, &BAD)? {
        let a = if a < 0 { a + rank as i64 } else { a };
        let a = usize::try_from(a)
            .ok()
            .filter(|&a| a < rank)
            .ok_or(KernelError::Value {
                what: "a REVERSE_V2 axis outside the input's dimensions",
            })?;
        let slot = &mut flip[RANK - rank + a];
        if *slot {
            return Err(KernelError::Value {
                what: "REVERSE_V2 axes that repeat (TFLM reverses contiguous axes only)",
            });
        }
        *slot = true;
        axes += 1;
        (lo, hi) = (lo.min(a), hi.max(a));
    }
    if axes > 0 && hi - lo + 1 != axes {
        return Err(KernelError::Value {
            what: "REVERSE_V2 axes that are not contiguous (TFLM reverses contiguous axes only)",
        });
    }
    let out = output(&mut op)?;
    if out.shape != x.shape {
        return Err(KernelError::Shape {
            what: "REVERSE_V2's output does not have the input's shape",
        });
    }
    let s = strides(&dims);
    const TYPES: &[Ty] = &[Ty::F32, Ty::I32, Ty::I16, Ty::I8, Ty::U8, Ty::I64];
    let error = KernelError::Type {
        tensor: "input 0 or output 0 (REVERSE_V2 runs float32, int32, int16, int8, uint8, int64 or bool, one type throughout)",
    };
    remap_indexed(x.data, &mut out.data, (TYPES, error), dims, |index| {
        let flat = (0..RANK)
            .map(|d| {
                let k = if flip[d] {
                    dims[d] - 1 - index[d]
                } else {
                    index[d]
                };
                k * s[d]
            })
            .sum();
        Ok(Some(flat))
    })
}
