//! Operator order: keep the model's, or find a topological order with a lower peak of live
//! bytes (`memory.schedule = "memory"`).
//!
//! Dependencies: an op runs after every op that writes a tensor it reads; ops that touch the
//! same variable (state) tensor, and ops with no outputs, keep their relative order, since
//! they have effects beyond the dataflow.
//!
//! The search, all of it deterministic and bounded by a budget of work rather than time:
//! 1. start orders (`schedule/starts.rs`): the model's own, demand-driven depth-first orders from the
//!    outputs, greedy list schedules (lowest step, most freed), as soon / as late as possible;
//! 2. on graphs of at most 64 ops, an exact search over sets of completed ops
//!    (`schedule/exact.rs`), which proves the order optimal when it finishes within its
//!    budget;
//! 3. local improvement of the best start (`schedule/improve.rs`): exact searches over windows
//!    of ops around the peak step, and moves of one op earlier or later within its
//!    dependencies, judged by the peak of live bytes (then the number of steps at the peak,
//!    then the sum of all steps).
//!
//! The model's order is kept unless another has a strictly lower peak. [`Scheduled`] also
//! carries a lower bound over every order (`schedule/bound.rs`, [`lower_bound`]): when the
//! peak reaches it, no order is lower.

mod bound;
mod cost;
mod exact;
mod improve;
mod starts;

use std::collections::BTreeSet;
use std::string::String;
use std::vec::Vec;

use crate::graph::{Graph, TensorKind};
use cost::{Cost, Score};

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
    /// The lowest peak among the start orders (before local improvement).
    pub start_peak: u64,
    /// No valid order has a peak below this.
    pub lower_bound: u64,
    /// True when no valid order has a lower peak than `peak_after`: it reaches
    /// `lower_bound`, or the exact search over every order finished.
    pub optimal: bool,
    /// Work units spent (see [`Budget`]).
    pub work: u64,
}

/// Work limits of [`reorder_with`]. A work unit is about one slot or op visited; the default
/// schedules 1000 ops in well under 50 ms on a desktop core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Work for the exact search over the whole graph (graphs of at most 64 ops).
    pub exact: u64,
    /// Work for local improvement.
    pub improve: u64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            exact: 4_000_000,
            improve: 8_000_000,
        }
    }
}

/// Dependencies between ops.
pub(crate) struct Deps {
    /// Per op: ops that must run before it (all with lower model indices).
    pub preds: Vec<Vec<usize>>,
    /// Per op: ops that must run after it.
    pub succs: Vec<Vec<usize>>,
}

pub(crate) fn dependencies(graph: &Graph) -> Deps {
    let n_ops = graph.ops.len();
    let n = graph.tensors.len();
    let mut preds: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n_ops];
    let mut last_writer: Vec<Option<usize>> = vec![None; n];
    let mut last_toucher_of_state: Vec<Option<usize>> = vec![None; n];
    let mut last_effect: Option<usize> = None;
    let mut touched = vec![false; n];
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
            // A second writer of a tensor (or the writer of one an earlier op read, such as
            // a model input) must follow every earlier op that touched it.
            if touched[t.get()] {
                for (j, other) in graph.ops.iter().enumerate().take(k) {
                    if other.tensors().any(|x| x == *t) {
                        preds[k].insert(j);
                    }
                }
            }
            last_writer[t.get()] = Some(k);
        }
        preds[k].remove(&k);
        for t in op.tensors() {
            touched[t.get()] = true;
        }
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

