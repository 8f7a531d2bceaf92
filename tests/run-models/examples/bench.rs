//! Times each bundled model's generated `run()` on the host with both kernel sets, on the
//! golden inputs: `cargo run --release -p run-models --example bench [-- ROUNDS
//! [--set=Reference|Optimized] [MODEL...]]` (every model when none is named, both sets
//! unless one is named: a profiler then sees one). Prints one line per model and set: `bench <model>
//! <set> <ms per run> <rounds>` (`<set>` is `Reference` or `Optimized`), or why it did not
//! run (the golden tests, not this, check that both sets give TFLM's bytes).
//! `scripts/bench_vs_tflm.py` puts these beside TFLite Micro's `invoke()` on the same
//! inputs.

use std::time::Instant;

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
            let start = Instant::now();
            for _ in 0..rounds {
                let _ = model.run(&refs, set, &mut ());
            }
            let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(rounds);
            println!("bench {} {} {ms:.3} {rounds}", model.name(), set.name());
        }
    }
}
