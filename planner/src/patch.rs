//! Patch-based first stage (MCUNetV2): run the ops up to a *split op* once per patch of a
//! grid over the split op's output, so the stage's large activations never exist whole.
//!
//! Three steps, each a function:
//! 1. [`Stage::of`]: the stage of a split op, the ancestors of the op, each spatially local
//!    (convolutions, depthwise convolutions, pooling, `PAD`, elementwise and unary ops,
//!    channel concatenation), described as [`Step`]s: per traced input, one [`Window`] per
//!    axis. A global op (`MEAN`, `FULLY_CONNECTED`, `RESHAPE`, ...) is refused, naming it.
//! 2. [`Stage::trace`]: each stage tensor's region per patch, traced back from the split
//!    tensor's tiles through every window (kernel, stride, dilation, padding with TFLite's
//!    SAME rule: pad before = total / 2, rounded down), the bounding box of what the op's
//!    consumers read, clipped at the tensor's border. The rows of a region depend only on
//!    the patch's grid row and its columns only on its grid column, so each axis is traced
//!    once per grid size.
//! 3. [`fixed`] (the manifest's split and grid) or [`candidates`] (for `patches = "auto"`:
//!    ranked by peak within the MAC budget), then [`apply`]: the graph as planned: stage ops
//!    first, stage tensors sized to their largest region, [`Graph::patches`] set so that
//!    lifetimes and the verifier pin the split tensor (and a resident input) for the stage.

use std::collections::{BTreeMap, BTreeSet};
use std::string::{String, ToString};
use std::vec::Vec;

use crate::graph::{Graph, TensorIndex, TensorKind};
use crate::planfile::patch::{PatchInput, PatchPlan, PatchTensor};
use crate::rt::options::{OpOptions, Padding};

/// How one output axis reads one input axis: output index `y` reads input indices
/// `y * stride - before + i * dilation` for `i` in `0..kernel`, those inside the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Kernel extent (taps), at least 1.
    pub kernel: u64,
    /// Stride, at least 1.
    pub stride: u64,
    /// Dilation, at least 1.
    pub dilation: u64,
    /// Padding before the first input index.
    pub before: i64,
}

impl Window {
    /// The identity: output `y` reads input `y` (elementwise and unary ops).
    pub const SAME: Window = Window {
        kernel: 1,
        stride: 1,
        dilation: 1,
        before: 0,
    };

    /// The first and last input index (inclusive) that outputs `lo..=hi` read inside
    /// `0..len`; `None` when they read none (all padding).
    pub fn reads(&self, lo: u64, hi: u64, len: u64) -> Option<(u64, u64)> {
        if hi < lo || len == 0 {
            return None;
        }
        let (s, d, b) = (
            self.stride as i128,
            self.dilation as i128,
            self.before as i128,
        );
        let (lo, hi, n) = (lo as i128, hi as i128, len as i128);
        let mut first: Option<i128> = None;
        let mut last: Option<i128> = None;
        for i in 0..self.kernel as i128 {
            let tap = i * d - b;
            // Smallest output y in lo..=hi with y * s + tap >= 0.
            let y = lo.max(div_ceil(-tap, s));
            if y <= hi {
                let v = y * s + tap;
                if v < n {
                    first = Some(first.map_or(v, |f| f.min(v)));
                }
            }
            // Largest output y in lo..=hi with y * s + tap <= n - 1.
            let y = hi.min(div_floor(n - 1 - tap, s));
            if y >= lo {
                let v = y * s + tap;
                if v >= 0 {
                    last = Some(last.map_or(v, |l| l.max(v)));
                }
            }
        }
        match (first, last) {
            (Some(f), Some(l)) if f <= l => Some((f as u64, l as u64)),
            _ => None,
        }
    }
}

fn div_floor(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

/// One op of a stage: its output, the inputs whose regions it reads with their windows
/// (rows, columns), and its multiply-accumulates per output pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The op's index in the graph.
    pub op: usize,
    /// Its output tensor.
    pub output: TensorIndex,
    /// Each activation input read by region, with its `[rows, columns]` windows.
    pub inputs: Vec<(TensorIndex, [Window; 2])>,
    /// Multiply-accumulates per output pixel (all channels).
    pub macs_per_pixel: u64,
}

/// The stage of a split op: its steps in graph order (the split op last), and the height,
/// width and bytes per pixel (all channels) of every tensor they read or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// The split op's index in the graph.
    pub split_op: usize,
    /// The split tensor, the split op's output, kept whole.
    pub split: TensorIndex,
    /// The stage's ops, in graph order.
    pub steps: Vec<Step>,
    /// `[height, width]` of each tensor the steps touch.
    pub dims: BTreeMap<TensorIndex, [u64; 2]>,
    /// Model inputs the stage reads.
    pub inputs: Vec<TensorIndex>,
}

/// Per axis, per tile count: the `(first, len)` interval of each tensor in each tile.
type AxisTrace = BTreeMap<TensorIndex, Vec<(u64, u64)>>;

/// The regions of a stage for one grid: per tensor, the interval of rows per grid row and
/// of columns per grid column (a patch's region is the product of its row's and column's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traced {
    /// `[rows, columns]` of the grid.
    pub grid: [u32; 2],
    /// Per tensor: `(top, height)` per grid row.
    pub rows: AxisTrace,
    /// Per tensor: `(left, width)` per grid column.
    pub cols: AxisTrace,
}

impl Traced {
    /// The regions `[top, left, height, width]` of `t`, patches row by row.
    pub fn regions(&self, t: TensorIndex) -> Vec<[u32; 4]> {
        let (Some(rows), Some(cols)) = (self.rows.get(&t), self.cols.get(&t)) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(rows.len() * cols.len());
        for &(top, h) in rows {
            for &(left, w) in cols {
                out.push([top as u32, left as u32, h as u32, w as u32]);
            }
        }
        out
    }

    /// The largest region's pixels of `t`.
    pub fn largest_pixels(&self, t: TensorIndex) -> u64 {
        let max =
            |v: Option<&Vec<(u64, u64)>>| v.map_or(0, |v| v.iter().map(|p| p.1).max().unwrap_or(0));
        max(self.rows.get(&t)) * max(self.cols.get(&t))
    }

    /// Pixels of `t` over all patches.
    pub fn total_pixels(&self, t: TensorIndex) -> u64 {
        let sum = |v: Option<&Vec<(u64, u64)>>| v.map_or(0, |v| v.iter().map(|p| p.1).sum::<u64>());
        sum(self.rows.get(&t)) * sum(self.cols.get(&t))
    }
}

/// Splits `len` into `n` tiles whose sizes differ by at most one: `(first, len)` each.
pub fn tiles(len: u64, n: u64) -> Vec<(u64, u64)> {
    (0..n)
        .map(|i| {
            let a = i * len / n;
            let b = (i + 1) * len / n;
            (a, b - a)
        })
        .collect()
}

