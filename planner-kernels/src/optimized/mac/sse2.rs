//! The portable loops' inner sums on x86-64, with SSE2 (part of every x86-64 CPU, so no
//! detection at run time). The GEMM's dot products ([`super::dot_mn`]): LLVM vectorises the
//! portable form chunk by chunk but sums each chunk's lanes before the next (three shuffles
//! and adds per chunk and channel); here the lanes stay in one register per channel over the
//! whole row, `pmaddwd` on int8 values widened to int16, and are summed once at the end. The
//! depthwise windows' per-channel sums ([`super::sums`]): two taps at a time, interleaved so
//! that `pmaddwd` adds both taps' products of four channels at once (LLVM left the
//! eight-channel blocks scalar).

use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadl_epi64, _mm_loadu_si128, _mm_madd_epi16,
    _mm_setzero_si128, _mm_shuffle_epi32, _mm_srai_epi16, _mm_storeu_si128, _mm_unpackhi_epi8,
    _mm_unpacklo_epi8,
};

/// Bytes of a chunk: one 128-bit register of int8 values.
const CHUNK: usize = 16;

/// The 16 bytes of `b` in a register.
#[inline(always)]
fn load(b: &[i8; CHUNK]) -> __m128i {
    // SAFETY: `b` is 16 readable bytes, and `_mm_loadu_si128` reads 16 bytes from any
    // address (no alignment required).
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// The chunk of `v` from `at` on: in place when `v` has 16 bytes there, else its `len`
/// bytes from `at` (none when `v` is shorter) followed by zeros, copied into `pad`.
#[inline(always)]
fn chunk<'a>(v: &'a [i8], at: usize, len: usize, pad: &'a mut [i8; CHUNK]) -> &'a [i8; CHUNK] {
    if let Some(Ok(b)) = v.get(at..at + CHUNK).map(<&[i8; CHUNK]>::try_from) {
        return b;
    }
    let part = v.get(at..at + len).unwrap_or_default();
    pad[..part.len()].copy_from_slice(part);
    pad
}

/// The 16 int8 values of `v` sign-extended to int16: the low eight, the high eight (each
/// byte put in the high half of a halfword, then shifted down arithmetically).
#[inline(always)]
fn widen(v: __m128i) -> (__m128i, __m128i) {
    // SAFETY: register-only SSE2 instructions, which every x86-64 CPU has.
    unsafe {
        (
            _mm_srai_epi16::<8>(_mm_unpacklo_epi8(v, v)),
            _mm_srai_epi16::<8>(_mm_unpackhi_epi8(v, v)),
        )
    }
}

/// The four `i32` lanes of `v` added, wrapping.
#[inline(always)]
fn sum(v: __m128i) -> i32 {
    // SAFETY: register-only SSE2 instructions, which every x86-64 CPU has.
    unsafe {
        let v = _mm_add_epi32(v, _mm_shuffle_epi32::<0b01_00_11_10>(v));
        let v = _mm_add_epi32(v, _mm_shuffle_epi32::<0b10_11_00_01>(v));
        _mm_cvtsi128_si32(v)
    }
}

/// `acc` plus the four pairwise sums of products of `(xl, xh)` and `(wl, wh)` (int16
/// lanes). Each pair of int8 products sums to at most 2^15: `pmaddwd` never saturates
/// here, and the lanes wrap as the `i32` sum does.
#[inline(always)]
fn mac(acc: __m128i, (xl, xh): (__m128i, __m128i), (wl, wh): (__m128i, __m128i)) -> __m128i {
    // SAFETY: register-only SSE2 instructions, which every x86-64 CPU has.
    unsafe {
        let p = _mm_add_epi32(_mm_madd_epi16(xl, wl), _mm_madd_epi16(xh, wh));
        _mm_add_epi32(acc, p)
    }
}

/// `R · W` dot products `Σ_{i < k} x[r][i] · w[j][i]` (`k = x[0].len()`, every `x[r]` that
/// long and each `w[j]` at least that long; all zero otherwise), wrapping: each chunk of a
/// `w[j]` loaded and widened once for the `R` rows. A last partial chunk is padded with
/// zeros: `x[r]`'s in a copy, `w[j]`'s read in place when it reaches that far (multiplied
/// by zero).
#[inline(always)]
pub(super) fn dot_mn<const R: usize, const W: usize>(
    x: [&[i8]; R],
    w: [&[i8]; W],
) -> [[i32; W]; R] {
    let k = x.first().map_or(0, |x| x.len());
    if x.iter().any(|x| x.len() != k) || w.iter().any(|w| w.len() < k) {
        return [[0; W]; R];
    }
    // SAFETY: a register-only SSE2 instruction, which every x86-64 CPU has.
    let zero = unsafe { _mm_setzero_si128() };
    let mut acc = [[zero; W]; R];
    let mut at = 0;
    while at < k {
        let len = CHUNK.min(k - at);
        let mut xpad = [[0i8; CHUNK]; R];
        let mut xv = [(zero, zero); R];
        for ((v, xr), pad) in xv.iter_mut().zip(&x).zip(&mut xpad) {
            *v = widen(load(chunk(xr, at, len, pad)));
        }
        for (j, wj) in w.iter().enumerate() {
            let mut wpad = [0i8; CHUNK];
            let wv = widen(load(chunk(wj, at, len, &mut wpad)));
            for (ar, &v) in acc.iter_mut().zip(&xv) {
                ar[j] = mac(ar[j], v, wv);
            }
        }
        at += CHUNK;
    }
    let mut s = [[0i32; W]; R];
    for (sr, ar) in s.iter_mut().zip(&acc) {
        for (sj, aj) in sr.iter_mut().zip(ar) {
            *sj = sum(*aj);
        }
    }
    s
}

/// `N` (8 or 16) per-channel sums of `terms`' `rows · cols` terms for channels `c..c + N`
/// ([`super::sums`]): two terms at a time, their bytes interleaved channel by channel
/// (`x_a[i], x_b[i]`) so that one `pmaddwd` gives `x_a·w_a + x_b·w_b` for four channels; an
/// odd last term is paired with zeros. `None` for another `N`.
#[inline(always)]
pub(super) fn sums<T: super::Terms, const N: usize>(
    terms: &T,
    (rows, cols): (usize, usize),
    c: usize,
) -> Option<[i32; N]> {
    if N != 8 && N != 16 {
        return None;
    }
    // SAFETY: a register-only SSE2 instruction, which every x86-64 CPU has.
    let zero = unsafe { _mm_setzero_si128() };
    let mut acc = [zero; 4];
    let mut add = |(xa, wa): (__m128i, __m128i), (xb, wb): (__m128i, __m128i)| {
        let (x, w) = (pairs(xa, xb), pairs(wa, wb));
        for (a, (x, w)) in acc.iter_mut().zip(x.iter().zip(&w)).take(N / 4) {
            // SAFETY: register-only SSE2 instructions, which every x86-64 CPU has. Two
            // int8 products sum to at most 2^15: `pmaddwd` never saturates here.
            *a = unsafe { _mm_add_epi32(*a, _mm_madd_epi16(*x, *w)) };
        }
    };
    let mut pending = None;
    for r in 0..rows {
        for t in 0..cols {
            let term = (lanes::<N>(terms.x(r, t, c)), lanes::<N>(terms.w(r, t, c)));
            match pending.take() {
                Some(first) => add(first, term),
                None => pending = Some(term),
            }
        }
    }
    if let Some(last) = pending {
        add(last, (zero, zero));
    }
    let mut out = [0i32; N];
    for (o, a) in out.chunks_exact_mut(4).zip(&acc) {
        let mut v = [0i32; 4];
        // SAFETY: `v` is 16 writable bytes; `_mm_storeu_si128` writes 16 bytes to any
        // address (no alignment required).
        unsafe { _mm_storeu_si128(v.as_mut_ptr().cast(), *a) };
        o.copy_from_slice(&v);
    }
    Some(out)
}

/// The first `N` (8 or 16) bytes of `v` in a register (the upper half zero when `N` is 8),
/// or zeros when `v` is shorter than `N` (callers give at least `N`).
#[inline(always)]
fn lanes<const N: usize>(v: &[i8]) -> __m128i {
    if N == CHUNK
        && let Some(Ok(b)) = v.get(..CHUNK).map(<&[i8; CHUNK]>::try_from)
    {
        return load(b);
    }
    if N == 8
        && let Some(Ok(b)) = v.get(..8).map(<&[i8; 8]>::try_from)
    {
        // SAFETY: `b` is 8 readable bytes, and `_mm_loadl_epi64` reads 8 bytes from any
        // address (no alignment required), zeroing the upper half.
        return unsafe { _mm_loadl_epi64(b.as_ptr().cast()) };
    }
    // SAFETY: a register-only SSE2 instruction, which every x86-64 CPU has.
    unsafe { _mm_setzero_si128() }
}

/// The int8 bytes of `a` and `b` interleaved (`a[0], b[0], a[1], b[1], ...`) and widened to
/// int16: four registers of four channel pairs each (channels 0-3, 4-7, 8-11, 12-15).
#[inline(always)]
fn pairs(a: __m128i, b: __m128i) -> [__m128i; 4] {
    // SAFETY: register-only SSE2 instructions, which every x86-64 CPU has.
    unsafe {
        let lo = _mm_unpacklo_epi8(a, b);
        let hi = _mm_unpackhi_epi8(a, b);
        let (l0, l1) = widen(lo);
        let (h0, h1) = widen(hi);
        [l0, l1, h0, h1]
    }
}
