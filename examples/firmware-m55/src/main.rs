//! planner's Cortex-M55 firmware example, for QEMU's `mps3-an547` machine.
//!
//! It runs the TFLM `hello_world` model (three int8 FULLY_CONNECTED layers) through the
//! per-op views `include_model!` generates, with scratch in DTCM spilling to SRAM, weights
//! read in place from the QSPI flash and the first layer's weights staged into DTCM at init;
//! prints sin(x) as the model computes it; then runs the canary over that model and every
//! bundled model that fits the board. Person detection and keyword spotting (DS-CNN) also run
//! end to end through their generated `run()` with the reference kernels, on the golden
//! inputs, and their outputs are compared with TFLite Micro's (`golden`). Keyword_scrambled
//! (with SVDF state) and DS-CNN keyword spotting then run back to back as a group from one
//! shared scratch arena (`run_group`). te_mcunet_vww planned in place and person detection
//! planned with patches run with the optimized kernels (`planner_kernels::Optimized`, its
//! Helium paths on this core), every op output against TFLite Micro's. Output and the exit
//! status go over semihosting: 0 when every check passed.

#![no_std]
#![no_main]

use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::{debug, hprintln};

mod golden;
mod pod;

/// The name the messages start with.
const NAME: &str = "firmware-m55";

#[path = "../../firmware-shared/semihost.rs"]
mod semihost;
use semihost::{exit, fail};

/// Set when a golden run's outputs differ from TFLite Micro's.
static GOLDEN_FAILED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// The models: an `include_model!` and a canary `Subject` each (see build.rs).
mod models {
    include!(concat!(env!("OUT_DIR"), "/models.rs"));
}

use models::hello_world;

#[entry]
fn main() -> ! {
    hprintln!(
        "firmware-m55: booted; {} models compiled in",
        models::MODELS
    );
    #[cfg(feature = "fault-selftest")]
    fault_selftest();
    let Some(model) = hello_world::Model::take() else {
        fail("the hello_world handle was taken before main")
    };
    // Zeroes persistent arenas and copies the staged weights from flash into DTCM.
    let mut model = model.init();
    report_arenas(&mut model);

    // A broken plan's views alias each other; only the canary runs on it.
    #[cfg(not(feature = "broken-plan"))]
    inference::sweep(&mut model);

    let mut failed = false;
    let result = planner_canary::run(&mut models::HelloWorldCanary(&mut model));
    failed |= report_canary(hello_world::MODEL, Some(result));
    models::canary_bundled(&mut |name, result| failed |= report_canary(name, result));
    failed |= run_group();
    failed |= run_app_bound();
    if run_whole() {
        GOLDEN_FAILED.store(true, core::sync::atomic::Ordering::Relaxed);
    }
    if run_patches() {
        GOLDEN_FAILED.store(true, core::sync::atomic::Ordering::Relaxed);
    }
    if run_lstm() {
        GOLDEN_FAILED.store(true, core::sync::atomic::Ordering::Relaxed);
    }
    if GOLDEN_FAILED.load(core::sync::atomic::Ordering::Relaxed) {
        fail("a golden run differs from TFLite Micro")
    }

    if failed {
        fail("a canary run failed")
    }
    hprintln!("firmware-m55: all checks passed");
    exit(debug::EXIT_SUCCESS)
}

/// The group run (see build.rs, `mod group`): two bundled models back to back from one
/// shared scratch arena, each checked against its golden outputs, and the first model's
/// state checked to survive the second model's run. True when it failed.
fn run_group() -> bool {
    let kept = models::run_group();
    if !kept {
        hprintln!("group: FAILED: the first model's state did not survive the second model's run");
    }
    !kept
}

/// hello_world from `models/app_bound.toml`: its SRAM scratch is `app_bound`, so the linker
/// fragment reserves no section for it and the firmware binds a buffer on this stack with
/// `from_buffers`; then the golden run. True when it failed.
fn run_app_bound() -> bool {
    #[repr(C, align(16))]
    struct Scratch([u8; models::APP_HELLO_SCRATCH]);
    let mut scratch = Scratch([0; models::APP_HELLO_SCRATCH]);
    let buffers = models::app_hello::Buffers {
        scratch_sram: &mut scratch.0,
    };
    let model = match models::app_hello::Handle::from_buffers(buffers) {
        Ok(m) => m,
        Err(e) => {
            hprintln!("app_hello: FAILED: from_buffers: {:?}", e);
            return true;
        }
    };
    let mut model = model.init();
    print_arenas(
        models::app_hello::MODEL,
        &models::app_hello::ARENAS,
        &model.arena_ptrs(),
    );
    // A difference or a run error is reported and fails the firmware (`GOLDEN_FAILED`).
    golden::report(
        models::app_hello::MODEL,
        models::golden_app_hello(&mut model),
    );
    false
}

