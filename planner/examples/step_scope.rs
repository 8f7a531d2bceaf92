//! A step scope for pre-processing: int8 filter-bank features from a synthetic audio clip.
//!
//! Each frame of audio is one step: the step copies the frame, windows it, takes its power
//! spectrum, sums it into mel bands and quantises the log energies to int8, every buffer from
//! one slab. Only the int8 features survive the step, through `retain`; the slab is reset at
//! the end of each step, so the whole clip runs in one frame's worth of scratch.
//!
//! The clip runs twice: first on a slab that is too small on purpose, which shows the
//! overflow figures, then on a slab of exactly the size the first run said it needs.
//!
//! ```text
//! cargo run -p planner --example step_scope
//! ```

use std::error::Error;
use std::f32::consts::PI;
use std::mem::MaybeUninit;
use std::process::ExitCode;

use planner::rt::slab::Slab;

const SAMPLE_RATE: usize = 16_000;
/// 40 ms frames every 20 ms: 49 frames in one second, the usual keyword-spotting input.
const FRAME: usize = 640;
const HOP: usize = 320;
const FRAMES: usize = (SAMPLE_RATE - FRAME) / HOP + 1;
/// Power-spectrum bins 0..=FRAME/2.
const BINS: usize = FRAME / 2 + 1;
const BANDS: usize = 40;
/// The slab of the first run: big enough for the frame and the windowed frame, too small for
/// the spectrum.
const TOO_SMALL: usize = 4096;

/// The bytes the slabs are carved from, aligned like a planned arena (16 bytes) so the
/// figures do not depend on where the stack puts it.
#[repr(C, align(16))]
struct Region([MaybeUninit<u8>; 8192]);

/// What every step reads and never changes: computed once, outside the slab.
struct Tables {
    window: [f32; FRAME],
    cos: [f32; FRAME],
    sin: [f32; FRAME],
    /// Band `b` rises from bin `edges[b]` to `edges[b + 1]` and falls to `edges[b + 2]`.
    edges: [f32; BANDS + 2],
}

impl Tables {
    fn new() -> Tables {
        let turn = |i: usize| 2.0 * PI * i as f32 / FRAME as f32;
        let mel = |hz: f32| 2595.0 * (1.0 + hz / 700.0).log10();
        let hz = |mel: f32| 700.0 * (10f32.powf(mel / 2595.0) - 1.0);
        let (low, high) = (mel(20.0), mel(SAMPLE_RATE as f32 / 2.0));
        Tables {
            window: std::array::from_fn(|i| 0.5 - 0.5 * turn(i).cos()),
            cos: std::array::from_fn(|i| turn(i).cos()),
            sin: std::array::from_fn(|i| turn(i).sin()),
            edges: std::array::from_fn(|e| {
                hz(low + (high - low) * e as f32 / (BANDS + 1) as f32) * FRAME as f32
                    / SAMPLE_RATE as f32
            }),
        }
    }
}

/// One second of a 440 Hz tone, a 1.5 kHz tone that fades in, and a little noise.
fn synthetic_audio() -> Vec<i16> {
    let mut seed = 0x2545_f491_u32;
    (0..SAMPLE_RATE)
        .map(|n| {
            let t = n as f32 / SAMPLE_RATE as f32;
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let noise = (seed >> 16) as f32 / 65_536.0 - 0.5;
            let x = 6000.0 * (2.0 * PI * 440.0 * t).sin()
                + 4000.0 * t * (2.0 * PI * 1500.0 * t).sin()
                + 300.0 * noise;
            x as i16
        })
        .collect()
}

