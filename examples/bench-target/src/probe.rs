//! The benchmark's hooks: per-op time (on a plan's first golden run) and TFLite Micro's
//! per-op digests (on every run).

use planner::rt::kernel::{Hooks, RunError, Tap};
use planner_kernels::KernelError;

use crate::timer;

#[path = "../../firmware-shared/digests.rs"]
mod digests;
use digests::Tally;

/// Most ops a plan may have; a plan with more is refused by `main` before it runs.
pub const MAX_OPS: usize = 512;

/// One plan of the benchmark (see build.rs): its model's stem, its kernel set's suffix, its
/// op count and the function that runs it.
pub struct Plan {
    pub model: &'static str,
    pub set: &'static str,
    pub ops: usize,
    pub run: fn(&mut Probe) -> Result<(), RunError<KernelError>>,
}

/// Times ops and compares their outputs with TFLite Micro's digests.
pub struct Probe {
    /// The run [`Probe::start_run`] started; its ops are timed when it is run 0.
    run: usize,
    want: &'static [(usize, usize, u64)],
    /// When the op that is running started, in ticks.
    started: u64,
    /// Ticks each op took on run 0 (less the reading's overhead).
    pub op_ticks: [u64; MAX_OPS],
    /// Each op's name, as `run()` gave it.
    pub opcodes: [&'static str; MAX_OPS],
    /// Ticks of the whole `run()` with no hooks.
    pub total: u64,
    overhead: u64,
    /// Outputs the digests hold, compared, and equal, and the first difference.
    pub tally: Tally,
}

impl Probe {
    /// A probe that subtracts `overhead` ticks (two back-to-back time readings) from every op.
    pub fn new(overhead: u64) -> Probe {
        Probe {
            run: 0,
            want: &[],
            started: 0,
            op_ticks: [0; MAX_OPS],
            opcodes: [""; MAX_OPS],
            total: 0,
            overhead,
            tally: Tally::default(),
        }
    }

    /// Starts golden run `run`, whose op outputs have the digests `want`.
    pub fn start_run(&mut self, run: usize, want: &'static [(usize, usize, u64)]) {
        self.run = run;
        self.want = want;
        self.tally.expected += want.len();
    }
}

impl Hooks for Probe {
    fn before_op(&mut self, _index: usize, _opcode: &'static str) {
        if self.run == 0 {
            self.started = timer::now();
        }
    }

    fn after_op(&mut self, index: usize, opcode: &'static str) {
        if self.run == 0 {
            let ticks = (timer::now() - self.started).saturating_sub(self.overhead);
            if let (Some(t), Some(o)) = (self.op_ticks.get_mut(index), self.opcodes.get_mut(index))
            {
                // Ops of a patch stage run once per patch: their patches add up.
                *t += ticks;
                *o = opcode;
            }
        }
    }

    fn tap(&mut self, op: &Tap<'_, '_>) {
        for &(_, j, theirs) in self.want.iter().filter(|w| w.0 == op.index) {
            self.tally.compare(self.run, op, j, false, theirs);
        }
    }
}
