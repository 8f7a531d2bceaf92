//! The mixed-radix complex FFT under TFLM's real FFTs: kiss FFT v130 as TFLM builds it, in
//! fixed point for int16 (Q15) and int32 (Q31) and in `f32`.
//!
//! A length `n` splits into radices 4, then 2, then odd numbers (the first stage takes the
//! first radix); each stage recombines `p` transforms of length `m = n / p` with radix-2, 3,
//! 4 or 5 butterflies. TFLM's build has no scratch memory for the generic butterfly of any
//! other radix (it writes through a null pointer), so lengths with a prime factor above 5
//! are refused here. In fixed point every butterfly first divides its inputs by its radix
//! (multiplying by `MAX / p` with rounding), so the transform comes out scaled by `1 / n`.
//!
//! Buffers are interleaved complex values (`re, im, re, im, ...`), the layout of TFLM's
//! tensors of complex values.

/// One complex value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Cpx<T> {
    /// Real part.
    pub(crate) r: T,
    /// Imaginary part.
    pub(crate) i: T,
}

/// The element types of TFLM's FFTs (`i16`, `i32`, `f32`) with kiss FFT's arithmetic for
/// each: wrapping integer sums (C's int arithmetic truncated back to the element type) and
/// rounded fixed-point products, or plain `f32` operations in C's order.
pub(crate) trait FftScalar: Copy + Default + core::fmt::Debug {
    /// The twiddle `e^(i phase)`: `cos` and `sin` in `f64`, then rounded to the type (fixed
    /// point: `floor(0.5 + MAX * v)` with `MAX` 32767 or 2147483647; `f32`: a cast).
    fn twiddle(phase: f64) -> Cpx<Self>;
    /// `a + b` (wrapping).
    fn add(self, b: Self) -> Self;
    /// `a - b` (wrapping).
    fn sub(self, b: Self) -> Self;
    /// `-a` (wrapping).
    fn neg(self) -> Self;
    /// A product with a twiddle part: fixed point rounds it back to the format.
    fn mul(self, b: Self) -> Self;
    /// The complex product, each part's two products summed before the rounding.
    fn cmul(a: Cpx<Self>, b: Cpx<Self>) -> Cpx<Self>;
    /// Fixed point: `self` times `MAX / div` (integer quotient) rounded back, about
    /// `self / div`; `f32`: unchanged.
    fn fixdiv(self, div: i32) -> Self;
    /// Half of `self` (an arithmetic shift right by one in fixed point).
    fn half(self) -> Self;
    /// Half of `a + b`, the sum taken in C's `int` (for `i16` wider than the type).
    fn half_add(self, b: Self) -> Self;
    /// Half of `a - b`, the difference taken in C's `int`.
    fn half_sub(self, b: Self) -> Self;
    /// What TFLM's IRFFT does to its output after the transform: nothing for the integer
    /// types; `f32` divides each value by `fft_length` (converted to `f32`).
    fn scale_inverse(_out: &mut [Self], _fft_length: usize) {}
}

/// `a` divided by `div` as the fixed-point butterflies do it, both parts.
pub(crate) fn cfixdiv<T: FftScalar>(a: Cpx<T>, div: i32) -> Cpx<T> {
    Cpx {
        r: a.r.fixdiv(div),
        i: a.i.fixdiv(div),
    }
}

/// `a + b`, both parts.
pub(crate) fn cadd<T: FftScalar>(a: Cpx<T>, b: Cpx<T>) -> Cpx<T> {
    Cpx {
        r: a.r.add(b.r),
        i: a.i.add(b.i),
    }
}

/// `a - b`, both parts.
pub(crate) fn csub<T: FftScalar>(a: Cpx<T>, b: Cpx<T>) -> Cpx<T> {
    Cpx {
        r: a.r.sub(b.r),
        i: a.i.sub(b.i),
    }
}

/// The conjugate of `a`: its imaginary part negated (wrapping).
pub(crate) fn conj<T: FftScalar>(a: Cpx<T>) -> Cpx<T> {
    Cpx {
        r: a.r,
        i: a.i.neg(),
    }
}

/// Q15 rounding: `(x + 2^14) >> 15`, truncated to 16 bits.
fn round_q15(x: i32) -> i16 {
    (x.wrapping_add(1 << 14) >> 15) as i16
}

/// Q31 rounding: `(x + 2^30) >> 31`, truncated to 32 bits.
fn round_q31(x: i64) -> i32 {
    (x.wrapping_add(1 << 30) >> 31) as i32
}

