//! A lower bound on the peak over every valid op order.
//!
//! While op `o` runs, a slot is live in every order when something forces it to be live
//! before `o` runs or as it runs (it is a model input, or an op that touches it is `o` or one
//! of `o`'s ancestors) and something forces it to stay live until `o` or later (it is a model
//! output, or an op that touches it is `o` or one of `o`'s descendants): ancestors run before
//! `o` and descendants after it in every topological order. The sum of those slots is live at
//! `o`'s step whatever the order, so the largest such sum over the ops, and the inputs at the
//! first step and the outputs at the last, bound every order's peak from below.
//!
//! The ancestor and descendant sets are bitsets over the ops, but only over one block of
//! target ops at a time: each op keeps the bits of its closure that fall in the block, so the
//! memory is `ops x block` bits (at most [`CLOSURE_BYTES`]) instead of two `ops x ops`
//! matrices (2.5 GB at 100 000 ops), and a slot only visits the blocks its ops can reach.

use std::vec::Vec;

use super::Deps;
use super::cost::Cost;

/// Bytes of closure bits kept at once, over both directions.
const CLOSURE_BYTES: usize = 64 << 20;

/// The largest sum of slots live at one op in every order (see the module docs).
pub(crate) fn all_orders(cost: &Cost, deps: &Deps) -> u64 {
    let words = (CLOSURE_BYTES / 16 / cost.n.max(1)).max(1);
    all_orders_in_blocks(cost, deps, words)
}

/// [`all_orders`] with blocks of `words` x 64 target ops.
pub(crate) fn all_orders_in_blocks(cost: &Cost, deps: &Deps, words: usize) -> u64 {
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
    let w = words.clamp(1, n.div_ceil(64));
    // The ops a slot can be live at in every order lie between its first and last toucher
    // (ancestors run before the first, descendants after the last), from op 0 for an input
    // and to the last op for an output.
    let reach: Vec<Option<(usize, usize)>> = (0..ns)
        .map(|s| {
            let users = &cost.users[s];
            let first = *users.iter().min()? as usize;
            let last = *users.iter().max()? as usize;
            let lo = if cost.input[s] { 0 } else { first };
            let hi = if cost.output[s] { n - 1 } else { last };
            Some((lo, hi))
        })
        .collect();
    // `down[k]`: descendants-or-self of `k` in the block; `up[k]`: ancestors-or-self.
    let mut down = vec![0u64; n * w];
    let mut up = vec![0u64; n * w];
    let mut after = vec![0u64; w];
    let mut before = vec![0u64; w];
    let mut at = vec![cost.always; n];
    for b0 in (0..n).step_by(64 * w) {
        let b1 = (b0 + 64 * w).min(n);
        // Dependencies point to lower model indices: descendants of `k` are above it, so
        // ops from `b1` up have none in the block; ancestors are below, so ops under `b0`
        // have none either.
        for k in (0..b1).rev() {
            let (head, tail) = down.split_at_mut((k + 1) * w);
            let row = &mut head[k * w..];
            row.fill(0);
            if k >= b0 {
                row[(k - b0) / 64] |= 1 << ((k - b0) % 64);
            }
            for &j in &deps.succs[k] {
                if j < b1 {
                    let from = &tail[(j - k - 1) * w..(j - k) * w];
                    row.iter_mut().zip(from).for_each(|(a, b)| *a |= b);
                }
            }
        }
        for k in b0..n {
            let (head, tail) = up.split_at_mut(k * w);
            let row = &mut tail[..w];
            row.fill(0);
            if k < b1 {
                row[(k - b0) / 64] |= 1 << ((k - b0) % 64);
            }
            for &j in &deps.preds[k] {
                if j >= b0 {
                    let from = &head[j * w..(j + 1) * w];
                    row.iter_mut().zip(from).for_each(|(a, b)| *a |= b);
                }
            }
        }
        for (s, r) in reach.iter().enumerate() {
            let Some((lo, hi)) = *r else {
                continue;
            };
            if hi < b0 || lo >= b1 {
                continue;
            }
            // `after`: ops that run at or after a toucher; `before`: at or before one.
            after.fill(if cost.input[s] { u64::MAX } else { 0 });
            before.fill(if cost.output[s] { u64::MAX } else { 0 });
            for &u in &cost.users[s] {
                let u = u as usize;
                if !cost.input[s] && u < b1 {
                    let row = &down[u * w..(u + 1) * w];
                    after.iter_mut().zip(row).for_each(|(a, b)| *a |= b);
                }
                if !cost.output[s] && u >= b0 {
                    let row = &up[u * w..(u + 1) * w];
                    before.iter_mut().zip(row).for_each(|(a, b)| *a |= b);
                }
            }
            let (wlo, whi) = ((lo.max(b0) - b0) / 64, (hi.min(b1 - 1) - b0) / 64);
            for x in wlo..=whi {
                let mut both = after[x] & before[x];
                while both != 0 {
                    let k = b0 + x * 64 + both.trailing_zeros() as usize;
                    both &= both - 1;
                    if k < b1 {
                        at[k] = at[k].saturating_add(cost.size[s]);
                    }
                }
            }
        }
    }
    // Every input is live at the first step and every output at the last, in every order.
    at.into_iter().max().unwrap_or(0).max(inputs).max(outputs)
}
