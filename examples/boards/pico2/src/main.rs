//! planner on a Raspberry Pi Pico 2: keyword spotting (MLPerf Tiny's int8 DS-CNN) planned at
//! build time from the `rp2350` preset, its scratch in the SRAM and its weights read in place
//! from the QSPI flash, run through the generated `run()` with the reference kernels on a
//! fixed input. The output, its comparison with TFLite Micro's and the inference's cycle
//! count (the DWT cycle counter) go out through defmt over RTT; `cargo run --release` flashes
//! the board through a debug probe and prints them through probe-rs.

#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use cortex_m_rt::entry;
use planner_kernels::Reference;

planner_macros::include_model!("kws");

/// The defmt transport and panic handler, the fixed input and the checks against TFLite
/// Micro's output, shared by the board examples.
#[path = "../../common/firmware.rs"]
mod common;

/// The smallest IMAGE_DEF block (RP2350 datasheet, 5.9): without one in the first 4 KiB of
/// flash, the boot ROM does not boot the image. memory.x places it right after the vector
/// table, which the boot ROM then finds at the start of the image.
// SAFETY: `.start_block` holds only this static (memory.x keeps it, in flash); nothing else
// is linked there, and the program never writes it.
#[unsafe(link_section = ".start_block")]
#[used]
static IMAGE_DEF: [u32; 5] = [
    0xFFFF_DED3, // block start marker
    0x1021_0142, // item IMAGE_TYPE (0x42), one word: an executable, Secure, Arm, for RP2350
    0x0000_01FF, // item LAST (0xFF): the items before it take one word
    0x0000_0000, // link to the next block: 0, this block is the only one
    0xAB12_3579, // block end marker
];

#[entry]
fn main() -> ! {
    let mut cp = common::core_peripherals();
    // The DWT cycle counter: trace on, counter on.
    cp.DCB.enable_trace();
    if !DWT::has_cycle_counter() {
        defmt::panic!("this core's DWT has no cycle counter")
    }
    cp.DWT.enable_cycle_counter();
    // The clock is the ring oscillator the boot ROM left running: its frequency varies from
    // chip to chip, so this firmware reports cycles, not milliseconds.
    defmt::println!("pico2: booted, RP2350 (Cortex-M33) on the boot ROM's clock");

    let Some(model) = kws::Model::take() else {
        defmt::panic!("the kws handle was taken before main")
    };
    let mut model = model.init(); // zero persistent arenas, copy staged weights
    // The fixed input TFLite Micro's golden output was made from.
    common::fill_input(model.input_input_1_mut());

    // Every op, in plan order, between two reads of the DWT cycle counter.
    let cycles = common::timed_run(|| model.run(&mut Reference));

    let out = model.output_identity();
    defmt::println!("kws: scores of the 12 classes = {}", out);
    common::check_output(out);
    defmt::println!("kws: bit-exact with TFLite Micro");
    defmt::println!("kws: inference took {=u32} cycles", cycles);
    common::exit() // a semihosting exit: `probe-rs run` ends with status 0
}