/// A per-op plan whose ops all run on whole tensors (te_mcunet_vww in place,
/// `models/vww_in_place.toml`; tflm_person_detect_int8 with row overlap,
/// `models/person_rows.toml`), as build.rs lists it in `models::WHOLE`: the line's label,
/// what a failure suggests, the model, its scratch bytes, golden runs and folded PADs, and
/// its golden run (`models::run_<name>`).
pub struct WholePlan {
    label: &'static str,
    why: &'static str,
    model: &'static str,
    scratch: u64,
    runs: usize,
    folded: usize,
    run: fn(
        &mut golden::Digests,
    ) -> Result<bool, planner::rt::kernel::RunError<planner_kernels::KernelError>>,
}

/// Runs every plan of `models::WHOLE` with the optimized kernels (which run an op with row
/// overlap band by band on regions): every op's output hashed by a tap and compared with
/// TFLite Micro's per-op digests over the golden's runs, then the final output compared byte
/// for byte. Prints one line each; true when one failed.
fn run_whole() -> bool {
    let mut failed = false;
    for p in models::WHOLE {
        failed |= compare_ops(p.label, p.model, p.why, p.run, |tap, verdict| {
            hprintln!(
                "{} {}: {} scratch bytes; {} op outputs compared over {} runs ({} PADs folded), {} equal to TFLite Micro's; final output {}",
                p.label,
                p.model,
                p.scratch,
                tap.tally.compared,
                p.runs,
                p.folded,
                tap.tally.equal,
                verdict
            )
        });
    }
    failed
}

/// tflm_person_detect_int8 planned with `patches = "auto"` (`models/person_patches.toml`):
/// its first stage runs patch by patch; the split tensor (whole after the stage, read by
/// the first op after it) and every op output after the split hashed by a tap and compared
/// with TFLite Micro's per-op digests over the golden's runs, then the final output
/// compared byte for byte. Prints one line; true when it failed.
fn run_patches() -> bool {
    let model = models::person_patches::MODEL;
    let why = "; the kernel or the patch plan changed its bytes";
    compare_ops(
        "patches",
        model,
        why,
        models::run_person_patches,
        |tap, verdict| {
            hprintln!(
                "patches {}: {} op outputs compared over {} runs, {} equal to TFLite Micro's (split after op {}, grid {}x{}, scratch {} bytes); final output {}",
                model,
                tap.tally.compared,
                models::PERSON_PATCHES_RUNS.len(),
                tap.tally.equal,
                models::PERSON_PATCHES_SPLIT,
                models::PERSON_PATCHES_GRID[0],
                models::PERSON_PATCHES_GRID[1],
                models::PERSON_PATCHES_SCRATCH,
                verdict
            )
        },
    )
}

/// Runs `run` with a tap that hashes every op output and compares it with TFLite Micro's
/// digests, then prints `line` (given the tap and the final output's verdict) and, for
/// `what` of `model`, the failures with `why`; true when it failed.
fn compare_ops<E: core::fmt::Display>(
    what: &str,
    model: &str,
    why: &str,
    run: impl FnOnce(&mut golden::Digests) -> Result<bool, E>,
    line: impl FnOnce(&golden::Digests, &str),
) -> bool {
    let mut tap = golden::Digests::default();
    let (final_ok, error) = golden::outcome(run(&mut tap));
    line(&tap, if final_ok { "bit-exact" } else { "DIFFERS" });
    tap.report_failures(what, model, error, why);
    !(final_ok && tap.tally.passed())
}

/// hello_world inference through the op views (left out of the broken-plan test build,
/// whose views alias each other).
#[cfg(not(feature = "broken-plan"))]
mod inference {
    use cortex_m_semihosting::hprintln;
    use planner_kernels::{Activation, FullyConnected, Quant, Requantize};

    use crate::models::hello_world;

    /// Steps of the sin(x) sweep over [0, 2π] (as the host example: 21 points).
    const SWEEP: u32 = 20;

    /// Prints the model's sin(x) over [0, 2π].
    pub fn sweep(model: &mut hello_world::Model) {
        hprintln!("hello_world: sin(x) by the model, with its int8 input and output");
        hprintln!("sweep {:>8} {:>9} {:>5} {:>5}", "x", "model", "x_q", "y_q");
        for i in 0..=SWEEP {
            // The host example's sweep, to the bit.
            let x = i as f32 * core::f32::consts::TAU / SWEEP as f32;
            let (x_q, y_q, y) = infer(model, x);
            hprintln!("sweep {:>8.3} {:>9.4} {:>5} {:>5}", x, y, x_q, y_q);
        }
    }

