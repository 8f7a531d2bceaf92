//! Models run through `run_with()` with the optimized kernel set (`planner_kernels::Optimized`:
//! Helium on this core; its in-place depthwise, and on patch regions its reference code) and a
//! tap that hashes op outputs and compares them with TFLite Micro's per-op goldens (`tests/run-models/goldens/ops/<stem>.json`), then their
//! final output with TFLite Micro's (`tests/run-models/goldens/<stem>.json`):
//!
//! - `models/vww_in_place.toml`: te_mcunet_vww planned with `in_place = true`; every op
//!   (the golden's PADs are folded into their convolutions).
//! - `models/person_patches.toml`: tflm_person_detect_int8 planned with `patches = "auto"`;
//!   the ops after the split op (the stage's ops run once per patch on regions), and the
//!   split tensor, whole after the stage, read as the input of its first consumer.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use planner::planfile::{PlanFile, naming};
use serde_json::Value;

#[path = "../../../tests/run-models/src/align.rs"]
mod align;
use align::{Misaligned, align};
#[path = "../../firmware-shared/golden_json.rs"]
mod golden_json;
use golden_json::json;

/// How the plan's ops are matched with the golden's.
#[derive(Clone, Copy)]
pub enum Align {
    /// Op by op, by opcode and first output tensor name; the golden's PADs the plan
    /// folded away are skipped (`in_place = true`).
    FoldedPads,
    /// From the plan's split op on, by output tensor name (`patches`): every op after
    /// the split, and the split tensor as an input of its first consumer.
    FromSplit,
}

/// One model: its name in its manifest, its bundled model's stem (the goldens'), its
/// manifest, and how its ops are matched with the golden's.
pub struct Spec {
    pub name: &'static str,
    pub stem: &'static str,
    pub manifest: &'static str,
    pub align: Align,
}

/// What writes a golden file that is missing.
const MISSING: &str = "run the golden scripts to write it";

fn digest(hex: &str, golden: &Path, op: usize) -> u64 {
    u64::from_str_radix(hex, 16).unwrap_or_else(|e| {
        panic!(
            "{}: op {op} digest `{hex}`: {e}; rewrite the golden",
            golden.display()
        )
    })
}

/// A run's compared digests: (plan op, output, FNV-1a 64) and (plan op, input, FNV-1a 64).
#[derive(Default)]
struct Run {
    outputs: Vec<(usize, usize, u64)>,
    inputs: Vec<(usize, usize, u64)>,
}

/// [`Align::FoldedPads`]: every plan op is a golden op, in order; the golden ops left
/// over are PADs. Returns the digests and the number of PADs folded.
fn folded_pads(spec: &Spec, plan: &PlanFile, ops: &[Value], golden: &Path) -> (Run, usize) {
    let at = match align(plan, ops) {
        Ok(at) => at,
        Err(Misaligned::Op {
            golden: g,
            opcode,
            tensor,
            plan_op: k,
        }) => panic!(
            "{}: golden op {g} ({opcode}, output `{tensor}`) is not plan op {k} of `{}` ({:?}), and only PADs are folded away; rewrite the golden or the plan",
            golden.display(),
            spec.name,
            plan.ops.get(k).map(|o| o.opcode.as_str())
        ),
        Err(Misaligned::LeftOver { matched }) => panic!(
            "{}: plan `{}` has {} ops, the golden matched {matched}; rewrite the golden",
            golden.display(),
            spec.name,
            plan.ops.len()
        ),
    };
    let mut run = Run::default();
    for (want, k) in ops.iter().zip(&at) {
        let Some(k) = *k else { continue };
        for (j, o) in want["outputs"].as_array().into_iter().flatten().enumerate() {
            let d = digest(o["fnv1a64"].as_str().unwrap_or(""), golden, k);
            run.outputs.push((k, j, d));
        }
    }
    (run, at.iter().filter(|k| k.is_none()).count())
}

