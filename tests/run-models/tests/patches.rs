//! The bundled vision models planned with `patches = "auto"` (issue 27): their first stage
//! runs patch by patch through the generated `run()` (and `run_streamed` for the streamed
//! variant) with the reference kernels on region views.
//!
//! - From the split op on (the split tensor, whole once every patch wrote its tile, and
//!   every op after it), every op output equals TFLite Micro's byte for byte, with the
//!   reference and with the optimized kernels: the per-op
//!   goldens of `goldens/ops/`, matched by output tensor name (the patch plan runs the
//!   stage's ops first, so op indices differ from the golden's).
//! - Every region a stage op writes (seen by the tap, once per patch) equals the per-layer
//!   run's tensor cropped to that region.

use std::collections::BTreeMap;

use planner::planfile::PlanFile;
use planner::rt::kernel::{Hooks, Region, Tap};
use run_models::{
    MODELS, MODELS_PATCHES, MODELS_STREAMED, Record, Runner, Set, data_bytes, fnv1a64,
};
use serde_json::Value;

/// The suffixes of the patch-planned models' names.
const SUFFIXES: &[&str] = &["_patches", "_streamed"];

fn base(name: &str) -> &str {
    SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name)
}

fn plan(model: &dyn Runner) -> PlanFile {
    PlanFile::parse(
        std::str::from_utf8(model.plan_file()).unwrap(),
        model.name(),
    )
    .unwrap()
}

/// Every tap of op output 0, in order: (op, region, bytes).
#[derive(Default)]
struct Regions {
    taps: Vec<(usize, Option<Region>, Vec<u8>)>,
    /// The last tap of each op: all its outputs.
    last: BTreeMap<usize, Vec<Vec<u8>>>,
}

impl Hooks for Regions {
    fn tap(&mut self, op: &Tap<'_, '_>) {
        let outs: Vec<Vec<u8>> = (0..op.outputs())
            .map(|j| {
                op.output(j)
                    .and_then(|y| data_bytes(&y.data))
                    .unwrap_or_default()
            })
            .collect();
        if let Some(y) = op.output(0) {
            self.taps.push((
                op.index,
                y.region,
                outs.first().cloned().unwrap_or_default(),
            ));
        }
        self.last.insert(op.index, outs);
    }
}

#[test]
fn from_the_split_on_every_op_matches_tflite_micro() {
    from_the_split_on(Set::Reference);
}

/// The same with the optimized kernels: their stage ops run on regions (the reference
/// kernels'), the ops after the split on whole tensors (their fast paths).
#[test]
fn from_the_split_on_every_op_matches_tflite_micro_optimized() {
    from_the_split_on(Set::Optimized);
}

/// From the split op on, every op output of the patch-planned models, run with `set`,
/// equals TFLM's.
fn from_the_split_on(set: Set) {
    let mut report = Vec::new();
    let mut failures = Vec::new();
    let mut split_models = 0;
    for model in MODELS_PATCHES.iter().chain(MODELS_STREAMED) {
        let name = model.name();
        let plan = plan(*model);
        let Some(p) = &plan.patches else {
            report.push(format!("{name}: not split by `patches = \"auto\"`"));
            continue;
        };
        split_models += 1;
        let split = p.split as usize;
        let g =
            run_models::golden_json(&format!("ops/{}", base(name)), "scripts/tflm_op_goldens.py");
        let (mut compared, before) = (0, failures.len());
        for (r, run) in g["runs"].as_array().unwrap().iter().enumerate() {
            let inputs = run_models::run_inputs(&g, r, run_models::OPS_SALT);
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let mut seen = Regions::default();
            model
                .run(&refs, set, &mut seen)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // The golden's ops by their first output's name.
            let by_name: BTreeMap<&str, &Value> = run["ops"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|o| Some((o["outputs"][0]["tensor"].as_str()?, o)))
                .collect();
            for (k, op) in plan.ops.iter().enumerate().skip(split) {
                let tensor = &plan.tensors[op.outputs[0] as usize].name;
                let Some(want) = by_name.get(tensor.as_str()) else {
                    failures.push(format!(
                        "{name}: op {k} ({}) output `{tensor}` is not in the golden",
                        op.opcode
                    ));
                    continue;
                };
                assert_eq!(
                    want["opcode"].as_str(),
                    Some(op.opcode.as_str()),
                    "{name}: op {k}"
                );
                for (j, w) in want["outputs"].as_array().unwrap().iter().enumerate() {
                    let ours = seen
                        .last
                        .get(&k)
                        .and_then(|o| o.get(j))
                        .cloned()
                        .unwrap_or_default();
                    compared += 1;
                    if fnv1a64(&ours) != w["fnv1a64"].as_str().unwrap() {
                        failures.push(format!(
                            "{name} run {r}: op {k} ({}) output {j} (`{tensor}`, {} bytes) differs from TFLM's",
                            op.opcode,
                            ours.len()
                        ));
                    }
                }
            }
        }
        report.push(format!(
            "{name}: split after op {split} ({}), grid {}x{}, input {:?}; {compared} op outputs from the split on compared with TFLM's over 3 runs, {} differ",
            plan.ops[split].opcode,
            p.grid[0],
            p.grid[1],
            p.input,
            failures.len() - before
        ));
    }
    println!("{} kernels:\n{}", set.name(), report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        split_models >= 3,
        "only {split_models} models split:\n{}",
        report.join("\n")
    );
}

