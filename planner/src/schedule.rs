//! Operator order: keep the model's, or find a topological order with a lower peak of live
//! bytes (`memory.schedule = "memory"`).
//!
//! Dependencies: an op runs after every op that writes a tensor it reads; ops that touch the
//! same variable (state) tensor, and ops with no outputs, keep their relative order, since
//! they have effects beyond the dataflow. Among ready ops, a few list-scheduling rules (the
//! op whose step peak is lowest; the op that frees the most bytes net) each build an order; the
//! lowest-peak order wins, and the model's own order is kept unless one is strictly lower.
//! Everything is deterministic: ties go to the op that came first in the model.

use std::collections::BTreeSet;
use std::vec::Vec;

use crate::graph::{Graph, TensorKind};
use crate::plan::align_up;

/// The result of scheduling: the reordered graph and, per step, the original op index.
#[derive(Debug, Clone)]
pub struct Scheduled {
    /// The graph with its ops in the new order.
    pub graph: Graph,
    /// `order[k]` is the original index of the op that runs k-th.
    pub order: Vec<u32>,
    /// Peak of live activation bytes (sizes rounded to `align`) in the model's order.
    pub peak_before: u64,
    /// The same in the new order.
    pub peak_after: u64,
}

struct Deps {
    /// Per op: ops that must run before it.
    preds: Vec<Vec<usize>>,
    /// Per op: ops that must run after it.
    succs: Vec<Vec<usize>>,
}

fn dependencies(graph: &Graph) -> Deps {
    let n_ops = graph.ops.len();
    let n = graph.tensors.len();
    let mut preds: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n_ops];
    let mut last_writer: Vec<Option<usize>> = vec![None; n];
    let mut last_toucher_of_state: Vec<Option<usize>> = vec![None; n];
    let mut last_effect: Option<usize> = None;
    for (k, op) in graph.ops.iter().enumerate() {
        for t in op.inputs.iter().flatten() {
            if let Some(w) = last_writer[t.get()] {
                preds[k].insert(w);
            }
        }
        for t in op.tensors() {
            if graph.tensors[t.get()].kind == TensorKind::Variable {
                if let Some(p) = last_toucher_of_state[t.get()]
                    && p != k
                {
                    preds[k].insert(p);
                }
                last_toucher_of_state[t.get()] = Some(k);
            }
        }
        if op.outputs.is_empty() {
            if let Some(p) = last_effect {
                preds[k].insert(p);
            }
            last_effect = Some(k);
        }
        for t in &op.outputs {
            // A second writer of an activation must follow its readers so far: keep it after
            // every earlier op that touched the tensor.
            if last_writer[t.get()].is_some() {
                for (j, other) in graph.ops.iter().enumerate().take(k) {
                    if other.tensors().any(|x| x == *t) {
                        preds[k].insert(j);
                    }
                }
            }
            last_writer[t.get()] = Some(k);
        }
        preds[k].remove(&k);
    }
    let mut succs = vec![Vec::new(); n_ops];
    for (k, p) in preds.iter().enumerate() {
        for &j in p {
            succs[j].push(k);
        }
    }
    Deps {
        preds: preds.into_iter().map(|s| s.into_iter().collect()).collect(),
        succs,
    }
}

/// True when `order` runs every op exactly once, each after the ops it depends on.
pub fn is_valid_order(graph: &Graph, order: &[u32]) -> bool {
    let n = graph.ops.len();
    if order.len() != n {
        return false;
    }
    let mut pos = vec![usize::MAX; n];
    for (k, &o) in order.iter().enumerate() {
        match pos.get_mut(o as usize) {
            Some(p) if *p == usize::MAX => *p = k,
            _ => return false,
        }
    }
    let deps = dependencies(graph);
    deps.preds
        .iter()
        .enumerate()
        .all(|(k, ps)| ps.iter().all(|&p| pos[p] < pos[k]))
}

