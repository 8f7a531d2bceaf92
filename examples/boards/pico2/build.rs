//! Plans the model into `OUT_DIR`, checks the hand-written `memory.x` against the `rp2350`
//! preset, passes the linker scripts, and writes the golden constants the firmware checks its
//! output against.

#[path = "../common/golden.rs"]
mod golden;

fn main() {
    let out = planner_build::Builder::new()
        .manifest("model.toml")
        // memory.x is hand-written (it places the boot ROM's IMAGE_DEF block): memory SRAM is
        // its region RAM, and its FLASH and RAM must have the preset's origins and sizes.
        .region("SRAM", "RAM")
        .check_memory_x("memory.x")
        .compile();
    // memory.x beside the arenas' fragment, on the linker's search path.
    std::fs::copy("memory.x", out.dir.join("memory.x")).expect("OUT_DIR is writable");
    println!("cargo::rerun-if-changed=memory.x");
    // The linker scripts, for the binary only: cortex-m-rt's (it INCLUDEs memory.x) and
    // defmt's (its format strings, kept out of the image).
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-link-arg-bins=-Tdefmt.x");
    golden::write("tiny_kws_dscnn_int8");
}
