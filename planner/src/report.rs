//! Reports of a finished plan: a table for people, JSON for tools, `explain` lines.
//!
//! The JSON object's keys are the [`MemoryPlan`](crate::plan::MemoryPlan) fields
//! (`tensor_allocs`, `arena_usages`, `persistent_arenas`, `constant_arenas`,
//! `tensor_lifetimes`) plus `format_version`, `model`, `planner` and `op_order`: the model's
//! op indices in the order the plan runs them (present whether or not the order differs from
//! the model's), so a checker can recompute every lifetime from the model and the order.

use std::fmt::Write as _;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::graph::Graph;
use crate::pipeline::Planned;

pub(crate) mod control;
mod group;
mod problem;
pub use group::{group_csv, group_explain, group_json, group_table, group_title};
pub use problem::{problem_explain, problem_explain_rows, problem_json, problem_table};

/// Version of the JSON report's shape.
pub const JSON_FORMAT_VERSION: u32 = 1;

/// The plan as one JSON object (pretty-printed, keys in a fixed order).
pub fn json(planned: &Planned) -> String {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        format_version: u32,
        model: &'a str,
        planner: &'a str,
        op_order: &'a [u32],
        #[serde(flatten)]
        plan: &'a crate::plan::MemoryPlan,
        #[serde(skip_serializing_if = "Option::is_none")]
        in_place: Option<InPlaceJson>,
        #[serde(skip_serializing_if = "Option::is_none")]
        patches: Option<PatchJson>,
        #[serde(skip_serializing_if = "Option::is_none")]
        kernels: Option<KernelFigures>,
    }
    /// `memory.patches`: the stage, its grid and figures, each stage tensor's regions.
    #[derive(serde::Serialize)]
    struct PatchJson {
        split_op: u32,
        split_opcode: String,
        split_tensor: String,
        grid: [u32; 2],
        input: crate::patch_plan::PatchInput,
        scratch_used: u64,
        macs: u64,
        patch_macs: u64,
        mac_overhead_percent: f64,
        tensors: Vec<PatchTensorJson>,
    }
    #[derive(serde::Serialize)]
    struct PatchTensorJson {
        id: String,
        layout: &'static str,
        size: u64,
        regions: Vec<[u32; 4]>,
    }
    /// `memory.in_place`: the classic bound beside this plan.
    #[derive(serde::Serialize)]
    struct InPlaceJson {
        classic_lower_bound: u64,
        scratch_used: u64,
        saved: u64,
        folded_pads: Vec<String>,
        ops_in_place: Vec<String>,
    }
    let in_place = planned.classic_bound.map(|classic| {
        let used: u64 = planned.scratch_reports.iter().map(|r| r.used).sum();
        let g = &planned.graph;
        InPlaceJson {
            classic_lower_bound: classic,
            scratch_used: used,
            saved: classic.saturating_sub(used),
            folded_pads: g
                .folded_pads
                .iter()
                .map(|f| g.tensor(f.padded).id.clone())
                .collect(),
            ops_in_place: g
                .in_place
                .iter()
                .map(|p| g.tensor(p.output).id.clone())
                .collect(),
        }
    });
    let patches = planned.graph.patches.as_ref().map(|p| {
        let g = &planned.graph;
        let split = g.ops.get(p.split as usize);
        PatchJson {
            split_op: p.split,
            split_opcode: split.map(|o| o.opcode.clone()).unwrap_or_default(),
            split_tensor: split
                .and_then(|o| o.outputs.first())
                .map(|&t| g.tensor(t).id.clone())
                .unwrap_or_default(),
            grid: p.grid,
            input: p.input,
            scratch_used: planned.scratch_reports.iter().map(|r| r.used).sum(),
            macs: p.macs,
            patch_macs: p.patch_macs,
            mac_overhead_percent: if p.macs == 0 {
                0.0
            } else {
                ((p.patch_macs as f64 / p.macs as f64 - 1.0) * 1000.0).round() / 10.0
            },
            tensors: p
                .tensors
                .iter()
                .filter_map(|e| {
                    let t = g.tensors.get(e.tensor as usize)?;
                    Some(PatchTensorJson {
                        id: t.id.clone(),
                        layout: match g.dense_size(crate::graph::TensorIndex(e.tensor)) {
                            Some(_) => "dense",
                            None => "whole",
                        },
                        size: t.size,
                        regions: e.regions.clone(),
                    })
                })
                .collect(),
        }
    });
    let out = Out {
        format_version: JSON_FORMAT_VERSION,
        model: &planned.model,
        planner: &planned.planner,
        op_order: &planned.order,
        plan: &planned.plan,
        in_place,
        patches,
        kernels: kernel_figures(planned),
    };
    // Serialising plain maps, strings and integers cannot fail.
    serde_json::to_string_pretty(&out).unwrap_or_default()
}