/// Peak of live activation bytes (each size rounded up to `align`, an alias group counted
/// once) when ops run in `order`, with the lifetimes of [`crate::lifetimes`]: first use to
/// last use, inputs from step 0, outputs to the last step. `order` must hold every op once.
pub fn peak(graph: &Graph, order: &[u32], align: u64) -> u64 {
    if !is_permutation(order, graph.ops.len()) {
        return u64::MAX;
    }
    Cost::new(graph, align)
        .profile(order)
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// A lower bound on [`peak`] over every valid order of `graph`'s ops.
pub fn lower_bound(graph: &Graph, align: u64) -> u64 {
    bound::all_orders(&Cost::new(graph, align), &dependencies(graph))
}

fn is_permutation(order: &[u32], n: usize) -> bool {
    let mut seen = vec![false; n];
    order.len() == n
        && order.iter().all(|&o| {
            seen.get_mut(o as usize)
                .is_some_and(|s| !std::mem::replace(s, true))
        })
}

/// Finds an op order with a lower peak than the model's own, with the default [`Budget`];
/// returns the model's order when none is strictly lower.
pub fn reorder(graph: &Graph, align: u64) -> Scheduled {
    reorder_with(graph, align, Budget::default())
}

/// [`reorder`] with explicit work limits.
pub fn reorder_with(graph: &Graph, align: u64, budget: Budget) -> Scheduled {
    let n = graph.ops.len();
    let cost = Cost::new(graph, align);
    let deps = dependencies(graph);
    let lower_bound = bound::all_orders(&cost, &deps);
    let identity: Vec<u32> = (0..n as u32).collect();
    let model = Score::of(&cost.profile(&identity));
    let mut work = cost.profile_work();
    // The best start order; the model's wins ties.
    let mut best = (model, identity.clone());
    for (_, order) in starts::all(&cost, &deps) {
        work += cost.profile_work();
        if order.len() != n {
            continue;
        }
        let score = Score::of(&cost.profile(&order));
        if score < best.0 {
            best = (score, order);
        }
    }
    let start_peak = best.0.peak;
    let mut optimal = best.0.peak <= lower_bound;
    if !optimal && n <= 64 {
        let mut left = budget.exact;
        if let Some((order, _)) =
            exact::window(&cost, &deps.preds, &best.1, (0, n), best.0.peak, &mut left)
        {
            let score = Score::of(&cost.profile(&order));
            optimal = true;
            if score < best.0 {
                best = (score, order);
            }
        }
        work += budget.exact - left;
    }
    if !optimal {
        let mut left = budget.improve;
        best = improve::improve(&cost, &deps, best, lower_bound, &mut left);
        work += budget.improve - left;
        optimal = best.0.peak <= lower_bound;
    }
    let (score, order) = if best.0.peak < model.peak {
        best
    } else {
        (model, identity)
    };
    let mut g = graph.clone();
    g.ops = order
        .iter()
        .map(|&o| graph.ops[o as usize].clone())
        .collect();
    Scheduled {
        graph: g,
        order,
        peak_before: model.peak,
        peak_after: score.peak,
        start_peak,
        lower_bound,
        optimal,
        work,
    }
}

/// The ops an order moved, for reports: `(model index, step)` of every op that does not run
/// at its model position, in run order.
pub fn moved(order: &[u32]) -> Vec<(u32, u32)> {
    order
        .iter()
        .enumerate()
        .filter(|&(k, &o)| o as usize != k)
        .map(|(k, &o)| (o, k as u32))
        .collect()
}

/// A one-line summary of how `order` runs `model_graph` (ops in model order): its peak, the
/// model order's, and the all-orders bound; "this order is optimal" when it reaches the
/// bound or the exact search ([`reorder`]) proves that no order is lower.
pub fn summary(model_graph: &Graph, order: &[u32], align: u64) -> String {
    let identity: Vec<u32> = (0..model_graph.ops.len() as u32).collect();
    let before = peak(model_graph, &identity, align);
    let after = peak(model_graph, order, align);
    let best = reorder(model_graph, align);
    let verdict = if after <= best.lower_bound {
        "; this order is optimal"
    } else if best.optimal && after <= best.peak_after {
        "; this order is optimal (the exact search over all orders proved it; the bound is not reachable)"
    } else {
        ""
    };
    format!(
        "op order: peak of live bytes {after} ({} ops moved), model order {before}, lower bound over all orders {}{verdict}",
        moved(order).len(),
        best.lower_bound
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{DType, IoName, Op, Tensor, TensorIndex};
    use crate::lifetimes::tests::{graph_of, io};
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
        let ins: Vec<Option<u32>> = ins.iter().copied().map(Some).collect();
        crate::lifetimes::tests::op("OP", &ins, outs)
    }

    /// Two branches from one input: the model's order starts both big branches before
    /// finishing either; a memory-aware order finishes one branch first.
    fn branches() -> Graph {
        graph_of(
            "b",
            vec![
                t("in", 10),
                t("a1", 100),
                t("b1", 100),
                t("a2", 10),
                t("b2", 10),
                t("out", 10),
            ],
            vec![
                op(&[0], &[1]),
                op(&[0], &[2]),
                op(&[1], &[3]),
                op(&[2], &[4]),
                op(&[3, 4], &[5]),
            ],
            vec![io("in", 0)],
            vec![io("out", 5)],
        )
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

    use crate::pack::Rng;

    /// A random DAG of `n_ops` ops: each reads one to three earlier tensors and writes one or
    /// two; some ops touch a state variable, one may have no outputs, some have scratch.
    fn random_graph(rng: &mut Rng, n_ops: usize) -> Graph {
        let mut tensors = vec![t("in", 1 + rng.below(64) as u64)];
        let mut state = t("state", 8);
        state.kind = TensorKind::Variable;
        tensors.push(state);
        let mut ops = Vec::new();
        let mut produced = vec![0u32];
        for k in 0..n_ops {
            let mut ins: Vec<u32> = (0..1 + rng.below(3))
                .map(|_| produced[rng.below(produced.len())])
                .collect();
            ins.sort_unstable();
            ins.dedup();
            if rng.below(6) == 0 {
                ins.push(1);
            }
            let n_out = if k + 1 < n_ops && rng.below(9) == 0 {
                0
            } else {
                1 + rng.below(2)
            };
            let mut outs = Vec::new();
            for j in 0..n_out {
                let size = [1u64, 8, 16, 40, 100, 250][rng.below(6)];
                tensors.push(t(&format!("t{k}_{j}"), size));
                outs.push((tensors.len() - 1) as u32);
            }
            produced.extend(&outs);
            let mut o = op(&ins, &outs);
            if rng.below(5) == 0 {
                tensors.push(t(&format!("s{k}"), 32));
                o.scratch.push(TensorIndex((tensors.len() - 1) as u32));
            }
            ops.push(o);
        }
        let mut read = vec![false; tensors.len()];
        for o in &ops {
            for i in o.inputs.iter().flatten() {
                read[i.get()] = true;
            }
        }
        let outputs = ops
            .iter()
            .flat_map(|o| o.outputs.iter().copied())
            .filter(|i| !read[i.get()] || i.0 % 7 == 0)
            .map(|i| IoName {
                name: format!("o{}", i.0),
                tensor: i,
            })
            .collect();
        graph_of("random", tensors, ops, vec![io("in", 0)], outputs)
    }

    /// Calls `f(case, graph, rng)` on `cases` random graphs drawn from seed `seed`, graph
    /// `case` of `ops(case, rng)` ops; `f` may draw more from the same stream.
    fn each_random_graph(
        seed: u64,
        cases: usize,
        ops: impl Fn(usize, &mut Rng) -> usize,
        mut f: impl FnMut(usize, Graph, &mut Rng),
    ) {
        let mut rng = Rng::new(seed);
        for case in 0..cases {
            let n = ops(case, &mut rng);
            let g = random_graph(&mut rng, n);
            f(case, g, &mut rng);
        }
    }

    /// Lowest peak over every valid order, by enumeration.
    fn brute_force(g: &Graph, align: u64) -> u64 {
        fn go(g: &Graph, deps: &Deps, order: &mut Vec<u32>, align: u64, best: &mut u64) {
            let n = g.ops.len();
            if order.len() == n {
                *best = (*best).min(peak(g, order, align));
                return;
            }
            for k in 0..n as u32 {
                let ready = deps.preds[k as usize]
                    .iter()
                    .all(|&p| order.contains(&(p as u32)));
                if order.contains(&k) || !ready {
                    continue;
                }
                order.push(k);
                go(g, deps, order, align, best);
                order.pop();
            }
        }
        let mut best = u64::MAX;
        go(g, &dependencies(g), &mut Vec::new(), align, &mut best);
        best
    }

    #[test]
    fn exact_search_equals_brute_force_on_small_dags() {
        each_random_graph(14, 60, |case, _| 2 + case % 8, |case, g, _| {
            let n = g.ops.len();
            let align = [1, 4, 16][case % 3];
            let want = brute_force(&g, align);
            let cost = Cost::new(&g, align);
            let deps = dependencies(&g);
            let identity: Vec<u32> = (0..n as u32).collect();
            let mut budget = u64::MAX;
            let (order, found) =
                exact::window(&cost, &deps.preds, &identity, (0, n), u64::MAX, &mut budget)
                    .expect("an unlimited search finishes");
            assert!(is_valid_order(&g, &order), "case {case}: {order:?}");
            assert_eq!(found, want, "case {case}: search's own figure");
            assert_eq!(peak(&g, &order, align), want, "case {case}: {order:?}");
            let bound = lower_bound(&g, align);
            assert!(
                bound <= want,
                "case {case}: bound {bound} above optimum {want}"
            );
            let s = reorder(&g, align);
            assert_eq!(s.peak_after, want, "case {case}: reorder");
            assert!(s.optimal, "case {case}");
        });
    }

    #[test]
    fn reordered_orders_are_valid_never_worse_and_deterministic() {
        each_random_graph(1414, 40, |_, rng| 5 + rng.below(120), |case, g, _| {
            let n = g.ops.len();
            // Small budgets keep the test fast; the properties hold for any budget.
            let budget = Budget {
                exact: 100_000,
                improve: 300_000,
            };
            let s = reorder_with(&g, 16, budget);
            assert!(is_valid_order(&g, &s.order), "case {case}");
            assert!(s.peak_after <= s.peak_before, "case {case}");
            assert!(s.lower_bound <= s.peak_after, "case {case}");
            assert_eq!(s.peak_after, peak(&g, &s.order, 16), "case {case}");
            assert_eq!(
                s.peak_before,
                peak(&g, &(0..n as u32).collect::<Vec<_>>(), 16)
            );
            if s.peak_after == s.peak_before {
                assert_eq!(s.order, (0..n as u32).collect::<Vec<_>>(), "case {case}");
            }
            // Ops touching the state, and ops without outputs, keep their relative order.
            let state = |o: &Op| o.tensors().any(|x| x.0 == 1);
            let effect = |o: &Op| o.outputs.is_empty();
            for group in [&state as &dyn Fn(&Op) -> bool, &effect] {
                let keep: Vec<u32> = (0..n as u32)
                    .filter(|&k| group(&g.ops[k as usize]))
                    .collect();
                let kept: Vec<u32> = s
                    .order
                    .iter()
                    .copied()
                    .filter(|&k| group(&g.ops[k as usize]))
                    .collect();
                assert_eq!(kept, keep, "case {case}");
            }
            let again = reorder_with(&g, 16, budget);
            assert_eq!(
                (again.order, again.work),
                (s.order.clone(), s.work),
                "case {case}"
            );
            assert_eq!(s.graph.ops.len(), n);
            for (k, &o) in s.order.iter().enumerate() {
                assert_eq!(s.graph.ops[k], g.ops[o as usize]);
            }
        });
    }

    #[test]
    fn a_writer_of_an_input_follows_its_readers() {
        let mut g = branches();
        // Op 5 overwrites the model input that ops 0 and 1 read.
        g.ops.push(op(&[5], &[0]));
        let deps = dependencies(&g);
        assert_eq!(deps.preds[5], vec![0, 1, 4]);
    }

    #[test]
    fn lower_bound_counts_what_every_order_holds() {
        // in(10) -> a1(100) -> a2(10) and in -> b1(100) -> b2(10), then out: every order
        // holds `in` and a 100-byte tensor together (110); the best order holds 120, which
        // the bound does not see (it takes one op at a time) but the exact search proves.
        let g = branches();
        assert_eq!(lower_bound(&g, 1), 110);
        let s = reorder(&g, 1);
        assert!(s.optimal);
        assert!(summary(&g, &s.order, 1).contains("this order is optimal"));
        assert_eq!(moved(&s.order), vec![(2, 1), (1, 2)]);
    }

    /// The bound by its definition, one op at a time: the slots whose touchers (or input or
    /// output status) force them live at that op in every order.
    fn bound_by_definition(cost: &Cost, deps: &Deps) -> u64 {
        let n = cost.n;
        let reach = |k: usize, next: &Vec<Vec<usize>>| {
            let mut seen = vec![false; n];
            let mut stack = vec![k];
            while let Some(x) = stack.pop() {
                if !std::mem::replace(&mut seen[x], true) {
                    stack.extend(&next[x]);
                }
            }
            seen
        };
        let mut best = cost.always;
        for k in 0..n {
            let anc = reach(k, &deps.preds);
            let desc = reach(k, &deps.succs);
            let mut sum = cost.always;
            for s in 0..cost.size.len() {
                let users = &cost.users[s];
                if users.is_empty() {
                    continue;
                }
                let started = cost.input[s] || users.iter().any(|&u| anc[u as usize]);
                let stays = cost.output[s] || users.iter().any(|&u| desc[u as usize]);
                if started && stays {
                    sum += cost.size[s];
                }
            }
            best = best.max(sum);
        }
        let sum = |f: &dyn Fn(usize) -> bool| {
            (0..cost.size.len())
                .filter(|&s| f(s))
                .map(|s| cost.size[s])
                .sum::<u64>()
        };
        best.max(sum(&|s| cost.input[s]))
            .max(sum(&|s| cost.output[s]))
    }

    #[test]
    fn the_bound_in_blocks_is_the_bound_by_definition() {
        each_random_graph(29, 60, |_, rng| 1 + rng.below(300), |case, g, rng| {
            let cost = Cost::new(&g, 1 + rng.below(16) as u64);
            let deps = dependencies(&g);
            let want = bound_by_definition(&cost, &deps);
            for words in [1, 2, 3, 64] {
                assert_eq!(
                    bound::all_orders_in_blocks(&cost, &deps, words),
                    want,
                    "case {case}, {} ops, blocks of {words} words",
                    g.ops.len()
                );
            }
            assert_eq!(bound::all_orders(&cost, &deps), want);
        });
    }
}
