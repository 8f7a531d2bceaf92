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

#[cfg(all(planner_dsp, not(planner_mve)))]
mod dsp;
#[cfg(all(planner_dsp, not(planner_mve)))]
mod dsp_rows;
#[cfg(all(planner_dsp, not(planner_mve)))]
mod dsp_runs;
#[cfg(planner_mve)]
mod mve;
#[cfg(planner_mve)]
mod mve_runs;
mod requant;
#[cfg(planner_sse2)]
mod sse2;

#[cfg(all(planner_dsp, not(planner_mve)))]
use crate::QuantizedMultiplier;
#[cfg(all(planner_dsp, not(planner_mve)))]
pub(crate) use dsp_rows::dot4 as dot4_widened;
#[cfg(planner_mve)]
pub(crate) use requant::MbqmArgs;
#[cfg(any(planner_mve, planner_dsp))]
use requant::RunArgs;
pub(crate) use requant::{Channel, Mbqm, Scalar};

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

    /// The same constants from channel `first` on (none past the end).
    pub(crate) fn from(&self, first: usize) -> Requant<'_> {
        Requant {
            bias: self.bias.get(first..).unwrap_or_default(),
            mult: self.mult.get(first..).unwrap_or_default(),
            shift: self.shift.get(first..).unwrap_or_default(),
            ..*self
        }
    }
}

/// Channels the portable loops unpack at a time.
pub(crate) const BLOCK: usize = 64;

/// `s[i] = s[i + 1]` for the first `i` it returns (at most `s.len() - 1`): an int8 SVDF
/// state stepped back in time. On Helium 16 bytes per vector (`planner_mve_shift_down`,
/// the whole of it); with the DSP extension 32 bytes per pass of an assembly loop for a
/// word-aligned `s` (`planner_dsp_shift_down`, a multiple of 32); 0 (nothing moved)
/// elsewhere.
pub(crate) fn shift_down(s: &mut [i8]) -> usize {
    #[cfg(planner_mve)]
    return mve_runs::shift_down(s);
    #[cfg(all(planner_dsp, not(planner_mve)))]
    return dsp_runs::shift_down(s);
    #[cfg(not(any(planner_mve, planner_dsp)))]
    {
        let _ = s;
        0
    }
}

/// Up to [`BLOCK`] channels of a [`Requant`], unpacked, with its zero point and clamp.
pub(crate) struct Unpacked {
    channels: [Channel; BLOCK],
    lo: i64,
    hi: i64,
}

impl Unpacked {
    /// Channels `first..first + BLOCK` of `q` (fewer at its end; the rest unused).
    pub(crate) fn new(q: &Requant<'_>, first: usize) -> Unpacked {
        let mut channels = [Channel::default(); BLOCK];
        let (b, m, s) = (
            q.bias.get(first..).unwrap_or_default(),
            q.mult.get(first..).unwrap_or_default(),
            q.shift.get(first..).unwrap_or_default(),
        );
        for (ch, ((&b, &m), &s)) in channels.iter_mut().zip(b.iter().zip(m).zip(s)) {
            *ch = Channel::new(b, m, s, q.out_zero);
        }
        Unpacked {
            channels,
            lo: i64::from(q.lo),
            hi: i64::from(q.hi),
        }
    }

    /// Channel `c`'s output of the dot product `acc` (`c < BLOCK`).
    #[inline(always)]
    pub(crate) fn output(&self, acc: i32, c: usize) -> i8 {
        let ch = self.channels.get(c).copied().unwrap_or_default();
        ch.scale(acc).max(self.lo).min(self.hi) as i8
    }

