//! Plans every bundled model (`../../models/*.tflite`) for the host into `OUT_DIR` (the
//! `generic` platform: unlimited SRAM, weights read in place from FLASH; `greedy_by_size`)
//! and writes `models.rs`: an `include_model!` per model and a [`Runner`] that fills its
//! inputs from bytes, calls its generated `run()` with the kernel set it is given (the
//! reference or the optimized kernels: every model is compiled against both, so a kind one
//! set lacks is a compile error here), and returns its outputs as bytes.
//!
//! A model with an op kind the reference kernels lack gets a runner that says so: calling
//! its `run()` with them would not compile (that compile error is what the UI test
//! `tests/ui/fail/run-missing-kernel.rs` shows).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use planner::planfile::group::{AnyPlan, read};
use planner::planfile::patch::PatchInput;
use planner::planfile::{PlanFile, naming};

/// The op kinds `planner_kernels::Reference` and `planner_kernels::Optimized` implement (a
/// model with another kind gets a runner that says so instead of a `run()` call that would
/// not compile).
const SUPPORTED: &[&str] = &[
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "FULLY_CONNECTED",
    "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
    "ADD",
    "SUB",
    "MUL",
    "SOFTMAX",
    "RESHAPE",
    "PAD",
    "MEAN",
    "TRANSPOSE",
    "CONCATENATION",
    "QUANTIZE",
    "DEQUANTIZE",
    "SVDF",
    "RELU",
    "RELU6",
    "LOGISTIC",
    "TANH",
    "HARD_SWISH",
    "MAXIMUM",
    "MINIMUM",
    "STRIDED_SLICE",
    "RESIZE_NEAREST_NEIGHBOR",
    "DIV",
    "SQUARED_DIFFERENCE",
    "PRELU",
    "LEAKY_RELU",
    "LOG_SOFTMAX",
    "CAST",
    "ARG_MAX",
    "GATHER",
    "SUM",
    "REDUCE_MAX",
    "SQUEEZE",
    "EXPAND_DIMS",
    "SLICE",
    "PADV2",
    "SPLIT",
    "SPLIT_V",
    "PACK",
    "UNPACK",
    "RESIZE_BILINEAR",
    "TRANSPOSE_CONV",
    "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "ARG_MIN",
    "BATCH_MATMUL",
    "CUMSUM",
    "DEPTH_TO_SPACE",
    "SPACE_TO_DEPTH",
    "L2_NORMALIZATION",
    "L2_POOL_2D",
    "MIRROR_PAD",
    "REDUCE_MIN",
    "REDUCE_ALL",
    "EQUAL",
    "NOT_EQUAL",
    "GREATER",
    "GREATER_EQUAL",
    "LESS",
    "LESS_EQUAL",
    "LOGICAL_AND",
    "LOGICAL_OR",
    "LOGICAL_NOT",
    "SELECT_V2",
    "ABS",
    "NEG",
    "FLOOR",
    "CEIL",
    "ROUND",
    "SQRT",
    "SQUARE",
    "SIN",
    "COS",
    "LOG",
    "EXP",
    "RSQRT",
    "ELU",
    "FLOOR_DIV",
    "FLOOR_MOD",
    "ADD_N",
    "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND",
    "REVERSE_V2",
    "GATHER_ND",
    "EMBEDDING_LOOKUP",
    "DYNAMIC_UPDATE_SLICE",
    "FILL",
    "ZEROS_LIKE",
    "SHAPE",
    "BROADCAST_TO",
    "BROADCAST_ARGS",
];

/// The op kinds `planner_kernels::Reference` runs in place (its `*InPlace` kernel traits):
/// a plan that runs another kind in place gets a runner that says so.
const SUPPORTED_IN_PLACE: &[&str] = &[
    "DEPTHWISE_CONV_2D",
    "ADD",
    "SUB",
    "MUL",
    "QUANTIZE",
    "DEQUANTIZE",
    "LOGISTIC",
    "TANH",
    "RELU",
    "RELU6",
    "HARD_SWISH",
];

/// The `.tflite` files of `dir`, sorted (none when it does not exist).
fn tflite_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut models: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
                .collect()
        })
        .unwrap_or_default();
    models.sort();
    models
}

