//! The exact search against brute force, the section checks and the tops tree against sweeps.

use super::*;
use super::tops::Tops;
use crate::pack::tests::item;

use crate::pack::Rng;

#[test]
fn component_neighbours_are_the_items_overlapping_in_time() {
    let mut rng = Rng::new(41);
    let mut pairs = 0;
    for round in 0..300 {
        let n = 1 + rng.below_u64(40) as usize;
        let p = random_problem(&mut rng, n, round % 2 == 0, round % 3 == 0);
        let (fixed, group): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| p.items[i].fixed.is_some());
        let c = Component::new(&p, &group, &fixed, u64::MAX);
        for (k, &g) in group.iter().enumerate() {
            let want: Vec<usize> = (0..group.len())
                .filter(|&j| j != k && p.items[group[j]].overlaps_in_time(&p.items[g]))
                .collect();
            pairs += want.len();
            assert_eq!(c.neighbours(k), (want.clone(), want.len() as u32), "round {round}");
        }
    }
    assert!(pairs > 1000, "the problems overlap ({pairs} pairs)");
}

#[test]
fn is_valid_agrees_with_every_pair() {
    let mut rng = Rng::new(23);
    let (mut valid, mut invalid) = (0, 0);
    for round in 0..400 {
        let n = 1 + rng.below_u64(12) as usize;
        let p = random_problem(&mut rng, n, round % 2 == 0, false);
        // Offsets on a few rows, so some packings share bytes and some do not.
        let offsets: Vec<Option<u64>> = p
            .items
            .iter()
            .map(|it| Some(it.align.max(1) * rng.below_u64(8)))
            .collect();
        let height = p
            .items
            .iter()
            .zip(&offsets)
            .map(|(it, o)| o.unwrap_or(0) + it.size)
            .max()
            .unwrap_or(0);
        let clash = (0..n).any(|i| {
            (i + 1..n).any(|j| {
                let (a, b) = (&p.items[i], &p.items[j]);
                let (oa, ob) = (offsets[i].unwrap_or(0), offsets[j].unwrap_or(0));
                a.size > 0
                    && b.size > 0
                    && a.overlaps_in_time(b)
                    && oa < ob + b.size
                    && ob < oa + a.size
            })
        });
        assert_eq!(is_valid(&p, &offsets, height), !clash, "round {round}: {p:?} {offsets:?}");
        if clash {
            invalid += 1;
        } else {
            valid += 1;
        }
    }
    assert!(valid > 20 && invalid > 20, "{valid} valid, {invalid} invalid");
}

#[test]
fn tops_agree_with_a_sweep() {
    let mut rng = Rng::new(17);
    for n in [1usize, 2, 3, 5, 8, 13, 40] {
        let mut tops = Tops::new(n);
        // (low, size, end) per position; None when placed.
        let mut items: Vec<Option<(u64, u64, u32)>> = vec![None; n];
        for step in 0..400 {
            let p = rng.below_u64(n as u64) as usize;
            if step % 3 == 0 {
                items[p] = None;
                tops.clear(p);
            } else {
                // Small values make ties; now and then a top that saturates.
                let low = [rng.below_u64(6), u64::MAX - rng.below_u64(3)]
                    [usize::from(rng.below_u64(8) == 0)];
                let it = (low, rng.below_u64(4), rng.below_u64(50) as u32);
                items[p] = Some(it);
                tops.set(p, (it.0, it.1), it.2);
            }
            let a = rng.below_u64(n as u64 + 1) as usize;
            let b = a + rng.below_u64((n - a) as u64 + 1) as usize;
            let (mut m1, mut p1, mut m2, mut end) = (u64::MAX, NONE, u64::MAX, 0);
            let mut low = u64::MAX;
            for (q, it) in items.iter().enumerate().take(b).skip(a) {
                let Some((l, size, e)) = *it else { continue };
                let t = l.saturating_add(size);
                if t < m1 {
                    (m2, m1, p1) = (m1, t, q as u32);
                } else if t < m2 {
                    m2 = t;
                }
                low = low.min(l);
                end = end.max(e);
            }
            let got = tops.lowest(a..b);
            assert_eq!(
                (got.t1, got.p1, got.t2, got.low, got.end),
                (m1, p1, m2, low, end)
            );
            let limit = rng.below_u64(8);
            let want: Vec<u32> = (a..b)
                .filter(|&q| {
                    items[q].is_some_and(|(l, _, _)| l < limit && l != u64::MAX)
                        || (q as u32 == p1 && items[q].is_some_and(|(l, _, _)| l != u64::MAX))
                })
                .map(|q| q as u32)
                .collect();
            let mut found = Vec::new();
            tops.below(a..b, limit, p1, &mut found);
            assert_eq!(
                found, want,
                "n {n} step {step} range {a}..{b} limit {limit}"
            );
        }
    }
}

