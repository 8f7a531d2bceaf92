//! Every input of the bad-input campaign (`planner/tests/data/repro/`, one defect each) with
//! the exit code and the exact message `planner plan` now gives. Inputs that used to plan
//! and then fail inside `include_model!` are refused here with a position; those that plan
//! are expanded and checked by `planner-macros`' property tests.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/files.rs"]
mod files;
use files::fresh_dir;

fn repro() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../planner/tests/data/repro")
}

/// Runs `planner plan <file>` in the repro folder: (exit code, first stderr line, stderr).
fn plan(file: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(["plan", file])
        .current_dir(repro())
        .output()
        .expect("the planner binary runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let first = err.lines().next().unwrap_or_default().to_string();
    (out.status.code().unwrap_or(-1), first, err)
}

#[track_caller]
fn refused(file: &str, code: i32, message: &str, at: Option<&str>) {
    let (c, first, err) = plan(file);
    assert_eq!((c, first.as_str()), (code, message), "{file}:\n{err}");
    if let Some(at) = at {
        assert!(
            err.contains(&format!("--> {file}:{at}")),
            "{file}: no position {at}:\n{err}"
        );
    }
}

#[track_caller]
fn planned(file: &str) {
    let (c, _, err) = plan(file);
    assert_eq!(c, 0, "{file}:\n{err}");
}

const TOO_BIG: &str = "takes {} bytes, more than 2147483647, the largest arena a 32-bit target can address; it does not fit any memory";

fn too_big(tensor: &str, bytes: u64) -> String {
    format!(
        "error: tensor `{tensor}` {}",
        TOO_BIG.replace("{}", &bytes.to_string())
    )
}

#[test]
fn overflowing_sizes_do_not_fit() {
    let max = u64::MAX;
    refused("overflow409.toml", 1, &too_big("b", max), None);
    refused("overflow_pipeline236.toml", 1, &too_big("a", max), None);
    refused("overflow_verify240.toml", 1, &too_big("slab/s", max), None);
    refused(
        "internal_align_overflow.toml",
        1,
        &too_big("b", max - 15),
        None,
    );
    refused("huge_const.toml", 1, &too_big("w", 1 << 32), None);
    // A CSV problem has no arena cap (its heights are an accelerator's), only the
    // arithmetic's: a buffer and those live beside it within 2^63 - 1 bytes.
    let beside = |size: u64| {
        format!(
            "error: buffer `a` ({size} bytes, live over steps 0..1) and the buffers live beside it take 18446744073709551616 bytes together, more than 9223372036854775807, the largest height a problem is planned to (2^63 - 1)"
        )
    };
    refused("csv_u64max.csv", 1, &beside(max), None);
    refused("csv_2pow63.csv", 1, &beside(1 << 63), None);
    refused(
        "huge.tflite",
        2,
        &format!(
            "error: huge.tflite: tensor `1` {}",
            TOO_BIG.replace("{}", "281474976710656")
        ),
        None,
    );
}

#[test]
fn pinned_rows_that_overlap_are_named() {
    refused(
        "fixed_overlap.csv",
        2,
        "error: rows `a` and `b` are pinned to offsets that share bytes 8..16 while both are live at step 1",
        Some("3:10"),
    );
    refused(
        "fixed_top.csv",
        2,
        "error: offset 18446744073709551612 plus size 4 passes the largest byte address",
        Some("2:9"),
    );
}

#[test]
fn what_rustc_would_refuse_is_refused_with_a_position() {
    let align = "above 65536, the largest alignment generated arenas support";
    refused(
        "min_align_2p17.toml",
        2,
        &format!("error: platform.min_alignment is 131072, {align}"),
        Some("11:17"),
    );
    refused(
        "align2p40.toml",
        2,
        &format!("error: platform.min_alignment is 1099511627776, {align}"),
        Some("12:17"),
    );
    refused(
        "arena_align2p40.toml",
        2,
        &format!("error: memory.constraints[0].arena_alignment is 1099511627776, {align}"),
        Some("13:52"),
    );
    refused(
        "case_mem.toml",
        2,
        "error: memories sram and SRAM get the same name in generated code (scratch_sram)",
        Some("11:70"),
    );
    refused(
        "nan_scale.toml",
        2,
        "error: tensor \"x\" has quantization scale NaN, which is not a finite number",
        Some("4:10"),
    );
    refused(
        "size_only.toml",
        2,
        "error: tensor \"x\" is 2 bytes, not a whole number of i32 elements (4 bytes each)",
        Some("4:37"),
    );
    refused(
        "constout.tflite",
        2,
        "error: constout.tflite: op 0 (ADD) of model `constout` writes constant tensor `1` (c); constants are read-only, so the op's output must be an activation or a variable",
        None,
    );
    refused(
        "addr32.toml",
        2,
        "error: memory SRAM at origin 0xffff0000 with 1048576 bytes ends past the 32-bit address space (0x1_0000_0000)",
        Some("12:59"),
    );
    // Plans now; planner-macros' property tests expand and check both.
    planned("names_clash.toml");
    planned("names.tflite");
}

#[test]
fn unbounded_inputs_stop_early() {
    refused(
        "const256m.toml",
        2,
        "error: model m has 268435456 bytes of constants given by size alone (zero-filled), more than memory.max_zero_constants = 16777216; the largest is `w` with 268435456 bytes",
        None,
    );
    refused(
        "devzero_data_shape.toml",
        2,
        "error: constant data /dev/zero is not a regular file (a device or socket)",
        Some("5:71"),
    );
    // The limit is the user's to raise.
    let dir = fresh_dir("repro");
    let text = std::fs::read_to_string(repro().join("const256m.toml")).unwrap();
    let raised = dir.join("const_small.toml");
    std::fs::write(
        &raised,
        text.replace("\"256M\"", "\"1M\"") + "[memory]\nmax_zero_constants = \"1M\"\n",
    )
    .unwrap();
    planned(raised.to_str().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_defects() {
    // A byte-order mark before the header.
    planned("bom.csv");
    // A directory says what it holds.
    let (code, first, _) = plan(".");
    assert_eq!(code, 2);
    assert!(
        first.starts_with("error: . is a directory; give a manifest (.toml), a model (.tflite) or a problem (.csv) file: it holds 30 inputs, such as ./addr32.toml"),
        "{first}"
    );
    // A tensor name with a newline stays inside its comment: the starter manifest plans.
    let out = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(["import", repro().join("nlname.tflite").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let starter = String::from_utf8(out.stdout).unwrap();
    assert!(
        starter.contains("# w\\u{000A}[model]\\u{000A}name = \"evil\" (16 bytes)"),
        "{starter}"
    );
    let dir = fresh_dir("repro-nl");
    // The starter names the model by file name: saved beside a copy of it, it plans.
    std::fs::copy(repro().join("nlname.tflite"), dir.join("nlname.tflite")).unwrap();
    let manifest = dir.join("nlname.toml");
    std::fs::write(&manifest, starter).unwrap();
    planned(manifest.to_str().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    // Inputs that already had a clear outcome stay so.
    for ok in [
        "cycle.toml",
        "twowriters.toml",
        "glob10k.toml",
        "header_only.csv",
        "spaces.csv",
        "nlname.tflite",
    ] {
        planned(ok);
    }
}