/// Plans `model` for the host (its constants in FLASH when `constants`) and appends its `include_model!` and runner to `rust`;
/// returns its module name.
/// The suffix of a model's name when it is planned a second time with `in_place = true`.
const IN_PLACE: &str = "_in_place";

/// The vision models planned a third time with `patches = "auto"` (named
/// `<model>_patches`), and the one planned a fourth time with its input streamed too
/// (`<model>_streamed`).
const PATCH_MODELS: &[&str] = &[
    "te_mcunet_vww",
    "te_mcunetv2_large",
    "tflm_person_detect_int8",
    "tiny_ic_resnet8_int8",
];
const STREAMED_MODEL: &str = "te_mcunet_vww";

/// How a model is planned: the suffix of its name and the `[memory]` lines that make it so.
#[derive(Clone, Copy)]
struct Variant {
    suffix: &'static str,
    memory: &'static str,
}

const CLASSIC: Variant = Variant {
    suffix: "",
    memory: "",
};

/// Plans `model` for the host (its constants in FLASH when `constants`) as `variant` and
/// appends its `include_model!` and runner to `rust`; returns its module name.
fn plan_model(
    model: &std::path::Path,
    manifests: &std::path::Path,
    constants: bool,
    variant: Variant,
    rust: &mut String,
) -> String {
    let stem = model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    let stem = &format!("{stem}{}", variant.suffix);
    let in_place = variant.memory;
    let manifest = manifests.join(format!("{stem}.toml"));
    // Weights read in place from FLASH; a one-op model may have no constant, and a rule
    // that matches no tensor is a warning.
    let flash = if constants {
        "tensors = [{ type = \"constant\", attributes = { memory = \"FLASH\" } }]\n"
    } else {
        ""
    };
    let text = format!(
        "# @generated by run-models' build.rs\n[model]\nname = \"{stem}\"\nsource = \"{}\"\n\n\
         [platform]\npreset = \"generic\"\n\n[memory]\nplanner = \"greedy_by_size\"\n{in_place}{flash}",
        model.display()
    );
    let (path, plan) = compile(&manifest, &text, stem);
    let plan = PlanFile::parse(&plan, &path.display().to_string()).expect("a valid plan");
    runner(rust, &plan, &path);
    naming::model_module(&plan.model)
}

/// Writes manifest `text` to `manifest` (when it changed, so cargo does not rebuild for
/// nothing), runs `planner-build` on it without fragment or header, and returns the path
/// and text of the plan file of model or group `name`.
fn compile(manifest: &std::path::Path, text: &str, name: &str) -> (PathBuf, String) {
    if fs::read_to_string(manifest).ok().as_deref() != Some(text) {
        fs::write(manifest, text).expect("OUT_DIR is writable");
    }
    let outputs = planner_build::Builder::new()
        .manifest(manifest)
        .linker_fragment(false)
        .c_header(false)
        .compile();
    let path = outputs.dir.join(naming::plan_file(name));
    let plan = fs::read_to_string(&path).expect("planner-build wrote the plan");
    (path, plan)
}

