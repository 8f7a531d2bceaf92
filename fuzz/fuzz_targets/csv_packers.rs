//! CSV problems through every packer: parse, then plan with each planner, with and without
//! a capacity (the exact search under a small node budget). `auto` climbs with
//! `hill_climb`'s default iteration and stall limits instead of its own larger ones: the
//! same code runs, and each execution costs about half as much, so a campaign reaches more
//! inputs (the budgets themselves are tested in `planner`'s unit tests).
#![no_main]

#[path = "common.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use planner::pack::{OptionValue, PlannerKind};
use planner::{ProblemOutcome, plan_problem, problem_input};

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
        ("iterations".to_string(), OptionValue::Int(300)),
        ("max_stall_iterations".to_string(), OptionValue::Int(50)),
    ]
    .into_iter()
    .collect();
    for name in [
        "greedy",
        "greedy_by_size",
        "best_of_greedy",
        "hill_climb",
        "auto",
    ] {
        let options = if name == "auto" {
            short_climb.clone()
        } else {
            Default::default()
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
