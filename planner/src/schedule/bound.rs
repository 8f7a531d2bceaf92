//! A lower bound on the peak over every valid op order.
//!
//! While op `o` runs, a slot is live in every order when something forces it to be live
//! before `o` runs or as it runs (it is a model input, or an op that touches it is `o` or one
//! of `o`'s ancestors) and something forces it to stay live until `o` or later (it is a model
//! output, or an op that touches it is `o` or one of `o`'s descendants): ancestors run before
//! `o` and descendants after it in every topological order. The sum of those slots is live at
//! `o`'s step whatever the order, so the largest such sum over the ops, and the inputs at the
//! first step and the outputs at the last, bound every order's peak from below.

use std::vec::Vec;

use super::Deps;
use super::cost::Cost;

/// A set of ops as bits.
#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn or(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
}

/// Ancestors-or-self (`up`) or descendants-or-self of every op.
fn closure(deps: &Deps, up: bool) -> Vec<Bits> {
    let n = deps.preds.len();
    let mut c = vec![Bits::new(n); n];
    // Dependencies point to lower model indices: ascending order visits predecessors first.
    let ks: Vec<usize> = if up {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    for k in ks {
        let mut b = Bits::new(n);
        b.set(k);
        let next = if up { &deps.preds[k] } else { &deps.succs[k] };
        for &j in next {
            b.or(&c[j]);
        }
        c[k] = b;
    }
    c
}

/// The largest sum of slots live at one op in every order (see the module docs).
pub(crate) fn all_orders(cost: &Cost, deps: &Deps) -> u64 {
    let n = cost.n;
    let ns = cost.size.len();
    let inputs: u64 = (0..ns)
        .filter(|&s| cost.input[s])
        .map(|s| cost.size[s])
        .fold(0, u64::saturating_add);
    let outputs: u64 = (0..ns)
        .filter(|&s| cost.output[s])
        .map(|s| cost.size[s])
        .fold(0, u64::saturating_add);
    if n == 0 {
        return inputs.max(outputs);
    }
    let down = closure(deps, false);
    let up = closure(deps, true);
    let words = n.div_ceil(64);
    let mut at = vec![cost.always; n];
    for s in 0..ns {
        let users = &cost.users[s];
        if users.is_empty() {
            continue;
        }
        // `after_some`: ops that run at or after a toucher; `before_some`: at or before one.
        let mut after_some = Bits::new(n);
        let mut before_some = Bits::new(n);
        for &u in users {
            after_some.or(&down[u as usize]);
            before_some.or(&up[u as usize]);
        }
        for w in 0..words {
            let a = if cost.input[s] {
                u64::MAX
            } else {
                after_some.0[w]
            };
            let b = if cost.output[s] {
                u64::MAX
            } else {
                before_some.0[w]
            };
            let mut both = a & b;
            while both != 0 {
                let k = w * 64 + both.trailing_zeros() as usize;
                both &= both - 1;
                if k < n {
                    at[k] = at[k].saturating_add(cost.size[s]);
                }
            }
        }
    }
    // Every input is live at the first step and every output at the last, in every order.
    at.into_iter().max().unwrap_or(0).max(inputs).max(outputs)
}
