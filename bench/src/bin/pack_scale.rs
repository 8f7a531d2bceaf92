//! Planning time and quality at scale: real-trace-like problems (10k to 60k buffers) and the
//! random problems of issue 17 (20k buffers over 5k ops, 100k over 25k), with the default
//! planner against the classic greedy orders.
//!
//! Run with `cargo run --release -p planner-bench --bin pack_scale -- [what]`, where `what` is
//! `suite [real|random20k|random100k]` (the default: the tables of `bench/RESULTS.md` at scale), `real N [SEED]`,
//! `random N OPS [SEED]`, or `csv real|random N [OPS] SEED FILE` (write the problem as a
//! MiniMalloc CSV for `planner plan`). `--planner NAME` picks another planner for `real` and
//! `random`, `--option KEY=INTEGER` sets one of its options (`--option threads=1`).

use std::collections::BTreeMap;
use std::time::Instant;

use planner::pack::{OptionValue, PlannerKind, Problem, Report, pack_report};

fn planner(name: &str, threads: Option<i64>) -> PlannerKind {
    let mut o = BTreeMap::new();
    if let Some(t) = threads {
        o.insert("threads".to_string(), OptionValue::Int(t));
    }
    PlannerKind::from_name(name, &o).unwrap_or_else(|e| panic!("{}", e.message))
}

/// The planner `name` with every `--option KEY=INTEGER` of `args`.
fn with_options(name: &str, args: &[String]) -> PlannerKind {
    let mut o = BTreeMap::new();
    for pair in args.windows(2).filter(|w| w[0] == "--option") {
        if let Some((k, v)) = pair[1].split_once('=') {
            let v = v
                .parse()
                .unwrap_or_else(|_| panic!("--option {k}: {v} is not an integer"));
            o.insert(k.to_string(), OptionValue::Int(v));
        }
    }
    PlannerKind::from_name(name, &o).unwrap_or_else(|e| panic!("{}", e.message))
}

/// Wall-clock seconds, and CPU seconds of the whole process (all threads).
fn timed(kind: &PlannerKind, problem: &Problem) -> (Report, f64, f64) {
    let (t, c) = (Instant::now(), planner_bench::cpu_secs());
    let r = pack_report(kind, problem);
    (r, t.elapsed().as_secs_f64(), planner_bench::cpu_secs() - c)
}

fn arg_after(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|k| args.get(k + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = arg_after(&args, "--planner").unwrap_or_else(|| "auto".to_string());
    let num = |k: usize, default: u64| {
        args.get(k)
            .and_then(|a| a.parse::<u64>().ok())
            .unwrap_or(default)
    };
    match args.first().map(String::as_str) {
        Some("real") => {
            let p = planner_bench::real_trace_like(num(1, 30_000) as usize, num(2, 0));
            one(&p, &with_options(&name, &args));
        }
        Some("random") => {
            let n = num(1, 20_000) as usize;
            let p = planner_bench::random_problem(n, num(2, 5_000) as u32, num(3, 0));
            one(&p, &with_options(&name, &args));
        }
        Some("csv") => {
            let real = args.get(1).is_some_and(|a| a == "real");
            let n = num(2, 30_000) as usize;
            let (p, file) = if real {
                (planner_bench::real_trace_like(n, num(3, 0)), args.get(4))
            } else {
                let ops = num(3, 5_000) as u32;
                (
                    planner_bench::random_problem(n, ops, num(4, 0)),
                    args.get(5),
                )
            };
            let file = file.cloned().unwrap_or_else(|| "problem.csv".to_string());
            planner_bench::write_csv(&p, std::path::Path::new(&file))
                .unwrap_or_else(|e| panic!("cannot write {file}: {e}"));
            println!("wrote {file}: {} buffers", p.items.len());
        }
        _ => suite(),
    }
}

fn one(problem: &Problem, kind: &PlannerKind) {
    let (r, secs, cpu) = timed(kind, problem);
    let c = r.certificate;
    println!(
        "{} items, {}: height {} bound {} ratio {:.6} in {:.3} s ({cpu:.2} s CPU); stats {:?}",
        problem.items.len(),
        kind.name(),
        c.height,
        c.lower_bound,
        c.ratio(),
        secs,
        r.stats
    );
}

/// One table row; returns (height / bound, height / best classic).
fn row(name: &str, problem: &Problem) -> (f64, f64) {
    let (one, t1, c1) = timed(&planner("auto", Some(1)), problem);
    let (all, tn, _) = timed(&planner("auto", None), problem);
    assert_eq!(one.packing, all.packing, "{name}: threads changed the plan");
    let t = Instant::now();
    let (classic, which) = planner_bench::best_classic(problem);
    let tc = t.elapsed().as_secs_f64();
    let c = one.certificate;
    let vs_classic = c.height as f64 / classic as f64;
    println!(
        "| {name} | {} | {} | {:.2} s | {:.2} s | {:.2} s | {} | {} | {:.5} | {} ({which}) | {:.5} | {:.2} s |",
        problem.items.len(),
        one.stats.parts,
        c1,
        t1,
        tn,
        c.height,
        c.lower_bound,
        c.ratio(),
        classic,
        vs_classic,
        tc
    );
    (c.ratio(), vs_classic)
}

/// The smallest, median and largest of `v`.
fn spread(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn suite() {
    let only = std::env::args().nth(2);
    println!(
        "| problem | buffers | parts | auto, 1 thread, CPU | same, wall | auto, all cores, wall | height | lower bound | height / bound | best classic | height / best classic | classic time |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (n, seed) in [
        (10_000, 0),
        (30_000, 0),
        (30_000, 1),
        (60_000, 0),
        (60_000, 1),
    ] {
        if only.as_deref().is_some_and(|o| o != "real") {
            break;
        }
        row(
            &format!("real-like {}k #{seed}", n / 1000),
            &planner_bench::real_trace_like(n, seed),
        );
    }
    for (n, ops) in [(20_000usize, 5_000u32), (100_000, 25_000)] {
        if only
            .as_deref()
            .is_some_and(|o| o != format!("random{}k", n / 1000))
        {
            continue;
        }
        let (mut bound, mut classic) = (Vec::new(), Vec::new());
        for seed in 0..10 {
            let (b, c) = row(
                &format!("random {}k #{seed}", n / 1000),
                &planner_bench::random_problem(n, ops, seed),
            );
            bound.push(b);
            classic.push(c);
        }
        let above = classic.iter().filter(|&&c| c > 1.0).count();
        let (b0, b1, b2) = spread(&mut bound);
        let (c0, c1, c2) = spread(&mut classic);
        println!(
            "random {}k, 10 problems: height / bound min {b0:.5} median {b1:.5} max {b2:.5}; height / best classic min {c0:.5} median {c1:.5} max {c2:.5}; above the best classic: {above}",
            n / 1000
        );
    }
}
