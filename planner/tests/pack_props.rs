//! Property tests of every packer on random problems, checked by a small checker written
//! here apart from the packers: no two time-overlapping placed items share bytes, offsets
//! are aligned, fixed offsets kept, unspillable items placed, items spilled only when they
//! could not fit under the capacity; the searches never worse than `greedy_by_size`; the
//! lower bound never above a height; every planner deterministic.

use std::collections::BTreeMap;

use planner::pack::{
    Item, OptionValue, Packing, PlannerKind, Problem, certify, greedy_order, height_lower_bound,
    lower_bound, pack, pack_report, size_order,
};
use proptest::prelude::*;

/// Every planner, the searches also with non-default options.
fn planners(seed: u64, iterations: i64) -> Vec<PlannerKind> {
    let mut out: Vec<PlannerKind> = PlannerKind::NAMES
        .iter()
        .map(|n| PlannerKind::from_name(n, &BTreeMap::new()).unwrap())
        .collect();
    let mut o = BTreeMap::new();
    o.insert("seed".to_string(), OptionValue::Int(seed as i64));
    o.insert("iterations".to_string(), OptionValue::Int(iterations));
    o.insert(
        "max_stall_iterations".to_string(),
        OptionValue::Str("none".into()),
    );
    out.push(PlannerKind::from_name("hill_climb", &o).unwrap());
    o.insert("budget".to_string(), OptionValue::Int(500));
    out.push(PlannerKind::from_name("auto", &o).unwrap());
    out
}

fn ranges_overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Lowest aligned offset where `item` fits among the placed items of `offsets` that overlap
/// it in time, by brute force over candidate offsets (0 and the aligned end of each).
fn lowest_free(problem: &Problem, offsets: &[Option<u64>], k: usize) -> u64 {
    let it = &problem.items[k];
    let busy: Vec<(u64, u64)> = problem
        .items
        .iter()
        .zip(offsets)
        .enumerate()
        .filter(|&(j, (other, off))| {
            j != k && off.is_some() && other.size > 0 && it.overlaps_in_time(other)
        })
        .map(|(_, (other, off))| (off.unwrap(), off.unwrap() + other.size))
        .collect();
    let align = it.align.max(1);
    let mut candidates: Vec<u64> = busy
        .iter()
        .map(|&(_, hi)| hi.div_ceil(align) * align)
        .collect();
    candidates.push(0);
    candidates.sort_unstable();
    candidates
        .into_iter()
        .find(|&c| it.size == 0 || busy.iter().all(|&b| !ranges_overlap((c, c + it.size), b)))
        .expect("above every busy range is free")
}

/// The checker: every rule a packing of `problem` must keep.
fn check(problem: &Problem, p: &Packing, who: &str) -> Result<(), TestCaseError> {
    let items = &problem.items;
    prop_assert_eq!(p.offsets.len(), items.len(), "{}: one offset per item", who);
    let mut height = 0;
    for (k, (it, off)) in items.iter().zip(&p.offsets).enumerate() {
        match off {
            Some(o) => {
                prop_assert_eq!(o % it.align.max(1), 0, "{}: item {} misaligned", who, k);
                if let Some(f) = it.fixed {
                    prop_assert_eq!(*o, f, "{}: fixed item {} moved", who, k);
                }
                if it.spillable
                    && let Some(c) = problem.capacity
                {
                    prop_assert!(
                        o + it.size <= c,
                        "{}: spillable item {} passes the capacity",
                        who,
                        k
                    );
                }
                height = height.max(o + it.size);
            }
            None => {
                prop_assert!(
                    it.spillable && it.fixed.is_none(),
                    "{}: item {} left out",
                    who,
                    k
                );
                let c = problem.capacity;
                prop_assert!(c.is_some(), "{}: item {} spilled without capacity", who, k);
                let free = lowest_free(problem, &p.offsets, k);
                prop_assert!(
                    free + it.size > c.unwrap(),
                    "{}: item {} spilled but fits at {}",
                    who,
                    k,
                    free
                );
            }
        }
    }
    prop_assert_eq!(p.height, height, "{}: height", who);
    for a in 0..items.len() {
        for b in a + 1..items.len() {
            let (ia, ib) = (&items[a], &items[b]);
            if let (Some(oa), Some(ob)) = (p.offsets[a], p.offsets[b])
                && ia.overlaps_in_time(ib)
                && ia.size > 0
                && ib.size > 0
                && (ia.fixed.is_none() || ib.fixed.is_none())
            {
                prop_assert!(
                    !ranges_overlap((oa, oa + ia.size), (ob, ob + ib.size)),
                    "{}: items {} and {} share bytes",
                    who,
                    a,
                    b
                );
            }
        }
    }
    Ok(())
}

/// Greedy placement written from the description, quadratic and obvious: fixed items, then
/// unspillable items in order, then spillable ones, each at the lowest aligned free offset.
fn naive(problem: &Problem, order: &[usize]) -> Packing {
    let items = &problem.items;
    let mut offsets: Vec<Option<u64>> = items.iter().map(|it| it.fixed).collect();
    for spillable in [false, true] {
        for &k in order {
            let it = &items[k];
            if it.fixed.is_some() || it.spillable != spillable {
                continue;
            }
            let o = lowest_free(problem, &offsets, k);
            if !(it.spillable && problem.capacity.is_some_and(|c| o + it.size > c)) {
                offsets[k] = Some(o);
            }
        }
    }
    let height = items
        .iter()
        .zip(&offsets)
        .filter_map(|(it, o)| o.map(|o| o + it.size))
        .max()
        .unwrap_or(0);
    Packing { offsets, height }
}

