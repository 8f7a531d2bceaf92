//! The inner loops against naive loops of their contracts, on random sizes (`k` and the
//! channels not multiples of 4, 8 or 16; 1 to 40 rows), strides, values and constants
//! (extreme multipliers and shifts, clamps): an architecture's version of `mac` is checked
//! by the same tests.

extern crate std;

use std::string::String;
use std::vec::Vec;
use std::{format, vec};

use super::{
    Channel, DwGeometry, Mbqm, Requant, Scalar, Taps, depthwise_s8, dot_n, gemm_s8, portable_dot_n,
    portable_sums, sums,
};
use crate::optimized::tests::Rng;
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier};

/// Random per-channel constants for `n` channels: biases, multipliers in `[2^30, 2^31)`
/// (or 0), shifts from -31 to 8, a zero point and a clamp.
struct Consts {
    bias: Vec<i32>,
    mult: Vec<i32>,
    shift: Vec<i32>,
    out_zero: i32,
    lo: i32,
    hi: i32,
}

impl Consts {
    fn random(r: &mut Rng, n: usize, k: usize) -> Consts {
        let lo = r.range(-128, 0) as i32;
        Consts {
            bias: r.i32s(n, -200_000, 200_000),
            mult: (0..n)
                .map(|_| {
                    if r.one_in(20) {
                        0
                    } else {
                        r.range(1 << 30, (1 << 31) - 1) as i32
                    }
                })
                .collect(),
            // Accumulators reach about k · 2^14: shifts that bring them to the int8 range,
            // and now and then ones that saturate or vanish.
            shift: (0..n)
                .map(|_| {
                    let fit = -((k.max(1) as f64).log2() as i64 + 8);
                    (fit + r.range(-4, 4)).clamp(-31, 8) as i32
                })
                .collect(),
            out_zero: r.range(-128, 127) as i32,
            lo,
            hi: r.range(i64::from(lo), 127) as i32,
        }
    }

    fn q(&self) -> Requant<'_> {
        Requant {
            bias: &self.bias,
            mult: &self.mult,
            shift: &self.shift,
            out_zero: self.out_zero,
            lo: self.lo,
            hi: self.hi,
        }
    }

    /// The contract's requantisation of channel `c`'s sum.
    fn naive(&self, acc: i32, c: usize) -> i8 {
        let m = QuantizedMultiplier {
            multiplier: self.mult[c],
            shift: self.shift[c],
        };
        multiply_by_quantized_multiplier(acc.wrapping_add(self.bias[c]), m)
            .saturating_add(self.out_zero)
            .clamp(self.lo, self.hi) as i8
    }
}

/// 400 random cases from `seed`: `case(r)` draws one and returns what the function under
/// test wrote, what its contract says, and the case's sizes; the two must be equal, and more
/// than 300 of the cases must have outputs that are not all one value.
fn contract_cases(seed: u64, mut case: impl FnMut(&mut Rng) -> (Vec<i8>, Vec<i8>, String)) {
    let mut r = Rng::new(seed);
    let mut varied = 0;
    for i in 0..400 {
        let (got, want, sizes) = case(&mut r);
        assert_eq!(got, want, "case {i}: {sizes}");
        varied += usize::from(want.iter().any(|&v| v != want[0]));
    }
    assert!(varied > 300, "{varied} cases varied");
}

#[test]
fn gemm_s8_is_its_contract() {
    contract_cases(0x6E33, |r| {
        let rows = r.size(1, 40);
        let k = if r.one_in(10) {
            r.size(0, 3)
        } else {
            r.size(1, 150)
        };
        let cols = r.size(1, 37);
        let x_stride = k + r.size(0, 9);
        let y_stride = cols + r.size(0, 5);
        let x = r.i8s((rows - 1) * x_stride + k);
        let w = r.i8s(cols * k);
        let c = Consts::random(r, cols, k);
        let sentinel = 0x5A;
        let mut y = vec![sentinel; (rows - 1) * y_stride + cols + 3];
        gemm_s8(&x, x_stride, rows, &w, k, &c.q(), &mut y, y_stride);
        let mut want = vec![sentinel; y.len()];
        for row in 0..rows {
            for col in 0..cols {
                let acc = (0..k).fold(0i32, |a, i| {
                    a.wrapping_add(i32::from(x[row * x_stride + i]) * i32::from(w[col * k + i]))
                });
                want[row * y_stride + col] = c.naive(acc, col);
            }
        }
        (y, want, format!("rows {rows} k {k} cols {cols}"))
    });
}