fn fmt_budget(b: Option<u64>) -> String {
    b.map_or_else(|| "unlimited".into(), |b| b.to_string())
}

/// A table for people: per arena (memory, role, used, budget, lower bound, fragmentation),
/// then one row per tensor.
pub fn table(planned: &Planned, graph: &Graph) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "model {} · planner {} · {} ops · {} tensors",
        planned.model,
        planned.planner,
        planned.ops,
        graph.tensors.len()
    );
    let _ = writeln!(s);
    let mut rows: Vec<[String; 8]> = vec![[
        "memory".into(),
        "role".into(),
        "source".into(),
        "used".into(),
        "budget".into(),
        "lower bound".into(),
        "fragmentation".into(),
        "optimal".into(),
    ]];
    for r in &planned.scratch_reports {
        let a = &planned.plan.arena_usages[&r.memory];
        rows.push([
            r.memory.clone(),
            "scratch".into(),
            a.source_memory.clone(),
            r.used.to_string(),
            fmt_budget(r.budget),
            r.lower_bound.to_string(),
            r.fragmentation.to_string(),
            if r.optimal { "yes".into() } else { "-".into() },
        ]);
    }
    for a in planned
        .plan
        .persistent_arenas
        .values()
        .chain(planned.plan.constant_arenas.values())
    {
        rows.push([
            a.memory.clone(),
            if a.is_staged() {
                "constant (staged)".into()
            } else {
                a.role.name().into()
            },
            a.source_memory.clone(),
            a.used.to_string(),
            a.total_size.to_string(),
            "-".into(),
            "-".into(),
            "-".into(),
        ]);
    }
    write_rows(&mut s, &rows);
    s.push_str(&kernel_summary(planned));
    s.push_str(&in_place_summary(planned));
    s.push_str(&patch_summary(planned));
    let _ = writeln!(s);
    let accessors = accessor_names(planned, graph);
    let mut rows: Vec<[String; 8]> = vec![[
        "id".into(),
        "name".into(),
        "accessor".into(),
        "role".into(),
        "memory".into(),
        "offset".into(),
        "size".into(),
        "ops".into(),
    ]];
    for (i, t) in graph.tensors.iter().enumerate() {
        let Some(a) = planned.plan.tensor_allocs.get(&t.id) else {
            continue;
        };
        let Some(b) = &a.binding else { continue };
        let accessor = accessors[i].clone().unwrap_or_default();
        let lt = planned.plan.tensor_lifetimes.get(&t.id);
        let memory = if b.is_staged() {
            format!("{}<-{}", b.memory, b.source_memory)
        } else {
            b.memory.clone()
        };
        rows.push([
            t.id.clone(),
            truncate(&t.name, 48),
            accessor,
            b.role.name().into(),
            memory,
            b.offset.to_string(),
            a.size.to_string(),
            lt.map_or_else(String::new, |l| format!("{}..={}", l.start_op, l.end_op)),
        ]);
    }
    write_rows(&mut s, &rows);
    s
}