/// Opcodes that read and write the same pixel (elementwise with equal shapes, unary,
/// channel-wise quantisation).
const POINTWISE: &[&str] = &[
    "ADD",
    "SUB",
    "MUL",
    "DIV",
    "MAXIMUM",
    "MINIMUM",
    "SQUARED_DIFFERENCE",
    "QUANTIZE",
    "DEQUANTIZE",
    "RELU",
    "RELU6",
    "RELU_N1_TO_1",
    "RELU_0_TO_1",
    "LEAKY_RELU",
    "PRELU",
    "LOGISTIC",
    "TANH",
    "HARD_SWISH",
    "ABS",
    "NEG",
    "EXP",
    "SQRT",
    "RSQRT",
    "SQUARE",
    "GELU",
    "ELU",
];

impl Stage {
    /// The stage that ends at op `split_op`: the op and its ancestors, in graph order.
    /// Errors name the op that cannot run on patches and what would fix it.
    pub fn of(graph: &Graph, split_op: usize) -> std::result::Result<Stage, String> {
        let model = &graph.name;
        let Some(op) = graph.ops.get(split_op) else {
            return Err(format!(
                "the patch split op {split_op} is past the last op of model `{model}` ({} ops); name an op index below {}",
                graph.ops.len(),
                graph.ops.len()
            ));
        };
        let Some(&split) = op.outputs.first() else {
            return Err(format!(
                "op {split_op} ({}) of model `{model}` has no output to split; pick an op with a 4-D output",
                op.opcode
            ));
        };
        // Producers by tensor, then the ancestors of the split op.
        let mut producer: BTreeMap<TensorIndex, usize> = BTreeMap::new();
        for (k, o) in graph.ops.iter().enumerate() {
            for &t in &o.outputs {
                producer.entry(t).or_insert(k);
            }
        }
        let mut in_stage = BTreeSet::new();
        let mut todo = vec![split_op];
        while let Some(k) = todo.pop() {
            if !in_stage.insert(k) {
                continue;
            }
            for t in graph.ops[k].inputs.iter().flatten() {
                if let Some(&p) = producer.get(t)
                    && p < k
                {
                    todo.push(p);
                }
            }
        }
        let mut dims = BTreeMap::new();
        let mut steps = Vec::new();
        let mut inputs = Vec::new();
        let is_input = |t: TensorIndex| graph.inputs.iter().any(|io| io.tensor == t);
        for &k in &in_stage {
            let step = step_of(graph, k, split_op, &mut dims)?;
            for &(t, _) in &step.inputs {
                if !producer.contains_key(&t) {
                    if !is_input(t) {
                        return Err(format!(
                            "op {k} ({}) of model `{model}` reads tensor `{}`, which no op writes and is not a model input; a patch stage reads only model inputs, constants and stage outputs, pick another split op",
                            graph.ops[k].opcode,
                            graph.tensor(t).name
                        ));
                    }
                    if !inputs.contains(&t) {
                        inputs.push(t);
                    }
                }
            }
            steps.push(step);
        }
        // Stage tensors other than the split tensor are read by stage ops only.
        let outputs: BTreeSet<TensorIndex> = graph.outputs.iter().map(|io| io.tensor).collect();
        for s in &steps {
            if s.output == split {
                continue;
            }
            if outputs.contains(&s.output) {
                return Err(format!(
                    "tensor `{}` (op {}, {}) of model `{model}` is a model output inside the patch stage ending at op {split_op}; split at op {} or later",
                    graph.tensor(s.output).name,
                    s.op,
                    graph.ops[s.op].opcode,
                    s.op
                ));
            }
            if let Some((j, o)) = graph
                .ops
                .iter()
                .enumerate()
                .find(|(j, o)| !in_stage.contains(j) && o.tensors().any(|t| t == s.output))
            {
                return Err(format!(
                    "tensor `{}` of the patch stage ending at op {split_op} of model `{model}` is also read by op {j} ({}) after the stage, which needs it whole; split at op {j}'s producer of it or later, or before op {}",
                    graph.tensor(s.output).name,
                    o.opcode,
                    s.op
                ));
            }
        }
        inputs.sort();
        Ok(Stage {
            split_op,
            split,
            steps,
            dims,
            inputs,
        })
    }

    /// The rows (`axis` 0) or columns (`axis` 1) of every stage tensor for `n` tiles of the
    /// split tensor: `(first, len)` per tile.
    pub fn trace_axis(&self, axis: usize, n: u64) -> AxisTrace {
        let len = self.dims.get(&self.split).map_or(0, |d| d[axis]);
        let mut need: BTreeMap<TensorIndex, Vec<Option<(u64, u64)>>> = BTreeMap::new();
        need.insert(
            self.split,
            tiles(len, n)
                .into_iter()
                .map(|(a, l)| (l > 0).then(|| (a, a + l - 1)))
                .collect(),
        );
        for step in self.steps.iter().rev() {
            let Some(out) = need.get(&step.output).cloned() else {
                continue;
            };
            for &(t, w) in &step.inputs {
                let tlen = self.dims.get(&t).map_or(0, |d| d[axis]);
                let entry = need.entry(t).or_insert_with(|| vec![None; n as usize]);
                for (tile, o) in out.iter().enumerate() {
                    let Some((lo, hi)) = *o else { continue };
                    if let Some((a, b)) = w[axis].reads(lo, hi, tlen) {
                        entry[tile] = Some(match entry[tile] {
                            None => (a, b),
                            Some((x, y)) => (x.min(a), y.max(b)),
                        });
                    }
                }
            }
        }
        need.into_iter()
            .map(|(t, v)| {
                let v = v
                    .into_iter()
                    .map(|r| r.map_or((0, 0), |(a, b)| (a, b - a + 1)))
                    .collect();
                (t, v)
            })
            .collect()
    }

    /// Every stage tensor's region per patch of `grid` (`[rows, columns]`).
    pub fn trace(&self, grid: [u32; 2]) -> Traced {
        Traced {
            grid,
            rows: self.trace_axis(0, grid[0] as u64),
            cols: self.trace_axis(1, grid[1] as u64),
        }
    }

