//! The fast `SVDF`: the reference kernel's checks and steps
//! ([`svdf_with`](crate::reference::recurrent::svdf::svdf_with)) with faster loops. The
//! projections, and with an int8 state the time sums, are [`dot_rows`]'s (Helium assembly,
//! `SMLAD` on DSP cores, plain loops elsewhere); the projections' requantisation stores each
//! value straight into the state's newest column ([`Scalar::scatter`]: four at a time on
//! Helium, a byte at a time by the DSP extension's assembly), and the outputs' stores a
//! unit's run straight into the output the same way. The time
//! sums of an int16 state take loops LLVM vectorises, each `Σ w · (s − z)` computed as
//! `Σ w · s − z · Σ w` (equal in wrapping `i32` arithmetic), so the products are of the
//! stored values and widen straight into the accumulator; its projections are
//! [`dot_rows`]'s too (the input and feature weights are int8 whatever the state).

use planner_rt::kernel::OpView;
use planner_rt::options::SvdfOptions;

use super::lanes::{dot, dot_sum};
use super::mac::{Scalar, dot_rows, shift_down};
use crate::reference::KernelError;
use crate::reference::recurrent::svdf::{Loops, OutputScale, Projection, State, newest, svdf_with};

/// `SVDF` with the loops below.
pub(crate) fn svdf(op: OpView<'_, '_>, o: &SvdfOptions) -> Result<(), KernelError> {
    svdf_with(op, o, &Fast)
}

/// The fast loops.
struct Fast;

impl Loops for Fast {
    fn features<T: State>(&self, p: &Projection<'_>, dots: &mut [i32], state: (&mut [T], usize)) {
        let (state, memory) = state;
        let k = p.x.len();
        let n = dots.len().min(state.len() / memory.max(1));
        let dots = &mut dots[..n];
        // Rows past `w`'s end (none: `svdf_with` checks the lengths) are empty sums, as in
        // the reference loop.
        let full = p.w.len().checked_div(k).map_or(0, |rows| n.min(rows));
        dot_rows((p.w, k), (p.x, 0), k, p.z, &mut dots[..full]);
        if full < n {
            dots[full..].fill(0);
        }
        let q = Scalar::new(p.m.multiplier, p.m.shift, 0, T::MIN, T::MAX);
        match T::int8_mut(state) {
            Some(s) if memory > 0 => q.scatter(dots, p.z_state, (&mut s[memory - 1..], memory)),
            _ => {
                q.all(dots);
                for (row, v) in state.chunks_exact_mut(memory.max(1)).zip(dots.iter()) {
                    newest(row, *v, p.z_state);
                }
            }
        }
    }

    fn time<T: State>(&self, w: &[T], s: &[T], memory: usize, z: i32, out: &mut [i32]) {
        if let (Some(w), Some(s)) = (T::int8(w), T::int8(s)) {
            let n = out.len().min(w.len().min(s.len()) / memory.max(1));
            return dot_rows((w, memory), (s, memory), memory, z, &mut out[..n]);
        }
        let rows = w
            .chunks_exact(memory.max(1))
            .zip(s.chunks_exact(memory.max(1)));
        // Both rows are `memory` long: one pass for both sums when there is a zero point.
        for (o, (w, s)) in out.iter_mut().zip(rows) {
            *o = if z == 0 {
                dot(w, s)
            } else {
                let (t, sw) = dot_sum(w, s);
                t.wrapping_sub(z.wrapping_mul(sw))
            };
        }
    }

    /// An int8 state by the target's assembly ([`shift_down`]: 16 bytes per vector on
    /// Helium, 32 bytes per pass with the DSP extension); the rest (and an int16 state)
    /// eight elements at a time through a register copy: `copy_within` is a
    /// `memmove` whose source is one element past its destination, which the library copies
    /// with shifted word loads at several instructions a word.
    fn shift<T: State>(&self, state: &mut [T]) {
        const N: usize = 8;
        let n = state.len();
        let mut i = T::int8_mut(state).map_or(0, shift_down);
        while i + N < n {
            let mut t = [state[i]; N];
            t.copy_from_slice(&state[i + 1..i + 1 + N]);
            state[i..i + N].copy_from_slice(&t);
            i += N;
        }
        while i + 1 < n {
            state[i] = state[i + 1];
            i += 1;
        }
    }