fn main() {
    let crate_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let corpus = crate_dir.join("../../models");
    let single = crate_dir.join("single");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed={}", corpus.display());
    println!("cargo::rerun-if-changed={}", single.display());
    let manifests = out.join("manifests");
    fs::create_dir_all(&manifests).expect("OUT_DIR is writable");
    let mut rust = String::from("// @generated by run-models' build.rs\n");
    let in_place = Variant {
        suffix: IN_PLACE,
        memory: "in_place = true\n",
    };
    let patches = Variant {
        suffix: "_patches",
        memory: "patches = \"auto\"\n",
    };
    let streamed = Variant {
        suffix: "_streamed",
        memory: "patches = \"auto\"\npatch_input = \"streamed\"\n",
    };
    let vision: Vec<PathBuf> = PATCH_MODELS
        .iter()
        .map(|m| corpus.join(format!("{m}.tflite")))
        .filter(|p| p.exists())
        .collect();
    let streamed_model: Vec<PathBuf> = vec![corpus.join(format!("{STREAMED_MODEL}.tflite"))];
    for (files, table_name, constants, variant, doc) in [
        (
            tflite_files(&corpus),
            "MODELS",
            true,
            CLASSIC,
            "Every bundled model, in file-name order.",
        ),
        (
            tflite_files(&corpus),
            "MODELS_IN_PLACE",
            true,
            in_place,
            "Every bundled model planned with `in_place = true` (PADs folded, ops run in place; \
             named `<model>_in_place`), in file-name order.",
        ),
        (
            tflite_files(&single),
            "SINGLE_OPS",
            false,
            CLASSIC,
            "The one-op models of `single/` (`scripts/tflm_single_ops.py`), in file-name order.",
        ),
        (
            vision,
            "MODELS_PATCHES",
            true,
            patches,
            "The bundled vision models planned with `patches = \"auto\"` (their first stage run \
             patch by patch; named `<model>_patches`).",
        ),
        (
            streamed_model,
            "MODELS_STREAMED",
            true,
            streamed,
            "A vision model planned with `patches = \"auto\"` and its input streamed (named \
             `<model>_streamed`): its runner fills each patch's input region from the whole \
             input it is given.",
        ),
    ] {
        let mut table = String::new();
        for model in files {
            let module = plan_model(&model, &manifests, constants, variant, &mut rust);
            let _ = writeln!(table, "    &{module}_runner::RUNNER,");
        }
        let _ = writeln!(
            rust,
            "/// {doc}\npub static {table_name}: &[&(dyn Runner + Sync)] = &[\n{table}];"
        );
    }
    for spec in &GROUPS {
        plan_group(spec, &corpus, &manifests, &mut rust);
    }
    let _ = writeln!(
        rust,
        "/// The op kinds both kernel sets run (`build.rs`' list, which `tests/registered.rs` \
         checks against TFLM's).\npub const SUPPORTED: &[&str] = &{SUPPORTED:?};"
    );
    let target = out.join("models.rs");
    if fs::read_to_string(&target).ok().as_deref() != Some(rust.as_str()) {
        fs::write(&target, rust).expect("OUT_DIR is writable");
    }
}

/// The `include_model!` and the runner of one model.
fn runner(rust: &mut String, plan: &PlanFile, path: &std::path::Path) {
    let module = naming::model_module(&plan.model);
    let acquire = format!(
        "        let mut guard = self.handle.get_or_init(|| Mutex::new(super::{module}::Model::take().expect(\"taken once\").init())).lock().unwrap_or_else(|e| e.into_inner());\n        let m = &mut *guard;\n"
    );
    let (body, supported) = runner_body(plan, &module, &acquire);
    let path = path.display().to_string();
    let _ = writeln!(rust, "planner_macros::include_model!({path:?});");
    runner_module(
        rust,
        &RunnerModule {
            doc: format!("The runner of model `{}`.", plan.model),
            name: format!("{module}_runner"),
            owner: "model",
            handle: format!("OnceLock<Mutex<super::{module}::Model>>"),
            init: "OnceLock::new()".to_string(),
            items: module.clone(),
            plan: module,
            body,
            supported,
        },
    );
}

/// What differs between the runner of a model and that of a group's model.
struct RunnerModule {
    /// The module's doc line.
    doc: String,
    /// The module's name.
    name: String,
    /// Whose one handle the runner holds: `model`, `group`.
    owner: &'static str,
    /// The type of the runner's `handle` field, and its value in `RUNNER`.
    handle: String,
    init: String,
    /// The module (under `super`) of the model's `MODEL` and `OPTIONS`, and of `PLAN_FILE`.
    items: String,
    plan: String,
    /// The body of `run()` (see [`runner_body`]) and whether the kernel sets run it.
    body: String,
    supported: bool,
}