fn random_problem(rng: &mut Rng, n: usize, aligned: bool, fixed: bool) -> Problem {
    let mut items = Vec::new();
    // Sometimes spread over more ops, so lifetimes fall apart into sides mid-search.
    let ops = if rng.below_u64(2) == 0 { 6 } else { 14 };
    for _ in 0..n {
        let start = rng.below_u64(ops) as u32;
        let end = start + rng.below_u64(4) as u32;
        let mut it = item(1 + rng.below_u64(9), start, end);
        if aligned {
            it.align = [1, 1, 2, 4][rng.below_u64(4) as usize];
        }
        items.push(it);
    }
    if fixed && n > 0 {
        // Pin one item where it cannot clash with another pinned one.
        let k = rng.below_u64(n as u64) as usize;
        let a = items[k].align;
        items[k].fixed = Some(a * rng.below_u64(4));
    }
    Problem {
        items,
        capacity: None,
    }
}

/// Every packing can be pushed down until each item rests on 0 or on an earlier one, and
/// then lowest-fit placement in offset order rebuilds it: the best over all orders is the
/// optimum.
fn brute_force(problem: &Problem) -> u64 {
    fn rec(p: &Problem, order: &mut Vec<usize>, used: &mut [bool], best: &mut u64) {
        if order.len() == used.len() {
            *best = (*best).min(place_in_order(p, order).height);
            return;
        }
        for i in 0..used.len() {
            if !used[i] {
                used[i] = true;
                order.push(i);
                rec(p, order, used, best);
                order.pop();
                used[i] = false;
            }
        }
    }
    let mut best = u64::MAX;
    let n = problem.items.len();
    rec(problem, &mut Vec::new(), &mut vec![false; n], &mut best);
    best
}

fn opts() -> OptimalOptions {
    OptimalOptions {
        node_budget: 1_000_000,
        time_limit: None,
    }
}

#[test]
fn proves_small_infeasible_instances() {
    // Three items live together need 3 + 4 + 5 bytes.
    let p = Problem {
        items: vec![item(3, 0, 2), item(4, 1, 3), item(5, 2, 2)],
        capacity: None,
    };
    assert_eq!(fits(&p, 11, &opts()), Outcome::DoesNotFit);
    assert!(matches!(fits(&p, 12, &opts()), Outcome::Fits(_)));
    // A chain of overlapping lifetimes, 8 bytes live at every op: the search proves the
    // brute-force optimum and that one byte less does not fit.
    let p = Problem {
        items: vec![
            item(4, 0, 1),
            item(4, 1, 2),
            item(4, 2, 3),
            item(4, 0, 0),
            item(4, 3, 3),
        ],
        capacity: None,
    };
    assert_eq!(exact_lower_bound(&p), 8);
    let (k, proven) = minimize(&p, &opts(), None);
    assert!(proven);
    assert_eq!(k.height, brute_force(&p));
    assert_eq!(fits(&p, k.height - 1, &opts()), Outcome::DoesNotFit);
    // A fixed item past the capacity, or two fixed items on the same bytes.
    let mut f = item(4, 0, 0);
    f.fixed = Some(10);
    let p = Problem {
        items: vec![f.clone(), item(1, 0, 0)],
        capacity: None,
    };
    assert_eq!(fits(&p, 13, &opts()), Outcome::DoesNotFit);
    let mut g = f.clone();
    g.fixed = Some(12);
    let p = Problem {
        items: vec![f, g],
        capacity: None,
    };
    assert_eq!(fits(&p, 100, &opts()), Outcome::DoesNotFit);
}