/// Per tensor of `graph`: the method of `include_model!`'s ready `Model` that returns its
/// view (`tensor_<name>`, then `input_<name>`/`output_<name>` for model inputs and outputs),
/// named as the macro names them; `None` for tensors the plan does not place.
pub(crate) fn accessor_names(planned: &Planned, graph: &Graph) -> Vec<Option<String>> {
    use crate::planfile::naming::unique_idents;
    // As the plan file lists them: placed tensors, and aliases placed through their target.
    let target: std::collections::BTreeMap<usize, usize> = graph
        .aliases
        .iter()
        .map(|&(a, t)| (a.get(), t.get()))
        .collect();
    let placed_at = |mut i: usize| {
        for _ in 0..=graph.tensors.len() {
            if planned
                .plan
                .tensor_allocs
                .contains_key(&graph.tensors[i].id)
            {
                return true;
            }
            match target.get(&i) {
                Some(&t) if t != i && t < graph.tensors.len() => i = t,
                _ => return false,
            }
        }
        false
    };
    let placed: Vec<usize> = (0..graph.tensors.len()).filter(|&i| placed_at(i)).collect();
    let idents = unique_idents(placed.iter().map(|&i| graph.tensors[i].name.as_str()));
    let mut out = vec![None; graph.tensors.len()];
    for (&i, ident) in placed.iter().zip(&idents) {
        out[i] = Some(format!("tensor_{ident}"));
    }
    for (kind, list) in [("input", &graph.inputs), ("output", &graph.outputs)] {
        let names = unique_idents(list.iter().map(|io| io.name.as_str()));
        for (io, name) in list.iter().zip(&names) {
            if let Some(Some(a)) = out.get_mut(io.tensor.get()) {
                let _ = write!(a, ", {kind}_{name}");
            }
        }
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.into()
    } else {
        let head: String = s.chars().take(n - 1).collect();
        format!("{head}…")
    }
}

/// Writes `rows` in columns two spaces apart: numbers (past the first column) aligned
/// right, the rest left.
fn write_rows<const N: usize>(s: &mut String, rows: &[[String; N]]) {
    write_columns(s, rows, |k, c| {
        k > 0 && c.chars().all(|ch| ch.is_ascii_digit()) && !c.is_empty()
    });
}