/// Peak of live activation bytes (each size rounded up to `align`) when ops run in `order`,
/// with the lifetime rules of [`crate::lifetimes`]: first use to last use, inputs from step
/// 0, outputs to the last step.
pub fn peak(graph: &Graph, order: &[u32], align: u64) -> u64 {
    let n = graph.tensors.len();
    let steps = order.len().max(1);
    let mut first = vec![usize::MAX; n];
    let mut last = vec![0usize; n];
    for (k, &o) in order.iter().enumerate() {
        let Some(op) = graph.ops.get(o as usize) else {
            continue;
        };
        for t in op.tensors() {
            let i = t.get();
            first[i] = first[i].min(k);
            last[i] = last[i].max(k);
        }
    }
    for io in &graph.inputs {
        first[io.tensor.get()] = 0;
    }
    for io in &graph.outputs {
        let i = io.tensor.get();
        first[i] = first[i].min(steps - 1);
        last[i] = steps - 1;
    }
    let mut delta = vec![0i128; steps + 1];
    for (i, t) in graph.tensors.iter().enumerate() {
        if t.kind != TensorKind::Activation || first[i] == usize::MAX {
            continue;
        }
        let size = i128::from(align_up(t.size, align).unwrap_or(u64::MAX));
        delta[first[i]] += size;
        delta[last[i] + 1] -= size;
    }
    let mut cur = 0i128;
    let mut best = 0i128;
    for d in delta {
        cur += d;
        best = best.max(cur);
    }
    u64::try_from(best).unwrap_or(u64::MAX)
}

/// Scheduling rules tried; each builds one order greedily.
#[derive(Clone, Copy)]
enum Rule {
    /// Lowest live bytes during the op, then most bytes freed, then model order.
    LowestStep,
    /// Most bytes freed net of bytes allocated, then model order.
    MostFreed,
}

fn greedy_order(graph: &Graph, deps: &Deps, align: u64, rule: Rule) -> Vec<u32> {
    let n_ops = graph.ops.len();
    let n = graph.tensors.len();
    let size = |i: usize| -> i128 {
        let t = &graph.tensors[i];
        if t.kind == TensorKind::Activation {
            i128::from(align_up(t.size, align).unwrap_or(u64::MAX))
        } else {
            0
        }
    };
    // Remaining readers per tensor; model outputs never die.
    let mut readers = vec![0usize; n];
    for op in &graph.ops {
        let distinct: BTreeSet<usize> = op.tensors().map(|t| t.get()).collect();
        for i in distinct {
            readers[i] += 1;
        }
    }
    let mut pinned_live = vec![false; n];
    for io in &graph.outputs {
        pinned_live[io.tensor.get()] = true;
    }
    let mut live = vec![false; n];
    let mut cur: i128 = 0;
    for io in &graph.inputs {
        let i = io.tensor.get();
        if !live[i] {
            live[i] = true;
            cur += size(i);
        }
    }
    let mut waiting: Vec<usize> = deps.preds.iter().map(|p| p.len()).collect();
    let mut ready: BTreeSet<usize> = (0..n_ops).filter(|&k| waiting[k] == 0).collect();
    let mut order = Vec::with_capacity(n_ops);
    while let Some(choice) = {
        let mut best: Option<(i128, i128, usize)> = None;
        for &k in &ready {
            let op = &graph.ops[k];
            let distinct: BTreeSet<usize> = op.tensors().map(|t| t.get()).collect();
            let alloc: i128 = distinct
                .iter()
                .filter(|&&i| !live[i])
                .map(|&i| size(i))
                .sum();
            let freed: i128 = distinct
                .iter()
                .filter(|&&i| readers[i] == 1 && !pinned_live[i])
                .map(|&i| size(i))
                .sum();
            let key = match rule {
                Rule::LowestStep => (cur + alloc, -(freed - alloc), k),
                Rule::MostFreed => (-(freed - alloc), cur + alloc, k),
            };
            if best.is_none_or(|b| (key.0, key.1, key.2) < b) {
                best = Some(key);
            }
        }
        best.map(|b| b.2)
    } {
        ready.remove(&choice);
        order.push(choice as u32);
        let op = &graph.ops[choice];
        let distinct: BTreeSet<usize> = op.tensors().map(|t| t.get()).collect();
        for &i in &distinct {
            if !live[i] {
                live[i] = true;
                cur += size(i);
            }
        }
        for &i in &distinct {
            readers[i] -= 1;
            if readers[i] == 0 && !pinned_live[i] {
                live[i] = false;
                cur -= size(i);
            }
        }
        for &s in &deps.succs[choice] {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.insert(s);
            }
        }
    }
    order
}

