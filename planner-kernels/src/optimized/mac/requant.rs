//! One requantisation at a time: a channel's unpacked for the portable loops
//! ([`Channel`]), TFLite's `MultiplyByQuantizedMultiplier` with its constants computed once
//! ([`Mbqm`]), and a per-tensor one over runs of values ([`Scalar`]: the targets' assembly
//! loops where there are some).

#[cfg(all(planner_dsp, not(planner_mve)))]
use super::dsp_runs;
#[cfg(planner_mve)]
use super::mve_runs;
use crate::QuantizedMultiplier;

/// One channel's requantisation, unpacked for the portable inner loops: the same
/// arithmetic as [`crate::multiply_by_quantized_multiplier`], branch free.
///
/// TFLite's rounding doubling high multiply, `(a·b + nudge) / 2^31` truncated toward zero
/// with a nudge of `2^30` (`a·b >= 0`) or `1 - 2^30`, equals `(a·b + 2^30) >> 31` (a
/// floor) for either sign, and only `i32::MIN · i32::MIN` leaves the `i32` range (it
/// saturates). Its rounding right shift by `r`, half away from zero, is `(s + 2^(r-1) - (s
/// < 0)) >> r` for `r > 0`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Channel {
    mult: i64,
    /// `2^(right - 1)` (or 0) plus the output zero point times `2^right`: the rounding
    /// and, after the shift, the zero point.
    add: i64,
    bias: i32,
    /// -1 when `right > 0`: a negative value's one less before the shift.
    negative: i32,
    left: u8,
    right: u8,
}

impl Channel {
    pub(crate) fn new(bias: i32, mult: i32, shift: i32, zero: i32) -> Channel {
        // As multiply_by_quantized_multiplier: shifts of at most 31 (a shift of i32::MIN
        // negates to itself, as in a release build, and shifts nothing).
        let left = shift.clamp(0, 31) as u8;
        let right = shift.wrapping_neg().clamp(0, 31) as u8;
        Channel {
            mult: i64::from(mult),
            add: ((1i64 << right) >> 1) + (i64::from(zero) << right),
            bias,
            negative: -i32::from(right > 0),
            left,
            right,
        }
    }

    /// The requantised `acc + bias` plus the zero point (in `i64`, before the clamp: the
    /// reference's saturating `i32` addition then clamp give the same int8 value).
    #[inline(always)]
    pub(crate) fn scale(&self, acc: i32) -> i64 {
        let x = acc
            .wrapping_add(self.bias)
            .wrapping_shl(u32::from(self.left));
        let s = ((i64::from(x) * self.mult + (1 << 30)) >> 31).min(i64::from(i32::MAX));
        // Negative values round half away from zero: one less before the shift (when it
        // shifts at all); adding zero · 2^right before the shift adds zero after it.
        let negative = (s >> 63) & i64::from(self.negative);
        (s + self.add + negative) >> self.right
    }
}

/// `multiply_by_quantized_multiplier` unpacked for one multiplier: the same values with
/// fewer instructions. The doubling high multiply of a multiplier other than `i32::MIN`
/// cannot saturate, so it is `(x · m + 2^30) >> 31` (the floor: gemmlowp's nudge then
/// truncation give it for either sign); the rounding right shift is the reference's, its
/// mask and half-threshold computed once. With the DSP extension, a multiplier without a
/// left shift takes [`Mbqm::short`] for every `x` that doubles without overflow.
#[derive(Clone, Copy)]
pub(crate) struct Mbqm {
    pub(crate) mult: i32,
    pub(crate) left: u32,
    pub(crate) right: u32,
    mask: i32,
    half: i32,
    /// `2^(right − 1)` when the multiplier is not negative (TFLite's never are), with no
    /// left shift and a right shift ([`Mbqm::short`] applies), else 0.
    round: i32,
}

impl Mbqm {
    /// `None` for the multiplier `i32::MIN` (which `quantize_multiplier` never gives).
    pub(crate) fn new(m: QuantizedMultiplier) -> Option<Mbqm> {
        if m.multiplier == i32::MIN {
            return None;
        }
        // As the reference: shifts of at most 31 either way.
        let left = m.shift.clamp(0, 31) as u32;
        let right = m.shift.checked_neg().unwrap_or(i32::MAX).clamp(0, 31) as u32;
        let mask = ((1i64 << right) - 1) as i32;
        Some(Mbqm {
            mult: m.multiplier,
            left,
            right,
            mask,
            half: mask >> 1,
            round: if left == 0 && right > 0 && m.multiplier >= 0 {
                1 << (right - 1)
            } else {
                0
            },
        })
    }

    #[inline(always)]
    pub(crate) fn apply(&self, x: i32) -> i32 {
        #[cfg(all(planner_dsp, not(planner_mve)))]
        if let Some(v) = self.short(x) {
            return v;
        }
        let x = x.wrapping_shl(self.left);
        let s = ((i64::from(x) * i64::from(self.mult) + (1 << 30)) >> 31) as i32;
        let threshold = self.half + i32::from(s < 0);
        (s >> self.right) + i32::from(s & self.mask > threshold)
    }

