//! planner on a NUCLEO-H743ZI: person detection (TFLM's int8 MobileNet V1) planned at build
//! time from the `stm32h743` preset, its scratch in the DTCM and its weights read in place
//! from flash, run through the generated `run()` with the reference kernels on a fixed input.
//! The output, its comparison with TFLite Micro's and the inference's cycle count (the DWT
//! cycle counter) go out through defmt over RTT; `cargo run --release` flashes the board and
//! prints them through probe-rs.

#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use cortex_m_rt::entry;
use planner_kernels::Reference;

planner_macros::include_model!("person_detect");

/// The defmt transport and panic handler, the fixed input and the checks against TFLite
/// Micro's output, shared by the board examples.
#[path = "../../common/firmware.rs"]
mod common;

/// The core clock after reset: the 64 MHz HSI (RM0433, reset and clock control). Nothing here
/// changes it.
const CORE_HZ: u32 = 64_000_000;

#[entry]
fn main() -> ! {
    let mut cp = common::core_peripherals();
    // The Cortex-M7's caches: the weights are read from flash through the D-cache.
    cp.SCB.enable_icache();
    cp.SCB.enable_dcache(&mut cp.CPUID);
    // The DWT cycle counter: trace on, the Cortex-M7's DWT software lock off, counter on.
    cp.DCB.enable_trace();
    DWT::unlock();
    cp.DWT.enable_cycle_counter();
    defmt::println!(
        "nucleo-h743zi: booted, STM32H743ZI (Cortex-M7) at {=u32} MHz",
        CORE_HZ / 1_000_000
    );

    let Some(model) = person_detect::Model::take() else {
        defmt::panic!("the person_detect handle was taken before main")
    };
    let mut model = model.init(); // zero persistent arenas, copy staged weights
    // The fixed input TFLite Micro's golden output was made from.
    common::fill_input(model.input_input_mut());

    // Every op, in plan order, between two reads of the DWT cycle counter.
    let cycles = common::timed_run(|| model.run(&mut Reference));

    let out = model.output_mobilenet_v1_predictions_reshape_1();
    defmt::println!("person_detect: scores [no person, person] = {}", out);
    common::check_output(out);
    defmt::println!("person_detect: bit-exact with TFLite Micro");
    defmt::println!(
        "person_detect: inference took {=u32} cycles ({=u32} ms at {=u32} MHz)",
        cycles,
        cycles / (CORE_HZ / 1_000),
        CORE_HZ / 1_000_000
    );
    common::exit() // a semihosting exit: `probe-rs run` ends with status 0
}
