//! Plans the model into `OUT_DIR`, writes `memory.x` from the `nrf52840` preset, passes the
//! linker scripts, and writes the golden constants the firmware checks its output against.

#[path = "../common/golden.rs"]
mod golden;

fn main() {
    planner_build::Builder::new()
        .manifest("model.toml")
        // memory.x from the preset: the flash at 0x0 (where the core boots) is cortex-m-rt's
        // FLASH, the SRAM its RAM (stack, .data, .bss, and the scratch arena).
        .write_memory_x("FLASH", "SRAM")
        .compile();
    // The linker scripts, for the binary only: cortex-m-rt's (it INCLUDEs memory.x) and
    // defmt's (its format strings, kept out of the image).
    println!("cargo::rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-link-arg-bins=-Tdefmt.x");
    golden::write("tflm_person_detect_int8");
}