/// [`FftScalar`] for a fixed-point type `$t` (Q15 or Q31, `MAX` its largest value): its
/// products in the wider `$wide` rounded back by `$round`, and the halved sums and
/// differences taken in C's `int` (`i32`, wrapping: wider than `i16`, as wide as `i32`).
macro_rules! fixed_point {
    ($($t:ident: $wide:ident, $round:ident;)*) => {$(
        impl FftScalar for $t {
            fn twiddle(phase: f64) -> Cpx<$t> {
                let max = f64::from($t::MAX);
                Cpx {
                    r: libm::floor(0.5 + max * libm::cos(phase)) as $t,
                    i: libm::floor(0.5 + max * libm::sin(phase)) as $t,
                }
            }
            fn add(self, b: $t) -> $t {
                self.wrapping_add(b)
            }
            fn sub(self, b: $t) -> $t {
                self.wrapping_sub(b)
            }
            fn neg(self) -> $t {
                self.wrapping_neg()
            }
            fn mul(self, b: $t) -> $t {
                $round($wide::from(self) * $wide::from(b))
            }
            fn cmul(a: Cpx<$t>, b: Cpx<$t>) -> Cpx<$t> {
                let p = |x: $t, y: $t| $wide::from(x) * $wide::from(y);
                Cpx {
                    r: $round(p(a.r, b.r).wrapping_sub(p(a.i, b.i))),
                    i: $round(p(a.r, b.i).wrapping_add(p(a.i, b.r))),
                }
            }
            fn fixdiv(self, div: i32) -> $t {
                $round($wide::from(self) * $wide::from(i32::from($t::MAX) / div))
            }
            fn half(self) -> $t {
                self >> 1
            }
            fn half_add(self, b: $t) -> $t {
                (i32::from(self).wrapping_add(i32::from(b)) >> 1) as $t
            }
            fn half_sub(self, b: $t) -> $t {
                (i32::from(self).wrapping_sub(i32::from(b)) >> 1) as $t
            }
        }
    )*};
}

fixed_point! {
    i16: i32, round_q15;
    i32: i64, round_q31;
}

impl FftScalar for f32 {
    fn twiddle(phase: f64) -> Cpx<f32> {
        Cpx {
            r: libm::cos(phase) as f32,
            i: libm::sin(phase) as f32,
        }
    }
    fn add(self, b: f32) -> f32 {
        self + b
    }
    fn sub(self, b: f32) -> f32 {
        self - b
    }
    fn neg(self) -> f32 {
        -self
    }
    fn mul(self, b: f32) -> f32 {
        self * b
    }
    fn cmul(a: Cpx<f32>, b: Cpx<f32>) -> Cpx<f32> {
        Cpx {
            r: a.r * b.r - a.i * b.i,
            i: a.r * b.i + a.i * b.r,
        }
    }
    fn fixdiv(self, _div: i32) -> f32 {
        self
    }
    fn half(self) -> f32 {
        self * 0.5
    }
    fn half_add(self, b: f32) -> f32 {
        (self + b) * 0.5
    }
    fn half_sub(self, b: f32) -> f32 {
        (self - b) * 0.5
    }
    fn scale_inverse(out: &mut [f32], fft_length: usize) {
        let n = fft_length as f32;
        for v in out {
            *v /= n;
        }
    }
}

/// Complex value `k` of the interleaved buffer `b`.
pub(crate) fn load<T: Copy>(b: &[T], k: usize) -> Cpx<T> {
    Cpx {
        r: b[2 * k],
        i: b[2 * k + 1],
    }
}

/// Stores `v` as complex value `k` of the interleaved buffer `b`.
pub(crate) fn store<T: Copy>(b: &mut [T], k: usize, v: Cpx<T>) {
    b[2 * k] = v.r;
    b[2 * k + 1] = v.i;
}

/// At most this many stages (kiss FFT's `MAXFACTORS`; a length below 2^31 has fewer).
const MAX_STAGES: usize = 32;

/// The stages of a complex FFT: `(p, m)` pairs, radix and the length left after it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stages {
    pairs: [(usize, usize); MAX_STAGES],
    count: usize,
}

impl Stages {
    /// The stages in order, outermost first.
    pub(crate) fn list(&self) -> &[(usize, usize)] {
        &self.pairs[..self.count]
    }
}

