//! Exact search over the orders of a window of ops: dynamic programming over the sets of
//! window ops already run, in the manner of memory-aware scheduling papers (Serenity, MLSys
//! 2020).
//!
//! With the ops before the window done and those after it waiting, the bytes live during a
//! step depend only on the set of ops already run and on the op that runs
//! ([`super::cost`]), so among all orders of one set only the one with the lowest peak (then
//! the lowest sum of steps) need be kept. States whose peak exceeds a known order's are
//! dropped. The window holds at most 64 ops; the search gives up after a budget of work.

use std::collections::HashMap;
use std::vec::Vec;

use super::cost::Cost;

/// One set of window ops already run, reached by the best order found so far.
#[derive(Clone, Copy)]
struct State {
    mask: u64,
    peak: u64,
    total: u128,
    /// Live bytes between steps once the set has run.
    base: u64,
    /// Index of the state it came from in the previous layer, and the window op that ran.
    parent: u32,
    op: u8,
}

/// What a window slot needs: its size and who touches it.
struct Slot {
    size: u64,
    /// Live before the window: a model input, or touched by an op before the window.
    before: bool,
    /// Stays live after the window: a model output, or touched by an op after it.
    after: bool,
    /// Window ops that touch it.
    users: u64,
}

/// The window `order[a..b]` prepared for the search.
struct Window {
    /// Per window op: window ops that must run before it.
    preds: Vec<u64>,
    /// Per window op: the window slots it touches.
    touches: Vec<Vec<u32>>,
    slots: Vec<Slot>,
    /// Live bytes between the op before the window and its first op.
    base: u64,
    /// Extra bytes at the first and the last step of the window (inputs and outputs no op
    /// touches, tensors live throughout).
    first_extra: u64,
    last_extra: u64,
    always: u64,
}

fn prepare(cost: &Cost, preds: &[Vec<usize>], order: &[u32], a: usize, b: usize) -> Window {
    let n = order.len();
    let mut pos = vec![usize::MAX; cost.n];
    for (k, &o) in order.iter().enumerate() {
        pos[o as usize] = k;
    }
    let mut local: HashMap<usize, u32> = HashMap::new();
    let mut touches = Vec::with_capacity(b - a);
    let mut slots: Vec<Slot> = Vec::new();
    for (i, &o) in order[a..b].iter().enumerate() {
        let mut ts = Vec::new();
        for &s in &cost.touches[o as usize] {
            let s = s as usize;
            let l = *local.entry(s).or_insert_with(|| {
                let users = &cost.users[s];
                slots.push(Slot {
                    size: cost.size[s],
                    before: cost.input[s] || users.iter().any(|&u| pos[u as usize] < a),
                    after: cost.output[s] || users.iter().any(|&u| pos[u as usize] >= b),
                    users: 0,
                });
                (slots.len() - 1) as u32
            });
            slots[l as usize].users |= 1 << i;
            ts.push(l);
        }
        touches.push(ts);
    }
    let preds = order[a..b]
        .iter()
        .map(|&o| {
            preds[o as usize]
                .iter()
                .filter(|&&p| (a..b).contains(&pos[p]))
                .fold(0u64, |m, &p| m | 1 << (pos[p] - a))
        })
        .collect();
    // Between steps a-1 and a: slots live before the window that stay live past step a-1.
    // (Before op 0 these are the inputs some op still reads.)
    let mut base = 0u64;
    for (s, users) in cost.users.iter().enumerate() {
        let before = cost.input[s] || users.iter().any(|&u| pos[u as usize] < a);
        let after = cost.output[s] || users.iter().any(|&u| pos[u as usize] >= a);
        if before && after && !users.is_empty() {
            base = base.saturating_add(cost.size[s]);
        }
    }
    Window {
        preds,
        touches,
        slots,
        base,
        first_extra: if a == 0 { cost.first_extra } else { 0 },
        last_extra: if b == n { cost.last_extra } else { 0 },
        always: cost.always,
    }
}

/// The best order of `order[a..b]` (at most 64 ops) by peak over the window's steps, then the
/// sum of its steps, among those whose peak is at most `limit`; `None` when none is, or when
/// the search would spend more than `budget` (work units, charged as it goes).
pub(crate) fn window(
    cost: &Cost,
    preds: &[Vec<usize>],
    order: &[u32],
    (a, b): (usize, usize),
    limit: u64,
    budget: &mut u64,
) -> Option<(Vec<u32>, u64)> {
    let w = b.checked_sub(a)?;
    if w == 0 || w > 64 || b > order.len() {
        return None;
    }
    spend(budget, cost.profile_work())?;
    let win = prepare(cost, preds, order, a, b);
    let mut layers: Vec<Vec<State>> = vec![vec![State {
        mask: 0,
        peak: 0,
        total: 0,
        base: win.base,
        parent: 0,
        op: 0,
    }]];
    for step in 0..w {
        let mut next: Vec<State> = Vec::new();
        let mut index: HashMap<u64, usize> = HashMap::new();
        for (si, st) in layers[step].iter().enumerate() {
            for i in 0..w {
                if st.mask & (1 << i) != 0 || win.preds[i] & !st.mask != 0 {
                    continue;
                }
                spend(budget, 1 + win.touches[i].len() as u64)?;
                let (m, base) = step_bytes(&win, st, i, step, w);
                let peak = st.peak.max(m);
                if peak > limit {
                    continue;
                }
                let cand = State {
                    mask: st.mask | 1 << i,
                    peak,
                    total: st.total + u128::from(m),
                    base,
                    parent: si as u32,
                    op: i as u8,
                };
                match index.get(&cand.mask) {
                    Some(&j) => {
                        if (cand.peak, cand.total) < (next[j].peak, next[j].total) {
                            next[j] = cand;
                        }
                    }
                    None => {
                        index.insert(cand.mask, next.len());
                        next.push(cand);
                    }
                }
            }
        }
        if next.is_empty() {
            return None;
        }
        layers.push(next);
    }
    let last = layers.last()?.first().copied()?;
    let mut out = vec![0u32; w];
    let mut st = last;
    for step in (0..w).rev() {
        out[step] = order[a + st.op as usize];
        st = layers[step][st.parent as usize];
    }
    Some((out, last.peak))
}

/// Bytes live while window op `i` runs after the set of `st`, and between steps after it.
fn step_bytes(win: &Window, st: &State, i: usize, step: usize, w: usize) -> (u64, u64) {
    let done = st.mask | 1 << i;
    let mut during = st.base;
    let mut freed = 0u64;
    for &l in &win.touches[i] {
        let s = &win.slots[l as usize];
        if !(s.before || s.users & st.mask != 0) {
            during = during.saturating_add(s.size);
        }
        if !s.after && s.users & !done == 0 {
            freed = freed.saturating_add(s.size);
        }
    }
    let mut m = during.saturating_add(win.always);
    if step == 0 {
        m = m.saturating_add(win.first_extra);
    }
    if step + 1 == w {
        m = m.saturating_add(win.last_extra);
    }
    (m, during.saturating_sub(freed))
}

/// Takes `work` from `budget`; `None` (and an empty budget) when there is not that much.
pub(crate) fn spend(budget: &mut u64, work: u64) -> Option<()> {
    match budget.checked_sub(work) {
        Some(left) => {
            *budget = left;
            Some(())
        }
        None => {
            *budget = 0;
            None
        }
    }
}
