//! Every bundled model (classic and in place) through its generated `run()` with
//! `planner_kernels::Optimized`, compared byte for byte with TFLite Micro's outputs: the
//! check of `tests/goldens.rs` (`support/model_goldens.rs`), in a binary of its own so that
//! each model's state starts fresh.

#[path = "support/model_goldens.rs"]
mod model_goldens;

use run_models::Set;

#[test]
fn models_match_tflite_micro_bit_for_bit_optimized() {
    model_goldens::models_match(Set::Optimized);
}
