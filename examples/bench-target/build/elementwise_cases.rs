//! Random one-op cases of the other kinds the optimized set has its own code for, for the
//! firmware's check (`src/elementwise_check.rs`): `ADD`, `SUB` and `MUL` with broadcast
//! operands, out of place and in place, every fused activation; `QUANTIZE` from int8 and
//! int16 to int8 over lengths across its runs of values; `PAD` of rows and columns (now and
//! then the batch or the channels); `MEAN` over neighbouring axes and axes apart. Written as
//! `static` shapes and quantisation (a view's are `&'static`), the values drawn at run time
//! from each case's seed.

use std::fmt::Write as _;

use super::cases::Rng;

/// Largest tensor the firmware's buffers hold, in elements.
pub const MAX: i64 = 4096;

fn list(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

fn float(x: f32) -> String {
    format!("f32::from_bits(0x{:08x})", x.to_bits())
}

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
    let operand = |rng: &mut Rng| -> Vec<i64> {
        match rng.range(0, 4) {
            0 => vec![last],
            1 => {
                let mut s = vec![1; rank];
                s[rank - 1] = last;
                s
            }
            2 => shape
                .iter()
                .map(|&d| if rng.next().is_multiple_of(2) { 1 } else { d })
                .collect(),
            _ => shape.clone(),
        }
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
    Drawn {
        kind: if wide { "Quantize16" } else { "Quantize8" }.to_string(),
        shapes: [vec![n], vec![0], vec![n]],
        quants: [
            (rng.scale(0.00005, 0.5), x_zero),
            (1.0, 0),
            (rng.scale(0.001, 0.2), rng.zero()),
        ],
        activation: "None",
        in_place: 0,
    }
}

/// `PAD` of an NHWC tensor's rows and columns, now and then its batch or channels too.
fn pad(rng: &mut Rng) -> Drawn {
    let x = vec![
        rng.range(1, 2),
        rng.range(1, 7),
        rng.range(1, 7),
        rng.range(1, 9),
    ];
    let mut before = [0, rng.range(0, 3), rng.range(0, 3), 0];
    let mut after = [0, rng.range(0, 3), rng.range(0, 3), 0];
    if rng.next().is_multiple_of(5) {
        let d = rng.pick(&[0usize, 3]);
        (before[d], after[d]) = (rng.range(0, 2), rng.range(0, 2));
    }
    let y: Vec<i64> = (0..4).map(|d| x[d] + before[d] + after[d]).collect();
    // PAD keeps the quantisation: the output's is the input's.
    let q = (rng.scale(0.01, 0.1), rng.zero());
    Drawn {
        kind: format!("Pad([{}], [{}])", list(&before), list(&after)),
        shapes: [x, vec![0], y],
        quants: [q, (1.0, 0), q],
        activation: "None",
        in_place: 0,
    }
}

/// `MEAN` over a run of neighbouring axes (the fast path), in any spelling, or axes apart.
fn mean(rng: &mut Rng) -> Drawn {
    let x = vec![
        rng.range(1, 2),
        rng.range(1, 9),
        rng.range(1, 9),
        rng.range(1, 48),
    ];
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
    let q = |rng: &mut Rng| (rng.scale(0.005, 0.1), rng.zero());
    Drawn {
        kind: format!("Mean(&[{}])", list(axes)),
        shapes: [x, vec![0], kept],
        quants: [q(rng), (1.0, 0), q(rng)],
        activation: "None",
        in_place: 0,
    }
}

/// `count` cases drawn from `seed`, as Rust: `pub static ELEMENTWISE_CASES:
/// &[crate::elementwise_check::Case]`.
pub fn rust(seed: u64, count: usize) -> String {
    let mut rng = Rng(seed);
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
        for (name, v) in ["A", "B", "Y"].iter().zip(&d.shapes) {
            let _ = writeln!(
                items,
                "static {name}{n}: [usize; {}] = [{}];",
                v.len(),
                list(v)
            );
        }
        for (q, (scale, zero)) in ["AQ", "BQ", "YQ"].iter().zip(d.quants) {
            let _ = writeln!(
                items,
                "static {q}S{n}: [f32; 1] = [{}];\nstatic {q}Z{n}: [i64; 1] = [{zero}];",
                float(scale)
            );
        }
        let quant = |q: &str| format!("Quant {{ scale: &{q}S{n}, zero_point: &{q}Z{n}, axis: 0 }}");
        let _ = writeln!(
            s,
            "    crate::elementwise_check::Case {{ kind: crate::elementwise_check::Kind::{}, a: &A{n}, b: &B{n}, y: &Y{n}, quant: [{}, {}, {}], activation: o::Activation::{}, in_place: {}, seed: {} }},",
            d.kind,
            quant("AQ"),
            quant("BQ"),
            quant("YQ"),
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
