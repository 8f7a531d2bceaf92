//! The inner loops of [`Optimized`](crate::Optimized): int8 multiply-accumulate with
//! TFLite's requantisation, behind two functions whose contracts an architecture-specific
//! version (Helium, Arm DSP) implements as written here. This file holds the portable
//! implementation: plain Rust that LLVM vectorises (fixed-width chunks, `i32` accumulators,
//! slices cut once per row so the hot loops have no bounds checks).
//!
//! Both functions take the per-channel constants as a [`Requant`] and compute, for each
//! output element of channel `c`,
//!
//! ```text
//! y = clamp(mbqm(acc + q.bias[c], q.mult[c], q.shift[c]) + q.out_zero, q.lo, q.hi)
//! ```
//!
//! where `acc` is a wrapping `i32` sum of int8 products, `mbqm` is TFLite's
//! `MultiplyByQuantizedMultiplier` ([`crate::multiply_by_quantized_multiplier`]: left shift
//! by `max(shift, 0)` (wrapping, at most 31), rounding doubling high multiply by `mult`
//! saturating at `i32::MIN · i32::MIN`, rounding right shift by `max(-shift, 0)` rounding
//! half away from zero), the `+ out_zero` saturates in `i32` and the clamp is
//! `max(lo).min(hi)` (so it never panics; callers give `lo <= hi`). The effective bias
//! `q.bias[c]` already holds `-x_zero · Σ w[c]` ([`crate::prepare`]), so `acc` is a raw
//! dot product: `Σ x · w` with neither zero point.
//!
//! Callers check every length once, before calling; a function given slices shorter than
//! its contract needs writes nothing past what it can (the portable version stops at the
//! first row that does not fit) and panics only in debug builds.

use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier};

#[cfg(all(planner_dsp, not(planner_mve)))]
mod dsp;
#[cfg(planner_mve)]
mod mve;

/// Requantisation of output channels `0..n` (`n = bias.len()`; `mult` and `shift` are at
/// least as long): effective bias, Q31 multiplier and shift (TFLite's: positive left) per
/// channel, then the output zero point and the activation's clamp `[lo, hi]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Requant<'a> {
    pub bias: &'a [i32],
    pub mult: &'a [i32],
    pub shift: &'a [i32],
    pub out_zero: i32,
    pub lo: i32,
    pub hi: i32,
}

impl Requant<'_> {
    /// Output channels.
    pub(crate) fn channels(&self) -> usize {
        self.bias.len()
    }

    /// True when `mult` and `shift` cover every channel.
    fn complete(&self) -> bool {
        self.mult.len() >= self.bias.len() && self.shift.len() >= self.bias.len()
    }

    /// Channel `c`'s output of the dot product `acc` (without the bias).
    #[inline(always)]
    pub(crate) fn output(&self, acc: i32, c: usize) -> i8 {
        let (Some(&b), Some(&m), Some(&s)) =
            (self.bias.get(c), self.mult.get(c), self.shift.get(c))
        else {
            return 0;
        };
        finish(acc.wrapping_add(b), m, s, self.out_zero, self.lo, self.hi)
    }
}

/// `clamp(mbqm(acc, mult, shift) + zero, lo, hi)`.
#[inline(always)]
fn finish(acc: i32, mult: i32, shift: i32, zero: i32, lo: i32, hi: i32) -> i8 {
    let m = QuantizedMultiplier {
        multiplier: mult,
        shift,
    };
    multiply_by_quantized_multiplier(acc, m)
        .saturating_add(zero)
        .max(lo)
        .min(hi) as i8
}

/// A GEMM with requantisation. For `r` in `0..rows` and `c` in `0..cols` (`cols =
/// q.channels()`):
///
/// ```text
/// y[r·y_stride + c] = requant_c(Σ_{i<k} x[r·x_stride + i] · w[c·k + i])
/// ```
///
/// (`requant_c` as in the module docs: `+ q.bias[c]`, multiplier, shift, zero point,
/// clamp). `x` holds `rows` rows of `k` int8 values, `x_stride` apart (`x_stride >= k`;
/// the last row needs only `k`); `w` holds `cols` rows of `k` weights back to back; `y`
/// gets `rows` rows of `cols` values, `y_stride` apart (`y_stride >= cols`), and nothing
/// else in `y` is written. `k` may be 0 (every output is then the bias requantised) and
/// any size (not a multiple of 4, 8 or 16). The sum wraps in `i32`.
///
/// Used for 1x1 convolutions straight over the input pixels (`x_stride` the input's
/// channels times the stride), im2col rows of larger filters, and fully-connected layers.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_s8(
    x: &[i8],
    x_stride: usize,
    rows: usize,
    w: &[i8],
    k: usize,
    q: &Requant<'_>,
    y: &mut [i8],
    y_stride: usize,
) {
    // The target's assembly computes the first `done` channels (all, some or none); the
    // portable loop the rest.
    #[cfg(planner_mve)]
    let done = mve::gemm_s8(x, x_stride, rows, w, k, q, y, y_stride);
    #[cfg(all(planner_dsp, not(planner_mve)))]
    let done = dsp::gemm_s8(x, x_stride, rows, w, k, q, y, y_stride);
    #[cfg(not(any(planner_mve, planner_dsp)))]
    let done = 0;
    if done == 0 {
        return portable_gemm_s8(x, x_stride, rows, w, k, q, y, y_stride);
    }
    let rest = Requant {
        bias: q.bias.get(done..).unwrap_or_default(),
        mult: q.mult.get(done..).unwrap_or_default(),
        shift: q.shift.get(done..).unwrap_or_default(),
        ..*q
    };
    if rest.channels() > 0 {
        let (w, y) = (
            w.get(done * k..).unwrap_or_default(),
            y.get_mut(done..).unwrap_or_default(),
        );
        portable_gemm_s8(x, x_stride, rows, w, k, &rest, y, y_stride);
    }
}

