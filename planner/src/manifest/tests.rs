//! The checks of a single-model manifest, through `Manifest::parse` and the inline graph's
//! import.

use std::path::{Path, PathBuf};

use super::*;
use crate::graph::TensorKind;

/// Parses and reads the inline graph, as `planner-build` does, so that inline-graph
/// errors count too.
fn parse(text: &str) -> Result<Manifest> {
    let m = Manifest::parse(text, Path::new("m.toml"))?;
    crate::import::load(&m)?;
    Ok(m)
}

/// Asserts that `e`'s message says `want`.
#[track_caller]
pub(super) fn says(e: &Error, want: &str) {
    assert!(e.message().contains(want), "{}", e.message());
}

/// The error for the test graph followed by `tail`, which must say `want`.
fn refused(tail: &str, want: &str) -> Error {
    let e = err(&format!("{GRAPH}{tail}"));
    says(&e, want);
    e
}

fn err(text: &str) -> Error {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

const GRAPH: &str = r#"
[model]
name = "m"
tensors = [
  { id = "in", dtype = "i8", shape = [1, 16] },
  { id = "w", dtype = "i8", shape = [16, 16], constant = true },
  { id = "out", dtype = "i8", shape = [1, 16] },
]
ops = [ { opcode = "FULLY_CONNECTED", inputs = ["in", "w"], outputs = ["out"] } ]
"#;

#[test]
fn sizes_parse() {
    assert_eq!(parse_size("512K"), Some(512 * 1024));
    assert_eq!(parse_size("4M"), Some(4 * 1024 * 1024));
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("0x100"), Some(256));
    assert_eq!(parse_size("4KiB"), Some(4096));
    assert_eq!(parse_size("4X"), None);
    assert_eq!(parse_size("K"), None);
    assert_eq!(parse_size("99999999999999999999G"), None);
}

#[test]
fn globs() {
    assert!(glob_match("conv_*", "conv_0/weights"));
    assert!(glob_match("*", ""));
    assert!(glob_match("a?c", "abc"));
    assert!(!glob_match("a?c", "ac"));
    assert!(glob_match("*/out", "conv/3/out"));
    assert!(!glob_match("conv", "conv_0"));
}

#[test]
fn inline_graph_defaults() {
    let m = parse(GRAPH).unwrap();
    let g = crate::import::load(&m).unwrap();
    assert_eq!(g.tensors.len(), 3);
    assert_eq!(g.tensors[1].kind, TensorKind::Constant);
    assert_eq!(g.tensors[1].size, 256);
    assert_eq!(g.inputs[0].name, "in");
    assert_eq!(g.outputs[0].name, "out");
    assert_eq!(m.platform.name, "generic");
    assert_eq!(m.planner, PlannerKind::default());
}

#[test]
fn unknown_key_has_did_you_mean_and_position() {
    let e = refused("\n[memory]\nplannr = \"greedy\"\n", "unknown field `plannr`");
    assert_eq!(e.help_text(), Some("did you mean `planner`?"));
    let (_, line, col) = e.location().unwrap();
    assert_eq!((line, col), (12, 1));
    assert!(e.to_string().contains("m.toml:12:1"), "{e}");
}

#[test]
fn unknown_memory_in_constraint() {
    let e = refused(
        "\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{ name = \"DTMC\" }]\n",
        "\"DTMC\"",
    );
    assert!(e.help_text().unwrap().contains("did you mean `DTCM`?"));
    assert_eq!(e.location().unwrap().1, 14);
}

#[test]
fn a_second_constraint_on_one_memory_is_refused() {
    let e = err(&format!(
        "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [\n  {{ name = \"DTCM\", max_size = 4096 }},\n  {{ name = \"DTCM\", arena_alignment = 32 }},\n]\n"
    ));
    assert_eq!(e.message(), "memory DTCM has two constraints");
    assert_eq!(e.help_text(), Some("merge them into one entry"));
    let (_, line, col) = e.location().unwrap();
    assert_eq!((line, col), (16, 12));
}

#[test]
fn non_power_of_two_alignment() {
    let e = refused(
        "\n[platform]\npreset = \"generic\"\nmin_alignment = 12\n",
        "platform.min_alignment is 12",
    );
    assert_eq!(e.location().unwrap().1, 13);
    refused(
        "\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{ name = \"DTCM\", arena_alignment = 24 }]\n",
        "arena_alignment is 24",
    );
}

#[test]
fn max_size_beyond_memory() {
    let e = refused(
        "\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{ name = \"DTCM\", max_size = \"1M\" }]\n",
        "max_size is 1048576 bytes, but memory DTCM has only 524288",
    );
    assert_eq!(e.location().unwrap(), (PathBuf::from("m.toml"), 14, 44));
}