    /// Requantises `acc` into `y`, channel `first + i` of the block from `acc[i]`.
    #[inline(always)]
    fn outputs(&self, first: usize, acc: &[i32], y: &mut [i8]) {
        let channels = self.channels.get(first..).unwrap_or_default();
        for ((yv, &a), ch) in y.iter_mut().zip(acc).zip(channels) {
            *yv = ch.scale(a).max(self.lo).min(self.hi) as i8;
        }
    }
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
    let g = Gemm {
        x,
        x_stride,
        rows,
        w,
        k,
        y_stride,
    };
    // The target's assembly computes the first `done` channels (all, some or none); the
    // portable loop the rest.
    #[cfg(planner_mve)]
    let done = mve::gemm_s8(&g, q, y);
    // One row (a fully-connected layer of one batch): the assembly's two rows would compute
    // it twice, so its dot products go two channels per pass over the row widened once.
    #[cfg(all(planner_dsp, not(planner_mve)))]
    if rows == 1 && gemv_s8(x, w, k, q, y) {
        return;
    }
    #[cfg(all(planner_dsp, not(planner_mve)))]
    let done = dsp::gemm_s8(&g, q, y);
    #[cfg(not(any(planner_mve, planner_dsp)))]
    let done = 0;
    if done == 0 {
        return portable_gemm_s8(&g, q, y);
    }
    let rest = q.from(done);
    if rest.channels() > 0 {
        let w = w.get(done * k..).unwrap_or_default();
        let y = y.get_mut(done..).unwrap_or_default();
        portable_gemm_s8(&Gemm { w, ..g }, &rest, y);
    }
}

/// [`gemm_s8`]'s operands but the requantisation and `y`, for the targets' loops.
#[derive(Clone, Copy)]
struct Gemm<'a> {
    x: &'a [i8],
    x_stride: usize,
    rows: usize,
    w: &'a [i8],
    k: usize,
    y_stride: usize,
}

/// [`gemm_s8`] of one row with the DSP extension: [`dot_rows`]'s `SMLAD` products of
/// [`BLOCK`] channels at a time, then each channel's requantisation. False (nothing
/// written) when the lengths do not fit the contract or the row is longer than the
/// widening buffer.
#[cfg(all(planner_dsp, not(planner_mve)))]
fn gemv_s8(x: &[i8], w: &[i8], k: usize, q: &Requant<'_>, y: &mut [i8]) -> bool {
    let cols = q.channels();
    if !q.complete() || k == 0 || x.len() < k || w.len() < cols * k || y.len() < cols {
        return false;
    }
    let mut acc = [0i32; BLOCK];
    let mut c0 = 0;
    while c0 < cols {
        let n = BLOCK.min(cols - c0);
        let acc = &mut acc[..n];
        let d = DotRows {
            a: &w[c0 * k..(c0 + n) * k],
            sa: k,
            b: &x[..k],
            sb: 0,
            k,
            z: 0,
        };
        if !dsp_rows::dot_rows(&d, acc) {
            // Only the first block can refuse (the row's length): nothing written yet.
            return false;
        }
        let (mult, shift) = (&q.mult[c0..c0 + n], &q.shift[c0..c0 + n]);
        if mult.iter().all(|&m| m == mult[0]) && shift.iter().all(|&s| s == shift[0]) {
            // One multiplier for the block (a per-tensor layer): the run's requantisation,
            // the bias added, straight into the outputs.
            let run = Scalar::new(mult[0], shift[0], q.out_zero, q.lo, q.hi);
            run.outputs(acc, Some(&q.bias[c0..c0 + n]), &mut y[c0..c0 + n]);
            c0 += n;
            continue;
        }
        for (c, (&a, yv)) in (c0..).zip(acc.iter().zip(&mut y[c0..c0 + n])) {
            let m = QuantizedMultiplier {
                multiplier: q.mult[c],
                shift: q.shift[c],
            };
            // Mbqm's `i32` form (a fraction of the `i64` one's instructions on these cores)
            // unless the multiplier is `i32::MIN`.
            *yv = match Mbqm::new(m) {
                Some(m) => {
                    let v = m.apply(a.wrapping_add(q.bias[c]));
                    v.saturating_add(q.out_zero).clamp(q.lo, q.hi) as i8
                }
                None => {
                    let ch = Channel::new(q.bias[c], q.mult[c], q.shift[c], q.out_zero);
                    ch.scale(a).max(i64::from(q.lo)).min(i64::from(q.hi)) as i8
                }
            };
        }
        c0 += n;
    }
    true
}