/// Appends runner module `r` (a `Runner` for one model, holding the handle it runs through).
fn runner_module(rust: &mut String, r: &RunnerModule) {
    let RunnerModule {
        doc,
        name,
        owner,
        handle,
        init,
        items,
        plan,
        body,
        supported,
    } = r;
    let _ = write!(
        rust,
        "
/// {doc}
pub mod {name} {{
    use std::sync::{{Mutex, OnceLock}};

    /// Holds the {owner}'s one handle.
    pub struct R {{
        handle: {handle},
    }}

    /// The runner.
    pub static RUNNER: R = R {{ handle: {init} }};

    impl crate::Runner for R {{
        fn name(&self) -> &'static str {{
            super::{items}::MODEL
        }}
        fn plan_file(&self) -> &'static [u8] {{
            super::{plan}::PLAN_FILE
        }}
        fn options(&self) -> &'static [planner::rt::options::OpOptions] {{
            &super::{items}::OPTIONS
        }}
        fn supported(&self) -> bool {{
            {supported}
        }}
        fn run(
            &self,
            inputs: &[&[u8]],
            kernels: crate::Set,
            hooks: &mut dyn planner::rt::kernel::Hooks,
        ) -> Result<Vec<Vec<u8>>, String> {{
{body}        }}
    }}
}}
"
    );
}

/// The body of a runner's `run()` for `plan`, whose items are in `super::<module>`:
/// `acquire` (code that binds `m` to a ready handle), the inputs filled, the run with the
/// set `kernels` names, the outputs; and whether the kernel sets run every op.
fn runner_body(plan: &PlanFile, module: &str, acquire: &str) -> (String, bool) {
    let mut missing: Vec<&str> = plan
        .ops
        .iter()
        .map(|o| o.opcode.as_str())
        .filter(|o| !SUPPORTED.contains(o))
        .collect();
    missing.extend(
        plan.ops
            .iter()
            .filter(|o| o.in_place.is_some() && !SUPPORTED_IN_PLACE.contains(&o.opcode.as_str()))
            .map(|o| o.opcode.as_str()),
    );
    missing.sort_unstable();
    missing.dedup();
    let mut body = String::new();
    if missing.is_empty() {
        body.push_str(acquire);
        // A streamed input has no whole buffer: `run_streamed_with` asks for each patch's
        // region, cut here from the whole input.
        let streamed = plan
            .patches
            .as_ref()
            .filter(|p| p.input == PatchInput::Streamed);
        let mut run =
            "        with_set!(kernels, k => m.run_with(k, hooks).map_err(|e| e.to_string()))?;\n"
                .to_string();
        for (j, name) in naming::unique_idents(plan.inputs.iter().map(|i| i.name.as_str()))
            .iter()
            .enumerate()
        {
            if streamed.is_some_and(|p| p.tensor(plan.inputs[j].tensor).is_some()) {
                let c = name.to_ascii_uppercase();
                run = format!(
                    "        let whole = inputs.get({j}).copied().unwrap_or_default();\n        \
                     let mut bad = None;\n        \
                     with_set!(kernels, k => m.run_streamed_with(k, hooks, |r, buf| {{\n            \
                     if let Err(e) = crate::fill_region(buf, whole, super::{module}::inputs::{c}.shape, r) {{ bad = Some(e); }}\n        \
                     }}).map_err(|e| e.to_string()))?;\n        \
                     if let Some(e) = bad {{ return Err(e); }}\n"
                );
                continue;
            }
            let _ = writeln!(
                body,
                "        crate::fill(m.input_{name}_mut(), inputs.get({j}).copied().unwrap_or_default())?;"
            );
        }
        body.push_str(&run);
        body.push_str("        let mut outputs = Vec::new();\n");
        for name in naming::unique_idents(plan.outputs.iter().map(|i| i.name.as_str())) {
            let _ = writeln!(
                body,
                "        outputs.push(crate::bytes(m.output_{name}()));"
            );
        }
        body.push_str("        Ok(outputs)\n");
    } else {
        let _ = writeln!(
            body,
            "        let _ = (inputs, kernels, hooks, &self.handle);\n        Err(\"the kernel sets have no {} kernel (or cannot run it in place)\".to_string())",
            missing.join(", ")
        );
    }
    (body, missing.is_empty())
}

/// A group planned for the host, run through its one handle.
struct GroupSpec {
    /// The group's name.
    name: &'static str,
    /// Its models: `(member, bundled model)`.
    models: &'static [(&'static str, &'static str)],
    /// `[memory]` lines beyond the planner and the constants in FLASH.
    memory: &'static str,
    /// The table of `(bundled model, runner through the group's handle)` it appends.
    table: &'static str,
    /// What the group is for, in the table's doc.
    doc: &'static str,
}

