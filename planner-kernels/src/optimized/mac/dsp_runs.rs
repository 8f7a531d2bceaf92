//! The per-tensor requantisation of a run of values ([`super::Scalar::all`]) in assembly
//! for the DSP extension's cores (Cortex-M4, M7, M33), one value per pass with every
//! constant in a register: LLVM's loop spills them and reloads four or five per value.
//! The arithmetic is [`super::Mbqm::apply`]'s: the left shift, `SMLAL` of the value and the
//! multiplier onto `2^30` (the rounding doubling high multiply, a floor, as the multiplier
//! is never `i32::MIN`), the rounding right shift (the remainder against half the divisor,
//! one more for a negative value), then `QADD` of the zero point (saturating, as the
//! reference's `saturating_add`) and the clamp: `SSAT #8` when it is int8's whole range,
//! two compares otherwise.

/// Arguments of `planner_dsp_requant`, read by offset from the assembly.
#[repr(C)]
struct RequantArgs {
    v: *mut i32, // 0
    n: u32,      // 4
    mult: i32,   // 8
    left: u32,   // 12: 0..=31
    right: u32,  // 16: 0..=31
    mask: i32,   // 20: 2^right - 1
    half: i32,   // 24: mask >> 1
    zero: i32,   // 28
    lo: i32,     // 32
    hi: i32,     // 36
}

unsafe extern "C" {
    fn planner_dsp_requant(a: *const RequantArgs);
}

/// [`super::Scalar::all`] in assembly; false (nothing written) when `v` is longer than
/// `u32` counts.
pub(super) fn requant(v: &mut [i32], m: &super::Mbqm, (zero, lo, hi): (i32, i32, i32)) -> bool {
    let Ok(n) = u32::try_from(v.len()) else {
        return false;
    };
    if n == 0 {
        return true;
    }
    let args = RequantArgs {
        v: v.as_mut_ptr(),
        n,
        mult: m.mult,
        left: m.left,
        right: m.right,
        mask: m.mask,
        half: m.half,
        zero,
        lo,
        hi,
    };
    // SAFETY: the assembly reads and writes the `n` int32 of `v` (`n > 0`, `v` exactly
    // that long and borrowed mutably, so nothing else touches it meanwhile), and nothing
    // else. It follows the AAPCS: it saves and restores r4-r11 and returns through the
    // saved lr; it uses no stack beyond that. `QADD` and `SSAT` may set the sticky Q flag,
    // which no Rust code reads.
    unsafe { planner_dsp_requant(&args) };
    true
}

core::arch::global_asm!(
    // As in `dsp`: an ARMv8-M core with the DSP extension, for the assembler; every
    // instruction here is ARMv7E-M's too (the Cortex-M4's).
    ".cpu cortex-m33",
    ".section .text.planner_dsp_requant,\"ax\",%progbits",
    ".global planner_dsp_requant",
    ".type planner_dsp_requant,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_dsp_requant:",
    "push {{r4-r11, lr}}",
    "ldr r1, [r0, #4]",
    "ldr r2, [r0, #8]",
    "ldr r3, [r0, #12]",
    "ldr r8, [r0, #16]",
    "ldr r9, [r0, #20]",
    "ldr r10, [r0, #24]",
    "ldr r11, [r0, #28]",
    "ldr r12, [r0, #32]",
    "ldr lr, [r0, #36]",
    "ldr r0, [r0, #0]",
    // int8's whole range: one SSAT for the clamp.
    "cmn r12, #128",
    "bne 2f",
    "cmp lr, #127",
    "bne 2f",
    "1:",
    "ldr r4, [r0]",
    "lsl r4, r4, r3",
    "mov r5, #0x40000000",
    "mov r6, #0",
    "smlal r5, r6, r4, r2",
    "lsr r5, r5, #31",
    "orr r4, r5, r6, lsl #1",
    "and r5, r4, r9",
    "add r6, r10, r4, lsr #31",
    "asr r4, r4, r8",
    "cmp r5, r6",
    "it gt",
    "addgt r4, r4, #1",
    "qadd r4, r4, r11",
    "ssat r4, #8, r4",
    "str r4, [r0], #4",
    "subs r1, r1, #1",
    "bne 1b",
    "pop {{r4-r11, pc}}",
    // Any other clamp.
    "2:",
    "ldr r4, [r0]",
    "lsl r4, r4, r3",
    "mov r5, #0x40000000",
    "mov r6, #0",
    "smlal r5, r6, r4, r2",
    "lsr r5, r5, #31",
    "orr r4, r5, r6, lsl #1",
    "and r5, r4, r9",
    "add r6, r10, r4, lsr #31",
    "asr r4, r4, r8",
    "cmp r5, r6",
    "it gt",
    "addgt r4, r4, #1",
    "qadd r4, r4, r11",
    "cmp r4, r12",
    "it lt",
    "movlt r4, r12",
    "cmp r4, lr",
    "it gt",
    "movgt r4, lr",
    "str r4, [r0], #4",
    "subs r1, r1, #1",
    "bne 2b",
    "pop {{r4-r11, pc}}",
    ".size planner_dsp_requant, . - planner_dsp_requant",
);
