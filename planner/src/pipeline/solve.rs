//! A MiniMalloc CSV problem planned on its own items: the packers, then an independent
//! check of the offsets, without the model pipeline (no graph, no arena cap, no plan maps).
//!
//! The problem's heights are not a microcontroller's: allocation traces of accelerator
//! compilers reach tens of gigabytes. The only limit is the arithmetic's: every buffer with
//! the buffers live beside it (and the highest pinned end) must stay within
//! [`MAX_PROBLEM_HEIGHT`], half the `u64` range, so no sum of an offset and a size the
//! packers form can wrap. Memory stays linear in the rows: the items, the packers' overlap
//! lists and the check's sweep.

use std::boxed::Box;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::import::csv::CsvProblem;
use crate::pack::{self, Certificate, Packing, PlannerKind, SearchStats};

/// The largest height a CSV problem is planned to: `2^63 - 1` bytes.
pub const MAX_PROBLEM_HEIGHT: u64 = (1 << 63) - 1;

/// A CSV problem's packing, checked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SolvedProblem {
    /// The planner that packed it (`optimal` when the exact search found the packing below
    /// a capacity).
    pub planner: String,
    /// Every buffer's offset (in row order) and the height.
    pub packing: Packing,
    /// The height against the lower bound.
    pub certificate: Certificate,
    /// What the planner did.
    pub stats: SearchStats,
}

/// How a CSV problem was solved.
#[derive(Debug, Clone)]
pub enum Solution {
    /// Packed; with a capacity, below it.
    Solved(Box<SolvedProblem>),
    /// Nothing found below the capacity; `proven` when the exact search showed that no
    /// packing fits, `best_height` the lowest height found.
    DoesNotFit {
        /// The lowest height found.
        best_height: u64,
        /// True when no packing fits below the capacity.
        proven: bool,
        /// Unproven because the exact search reached its time limit before its node
        /// budget: another machine (or load) may answer otherwise.
        timed_out: bool,
    },
}

/// The exact search's wall-clock stop under a capacity when none is given
/// ([`solve_problem`]): a safety stop for problems whose node budget would take longer (a
/// node of a 10^6-row search costs far more than one of a thousand rows). Where the node
/// budget binds first, as on every problem of the test suite, the answer is the same on every
/// machine; where this stop binds, the answer says so ([`Solution::DoesNotFit::timed_out`]).
pub const DEFAULT_SEARCH_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Packs a CSV problem with `planner` and checks the offsets independently.
///
/// Without `capacity` the height is minimised. With it, a packing above the capacity goes to
/// the exact search ([`pack::optimal`]) under `node_budget` nodes, which finds offsets below
/// it or proves there are none. Errors: a problem whose buffers could pass
/// [`MAX_PROBLEM_HEIGHT`] (exit code 1 in the command: it does not fit), or a packing the
/// check refuses (a planner bug).
pub fn solve_problem(
    csv: &CsvProblem,
    planner: &PlannerKind,
    capacity: Option<u64>,
    node_budget: u64,
) -> Result<Solution> {
    solve_problem_within(
        csv,
        planner,
        capacity,
        node_budget,
        Some(DEFAULT_SEARCH_TIME),
    )
}

