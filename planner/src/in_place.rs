//! Below the classic bound (`memory.in_place = true`): PADs folded into the convolutions that
//! consume them, and ops run in place over an input that dies there.
//!
//! Two passes over the graph, both opt-in because the kernel set must agree:
//! - [`fold_pads`] (after import, before scheduling): a PAD or PADV2 that pads only H and W
//!   of an NHWC tensor with the consumer's input zero point, whose output's only reader is a
//!   CONV_2D or DEPTHWISE_CONV_2D (VALID, or SAME with SAME's own amounts added), leaves the
//!   graph: the convolution reads the PAD's input with [`Padding::Explicit`] pads.
//! - [`detect`] (after scheduling and aliases, before lifetimes): an op whose output can be
//!   written over one of its inputs ([`kind_allows`]) records an [`InPlaceOp`]; a depthwise
//!   convolution gets a one-channel temporary as its last scratch tensor.
//!
//! The pair shares one slot while planning ([`crate::lifetimes`]: size the larger, lifetime
//! the union), and the plan lists both tensors at that offset with their own lifetimes, which
//! touch at the op only.

use std::string::{String, ToString};
use std::vec::Vec;

use crate::graph::{
    DType, FoldedPad, Graph, InPlaceOp, Op, OpOptions, Tensor, TensorIndex, TensorKind,
};
use crate::rt::op_kinds::{self, InPlace};
use crate::rt::options::{Dims, Padding};

/// Suffix of the id and name of a depthwise convolution's in-place temporary.
pub const TEMP_SUFFIX: &str = "/in_place_temp";

/// Folds every PAD/PADV2 that qualifies into its consumer (see the module docs); records
/// each in [`Graph::folded_pads`]. The PAD ops leave `graph.ops` (later ops shift).
pub fn fold_pads(graph: &mut Graph) {
    let n = graph.tensors.len();
    let mut readers = vec![0usize; n];
    for op in &graph.ops {
        for t in op.inputs.iter().flatten() {
            readers[t.get()] += 1;
        }
    }
    let mut io = vec![false; n];
    for x in graph.inputs.iter().chain(&graph.outputs) {
        io[x.tensor.get()] = true;
    }
    for &(a, b) in &graph.aliases {
        io[a.get()] = true;
        io[b.get()] = true;
    }
    let mut folded = vec![false; graph.ops.len()];
    #[allow(clippy::needless_range_loop)] // the body borrows `graph.ops` mutably
    for k in 0..graph.ops.len() {
        let Some((x, p, pad)) = pad_of(graph, &graph.ops[k]) else {
            continue;
        };
        if io[p.get()] || readers[p.get()] != 1 || graph.tensor(p).kind != TensorKind::Activation {
            continue;
        }
        let Some(c) = (k + 1..graph.ops.len())
            .find(|&c| graph.ops[c].inputs.iter().flatten().any(|&t| t == p))
        else {
            continue;
        };
        let Some((options, pads)) = folded_options(graph, &graph.ops[c], p, pad) else {
            continue;
        };
        let consumer = &mut graph.ops[c];
        consumer.inputs[0] = Some(x);
        consumer.options = options;
        let consumer_output = consumer.outputs[0];
        folded[k] = true;
        graph.folded_pads.push(FoldedPad {
            opcode: graph.ops[k].opcode.clone(),
            op: k as u32,
            padded: p,
            consumer_output,
            pads,
        });
    }
    if folded.iter().any(|&f| f) {
        let mut k = 0;
        graph.ops.retain(|_| {
            k += 1;
            !folded[k - 1]
        });
    }
}

