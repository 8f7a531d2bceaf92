//! The DSP extension's instructions the fast kernels use on cores without vector lanes
//! (Cortex-M4, M7, M33), as inline assembly (Rust's intrinsics for them are unstable).

use core::arch::asm;

/// Four int8 elements as one little-endian word.
#[inline(always)]
pub(crate) fn word(v: &[i8; 4]) -> u32 {
    u32::from_le_bytes(v.map(|b| b as u8))
}

/// Bytes 0 and 2 of `v`, sign-extended into two halfwords.
#[inline(always)]
pub(crate) fn sxtb16(v: u32) -> u32 {
    let r: u32;
    // SAFETY: SXTB16 reads and writes registers only (no memory, no flags).
    unsafe {
        asm!("sxtb16 {r}, {v}", r = lateout(reg) r, v = in(reg) v, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

/// Bytes 1 and 3 of `v`, sign-extended into two halfwords.
#[inline(always)]
pub(crate) fn sxtb16_ror8(v: u32) -> u32 {
    let r: u32;
    // SAFETY: SXTB16 reads and writes registers only (no memory, no flags).
    unsafe {
        asm!("sxtb16 {r}, {v}, ror #8", r = lateout(reg) r, v = in(reg) v, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

/// `acc + a.lo · b.lo + a.hi · b.hi` on signed halfwords, wrapping.
#[inline(always)]
pub(crate) fn smlad(a: u32, b: u32, acc: i32) -> i32 {
    let r: i32;
    // SAFETY: SMLAD reads and writes registers only; it may set the sticky Q flag of
    // the APSR, which no Rust code observes (the asm is not `preserves_flags`).
    unsafe {
        asm!("smlad {r}, {a}, {b}, {acc}", r = lateout(reg) r, a = in(reg) a, b = in(reg) b, acc = in(reg) acc, options(pure, nomem, nostack))
    };
    r
}

/// `⌊(a · b + 2^31) / 2^32⌋`: the rounded high word of the 64-bit product.
#[inline(always)]
pub(crate) fn smmulr(a: i32, b: i32) -> i32 {
    let r: i32;
    // SAFETY: SMMULR reads and writes registers only (no memory, no flags).
    unsafe {
        asm!("smmulr {r}, {a}, {b}", r = lateout(reg) r, a = in(reg) a, b = in(reg) b, options(pure, nomem, nostack, preserves_flags))
    };
    r
}

/// `a − b` on each of the two signed halfwords, wrapping.
#[inline(always)]
pub(crate) fn ssub16(a: u32, b: u32) -> u32 {
    let r: u32;
    // SAFETY: SSUB16 reads and writes registers only; it sets the APSR's GE bits, which no
    // Rust code observes (the asm is not `preserves_flags`).
    unsafe {
        asm!("ssub16 {r}, {a}, {b}", r = lateout(reg) r, a = in(reg) a, b = in(reg) b, options(pure, nomem, nostack))
    };
    r
}
