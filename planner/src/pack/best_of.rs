//! Best-of-greedy: several placement orders times both gap rules, keeping the lowest.
//!
//! Every search planner (`best_of_greedy`, `hill_climb`, `auto`) keeps the set of items that
//! `greedy_by_size` places, its *reference*: items it spills stay spilled, the others are
//! re-packed in other orders, and a candidate replaces the best only when it is strictly
//! lower and keeps every spillable item under the capacity. So a search is never worse than
//! `greedy_by_size`, in this arena and, because the same items spill, in the next one.

use std::cmp::Reverse;
use std::vec::Vec;

use super::greedy::{GapRule, Placer, size_order};
use super::{Packing, lower_bound_of};

/// The orders tried, by name, in the order they are tried.
pub const ORDERS: &[&str] = &["size", "start", "end", "area", "duration", "conflicts"];

/// The best placement found so far: its order (of the non-fixed placed items), gap rule and
/// result.
#[derive(Debug, Clone)]
pub(crate) struct Seed {
    pub(crate) order: Vec<usize>,
    pub(crate) rule: GapRule,
    pub(crate) packing: Packing,
    /// Lower bound of the placed items.
    pub(crate) lower_bound: u64,
    /// Which order and rule won, for reports.
    pub(crate) origin: (&'static str, GapRule),
}

/// Offsets with only the fixed items placed, and their height.
pub(crate) fn fixed_only(placer: &Placer<'_>) -> (Vec<Option<u64>>, u64) {
    let items = &placer.problem.items;
    let offsets: Vec<Option<u64>> = items.iter().map(|it| it.fixed).collect();
    let height = items
        .iter()
        .filter_map(|it| it.fixed.map(|o| o.saturating_add(it.size)))
        .max()
        .unwrap_or(0);
    (offsets, height)
}

/// `greedy_by_size`, then, unless it already reaches the lower bound (or `target`), every
/// order of [`ORDERS`] with each gap rule over the items it placed; the lowest wins, earlier
/// on ties. The seed's `lower_bound` is the larger of the bound and `target`: where searches
/// from it stop.
pub(crate) fn seed(placer: &mut Placer<'_>, target: u64) -> Seed {
    let problem = placer.problem;
    let items = &problem.items;
    let reference = placer.place_with_spill(&size_order(problem), GapRule::Lowest);
    let placed: Vec<bool> = reference.offsets.iter().map(Option::is_some).collect();
    let lower_bound = lower_bound_of(problem, Some(&placed)).max(target);
    // The reference order, as the searches see it: unspillable items first, as placed.
    let mut order: Vec<usize> = size_order(problem)
        .into_iter()
        .filter(|&i| placed[i] && items[i].fixed.is_none())
        .collect();
    order.sort_by_key(|&i| items[i].spillable);
    let mut best = Seed {
        order,
        rule: GapRule::Lowest,
        packing: reference,
        lower_bound,
        origin: ("size", GapRule::Lowest),
    };
    if best.packing.height <= lower_bound {
        return best;
    }
    let working = best.order.clone();
    for (name, order) in orders(placer, &working) {
        for rule in [GapRule::Lowest, GapRule::BestFit] {
            if (name, rule) == ("size", GapRule::Lowest) {
                continue; // the reference itself
            }
            let limit = best.packing.height - 1; // height > lower_bound >= 0
            if let Some(packing) = placer.place_fresh(&order, rule, limit, false) {
                let height = packing.height;
                best = Seed {
                    order: order.clone(),
                    rule,
                    packing,
                    lower_bound,
                    origin: (name, rule),
                };
                if height <= lower_bound {
                    return best;
                }
            }
        }
    }
    best
}

/// `working` sorted by each order of [`ORDERS`] (ties: larger first, then index).
fn orders(placer: &Placer<'_>, working: &[usize]) -> Vec<(&'static str, Vec<usize>)> {
    let items = &placer.problem.items;
    let sorted = |key: &dyn Fn(usize) -> u128| {
        let mut v = working.to_vec();
        v.sort_by_key(|&i| (key(i), Reverse(items[i].size), i));
        v
    };
    let duration = |i: usize| u128::from(items[i].end.saturating_sub(items[i].start)) + 1;
    let mut out = Vec::with_capacity(ORDERS.len());
    for &name in ORDERS {
        let order = match name {
            "size" => sorted(&|i| u128::MAX - u128::from(items[i].size)),
            "start" => sorted(&|i| u128::from(items[i].start)),
            "end" => sorted(&|i| u128::MAX - u128::from(items[i].end)),
            "area" => sorted(&|i| u128::MAX - u128::from(items[i].size) * duration(i)),
            "duration" => sorted(&|i| u128::MAX - duration(i)),
            _ => {
                let mut degree = vec![0u128; items.len()];
                for &i in working {
                    degree[i] = placer.overlaps.degree(items, i) as u128;
                }
                sorted(&|i| u128::MAX - degree[i])
            }
        };
        out.push((name, order));
    }
    out
}
