//! The fast int8 `UNIDIRECTIONAL_SEQUENCE_LSTM`: the reference kernel
//! ([`unidirectional_sequence_lstm_with`]) with its gates' inner products expanded as
//! `Σ w·x − x_zero·Σ w − w_zero·Σ x + n·w_zero·x_zero` (equal in wrapping `i32`
//! arithmetic), every value equal to the reference's.
//!
//! With the kernel scratch a plan for the optimized set gives the op (`[kernels] set =
//! "optimized"`: `13 · units` int32, [`planner_rt::prepare::lstm_scratch_len`]), the parts
//! that do not change from step to step (`bias − x_zero·Σ w + n·w_zero·x_zero` per row of a
//! gate's input weights, `−h_zero·Σ r + n·r_zero·h_zero` per row of its recurrent weights)
//! are computed once per call into it. Each step then computes every gate's value of every
//! unit into the rest of it, gate by gate: the products four units per pass over the step's
//! input (four rows' `Σ w·x` from one load of the input: tail-predicated `VMLAVA` on Helium,
//! the assembly of [`dot4_widened`](super::mac::dot4_widened) on the DSP extension with the
//! input widened once per step, a plain loop elsewhere), then their constant terms and
//! requantisations (the reference's multiply unpacked once per call, [`Mbqm`]; one pass of
//! assembly on the DSP extension, [`dsp`]); then the cell and hidden values. On Helium both
//! are assembly, four units per vector ([`mve`]); elsewhere unit by unit.
//!
//! Without that scratch (a plan made for the reference set) each unit's products are one
//! plain loop over the stored bytes (`Σ w·x` and `Σ w` together), or two with a weights
//! zero point: fewer instructions than the reference's on every core (micro_speech_lstm's
//! LSTM op on the Cortex-M4F 39,359,881 -> 34,561,891 under QEMU `-icount`).

#[cfg(all(planner_dsp, not(planner_mve)))]
mod dsp;
#[cfg(planner_mve)]
mod mve;

use planner_rt::kernel::{OpView, Out};
use planner_rt::options::UnidirectionalSequenceLstmOptions;

use super::lanes::{dot, dot_sum, sum};
use super::mac::Mbqm;
use crate::reference::KernelError;
use crate::reference::activation::{logistic16, tanh16};
use crate::reference::recurrent::lstm::{
    Gate, GateDot, Int8, Int8Steps, PerUnit, Step, unidirectional_sequence_lstm_with,
};

/// `UNIDIRECTIONAL_SEQUENCE_LSTM` with the expanded inner product (float runs the
/// reference's code either way).
pub(crate) fn unidirectional_sequence_lstm(
    op: OpView<'_, '_>,
    o: &UnidirectionalSequenceLstmOptions,
) -> Result<(), KernelError> {
    let mut steps = Blocked {
        tail: None,
        bufs: (operand::BUF, operand::BUF),
    };
    unidirectional_sequence_lstm_with(op, o, &mut steps)
}

/// The expanded inner product.
struct Fast;

impl GateDot for Fast {
    #[inline(always)]
    fn gate_dot(&self, w: &[i8], w_zero: i32, x: &[i8], x_zero: i32) -> i32 {
        let w = &w[..x.len().min(w.len())];
        let mut t = if x_zero != 0 {
            // One pass over the weights for both sums.
            let (t, s) = dot_sum(w, x);
            t.wrapping_sub(x_zero.wrapping_mul(s))
        } else {
            dot(w, x)
        };
        if w_zero != 0 {
            let n = w.len() as i32;
            t = t
                .wrapping_sub(w_zero.wrapping_mul(sum(&x[..w.len()])))
                .wrapping_add(n.wrapping_mul(w_zero).wrapping_mul(x_zero));
        }
        t
    }
}

/// Units whose gates one pass over the step's input computes (the DSP extension's
/// routine has its own four).
#[cfg(not(all(planner_dsp, not(planner_mve))))]
const BLOCK: usize = 4;

/// The steps with the per-call sums in the op's kernel scratch and the requantisations
/// unpacked ([`Tail`], once [`Int8Steps::prepare`] wrote the sums), unit by unit with
/// [`Fast`] without that scratch.
struct Blocked {
    tail: Option<Tail>,
    /// Where the DSP path widens a step's input and hidden state: once per call, not per
    /// step (safe Rust zeroes a buffer each time it is made).
    bufs: (operand::Buf, operand::Buf),
}

