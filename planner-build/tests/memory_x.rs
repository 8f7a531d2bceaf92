//! `memory.x`: written from the manifest's memories, and a hand-written one checked against
//! them (a fixture that agrees passes, one with DTCM at 128K fails with both figures).

#[path = "../../planner/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;

use common::{assert_says, root};

fn out(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("planner-memory-x-{}-{name}", std::process::id()))
}

fn builder(name: &str) -> planner_build::Builder {
    let mut b = planner_build::Builder::new();
    b.manifest(root().join("examples/kws/kws.toml"))
        .out_dir(out(name))
        .cargo_directives(false);
    b
}

/// Writes `text` as the memory.x `file` in the temporary folder and checks the example's
/// manifest against it (outputs in the folder of `name`).
fn check_written(
    name: &str,
    file: &str,
    text: &str,
) -> Result<planner_build::Outputs, planner::Error> {
    let x = out(file);
    std::fs::write(&x, text).unwrap();
    builder(name).check_memory_x(&x).try_compile()
}

#[test]
fn matching_memory_x_passes() {
    let fixture = root().join("tests/data/memory_x/mps3-an547.x");
    builder("ok")
        .check_memory_x(&fixture)
        .try_compile()
        .unwrap();
}

#[test]
fn mismatched_memory_x_fails_with_both_figures() {
    let fixture = root().join("tests/data/memory_x/mps3-an547-dtcm-128k.x");
    let e = builder("bad")
        .check_memory_x(&fixture)
        .try_compile()
        .unwrap_err();
    let m = e.message();
    assert_says(
        m,
        &[
            "memory `DTCM` is 524288 bytes (512K) at 0x20000000 in the manifest",
            "mps3-an547-dtcm-128k.x:5 is 131072 bytes (128K) at 0x20000000",
            "Builder::write_memory_x",
        ],
    );
    assert!(!m.contains("SRAM"), "SRAM agrees (2M = 2048K): {m}");
    // A region the plan needs that is missing.
    let e = check_written(
        "missing",
        "missing.x",
        "MEMORY\n{\n  FLASH : ORIGIN = 0x28000000, LENGTH = 8M\n}\n",
    )
    .unwrap_err();
    assert!(
        e.message()
            .contains("add `DTCM (rwx) : ORIGIN = 0x20000000, LENGTH = 512K`"),
        "{e}"
    );
}

#[test]
fn written_memory_x_has_the_manifests_memories_and_passes_its_own_check() {
    let outputs = builder("write")
        .write_memory_x("FLASH", "DTCM")
        .svg(true)
        .try_compile()
        .unwrap();
    let text = std::fs::read_to_string(outputs.dir.join("memory.x")).unwrap();
    assert_says(
        &text,
        &[
            "  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 512K\n",
            "  FLASH (rx) : ORIGIN = 0x28000000, LENGTH = 8M\n",
            "  SRAM (rwx) : ORIGIN = 0x01000000, LENGTH = 2M\n",
            "INCLUDE planner_kws.x",
        ],
    );
    // The fragment places DTCM's arenas in the region the memory became.
    let fragment = std::fs::read_to_string(outputs.dir.join("planner_kws.x")).unwrap();
    assert!(fragment.contains("> RAM"), "{fragment}");
    assert!(!fragment.contains("> DTCM"), "{fragment}");
    assert!(outputs.dir.join("kws.svg").is_file());
    // The written file agrees with the manifest.
    builder("recheck")
        .region("DTCM", "RAM")
        .check_memory_x(outputs.dir.join("memory.x"))
        .try_compile()
        .unwrap();
    // A memory the layout names must exist.
    let e = builder("nope")
        .write_memory_x("FLASH", "TCM")
        .try_compile()
        .unwrap_err();
    assert!(e.message().contains("names memory `TCM`"), "{e}");
}

#[test]
fn regions_over_several_lines_with_comments_pass() {
    // GNU ld reads this; the check used to refuse it with "a region needs ORIGIN and LENGTH".
    check_written(
        "multiline",
        "multiline.x",
        "/* mps3-an547 */\nMEMORY\n{\n  FLASH : ORIGIN = 0x28000000, LENGTH = 8M\n  DTCM (rwx) :\n    ORIGIN = 0x20000000, /* data TCM */\n    LENGTH = 512K\n  SRAM (rwx) : org = 0x01000000\n    len = 0x200000\n}\n",
    )
    .unwrap();
    // The region's line is its name's, in the disagreement too.
    let e = check_written(
        "multiline-bad",
        "multiline.x",
        "MEMORY\n{\n  DTCM (rwx) :\n    ORIGIN = 0x20000000,\n    LENGTH = 256K\n  SRAM : o = 0x01000000, l = 2M\n}\n",
    )
    .unwrap_err();
    assert!(
        e.message()
            .contains("multiline.x:3 is 262144 bytes (256K) at 0x20000000"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn a_device_as_memory_x_is_refused_not_read() {
    let e = builder("dev")
        .check_memory_x("/dev/zero")
        .try_compile()
        .unwrap_err();
    assert_eq!(
        e.message(),
        "memory.x /dev/zero is not a regular file (a device or socket)"
    );
    let x = out("big.x");
    std::fs::File::create(&x)
        .unwrap()
        .set_len(planner::import::MAX_LINKER_SCRIPT + 1)
        .unwrap();
    let e = builder("big").check_memory_x(&x).try_compile().unwrap_err();
    assert!(
        e.message().ends_with(
            "big.x is 1048577 bytes, but a linker script checked against the manifest is at most 1048576 bytes (1 MiB)"
        ),
        "{e}"
    );
}
