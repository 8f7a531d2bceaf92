//! Patch stages inside a group of models: group `patch_pair` (`GROUPED_PATCHES`) plans each of
//! its models with `patches = "auto"`, as `planner plan GROUP.toml --patches auto` does. The
//! plan must keep a patch stage for every model (else this would test nothing), compile
//! through `include_model!` (the same stage checks as a model alone), and each model, run
//! through the group's one handle over the shared scratch arena, must give TFLite Micro's
//! outputs on the golden inputs, byte for byte (`goldens/`, `scripts/tflm_goldens.py`).

use planner::planfile::group::{AnyPlan, read};
use run_models::{GROUPED_PATCHES, Set};

#[path = "support/golden_io.rs"]
mod golden_io;
use golden_io::{golden, hex, inputs};

#[test]
fn every_model_of_the_group_keeps_its_patch_stage() {
    assert_eq!(GROUPED_PATCHES.len(), 2);
    let (_, first) = GROUPED_PATCHES[0];
    let text = std::str::from_utf8(first.plan_file()).unwrap();
    let Ok(AnyPlan::Group(plan)) = read(text, "patch_pair") else {
        panic!("patch_pair's plan is no group plan")
    };
    for m in &plan.models {
        let p = m.patches.as_ref();
        assert!(
            p.is_some(),
            "model `{}` of patch_pair has no patch stage",
            m.model
        );
    }
}

#[test]
fn each_model_runs_its_patches_through_the_group_as_tflite_micro() {
    let mut problems = Vec::new();
    for set in [Set::Reference, Set::Optimized] {
        for (stem, member) in GROUPED_PATCHES {
            let g = golden(stem);
            let inputs = inputs(&g);
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let outputs = match member.run(&refs, set, &mut ()) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(format!("{stem} ({set:?}) through patch_pair: {e}"));
                    continue;
                }
            };
            let want: Vec<&str> = g["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["hex"].as_str().unwrap())
                .collect();
            let got: Vec<String> = outputs.iter().map(|o| hex(o)).collect();
            if got != want {
                problems.push(format!(
                    "{stem} ({set:?}) through patch_pair: outputs {got:?}, TFLM's {want:?}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