/// [`gemm_s8`] in portable Rust.
fn portable_gemm_s8(g: &Gemm<'_>, q: &Requant<'_>, y: &mut [i8]) {
    let (x, x_stride, rows, w, k, y_stride) = (g.x, g.x_stride, g.rows, g.w, g.k, g.y_stride);
    let cols = q.channels();
    let fits = q.complete()
        && w.len() >= cols * k
        && (rows == 0
            || (x.len() >= (rows - 1) * x_stride + k && y.len() >= (rows - 1) * y_stride + cols));
    debug_assert!(fits, "gemm_s8: slices shorter than the contract needs");
    if !fits || cols == 0 {
        return;
    }
    if cols <= FEW {
        // A few channels (a classifier's last layer, the channels past the assembly's
        // blocks of four): unpacked one at a time rather than a whole block's.
        for c in 0..cols {
            let ch = Channel::new(q.bias[c], q.mult[c], q.shift[c], q.out_zero);
            let wc = &w[c * k..(c + 1) * k];
            for r in 0..rows {
                let acc = dot(&x[r * x_stride..r * x_stride + k], wc);
                y[r * y_stride + c] = ch.scale(acc).max(i64::from(q.lo)).min(i64::from(q.hi)) as i8;
            }
        }
        return;
    }
    let mut c0 = 0;
    while c0 < cols {
        let n = BLOCK.min(cols - c0);
        let u = Unpacked::new(q, c0);
        let w = &w[c0 * k..(c0 + n) * k];
        if k <= SMALL_K && n >= 8 {
            gemm_small_k(x, x_stride, rows, w, k, &u, &mut y[c0..], y_stride, n);
        } else {
            // Every sum is written before it is read: one buffer for the block's rows, not
            // one zeroed per row. Two rows at a time share each chunk of the weights.
            let mut acc = [[0i32; BLOCK]; 2];
            let row = |r: usize| &x[r * x_stride..r * x_stride + k];
            let mut r = 0;
            while r < rows {
                let pair = r + 1 < rows;
                let [a0, a1] = &mut acc;
                if pair {
                    block_sums([row(r), row(r + 1)], w, n, [a0, a1]);
                } else {
                    block_sums([row(r)], w, n, [a0]);
                }
                for (i, a) in acc.iter().enumerate().take(1 + usize::from(pair)) {
                    let at = (r + i) * y_stride + c0;
                    u.outputs(0, &a[..n], &mut y[at..at + n]);
                }
                r += 1 + usize::from(pair);
            }
        }
        c0 += n;
    }
}

/// The dot products of rows `x[..]` (each `k` long) with the `n` weight rows of `w` (`k`
/// each, back to back), row `r`'s into `acc[r][..n]`: four weight rows at a time, then
/// one. Each weight row is read to the end of `w` (a padded last chunk reads past the
/// row: see [`dot_n`]).
#[inline(always)]
fn block_sums<const R: usize>(x: [&[i8]; R], w: &[i8], n: usize, mut acc: [&mut [i32; BLOCK]; R]) {
    let k = x.first().map_or(0, |x| x.len());
    let at = |j: usize| w.get(j * k..).unwrap_or_default();
    let mut j = 0;
    while j + 4 <= n.min(BLOCK) {
        let s = dot_mn::<R, 4>(x, [at(j), at(j + 1), at(j + 2), at(j + 3)]);
        for (a, sr) in acc.iter_mut().zip(s) {
            a[j..j + 4].copy_from_slice(&sr);
        }
        j += 4;
    }
    while j < n.min(BLOCK) {
        let s = dot_mn::<R, 1>(x, [at(j)]);
        for (a, [v]) in acc.iter_mut().zip(s) {
            a[j] = v;
        }
        j += 1;
    }
}

