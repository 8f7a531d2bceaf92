//! The verifier's own reading of a graph's patch plan: what the plan must hold, and the uses
//! it pins in the tensors' lifetimes, written apart from the patch search
//! (`crate::patch`) so that a plan that search should not have made is refused here. The
//! one rule both read is the stage rule of the plan-file crate
//! ([`crate::patch_plan::stage_op`]), which the macro applies as well.

use std::collections::BTreeSet;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use crate::graph::{Graph, TensorIndex};
use crate::patch_plan::PatchInput;

/// The uses the patch plan adds to the tensors' true use, `(tensor, op)`: every patch writes
/// a tile of the split op's output, so it is in use from op 0; every patch reads its region
/// of a model input the stage keeps resident, so that input is in use up to the split op.
pub(super) fn pinned_uses(graph: &Graph) -> Vec<(TensorIndex, u32)> {
    let Some(plan) = graph.patches.as_ref() else {
        return Vec::new();
    };
    let split = plan.split;
    let tile = graph
        .ops
        .get(split as usize)
        .and_then(|op| op.outputs.first().copied())
        .map(|t| (t, 0));
    let resident = graph
        .inputs
        .iter()
        .filter(|_| plan.input == PatchInput::Resident)
        .filter(|io| plan.tensors.iter().any(|e| e.tensor == io.tensor.0))
        .map(|io| (io.tensor, split));
    tile.into_iter().chain(resident).collect()
}

/// The verifier's checks of a graph's patch plan, one message per violation: the split op
/// exists and its output is listed; every listed tensor is `[1, H, W, C]` with one region
/// per patch inside it; the split tensor's regions tile it (every pixel in exactly one
/// patch); each stage op's output is listed, and a dense stage tensor is read by stage ops
/// only, is no model output and takes its largest region's bytes; each stage op passes the
/// stage rule ([`crate::patch_plan::stage_op`]: its kind, its output type, not in place),
/// and an in-place pair inside the stage has the same region in every patch.
pub(super) fn checks(graph: &Graph) -> Vec<String> {
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
    for (k, op) in graph.ops.iter().enumerate().take(split + 1) {
        let Some(&out) = op.outputs.first() else {
            continue;
        };
        let in_place = graph.in_place.iter().find(|ip| ip.output == out);
        if let Err(why) =
            crate::patch_plan::stage_op(&op.opcode, graph.tensor(out).dtype, in_place.is_some())
        {
            bad.push(format!(
                "op {k} ({}) of model `{model}` cannot run in the patch stage (ops 0..={split}): {why}",
                op.opcode
            ));
        } else if let Some(ip) = in_place
            && !same_dense_regions(graph, ip.input, ip.output)
        {
            bad.push(format!(
                "op {k} ({}) runs in place inside the patch stage, but `{}` and `{}` differ in region or layout",
                op.opcode,
                graph.tensor(ip.input).id,
                graph.tensor(ip.output).id
            ));
        }
    }
    bad
}

/// True when `a` and `b` are both dense stage tensors with the same region in every patch:
/// an op inside the stage may then write `b` over `a`, each patch's output exactly over its
/// input's bytes.
fn same_dense_regions(graph: &Graph, a: TensorIndex, b: TensorIndex) -> bool {
    let Some(plan) = graph.patches.as_ref() else {
        return false;
    };
    let regions = |t: TensorIndex| {
        plan.tensors
            .iter()
            .find(|e| e.tensor == t.0)
            .filter(|_| graph.dense_size(t).is_some())
            .map(|e| &e.regions)
    };
    matches!((regions(a), regions(b)), (Some(x), Some(y)) if x == y)
}
