//! Plan quality and planning time of every packer on the benchmark instances.
//!
//! Run with `cargo run --release -p planner-bench --bin pack_quality`. For each MiniMalloc
//! CSV under `bench/` and each synthetic problem, prints per packer:
//! the height, the lower bound, their ratio, whether the height is proven optimal, whether it
//! fits the capacity the file name asks for, and the planning time (median of a few runs).

use std::time::{Duration, Instant};

use planner::pack::{PlannerKind, Report, pack_report};

fn planners() -> Vec<PlannerKind> {
    let none = std::collections::BTreeMap::new();
    PlannerKind::NAMES
        .iter()
        .filter_map(|n| PlannerKind::from_name(n, &none).ok())
        .collect()
}

/// The report and the median time of a few runs (one run when it takes over 200 ms).
fn run(kind: &PlannerKind, problem: &planner::pack::Problem) -> (Report, Duration) {
    let t = Instant::now();
    let report = pack_report(kind, problem);
    let first = t.elapsed();
    if first > Duration::from_millis(200) {
        return (report, first);
    }
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(pack_report(kind, problem));
            t.elapsed()
        })
        .collect();
    times.sort();
    (report, times[2])
}

fn main() {
    let mut instances = Vec::new();
    for set in ["examples", "small", "challenging"] {
        instances.extend(planner_bench::csv_set(set));
    }
    if instances.is_empty() {
        println!("no CSV instances under bench/; synthetic sets only");
    }
    instances.extend(planner_bench::synthetic_set());
    println!(
        "| instance | items | packer | height | lower bound | aligned bound | ratio | optimal | fits capacity | seed order | re-packs | exact nodes | time |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---|---|---|---:|---:|---:|");
    for inst in &instances {
        for kind in planners() {
            let (report, time) = run(&kind, &inst.problem);
            let c = report.certificate;
            let fits = inst
                .capacity
                .map_or("-".to_string(), |cap| (c.height <= cap).to_string());
            let seed = report
                .stats
                .seed
                .map_or("-".to_string(), |(o, r)| format!("{o}/{r:?}"));
            println!(
                "| {} | {} | {} | {} | {} | {} | {:.4} | {} | {} | {} | {} | {} | {:.2} ms |",
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
                report.stats.nodes,
                time.as_secs_f64() * 1e3
            );
        }
    }
}
