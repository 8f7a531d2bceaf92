//! The per-tensor requantisation of a run of values ([`super::Scalar::all`]) in assembly
//! for the DSP extension's cores (Cortex-M4, M7, M33), two values per loop pass with every
//! constant in a register (LLVM's loop spilled them and reloaded four or five per value);
//! its arguments are [`super::RunArgs`], as Helium's. A second routine stores each value
//! as a byte instead ([`super::Scalar::scatter`]: an SVDF's features into its state's
//! newest column, an op's outputs), so the values never go back to memory as words and a
//! store loop after the requantisation is not needed.
//! The arithmetic is [`super::Mbqm::apply`]'s: the left shift, `SMLAL` of the value and the
//! multiplier onto `2^30` (the rounding doubling high multiply, a floor, as the multiplier
//! is never `i32::MIN`), the rounding right shift (the remainder against half the divisor,
//! one more for a negative value), then `QADD` of the zero point (saturating, as the
//! reference's `saturating_add`) and the clamp: `SSAT #8` when it is int8's whole range,
//! two compares otherwise. For a multiplier below 1 the store routine's int8 loops take
//! [`super::Mbqm::short`]'s form (`SMMULR` of the doubled value, the rounding as two
//! additions), each value whose double overflows the general one.

unsafe extern "C" {
    /// [`super::requant_asm`] with the DSP extension: two values per loop pass; saves and
    /// restores r4-r11 and returns through the saved lr, with no stack beyond that. `QADD`
    /// and `SSAT` may set the sticky Q flag, which no Rust code reads.
    pub(super) fn planner_dsp_requant(a: *const super::RunArgs);
    /// [`requant_store`]'s routine; the same registers saved as `planner_dsp_requant`.
    fn planner_dsp_requant_store(a: *const StoreArgs);
    /// [`shift_down`]'s routine: saves and restores r4-r9.
    fn planner_dsp_shift_down(s: *mut i8, blocks: u32);
}

/// The first `32 · b` elements of [`super::shift_down`] (`s[i] = s[i + 1]`) in blocks of
/// 32 bytes, `b = (s.len() - 1) / 32`, each block eight unaligned `LDR`s one byte on and one
/// `STM` (LLVM's loop stored word by word); returns `32 · b`, or 0 (nothing moved) when `s`
/// is not word-aligned or shorter than 33 bytes. Moving downwards, each block reads only
/// bytes no block before it wrote.
pub(super) fn shift_down(s: &mut [i8]) -> usize {
    let blocks = s.len().saturating_sub(1) / 32;
    let Ok(b) = u32::try_from(blocks) else {
        return 0;
    };
    if b == 0 || !s.as_ptr().cast::<u32>().is_aligned() {
        return 0;
    }
    // SAFETY: the routine reads bytes `1..32 · b + 1` of `s` and writes bytes `0..32 · b`
    // (`32 · b + 1 <= s.len()`; the writes are `STM`s of words, `s` word-aligned as checked;
    // `s` borrowed mutably, so nothing else touches it meanwhile), and nothing else; it
    // follows the AAPCS, saving and restoring the registers it uses.
    unsafe { planner_dsp_shift_down(s.as_mut_ptr(), b) };
    32 * blocks
}

/// Arguments of `planner_dsp_requant_store`, read by offset from the assembly: the
/// requantisation's (the values only read), then the stores'.
#[repr(C)]
struct StoreArgs {
    run: super::RunArgs, // 0..36
    add: i32,            // 36
    out: *mut i8,        // 40
    stride: u32,         // 44
    bias: *const i32,    // 48: null, or one value to add to each before its requantisation
    round: i32,          // 52: 2^(right − 1) for `Mbqm::short`'s form, or 0 (the general one)
}

