//! `planner compare`'s table of every combination of techniques (issue 38's one search):
//! twelve rows, the manifest's own marked, each figure the one `planner plan` gives for that
//! combination, and no combination with in-place ops above in place alone.

#[path = "../../planner/tests/common/mod.rs"]
mod common;
#[path = "support/files.rs"]
mod files;
#[path = "support/cli.rs"]
mod support;

use common::assert_says;
use files::model_toml;
use support::{stdout_of, tmp};

/// The rows of the techniques table in `compare`'s output: (marked, technique, scratch).
fn combinations(out: &str) -> Vec<(bool, String, Option<u64>)> {
    let table = out
        .split("every combination of techniques")
        .nth(1)
        .unwrap_or_else(|| panic!("no techniques table in\n{out}"));
    table
        .lines()
        .skip_while(|l| !l.contains("technique"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let marked = l.starts_with('*');
            let cells: Vec<&str> = l[1..]
                .split("  ")
                .filter(|c| !c.trim().is_empty())
                .collect();
            let name = cells[0].trim().to_string();
            (
                marked,
                name,
                cells.get(1).and_then(|c| c.trim().parse().ok()),
            )
        })
        .collect()
}

/// The scratch peak `planner plan` prints for `manifest`.
fn planned_bytes(manifest: &std::path::Path) -> u64 {
    let out = stdout_of(&["plan", manifest.to_str().unwrap()]);
    let line = out
        .lines()
        .find(|l| l.starts_with("SRAM") && l.contains("scratch"))
        .unwrap_or_else(|| panic!("no scratch row in\n{out}"));
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

#[test]
fn every_combination_is_listed_and_the_manifests_is_its_plan() {
    let rest = "[platform]\npreset = \"generic\"\n[memory]\npatches = \"auto\"\n\
                patch_input = \"streamed\"\nin_place = true\n\
                tensors = [{ type = \"constant\", attributes = { memory = \"FLASH\" } }]\n";
    let manifest = tmp(
        "techniques-vww.toml",
        &model_toml("vww", "te_mcunet_vww.tflite", rest),
    );
    let out = stdout_of(&["compare", manifest.to_str().unwrap()]);
    let rows = combinations(&out);
    assert_eq!(rows.len(), 16, "{out}");
    let marked: Vec<_> = rows.iter().filter(|r| r.0).collect();
    assert_eq!(marked.len(), 1, "{out}");
    assert_eq!(marked[0].1, "patches (input streamed), in place", "{out}");
    // The marked figure is the plan's own.
    assert_eq!(marked[0].2, Some(planned_bytes(&manifest)), "{out}");
    let bytes = |name: &str| {
        rows.iter()
            .find(|r| r.1 == name)
            .and_then(|r| r.2)
            .unwrap_or_else(|| panic!("no figure for {name} in\n{out}"))
    };
    // Each technique goes below the classic plan on this network, and adding in-place ops
    // to patches never costs more than in place alone or patches alone.
    let classic = bytes("classic");
    for suffix in ["", ", schedule=memory"] {
        let in_place = bytes(&format!("classic, in place{suffix}"));
        assert!(in_place < classic, "{out}");
        // Row overlap beside in place never costs more than in place alone.
        assert!(
            bytes(&format!("classic, in place, row overlap{suffix}")) <= in_place,
            "{out}"
        );
        for input in ["resident", "streamed"] {
            let both = bytes(&format!("patches (input {input}), in place{suffix}"));
            let alone = bytes(&format!("patches (input {input}){suffix}"));
            assert!(both <= in_place && both <= alone, "{input}{suffix}:\n{out}");
        }
    }
    // docs/cli.md shows this table: its rows are lines compare prints.
    let doc = std::fs::read_to_string(support::root().join("docs/cli.md")).unwrap();
    let shown = doc
        .split("every combination of techniques, planner")
        .nth(1)
        .expect("docs/cli.md shows the techniques table");
    for line in shown.lines().skip(1).take_while(|l| *l != "...") {
        assert!(
            out.lines().any(|o| o.trim_end() == line.trim_end()),
            "docs/cli.md's line {line:?} is not in compare's output:\n{out}"
        );
    }
    // The line under the table names the lowest.
    let lowest = rows.iter().filter_map(|r| r.2).min().unwrap();
    assert_says(&out, &[&format!("is the lowest: {lowest} bytes")]);
}

/// A bare model plans classically: that row is marked, and the line under the table names
/// the lower combination and the settings that choose it.
#[test]
fn a_bare_model_is_marked_classic_and_told_the_lowest() {
    let out = stdout_of(&["compare", "models/tflm_person_detect_int8.tflite"]);
    let rows = combinations(&out);
    assert_eq!(rows.iter().filter(|r| r.0).count(), 1, "{out}");
    assert!(rows.iter().any(|r| r.0 && r.1 == "classic"), "{out}");
    assert_says(
        &out,
        &[
            "The lowest is patches (input streamed) at ",
            "memory.patch_input",
        ],
    );
}

/// When the manifest's combination ties with an earlier row (person detection streamed, with
/// and without in-place ops), the line under the table names the manifest's own.
#[test]
fn a_tie_names_the_manifests_own_combination() {
    let rest = "[platform]\npreset = \"generic\"\n[memory]\npatches = \"auto\"\n\
                patch_input = \"streamed\"\nin_place = true\n";
    let manifest = tmp(
        "techniques-person.toml",
        &model_toml("person", "tflm_person_detect_int8.tflite", rest),
    );
    let out = stdout_of(&["compare", manifest.to_str().unwrap()]);
    let rows = combinations(&out);
    let bytes = |name: &str| rows.iter().find(|r| r.1 == name).and_then(|r| r.2);
    let ours = bytes("patches (input streamed), in place");
    assert_eq!(ours, bytes("patches (input streamed)"), "{out}");
    assert_says(
        &out,
        &[&format!(
            "is the lowest: {} bytes of scratch (patches (input streamed), in place).",
            ours.unwrap()
        )],
    );
}
