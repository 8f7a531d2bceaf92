//! Plan quality and planning time of every packer on the benchmark instances.
//!
//! Run with `cargo run --release -p planner --example pack_quality`. For each MiniMalloc
//! CSV under `bench/` (or `../shared/bench/`) and each synthetic problem, prints per packer:
//! the height, the lower bound, their ratio, whether the height is proven optimal, whether it
//! fits the capacity the file name asks for, and the planning time (median of a few runs).

#[path = "../benches/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use planner::pack::{PlannerKind, pack_report};

fn planners() -> Vec<PlannerKind> {
    let none = std::collections::BTreeMap::new();
    [
        "greedy",
        "greedy_by_size",
        "best_of_greedy",
        "hill_climb",
        "auto",
    ]
    .iter()
    .filter_map(|n| PlannerKind::from_name(n, &none).ok())
    .collect()
}

fn time_of(kind: &PlannerKind, problem: &planner::pack::Problem) -> Duration {
    let runs = 5;
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(pack_report(kind, problem));
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    let mut instances = Vec::new();
    for set in ["examples", "small", "challenging"] {
        instances.extend(support::csv_set(set));
    }
    if instances.is_empty() {
        println!("no CSV instances under bench/ or ../shared/bench/; synthetic sets only");
    }
    instances.extend(support::synthetic_set());
    println!(
        "| instance | items | packer | height | lower bound | aligned bound | ratio | optimal | fits capacity | seed order | re-packs | time |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---|---|---|---:|---:|");
    for inst in &instances {
        for kind in planners() {
            let report = pack_report(&kind, &inst.problem);
            let c = report.certificate;
            let fits = inst
                .capacity
                .map_or("-".to_string(), |cap| (c.height <= cap).to_string());
            let seed = report
                .stats
                .seed
                .map_or("-".to_string(), |(o, r)| format!("{o}/{r:?}"));
            let time = time_of(&kind, &inst.problem);
            println!(
                "| {} | {} | {} | {} | {} | {} | {:.4} | {} | {} | {} | {} | {:.2} ms |",
                inst.name,
                inst.problem.items.len(),
                kind.name(),
                c.height,
                c.lower_bound,
                c.aligned_bound,
                c.ratio(),
                c.optimal,
                fits,
                seed,
                report.stats.iterations,
                time.as_secs_f64() * 1e3
            );
        }
    }
}