/// A PAD's `(input, output, [top, bottom, left, right])` when it pads only H and W of an
/// NHWC tensor with the value its consumer's zero point gives, keeping type and
/// quantisation.
fn pad_of(graph: &Graph, op: &Op) -> Option<(TensorIndex, TensorIndex, [i32; 4])> {
    if op.opcode != "PAD" && op.opcode != "PADV2" {
        return None;
    }
    let x = op.inputs.first().copied().flatten()?;
    let paddings = op.inputs.get(1).copied().flatten()?;
    let [p] = op.outputs[..] else { return None };
    let (xt, pt) = (graph.tensor(x), graph.tensor(p));
    if xt.shape.len() != 4
        || pt.shape.len() != 4
        || xt.dtype != pt.dtype
        || xt.quantization != pt.quantization
        || xt.kind == TensorKind::Constant
    {
        return None;
    }
    let amounts = ints(graph.tensor(paddings))?;
    let [n0, n1, t, b, l, r, c0, c1] = amounts[..] else {
        return None;
    };
    if n0 != 0 || n1 != 0 || c0 != 0 || c1 != 0 || [t, b, l, r].iter().any(|&v| v < 0) {
        return None;
    }
    let pads = [t, b, l, r].map(|v| i32::try_from(v).ok());
    let pads = [pads[0]?, pads[1]?, pads[2]?, pads[3]?];
    // The padded shape is the input's plus the amounts.
    let grown = |d: usize, a: i32, b: i32| xt.shape[d].checked_add(a as u64 + b as u64);
    if Some(pt.shape[1]) != grown(1, pads[0], pads[1])
        || Some(pt.shape[2]) != grown(2, pads[2], pads[3])
        || pt.shape[0] != xt.shape[0]
        || pt.shape[3] != xt.shape[3]
    {
        return None;
    }
    // The padding value: PAD writes the output's zero point; PADV2 its constant, which must
    // be that zero point too (the convolution pads with its input's zero point).
    let zp = match &pt.quantization {
        None => 0,
        Some(q) if q.zero_point.len() == 1 => q.zero_point[0],
        Some(_) => return None,
    };
    if op.opcode == "PADV2"
        && let Some(v) = op.inputs.get(2).copied().flatten()
    {
        let vt = graph.tensor(v);
        let data = vt.data.as_deref()?;
        let value = match vt.dtype {
            DType::I8 => i64::from(i8::from_le_bytes([*data.first()?])),
            DType::U8 => i64::from(*data.first()?),
            DType::I16 => i64::from(i16::from_le_bytes(data.get(..2)?.try_into().ok()?)),
            // A float pads with +0.0 only (bytes all zero).
            DType::F32 if data.len() == 4 && data.iter().all(|&b| b == 0) => 0,
            _ => return None,
        };
        if vt.dtype != xt.dtype || value != zp {
            return None;
        }
    }
    Some((x, p, pads))
}

