//! State over two runs equal to TFLite Micro's over two invokes: every model with variable
//! tensors (an LSTM's hidden and cell state, an SVDF's), bundled or one-op, planned classic
//! and in place, runs two inputs one after the other on one handle without a reset; both
//! runs' outputs and every variable after each run are compared with TFLM's two
//! consecutive invokes on one interpreter (`goldens/state/`, written by
//! `scripts/tflm_single_ops_lstm.py`), bit for bit, float32 values included.
//!
//! The only test of this binary: each model's state starts fresh (from `init()`) at the
//! first golden run.

use std::path::PathBuf;

use planner::planfile::PlanFile;
use run_models::{MODELS, MODELS_IN_PLACE, Record, Runner, SINGLE_OPS, Set, unhex};
use serde_json::Value;

fn goldens() -> Vec<Value> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("goldens/state");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run scripts/tflm_single_ops_lstm.py",
                dir.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// Where `ours` differs from `theirs`, bit for bit (`None` when equal); float32 bytes are
/// written out as floats, with the largest difference.
fn differs(ours: &[u8], theirs: &[u8], float: bool) -> Option<String> {
    if ours == theirs {
        return None;
    }
    if ours.len() != theirs.len() {
        return Some(format!("{} bytes, TFLM's {}", ours.len(), theirs.len()));
    }
    if float {
        let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let pairs: Vec<(f32, f32)> = ours
            .chunks(4)
            .zip(theirs.chunks(4))
            .map(|(a, b)| (f(a), f(b)))
            .collect();
        let worst = pairs
            .iter()
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        let e = pairs.iter().position(|(a, b)| a != b).unwrap_or(0);
        return Some(format!(
            "element {e}: ours {}, TFLM {} (largest difference {worst})",
            pairs[e].0, pairs[e].1
        ));
    }
    let e = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    Some(format!("byte {e}: ours {}, TFLM {}", ours[e], theirs[e]))
}

/// Runs the two golden runs on `model`; the differences found.
fn check(model: &dyn Runner, g: &Value) -> Vec<String> {
    let text = std::str::from_utf8(model.plan_file()).unwrap();
    let plan = PlanFile::parse(text, model.name()).unwrap();
    let mut problems = Vec::new();
    if Some(plan.ops.len() as u64) != g["ops"].as_u64() {
        problems.push(format!(
            "{}: the plan has {} ops, the golden model {}",
            model.name(),
            plan.ops.len(),
            g["ops"]
        ));
        return problems;
    }
    for (r, run) in g["runs"].as_array().unwrap().iter().enumerate() {
        let inputs = run_models::run_inputs(g, r, run_models::STATE_SALT);
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut record = Record::default();
        let outputs = match model.run(&refs, Set::Reference, &mut record) {
            Ok(o) => o,
            Err(e) => {
                problems.push(format!("{} run {r}: {e}", model.name()));
                return problems;
            }
        };
        let float_outputs: Vec<bool> = plan
            .outputs
            .iter()
            .map(|o| plan.tensors[o.tensor as usize].dtype == planner::graph::DType::F32)
            .collect();
        for (k, want) in run["outputs"].as_array().unwrap().iter().enumerate() {
            let want = unhex(want.as_str().unwrap());
            let ours = outputs.get(k).map(Vec::as_slice).unwrap_or_default();
            let float = float_outputs.get(k).copied().unwrap_or(false);
            if let Some(d) = differs(ours, &want, float) {
                problems.push(format!(
                    "{} run {r}: output {k} differs at {d}",
                    model.name()
                ));
            }
        }
        for v in run["variables"].as_array().unwrap() {
            let name = v["tensor"].as_str().unwrap();
            // The last op that reads the variable, and its input position there (plan ops
            // are the model's, one for one: checked below).
            let (k, j) = (
                v["op"].as_u64().unwrap() as usize,
                v["input"].as_u64().unwrap() as usize,
            );
            let want = unhex(v["hex"].as_str().unwrap());
            let ours = record.input(k, j);
            let float = v["dtype"].as_str() == Some("float32");
            if let Some(d) = differs(ours, &want, float) {
                problems.push(format!(
                    "{} run {r}: variable `{name}` (op {k} input {j}) after the run differs at {d}",
                    model.name()
                ));
            }
        }
    }
    problems
}

#[test]
fn state_over_two_runs_matches_two_tflm_invokes() {
    let goldens = goldens();
    assert!(goldens.len() >= 4, "{} state goldens", goldens.len());
    let mut problems = Vec::new();
    let mut carried = 0;
    let mut checked = 0;
    for g in &goldens {
        let name = g["model"].as_str().unwrap();
        // The golden's own evidence that the state matters: TFLM's second output from a
        // fresh interpreter differs from the one after the first invoke.
        if g["second_fresh"] != g["runs"][1]["outputs"] {
            carried += 1;
        }
        let plans = MODELS
            .iter()
            .chain(SINGLE_OPS)
            .filter(|m| m.name() == name)
            .chain(
                MODELS_IN_PLACE
                    .iter()
                    .filter(|m| m.name().strip_suffix("_in_place") == Some(name)),
            );
        for model in plans {
            let p = check(*model, g);
            checked += 1;
            println!(
                "{}: {}",
                model.name(),
                if p.is_empty() {
                    "outputs and state equal TFLM's after both runs, bit for bit"
                } else {
                    "differs"
                }
            );
            problems.extend(p);
        }
    }
    assert!(checked >= goldens.len(), "{checked} plans checked");
    assert!(
        carried >= 3,
        "only {carried} state goldens show that the state carried over matters"
    );
    assert!(
        problems.is_empty(),
        "state differs from TFLite Micro's:\n{}",
        problems.join("\n")
    );
}