#[test]
fn honours_alignment_and_fixed_offsets() {
    let mut a = item(3, 0, 3);
    a.align = 8;
    let mut b = item(5, 0, 3);
    b.align = 8;
    let mut pin = item(2, 1, 2);
    pin.fixed = Some(3);
    let p = Problem {
        items: vec![a, b, pin, item(3, 0, 0), item(1, 3, 3)],
        capacity: None,
    };
    let (k, proven) = minimize(&p, &opts(), None);
    assert!(proven);
    assert!(is_valid(&p, &k.offsets, k.height), "{k:?}");
    assert_eq!(k.offsets[2], Some(3));
    assert_eq!(k.height, brute_force(&p));
    for (o, it) in k.offsets.iter().zip(&p.items) {
        assert_eq!(o.unwrap_or(1) % it.align, 0);
    }
}

#[test]
fn budget_gives_unknown_and_runs_are_identical() {
    let mut rng = Rng::new(7);
    let mut items = Vec::new();
    for _ in 0..40 {
        let start = rng.below_u64(20) as u32;
        items.push(item(
            1 + rng.below_u64(50),
            start,
            start + rng.below_u64(6) as u32,
        ));
    }
    let p = Problem {
        items,
        capacity: None,
    };
    let tiny = OptimalOptions {
        node_budget: 3,
        time_limit: None,
    };
    let lb = exact_lower_bound(&p);
    let greedy = best_greedy(&p).height;
    if greedy > lb {
        match fits(&p, lb, &tiny) {
            Outcome::Unknown(best) => assert_eq!(best.height, greedy),
            Outcome::DoesNotFit => {}
            Outcome::Fits(k) => assert!(is_valid(&p, &k.offsets, lb)),
        }
    }
    let (k1, p1, s1) = minimize_with_stats(&p, &opts(), None);
    let (k2, p2, s2) = minimize_with_stats(&p, &opts(), None);
    assert_eq!((k1.clone(), p1, s1), (k2, p2, s2));
    assert!(is_valid(&p, &k1.offsets, k1.height));
    assert!(k1.height >= lb && k1.height <= greedy);
    // A hint that is not a packing of this problem is ignored.
    let bad = Packing {
        offsets: vec![Some(0); p.items.len()],
        height: 1,
    };
    let (k3, _) = minimize(&p, &opts(), Some(bad));
    assert!(is_valid(&p, &k3.offsets, k3.height));
}

#[test]
fn optimum_equals_brute_force() {
    let mut rng = Rng::new(1);
    for case in 0..600 {
        let n = 1 + (case % 8);
        let p = random_problem(&mut rng, n, case % 3 == 1, case % 5 == 2);
        let want = brute_force(&p);
        let (got, proven) = minimize(&p, &opts(), None);
        assert!(proven, "case {case}: {p:?}");
        assert!(
            is_valid(&p, &got.offsets, got.height),
            "case {case}: {p:?} {got:?}"
        );
        assert_eq!(got.height, want, "case {case}: {p:?} {got:?}");
        // The search alone (no greedy shortcut) finds a packing at the optimum.
        let none = Packing {
            offsets: Vec::new(),
            height: u64::MAX,
        };
        let mut budget = Budget::new(&opts());
        match fits_inner(&p, want, &mut budget, none) {
            Outcome::Fits(k) => assert!(is_valid(&p, &k.offsets, want), "case {case}"),
            other => panic!("case {case}: {other:?} for {p:?}"),
        }
        // Just below the optimum nothing fits, and that is proven.
        if want > 0 {
            assert_eq!(
                fits(&p, want - 1, &opts()),
                Outcome::DoesNotFit,
                "case {case}"
            );
        }
    }
}

/// The section checks' reads bound the search beside its nodes: past
/// [`SCANS_PER_BUDGETED_NODE`] per node of the budget, it is exhausted, so nodes that each
/// read thousands of items cannot run it past its budget's work.
#[test]
fn section_reads_bound_the_search_beside_its_nodes() {
    let mut b = Budget::new(&OptimalOptions {
        node_budget: 100,
        time_limit: None,
    });
    for _ in 0..10 {
        assert!(b.tick());
    }
    b.scan(100 * SCANS_PER_BUDGETED_NODE - 1);
    assert!(!b.exhausted(), "one read short of the limit");
    assert!(b.tick());
    assert_eq!(b.used, 11, "reads are not nodes");
    b.scan(1);
    assert!(b.exhausted());
    assert!(!b.tick(), "the reads spent the budget");
}
