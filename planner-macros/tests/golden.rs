//! The plan files the UI tests include are the planner's own output for a small fixture
//! model; this test keeps them so. `UPDATE_GOLDEN=1` rewrites them.
//!
//! The other plans in `tests/ui/plans` are hand edits of those (an overlap, a misaligned
//! slot, ...) that must reach the `const` check, so each must state the hash of its own
//! content, or `include_model!` refuses it as edited before the check runs. After editing
//! one, `UPDATE_GOLDEN=1 cargo test -p planner-macros --test golden` rewrites its
//! `plan_hash` line (and only that line). `edited.plan.json` keeps a stale hash on purpose:
//! it is the UI case for the hash check itself.

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

/// Plans whose stated hash must stay stale: the UI cases of the hash check.
const STALE_ON_PURPOSE: &[&str] = &["edited.plan.json"];

#[test]
fn hand_edited_plans_state_their_content_hash() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut names: Vec<String> = std::fs::read_dir(plans_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".plan.json"))
        .collect();
    names.sort();
    let mut checked = 0;
    for name in names {
        let path = plans_dir().join(&name);
        let text = std::fs::read_to_string(&path).unwrap();
        // Plans that do not parse (a wrong format version) test the parser, not the hash.
        let Ok(file) = PlanFile::parse(&text, &name) else {
            continue;
        };
        let content = format!("fnv1a64:{:016x}", file.hash());
        if STALE_ON_PURPOSE.contains(&name.as_str()) {
            assert_ne!(file.plan_hash, content, "{name} must keep a stale hash");
            continue;
        }
        checked += 1;
        if file.plan_hash == content {
            continue;
        }
        assert!(
            update,
            "{name} states plan_hash {} but its content hashes to {content}; run UPDATE_GOLDEN=1 cargo test -p planner-macros --test golden",
            file.plan_hash
        );
        let old = format!("\"plan_hash\": \"{}\"", file.plan_hash);
        assert_eq!(text.matches(&old).count(), 1, "{name}: one plan_hash line");
        let new = format!("\"plan_hash\": \"{content}\"");
        std::fs::write(&path, text.replace(&old, &new)).unwrap();
    }
    assert!(checked >= 5, "only {checked} plans checked");
}
