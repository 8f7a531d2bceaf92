//! Rebuild tracking, end to end: a scratch firmware-like crate (build.rs calling
//! `planner_build::compile`, `include_model!` in main.rs) is run with cargo; changing the
//! manifest re-plans and the program sees the new plan; editing the plan file alone
//! recompiles the crate (the expansion's `include_bytes!` of it) and is refused (its hash); an unchanged tree rebuilds
//! nothing; a broken manifest fails the build with the rendered error and no panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MANIFEST: &str = r#"
[model]
name = "probe"
tensors = [
  { id = "x", dtype = "i8", shape = [1, WIDTH] },
  { id = "w", dtype = "i8", shape = [WIDTH, WIDTH], constant = true },
  { id = "h", dtype = "i8", shape = [1, WIDTH] },
  { id = "state", dtype = "i8", shape = [4], variable = true },
  { id = "y", dtype = "i8", shape = [1, WIDTH] },
]
ops = [
  { opcode = "FULLY_CONNECTED", inputs = ["x", "w"], outputs = ["h"] },
  { opcode = "ADD", inputs = ["h", "state"], outputs = ["y"] },
]
inputs = ["x"]
outputs = ["y"]

[platform]
preset = "generic"

[memory]
planner = "greedy_by_size"
"#;

const MAIN: &str = r#"
planner_macros::include_model!("probe");

fn main() {
    let mut model = probe::Model::take().unwrap().init();
    assert!(model.tensor_state().iter().all(|&b| b == 0), "persistent arena zeroed");
    model.input_x_mut().fill(3);
    let op = model.op0();
    op.output0.copy_from_slice(op.input0);
    println!(
        "hash={:016x} elements={} arenas={}",
        probe::PLAN_HASH,
        probe::tensors::X.elements,
        probe::ARENAS.join(",")
    );
}
"#;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn write_crate(dir: &Path, width: u32) {
    let ws = workspace().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let dep = |name: &str| ws.join(name).display().to_string();
    let cargo = format!(
        "[package]\nname = \"rebuild-probe\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n[dependencies]\nplanner = {{ path = {:?}, default-features = false }}\nplanner-macros = {{ path = {:?} }}\n\n[build-dependencies]\nplanner-build = {{ path = {:?} }}\n",
        dep("planner"),
        dep("planner-macros"),
        dep("planner-build"),
    );
    std::fs::write(dir.join("Cargo.toml"), cargo).unwrap();
    // Same dependency versions as the workspace, so the build works offline.
    std::fs::copy(ws.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() {\n    planner_build::compile(\"model.toml\");\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    set_width(dir, width);
}

fn set_width(dir: &Path, width: u32) {
    let text = MANIFEST.replace("WIDTH", &width.to_string());
    std::fs::write(dir.join("model.toml"), text).unwrap();
}

fn cargo_run(dir: &Path) -> Output {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rebuild-probe-target");
    Command::new(env!("CARGO"))
        .args(["run", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("OUT_DIR")
        .env_remove("PLANNER_PLAN_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap()
}

fn run_ok(dir: &Path) -> String {
    let out = cargo_run(dir);
    assert!(
        out.status.success(),
        "cargo run failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn plan_file() -> PathBuf {
    // The probe's OUT_DIR: target/debug/build/rebuild-probe-<hash>/out/planner.
    let build = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rebuild-probe-target/debug/build");
    let mut found: Vec<PathBuf> = std::fs::read_dir(build)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path().join("out/planner/probe.plan.json")))
        .filter(|p| p.is_file())
        .collect();
    found.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    found.pop().expect("no plan file written")
}

#[test]
fn manifest_and_plan_changes_rebuild_and_errors_fail_cleanly() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rebuild-probe");
    let _ = std::fs::remove_dir_all(&dir);
    write_crate(&dir, 8);

    let first = run_ok(&dir);
    assert!(first.contains("elements=8"), "{first}");
    assert!(
        first.contains("arenas=scratch.SRAM,persistent.SRAM,constant.FLASH"),
        "{first}"
    );

    // Nothing changed: same plan, and the plan file is not rewritten.
    let plan = plan_file();
    let stamp = std::fs::metadata(&plan).unwrap().modified().unwrap();
    assert_eq!(run_ok(&dir), first);
    assert_eq!(std::fs::metadata(&plan).unwrap().modified().unwrap(), stamp);

    // A wider model: the manifest change re-plans, the program sees the new plan.
    set_width(&dir, 32);
    let second = run_ok(&dir);
    assert!(second.contains("elements=32"), "{second}");
    let hash = |s: &str| s.split_whitespace().next().unwrap().to_string();
    assert_ne!(hash(&first), hash(&second));

    // Editing the plan file alone recompiles (rustc tracks it through include_bytes!), and
    // the macro refuses the edit: the plan's content no longer has its stated hash.
    let plan = plan_file();
    let text = std::fs::read_to_string(&plan).unwrap();
    let edited = text.replacen("\"offset\": 0,", "\"offset\": 1048576,", 1);
    assert_ne!(edited, text);
    std::fs::write(&plan, edited).unwrap();
    let out = cargo_run(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("was edited after planner-build wrote it")
            && stderr.contains("cargo clean -p"),
        "{stderr}"
    );

    // A broken manifest: the rendered error, no panic, and the build fails.
    std::fs::write(
        dir.join("model.toml"),
        MANIFEST.replace("WIDTH", "8").replace(
            "planner = \"greedy_by_size\"",
            "planner = \"greedy_by_sise\"",
        ),
    )
    .unwrap();
    let out = cargo_run(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("greedy_by_sise"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