/// The op's kernel scratch as `13 · units` int32 (the sums, then a step's gate values and
/// one gate's recurrent products), when the plan gave it one: its first scratch tensor,
/// int32, at least that long (a model's own intermediates, which come after it, are not
/// int32 of that length in the models TFLM runs; and an op-local scratch tensor the kernel
/// writes is not read by anything else).
fn sums<'s>(scratch: &'s mut [Out<'_>], units: usize) -> Option<&'s mut [i32]> {
    let n = planner_rt::prepare::lstm_scratch_len(units)?;
    scratch
        .first_mut()?
        .i32()
        .filter(|s| s.len() >= n)
        .map(|s| &mut s[..n])
}

/// [`Int8`]'s requantisations as [`Mbqm`]s, unpacked once per call.
struct Tail {
    /// Per gate, the input and the recurrent product's.
    gates: [[Mbqm; 2]; 4],
    forget: Mbqm,
    input: Mbqm,
    hidden: Mbqm,
    z_h: i32,
    cell_scaling: (i32, u32),
    clip: Option<i32>,
}

/// Clamped to int16.
#[inline(always)]
fn clamp16(v: i32) -> i32 {
    v.clamp(-32768, 32767)
}

/// One unit's gate value from its input sum `x` and recurrent sum `r`, each requantised by
/// its multiplier of `m` (the fallback of the assembly passes, one unit at a time).
#[cfg(any(planner_dsp, planner_mve))]
fn gate_value([a, b]: [&Mbqm; 2], x: i32, r: i32) -> i32 {
    clamp16(clamp16(a.apply(x)) + clamp16(b.apply(r)))
}

impl Tail {
    /// `None` when a multiplier is `i32::MIN` ([`Mbqm::new`]).
    fn new(p: &Int8<'_>) -> Option<Tail> {
        let mut gates = [[None; 2]; 4];
        for (to, g) in gates.iter_mut().zip(&p.gates) {
            *to = [Mbqm::new(g.m_in), Mbqm::new(g.m_rec)];
        }
        let [[a, b], [c, d], [e, f], [g, h]] = gates;
        Some(Tail {
            gates: [[a?, b?], [c?, d?], [e?, f?], [g?, h?]],
            forget: Mbqm::new(p.m_forget)?,
            input: Mbqm::new(p.m_input)?,
            hidden: Mbqm::new(p.m_hidden)?,
            z_h: p.z_h,
            cell_scaling: p.cell_scaling,
            clip: p.clip,
        })
    }

    /// [`Int8::unit`].
    #[inline(always)]
    fn unit(&self, [gi, gf, gg, go]: [i32; 4], c: &mut i16) -> i8 {
        let f = i32::from(logistic16(gf as i16, (3, 0)));
        let i = i32::from(logistic16(gi as i16, (3, 0)));
        let g = i32::from(tanh16(gg as i16, (3, 0)));
        let kept = clamp16(self.forget.apply(f * i32::from(*c)));
        let added = clamp16(self.input.apply(i * g));
        let mut cj = clamp16(kept + added);
        if let Some(clip) = self.clip {
            cj = cj.clamp(-clip, clip);
        }
        *c = cj as i16;
        let o = i32::from(logistic16(go as i16, (3, 0)));
        let th = i32::from(tanh16(cj as i16, self.cell_scaling));
        self.hidden
            .apply(th * o)
            .saturating_add(self.z_h)
            .clamp(-128, 127) as i8
    }
}

/// `Σ v` over a row of weights, wrapping: with the DSP extension two `SMLAD`s by `1 | 1`
/// per word of four (the word widened as the products widen it), the last `len % 4` one
/// by one; elsewhere a plain loop.
#[inline(always)]
fn row_sum(v: &[i8]) -> i32 {
    #[cfg(all(planner_dsp, not(planner_mve)))]
    {
        use super::arm_dsp::{smlad, sxtb16, sxtb16_ror8, word};
        const ONES: u32 = 0x0001_0001;
        let (groups, rest) = v.as_chunks::<4>();
        let s = groups.iter().fold(0i32, |a, g| {
            let w = word(g);
            smlad(sxtb16_ror8(w), ONES, smlad(sxtb16(w), ONES, a))
        });
        rest.iter().fold(s, |a, &v| a.wrapping_add(i32::from(v)))
    }
    #[cfg(not(all(planner_dsp, not(planner_mve))))]
    sum(v)
}

/// A gate's products with their constant terms (`sums[j] − zero_term` for unit `j`: the
/// bias and the zero points' sums).
type Terms<'a, T> = (T, &'a [i32], i32);

