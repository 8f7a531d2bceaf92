//! The LSTM models on the board (`models/<name>.toml`: tflm_mnist_lstm_int8, whose hidden
//! state's zero point is 0, and tflm_micro_speech_lstm, whose is -1): each model's three
//! per-op golden runs in order on one handle (the LSTM's state carries from run to run, as
//! over TFLM's invokes), every op's output against TFLite Micro's digest.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use planner::planfile::{PlanFile, naming};
use serde_json::Value;

/// Each model's name in its manifest, and its bundled model's stem (the goldens').
const MODELS: [(&str, &str); 2] = [
    ("mnist_lstm", "tflm_mnist_lstm_int8"),
    ("speech_lstm", "tflm_micro_speech_lstm"),
];

/// Plans the models; returns their linker fragments and their Rust: per model the
/// `include_model!`, the golden runs' inputs and digests, and a runner; and
/// `LSTM_MODELS`, the runners by name.
pub fn plan(crate_dir: &Path, plans: &Path) -> (Vec<PathBuf>, String) {
    let mut fragments = Vec::new();
    let mut rust = String::new();
    let mut table = String::new();
    for (name, stem) in MODELS {
        let r = one(crate_dir, name, stem);
        rust.push_str(&r);
        let _ = writeln!(
            table,
            "    ({module}::MODEL, run_{name}, {upper}_RUNS.len()),",
            module = naming::model_module(name),
            upper = name.to_uppercase()
        );
        fragments.push(plans.join(naming::linker_file(name)));
    }
    let _ = write!(
        rust,
        "\n/// Runs an LSTM model's golden inputs through a tap.\npub type LstmRun = fn(&mut crate::golden::Digests) -> Result<(), planner::rt::kernel::RunError<planner_kernels::KernelError>>;\n\n/// The LSTM models: name, runner, golden runs.\npub const LSTM_MODELS: &[(&str, LstmRun, usize)] = &[\n{table}];\n"
    );
    (fragments, rust)
}

fn one(crate_dir: &Path, name: &str, stem: &str) -> String {
    let out = planner_build::Builder::new()
        .manifest(format!("models/{name}.toml"))
        .compile();
    let path = out.dir.join(naming::plan_file(name));
    let text = fs::read_to_string(&path).expect("planner-build wrote the plan file");
    let plan = PlanFile::parse(&text, &path.display().to_string())
        .expect("planner-build wrote a valid plan file");
    let golden = crate_dir.join(format!("../../tests/run-models/goldens/ops/{stem}.json"));
    println!("cargo::rerun-if-changed={}", golden.display());
    let g: Value = fs::read_to_string(&golden)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| {
            panic!(
                "{}: missing or not JSON; run scripts/tflm_op_goldens.py --only {stem}",
                golden.display()
            )
        });
    assert_eq!(plan.inputs.len(), 1, "`{name}` has one input");
    let empty = Vec::new();
    let mut runs = String::new();
    let mut digests = String::new();
    for run in g["runs"].as_array().unwrap_or(&empty) {
        let i = &run["inputs"][0];
        assert_eq!(
            i["dtype"].as_str(),
            Some("int8"),
            "{}: an int8 input",
            golden.display()
        );
        let _ = write!(
            runs,
            "({}, {}, {}), ",
            i["seed"].as_u64().unwrap_or(0),
            i["lo"].as_i64().unwrap_or(-128),
            i["hi"].as_i64().unwrap_or(127)
        );
        let ops = run["ops"].as_array().unwrap_or(&empty);
        assert_eq!(
            ops.len(),
            plan.ops.len(),
            "{}: the golden has {} ops, plan `{name}` {}; rewrite the golden",
            golden.display(),
            ops.len(),
            plan.ops.len()
        );
        let _ = write!(digests, "&[");
        for (k, (want, op)) in ops.iter().zip(&plan.ops).enumerate() {
            assert_eq!(
                want["opcode"].as_str(),
                Some(op.opcode.as_str()),
                "{}: op {k}",
                golden.display()
            );
            for (j, o) in want["outputs"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .enumerate()
            {
                let hex = o["fnv1a64"].as_str().unwrap_or("");
                let d = u64::from_str_radix(hex, 16).unwrap_or_else(|e| {
                    panic!(
                        "{}: op {k} digest `{hex}`: {e}; rewrite the golden",
                        golden.display()
                    )
                });
                let _ = write!(digests, "({k}, {j}, 0x{d:016x}), ");
            }
        }
        let _ = writeln!(digests, "],");
    }
    let input = naming::unique_idents(plan.inputs.iter().map(|io| io.name.as_str()));
    let module = naming::model_module(name);
    let upper = name.to_uppercase();
    format!(
        r#"
planner_macros::include_model!({path:?});

/// The per-op golden's runs of `{stem}`: the input's seed and range.
pub const {upper}_RUNS: &[(u64, i64, i64)] = &[{runs}];
/// For each run: (plan op, output, FNV-1a 64 of TFLite Micro's output bytes).
pub const {upper}_DIGESTS: &[&[(usize, usize, u64)]] = &[
{digests}];

/// Runs `{name}` on every golden input in order on one handle (its LSTM state carries
/// over) through `run_with()`, the reference kernels and `tap`.
pub fn run_{name}(tap: &mut crate::golden::Digests) -> Result<(), planner::rt::kernel::RunError<planner_kernels::KernelError>> {{
let Some(m) = {module}::Model::take() else {{
    cortex_m_semihosting::hprintln!("{name}: FAILED: its handle was taken already");
    return Ok(());
}};
let mut m = m.init();
crate::print_arenas({module}::MODEL, &{module}::ARENAS, &m.arena_ptrs());
for (&(seed, lo, hi), want) in {upper}_RUNS.iter().zip({upper}_DIGESTS) {{
    crate::golden::fill_i8_in(m.input_{input}_mut(), seed, lo, hi);
    tap.expect(want);
    m.run_with(&mut planner_kernels::Reference, tap)?;
    tap.finish();
}}
Ok(())
}}
"#,
        path = path.display().to_string(),
        input = input[0],
    )
}
