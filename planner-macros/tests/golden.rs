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

use planner::planfile::group::{AnyPlan, BuildGroupPlanFile, GroupPlanFile, read};
use planner::planfile::{BuildPlanFile, Layout, PlanFile, fixture, naming};

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

/// The group the group UI cases include: `tests/ui/plans/pair.toml`, planned.
#[test]
fn pair_group_plan_and_blob_match_the_planner() {
    let manifest = plans_dir().join("pair.toml");
    let group = planner::manifest::load_group(&manifest).unwrap();
    let planned = planner::plan_group(&group).unwrap();
    let layouts: Vec<Layout> = group.models.iter().map(Layout::of).collect();
    let (file, blobs) = GroupPlanFile::from_group(&planned, &layouts).unwrap();
    let mut outputs = vec![(naming::plan_file(&file.group), file.to_bytes())];
    for (a, bytes) in blobs.blobs {
        let name = file.arenas[a].arena.blob.as_ref().unwrap().file.clone();
        outputs.push((name, bytes));
    }
    compare(outputs);
}

/// The model whose SRAM arenas the application binds: `tests/ui/plans/app.toml`, planned.
#[test]
fn app_bound_plan_and_blob_match_the_planner() {
    let manifest = planner::manifest::load(&plans_dir().join("app.toml")).unwrap();
    let planned = planner::plan(&manifest).unwrap();
    check((planned.graph, planned.plan, Layout::of(&manifest)));
}

/// The model planned for the optimized kernel set: `tests/ui/plans/prepared.toml`, planned.
#[test]
fn prepared_plan_and_blob_match_the_planner() {
    let manifest = planner::manifest::load(&plans_dir().join("prepared.toml")).unwrap();
    let planned = planner::plan(&manifest).unwrap();
    check((planned.graph, planned.plan, Layout::of(&manifest)));
}

/// The model with a WHILE loop: `tests/ui/plans/looped.toml`, planned.
#[test]
fn looped_plan_and_blob_match_the_planner() {
    let manifest = planner::manifest::load(&plans_dir().join("looped.toml")).unwrap();
    let planned = planner::plan(&manifest).unwrap();
    assert_eq!(planned.graph.control.len(), 1);
    check((planned.graph, planned.plan, Layout::of(&manifest)));
}

/// The model with row overlap: `tests/ui/plans/rows.toml`, planned.
#[test]
fn rows_plan_and_blob_match_the_planner() {
    let manifest = planner::manifest::load(&plans_dir().join("rows.toml")).unwrap();
    let planned = planner::plan(&manifest).unwrap();
    assert!(planned.graph.in_place.iter().any(|p| p.rows));
    check((planned.graph, planned.plan, Layout::of(&manifest)));
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
    compare(outputs);
}

/// Each output equals the file of that name in the plans directory (rewritten with
/// `UPDATE_GOLDEN=1`).
fn compare(outputs: Vec<(String, Vec<u8>)>) {
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
        let file = match read(&text, &name) {
            Ok(AnyPlan::Model(file)) => file,
            Ok(AnyPlan::Group(group)) => {
                checked += 1;
                rehash_group(&path, group, update);
                continue;
            }
            Err(_) => continue,
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

/// A hand-edited group plan must state its models' and its own content hashes; with
/// `UPDATE_GOLDEN=1` they are rewritten (the file is written back in the planner's format).
fn rehash_group(path: &std::path::Path, mut group: GroupPlanFile, update: bool) {
    let stale = |stated: &str, content: u64| stated != format!("fnv1a64:{content:016x}");
    let mut any = false;
    for m in &mut group.models {
        if stale(&m.plan_hash, m.hash()) {
            any = true;
            m.plan_hash = format!("fnv1a64:{:016x}", m.hash());
        }
    }
    if stale(&group.plan_hash, group.hash()) {
        any = true;
        group.plan_hash = format!("fnv1a64:{:016x}", group.hash());
    }
    if !any {
        return;
    }
    assert!(
        update,
        "{} states stale plan hashes; run UPDATE_GOLDEN=1 cargo test -p planner-macros --test golden",
        path.display()
    );
    std::fs::write(path, group.to_bytes()).unwrap();
}