/// `out[i · stride] = (clamp(m.apply(v[i] + bias[i]) + zero, lo, hi) + add) as i8` (the
/// first addition wrapping, the second saturating, the third wrapping; no `bias[i]` without
/// a bias) for every `i < v.len()`, two per loop pass of `planner_dsp_requant_store`. It
/// takes int8's whole range (`lo = -128`, `hi = 127`: one `SSAT`) with any `add` and
/// stride, or a bias with `add = 0` and stride 1, and any other range with `add = 0`,
/// stride 1 and no bias (an output with an activation); false (nothing written) otherwise,
/// or when a size does not fit `u32` or the bias is shorter than `v`. The caller has
/// checked that `out` holds `(v.len() - 1) · stride + 1` bytes.
pub(super) fn requant_store(
    (v, bias): (&[i32], Option<&[i32]>),
    m: &super::Mbqm,
    (zero, lo, hi): (i32, i32, i32),
    add: i32,
    (out, stride): (&mut [i8], usize),
) -> bool {
    // The routine's loops: SSAT with any addend and stride; SSAT with a bias, bytes back to
    // back; any clamp, bytes back to back.
    let whole = lo == -128 && hi == 127;
    let plain = add == 0 && stride == 1;
    let loop_exists = match bias {
        Some(_) => whole && plain,
        None => whole || plain,
    };
    if !loop_exists {
        return false;
    }
    if bias.is_some_and(|b| b.len() < v.len()) {
        return false;
    }
    let (Ok(n), Ok(stride)) = (u32::try_from(v.len()), u32::try_from(stride)) else {
        return false;
    };
    if n == 0 {
        return true;
    }
    let args = StoreArgs {
        // The assembly only reads the values: the pointer is `*mut` for the struct's sake.
        run: super::RunArgs::new(v.as_ptr().cast_mut(), n, m, (zero, lo, hi)),
        add,
        out: out.as_mut_ptr(),
        stride,
        bias: bias.map_or(core::ptr::null(), <[i32]>::as_ptr),
        round: m.short_form().map_or(0, |[_, round, _]| round),
    };
    // SAFETY: the assembly reads the `n` int32 of `v` (its length, `n > 0`) and of `bias`
    // when there is one (at least as long, checked above), and writes one
    // byte of `out` at `i · stride` for each `i < n` (inside `out`: the caller checked its
    // length; `out` borrowed mutably and `v` shared, so nothing else touches them
    // meanwhile), and nothing else. It follows the AAPCS, saving and restoring the
    // registers it uses, with no stack beyond that.
    unsafe { planner_dsp_requant_store(&args) };
    true
}

/// The constants of a [`super::RunArgs`] at `r0` into the registers both routines keep
/// them in: r1 the count, r2 the multiplier, r3 the left shift, r8 the right shift (stored
/// negated), r9 its mask `2^right - 1` and r10 half of that, r11 the zero point, r12 and lr
/// the clamp's bounds.
macro_rules! run_args {
    () => {
        concat!(
            "ldr r1, [r0, #4]\n",
            "ldr r2, [r0, #8]\n",
            "ldr r3, [r0, #12]\n",
            "ldr r8, [r0, #16]\n",
            "rsb r8, r8, #0\n",
            "mov r9, #1\n",
            "lsl r9, r9, r8\n",
            "sub r9, r9, #1\n",
            "asr r10, r9, #1\n",
            "ldr r11, [r0, #24]\n",
            "ldr r12, [r0, #28]\n",
            "ldr lr, [r0, #32]\n",
        )
    };
}

/// `r4` clamped to `[r12, lr]`.
macro_rules! clamp {
    () => {
        concat!(
            "cmp r4, r12\n",
            "it lt\n",
            "movlt r4, r12\n",
            "cmp r4, lr\n",
            "it gt\n",
            "movgt r4, lr\n",
        )
    };
}

/// The loop over a run's r1 (> 0) values, `body` once per value: one pass first when r1 is
/// odd, then two values per pass (the count and branch once per two), then the return.
macro_rules! run_loop {
    ($($body:expr),* $(,)?) => {
        concat!(
            "tst r1, #1\n",
            "beq 6f\n",
            $($body,)*
            "subs r1, r1, #1\n",
            "beq 8f\n",
            "6:\n",
            "lsr r1, r1, #1\n",
            "7:\n",
            $($body,)*
            $($body,)*
            "subs r1, r1, #1\n",
            "bne 7b\n",
            "8:\n",
            "pop {{r4-r11, pc}}\n",
        )
    };
}

/// The doubling high multiply of `r4` (already shifted left) by the multiplier and the
/// rounding right shift, `r4` in place, with the constants of `planner_dsp_requant`'s
/// registers; r5 and r6 clobbered.
macro_rules! mbqm_general {
    () => {
        concat!(
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
        )
    };
}

/// One value's requantisation, up to the clamp: `r4` in place (the loops load it), with
/// the constants of `planner_dsp_requant`'s registers.
macro_rules! requant_value {
    () => {
        concat!("lsl r4, r4, r3\n", mbqm_general!(), "qadd r4, r4, r11\n")
    };
}

/// [`requant_value!`] in [`super::Mbqm::short`]'s form for a multiplier without a left
/// shift and with a right shift (r3 holding `2^(right − 1)` instead of the left shift):
/// `ADDS` doubles the value, and when that overflows the general form (without its left
/// shift) takes it; else `SMMULR`, the rounding as two additions and `ASR`.
macro_rules! requant_short {
    () => {
        concat!(
            "adds r5, r4, r4\n",
            "bvc 10f\n",
            mbqm_general!(),
            "b 11f\n",
            "10:\n",
            "smmulr r4, r5, r2\n",
            "add r5, r4, r3\n",
            "sub r5, r5, r4, lsr #31\n",
            "asr r4, r5, r8\n",
            "11:\n",
            "qadd r4, r4, r11\n",
        )
    };
}

