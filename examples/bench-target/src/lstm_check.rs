//! On the board: random int8 `UNIDIRECTIONAL_SEQUENCE_LSTM` ops (build.rs,
//! `build/lstm_cases.rs`) through the reference and the optimized kernel sets, the optimized
//! one with the kernel scratch a plan for the optimized set gives the op and without it: the
//! outputs of two calls and both states after them, element for element. The optimized
//! LSTM's Helium and DSP loops run only here and in the models' runs; the cases' inputs and
//! unit counts are not multiples of the loops' blocks, and some inputs are longer than the
//! DSP path widens once per step.

use planner::rt::Quant;
use planner::rt::kernel::{In, Kernel, Out, UnidirectionalSequenceLstm};
use planner::rt::options::{Activation, UnidirectionalSequenceLstmOptions};
use planner_kernels::KernelError;
use planner_kernels::golden::SplitMix64;

use crate::selfcheck::{Mismatch, Stats, info, view};

mod cases {
    include!(concat!(env!("OUT_DIR"), "/lstm_cases.rs"));
}

/// Largest batch × steps × input, units, input weights per gate (see build/lstm_cases.rs).
const X: usize = 2 * 3 * 530;
const UNITS: usize = 13;
const WEIGHTS: usize = 2048;
/// Largest batch × units and batch × steps × units.
const STATE: usize = 2 * UNITS;
const Y: usize = 3 * STATE;

/// One case: the shapes of its input, weights, recurrent weights, biases, states, output
/// and kernel scratch; the quantisation of the input, the input and recurrent weights, the
/// hidden and the cell state; its options and the seed of its values.
pub struct Case {
    pub x: &'static [usize],
    pub w: &'static [usize],
    pub r: &'static [usize],
    pub b: &'static [usize],
    pub s: &'static [usize],
    pub y: &'static [usize],
    pub sums: &'static [usize],
    pub quant: [Quant; 5],
    pub time_major: bool,
    pub clip: f32,
    pub seed: u64,
}

/// A case's values.
struct Values {
    x: [i8; X],
    w: [[i8; WEIGHTS]; 4],
    r: [[i8; UNITS * UNITS]; 4],
    b: [[i32; UNITS]; 4],
    hidden: [i8; STATE],
    cell: [i16; STATE],
}

/// What one set computed: both calls' outputs, then the states after the second.
#[derive(PartialEq)]
struct Seen {
    y: [i8; 2 * Y],
    hidden: [i8; STATE],
    cell: [i16; STATE],
}