/// Splits `n` (at least 1) as kiss FFT does: radix 4 while it divides, then 2, then 3, 5,
/// 7, ...; a trial radix above `floor(sqrt(n))` of the original `n` (in integers: one whose
/// square exceeds it) takes the whole rest.
/// `None` when a radix is outside 2..=5 (`n` = 1 included: its one stage has radix 1), the
/// generic butterfly TFLM's build cannot run, or `n` exceeds `i32::MAX`.
pub(crate) fn stages(n: usize) -> Option<Stages> {
    if n == 0 || n > i32::MAX as usize {
        return None;
    }
    let total = n;
    let mut out = Stages {
        pairs: [(0, 0); MAX_STAGES],
        count: 0,
    };
    let (mut n, mut p) = (n, 4usize);
    loop {
        while n % p != 0 {
            p = match p {
                4 => 2,
                2 => 3,
                _ => p + 2,
            };
            if p.checked_mul(p).is_none_or(|sq| sq > total) {
                p = n;
            }
        }
        n /= p;
        if !(2..=5).contains(&p) || out.count == MAX_STAGES {
            return None;
        }
        out.pairs[out.count] = (p, n);
        out.count += 1;
        if n <= 1 {
            return Some(out);
        }
    }
}

/// Fills `tw` (interleaved, `n` complex values) with the twiddles of a length-`n` complex
/// FFT: `e^(-2 pi i k / n)` (the inverse: the phase negated), the phase computed in `f64`
/// in kiss FFT's order.
pub(crate) fn fill_twiddles<T: FftScalar>(tw: &mut [T], n: usize, inverse: bool) {
    let pi = core::f64::consts::PI;
    for k in 0..n {
        let mut phase = -2.0 * pi * k as f64 / n as f64;
        if inverse {
            phase = -phase;
        }
        store(tw, k, T::twiddle(phase));
    }
}

/// One complex FFT: `out` (interleaved, `n` values) gets the transform of the `n` values
/// `src(0)`, ..., `src(n - 1)`; `tw` holds the twiddles of [`fill_twiddles`] and `stages`
/// the split of `n`.
pub(crate) fn transform<T: FftScalar, F: Fn(usize) -> Cpx<T>>(
    out: &mut [T],
    src: &F,
    tw: &[T],
    stages: &Stages,
    inverse: bool,
) {
    work(out, src, 0, 1, stages.list(), tw, inverse);
}

/// One stage: `out` (`p * m` values) gets the transform of `src(start)`,
/// `src(start + stride)`, ..., the `p` sub-transforms of every `p`-th of those values
/// first (recursively), then the radix-`p` butterflies.
fn work<T: FftScalar, F: Fn(usize) -> Cpx<T>>(
    out: &mut [T],
    src: &F,
    start: usize,
    stride: usize,
    stages: &[(usize, usize)],
    tw: &[T],
    inverse: bool,
) {
    let Some((&(p, m), rest)) = stages.split_first() else {
        return;
    };
    if m == 1 {
        for j in 0..p {
            store(out, j, src(start + j * stride));
        }
    } else {
        for (j, part) in out.chunks_exact_mut(2 * m).take(p).enumerate() {
            work(part, src, start + j * stride, stride * p, rest, tw, inverse);
        }
    }
    match p {
        2 => radix2(out, tw, stride, m),
        3 => radix3(out, tw, stride, m),
        4 => radix4(out, tw, stride, m, inverse),
        _ => radix5(out, tw, stride, m),
    }
}

/// `a - i b` and `a + i b` (wrapping): `b` turned a quarter either way, added to `a`.
fn turns<T: FftScalar>(a: Cpx<T>, b: Cpx<T>) -> (Cpx<T>, Cpx<T>) {
    let minus_i = Cpx {
        r: a.r.add(b.i),
        i: a.i.sub(b.r),
    };
    let plus_i = Cpx {
        r: a.r.sub(b.i),
        i: a.i.add(b.r),
    };
    (minus_i, plus_i)
}

/// Radix-2 butterflies over `out` (`2 m` values).
fn radix2<T: FftScalar>(out: &mut [T], tw: &[T], stride: usize, m: usize) {
    for k in 0..m {
        let a = cfixdiv(load(out, k), 2);
        let b = cfixdiv(load(out, k + m), 2);
        let t = T::cmul(b, load(tw, k * stride));
        store(out, k + m, csub(a, t));
        store(out, k, cadd(a, t));
    }
}

