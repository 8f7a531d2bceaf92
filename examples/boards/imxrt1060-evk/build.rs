//! Writes imxrt-rt's linker script for the EVKB (the i.MX RT1062's FlexRAM in its default
//! split, 8 MiB of QuadSPI flash), plans the model into `OUT_DIR`, checks the script's memory
//! map against the `imxrt1062` preset, writes `board.x` (the script the binary links with)
//! and the golden constants the firmware checks its output against.

use std::path::PathBuf;

#[path = "../common/golden.rs"]
mod golden;

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // imxrt-rt.x: MEMORY { FLASH, ITCM, DTCM, OCRAM }, the boot header (IVT, boot data, and
    // the FCB's place) at the start of flash, code copied to ITCM at start-up, the stack in
    // DTCM. .data and .bss in DTCM too (imxrt-rt's default is OCRAM): they hold defmt-rtt's
    // buffer, which the probe reads from memory, behind the D-cache main.rs turns on, and the
    // TCMs are never cached.
    use imxrt_rt::Memory;
    imxrt_rt::RuntimeBuilder::from_flexspi(imxrt_rt::Family::Imxrt1060, 8 * 1024 * 1024)
        .stack_size(32 * 1024)
        .data(Memory::Dtcm)
        .bss(Memory::Dtcm)
        .uninit(Memory::Dtcm)
        .linker_script_name("imxrt-rt.x")
        .build()
        .expect("imxrt-rt writes its linker script into OUT_DIR");

    planner_build::Builder::new()
        .manifest("model.toml")
        // imxrt-rt names its regions like the preset's memories: each memory holding an
        // arena must be one of them, with the preset's origin and size.
        .check_memory_x(out_dir.join("imxrt-rt.x"))
        .compile();

    // The arenas' fragment before imxrt-rt's script, as memory.x comes before cortex-m-rt's
    // sections: its sections must claim the arenas before imxrt-rt's .bss and .rodata would.
    // (Rewritten only when it changes, so a rebuild with nothing new links nothing.)
    let board = out_dir.join("board.x");
    let text = "INCLUDE planner_resnet8.x\nINCLUDE imxrt-rt.x\n";
    if std::fs::read_to_string(&board).ok().as_deref() != Some(text) {
        std::fs::write(&board, text).expect("OUT_DIR is writable");
    }
    // The linker scripts, for the binary only: the arenas' fragment and imxrt-rt's script
    // (board.x, above), then defmt's (its format strings, kept out of the image).
    println!("cargo::rustc-link-arg-bins=-Tboard.x");
    println!("cargo::rustc-link-arg-bins=-Tdefmt.x");
    golden::write("tiny_ic_resnet8_int8");
}
