//! The docs' lists of op kinds against the op-kind table (`planner::rt::op_kinds`): a kind
//! added to a column of the table and not to the chapter that lists that column fails here.

mod common;

use std::collections::BTreeSet;

use planner::rt::op_kinds::{InPlace, OP_KINDS, OpKind};

/// The table's kind names found in `docs/<chapter>` between `from` and `to` (each must
/// occur once, `to` after `from`).
fn kinds_in(chapter: &str, from: &str, to: &str) -> BTreeSet<&'static str> {
    let path = common::root().join("docs").join(chapter);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert_eq!(text.matches(from).count(), 1, "{chapter}: `{from}` once");
    let start = text.find(from).unwrap() + from.len();
    let len = text[start..]
        .find(to)
        .unwrap_or_else(|| panic!("{chapter}: `{to}` after `{from}`"));
    let words: BTreeSet<&str> = text[start..start + len]
        .split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .collect();
    OP_KINDS
        .iter()
        .map(|k| k.name)
        .filter(|n| words.contains(n))
        .collect()
}

#[test]
fn the_in_place_chapter_lists_the_in_place_kinds() {
    let rows =
        |rule| -> BTreeSet<&str> { OpKind::with(|k| k.in_place, rule).map(|k| k.name).collect() };
    let unary = kinds_in(
        "in-place.md",
        "**Ops in place.**",
        "with an output no larger",
    );
    assert_eq!(unary, rows(InPlace::Unary));
    let binary = kinds_in(
        "in-place.md",
        "(QUANTIZE from `f32` to `i8` too);",
        "onto an operand",
    );
    assert_eq!(binary, rows(InPlace::Binary));
    let depthwise = kinds_in(
        "in-place.md",
        "(the other may broadcast);",
        "with depth multiplier 1",
    );
    assert_eq!(depthwise, rows(InPlace::Depthwise));
}

#[test]
fn the_patches_chapter_lists_the_kinds_that_run_on_regions() {
    let listed = kinds_in(
        "patches.md",
        "(`planner::planfile::patch::stage_op`):",
        "; no op with a float32 output",
    );
    let rows: BTreeSet<&str> = OpKind::with(|k| k.regions, true).map(|k| k.name).collect();
    assert_eq!(listed, rows);
}
