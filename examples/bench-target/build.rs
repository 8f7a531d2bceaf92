//! Plans every bundled model twice for the board the target names (a Cortex-M55 on QEMU's
//! `mps3-an547`, a Cortex-M4 on QEMU's `mps2-an386`): once for the reference kernel set and
//! once for the optimized one. Writes `memory.x`, the linker fragments' index and
//! `models.rs`: an `include_model!` per plan, TFLite Micro's per-op digests of the model's
//! golden runs (`tests/run-models/goldens/ops/<stem>.json`, written by
//! `scripts/tflm_op_goldens.py`) aligned with the plan's ops, and a function per plan that
//! runs the golden inputs through `run_with()` with the firmware's probe.
//!
//! Also writes `cases.rs`: random one-op cases (`build/cases.rs`) the firmware runs through
//! both kernel sets, comparing their outputs.
//!
//! `BENCH_MODELS` (comma-separated stems, e.g. `tflm_person_detect_int8,tiny_ic_resnet8_int8`)
//! narrows the models; the default is every `.tflite` in `models/`. Every model runs with the
//! optimized set; with the reference set only the models `BENCH_REFERENCE` names (default:
//! the four the benchmark reports, [`REFERENCE`]; `all` for every model): the reference
//! kernels take 2.3 billion instructions on te_mcunetv2_large alone.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use planner::planfile::{PlanFile, naming};
use serde_json::Value;

#[path = "../../tests/run-models/src/align.rs"]
mod align;
#[path = "build/cases.rs"]
mod cases;
#[path = "../firmware-shared/golden_json.rs"]
mod golden_json;
use golden_json::json;
#[path = "build/elementwise_cases.rs"]
mod elementwise_cases;
#[path = "build/lstm_cases.rs"]
mod lstm_cases;

/// One-op cases the firmware runs through both kernel sets, unless `BENCH_CASES` says how
/// many.
const CASES: usize = 400;

/// Random int8 LSTM cases the firmware runs through both kernel sets.
const LSTM_CASES: usize = 40;

/// Random ADD, SUB, MUL, QUANTIZE, PAD and MEAN cases the firmware runs through both sets.
const ELEMENTWISE_CASES: usize = 200;

/// The board a target runs on.
struct Board {
    /// The core, as the benchmark's lines name it.
    core: &'static str,
    /// QEMU's machine.
    machine: &'static str,
    /// `memory.x`: cortex-m-rt's FLASH and RAM, and the planner's memory `BIG`.
    memory_x: &'static str,
    /// The manifest's `[platform]` table.
    platform: &'static str,
    /// The CPU clock SysTick counts, in Hz (QEMU's machine model).
    clock_hz: u32,
}