#[test]
fn depthwise_s8_is_its_contract() {
    contract_cases(0xD35, |r| {
        let n = r.size(1, 40);
        let ch = r.size(1, 70);
        let (fh, fw) = (r.size(1, 7), r.size(1, 7));
        // Input pixels of at least `ch` channels, rows of at least the window's width.
        let pixel = ch + r.size(0, 5);
        let (stride, dil) = (r.size(1, 3), r.size(1, 2));
        let g = DwGeometry {
            fh,
            fw,
            tap_col: dil * pixel,
            x_step: stride * pixel,
            tap_row: r.size(1, 2) * ((n - 1) * stride + (fw - 1) * dil + 1 + r.size(0, 3)) * pixel,
            w_tap: ch + r.size(0, 6),
            y_step: ch + r.size(0, 4),
        };
        let x = r.i8s((n - 1) * g.x_step + (fh - 1) * g.tap_row + (fw - 1) * g.tap_col + ch);
        let w = r.i8s((fh * fw - 1) * g.w_tap + ch);
        let c = Consts::random(r, ch, fh * fw);
        let sentinel = -0x33;
        let mut y = vec![sentinel; (n - 1) * g.y_step + ch + 2];
        depthwise_s8(&x, &g, n, &w, &c.q(), &mut y);
        let mut want = vec![sentinel; y.len()];
        for j in 0..n {
            for ci in 0..ch {
                let mut acc = 0i32;
                for ty in 0..fh {
                    for tx in 0..fw {
                        let xv = x[j * g.x_step + ty * g.tap_row + tx * g.tap_col + ci];
                        let wv = w[(ty * fw + tx) * g.w_tap + ci];
                        acc = acc.wrapping_add(i32::from(xv) * i32::from(wv));
                    }
                }
                want[j * g.y_step + ci] = c.naive(acc, ci);
            }
        }
        (y, want, format!("n {n} ch {ch} {g:?}"))
    });
}

#[test]
fn short_slices_write_nothing_past_them() {
    // A contract broken by the caller: the portable version returns without writing (and
    // asserts in debug builds, so only the release behaviour is checked there).
    if cfg!(debug_assertions) {
        return;
    }
    let c = Consts::random(&mut Rng::new(1), 3, 4);
    let mut y = vec![7i8; 6];
    gemm_s8(&[1; 7], 4, 2, &[1; 12], 4, &c.q(), &mut y, 3);
    assert_eq!(y, [7; 6]);
}