    /// `[multiplier, 2^(right − 1), right]` when [`Mbqm::short`] applies to this
    /// multiplier (for assembly that computes it), else `None`.
    #[cfg_attr(not(all(planner_dsp, not(planner_mve))), allow(dead_code))]
    pub(crate) fn short_form(&self) -> Option<[i32; 3]> {
        (self.round != 0).then_some([self.mult, self.round, self.right as i32])
    }

    /// [`Mbqm::apply`] in six instructions, for a non-negative multiplier without a left
    /// shift and with a right shift (`round` set) and an `x` whose double fits `i32` (else
    /// `None`): `SMMULR` of `2x` by the multiplier is `⌊(2x·m + 2^31) / 2^32⌋`, the
    /// doubling high multiply's `⌊(x·m + 2^30) / 2^31⌋`; it lies in `(−2^30, 2^30)`, so adding
    /// `2^(right − 1)`, and 1 less for a negative value, then shifting right rounds half
    /// away from zero as the reference's mask and threshold do, without overflow.
    #[cfg_attr(not(all(planner_dsp, not(planner_mve))), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn short(&self, x: i32) -> Option<i32> {
        if self.round == 0 {
            return None;
        }
        let s = smmulr(x.checked_add(x)?, self.mult);
        Some((s + self.round + (s >> 31)) >> self.right)
    }
}

/// `⌊(a·b + 2^31) / 2^32⌋`: the DSP extension's `SMMULR`, or its definition.
#[cfg_attr(not(all(planner_dsp, not(planner_mve))), allow(dead_code))]
#[inline(always)]
fn smmulr(a: i32, b: i32) -> i32 {
    #[cfg(all(planner_dsp, not(planner_mve)))]
    return crate::optimized::arm_dsp::smmulr(a, b);
    #[cfg(not(all(planner_dsp, not(planner_mve))))]
    return ((i64::from(a) * i64::from(b) + (1 << 31)) >> 32) as i32;
}

/// One per-tensor requantisation, unpacked: `clamp(mbqm(v, mult, shift) + zero, lo, hi)`,
/// for the elementwise fast paths: [`Mbqm`] and an `i32` clamp, or (for the multiplier
/// `i32::MIN`, which `quantize_multiplier` never gives) [`Channel`]'s `i64` form.
pub(crate) struct Scalar {
    q: Option<Mbqm>,
    channel: Channel,
    zero: i32,
    lo: i32,
    hi: i32,
}

impl Scalar {
    /// `mult` and `shift` as [`crate::QuantizedMultiplier`] holds them.
    pub(crate) fn new(mult: i32, shift: i32, zero: i32, lo: i32, hi: i32) -> Scalar {
        Scalar {
            q: Mbqm::new(QuantizedMultiplier {
                multiplier: mult,
                shift,
            }),
            channel: Channel::new(0, mult, shift, zero),
            zero,
            lo,
            hi,
        }
    }

    /// `v` requantised, plus the zero point, clamped (the reference's saturating `i32`
    /// addition then clamp).
    #[inline(always)]
    fn value(&self, v: i32) -> i32 {
        match &self.q {
            Some(q) => q.apply(v).saturating_add(self.zero).clamp(self.lo, self.hi),
            None => {
                let (lo, hi) = (i64::from(self.lo), i64::from(self.hi));
                self.channel.scale(v).max(lo).min(hi) as i32
            }
        }
    }

    /// The output of `v`.
    #[inline(always)]
    pub(crate) fn output(&self, v: i32) -> i8 {
        self.value(v) as i8
    }

    /// The output of `v` for a wider type than int8 (`lo` and `hi` its range).
    #[inline(always)]
    pub(crate) fn wide(&self, v: i32) -> i32 {
        self.value(v)
    }

    /// `out[i · stride] = (Scalar::wide(v[i]) + add) as i8` (the addition wrapping) for
    /// every `i < v.len()`: on Helium four values per vector, stored with `VSTRB.32` to four
    /// offsets (`planner_mve_requant_scatter`); with the DSP extension two values per pass
    /// of an assembly loop that stores bytes (`planner_dsp_requant_store`: int8's whole
    /// range, or any range with nothing added and a stride of 1); elsewhere [`Scalar::all`]
    /// of `v` in place, then one store at a time (`v`'s values afterwards are either). `out`
    /// must hold `(v.len() - 1) · stride + 1` bytes; values past its end are not stored.
    pub(crate) fn scatter(&self, v: &mut [i32], add: i32, (out, stride): (&mut [i8], usize)) {
        let fits = v.is_empty()
            || (v.len() - 1)
                .checked_mul(stride)
                .is_some_and(|last| last < out.len());
        #[cfg(planner_mve)]
        if fits
            && let Some(q) = &self.q
            && mve_runs::requant_scatter(v, q, (self.zero, self.lo, self.hi), add, (out, stride))
        {
            return;
        }
        #[cfg(all(planner_dsp, not(planner_mve)))]
        if fits
            && let Some(q) = &self.q
            && dsp_runs::requant_store(
                (v, None),
                q,
                (self.zero, self.lo, self.hi),
                add,
                (out, stride),
            )
        {
            return;
        }
        debug_assert!(fits, "scatter: out is shorter than the values need");
        self.all(v);
        for (i, &x) in v.iter().enumerate() {
            if let Some(o) = out.get_mut(i * stride) {
                *o = x.wrapping_add(add) as i8;
            }
        }
    }