#[test]
fn scratch_pinned_to_read_only() {
    let e = refused(
        "\n[memory]\ntensors = [{ type = \"scratch\", attributes = { memory = \"FLASH\" } }]\n",
        "pins scratch tensors to FLASH, which is read-only",
    );
    assert_eq!(e.location().unwrap().1, 12);
}

#[test]
fn read_only_destination() {
    refused(
        "\n[memory]\ntensors = [{ type = \"constant\", attributes = { memory = \"SRAM\", constant_destination_memory = \"FLASH\" } }]\n",
        "constant_destination_memory is FLASH, which is read-only",
    );
}

#[test]
fn bad_planner_and_options() {
    let e = refused("\n[memory]\nplanner = \"hill_climbing\"\n", "unknown planner `hill_climbing`");
    assert_eq!(e.location().unwrap().1, 12);
    let e = refused(
        "\n[memory]\nplanner = \"greedy\"\nplanner_options = { iterations = 3 }\n",
        "planner `greedy` takes no options",
    );
    assert_eq!(e.location().unwrap().1, 13);
    refused(
        "\n[memory]\nplanner = \"hill_climb\"\nplanner_options = { iterations = -3 }\n",
        "`iterations` is -3",
    );
}

#[test]
fn bad_sizes_and_types() {
    let e = refused(
        "\n[platform]\nmemories = [{ name = \"RAM\", size = \"12Q\", writable = true }]\n",
        "\"12Q\" is not a byte count",
    );
    assert_eq!(e.location().unwrap().1, 12);
    let e = err(&GRAPH.replace(
        "dtype = \"i8\", shape = [1, 16] }",
        "dtype = \"i88\", shape = [1, 16] }",
    ));
    says(&e, "unknown dtype \"i88\"");
    assert!(e.help_text().unwrap().contains("did you mean `i8`?"));
    let e = err(&GRAPH.replace("inputs = [\"in\", \"w\"]", "inputs = [\"inn\", \"w\"]"));
    says(&e, "names tensor \"inn\"");
    assert_eq!(e.location().unwrap().1, 9);
}

#[test]
fn budget_is_min_of_memory_and_constraint() {
    let m = parse(&format!(
        "{GRAPH}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{{ name = \"DTCM\", max_size = \"128K\", arena_alignment = 32 }}, {{ name = \"SRAM\" }}]\n"
    ))
    .unwrap();
    assert_eq!(m.budget("DTCM"), Some(128 * 1024));
    assert_eq!(m.budget("SRAM"), Some(2 * 1024 * 1024));
    assert_eq!(m.memory_alignment("DTCM"), 32);
    assert_eq!(m.memory_alignment("SRAM"), 16);
    let banks: Vec<&str> = m.scratch_banks().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(banks, ["DTCM", "SRAM"]);
}

#[test]
fn memory_and_slab_names_are_identifiers_given_once() {
    let memories = |a: &str, b: &str| {
        format!(
            "{GRAPH}\n[platform]\nmemories = [\n  {{ name = \"{a}\", writable = true }},\n  {{ name = \"{b}\", writable = true }},\n]\n"
        )
    };
    let e = err(&memories("SRAM", "SRAM"));
    assert_eq!(e.message(), "memory SRAM is defined twice");
    assert_eq!(e.help_text(), Some("give each memory its own name"));
    assert_eq!(e.location().unwrap().1, 14);
    let e = err(&memories("SRAM", "2RAM"));
    assert_eq!(e.message(), "memory name \"2RAM\" is not an identifier");
    assert_eq!(
        e.help_text(),
        Some("use letters, digits and `_`, such as \"DTCM\" or \"SRAM1\"")
    );
    let slabs = |a: &str, b: &str| {
        format!(
            "{GRAPH}\n[memory]\nslabs = [\n  {{ name = \"{a}\", size = 64, memory = \"SRAM\" }},\n  {{ name = \"{b}\", size = 64, memory = \"SRAM\" }},\n]\n"
        )
    };
    let e = err(&slabs("pre", "pre"));
    assert_eq!(e.message(), "slab pre is defined twice");
    assert_eq!(e.help_text(), Some("give each slab its own name"));
    assert_eq!(e.location().unwrap(), (PathBuf::from("m.toml"), 14, 12));
    let e = err(&slabs("pre", "post-1"));
    assert_eq!(
        e.message(),
        "memory.slabs[1].name \"post-1\" is not an identifier"
    );
    assert_eq!(
        e.help_text(),
        Some("use letters, digits and `_`, starting with a letter, such as \"preprocess\"")
    );
}