    /// Multiply-accumulates of the stage run once per layer.
    pub fn macs(&self) -> u64 {
        self.steps
            .iter()
            .map(|s| {
                let d = self.dims.get(&s.output).copied().unwrap_or([0, 0]);
                s.macs_per_pixel.saturating_mul(d[0] * d[1])
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Multiply-accumulates of the stage run patch by patch.
    pub fn patch_macs(&self, traced: &Traced) -> u64 {
        self.steps
            .iter()
            .map(|s| {
                s.macs_per_pixel
                    .saturating_mul(traced.total_pixels(s.output))
            })
            .fold(0u64, u64::saturating_add)
    }

    /// The tensors the stage reads or writes, in first-use order (model inputs, then each
    /// op's inputs and output).
    pub fn tensors(&self) -> Vec<TensorIndex> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for s in &self.steps {
            for t in s.inputs.iter().map(|i| i.0).chain([s.output]) {
                if seen.insert(t) {
                    out.push(t);
                }
            }
        }
        out
    }
}

/// `[1, H, W, C]` of a tensor: `(H, W, C)`, or `None` for another shape.
fn hwc(graph: &Graph, t: TensorIndex) -> Option<(u64, u64, u64)> {
    match graph.tensor(t).shape.as_slice() {
        [1, h, w, c] => Some((*h, *w, *c)),
        _ => None,
    }
}

/// TFLite's padding before, for one axis: SAME pads `total / 2` (rounded down) before.
fn pad_before(padding: Padding, explicit: Option<i32>, inp: u64, out: u64, w: Window) -> i64 {
    match padding {
        Padding::Valid => 0,
        Padding::Explicit => explicit.unwrap_or(0) as i64,
        Padding::Same => {
            let extent = (w.kernel as i64 - 1) * w.dilation as i64 + 1;
            let total = (out as i64 - 1) * w.stride as i64 + extent - inp as i64;
            total.max(0) / 2
        }
    }
}

/// The [`Step`] of op `k`, or why it cannot run on patches.
fn step_of(
    graph: &Graph,
    k: usize,
    split_op: usize,
    dims: &mut BTreeMap<TensorIndex, [u64; 2]>,
) -> std::result::Result<Step, String> {
    let op = &graph.ops[k];
    let model = &graph.name;
    let refuse = |why: &str| {
        format!(
            "op {k} ({}) of model `{model}` is in the patch stage ending at op {split_op} ({}), but {why}; pick a split op before op {k}, or one whose ancestors are all spatially local (CONV_2D, DEPTHWISE_CONV_2D, pooling, PAD, elementwise and unary ops)",
            op.opcode, graph.ops[split_op].opcode
        )
    };
    if op.outputs.len() != 1 {
        return Err(refuse(&format!(
            "it has {} outputs and a stage op has one",
            op.outputs.len()
        )));
    }
    let out = op.outputs[0];
    let Some((oh, ow, oc)) = hwc(graph, out) else {
        return Err(refuse(&format!(
            "its output `{}` has shape {:?}, not [1, H, W, C]",
            graph.tensor(out).name,
            graph.tensor(out).shape
        )));
    };
    if graph.tensor(out).kind != TensorKind::Activation {
        return Err(refuse("its output is not an activation"));
    }
    dims.insert(out, [oh, ow]);
    let activation = |i: usize| -> Option<TensorIndex> {
        let t = op.inputs.get(i).copied().flatten()?;
        (graph.tensor(t).kind == TensorKind::Activation).then_some(t)
    };
    let spatial_input = |i: usize,
                         dims: &mut BTreeMap<TensorIndex, [u64; 2]>|
     -> std::result::Result<(TensorIndex, u64, u64, u64), String> {
        let Some(t) = activation(i) else {
            return Err(refuse(&format!("its input {i} is not an activation")));
        };
        let Some((h, w, c)) = hwc(graph, t) else {
            return Err(refuse(&format!(
                "its input `{}` has shape {:?}, not [1, H, W, C]",
                graph.tensor(t).name,
                graph.tensor(t).shape
            )));
        };
        dims.insert(t, [h, w]);
        Ok((t, h, w, c))
    };
    let window = |kernel: i32, stride: i32, dilation: i32| -> std::result::Result<Window, String> {
        if kernel < 1 || stride < 1 || dilation < 1 {
            return Err(refuse(&format!(
                "its window (kernel {kernel}, stride {stride}, dilation {dilation}) is not positive"
            )));
        }
        Ok(Window {
            kernel: kernel as u64,
            stride: stride as u64,
            dilation: dilation as u64,
            before: 0,
        })
    };
    let filter_hw = |i: usize| -> std::result::Result<(i32, i32, u64), String> {
        let f = op
            .inputs
            .get(i)
            .copied()
            .flatten()
            .map(|t| graph.tensor(t).shape.clone());
        match f.as_deref() {
            Some([_, h, w, c]) => Ok((*h as i32, *w as i32, *c)),
            _ => Err(refuse("its filter is not [O, H, W, I]")),
        }
    };
    let opcode = op.opcode.as_str();
    let (inputs, macs) = match (&op.options, opcode) {
        (
            OpOptions::None,
            "CONV_2D" | "DEPTHWISE_CONV_2D" | "AVERAGE_POOL_2D" | "MAX_POOL_2D" | "PAD" | "PADV2"
            | "CONCATENATION",
        ) => {
            return Err(refuse(
                "its options (window, padding, axis) were not read from the model",
            ));
        }
        (OpOptions::Conv2d(o), _) => {
            let (t, h, w, _) = spatial_input(0, dims)?;
            let (kh, kw, cin) = filter_hw(1)?;
            let mut wh = window(kh, o.stride_h, o.dilation_h)?;
            let mut ww = window(kw, o.stride_w, o.dilation_w)?;
            let pads = o.pads.as_slice();
            wh.before = pad_before(o.padding, pads.first().copied(), h, oh, wh);
            ww.before = pad_before(o.padding, pads.get(2).copied(), w, ow, ww);
            (vec![(t, [wh, ww])], oc * kh as u64 * kw as u64 * cin)
        }
        (OpOptions::DepthwiseConv2d(o), _) => {
            let (t, h, w, _) = spatial_input(0, dims)?;
            let (kh, kw, _) = filter_hw(1)?;
            let mut wh = window(kh, o.stride_h, o.dilation_h)?;
            let mut ww = window(kw, o.stride_w, o.dilation_w)?;
            let pads = o.pads.as_slice();
            wh.before = pad_before(o.padding, pads.first().copied(), h, oh, wh);
            ww.before = pad_before(o.padding, pads.get(2).copied(), w, ow, ww);
            (vec![(t, [wh, ww])], oc * kh as u64 * kw as u64)
        }
        (OpOptions::AveragePool2d(o), _) | (OpOptions::MaxPool2d(o), _) => {
            let (t, h, w, _) = spatial_input(0, dims)?;
            let mut wh = window(o.filter_h, o.stride_h, 1)?;
            let mut ww = window(o.filter_w, o.stride_w, 1)?;
            wh.before = pad_before(o.padding, None, h, oh, wh);
            ww.before = pad_before(o.padding, None, w, ow, ww);
            (
                vec![(t, [wh, ww])],
                oc * o.filter_h as u64 * o.filter_w as u64,
            )
        }
        (OpOptions::Pad(o), _) => {
            let (t, _, _, _) = spatial_input(0, dims)?;
            let b = o.before.as_slice();
            let a = o.after.as_slice();
            if b.len() != 4 || a.len() != 4 || b[0] != 0 || a[0] != 0 {
                return Err(refuse("it pads the batch or is not 4-D"));
            }
            if b[1] < 0 || b[2] < 0 || a[1] < 0 || a[2] < 0 {
                return Err(refuse("it crops (negative padding)"));
            }
            let wh = Window {
                before: b[1] as i64,
                ..Window::SAME
            };
            let ww = Window {
                before: b[2] as i64,
                ..Window::SAME
            };
            (vec![(t, [wh, ww])], oc)
        }
        (OpOptions::Concatenation(o), _) => {
            if o.axis != 3 && o.axis != -1 {
                return Err(refuse(&format!(
                    "it concatenates along axis {}, not the channels",
                    o.axis
                )));
            }
            let mut v = Vec::new();
            for i in 0..op.inputs.len() {
                let (t, h, w, _) = spatial_input(i, dims)?;
                if [h, w] != [oh, ow] {
                    return Err(refuse("its inputs differ in height or width"));
                }
                v.push((t, [Window::SAME; 2]));
            }
            (v, oc)
        }
        _ if POINTWISE.contains(&opcode) => {
            let mut v = Vec::new();
            for (i, t) in op.inputs.iter().enumerate() {
                let Some(t) = *t else { continue };
                if graph.tensor(t).kind != TensorKind::Activation {
                    continue;
                }
                match hwc(graph, t) {
                    Some((h, w, _)) if [h, w] == [oh, ow] => {
                        dims.insert(t, [h, w]);
                        v.push((t, [Window::SAME; 2]));
                    }
                    _ => {
                        return Err(refuse(&format!(
                            "its input {i} `{}` of shape {:?} is an activation broadcast over the image, which a patch cannot hold",
                            graph.tensor(t).name,
                            graph.tensor(t).shape
                        )));
                    }
                }
            }
            (v, oc)
        }
        _ => {
            return Err(refuse(&format!(
                "{opcode} is not spatially local (an output pixel reads more than a window of its input)"
            )));
        }
    };
    Ok(Step {
        op: k,
        output: out,
        inputs,
        macs_per_pixel: macs,
    })
}

/// Multiply-accumulates of one op run whole (convolutions, depthwise convolutions, pooling
/// and fully connected ops by their taps; every other op one per output element).
pub fn op_macs(graph: &Graph, k: usize) -> u64 {
    let op = &graph.ops[k];
    let out_elems = op
        .outputs
        .iter()
        .map(|&t| graph.tensor(t).elements().unwrap_or(0))
        .fold(0u64, u64::saturating_add);
    let filter = |i: usize| {
        op.inputs
            .get(i)
            .copied()
            .flatten()
            .map(|t| graph.tensor(t).shape.clone())
            .unwrap_or_default()
    };
    let taps = match &op.options {
        OpOptions::Conv2d(_) => filter(1).iter().skip(1).product::<u64>(),
        OpOptions::DepthwiseConv2d(_) => filter(1).iter().skip(1).take(2).product::<u64>(),
        OpOptions::AveragePool2d(o) | OpOptions::MaxPool2d(o) => {
            o.filter_h.max(1) as u64 * o.filter_w.max(1) as u64
        }
        OpOptions::FullyConnected(_) => filter(1).last().copied().unwrap_or(1),
        _ => 1,
    };
    out_elems.saturating_mul(taps.max(1))
}

/// Multiply-accumulates of the whole graph run per layer.
pub fn graph_macs(graph: &Graph) -> u64 {
    (0..graph.ops.len())
        .map(|k| op_macs(graph, k))
        .fold(0u64, u64::saturating_add)
}

/// A stage and grid, with the figures of the plan they make.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The stage.
    pub stage: Stage,
    /// Its regions.
    pub traced: Traced,
    /// How the input reaches the stage.
    pub input: PatchInput,
    /// Multiply-accumulates of the model per layer.
    pub macs: u64,
    /// Multiply-accumulates with patches.
    pub patch_macs: u64,
}

impl Candidate {
    /// Builds the candidate of a stage and grid; errors when the input mode does not fit.
    pub fn new(
        graph: &Graph,
        stage: Stage,
        grid: [u32; 2],
        input: PatchInput,
        macs: u64,
    ) -> std::result::Result<Candidate, String> {
        if input == PatchInput::Streamed {
            check_streamed(graph, &stage)?;
        }
        let traced = stage.trace(grid);
        let patch_macs = macs
            .saturating_sub(stage.macs())
            .saturating_add(stage.patch_macs(&traced));
        Ok(Candidate {
            stage,
            traced,
            input,
            macs,
            patch_macs,
        })
    }