    fn output(&self, acc: &mut [i32], bias: Option<&[i32]>, q: OutputScale, y: &mut [i8]) {
        let m = q.m;
        Scalar::new(m.multiplier, m.shift, q.zero, -128, 127).outputs(acc, bias, y);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;
    use std::{format, vec};

    use planner_rt::kernel::{In, Out, Svdf};
    use planner_rt::options::SvdfOptions;

    use crate::optimized::tests::Rng;
    use crate::reference::in_place_tests::info;
    use crate::reference::test_support::run_with_state;
    use crate::{KernelError, Optimized, Reference};

    /// A random SVDF op: `batch × input` in, `filters = units · rank` filters of `memory`
    /// steps, int8 or int16 state and time weights, with or without a bias.
    struct Case {
        batch: usize,
        input: usize,
        units: usize,
        rank: usize,
        memory: usize,
        x: Vec<i8>,
        wf: Vec<i8>,
        wt: Vec<i16>,
        bias: Option<Vec<i32>>,
        state: Vec<i16>,
        scales: [f32; 5],
        zeros: [i64; 3],
    }

    impl Case {
        fn random(r: &mut Rng, wide: bool) -> Case {
            let (batch, input) = (r.size(1, 3), r.size(1, 150));
            // Now and then more than one chunk of units (64) or of filters.
            let units = if r.one_in(6) {
                r.size(60, 140)
            } else {
                r.size(1, 40)
            };
            let (rank, memory) = (r.size(1, 3), r.size(1, 33));
            let filters = units * rank;
            let (lo, hi) = if wide { (-32768, 32767) } else { (-128, 127) };
            let values = |r: &mut Rng, n: usize| -> Vec<i16> {
                (0..n).map(|_| r.range(lo, hi) as i16).collect()
            };
            let zero = |r: &mut Rng| match r.range(0, 3) {
                0 => -128,
                1 => 127,
                2 => 0,
                _ => r.range(-128, 127),
            };
            Case {
                batch,
                input,
                units,
                rank,
                memory,
                x: r.i8s(batch * input),
                wf: r.i8s(filters * input),
                wt: values(r, filters * memory),
                bias: (!r.one_in(4)).then(|| r.i32s(units, -100_000, 100_000)),
                state: values(r, batch * filters * memory),
                scales: [
                    r.scale(0.001, 0.1),
                    r.scale(0.001, 0.05),
                    r.scale(0.0001, 0.01),
                    r.scale(0.001, 0.1),
                    r.scale(0.0001, 0.01),
                ],
                // The input's, the state's (0 in TFLite's int16 models) and the output's.
                zeros: [zero(r), if wide { 0 } else { zero(r) }, zero(r)],
            }
        }

        /// Two steps of the op with `set`, int8 state: the outputs and the state after each.
        fn run_i8<K: Svdf<Error = KernelError>>(
            &self,
            set: &mut K,
        ) -> Result<Vec<i8>, KernelError> {
            run!(self, set, i8)
        }

        /// [`Case::run_i8`] with int16 state and time weights.
        fn run_i16<K: Svdf<Error = KernelError>>(
            &self,
            set: &mut K,
        ) -> Result<Vec<i8>, KernelError> {
            run!(self, set, i16)
        }
    }

    /// The body of [`Case::run_i8`] and [`Case::run_i16`], for state type `$t`.
    macro_rules! run {
        ($case:expr, $set:expr, $t:ty) => {{
            let c = $case;
            let filters = c.units * c.rank;
            let [s_in, s_wf, s_wt, s_state, s_out] = c.scales;
            let [z_in, z_state, z_out] = c.zeros;
            let xi = info::<i8>(&[c.batch, c.input], &[s_in], &[z_in]);
            let wfi = info::<i8>(&[filters, c.input], &[s_wf], &[0]);
            let wti = info::<$t>(&[filters, c.memory], &[s_wt], &[0]);
            let bi = info::<i32>(&[c.units], &[1.0], &[0]);
            let si = info::<$t>(&[c.batch, filters * c.memory], &[s_state], &[z_state]);
            let yi = info::<i8>(&[c.batch, c.units], &[s_out], &[z_out]);
            let wt: Vec<$t> = c.wt.iter().map(|&v| v as $t).collect();
            let mut state: Vec<$t> = c.state.iter().map(|&v| v as $t).collect();
            let o = SvdfOptions {
                rank: c.rank as i32,
                ..Default::default()
            };
            let mut seen = Vec::new();
            for _ in 0..2 {
                let mut y = vec![0x11i8; c.batch * c.units];
                let inputs = [
                    Some(In::new(&c.x[..], &xi)),
                    Some(In::new(&c.wf[..], &wfi)),
                    Some(In::new(&wt[..], &wti)),
                    c.bias.as_ref().map(|b| In::new(&b[..], &bi)),
                    Some(In::variable(0, &si)),
                ];
                let mut outputs = [Out::new(&mut y[..], &yi)];
                let mut variables = [Out::new(&mut state[..], &si)];
                let (outputs, variables) = (&mut outputs[..], &mut variables[..]);
                run_with_state(&inputs, (outputs, &mut []), variables, |op| {
                    $set.svdf(op, &o)
                })?;
                seen.extend_from_slice(&y);
                // The state, byte by byte: any difference in it shows.
                seen.extend(state.iter().flat_map(|&v| v.to_le_bytes()).map(|b| b as i8));
            }
            Ok(seen)
        }};
    }
    use run;

    #[test]
    fn svdf_equals_reference_with_int8_and_int16_state() {
        let mut r = Rng::new(0x5FDF);
        let (mut cases, mut varied) = (0, 0);
        for case in 0..300 {
            let wide = r.one_in(2);
            let c = Case::random(&mut r, wide);
            let (want, got) = if wide {
                (c.run_i16(&mut Reference), c.run_i16(&mut Optimized))
            } else {
                (c.run_i8(&mut Reference), c.run_i8(&mut Optimized))
            };
            let context = format!(
                "case {case}: {}x{} in, {} units of rank {}, memory {}, {} state, zeros {:?}",
                c.batch,
                c.input,
                c.units,
                c.rank,
                c.memory,
                if wide { "int16" } else { "int8" },
                c.zeros
            );
            let want = want.unwrap_or_else(|e| panic!("{context}: reference: {e}"));
            let got = got.unwrap_or_else(|e| panic!("{context}: optimized: {e}"));
            assert_eq!(got, want, "{context}");
            // The outputs of the first step vary (a constant output would prove little).
            let y = &want[..c.batch * c.units];
            cases += 1;
            varied += usize::from(y.iter().any(|&v| v != y[0]));
        }
        assert!(varied * 2 >= cases, "only {varied} of {cases} cases varied");
    }
}
