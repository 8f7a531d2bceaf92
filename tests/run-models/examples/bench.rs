//! Times each bundled model's generated `run()` on the host with both kernel sets, on the
//! golden inputs: `cargo run --release -p run-models --example bench [-- ROUNDS
//! [--set=Reference|Optimized] [MODEL...]]` (every model when none is named, both sets
//! unless one is named: a profiler then sees one), each at least ROUNDS times and for at
//! least half a second. Prints one line per model and set, `bench <model> <set> <ms per
//! run> <runs> <CPU ms per run>` (`<set>` is `Reference` or `Optimized`; the CPU time is
//! the thread's, from `/proc/thread-self/schedstat`, `-` where the kernel has none: on a
//! shared machine it moves less with the load than the wall time), or why it did not run
//! (the golden tests, not this, check that both sets give TFLM's bytes).
//! `scripts/bench_vs_tflm.py` puts these beside TFLite Micro's `invoke()` on the same
//! inputs.

use std::time::Instant;

/// The calling thread's CPU time in nanoseconds (Linux: the first field of
/// `/proc/thread-self/schedstat`), when the kernel reports it.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

use run_models::{MODELS, Set, input};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let (sets, only): (Vec<String>, Vec<String>) = args.partition(|a| a.starts_with("--set="));
    let sets: Vec<Set> = Set::ALL
        .into_iter()
        .filter(|s| {
            sets.is_empty()
                || sets
                    .iter()
                    .any(|a| a.strip_prefix("--set=") == Some(s.name()))
        })
        .collect();
    for model in MODELS {
        if !only.is_empty() && !only.iter().any(|m| m == model.name()) {
            continue;
        }
        let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("goldens")
            .join(format!("{}.json", model.name()));
        let Some(text) = std::fs::read_to_string(&golden).ok() else {
            println!("skip {} (no golden file)", model.name());
            continue;
        };
        let g: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let inputs: Vec<Vec<u8>> = g["inputs"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| {
                        let n: u64 = i["shape"]
                            .as_array()?
                            .iter()
                            .filter_map(|d| d.as_u64())
                            .product();
                        input(i["dtype"].as_str()?, n as usize, i["seed"].as_u64()?)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        for &set in &sets {
            if let Err(e) = model.run(&refs, set, &mut ()) {
                println!("skip {} {} ({e})", model.name(), set.name());
                continue;
            }
            // At least ROUNDS runs and half a second: the kernel updates a thread's CPU
            // time at its clock ticks, so a short window would read too coarsely.
            let (start, cpu) = (Instant::now(), thread_cpu_ns());
            let mut runs = 0u32;
            while runs < rounds || start.elapsed().as_secs_f64() < 0.5 {
                let _ = model.run(&refs, set, &mut ());
                runs += 1;
            }
            let per_run = |ns: f64| ns / 1e6 / f64::from(runs);
            let ms = per_run(start.elapsed().as_secs_f64() * 1e9);
            let cpu = match (cpu, thread_cpu_ns()) {
                (Some(a), Some(b)) => format!("{:.3}", per_run(b.saturating_sub(a) as f64)),
                _ => "-".to_string(),
            };
            println!("bench {} {} {ms:.3} {runs} {cpu}", model.name(), set.name());
        }
    }
}
