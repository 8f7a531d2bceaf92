//! Runs the exact search on MiniMalloc's challenging instances (`bench/challenging/*.csv`)
//! at the capacity in each file name, and prints one line per instance.
//!
//! `cargo run --release -p planner-bench --bin optimal_challenging [NODE_BUDGET] [FILTER]`

use std::path::{Path, PathBuf};
use std::time::Instant;

use planner::import::csv;
use planner::pack::optimal::{self, OptimalOptions, Outcome};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let budget: u64 = match args.next() {
        Some(a) => a.parse()?,
        None => 200_000_000,
    };
    let filter = args.next();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/challenging");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .filter(|p| {
            filter.as_deref().is_none_or(|f| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(f))
            })
        })
        .collect();
    files.sort();
    println!(
        "{:<16} {:>7} {:>8} {:>8} {:>12} {:>10} {:>9}",
        "instance", "buffers", "capacity", "lb", "result", "nodes", "seconds"
    );
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let capacity: u64 = name
            .split('.')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(1 << 20);
        let problem = csv::read(&path)?;
        let lb = optimal::exact_lower_bound(&problem.problem);
        let opts = OptimalOptions {
            node_budget: budget,
            time_limit: None,
        };
        let t = Instant::now();
        let (outcome, stats) = optimal::fits_with_stats(&problem.problem, capacity, &opts);
        let secs = t.elapsed().as_secs_f64();
        let result = match &outcome {
            Outcome::Fits(p) => {
                if !optimal::is_valid(&problem.problem, &p.offsets, capacity) {
                    return Err(format!("{name}: invalid packing").into());
                }
                format!("fits {}", p.height)
            }
            Outcome::DoesNotFit => "no fit".to_string(),
            Outcome::Unknown(p) => format!("unknown {}", p.height),
        };
        println!(
            "{:<16} {:>7} {:>8} {:>8} {:>12} {:>10} {:>9.3}",
            name,
            problem.ids.len(),
            capacity,
            lb,
            result,
            stats.nodes,
            secs
        );
        eprintln!("  deepest {}", stats.deepest);
    }
    Ok(())
}
