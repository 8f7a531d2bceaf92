//! Every bundled model through its generated `run()` with the reference kernels, compared
//! byte for byte with TFLite Micro's reference kernels on the same inputs (the goldens in
//! `goldens/`, written by `scripts/tflm_goldens.py`); `tests/goldens_optimized.rs` runs the
//! same comparison (`support/model_goldens.rs`) with the optimized kernels.

use std::path::PathBuf;

use planner::planfile::PlanFile;
use run_models::{MODELS, MODELS_IN_PLACE, Set};

#[path = "support/model_goldens.rs"]
mod model_goldens;

#[test]
fn models_match_tflite_micro_bit_for_bit() {
    model_goldens::models_match(Set::Reference);
}

#[test]
fn generated_options_are_the_plan_files() {
    // In place, folded PADs change the ops and their options: the plan file's, not the
    // importer's.
    for model in MODELS_IN_PLACE {
        let text = std::str::from_utf8(model.plan_file()).unwrap();
        let plan = PlanFile::parse(text, model.name()).unwrap();
        let from_plan: Vec<_> = plan.ops.iter().map(|o| o.options).collect();
        assert_eq!(model.options(), &from_plan[..], "{}", model.name());
    }
    for model in MODELS {
        let text = std::str::from_utf8(model.plan_file()).unwrap();
        let plan = PlanFile::parse(text, model.name()).unwrap();
        let from_plan: Vec<_> = plan.ops.iter().map(|o| o.options).collect();
        assert_eq!(model.options(), &from_plan[..], "{}", model.name());
        // And the importer's, read again from the model file.
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../models")
            .join(format!("{}.tflite", model.name()));
        let graph = planner::import::tflite::read(&path).unwrap();
        let imported: Vec<_> = graph.ops.iter().map(|o| o.options).collect();
        assert_eq!(model.options(), &imported[..], "{}", model.name());
    }
}
