//! `planner plan X.csv` on allocation traces: time, peak memory and height against the lower
//! bound and against the best classic greedy order, one child process per trace.
//!
//! Run with `cargo run --release -p planner-bench --bin traces -- [TRACE ...]`, where a trace
//! is a MiniMalloc CSV file or `real:N:SEED:SCALE`, a [`planner_bench::real_trace_like`] problem of
//! `N` buffers with every size times `SCALE` (stand-ins for real traces with heights in the
//! gigabytes). Without arguments: the CSV files of the folder `PLANNER_TRACES` names (when set) and
//! stand-ins of 800 to 62 000 buffers at four times the generator's sizes (10 to 20 GB).
//! `--option KEY=INTEGER` sets an `auto` option (`--option threads=1`).
//!
//! Each row: the buffers, the decomposition's parts, reading the file, solving it as the
//! command does ([`planner::solve_problem`]: the packers and the offsets' check) in CPU
//! seconds of the process (user + system, all threads) and wall seconds, the peak resident
//! memory of the child after solving, the height, the lower bound, their ratio, and the best
//! classic height (TFLM's planner, size-descending first fit, start order with best fit,
//! best-of-greedy) with its ratio to the bound.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use planner::import::csv::CsvProblem;

/// The problem a trace names, and the seconds reading it took.
fn load(spec: &str) -> (CsvProblem, f64) {
    let t = Instant::now();
    if let Some(rest) = spec.strip_prefix("real:") {
        let v: Vec<u64> = rest.split(':').filter_map(|x| x.parse().ok()).collect();
        let (n, seed, scale) = (v[0] as usize, v[1], v.get(2).copied().unwrap_or(1));
        let mut problem = planner_bench::real_trace_like(n, seed);
        for it in &mut problem.items {
            it.size *= scale;
        }
        let ids = (0..n).map(|i| i.to_string()).collect();
        return (CsvProblem { ids, problem }, t.elapsed().as_secs_f64());
    }
    let csv = planner::import::csv::read(Path::new(spec)).unwrap_or_else(|e| panic!("{e}"));
    (csv, t.elapsed().as_secs_f64())
}

fn one(spec: &str, options: &[(String, i64)]) {
    let (csv, read) = load(spec);
    // The command's planner: `auto` with `slack_ppm = 1` unless the options say otherwise.
    let mut options = options.to_vec();
    if !options.iter().any(|(k, _)| k == "slack_ppm") {
        options.push(("slack_ppm".to_string(), 1));
    }
    let kind = planner_bench::packer("auto", &options);
    let (t, c) = (Instant::now(), planner_bench::cpu_secs());
    let solved = match planner::solve_problem(&csv, &kind, None, 0) {
        Ok(planner::Solution::Solved(s)) => s,
        Ok(planner::Solution::DoesNotFit { .. }) => panic!("{spec}: no capacity, always fits"),
        Err(e) => panic!("{spec}: {e}"),
    };
    let (wall, cpu) = (t.elapsed().as_secs_f64(), planner_bench::cpu_secs() - c);
    let rss = planner_bench::peak_rss_kib().unwrap_or(0) as f64 / 1024.0;
    let (classic, which) = planner_bench::best_classic(&csv.problem);
    let cert = solved.certificate;
    let name = Path::new(spec)
        .file_name()
        .map_or(spec.to_string(), |f| f.to_string_lossy().into_owned());
    println!(
        "| {name} | {} | {} | {read:.2} s | {cpu:.2} s | {wall:.2} s | {rss:.0} MiB | {} | {} | {:.5} | {classic} ({which}) | {:.5} |",
        csv.problem.items.len(),
        solved.stats.parts,
        cert.height,
        cert.lower_bound,
        cert.ratio(),
        classic as f64 / cert.lower_bound.max(1) as f64,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = Vec::new();
    let mut specs = Vec::new();
    let mut it = args.iter();
    let mut child = false;
    while let Some(a) = it.next() {
        match a.as_str() {
            "--option" => {
                let kv = it.next().expect("--option KEY=INTEGER");
                let (k, v) = kv.split_once('=').expect("--option KEY=INTEGER");
                options.push((k.to_string(), v.parse::<i64>().expect("an integer")));
            }
            "--child" => child = true,
            _ => specs.push(a.clone()),
        }
    }
    if child {
        for s in &specs {
            one(s, &options);
        }
        return;
    }
    if specs.is_empty() {
        // Real traces are large and not in the repository: an optional folder of them.
        let dir = std::env::var_os("PLANNER_TRACES").map(std::path::PathBuf::from);
        let mut files: Vec<String> = dir
            .iter()
            .flat_map(std::fs::read_dir)
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .map(|p| p.display().to_string())
            .collect();
        files.sort();
        specs.extend(files);
        for (n, seed) in [
            (800, 0),
            (5_000, 1),
            (12_000, 2),
            (25_000, 3),
            (45_000, 4),
            (62_000, 5),
        ] {
            specs.push(format!("real:{n}:{seed}:4"));
        }
    }
    println!(
        "| trace | buffers | parts | read | solve, CPU | solve, wall | peak RSS | height | lower bound | height / bound | best classic | classic / bound |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let me = std::env::current_exe().expect("own path");
    for s in &specs {
        let mut cmd = Command::new(&me);
        cmd.arg("--child").arg(s);
        for (k, v) in &options {
            cmd.arg("--option").arg(format!("{k}={v}"));
        }
        let status = cmd.status().expect("child");
        if !status.success() {
            println!("| {s} | failed ({status}) |");
        }
    }
}
