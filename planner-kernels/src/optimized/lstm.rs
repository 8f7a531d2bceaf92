//! The fast int8 `UNIDIRECTIONAL_SEQUENCE_LSTM`: the reference kernel
//! ([`unidirectional_sequence_lstm_with`]) with its gates' inner products expanded as
//! `Σ w·x − x_zero·Σ w − w_zero·Σ x + n·w_zero·x_zero` (equal in wrapping `i32`
//! arithmetic), so each is one plain loop over the stored bytes (`Σ w·x` and `Σ w`
//! together), or two with a weights zero point, that LLVM vectorises (tail-predicated
//! `VMLAVA` and `VADDVA` on Helium). It runs on cores without vector lanes too: on the
//! Cortex-M4F its one scalar loop per product took fewer instructions than the reference's
//! (micro_speech_lstm's LSTM op 39,359,881 -> 34,561,891 under QEMU `-icount`), where
//! [`super::svdf`]'s did not.

use planner_rt::kernel::OpView;
use planner_rt::options::UnidirectionalSequenceLstmOptions;

use super::lanes::{dot, dot_sum, sum};
use crate::reference::KernelError;
use crate::reference::recurrent::lstm::{GateDot, unidirectional_sequence_lstm_with};

/// `UNIDIRECTIONAL_SEQUENCE_LSTM` with the expanded inner product (float runs the
/// reference's code either way).
pub(crate) fn unidirectional_sequence_lstm(
    op: OpView<'_, '_>,
    o: &UnidirectionalSequenceLstmOptions,
) -> Result<(), KernelError> {
    unidirectional_sequence_lstm_with(op, o, &Fast)
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

#[cfg(test)]
mod tests {
    use super::{Fast, GateDot};
    use crate::optimized::tests::Rng;
    use crate::reference::recurrent::lstm::Plain;

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
}
