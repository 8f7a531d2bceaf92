//! Local improvement of an order around its peak step.
//!
//! Each round finds the first step at the peak and tries, in turn, exact searches over
//! windows of growing width centred on it ([`super::exact`]), then moves of single ops near it
//! to the edges of their dependency windows (as early or as late as they may run, or just
//! across the peak step). A change is taken only when it lowers the [`Score`] (the peak, then
//! the steps at the peak, then the sum of all steps), so rounds end; they also end when the
//! peak reaches the lower bound or the work budget runs out.

use std::vec::Vec;

use super::Deps;
use super::cost::{Cost, Score};
use super::exact::{self, spend};

/// Window widths tried around the peak step, smallest first.
const WIDTHS: [usize; 5] = [8, 12, 16, 24, 32];
/// Ops on each side of the peak step whose single moves are tried.
const REACH: usize = 12;

/// Improves `start` (with its score) until no change helps, the peak reaches `bound`, or
/// `budget` runs out.
pub(crate) fn improve(
    cost: &Cost,
    deps: &Deps,
    start: (Score, Vec<u32>),
    bound: u64,
    budget: &mut u64,
) -> (Score, Vec<u32>) {
    let (mut score, mut order) = start;
    while score.peak > bound && *budget > 0 {
        let profile = cost.profile(&order);
        let Some(k) = profile.iter().position(|&m| m == score.peak) else {
            break;
        };
        let at = Peak {
            cost,
            deps,
            order: &order,
            k,
            score,
        };
        match at
            .by_window(&profile, budget)
            .or_else(|| at.by_move(budget))
        {
            Some((s, o)) => {
                score = s;
                order = o;
            }
            None => break,
        }
    }
    (score, order)
}

/// An order at its first peak step `k`, with its score: what the changes around it start
/// from.
#[derive(Clone, Copy)]
struct Peak<'a> {
    cost: &'a Cost,
    deps: &'a Deps,
    order: &'a [u32],
    k: usize,
    score: Score,
}

impl Peak<'_> {
/// Exact searches over windows around step `k`; the first that lowers the score.
fn by_window(&self, profile: &[u64], budget: &mut u64) -> Option<(Score, Vec<u32>)> {
    let Peak {
        cost,
        deps,
        order,
        k,
        score,
    } = *self;
    let n = order.len();
    let mut last = (usize::MAX, usize::MAX);
    for w in WIDTHS {
        let w = w.min(n);
        let a = k.saturating_sub(w / 2).min(n - w);
        let b = a + w;
        if (a, b) == last {
            break;
        }
        last = (a, b);
        let limit = profile[a..b].iter().copied().max().unwrap_or(0);
        let Some((inner, _)) = exact::window(cost, &deps.preds, order, (a, b), limit, budget)
        else {
            if *budget == 0 {
                return None;
            }
            continue;
        };
        if inner[..] == order[a..b] {
            continue;
        }
        let mut cand = order.to_vec();
        cand[a..b].copy_from_slice(&inner);
        let s = self.score_of(&cand, budget)?;
        if s < score {
            return Some((s, cand));
        }
    }
    None
}

/// Moves of one op near step `k` to another step its dependencies allow; the best that lowers
/// the score.
fn by_move(&self, budget: &mut u64) -> Option<(Score, Vec<u32>)> {
    let Peak {
        deps,
        order,
        k,
        score,
        ..
    } = *self;
    let n = order.len();
    let mut pos = vec![0usize; n];
    for (i, &o) in order.iter().enumerate() {
        pos[o as usize] = i;
    }
    let mut best: Option<(Score, Vec<u32>)> = None;
    for p in k.saturating_sub(REACH)..(k + REACH + 1).min(n) {
        let o = order[p] as usize;
        let earliest = deps.preds[o].iter().map(|&q| pos[q] + 1).max().unwrap_or(0);
        let latest = deps.succs[o]
            .iter()
            .map(|&q| pos[q])
            .min()
            .map_or(n - 1, |q| q - 1);
        let mut targets = [earliest, latest, k.saturating_sub(1), k + 1, k];
        targets.sort_unstable();
        for (i, &q) in targets.iter().enumerate() {
            if q == p || q < earliest || q > latest || (i > 0 && targets[i - 1] == q) {
                continue;
            }
            let mut cand = order.to_vec();
            let op = cand.remove(p);
            cand.insert(q, op);
            let s = self.score_of(&cand, budget)?;
            if s < best.as_ref().map_or(score, |b| b.0) {
                best = Some((s, cand));
            }
        }
    }
    best
}

/// The score of candidate order `cand`, paid from `budget` (`None` once it runs out).
fn score_of(&self, cand: &[u32], budget: &mut u64) -> Option<Score> {
    spend(budget, self.cost.profile_work())?;
    Some(Score::of(&self.cost.profile(cand)))
}
}