prop_compose! {
    fn arb_item()(
        size in prop_oneof![Just(0u64), 1u64..200, 200u64..2000],
        start in 0u32..24,
        len in prop_oneof![0u32..3, 0u32..30],
        align_log in 0u32..6,
        spillable in any::<bool>(),
    ) -> Item {
        Item { size, start, end: start + len, align: 1 << align_log, fixed: None, spillable }
    }
}

prop_compose! {
    /// Random items, a few of them fixed in disjoint bands (so fixed items never collide),
    /// and maybe a capacity.
    fn arb_problem()(
        mut items in prop::collection::vec(arb_item(), 0..28),
        fixed in prop::collection::vec(any::<bool>(), 28),
        capacity in prop_oneof![Just(None), (0u64..6000).prop_map(Some)],
    ) -> Problem {
        let mut band = 0u64;
        for (it, f) in items.iter_mut().zip(fixed.iter().step_by(3)) {
            if *f {
                it.fixed = Some(band * 4096);
                it.spillable = false;
                it.size = it.size.min(4096);
                band += 1;
            }
        }
        Problem { items, capacity }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_packer_keeps_the_rules(problem in arb_problem(), seed in 0u64..1000, iterations in 0i64..60) {
        let reference = pack(&PlannerKind::GreedyBySize, &problem);
        for kind in planners(seed, iterations) {
            let who = format!("{kind:?}");
            let report = pack_report(&kind, &problem);
            let p = &report.packing;
            check(&problem, p, &who)?;
            prop_assert_eq!(&pack(&kind, &problem), p, "{}: two runs differ", who);
            let cert = certify(&problem, p);
            prop_assert_eq!(cert, report.certificate);
            prop_assert!(cert.lower_bound <= p.height, "{}: bound {} above height {}", who, cert.lower_bound, p.height);
            if problem.items.iter().all(|it| it.fixed.is_none()) {
                prop_assert!(cert.lower_bound <= cert.aligned_bound);
            }
            if !matches!(kind, PlannerKind::Greedy) {
                prop_assert!(p.height <= reference.height, "{}: {} above greedy_by_size {}", who, p.height, reference.height);
                let spilled = |q: &Packing| q.offsets.iter().map(Option::is_none).collect::<Vec<_>>();
                prop_assert_eq!(spilled(p), spilled(&reference), "{}: spills differ from greedy_by_size", who);
            }
        }
    }

    #[test]
    fn greedy_rules_match_their_description(problem in arb_problem()) {
        prop_assert_eq!(pack(&PlannerKind::Greedy, &problem), naive(&problem, &greedy_order(&problem)));
        prop_assert_eq!(pack(&PlannerKind::GreedyBySize, &problem), naive(&problem, &size_order(&problem)));
    }

    #[test]
    fn bounds_agree_when_sizes_are_multiples(mut problem in arb_problem()) {
        for it in &mut problem.items {
            it.size = it.size.div_ceil(it.align) * it.align;
            it.fixed = None;
        }
        prop_assert_eq!(height_lower_bound(&problem), lower_bound(&problem));
    }
}

#[test]
fn the_bound_counts_no_padding_above_the_top() {
    let item = |size, align| Item {
        size,
        start: 0,
        end: 0,
        align,
        fixed: None,
        spillable: false,
    };
    let problem = Problem {
        items: vec![item(10, 16), item(10, 16)],
        capacity: None,
    };
    assert_eq!(lower_bound(&problem), 32);
    assert_eq!(height_lower_bound(&problem), 26);
    let p = pack(&PlannerKind::default(), &problem);
    assert_eq!(p.height, 26);
    assert!(certify(&problem, &p).optimal);
    // Byte-aligned items below a 16-aligned one may fill its padding.
    let problem = Problem {
        items: vec![item(1, 16), item(1, 16), item(1, 1)],
        capacity: None,
    };
    assert_eq!(height_lower_bound(&problem), 17);
    assert_eq!(pack(&PlannerKind::default(), &problem).height, 17);
}

#[test]
fn searches_reach_the_bound_where_greedy_by_size_does_not() {
    // tvm_usmp_simple, bundled under bench/small: greedy_by_size 220192, bound 216096.
    let problem = csv_problem("../bench/small/tvm_usmp_simple.csv").expect("bundled instance");
    let gbs = pack(&PlannerKind::GreedyBySize, &problem);
    assert_eq!(gbs.height, 220192);
    assert_eq!(height_lower_bound(&problem), 216096);
    for name in ["best_of_greedy", "hill_climb", "auto"] {
        let kind = PlannerKind::from_name(name, &BTreeMap::new()).unwrap();
        let best = pack_report(&kind, &problem);
        assert_eq!(best.packing.height, 216096, "{name}");
        assert!(best.certificate.optimal, "{name}");
    }
}

fn csv_problem(rel: &str) -> Option<Problem> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(path).ok()?;
    let items = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            Item {
                size: f[3],
                start: f[1] as u32,
                end: (f[2] - 1) as u32,
                align: 1,
                fixed: None,
                spillable: false,
            }
        })
        .collect();
    Some(Problem {
        items,
        capacity: None,
    })
}
