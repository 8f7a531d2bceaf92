//! Choosing a patch plan: the MACs of ops and stages, the candidates of a split op and grid
//! (fixed by the manifest or ranked for `patches = "auto"`), and applying one to the graph.

use super::*;

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
    dtype.bytes_for(plan.dense_elements(t, split, inputs, shape)?)
}

// ---- choosing ---------------------------------------------------------------------------

pub use crate::manifest::{PatchMode, SplitRef};

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

/// When no op of `graph` ends a patch stage at all: why the first op with a `[1, H, W, C]`
/// output cannot (an ancestor that cannot run on patches: the op that blocks every split,
/// and the fix), or that no op has such an output. `None` when some op ends a stage.
pub(crate) fn no_stage(graph: &Graph) -> Option<String> {
    let mut first = None;
    for (k, op) in graph.ops.iter().enumerate() {
        let Some(&t) = op.outputs.first() else {
            continue;
        };
        if hwc(graph, t).is_none() {
            continue;
        }
        match Stage::of(graph, k) {
            Ok(_) => return None,
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Some(first.unwrap_or_else(|| {
        format!(
            "no op of model `{}` has a [1, H, W, C] output to split (a patch stage ends at such an op)",
            graph.name
        )
    }))
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
