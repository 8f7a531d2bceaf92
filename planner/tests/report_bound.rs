//! The lower bound every report prints is a lower bound: on random problems with alignments
//! (and a few fixed offsets), for every planner, the `lower bound` column of the plan table
//! is at most the `used` column, `fragmentation` is their difference, and `optimal` is
//! claimed only at the bound or after an exact search.

#[path = "common/arb.rs"]
mod arb;

use std::collections::BTreeMap;

use planner::import::csv::CsvProblem;
use planner::pack::{Item, OptionValue, PlannerKind, Problem};
use planner::report;
use proptest::prelude::*;

/// Every planner, the exact searches with small node budgets so each case stays fast.
fn planners() -> Vec<PlannerKind> {
    let mut nodes = BTreeMap::new();
    nodes.insert("node_budget".to_string(), OptionValue::Int(2000));
    PlannerKind::NAMES
        .iter()
        .map(|n| match *n {
            "optimal" | "auto" => PlannerKind::from_name(n, &nodes).unwrap(),
            _ => PlannerKind::from_name(n, &BTreeMap::new()).unwrap(),
        })
        .collect()
}

fn arb_item() -> impl Strategy<Value = Item> {
    arb::item((100, 3000), 20, 20, 7, Just(false))
}

prop_compose! {
    /// Random items, a few fixed in disjoint bands high above the others.
    fn arb_problem()(
        mut items in prop::collection::vec(arb_item(), 1..24),
        fixed in prop::collection::vec(any::<bool>(), 24),
    ) -> CsvProblem {
        let mut band = 1u64;
        for (it, f) in items.iter_mut().zip(fixed.iter().step_by(5)) {
            if *f {
                it.fixed = Some(band * 65536);
                it.size = it.size.min(4096);
                band += 1;
            }
        }
        CsvProblem {
            ids: (0..items.len()).map(|i| format!("b{i}")).collect(),
            problem: Problem { items, capacity: None },
        }
    }
}

/// The `(used, lower bound, fragmentation, optimal)` cells of arena `memory`'s row.
fn printed_row(table: &str, memory: &str) -> Option<(u64, u64, u64, bool)> {
    let header = table.lines().find(|l| l.starts_with("memory "))?;
    let cols: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let at = |name: &str| cols.iter().position(|c| *c == name);
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(memory))?;
    let cells: Vec<&str> = row.split_whitespace().collect();
    let num = |name: &str| cells.get(at(name)?)?.parse::<u64>().ok();
    Some((
        num("used")?,
        num("lower bound")?,
        num("fragmentation")?,
        *cells.get(at("optimal")?)? == "yes",
    ))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn printed_lower_bound_is_at_most_used(csv in arb_problem()) {
        for kind in planners() {
            let planned = planner::problem_input(&csv, "random", &kind)
                .plan()
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", kind.name())))?;
            let table = report::table(&planned, &planned.graph);
            for r in &planned.scratch_reports {
                let who = kind.name();
                prop_assert!(r.lower_bound <= r.used, "{}: bound {} above used {}", who, r.lower_bound, r.used);
                prop_assert_eq!(r.fragmentation, r.used - r.lower_bound, "{}", who);
                let exact = matches!(kind, PlannerKind::Optimal(_) | PlannerKind::Auto(_));
                prop_assert!(!r.optimal || r.used == r.lower_bound || exact, "{}: optimal above the bound without a search", who);
                let row = printed_row(&table, &r.memory);
                prop_assert_eq!(row, Some((r.used, r.lower_bound, r.fragmentation, r.optimal)), "{}: {}", who, table);
            }
        }
    }
}

#[test]
fn the_kws_example_prints_a_bound_at_most_used() {
    // The README's quick start command: DTCM holds 8490 bytes whose aligned sum is 8512.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kws/kws.toml");
    let manifest = planner::manifest::load(&path).unwrap();
    let graph = planner::import::load(&manifest).unwrap();
    let planned = planner::plan_graph(&manifest, &graph).unwrap();
    for r in &planned.scratch_reports {
        assert!(
            r.lower_bound <= r.used,
            "{}: {} > {}",
            r.memory,
            r.lower_bound,
            r.used
        );
    }
}
