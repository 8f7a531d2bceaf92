//! planner's on-target benchmark, for QEMU's `mps3-an547` (Cortex-M55) and `mps2-an386`
//! (Cortex-M4 with FPU) under `-icount shift=0`.
//!
//! Every bundled model is planned twice (build.rs): for the reference kernel set and for the
//! optimized one. Each plan runs TFLite Micro's golden inputs through `run_with()`: every op
//! output is hashed and compared with TFLite Micro's per-op digests, and on the first input
//! each op is timed with SysTick; then the first input runs once more through `run()` with
//! no hooks, timed as a whole. Ticks become instructions through a calibration loop of known
//! length. One line per plan and per op; `scripts/bench_target.sh` reads them. Exits with
//! status 0 when every digest was equal, 1 otherwise (semihosting).

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use models::Optimized;
use planner_kernels::Reference;

mod elementwise_check;
mod lstm_check;
mod probe;
mod selfcheck;
mod timer;

/// The name the messages start with.
const NAME: &str = "bench-target";

#[path = "../../firmware-shared/semihost.rs"]
mod semihost;
use semihost::{exit, fail};

/// The plans (see build.rs).
mod models {
    include!(concat!(env!("OUT_DIR"), "/models.rs"));
}

#[entry]
fn main() -> ! {
    let Some(p) = cortex_m::Peripherals::take() else {
        fail("the core peripherals were taken before main")
    };
    timer::start(p.SYST);
    let cal = timer::calibrate();
    hprintln!(
        "bench-target: {} on QEMU {}; calibration: {} instructions in {} ticks ({} MHz clock), time reading {} ticks",
        models::CORE,
        models::MACHINE,
        cal.instructions,
        cal.ticks,
        models::CLOCK_HZ / 1_000_000,
        cal.overhead
    );
    // The one-op checks: both sets on random ops, what each covers and what it compares.
    type Check = fn() -> (selfcheck::Stats, Option<selfcheck::Mismatch>);
    let checks: [(&str, &str, Check); 3] = [
        (
            "one-op cases of CONV_2D, DEPTHWISE_CONV_2D (in place too), FULLY_CONNECTED and SVDF",
            "the optimized set's outputs equal the reference set's",
            || selfcheck::check(&mut Reference, &mut Optimized::default()),
        ),
        (
            "int8 LSTM cases",
            "the optimized set's outputs and states equal the reference set's, with its kernel scratch and without",
            || lstm_check::check(&mut Reference, &mut Optimized::default()),
        ),
        (
            "one-op cases of ADD, SUB and MUL (in place too), QUANTIZE, PAD and MEAN",
            "the optimized set's outputs equal the reference set's",
            || elementwise_check::check(&mut Reference, &mut Optimized::default()),
        ),
    ];
    let mut failed = false;
    for (what, equal, check) in checks {
        let (stats, mismatch) = check();
        failed |= !checked(what, equal, &stats, mismatch);
    }
    for plan in models::PLANS {
        if plan.ops > probe::MAX_OPS {
            hprintln!(
                "plan {} {}: FAILED: {} ops, the probe holds {}",
                plan.model,
                plan.set,
                plan.ops,
                probe::MAX_OPS
            );
            failed = true;
            continue;
        }
        let mut probe = probe::Probe::new(cal.overhead);
        let result = (plan.run)(&mut probe);
        for k in 0..plan.ops {
            hprintln!(
                "op {} {} {} {} {} {}",
                models::CORE,
                plan.model,
                plan.set,
                k,
                probe.opcodes[k],
                cal.instructions(probe.op_ticks[k])
            );
        }
        let per_op: u64 = probe.op_ticks[..plan.ops].iter().sum();
        hprintln!(
            "bench {} {} {} instructions {} (ops {}) digests {}/{} equal of {}",
            models::CORE,
            plan.model,
            plan.set,
            cal.instructions(probe.total),
            cal.instructions(per_op),
            probe.tally.equal,
            probe.tally.compared,
            probe.tally.expected
        );
        if let Err(e) = result {
            hprintln!("plan {} {}: FAILED: {}", plan.model, plan.set, e);
            failed = true;
        }
        if let Some(d) = probe.tally.first {
            hprintln!("plan {} {}: FAILED: {}", plan.model, plan.set, d);
        }
        if !probe.tally.passed() {
            hprintln!(
                "plan {} {}: FAILED: {} of {} digests compared, {} equal",
                plan.model,
                plan.set,
                probe.tally.compared,
                probe.tally.expected,
                probe.tally.equal
            );
            failed = true;
        }
    }
    if failed {
        fail("a plan's op outputs differ from TFLite Micro's")
    }
    hprintln!("bench-target: every op output of every plan equal to TFLite Micro's");
    exit(debug::EXIT_SUCCESS)
}

/// Reports a check of the two kernel sets on random cases (`what`; `equal` says what held);
/// true when it passed: no difference, most cases ran (at most a quarter refused by both
/// sets alike) and most that ran gave outputs that vary, or the comparison shows nothing.
fn checked(
    what: &str,
    equal: &str,
    stats: &selfcheck::Stats,
    mismatch: Option<selfcheck::Mismatch>,
) -> bool {
    let ran = stats.cases - stats.refused;
    match mismatch {
        None if stats.varied * 4 >= ran * 3 && stats.refused * 4 <= stats.cases => {
            hprintln!(
                "check {}: {} {what} ({} with varied outputs, {} refused by both sets alike), {equal}",
                models::CORE,
                stats.cases,
                stats.varied,
                stats.refused
            );
            true
        }
        None => {
            hprintln!(
                "check {}: FAILED: of {} {what} only {} gave varied outputs ({} refused); the comparison proves too little",
                models::CORE,
                stats.cases,
                stats.varied,
                stats.refused
            );
            false
        }
        Some(m) => {
            hprintln!(
                "check {}: FAILED: {what}: case {} element {}: reference {:?}, optimized {:?}",
                models::CORE,
                m.case,
                m.element,
                m.reference,
                m.optimized
            );
            false
        }
    }
}