    /// Runs the model on `x`: quantises it into the input tensor, runs the three layers through
    /// op views, and returns the quantised input, the int8 output and its real value.
    fn infer(model: &mut hello_world::Model, x: f32) -> (i8, i8, f32) {
        let input = hello_world::inputs::SERVING_DEFAULT_DENSE_INPUT_0;
        let x_q = input.quant.map_or(0, |q| q.quantize(x, 0, -128, 127)) as i8;
        model.input_serving_default_dense_input_0_mut()[0] = x_q;

        // Each op view has its own type: one `layer` call per op, its fused activation beside it.
        macro_rules! layers {
            ($($op:ident: $view:ident => $act:ident),*) => {$(
                let op = model.$op();
                let act = Activation::$act;
                layer::<hello_world::ops::$view<'_>>(act, op.input0, op.input1, op.input2, op.output0);
            )*};
        }
        layers!(op0: Op0 => Relu, op1: Op1 => Relu, op2: Op2 => None);

        let output = hello_world::outputs::DENSE_2;
        let y_q = model.output_dense_2()[0];
        let y = output
            .quant
            .map_or(0.0, |q| q.dequantize(i64::from(y_q), 0));
        (x_q, y_q, y)
    }

    /// What a FULLY_CONNECTED op view's tensors are, from the generated constants.
    trait FcOp {
        const IO: [planner::rt::TensorInfo<i8>; 3];
    }

    macro_rules! fc_op {
        ($($op:ident),*) => {
            $(impl FcOp for hello_world::ops::$op<'_> {
                const IO: [planner::rt::TensorInfo<i8>; 3] = [Self::INPUT0, Self::INPUT1, Self::OUTPUT0];
            })*
        };
    }
    fc_op!(Op0, Op1, Op2);

    /// One int8 FULLY_CONNECTED layer over an op view's slices, with the plan's quantisation.
    fn layer<Op: FcOp>(
        act: Activation,
        input: &[i8],
        filter: &[i8],
        bias: &[i32],
        output: &mut [i8],
    ) {
        let [i, f, o] = Op::IO;
        let quant = |t: &planner::rt::TensorInfo<i8>| {
            let (scale, zero_point) = t.params().unwrap_or((1.0, 0));
            Quant {
                scale,
                zero_point: zero_point as i32,
            }
        };
        let fc = FullyConnected {
            input: quant(&i),
            filter: quant(&f),
            output: quant(&o),
            activation: act,
            // The host example's arithmetic, so both print the same outputs.
            requantize: Requantize::Double,
        };
        let depth = f.shape.last().copied().unwrap_or(0);
        if let Err(e) = fc.run(depth, input, filter, Some(bias), output) {
            hprintln!(
                "hello_world: FULLY_CONNECTED {} -> {}: {:?}",
                i.name,
                o.name,
                e
            );
            crate::fail("a layer's tensors do not fit together")
        }
    }
}

/// Prints where each arena of the inference model is.
fn report_arenas(model: &mut hello_world::Model) {
    print_arenas(
        hello_world::MODEL,
        &hello_world::ARENAS,
        &model.arena_ptrs(),
    );
}

/// Prints one line per arena of `model`: its name and address.
fn print_arenas(model: &str, names: &[&str], ptrs: &[*mut u8]) {
    for (name, ptr) in names.iter().zip(ptrs) {
        hprintln!("{}: arena {} at {:p}", model, name, *ptr);
    }
}

/// Prints one canary result; true when it failed.
fn report_canary(
    model: &str,
    result: Option<Result<planner_canary::Summary, planner_canary::Failure>>,
) -> bool {
    match result {
        Some(Ok(s)) => {
            hprintln!(
                "canary {}: ok, {} ops, {} tensor checks, {} bytes checked, {} filled",
                model,
                s.ops,
                s.checks,
                s.bytes_checked,
                s.bytes_filled
            );
            false
        }
        Some(Err(f)) => {
            hprintln!("canary {}: FAILED: {}", model, f);
            true
        }
        None => {
            hprintln!("canary {}: FAILED: its handle was taken already", model);
            true
        }
    }
}

/// Reads an address no memory or device answers: a bus fault, escalated to HardFault.
#[cfg(feature = "fault-selftest")]
fn fault_selftest() {
    hprintln!("firmware-m55: reading 0xf000_0000 to fault on purpose");
    // SAFETY: the address is unmapped on mps3-an547, so the read faults before it returns
    // anything; nothing else is touched.
    let _ = unsafe { core::ptr::read_volatile(0xf000_0000 as *const u32) };
}

/// Any other exception or interrupt is unexpected in this firmware.
#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    hprintln!("firmware-m55: unexpected exception {}", irqn);
    exit(debug::EXIT_FAILURE)
}

/// The LSTM models (`models/mnist_lstm.toml`, `models/speech_lstm.toml`): each model's
/// per-op golden inputs in order on one handle, the LSTM's state carried from run to run,
/// every op's output hashed by a tap and compared with TFLite Micro's digests. Prints a
/// line per model; true when one failed.
fn run_lstm() -> bool {
    let mut failed = false;
    for &(model, run, runs) in models::LSTM_MODELS {
        let mut tap = golden::Digests::default();
        let result = run(&mut tap);
        hprintln!(
            "lstm {}: {} op outputs compared over {} runs (state carried), {} equal to TFLite Micro's",
            model,
            tap.tally.compared,
            runs,
            tap.tally.equal
        );
        tap.report_failures("lstm", model, result.as_ref().err(), "");
        failed |= !(result.is_ok() && tap.tally.passed());
    }
    failed
}