/// QEMU's `mps3-an547` (Arm's SSE-300 FPGA image, Cortex-M55) at the non-secure aliases
/// (QEMU's hw/arm/mps2-tz.c). QEMU starts the core from the vector at 0 (ITCM); the code and
/// the real vector table are in the QSPI flash, where cortex-m-rt's `set-vtor` points VTOR.
/// The models' arenas and weights are all in the 256 MiB DDR: instruction counts do not
/// depend on the memory, and the 24 plans do not fit the TCMs side by side.
const M55: Board = Board {
    core: "m55",
    machine: "mps3-an547",
    memory_x: "MEMORY
{
  FLASH (rx) : ORIGIN = 0x28000000, LENGTH = 8M    /* QSPI flash */
  RAM  (rwx) : ORIGIN = 0x21000000, LENGTH = 4M    /* SSE-300 internal SRAM */
  ITCM (rwx) : ORIGIN = 0x00000000, LENGTH = 512K
  BIG  (rwx) : ORIGIN = 0x60000000, LENGTH = 256M  /* DDR */
}

SECTIONS
{
  .boot_vector :
  {
    LONG(_stack_start & 0xFFFFFFF8);
    LONG(Reset | 1);
  } > ITCM
}

ASSERT(ADDR(.boot_vector) == 0, \"
ERROR(bench-target): .boot_vector must be the first bytes of ITCM, where QEMU's mps3-an547
reads the initial SP and reset vector\");
",
    platform: "memories = [{ name = \"BIG\", size = \"256M\", writable = true, origin = 0x60000000 }]",
    clock_hz: 32_000_000,
};

/// QEMU's `mps2-an386` (Arm's MPS2 FPGA image for the Cortex-M4, with its FPU): 4 MiB of
/// SSRAM at 0 (code; the core boots from its vector at 0), 4 MiB at 0x2000_0000 (stack and
/// statics) and 16 MiB of PSRAM at 0x2100_0000 (the models' arenas and weights).
const M4F: Board = Board {
    core: "m4f",
    machine: "mps2-an386",
    memory_x: "MEMORY
{
  FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 4M    /* SSRAM1 */
  RAM  (rwx) : ORIGIN = 0x20000000, LENGTH = 4M    /* SSRAM2 and 3 */
  BIG  (rwx) : ORIGIN = 0x21000000, LENGTH = 16M   /* PSRAM */
}
",
    platform: "memories = [{ name = \"BIG\", size = \"16M\", writable = true, origin = 0x21000000 }]",
    clock_hz: 25_000_000,
};

/// The kernel sets each model is planned and run for: (suffix of the plan's name, the
/// manifest's `[kernels]` table, the kernel set's Rust path).
const SETS: [(&str, &str, &str); 2] = [
    ("ref", "", "planner_kernels::Reference"),
    // Planned for the optimized set: prepared requant-v1 constants as input 3 and im2col
    // rows in planned kernel scratch.
    (
        "opt",
        "[kernels]\nset = \"optimized\"\n\n",
        "planner_kernels::Optimized",
    ),
];

/// The models run with the reference set too, unless `BENCH_REFERENCE` says otherwise.
const REFERENCE: [&str; 4] = [
    "tflm_person_detect_int8",
    "te_mcunet_vww",
    "tiny_kws_dscnn_int8",
    "tiny_ic_resnet8_int8",
];

fn main() {
    let crate_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts"));
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=BENCH_MODELS");
    println!("cargo::rerun-if-env-changed=BENCH_REFERENCE");
    let reference = env::var("BENCH_REFERENCE").unwrap_or_default();
    let with_reference = |stem: &str| match reference.as_str() {
        "" => REFERENCE.contains(&stem),
        "all" => true,
        list => list.split(',').any(|s| s.trim() == stem),
    };
    let target = env::var("TARGET").unwrap_or_default();
    let board = match target.as_str() {
        "thumbv8m.main-none-eabihf" => M55,
        "thumbv7em-none-eabihf" => M4F,
        other => panic!(
            "bench-target builds for thumbv8m.main-none-eabihf (Cortex-M55, QEMU mps3-an547) or thumbv7em-none-eabihf (Cortex-M4, QEMU mps2-an386), not `{other}`; run scripts/bench_target.sh"
        ),
    };

    let corpus = crate_dir.join("../../models");
    println!("cargo::rerun-if-changed={}", corpus.display());
    let mut stems: Vec<String> = fs::read_dir(&corpus)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
                .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
                .collect()
        })
        .unwrap_or_default();
    stems.sort();
    let only = env::var("BENCH_MODELS").unwrap_or_default();
    let only: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if !only.is_empty() {
        for s in &only {
            assert!(
                stems.iter().any(|t| t == s),
                "BENCH_MODELS names `{s}`, which is not a model in {}",
                corpus.display()
            );
        }
        stems.retain(|s| only.contains(&s.as_str()));
    }
    assert!(
        !stems.is_empty(),
        "no models to benchmark in {}",
        corpus.display()
    );

    let manifests = out.join("manifests");
    fs::create_dir_all(&manifests).expect("OUT_DIR is writable");
    let plans = out.join("planner");
    let goldens = crate_dir.join("../../tests/run-models/goldens/ops");
    let mut fragments = String::from("/* @generated by bench-target's build.rs */\n");
    let mut rust = format!(
        "// @generated by bench-target's build.rs\n\n\
         /// The core, as the benchmark's lines name it, and QEMU's machine.\n\
         pub const CORE: &str = {:?};\npub const MACHINE: &str = {:?};\n\
         /// The CPU clock SysTick counts, in Hz.\npub const CLOCK_HZ: u32 = {};\n\
         /// The optimized kernel set.\npub type Optimized = planner_kernels::Optimized;\n",
        board.core, board.machine, board.clock_hz
    );
    let mut table = String::from(
        "/// Every plan: its function.\npub const PLANS: &[crate::probe::Plan] = &[\n",
    );
    let mut flip = env::var_os("CARGO_FEATURE_WRONG_GOLDEN").is_some();
    for stem in &stems {
        let golden_path = goldens.join(format!("{stem}.json"));
        let golden = json(&golden_path, "run scripts/tflm_op_goldens.py to write it");
        for (suffix, kernels, set) in SETS {
            if suffix == "ref" && !with_reference(stem) {
                continue;
            }
            let name = format!("{}_{suffix}", naming::ident(stem));
            let manifest = manifests.join(format!("{name}.toml"));
            let model = corpus.join(format!("{stem}.tflite"));
            let text = format!(
                "# @generated by bench-target's build.rs\n[model]\nname = \"{name}\"\nsource = {model:?}\n\n\
                 [platform]\n{platform}\n\n{kernels}\
                 [memory]\nconstraints = [{{ name = \"BIG\" }}]\n\
                 tensors = [{{ type = \"constant\", attributes = {{ memory = \"BIG\" }} }}]\n",
                model = model.display().to_string(),
                platform = board.platform,
            );
            write_if_changed(&manifest, text.as_bytes());
            let o = planner_build::Builder::new().manifest(&manifest).compile();
            let path = o.dir.join(naming::plan_file(&name));
            let plan_text = fs::read_to_string(&path).expect("planner-build wrote the plan file");
            let plan = PlanFile::parse(&plan_text, &path.display().to_string())
                .expect("planner-build wrote a valid plan file");
            let _ = writeln!(
                fragments,
                "INCLUDE {}",
                plans.join(naming::linker_file(&name)).display()
            );
            rust.push_str(&model_rust(
                &name,
                stem,
                set,
                &path,
                &plan,
                &golden,
                &golden_path,
                &mut flip,
            ));
            let _ = writeln!(
                table,
                "    crate::probe::Plan {{ model: {stem:?}, set: {suffix:?}, ops: {}, run: run_{name} }},",
                plan.ops.len()
            );
        }
    }
    table.push_str("];\n");
    rust.push_str(&table);
    println!("cargo::rerun-if-changed=build/cases.rs");
    println!("cargo::rerun-if-changed=build/lstm_cases.rs");
    println!("cargo::rerun-if-changed=build/elementwise_cases.rs");
    println!("cargo::rerun-if-env-changed=BENCH_CASES");
    let count = env::var("BENCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    write_if_changed(
        &out.join("cases.rs"),
        cases::rust(0x5eed_0fca_5e55, count).as_bytes(),
    );
    write_if_changed(
        &out.join("lstm_cases.rs"),
        lstm_cases::rust(0x157a_ca5e, LSTM_CASES.min(count)).as_bytes(),
    );
    write_if_changed(
        &out.join("elementwise_cases.rs"),
        elementwise_cases::rust(0xe1e_3e27, ELEMENTWISE_CASES.min(count)).as_bytes(),
    );
    write_if_changed(&out.join("planner_models.x"), fragments.as_bytes());
    write_if_changed(&out.join("models.rs"), rust.as_bytes());
    let memory_x = format!(
        "/* @generated by bench-target's build.rs: QEMU {} */\n{}\nINCLUDE planner_models.x\n",
        board.machine, board.memory_x
    );
    write_if_changed(&out.join("memory.x"), memory_x.as_bytes());
    println!("cargo::rustc-link-search={}", out.display());
}

