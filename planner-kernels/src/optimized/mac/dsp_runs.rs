//! The per-tensor requantisation of a run of values ([`super::Scalar::all`]) in assembly
//! for the DSP extension's cores (Cortex-M4, M7, M33), one value per pass with every
//! constant in a register (LLVM's loop spilled them and reloaded four or five per value);
//! its arguments are [`super::RunArgs`], as Helium's.
//! The arithmetic is [`super::Mbqm::apply`]'s: the left shift, `SMLAL` of the value and the
//! multiplier onto `2^30` (the rounding doubling high multiply, a floor, as the multiplier
//! is never `i32::MIN`), the rounding right shift (the remainder against half the divisor,
//! one more for a negative value), then `QADD` of the zero point (saturating, as the
//! reference's `saturating_add`) and the clamp: `SSAT #8` when it is int8's whole range,
//! two compares otherwise.

unsafe extern "C" {
    /// [`super::requant_asm`] with the DSP extension: one value per pass; saves and
    /// restores r4-r11 and returns through the saved lr, with no stack beyond that. `QADD`
    /// and `SSAT` may set the sticky Q flag, which no Rust code reads.
    pub(super) fn planner_dsp_requant(a: *const super::RunArgs);
}

/// One value's requantisation, up to the clamp: `r4` from the word at `r0`, with the
/// constants of `planner_dsp_requant`'s registers.
macro_rules! requant_value {
    () => {
        concat!(
            "ldr r4, [r0]\n",
            "lsl r4, r4, r3\n",
            "mov r5, #0x40000000\n",
            "mov r6, #0\n",
            "smlal r5, r6, r4, r2\n",
            "lsr r5, r5, #31\n",
            "orr r4, r5, r6, lsl #1\n",
            "and r5, r4, r9\n",
            "add r6, r10, r4, lsr #31\n",
            "asr r4, r4, r8\n",
            "cmp r5, r6\n",
            "it gt\n",
            "addgt r4, r4, #1\n",
            "qadd r4, r4, r11\n",
        )
    };
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
    // The right shift (stored negated), its mask 2^right - 1 and half of that.
    "ldr r8, [r0, #16]",
    "rsb r8, r8, #0",
    "mov r9, #1",
    "lsl r9, r9, r8",
    "sub r9, r9, #1",
    "asr r10, r9, #1",
    "ldr r11, [r0, #24]",
    "ldr r12, [r0, #28]",
    "ldr lr, [r0, #32]",
    "ldr r0, [r0, #0]",
    // int8's whole range: one SSAT for the clamp.
    "cmn r12, #128",
    "bne 2f",
    "cmp lr, #127",
    "bne 2f",
    "1:",
    requant_value!(),
    "ssat r4, #8, r4",
    "str r4, [r0], #4",
    "subs r1, r1, #1",
    "bne 1b",
    "pop {{r4-r11, pc}}",
    // Any other clamp.
    "2:",
    requant_value!(),
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
