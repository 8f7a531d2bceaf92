//! What `tests/goldens.rs` and `tests/goldens_optimized.rs` share: every bundled model
//! through its generated `run()` with one kernel set, compared byte for byte with TFLite
//! Micro's outputs on the same inputs (`goldens/`, written by `scripts/tflm_goldens.py`).

use run_models::{MODELS, MODELS_IN_PLACE, MODELS_ROWS, Runner, Set};

#[path = "golden_io.rs"]
mod golden_io;
use golden_io::{golden, hex, inputs};

/// Runs one model on its golden inputs; `Ok(true)` when the outputs are the goldens' bytes.
fn check(model: &dyn Runner, set: Set) -> Result<bool, String> {
    // A model planned with `in_place = true` or `row_overlap = true` has its classic plan's
    // golden.
    let name = model.name();
    let g = golden(
        ["_in_place", "_rows"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name),
    );
    let inputs = inputs(&g);
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let outputs = model.run(&refs, set, &mut ())?;
    let want = g["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), want.len(), "{}: outputs", model.name());
    let mut same = true;
    for (k, (got, want)) in outputs.iter().zip(want).enumerate() {
        let want = want["hex"].as_str().unwrap();
        if hex(got) != want {
            eprintln!(
                "{} output {k}:\n  got  {}\n  want {want}",
                model.name(),
                hex(got)
            );
            same = false;
        }
    }
    Ok(same)
}

/// Every bundled model, planned classic, in place and with row overlap, run with `set` on
/// its golden inputs: every output equal to TFLite Micro's.
pub fn models_match(set: Set) {
    let mut exact = Vec::new();
    let mut unsupported = Vec::new();
    let mut differ = Vec::new();
    // The in-place plans too: their handles are their own, so their state starts fresh.
    for model in MODELS.iter().chain(MODELS_IN_PLACE).chain(MODELS_ROWS) {
        match check(*model, set) {
            Ok(true) => exact.push(model.name()),
            Ok(false) => differ.push(model.name()),
            Err(e) => {
                assert!(!model.supported(), "{}: {e}", model.name());
                unsupported.push(format!("{} ({e})", model.name()));
            }
        }
    }
    println!(
        "{} kernels: bit-exact: {} of {} (each model planned classic, in place and with row overlap): {exact:?}",
        set.name(),
        exact.len(),
        MODELS.len() + MODELS_IN_PLACE.len() + MODELS_ROWS.len()
    );
    println!("not run: {unsupported:?}");
    assert!(
        differ.is_empty(),
        "outputs with the {} kernels differ from TFLite Micro: {differ:?}",
        set.name()
    );
    // Every model the kernels support is bit-exact; the others are named above.
    assert!(exact.len() >= 24, "only {} plans bit-exact", exact.len());
}
