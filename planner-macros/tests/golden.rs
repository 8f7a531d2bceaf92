//! The plan files the UI tests include are the planner's own output for a small fixture
//! model; this test keeps them so. `UPDATE_GOLDEN=1` rewrites them.

use std::path::PathBuf;

use planner::planfile::{PlanFile, fixture};

fn plans_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/plans")
}

#[test]
fn tiny_plan_and_blob_match_the_planner() {
    check(fixture::tiny());
}

#[test]
fn stateful_plan_and_blob_match_the_planner() {
    check(fixture::stateful());
}

fn check(
    (graph, plan, layout): (
        planner::graph::Graph,
        planner::plan::MemoryPlan,
        planner::planfile::Layout,
    ),
) {
    let file = PlanFile::from_plan(&graph, &plan, &layout).unwrap();
    let blobs = file.blobs(&graph).unwrap();
    let name = planner::planfile::naming::plan_file(&file.model);
    let mut outputs = vec![(name, file.to_bytes())];
    for (a, bytes) in &blobs.blobs {
        let name = file.arenas[*a].blob.as_ref().unwrap().file.clone();
        outputs.push((name, bytes.clone()));
    }
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (name, bytes) in outputs {
        let path = plans_dir().join(&name);
        if update {
            std::fs::write(&path, &bytes).unwrap();
            continue;
        }
        let on_disk = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run with UPDATE_GOLDEN=1", path.display()));
        assert!(
            on_disk == bytes,
            "{} differs from the planner's output; run with UPDATE_GOLDEN=1 if the change is intended",
            path.display()
        );
    }
}
