//! Planning time and peak memory on large inputs: a 100,000-op chain model and a
//! 1,000,000-row MiniMalloc CSV problem.
//!
//! Run with `cargo run --release -p planner-bench --bin scale` (add `-- chain`, `-- table`
//! (the chain, then the table `planner plan` prints, with the all-orders bound), `-- csv`
//! or `-- dense` (10^6 rows, 100 live at a step) for one of them, `-- chain 10000` for
//! another size). Each case runs in a child process so
//! its peak resident memory (`VmHWM` from `/proc/self/status`, Linux) is its own. The chain
//! model is manifest text (a `FULLY_CONNECTED` op per step with a weight constant given by
//! size, and an activation), parsed, imported and planned with the default planner; the CSV
//! problem has deterministic random lifetimes and sizes and is parsed and planned as
//! `planner plan problem.csv` does.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use planner::manifest::Manifest;
use planner::pack::PlannerKind;

fn chain_manifest(ops: usize) -> String {
    let mut s = String::from("[model]\nname = \"chain\"\ntensors = [\n");
    for k in 0..=ops {
        let _ = writeln!(
            s,
            "  {{ id = \"a{k}\", dtype = \"i8\", shape = [1, 256] }},"
        );
    }
    for k in 0..ops {
        let _ = writeln!(
            s,
            "  {{ id = \"w{k}\", dtype = \"i8\", shape = [256, 16], constant = true }},"
        );
    }
    s.push_str("]\nops = [\n");
    for k in 0..ops {
        let _ = writeln!(
            s,
            "  {{ opcode = \"FULLY_CONNECTED\", inputs = [\"a{k}\", \"w{k}\"], outputs = [\"a{}\"] }},",
            k + 1
        );
    }
    // 400 MB of zero-filled weights: more than the default cap on such constants, which
    // guards the blobs a build writes; planning alone writes none.
    s.push_str("]\n[memory]\nmax_zero_constants = \"1G\"\n");
    s
}

fn csv_problem(rows: usize, dense: bool) -> String {
    let mut rng = planner_bench::Rng(0x5eed_cafe);
    let mut s = String::from("id,lower,upper,size\n");
    // Sparse: lifetimes of 1-64 steps over `rows` steps (32 live at a step); dense:
    // 1-40 steps over `rows / 5` steps (100 live at a step).
    let (steps, life) = if dense {
        ((rows as u64 / 5).max(1), 40)
    } else {
        (rows as u64, 64)
    };
    for k in 0..rows {
        let lower = rng.below(steps);
        let upper = lower + 1 + rng.below(life);
        let size = 16 * (1 + rng.below(256));
        let _ = writeln!(s, "b{k},{lower},{upper},{size}");
    }
    s
}

fn run_chain(ops: usize, table: bool) {
    let text = chain_manifest(ops);
    let t = Instant::now();
    let manifest = Manifest::parse(&text, Path::new("chain.toml")).expect("manifest");
    let graph = planner::import::load(&manifest).expect("import");
    let parsed = t.elapsed();
    let planned = planner::plan_graph(&manifest, &graph).expect("plan");
    let total = t.elapsed();
    let scratch: u64 = planned.plan.arena_usages.values().map(|a| a.used).sum();
    report(
        &format!("chain model, {ops} ops, {} tensors", graph.tensors.len()),
        parsed.as_secs_f64(),
        total.as_secs_f64(),
        &format!("scratch {scratch} B"),
    );
    if table {
        // `planner plan` prints a table ending with the op order's peak and the all-orders
        // lower bound.
        let t = Instant::now();
        let out = planner::report::table(&planned, &planned.graph)
            + &planner::report::order_summary(&planned, manifest.platform.min_alignment);
        let summary = out.lines().last().unwrap_or_default().to_string();
        report(
            "  its table",
            0.0,
            t.elapsed().as_secs_f64(),
            &format!("{} bytes, {summary}", out.len()),
        );
    }
}

fn run_csv(rows: usize, dense: bool) {
    let text = csv_problem(rows, dense);
    let t = Instant::now();
    let csv = planner::import::csv::parse(Path::new("problem.csv"), &text).expect("csv");
    drop(text);
    let parsed = t.elapsed();
    // As `planner plan problem.csv` does: solved on its own items, then the table.
    let mut kind = PlannerKind::default();
    if let PlannerKind::Auto(o) = &mut kind {
        o.slack_ppm = 1;
    }
    let outcome = planner::solve_problem(&csv, &kind, None, 0).expect("plan");
    let planner::Solution::Solved(solved) = outcome else {
        panic!("no capacity: always solved");
    };
    let table = planner::report::problem_table("problem", &csv, &solved);
    let total = t.elapsed();
    let c = solved.certificate;
    report(
        &format!(
            "CSV problem, {rows} rows, {}",
            if dense { "dense" } else { "sparse" }
        ),
        parsed.as_secs_f64(),
        total.as_secs_f64(),
        &format!(
            "height {} B, bound {} B, ratio {:.5}, table {} bytes, CPU {:.2} s",
            c.height,
            c.lower_bound,
            c.ratio(),
            table.len(),
            planner_bench::cpu_secs()
        ),
    );
}

fn report(what: &str, parsed: f64, total: f64, result: &str) {
    let rss = planner_bench::peak_rss_kib()
        .map_or("?".to_string(), |k| format!("{:.0} MiB", k as f64 / 1024.0));
    println!("{what}: read {parsed:.2} s, read + plan {total:.2} s, peak RSS {rss}, {result}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let size = |default: usize| args.get(1).and_then(|s| s.parse().ok()).unwrap_or(default);
    match args.first().map(String::as_str) {
        Some("chain") => run_chain(size(100_000), false),
        Some("table") => run_chain(size(100_000), true),
        Some("csv") => run_csv(size(1_000_000), false),
        Some("dense") => run_csv(size(1_000_000), true),
        _ => {
            let me = std::env::current_exe().expect("own path");
            for case in ["chain", "table", "csv", "dense"] {
                let status = Command::new(&me).arg(case).status().expect("child");
                if !status.success() {
                    println!("{case}: failed ({status})");
                }
            }
        }
    }
}
