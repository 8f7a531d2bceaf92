//! Large problems: decomposition into independent parts, planning in parallel, and a
//! 60k-buffer problem within the default work budget. Every packing is checked by
//! [`planner::pack::optimal::is_valid`], which shares no code with the packers.

use std::collections::BTreeMap;

use planner::pack::optimal::is_valid;
use planner::pack::{OptionValue, PlannerKind, Problem, Report, certify, pack_report};

fn auto(options: &[(&str, i64)]) -> PlannerKind {
    let o: BTreeMap<String, OptionValue> = options
        .iter()
        .map(|&(k, v)| (k.to_string(), OptionValue::Int(v)))
        .collect();
    PlannerKind::from_name("auto", &o).unwrap()
}

/// Random problems in `phases` phases that no item crosses, with a few items live over the
/// whole span: sizes log-uniform 64 B to 64 KiB, lifetimes 1 to 20 ops (80 %) or up to 200.
fn phased(n: usize, phases: u32, seed: u64) -> Problem {
    let mut rng = planner_bench::Rng(seed);
    let len = 400u32;
    let mut items = Vec::with_capacity(n);
    for k in 0..n {
        let size = rng.log_uniform(64, 64 << 10);
        if k % 97 == 0 {
            items.push(item(size, 0, phases * len - 1));
            continue;
        }
        let phase = rng.below(u64::from(phases)) as u32;
        let start = phase * len + rng.below(u64::from(len)) as u32;
        let life = if rng.below(10) < 8 {
            1 + rng.below(20)
        } else {
            1 + rng.below(200)
        } as u32;
        let end = (start + life - 1).min(phase * len + len - 1);
        items.push(item(size, start, end));
    }
    Problem {
        items,
        capacity: None,
    }
}

fn item(size: u64, start: u32, end: u32) -> planner::pack::Item {
    planner::pack::Item {
        size,
        start,
        end,
        align: [1, 8, 16][(size % 3) as usize],
        fixed: None,
        spillable: false,
    }
}

/// Real-like problem #1 of `n` buffers planned by `with` and by `without`; `with`'s packing
/// is checked valid and its certificate recomputed.
fn with_and_without(n: usize, with: &PlannerKind, without: &PlannerKind) -> (Report, Report) {
    let p = planner_bench::real_trace_like(n, 1);
    let (with, without) = (pack_report(with, &p), pack_report(without, &p));
    assert!(is_valid(&p, &with.packing.offsets, u64::MAX));
    assert_eq!(with.certificate, certify(&p, &with.packing));
    (with, without)
}

/// As [`with_and_without`], where `with` must plan lower than `without`: `with`'s report.
fn lower_with(n: usize, with: &PlannerKind, without: &PlannerKind) -> Report {
    let (with, without) = with_and_without(n, with, without);
    assert!(
        with.packing.height < without.packing.height,
        "{} not below {} without the search",
        with.packing.height,
        without.packing.height
    );
    with
}

#[test]
fn decomposed_plans_verify_and_are_no_higher() {
    for seed in 0..6 {
        let p = phased(2500, 2 + seed as u32, seed);
        let split = pack_report(&auto(&[("threads", 1)]), &p);
        let whole = pack_report(&auto(&[("split_min_items", i64::from(u32::MAX))]), &p);
        assert!(split.stats.parts > 1, "seed {seed}: not decomposed");
        assert_eq!(whole.stats.parts, 0, "seed {seed}");
        assert!(
            is_valid(&p, &split.packing.offsets, u64::MAX),
            "seed {seed}"
        );
        assert!(
            is_valid(&p, &whole.packing.offsets, u64::MAX),
            "seed {seed}"
        );
        assert!(
            split.packing.height <= whole.packing.height,
            "seed {seed}: decomposed {} above whole {}",
            split.packing.height,
            whole.packing.height
        );
        assert_eq!(split.certificate, certify(&p, &split.packing));
    }
}

#[test]
fn thread_count_does_not_change_the_plan() {
    for (k, p) in [phased(3000, 7, 11), planner_bench::real_trace_like(6000, 3)]
        .iter()
        .enumerate()
    {
        let one = pack_report(&auto(&[("threads", 1)]), p);
        let four = pack_report(&auto(&[("threads", 4)]), p);
        assert!(one.stats.parts > 1, "problem {k}: not decomposed");
        assert!(is_valid(p, &one.packing.offsets, u64::MAX), "problem {k}");
        // Byte-identical: the same offsets, the same height, the same counts.
        assert_eq!(format!("{one:?}"), format!("{four:?}"), "problem {k}");
    }
}

#[test]
fn sixty_thousand_buffers_plan_within_the_work_budget() {
    let p = planner_bench::real_trace_like(60_000, 1);
    let r = pack_report(&PlannerKind::default(), &p);
    assert!(is_valid(&p, &r.packing.offsets, u64::MAX));
    assert_eq!(r.certificate, certify(&p, &r.packing));
    assert!(r.certificate.height >= r.certificate.lower_bound);
    // The work is bounded by the default budgets (placements of the greedy passes, the
    // climb's budget and the exact search's node budget), whatever the machine.
    assert!(r.stats.placements < 60_000 * 40, "{:?}", r.stats);
}

