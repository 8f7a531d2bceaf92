//! The builtin op kinds TFLite Micro's interpreter registers (`registered_ops.txt`, written
//! by `scripts/tflm_registered_ops.py` from the `tflite-micro` package) are the kinds the
//! kernel sets run, but those it marks `elsewhere` (control flow and resource variables,
//! which the importer turns into control entries and copies: `tests/ops.rs` runs the models
//! of `control/` against TFLM); and every kind the sets run has a model here that runs
//! it, so a kernel that is missing or refuses its model fails to compile or to match TFLM
//! (`tests/ops.rs`).

use std::collections::BTreeSet;

use planner::planfile::PlanFile;
use run_models::{MODELS, SINGLE_OPS, SUPPORTED};

/// The kinds of `registered_ops.txt`: those the kernels run, and those left elsewhere.
fn registered() -> (BTreeSet<String>, BTreeSet<String>) {
    let text = include_str!("../registered_ops.txt");
    let (mut run, mut elsewhere) = (BTreeSet::new(), BTreeSet::new());
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        match line.split_once(" elsewhere: ") {
            Some((kind, why)) => {
                assert!(
                    !why.trim().is_empty(),
                    "{kind}: `elsewhere` without a reason"
                );
                elsewhere.insert(kind.to_string());
            }
            None => {
                run.insert(line.trim().to_string());
            }
        }
    }
    (run, elsewhere)
}

#[test]
fn the_kernels_run_every_kind_tflm_registers() {
    let (run, elsewhere) = registered();
    assert!(run.len() >= 90, "{} kinds registered", run.len());
    let supported: BTreeSet<String> = SUPPORTED.iter().map(|k| k.to_string()).collect();
    let missing: Vec<_> = run.difference(&supported).collect();
    assert!(
        missing.is_empty(),
        "TFLM registers kinds the kernel sets do not run: {missing:?}; add a kernel, or mark the \
         kind `elsewhere` in scripts/tflm_registered_ops.py with the reason"
    );
    let extra: Vec<_> = supported.difference(&run).collect();
    assert!(
        extra.is_empty(),
        "the kernel sets run kinds TFLM does not register: {extra:?}"
    );
    let both: Vec<_> = elsewhere.intersection(&supported).collect();
    assert!(
        both.is_empty(),
        "kinds both run and left elsewhere: {both:?}"
    );
}

#[test]
fn every_supported_kind_runs_in_a_model() {
    let mut used = BTreeSet::new();
    for model in MODELS.iter().chain(SINGLE_OPS) {
        if !model.supported() {
            continue;
        }
        let text = std::str::from_utf8(model.plan_file()).expect("a plan file is UTF-8");
        let plan = PlanFile::parse(text, model.name()).expect("a plan file parses");
        used.extend(plan.ops.iter().map(|o| o.opcode.clone()));
    }
    let unused: Vec<_> = SUPPORTED.iter().filter(|k| !used.contains(**k)).collect();
    assert!(
        unused.is_empty(),
        "kinds no bundled or one-op model runs (so nothing compiles or checks their kernels): \
         {unused:?}; add one-op models with scripts/tflm_single_ops*.py"
    );
}