fn len(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Runs `case` twice with kernel set `k` (the states carried), with the kernel scratch of a
/// plan for the optimized set or without it.
fn run<K: Kernel<Error = KernelError> + UnidirectionalSequenceLstm>(
    k: &mut K,
    case: &Case,
    v: &Values,
    scratch: bool,
) -> Result<Seen, KernelError> {
    let [xq, wq, rq, hq, cq] = case.quant;
    let (xi, wi, ri) = (
        info::<i8>(case.x, Some(xq)),
        info::<i8>(case.w, Some(wq)),
        info::<i8>(case.r, Some(rq)),
    );
    let bi = info::<i32>(case.b, None);
    let (hi, ci) = (info::<i8>(case.s, Some(hq)), info::<i16>(case.s, Some(cq)));
    let yi = info::<i8>(case.y, Some(hq));
    let si = info::<i32>(case.sums, None);
    let (xl, wl, rl, ul, sl, yl) = (
        len(case.x),
        len(case.w),
        len(case.r),
        len(case.b),
        len(case.s),
        len(case.y),
    );
    let mut inputs = [None; 24];
    inputs[0] = Some(In::new(&v.x[..xl], &xi));
    for g in 0..4 {
        inputs[1 + g] = Some(In::new(&v.w[g][..wl], &wi));
        inputs[5 + g] = Some(In::new(&v.r[g][..rl], &ri));
        inputs[12 + g] = Some(In::new(&v.b[g][..ul], &bi));
    }
    inputs[18] = Some(In::variable(0, &hi));
    inputs[19] = Some(In::variable(1, &ci));
    let o = UnidirectionalSequenceLstmOptions {
        activation: Activation::Tanh,
        cell_clip: case.clip,
        time_major: case.time_major,
        ..Default::default()
    };
    let mut seen = Seen {
        y: [0x5a; 2 * Y],
        hidden: v.hidden,
        cell: v.cell,
    };
    // Garbage in the sums: the kernel must write them before it reads them.
    let mut sums = [0x5a5a_5a5ai32; 13 * UNITS];
    for call in 0..2 {
        let mut outputs = [Out::new(&mut seen.y[call * Y..call * Y + yl], &yi)];
        let mut variables = [
            Out::new(&mut seen.hidden[..sl], &hi),
            Out::new(&mut seen.cell[..sl], &ci),
        ];
        let mut kernel_scratch = [Out::new(&mut sums[..len(case.sums)], &si)];
        let scratch: &mut [Out<'_>] = if scratch {
            &mut kernel_scratch
        } else {
            &mut []
        };
        let op = view(&inputs, (&mut outputs, scratch, &mut variables));
        k.unidirectional_sequence_lstm(op, &o)?;
    }
    Ok(seen)
}

/// The case's values, drawn from its seed.
fn values(case: &Case, v: &mut Values) {
    let mut rng = SplitMix64(case.seed);
    let mut byte = || (rng.next_u64() >> 56) as u8 as i8;
    v.x.iter_mut().for_each(|x| *x = byte());
    v.w.iter_mut().flatten().for_each(|w| *w = byte());
    v.r.iter_mut().flatten().for_each(|r| *r = byte());
    v.hidden.iter_mut().for_each(|h| *h = byte());
    for b in v.b.iter_mut().flatten() {
        // Now and then over the whole range: sums whose double overflows `i32`, which
        // the DSP gate pass hands back to the general requantisation.
        let r = rng.next_u64();
        *b = if r.is_multiple_of(8) {
            (r >> 32) as i32
        } else {
            (r as i32) >> 17
        };
    }
    for c in &mut v.cell {
        *c = rng.next_u64() as i16;
    }
}

/// What a set computed, element by element (the first call's outputs, the second's, the
/// hidden state, the cell state).
fn elements(s: &Seen) -> impl Iterator<Item = i32> + '_ {
    let y = s.y.iter().chain(&s.hidden).map(|&e| i32::from(e));
    y.chain(s.cell.iter().map(|&e| i32::from(e)))
}

/// Runs every case through `reference` and `optimized` (with and without its kernel
/// scratch); what ran and the first difference (`element` counts the first call's outputs,
/// the second's, then the hidden and the cell state).
pub fn check<R, P>(reference: &mut R, optimized: &mut P) -> (Stats, Option<Mismatch>)
where
    R: Kernel<Error = KernelError> + UnidirectionalSequenceLstm,
    P: Kernel<Error = KernelError> + UnidirectionalSequenceLstm,
{
    let mut v = Values {
        x: [0; X],
        w: [[0; WEIGHTS]; 4],
        r: [[0; UNITS * UNITS]; 4],
        b: [[0; UNITS]; 4],
        hidden: [0; STATE],
        cell: [0; STATE],
    };
    let mut stats = Stats::default();
    for (n, case) in cases::LSTM_CASES.iter().enumerate() {
        stats.cases = n + 1;
        values(case, &mut v);
        let want = run(reference, case, &v, false);
        for scratch in [false, true] {
            let got = run(optimized, case, &v, scratch);
            let differ = match (&want, &got) {
                (Ok(a), Ok(b)) => elements(a)
                    .zip(elements(b))
                    .enumerate()
                    .find(|(_, (a, b))| a != b)
                    .map(|(i, (a, b))| (i, Ok(a as i8), Ok(b as i8))),
                (Err(a), Err(b)) if a == b => None,
                (a, b) => Some((
                    0,
                    a.as_ref().map(|_| 0).map_err(|e| *e),
                    b.as_ref().map(|_| 0).map_err(|e| *e),
                )),
            };
            if let Some(d) = differ {
                return (stats, Some(Mismatch::at(n, d)));
            }
        }
        match &want {
            Ok(s) => {
                let y = &s.y[..len(case.y)];
                stats.varied += usize::from(y.iter().any(|&e| e != y[0]));
            }
            Err(_) => stats.refused += 1,
        }
    }
    (stats, None)
}