    /// MAC overhead of patches, a fraction of the per-layer MACs.
    pub fn overhead(&self) -> f64 {
        if self.macs == 0 {
            0.0
        } else {
            self.patch_macs as f64 / self.macs as f64 - 1.0
        }
    }

    /// True when `t` is viewed whole (the split tensor, a resident input).
    fn whole(&self, t: TensorIndex) -> bool {
        t == self.stage.split
            || (self.input == PatchInput::Resident && self.stage.inputs.contains(&t))
    }

    /// The bytes `t` takes in the plan: its largest region's for a dense stage tensor.
    pub fn size(&self, graph: &Graph, t: TensorIndex) -> u64 {
        let tensor = graph.tensor(t);
        if self.whole(t) || !self.traced.rows.contains_key(&t) {
            return tensor.size;
        }
        let c = tensor.shape.last().copied().unwrap_or(1);
        tensor
            .dtype
            .bytes_for(self.traced.largest_pixels(t).saturating_mul(c))
            .unwrap_or(tensor.size)
            .min(tensor.size)
    }

    /// The plan-file record, with graph tensor indices (the plan file renumbers them).
    pub fn patch_plan(&self, split_position: u32) -> PatchPlan {
        PatchPlan {
            split: split_position,
            grid: self.traced.grid,
            input: self.input,
            tensors: self
                .stage
                .tensors()
                .into_iter()
                .map(|t| PatchTensor {
                    tensor: t.0,
                    regions: self.traced.regions(t),
                })
                .collect(),
            macs: self.macs,
            patch_macs: self.patch_macs,
        }
    }
}

/// A streamed input must be read by stage ops only and not be a model output.
fn check_streamed(graph: &Graph, stage: &Stage) -> std::result::Result<(), String> {
    let in_stage: BTreeSet<usize> = stage.steps.iter().map(|s| s.op).collect();
    for &t in &stage.inputs {
        if graph.outputs.iter().any(|io| io.tensor == t) {
            return Err(format!(
                "model input `{}` is also a model output, so it cannot be streamed patch by patch; use patch_input = \"resident\"",
                graph.tensor(t).name
            ));
        }
        if let Some((j, o)) = graph
            .ops
            .iter()
            .enumerate()
            .find(|(j, o)| !in_stage.contains(j) && o.tensors().any(|u| u == t))
        {
            return Err(format!(
                "model input `{}` is also read by op {j} ({}) after the patch stage, which needs it whole, so it cannot be streamed; use patch_input = \"resident\" or split at op {j} or later",
                graph.tensor(t).name,
                o.opcode
            ));
        }
    }
    Ok(())
}

/// Rewrites `graph` for a candidate: the stage's ops first (in their order), then the
/// others (in theirs); the stage tensors sized to their largest region; [`Graph::patches`]
/// set. Returns the new op order: `order[k]` is the old index of the op now `k`-th.
pub fn apply(graph: &mut Graph, c: &Candidate) -> Vec<usize> {
    let in_stage: BTreeSet<usize> = c.stage.steps.iter().map(|s| s.op).collect();
    let order: Vec<usize> = (0..graph.ops.len())
        .filter(|k| in_stage.contains(k))
        .chain((0..graph.ops.len()).filter(|k| !in_stage.contains(k)))
        .collect();
    let ops = std::mem::take(&mut graph.ops);
    let mut slots: Vec<Option<crate::graph::Op>> = ops.into_iter().map(Some).collect();
    graph.ops = order.iter().filter_map(|&k| slots[k].take()).collect();
    for t in c.stage.tensors() {
        let size = c.size(graph, t);
        graph.tensors[t.get()].size = size;
    }
    graph.patches = Some(c.patch_plan(in_stage.len().saturating_sub(1) as u32));
    order
}

/// Sizes of a tensor under a patch plan: `Some(bytes)` for a dense stage tensor (its
/// largest region's), `None` for a tensor sized by its shape. The one rule graph
/// validation, the verifier and the plan-file checks share.
pub fn dense_size(
    plan: &PatchPlan,
    t: u32,
    split: Option<u32>,
    inputs: &[u32],
    dtype: crate::graph::DType,
    shape: &[u64],
) -> Option<u64> {
    let entry = plan.tensor(t)?;
    if Some(t) == split || (plan.input == PatchInput::Resident && inputs.contains(&t)) {
        return None;
    }
    let c = shape.last().copied().unwrap_or(1);
    let px = entry
        .regions
        .iter()
        .map(|r| r[2] as u64 * r[3] as u64)
        .max()
        .unwrap_or(0);
    dtype.bytes_for(px.saturating_mul(c))
}

// ---- choosing ---------------------------------------------------------------------------

/// What the manifest asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchMode {
    /// No patches (the default: a user's kernel set must honour regions).
    Off,
    /// The lowest peak within a MAC-overhead budget (a fraction).
    Auto {
        /// Most extra MACs, a fraction of the per-layer MACs.
        max_recompute: f64,
    },
    /// A given split op and grid.
    Fixed {
        /// The split op.
        split: SplitRef,
        /// `[rows, columns]`.
        grid: [u32; 2],
    },
}