/// [`solve_problem`] with the exact search's wall-clock stop given: `None` searches until
/// the node budget or an answer (the same answer on every machine), `Some(t)` stops after
/// about `t` at the latest.
pub fn solve_problem_within(
    csv: &CsvProblem,
    planner: &PlannerKind,
    capacity: Option<u64>,
    node_budget: u64,
    time_limit: Option<std::time::Duration>,
) -> Result<Solution> {
    ceiling(csv)?;
    let report = pack::pack_report(planner, &csv.problem);
    let mut solved = SolvedProblem {
        planner: planner.name().to_string(),
        packing: report.packing,
        certificate: report.certificate,
        stats: report.stats,
    };
    if let Some(cap) = capacity
        && solved.packing.height > cap
    {
        let opts = pack::optimal::OptimalOptions {
            node_budget,
            time_limit,
        };
        let (outcome, stats) = pack::optimal::fits_with_stats(&csv.problem, cap, &opts);
        match outcome {
            pack::optimal::Outcome::Fits(p) => {
                solved.certificate = pack::certify(&csv.problem, &p);
                solved.packing = p;
                solved.planner = "optimal".to_string();
            }
            pack::optimal::Outcome::DoesNotFit => {
                return Ok(Solution::DoesNotFit {
                    best_height: solved.packing.height,
                    proven: true,
                    timed_out: false,
                });
            }
            pack::optimal::Outcome::Unknown(best) => {
                return Ok(Solution::DoesNotFit {
                    best_height: solved.packing.height.min(best.height),
                    proven: false,
                    timed_out: stats.timed_out,
                });
            }
        }
    }
    checked(csv, &solved.packing)?;
    Ok(Solution::Solved(Box::new(solved)))
}

/// `greedy_by_size`, `best_of_greedy`, `hill_climb` and `optimal` with their default options
/// on a CSV problem without a capacity, as one run ([`pack::pack_search_chain`]: each planner
/// starts from the one before it), each packing checked as [`solve_problem`] checks it, with
/// the time each planner alone takes. What `planner compare` runs for those four; under a
/// `deadline` the searches stop at their shares of it (see [`pack::pack_search_chain`]).
pub fn solve_problem_chain(
    csv: &CsvProblem,
    deadline: Option<std::time::Instant>,
) -> Result<[(SolvedProblem, std::time::Duration); 4]> {
    // Each time counts what `solve_problem` does around the packer too (the height check
    // before, the packing's check after), as it would for the planner alone.
    let start = std::time::Instant::now();
    ceiling(csv)?;
    let before = start.elapsed();
    let mut chain = pack::pack_search_chain(&csv.problem, deadline);
    for (_, report, took) in &mut chain {
        let start = std::time::Instant::now();
        checked(csv, &report.packing)?;
        *took += before + start.elapsed();
    }
    Ok(chain.map(|(name, report, took)| {
        let solved = SolvedProblem {
            planner: name.to_string(),
            packing: report.packing,
            certificate: report.certificate,
            stats: report.stats,
        };
        (solved, took)
    }))
}

/// [`check`] as an error naming the problem's size.
fn checked(csv: &CsvProblem, packing: &Packing) -> Result<()> {
    check(csv, packing).map_err(|what| {
        Error::input(format!(
            "internal planner error: the packing of {} buffers failed its check: {what}; please report it with the problem file",
            csv.ids.len()
        ))
    })
}

