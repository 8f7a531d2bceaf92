//! The dot products of the portable loops ([`super::dot_mn`]) on x86-64, with SSE2 (part of
//! every x86-64 CPU, so no detection at run time). LLVM vectorises the portable form chunk
//! by chunk but sums each chunk's lanes before the next (three shuffles and adds per chunk
//! and channel); here the lanes stay in one register per channel over the whole row,
//! `pmaddwd` on int8 values widened to int16, and are summed once at the end.

use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_madd_epi16, _mm_setzero_si128,
    _mm_shuffle_epi32, _mm_srai_epi16, _mm_unpackhi_epi8, _mm_unpacklo_epi8,
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

/// The chunk of `v` from `at` on: in place when `v` has 16 bytes there, else its
/// `min(v.len() - at, 16)` bytes followed by zeros (copied into `pad`).
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
