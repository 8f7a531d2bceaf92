//! Start orders for the search: list schedules (lowest step, most freed, as soon as
//! possible, as late as possible) and demand-driven depth-first orders from the outputs.
//! Every one is a topological order of the dependencies; ties go to the op that came first in
//! the model.

use std::collections::BTreeSet;
use std::vec::Vec;

use super::Deps;
use super::cost::Cost;

/// Greedy list-scheduling rules; each builds one order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rule {
    /// Lowest live bytes during the op, then most bytes freed, then model order.
    LowestStep,
    /// Most bytes freed net of bytes allocated, then model order.
    MostFreed,
}

/// Every start order, named, the model's own first.
pub(crate) fn all(cost: &Cost, deps: &Deps) -> Vec<(&'static str, Vec<u32>)> {
    vec![
        ("model", (0..cost.n as u32).collect()),
        ("depth-first", depth_first(cost, deps, false)),
        (
            "depth-first (last input first)",
            depth_first(cost, deps, true),
        ),
        ("lowest step", greedy(cost, deps, Rule::LowestStep)),
        ("most freed", greedy(cost, deps, Rule::MostFreed)),
        ("as soon as possible", levels(deps, false)),
        ("as late as possible", levels(deps, true)),
    ]
}

/// Greedy list schedule: among the ready ops, the one `rule` prefers.
pub(crate) fn greedy(cost: &Cost, deps: &Deps, rule: Rule) -> Vec<u32> {
    let n = cost.n;
    let ns = cost.size.len();
    let mut remaining: Vec<usize> = cost.users.iter().map(Vec::len).collect();
    // Inputs some op reads are live from the start.
    let mut live: Vec<bool> = (0..ns)
        .map(|s| cost.input[s] && !cost.users[s].is_empty())
        .collect();
    let mut cur: i128 = (0..ns)
        .filter(|&s| live[s])
        .map(|s| i128::from(cost.size[s]))
        .sum();
    let mut waiting: Vec<usize> = deps.preds.iter().map(Vec::len).collect();
    let mut ready: BTreeSet<usize> = (0..n).filter(|&k| waiting[k] == 0).collect();
    let mut order = Vec::with_capacity(n);
    loop {
        let mut best: Option<(i128, i128, usize)> = None;
        for &k in &ready {
            let (mut alloc, mut freed) = (0i128, 0i128);
            for &s in &cost.touches[k] {
                let s = s as usize;
                let size = i128::from(cost.size[s]);
                if !live[s] {
                    alloc += size;
                }
                if remaining[s] == 1 && !cost.output[s] {
                    freed += size;
                }
            }
            let key = match rule {
                Rule::LowestStep => (cur + alloc, alloc - freed, k),
                Rule::MostFreed => (alloc - freed, cur + alloc, k),
            };
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let Some((_, _, choice)) = best else { break };
        ready.remove(&choice);
        order.push(choice as u32);
        for &s in &cost.touches[choice] {
            let s = s as usize;
            if !live[s] {
                live[s] = true;
                cur += i128::from(cost.size[s]);
            }
            remaining[s] -= 1;
            if remaining[s] == 0 && !cost.output[s] {
                live[s] = false;
                cur -= i128::from(cost.size[s]);
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

/// Demand-driven depth-first order: from each model output's writer (then every other op, in
/// model order), run what it depends on first, depth first; `reverse` visits an op's
/// dependencies from the last to the first.
pub(crate) fn depth_first(cost: &Cost, deps: &Deps, reverse: bool) -> Vec<u32> {
    let n = cost.n;
    let mut roots: Vec<usize> = Vec::new();
    for (s, users) in cost.users.iter().enumerate() {
        if cost.output[s]
            && let Some(&u) = users.last()
        {
            roots.push(u as usize);
        }
    }
    roots.extend(0..n);
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    // Explicit stack of (op, next dependency to visit), so deep graphs cannot overflow.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for r in roots {
        if done[r] {
            continue;
        }
        done[r] = true;
        stack.push((r, 0));
        while let Some(top) = stack.last_mut() {
            let (k, i) = *top;
            let ps = &deps.preds[k];
            if i < ps.len() {
                top.1 += 1;
                let p = if reverse { ps[ps.len() - 1 - i] } else { ps[i] };
                if !done[p] {
                    done[p] = true;
                    stack.push((p, 0));
                }
            } else {
                order.push(k as u32);
                stack.pop();
            }
        }
    }
    order
}

/// List schedule by level: as soon as possible (longest path from a source), or as late as
/// possible (longest path to a sink, counted back from the deepest).
pub(crate) fn levels(deps: &Deps, late: bool) -> Vec<u32> {
    let n = deps.preds.len();
    // Dependencies point to lower model indices, so one pass in each direction suffices.
    let mut key = vec![0usize; n];
    if late {
        let mut height = vec![0usize; n];
        for k in (0..n).rev() {
            height[k] = deps.succs[k]
                .iter()
                .map(|&s| height[s] + 1)
                .max()
                .unwrap_or(0);
        }
        let top = height.iter().copied().max().unwrap_or(0);
        for k in 0..n {
            key[k] = top - height[k];
        }
    } else {
        for k in 0..n {
            key[k] = deps.preds[k].iter().map(|&p| key[p] + 1).max().unwrap_or(0);
        }
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&k| (key[k as usize], k));
    order
}