/// One step: the int8 features of `samples` (one frame), written to `out`.
fn features(
    s: &Slab<'_>,
    tables: &Tables,
    samples: &[i16],
    out: &mut [i8; BANDS],
) -> Result<(), Box<dyn Error>> {
    // Ask for every buffer before touching any: on a slab that is too small, the step's
    // whole demand is then recorded in `needed`, not only the requests up to the first
    // failure, so one run says the size the slab must have.
    let frame = s.alloc_copy(samples);
    let windowed = s.alloc::<f32>(FRAME);
    let power = s.alloc::<f32>(BINS);
    let bands = s.alloc::<f32>(BANDS);
    let quantised = s.alloc::<i8>(BANDS);
    let (frame, windowed, power, bands, quantised) =
        (frame?, windowed?, power?, bands?, quantised?);

    // Pre-emphasis, then the Hann window.
    let mut previous = 0.0;
    for ((w, &x), &h) in windowed.iter_mut().zip(frame.iter()).zip(&tables.window) {
        let x = f32::from(x);
        *w = (x - 0.97 * previous) * h;
        previous = x;
    }
    for (k, p) in power.iter_mut().enumerate() {
        let (mut re, mut im) = (0.0f32, 0.0f32);
        for (n, &x) in windowed.iter().enumerate() {
            let m = (k * n) % FRAME;
            re += x * tables.cos[m];
            im -= x * tables.sin[m];
        }
        *p = re * re + im * im;
    }
    for (b, energy) in bands.iter_mut().enumerate() {
        let [left, centre, right] = [tables.edges[b], tables.edges[b + 1], tables.edges[b + 2]];
        *energy = power
            .iter()
            .enumerate()
            .map(|(k, &p)| {
                let k = k as f32;
                let weight = if k <= centre {
                    (k - left) / (centre - left)
                } else {
                    (right - k) / (right - centre)
                };
                p * weight.max(0.0)
            })
            .sum();
    }
    // ln(energy) spans about 0..32 here: 8 steps per unit fills the int8 range.
    for (q, &e) in quantised.iter_mut().zip(bands.iter()) {
        *q = ((e + 1.0).ln() * 8.0 - 128.0).round().clamp(-128.0, 127.0) as i8;
    }
    s.retain(quantised, out)?;
    Ok(())
}

/// Runs every frame of `audio` as one step on `slab`; returns how many steps failed and the
/// first failure.
fn run(
    slab: &mut Slab<'_>,
    tables: &Tables,
    audio: &[i16],
    out: &mut [[i8; BANDS]; FRAMES],
) -> (usize, Option<(usize, String)>) {
    let mut failed = 0;
    let mut first = None;
    for (i, row) in out.iter_mut().enumerate() {
        let samples = &audio[i * HOP..i * HOP + FRAME];
        if let Err(e) = slab.scope(|s| features(s, tables, samples, row)) {
            failed += 1;
            first.get_or_insert((i, e.to_string()));
        }
    }
    (failed, first)
}

fn print_figures(slab: &Slab<'_>) {
    println!(
        "  high water {} bytes, needed {} bytes, overflow {} bytes, {} failed allocations",
        slab.high_water(),
        slab.needed(),
        slab.overflow(),
        slab.failed_allocations()
    );
}

fn main() -> ExitCode {
    let audio = synthetic_audio();
    let tables = Tables::new();
    let mut region = Region([MaybeUninit::uninit(); 8192]);
    let mut out = [[0i8; BANDS]; FRAMES];
    println!(
        "{FRAMES} frames of {FRAME} samples (hop {HOP}) from 1 s of synthetic {SAMPLE_RATE} Hz \
         audio, {BANDS} int8 features each"
    );

    println!("run 1: a slab of {TOO_SMALL} bytes, too small on purpose");
    let mut slab = Slab::new(&mut region.0[..TOO_SMALL]);
    let (failed, first) = run(&mut slab, &tables, &audio, &mut out);
    println!("  {failed} of {FRAMES} steps failed");
    if let Some((frame, message)) = first {
        println!("  first failure, frame {frame}: {message}");
    }
    print_figures(&slab);
    let needed = slab.needed();
    if needed > region.0.len() {
        eprintln!(
            "error: the steps need {needed} bytes, the example's region holds {}; \
             raise the size of `Region`",
            region.0.len()
        );
        return ExitCode::FAILURE;
    }

    println!("run 2: a slab of {needed} bytes, the size run 1 said is needed");
    let mut slab = Slab::new(&mut region.0[..needed]);
    let (failed, first) = run(&mut slab, &tables, &audio, &mut out);
    println!("  {failed} of {FRAMES} steps failed");
    print_figures(&slab);
    if let Some((frame, message)) = first {
        eprintln!("error: frame {frame} failed on a slab of the needed size: {message}");
        return ExitCode::FAILURE;
    }
    for (i, row) in out.iter().enumerate().step_by(16) {
        println!("  frame {i:2} features[..12] = {:?}", &row[..12]);
    }
    let checksum: i64 = out.iter().flatten().map(|&q| i64::from(q)).sum();
    println!("  sum of all {} features = {checksum}", FRAMES * BANDS);
    ExitCode::SUCCESS
}