/// How the manifest names the split op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitRef {
    /// Index in the model's own op order.
    Index(u32),
    /// The name (or id) of the op's output tensor.
    Name(String),
}

/// Largest grid side `auto` tries.
pub const MAX_GRID: u32 = 8;

/// How many of the best candidates by bound `auto` packs in full.
pub const PACKED_CANDIDATES: usize = 3;

/// The split tensor a [`SplitRef`] names in `graph` (the model as imported).
pub fn resolve(graph: &Graph, split: &SplitRef) -> std::result::Result<TensorIndex, String> {
    let model = &graph.name;
    match split {
        SplitRef::Index(i) => {
            let Some(op) = graph.ops.get(*i as usize) else {
                return Err(format!(
                    "memory.patches.split is op {i}, but model `{model}` has {} ops; use an index below {}",
                    graph.ops.len(),
                    graph.ops.len()
                ));
            };
            op.outputs.first().copied().ok_or_else(|| {
                format!(
                    "memory.patches.split is op {i} ({}), which has no output; pick an op with a 4-D output",
                    op.opcode
                )
            })
        }
        SplitRef::Name(name) => {
            let found = graph
                .ops
                .iter()
                .filter_map(|o| o.outputs.first().copied())
                .find(|&t| graph.tensor(t).name == *name || graph.tensor(t).id == *name);
            found.ok_or_else(|| {
                let names = graph
                    .ops
                    .iter()
                    .filter_map(|o| o.outputs.first().map(|&t| graph.tensor(t).name.as_str()));
                let hint = crate::error::did_you_mean(name, names)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                format!(
                    "memory.patches.split names `{name}`, which is no op's output in model `{model}`{hint}; name an op by its index or its output tensor's name"
                )
            })
        }
    }
}

/// A candidate of `auto`, ranked before it is built: its peak bound (the live bytes at the busiest op of the rewritten graph, before in-place ops: packing adds only fragmentation),
/// its MACs with patches, its split op and grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Scored {
    /// Live bytes at the busiest op.
    pub bound: u64,
    /// Multiply-accumulates with patches.
    pub patch_macs: u64,
    /// The split op.
    pub split_op: usize,
    /// `[rows, columns]`.
    pub grid: [u32; 2],
}

/// Every valid candidate of `graph` for `auto`: each op whose output is `[1, H, W, C]` and
/// whose stage is spatially local, each grid up to [`MAX_GRID`] per side (at most the
/// split tensor's size), within `max_recompute`; sorted by peak bound, then MACs, then
/// split op and grid, so the order is deterministic.
///
/// Cheap per grid: the rows of every stage tensor are traced once per row count and its
/// columns once per column count (a region is their product), and the live bytes outside
/// the stage's own dense tensors are summed once per split op.
pub fn candidates(graph: &Graph, input: PatchInput, max_recompute: f64) -> Vec<Scored> {
    let macs = graph_macs(graph);
    let n = graph.ops.len();
    let mut out = Vec::new();
    for k in 0..n {
        let Some(&t) = graph.ops[k].outputs.first() else {
            continue;
        };
        let Some((h, w, _)) = hwc(graph, t) else {
            continue;
        };
        let Ok(stage) = Stage::of(graph, k) else {
            continue;
        };
        if input == PatchInput::Streamed && check_streamed(graph, &stage).is_err() {
            continue;
        }
        let stage_macs = stage.macs();
        let whole = |t: TensorIndex| {
            t == stage.split || (input == PatchInput::Resident && stage.inputs.contains(&t))
        };
        // Positions of the ops once the stage runs first, and each activation's live range.
        let in_stage: BTreeSet<usize> = stage.steps.iter().map(|s| s.op).collect();
        let mut pos = vec![0usize; n];
        let mut p = 0;
        for j in (0..n).filter(|j| in_stage.contains(j)) {
            pos[j] = p;
            p += 1;
        }
        let split_pos = p.saturating_sub(1);
        for j in (0..n).filter(|j| !in_stage.contains(j)) {
            pos[j] = p;
            p += 1;
        }
        let mut live: BTreeMap<TensorIndex, (usize, usize)> = BTreeMap::new();
        let mut touch = |t: TensorIndex, at: usize| {
            if graph.tensor(t).kind == TensorKind::Activation {
                let e = live.entry(t).or_insert((at, at));
                e.0 = e.0.min(at);
                e.1 = e.1.max(at);
            }
        };
        for (j, op) in graph.ops.iter().enumerate() {
            for t in op.tensors() {
                touch(t, pos[j]);
            }
        }
        for io in &graph.inputs {
            touch(io.tensor, 0);
        }
        for io in &graph.outputs {
            touch(io.tensor, n.saturating_sub(1));
        }
        touch(stage.split, 0);
        if input == PatchInput::Resident {
            for &t in &stage.inputs {
                touch(t, split_pos);
            }
        }
        // Whole tensors into the base; dense stage tensors kept apart, sized per grid.
        let mut base = vec![0i128; n + 1];
        let mut dense = Vec::new();
        for (&t, &(s, e)) in &live {
            if stage.dims.contains_key(&t) && !whole(t) {
                dense.push((t, s, e));
            } else {
                base[s] += graph.tensor(t).size as i128;
                base[e + 1] -= graph.tensor(t).size as i128;
            }
        }
        let mut cur = 0i128;
        let mut base_live = Vec::with_capacity(n);
        for d in &base[..n] {
            cur += d;
            base_live.push(cur);
        }
        let after = base_live[split_pos + 1..]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        // Per row count: each tensor's (largest, total) rows; per column count likewise.
        let stats = |axis: usize, len: u64| -> Vec<BTreeMap<TensorIndex, (u64, u64)>> {
            (1..=MAX_GRID.min(len as u32))
                .map(|c| {
                    stage
                        .trace_axis(axis, c as u64)
                        .into_iter()
                        .map(|(t, v)| {
                            let max = v.iter().map(|x| x.1).max().unwrap_or(0);
                            let sum = v.iter().map(|x| x.1).sum::<u64>();
                            (t, (max, sum))
                        })
                        .collect()
                })
                .collect()
        };
        let rows = stats(0, h);
        let cols = stats(1, w);
        for (i, r) in rows.iter().enumerate() {
            for (j, c) in cols.iter().enumerate() {
                let get =
                    |m: &BTreeMap<TensorIndex, (u64, u64)>, t| m.get(&t).copied().unwrap_or((0, 0));
                let patch_stage: u64 = stage
                    .steps
                    .iter()
                    .map(|s| {
                        s.macs_per_pixel
                            .saturating_mul(get(r, s.output).1.saturating_mul(get(c, s.output).1))
                    })
                    .fold(0u64, u64::saturating_add);
                let patch_macs = macs.saturating_sub(stage_macs).saturating_add(patch_stage);
                if macs > 0 && patch_macs as f64 / macs as f64 - 1.0 > max_recompute + 1e-12 {
                    continue;
                }
                let mut stage_live: Vec<i128> = base_live[..=split_pos].to_vec();
                for &(t, s, e) in &dense {
                    let tensor = graph.tensor(t);
                    let px = get(r, t).0.saturating_mul(get(c, t).0);
                    let ch = tensor.shape.last().copied().unwrap_or(1);
                    let size = tensor
                        .dtype
                        .bytes_for(px.saturating_mul(ch))
                        .unwrap_or(tensor.size)
                        .min(tensor.size) as i128;
                    for x in &mut stage_live[s..=e.min(split_pos)] {
                        *x += size;
                    }
                }
                let peak = stage_live.iter().copied().max().unwrap_or(0).max(after);
                out.push(Scored {
                    bound: peak.max(0) as u64,
                    patch_macs,
                    split_op: k,
                    grid: [i as u32 + 1, j as u32 + 1],
                });
            }
        }
    }
    out.sort();
    out
}