/// One of `edges` one time in `n`, else any `i32`.
fn edge_or_any(r: &mut Rng, edges: &[i32], n: u64) -> i32 {
    if r.one_in(n) {
        edges[r.size(0, edges.len() - 1)]
    } else {
        r.range(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }
}

#[test]
fn the_unpacked_requantisation_is_multiply_by_quantized_multiplier() {
    // Every shift TFLite gives and beyond (left shifts past 31 act as 31, as in the
    // reference), extreme multipliers (negative ones and i32::MIN included: a prepared
    // tensor may hold anything), extreme accumulators and biases.
    let mut r = Rng::new(0x5C41E);
    let edges = [
        i32::MIN,
        i32::MIN + 1,
        -(1 << 30),
        -1,
        0,
        1,
        1 << 30,
        i32::MAX - 1,
        i32::MAX,
    ];
    let pick = |r: &mut Rng| edge_or_any(r, &edges, 4);
    for case in 0..200_000 {
        let (acc, bias, mult) = (pick(&mut r), pick(&mut r), pick(&mut r));
        let shift = r.range(-40, 40) as i32;
        let m = QuantizedMultiplier {
            multiplier: mult,
            shift,
        };
        let zero = r.range(-128, 127) as i32;
        let want = i64::from(multiply_by_quantized_multiplier(acc.wrapping_add(bias), m));
        let got = Channel::new(bias, mult, shift, zero).scale(acc);
        assert_eq!(
            got.clamp(-128, 127),
            (want + i64::from(zero)).clamp(-128, 127),
            "case {case}: acc {acc} bias {bias} mult {mult} shift {shift} zero {zero}"
        );
        assert_eq!(
            Channel::new(bias, mult, shift, 0).scale(acc),
            want,
            "case {case}"
        );
    }
    // A shift of i32::MIN (which the reference cannot negate in a debug build) shifts
    // nothing, as the reference does in a release build.
    assert_eq!(Channel::new(0, 1 << 30, i32::MIN, 0).scale(100), 50);
}

/// `Mbqm::short` (the DSP extension's `SMMULR` form, here its definition) is the reference
/// wherever it applies: every non-negative multiplier, every right shift, values up to and
/// past the ones whose double overflows (and it stays out of the way of negative ones).
#[test]
fn the_short_requantisation_is_multiply_by_quantized_multiplier() {
    let mut r = Rng::new(0x5307);
    let edges = [
        i32::MIN,
        -(1 << 30) - 1,
        -(1 << 30),
        -(1 << 30) + 1,
        -1,
        0,
        1,
        (1 << 30) - 1,
        1 << 30,
        i32::MAX,
    ];
    let pick = |r: &mut Rng| edge_or_any(r, &edges, 3);
    let (mut short, mut cases) = (0, 0);
    for case in 0..300_000 {
        let mult = match r.range(0, 3) {
            0 => i32::MAX,
            1 => r.range(1 << 30, i64::from(i32::MAX)) as i32,
            _ => pick(&mut r).max(i32::MIN + 1),
        };
        let shift = r.range(-33, 3) as i32;
        // Accumulators are mostly far from overflow.
        let x = if r.one_in(2) {
            r.range(-(1 << 30), 1 << 30) as i32
        } else {
            pick(&mut r)
        };
        let m = QuantizedMultiplier {
            multiplier: mult,
            shift,
        };
        let Some(q) = Mbqm::new(m) else {
            panic!("case {case}: multiplier {mult} refused")
        };
        cases += 1;
        if let Some(got) = q.short(x) {
            short += 1;
            let want = multiply_by_quantized_multiplier(x, m);
            assert_eq!(got, want, "case {case}: {x} by {mult} shift {shift}");
        } else {
            // Only a negative multiplier, a left shift, no shift, or a double that
            // overflows leave it.
            let double = x.checked_add(x);
            assert!(mult < 0 || shift >= 0 || double.is_none(), "case {case}");
        }
    }
    assert!(
        short * 2 > cases,
        "only {short} of {cases} took the short form"
    );
}

/// `Scalar` is the reference's requantisation plus the zero point (saturating), clamped, on
/// every multiplier (`i32::MIN` too, which takes the `i64` form), shift and value.
#[test]
fn the_scalar_requantisation_is_the_references() {
    let mut r = Rng::new(0x5CA1);
    for case in 0..20_000 {
        let mult = match r.range(0, 5) {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => 1 << 30,
            _ => r.range(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        };
        let shift = r.range(-33, 33) as i32;
        let zero = match r.range(0, 3) {
            0 => i32::MAX,
            1 => i32::MIN,
            _ => r.range(-200, 200) as i32,
        };
        let (lo, hi) = match r.range(0, 2) {
            0 => (-128, 127),
            1 => (-32768, 32767),
            _ => (r.range(-128, 0) as i32, r.range(0, 127) as i32),
        };
        let v = match r.range(0, 4) {
            0 => i32::MIN,
            1 => i32::MAX,
            _ => r.range(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        };
        let m = QuantizedMultiplier {
            multiplier: mult,
            shift,
        };
        let want = multiply_by_quantized_multiplier(v, m)
            .saturating_add(zero)
            .clamp(lo, hi);
        let q = Scalar::new(mult, shift, zero, lo, hi);
        assert_eq!(
            q.wide(v),
            want,
            "case {case}: {v} by {mult} shift {shift} zero {zero}"
        );
        if (lo, hi) == (-128, 127) {
            assert_eq!(i32::from(q.output(v)), want, "case {case}");
        }
        // A run of values through `all` (Helium's vector loop on the target, whose lengths
        // are not multiples of its four lanes).
        let mut run: Vec<i32> = (0..r.range(0, 9))
            .map(|_| r.range(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
            .chain([v])
            .collect();
        let each: Vec<i32> = run.iter().map(|&x| q.wide(x)).collect();
        q.all(&mut run);
        assert_eq!(run, each, "case {case}");
    }
}

#[test]
fn the_dot_products_are_their_sums() {
    // Every length across the chunk edges (0 to 100), weights as long as `x` or longer (the
    // padded last chunk read in place), extreme values: the target's `dot_n` (SSE2 on
    // x86-64) and the portable one against the plain sum.
    let mut r = Rng::new(0xD07);
    for case in 0..2_000 {
        let k = case % 101;
        let extra = r.size(0, 20);
        let x = if case % 7 == 0 {
            vec![-128i8; k]
        } else {
            r.i8s(k)
        };
        let w: Vec<Vec<i8>> = (0..4)
            .map(|j| {
                if case % 7 == 0 && j == 0 {
                    vec![-128i8; k + extra]
                } else {
                    r.i8s(k + extra)
                }
            })
            .collect();
        let want: Vec<i32> = w
            .iter()
            .map(|wj| {
                x.iter()
                    .zip(wj)
                    .map(|(&a, &b)| i32::from(a) * i32::from(b))
                    .sum()
            })
            .collect();
        let ws = [&w[0][..], &w[1][..], &w[2][..], &w[3][..]];
        assert_eq!(dot_n::<4>(&x, ws).to_vec(), want, "case {case}: k {k}");
        assert_eq!(
            portable_dot_n::<4>(&x, ws).to_vec(),
            want,
            "case {case}: k {k}"
        );
        assert_eq!(dot_n::<1>(&x, [ws[1]])[0], want[1], "case {case}: k {k}");
        assert_eq!(
            portable_dot_n::<1>(&x, [ws[1]])[0],
            want[1],
            "case {case}: k {k}"
        );
    }
}

#[test]
fn the_window_sums_are_their_products() {
    // Windows of 1x1 to 4x5 taps (an odd count pairs the last tap with zeros in the SSE2
    // sums), 8 and 16 channels, extreme values: the target's sums and the portable ones
    // against the plain sum of products.
    let mut r = Rng::new(0x5A75);
    for case in 0..1_000 {
        let (fh, fw) = (r.size(1, 4), r.size(1, 5));
        let (ch, tap_col) = (16 + r.size(0, 8), 16 + r.size(0, 8));
        let g = DwGeometry {
            fh,
            fw,
            tap_row: fw * tap_col + r.size(0, 8),
            tap_col,
            x_step: 0,
            w_tap: ch,
            y_step: 0,
        };
        let x = if case % 9 == 0 {
            vec![-128i8; fh * g.tap_row + 32]
        } else {
            r.i8s(fh * g.tap_row + 32)
        };
        let w = if case % 9 == 0 {
            vec![-128i8; fh * fw * ch + 32]
        } else {
            r.i8s(fh * fw * ch + 32)
        };
        let terms = Taps {
            x: &x,
            w: &w,
            g: &g,
        };
        let c = r.size(0, ch - 16);
        let mut want = [0i32; 16];
        for ty in 0..fh {
            for tx in 0..fw {
                for (i, s) in want.iter_mut().enumerate() {
                    let xv = x[ty * g.tap_row + tx * g.tap_col + c + i];
                    let wv = w[(ty * fw + tx) * ch + c + i];
                    *s += i32::from(xv) * i32::from(wv);
                }
            }
        }
        let at = format!("case {case}: {fh}x{fw} from channel {c}");
        assert_eq!(sums::<_, 16>(&terms, (fh, fw), c), want, "{at}");
        assert_eq!(portable_sums::<_, 16>(&terms, (fh, fw), c), want, "{at}");
        assert_eq!(sums::<_, 8>(&terms, (fh, fw), c)[..], want[..8], "{at}");
        assert_eq!(
            portable_sums::<_, 8>(&terms, (fh, fw), c)[..],
            want[..8],
            "{at}"
        );
    }
}
