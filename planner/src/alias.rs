//! Reshape aliases: the output of a reshape-like op (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST:
//! the op-kind table's `reshape` column), which is its input's bytes under another shape,
//! takes its input's slot when the input dies there (`memory.alias_reshapes = true`). Ops
//! that compute their output over an input run in place instead ([`crate::in_place`]).
//!
//! An alias is made only when the input is an activation of the same byte size whose last use
//! (counting every tensor already sharing its slot) is this op, so the two are never live
//! with different contents; lifetimes then merge ([`crate::lifetimes`]).

use std::vec::Vec;

use crate::graph::{Graph, TensorIndex, TensorKind};
use crate::manifest::Aliasing;

/// The aliases `aliasing` allows in `graph` (in its current op order), as `(output, input)`
/// pairs for [`Graph::aliases`]. None in a graph with control flow ([`Graph::control`]): an
/// op's last reader in the op list need not be its last reader in time there.
pub fn detect(graph: &Graph, aliasing: &Aliasing) -> Vec<(TensorIndex, TensorIndex)> {
    let n = graph.tensors.len();
    if n == 0 || !aliasing.reshapes || !graph.control.is_empty() {
        return Vec::new();
    }
    let mut last_use = vec![0usize; n];
    let mut first_use = vec![usize::MAX; n];
    let mut used = vec![false; n];
    for (k, op) in graph.ops.iter().enumerate() {
        for t in op.tensors() {
            last_use[t.get()] = k;
            first_use[t.get()] = first_use[t.get()].min(k);
            used[t.get()] = true;
        }
    }
    let mut forever = vec![false; n];
    for io in &graph.outputs {
        forever[io.tensor.get()] = true;
    }
    let is_input: Vec<bool> = {
        let mut v = vec![false; n];
        for io in &graph.inputs {
            v[io.tensor.get()] = true;
        }
        v
    };
    // Slot groups: root per tensor, and the group's last use and output-ness.
    let mut root: Vec<usize> = (0..n).collect();
    let mut group_last = last_use.clone();
    let mut group_forever = forever.clone();
    let mut out = Vec::new();
    for (k, op) in graph.ops.iter().enumerate() {
        if !crate::rt::op_kinds::reshape(&op.opcode) || op.outputs.len() != 1 {
            continue;
        }
        let o = op.outputs[0].get();
        let ot = &graph.tensors[o];
        // The output must come to life here, or the two would be live together.
        if ot.kind != TensorKind::Activation || is_input[o] || root[o] != o || first_use[o] != k {
            continue;
        }
        let pick = op.inputs.first().copied().flatten().map(|t| t.get()).filter(|&i| {
            let it = &graph.tensors[i];
            let r = root[i];
            i != o
                && it.kind == TensorKind::Activation
                && used[i]
                && it.size == ot.size
                && ot.dtype.align() <= it.dtype.align()
                && ot.align_hint.unwrap_or(1) <= it.align_hint.unwrap_or(1)
                && !group_forever[r]
                && group_last[r] == k
                // The input is read only once by this op (not also as a second operand).
                && op.inputs.iter().flatten().filter(|t| t.get() == i).count() == 1
        });
        if let Some(i) = pick {
            let r = root[i];
            root[o] = r;
            group_last[r] = group_last[r].max(last_use[o]);
            group_forever[r] |= forever[o];
            out.push((TensorIndex(o as u32), TensorIndex(i as u32)));
        }
    }
    out
}

