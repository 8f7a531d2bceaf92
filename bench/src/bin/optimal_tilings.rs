//! Runs the exact search on instances it has never seen: random zero-waste tilings in the
//! style of MiniMalloc's challenging set, so a change tuned on `bench/challenging` can be
//! checked for generality.
//!
//! Each instance cuts the rectangle (1 Mi time units) x (1 MiB) into 150 to 399 items by
//! random guillotine cuts on a 1024 grid, so a packing at exactly 1 MiB exists and the
//! question is whether the search finds it. One line per instance; with `--write DIR` the
//! instances are also written as MiniMalloc CSV files (`id,lower,upper,size`, half-open
//! lifetimes) for other solvers.
//!
//! `cargo run --release -p planner-bench --bin optimal_tilings [COUNT] [NODE_BUDGET] [--write DIR]`

use std::time::Instant;

use planner::pack::optimal::{self, OptimalOptions, Outcome};
use planner::pack::{Item, Problem};
use planner_bench::Rng;

/// 1 MiB: the capacity, and the length of the time axis.
const SIDE: u64 = 1 << 20;
/// Cuts fall on multiples of this, in time and in bytes.
const GRID: u64 = 1024;

/// A rectangle `[t0, t1) x [o0, o1)`: time units by bytes.
type Rect = (u64, u64, u64, u64);

/// Cuts the square into `count` rectangles: each step splits a large rectangle (chosen with
/// a weight on its area) in time or in bytes at a random grid line.
fn tiling(seed: u64, count: usize) -> Vec<Rect> {
    let mut rng = Rng(seed);
    let mut rects: Vec<Rect> = vec![(0, SIDE, 0, SIDE)];
    let mut stuck = 0;
    while rects.len() < count && stuck < 1000 {
        let pick = (0..rects.len())
            .max_by_key(|&k| {
                let (t0, t1, o0, o1) = rects[k];
                let area = ((t1 - t0) / GRID) * ((o1 - o0) / GRID);
                (area.saturating_mul(1 + rng.below(1 << 16)), k)
            })
            .unwrap_or(0);
        let (t0, t1, o0, o1) = rects[pick];
        let in_time = rng.below(2) == 0;
        let (lo, hi) = if in_time { (t0, t1) } else { (o0, o1) };
        let cells = (hi - lo) / GRID;
        if cells < 2 {
            stuck += 1;
            continue;
        }
        let m = lo + GRID * (1 + rng.below(cells - 1));
        let (a, b) = if in_time {
            ((t0, m, o0, o1), (m, t1, o0, o1))
        } else {
            ((t0, t1, o0, m), (t0, t1, m, o1))
        };
        rects[pick] = a;
        rects.push(b);
    }
    // Shuffle, so the item order carries no hint of the tiling.
    for k in (1..rects.len()).rev() {
        let j = rng.below(k as u64 + 1) as usize;
        rects.swap(k, j);
    }
    rects
}

fn problem(rects: &[Rect]) -> Problem {
    let items = rects
        .iter()
        .map(|&(t0, t1, o0, o1)| Item {
            size: o1 - o0,
            start: (t0 / GRID) as u32,
            end: (t1 / GRID - 1) as u32,
            align: 1,
            fixed: None,
            spillable: false,
        })
        .collect();
    Problem {
        items,
        capacity: None,
    }
}

fn write_csv(path: &std::path::Path, rects: &[Rect]) -> std::io::Result<()> {
    let mut out = String::from("id,lower,upper,size\n");
    for (k, &(t0, t1, o0, o1)) in rects.iter().enumerate() {
        out.push_str(&format!("{k},{t0},{t1},{}\n", o1 - o0));
    }
    std::fs::write(path, out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut count = 16u64;
    let mut budget = 20_000_000u64;
    let mut write: Option<std::path::PathBuf> = None;
    let mut positional = 0;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--write" {
            write = Some(args.next().ok_or("--write needs a directory")?.into());
        } else {
            match positional {
                0 => count = a.parse()?,
                1 => budget = a.parse()?,
                _ => return Err(format!("unexpected argument {a:?}").into()),
            }
            positional += 1;
        }
    }
    if let Some(dir) = &write {
        std::fs::create_dir_all(dir)?;
    }
    println!(
        "{:<8} {:>6} {:>10} {:>12} {:>9}",
        "instance", "items", "result", "nodes", "seconds"
    );
    let (mut fit, mut total) = (0, 0.0);
    for seed in 0..count {
        let rects = tiling(seed, 150 + (seed as usize * 37) % 250);
        let name = format!("t{seed}");
        if let Some(dir) = &write {
            write_csv(&dir.join(format!("{name}.csv")), &rects)?;
        }
        let p = problem(&rects);
        let opts = OptimalOptions {
            node_budget: budget,
            time_limit: None,
        };
        let t = Instant::now();
        let (outcome, stats) = optimal::fits_with_stats(&p, SIDE, &opts);
        let secs = t.elapsed().as_secs_f64();
        total += secs;
        let result = match &outcome {
            Outcome::Fits(k) => {
                if !optimal::is_valid(&p, &k.offsets, SIDE) {
                    return Err(format!("{name}: invalid packing").into());
                }
                fit += 1;
                "fits".to_string()
            }
            // A tiling exists, so this would be a wrong proof.
            Outcome::DoesNotFit => return Err(format!("{name}: declared infeasible").into()),
            Outcome::Unknown(_) => "unknown".to_string(),
        };
        println!(
            "{:<8} {:>6} {:>10} {:>12} {:>9.3}",
            name,
            p.items.len(),
            result,
            stats.nodes,
            secs
        );
    }
    println!("{fit} of {count} fit, {total:.1} s in all");
    Ok(())
}
