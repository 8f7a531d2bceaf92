//! Running a packer: [`pack`] and [`pack_report`], the `auto` policy's stages, and
//! packing the parts of a problem that splits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use std::vec::Vec;

use super::gaps::GapRule;
use super::greedy::{Placer, size_order};
use super::optimal::OptimalOptions;
use super::options::{AutoOptions, HillClimbOptions};
use super::bounds::{Known, certify, certify_known, height_lower_bound};
use super::problem::{Certificate, Packing, Problem};
use super::kind::PlannerKind;
use super::{best_of, deadline, hill_climb, large, optimal, split, window};

/// A packing with its certificate and what the search did.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The offsets.
    pub packing: Packing,
    /// Height against the lower bound.
    pub certificate: Certificate,
    /// Work done.
    pub stats: SearchStats,
}

/// What a planner did: deterministic counts, no times (with a time limit, where it cut).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// For the search planners, the greedy order (a name of [`GREEDY_ORDERS`]) and gap rule
    /// whose packing seeded the search.
    pub seed: Option<(&'static str, GapRule)>,
    /// Hill-climb re-packs tried.
    pub iterations: u32,
    /// Hill-climb re-packs that lowered the height.
    pub improvements: u32,
    /// Items placed in all, re-packs included.
    pub placements: u64,
    /// Work units spent (items placed plus placed neighbours examined), what
    /// [`AutoOptions::budget`] limits.
    pub work: u64,
    /// Nodes of the exact search.
    pub nodes: u64,
    /// Independent parts the problem was planned as (0 or 1: planned whole).
    pub parts: u32,
    /// A stage stopped at the time limit before it was done: the one field that depends
    /// on the machine (never set without a time limit).
    pub timed_out: bool,
}

/// The placement orders best-of-greedy tries, by name.
pub const GREEDY_ORDERS: &[&str] = best_of::ORDERS;


/// The state a packer runs with: the placement engine, the counts it reports, and whether an
/// exact search proved its packing optimal.
pub struct Run<'p> {
    pub(super) placer: Placer<'p>,
    stats: SearchStats,
    proven: bool,
    /// Threads for the first stage's passes, as the `threads` option gives them (0: one per
    /// core; the result does not depend on it).
    threads: u32,
    /// What is known of the items the first stage placed, which the searches after it keep.
    known_bound: Option<Known>,
}

impl<'p> Run<'p> {
    /// A fresh run over `problem`: nothing placed, nothing counted.
    pub(super) fn new(problem: &'p Problem) -> Run<'p> {
        Run {
            placer: Placer::new(problem),
            stats: SearchStats::default(),
            proven: false,
            threads: 0,
            known_bound: None,
        }
    }

    /// The report of the run that returned `packing`: its counts and the packing's
    /// certificate.
    pub(super) fn report(&self, problem: &Problem, packing: Packing) -> Report {
        let mut stats = self.stats;
        stats.placements += self.placer.placements;
        stats.work += self.placer.work;
        let mut certificate = certify_known(problem, &packing, self.known_bound.as_ref());
        if self.proven {
            certificate = certificate.proven_optimal();
        }
        Report {
            packing,
            certificate,
            stats,
        }
    }
}

/// Problems with fewer items run the first stage's passes on one thread.
const THREADED_FROM: usize = 4096;

/// Threads for `threads` as an option gives it: 0 means one per core.
fn threads_for(threads: u32) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |t| t.get()),
        t => t as usize,
    }
}

impl std::fmt::Debug for Run<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("stats", &self.stats)
            .field("proven", &self.proven)
            .finish_non_exhaustive()
    }
}

