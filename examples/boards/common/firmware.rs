//! What the board examples' firmware shares; each `src/main.rs` includes this file
//! (`#[path = "../../common/firmware.rs"] mod common;`) and keeps what is its board's: the
//! clocks, caches and cycle counter, the chip's boot and debug needs, the model and its prints.
//! Here: the defmt transport and panic handler, the golden constants `build.rs` writes (see
//! `golden.rs` beside this file), the fixed input, the run timed with the DWT cycle counter,
//! the checks against TFLite Micro, and the semihosting exit that ends `probe-rs run`.

use cortex_m::peripheral::DWT;
use cortex_m_semihosting::debug;
use defmt_rtt as _; // the defmt transport: RTT, read by the probe
use planner_kernels::golden::{fill_i8, fnv1a64};

/// The golden input's seed and hash and TFLite Micro's output (see build.rs).
mod golden {
    include!(concat!(env!("OUT_DIR"), "/golden.rs"));
}

/// The core peripherals, taken once, by `main`.
pub fn core_peripherals() -> cortex_m::Peripherals {
    let Some(cp) = cortex_m::Peripherals::take() else {
        defmt::panic!("the core peripherals were taken before main")
    };
    cp
}

/// Fills the model's input with the fixed input TFLite Micro's golden output was made from,
/// and checks that it is the one TFLite Micro ran on (its FNV-1a 64 hash).
pub fn fill_input(input: &mut [i8]) {
    fill_i8(input, golden::SEED);
    if fnv1a64(input.iter().map(|&v| v as u8)) != golden::INPUT_FNV1A64 {
        defmt::panic!("the input differs from the one TFLite Micro ran on")
    }
}

/// Runs the model (`run` calls its `run()`) between two reads of the DWT cycle counter, so
/// that the count covers every op of `run()` and nothing else; panics with the error `run()`
/// returned, if any. Returns the cycles it took.
pub fn timed_run<E: core::fmt::Display>(run: impl FnOnce() -> Result<(), E>) -> u32 {
    let start = DWT::cycle_count();
    let ran = run();
    let cycles = DWT::cycle_count().wrapping_sub(start);
    if let Err(e) = ran {
        defmt::panic!("run() failed: {}", defmt::Display2Format(&e))
    }
    cycles
}

/// Panics, printing TFLite Micro's output, unless `out` is that output byte for byte.
pub fn check_output(out: &[i8]) {
    if !out.iter().map(|&v| v as u8).eq(golden::OUTPUT) {
        defmt::panic!("the output differs from TFLite Micro's {}", golden::OUTPUT)
    }
}

/// Ends the firmware: `probe-rs run` ends with status 0 on a semihosting exit, and fails on a
/// panic.
pub fn exit() -> ! {
    debug::exit(debug::EXIT_SUCCESS);
    loop {
        cortex_m::asm::wfi(); // only reached without a debugger
    }
}

/// A panic prints through defmt (panic-probe's handler) and stops the core with a fault,
/// which fails `probe-rs run`; `defmt::panic!` has printed its message already, so it
/// goes straight to the fault.
#[defmt::panic_handler]
fn defmt_panic() -> ! {
    panic_probe::hard_fault()
}
