//! End-to-end runs of bundled models through their generated `run()` with the reference
//! kernels, on the inputs `scripts/tflm_goldens.py` used, compared byte for byte with the
//! outputs TFLite Micro's reference kernels gave (see build.rs).

use cortex_m_semihosting::hprintln;
use planner::rt::kernel::RunError;
use planner_kernels::KernelError;

use crate::GOLDEN_FAILED;

/// SplitMix64: the golden script's input stream.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Fills an int8 input from the stream at `seed`: `(next >> 56)` as a signed byte.
pub fn fill_i8(input: &mut [i8], seed: u64) {
    let mut s = SplitMix64(seed);
    for v in input {
        *v = (s.next() >> 56) as u8 as i8;
    }
}

/// Fills an int16 input from the stream at `seed`: `(next >> 48)` as a signed 16-bit value.
pub fn fill_i16(input: &mut [i16], seed: u64) {
    let mut s = SplitMix64(seed);
    for v in input {
        *v = (s.next() >> 48) as u16 as i16;
    }
}

/// Prints an output beside TFLite Micro's; true when they are equal.
pub fn compare(model: &str, output: &str, got: &[u8], want: &[u8]) -> bool {
    let same = got == want;
    hprintln!(
        "golden {} {}: {} ({:?}, TFLite Micro {:?})",
        model,
        output,
        if same { "bit-exact" } else { "DIFFERS" },
        got,
        want
    );
    same
}

/// Reports a golden run; a failure is remembered for the exit status.
pub fn report(model: &str, result: Result<bool, RunError<KernelError>>) {
    match result {
        Ok(true) => {}
        Ok(false) => GOLDEN_FAILED.store(true, core::sync::atomic::Ordering::Relaxed),
        Err(e) => {
            hprintln!("golden {}: FAILED: {}", model, e);
            GOLDEN_FAILED.store(true, core::sync::atomic::Ordering::Relaxed);
        }
    }
}