impl Run<'_> {
    /// Best-of-greedy, then the hill climb within `budget` when one is given.
    pub(super) fn search(&mut self, budget: Option<hill_climb::Budget>) -> Packing {
        self.search_to(budget, 0, u64::MAX, None)
    }

    /// [`Run::search`], stopping as soon as the height is at most `target` (or the lower
    /// bound), with at most `seed_budget` placements in the first stage's passes. With
    /// `large` (nodes, most items), the large items are placed exactly and the rest around
    /// them ([`large::lower`]) between the first stage and the climb, which is skipped when
    /// that reaches the target.
    fn search_to(
        &mut self,
        budget: Option<hill_climb::Budget>,
        target: u64,
        seed_budget: u64,
        large: Option<(u64, usize, usize)>,
    ) -> Packing {
        // Under a time limit the first stage and the large items stop where the climb does.
        let deadline = budget.as_ref().and_then(|b| b.deadline);
        let seed = self.first_stage(target, seed_budget, deadline);
        let mut large = match large {
            Some((node_budget, max_items, peak_max_items))
                if seed.packing.height > seed.lower_bound =>
            {
                let problem = self.placer.problem;
                let start = seed.packing.clone();
                let limits = (node_budget, deadline);
                let from = large::Lowering::new(problem, start, seed.lower_bound, limits);
                let (found, nodes, cut) = large::lower(from, max_items);
                self.stats.nodes += nodes;
                self.stats.timed_out |= cut;
                // The window around the op of most load, from the lower of the two.
                let (found, nodes, cut) =
                    if found.height > seed.lower_bound && peak_max_items > 0 {
                        let from = large::Lowering::new(problem, found, seed.lower_bound, limits);
                        large::peak_window(from, peak_max_items)
                    } else {
                        (found, 0, false)
                    };
                self.stats.nodes += nodes;
                self.stats.timed_out |= cut;
                Some(found).filter(|p| p.height < seed.packing.height)
            }
            _ => None,
        };
        if let Some(found) = large.take_if(|p| p.height <= seed.lower_bound) {
            return found;
        }
        let packing = match budget {
            Some(budget) => self.climb(seed, budget),
            None => seed.packing,
        };
        match large {
            Some(found) if found.height < packing.height => found,
            _ => packing,
        }
    }

    /// Best-of-greedy's seed ([`best_of::seed`]), stopping at `target`, within
    /// `seed_budget` placements and with no pass started after `deadline`; the run keeps its
    /// origin and the bound of the items it placed.
    fn first_stage(
        &mut self,
        target: u64,
        seed_budget: u64,
        deadline: Option<Instant>,
    ) -> best_of::Seed {
        let started = self.placer.placements;
        let reference = best_of::reference(&mut self.placer);
        self.first_stage_from(reference, started, (target, seed_budget, deadline))
    }

    /// [`Run::first_stage`] after its reference pass ([`best_of::reference`]), which started
    /// when the placer had placed `started` items, with its target, placement budget and
    /// deadline.
    fn first_stage_from(
        &mut self,
        reference: (Vec<usize>, Packing),
        started: u64,
        budget: (u64, u64, Option<Instant>),
    ) -> best_of::Seed {
        // On a model's few hundred tensors a pass takes microseconds, less than starting a
        // thread: small problems run their passes on this one.
        let threads = if self.placer.problem.items.len() < THREADED_FROM {
            1
        } else {
            threads_for(self.threads)
        };
        let seed = best_of::seed(&mut self.placer, reference, started, budget, threads);
        self.stats.seed = Some(seed.origin);
        self.stats.timed_out |= seed.cut;
        let placed = seed.packing.offsets.iter().map(Option::is_some).collect();
        self.known_bound = Some(Known {
            placed,
            bound: seed.placed_bound,
            aligned: std::cell::OnceCell::new(),
        });
        seed
    }

    /// The hill climb from `seed` within `budget`.
    fn climb(&mut self, seed: best_of::Seed, budget: hill_climb::Budget) -> Packing {
        let (packing, climb) = hill_climb::climb(&mut self.placer, seed, budget);
        self.stats.iterations = climb.iterations;
        self.stats.improvements = climb.improvements;
        self.stats.timed_out |= climb.timed_out;
        packing
    }

    /// The exact search from `packing` (see [`exact_stage`]), the run's last stage: the
    /// placer's index is freed first, the search building its own.
    fn exact(&mut self, packing: Packing, opts: &OptimalOptions) -> Packing {
        self.placer.free_index();
        let problem = self.placer.problem;
        let (packing, proven) = exact_stage(problem, packing, opts, &mut self.stats);
        self.proven = proven;
        packing
    }
}

