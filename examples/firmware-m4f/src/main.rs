//! planner's Cortex-M4F firmware example, for QEMU's `netduinoplus2` machine (an STM32F405).
//!
//! Person detection (TFLM's int8 MobileNet V1) is planned at build time from the
//! `netduinoplus2` board preset (`model.toml`): its scratch in SRAM, its weights read in place
//! from the internal flash. The firmware fills the input from the seeded stream the golden
//! script used, checks that the input is the one TFLite Micro ran on (its FNV-1a 64 hash),
//! runs every op through the generated `run()` with the reference kernels, and compares the
//! output with TFLite Micro's byte for byte. Output and the exit status go over semihosting:
//! 0 when the output is bit-exact, 1 otherwise (and on a panic or a fault).

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use planner_kernels::Reference;
use planner_kernels::golden::{fill_i8, fnv1a64};

planner_macros::include_model!("person_detect");

/// The name the messages start with.
const NAME: &str = "firmware-m4f";

#[path = "../../firmware-shared/semihost.rs"]
mod semihost;
use semihost::{exit, fail};

/// The golden input's seed and hash and TFLite Micro's output (see build.rs).
mod golden {
    include!(concat!(env!("OUT_DIR"), "/golden.rs"));
}

#[entry]
fn main() -> ! {
    hprintln!("firmware-m4f: booted on a Cortex-M4F");
    let Some(model) = person_detect::Model::take() else {
        fail("the person_detect handle was taken before main")
    };
    let mut model = model.init();
    for (arena, ptr) in person_detect::ARENAS.iter().zip(model.arena_ptrs()) {
        hprintln!("person_detect: arena {} at {:p}", arena, ptr);
    }

    let input = model.input_input_mut();
    fill_i8(input, golden::SEED);
    let hash = fnv1a64(input.iter().map(|&v| v as u8));
    if hash != golden::INPUT_FNV1A64 {
        hprintln!(
            "person_detect: the input's fnv1a64 is {:016x}, TFLite Micro's {:016x}",
            hash,
            golden::INPUT_FNV1A64
        );
        fail("the input differs from the one TFLite Micro ran on")
    }

    if let Err(e) = model.run(&mut Reference) {
        hprintln!("person_detect: {}", e);
        fail("run() failed")
    }
    let out = model.output_mobilenet_v1_predictions_reshape_1();
    let same = out.len() == golden::OUTPUT.len()
        && out
            .iter()
            .zip(golden::OUTPUT)
            .all(|(&v, want)| v as u8 == want);
    let got: [u8; golden::OUTPUT.len()] =
        core::array::from_fn(|k| out.get(k).map_or(0, |&v| v as u8));
    hprintln!(
        "golden person_detect mobilenet_v1_predictions_reshape_1: {} ({:?}, TFLite Micro {:?})",
        if same { "bit-exact" } else { "DIFFERS" },
        got,
        golden::OUTPUT
    );
    if !same {
        fail("the output differs from TFLite Micro's")
    }
    hprintln!("firmware-m4f: all checks passed");
    exit(debug::EXIT_SUCCESS)
}