/// The groups: `state_pair`, whose models keep int8 state with non-zero zero points (an
/// SVDF's, an LSTM's hidden state); `patch_pair`, whose models each run their first stage
/// patch by patch (`patches = "auto"` for every model of the group).
const GROUPS: [GroupSpec; 2] = [
    GroupSpec {
        name: "state_pair",
        models: &[
            ("scrambled", "tflm_keyword_scrambled_8bit"),
            ("speech_lstm", "tflm_micro_speech_lstm"),
        ],
        memory: "",
        table: "GROUPED",
        doc: "int8 state with non-zero zero points",
    },
    GroupSpec {
        name: "patch_pair",
        models: &[
            ("person", "tflm_person_detect_int8"),
            ("resnet", "tiny_ic_resnet8_int8"),
        ],
        memory: "patches = \"auto\"\n",
        table: "GROUPED_PATCHES",
        doc: "each runs its first stage patch by patch",
    },
];

/// Plans group `spec` (its models in turn over one scratch arena, weights in FLASH) and
/// appends its `include_model!`, the group's one handle and a runner per model, lent by
/// that handle, to `rust`, with the table `spec.table` of `(bundled model, runner)`.
fn plan_group(
    spec: &GroupSpec,
    corpus: &std::path::Path,
    manifests: &std::path::Path,
    rust: &mut String,
) {
    let group_name = spec.name;
    let mut text =
        format!("# @generated by run-models' build.rs\n[group]\nname = \"{group_name}\"\n\n");
    for (name, stem) in spec.models {
        let _ = write!(
            text,
            "[[model]]\nname = \"{name}\"\nsource = \"{}\"\n\n",
            corpus.join(format!("{stem}.tflite")).display()
        );
    }
    let _ = write!(
        text,
        "[platform]\npreset = \"generic\"\n\n[memory]\nplanner = \"greedy_by_size\"\n{}\
         tensors = [{{ type = \"constant\", attributes = {{ memory = \"FLASH\" }} }}]\n",
        spec.memory
    );
    let manifest = manifests.join(format!("{group_name}.toml"));
    let (path, text) = compile(&manifest, &text, group_name);
    let Ok(AnyPlan::Group(plan)) = read(&text, &path.display().to_string()) else {
        panic!("{} is not a group plan", path.display())
    };
    let group = naming::model_module(group_name);
    let _ = write!(
        rust,
        "planner_macros::include_model!({:?});

/// The one handle to group `{group_name}`'s statics, made ready on first use.
static {upper}_HANDLE: std::sync::OnceLock<std::sync::Mutex<{group}::Group>> = std::sync::OnceLock::new();
",
        path.display().to_string(),
        upper = group.to_ascii_uppercase(),
    );
    let mut table = String::new();
    for ((name, stem), p) in spec.models.iter().zip(&plan.models) {
        let module = naming::model_module(name);
        let method = naming::group_method(name);
        let acquire = format!(
            "        let mut guard = self.handle.get_or_init(|| Mutex::new(super::{group}::Group::take().expect(\"taken once\").init())).lock().unwrap_or_else(|e| e.into_inner());\n        let mut lent = guard.{method}();\n        let m = &mut lent;\n"
        );
        let (body, supported) = runner_body(p, &format!("{group}::{module}"), &acquire);
        runner_module(
            rust,
            &RunnerModule {
                doc: format!(
                    "The runner of model `{name}` of group `{group_name}`, lent by the group's handle."
                ),
                name: format!("{group}_{module}_runner"),
                owner: "group",
                handle: format!("&'static OnceLock<Mutex<super::{group}::Group>>"),
                init: format!("&super::{}_HANDLE", group.to_ascii_uppercase()),
                items: format!("{group}::{module}"),
                plan: group.clone(),
                body,
                supported,
            },
        );
        let _ = writeln!(table, "    (\"{stem}\", &{group}_{module}_runner::RUNNER),");
    }
    let _ = writeln!(
        rust,
        "/// The models of group `{group_name}` ({}), each as `(bundled model, runner through the \
         group's handle)`.\npub static {}: &[(&str, &(dyn Runner + Sync))] = &[\n{table}];",
        spec.doc, spec.table
    );
}