/// The Rust of one plan: its `include_model!`, its golden runs (input seed and range) and
/// per-op digests, and `run_<name>(probe)`, which runs every golden input through
/// `run_with()` with the probe (its per-op counts taken on the first run), then the first
/// input again through `run()` with no hooks, timed as a whole.
#[allow(clippy::too_many_arguments)]
fn model_rust(
    name: &str,
    stem: &str,
    set: &str,
    plan_path: &Path,
    plan: &PlanFile,
    golden: &Value,
    golden_path: &Path,
    flip: &mut bool,
) -> String {
    assert_eq!(
        plan.inputs.len(),
        1,
        "{stem}: the benchmark fills models with one input"
    );
    let input = &naming::unique_idents(plan.inputs.iter().map(|io| io.name.as_str()))[0];
    let module = naming::model_module(name);
    let upper = name.to_uppercase();
    let mut runs = String::new();
    let mut digests = String::new();
    let mut dtype = None;
    let empty = Vec::new();
    for run in golden["runs"].as_array().into_iter().flatten() {
        let i = &run["inputs"][0];
        let seed = i["seed"].as_u64().unwrap_or(0);
        let d = i["dtype"].as_str().unwrap_or("");
        assert!(
            dtype.is_none_or(|t| t == d),
            "{}: the runs' inputs differ in dtype",
            golden_path.display()
        );
        dtype = Some(d);
        match d {
            "int8" | "int16" => {
                let _ = write!(
                    runs,
                    "({seed}, {}, {}), ",
                    i["lo"].as_i64().unwrap_or(-128),
                    i["hi"].as_i64().unwrap_or(127)
                );
            }
            "float32" => {
                let _ = write!(
                    runs,
                    "({seed}, {:?}, {:?}), ",
                    i["lo"].as_f64().unwrap_or(0.0),
                    i["hi"].as_f64().unwrap_or(1.0)
                );
            }
            other => panic!(
                "{}: input dtype {other}; the benchmark fills int8 and float32 inputs",
                golden_path.display()
            ),
        }
        let ops = run["ops"].as_array().unwrap_or(&empty);
        let at = match align::align(plan, ops) {
            Ok(at) => at,
            Err(align::Misaligned::Op {
                golden: g,
                opcode,
                tensor,
                plan_op,
            }) => panic!(
                "{}: golden op {g} ({opcode}, output `{tensor}`) is not plan op {plan_op} of `{name}`; rewrite the golden",
                golden_path.display()
            ),
            Err(align::Misaligned::LeftOver { matched }) => panic!(
                "{}: plan `{name}` has {} ops, the golden matched {matched}; rewrite the golden",
                golden_path.display(),
                plan.ops.len()
            ),
        };
        let _ = write!(digests, "    &[");
        for (want, k) in ops.iter().zip(&at) {
            let Some(k) = *k else { continue };
            for (j, o) in want["outputs"].as_array().into_iter().flatten().enumerate() {
                let hex = o["fnv1a64"].as_str().unwrap_or("");
                let mut d = u64::from_str_radix(hex, 16).unwrap_or_else(|e| {
                    panic!(
                        "{}: op {k} digest `{hex}`: {e}; rewrite the golden",
                        golden_path.display()
                    )
                });
                if *flip {
                    d ^= 1;
                    *flip = false;
                    println!(
                        "cargo::warning=wrong-golden: TFLite Micro's digest of {name} op {k} is flipped on purpose"
                    );
                }
                let _ = write!(digests, "({k}, {j}, 0x{d:016x}), ");
            }
        }
        let _ = writeln!(digests, "],");
    }
    let (range, fill) = match dtype {
        Some("float32") => ("f64", "fill_f32(x, seed, lo, hi)"),
        Some("int16") => ("i64", "fill_i16_in(x, seed, lo, hi)"),
        _ => ("i64", "fill_i8_in(x, seed, lo, hi)"),
    };
    format!(
        r#"
planner_macros::include_model!({path:?});

/// `{name}`'s golden runs: the input's seed and range.
const {upper}_RUNS: &[(u64, {range}, {range})] = &[{runs}];
/// For each run: (plan op, output, FNV-1a 64 of TFLite Micro's output bytes).
const {upper}_DIGESTS: &[&[(usize, usize, u64)]] = &[
{digests}];

/// Runs `{name}` ({stem}) with `{set}`: every golden input through `run_with()` and the
/// probe, then the first input through `run()`, timed as a whole.
fn run_{name}(probe: &mut crate::probe::Probe) -> Result<(), planner::rt::kernel::RunError<planner_kernels::KernelError>> {{
    let Some(m) = {module}::Model::take() else {{
        crate::fail("a model's handle was taken twice")
    }};
    let mut m = m.init();
    #[allow(unused_imports)]
    use planner_kernels::golden::{{fill_f32, fill_i16_in, fill_i8_in}};
    let fill = |x: &mut [_], seed: u64, lo: {range}, hi: {range}| {fill};
    for (r, (&(seed, lo, hi), want)) in {upper}_RUNS.iter().zip({upper}_DIGESTS).enumerate() {{
        fill(m.input_{input}_mut(), seed, lo, hi);
        probe.start_run(r, want);
        m.run_with(&mut {set}, probe)?;
    }}
    if let Some(&(seed, lo, hi)) = {upper}_RUNS.first() {{
        fill(m.input_{input}_mut(), seed, lo, hi);
        let start = crate::timer::now();
        m.run(&mut {set})?;
        probe.total = crate::timer::now() - start;
    }}
    Ok(())
}}
"#,
        path = plan_path.display().to_string(),
    )
}

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if fs::read(path).ok().as_deref() != Some(bytes) {
        fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}
