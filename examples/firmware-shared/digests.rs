//! TFLite Micro's per-op digests against the tensors a tap (`Hooks::tap`) shows: the counts
//! and the first difference, kept the same way by `firmware-m55`'s golden runs
//! (`src/golden.rs`) and `bench-target`'s probe (`src/probe.rs`). Each includes this file with
//! `#[path]`.

use planner::rt::kernel::Tap;
use planner_kernels::golden::digest;

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

/// As the failure lines print it: `run R op K (OPCODE) output J: fnv1a64 Some(..), TFLite
/// Micro's ..` (`input J` when `input`).
impl core::fmt::Display for Difference {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "run {} op {} ({}) {} {}: fnv1a64 {:016x?}, TFLite Micro's {:016x}",
            self.run,
            self.op,
            self.opcode,
            if self.input { "input" } else { "output" },
            self.output,
            self.ours,
            self.theirs
        )
    }
}

/// Outputs the digests hold, compared, and equal, and the first difference.
#[derive(Default)]
pub struct Tally {
    pub expected: usize,
    pub compared: usize,
    pub equal: usize,
    pub first: Option<Difference>,
}

impl Tally {
    /// Compares the FNV-1a 64 of tensor `j` of `op` (its input `j` when `input`, else its
    /// output `j`), in run `run`, with TFLite Micro's digest `theirs`.
    pub fn compare(&mut self, run: usize, op: &Tap<'_, '_>, j: usize, input: bool, theirs: u64) {
        let view = if input { op.input(j) } else { op.output(j) };
        let ours = view.and_then(|o| digest(&o.data));
        self.compared += 1;
        if ours == Some(theirs) {
            self.equal += 1;
        } else if self.first.is_none() {
            self.first = Some(Difference {
                run,
                op: op.index,
                opcode: op.opcode,
                output: j,
                input,
                ours,
                theirs,
            });
        }
    }

    /// True when every output the digests hold was compared and equal.
    pub fn passed(&self) -> bool {
        self.expected > 0 && self.compared == self.expected && self.equal == self.compared
    }
}
