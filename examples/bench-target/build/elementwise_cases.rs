//! Random one-op cases of the other kinds the optimized set has its own code for, for the
//! firmware's check (`src/elementwise_check.rs`): `ADD`, `SUB` and `MUL` with broadcast
//! operands, out of place and in place, every fused activation; `QUANTIZE` from int8 and
//! int16 to int8 over lengths across its runs of values; `PAD` of rows and columns (now and
//! then the batch or the channels); `MEAN` over neighbouring axes and axes apart. Written as
//! `static` shapes and quantisation (a view's are `&'static`), the values drawn at run time
//! from each case's seed.

use std::fmt::Write as _;

use super::cases::{Rng, list, statics};

/// Largest tensor the firmware's buffers hold, in elements.
pub const MAX: i64 = 4096;

/// A case before it is written: its kind (as Rust), operand and output shapes, the
/// operands' and output's quantisation, its activation and which input the output takes
/// over (0 none, 1 the first, 2 the second).
struct Drawn {
    kind: String,
    shapes: [Vec<i64>; 3],
    quants: [(f32, i64); 3],
    activation: &'static str,
    in_place: u8,
}

/// `ADD`, `SUB` or `MUL` of an operand of the output's shape, a row of its last dimension
/// (with or without leading ones) or another broadcast, with each.
fn binary(rng: &mut Rng) -> Drawn {
    let rank = rng.range(1, 4) as usize;
    let mut shape: Vec<i64> = (0..rank).map(|_| rng.range(1, 7)).collect();
    // A last dimension across the vector and DSP loops' widths, now and then a long one.
    let (short, long) = (rng.range(1, 7), rng.range(1, 40));
    shape[rank - 1] = rng.pick(&[short, long, 64]);
    let last = shape[rank - 1];
    // An operand of the output's shape, a row of its last dimension with or without
    // leading ones, or another broadcast.
    let operand = |rng: &mut Rng| match rng.range(0, 4) {
        0 => vec![last],
        1 => [vec![1; rank - 1], vec![last]].concat(),
        2 => shape
            .iter()
            .map(|&d| [1, d][rng.range(0, 1) as usize])
            .collect(),
        _ => shape.clone(),
    };
    let (a, b) = (operand(rng), operand(rng));
    let kind = rng.pick(&["Add", "Sub", "Mul"]);
    let q = |rng: &mut Rng| (rng.scale(0.01, 0.2), rng.zero());
    let (qa, qb, mut qy) = (q(rng), q(rng), q(rng));
    if kind == "Mul" {
        // Products reach 2^14 in the inputs' units: a coarser output.
        qy.0 *= qa.0 * qb.0 * 2000.0;
    }
    let activation = rng.pick(&["None", "Relu", "Relu6", "ReluN1To1"]);
    let in_place = match rng.range(0, 2) {
        0 if a == shape => 1,
        1 if b == shape => 2,
        _ => 0,
    };
    Drawn {
        kind: kind.to_string(),
        shapes: [a, b, shape],
        quants: [qa, qb, qy],
        activation,
        in_place,
    }
}

impl Drawn {
    /// A one-input kind's case: `x` in, `y` out (the second operand unused).
    fn unary(
        kind: String,
        (x, qx): (Vec<i64>, (f32, i64)),
        (y, qy): (Vec<i64>, (f32, i64)),
    ) -> Drawn {
        Drawn {
            kind,
            shapes: [x, vec![0], y],
            quants: [qx, (1.0, 0), qy],
            activation: "None",
            in_place: 0,
        }
    }
}

/// `QUANTIZE` of `n` int8 or int16 values (int16 zero points at the type's ends too).
fn quantize(rng: &mut Rng) -> Drawn {
    let n = rng.range(1, 200);
    let wide = rng.next().is_multiple_of(2);
    let x_zero = if wide {
        let any = rng.range(-32768, 32767);
        rng.pick(&[0, -32768, 32767, any])
    } else {
        rng.zero()
    };
    let kind = if wide { "Quantize16" } else { "Quantize8" };
    let qx = (rng.scale(0.00005, 0.5), x_zero);
    // Half the time an output scale the input's range spans (varied outputs), else any
    // (mostly saturated: the clamp).
    let span = if wide { 256.0 } else { 1.0 };
    let y_scale = if rng.next().is_multiple_of(2) {
        qx.0 * span * rng.scale(0.5, 4.0)
    } else {
        rng.scale(0.001, 0.2)
    };
    Drawn::unary(
        kind.to_string(),
        (vec![n], qx),
        (vec![n], (y_scale, rng.zero())),
    )
}