/// Most channels [`portable_gemm_s8`] unpacks one at a time instead of a [`BLOCK`].
const FEW: usize = 4;

/// The longest rows [`gemm_small_k`] takes.
const SMALL_K: usize = 8;

/// Columns [`gemm_small_k`] transposes at a time.
const SMALL_K_COLS: usize = 32;

/// Lanes of the widest block of [`each_block`]: each `x` value of [`gemm_small_k`] is
/// repeated this many times.
const SPLAT: usize = 16;

/// [`gemm_s8`] over `n <= BLOCK` columns (`u` their constants) with short rows (`k <=
/// SMALL_K`), where a dot product per output costs more than its few products: the
/// weights transposed (`SMALL_K_COLS` columns at a time, on the stack), each output row is
/// `Σ_i x[i] · wt[i][..]`, vectorised across the columns.
#[allow(clippy::too_many_arguments)]
fn gemm_small_k(
    x: &[i8],
    x_stride: usize,
    rows: usize,
    w: &[i8],
    k: usize,
    u: &Unpacked,
    y: &mut [i8],
    y_stride: usize,
    n: usize,
) {
    let mut c0 = 0;
    while c0 < n {
        let m = SMALL_K_COLS.min(n - c0);
        let mut wt = [0i8; SMALL_K * SMALL_K_COLS];
        for (c, wc) in w[c0 * k..(c0 + m) * k].chunks_exact(k.max(1)).enumerate() {
            for (i, &v) in wc.iter().enumerate() {
                wt[i * m + c] = v;
            }
        }
        let wt = &wt[..k * m];
        let mut splat = [0i8; SMALL_K * SPLAT];
        for r in 0..rows {
            let xr = &x[r * x_stride..r * x_stride + k];
            for (row, &v) in splat.chunks_exact_mut(SPLAT).zip(xr) {
                row.fill(v);
            }
            let terms = Splat {
                x: &splat,
                w: wt,
                m,
            };
            let yr = &mut y[r * y_stride + c0..r * y_stride + c0 + m];
            each_block(&terms, m, (k, 1), (u, c0), yr);
        }
        c0 += m;
    }
}

/// Bytes of the portable dot products' chunks.
const CHUNK_BYTES: usize = 32;

/// `Σ a[i] · b[i]` over one chunk: LLVM turns it into widening multiplies and pairwise
/// adds (`pmaddwd` on x86) and one horizontal sum.
#[inline(always)]
fn chunk_dot(a: &[i8; CHUNK_BYTES], b: &[i8; CHUNK_BYTES]) -> i32 {
    let mut t = 0i32;
    for i in 0..CHUNK_BYTES {
        t = t.wrapping_add(i32::from(a[i]) * i32::from(b[i]));
    }
    t
}

/// `Σ_{i < x.len()} x[i] · w[i]`, wrapping, for `w` at least as long as `x`.
#[inline(always)]
pub(crate) fn dot(x: &[i8], w: &[i8]) -> i32 {
    dot_n::<1>(x, [w])[0]
}

/// `W` dot products `Σ_{i < k} x[i] · w[j][i]` (`k = x.len()`, each `w[j]` at least that
/// long; all zero otherwise), wrapping. A `w[j]` longer than `x` is better: a padded last
/// chunk reads its next bytes in place (multiplied by zero) rather than copying.
#[inline(always)]
fn dot_n<const W: usize>(x: &[i8], w: [&[i8]; W]) -> [i32; W] {
    let [s] = dot_mn::<1, W>([x], w);
    s
}