/// [`gemm_s8`] in portable Rust.
#[allow(clippy::too_many_arguments)]
fn portable_gemm_s8(
    x: &[i8],
    x_stride: usize,
    rows: usize,
    w: &[i8],
    k: usize,
    q: &Requant<'_>,
    y: &mut [i8],
    y_stride: usize,
) {
    let cols = q.channels();
    let fits = q.complete()
        && w.len() >= cols * k
        && (rows == 0
            || (x.len() >= (rows - 1) * x_stride + k && y.len() >= (rows - 1) * y_stride + cols));
    debug_assert!(fits, "gemm_s8: slices shorter than the contract needs");
    if !fits || cols == 0 {
        return;
    }
    let w = &w[..cols * k];
    for r in 0..rows {
        let xr = &x[r * x_stride..r * x_stride + k];
        let yr = &mut y[r * y_stride..r * y_stride + cols];
        let mut c = 0;
        let mut quads = w.chunks_exact(4 * k.max(1));
        let mut ys = yr.chunks_exact_mut(4);
        if k > 0 {
            for (w4, y4) in (&mut quads).zip(&mut ys) {
                let (w0, rest) = w4.split_at(k);
                let (w1, rest) = rest.split_at(k);
                let (w2, w3) = rest.split_at(k);
                let acc = dot4(xr, [w0, w1, w2, w3]);
                for (j, (yv, a)) in y4.iter_mut().zip(acc).enumerate() {
                    *yv = q.output(a, c + j);
                }
                c += 4;
            }
        }
        for (j, yv) in yr.iter_mut().enumerate().skip(c) {
            let wc = &w[j * k..(j + 1) * k];
            *yv = q.output(dot(xr, wc), j);
        }
    }
}

/// Lanes of the portable dot products' accumulators.
const LANES: usize = 8;

/// `Σ a[i] · b[i]`, wrapping, over the shorter of the two.
#[inline(always)]
pub(crate) fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; LANES];
    let (ac, bc) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for i in 0..LANES {
            acc[i] = acc[i].wrapping_add(i32::from(i16::from(x[i]) * i16::from(y[i])));
        }
    }
    let mut sum = acc.iter().fold(0i32, |s, &v| s.wrapping_add(v));
    for (x, y) in ar.iter().zip(br) {
        sum = sum.wrapping_add(i32::from(*x) * i32::from(*y));
    }
    sum
}

/// Four dot products of `x` with `w[0..4]` (each as long as `x`), sharing the loads of `x`.
#[inline(always)]
fn dot4(x: &[i8], w: [&[i8]; 4]) -> [i32; 4] {
    let mut acc = [[0i32; LANES]; 4];
    let n = x.len() / LANES * LANES;
    let xc = x[..n].chunks_exact(LANES);
    let wc = w.map(|w| w[..n.min(w.len())].chunks_exact(LANES));
    let [w0, w1, w2, w3] = wc;
    for ((((xv, a), b), c), d) in xc.zip(w0).zip(w1).zip(w2).zip(w3) {
        for i in 0..LANES {
            let xi = i16::from(xv[i]);
            acc[0][i] = acc[0][i].wrapping_add(i32::from(xi * i16::from(a[i])));
            acc[1][i] = acc[1][i].wrapping_add(i32::from(xi * i16::from(b[i])));
            acc[2][i] = acc[2][i].wrapping_add(i32::from(xi * i16::from(c[i])));
            acc[3][i] = acc[3][i].wrapping_add(i32::from(xi * i16::from(d[i])));
        }
    }
    let mut out = acc.map(|a| a.iter().fold(0i32, |s, &v| s.wrapping_add(v)));
    for (j, wj) in w.iter().enumerate() {
        for (xv, wv) in x[n..].iter().zip(wj.get(n..).unwrap_or_default()) {
            out[j] = out[j].wrapping_add(i32::from(*xv) * i32::from(*wv));
        }
    }
    out
}

