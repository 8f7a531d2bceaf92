//! Best-of-greedy: several placement orders times both gap rules, keeping the lowest.
//!
//! Every search planner (`best_of_greedy`, `hill_climb`, `auto`) keeps the set of items that
//! `greedy_by_size` places, its *reference*: items it spills stay spilled, the others are
//! re-packed in other orders, and a candidate replaces the best only when it is strictly
//! lower and keeps every spillable item under the capacity. So a search is never worse than
//! `greedy_by_size`, in this arena and, because the same items spill, in the next one.

use std::cmp::Reverse;
use std::sync::Arc;
use std::time::Instant;
use std::vec::Vec;

use super::deadline;
use super::gaps::GapRule;
use super::greedy::{Placer, size_order};
use super::{Packing, lower_bound_of, tflm};

/// The orders tried, by name, in the order they are tried.
pub const ORDERS: &[&str] = &["size", "start", "end", "area", "duration", "conflicts"];

/// The best placement found so far: its order (of the non-fixed placed items), gap rule and
/// result.
#[derive(Debug, Clone)]
pub(crate) struct Seed {
    pub(crate) order: Vec<usize>,
    pub(crate) rule: GapRule,
    pub(crate) packing: Packing,
    /// Lower bound of the placed items, at least the search's target.
    pub(crate) lower_bound: u64,
    /// [`lower_bound_of`] the placed items alone (the certificate's bound when the search
    /// keeps them).
    pub(crate) placed_bound: u64,
    /// Which order and rule won, for reports.
    pub(crate) origin: (&'static str, GapRule),
    /// Passes were left out because the deadline had passed.
    pub(crate) cut: bool,
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

/// A pass of the first stage after the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// TFLM's packing ([`tflm_candidate`]).
    Tflm,
    /// An order of [`ORDERS`] with a gap rule.
    Order(&'static str, GapRule),
}

/// What one pass found (a packing below the reference's height, or nothing), and the items
/// it placed and the work it did.
type PassResult = (Option<Seed>, u64, u64);

/// The reference pass: `greedy_by_size`'s order and what it packs (exactly what the
/// `greedy_by_size` planner packs).
pub(crate) fn reference(placer: &mut Placer<'_>) -> (Vec<usize>, Packing) {
    let by_size = size_order(placer.problem);
    let packing = placer.place_with_spill(&by_size, GapRule::Lowest);
    (by_size, packing)
}

/// From the reference pass's order and packing (`greedy_by_size`, [`reference`], which
/// started when the placer had placed `started` items), unless it already reaches the lower
/// bound (or `target`), TFLM's order over sizes rounded to its unit ([`super::tflm`]) and
/// every order of [`ORDERS`] with each gap rule over the items it placed; the lowest wins,
/// earlier on ties. A pass after the reference runs only while what is left of
/// `max_placements` covers as many items as the reference placed. Those passes run on up to
/// `threads` threads; the seed and the counts do not depend on how many. The seed's
/// `lower_bound` is the larger of the bound and `target`: where searches from it stop.
/// Once `deadline` has passed no further pass starts (the seed says it was `cut`).
pub(crate) fn seed(
    placer: &mut Placer<'_>,
    (by_size, reference): (Vec<usize>, Packing),
    started: u64,
    (target, max_placements, deadline): (u64, u64, Option<Instant>),
    threads: usize,
) -> Seed {
    let problem = placer.problem;
    let items = &problem.items;
    placer.relist_if_unmerged();
    let placed: Vec<bool> = reference.offsets.iter().map(Option::is_some).collect();
    let placed_bound = lower_bound_of(problem, Some(&placed));
    let lower_bound = placed_bound.max(target);
    // The reference order, as the searches see it: unspillable items first, as placed.
    let plain: Vec<usize> = by_size
        .into_iter()
        .filter(|&i| placed[i] && items[i].fixed.is_none())
        .collect();
    let mut order = plain.clone();
    order.sort_by_key(|&i| items[i].spillable);
    let mut best = Seed {
        order,
        rule: GapRule::Lowest,
        packing: reference,
        lower_bound,
        placed_bound,
        origin: ("size", GapRule::Lowest),
        cut: false,
    };
    let per_pass = (placer.placements - started).max(1);
    let room = max_placements.saturating_sub(per_pass);
    if best.packing.height <= lower_bound || room < per_pass {
        return best;
    }
    let budgeted = usize::try_from(room / per_pass).unwrap_or(usize::MAX);
    let mut passes = vec![Pass::Tflm];
    for name in ORDERS {
        for rule in [GapRule::Lowest, GapRule::BestFit] {
            passes.push(Pass::Order(name, rule));
        }
    }
    // The size order with the lowest gap is the reference itself unless spillable items
    // moved (its ties break by start, as the reference's do): not a pass then.
    if budgeted > 1 && sorted(placer, &best.order, "size") == plain {
        passes.retain(|&p| p != Pass::Order("size", GapRule::Lowest));
    }
    passes.truncate(budgeted);
    let job = Job {
        placed: &placed,
        working: &best.order,
        height: best.packing.height,
        lower_bound,
        deadline,
    };
    placer.free_tree();
    for pass in run_passes(placer, &job, &passes, threads) {
        let Some((found, placements, work)) = pass else {
            // Not started: the deadline had passed (so had it for every pass after it).
            best.cut = true;
            break;
        };
        placer.placements += placements;
        placer.work += work;
        if let Some(found) = found
            && found.packing.height < best.packing.height
        {
            best = Seed {
                lower_bound,
                placed_bound,
                ..found
            };
            if best.packing.height <= lower_bound {
                break;
            }
        }
    }
    best
}

/// What every pass after the reference reads.
struct Job<'a> {
    /// The items the reference placed.
    placed: &'a [bool],
    /// The reference order with spillable items last, which the orders sort.
    working: &'a [usize],
    /// The reference's height: a pass that reaches it stops.
    height: u64,
    /// Where the seed stops.
    lower_bound: u64,
    /// No pass starts after it.
    deadline: Option<Instant>,
}

/// Runs `passes`, each with its own placer over `placer`'s overlaps, on up to `threads`
/// threads; returns each pass's result in order, up to and including the first that
/// reaches the lower bound (later ones are not part of the seed, whether or not a thread
/// ran them). Each pass stops at the reference's height, not at the best so far, so its
/// result and counts are the same whichever passes ran before it. A pass not started because
/// the job's deadline had passed is `None`.
fn run_passes(
    placer: &Placer<'_>,
    job: &Job<'_>,
    passes: &[Pass],
    threads: usize,
) -> Vec<Option<PassResult>> {
    let run = |pass: Pass| {
        if deadline::passed(job.deadline) {
            return None;
        }
        let mut own = Placer::with_overlaps(placer.problem, Arc::clone(&placer.overlaps));
        let found = match pass {
            Pass::Tflm => tflm_candidate(&mut own, job.placed, job.height),
            Pass::Order(name, rule) => {
                let order = sorted(&own, job.working, name);
                own.place_fresh(&order, rule, job.height - 1, false)
                    .map(|packing| Seed {
                        order,
                        rule,
                        packing,
                        lower_bound: 0,
                        placed_bound: 0,
                        origin: (name, rule),
                        cut: false,
                    })
            }
        };
        Some((found, own.placements, own.work))
    };
    let at_bound = |r: &Option<PassResult>| {
        r.as_ref()
            .and_then(|r| r.0.as_ref())
            .is_some_and(|s| s.packing.height <= job.lower_bound)
    };
    // Passes are taken in order; once one reaches the bound, later ones are not started
    // (they cannot win), and a pass whose thread failed is run again here.
    let order: Vec<usize> = (0..passes.len()).collect();
    let mut results = crate::par::each(threads, &order, |k| run(passes[k]), |_, r| at_bound(r));
    let mut out = Vec::new();
    for (k, r) in results.iter_mut().enumerate() {
        let r = r.take().unwrap_or_else(|| run(passes[k]));
        let stop = at_bound(&r);
        out.push(r);
        if stop {
            break;
        }
    }
    out
}

/// TFLM's packing ([`super::tflm`]: sizes rounded up to its unit, largest first, lowest
/// gap) as a seed, when it places the same items as the reference (`placed`). Its offsets
/// are valid for the true sizes, which its height is measured with; its order is TFLM's.
fn tflm_candidate(placer: &mut Placer<'_>, placed: &[bool], height: u64) -> Option<Seed> {
    let problem = placer.problem;
    let items = &problem.items;
    let rounded = tflm::rounded(problem);
    let mut order = tflm::order(&rounded);
    let mut round = Placer::with_overlaps(&rounded, Arc::clone(&placer.overlaps));
    // A rounded end is at most `slack` above the true one: once a rounded end passes
    // `height - 1 + slack`, a true end reaches `height` and the candidate cannot win, so
    // the pass stops there (on `S_1.csv` it placed all 28 526 items in vain).
    let slack = rounded
        .items
        .iter()
        .zip(items)
        .map(|(r, it)| r.size.saturating_sub(it.size))
        .max()
        .unwrap_or(0);
    let limit = height.saturating_sub(1).saturating_add(slack);
    let packing = round.place_with_spill_below(&order, GapRule::Lowest, limit);
    placer.placements += round.placements;
    placer.work += round.work;
    let packing = packing?;
    if packing
        .offsets
        .iter()
        .map(Option::is_some)
        .ne(placed.iter().copied())
    {
        return None;
    }
    let top = items
        .iter()
        .zip(&packing.offsets)
        .filter_map(|(it, o)| o.map(|o| o.saturating_add(it.size)))
        .max()
        .unwrap_or(0);
    if top >= height {
        return None;
    }
    order.retain(|&i| placed[i]);
    order.sort_by_key(|&i| items[i].spillable);
    Some(Seed {
        order,
        rule: GapRule::Lowest,
        packing: Packing {
            offsets: packing.offsets,
            height: top,
        },
        lower_bound: 0,
        placed_bound: 0,
        origin: ("tflm", GapRule::Lowest),
        cut: false,
    })
}

/// `working` sorted by the order `name` of [`ORDERS`] (ties: larger first, then index).
fn sorted(placer: &Placer<'_>, working: &[usize], name: &str) -> Vec<usize> {
    let items = &placer.problem.items;
    let duration = |i: usize| u128::from(items[i].end.saturating_sub(items[i].start)) + 1;
    let key = |i: usize| -> u128 {
        let it = &items[i];
        match name {
            "size" => u128::MAX - u128::from(it.size),
            "start" => u128::from(it.start),
            "end" => u128::MAX - u128::from(it.end),
            "area" => u128::MAX - u128::from(it.size) * duration(i),
            "duration" => u128::MAX - duration(i),
            _ => u128::MAX - placer.overlaps.degree(items, i) as u128,
        }
    };
    // Keys computed once; every triple is distinct (the index), so an unstable sort gives
    // the one order.
    let mut keyed: Vec<(u128, Reverse<u64>, usize)> = working
        .iter()
        .map(|&i| (key(i), Reverse(items[i].size), i))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{Item, Problem};

    /// Random problems with odd sizes (TFLM's rounding to 16 changes its order's result).
    fn problem(seed: u64, n: usize) -> Problem {
        let mut rng = crate::pack::Rng::new(seed);
        let mut next = |m: u64| rng.below_u64(m);
        let items = (0..n)
            .map(|_| {
                let start = next(40) as u32;
                let len = if next(4) == 0 { next(30) } else { next(4) } as u32;
                Item::new(1 + next(500), start, start + len)
            })
            .collect();
        Problem {
            items,
            capacity: None,
        }
    }

    /// The lowest height of the reference pass and the orders of [`ORDERS`] times both gap
    /// rules, without TFLM's.
    fn classic(placer: &mut Placer<'_>, working: &[usize]) -> u64 {
        let reference = placer.place_with_spill(&size_order(placer.problem), GapRule::Lowest);
        let mut best = reference.height;
        for name in ORDERS {
            let order = sorted(placer, working, name);
            for rule in [GapRule::Lowest, GapRule::BestFit] {
                if let Some(p) = placer.place_fresh(&order, rule, u64::MAX, false) {
                    best = best.min(p.height);
                }
            }
        }
        best
    }

    /// The seed is never above TFLM's packing, including on problems where TFLM's order
    /// beats every order of best-of-greedy (the test makes sure there are some).
    #[test]
    fn never_above_tflm() {
        let mut tflm_wins = 0;
        for seed in 0..200 {
            let p = problem(seed, 60);
            let mut placer = Placer::new(&p);
            let working: Vec<usize> = (0..p.items.len()).collect();
            let classic = classic(&mut placer, &working);
            let tflm = tflm::pack(&p);
            let tflm_height = p
                .items
                .iter()
                .zip(&tflm.offsets)
                .filter_map(|(it, o)| o.map(|o| o + it.size))
                .max()
                .unwrap_or(0);
            let s = seed_of(&p);
            assert!(s.packing.height <= tflm_height, "problem {seed}");
            assert!(s.packing.height <= classic, "problem {seed}");
            assert!(crate::pack::optimal::is_valid(
                &p,
                &s.packing.offsets,
                s.packing.height
            ));
            if tflm_height < classic {
                tflm_wins += 1;
                assert_eq!(s.origin.0, "tflm", "problem {seed}");
            }
        }
        assert!(tflm_wins > 0, "no problem where TFLM's order wins");
    }

    /// TFLM's pass stops once a true end reaches the height it must beat: with a height of
    /// 1 the first item placed ends there, and the pass places no other.
    #[test]
    fn tflm_pass_stops_at_the_height_to_beat() {
        let p = problem(3, 60);
        let placed = vec![true; p.items.len()];
        let mut placer = Placer::new(&p);
        assert!(tflm_candidate(&mut placer, &placed, 1).is_none());
        assert_eq!(placer.placements, 1);
        // With room to spare it places every item.
        let mut placer = Placer::new(&p);
        assert!(tflm_candidate(&mut placer, &placed, u64::MAX).is_some());
        assert_eq!(placer.placements, 60);
    }

    fn seed_of(p: &Problem) -> Seed {
        first_stage(&mut Placer::new(p), 0, u64::MAX, 1)
    }

    /// The reference pass, then [`seed`] from it, as a run's first stage does.
    fn first_stage(placer: &mut Placer<'_>, target: u64, budget: u64, threads: usize) -> Seed {
        let started = placer.placements;
        let r = reference(placer);
        seed(placer, r, started, (target, budget, None), threads)
    }

    /// The placement budget stops passes from being started, never the reference pass.
    #[test]
    fn seed_budget_counts_whole_passes() {
        // A problem the reference pass does not solve to the bound.
        let (p, full) = (0..50)
            .map(|k| {
                let p = problem(k, 80);
                let mut placer = Placer::new(&p);
                let s = first_stage(&mut placer, 0, u64::MAX, 1);
                let n = placer.placements;
                (p, (s, n))
            })
            .find(|(_, (_, n))| *n > 80)
            .expect("a problem that needs more than one pass");
        let mut placer = Placer::new(&p);
        let s = first_stage(&mut placer, 0, 1, 1);
        assert_eq!(placer.placements, 80, "the reference pass alone");
        assert_eq!(s.origin, ("size", GapRule::Lowest));
        assert!(full.0.packing.height <= s.packing.height);
    }

    /// The passes after the reference give the same seed and the same counts on any number
    /// of threads, including budgets that cut the passes short.
    #[test]
    fn threads_change_nothing() {
        for k in 0..40 {
            let p = problem(k, 70);
            for budget in [u64::MAX, 300, 1] {
                let run = |threads: usize| {
                    let mut placer = Placer::new(&p);
                    let s = first_stage(&mut placer, 0, budget, threads);
                    (
                        s.order,
                        s.rule,
                        s.packing.offsets,
                        s.origin,
                        placer.placements,
                        placer.work,
                    )
                };
                let one = run(1);
                assert_eq!(one, run(2), "problem {k}, budget {budget}");
                assert_eq!(one, run(5), "problem {k}, budget {budget}");
            }
        }
    }
}