    /// `y[i] = Scalar::output(v[i] + bias[i])` (the addition wrapping; `v[i]` alone without
    /// a bias) for every `i < v.len().min(y.len())`: with the DSP extension the bias is
    /// added in the assembly loop that requantises and stores; elsewhere it is added to `v`
    /// in place (so `v`'s values afterwards are either), then [`Scalar::scatter`] stores.
    /// A bias shorter than that is added where it has values.
    pub(crate) fn outputs(&self, v: &mut [i32], bias: Option<&[i32]>, y: &mut [i8]) {
        let n = v.len().min(y.len());
        let (v, y) = (&mut v[..n], &mut y[..n]);
        #[cfg(all(planner_dsp, not(planner_mve)))]
        if let Some(q) = &self.q
            && dsp_runs::requant_store((v, bias), q, (self.zero, self.lo, self.hi), 0, (y, 1))
        {
            return;
        }
        if let Some(bias) = bias {
            for (a, b) in v.iter_mut().zip(bias) {
                *a = a.wrapping_add(*b);
            }
        }
        self.scatter(v, 0, (y, 1));
    }

    /// [`Scalar::wide`] of every element of `v`, in place: on Helium four values per
    /// vector (`planner_mve_requant`), with the DSP extension two values per pass of an
    /// assembly loop (`planner_dsp_requant`), elsewhere in Rust.
    pub(crate) fn all(&self, v: &mut [i32]) {
        #[cfg(any(planner_mve, planner_dsp))]
        if let Some(q) = &self.q
            && requant_asm(v, q, (self.zero, self.lo, self.hi))
        {
            return;
        }
        for x in v.iter_mut() {
            *x = self.wide(*x);
        }
    }
}

/// An [`Mbqm`] as the targets' assembly reads it (four words).
#[cfg(any(planner_mve, planner_dsp))]
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct MbqmArgs {
    mult: i32,     // 0
    left: i32,     // 4: 0..=31
    right: i32,    // 8: minus the right shift, -31..=0
    negative: i32, // 12: -1 when the right shift is not 0
}

#[cfg(any(planner_mve, planner_dsp))]
impl MbqmArgs {
    /// `m`'s fields as the assembly reads them.
    pub(crate) fn new(m: &Mbqm) -> MbqmArgs {
        MbqmArgs {
            mult: m.mult,
            left: m.left as i32,
            right: -(m.right as i32),
            negative: -i32::from(m.right > 0),
        }
    }
}

/// Arguments of the assembly requantisations of a run (`planner_mve_requant`,
/// `planner_dsp_requant`), read by offset from the assembly.
#[cfg(any(planner_mve, planner_dsp))]
#[repr(C)]
pub(super) struct RunArgs {
    v: *mut i32, // 0
    n: u32,      // 4
    m: MbqmArgs, // 8..24
    zero: i32,   // 24
    lo: i32,     // 28
    hi: i32,     // 32
}

#[cfg(any(planner_mve, planner_dsp))]
impl RunArgs {
    /// The `n` values at `v`, requantised by `m`, plus `zero`, clamped to `[lo, hi]`.
    pub(super) fn new(v: *mut i32, n: u32, m: &Mbqm, (zero, lo, hi): (i32, i32, i32)) -> RunArgs {
        RunArgs {
            v,
            n,
            m: MbqmArgs::new(m),
            zero,
            lo,
            hi,
        }
    }
}

/// [`Scalar::all`] through the target's assembly (Helium's `planner_mve_requant`, four
/// values per vector, or the DSP extension's `planner_dsp_requant`, two values per loop pass):
/// `v[i] = clamp(m.apply(v[i]) + zero, lo, hi)`, the addition saturating. False (nothing
/// written) when `v` is longer than `u32` counts.
#[cfg(any(planner_mve, planner_dsp))]
fn requant_asm(v: &mut [i32], m: &Mbqm, (zero, lo, hi): (i32, i32, i32)) -> bool {
    let Ok(n) = u32::try_from(v.len()) else {
        return false;
    };
    if n == 0 {
        return true;
    }
    let args = RunArgs::new(v.as_mut_ptr(), n, m, (zero, lo, hi));
    // SAFETY: the routine (the one this target has) reads and writes the `n` int32 of `v`
    // (`n > 0`, `v` exactly that long and borrowed mutably, so nothing else touches it
    // meanwhile), and nothing else; it follows the AAPCS, saving and restoring the
    // registers it uses (its declaration says which).
    unsafe {
        #[cfg(planner_mve)]
        mve_runs::planner_mve_requant(&args);
        #[cfg(all(planner_dsp, not(planner_mve)))]
        dsp_runs::planner_dsp_requant(&args);
    }
    true
}
