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

fn err(text: &str) -> Error {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// An inline model's table: `header` (`[model]` or `[[model]]`) named `name`, with i8
/// tensors `in` and `out` of shape `[1, len]` and one op `opcode` from `in` to `out`; a
/// FULLY_CONNECTED op also reads a constant `w` of shape `[len, len]`.
pub(crate) fn inline_model(header: &str, name: &str, opcode: &str, len: u32) -> String {
    let tensor = |id: &str, shape: String, more: &str| {
        format!("  {{ id = \"{id}\", dtype = \"i8\", shape = {shape}{more} }},\n")
    };
    let row = format!("[1, {len}]");
    let (w, inputs) = match opcode {
        "FULLY_CONNECTED" => (
            tensor("w", format!("[{len}, {len}]"), ", constant = true"),
            "\"in\", \"w\"",
        ),
        _ => (String::new(), "\"in\""),
    };
    format!(
        "{header}\nname = \"{name}\"\ntensors = [\n{}{w}{}]\nops = [ {{ opcode = \"{opcode}\", inputs = [{inputs}], outputs = [\"out\"] }} ]\n",
        tensor("in", row.clone(), ""),
        tensor("out", row, ""),
    )
}

/// The test graph: `in` through a fully connected layer to `out`, lines 2 to 9.
fn graph() -> String {
    format!("\n{}", inline_model("[model]", "m", "FULLY_CONNECTED", 16))
}

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
    let m = parse(&graph()).unwrap();
    let g = crate::import::load(&m).unwrap();
    assert_eq!(g.tensors.len(), 3);
    assert_eq!(g.tensors[1].kind, TensorKind::Constant);
    assert_eq!(g.tensors[1].size, 256);
    assert_eq!(g.inputs[0].name, "in");
    assert_eq!(g.outputs[0].name, "out");
    assert_eq!(m.platform.name, "generic");
    assert_eq!(m.planner, PlannerKind::default());
}

/// One manifest the checks refuse: its text, what the error says, what its help says
/// (`None`: no help checked) and the line and column it points at.
type Refusal = (String, &'static str, Option<&'static str>, (usize, usize));

