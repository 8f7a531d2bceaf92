//! Names from the manifest or the model cannot change the meaning of what `planner-build`
//! writes, and names that would clash in the generated code are refused before planning:
//! the reproducers of the third outside audit (`planner/tests/data/repro/turn3/`) and
//! random names through the C header, compiled with `cc` and compared macro by macro with
//! the plan (`support/header_check.rs`, which the `generated_names` fuzz target shares).

#[path = "support/header_check.rs"]
mod header_check;

#[path = "support/build.rs"]
mod api;

#[path = "../../planner-macros/src/props/toml_text.rs"]
mod toml_text;

use std::path::{Path, PathBuf};
use std::process::Command;

use api::{build, out_dir};
use planner::planfile::PlanFile;
use toml_text::toml_string;

fn turn3(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../planner/tests/data/repro/turn3")
        .join(file)
}

fn out(name: &str) -> PathBuf {
    out_dir("names", name)
}

fn plan_file(dir: &Path, model: &str) -> PlanFile {
    let text = std::fs::read_to_string(dir.join(format!("{model}.plan.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The header of `model` in `dir` compiles cleanly and defines exactly the plan's macros.
#[track_caller]
fn header_states_the_plan(dir: &Path, model: &str) -> String {
    let header = std::fs::read_to_string(dir.join(format!("planner_{model}.h"))).unwrap();
    if let Err(e) = header_check::check(&header, &plan_file(dir, model)) {
        panic!("{e}");
    }
    header
}

#[test]
fn a_tensor_name_cannot_splice_out_of_its_comment() {
    let dir = out("splice");
    build(&turn3("header_splice.toml"), &dir).unwrap();
    let header = header_states_the_plan(&dir, "hdr");
    assert!(
        header.contains("/* tensor x*%5C%0A/%0A#ifdef PLANNER_HDR_T_OUT_OFFSET%0A"),
        "{header}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tflite_tensor_name_cannot_splice_out_of_its_comment() {
    let dir = out("splice-tflite");
    build(&turn3("header_splice_tflite.toml"), &dir).unwrap();
    header_states_the_plan(&dir, "hs");
    // The audit's C program, compiled against the header and run: the plan's offset.
    let exe = dir.join("check");
    let status = Command::new("cc")
        .args(["-Wall", "-Wextra", "-Werror", "-std=c11", "-I"])
        .arg(&dir)
        .arg(turn3("header_splice_check.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    let run = Command::new(&exe).output().unwrap();
    let y = plan_file(&dir, "hs")
        .tensors
        .iter()
        .find(|t| t.name == "y")
        .map(|t| t.offset)
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        format!("C: tensor y at offset {y} (size 4) of a 20-byte region\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A model whose tensors are named `names`, in a chain of RELU ops, with a quantised input
/// (so the header has a scale and a zero point too).
fn chain(names: &[String]) -> String {
    let mut tensors = Vec::new();
    for (k, n) in names.iter().enumerate() {
        let q = if k == 0 {
            ", quantization = { scale = [0.5], zero_point = [-3] }"
        } else {
            ""
        };
        tensors.push(format!(
            "  {{ id = \"t{k}\", name = {}, dtype = \"i8\", shape = [{}]{q} }},",
            toml_string(n),
            16 * (k + 1)
        ));
    }
    let ops: Vec<String> = (1..names.len())
        .map(|k| {
            format!(
                "  {{ opcode = \"RELU\", inputs = [\"t{}\"], outputs = [\"t{k}\"] }},",
                k - 1
            )
        })
        .collect();
    format!(
        "[model]\nname = \"names\"\ntensors = [\n{}\n]\nops = [\n{}\n]\n",
        tensors.join("\n"),
        ops.join("\n")
    )
}

/// Pieces of names: characters that matter to C, to the preprocessor and to linker
/// scripts, and some that are merely unusual.
const PIECES: [&str; 18] = [
    "*/",
    "/*",
    "*\\\n/",
    "\\",
    "\n",
    "\r\n",
    "??/",
    "??=",
    "//",
    "\"",
    "#define PLANNER_NAMES_T_T1_OFFSET 4096u",
    "#undef PLANNER_NAMES_H",
    "%",
    "é✓",
    "\t",
    "a",
    "Conv/BiasAdd:0",
    "*",
];

/// xorshift64*: a fixed sequence, so every run checks the same names.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Random names (fixed seed): 2-4 tensors, each 1-4 pieces.
fn random_names(state: &mut u64) -> Vec<String> {
    let n = 2 + (next(state) % 3) as usize;
    (0..n)
        .map(|_| {
            let k = 1 + next(state) % 4;
            (0..k)
                .map(|_| PIECES[(next(state) % PIECES.len() as u64) as usize])
                .collect()
        })
        .collect()
}

#[test]
fn random_names_leave_the_header_exactly_the_plan() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for case in 0..48 {
        let names = random_names(&mut state);
        let dir = out(&format!("random-{case}"));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("names.toml");
        std::fs::write(&manifest, chain(&names)).unwrap();
        let outputs = match build(&manifest, &dir.join("out")) {
            Ok(o) => o,
            Err(e) => panic!("{e}\n{}", chain(&names)),
        };
        let header = std::fs::read_to_string(outputs.dir.join("planner_names.h")).unwrap();
        let plan = plan_file(&outputs.dir, "names");
        if let Err(e) = header_check::check(&header, &plan) {
            panic!("names {names:?}: {e}");
        }
        let fragment = std::fs::read_to_string(outputs.dir.join("planner_names.x")).unwrap();
        assert!(!fragment.contains('\\'), "{fragment}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_check_sees_a_redefined_macro() {
    // Not vacuous: the header before the fix (a tensor name spliced out of its comment)
    // fails the check.
    let dir = out("vacuous");
    build(&turn3("header_splice.toml"), &dir).unwrap();
    let plan = plan_file(&dir, "hdr");
    let header = std::fs::read_to_string(dir.join("planner_hdr.h")).unwrap();
    let spliced = header.replace(
        "/* tensor x*%5C%0A/%0A#ifdef PLANNER_HDR_T_OUT_OFFSET%0A#undef PLANNER_HDR_T_OUT_OFFSET%0A#define PLANNER_HDR_T_OUT_OFFSET 4096u%0A#endif%0A/%2A",
        "/* tensor x*\\\n/\n#ifdef PLANNER_HDR_T_OUT_OFFSET\n#undef PLANNER_HDR_T_OUT_OFFSET\n#define PLANNER_HDR_T_OUT_OFFSET 4096u\n#endif\n/*",
    );
    assert_ne!(spliced, header, "{header}");
    // After the include guard's end, so the redefinition is the last word.
    let spliced = format!(
        "{spliced}\n#undef PLANNER_HDR_T_OUT_OFFSET\n#define PLANNER_HDR_T_OUT_OFFSET 4096u\n"
    );
    let e = header_check::check(&spliced, &plan).unwrap_err();
    assert!(e.contains("PLANNER_HDR_T_OUT_OFFSET is 4096u"), "{e}");
    let extra = format!("{header}\n#define PLANNER_HDR_EXTRA 1\n");
    let e = header_check::check(&extra, &plan).unwrap_err();
    assert!(
        e.contains("PLANNER_HDR_EXTRA = 1 is not in the plan"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The error `planner-build` gives for the reproducer `file`, rendered.
fn refused(file: &str) -> (String, String) {
    let dir = out(file);
    let e = build(&turn3(file), &dir).unwrap_err();
    assert!(!dir.exists(), "{file}: something was written");
    (e.message().to_string(), e.to_string())
}

/// Group reproducers refused before planning: the file, its message, and what else the
/// rendered error says (the line at fault, the fix).
#[test]
fn clashing_sets_and_methods_are_refused() {
    for (file, message, also) in [
        (
            "group_dup_concurrent_set.toml",
            "group.concurrent[1] lists the same models as group.concurrent[0] (a, b)",
            &[
                "group_dup_concurrent_set.toml:3:",
                "remove group.concurrent[1]",
            ][..],
        ),
        (
            "group_set_method_clash.toml",
            "model a_and_b (model[2], line 16) and group.concurrent[0] [a, b] (line 3) both make the method of the group handle `a_and_b` in the generated code",
            &["rename model a_and_b"],
        ),
        (
            "group_take_model_clash.toml",
            "model take (model[0], line 5) and model take_model (model[1], line 10) both make the method of the group handle `take_model` in the generated code",
            &[
                "group_take_model_clash.toml:10:",
                "rename model take_model or model take",
            ],
        ),
    ] {
        let (m, full) = refused(file);
        assert_eq!(m, message, "{file}");
        for s in also {
            assert!(full.contains(s), "{file}: {full}");
        }
    }
}

#[test]
fn models_that_make_one_module_are_refused() {
    for (file, first, second, module) in [
        ("group_module_clash_case.toml", "A", "a", "a"),
        ("group_module_clash_underscore.toml", "_x", "x", "x"),
        (
            "group_module_clash_long.toml",
            "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLa",
            "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLb",
            "llllllllllllllllllllllllllllllllllllllllllllllll",
        ),
    ] {
        let (m, full) = refused(file);
        assert_eq!(
            m,
            format!(
                "model {first} (model[0], line 5) and model {second} (model[1], line 10) both make the module `{module}` in the generated code"
            ),
            "{file}"
        );
        assert!(full.contains(&format!("{file}:10:")), "{full}");
        assert!(
            full.contains(&format!("rename model {second} or model {first}")),
            "{full}"
        );
    }
}

#[test]
fn non_finite_softmax_beta_is_refused_at_import() {
    for (file, value) in [
        ("softmax_beta_nan.toml", "NaN"),
        ("softmax_beta_inf.toml", "inf"),
    ] {
        let (m, full) = refused(file);
        assert!(
            m.ends_with(&format!(
                "op 0 (SOFTMAX) has SoftmaxOptions.beta = {value}, which is not a finite number"
            )),
            "{m}"
        );
        assert!(
            full.contains("set beta to a finite value (the converter writes 1.0)"),
            "{full}"
        );
    }
}

#[test]
fn a_path_with_a_comment_closer_stays_in_the_comments() {
    // A folder named `x*`: the manifest's path holds `*/`, and every output names it.
    let dir = out("path");
    let folder = dir.join("x*").join("??");
    std::fs::create_dir_all(&folder).unwrap();
    let manifest = folder.join("names.toml");
    let text = chain(&["in".to_string(), "out".to_string()]);
    std::fs::write(&manifest, text + "[platform]\npreset = \"mps3-an547\"\n").unwrap();
    let outputs = planner_build::Builder::new()
        .manifest(&manifest)
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .write_memory_x("FLASH", "SRAM")
        .try_compile();
    let outputs = outputs.unwrap_or_else(|e| panic!("{e}"));
    let header = std::fs::read_to_string(outputs.dir.join("planner_names.h")).unwrap();
    assert!(header.contains("x*%2F?%3F/names.toml"), "{header}");
    if let Err(e) = header_check::check(&header, &plan_file(&outputs.dir, "names")) {
        panic!("{e}");
    }
    for file in ["planner_names.x", "memory.x"] {
        let text = std::fs::read_to_string(outputs.dir.join(file)).unwrap();
        let first = text.lines().next().unwrap();
        assert_eq!(
            first.matches("*/").count(),
            first.ends_with("*/") as usize,
            "{first}"
        );
        assert!(first.contains("x*%2F?%3F/names.toml"), "{first}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_region_name_that_is_not_a_name_is_refused() {
    let dir = out("region");
    let e = planner_build::Builder::new()
        .manifest(turn3("header_splice.toml"))
        .out_dir(&dir)
        .cargo_directives(false)
        .region("SRAM", "RAM } > FLASH /*")
        .try_compile()
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Builder::region maps memory \"SRAM\" to region \"RAM } > FLASH /*\", which is not a linker region name; use letters, digits and `_`, starting with a letter or `_`, as memory.x names the region"
    );
    assert!(!dir.exists());
}

#[test]
fn non_finite_softmax_beta_is_refused_by_the_tflm_export() {
    // Was "reads back differently after export; please report it" for NaN.
    for (file, value) in [
        ("softmax_beta_nan.toml", "NaN"),
        ("softmax_beta_inf.toml", "inf"),
    ] {
        let manifest = planner::manifest::load(&turn3(file)).unwrap();
        let model = turn3(&file.replace(".toml", ".tflite"));
        let bytes = std::fs::read(&model).unwrap();
        let e = match planner::export::tflm::export(&bytes, &manifest, &[], false) {
            Ok(_) => panic!("{file}: exported"),
            Err(e) => e,
        };
        assert!(
            e.message().ends_with(&format!(
                "SoftmaxOptions.beta = {value}, which is not a finite number"
            )),
            "{e}"
        );
    }
}