/// The integers of a constant i32/i64 tensor.
fn ints(t: &Tensor) -> Option<Vec<i64>> {
    let data = t.data.as_deref()?;
    match t.dtype {
        DType::I32 => Some(
            data.chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        DType::I64 => Some(
            data.chunks_exact(8)
                .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
        ),
        _ => None,
    }
}

/// The consumer's options with the PAD folded in, and the summed pads; `None` when the
/// consumer is not a convolution reading `p` as its data input only, or when the explicit
/// padding would not give the consumer's output shape.
fn folded_options(
    graph: &Graph,
    op: &Op,
    p: TensorIndex,
    pad: [i32; 4],
) -> Option<(OpOptions, [i32; 4])> {
    if op.inputs.first().copied().flatten() != Some(p)
        || op.inputs.iter().flatten().filter(|&&t| t == p).count() != 1
    {
        return None;
    }
    let filter = graph.tensor(op.inputs.get(1).copied().flatten()?);
    let out = graph.tensor(*op.outputs.first()?);
    let input = graph.tensor(p);
    if filter.shape.len() != 4 || out.shape.len() != 4 {
        return None;
    }
    let (kh, kw) = (filter.shape[1], filter.shape[2]);
    let (padding, stride, dilation) = match &op.options {
        OpOptions::Conv2d(o) => (
            o.padding,
            (o.stride_h, o.stride_w),
            (o.dilation_h, o.dilation_w),
        ),
        OpOptions::DepthwiseConv2d(o) => (
            o.padding,
            (o.stride_h, o.stride_w),
            (o.dilation_h, o.dilation_w),
        ),
        _ => return None,
    };
    let mut pads = pad;
    for (axis, k, s, d, (before, after)) in [
        (1, kh, stride.0, dilation.0, (0, 1)),
        (2, kw, stride.1, dilation.1, (2, 3)),
    ] {
        let (s, d) = (u64::try_from(s).ok()?, u64::try_from(d).ok()?);
        if s == 0 || d == 0 || k == 0 {
            return None;
        }
        let extent = (k - 1).checked_mul(d)?.checked_add(1)?;
        let padded = input.shape[axis];
        match padding {
            Padding::Valid => {}
            Padding::Same => {
                let out = padded.div_ceil(s);
                let total = (out.checked_sub(1)?.checked_mul(s)?.checked_add(extent)?)
                    .saturating_sub(padded);
                pads[before] = pads[before].checked_add(i32::try_from(total / 2).ok()?)?;
                pads[after] = pads[after].checked_add(i32::try_from(total - total / 2).ok()?)?;
            }
            Padding::Explicit => return None,
        }
        // The unpadded input plus the explicit pads must give the consumer's output size.
        let unpadded = padded.checked_sub(pad[before] as u64 + pad[after] as u64)?;
        let total = unpadded
            .checked_add(pads[before] as u64)?
            .checked_add(pads[after] as u64)?;
        if total < extent || (total - extent) / s + 1 != out.shape[axis] {
            return None;
        }
    }
    let dims = Dims::new(&pads)?;
    let options = match op.options {
        OpOptions::Conv2d(mut o) => {
            o.padding = Padding::Explicit;
            o.pads = dims;
            OpOptions::Conv2d(o)
        }
        OpOptions::DepthwiseConv2d(mut o) => {
            o.padding = Padding::Explicit;
            o.pads = dims;
            OpOptions::DepthwiseConv2d(o)
        }
        _ => return None,
    };
    Some((options, pads))
}

/// Whether `op` may run with output `output` written over input `input` (positions in the
/// op's lists): `Ok` when it may, else the rule it breaks. The
/// kind rules only; that the input dies at the op is the caller's (and the verifier's) check.
pub fn kind_allows(graph: &Graph, op: &Op, input: usize, output: usize) -> Result<(), String> {
    let Some(Some(i)) = op.inputs.get(input).copied() else {
        return Err(format!("the op has no input {input}"));
    };
    let Some(&o) = op.outputs.get(output) else {
        return Err(format!("the op has no output {output}"));
    };
    let (it, ot) = (graph.tensor(i), graph.tensor(o));
    let kind = op.opcode.as_str();
    if op.options.in_place_codegen().is_none() {
        return Err(format!(
            "{kind} ops (with these options) do not run in place"
        ));
    }
    if op.inputs.iter().flatten().filter(|&&t| t == i).count() != 1 {
        return Err(format!("the op reads `{}` twice", it.id));
    }
    if it.kind != TensorKind::Activation || ot.kind != TensorKind::Activation {
        return Err("only activations run in place".to_string());
    }
    if ot.dtype.align() > it.dtype.align()
        || ot.align_hint.unwrap_or(1) > it.align_hint.unwrap_or(1)
    {
        return Err(format!(
            "`{}` needs a larger alignment than `{}`",
            ot.id, it.id
        ));
    }
    match op_kinds::in_place(kind) {
        InPlace::Unary => {
            if input != 0 || output != 0 {
                return Err(format!("{kind} runs in place over its first input only"));
            }
            if it.elements() != ot.elements() || ot.size > it.size {
                return Err(format!(
                    "`{}` ({} bytes) is larger than `{}` ({} bytes) or has another element count",
                    ot.id, ot.size, it.id, it.size
                ));
            }
            // In place, a kernel tells the input's type from its size only: one of the
            // output's size is read as the output's type (a uint8 QUANTIZE input as int8).
            if it.dtype != ot.dtype && it.dtype.bits() == ot.dtype.bits() {
                return Err(format!(
                    "`{}` ({:?}) has `{}`'s element size but another type ({:?})",
                    it.id, it.dtype, ot.id, ot.dtype
                ));
            }
            Ok(())
        }
        InPlace::Binary => {
            if input > 1 || output != 0 {
                return Err(format!("{kind} runs in place over one of its two operands"));
            }
            if it.shape != ot.shape || it.dtype.bits() != ot.dtype.bits() {
                return Err(format!(
                    "operand `{}` {:?} is broadcast or of another element size than output `{}` {:?}",
                    it.id, it.shape, ot.id, ot.shape
                ));
            }
            Ok(())
        }
        InPlace::Depthwise => {
            if input != 0 || output != 0 {
                return Err("DEPTHWISE_CONV_2D runs in place over its data input only".to_string());
            }
            let (is, os) = (&it.shape, &ot.shape);
            if is.len() != 4
                || os.len() != 4
                || is[0] != 1
                || os[0] != 1
                || is[3] != os[3]
                || os[1].saturating_mul(os[2]) > is[1].saturating_mul(is[2])
                || it.dtype.bits() != Some(8)
                || ot.dtype.bits() != Some(8)
            {
                return Err(format!(
                    "DEPTHWISE_CONV_2D runs in place with one batch, depth multiplier 1, no more output pixels than input pixels and 8-bit elements (its in-place kernel is int8); input {is:?} {}, output {os:?} {}",
                    it.dtype.name(),
                    ot.dtype.name()
                ));
            }
            Ok(())
        }
        InPlace::Never => Err(format!("{kind} ops do not run in place")),
    }
}

/// Finds the ops that can run in place in `graph` (in its current op order), of the kinds in
/// `only` (upper case; empty: every kind), and records them in [`Graph::in_place`]; adds
/// each depthwise convolution's temporary to the graph and as the op's last scratch tensor.
pub fn detect(graph: &mut Graph, only: &[String]) {
    let n = graph.tensors.len();
    let mut last_use = vec![usize::MAX; n];
    let mut first_use = vec![usize::MAX; n];
    for (k, op) in graph.ops.iter().enumerate() {
        for t in op.tensors() {
            let t = t.get();
            last_use[t] = k;
            first_use[t] = first_use[t].min(k);
        }
    }
    let mut kept = vec![false; n];
    for x in &graph.outputs {
        kept[x.tensor.get()] = true;
    }
    let mut is_input = vec![false; n];
    for x in &graph.inputs {
        is_input[x.tensor.get()] = true;
    }
    // Tensors in an alias group keep their alias (one slot for their whole life).
    let mut aliased = vec![false; n];
    for &(a, b) in &graph.aliases {
        aliased[a.get()] = true;
        aliased[b.get()] = true;
    }
    let mut taken = vec![false; n];
    let mut found = Vec::new();
    for (k, op) in graph.ops.iter().enumerate() {
        let [o] = op.outputs[..] else { continue };
        let oi = o.get();
        if aliased[oi] || is_input[oi] || first_use[oi] != k {
            continue;
        }
        if !only.is_empty() && !only.contains(&op.opcode) {
            continue;
        }
        let positions: &[usize] = if op_kinds::in_place(&op.opcode) == InPlace::Binary {
            &[0, 1]
        } else {
            &[0]
        };
        let pick = positions.iter().copied().find(|&p| {
            let Some(Some(i)) = op.inputs.get(p).copied() else {
                return false;
            };
            let ii = i.get();
            ii != oi
                && !aliased[ii]
                && !kept[ii]
                && !taken[ii]
                && last_use[ii] == k
                && kind_allows(graph, op, p, 0).is_ok()
                && crate::patch::pair_allowed(graph, k, i, o)
        });
        if let Some(p) = pick {
            let i = op.inputs[p].unwrap_or(o);
            taken[i.get()] = true;
            found.push((k, i, o));
        }
    }
    let keep = worth_it(graph, &found);
    for ((k, input, output), keep) in found.into_iter().zip(keep) {
        if !keep {
            continue;
        }
        let temp = (op_kinds::in_place(&graph.ops[k].opcode) == InPlace::Depthwise)
            .then(|| add_temp(graph, k, input));
        graph.in_place.push(InPlaceOp {
            input,
            output,
            temp: temp.flatten(),
            rows: false,
        });
    }
}

/// Bytes a slot of `size` takes in the estimate (slots align to 16 bytes).
fn slot_bytes(size: u64) -> i64 {
    i64::try_from(size.div_ceil(16).saturating_mul(16)).unwrap_or(i64::MAX / 4)
}

/// Which candidates (`(op, input, output)`) to run in place. While packing, a pair is one
/// slot of the larger size over both lifetimes, so an output smaller than its input (a
/// QUANTIZE from f32, a stride-2 depthwise convolution) keeps the input's size while it
/// lives: that can raise the bytes live at a later op above the peak. Estimated on the live
/// bytes per op (each slot rounded to 16 bytes): first every pair that raises no op's bytes,
/// then the others, largest saving first, each only if no op goes above the current peak.
fn worth_it(graph: &Graph, found: &[(usize, TensorIndex, TensorIndex)]) -> Vec<bool> {
    let mut keep = vec![false; found.len()];
    let Ok(lt) = crate::lifetimes::compute(graph) else {
        return keep;
    };
    let ops = graph.ops.len().max(1);
    let n = graph.tensors.len();
    // Slot groups (alias groups, joined as pairs are taken): size and live range by root.
    let mut parent: Vec<usize> = (0..n).map(|i| lt.slot_of[i].get()).collect();
    let mut size = vec![0i64; n];
    let mut range: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut live = vec![0i64; ops + 1];
    for (i, t) in graph.tensors.iter().enumerate() {
        let r = parent[i];
        if t.kind == TensorKind::Activation && lt.live[i].is_some() {
            size[r] = size[r].max(slot_bytes(t.size));
        }
    }
    for r in 0..n {
        if parent[r] == r
            && size[r] > 0
            && let Some((a, b)) = lt.live[r]
        {
            let (a, b) = (a as usize, (b as usize).min(ops - 1));
            range[r] = Some((a, b));
            for x in &mut live[a..=b] {
                *x += size[r];
            }
        }
    }
    live.truncate(ops);
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    // The change to each op's live bytes if candidate `c` is taken, over its ops.
    let delta = |p: &mut [usize], size: &[i64], range: &[Option<(usize, usize)>], c: usize| {
        let (k, i, o) = found[c];
        let (gi, go) = (find(p, i.get()), find(p, o.get()));
        let (Some(ri), Some(ro)) = (range[gi], range[go]) else {
            return None;
        };
        if gi == go {
            return None;
        }
        let temp = if op_kinds::in_place(&graph.ops[k].opcode) == InPlace::Depthwise {
            let it = graph.tensor(i);
            let hw = it.shape.get(1).copied().unwrap_or(0) * it.shape.get(2).copied().unwrap_or(0);
            slot_bytes(it.dtype.bytes_for(hw).unwrap_or(0))
        } else {
            0
        };
        // A smaller output that lives on keeps its own slot from the next op on
        // (`Lifetimes::split`): the pair only saves the output's bytes at the op.
        if slot_bytes(graph.tensor(o).size) < slot_bytes(graph.tensor(i).size) && ro.1 > k {
            let d = vec![temp - size[go]];
            return Some((k, d, go, go, size[go], (k + 1, ro.1)));
        }
        let (a, b) = (ri.0.min(ro.0), ri.1.max(ro.1));
        let merged = size[gi].max(size[go]);
        let d: Vec<i64> = (a..=b)
            .map(|t| {
                let inside = |r: (usize, usize)| r.0 <= t && t <= r.1;
                let mut v = merged;
                if inside(ri) {
                    v -= size[gi];
                }
                if inside(ro) {
                    v -= size[go];
                }
                if t == k {
                    v += temp;
                }
                v
            })
            .collect();
        Some((a, d, gi, go, merged, (a, b)))
    };
    let mut peak = live.iter().copied().max().unwrap_or(0);
    // Candidates by pass: pure wins in op order, then the rest by saving.
    let mut order: Vec<(bool, i64, usize)> = Vec::with_capacity(found.len());
    for c in 0..found.len() {
        if let Some((_, d, ..)) = delta(&mut parent.clone(), &size, &range, c) {
            let worst = d.iter().copied().max().unwrap_or(0);
            let saving = -d.iter().copied().min().unwrap_or(0);
            order.push((worst > 0, -saving, c));
        }
    }
    order.sort_unstable();
    for (_, _, c) in order {
        let Some((a, d, gi, go, merged, r)) = delta(&mut parent, &size, &range, c) else {
            continue;
        };
        let high = d
            .iter()
            .enumerate()
            .map(|(j, v)| live[a + j] + v)
            .max()
            .unwrap_or(0);
        if high > peak || d.iter().all(|&v| v >= 0) {
            continue;
        }
        for (j, v) in d.iter().enumerate() {
            live[a + j] += v;
        }
        let (lo, hi) = (gi.min(go), gi.max(go));
        parent[hi] = lo;
        size[lo] = merged;
        range[lo] = Some(r);
        keep[c] = true;
        peak = live.iter().copied().max().unwrap_or(0);
    }
    keep
}

/// Adds op `k`'s temporary: one channel of `input` (H x W elements of its type).
fn add_temp(graph: &mut Graph, k: usize, input: TensorIndex) -> Option<TensorIndex> {
    let it = graph.tensor(input);
    let shape = vec![*it.shape.get(1)?, *it.shape.get(2)?];
    let elements = shape[0].checked_mul(shape[1])?;
    let size = it.dtype.bytes_for(elements)?;
    let dtype = it.dtype;
    let out = graph.tensor(*graph.ops[k].outputs.first()?);
    let (mut id, mut name) = (
        format!("{}{TEMP_SUFFIX}", out.id),
        format!("{}{TEMP_SUFFIX}", out.name),
    );
    let mut extra = 1;
    while graph.find(&id).is_some() {
        id = format!("{}{TEMP_SUFFIX}_{extra}", out.id);
        name = format!("{}{TEMP_SUFFIX}_{extra}", out.name);
        extra += 1;
    }
    let index = TensorIndex(u32::try_from(graph.tensors.len()).ok()?);
    graph.tensors.push(Tensor {
        id,
        name,
        dtype,
        shape,
        size,
        kind: TensorKind::Activation,
        quantization: None,
        align_hint: None,
        data: None,
    });
    graph.ops[k].scratch.push(index);
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{IoName, Quantization};
    use crate::rt::options::{DepthwiseConv2dOptions, NoOptions, PadOptions};

    fn t(id: &str, dtype: DType, shape: &[u64], data: Option<Vec<u8>>) -> Tensor {
        Tensor {
            quantization: (dtype == DType::I8).then(|| Quantization {
                scale: vec![0.5],
                zero_point: vec![-3],
                axis: 0,
            }),
            ..Tensor::fixture(id, dtype, shape, data)
        }
    }

    /// A graph of one `opcode` op reading `inputs` and writing the last of `tensors`.
    fn one_op(
        opcode: &str,
        tensors: Vec<Tensor>,
        inputs: Vec<Option<TensorIndex>>,
        options: OpOptions,
    ) -> Graph {
        let out = TensorIndex(u32::try_from(tensors.len() - 1).unwrap());
        Graph {
            name: "g".into(),
            tensors,
            ops: vec![Op {
                opcode: opcode.into(),
                inputs,
                outputs: vec![out],
                scratch: vec![],
                options,
            }],
            ..Graph::default()
        }
    }

    /// An op runs in place only on element types its in-place kernel reads: a unary op
    /// whose input has the output's element size but another type (a uint8 to int8
    /// QUANTIZE) does not, since an in-place kernel tells the input's type from its size
    /// alone, while the same op from int16 to int8 may; a depthwise convolution runs in
    /// place on int8 only (its in-place kernel is int8; a 16x8 one runs out of place).
    #[test]
    fn an_op_in_place_needs_element_types_its_kernel_reads() {
        let i = |x: u32| Some(TensorIndex(x));
        let quantize = |from| {
            let x = t("x", from, &[1, 8], None);
            let y = t("y", DType::I8, &[1, 8], None);
            let options = OpOptions::Quantize(NoOptions {});
            one_op("QUANTIZE", vec![x, y], vec![i(0)], options)
        };
        let depthwise = |dtype| {
            let tensors = vec![
                t("x", dtype, &[1, 4, 4, 2], None),
                t("w", DType::I8, &[1, 3, 3, 2], Some(vec![1; 18])),
                t("y", dtype, &[1, 4, 4, 2], None),
            ];
            let options = OpOptions::DepthwiseConv2d(DepthwiseConv2dOptions {
                depth_multiplier: 1,
                stride_w: 1,
                stride_h: 1,
                dilation_w: 1,
                dilation_h: 1,
                ..Default::default()
            });
            one_op("DEPTHWISE_CONV_2D", tensors, vec![i(0), i(1), None], options)
        };
        for (g, allowed) in [
            (quantize(DType::U8), false),
            (quantize(DType::I16), true),
            (depthwise(DType::I8), true),
            (depthwise(DType::I16), false),
        ] {
            let verdict = kind_allows(&g, &g.ops[0], 0, 0);
            let what = (&g.ops[0].opcode, g.tensors[0].dtype);
            assert_eq!(verdict.is_ok(), allowed, "{what:?}: {verdict:?}");
        }
    }

    fn paddings(v: [i32; 8]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// x [1,4,4,2] -PAD(pads)-> p -DEPTHWISE_CONV_2D 3x3 (padding)-> y [1,h,w,2].
    fn graph(pads: [i32; 8], padding: Padding, out_hw: u64) -> Graph {
        let p_shape = [
            1,
            4 + (pads[2] + pads[3]) as u64,
            4 + (pads[4] + pads[5]) as u64,
            2 + (pads[6] + pads[7]) as u64,
        ];
        let dw = DepthwiseConv2dOptions {
            padding,
            stride_w: 1,
            stride_h: 1,
            depth_multiplier: 1,
            dilation_w: 1,
            dilation_h: 1,
            ..Default::default()
        };
        let i = |x: u32| Some(TensorIndex(x));
        Graph {
            name: "g".into(),
            tensors: vec![
                t("x", DType::I8, &[1, 4, 4, 2], None),
                t("pads", DType::I32, &[4, 2], Some(paddings(pads))),
                t("p", DType::I8, &p_shape, None),
                t("w", DType::I8, &[1, 3, 3, 2], Some(vec![1; 18])),
                t("y", DType::I8, &[1, out_hw, out_hw, 2], None),
            ],
            ops: vec![
                Op {
                    opcode: "PAD".into(),
                    inputs: vec![i(0), i(1)],
                    outputs: vec![TensorIndex(2)],
                    scratch: vec![],
                    options: OpOptions::Pad(PadOptions::default()),
                },
                Op {
                    opcode: "DEPTHWISE_CONV_2D".into(),
                    inputs: vec![i(2), i(3), None],
                    outputs: vec![TensorIndex(4)],
                    scratch: vec![],
                    options: OpOptions::DepthwiseConv2d(dw),
                },
            ],
            inputs: vec![IoName {
                name: "x".into(),
                tensor: TensorIndex(0),
            }],
            outputs: vec![IoName {
                name: "y".into(),
                tensor: TensorIndex(4),
            }],
            ..Graph::default()
        }
    }

    fn pads_of(g: &Graph) -> Option<Vec<i32>> {
        match &g.ops.last()?.options {
            OpOptions::DepthwiseConv2d(o) if o.padding == Padding::Explicit => {
                Some(o.pads.as_slice().to_vec())
            }
            _ => None,
        }
    }

    #[test]
    fn valid_convolution_takes_the_pads() {
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Valid, 4);
        fold_pads(&mut g);
        assert_eq!(g.ops.len(), 1);
        assert_eq!(g.ops[0].inputs[0], Some(TensorIndex(0)), "reads x");
        assert_eq!(pads_of(&g), Some(vec![1, 1, 1, 1]));
        assert_eq!(g.folded_pads.len(), 1);
        assert_eq!(g.folded_pads[0].padded, TensorIndex(2));
        g.validate().unwrap();
    }

    #[test]
    fn same_convolution_adds_its_own_padding() {
        // Padded 6x6 under SAME 3x3 stride 1: one more on each side, output 6x6.
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Same, 6);
        fold_pads(&mut g);
        assert_eq!(pads_of(&g), Some(vec![2, 2, 2, 2]));
        // Asymmetric under VALID: top 2, bottom 0, left 0, right 1 (6x5 padded, 4x3 out).
        let mut g = graph([0, 0, 2, 0, 0, 1, 0, 0], Padding::Valid, 4);
        g.tensors[4].shape = vec![1, 4, 3, 2];
        g.tensors[4].size = 24;
        fold_pads(&mut g);
        assert_eq!(pads_of(&g), Some(vec![2, 0, 0, 1]));
    }

    #[test]
    fn pads_that_do_not_qualify_stay() {
        // Channels padded.
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 2], Padding::Valid, 4);
        g.tensors[3].shape = vec![1, 3, 3, 4];
        fold_pads(&mut g);
        assert_eq!(g.ops.len(), 2);
        // The padded tensor read twice (also a model output).
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Valid, 4);
        g.outputs.push(IoName {
            name: "p".into(),
            tensor: TensorIndex(2),
        });
        fold_pads(&mut g);
        assert_eq!(g.ops.len(), 2);
        // PADV2 with a constant other than the zero point (-3).
        for (value, folds) in [(-3i8, true), (0, false)] {
            let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Valid, 4);
            g.tensors
                .push(t("v", DType::I8, &[], Some(vec![value.to_le_bytes()[0]])));
            g.ops[0].opcode = "PADV2".into();
            g.ops[0].options = OpOptions::None;
            g.ops[0].inputs.push(Some(TensorIndex(5)));
            fold_pads(&mut g);
            assert_eq!(g.ops.len() == 1, folds, "PADV2 value {value}");
        }
        // An output size the explicit pads would not give.
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Valid, 4);
        g.tensors[4].shape = vec![1, 5, 5, 2];
        g.tensors[4].size = 50;
        fold_pads(&mut g);
        assert_eq!(g.ops.len(), 2);
    }

    #[test]
    fn depthwise_runs_in_place_with_a_one_channel_temporary() {
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Valid, 4);
        // x is a model input: it may be taken over.
        fold_pads(&mut g);
        detect(&mut g, &[]);
        assert_eq!(g.in_place.len(), 1);
        let p = g.in_place[0];
        assert_eq!((p.input, p.output), (TensorIndex(0), TensorIndex(4)));
        let temp = g.tensor(p.temp.unwrap());
        assert_eq!((temp.id.as_str(), temp.size), ("y/in_place_temp", 16));
        assert_eq!(g.ops[0].scratch, vec![p.temp.unwrap()]);
        // Not when x is also read later.
        let mut g = graph([0, 0, 1, 1, 1, 1, 0, 0], Padding::Valid, 4);
        g.tensors.push(t("z", DType::I8, &[1, 4, 4, 2], None));
        g.ops.push(Op {
            opcode: "RELU".into(),
            inputs: vec![Some(TensorIndex(0))],
            outputs: vec![TensorIndex(5)],
            scratch: vec![],
            options: OpOptions::Relu(NoOptions {}),
        });
        fold_pads(&mut g);
        detect(&mut g, &[]);
        assert!(
            g.in_place
                .iter()
                .all(|p| p.input != TensorIndex(0) || p.output == TensorIndex(5))
        );
    }
}
