//! Every bundled real model goes through the whole chain: a scratch crate's build.rs plans
//! each one (plus the example kws manifest, with a staged constant arena and a DTCM budget),
//! `include_model!` expands each, rustc's `const` plan check passes, and the program takes,
//! initialises and reads every model.

#[path = "../../planner/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::Command;

fn workspace() -> PathBuf {
    common::root().canonicalize().unwrap()
}

#[test]
fn every_bundled_model_expands_checks_and_runs() {
    let ws = workspace();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corpus-probe");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let models = common::bundled_models(&ws);
    assert!(models.len() >= 12, "models/ has {} models", models.len());

    let mut names = Vec::new();
    let mut build = String::from("fn main() {\n");
    for m in &models {
        let name = m.file_stem().unwrap().to_str().unwrap().to_string();
        let manifest = format!(
            "[model]\nname = \"{name}\"\nsource = {:?}\n\n[platform]\npreset = \"generic\"\n\n[memory]\nplanner = \"greedy_by_size\"\n",
            m.display().to_string()
        );
        std::fs::write(dir.join(format!("{name}.toml")), manifest).unwrap();
        build.push_str(&format!("    planner_build::compile(\"{name}.toml\");\n"));
        names.push(name);
    }
    let kws = ws.join("examples/kws/kws.toml");
    build.push_str(&format!(
        "    planner_build::compile({:?});\n}}\n",
        kws.display().to_string()
    ));
    names.push("kws".to_string());
    std::fs::write(dir.join("build.rs"), build).unwrap();

    let mut main = String::new();
    for n in &names {
        main.push_str(&format!("planner_macros::include_model!(\"{n}\");\n"));
    }
    main.push_str("\nfn main() {\n");
    for n in &names {
        main.push_str(&format!(
            "    {{\n        let m = {n}::Model::take().unwrap().init();\n        let sizes: Vec<u64> = {n}::PLAN.arenas.iter().map(|a| a.size).collect();\n        println!(\"{{}} tensors={{}} ops={{}} arenas={{:?}} ptrs={{}}\", {n}::MODEL, {n}::PLAN.slots.len(), {n}::OPCODES.len(), sizes, {{ let mut m = m; m.arena_ptrs().len() }});\n    }}\n"
        ));
    }
    main.push_str("}\n");
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    let dep = |name: &str| ws.join(name).display().to_string();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"corpus-probe\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[workspace]\n\n[dependencies]\nplanner = {{ path = {:?}, default-features = false }}\nplanner-macros = {{ path = {:?} }}\n\n[build-dependencies]\nplanner-build = {{ path = {:?} }}\n",
            dep("planner"),
            dep("planner-macros"),
            dep("planner-build")
        ),
    )
    .unwrap();
    std::fs::copy(ws.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let out = Command::new(env!("CARGO"))
        .args(["run", "--offline", "--quiet"])
        .current_dir(&dir)
        .env(
            "CARGO_TARGET_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corpus-probe-target"),
        )
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("OUT_DIR")
        .env_remove("PLANNER_PLAN_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "corpus build failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in &names {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("no line for {n} in\n{stdout}"));
        assert!(!line.contains("tensors=0 "), "{line}");
    }
    // The kws manifest stages its classifier weights into DTCM: its own arena.
    let kws = stdout.lines().find(|l| l.starts_with("kws ")).unwrap();
    assert!(kws.contains("ptrs=4"), "{kws}");
}