/// `R · W` dot products `Σ_{i < k} x[r][i] · w[j][i]`: [`dot_n`] of each row `x[r]` (all
/// of one length `k`; all zero otherwise), sharing each chunk of `w[j]` across the rows
/// where the target can (SSE2 on x86-64).
#[inline(always)]
fn dot_mn<const R: usize, const W: usize>(x: [&[i8]; R], w: [&[i8]; W]) -> [[i32; W]; R] {
    #[cfg(planner_sse2)]
    return sse2::dot_mn(x, w);
    #[cfg(not(planner_sse2))]
    {
        let k = x.first().map_or(0, |x| x.len());
        let mut s = [[0; W]; R];
        if x.iter().all(|x| x.len() == k) {
            for (sr, xr) in s.iter_mut().zip(x) {
                *sr = portable_dot_n(xr, w);
            }
        }
        s
    }
}

/// [`dot_n`] in portable Rust, chunk by chunk. The last partial chunk, when it has 8 bytes
/// or more, is a whole chunk of `x` padded with zeros times the next [`CHUNK_BYTES`] bytes
/// of `w[j]` (read in place when `w[j]` reaches that far, which costs nothing: they are
/// multiplied by zero); shorter tails go byte by byte.
#[cfg_attr(all(planner_sse2, not(test)), allow(dead_code))]
#[inline(always)]
fn portable_dot_n<const W: usize>(x: &[i8], w: [&[i8]; W]) -> [i32; W] {
    let mut s = [0i32; W];
    let k = x.len();
    if w.iter().any(|w| w.len() < k) {
        return s;
    }
    let mut at = 0;
    while at + CHUNK_BYTES <= k {
        let Ok(a) = <&[i8; CHUNK_BYTES]>::try_from(&x[at..at + CHUNK_BYTES]) else {
            break;
        };
        for (sj, wj) in s.iter_mut().zip(&w) {
            if let Ok(b) = <&[i8; CHUNK_BYTES]>::try_from(&wj[at..at + CHUNK_BYTES]) {
                *sj = sj.wrapping_add(chunk_dot(a, b));
            }
        }
        at += CHUNK_BYTES;
    }
    let tail = &x[at..];
    if tail.len() >= 8 {
        let mut a = [0i8; CHUNK_BYTES];
        a[..tail.len()].copy_from_slice(tail);
        for (sj, wj) in s.iter_mut().zip(&w) {
            let mut padded = [0i8; CHUNK_BYTES];
            let b = match wj.get(at..at + CHUNK_BYTES) {
                Some(b) => b,
                None => {
                    padded[..tail.len()].copy_from_slice(&wj[at..k]);
                    &padded
                }
            };
            if let Ok(b) = <&[i8; CHUNK_BYTES]>::try_from(b) {
                *sj = sj.wrapping_add(chunk_dot(&a, b));
            }
        }
    } else {
        for (i, &xv) in tail.iter().enumerate() {
            for (sj, wj) in s.iter_mut().zip(&w) {
                *sj = sj.wrapping_add(i32::from(xv) * i32::from(wj[at + i]));
            }
        }
    }
    s
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
    let rest = q.from(done);
    if rest.channels() > 0 {
        let x = x.get(done..).unwrap_or_default();
        let w = w.get(done..).unwrap_or_default();
        let y = y.get_mut(done..).unwrap_or_default();
        portable_depthwise_s8(x, g, n, w, &rest, y);
    }
}

/// Most taps the targets' depthwise assembly buffers a block's weights for (a 9x9 window);
/// larger windows take the portable loop.
#[cfg(any(planner_mve, planner_dsp))]
const DW_MAX_TAPS: usize = 81;