/// The hill climb's budget under options `o`.
fn climb_budget(o: &HillClimbOptions) -> hill_climb::Budget {
    hill_climb::Budget {
        iterations: o.iterations,
        max_stall: o.max_stall_iterations,
        work: Some(o.budget),
        seed: o.seed,
        deadline: None,
    }
}

pub(super) fn run_hill_climb(kind: &PlannerKind, run: &mut Run<'_>) -> Packing {
    let o = match kind {
        PlannerKind::HillClimb(o) => o.clone(),
        _ => HillClimbOptions::default(),
    };
    run.search(Some(climb_budget(&o)))
}

pub(super) fn run_optimal(kind: &PlannerKind, run: &mut Run<'_>) -> Packing {
    let o = match kind {
        PlannerKind::Optimal(o) => o.clone(),
        _ => OptimalOptions::default(),
    };
    // The better the incumbent, the less the exact search has to do: start from the
    // default hill climb.
    let packing = run_hill_climb(&PlannerKind::HillClimb(HillClimbOptions::default()), run);
    run.exact(packing, &o)
}

/// The planners [`pack_search_chain`] runs as one run, in its order.
pub const SEARCH_CHAIN: [&str; 4] = ["greedy_by_size", "best_of_greedy", "hill_climb", "optimal"];