/// The geometry of [`depthwise_s8`], in elements of its slices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DwGeometry {
    /// Filter rows and columns (taps).
    pub fh: usize,
    pub fw: usize,
    /// From one tap row to the next in `x` (the dilation times the input row's length).
    pub tap_row: usize,
    /// From one tap column to the next in `x` (the dilation times the input pixel's).
    pub tap_col: usize,
    /// From one output pixel's window to the next in `x` (the stride times the input
    /// pixel's length).
    pub x_step: usize,
    /// From one tap to the next in `w` (the filter's channels).
    pub w_tap: usize,
    /// From one output pixel to the next in `y`.
    pub y_step: usize,
}

impl DwGeometry {
    /// The length `x` must have for `n` output pixels of `ch` channels (0 when `n` is).
    fn x_len(&self, n: usize, ch: usize) -> usize {
        if n == 0 || self.fh == 0 || self.fw == 0 {
            return 0;
        }
        (n - 1) * self.x_step + (self.fh - 1) * self.tap_row + (self.fw - 1) * self.tap_col + ch
    }
}

/// Channels a depthwise block accumulates at once.
const DW_BLOCK: usize = 16;

/// A depthwise convolution over one run of `n` output pixels whose windows lie wholly
/// inside the input (the caller computes border pixels otherwise), depth multiplier 1. For
/// `j` in `0..n` and `c` in `0..ch` (`ch = q.channels()`):
///
/// ```text
/// y[j·g.y_step + c] = requant_c(Σ_{ty<g.fh, tx<g.fw}
///     x[j·g.x_step + ty·g.tap_row + tx·g.tap_col + c] · w[(ty·g.fw + tx)·g.w_tap + c])
/// ```
///
/// (`requant_c` as in the module docs). `x` starts at channel 0 of the first tap of output
/// pixel 0; `w` at channel 0 of tap 0 (`g.w_tap >= ch`); `y` at channel 0 of output pixel
/// 0 (`g.y_step >= ch`), and only those `n · ch` elements of `y` are written. `ch` may be
/// any size. The sum wraps in `i32`.
pub(crate) fn depthwise_s8(
    x: &[i8],
    g: &DwGeometry,
    n: usize,
    w: &[i8],
    q: &Requant<'_>,
    y: &mut [i8],
) {
    #[cfg(planner_mve)]
    let done = mve::depthwise_s8(x, g, n, w, q, y);
    #[cfg(all(planner_dsp, not(planner_mve)))]
    let done = dsp::depthwise_s8(x, g, n, w, q, y);
    #[cfg(not(any(planner_mve, planner_dsp)))]
    let done = 0;
    if done == 0 {
        return portable_depthwise_s8(x, g, n, w, q, y);
    }
    let rest = Requant {
        bias: q.bias.get(done..).unwrap_or_default(),
        mult: q.mult.get(done..).unwrap_or_default(),
        shift: q.shift.get(done..).unwrap_or_default(),
        ..*q
    };
    if rest.channels() > 0 {
        let x = x.get(done..).unwrap_or_default();
        let w = w.get(done..).unwrap_or_default();
        let y = y.get_mut(done..).unwrap_or_default();
        portable_depthwise_s8(x, g, n, w, &rest, y);
    }
}

/// [`depthwise_s8`] in portable Rust.
fn portable_depthwise_s8(
    x: &[i8],
    g: &DwGeometry,
    n: usize,
    w: &[i8],
    q: &Requant<'_>,
    y: &mut [i8],
) {
    let ch = q.channels();
    let taps = g.fh * g.fw;
    let fits = q.complete()
        && (n == 0
            || ch == 0
            || (x.len() >= g.x_len(n, ch)
                && (taps == 0 || w.len() >= (taps - 1) * g.w_tap + ch)
                && y.len() >= (n - 1) * g.y_step + ch));
    debug_assert!(fits, "depthwise_s8: slices shorter than the contract needs");
    if !fits || n == 0 || ch == 0 {
        return;
    }
    for j in 0..n {
        let xj = &x[j * g.x_step..];
        let yj = &mut y[j * g.y_step..j * g.y_step + ch];
        let mut c0 = 0;
        while c0 < ch {
            let len = DW_BLOCK.min(ch - c0);
            let mut acc = [0i32; DW_BLOCK];
            for ty in 0..g.fh {
                for tx in 0..g.fw {
                    let xo = ty * g.tap_row + tx * g.tap_col + c0;
                    let wo = (ty * g.fw + tx) * g.w_tap + c0;
                    let xs = &xj[xo..xo + len];
                    let ws = &w[wo..wo + len];
                    if len == DW_BLOCK {
                        for i in 0..DW_BLOCK {
                            acc[i] =
                                acc[i].wrapping_add(i32::from(i16::from(xs[i]) * i16::from(ws[i])));
                        }
                    } else {
                        for ((a, xv), wv) in acc.iter_mut().zip(xs).zip(ws) {
                            *a = a.wrapping_add(i32::from(i16::from(*xv) * i16::from(*wv)));
                        }
                    }
                }
            }
            for (i, (yv, a)) in yj[c0..c0 + len].iter_mut().zip(acc).enumerate() {
                *yv = q.output(a, c0 + i);
            }
            c0 += len;
        }
    }
}

#[cfg(test)]
mod tests;
