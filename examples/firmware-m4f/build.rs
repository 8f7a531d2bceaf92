//! Plans person detection on the `netduinoplus2` preset into `OUT_DIR`, writes `memory.x`
//! from the preset (cortex-m-rt's `FLASH` is the internal flash, its `RAM` the SRAM), and
//! writes `golden.rs`: the input seed, the input's FNV-1a 64 hash and the output bytes that
//! TFLite Micro's reference kernels gave (`tests/run-models/goldens/`, written by
//! `scripts/tflm_goldens.py`), read and written by the board examples' `common/golden.rs`.

use std::env;

// Its `write` takes the boards' path to the golden files; this crate calls `read` and
// `Golden::write` itself.
#[allow(dead_code)]
#[path = "../boards/common/golden.rs"]
mod golden;

/// The golden file of the model `model.toml` plans.
const GOLDEN: &str = "../../tests/run-models/goldens/tflm_person_detect_int8.json";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");

    planner_build::Builder::new()
        .manifest("model.toml")
        .write_memory_x("FLASH", "SRAM")
        .compile();

    let mut golden = golden::read(GOLDEN);
    golden.by = "firmware-m4f's build.rs".to_string();
    // The comparison's self-test: an expected output TFLite Micro did not give.
    if env::var_os("CARGO_FEATURE_WRONG_GOLDEN").is_some() {
        if let Some(b) = golden.output.first_mut() {
            *b ^= 1;
        }
        println!("cargo::warning=wrong-golden: the expected output is changed on purpose");
    }
    golden.write();
}
