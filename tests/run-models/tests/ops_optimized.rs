//! Every op's output of every bundled model (classic and in place) and of the one-op models,
//! run with `planner_kernels::Optimized`, compared with TFLite Micro's per-op goldens: the
//! checks of `tests/ops.rs` (`support/op_goldens.rs`), in a binary of its own so that each
//! model's state starts at the first golden run.

#[path = "support/op_goldens.rs"]
mod op_goldens;

use run_models::Set;

#[test]
fn every_op_matches_tflite_micro_optimized() {
    op_goldens::every_op(Set::Optimized);
}

#[test]
fn every_op_matches_tflite_micro_in_place_optimized() {
    op_goldens::every_op_in_place(Set::Optimized);
}