/// `acc[j]` becomes the gate value ([`Gate::input16`]) of the input product `acc[j]` and
/// the recurrent product `rec[j]` with their constant terms, and the gate's two
/// requantisations: in vector lanes on Helium ([`mve::gate`]), elsewhere one unit at a
/// time, in two passes ([`scalar_gate`]).
#[inline(always)]
fn gate_values(
    (acc, si, wx): Terms<'_, &mut [i32]>,
    (rec, sr, rh): Terms<'_, &mut [i32]>,
    m: [&Mbqm; 2],
) {
    #[cfg(planner_mve)]
    {
        add_terms(acc, si, wx);
        add_terms(rec, sr, rh);
        mve::gate(acc, rec, m);
    }
    #[cfg(not(planner_mve))]
    scalar_gate((acc, si, wx), (rec, sr, rh), m);
}

/// `v[j] += sums[j] − zero_term`, wrapping (a plain loop LLVM vectorises).
#[cfg(planner_mve)]
#[inline(always)]
fn add_terms(v: &mut [i32], sums: &[i32], zero_term: i32) {
    for (v, &s) in v.iter_mut().zip(sums) {
        *v = v.wrapping_add(s).wrapping_sub(zero_term);
    }
}

/// The step's cell and hidden values from its gate values (`values`: the four gates' rows
/// of `c.len()` each), one unit at a time ([`Tail::unit`]).
#[cfg_attr(planner_mve, allow(dead_code))]
fn scalar_units(tail: &Tail, values: &[i32], c: &mut [i16], y: &mut [i8]) {
    let u = c.len();
    let [vi, vf, vg, vo] = [0, 1, 2, 3].map(|g| values.get(g * u..(g + 1) * u).unwrap_or(&[]));
    let units = y.iter_mut().zip(c.iter_mut());
    for ((((yj, cj), &i), &f), (&g, &o)) in units.zip(vi).zip(vf).zip(vg.iter().zip(vo)) {
        *yj = tail.unit([i, f, g, o], cj);
    }
}

/// [`gate_values`], one unit at a time: the input products requantised in one pass, then
/// the recurrent products added in a second (each pass's multiplier, sums and pointers
/// fit the core's registers; both in one loop spill); with the DSP extension, without the
/// weights' zero-point terms (TFLite's weights are symmetric), both in one pass of
/// assembly ([`dsp::gate`]).
#[cfg(not(planner_mve))]
#[inline(never)]
fn scalar_gate(
    (acc, si, wx): Terms<'_, &mut [i32]>,
    (rec, sr, rh): Terms<'_, &mut [i32]>,
    [a, b]: [&Mbqm; 2],
) {
    #[cfg(all(planner_dsp, not(planner_mve)))]
    if wx == 0 && rh == 0 && dsp::gate((acc, si), (rec, sr), [a, b]) {
        return;
    }
    // Copies in registers: the stores to `acc` could otherwise be the multipliers' memory.
    let (a, b) = (*a, *b);
    for (v, &s) in acc.iter_mut().zip(si) {
        *v = clamp16(a.apply(v.wrapping_add(s).wrapping_sub(wx)));
    }
    for ((v, &r), &s) in acc.iter_mut().zip(rec.iter()).zip(sr) {
        *v = clamp16(*v + clamp16(b.apply(r.wrapping_add(s).wrapping_sub(rh))));
    }
}