/// The start of the arguments of the targets' depthwise assembly (`planner_mve_dw_s8`,
/// `planner_dsp_dw_s8`), read by offset from it. Strides in bytes.
#[cfg(any(planner_mve, planner_dsp))]
#[repr(C)]
#[derive(Clone, Copy)]
struct DwHead {
    x: *const i8, // 0: channel 0 of the first tap of output pixel 0
    n: u32,       // 4: output pixels
    fh: u32,      // 8
    fw: u32,      // 12
    tap_row: u32, // 16
    tap_col: u32, // 20
    x_step: u32,  // 24
    w: *const i8, // 28: channel 0 of tap 0
    w_tap: u32,   // 32
    y: *mut i8,   // 36
    y_step: u32,  // 40
    blocks: u32,  // 44: blocks of `block` channels
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
    let mut c0 = 0;
    while c0 < ch {
        let len = BLOCK.min(ch - c0);
        let u = Unpacked::new(q, c0);
        for j in 0..n {
            let terms = Taps {
                x: &x[j * g.x_step + c0..],
                w: &w[c0..],
                g,
            };
            let yj = &mut y[j * g.y_step + c0..j * g.y_step + c0 + len];
            each_block(&terms, len, (g.fh, g.fw), (&u, 0), yj);
        }
        c0 += len;
    }
}

/// `acc[i] += x[i] · w[i]` (wrapping) over the shortest of the three (the accumulators in
/// memory: for the few pixels at a border).
#[inline(always)]
pub(crate) fn mac_row(acc: &mut [i32], x: &[i8], w: &[i8]) {
    let n = acc.len().min(x.len()).min(w.len());
    let (acc, x, w) = (&mut acc[..n], &x[..n], &w[..n]);
    for ((a, &xv), &wv) in acc.iter_mut().zip(x).zip(w) {
        *a = a.wrapping_add(i32::from(i16::from(xv) * i16::from(wv)));
    }
}

/// The terms of per-channel sums of products, in `rows · cols` terms: term `(r, t)` of
/// channels `c..` multiplies `x(r, t, c)` by `w(r, t, c)` lane by lane ([`each_block`]).
/// Callers check the slices' lengths once: every term's values lie inside them.
trait Terms {
    fn x(&self, r: usize, t: usize, c: usize) -> &[i8];
    fn w(&self, r: usize, t: usize, c: usize) -> &[i8];
}

/// A depthwise window ([`depthwise_s8`]): term `(ty, tx)` is a tap.
struct Taps<'a> {
    x: &'a [i8],
    w: &'a [i8],
    g: &'a DwGeometry,
}

impl Terms for Taps<'_> {
    #[inline(always)]
    fn x(&self, ty: usize, tx: usize, c: usize) -> &[i8] {
        &self.x[ty * self.g.tap_row + tx * self.g.tap_col + c..]
    }
    #[inline(always)]
    fn w(&self, ty: usize, tx: usize, c: usize) -> &[i8] {
        &self.w[(ty * self.g.fw + tx) * self.g.w_tap + c..]
    }
}

/// One row of [`gemm_small_k`]: term `(i, 0)` is row `i` of `x` (`x[i]` repeated) times
/// row `i` of the transposed weights (`m` columns).
struct Splat<'a> {
    x: &'a [i8],
    w: &'a [i8],
    m: usize,
}

impl Terms for Splat<'_> {
    #[inline(always)]
    fn x(&self, i: usize, _: usize, _: usize) -> &[i8] {
        &self.x[i * SPLAT..]
    }
    #[inline(always)]
    fn w(&self, i: usize, _: usize, c: usize) -> &[i8] {
        &self.w[i * self.m + c..]
    }
}

/// The sums of `terms`' `rows · cols` terms for channels `c..c + N`, in `N` accumulators
/// that stay in registers.
#[inline(always)]
fn sums<T: Terms, const N: usize>(terms: &T, (rows, cols): (usize, usize), c: usize) -> [i32; N] {
    #[cfg(planner_sse2)]
    if let Some(s) = sse2::sums::<T, N>(terms, (rows, cols), c) {
        return s;
    }
    portable_sums(terms, (rows, cols), c)
}