/// `greedy_by_size`, `best_of_greedy`, `hill_climb` and `optimal` with their default
/// options, as one run: each starts from the one before it (`optimal` from the default hill
/// climb, the climb from best-of-greedy's seed, whose reference pass is `greedy_by_size`),
/// so the run stops after each stage and reports. The reports are those
/// [`pack_report`](super::pack_report) gives for each planner alone; each time is what that
/// planner alone takes (its stages, without the reports made for the planners before it).
/// For `planner compare`, where running the four apart did the reference pass four times
/// and best-of-greedy's passes three times (on 10^6 items, 3 s and 8.7 s each).
///
/// With a `deadline`, best-of-greedy's passes, the climb and the exact search each stop at
/// an equal share of the time left when they start (a third, a half, all of it); a report
/// whose packing a stop changed says so in [`SearchStats::timed_out`], as do the reports
/// after it. The reference pass runs whatever the clock says. Without one the reports are
/// the same on every machine.
pub fn pack_search_chain(
    problem: &Problem,
    deadline: Option<Instant>,
) -> [(&'static str, Report, std::time::Duration); 4] {
    let [by_size_name, best_of_name, climb_name, exact_name] = SEARCH_CHAIN;
    let start = Instant::now();
    // Time spent on the reports of the earlier stages, left out of the later ones.
    let mut reporting = std::time::Duration::ZERO;
    let mut report = |name: &'static str, run: &Run<'_>, packing: &Packing| {
        // The reports timed are inside the elapsed time; saturating all the same, so no
        // clock quirk can panic here.
        let took = start.elapsed().saturating_sub(reporting);
        let at = Instant::now();
        let r = run.report(problem, packing.clone());
        let spent = at.elapsed();
        reporting += spent;
        (name, r, took + spent)
    };
    let mut run = Run::new(problem);
    let reference = best_of::reference(&mut run.placer);
    let by_size = report(by_size_name, &run, &reference.1);
    // The stage's share of the time left: 1/`stages` of it.
    let share = |stages: u32| {
        deadline.map(|d| {
            let now = Instant::now();
            now + d.saturating_duration_since(now) / stages
        })
    };
    let seed = run.first_stage_from(reference, 0, (0, u64::MAX, share(3)));
    let best_of = report(best_of_name, &run, &seed.packing);
    let budget = hill_climb::Budget {
        deadline: share(2),
        ..climb_budget(&HillClimbOptions::default())
    };
    let packing = run.climb(seed, budget);
    let climbed = report(climb_name, &run, &packing);
    let exact = OptimalOptions {
        time_limit: deadline::left(deadline),
        ..OptimalOptions::default()
    };
    let packing = if !deadline::passed(deadline) {
        run.exact(packing, &exact)
    } else {
        // Out of time before the exact search started: cut, unless it had nothing to do.
        run.stats.timed_out |= packing.height > height_lower_bound(problem);
        packing
    };
    let exact = report(exact_name, &run, &packing);
    [by_size, best_of, climbed, exact]
}

pub(super) fn run_auto(kind: &PlannerKind, run: &mut Run<'_>) -> Packing {
    let o = match kind {
        PlannerKind::Auto(o) => o.clone(),
        _ => AutoOptions::default(),
    };
    let deadline = o.time_limit.map(|d| Instant::now() + d);
    run.threads = o.threads;
    let problem = run.placer.problem;
    if problem.items.len() >= o.split_min_items as usize
        && let Some(split) = split::Split::of(problem)
    {
        let packing = run_parts(problem, &split, &o, deadline, &mut run.stats);
        // Parts are planned without the capacity: when they do not fit under it together,
        // the whole problem gets its own try (the answer is then the same as without the
        // decomposition, only later).
        if problem.capacity.is_none_or(|c| packing.height <= c) {
            return packing;
        }
    }
    auto_stages(run, &o, (0, false), deadline)
}

/// The stages of `auto` after any decomposition, stopping at a height of `target` (or the
/// lower bound); `windows` when the problem is a decomposition's part, too large for the
/// exact search, so [`window::lower_peak`] searches windows around its peak instead.
fn auto_stages(
    run: &mut Run<'_>,
    o: &AutoOptions,
    (target, windows): (u64, bool),
    deadline: Option<Instant>,
) -> Packing {
    // Under a time limit the climb may take half of what is left when the exact search or
    // the windows follow, all of it otherwise.
    let n = run.placer.problem.items.len();
    let whole = n <= o.exact_max_items as usize;
    let exact = o.node_budget > 0 && (whole || (windows && n <= o.part_exact_max_items as usize));
    let searched_after = exact || (windows && o.node_budget > 0);
    let climb_until = deadline.map(|d| {
        let now = Instant::now();
        let left = d.saturating_duration_since(now);
        now + if searched_after { left / 2 } else { left }
    });
    let timed = deadline.is_some();
    // Large items first (an exact search too) where the exact search or the windows run,
    // and under a time limit. Problems without time cuts above `exact_max_items` (the random
    // ones) skip it otherwise: there it lowered random 20k problems by 0.3-1.8 % but took
    // 1.2-1.5 s more, against their 2 s target.
    let large = o.node_budget > 0 && o.large_max_items > 0 && (whole || windows || timed);
    // A part's climb keeps its work limits under a time limit too: a part that stops early
    // leaves its time to the parts after it ([`run_parts`]).
    let open_ended = timed && !windows;
    let packing = run.search_to(
        Some(hill_climb::Budget {
            iterations: if open_ended { u32::MAX } else { o.iterations },
            max_stall: if open_ended { None } else { o.max_stall_iterations },
            work: if open_ended { None } else { Some(o.budget) },
            seed: o.seed,
            deadline: climb_until,
        }),
        target,
        o.seed_budget,
        large.then_some((
            o.node_budget,
            o.large_max_items as usize,
            o.peak_max_items as usize,
        )),
    );
    let problem = run.placer.problem;
    let mut packing = packing;
    if exact && packing.height > target && !certify(problem, &packing).optimal {
        if deadline::passed(deadline) {
            run.stats.timed_out = true;
        } else {
            // A part that windows may follow keeps to the node budget under a time limit too.
            let opts = OptimalOptions {
                node_budget: if timed && whole {
                    u64::MAX
                } else {
                    o.node_budget
                },
                time_limit: deadline::left(deadline),
            };
            packing = run.exact(packing, &opts);
        }
    }
    if windows && !whole && o.node_budget > 0 && packing.height > target {
        // Too large to search whole, or searched whole in vain: search windows around the
        // peak. Only on the parts of a decomposition: on problems without time cuts (the
        // random ones) every buffer overlaps hundreds of others, a node costs ten times as
        // much and the windows were measured to gain nothing there.
        let floor = target.max(height_lower_bound(problem));
        let limits = (o.node_budget, deadline);
        let (found, nodes, cut) = window::lower_peak(problem, packing, floor, limits);
        run.stats.nodes += nodes;
        run.stats.timed_out |= cut;
        packing = found;
    }
    packing
}

/// Plans the parts of `split` with `auto`'s stages, each stopping once it no longer
/// decides the height (at the whole problem's lower bound), on up to `o.threads` threads,
/// and puts them together. Under a `deadline`, a part gets the time its items' share of all
/// the parts' items gives it on the threads, or, where parts before it finished early, that
/// share of the time left among the parts not started yet: the first parts cannot take it
/// all, and a part that overran (the first pass of each part runs whatever the clock says)
/// does not starve the last ones.
fn run_parts(
    problem: &Problem,
    split: &split::Split,
    o: &AutoOptions,
    deadline: Option<Instant>,
    stats: &mut SearchStats,
) -> Packing {
    let bound = height_lower_bound(problem);
    let slack = (u128::from(bound) * u128::from(o.slack_ppm) / 1_000_000) as u64;
    let goal = bound.saturating_add(slack);
    let n = split.parts.len();
    let threads = threads_for(o.threads);
    let total = split.parts.iter().map(|p| p.1.len()).sum::<usize>().max(1);
    let not_started = AtomicUsize::new(total);
    let started = Instant::now();
    let solve = |k: usize| {
        let items = split.parts[k].1.len();
        let waiting = not_started.fetch_sub(items, Ordering::Relaxed).max(1);
        let deadline = deadline.map(|d| {
            let now = Instant::now();
            let share = |of: usize| ((threads * items) as f64 / of as f64).min(1.0);
            let fair = d.saturating_duration_since(started).mul_f64(share(total));
            let left = d.saturating_duration_since(now).mul_f64(share(waiting));
            now + fair.max(left)
        });
        let sub = split.part_problem(problem, k);
        // The parts already share the threads: each part's passes run on its own.
        let mut run = Run {
            placer: Placer::new(&sub),
            stats: SearchStats::default(),
            proven: false,
            threads: 1,
            known_bound: None,
        };
        let target = goal.saturating_sub(split.parts[k].0);
        let packing = auto_stages(&mut run, o, (target, true), deadline);
        let mut stats = run.stats;
        stats.placements = run.placer.placements;
        stats.work = run.placer.work;
        (packing, stats)
    };
    // Largest parts first, for balance; which thread plans a part changes nothing.
    let mut queue: Vec<usize> = (0..n).collect();
    queue.sort_by_key(|&k| (std::cmp::Reverse(split.parts[k].1.len()), k));
    let results = crate::par::each(threads, &queue, solve, |_, _| false);
    assemble(problem, split, results, stats)
}

/// The whole problem's packing from its parts' (a part that failed to plan, which a
/// panicking thread would leave, is planned again here).
fn assemble(
    problem: &Problem,
    split: &split::Split,
    results: Vec<Option<(Packing, SearchStats)>>,
    stats: &mut SearchStats,
) -> Packing {
    let mut offsets: Vec<Option<u64>> = vec![None; problem.items.len()];
    let mut height = 0u64;
    for &(i, off) in &split.stacked {
        offsets[i] = Some(off);
        height = height.max(off.saturating_add(problem.items[i].size));
    }
    let mut peak = (0u64, None);
    for (k, r) in results.into_iter().enumerate() {
        let (base, idx) = &split.parts[k];
        let (packing, s) = r.unwrap_or_else(|| {
            let sub = split.part_problem(problem, k);
            // What `greedy_by_size` packs.
            let order = size_order(&sub);
            (
                Placer::new(&sub).place_with_spill(&order, GapRule::Lowest),
                SearchStats::default(),
            )
        });
        for (&i, o) in idx.iter().zip(&packing.offsets) {
            offsets[i] = o.map(|o| o.saturating_add(*base));
        }
        let top = base.saturating_add(packing.height);
        height = height.max(top);
        if top > peak.0 || peak.1.is_none() {
            peak = (top, s.seed);
        }
        stats.iterations += s.iterations;
        stats.improvements += s.improvements;
        stats.placements += s.placements;
        stats.work += s.work;
        stats.nodes += s.nodes;
        stats.timed_out |= s.timed_out;
    }
    stats.seed = peak.1;
    stats.parts = u32::try_from(split.parts.len()).unwrap_or(u32::MAX);
    Packing { offsets, height }
}

/// The exact search over the items `packing` placed (the others stay spilled), from
/// `packing`: the lower of the two (`packing` on ties), and whether the search proved that
/// height optimal for these items.
fn exact_stage(
    problem: &Problem,
    packing: Packing,
    opts: &OptimalOptions,
    stats: &mut SearchStats,
) -> (Packing, bool) {
    let keep: Vec<usize> = (0..problem.items.len())
        .filter(|&i| packing.offsets[i].is_some())
        .collect();
    let sub = Problem {
        items: keep.iter().map(|&i| problem.items[i].clone()).collect(),
        capacity: None,
    };
    let hint = Packing {
        offsets: keep.iter().map(|&i| packing.offsets[i]).collect(),
        height: packing.height,
    };
    let (found, proven, search) = optimal::minimize_with_stats(&sub, opts, Some(hint));
    stats.nodes += search.nodes;
    stats.timed_out |= search.timed_out;
    if found.height >= packing.height || found.offsets.len() != keep.len() {
        let proven = proven && found.height == packing.height;
        return (packing, proven);
    }
    let mut offsets = vec![None; problem.items.len()];
    for (&i, &o) in keep.iter().zip(&found.offsets) {
        offsets[i] = o;
    }
    // The exact search knows no capacity: a spillable item it put above it would break
    // the spill rule, so such a packing is not taken.
    let passes_capacity = problem.capacity.is_some_and(|c| {
        keep.iter().any(|&i| {
            let it = &problem.items[i];
            it.spillable && offsets[i].is_none_or(|o| o.saturating_add(it.size) > c)
        })
    });
    if passes_capacity
        || offsets
            .iter()
            .zip(&packing.offsets)
            .any(|(a, b)| a.is_some() != b.is_some())
    {
        return (packing, false);
    }
    (
        Packing {
            offsets,
            height: found.height,
        },
        proven,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::Rng;
    use crate::pack::optimal::is_valid;
    use crate::pack::pack_report;
    use crate::pack::tests::item;

    /// Two phases of 300 random items each (ops 0-99 and 100-199), which `auto` plans as two
    /// parts.
    fn two_phases() -> Problem {
        let mut rng = Rng::new(41);
        let mut items = Vec::new();
        for phase in 0..2u32 {
            for _ in 0..300 {
                let start = phase * 100 + rng.below(90) as u32;
                let end = (start + 1 + rng.below(10) as u32).min(phase * 100 + 99);
                items.push(item(1 + rng.below_u64(4096), start, end));
            }
        }
        Problem {
            items,
            capacity: None,
        }
    }

    #[test]
    fn a_time_limit_bounds_every_stage_of_a_split_problem() {
        let p = two_phases();
        assert_eq!(split::Split::of(&p).map(|s| s.parts.len()), Some(2));
        let untimed = AutoOptions {
            split_min_items: 10,
            ..AutoOptions::default()
        };
        let r = pack_report(&PlannerKind::Auto(untimed.clone()), &p);
        assert!(!r.stats.timed_out);
        // Without a time limit the parts' searches run (so a limit has something to cut).
        assert!(r.stats.nodes > 0, "{:?}", r.stats);
        // With the time already up, each part keeps its first pass: no other pass, no
        // climb, no exact search in any stage, and the report says it was cut.
        let timed = AutoOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..untimed
        };
        let cut = pack_report(&PlannerKind::Auto(timed), &p);
        assert!(cut.stats.timed_out);
        assert_eq!((cut.stats.nodes, cut.stats.iterations), (0, 0), "{:?}", cut.stats);
        assert!(cut.packing.offsets.iter().all(Option::is_some));
        assert!(is_valid(&p, &cut.packing.offsets, cut.packing.height));
        assert!(cut.packing.height >= r.packing.height);
    }
}
