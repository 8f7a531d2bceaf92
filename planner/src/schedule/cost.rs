//! The cost model every scheduler part shares: activation slots (an alias group counts once),
//! the ops that touch each, and the live bytes of every step of an order.
//!
//! A slot lives from the first op that touches it to the last, as in [`crate::lifetimes`]:
//! model inputs from step 0, model outputs to the last step. During an op, every slot it
//! touches is live, so the bytes of a step depend only on which ops ran before and which op
//! runs; the exact search relies on that.

use std::vec::Vec;

use crate::graph::{Graph, TensorKind};
use crate::plan::align_up;

/// Compact view of a graph for scheduling.
pub(crate) struct Cost {
    /// Number of ops.
    pub n: usize,
    /// Per op: the slots it touches, each once.
    pub touches: Vec<Vec<u32>>,
    /// Per slot: bytes (rounded up to the alignment).
    pub size: Vec<u64>,
    /// Per slot: the ops that touch it, ascending.
    pub users: Vec<Vec<u32>>,
    /// Per slot: a model input (live from step 0).
    pub input: Vec<bool>,
    /// Per slot: a model output (live to the last step).
    pub output: Vec<bool>,
    /// Bytes of inputs no op touches: live at step 0 only.
    pub first_extra: u64,
    /// Bytes of outputs no op touches: live at the last step only.
    pub last_extra: u64,
    /// Bytes of tensors that are both a model input and output and that no op touches: live
    /// at every step.
    pub always: u64,
}

fn root(parent: &[usize], mut t: usize) -> usize {
    let mut guard = parent.len();
    while parent[t] != t && guard > 0 {
        t = parent[t];
        guard -= 1;
    }
    t
}

impl Cost {
    /// Builds the model: activation tensors only, alias groups merged into their root's slot.
    pub fn new(graph: &Graph, align: u64) -> Cost {
        let nt = graph.tensors.len();
        let mut parent: Vec<usize> = (0..nt).collect();
        for &(a, b) in &graph.aliases {
            let (ra, rb) = (root(&parent, a.get()), root(&parent, b.get()));
            if ra != rb && ra < nt && rb < nt {
                parent[ra] = rb;
            }
        }
        let mut slot_of = vec![u32::MAX; nt];
        let mut size = Vec::new();
        for i in 0..nt {
            let r = root(&parent, i);
            let t = &graph.tensors[r];
            if graph.tensors[i].kind != TensorKind::Activation || t.kind != TensorKind::Activation {
                continue;
            }
            if slot_of[r] == u32::MAX {
                slot_of[r] = size.len() as u32;
                size.push(align_up(t.size, align.max(1)).unwrap_or(u64::MAX / 4));
            }
            slot_of[i] = slot_of[r];
        }
        let ns = size.len();
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); ns];
        let mut touches = Vec::with_capacity(graph.ops.len());
        for (k, op) in graph.ops.iter().enumerate() {
            let mut ts: Vec<u32> = op
                .tensors()
                .filter_map(|t| slot_of.get(t.get()).copied())
                .filter(|&s| s != u32::MAX)
                .collect();
            ts.sort_unstable();
            ts.dedup();
            for &s in &ts {
                users[s as usize].push(k as u32);
            }
            touches.push(ts);
        }
        let mut input = vec![false; ns];
        let mut output = vec![false; ns];
        for io in &graph.inputs {
            if let Some(&s) = slot_of.get(io.tensor.get())
                && s != u32::MAX
            {
                input[s as usize] = true;
            }
        }
        for io in &graph.outputs {
            if let Some(&s) = slot_of.get(io.tensor.get())
                && s != u32::MAX
            {
                output[s as usize] = true;
            }
        }
        let (mut first_extra, mut last_extra, mut always) = (0u64, 0u64, 0u64);
        for s in 0..ns {
            if users[s].is_empty() {
                if input[s] && output[s] {
                    always = always.saturating_add(size[s]);
                } else if input[s] {
                    first_extra += size[s];
                } else if output[s] {
                    last_extra += size[s];
                }
            }
        }
        Cost {
            n: graph.ops.len(),
            touches,
            size,
            users,
            input,
            output,
            first_extra,
            last_extra,
            always,
        }
    }

    /// Live bytes at every step of `order` (which must hold every op once).
    pub fn profile(&self, order: &[u32]) -> Vec<u64> {
        let steps = order.len();
        if steps == 0 {
            return vec![
                self.first_extra
                    .saturating_add(self.last_extra)
                    .saturating_add(self.always),
            ];
        }
        let mut pos = vec![0usize; self.n];
        for (k, &o) in order.iter().enumerate() {
            if let Some(p) = pos.get_mut(o as usize) {
                *p = k;
            }
        }
        let mut delta = vec![0i128; steps + 1];
        for (s, users) in self.users.iter().enumerate() {
            let Some(&u0) = users.first() else { continue };
            let (mut lo, mut hi) = (pos[u0 as usize], pos[u0 as usize]);
            for &u in &users[1..] {
                lo = lo.min(pos[u as usize]);
                hi = hi.max(pos[u as usize]);
            }
            if self.input[s] {
                lo = 0;
            }
            if self.output[s] {
                hi = steps - 1;
            }
            delta[lo] += i128::from(self.size[s]);
            delta[hi + 1] -= i128::from(self.size[s]);
        }
        delta[0] += i128::from(self.first_extra) + i128::from(self.always);
        delta[1] -= i128::from(self.first_extra);
        delta[steps - 1] += i128::from(self.last_extra);
        delta[steps] -= i128::from(self.last_extra);
        let mut cur = 0i128;
        delta[..steps]
            .iter()
            .map(|d| {
                cur += d;
                u64::try_from(cur).unwrap_or(u64::MAX)
            })
            .collect()
    }

    /// Work units one [`Cost::profile`] call costs (for budgets).
    pub fn profile_work(&self) -> u64 {
        (self.n + self.users.iter().map(Vec::len).sum::<usize>() + self.size.len()) as u64
    }
}

/// How good an order is: peak first, then how many steps reach it, then the total of all
/// steps. Lower is better; the model's order is kept unless another is strictly lower in
/// the peak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Score {
    /// Largest live bytes of a step.
    pub peak: u64,
    /// Steps at the peak.
    pub at_peak: usize,
    /// Sum over steps (a tie-break that favours freeing memory early).
    pub total: u128,
}

impl Score {
    /// The score of a step profile.
    pub fn of(profile: &[u64]) -> Score {
        let peak = profile.iter().copied().max().unwrap_or(0);
        Score {
            peak,
            at_peak: profile.iter().filter(|&&m| m == peak).count(),
            total: profile.iter().map(|&m| u128::from(m)).sum(),
        }
    }
}
