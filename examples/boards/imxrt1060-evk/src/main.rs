//! planner on an i.MX RT1060 EVKB: image classification (MLPerf Tiny's int8 ResNet-8) planned
//! at build time from the `imxrt1062` preset, its scratch in the DTCM and its weights read in
//! place from the QuadSPI flash, run through the generated `run()` with the reference kernels
//! on a fixed input. The output, its comparison with TFLite Micro's and the inference's cycle
//! count (the DWT cycle counter) go out through defmt over RTT; `cargo run --release` flashes
//! the board and prints them through probe-rs.

#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use cortex_m_semihosting::debug;
use defmt_rtt as _; // the defmt transport: RTT, read by the probe
use imxrt_rt::entry;
use imxrt1060evk_fcb as _; // the FlexSPI configuration block, at the start of flash
use planner_kernels::Reference;
use planner_kernels::golden::{fill_i8, fnv1a64};

planner_macros::include_model!("resnet8");

/// The golden input's seed and hash and TFLite Micro's output (see build.rs).
mod golden {
    include!(concat!(env!("OUT_DIR"), "/golden.rs"));
}

#[entry]
fn main() -> ! {
    let Some(mut cp) = cortex_m::Peripherals::take() else {
        defmt::panic!("the core peripherals were taken before main")
    };
    // The Cortex-M7's caches: the weights are read from the flash through the D-cache.
    cp.SCB.enable_icache();
    cp.SCB.enable_dcache(&mut cp.CPUID);
    // The DWT cycle counter: trace on, the Cortex-M7's DWT software lock off, counter on.
    cp.DCB.enable_trace();
    DWT::unlock();
    cp.DWT.enable_cycle_counter();
    // The core runs on the clock the boot ROM set up; this firmware reports cycles.
    defmt::println!("imxrt1060-evk: booted, i.MX RT1062 (Cortex-M7) on the boot ROM's clock");

    let Some(model) = resnet8::Model::take() else {
        defmt::panic!("the resnet8 handle was taken before main")
    };
    let mut model = model.init(); // zero persistent arenas, copy staged weights
    let input = model.input_input_1_int8_mut();
    fill_i8(input, golden::SEED); // the fixed input TFLite Micro's golden output was made from
    if fnv1a64(input.iter().map(|&v| v as u8)) != golden::INPUT_FNV1A64 {
        defmt::panic!("the input differs from the one TFLite Micro ran on")
    }

    let start = DWT::cycle_count();
    let ran = model.run(&mut Reference); // every op, in plan order
    let cycles = DWT::cycle_count().wrapping_sub(start);
    if let Err(e) = ran {
        defmt::panic!("run() failed: {}", defmt::Display2Format(&e))
    }

    let out = model.output_identity_int8();
    defmt::println!("resnet8: scores of the 10 classes = {}", out);
    if !out.iter().map(|&v| v as u8).eq(golden::OUTPUT) {
        defmt::panic!("the output differs from TFLite Micro's {}", golden::OUTPUT)
    }
    defmt::println!("resnet8: bit-exact with TFLite Micro");
    defmt::println!("resnet8: inference took {=u32} cycles", cycles);
    // `probe-rs run` ends with status 0 on a semihosting exit, and fails on a panic.
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
