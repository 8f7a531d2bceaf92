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

use crate::graph::{Graph, Op, TensorIndex, TensorKind};
use crate::patch_plan::{PatchInput, PatchPlan, PatchTensor};
use crate::rt::op_kinds::{self, Spatial};
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

/// A step's spatial inputs, each with its window along the height and the width.
type StepInputs = Vec<(TensorIndex, [Window; 2])>;

/// What the checks of one stage op share: the op, where it sits, and its output's height,
/// width and channels.
struct StepCtx<'g> {
    graph: &'g Graph,
    op: &'g Op,
    k: usize,
    split_op: usize,
    out: [u64; 3],
}

impl StepCtx<'_> {
    /// Why op `k` cannot be in the stage, with the fix.
    fn refuse(&self, why: &str) -> String {
        let (k, op) = (self.k, self.op);
        // No stage ends before the model's first op: say so rather than name a split op
        // that cannot exist.
        let fix = if k == 0 {
            "no split op can come before the model's first op, so this model cannot run \
             patch by patch: plan it without patches"
                .to_string()
        } else {
            format!(
                "pick a split op before op {k}, or one whose ancestors are all spatially local \
                 (CONV_2D, DEPTHWISE_CONV_2D, pooling, PAD, elementwise and unary ops)"
            )
        };
        format!(
            "op {k} ({}) of model `{}` is in the patch stage ending at op {} ({}), but {why}; {fix}",
            op.opcode, self.graph.name, self.split_op, self.graph.ops[self.split_op].opcode
        )
    }

    /// Input `i`, an activation of shape [1, H, W, C]: its index, height, width and
    /// channels, its height and width recorded in `dims`.
    fn spatial_input(
        &self,
        i: usize,
        dims: &mut BTreeMap<TensorIndex, [u64; 2]>,
    ) -> std::result::Result<(TensorIndex, u64, u64, u64), String> {
        let graph = self.graph;
        let t = self.op.inputs.get(i).copied().flatten();
        let Some(t) = t.filter(|&t| graph.tensor(t).kind == TensorKind::Activation) else {
            return Err(self.refuse(&format!("its input {i} is not an activation")));
        };
        let Some((h, w, c)) = hwc(graph, t) else {
            return Err(self.refuse(&format!(
                "its input `{}` has shape {:?}, not [1, H, W, C]",
                graph.tensor(t).name,
                graph.tensor(t).shape
            )));
        };
        dims.insert(t, [h, w]);
        Ok((t, h, w, c))
    }

    /// A window along one axis, its padding before the image still 0.
    fn window(&self, kernel: i32, stride: i32, dilation: i32) -> std::result::Result<Window, String> {
        if kernel < 1 || stride < 1 || dilation < 1 {
            return Err(self.refuse(&format!(
                "its window (kernel {kernel}, stride {stride}, dilation {dilation}) is not positive"
            )));
        }
        Ok(Window {
            kernel: kernel as u64,
            stride: stride as u64,
            dilation: dilation as u64,
            before: 0,
        })
    }

    /// CONV_2D (each output element over every input channel: `full`) and
    /// DEPTHWISE_CONV_2D: a window per axis from the filter's [O, H, W, I] shape,
    /// `[stride_h, stride_w, dilation_h, dilation_w]` and the padding with its explicit pads.
    fn conv(
        &self,
        dims: &mut BTreeMap<TensorIndex, [u64; 2]>,
        [stride_h, stride_w, dilation_h, dilation_w]: [i32; 4],
        (padding, pads): (Padding, &[i32]),
        full: bool,
    ) -> std::result::Result<(StepInputs, u64), String> {
        let [oh, ow, oc] = self.out;
        let (t, h, w, _) = self.spatial_input(0, dims)?;
        let filter = self.op.inputs.get(1).copied().flatten();
        let (kh, kw, cin) = match filter.map(|t| self.graph.tensor(t).shape.as_slice()) {
            Some(&[_, h, w, c]) => (h as i32, w as i32, c),
            _ => return Err(self.refuse("its filter is not [O, H, W, I]")),
        };
        let mut wh = self.window(kh, stride_h, dilation_h)?;
        let mut ww = self.window(kw, stride_w, dilation_w)?;
        wh.before = pad_before(padding, pads.first().copied(), h, oh, wh);
        ww.before = pad_before(padding, pads.get(2).copied(), w, ow, ww);
        let macs = oc * kh as u64 * kw as u64;
        Ok((vec![(t, [wh, ww])], if full { macs * cin } else { macs }))
    }

    /// PAD over the height and the width (not the batch, never cropping).
    fn pad(
        &self,
        dims: &mut BTreeMap<TensorIndex, [u64; 2]>,
        before: &[i32],
        after: &[i32],
    ) -> std::result::Result<(StepInputs, u64), String> {
        let (t, _, _, _) = self.spatial_input(0, dims)?;
        let (b, a) = (before, after);
        if b.len() != 4 || a.len() != 4 || b[0] != 0 || a[0] != 0 {
            return Err(self.refuse("it pads the batch or is not 4-D"));
        }
        if b[1] < 0 || b[2] < 0 || a[1] < 0 || a[2] < 0 {
            return Err(self.refuse("it crops (negative padding)"));
        }
        let along = |before: i32| Window {
            before: i64::from(before),
            ..Window::SAME
        };
        Ok((vec![(t, [along(b[1]), along(b[2])])], self.out[2]))
    }

    /// CONCATENATION along the channels: every input has the output's height and width.
    fn concatenation(
        &self,
        dims: &mut BTreeMap<TensorIndex, [u64; 2]>,
        axis: i32,
    ) -> std::result::Result<(StepInputs, u64), String> {
        if axis != 3 && axis != -1 {
            return Err(self.refuse(&format!(
                "it concatenates along axis {axis}, not the channels"
            )));
        }
        let mut v = Vec::new();
        for i in 0..self.op.inputs.len() {
            let (t, h, w, _) = self.spatial_input(i, dims)?;
            if [h, w] != [self.out[0], self.out[1]] {
                return Err(self.refuse("its inputs differ in height or width"));
            }
            v.push((t, [Window::SAME; 2]));
        }
        Ok((v, self.out[2]))
    }

    /// A pointwise op: every activation input has the output's height and width (one that
    /// broadcasts over the image is refused); constants are read whole.
    fn pointwise(
        &self,
        dims: &mut BTreeMap<TensorIndex, [u64; 2]>,
    ) -> std::result::Result<(StepInputs, u64), String> {
        let graph = self.graph;
        let mut v = Vec::new();
        for (i, t) in self.op.inputs.iter().enumerate() {
            let Some(t) = *t else { continue };
            if graph.tensor(t).kind != TensorKind::Activation {
                continue;
            }
            match hwc(graph, t) {
                Some((h, w, _)) if [h, w] == [self.out[0], self.out[1]] => {
                    dims.insert(t, [h, w]);
                    v.push((t, [Window::SAME; 2]));
                }
                _ => {
                    return Err(self.refuse(&format!(
                        "its input {i} `{}` of shape {:?} is an activation broadcast over the image, which a patch cannot hold",
                        graph.tensor(t).name,
                        graph.tensor(t).shape
                    )));
                }
            }
        }
        Ok((v, self.out[2]))
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
    let mut cx = StepCtx {
        graph,
        op,
        k,
        split_op,
        out: [0; 3],
    };
    if op.outputs.len() != 1 {
        return Err(cx.refuse(&format!(
            "it has {} outputs and a stage op has one",
            op.outputs.len()
        )));
    }
    let out = op.outputs[0];
    let Some((oh, ow, oc)) = hwc(graph, out) else {
        return Err(cx.refuse(&format!(
            "its output `{}` has shape {:?}, not [1, H, W, C]",
            graph.tensor(out).name,
            graph.tensor(out).shape
        )));
    };
    if graph.tensor(out).kind != TensorKind::Activation {
        return Err(cx.refuse("its output is not an activation"));
    }
    cx.out = [oh, ow, oc];
    dims.insert(out, [oh, ow]);
    let opcode = op.opcode.as_str();
    // The two convolutions' options are distinct types with the same window fields.
    macro_rules! conv {
        ($o:ident, $full:literal) => {
            cx.conv(
                dims,
                [$o.stride_h, $o.stride_w, $o.dilation_h, $o.dilation_w],
                ($o.padding, $o.pads.as_slice()),
                $full,
            )?
        };
    }
    let (inputs, macs) = match (&op.options, op_kinds::spatial(opcode)) {
        (OpOptions::None, Spatial::Window | Spatial::Channels) => {
            return Err(cx.refuse(
                "its options (window, padding, axis) were not read from the model",
            ));
        }
        (OpOptions::Conv2d(o), _) => conv!(o, true),
        (OpOptions::DepthwiseConv2d(o), _) => conv!(o, false),
        (OpOptions::AveragePool2d(o), _) | (OpOptions::MaxPool2d(o), _) => {
            let (t, h, w, _) = cx.spatial_input(0, dims)?;
            let mut wh = cx.window(o.filter_h, o.stride_h, 1)?;
            let mut ww = cx.window(o.filter_w, o.stride_w, 1)?;
            wh.before = pad_before(o.padding, None, h, oh, wh);
            ww.before = pad_before(o.padding, None, w, ow, ww);
            (
                vec![(t, [wh, ww])],
                oc * o.filter_h as u64 * o.filter_w as u64,
            )
        }
        (OpOptions::Pad(o), _) => cx.pad(dims, o.before.as_slice(), o.after.as_slice())?,
        (OpOptions::Concatenation(o), _) => cx.concatenation(dims, o.axis)?,
        (_, Spatial::Pointwise) => cx.pointwise(dims)?,
        _ => {
            return Err(cx.refuse(&format!(
                "{opcode} is not spatially local (an output pixel reads more than a window of its input)"
            )));
        }
    };
    // Spatially local, and then only what the kernels run on regions.
    if let Err(why) = crate::patch_plan::stage_op(&op.opcode, graph.tensor(out).dtype, false) {
        let fix = if k == 0 {
            "plan the model without patches".to_string()
        } else {
            format!("pick a split op before op {k}, or plan the model without patches")
        };
        return Err(format!(
            "op {k} ({}) of model `{}` is in the patch stage ending at op {split_op} ({}), but it cannot run on patch regions: {why}; {fix}",
            op.opcode, graph.name, graph.ops[split_op].opcode
        ));
    }
    Ok(Step {
        op: k,
        output: out,
        inputs,
        macs_per_pixel: macs,
    })
}

mod search;
mod uses;

pub use search::{
    Candidate, MAX_GRID, PACKED_CANDIDATES, PatchMode, Scored, SplitRef, apply, build, candidates,
    dense_size, fixed, graph_macs, op_macs, overhead_text, resolve, summary,
};
pub(crate) use search::no_stage;
pub use uses::{pair_allowed, pinned};

#[cfg(test)]
mod tests;