/// Writes `rows` in columns as wide as their widest cell, two spaces apart: the cell `c` of
/// column `k` aligned right where `right(k, c)`, else left.
fn write_columns<const N: usize>(
    s: &mut String,
    rows: &[[String; N]],
    right: impl Fn(usize, &str) -> bool,
) {
    let mut widths = [0usize; N];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    for r in rows {
        let mut line = String::new();
        for (k, (c, w)) in r.iter().zip(widths).enumerate() {
            if right(k, c) {
                let _ = write!(line, "{c:>w$}  ");
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}

/// With `memory.in_place`: one line with the classic lower bound beside the plan's scratch
/// bytes and what in-place saved; empty otherwise.
pub(crate) fn in_place_summary(planned: &Planned) -> String {
    let Some(classic) = planned.classic_bound else {
        return String::new();
    };
    let used: u64 = planned.scratch_reports.iter().map(|r| r.used).sum();
    let saved = classic.saturating_sub(used);
    let pct = if classic == 0 {
        0.0
    } else {
        saved as f64 * 100.0 / classic as f64
    };
    let rows = planned.graph.in_place.iter().filter(|p| p.rows).count();
    format!(
        "in place: classic lower bound {classic} B, this plan {used} B ({saved} B, {pct:.1}% below); {} PADs folded, {} ops run in place, {rows} with row overlap\n",
        planned.graph.folded_pads.len(),
        planned.graph.in_place.len() - rows
    )
}

/// With `memory.in_place`: one line per folded PAD and per op that runs in place (in plan
/// order); empty otherwise.
pub fn in_place_ops(planned: &Planned) -> String {
    let g = &planned.graph;
    let mut s = String::new();
    for f in &g.folded_pads {
        let consumer = g.producer(f.consumer_output).map_or_else(
            || "?".to_string(),
            |k| format!("op {k} ({})", g.ops[k].opcode),
        );
        let _ = writeln!(
            s,
            "folded: model op {} ({}) into {consumer}, explicit pads [top, bottom, left, right] = {:?}; `{}` left the plan",
            f.op,
            f.opcode,
            f.pads,
            g.tensor(f.padded).id
        );
    }
    for p in &g.in_place {
        let Some(k) = g.producer(p.output) else {
            continue;
        };
        let temp = p
            .temp
            .map(|t| format!(", temporary `{}` +{}", g.tensor(t).id, g.tensor(t).size))
            .unwrap_or_default();
        let (op, y, x) = (&g.ops[k].opcode, &g.tensor(p.output).id, &g.tensor(p.input).id);
        let _ = if p.rows {
            writeln!(
                s,
                "row overlap: op {k} ({op}) writes `{y}` over the rows of `{x}` it has read"
            )
        } else {
            writeln!(s, "in place: op {k} ({op}) writes `{y}` over `{x}`{temp}")
        };
    }
    s
}

/// One line per tensor (or only tensor `only`, by id or name):
/// `<id> <name>: <role>/<memory>[<-source>] @<offset> +<size> — <why>`.
pub fn explain(planned: &Planned, graph: &Graph, only: Option<&str>) -> String {
    let mut s = String::new();
    if only.is_none() {
        s.push_str(&moved_ops(planned));
        s.push_str(&kernel_summary(planned));
        s.push_str(&prepared_ops(planned));
        s.push_str(&in_place_summary(planned));
        s.push_str(&in_place_ops(planned));
        s.push_str(&patch_summary(planned));
        s.push_str(&patch_regions(planned, None));
        if !graph.control.is_empty() {
            s.push_str(&control::summary(graph));
        }
    } else {
        s.push_str(&patch_regions(planned, only));
    }
    for (i, t) in graph.tensors.iter().enumerate() {
        if only.is_some_and(|o| o != t.id && o != t.name) {
            continue;
        }
        let d = planned.decisions.get(i).and_then(|d| d.as_ref());
        match (d, planned.plan.binding(&t.id)) {
            (Some(d), Some(b)) => {
                let src = if b.is_staged() {
                    format!("<-{}", b.source_memory)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    s,
                    "{} {}: {}/{}{src} @{} +{} — {}{}",
                    t.id,
                    t.name,
                    b.role.name(),
                    b.memory,
                    b.offset,
                    t.size,
                    d.reason,
                    control::place_of(graph, i)
                );
            }
            _ if t.dtype == crate::graph::DType::Resource => {
                let _ = writeln!(
                    s,
                    "{} {}: unplaced — a resource variable's handle, resolved to the variable's own tensor when the model was read",
                    t.id, t.name
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "{} {}: unplaced +{} — unused: no op reads or writes it and it is not a model input or output",
                    t.id, t.name, t.size
                );
            }
        }
    }
    s
}

/// The header row of `explain` as rows, for a model and for a CSV problem.
pub(crate) const EXPLAIN_HEADER: [&str; 9] = [
    "model",
    "tensor",
    "name",
    "role",
    "memory",
    "source_memory",
    "offset",
    "size",
    "reason",
];

/// `explain` as rows for machine-readable output: a header (`model`, `tensor`, `name`,
/// `role`, `memory`, `source_memory`, `offset`, `size`, `reason`), then one row per tensor
/// (`only`: the one with that id or name); an unused tensor has role `unplaced` and empty
/// memory and offset.
#[doc(hidden)]
pub fn explain_rows(planned: &Planned, only: Option<&str>) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = vec![EXPLAIN_HEADER.iter().map(|s| s.to_string()).collect()];
    let patches = planned.graph.patches.as_ref();
    if patches.is_some() {
        rows[0].push("regions".to_string());
    }
    let kernels = kernel_roles(planned);
    if kernels.is_some() {
        rows[0].push("kernels".to_string());
    }
    for (i, t) in planned.graph.tensors.iter().enumerate() {
        if only.is_some_and(|o| o != t.id && o != t.name) {
            continue;
        }
        let d = planned.decisions.get(i).and_then(|d| d.as_ref());
        let row = match (d, planned.plan.binding(&t.id)) {
            (Some(d), Some(b)) => vec![
                b.role.name().to_string(),
                b.memory.clone(),
                b.source_memory.clone(),
                b.offset.to_string(),
                t.size.to_string(),
                format!(
                    "{}{}",
                    d.reason,
                    control::place_of(&planned.graph, i)
                ),
            ],
            _ => vec![
                "unplaced".into(),
                String::new(),
                String::new(),
                String::new(),
                t.size.to_string(),
                "unused: no op reads or writes it and it is not a model input or output".into(),
            ],
        };
        let mut full = vec![planned.model.clone(), t.id.clone(), t.name.clone()];
        full.extend(row);
        if let Some(p) = patches {
            full.push(
                p.tensor(i as u32)
                    .map(|e| regions_text(&e.regions))
                    .unwrap_or_default(),
            );
        }
        if let Some(roles) = &kernels {
            full.push(roles.get(&i).cloned().unwrap_or_default());
        }
        rows.push(full);
    }
    rows
}

/// The kernel set of a plan made for one that asks for something (`[kernels] set =
/// "optimized"`), with its figures: what the planner prepared, the kernel scratch it
/// planned, and the kernel scratch the other set would need. `None` for the reference set,
/// whose reports stay as they were.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[doc(hidden)]
pub struct KernelFigures {
    /// The set the plan is made for.
    pub set: crate::graph::KernelSet,
    /// Ops given a prepared constant.
    pub prepared_ops: usize,
    /// Bytes of the prepared constants, together.
    pub prepared_bytes: u64,
    /// The kernel scratch the plan holds.
    pub kernel_scratch: ScratchFigures,
    /// The other set.
    pub other_set: crate::graph::KernelSet,
    /// The kernel scratch the other set would need.
    pub other_set_kernel_scratch: ScratchFigures,
}

/// Kernel scratch buffers: how many ops have one, their bytes together and the largest
/// (each lives at its op only, so a plan's scratch peak grows by at most the largest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[doc(hidden)]
pub struct ScratchFigures {
    /// Ops with kernel scratch.
    pub ops: usize,
    /// Bytes over all of them.
    pub bytes: u64,
    /// Bytes of the largest.
    pub largest: u64,
}

impl ScratchFigures {
    fn of(sizes: impl IntoIterator<Item = u64>) -> ScratchFigures {
        sizes
            .into_iter()
            .fold(ScratchFigures::default(), |f, b| ScratchFigures {
                ops: f.ops + 1,
                bytes: f.bytes.saturating_add(b),
                largest: f.largest.max(b),
            })
    }

    fn text(&self) -> String {
        match self.ops {
            0 => "none".to_string(),
            1 => format!("1 op, {} bytes", self.bytes),
            n => format!(
                "{n} ops, {} bytes (at most {} at one op)",
                self.bytes, self.largest
            ),
        }
    }
}

/// The figures of [`KernelFigures`]; `None` for a plan made for the reference set.
#[doc(hidden)]
pub fn kernel_figures(planned: &Planned) -> Option<KernelFigures> {
    (planned.graph.kernels != crate::graph::KernelSet::Reference).then(|| figures(planned))
}

/// [`KernelFigures`] of any plan (a reference plan's prepare nothing).
pub(crate) fn figures(planned: &Planned) -> KernelFigures {
    use crate::graph::KernelSet;
    let g = &planned.graph;
    let size = |t: crate::graph::TensorIndex| g.tensors.get(t.get()).map_or(0, |t| t.size);
    let constants: Vec<u64> = g
        .prepared
        .iter()
        .filter_map(|p| p.constant.map(|(_, t)| size(t)))
        .collect();
    let other = KernelSet::ALL
        .into_iter()
        .find(|&s| s != g.kernels)
        .unwrap_or(KernelSet::Reference);
    KernelFigures {
        set: g.kernels,
        prepared_ops: constants.len(),
        prepared_bytes: constants.iter().sum(),
        kernel_scratch: ScratchFigures::of(
            g.prepared.iter().flat_map(|p| p.scratch.iter().map(|&t| size(t))),
        ),
        other_set: other,
        other_set_kernel_scratch: ScratchFigures::of(
            crate::prepare::kernel_scratch(g, other)
                .into_iter()
                .map(|(_, b)| b),
        ),
    }
}

/// One line on the kernel set: its prepared constants, its kernel scratch and the other
/// set's; empty for the reference set.
pub(crate) fn kernel_summary(planned: &Planned) -> String {
    let Some(k) = kernel_figures(planned) else {
        return String::new();
    };
    let other = match k.other_set_kernel_scratch.ops {
        0 => "none".to_string(),
        _ => k.other_set_kernel_scratch.text(),
    };
    format!(
        "kernels: {} · prepared constants: {} ops, {} bytes · kernel scratch: {}; the {} set needs {other}\n",
        k.set.name(),
        k.prepared_ops,
        k.prepared_bytes,
        k.kernel_scratch.text(),
        k.other_set.name(),
    )
}

/// One line per op the kernel set's preparation changed (in plan order): its prepared
/// constant input and its kernel scratch. Empty for the reference set.
pub fn prepared_ops(planned: &Planned) -> String {
    let g = &planned.graph;
    let mut s = String::new();
    for (k, op) in g.ops.iter().enumerate() {
        let Some(p) = g.prepared_of(op) else {
            continue;
        };
        let mut parts = Vec::new();
        if let Some((layout, t)) = p.constant {
            let input = op.inputs.iter().position(|&i| i == Some(t));
            parts.push(format!(
                "reads `{}` ({}, {} bytes) as input {}",
                g.tensor(t).id,
                layout.name(),
                g.tensor(t).size,
                input.map_or_else(|| "?".to_string(), |i| i.to_string())
            ));
        }
        for &t in &p.scratch {
            let at = op.scratch.iter().position(|&x| x == t);
            parts.push(format!(
                "kernel scratch `{}` ({} bytes) as scratch {}",
                g.tensor(t).id,
                g.tensor(t).size,
                at.map_or_else(|| "?".to_string(), |i| i.to_string())
            ));
        }
        let _ = writeln!(s, "prepared: op {k} ({}) {}", op.opcode, parts.join("; "));
    }
    s
}

/// For a plan made for a kernel set other than the reference one: what each tensor the
/// preparation added is to its op (`requant-v1 input 3 of op 0`, `kernel scratch 0 of op
/// 0`), by graph index.
fn kernel_roles(planned: &Planned) -> Option<std::collections::BTreeMap<usize, String>> {
    let g = &planned.graph;
    if g.kernels == crate::graph::KernelSet::Reference {
        return None;
    }
    let mut out = std::collections::BTreeMap::new();
    for (k, op) in g.ops.iter().enumerate() {
        let Some(p) = g.prepared_of(op) else {
            continue;
        };
        if let Some((layout, t)) = p.constant
            && let Some(i) = op.inputs.iter().position(|&x| x == Some(t))
        {
            out.insert(t.get(), format!("{} input {i} of op {k}", layout.name()));
        }
        for &t in &p.scratch {
            if let Some(j) = op.scratch.iter().position(|&x| x == t) {
                out.insert(t.get(), format!("kernel scratch {j} of op {k}"));
            }
        }
    }
    Some(out)
}

/// The planned graph with its ops back in model order and without in-place aliases: the
/// graph the scheduler saw.
fn in_model_order(planned: &Planned) -> Option<Graph> {
    let g = &planned.graph;
    if planned.order.len() != g.ops.len() {
        return None;
    }
    let mut ops: Vec<Option<crate::graph::Op>> = vec![None; g.ops.len()];
    for (k, &o) in planned.order.iter().enumerate() {
        *ops.get_mut(o as usize)? = Some(g.ops[k].clone());
    }
    let mut model = g.clone();
    model.ops = ops.into_iter().collect::<Option<Vec<_>>>()?;
    model.aliases.clear();
    // The patch stage's op indices are the plan's, not the model's.
    model.patches = None;
    Some(model)
}

/// One line on the op order: the peak of live bytes (sizes rounded to `align`, before
/// in-place aliasing) in the plan's order and in the model's, the lower bound over every
/// order, and "this order is optimal" when no order is lower. Those are figures of whole
/// tensors: when the plan runs ops in place, folds PADs or runs a patch stage, its arena is
/// planned on other terms (below them, or above a bound that leaves the patch stage out),
/// and the line says so. Empty for graphs without ops.
#[doc(hidden)]
pub fn order_summary(planned: &Planned, align: u64) -> String {
    let g = &planned.graph;
    if !g.control.is_empty() {
        return control::summary(g);
    }
    let below = !g.in_place.is_empty() || !g.folded_pads.is_empty() || g.patches.is_some();
    match in_model_order(planned) {
        Some(model) if !model.ops.is_empty() => {
            let line = crate::schedule::summary(&model, &planned.order, align);
            if below {
                line + " (of whole tensors, each in its own bytes: this plan's in-place ops, \
                        folded PADs or patch stage are not in these figures)\n"
            } else {
                line + "\n"
            }
        }
        _ => String::new(),
    }
}

/// Which ops the plan's order moved from their model position: `op order: model order kept`,
/// or a count and one line per moved op,
/// `op <model index> <opcode>: step <model index> in the model, runs at step <step>`.
pub(crate) fn moved_ops(planned: &Planned) -> String {
    let moved = crate::schedule::moved(&planned.order);
    if moved.is_empty() {
        return if planned.graph.ops.is_empty() {
            String::new()
        } else {
            "op order: model order kept\n".into()
        };
    }
    let mut s = format!(
        "op order: {} of {} ops run at another step than in the model\n",
        moved.len(),
        planned.order.len()
    );
    for (o, step) in moved {
        let opcode = planned
            .graph
            .ops
            .get(step as usize)
            .map_or("?", |op| op.opcode.as_str());
        let _ = writeln!(
            s,
            "op {o} {opcode}: step {o} in the model, runs at step {step}"
        );
    }
    s
}

/// One line on the patch stage (`memory.patches`): the split op, the grid, the scratch
/// peak, the MAC overhead and the input mode. Empty without patches.
pub(crate) fn patch_summary(planned: &Planned) -> String {
    let Some(p) = &planned.graph.patches else {
        return String::new();
    };
    let used: u64 = planned.scratch_reports.iter().map(|r| r.used).sum();
    format!(
        "patches: {} · scratch peak {used} bytes\n",
        crate::patch::summary(&planned.graph, p)
    )
}

/// `[top,left,height,width]` per patch, space-separated.
fn regions_text(regions: &[[u32; 4]]) -> String {
    regions
        .iter()
        .map(|r| format!("[{},{},{},{}]", r[0], r[1], r[2], r[3]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line per tensor of the patch stage (`only`: the one with that id or name): its
/// layout (dense, at its largest region's bytes, or whole), its bytes and its region per
/// patch, row by row over the grid. Empty without patches.
pub fn patch_regions(planned: &Planned, only: Option<&str>) -> String {
    let g = &planned.graph;
    let Some(p) = &g.patches else {
        return String::new();
    };
    let mut s = String::new();
    for e in &p.tensors {
        let Some(t) = g.tensors.get(e.tensor as usize) else {
            continue;
        };
        if only.is_some_and(|o| o != t.id && o != t.name) {
            continue;
        }
        let layout = match g.dense_size(crate::graph::TensorIndex(e.tensor)) {
            Some(_) => "dense",
            None => "whole",
        };
        let _ = writeln!(
            s,
            "patch stage: {} {} ({layout}, {} bytes, shape {:?}): {}",
            t.id,
            t.name,
            t.size,
            t.shape,
            regions_text(&e.regions)
        );
    }
    s
}
