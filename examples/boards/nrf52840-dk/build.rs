//! Plans the model into `OUT_DIR`, writes `memory.x` from the `nrf52840` preset and the
//! golden constants the firmware checks its output against.

#[path = "../shared/golden.rs"]
mod golden;

fn main() {
    planner_build::Builder::new()
        .manifest("model.toml")
        // memory.x from the preset: the flash at 0x0 (where the core boots) is cortex-m-rt's
        // FLASH, the SRAM its RAM (stack, .data, .bss, and the scratch arena).
        .write_memory_x("FLASH", "SRAM")
        .compile();
    golden::write("tflm_person_detect_int8");
}