/// [`Align::FromSplit`]: the golden op of every plan op from the split on, by its first
/// output's name. The split op is tapped once per patch on a region, so its whole
/// output is compared as input of the first op after it that reads it.
fn from_split(spec: &Spec, plan: &PlanFile, ops: &[Value], golden: &Path) -> Run {
    let p = plan.patches.as_ref().unwrap_or_else(|| {
        panic!(
            "plan `{}` is not split into patches; set `patches = \"auto\"` in {}",
            spec.name, spec.manifest
        )
    });
    let split = p.split as usize;
    let by_name: BTreeMap<&str, &Value> = ops
        .iter()
        .filter_map(|o| Some((o["outputs"][0]["tensor"].as_str()?, o)))
        .collect();
    let want = |k: usize| {
        let op = &plan.ops[k];
        let tensor = op
            .outputs
            .first()
            .map_or("", |&t| plan.tensors[t as usize].name.as_str());
        let w = by_name.get(tensor).unwrap_or_else(|| {
            panic!(
                "{}: no op writes `{tensor}`, the output of plan op {k} ({}) of `{}`; rewrite the golden",
                golden.display(),
                op.opcode,
                spec.name
            )
        });
        assert_eq!(
            w["opcode"].as_str(),
            Some(op.opcode.as_str()),
            "{}: the golden op writing `{tensor}` is not plan op {k}'s opcode; rewrite the golden",
            golden.display()
        );
        *w
    };
    let mut run = Run::default();
    let split_tensor = plan.ops[split].outputs[0];
    let (consumer, input) = plan
        .ops
        .iter()
        .enumerate()
        .skip(split + 1)
        .find_map(|(k, op)| {
            let i = op.inputs.iter().position(|&t| t == Some(split_tensor))?;
            Some((k, i))
        })
        .unwrap_or_else(|| {
            panic!(
                "plan `{}`: no op after the split op {split} reads its output",
                spec.name
            )
        });
    let d = digest(
        want(split)["outputs"][0]["fnv1a64"].as_str().unwrap_or(""),
        golden,
        split,
    );
    run.inputs.push((consumer, input, d));
    for k in split + 1..plan.ops.len() {
        for (j, o) in want(k)["outputs"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            run.outputs
                .push((k, j, digest(o["fnv1a64"].as_str().unwrap_or(""), golden, k)));
        }
    }
    run
}

/// The per-op golden's runs, as Rust: each run's input seed and range, and its compared
/// output and input digests; the runs' input dtype and (for [`Align::FoldedPads`]) the
/// golden PADs the plan folded. With `wrong_golden`, the first digest is flipped.
struct Runs<'g> {
    dtype: Option<Option<&'g str>>,
    runs: String,
    outputs: String,
    inputs: String,
    folded: usize,
}

fn runs<'g>(
    spec: &Spec,
    plan: &PlanFile,
    g: &'g Value,
    ops_path: &Path,
    wrong_golden: bool,
) -> Runs<'g> {
    let mut dtype = None;
    let mut runs = String::new();
    let mut outputs = String::new();
    let mut inputs = String::new();
    let mut folded = 0;
    let mut flipped = !wrong_golden;
    let empty = Vec::new();
    for run in g["runs"].as_array().into_iter().flatten() {
        let i = &run["inputs"][0];
        let seed = i["seed"].as_u64().unwrap_or(0);
        match i["dtype"].as_str() {
            Some("float32") => {
                let lo = i["lo"].as_f64().unwrap_or(0.0);
                let hi = i["hi"].as_f64().unwrap_or(1.0);
                let _ = write!(runs, "({seed}, {lo:?}, {hi:?}), ");
            }
            Some("int8") => {
                let lo = i["lo"].as_i64().unwrap_or(-128);
                let hi = i["hi"].as_i64().unwrap_or(127);
                let _ = write!(runs, "({seed}, {lo}, {hi}), ");
            }
            other => panic!(
                "{}: input dtype {other:?}; the firmware fills float32 and int8 inputs",
                ops_path.display()
            ),
        }
        assert!(
            dtype.is_none_or(|d| d == i["dtype"].as_str()),
            "{}: the runs' inputs differ in dtype",
            ops_path.display()
        );
        dtype = Some(i["dtype"].as_str());
        let ops = run["ops"].as_array().unwrap_or(&empty);
        let mut r = match spec.align {
            Align::FoldedPads => {
                let (r, f) = folded_pads(spec, plan, ops, ops_path);
                folded = f;
                r
            }
            Align::FromSplit => from_split(spec, plan, ops, ops_path),
        };
        // The self-test: one digest flipped, the run must fail.
        if !flipped && let Some(first) = r.inputs.first_mut().or(r.outputs.first_mut()) {
            first.2 ^= 1;
            flipped = true;
        }
        let _ = writeln!(outputs, "    {},", list(&r.outputs));
        let _ = writeln!(inputs, "    {},", list(&r.inputs));
    }
    Runs {
        dtype,
        runs,
        outputs,
        inputs,
        folded,
    }
}