/// An NHWC shape, each dimension from 1 to its bound.
fn nhwc(rng: &mut Rng, bounds: [i64; 4]) -> Vec<i64> {
    bounds.map(|hi| rng.range(1, hi)).to_vec()
}

/// `PAD` of an NHWC tensor's rows and columns, now and then its batch or channels too.
fn pad(rng: &mut Rng) -> Drawn {
    let x = nhwc(rng, [2, 7, 7, 9]);
    let mut before = [0, rng.range(0, 3), rng.range(0, 3), 0];
    let mut after = [0, rng.range(0, 3), rng.range(0, 3), 0];
    if rng.next().is_multiple_of(5) {
        let d = rng.pick(&[0usize, 3]);
        (before[d], after[d]) = (rng.range(0, 2), rng.range(0, 2));
    }
    let y: Vec<i64> = (0..4).map(|d| x[d] + before[d] + after[d]).collect();
    // PAD keeps the quantisation: the output's is the input's.
    let q = (rng.scale(0.01, 0.1), rng.zero());
    Drawn::unary(
        format!("Pad([{}], [{}])", list(&before), list(&after)),
        (x, q),
        (y, q),
    )
}

/// `MEAN` over a run of neighbouring axes (the fast path), in any spelling, or axes apart.
fn mean(rng: &mut Rng) -> Drawn {
    let x = nhwc(rng, [2, 9, 9, 48]);
    let axes: &[i64] = rng.pick(&[
        &[1, 2][..],
        &[2, 1],
        &[-3, -2, 1],
        &[1],
        &[2],
        &[-1],
        &[3, 1, 2],
        &[0, 1],
        &[0, 3],
    ]);
    let kept: Vec<i64> = (0..4)
        .filter(|d| !axes.iter().any(|&a| (a + 4) % 4 == *d))
        .map(|d| x[d as usize])
        .collect();
    // A finer output scale whose zero point matches the input's: means of random values
    // lie near the middle, and the finer scale spreads them over int8 rather than
    // saturating.
    let (x_scale, x_zero, ratio) = (
        rng.scale(0.005, 0.1),
        rng.range(-20, 20),
        rng.scale(1.5, 6.0),
    );
    let y = (x_scale / ratio, (x_zero as f32 * ratio).round() as i64);
    Drawn::unary(
        format!("Mean(&[{}])", list(axes)),
        (x, (x_scale, x_zero)),
        (kept, y),
    )
}

/// `count` cases drawn from `seed`, as Rust: `pub static ELEMENTWISE_CASES:
/// &[crate::elementwise_check::Case]`.
pub fn rust(seed: u64, count: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut s =
        String::from("// @generated by bench-target's build.rs (build/elementwise_cases.rs)\n");
    let mut items = String::new();
    let mut n = 0;
    while n < count {
        let d = match rng.range(0, 5) {
            0 | 1 => binary(&mut rng),
            2 => quantize(&mut rng),
            3 => pad(&mut rng),
            _ => mean(&mut rng),
        };
        if d.shapes.iter().any(|v| v.iter().product::<i64>() > MAX) {
            continue;
        }
        let [a, b, y] = d.shapes.each_ref().map(|v| &v[..]);
        let quants: Vec<_> = ["AQ", "BQ", "YQ"].into_iter().zip(d.quants).collect();
        let q = statics(&mut items, n, &[("A", a), ("B", b), ("Y", y)], &quants);
        let _ = writeln!(
            s,
            "    crate::elementwise_check::Case {{ kind: crate::elementwise_check::Kind::{}, a: &A{n}, b: &B{n}, y: &Y{n}, quant: [{}], activation: o::Activation::{}, in_place: {}, seed: {} }},",
            d.kind,
            q.join(", "),
            d.activation,
            d.in_place,
            rng.next()
        );
        n += 1;
    }
    format!(
        "{items}\nuse planner::rt::Quant;\nuse planner::rt::options as o;\n\n/// The cases.\npub static ELEMENTWISE_CASES: &[crate::elementwise_check::Case] = &[\n{s}];\n"
    )
}