/// [`sums`] in portable Rust.
#[inline(always)]
fn portable_sums<T: Terms, const N: usize>(
    terms: &T,
    (rows, cols): (usize, usize),
    c: usize,
) -> [i32; N] {
    let mut acc = [0i32; N];
    for r in 0..rows {
        for t in 0..cols {
            let (x, w) = (&terms.x(r, t, c)[..N], &terms.w(r, t, c)[..N]);
            for i in 0..N {
                acc[i] = acc[i].wrapping_add(i32::from(i16::from(x[i]) * i16::from(w[i])));
            }
        }
    }
    acc
}

/// The outputs of channels `0..n` of `terms` into `y[..n]`, requantised by `u`'s channels
/// `first..first + n`: in blocks of 16, then 8, then 1.
#[inline(always)]
fn each_block<T: Terms>(
    terms: &T,
    n: usize,
    steps: (usize, usize),
    (u, first): (&Unpacked, usize),
    y: &mut [i8],
) {
    let mut c = 0;
    while c + 16 <= n {
        u.outputs(
            first + c,
            &sums::<T, 16>(terms, steps, c),
            &mut y[c..c + 16],
        );
        c += 16;
    }
    if c + 8 <= n {
        u.outputs(first + c, &sums::<T, 8>(terms, steps, c), &mut y[c..c + 8]);
        c += 8;
    }
    while c < n {
        u.outputs(first + c, &sums::<T, 1>(terms, steps, c), &mut y[c..c + 1]);
        c += 1;
    }
}

#[cfg(test)]
mod tests;

/// [`dot_rows`]'s operands but `out`, for the targets' loops.
#[cfg(any(planner_mve, planner_dsp))]
#[derive(Clone, Copy)]
struct DotRows<'a> {
    a: &'a [i8],
    sa: usize,
    b: &'a [i8],
    sb: usize,
    k: usize,
    z: i32,
}

/// For each row `r < out.len()`: `out[r] = Σ_{i<k} a[r·sa + i] · (b[r·sb + i] − z)`,
/// wrapping, computed as `Σ a·b − z·Σ a` (equal in wrapping `i32`). `a` and `b` hold the
/// rows at strides `sa` and `sb` (`sb` may be 0: one `b` for every row); a row that does
/// not fit in its slice stops the loop there (debug builds panic). On Helium two rows per
/// pass (`planner_mve_dot_rows`), or, with one `b` (`sb = 0`) and an int8 `z`, four rows
/// per pass over `b − z` widened to int16 (`planner_mve_dot_rows_x`); with the DSP
/// extension `SMLAD` on halfword pairs (`dsp_rows`); elsewhere a plain loop.
pub(crate) fn dot_rows(
    (a, sa): (&[i8], usize),
    (b, sb): (&[i8], usize),
    k: usize,
    z: i32,
    out: &mut [i32],
) {
    let fits = |len: usize, stride: usize| {
        out.is_empty()
            || (out.len() - 1)
                .checked_mul(stride)
                .and_then(|v| v.checked_add(k))
                .is_some_and(|need| need <= len)
    };
    let whole = fits(a.len(), sa) && fits(b.len(), sb);
    debug_assert!(whole, "dot_rows: slices shorter than the rows need");
    #[cfg(any(planner_mve, planner_dsp))]
    let d = DotRows { a, sa, b, sb, k, z };
    #[cfg(planner_mve)]
    if whole {
        if sb == 0 && mve_runs::dot_rows_x((a, sa), &b[..k], z, out) {
            return;
        }
        if mve_runs::dot_rows(&d, out) {
            return;
        }
    }
    #[cfg(all(planner_dsp, not(planner_mve)))]
    if whole && dsp_rows::dot_rows(&d, out) {
        return;
    }
    for (r, o) in out.iter_mut().enumerate() {
        let (Some(a), Some(b)) = (a.get(r * sa..r * sa + k), b.get(r * sb..r * sb + k)) else {
            return;
        };
        let (t, s) = super::lanes::dot_sum(a, b);
        *o = t.wrapping_sub(z.wrapping_mul(s));
    }
}
