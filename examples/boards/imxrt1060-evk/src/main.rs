//! planner on an i.MX RT1060 EVKB: image classification (MLPerf Tiny's int8 ResNet-8) planned
//! at build time from the `imxrt1062` preset, its scratch in the DTCM and its weights read in
//! place from the QuadSPI flash, run through the generated `run()` with the reference kernels
//! on a fixed input. The output, its comparison with TFLite Micro's and the inference's cycle
//! count (the DWT cycle counter) go out through defmt over RTT; `cargo run --release` flashes
//! the board and prints them through probe-rs.

#![no_std]
#![no_main]

use cortex_m::peripheral::DWT;
use imxrt_rt::entry;
use imxrt1060evk_fcb as _; // the FlexSPI configuration block, at the start of flash
use planner_kernels::Reference;

planner_macros::include_model!("resnet8");

/// The defmt transport and panic handler, the fixed input and the checks against TFLite
/// Micro's output, shared by the board examples.
#[path = "../../common/firmware.rs"]
mod common;

#[entry]
fn main() -> ! {
    let mut cp = common::core_peripherals();
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
    // The fixed input TFLite Micro's golden output was made from.
    common::fill_input(model.input_input_1_int8_mut());

    // Every op, in plan order, between two reads of the DWT cycle counter.
    let cycles = common::timed_run(|| model.run(&mut Reference));

    let out = model.output_identity_int8();
    defmt::println!("resnet8: scores of the 10 classes = {}", out);
    common::check_output(out);
    defmt::println!("resnet8: bit-exact with TFLite Micro");
    defmt::println!("resnet8: inference took {=u32} cycles", cycles);
    common::exit() // a semihosting exit: `probe-rs run` ends with status 0
}