impl Int8Steps for Blocked {
    fn prepare(&mut self, p: &Int8<'_>, scratch: &mut [Out<'_>]) {
        let Some(sums) = sums(scratch, p.units) else {
            return;
        };
        let (u, n) = (p.units, p.input);
        let (input, rest) = sums.split_at_mut(4 * u);
        let recurrent = &mut rest[..4 * u];
        for (g, gate) in p.gates.iter().enumerate() {
            let rows = input[g * u..(g + 1) * u].iter_mut();
            for (j, s) in rows.enumerate() {
                let w = &gate.w[j * n..(j + 1) * n];
                *s = gate.bias[j]
                    .wrapping_sub(p.z_x.wrapping_mul(row_sum(w)))
                    .wrapping_add((n as i32).wrapping_mul(gate.w_zero).wrapping_mul(p.z_x));
            }
            let rows = recurrent[g * u..(g + 1) * u].iter_mut();
            for (j, s) in rows.enumerate() {
                let r = &gate.r[j * u..(j + 1) * u];
                *s = (u as i32)
                    .wrapping_mul(gate.r_zero)
                    .wrapping_mul(p.z_h)
                    .wrapping_sub(p.z_h.wrapping_mul(row_sum(r)));
            }
        }
        self.tail = Tail::new(p);
    }

    fn step(&mut self, p: &Int8<'_>, scratch: &mut [Out<'_>], io: Step<'_>) {
        let (sums, tail) = match (sums(scratch, p.units), &self.tail) {
            // (An op without units or inputs has nothing to block.)
            (Some(s), Some(t)) if p.units > 0 && p.input > 0 => (s, t),
            _ => return PerUnit(Fast).step(p, scratch, io),
        };
        let Step { x, h, c, y } = io;
        let (u, n) = (p.units, p.input);
        let (input, rest) = sums.split_at_mut(4 * u);
        let (recurrent, rest) = rest.split_at_mut(4 * u);
        let (values, rec) = rest.split_at_mut(4 * u);
        // The weights' zero points' terms, which vary with the step (0 for TFLite's
        // symmetric weights).
        let zero_terms = |take: fn(&Gate<'_>) -> i32, v: &[i8]| {
            let s = if p.gates.iter().any(|g| take(g) != 0) {
                sum(v)
            } else {
                0
            };
            p.gates.map(|g| take(&g).wrapping_mul(s))
        };
        let wx = zero_terms(|g| g.w_zero, x);
        let rh = zero_terms(|g| g.r_zero, h);
        let (x_buf, h_buf) = &mut self.bufs;
        let (xo, ho) = (operand::of(x, x_buf), operand::of(h, h_buf));
        // Every gate's value of every unit, gate by gate: the products, four units per
        // pass over the step's input, then their constant terms and requantisations.
        let parts = (input.chunks_exact(u), recurrent.chunks_exact(u));
        let gates = parts.0.zip(parts.1).zip(values.chunks_exact_mut(u));
        for (g, ((si, sr), out)) in gates.enumerate() {
            let t = &p.gates[g];
            products(&xo, (t.w, n), out);
            products(&ho, (t.r, u), rec);
            let [a, b] = &tail.gates[g];
            gate_values((out, si, wx[g]), (rec, sr, rh[g]), [a, b]);
        }
        // Then the cell and hidden values.
        #[cfg(planner_mve)]
        mve::units(tail, values, c, y);
        #[cfg(not(planner_mve))]
        scalar_units(tail, values, c, y);
    }
}

/// `out[j] = Σ_i w[j·n + i] · x[i]` for every unit `j`, wrapping: four rows per pass over
/// `x` ([`dot4`]), then the units past the last whole block one by one. `n > 0`.
#[cfg(not(all(planner_dsp, not(planner_mve))))]
#[inline(always)]
fn products(x: &operand::Operand<'_>, (w, n): (&[i8], usize), out: &mut [i32]) {
    let (blocks, rest) = out.as_chunks_mut::<BLOCK>();
    for (o, wb) in blocks.iter_mut().zip(w.chunks_exact(BLOCK * n)) {
        *o = dot4(x, split(wb, n));
    }
    let first = blocks.len() * BLOCK;
    for (j, o) in (first..).zip(rest) {
        *o = dot(&w[j * n..(j + 1) * n], x);
    }
}

/// The four rows of `n` elements of a block of `4 · n`.
#[cfg(not(all(planner_dsp, not(planner_mve))))]
#[inline(always)]
fn split(block: &[i8], n: usize) -> [&[i8]; BLOCK] {
    let (a, rest) = block.split_at(n);
    let (b, rest) = rest.split_at(n);
    let (c, d) = rest.split_at(n);
    [a, b, c, d]
}

