//! Plans the model into `OUT_DIR`, writes `memory.x` from the `stm32h743` preset, passes the
//! linker scripts, and writes the golden constants the firmware checks its output against.

#[path = "../common/golden.rs"]
mod golden;

fn main() {
    planner_build::Builder::new()
        .manifest("model.toml")
        // memory.x from the preset: the internal flash (where the core boots, at 0x0800_0000)
        // is cortex-m-rt's FLASH, the DTCM its RAM (stack, .data, .bss, and the scratch arena).
        .write_memory_x("FLASH", "DTCM")
        .compile();
    // The linker scripts, for the binary only: cortex-m-rt's (it INCLUDEs memory.x) and
    // defmt's (its format strings, kept out of the image).
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-link-arg-bins=-Tdefmt.x");
    golden::write("tflm_person_detect_int8");
}
