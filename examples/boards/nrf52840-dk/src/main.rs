//! planner on an nRF52840-DK: person detection (TFLM's int8 MobileNet V1) planned at build
//! time from the `nrf52840` preset, its scratch in the SRAM and its weights read in place from
//! flash, run through the generated `run()` with the reference kernels on a fixed input. The
//! output, its comparison with TFLite Micro's and the inference's cycle count (the DWT cycle
//! counter) go out through defmt over RTT; `cargo run --release` flashes the board and prints
//! them through probe-rs.

#![no_std]
#![no_main]

use core::ptr;

use cortex_m::peripheral::SCB;
use cortex_m_rt::entry;
use planner_kernels::Reference;

planner_macros::include_model!("person_detect");

/// The defmt transport and panic handler, the fixed input and the checks against TFLite
/// Micro's output, shared by the board examples.
#[path = "../../common/firmware.rs"]
mod common;

/// The CPU clock: the nRF52840's Cortex-M4F always runs at 64 MHz.
const CORE_HZ: u32 = 64_000_000;

#[entry]
fn main() -> ! {
    keep_debug_port_open();
    enable_flash_cache();
    let mut cp = common::core_peripherals();
    // The DWT cycle counter: trace on, counter on.
    cp.DCB.enable_trace();
    cp.DWT.enable_cycle_counter();
    defmt::println!(
        "nrf52840-dk: booted, nRF52840 (Cortex-M4F) at {=u32} MHz",
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

// Registers of the nRF52840 Product Specification (FICR, UICR, NVMC; the APPROTECT block
// exists from build code F on).
/// FICR INFO.VARIANT: the build code in ASCII, e.g. "AAF0" (0x4141_4630).
const FICR_INFO_VARIANT: *const u32 = 0x1000_0104 as *const u32;
/// UICR APPROTECT: 0x5A (HwDisabled) keeps the debug port open across resets.
const UICR_APPROTECT: *mut u32 = 0x1000_1208 as *mut u32;
/// APPROTECT DISABLE: writing 0x5A (SwDisable) opens the debug port until the next reset.
const APPROTECT_DISABLE: *mut u32 = 0x4000_0558 as *mut u32;
/// NVMC READY (1: ready), CONFIG (0: read only, 1: write enabled) and ICACHECNF (bit 0:
/// cache enabled).
const NVMC_READY: *const u32 = 0x4001_E400 as *const u32;
const NVMC_CONFIG: *mut u32 = 0x4001_E504 as *mut u32;
const NVMC_ICACHECNF: *mut u32 = 0x4001_E540 as *mut u32;
/// The value that disables access port protection, in hardware and in software.
const HW_SW_DISABLED: u32 = 0x5A;

/// From build code F on (revision 3 of the chip), the nRF52840 locks its debug port at every
/// reset unless UICR.APPROTECT says HwDisabled *and* the firmware writes SwDisable: without
/// this, probe-rs loses the chip right after flashing it and reads no output. Erased UICR
/// (after `--allow-erase-all`) reads 0xFFFF_FFFF: write HwDisabled once and reset into it.
/// Older parts (build codes C and D) keep the port open by default: nothing to do.
fn keep_debug_port_open() {
    // SAFETY: FICR is read-only factory information, always mapped.
    let variant = unsafe { ptr::read_volatile(FICR_INFO_VARIANT) };
    let build_code = (variant >> 8) as u8; // "AAF0": the third character
    if build_code < b'F' {
        return;
    }
    // SAFETY: UICR is mapped flash; reading a word of it has no side effect.
    if unsafe { ptr::read_volatile(UICR_APPROTECT) } == u32::MAX {
        nvmc_write(UICR_APPROTECT, HW_SW_DISABLED);
        // SAFETY: as above.
        if unsafe { ptr::read_volatile(UICR_APPROTECT) } == HW_SW_DISABLED {
            SCB::sys_reset(); // UICR is read at reset
        }
    }
    // SAFETY: a write-only register of the APPROTECT block on these build codes; 0x5A is
    // its documented SwDisable value.
    unsafe { ptr::write_volatile(APPROTECT_DISABLE, HW_SW_DISABLED) };
}

/// Writes one word of flash (here UICR) through the NVMC: write enable, the word, read only
/// again, waiting for READY around each step.
fn nvmc_write(word: *mut u32, value: u32) {
    let wait = || {
        // SAFETY: NVMC READY is a read-only status register.
        while unsafe { ptr::read_volatile(NVMC_READY) } & 1 == 0 {}
    };
    // SAFETY: NVMC CONFIG and the UICR word are mapped; the NVMC allows a word write to an
    // erased flash word once CONFIG says write enabled, and nothing else runs meanwhile.
    unsafe {
        ptr::write_volatile(NVMC_CONFIG, 1);
        wait();
        ptr::write_volatile(word, value);
        wait();
        ptr::write_volatile(NVMC_CONFIG, 0);
        wait();
    }
}

/// The NVMC's cache of the ICODE bus (off at reset): instruction fetches from flash.
fn enable_flash_cache() {
    // SAFETY: ICACHECNF is a read-write NVMC register; bit 0 enables the cache, and changing
    // it while running from flash is allowed.
    unsafe { ptr::write_volatile(NVMC_ICACHECNF, 1) };
}