fn list(digests: &[(usize, usize, u64)]) -> String {
    let mut s = String::from("&[");
    for (k, j, d) in digests {
        let _ = write!(s, "({k}, {j}, 0x{d:016x}), ");
    }
    s.push(']');
    s
}

/// Plans the model; returns its linker fragment and its Rust: the `include_model!`, the
/// golden's inputs and digests as consts, and `run_<name>()`. With `wrong_golden`, the
/// first digest is flipped: the run must fail.
pub fn plan(spec: &Spec, crate_dir: &Path, plans: &Path, wrong_golden: bool) -> (PathBuf, String) {
    let Spec { name, stem, .. } = *spec;
    let out = planner_build::Builder::new()
        .manifest(spec.manifest)
        .compile();
    let path = out.dir.join(naming::plan_file(name));
    let text = fs::read_to_string(&path).expect("planner-build wrote the plan file");
    let plan = PlanFile::parse(&text, &path.display().to_string())
        .expect("planner-build wrote a valid plan file");
    let scratch: u64 = plan
        .arenas
        .iter()
        .filter(|a| a.name.starts_with("scratch."))
        .map(|a| a.size)
        .sum();
    let goldens = crate_dir.join("../../tests/run-models/goldens");
    let ops_path = goldens.join(format!("ops/{stem}.json"));
    let g = json(&ops_path, MISSING);
    let fin = json(&goldens.join(format!("{stem}.json")), MISSING);

    assert_eq!(plan.inputs.len(), 1, "`{name}` has one input");
    let Runs {
        dtype,
        runs,
        outputs,
        inputs,
        folded,
    } = runs(spec, &plan, &g, &ops_path, wrong_golden);
    let float = dtype.flatten() == Some("float32");
    let (range, fill, fill_final) = if float {
        (
            "f64",
            "fill_f32",
            "fill_f32(m.input_{input}_mut(), {upper}_FINAL.0, 0.0, 1.0)",
        )
    } else {
        (
            "i64",
            "fill_i8_in",
            "fill_i8(m.input_{input}_mut(), {upper}_FINAL.0)",
        )
    };
    let fi = &fin["inputs"][0];
    assert_eq!(
        fi["dtype"].as_str(),
        dtype.flatten(),
        "{}: the final-output golden's input dtype is not the per-op golden's",
        goldens.join(format!("{stem}.json")).display()
    );
    let want: Vec<String> = {
        let hex = fin["outputs"][0]["hex"].as_str().unwrap_or("");
        (0..hex.len() / 2)
            .map(|k| format!("0x{}", &hex[2 * k..2 * k + 2]))
            .collect()
    };
    let input = naming::unique_idents(plan.inputs.iter().map(|io| io.name.as_str()));
    let output = naming::unique_idents(plan.outputs.iter().map(|io| io.name.as_str()));
    let input = &input[0];
    let module = naming::model_module(name);
    let upper = name.to_uppercase();
    let fill_final = fill_final
        .replace("{input}", input)
        .replace("{upper}", &upper);
    let mut extra = String::new();
    match spec.align {
        Align::FoldedPads => {
            // A plan with row overlap, or one in place: the line's label and kind.
            let (label, kind) = if plan
                .ops
                .iter()
                .any(|o| o.in_place.is_some_and(|ip| ip.rows))
            {
                ("rows", "row-overlap")
            } else {
                ("in place", "in-place")
            };
            let _ = write!(
                extra,
                "/// Golden PADs the in-place plan folded into their convolutions.\npub const {upper}_FOLDED: usize = {folded};\n\
                 /// The run [`crate::run_whole`] makes of it.\npub const {upper}_WHOLE: crate::WholePlan = crate::WholePlan {{ label: {label:?}, why: \"; the kernel or the {kind} plan changed its bytes\", model: {module}::MODEL, scratch: {upper}_SCRATCH, runs: {upper}_RUNS.len(), folded: {upper}_FOLDED, run: run_{name} }};\n"
            );
        }
        Align::FromSplit => {
            if let Some(p) = &plan.patches {
                let _ = write!(
                    extra,
                    "/// The split op (the patch stage's last) and the patch grid [rows, columns].\npub const {upper}_SPLIT: usize = {};\npub const {upper}_GRID: [usize; 2] = [{}, {}];\n",
                    p.split, p.grid[0], p.grid[1]
                );
            }
        }
    }
    let rust = format!(
        r#"
planner_macros::include_model!({path:?});

/// Scratch bytes of `{name}`'s plan (every scratch arena).
pub const {upper}_SCRATCH: u64 = {scratch};
{extra}/// The per-op golden's runs: the input's seed and range.
pub const {upper}_RUNS: &[(u64, {range}, {range})] = &[{runs}];
/// For each run: (plan op, output, FNV-1a 64 of TFLite Micro's output bytes).
pub const {upper}_DIGESTS: &[&[(usize, usize, u64)]] = &[
{outputs}];
/// For each run: (plan op, input, FNV-1a 64 of TFLite Micro's bytes of that tensor).
pub const {upper}_INPUT_DIGESTS: &[&[(usize, usize, u64)]] = &[
{inputs}];
/// The final-output golden's input seed and TFLite Micro's output bytes.
pub const {upper}_FINAL: (u64, &[u8]) = ({seed}, &[{want}]);

/// Runs `{name}` on every golden input through `run_with()`, the optimized kernels (Helium
/// on this core) and `tap`, then on the final-output golden's input; true when the final output equals
/// TFLite Micro's (the tap holds the per-op comparison).
pub fn run_{name}(tap: &mut crate::golden::Digests) -> Result<bool, planner::rt::kernel::RunError<planner_kernels::KernelError>> {{
let Some(m) = {module}::Model::take() else {{
    cortex_m_semihosting::hprintln!("{name}: FAILED: its handle was taken already");
    return Ok(false);
}};
let mut m = m.init();
crate::print_arenas({module}::MODEL, &{module}::ARENAS, &m.arena_ptrs());
for ((&(seed, lo, hi), want), inputs) in {upper}_RUNS.iter().zip({upper}_DIGESTS).zip({upper}_INPUT_DIGESTS) {{
    crate::golden::{fill}(m.input_{input}_mut(), seed, lo, hi);
    tap.expect(want);
    tap.expect_inputs(inputs);
    m.run_with(&mut planner_kernels::Optimized, tap)?;
    tap.finish();
}}
crate::golden::{fill_final};
m.run(&mut planner_kernels::Optimized)?;
Ok(crate::golden::compare({module}::MODEL, {out:?}, crate::pod::bytes(m.output_{out}()), {upper}_FINAL.1))
}}
"#,
        path = path.display().to_string(),
        seed = fi["seed"].as_u64().unwrap_or(0),
        want = want.join(", "),
        out = output[0],
    );
    (plans.join(naming::linker_file(name)), rust)
}
