//! On the board: random one-op cases of `ADD`, `SUB`, `MUL` (out of place and in place),
//! `QUANTIZE`, `PAD` and `MEAN` (build.rs, `build/elementwise_cases.rs`) through the
//! reference and the optimized kernel sets, output for output: the optimized set's own code
//! for these kinds (its requantisation runs in the DSP extension's assembly, its loops as
//! LLVM vectorises them for Helium) runs only here and in the models' runs.

use planner::rt::Quant;
use planner::rt::kernel::{In, Out};
use planner::rt::options::{self as o, Dims};
use planner_kernels::KernelError;
use planner_kernels::golden::SplitMix64;

use crate::selfcheck::{Kinds, Mismatch, Stats, compare, info, view};

mod cases {
    include!(concat!(env!("OUT_DIR"), "/elementwise_cases.rs"));
}

/// Largest tensor, in elements (see build/elementwise_cases.rs).
const MAX: usize = 4096;

/// A case's kind, with what its options need beyond the case's shapes.
pub enum Kind {
    Add,
    Sub,
    Mul,
    /// From int8.
    Quantize8,
    /// From int16.
    Quantize16,
    /// The elements before and after each dimension.
    Pad([i64; 4], [i64; 4]),
    /// The axes averaged (without keeping them).
    Mean(&'static [i64]),
}

/// One op: its kind, the shapes of its operands (the second unused but by the binary
/// kinds) and output, their quantisation, the fused activation (binary kinds), which input
/// the output takes over (0 none, 1 the first, 2 the second) and the seed of its values.
pub struct Case {
    pub kind: Kind,
    pub a: &'static [usize],
    pub b: &'static [usize],
    pub y: &'static [usize],
    pub quant: [Quant; 3],
    pub activation: o::Activation,
    pub in_place: u8,
    pub seed: u64,
}

/// A case's operand values (int8, and int16 for `QUANTIZE` from int16).
struct Values {
    a: [i8; MAX],
    b: [i8; MAX],
    wide: [i16; MAX],
}

fn len(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// A dimension list of case values (four at most: nothing is cut).
fn dims(v: &[i64]) -> Dims {
    let mut d = [0i32; 4];
    for (d, &v) in d.iter_mut().zip(v) {
        *d = v as i32;
    }
    Dims::new(&d[..v.len().min(4)]).unwrap_or(Dims::EMPTY)
}

/// Runs `case` with kernel set `k` into `y` (its elements: the output; for an in-place
/// case, first the operand it takes over).
fn run<K: Kinds>(k: &mut K, case: &Case, v: &Values, y: &mut [i8]) -> Result<(), KernelError> {
    let [qa, qb, qy] = case.quant;
    let (ai, bi, yi) = (
        info::<i8>(case.a, Some(qa)),
        info::<i8>(case.b, Some(qb)),
        info::<i8>(case.y, Some(qy)),
    );
    let wi = info::<i16>(case.a, Some(qa));
    let (al, bl) = (len(case.a), len(case.b));
    let (a, b) = (&v.a[..al], &v.b[..bl]);
    let mut inputs = [Some(In::new(a, &ai)), Some(In::new(b, &bi))];
    let binary = matches!(case.kind, Kind::Add | Kind::Sub | Kind::Mul);
    let in_place = binary && case.in_place > 0;
    if in_place {
        let i = usize::from(case.in_place - 1);
        y.copy_from_slice([a, b][i]);
        inputs[i] = Some(In::in_place(0, [&ai, &bi][i]));
    }
    let arity = match case.kind {
        Kind::Add | Kind::Sub | Kind::Mul => 2,
        _ => 1,
    };
    if let Kind::Quantize16 = case.kind {
        inputs[0] = Some(In::new(&v.wide[..al], &wi));
    }
    let mut outputs = [Out::new(y, &yi)];
    let op = view(&inputs[..arity], (&mut outputs, &mut [], &mut []));
    let add = o::AddOptions {
        activation: case.activation,
        pot_scale_int16: false,
    };
    let mul = o::MulOptions {
        activation: case.activation,
    };
    match (&case.kind, in_place) {
        (Kind::Add, false) => k.add(op, &add),
        (Kind::Add, true) => k.add_in_place(op, &add),
        (Kind::Sub, false) => k.sub(op, &add),
        (Kind::Sub, true) => k.sub_in_place(op, &add),
        (Kind::Mul, false) => k.mul(op, &mul),
        (Kind::Mul, true) => k.mul_in_place(op, &mul),
        (Kind::Quantize8 | Kind::Quantize16, _) => k.quantize(op, &o::NoOptions {}),
        (Kind::Pad(before, after), _) => k.pad(
            op,
            &o::PadOptions {
                before: dims(before),
                after: dims(after),
            },
        ),
        (Kind::Mean(axes), _) => k.mean(
            op,
            &o::MeanOptions {
                axes: dims(axes),
                keep_dims: false,
            },
        ),
    }
}

/// Runs every case through `reference` and `optimized`; what ran and the first difference.
pub fn check<R: Kinds, P: Kinds>(
    reference: &mut R,
    optimized: &mut P,
) -> (Stats, Option<Mismatch>) {
    let mut v = Values {
        a: [0; MAX],
        b: [0; MAX],
        wide: [0; MAX],
    };
    let (mut y0, mut y1) = ([0i8; MAX], [0i8; MAX]);
    let mut stats = Stats::default();
    for (n, case) in cases::ELEMENTWISE_CASES.iter().enumerate() {
        stats.cases = n + 1;
        let mut rng = SplitMix64(case.seed);
        let (al, bl, yl) = (len(case.a), len(case.b), len(case.y));
        for e in v.a[..al].iter_mut().chain(v.b[..bl].iter_mut()) {
            *e = (rng.next_u64() >> 56) as u8 as i8;
        }
        for e in &mut v.wide[..al] {
            *e = (rng.next_u64() >> 48) as u16 as i16;
        }
        y0[..yl].fill(0x5a);
        y1[..yl].fill(-0x5b);
        let r0 = run(reference, case, &v, &mut y0[..yl]);
        let r1 = run(optimized, case, &v, &mut y1[..yl]);
        if let Some(d) = compare(&mut stats, (r0, r1), (&y0[..yl], &y1[..yl])) {
            return (stats, Some(Mismatch::at(n, d)));
        }
    }
    (stats, None)
}
