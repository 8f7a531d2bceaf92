//! Every op's output of every bundled model (classic and in place) and of the one-op models,
//! run with `planner_kernels::Optimized`, compared with TFLite Micro's per-op goldens: the
//! checks of `tests/ops.rs` (`support/op_goldens.rs`), in a binary of its own so that each
//! model's state starts at the first golden run.

#[path = "support/op_goldens.rs"]
mod op_goldens;

use run_models::Set;

run_models::every_op_tests!(
    op_goldens,
    Set::Optimized,
    every_op_matches_tflite_micro_optimized,
    every_op_matches_tflite_micro_in_place_optimized
);
