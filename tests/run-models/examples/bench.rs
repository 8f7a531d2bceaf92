//! Times each bundled model's generated `run()` with the reference kernels on the host, on
//! the golden inputs: `cargo run --release -p run-models --example bench [-- ROUNDS]`.
//! Prints one line per model: `bench <model> <ms per run> <rounds>`, or why it did not run.
//! `scripts/bench_vs_tflm.py` puts these beside TFLite Micro's `invoke()` on the same inputs.

use std::time::Instant;

use planner_kernels::Reference;
use run_models::{MODELS, input};

fn main() {
    let rounds: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    for model in MODELS {
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
        if let Err(e) = model.run(&refs, &mut Reference, &mut ()) {
            println!("skip {} ({e})", model.name());
            continue;
        }
        let start = Instant::now();
        for _ in 0..rounds {
            let _ = model.run(&refs, &mut Reference, &mut ());
        }
        let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(rounds);
        println!("bench {} {ms:.3} {rounds}", model.name());
    }
}
