//! Packing: offsets within one arena.
//!
//! Packers see an abstract [`Problem`]: items with a size, an inclusive op interval, an
//! alignment, optionally a fixed offset, and whether they may spill to the next memory when
//! the arena's capacity is reached. They know nothing about tensors or manifests, so the same
//! code plans real models and MiniMalloc CSV instances.
//!
//! Every packer is deterministic: the same problem gives the same offsets on every machine.

//!
//! The module is split by concern: [`Problem`] and its certificate (`problem`), the packers by
//! name (`registry`) and their options (`options`), running one (`auto`: [`pack`],
//! [`pack_report`] and the `auto` policy), and placement in a given order with the lower
//! bounds (`bounds`); each packer's search in its own file.

mod auto;
mod best_of;
mod bounds;
mod busy;
mod deadline;
mod gaps;
mod greedy;
mod hill_climb;
mod kind;
mod large;
mod options;
mod problem;
mod registry;
mod split;
mod window;

pub mod optimal;
#[doc(hidden)]
pub mod tflm;

pub use auto::{Report, SearchStats};
/// Building blocks of the packers, for the benches and the CLI's `compare`.
#[doc(hidden)]
pub use auto::{GREEDY_ORDERS, Run, SEARCH_CHAIN, pack_search_chain};
pub(crate) use bounds::lower_bound_of;
pub use bounds::{certify, height_lower_bound};
#[doc(hidden)]
pub use bounds::{aligned_live_sum, place_in_order, place_in_order_by};
#[doc(hidden)]
pub use gaps::GapRule;
#[doc(hidden)]
pub use greedy::{greedy_order, size_order};
/// The seeded generator of the climb, for the crate's tests.
#[cfg(test)]
pub(crate) use hill_climb::Rng;
pub use options::{AutoOptions, HillClimbOptions, OptionError, OptionErrorKind, OptionValue};
pub use problem::{Certificate, Item, Packing, Problem};
pub use kind::PlannerKind;
pub use registry::{PACKERS, Packer, pack, pack_report};
pub(crate) use registry::names_of;

#[cfg(test)]
mod tests {
    use super::*;

    /// An item of `size` bytes live at ops `start..=end`, for every packer's tests.
    pub(crate) fn item(size: u64, start: u32, end: u32) -> Item {
        Item::new(size, start, end)
    }

    /// A random item, drawn in this order: its first op below `starts`, its size below
    /// `sizes`, its length below `lens` ops and its alignment among `aligns`.
    pub(crate) fn random_item(
        next: &mut dyn FnMut(u64) -> u64,
        (starts, sizes, lens): (u64, u64, u64),
        aligns: [u64; 3],
    ) -> Item {
        let start = next(starts) as u32;
        let mut it = item(next(sizes), start, start + next(lens) as u32);
        it.align = aligns[next(3) as usize];
        it
    }

    /// `rounds` rounds of `n` random items drawn from seed `seed`: item `k` of round `round`
    /// is `item(round, k, next)` (`next(m)` draws below `m`), then `f(round, items)`.
    pub(crate) fn random_rounds(
        seed: u64,
        (rounds, n): (usize, usize),
        mut item: impl FnMut(usize, usize, &mut dyn FnMut(u64) -> u64) -> Item,
        mut f: impl FnMut(usize, std::vec::Vec<Item>),
    ) {
        let mut rng = Rng::new(seed);
        let mut next = |m: u64| rng.below_u64(m);
        for round in 0..rounds {
            let items = (0..n).map(|k| item(round, k, &mut next)).collect();
            f(round, items);
        }
    }

    #[test]
    fn the_search_chain_reports_what_each_planner_alone_does() {
        // Rounds of 60 items, where the exact search proves most optima, and one of 250, where
        // it stops at its node budget.
        // Rounds where a later stage lowered best-of-greedy's height: the stages differ.
        let mut lowered = 0;
        for (rounds, n) in [(10, 60), (1, 250)] {
            let draw = |_, _, next: &mut dyn FnMut(u64) -> u64| {
                random_item(next, (n as u64 / 3, 40, 6), [1, 2, 4])
            };
            random_rounds(41, (rounds, n), draw, |round, items| {
                let p = Problem {
                    items,
                    capacity: None,
                };
                let chain = pack_search_chain(&p, None);
                let names: std::vec::Vec<&str> = chain.iter().map(|c| c.0).collect();
                assert_eq!(names, SEARCH_CHAIN);
                if chain[3].1.packing.height < chain[1].1.packing.height {
                    lowered += 1;
                }
                for (name, report, _) in chain {
                    let alone = PlannerKind::from_name(name, &Default::default())
                        .map(|kind| pack_report(&kind, &p));
                    assert_eq!(Ok(report), alone, "{name}, {n} items, round {round}");
                }
            });
        }
        assert!(lowered > 0, "no round where the search lowered best-of-greedy's height");
    }

    /// Past its deadline the chain runs its reference pass only: every report after it keeps
    /// greedy_by_size's packing and says it was cut, where the searches lower it without one.
    #[test]
    fn a_passed_deadline_cuts_every_search_of_the_chain() {
        let mut cut_some = 0;
        let draw = |_, _, next: &mut dyn FnMut(u64) -> u64| {
            random_item(next, (60 / 3, 40, 6), [1, 2, 4])
        };
        random_rounds(43, (6, 60), draw, |round, items| {
            let p = Problem {
                items,
                capacity: None,
            };
            let free = pack_search_chain(&p, None);
            assert!(free.iter().all(|c| !c.1.stats.timed_out), "round {round}");
            let cut = pack_search_chain(&p, Some(std::time::Instant::now()));
            let by_size = &cut[0].1.packing;
            assert_eq!(by_size, &free[0].1.packing, "round {round}");
            for (name, report, _) in &cut[1..] {
                assert_eq!(&report.packing, by_size, "{name}, round {round}");
                if free[3].1.packing.height < by_size.height {
                    assert!(report.stats.timed_out, "{name}, round {round}");
                }
            }
            cut_some += usize::from(free[3].1.packing.height < by_size.height);
        });
        assert!(cut_some > 0, "no round where the searches had something to cut");
    }

    #[test]
    fn reuses_dead_slots() {
        let p = Problem {
            items: vec![item(10, 0, 1), item(10, 1, 2), item(10, 2, 3)],
            capacity: None,
        };
        let k = pack(&PlannerKind::Greedy, &p);
        assert_eq!(k.offsets, vec![Some(0), Some(10), Some(0)]);
        assert_eq!(k.height, 20);
        assert_eq!(aligned_live_sum(&p), 20);
    }

    #[test]
    fn spills_only_spillable_items() {
        let mut a = item(64, 0, 0);
        a.spillable = true;
        let b = a.clone();
        let pinned = item(64, 0, 0);
        let p = Problem {
            items: vec![a, b, pinned],
            capacity: Some(128),
        };
        let k = pack(&PlannerKind::GreedyBySize, &p);
        assert_eq!(k.offsets[2], Some(0));
        assert_eq!(k.offsets.iter().filter(|o| o.is_none()).count(), 1);
        assert_eq!(k.height, 128);
    }
}
