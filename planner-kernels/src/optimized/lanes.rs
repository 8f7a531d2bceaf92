//! Plain loops over int8 and int16 lanes that LLVM turns into tail-predicated Helium loops
//! (`VMLAVA`, `VADDVA`) and into vector code on hosts; shared by the fast kernels whose inner
//! products are short.

use crate::reference::recurrent::svdf::State;

/// `Σ a · b`, wrapping, in one plain loop: LLVM makes it a tail-predicated `VMLAVA` loop
/// for Helium (the chunked [`mac`](super::mac) dot products widen to 32 bits and spill
/// there), a scalar `MLA` loop elsewhere.
#[inline(always)]
pub(crate) fn dot<T: State>(a: &[T], b: &[T]) -> i32 {
    a.iter().zip(b).fold(0i32, |t, (a, b)| {
        t.wrapping_add(a.get().wrapping_mul(b.get()))
    })
}

/// `Σ v`, wrapping.
#[inline(always)]
pub(crate) fn sum<T: State>(v: &[T]) -> i32 {
    v.iter().fold(0i32, |a, &v| a.wrapping_add(v.get()))
}

/// `(Σ a · b, Σ a)`, wrapping, in one loop over both slices (up to the shorter one): one
/// pass over `a` where [`dot`] then [`sum`] make two, for a product whose other operand has
/// a zero point (`Σ a·(b − z) = Σ a·b − z·Σ a`).
#[inline(always)]
pub(crate) fn dot_sum<T: State>(a: &[T], b: &[T]) -> (i32, i32) {
    a.iter().zip(b).fold((0i32, 0i32), |(t, s), (a, b)| {
        let a = a.get();
        (t.wrapping_add(a.wrapping_mul(b.get())), s.wrapping_add(a))
    })
}
