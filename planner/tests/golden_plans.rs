//! Plans of every bundled model and example manifest, with every planner, are byte-for-byte
//! what they were when the digests were recorded: refactors of the pipeline must not move a
//! tensor, change a figure or a reason.
//!
//! The digests (FNV-1a 64 of the JSON report, the table and `explain`) are in
//! `tests/data/plan_digests.txt`. When a change is meant to alter plans or reports, rewrite
//! them with `UPDATE_GOLDEN=1 cargo test -p planner --test golden_plans` and say why in the
//! commit.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use planner::manifest::{self, Manifest};
use planner::pack::PlannerKind;
use planner::planfile::fnv1a64;
use planner::report;

use common::{bundled_models, root};

fn inputs() -> Vec<(String, Manifest)> {
    let root = root();
    let mut out = Vec::new();
    for m in bundled_models(&root) {
        let name = format!("models/{}", m.file_name().unwrap().to_string_lossy());
        out.push((name, Manifest::for_model_file(&m)));
    }
    for rel in [
        "examples/kws/kws.toml",
        "examples/kws/optimized.toml",
        "examples/inline/kws.toml",
        "examples/host/hello_world.toml",
    ] {
        out.push((rel.to_string(), manifest::load(&root.join(rel)).unwrap()));
    }
    out
}

fn digests() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, m) in inputs() {
        let graph = planner::import::load(&m).unwrap();
        for planner in ["manifest", "greedy", "greedy_by_size", "hill_climb"] {
            let mut m = m.clone();
            if planner != "manifest" {
                m.planner = PlannerKind::from_name(planner, &BTreeMap::new()).unwrap();
            }
            let p = planner::plan_graph(&m, &graph).unwrap();
            let text = format!(
                "{}\n{}\n{}",
                report::json(&p),
                report::table(&p, &p.graph),
                report::explain(&p, &p.graph, None)
            );
            out.insert(
                format!("{name} {planner}"),
                format!("{:016x}", fnv1a64(text.as_bytes())),
            );
        }
    }
    group_digests(&mut out);
    out
}

/// The group manifests: the golden groups of bundled models and the UI tests' group.
fn groups() -> Vec<String> {
    let root = root();
    let mut out: Vec<String> = std::fs::read_dir(root.join("planner/tests/data/groups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            format!(
                "planner/tests/data/groups/{}",
                p.file_name().unwrap().to_string_lossy()
            )
        })
        .collect();
    out.push("tests/ui/plans/pair.toml".to_string());
    out.sort();
    out
}

/// A group's JSON report, table, `explain`, CSV and verification, as one digest per group.
fn group_digests(out: &mut BTreeMap<String, String>) {
    for rel in groups() {
        let group = manifest::load_group(&root().join(&rel)).unwrap();
        let p = planner::plan_group(&group).unwrap();
        let verified = match planner::verify::verify_group(&group, &p) {
            Ok(()) => "verified".to_string(),
            Err(v) => format!("{v:?}"),
        };
        let text = format!(
            "{}\n{}\n{}\n{}\n{verified}",
            report::group_json(&p),
            report::group_table(&p),
            report::group_explain(&p, None),
            report::group_csv(&p),
        );
        out.insert(
            format!("{rel} group"),
            format!("{:016x}", fnv1a64(text.as_bytes())),
        );
    }
}

#[test]
fn plans_are_byte_identical_to_the_recorded_ones() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/plan_digests.txt");
    let now = digests();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let text: String = now.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap();
    let stored: BTreeMap<String, String> = stored
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let changed: Vec<&String> = now
        .iter()
        .filter(|(k, v)| stored.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        changed.is_empty() && stored.len() == now.len(),
        "plans changed for {changed:?} ({} stored, {} now); if that is intended, rerun with UPDATE_GOLDEN=1",
        stored.len(),
        now.len()
    );
}
