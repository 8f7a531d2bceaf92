//! Planning time of every packer on the MiniMalloc CSV instances under `bench/` (skipped
//! when missing) and on synthetic problems of 1k, 5k and
//! 20k items. Run with `cargo bench -p planner-bench --bench pack`; the quality table (heights
//! against the lower bound) comes from `cargo run --release -p planner-bench --bin
//! pack_quality`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use planner::pack::{PlannerKind, pack};

/// Every planner; with `exact` false, all but `optimal`, whose full node budget takes seconds
/// per run on the large and hard instances (the exact search has its own benchmarks there).
fn planners(exact: bool) -> Vec<PlannerKind> {
    let none = BTreeMap::new();
    PlannerKind::NAMES
        .iter()
        .filter(|n| exact || **n != "optimal")
        .filter_map(|n| PlannerKind::from_name(n, &none).ok())
        .collect()
}

fn csv_instances(c: &mut Criterion) {
    for set in ["small", "challenging"] {
        let instances = planner_bench::csv_set(set);
        if instances.is_empty() {
            eprintln!("no bench/{set}/ CSV files; skipping");
            continue;
        }
        let mut group = c.benchmark_group(format!("csv/{set}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(1));
        for inst in &instances {
            for kind in planners(set == "small") {
                let id = format!(
                    "{}/{}",
                    inst.name.trim_start_matches(&format!("{set}/")),
                    kind.name()
                );
                group.bench_function(id, |b| b.iter(|| pack(&kind, black_box(&inst.problem))));
            }
        }
        group.finish();
    }
}

fn synthetic(c: &mut Criterion) {
    let mut group = c.benchmark_group("synthetic");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for inst in planner_bench::synthetic_set() {
        for kind in planners(false) {
            let id = format!(
                "{}/{}",
                inst.name.trim_start_matches("synthetic/"),
                kind.name()
            );
            group.bench_function(id, |b| b.iter(|| pack(&kind, black_box(&inst.problem))));
        }
    }
    group.finish();
}

criterion_group!(benches, csv_instances, synthetic);
criterion_main!(benches);
