//! CSV problems through every packer: parse, then plan with each planner, with and without
//! a capacity (the exact search under a small node budget). `hill_climb` and `auto` climb
//! at most 60 iterations, 20 without a gain, instead of their defaults (300 and 50; 2000 and
//! 400): every path of the climb is taken within a few iterations, the rest repeats them,
//! and a campaign runs about 1.5 times the inputs per second (1000/s against 650/s; the
//! budgets themselves are tested in `planner`'s unit tests). `auto`'s exact search gets 12 000
//! nodes instead of 50 000 (see [`AUTO_NODES`]): the exact search takes half the time of an
//! input otherwise, since debug assertions compare its incremental section check with the
//! full one at every node.
#![no_main]

#[path = "common.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use planner::pack::{OptionValue, PlannerKind};
use planner::{ProblemOutcome, plan_problem, problem_input};

/// `auto`'s exact search gets 12 000 nodes instead of 50 000: enough for every branching
/// order's first run (2000 nodes each) and the start of the second round, so restarts and
/// the memo are reached; past that the search repeats the same paths.
const AUTO_NODES: i64 = 12_000;

fuzz_target!(|data: &[u8]| {
    let Some((&cap, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let csv = match planner::import::csv::parse(Path::new("fuzz.csv"), text) {
        Ok(c) => c,
        Err(e) => return common::expected(&e),
    };
    // Small problems keep each run short; the readers' limits are what is under test.
    if csv.problem.items.len() > 64 {
        return;
    }
    let capacity = (cap & 1 == 1).then(|| u64::from(cap) * 16);
    let short_climb: BTreeMap<String, OptionValue> = [
        ("iterations".to_string(), OptionValue::Int(60)),
        ("max_stall_iterations".to_string(), OptionValue::Int(20)),
    ]
    .into_iter()
    .collect();
    let mut short_auto = short_climb.clone();
    short_auto.insert("node_budget".to_string(), OptionValue::Int(AUTO_NODES));
    for name in [
        "greedy",
        "greedy_by_size",
        "best_of_greedy",
        "hill_climb",
        "auto",
    ] {
        let options = match name {
            "auto" => short_auto.clone(),
            "hill_climb" => short_climb.clone(),
            _ => Default::default(),
        };
        let kind = match PlannerKind::from_name(name, &options) {
            Ok(k) => k,
            Err(e) => panic!("planner {name}: {}", e.message),
        };
        match plan_problem(&csv, "fuzz", &kind, capacity, 2_000) {
            Ok(ProblemOutcome::Planned(planned)) => {
                let input = problem_input(&csv, "fuzz", &kind);
                common::accepted(&input.manifest, &planned);
            }
            Ok(ProblemOutcome::DoesNotFit { .. }) => {}
            Err(e) => common::expected(&e),
        }
    }
});