#[test]
fn windows_around_the_peak_lower_real_like_plans() {
    // On this problem the climb leaves the deciding part 2.3 % above the bound; the exact
    // search in windows around its peak (the default node budget) takes it lower.
    // Large items first would reach the bound before any window: leave it out.
    let with = lower_with(
        4000,
        &auto(&[("large_max_items", 0)]),
        &auto(&[("node_budget", 0)]),
    );
    assert!(
        with.stats.parts >= 1 && with.stats.nodes > 0,
        "{:?}",
        with.stats
    );
}

#[test]
fn parts_of_a_few_thousand_items_get_the_whole_part_exact_search() {
    // The climb leaves the part deciding this problem's height 3.2 % above the bound, and
    // the windows around its peak do not close the gap; the exact search over the whole part
    // (2000-odd items, below `part_exact_max_items`) reaches the bound.
    // Large items first and the window around the op of most load would reach the bound
    // before it: leave them out.
    let with = lower_with(
        3000,
        &auto(&[("large_max_items", 0)]),
        &auto(&[
            ("part_exact_max_items", 0),
            ("large_max_items", 0),
            ("peak_max_items", 0),
        ]),
    );
    assert!(with.stats.parts >= 1, "{:?}", with.stats);
    assert_eq!(with.packing.height, with.certificate.lower_bound);
}

#[test]
fn large_items_first_bring_real_like_plans_to_the_bound() {
    // Every classic order and the climb leave this problem 9.2 % above the bound: they stack
    // its few hundred large buffers badly among thousands of small ones, and the exact
    // searches (whole part, windows) run out of nodes. The exact search over the large ones
    // alone, with the small ones placed around them, reaches the bound.
    let (with, without) = with_and_without(
        5000,
        &PlannerKind::default(),
        &auto(&[("large_max_items", 0)]),
    );
    assert_eq!(with.packing.height, with.certificate.lower_bound);
    assert!(
        without.packing.height > with.certificate.lower_bound / 100 * 105,
        "without large items first: {} (bound {})",
        without.packing.height,
        with.certificate.lower_bound
    );
}

#[test]
fn planning_a_csv_decomposes_it_too() {
    // `planner plan X.csv` (and every bank of a manifest) packs under a capacity, the largest
    // arena, with nothing spillable; the decomposition used to refuse any capacity, so the
    // command planned real-like 5k #1 9.2 % above the bound, and 30k problems three times
    // slower. The parts are now planned as without one. Sizes quartered: the height must fit
    // in a 2 GiB arena.
    let mut p = planner_bench::real_trace_like(5000, 1);
    for it in &mut p.items {
        it.size = it.size / 4 + 1;
    }
    let csv = planner::import::csv::CsvProblem {
        ids: (0..p.items.len()).map(|i| format!("b{i}")).collect(),
        problem: p.clone(),
    };
    let planner::ProblemOutcome::Planned(planned) =
        planner::plan_problem(&csv, "r", &PlannerKind::default(), None, 0).unwrap()
    else {
        panic!("no capacity given, so it plans");
    };
    planner::verify::verify(&planned.graph, &planned.plan).unwrap();
    let used = planned.plan.arena_usages["MEM"].used;
    assert_eq!(used, planner::pack::height_lower_bound(&p));
}

#[test]
fn parts_that_do_not_fit_under_a_capacity_together_give_the_undecomposed_plan() {
    // Under a capacity below the bound no packing fits: the parts are planned, do not fit
    // together, and the whole problem is planned as it would be without the decomposition.
    let mut p = phased(2500, 3, 0);
    let bound = planner::pack::height_lower_bound(&p);
    p.capacity = Some(bound - 1);
    let split = pack_report(&auto(&[("threads", 1)]), &p);
    let whole = pack_report(
        &auto(&[("threads", 1), ("split_min_items", i64::from(u32::MAX))]),
        &p,
    );
    assert_eq!(split.packing, whole.packing);
    // With room, the same problem is decomposed and fits.
    p.capacity = Some(bound * 2);
    let roomy = pack_report(&auto(&[("threads", 1)]), &p);
    assert!(roomy.stats.parts > 1, "{:?}", roomy.stats);
    assert!(roomy.packing.height <= bound * 2);
    assert!(is_valid(&p, &roomy.packing.offsets, bound * 2));
}

#[test]
fn csv_problems_in_the_gigabytes_plan_on_their_own_items() {
    // Real allocation traces reach 3 to 17 GB; the command refused every one above the
    // 2 GiB arena as "does not fit". Real-like 5k #1 at four times its sizes: 9.7 GB.
    let mut p = planner_bench::real_trace_like(5000, 1);
    for it in &mut p.items {
        it.size *= 4;
    }
    let csv = planner::import::csv::CsvProblem {
        ids: (0..p.items.len()).map(|i| format!("b{i}")).collect(),
        problem: p.clone(),
    };
    let mut kind = PlannerKind::default();
    if let PlannerKind::Auto(o) = &mut kind {
        o.slack_ppm = 1;
    }
    let planner::Solution::Solved(s) = planner::solve_problem(&csv, &kind, None, 0).unwrap() else {
        panic!("no capacity given, so it plans");
    };
    assert!(
        s.packing.height > planner::plan::MAX_ARENA,
        "{}",
        s.packing.height
    );
    assert!(is_valid(&p, &s.packing.offsets, u64::MAX));
    assert_eq!(s.certificate, certify(&p, &s.packing));
    let bound = planner::pack::height_lower_bound(&p);
    // Within a millionth of the bound: the parts stop there.
    assert!(
        s.packing.height - bound <= bound / 1_000_000,
        "{} {bound}",
        s.packing.height
    );
}
