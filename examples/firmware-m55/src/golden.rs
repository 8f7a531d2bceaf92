//! End-to-end runs of bundled models through their generated `run()` with the reference
//! kernels, on the inputs `scripts/tflm_goldens.py` used, compared byte for byte with the
//! outputs TFLite Micro's reference kernels gave (see build.rs).

use cortex_m_semihosting::hprintln;
use planner::rt::kernel::{Hooks, RunError, Tap};
use planner_kernels::KernelError;

use crate::GOLDEN_FAILED;

pub use planner_kernels::golden::{fill_f32, fill_i8, fill_i8_in, fill_i16};

#[path = "../../firmware-shared/digests.rs"]
mod digests;
use digests::Tally;

/// A tap (`Hooks::tap`) that hashes every op's outputs and compares them with the digests
/// of TFLite Micro's, op by op: `(plan op, output, FNV-1a 64)` per compared output, and
/// `(plan op, input, FNV-1a 64)` per compared input (a tensor whose writer's taps show only
/// parts of it, as a patch stage's split op's, is compared whole as its reader's input).
#[derive(Default)]
pub struct Digests {
    want: &'static [(usize, usize, u64)],
    want_inputs: &'static [(usize, usize, u64)],
    run: usize,
    /// Outputs the goldens hold (over the runs given to [`Digests::expect`]), compared, and
    /// equal to TFLite Micro's, and the first difference.
    pub tally: Tally,
}

impl Digests {
    /// The digests of the next run.
    pub fn expect(&mut self, want: &'static [(usize, usize, u64)]) {
        self.want = want;
        self.tally.expected += want.len();
    }

    /// The input digests of the next run.
    pub fn expect_inputs(&mut self, want: &'static [(usize, usize, u64)]) {
        self.want_inputs = want;
        self.tally.expected += want.len();
    }

    /// Ends a run.
    pub fn finish(&mut self) {
        self.want = &[];
        self.want_inputs = &[];
        self.run += 1;
    }

    /// Prints what failed in the runs of `model`, each line starting with `what`: the first
    /// output that differed from TFLite Micro's (the line ending with `why`), the run's
    /// `error`, and outputs the goldens hold that no tap compared.
    pub fn report_failures(
        &self,
        what: &str,
        model: &str,
        error: Option<impl core::fmt::Display>,
        why: &str,
    ) {
        if let Some(d) = self.tally.first {
            hprintln!("{} {}: FAILED: {}{}", what, model, d, why);
        }
        if let Some(e) = error {
            hprintln!("{} {}: FAILED: {}", what, model, e);
        }
        if self.tally.compared != self.tally.expected {
            hprintln!(
                "{} {}: FAILED: {} op outputs compared, the goldens hold {}; an op was not tapped",
                what,
                model,
                self.tally.compared,
                self.tally.expected
            );
        }
    }
}

impl Hooks for Digests {
    fn tap(&mut self, op: &Tap<'_, '_>) {
        let outputs = self.want.iter().map(|&w| (w, false));
        let inputs = self.want_inputs.iter().map(|&w| (w, true));
        for ((_, j, theirs), input) in outputs.chain(inputs).filter(|w| w.0.0 == op.index) {
            self.tally.compare(self.run, op, j, input, theirs);
        }
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

/// A golden run's result as whether its final output was bit-exact, and its error.
pub fn outcome<E>(result: Result<bool, E>) -> (bool, Option<E>) {
    match result {
        Ok(same) => (same, None),
        Err(e) => (false, Some(e)),
    }
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