/// Refuses a problem that a packing could take past [`MAX_PROBLEM_HEIGHT`]: a first-fit
/// packer places a buffer no higher than the sizes of the buffers live beside it (or the
/// highest pinned end), so each buffer's size plus theirs, plus the highest pinned end, must
/// stay within it. Sums are taken in 128 bits: nothing here wraps.
fn ceiling(csv: &CsvProblem) -> Result<()> {
    let items = &csv.problem.items;
    let pinned_top: u128 = items
        .iter()
        .filter_map(|it| it.fixed.map(|o| u128::from(o) + u128::from(it.size)))
        .max()
        .unwrap_or(0);
    // Live beside `i` = all, minus those ending before `i` starts, minus those starting
    // after it ends: two sweeps over the items in start and in end order (binary searches
    // per item cost 2.5 s of cache misses on 10^6 rows).
    let total: u128 = items.iter().map(|it| u128::from(it.size)).sum();
    let mut by_end: Vec<(u32, u64)> = items.iter().map(|it| (it.end, it.size)).collect();
    let mut by_start: Vec<(u32, u64)> = items.iter().map(|it| (it.start, it.size)).collect();
    by_end.sort_unstable();
    by_start.sort_unstable();
    let mut beside: Vec<u128> = vec![total; items.len()];
    // Sorted as (step, index) pairs, not indices by a key read through `items`: on 10^6 rows
    // those reads missed the cache at every comparison.
    let mut order: Vec<(u32, u32)> = items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.start, i as u32))
        .collect();
    order.sort_unstable();
    let (mut k, mut ended) = (0, 0u128);
    for &(start, i) in &order {
        while k < by_end.len() && by_end[k].0 < start {
            ended += u128::from(by_end[k].1);
            k += 1;
        }
        beside[i as usize] -= ended;
    }
    // The same pairs by end (the vector reused: 8 MB at 10^6 rows).
    for ((pair, it), i) in order.iter_mut().zip(items).zip(0u32..) {
        *pair = (it.end, i);
    }
    order.sort_unstable();
    let (mut k, mut after) = (by_start.len(), 0u128);
    for &(end, i) in order.iter().rev() {
        while k > 0 && by_start[k - 1].0 > end {
            after += u128::from(by_start[k - 1].1);
            k -= 1;
        }
        beside[i as usize] -= after;
    }
    let limit = u128::from(MAX_PROBLEM_HEIGHT);
    for (i, it) in items.iter().enumerate() {
        let beside = beside[i];
        let need = beside + pinned_top;
        if need > limit {
            let pinned = if pinned_top > 0 {
                format!(", above pinned buffers ending at {pinned_top}")
            } else {
                String::new()
            };
            return Err(Error::infeasible(format!(
                "buffer `{}` ({} bytes, live over steps {}..{}) and the buffers live beside it take {beside} bytes together{pinned}, more than {MAX_PROBLEM_HEIGHT}, the largest height a problem is planned to (2^63 - 1)",
                csv.ids[i],
                it.size,
                it.start,
                u64::from(it.end) + 1
            ))
            .help("scale the sizes down (to kilobytes or pages, say), or split the problem at steps no buffer crosses"));
        }
    }
    Ok(())
}

