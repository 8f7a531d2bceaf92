//! Every op's output of every bundled model and of the one-op models of `single/` (kernel
//! edge cases, `scripts/tflm_single_ops.py`), compared with TFLite Micro's on the same
//! inputs: the goldens in `goldens/ops/`, written by `scripts/tflm_op_goldens.py` (TFLM's
//! interpreter with every intermediate tensor kept), 3 inputs per model run one after the
//! other on one handle (so an LSTM's or an SVDF's state carries from run to run, as it
//! does over TFLM's invokes). A difference names the first differing op, output and
//! element, ours against TFLM's. Every model's compared ops must include informative ones
//! (the golden's `informative_ops`: outputs that differ between the runs and are not all at
//! the int8 or int16 extremes), counted in the report: a model whose every op gives the same
//! output for every input would prove nothing.
//!
//! The same, for every bundled model planned with `in_place = true`, matching the golden
//! ops by their output tensors' names (PADs folded into their convolutions have none).
//!
//! These are the only tests of this binary that run the models: their state must start at
//! the first golden run (the in-place models have handles of their own). The comparison is
//! `support/op_goldens.rs`, which `tests/ops_optimized.rs` runs with the optimized kernels
//! in a binary (a process, so fresh model state) of its own.

#[path = "support/op_goldens.rs"]
mod op_goldens;

use run_models::Set;

run_models::every_op_tests!(
    op_goldens,
    Set::Reference,
    every_op_matches_tflite_micro,
    every_op_matches_tflite_micro_in_place
);