/// Finds an op order with a lower peak than the model's own; returns the model's order
/// when none is strictly lower.
pub fn reorder(graph: &Graph, align: u64) -> Scheduled {
    let identity: Vec<u32> = (0..graph.ops.len() as u32).collect();
    let peak_before = peak(graph, &identity, align);
    let deps = dependencies(graph);
    let mut best = (peak_before, identity);
    for rule in [Rule::LowestStep, Rule::MostFreed] {
        let order = greedy_order(graph, &deps, align, rule);
        if order.len() != graph.ops.len() {
            continue;
        }
        let p = peak(graph, &order, align);
        if p < best.0 {
            best = (p, order);
        }
    }
    let (peak_after, order) = best;
    let mut g = graph.clone();
    g.ops = order
        .iter()
        .map(|&o| graph.ops[o as usize].clone())
        .collect();
    Scheduled {
        graph: g,
        order,
        peak_before,
        peak_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{DType, IoName, Op, Tensor, TensorIndex};
    use std::string::ToString;

    fn t(id: &str, size: u64) -> Tensor {
        Tensor {
            id: id.to_string(),
            name: id.to_string(),
            dtype: DType::U8,
            shape: vec![size],
            size,
            kind: TensorKind::Activation,
            quantization: None,
            align_hint: None,
            data: None,
        }
    }

    fn op(ins: &[u32], outs: &[u32]) -> Op {
        Op {
            opcode: "OP".into(),
            inputs: ins.iter().map(|&i| Some(TensorIndex(i))).collect(),
            outputs: outs.iter().map(|&i| TensorIndex(i)).collect(),
            scratch: vec![],
            options: Default::default(),
        }
    }

    /// Two branches from one input: the model's order starts both big branches before
    /// finishing either; a memory-aware order finishes one branch first.
    fn branches() -> Graph {
        Graph {
            name: "b".into(),
            tensors: vec![
                t("in", 10),
                t("a1", 100),
                t("b1", 100),
                t("a2", 10),
                t("b2", 10),
                t("out", 10),
            ],
            ops: vec![
                op(&[0], &[1]),
                op(&[0], &[2]),
                op(&[1], &[3]),
                op(&[2], &[4]),
                op(&[3, 4], &[5]),
            ],
            inputs: vec![IoName {
                name: "in".into(),
                tensor: TensorIndex(0),
            }],
            outputs: vec![IoName {
                name: "out".into(),
                tensor: TensorIndex(5),
            }],
            aliases: vec![],
        }
    }

    #[test]
    fn lowers_the_peak_of_branchy_graphs() {
        let g = branches();
        let s = reorder(&g, 1);
        assert_eq!(s.peak_before, 210);
        assert!(
            s.peak_after < s.peak_before,
            "{} -> {}",
            s.peak_before,
            s.peak_after
        );
        assert_eq!(s.peak_after, 120);
        assert!(is_valid_order(&g, &s.order));
        assert_eq!(s.graph.ops.len(), g.ops.len());
    }

    #[test]
    fn keeps_chains_and_rejects_bad_orders() {
        let g = branches();
        assert!(!is_valid_order(&g, &[2, 0, 1, 3, 4]));
        assert!(!is_valid_order(&g, &[0, 0, 1, 3, 4]));
        assert!(!is_valid_order(&g, &[0, 1, 2]));
        let mut chain = g.clone();
        chain.ops = vec![op(&[0], &[1]), op(&[1], &[3]), op(&[3], &[5])];
        let s = reorder(&chain, 16);
        assert_eq!(s.order, vec![0, 1, 2]);
        assert_eq!(s.peak_after, s.peak_before);
    }
}
