//! What a patch plan means for the rest of the planner: the uses it pins in lifetimes and
//! the in-place pairs it allows. The verifier reads the plan on its own
//! (`verify/patch_rule.rs`).

use super::*;

/// The uses a patch plan adds to `graph`'s lifetimes, `(tensor, op)`: the split tensor at
/// op 0 (every patch writes its tile, so it lives through the whole stage) and each
/// resident model input the stage reads at the split op (every patch reads its region).
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
/// under the graph's patch plan: always after the stage; inside it, only when the stage
/// rule lets the op run in place ([`crate::patch_plan::stage_op`]: the in-place kernels run
/// on whole tensors only, so never today) and both are dense stage tensors with the same
/// region in every patch, so each patch's output overwrites exactly its input's bytes.
pub fn pair_allowed(graph: &Graph, k: usize, input: TensorIndex, output: TensorIndex) -> bool {
    let Some(plan) = &graph.patches else {
        return true;
    };
    if k > plan.split as usize {
        return true;
    }
    let Some(op) = graph.ops.get(k) else {
        return false;
    };
    if crate::patch_plan::stage_op(&op.opcode, graph.tensor(output).dtype, true).is_err() {
        return false;
    }
    let dense = |t: TensorIndex| graph.dense_size(t).is_some();
    match (plan.tensor(input.0), plan.tensor(output.0)) {
        (Some(a), Some(b)) => dense(input) && dense(output) && a.regions == b.regions,
        _ => false,
    }
}