/// The candidate `auto` ranked as `s`.
pub fn build(
    graph: &Graph,
    s: &Scored,
    input: PatchInput,
) -> std::result::Result<Candidate, String> {
    let stage = Stage::of(graph, s.split_op)?;
    Candidate::new(graph, stage, s.grid, input, graph_macs(graph))
}

/// The candidate of a given split tensor and grid, or an error naming what is wrong.
pub fn fixed(
    graph: &Graph,
    split: TensorIndex,
    grid: [u32; 2],
    input: PatchInput,
) -> std::result::Result<Candidate, String> {
    let model = &graph.name;
    let Some(k) = graph.producer(split) else {
        return Err(format!(
            "the patch split tensor `{}` of model `{model}` left the plan (a PAD folded into its convolution by in_place); split at the convolution after it",
            graph.tensor(split).name
        ));
    };
    let stage = Stage::of(graph, k)?;
    let Some((h, w, _)) = hwc(graph, split) else {
        return Err(format!(
            "the patch split op {k} ({}) of model `{model}` writes `{}` of shape {:?}, not [1, H, W, C]; pick an op with a 4-D output",
            graph.ops[k].opcode,
            graph.tensor(split).name,
            graph.tensor(split).shape
        ));
    };
    if grid[0] == 0 || grid[1] == 0 || grid[0] as u64 > h || grid[1] as u64 > w {
        return Err(format!(
            "memory.patches.grid is [{}, {}], but the split tensor `{}` is {h}x{w}; use between 1 and {h} rows and 1 and {w} columns",
            grid[0],
            grid[1],
            graph.tensor(split).name
        ));
    }
    Candidate::new(graph, stage, grid, input, graph_macs(graph))
}

/// One-line summary of a patch plan for reports: split, grid, MACs and input.
pub fn summary(graph: &Graph, plan: &PatchPlan) -> String {
    let split = graph
        .ops
        .get(plan.split as usize)
        .map(|o| {
            let name = o
                .outputs
                .first()
                .map(|&t| graph.tensor(t).name.clone())
                .unwrap_or_default();
            format!("op {} ({}, `{name}`)", plan.split, o.opcode)
        })
        .unwrap_or_else(|| format!("op {}", plan.split));
    format!(
        "split after {split}, grid {}x{}, {} patches, MACs {} per layer, {} with patches ({}), input {}",
        plan.grid[0],
        plan.grid[1],
        plan.patches(),
        plan.macs,
        plan.patch_macs,
        overhead_text(plan.macs, plan.patch_macs),
        match plan.input {
            PatchInput::Resident => "resident",
            PatchInput::Streamed => "streamed",
        }
    )
}

/// `+3.0 %` of MAC overhead.
pub fn overhead_text(macs: u64, patch_macs: u64) -> String {
    if macs == 0 {
        return "+0.0 % MACs".to_string();
    }
    let pct = (patch_macs as f64 / macs as f64 - 1.0) * 100.0;
    format!("{pct:+.1} % MACs")
}

/// The uses a patch plan adds to `graph`'s lifetimes, `(tensor, op)`: the split tensor at
/// op 0 (every patch writes its tile, so it lives through the whole stage) and each
/// resident model input the stage reads at the split op (every patch reads its region).
/// Lifetimes and the verifier both add these.
pub fn pinned(graph: &Graph) -> Vec<(TensorIndex, u32)> {
    let Some(plan) = &graph.patches else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(&split) = graph
        .ops
        .get(plan.split as usize)
        .and_then(|o| o.outputs.first())
    {
        out.push((split, 0));
    }
    if plan.input == PatchInput::Resident {
        for io in &graph.inputs {
            if plan.tensor(io.tensor.0).is_some() {
                out.push((io.tensor, plan.split));
            }
        }
    }
    out
}

/// True when op `k` of `graph` may write `output` over `input` (in place, or as an alias)
/// under the graph's patch plan: always after the stage; inside it, only when both are
/// dense stage tensors with the same region in every patch (an elementwise or unary op, or
/// a grid of one patch), so each patch's output overwrites exactly its input's bytes.
pub fn pair_allowed(graph: &Graph, k: usize, input: TensorIndex, output: TensorIndex) -> bool {
    let Some(plan) = &graph.patches else {
        return true;
    };
    if k > plan.split as usize {
        return true;
    }
    let dense = |t: TensorIndex| graph.dense_size(t).is_some();
    match (plan.tensor(input.0), plan.tensor(output.0)) {
        (Some(a), Some(b)) => dense(input) && dense(output) && a.regions == b.regions,
        _ => false,
    }
}