core::arch::global_asm!(
    // As in `dsp`: an ARMv8-M core with the DSP extension, for the assembler; every
    // instruction here is ARMv7E-M's too (the Cortex-M4's).
    ".cpu cortex-m33",
    asm_function!("planner_dsp_requant"),
    "push {{r4-r11, lr}}",
    run_args!(),
    "ldr r0, [r0, #0]",
    // int8's whole range: one SSAT for the clamp.
    "cmn r12, #128",
    "bne 2f",
    "cmp lr, #127",
    "bne 2f",
    run_loop!(
        "ldr r4, [r0]\n",
        requant_value!(),
        "ssat r4, #8, r4\n",
        "str r4, [r0], #4\n",
    ),
    // Any other clamp.
    "2:",
    run_loop!(
        "ldr r4, [r0]\n",
        requant_value!(),
        clamp!(),
        "str r4, [r0], #4\n",
    ),
    ".size planner_dsp_requant, . - planner_dsp_requant",
);

core::arch::global_asm!(
    ".cpu cortex-m33",
    asm_function!("planner_dsp_requant_store"),
    "push {{r4-r11, lr}}",
    run_args!(),
    "ldr r7, [r0, #40]",
    "ldr r5, [r0, #52]",
    "cmn r12, #128",
    "bne 2f",
    "cmp lr, #127",
    "bne 2f",
    // int8's whole range: `SSAT`, then the wrapping addition, one byte at the stride.
    "ldr r12, [r0, #36]",
    "ldr lr, [r0, #44]",
    "ldr r6, [r0, #48]",
    "ldr r0, [r0, #0]",
    // Nothing added, bytes back to back (an op's outputs): neither addition; with a bias,
    // its value added first (r12 its address). With the short form's rounding (r5), each
    // of the three loops goes to its twin with `requant_short!` (r3 the rounding there).
    "cmp r12, #0",
    "bne 1f",
    "cmp lr, #1",
    "bne 1f",
    "movs r12, r6",
    "bne 5f",
    "b 4f",
    "1:",
    "cmp r5, #0",
    "bne 21f",
    run_loop!(
        "ldr r4, [r0], #4\n",
        requant_value!(),
        "ssat r4, #8, r4\n",
        "add r4, r4, r12\n",
        "strb r4, [r7]\n",
        "add r7, r7, lr\n",
    ),
    // Any other clamp: nothing added, bytes back to back.
    "2:",
    "ldr r0, [r0, #0]",
    run_loop!(
        "ldr r4, [r0], #4\n",
        requant_value!(),
        clamp!(),
        "strb r4, [r7], #1\n",
    ),
    "4:",
    "cmp r5, #0",
    "bne 24f",
    run_loop!(
        "ldr r4, [r0], #4\n",
        requant_value!(),
        "ssat r4, #8, r4\n",
        "strb r4, [r7], #1\n",
    ),
    "5:",
    "cmp r5, #0",
    "bne 25f",
    run_loop!(
        "ldr r4, [r0], #4\n",
        "ldr r5, [r12], #4\n",
        "add r4, r4, r5\n",
        requant_value!(),
        "ssat r4, #8, r4\n",
        "strb r4, [r7], #1\n",
    ),
    "21:",
    "mov r3, r5",
    run_loop!(
        "ldr r4, [r0], #4\n",
        requant_short!(),
        "ssat r4, #8, r4\n",
        "add r4, r4, r12\n",
        "strb r4, [r7]\n",
        "add r7, r7, lr\n",
    ),
    "24:",
    "mov r3, r5",
    run_loop!(
        "ldr r4, [r0], #4\n",
        requant_short!(),
        "ssat r4, #8, r4\n",
        "strb r4, [r7], #1\n",
    ),
    "25:",
    "mov r3, r5",
    run_loop!(
        "ldr r4, [r0], #4\n",
        "ldr r5, [r12], #4\n",
        "add r4, r4, r5\n",
        requant_short!(),
        "ssat r4, #8, r4\n",
        "strb r4, [r7], #1\n",
    ),
    ".size planner_dsp_requant_store, . - planner_dsp_requant_store",
);

core::arch::global_asm!(
    ".cpu cortex-m33",
    asm_function!("planner_dsp_shift_down"),
    "push {{r4-r9}}",
    "1:",
    "ldr r2, [r0, #1]",
    "ldr r3, [r0, #5]",
    "ldr r4, [r0, #9]",
    "ldr r5, [r0, #13]",
    "ldr r6, [r0, #17]",
    "ldr r7, [r0, #21]",
    "ldr r8, [r0, #25]",
    "ldr r9, [r0, #29]",
    "stmia r0!, {{r2-r9}}",
    "subs r1, r1, #1",
    "bne 1b",
    "pop {{r4-r9}}",
    "bx lr",
    ".size planner_dsp_shift_down, . - planner_dsp_shift_down",
);
