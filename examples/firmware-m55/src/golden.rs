//! End-to-end runs of bundled models through their generated `run()` with the reference
//! kernels, on the inputs `scripts/tflm_goldens.py` used, compared byte for byte with the
//! outputs TFLite Micro's reference kernels gave (see build.rs).

use cortex_m_semihosting::hprintln;
use planner::rt::kernel::{Hooks, RunError, Tap};
use planner_kernels::KernelError;

use crate::GOLDEN_FAILED;

use planner_kernels::golden::digest;
pub use planner_kernels::golden::{fill_f32, fill_i8, fill_i8_in, fill_i16};

/// The first op output that differed from TFLite Micro's.
#[derive(Clone, Copy, Debug)]
pub struct Difference {
    /// The run (golden input) it was in.
    pub run: usize,
    /// The op, in plan order, and its name.
    pub op: usize,
    pub opcode: &'static str,
    /// The output's index (the input's, when `input`).
    pub output: usize,
    /// True when the tensor compared was the op's input `output`, after the op ran.
    pub input: bool,
    /// FNV-1a 64 of our bytes (`None`: the op had no such output) and TFLite Micro's.
    pub ours: Option<u64>,
    pub theirs: u64,
}

/// A tap (`Hooks::tap`) that hashes every op's outputs and compares them with the digests
/// of TFLite Micro's, op by op: `(plan op, output, FNV-1a 64)` per compared output, and
/// `(plan op, input, FNV-1a 64)` per compared input (a tensor whose writer's taps show only
/// parts of it, as a patch stage's split op's, is compared whole as its reader's input).
#[derive(Default)]
pub struct Digests {
    want: &'static [(usize, usize, u64)],
    want_inputs: &'static [(usize, usize, u64)],
    run: usize,
    /// Outputs the goldens hold, over the runs given to [`Digests::expect`].
    pub expected: usize,
    /// Outputs compared, and of them equal to TFLite Micro's.
    pub compared: usize,
    pub equal: usize,
    /// The first difference.
    pub first: Option<Difference>,
}

impl Digests {
    /// The digests of the next run.
    pub fn expect(&mut self, want: &'static [(usize, usize, u64)]) {
        self.want = want;
        self.expected += want.len();
    }

    /// The input digests of the next run.
    pub fn expect_inputs(&mut self, want: &'static [(usize, usize, u64)]) {
        self.want_inputs = want;
        self.expected += want.len();
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
        if let Some(d) = self.first {
            hprintln!(
                "{} {}: FAILED: run {} op {} ({}) {} {}: fnv1a64 {:016x?}, TFLite Micro's {:016x}{}",
                what,
                model,
                d.run,
                d.op,
                d.opcode,
                if d.input { "input" } else { "output" },
                d.output,
                d.ours,
                d.theirs,
                why
            );
        }
        if let Some(e) = error {
            hprintln!("{} {}: FAILED: {}", what, model, e);
        }
        if self.compared != self.expected {
            hprintln!(
                "{} {}: FAILED: {} op outputs compared, the goldens hold {}; an op was not tapped",
                what,
                model,
                self.compared,
                self.expected
            );
        }
    }

    /// True when every output the goldens hold was compared and equal.
    pub fn passed(&self) -> bool {
        self.expected > 0 && self.compared == self.expected && self.equal == self.compared
    }
}

impl Hooks for Digests {
    fn tap(&mut self, op: &Tap<'_, '_>) {
        let outputs = self.want.iter().map(|&w| (w, false));
        let inputs = self.want_inputs.iter().map(|&w| (w, true));
        for ((k, j, theirs), input) in outputs.chain(inputs).filter(|w| w.0.0 == op.index) {
            let view = if input { op.input(j) } else { op.output(j) };
            let ours = view.and_then(|o| digest(&o.data));
            self.compared += 1;
            if ours == Some(theirs) {
                self.equal += 1;
            } else if self.first.is_none() {
                self.first = Some(Difference {
                    run: self.run,
                    op: k,
                    opcode: op.opcode,
                    output: j,
                    input,
                    ours,
                    theirs,
                });
            }
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
