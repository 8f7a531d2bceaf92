//! Byte views of tensor slices, for the canary run, which fills and checks bytes whatever
//! the element type.

/// Element types of tensor views that are plain bytes: no padding, and every bit pattern is
/// a value. The types `include_model!` gives views.
///
/// # Safety
///
/// Implement only for types without padding bytes for which every bit pattern is valid.
pub unsafe trait Pod: Copy {}

// SAFETY: primitive integers and floats, and arrays of them, have no padding and accept
// every bit pattern.
unsafe impl Pod for i8 {}
// SAFETY: as above.
unsafe impl Pod for u8 {}
// SAFETY: as above.
unsafe impl Pod for i16 {}
// SAFETY: as above.
unsafe impl Pod for u16 {}
// SAFETY: as above.
unsafe impl Pod for i32 {}
// SAFETY: as above.
unsafe impl Pod for u32 {}
// SAFETY: as above.
unsafe impl Pod for i64 {}
// SAFETY: as above.
unsafe impl Pod for u64 {}
// SAFETY: as above.
unsafe impl Pod for f32 {}
// SAFETY: as above.
unsafe impl Pod for f64 {}
// SAFETY: as above.
unsafe impl Pod for [f32; 2] {}
// SAFETY: as above.
unsafe impl Pod for [f64; 2] {}

/// The bytes of `s`.
pub fn bytes<T: Pod>(s: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so all `size_of_val(s)` bytes from the slice's start
    // are initialised, and they stay borrowed (shared) for the result's lifetime.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u8>(), core::mem::size_of_val(s)) }
}

/// The bytes of `s`, writable.
pub fn bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as for `bytes`, with the slice borrowed exclusively; any bytes written leave
    // valid `T`s behind, since every bit pattern of a `Pod` type is a value.
    unsafe {
        core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), core::mem::size_of_val(s))
    }
}
