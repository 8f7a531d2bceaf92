//! `planner-build` on a group manifest: one group plan file with every model's plan, the
//! group's blobs, one linker fragment over the shared arenas, one C header per model; and
//! nothing written when the group does not plan.

#[path = "support/build.rs"]
mod api;
#[path = "../../planner/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use api::{build, out_dir};
use common::assert_says;
use planner::planfile::group::{AnyPlan, read};

fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/plans/pair.toml")
}

fn out(name: &str) -> PathBuf {
    out_dir("group", name)
}

#[test]
fn a_group_manifest_writes_the_group_plan_and_per_model_headers() {
    let dir = out("ok");
    let outputs = build(&manifest(), &dir).unwrap();
    let mut names: Vec<String> = outputs
        .files
        .keys()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "pair.constant.flash.bin",
            "pair.plan.json",
            "planner_a.h",
            "planner_b.h",
            "planner_c.h",
            "planner_pair.x"
        ]
    );
    let text = std::fs::read_to_string(dir.join("pair.plan.json")).unwrap();
    let AnyPlan::Group(plan) = read(&text, "pair.plan.json").unwrap() else {
        panic!("not a group plan")
    };
    assert_eq!(plan.hash(), outputs.plan_hash);
    let scratch = plan
        .arenas
        .iter()
        .find(|a| a.arena.name.starts_with("scratch."))
        .unwrap();
    // a (32 bytes) and b (64) run in turn; c (32) runs beside b: 64 + 32.
    let bytes: Vec<u64> = scratch.users.iter().map(|u| u.bytes).collect();
    assert_eq!(bytes, [32, 64, 32]);
    assert_eq!(scratch.arena.size, 96, "{scratch:?}");
    let x = std::fs::read_to_string(dir.join("planner_pair.x")).unwrap();
    assert_says(
        &x,
        &[
            "KEEP(*(.bss.planner.pair.scratch.",
            "of group pair should take",
        ],
    );
    assert_eq!(
        x.matches("KEEP(").count(),
        3,
        "scratch, state, weights: {x}"
    );
    let h = std::fs::read_to_string(dir.join("planner_c.h")).unwrap();
    assert!(h.contains("PLANNER_C_"), "{h}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_group_that_does_not_fit_writes_nothing() {
    let dir = out("full");
    let text = std::fs::read_to_string(manifest()).unwrap().replace(
        "planner = \"greedy_by_size\"",
        "planner = \"greedy_by_size\"\nconstraints = [{ name = \"SRAM\", max_size = 64 }]",
    );
    let path = dir.with_extension("toml");
    std::fs::write(&path, text).unwrap();
    let e = build(&path, &dir).unwrap_err();
    assert!(e.to_string().contains("SRAM"), "{e}");
    assert!(!dir.exists(), "files written for a failed plan");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn app_bound_arenas_get_no_section_and_no_assert() {
    let dir = out("app");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/plans/app.toml");
    build(&manifest, &dir).unwrap();
    let text = std::fs::read_to_string(dir.join("app.plan.json")).unwrap();
    let AnyPlan::Model(plan) = read(&text, "app.plan.json").unwrap() else {
        panic!("not a model plan")
    };
    for a in plan.arenas.iter().filter(|a| a.memory == "SRAM") {
        assert!(a.app_bound && a.section.is_none(), "{a:?}");
    }
    assert!(plan.arenas.iter().any(|a| a.name == "persistent.SRAM"));
    let x = std::fs::read_to_string(dir.join("planner_app.x")).unwrap();
    assert!(
        !x.contains(".sram"),
        "a section or assert for an app-bound arena: {x}"
    );
    assert!(
        x.contains("KEEP(*(.rodata.planner.app.constant.flash));"),
        "{x}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_model_named_like_a_model_of_the_group_is_refused_before_it_writes() {
    let dir = out("clash");
    build(&manifest(), &dir).unwrap();
    let header = std::fs::read(dir.join("planner_a.h")).unwrap();
    // A model manifest named `a` would write `planner_a.h` over the group's.
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/plans/app.toml");
    let text = std::fs::read_to_string(app)
        .unwrap()
        .replace("name = \"app\"", "name = \"a\"");
    let path = dir.with_extension("toml");
    std::fs::write(&path, text).unwrap();
    let e = build(&path, &dir).unwrap_err().to_string();
    assert!(e.contains("both write `planner_a.h`"), "{e}");
    assert!(
        e.contains("pair.toml") && e.contains(&path.display().to_string()),
        "{e}"
    );
    assert!(e.contains("another `name`"), "{e}");
    assert_eq!(std::fs::read(dir.join("planner_a.h")).unwrap(), header);
    assert!(
        !dir.join("a.plan.json").exists(),
        "the second manifest wrote its plan"
    );
    // The group compiled again is its own writer.
    build(&manifest(), &dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn svg_true_draws_the_group_beside_each_model() {
    let dir = out("svg");
    planner_build::Builder::new()
        .manifest(manifest())
        .out_dir(&dir)
        .cargo_directives(false)
        .svg(true)
        .try_compile()
        .unwrap();
    let group = std::fs::read_to_string(dir.join("pair.svg")).unwrap();
    assert!(
        group.contains("<title>memory map of group pair (models a, b, c)</title>"),
        "{group}"
    );
    assert_eq!(group.matches("class=\"block\"").count(), 5, "{group}");
    for model in ["a", "b", "c"] {
        let own = std::fs::read_to_string(dir.join(format!("{model}.svg"))).unwrap();
        assert!(
            own.contains(&format!("memory map of model {model}")),
            "{own}"
        );
    }
}