/// Radix-3 butterflies over `out` (`3 m` values).
fn radix3<T: FftScalar>(out: &mut [T], tw: &[T], stride: usize, m: usize) {
    let epi3 = load(tw, stride * m);
    for k in 0..m {
        let a0 = cfixdiv(load(out, k), 3);
        let a1 = cfixdiv(load(out, k + m), 3);
        let a2 = cfixdiv(load(out, k + 2 * m), 3);
        let s1 = T::cmul(a1, load(tw, k * stride));
        let s2 = T::cmul(a2, load(tw, 2 * k * stride));
        let s3 = cadd(s1, s2);
        let s0 = csub(s1, s2);
        let o1 = Cpx {
            r: a0.r.sub(s3.r.half()),
            i: a0.i.sub(s3.i.half()),
        };
        let s0 = Cpx {
            r: s0.r.mul(epi3.i),
            i: s0.i.mul(epi3.i),
        };
        store(out, k, cadd(a0, s3));
        let (o2, o1) = turns(o1, s0);
        store(out, k + m, o1);
        store(out, k + 2 * m, o2);
    }
}

/// Radix-4 butterflies over `out` (`4 m` values); the inverse turns the other way.
fn radix4<T: FftScalar>(out: &mut [T], tw: &[T], stride: usize, m: usize, inverse: bool) {
    for k in 0..m {
        let a0 = cfixdiv(load(out, k), 4);
        let a1 = cfixdiv(load(out, k + m), 4);
        let a2 = cfixdiv(load(out, k + 2 * m), 4);
        let a3 = cfixdiv(load(out, k + 3 * m), 4);
        let s0 = T::cmul(a1, load(tw, k * stride));
        let s1 = T::cmul(a2, load(tw, 2 * k * stride));
        let s2 = T::cmul(a3, load(tw, 3 * k * stride));
        let s5 = csub(a0, s1);
        let a0 = cadd(a0, s1);
        let s3 = cadd(s0, s2);
        let s4 = csub(s0, s2);
        store(out, k + 2 * m, csub(a0, s3));
        store(out, k, cadd(a0, s3));
        let (plus, minus) = turns(s5, s4);
        let (o1, o3) = if inverse {
            (minus, plus)
        } else {
            (plus, minus)
        };
        store(out, k + m, o1);
        store(out, k + 3 * m, o3);
    }
}

/// Radix-5 butterflies over `out` (`5 m` values).
fn radix5<T: FftScalar>(out: &mut [T], tw: &[T], stride: usize, m: usize) {
    let ya = load(tw, stride * m);
    let yb = load(tw, 2 * stride * m);
    for u in 0..m {
        let a0 = cfixdiv(load(out, u), 5);
        let s1 = T::cmul(cfixdiv(load(out, u + m), 5), load(tw, u * stride));
        let s2 = T::cmul(cfixdiv(load(out, u + 2 * m), 5), load(tw, 2 * u * stride));
        let s3 = T::cmul(cfixdiv(load(out, u + 3 * m), 5), load(tw, 3 * u * stride));
        let s4 = T::cmul(cfixdiv(load(out, u + 4 * m), 5), load(tw, 4 * u * stride));
        let s7 = cadd(s1, s4);
        let s10 = csub(s1, s4);
        let s8 = cadd(s2, s3);
        let s9 = csub(s2, s3);
        let o0 = Cpx {
            r: a0.r.add(s7.r.add(s8.r)),
            i: a0.i.add(s7.i.add(s8.i)),
        };
        store(out, u, o0);
        let s5 = Cpx {
            r: a0.r.add(s7.r.mul(ya.r)).add(s8.r.mul(yb.r)),
            i: a0.i.add(s7.i.mul(ya.r)).add(s8.i.mul(yb.r)),
        };
        let s6 = Cpx {
            r: s10.i.mul(ya.i).add(s9.i.mul(yb.i)),
            i: s10.r.mul(ya.i).neg().sub(s9.r.mul(yb.i)),
        };
        store(out, u + m, csub(s5, s6));
        store(out, u + 4 * m, cadd(s5, s6));
        let s11 = Cpx {
            r: a0.r.add(s7.r.mul(yb.r)).add(s8.r.mul(ya.r)),
            i: a0.i.add(s7.i.mul(yb.r)).add(s8.i.mul(ya.r)),
        };
        let s12 = Cpx {
            r: s10.i.mul(yb.i).neg().add(s9.i.mul(ya.i)),
            i: s10.r.mul(yb.i).sub(s9.r.mul(ya.i)),
        };
        store(out, u + 2 * m, cadd(s11, s12));
        store(out, u + 3 * m, csub(s11, s12));
    }
}