/// `Σ w_k · x` for four rows `w_k` as long as `x`, wrapping, in one loop over `x`.
#[cfg(not(all(planner_dsp, not(planner_mve))))]
#[inline(always)]
fn dot4(x: &operand::Operand<'_>, w: [&[i8]; BLOCK]) -> [i32; BLOCK] {
    let x: &[i8] = x;
    let n = x.len();
    let [w0, w1, w2, w3] = w.map(|w| &w[..n]);
    let mut a = [0i32; BLOCK];
    for i in 0..n {
        let v = i32::from(x[i]);
        a[0] = a[0].wrapping_add(i32::from(w0[i]).wrapping_mul(v));
        a[1] = a[1].wrapping_add(i32::from(w1[i]).wrapping_mul(v));
        a[2] = a[2].wrapping_add(i32::from(w2[i]).wrapping_mul(v));
        a[3] = a[3].wrapping_add(i32::from(w3[i]).wrapping_mul(v));
    }
    a
}

/// A step's input or hidden state as [`dot4`] reads it: the elements themselves (vector
/// lanes and portable loops).
#[cfg(not(all(planner_dsp, not(planner_mve))))]
mod operand {
    /// The elements.
    pub(super) type Operand<'a> = &'a [i8];
    /// No buffer.
    pub(super) type Buf = ();
    pub(super) const BUF: Buf = ();

    #[inline(always)]
    pub(super) fn of<'a>(v: &'a [i8], _: &'a mut Buf) -> Operand<'a> {
        v
    }
}

/// A step's input or hidden state as [`products`] reads it with the DSP extension: besides the
/// elements, each whole group of four widened once per step into two halfword pairs (on
/// the stack: [`operand::WIDE`] groups, 1 KiB; a longer operand is widened in the loop).
#[cfg(all(planner_dsp, not(planner_mve)))]
mod operand {
    use crate::optimized::arm_dsp::{sxtb16, sxtb16_ror8, word};

    /// Groups of four elements the buffer holds.
    pub(super) const WIDE: usize = 128;
    pub(super) type Buf = [[u32; 2]; WIDE];
    pub(super) const BUF: Buf = [[0; 2]; WIDE];

    /// The elements, and their whole groups of four widened (`SXTB16`, `SXTB16` of the
    /// word rotated by 8), or none when they did not fit the buffer.
    pub(super) struct Operand<'a> {
        pub(super) v: &'a [i8],
        pub(super) wide: &'a [[u32; 2]],
    }

    #[inline(always)]
    pub(super) fn of<'a>(v: &'a [i8], buf: &'a mut Buf) -> Operand<'a> {
        let groups = v.as_chunks::<4>().0;
        if groups.len() > WIDE {
            return Operand { v, wide: &[] };
        }
        for (b, g) in buf.iter_mut().zip(groups) {
            let w = word(g);
            *b = [sxtb16(w), sxtb16_ror8(w)];
        }
        Operand {
            v,
            wide: &buf[..groups.len()],
        }
    }
}

/// [`products`] with the DSP extension: four rows per pass of
/// [`dot4_widened`](super::mac::dot4_widened) over the operand's widened groups (its last
/// `n % 4` elements after), then the rows past the last whole block two at a time
/// ([`dot2`]) and one by one. `n > 0`.
#[cfg(all(planner_dsp, not(planner_mve)))]
#[inline(always)]
fn products(x: &operand::Operand<'_>, (w, n): (&[i8], usize), out: &mut [i32]) {
    let groups = n / 4;
    let row = |j: usize| &w[j * n..(j + 1) * n];
    let done = if x.wide.len() == groups {
        super::mac::dot4_widened((w, n), x.wide, out)
    } else {
        0
    };
    let x_tail = &x.v[4 * groups..];
    if !x_tail.is_empty() {
        for (j, o) in out[..done].iter_mut().enumerate() {
            let products = row(j)[4 * groups..].iter().zip(x_tail);
            *o = products.fold(*o, |a, (&w, &v)| {
                a.wrapping_add(i32::from(w).wrapping_mul(i32::from(v)))
            });
        }
    }
    let last = out.len().saturating_sub(1);
    let mut pairs = out[done..].chunks_exact_mut(2);
    for (p, o) in (&mut pairs).enumerate() {
        let j = done + 2 * p;
        let [a, b] = dot2(x, [row(j), row(j + 1)]);
        o[0] = a;
        o[1] = b;
    }
    if let [o] = pairs.into_remainder() {
        *o = dot(row(last), x.v);
    }
}