/// The verifier's checks of a graph's patch plan, one message per violation: the split op
/// exists and its output is listed; every listed tensor is `[1, H, W, C]` with one region
/// per patch inside it; the split tensor's regions tile it (every pixel in exactly one
/// patch); each stage op's output is listed, and a dense stage tensor is read by stage ops
/// only, is no model output and takes its largest region's bytes; an in-place pair inside
/// the stage has the same region in every patch.
pub fn verify_plan(graph: &Graph) -> Vec<String> {
    let Some(p) = &graph.patches else {
        return Vec::new();
    };
    let mut bad = Vec::new();
    let model = &graph.name;
    let split = p.split as usize;
    let Some(&split_t) = graph.ops.get(split).and_then(|o| o.outputs.first()) else {
        bad.push(format!(
            "the patch plan of model `{model}` splits at op {split}, which does not exist or has no output"
        ));
        return bad;
    };
    if p.grid[0] == 0 || p.grid[1] == 0 {
        bad.push(format!(
            "the patch grid of model `{model}` is {:?}; each side needs at least 1",
            p.grid
        ));
        return bad;
    }
    let n = p.patches();
    let mut listed = BTreeSet::new();
    for e in &p.tensors {
        let Some(t) = graph.tensors.get(e.tensor as usize) else {
            bad.push(format!(
                "the patch plan of model `{model}` lists tensor index {}, past the last",
                e.tensor
            ));
            continue;
        };
        listed.insert(e.tensor);
        let [1, h, w, _] = t.shape[..] else {
            bad.push(format!(
                "patch stage tensor `{}` has shape {:?}, not [1, H, W, C]",
                t.id, t.shape
            ));
            continue;
        };
        if e.regions.len() != n {
            bad.push(format!(
                "patch stage tensor `{}` has {} regions for {n} patches",
                t.id,
                e.regions.len()
            ));
        }
        for r in &e.regions {
            if r[0] as u64 + r[2] as u64 > h || r[1] as u64 + r[3] as u64 > w {
                bad.push(format!(
                    "patch stage tensor `{}` ({h}x{w}) has region {r:?} outside it",
                    t.id
                ));
            }
        }
        if let Some(d) = graph.dense_size(TensorIndex(e.tensor))
            && d != t.size
        {
            bad.push(format!(
                "patch stage tensor `{}` takes {} bytes, but its largest region takes {d}",
                t.id, t.size
            ));
        }
        let dense = graph.dense_size(TensorIndex(e.tensor)).is_some();
        if dense && e.tensor != split_t.0 {
            let tt = TensorIndex(e.tensor);
            if graph.outputs.iter().any(|io| io.tensor == tt) {
                bad.push(format!("patch stage tensor `{}` is a model output", t.id));
            }
            if let Some(k) =
                (split + 1..graph.ops.len()).find(|&k| graph.ops[k].tensors().any(|x| x == tt))
            {
                bad.push(format!(
                    "patch stage tensor `{}` is used by op {k} ({}) after the stage (ops 0..={split}), which needs it whole",
                    t.id, graph.ops[k].opcode
                ));
            }
        }
    }
    match p.tensor(split_t.0) {
        None => bad.push(format!(
            "the patch plan of model `{model}` does not list its split tensor `{}`",
            graph.tensor(split_t).id
        )),
        Some(e) => {
            if let [1, h, w, _] = graph.tensor(split_t).shape[..] {
                let mut seen = vec![0u8; (h * w) as usize];
                for r in &e.regions {
                    for y in r[0] as u64..(r[0] as u64 + r[2] as u64).min(h) {
                        for x in r[1] as u64..(r[1] as u64 + r[3] as u64).min(w) {
                            let c = &mut seen[(y * w + x) as usize];
                            *c = c.saturating_add(1);
                        }
                    }
                }
                if let Some(i) = seen.iter().position(|&c| c != 1) {
                    bad.push(format!(
                        "the patches of split tensor `{}` cover pixel ({}, {}) {} times; each pixel once",
                        graph.tensor(split_t).id,
                        i as u64 / w,
                        i as u64 % w,
                        seen[i]
                    ));
                }
            }
        }
    }
    for (k, op) in graph.ops.iter().enumerate().take(split + 1) {
        for &o in &op.outputs {
            if !listed.contains(&o.0) {
                bad.push(format!(
                    "op {k} ({}) is in the patch stage but its output `{}` has no regions",
                    op.opcode,
                    graph.tensor(o).id
                ));
            }
        }
    }
    for ip in &graph.in_place {
        if let Some(k) = graph.producer(ip.output)
            && k <= split
            && !pair_allowed(graph, k, ip.input, ip.output)
        {
            bad.push(format!(
                "op {k} ({}) runs in place inside the patch stage, but `{}` and `{}` differ in region or layout",
                graph.ops[k].opcode,
                graph.tensor(ip.input).id,
                graph.tensor(ip.output).id
            ));
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic xorshift generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random window for an input of `len` and its output length: kernel 1..=7,
    /// stride 1..=2 (3 now and then), dilation 1..=2, SAME, VALID or explicit padding.
    fn random_window(r: &mut Rng, len: u64) -> (Window, u64) {
        loop {
            let kernel = 1 + r.below(7);
            let stride = if r.below(8) == 0 { 3 } else { 1 + r.below(2) };
            let dilation = 1 + r.below(2) * r.below(2);
            let extent = (kernel - 1) * dilation + 1;
            let mut w = Window {
                kernel,
                stride,
                dilation,
                before: 0,
            };
            let out = match r.below(3) {
                0 => {
                    let out = len.div_ceil(stride);
                    w.before = pad_before(Padding::Same, None, len, out, w);
                    out
                }
                1 if len >= extent => (len - extent + 1).div_ceil(stride),
                1 => continue,
                _ => {
                    let (b, a) = (r.below(extent), r.below(extent));
                    if len + b + a < extent {
                        continue;
                    }
                    w.before = b as i64;
                    (len + b + a - extent) / stride + 1
                }
            };
            // Rows are traced apart from columns, so an output pixel that reads only
            // padding along one axis would still widen the other: real models have none
            // (padding narrower than the kernel's extent), and the brute force would see
            // the region as a strict superset there.
            if out >= 1 && (0..out).all(|y| w.reads(y, y, len).is_some()) {
                return (w, out);
            }
        }
    }

    /// A random chain of windows from a `h x w` input (odd and even sizes), with an
    /// elementwise op now and then that reads the last two tensors (a residual branch).
    fn random_stage(r: &mut Rng) -> Stage {
        let mut dims = BTreeMap::new();
        let (h, w) = (1 + r.below(40), 1 + r.below(40));
        dims.insert(TensorIndex(0), [h, w]);
        let mut steps = Vec::new();
        let ops = 1 + r.below(5);
        for k in 0..ops as usize {
            let input = TensorIndex(k as u32);
            let out = TensorIndex(k as u32 + 1);
            let [ih, iw] = dims[&input];
            let prev = (k > 0).then(|| TensorIndex(k as u32 - 1));
            if let Some(p) = prev
                && dims[&p] == [ih, iw]
                && r.below(4) == 0
            {
                dims.insert(out, [ih, iw]);
                steps.push(Step {
                    op: k,
                    output: out,
                    inputs: vec![(input, [Window::SAME; 2]), (p, [Window::SAME; 2])],
                    macs_per_pixel: 1,
                });
                continue;
            }
            let (wh, oh) = random_window(r, ih);
            let (ww, ow) = random_window(r, iw);
            dims.insert(out, [oh, ow]);
            steps.push(Step {
                op: k,
                output: out,
                inputs: vec![(input, [wh, ww])],
                macs_per_pixel: wh.kernel * ww.kernel,
            });
        }
        Stage {
            split_op: ops as usize - 1,
            split: TensorIndex(ops as u32),
            steps,
            dims,
            inputs: vec![TensorIndex(0)],
        }
    }

    type Marks = BTreeMap<TensorIndex, Vec<Vec<bool>>>;

    /// Marks every pixel each tensor's pixels read, from `tile` of the split tensor back:
    /// `boxed` marks the reads of every pixel of the bounding box of an output's marks (an
    /// op computes its whole region), otherwise only of the marked pixels.
    fn brute(stage: &Stage, tile: [u64; 4], boxed: bool) -> Marks {
        let mut marks: Marks = stage
            .dims
            .iter()
            .map(|(&t, &[h, w])| (t, vec![vec![false; w as usize]; h as usize]))
            .collect();
        let [top, left, th, tw] = tile;
        for y in top..top + th {
            for x in left..left + tw {
                marks.get_mut(&stage.split).unwrap()[y as usize][x as usize] = true;
            }
        }
        for step in stage.steps.iter().rev() {
            let out = marks[&step.output].clone();
            let pixels: Vec<(u64, u64)> = match (boxed, bbox(&out)) {
                (true, Some([t, l, h, w])) => (t..t + h)
                    .flat_map(|y| (l..l + w).map(move |x| (y, x)))
                    .collect(),
                (true, None) => Vec::new(),
                (false, _) => (0..out.len())
                    .flat_map(|y| (0..out[y].len()).map(move |x| (y as u64, x as u64)))
                    .filter(|&(y, x)| out[y as usize][x as usize])
                    .collect(),
            };
            for &(t, [wh, ww]) in &step.inputs {
                let [h, w] = stage.dims[&t];
                let m = marks.get_mut(&t).unwrap();
                for &(y, x) in &pixels {
                    for i in 0..wh.kernel {
                        let yy = (y * wh.stride + i * wh.dilation) as i64 - wh.before;
                        if yy < 0 || yy >= h as i64 {
                            continue;
                        }
                        for j in 0..ww.kernel {
                            let xx = (x * ww.stride + j * ww.dilation) as i64 - ww.before;
                            if xx >= 0 && xx < w as i64 {
                                m[yy as usize][xx as usize] = true;
                            }
                        }
                    }
                }
            }
        }
        marks
    }

    /// `[top, left, height, width]` of the marked pixels; `None` when there are none.
    fn bbox(m: &[Vec<bool>]) -> Option<[u64; 4]> {
        let mut b: Option<[u64; 4]> = None;
        for (y, row) in m.iter().enumerate() {
            for (x, &on) in row.iter().enumerate() {
                if on {
                    let (y, x) = (y as u64, x as u64);
                    b = Some(match b {
                        None => [y, x, y, x],
                        Some([t, l, bm, r]) => [t.min(y), l.min(x), bm.max(y), r.max(x)],
                    });
                }
            }
        }
        b.map(|[t, l, bm, r]| [t, l, bm - t + 1, r - l + 1])
    }

    #[test]
    fn traced_regions_equal_brute_force_on_random_chains() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        for _ in 0..400 {
            let stage = random_stage(&mut r);
            let [sh, sw] = stage.dims[&stage.split];
            let grid = [1 + r.below(sh.min(6)) as u32, 1 + r.below(sw.min(6)) as u32];
            let traced = stage.trace(grid);
            let rows = tiles(sh, grid[0] as u64);
            let cols = tiles(sw, grid[1] as u64);
            for (i, &(top, th)) in rows.iter().enumerate() {
                for (j, &(left, tw)) in cols.iter().enumerate() {
                    let boxed = brute(&stage, [top, left, th, tw], true);
                    let sparse = brute(&stage, [top, left, th, tw], false);
                    for &t in stage.dims.keys() {
                        let region = traced.regions(t)[i * grid[1] as usize + j];
                        let region = region.map(|v| v as u64);
                        let want = bbox(&boxed[&t]);
                        match want {
                            Some(b) => {
                                assert_eq!(region, b, "tensor {t:?} patch ({i}, {j}) of {stage:?}")
                            }
                            None => {
                                assert_eq!(region[2] * region[3], 0, "tensor {t:?} reads nothing")
                            }
                        }
                        // Every pixel read from the tile's own pixels is in the region.
                        for (y, row) in sparse[&t].iter().enumerate() {
                            for (x, &on) in row.iter().enumerate() {
                                if on {
                                    let (y, x) = (y as u64, x as u64);
                                    assert!(
                                        y >= region[0]
                                            && y < region[0] + region[2]
                                            && x >= region[1]
                                            && x < region[1] + region[3],
                                        "pixel ({y}, {x}) of {t:?} is outside {region:?}"
                                    );
                                }
                            }
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn tiles_differ_by_at_most_one() {
        assert_eq!(tiles(7, 3), vec![(0, 2), (2, 2), (4, 3)]);
        assert_eq!(tiles(8, 3), vec![(0, 2), (2, 3), (5, 3)]);
        for len in 1..40 {
            for n in 1..=len.min(8) {
                let t = tiles(len, n);
                let min = t.iter().map(|x| x.1).min().unwrap();
                let max = t.iter().map(|x| x.1).max().unwrap();
                assert!(max - min <= 1);
                assert_eq!(t.iter().map(|x| x.1).sum::<u64>(), len);
            }
        }
    }

    #[test]
    fn same_padding_puts_the_odd_pixel_after() {
        // 3x3 stride 2 on 8: out 4, total pad (4-1)*2+3-8 = 1, none before.
        let w = Window {
            kernel: 3,
            stride: 2,
            dilation: 1,
            before: 0,
        };
        assert_eq!(pad_before(Padding::Same, None, 8, 4, w), 0);
        // 7x7 stride 1 on 9: total 6, 3 before.
        let w7 = Window {
            kernel: 7,
            stride: 1,
            ..w
        };
        assert_eq!(pad_before(Padding::Same, None, 9, 9, w7), 3);
        // Output rows 0..=1 of the stride-2 window read input rows 0..=4.
        assert_eq!(w.reads(0, 1, 8), Some((0, 4)));
        // Output row 3 reads 6, 7 and 8 (padding): 6..=7.
        assert_eq!(w.reads(3, 3, 8), Some((6, 7)));
    }
}