/// Region `r` of a `[1, H, W, C]` tensor's whole bytes (`elem` bytes an element).
fn crop(whole: &[u8], shape: &[u64], r: Region, elem: usize) -> Vec<u8> {
    let (w, c) = (shape[2] as usize, shape[3] as usize);
    let row = r.width * c * elem;
    let mut out = Vec::with_capacity(r.height * row);
    for y in r.top..r.top + r.height {
        let at = (y * w + r.left) * c * elem;
        out.extend_from_slice(&whole[at..at + row]);
    }
    out
}

#[test]
fn stage_regions_equal_the_per_layer_run_cropped() {
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for model in MODELS_PATCHES.iter() {
        let name = model.name();
        let plan = plan(*model);
        let Some(p) = &plan.patches else { continue };
        let layer = MODELS
            .iter()
            .find(|m| m.name() == base(name))
            .expect("the per-layer plan of the model");
        let layer_plan = self::plan(*layer);
        let g =
            run_models::golden_json(&format!("ops/{}", base(name)), "scripts/tflm_op_goldens.py");
        let inputs = run_models::run_inputs(&g, 0, run_models::OPS_SALT);
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut whole = Record::default();
        layer.run(&refs, Set::Reference, &mut whole).unwrap();
        let mut seen = Regions::default();
        model.run(&refs, Set::Reference, &mut seen).unwrap();
        let layer_op: BTreeMap<&str, usize> = layer_plan
            .ops
            .iter()
            .enumerate()
            .map(|(k, o)| (layer_plan.tensors[o.outputs[0] as usize].name.as_str(), k))
            .collect();
        let mut regions = 0;
        let mut calls = vec![0usize; p.split as usize + 1];
        for (k, region, bytes) in &seen.taps {
            let Some(region) = *region else { continue };
            calls[*k] += 1;
            let t = &plan.tensors[plan.ops[*k].outputs[0] as usize];
            let lk = layer_op[t.name.as_str()];
            let full = &whole.ops[lk][0];
            let elements: u64 = t.shape.iter().product();
            let elem = full.len() / elements as usize;
            let want = crop(full, &t.shape, region, elem);
            // A dense view holds the region; a whole one (the split tensor) the tensor.
            let ours = if bytes.len() == full.len() && want.len() != full.len() {
                crop(bytes, &t.shape, region, elem)
            } else {
                bytes.clone()
            };
            regions += 1;
            if ours != want {
                failures.push(format!(
                    "{name}: op {k} ({}) region {region:?} of `{}` differs from the per-layer run's",
                    plan.ops[*k].opcode, t.name
                ));
            }
        }
        // Every stage op ran once per patch.
        assert!(calls.iter().all(|&c| c == p.patches()), "{name}: {calls:?}");
        report.push(format!(
            "{name}: {regions} stage regions ({} ops x {} patches) equal the per-layer run's",
            p.split + 1,
            p.patches()
        ));
    }
    println!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