/// The manifests the checks refuse, each the test graph changed or followed by more lines.
fn refusals() -> Vec<Refusal> {
    let g = graph();
    let an547 = format!("{g}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = ");
    let memories = |a: &str, b: &str| {
        format!(
            "{g}\n[platform]\nmemories = [\n  {{ name = \"{a}\", writable = true }},\n  {{ name = \"{b}\", writable = true }},\n]\n"
        )
    };
    let slabs = |a: &str, b: &str| {
        format!(
            "{g}\n[memory]\nslabs = [\n  {{ name = \"{a}\", size = 64, memory = \"SRAM\" }},\n  {{ name = \"{b}\", size = 64, memory = \"SRAM\" }},\n]\n"
        )
    };
    vec![
        (format!("{g}\n[memory]\nplannr = \"greedy\"\n"), "unknown field `plannr`", Some("did you mean `planner`?"), (12, 1)),
        (format!("{an547}[{{ name = \"DTMC\" }}]\n"), "\"DTMC\"", Some("did you mean `DTCM`?"), (14, 25)),
        (format!("{an547}[\n  {{ name = \"DTCM\", max_size = 4096 }},\n  {{ name = \"DTCM\", arena_alignment = 32 }},\n]\n"), "memory DTCM has two constraints", Some("merge them into one entry"), (16, 12)),
        (format!("{g}\n[platform]\npreset = \"generic\"\nmin_alignment = 12\n"), "platform.min_alignment is 12", None, (13, 17)),
        (format!("{an547}[{{ name = \"DTCM\", arena_alignment = 24 }}]\n"), "arena_alignment is 24", None, (14, 51)),
        (format!("{an547}[{{ name = \"DTCM\", max_size = \"1M\" }}]\n"), "max_size is 1048576 bytes, but memory DTCM has only 524288", None, (14, 44)),
        (format!("{g}\n[memory]\ntensors = [{{ type = \"scratch\", attributes = {{ memory = \"FLASH\" }} }}]\n"), "pins scratch tensors to FLASH, which is read-only", None, (12, 56)),
        (format!("{g}\n[memory]\ntensors = [{{ type = \"constant\", attributes = {{ memory = \"SRAM\", constant_destination_memory = \"FLASH\" }} }}]\n"), "constant_destination_memory is FLASH, which is read-only", None, (12, 95)),
        (format!("{g}\n[memory]\nplanner = \"hill_climbing\"\n"), "unknown planner `hill_climbing`", None, (12, 11)),
        (format!("{g}\n[memory]\nplanner = \"greedy\"\nplanner_options = {{ iterations = 3 }}\n"), "planner `greedy` takes no options", None, (13, 34)),
        (format!("{g}\n[memory]\nplanner = \"hill_climb\"\nplanner_options = {{ iterations = -3 }}\n"), "`iterations` is -3", None, (13, 34)),
        (format!("{g}\n[platform]\nmemories = [{{ name = \"RAM\", size = \"12Q\", writable = true }}]\n"), "\"12Q\" is not a byte count", None, (12, 36)),
        (g.replace("dtype = \"i8\", shape = [1, 16] }", "dtype = \"i88\", shape = [1, 16] }"), "unknown dtype \"i88\"", Some("did you mean `i8`?"), (5, 24)),
        (g.replace("inputs = [\"in\", \"w\"]", "inputs = [\"inn\", \"w\"]"), "names tensor \"inn\"", None, (9, 49)),
        (memories("SRAM", "SRAM"), "memory SRAM is defined twice", Some("give each memory its own name"), (14, 12)),
        (memories("SRAM", "2RAM"), "memory name \"2RAM\" is not an identifier", Some("use letters, digits and `_`, such as \"DTCM\" or \"SRAM1\""), (14, 12)),
        (slabs("pre", "pre"), "slab pre is defined twice", Some("give each slab its own name"), (14, 12)),
        (slabs("pre", "post-1"), "memory.slabs[1].name \"post-1\" is not an identifier", Some("use letters, digits and `_`, starting with a letter, such as \"preprocess\""), (14, 12)),
        (format!("{g}\n[kernels]\nset = \"fast\"\n"), "kernels.set is \"fast\"", Some("use \"reference\" (planner_kernels::Reference: nothing prepared) or \"optimized\""), (12, 7)),
        (format!("{g}\n[kernels]\nset = \"optimised\"\n"), "kernels.set is \"optimised\"", Some("did you mean `optimized`?"), (12, 7)),
        (format!("{g}\n[kernels]\nsets = \"optimized\"\n"), "unknown field `sets`, expected `set`", Some("did you mean `set`?"), (12, 1)),
        (format!("{g}\n[kernels]\nset = 3\n"), "invalid type: integer `3`, expected a string", None, (12, 7)),
    ]
}

#[test]
fn refused_manifests_say_why_and_where() {
    for (text, says_what, help, (line, col)) in refusals() {
        let e = err(&text);
        says(&e, says_what);
        if let Some(help) = help {
            let seen = e.help_text().unwrap_or_default();
            assert!(seen.contains(help), "{says_what}: help {seen:?}");
        }
        let (path, l, c) = e.location().expect("a position in the manifest");
        assert_eq!((path, l, c), (PathBuf::from("m.toml"), line, col), "{e}");
        assert!(e.to_string().contains(&format!("m.toml:{l}:{c}")), "{e}");
    }
}

/// `[kernels] set` names the kernel set; without it the plan is the reference set's.
#[test]
fn kernel_set_defaults_to_reference() {
    assert_eq!(parse(&graph()).unwrap().kernels, KernelSet::Reference);
    for set in KernelSet::ALL {
        let text = format!("{}\n[kernels]\nset = \"{}\"\n", graph(), set.name());
        assert_eq!(parse(&text).unwrap().kernels, set);
    }
    let empty = format!("{}\n[kernels]\n", graph());
    assert_eq!(parse(&empty).unwrap().kernels, KernelSet::Reference);
}

#[test]
fn budget_is_min_of_memory_and_constraint() {
    let m = parse(&format!(
        "{}\n[platform]\npreset = \"mps3-an547\"\n[memory]\nconstraints = [{{ name = \"DTCM\", max_size = \"128K\", arena_alignment = 32 }}, {{ name = \"SRAM\" }}]\n",
        graph()
    ))
    .unwrap();
    assert_eq!(m.budget("DTCM"), Some(128 * 1024));
    assert_eq!(m.budget("SRAM"), Some(2 * 1024 * 1024));
    assert_eq!(m.memory_alignment("DTCM"), 32);
    assert_eq!(m.memory_alignment("SRAM"), 16);
    let banks: Vec<&str> = m.scratch_banks().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(banks, ["DTCM", "SRAM"]);
}