/// `Σ w_k · x` for two rows `w_k` as long as `x`, wrapping: each word of four weights
/// widened into two halfword pairs (`SXTB16`, and `SXTB16` of the word rotated by 8:
/// elements 0 and 2, 1 and 3), so that `SMLAD` with the operand's pairs adds two products
/// (its 32-bit sum wraps as `wrapping_add` does; it only sets the sticky Q flag, which
/// nothing here reads); the `n % 4` last elements one by one.
#[cfg(all(planner_dsp, not(planner_mve)))]
#[inline(always)]
fn dot2(x: &operand::Operand<'_>, w: [&[i8]; 2]) -> [i32; 2] {
    use super::arm_dsp::{smlad, sxtb16, sxtb16_ror8, word};
    let n = x.v.len();
    let w = w.map(|w| &w[..n]);
    let (xs, x_tail) = x.v.as_chunks::<4>();
    let [r0, r1] = w.map(|w| w.as_chunks::<4>().0);
    let mut a = [0i32; 2];
    let mut add = |[even, odd]: [u32; 2], w0: &[i8; 4], w1: &[i8; 4]| {
        let (w0, w1) = (word(w0), word(w1));
        a[0] = smlad(sxtb16(w0), even, a[0]);
        a[0] = smlad(sxtb16_ror8(w0), odd, a[0]);
        a[1] = smlad(sxtb16(w1), even, a[1]);
        a[1] = smlad(sxtb16_ror8(w1), odd, a[1]);
    };
    if x.wide.len() == xs.len() {
        for ((&pairs, w0), w1) in x.wide.iter().zip(r0).zip(r1) {
            add(pairs, w0, w1);
        }
    } else {
        for ((xv, w0), w1) in xs.iter().zip(r0).zip(r1) {
            let xv = word(xv);
            add([sxtb16(xv), sxtb16_ror8(xv)], w0, w1);
        }
    }
    let done = n - x_tail.len();
    for (i, &v) in x_tail.iter().enumerate() {
        for (a, r) in a.iter_mut().zip(&w) {
            *a = a.wrapping_add(i32::from(r[done + i]).wrapping_mul(i32::from(v)));
        }
    }
    a
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;
    use std::{format, vec};

    use planner_rt::kernel::{In, OpView, Out, UnidirectionalSequenceLstm};
    use planner_rt::options::{Activation, UnidirectionalSequenceLstmOptions};

    use super::{Fast, GateDot};
    use crate::optimized::tests::Rng;
    use crate::reference::in_place_tests::info;
    use crate::reference::recurrent::lstm::Plain;
    use crate::{KernelError, Optimized, Reference};

    #[test]
    fn the_expanded_gate_product_is_the_references() {
        let mut r = Rng::new(0x157A);
        let zero = |r: &mut Rng| match r.range(0, 4) {
            0 => -128,
            1 => 127,
            2 => 0,
            _ => r.range(-128, 127) as i32,
        };
        let mut varied = 0;
        for case in 0..2000 {
            let n = r.size(0, 100);
            let longer = n + r.size(0, 3);
            let (w, x) = (r.i8s(longer), r.i8s(n));
            let (wz, xz) = (zero(&mut r), zero(&mut r));
            let want = Plain.gate_dot(&w, wz, &x, xz);
            assert_eq!(
                Fast.gate_dot(&w, wz, &x, xz),
                want,
                "case {case}: n {n}, zeros {wz} {xz}"
            );
            varied += usize::from(want != 0);
        }
        assert!(varied > 1800, "only {varied} of 2000 products were not 0");
    }

    /// The unpacked requantisation is the reference's on every multiplier and shift.
    #[test]
    fn the_unpacked_requantisation_is_the_references() {
        use crate::optimized::mac::Mbqm;
        use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier};
        let mut r = Rng::new(0x3B9);
        for case in 0..20_000 {
            let multiplier = match r.range(0, 4) {
                0 => i32::MAX,
                1 => 1 << 30,
                2 => r.range(0, 1 << 10) as i32,
                _ => r.range(i64::from(i32::MIN) + 1, i64::from(i32::MAX)) as i32,
            };
            let shift = r.range(-34, 34) as i32;
            let x = match r.range(0, 5) {
                0 => i32::MIN,
                1 => i32::MAX,
                2 => r.range(-70_000, 70_000) as i32,
                _ => r.range(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            };
            let m = QuantizedMultiplier { multiplier, shift };
            let want = multiply_by_quantized_multiplier(x, m);
            let got = Mbqm::new(m).unwrap().apply(x);
            assert_eq!(got, want, "case {case}: {x} by {multiplier} shift {shift}");
        }
        assert!(
            Mbqm::new(QuantizedMultiplier {
                multiplier: i32::MIN,
                shift: 0
            })
            .is_none()
        );
    }

    /// A random int8 LSTM op: `batch × steps × input` in, `units` units; zero points of
    /// the input, the hidden state and (sometimes) the weights, a cell clip or none.
    struct Case {
        time_major: bool,
        batch: usize,
        steps: usize,
        input: usize,
        units: usize,
        x: Vec<i8>,
        /// Input and recurrent weights and biases of the four gates.
        w: [Vec<i8>; 4],
        r: [Vec<i8>; 4],
        bias: [Vec<i32>; 4],
        hidden: Vec<i8>,
        cell: Vec<i16>,
        /// Scales of the input, the input weights, the recurrent weights, the hidden and
        /// the cell state.
        scales: [f32; 5],
        /// Zero points of the input, the hidden state, the input and recurrent weights.
        zeros: [i64; 4],
        clip: f32,
    }

    impl Case {
        fn random(r: &mut Rng) -> Case {
            let (batch, steps) = (r.size(1, 2), r.size(1, 4));
            // Now and then no input or no unit: nothing to block, nothing to panic on.
            let (input, units) = (r.size(0, 70), r.size(0, 13));
            let zero = |r: &mut Rng| match r.range(0, 3) {
                0 => -128,
                1 => 127,
                2 => 0,
                _ => r.range(-128, 127),
            };
            let weights_zero = |r: &mut Rng| if r.one_in(4) { r.range(-20, 20) } else { 0 };
            let gates =
                |r: &mut Rng, n: usize| -> [Vec<i8>; 4] { core::array::from_fn(|_| r.i8s(n)) };
            let cell_power = -(r.range(8, 15) as i32);
            Case {
                time_major: r.one_in(2),
                batch,
                steps,
                input,
                units,
                x: r.i8s(batch * steps * input),
                w: gates(r, units * input),
                r: gates(r, units * units),
                bias: core::array::from_fn(|_| r.i32s(units, -20_000, 20_000)),
                hidden: r.i8s(batch * units),
                cell: (0..batch * units)
                    .map(|_| r.range(-32768, 32767) as i16)
                    .collect(),
                scales: [
                    r.scale(0.005, 0.05),
                    r.scale(0.0005, 0.01),
                    r.scale(0.0005, 0.01),
                    r.scale(0.004, 0.02),
                    // A power of two (TFLite's) or not.
                    if r.one_in(2) {
                        (2.0f32).powi(cell_power)
                    } else {
                        r.scale(0.00005, 0.002)
                    },
                ],
                zeros: [zero(r), zero(r), weights_zero(r), weights_zero(r)],
                clip: if r.one_in(3) { r.scale(0.5, 8.0) } else { 0.0 },
            }
        }

        /// Two calls of the op with `set` (the state carried): the outputs and the states
        /// after each, as bytes. `scratch`: the kernel scratch of a plan for the optimized
        /// set (`13 · units` int32), and whether a model's own zero-length intermediate
        /// follows it.
        fn run<K: UnidirectionalSequenceLstm<Error = KernelError>>(
            &self,
            set: &mut K,
            scratch: bool,
        ) -> Result<(Vec<i8>, bool), KernelError> {
            let (b, t, n, u) = (self.batch, self.steps, self.input, self.units);
            let [s_x, s_w, s_r, s_h, s_c] = self.scales;
            let [z_x, z_h, z_w, z_r] = self.zeros;
            let xs: &[usize] = if self.time_major {
                &[t, b, n]
            } else {
                &[b, t, n]
            };
            let ys: &[usize] = if self.time_major {
                &[t, b, u]
            } else {
                &[b, t, u]
            };
            let xi = info::<i8>(xs, &[s_x], &[z_x]);
            let wi = info::<i8>(&[u, n], &[s_w], &[z_w]);
            let ri = info::<i8>(&[u, u], &[s_r], &[z_r]);
            let bi = info::<i32>(&[u], &[s_x * s_w], &[0]);
            let hi = info::<i8>(&[b, u], &[s_h], &[z_h]);
            let ci = info::<i16>(&[b, u], &[s_c], &[0]);
            let yi = info::<i8>(ys, &[s_h], &[z_h]);
            let si = info::<i32>(&[13 * u], &[], &[]);
            let ii = info::<i16>(&[0], &[], &[]);
            let o = UnidirectionalSequenceLstmOptions {
                activation: Activation::Tanh,
                cell_clip: self.clip,
                time_major: self.time_major,
                ..Default::default()
            };
            let (mut hidden, mut cell) = (self.hidden.clone(), self.cell.clone());
            let (mut seen, mut wrote) = (Vec::new(), false);
            for _ in 0..2 {
                let mut y = vec![0x11i8; b * t * u];
                // Garbage in the scratch: the kernel must not read what it did not write.
                let mut sums = vec![0x5a5a_5a5ai32; 13 * u];
                let mut intermediate: [i16; 0] = [];
                let mut inputs = [None; 24];
                inputs[0] = Some(In::new(&self.x[..], &xi));
                for g in 0..4 {
                    inputs[1 + g] = Some(In::new(&self.w[g][..], &wi));
                    inputs[5 + g] = Some(In::new(&self.r[g][..], &ri));
                    inputs[12 + g] = Some(In::new(&self.bias[g][..], &bi));
                }
                inputs[18] = Some(In::variable(0, &hi));
                inputs[19] = Some(In::variable(1, &ci));
                let mut outputs = [Out::new(&mut y[..], &yi)];
                let mut variables = [Out::new(&mut hidden[..], &hi), Out::new(&mut cell[..], &ci)];
                let mut scratch_tensors = [
                    Out::new(&mut sums[..], &si),
                    Out::new(&mut intermediate[..], &ii),
                ];
                let op = OpView {
                    index: 0,
                    opcode: "UNIDIRECTIONAL_SEQUENCE_LSTM",
                    inputs: &inputs,
                    outputs: &mut outputs,
                    scratch: if scratch {
                        &mut scratch_tensors[..]
                    } else {
                        &mut scratch_tensors[1..]
                    },
                    variables: &mut variables,
                };
                set.unidirectional_sequence_lstm(op, &o)?;
                wrote |= sums.iter().any(|&s| s != 0x5a5a_5a5a);
                seen.extend_from_slice(&y);
                seen.extend_from_slice(&hidden);
                seen.extend(cell.iter().flat_map(|&v| v.to_le_bytes()).map(|b| b as i8));
            }
            Ok((seen, wrote))
        }
    }

    /// `Optimized` equals `Reference` on random int8 LSTMs, unit counts that are and are
    /// not a multiple of the block of four, with the planned sums and without them.
    #[test]
    fn lstm_equals_reference_with_and_without_its_kernel_scratch() {
        let mut r = Rng::new(0x1574);
        let (mut cases, mut varied) = (0, 0);
        for case in 0..300 {
            let c = Case::random(&mut r);
            let context = format!(
                "case {case}: batch {}, steps {}, input {}, units {}, zeros {:?}, scales {:?}, clip {}",
                c.batch, c.steps, c.input, c.units, c.zeros, c.scales, c.clip
            );
            let (want, _) = c
                .run(&mut Reference, false)
                .unwrap_or_else(|e| panic!("{context}: reference: {e}"));
            for scratch in [false, true] {
                let (got, wrote) = c
                    .run(&mut Optimized, scratch)
                    .unwrap_or_else(|e| panic!("{context}: optimized: {e}"));
                assert_eq!(got, want, "{context}, kernel scratch {scratch}");
                // The sums are written (and so read) exactly when the scratch is there (and
                // there are units to sum for).
                assert_eq!(wrote, scratch && c.units > 0, "{context}");
            }
            // The outputs vary (a constant output would prove little).
            let y = &want[..c.batch * c.steps * c.units];
            cases += 1;
            varied += usize::from(y.iter().any(|&v| v != y[0]));
        }
        assert!(
            varied * 3 >= cases * 2,
            "only {varied} of {cases} cases varied"
        );
    }
}