/// The independent check of a packing: every buffer placed, a pinned one at its offset, no
/// offset plus size past `u64`, the height the highest end, and no two buffers live at one
/// step sharing a byte. A sweep over the steps keeps the live buffers by offset (they never
/// overlap, or the check has failed), so each new buffer is compared with its neighbours
/// below and above: `O(n log n)` time, `O(n)` memory.
pub(crate) fn check(csv: &CsvProblem, packing: &Packing) -> std::result::Result<(), String> {
    let items = &csv.problem.items;
    if packing.offsets.len() != items.len() {
        return Err(format!(
            "{} offsets for {} buffers",
            packing.offsets.len(),
            items.len()
        ));
    }
    let mut top = 0u64;
    for (i, (it, off)) in items.iter().zip(&packing.offsets).enumerate() {
        let Some(off) = *off else {
            return Err(format!("buffer `{}` has no offset", csv.ids[i]));
        };
        if it.fixed.is_some_and(|f| f != off) {
            return Err(format!(
                "buffer `{}` is pinned to {} but placed at {off}",
                csv.ids[i],
                it.fixed.unwrap_or(0)
            ));
        }
        let end = off.checked_add(it.size).ok_or_else(|| {
            format!(
                "buffer `{}` at {off} with {} bytes passes 2^64",
                csv.ids[i], it.size
            )
        })?;
        if it.align > 1 && off % it.align != 0 {
            return Err(format!(
                "buffer `{}` at {off} is not aligned to {}",
                csv.ids[i], it.align
            ));
        }
        top = top.max(end);
    }
    // The height is the highest end, or (the `tflm` planner's figure) the bytes TFLM
    // reserves: that end with every size rounded up to its unit.
    if top != packing.height && pack::tflm::reserved(&csv.problem, &packing.offsets) != packing.height {
        return Err(format!(
            "the height is {} but the highest buffer ends at {top}",
            packing.height
        ));
    }
    let offset = |i: usize| packing.offsets[i].unwrap_or(0);
    // Each buffer as (start, index, end, offset, end offset), sorted by start: the sweep
    // reads them in order, where reading `items` and the offsets by index missed the cache
    // once or twice a buffer (0.48 s of a check of 10^6 rows).
    let mut order: Vec<(u32, u32, u32, u64, u64)> = items
        .iter()
        .zip(&packing.offsets)
        .zip(0u32..)
        .filter(|((it, _), _)| it.size > 0)
        .map(|((it, off), i)| {
            let lo = off.unwrap_or(0);
            (it.start, i, it.end, lo, lo.saturating_add(it.size))
        })
        .collect();
    order.sort_unstable_by_key(|&(start, i, ..)| (start, i));
    // Live buffers by offset (their end offset and index), and by the step they end at with
    // their offset (to retire them).
    let mut live: BTreeMap<u64, (u64, u32)> = BTreeMap::new();
    let mut ends: BinaryHeap<Reverse<(u32, u64)>> = BinaryHeap::new();
    let clash = |a: u32, b: u32| {
        let (x, y) = (a as usize, b as usize);
        format!(
            "buffers `{}` ({}..{}) and `{}` ({}..{}) share bytes while both are live at step {}",
            csv.ids[x],
            offset(x),
            offset(x) + items[x].size,
            csv.ids[y],
            offset(y),
            offset(y) + items[y].size,
            items[x].start.max(items[y].start)
        )
    };
    for &(start, i, end, lo, hi) in &order {
        while let Some(&Reverse((e, o))) = ends.peek() {
            if e >= start {
                break;
            }
            ends.pop();
            live.remove(&o);
        }
        if let Some((_, &(top, j))) = live.range(..=lo).next_back()
            && top > lo
        {
            return Err(clash(j, i));
        }
        if let Some((_, &(_, j))) = live.range(lo..hi).next() {
            return Err(clash(j, i));
        }
        live.insert(lo, (hi, i));
        ends.push(Reverse((end, lo)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{Item, Problem};

    fn csv(rows: &[(u64, u32, u32, Option<u64>)]) -> CsvProblem {
        CsvProblem {
            ids: (0..rows.len()).map(|i| format!("b{i}")).collect(),
            problem: Problem {
                items: rows
                    .iter()
                    .map(|&(size, start, end, fixed)| Item {
                        fixed,
                        ..Item::new(size, start, end)
                    })
                    .collect(),
                capacity: None,
            },
        }
    }

    #[test]
    fn check_agrees_with_every_pair() {
        let mut rng = crate::pack::Rng::new(29);
        let (mut good, mut bad) = (0, 0);
        for _ in 0..500 {
            let n = 1 + rng.below_u64(10) as usize;
            let rows: Vec<(u64, u32, u32, Option<u64>)> = (0..n)
                .map(|_| {
                    let start = rng.below_u64(6) as u32;
                    (rng.below_u64(5), start, start + rng.below_u64(3) as u32, None)
                })
                .collect();
            let p = csv(&rows);
            let offsets: Vec<Option<u64>> = (0..n).map(|_| Some(rng.below_u64(12))).collect();
            let height = rows
                .iter()
                .zip(&offsets)
                .map(|(r, o)| o.unwrap_or(0) + r.0)
                .max()
                .unwrap_or(0);
            let items = &p.problem.items;
            let shares = |a: usize, b: usize| {
                let (x, y) = (offsets[a].unwrap_or(0), offsets[b].unwrap_or(0));
                // A buffer of no bytes shares none.
                items[a].size > 0
                    && items[b].size > 0
                    && items[a].overlaps_in_time(&items[b])
                    && x < y + items[b].size
                    && y < x + items[a].size
            };
            let clash = (0..n).any(|a| (a + 1..n).any(|b| shares(a, b)));
            let result = check(&p, &Packing { offsets, height });
            assert_eq!(result.is_err(), clash, "{rows:?}: {result:?}");
            if clash { bad += 1 } else { good += 1 }
        }
        assert!(good > 50 && bad > 50, "both kinds occur ({good} good, {bad} bad)");
    }

    #[test]
    fn heights_past_the_arena_cap_are_planned() {
        // Three buffers of 3 GiB live together: 9 GiB, where an arena stops at 2 GiB - 1.
        let g = 3u64 << 30;
        let p = csv(&[
            (g, 0, 2, None),
            (g, 1, 3, None),
            (g, 2, 2, None),
            (5, 4, 4, None),
        ]);
        let Solution::Solved(s) = solve_problem(&p, &PlannerKind::default(), None, 0).unwrap()
        else {
            panic!("no capacity: always solved")
        };
        assert_eq!(s.packing.height, 3 * g);
        assert!(s.certificate.optimal);
        assert_eq!(check(&p, &s.packing), Ok(()));
    }

    #[test]
    fn sums_past_the_largest_height_are_refused_by_name() {
        let half = 1u64 << 63;
        let e = solve_problem(
            &csv(&[(half, 0, 0, None), (half, 0, 0, None)]),
            &PlannerKind::default(),
            None,
            0,
        )
        .unwrap_err();
        assert!(e.is_infeasible());
        assert_eq!(
            e.message(),
            "buffer `b0` (9223372036854775808 bytes, live over steps 0..1) and the buffers live beside it take 18446744073709551616 bytes together, more than 9223372036854775807, the largest height a problem is planned to (2^63 - 1)"
        );
        // Apart in time, each alone fits.
        let ok = csv(&[(half - 1, 0, 0, None), (half - 1, 1, 1, None)]);
        assert!(solve_problem(&ok, &PlannerKind::GreedyBySize, None, 0).is_ok());
        // A pinned end counts under everything.
        let pinned = csv(&[(8, 0, 0, Some(half - 4)), (1, 5, 5, None)]);
        let e = solve_problem(&pinned, &PlannerKind::default(), None, 0).unwrap_err();
        assert!(
            e.message()
                .contains("above pinned buffers ending at 9223372036854775812"),
            "{e}"
        );
    }

    #[test]
    fn the_check_finds_shared_bytes_misses_and_wrong_heights() {
        let p = csv(&[
            (4, 0, 3, None),
            (4, 2, 5, None),
            (4, 4, 6, Some(0)),
            (0, 1, 1, None),
        ]);
        let good = Packing {
            offsets: vec![Some(0), Some(4), Some(0), Some(2)],
            height: 8,
        };
        assert_eq!(check(&p, &good), Ok(()));
        let mut bad = good.clone();
        bad.offsets[1] = Some(3);
        bad.height = 7;
        assert_eq!(
            check(&p, &bad).unwrap_err(),
            "buffers `b0` (0..4) and `b1` (3..7) share bytes while both are live at step 2"
        );
        let mut bad = good.clone();
        bad.offsets[2] = Some(4);
        assert!(check(&p, &bad).unwrap_err().contains("pinned to 0"));
        let mut bad = good.clone();
        bad.height = 9;
        assert!(check(&p, &bad).unwrap_err().contains("the height is 9"));
        let mut bad = good.clone();
        bad.offsets[0] = None;
        assert_eq!(check(&p, &bad).unwrap_err(), "buffer `b0` has no offset");
        // `b1` ends at step 5 and `b2` starts at 4: live together, so 4..8 and 4..8 clash.
        let mut bad = good;
        bad.offsets[2] = None;
        let p2 = csv(&[
            (4, 0, 3, None),
            (4, 2, 5, None),
            (4, 4, 6, None),
            (0, 1, 1, None),
        ]);
        bad.offsets[2] = Some(4);
        assert!(
            check(&p2, &bad)
                .unwrap_err()
                .contains("`b1` (4..8) and `b2` (4..8)")
        );
    }

    #[test]
    fn a_capacity_goes_to_the_exact_search() {
        let p = csv(&[(2, 0, 0, None), (1, 0, 1, None), (2, 1, 1, None)]);
        match solve_problem(&p, &PlannerKind::GreedyBySize, Some(3), 1000).unwrap() {
            Solution::Solved(s) => assert!(s.packing.height <= 3),
            Solution::DoesNotFit { .. } => panic!("fits at 3"),
        }
        match solve_problem(&p, &PlannerKind::default(), Some(2), 1000).unwrap() {
            Solution::DoesNotFit { proven, .. } => assert!(proven),
            Solution::Solved(_) => panic!("3 bytes live at step 0"),
        }
    }
}
