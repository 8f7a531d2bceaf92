//! Helium (MVE) loops over short runs, for the recurrent kernels and the elementwise
//! requantisation: a per-tensor requantisation of a run of values (`planner_mve_requant`),
//! the same stored as bytes at a stride (`planner_mve_requant_scatter`, `VSTRB.32` to four
//! offsets), and dot products of rows (`planner_mve_dot_rows`, two rows per pass with the
//! sums of `a` for a zero point; `planner_mve_dot_rows_x`, four rows per pass over one
//! input widened to int16 with its zero point taken off). The requantisation is the GEMM's
//! (in `mve`): `VSHL`, `VQRDMULH`, the rounding right shift as `VRSHL` after lowering
//! negative values by one where the shift is not zero, the zero point (`VQADD`), the clamp.

unsafe extern "C" {
    /// [`super::requant_asm`] on Helium: four values per vector, tail-predicated (the lanes
    /// past `n` are off and touch no memory); saves and restores r4-r6 and d8-d9 (q4) and
    /// uses no stack beyond that.
    pub(super) fn planner_mve_requant(a: *const super::RunArgs);
    /// [`shift_down`]'s routine: 16 bytes per vector, tail-predicated; saves and restores
    /// lr only (q0 is the caller's to lose).
    fn planner_mve_shift_down(s: *mut i8, n: u32);
}

/// [`super::shift_down`] on Helium: `s[i] = s[i + 1]` for every `i < s.len() - 1`, 16
/// bytes per vector (`VLDRB` one byte on, `VSTRB`), the last vector tail-predicated;
/// returns the elements moved (`s.len() - 1`, or 0 when `s` has fewer than two or more
/// than `u32` counts). Moving downwards, each vector reads only bytes no vector before it
/// wrote.
pub(super) fn shift_down(s: &mut [i8]) -> usize {
    let n = s.len().saturating_sub(1);
    let Ok(count) = u32::try_from(n) else {
        return 0;
    };
    if count == 0 {
        return 0;
    }
    // SAFETY: the routine reads bytes `1..=n` of `s` and writes bytes `0..n` (`n + 1 =
    // s.len()`; the lanes past `n` of the last vector are off and touch no memory; `s`
    // borrowed mutably, so nothing else touches it meanwhile), and nothing else; it follows
    // the AAPCS (it uses q0, which the caller saves if it needs it, and saves lr).
    unsafe { planner_mve_shift_down(s.as_mut_ptr(), count) };
    n
}

mve_asm!(
    "planner_mve_shift_down",
    push [];
    "dlstp.8 lr, r1",
    "1:",
    "vldrb.u8 q0, [r0, #1]",
    "vstrb.8 q0, [r0], #16",
    "letp lr, 1b",
);

/// A routine over the run of a [`super::RunArgs`] at `r0`, four values per vector,
/// tail-predicated: the constants into registers (r1 the count, r2 the multiplier, r3 the
/// left shift, r4 minus the right shift, q2 its negative-value mask, r5 the zero point, q3
/// and q4 the clamp's bounds; r12 clobbered), `$setup` (the routine's other arguments),
/// r0 the values; then per vector `$load` into q0, its requantisation (the rounding half
/// away from zero: negative values one less before a rounding shift that is one), the zero
/// point (saturating) and the clamp, and `$store` (q1 clobbered).
macro_rules! requant_run {
    (
        $name:literal,
        push $regs:literal vpush $vregs:literal;
        [$($setup:literal),*],
        $load:literal,
        [$($store:literal),+ $(,)?] $(,)?
    ) => {
        mve_asm!(
            $name,
            push [$regs] vpush $vregs;
            "ldr r1, [r0, #4]",
            "ldr r2, [r0, #8]",
            "ldr r3, [r0, #12]",
            "ldr r4, [r0, #16]",
            "ldr r12, [r0, #20]",
            "vdup.32 q2, r12",
            "ldr r5, [r0, #24]",
            "ldr r12, [r0, #28]",
            "vdup.32 q3, r12",
            "ldr r12, [r0, #32]",
            "vdup.32 q4, r12",
            $($setup,)*
            "ldr r0, [r0, #0]",
            "dlstp.32 lr, r1",
            "1:",
            $load,
            "vshl.s32 q0, r3",
            "vqrdmulh.s32 q0, q0, r2",
            "vshr.s32 q1, q0, #31",
            "vand q1, q1, q2",
            "vqadd.s32 q0, q0, q1",
            "vrshl.s32 q0, r4",
            "vqadd.s32 q0, q0, r5",
            "vmax.s32 q0, q0, q3",
            "vmin.s32 q0, q0, q4",
            $($store,)+
            "letp lr, 1b",
        );
    };
}

requant_run!(
    "planner_mve_requant",
    push "r4-r6" vpush "d8-d9";
    [],
    "vldrw.u32 q0, [r0]",
    ["vstrw.32 q0, [r0], #16"],
);

/// Arguments of `planner_mve_requant_scatter`, read by offset from the assembly: the
/// requantisation's (the values only read), then the stores'.
#[repr(C)]
struct ScatterArgs {
    run: super::RunArgs, // 0..36
    add: i32,            // 36
    out: *mut i8,        // 40
    offsets: [u32; 4],   // 44: 0, stride, 2 stride, 3 stride
    step: u32,           // 60: 4 stride
}

unsafe extern "C" {
    fn planner_mve_requant_scatter(a: *const ScatterArgs);
}

/// [`super::Scalar::scatter`] four values per vector (`VSTRB.32` to four offsets); false
/// (nothing written) when a size does not fit `u32`. The caller has checked that `out`
/// holds `(v.len() - 1) · stride + 1` bytes.
pub(super) fn requant_scatter(
    v: &[i32],
    m: &super::Mbqm,
    (zero, lo, hi): (i32, i32, i32),
    add: i32,
    (out, stride): (&mut [i8], usize),
) -> bool {
    let int = |x: usize| u32::try_from(x).ok();
    let (Some(n), Some(s3), Some(step)) = (
        int(v.len()),
        stride.checked_mul(3).and_then(int),
        stride.checked_mul(4).and_then(int),
    ) else {
        return false;
    };
    if n == 0 {
        return true;
    }
    let s = stride as u32;
    let args = ScatterArgs {
        // The assembly only reads the values: the pointer is `*mut` for the struct's sake.
        run: super::RunArgs::new(v.as_ptr().cast_mut(), n, m, (zero, lo, hi)),
        add,
        out: out.as_mut_ptr(),
        offsets: [0, s, 2 * s, s3],
        step,
    };
    // SAFETY: the assembly reads `n` int32 of `v` (its length, `n > 0`) and writes one
    // byte of `out` at `i · stride` for each `i < n` (inside `out`: the caller checked its
    // length; borrowed mutably, `v` shared, so nothing else touches them; the
    // tail-predicated loop's lanes past `n` are off and store nothing), and nothing else.
    // It follows the AAPCS: it saves and restores r4-r8 and d8-d11 (q4, q5), and uses no
    // stack beyond that.
    unsafe { planner_mve_requant_scatter(&args) };
    true
}

// r6 the addition, r7 the next output, q5 the four outputs' offsets, r8 the step.
requant_run!(
    "planner_mve_requant_scatter",
    push "r4-r8" vpush "d8-d11";
    [
        "ldr r6, [r0, #36]",
        "ldr r7, [r0, #40]",
        "add r12, r0, #44",
        "vldrw.u32 q5, [r12]",
        "ldr r8, [r0, #60]"
    ],
    "vldrw.u32 q0, [r0], #16",
    [
        // The addition wraps; the store keeps the low byte.
        "vadd.i32 q0, q0, r6",
        "vstrb.32 q0, [r7, q5]",
        "add r7, r7, r8",
    ],
);

/// Arguments of `planner_mve_dot_rows` and `planner_mve_dot_rows_x` (which reads no
/// `b_stride`: its `b` is one row, `x`), read by offset from the assembly.
#[repr(C)]
struct DotRowsArgs {
    a: *const i8,  // 0
    a_stride: u32, // 4
    b: *const i8,  // 8
    b_stride: u32, // 12
    k: u32,        // 16
    rows: u32,     // 20
    z: i32,        // 24
    out: *mut i32, // 28
}

unsafe extern "C" {
    fn planner_mve_dot_rows(a: *const DotRowsArgs);
}

/// [`super::dot_rows`] two rows per pass; false (nothing written) when `k` is 0 or a size
/// does not fit `u32`. The caller has checked every length.
pub(super) fn dot_rows(d: &super::DotRows<'_>, out: &mut [i32]) -> bool {
    let super::DotRows { a, sa, b, sb, k, z } = *d;
    let int = |v: usize| u32::try_from(v).ok();
    let (Some(sa), Some(sb), Some(kk), Some(rows)) = (int(sa), int(sb), int(k), int(out.len()))
    else {
        return false;
    };
    if k == 0 || out.is_empty() {
        return false;
    }
    let args = DotRowsArgs {
        a: a.as_ptr(),
        a_stride: sa,
        b: b.as_ptr(),
        b_stride: sb,
        k: kk,
        rows,
        z,
        out: out.as_mut_ptr(),
    };
    // SAFETY: the assembly reads `k` bytes of `a` at `r · a_stride` and of `b` at `r ·
    // b_stride` for each row `r < rows`, inside both slices (the caller checked `(rows - 1) ·
    // stride + k` against each length), and writes `rows` int32 of `out` (exactly its
    // length; borrowed mutably, the rest shared, so nothing else touches them). Its vector
    // loads past a row's `k` bytes are predicated off by `DLSTP`, so they touch no memory.
    // It follows the AAPCS: it saves and restores r4-r11 and lr, uses 16 bytes of stack
    // below them and restores `sp`.
    unsafe { planner_mve_dot_rows(&args) };
    true
}

// Frame: 0 a_stride, 4 b_stride, 8 z.
mve_asm!(
    "planner_mve_dot_rows",
    push ["r4-r11"] frame "16";
    "ldr r1, [r0, #4]",
    "str r1, [sp, #0]",
    "ldr r1, [r0, #12]",
    "str r1, [sp, #4]",
    "ldr r1, [r0, #24]",
    "str r1, [sp, #8]",
    "ldr r5, [r0, #0]",
    "ldr r7, [r0, #8]",
    "ldr r12, [r0, #16]",
    "ldr r9, [r0, #20]",
    "ldr r11, [r0, #28]",
    // Two rows per pass: r0/r1 their `a`, r2/r3 their `b`, r4/r6 the products, r8/r10
    // the sums of `a` (the accumulators of `VMLADAVA` and `VADDVA` are even registers);
    // r5 and r7 the next row of `a` and `b`, r9 the rows left, r11 the next output.
    "2:",
    "cmp r9, #2",
    "blt 3f",
    "ldr r4, [sp, #0]",
    "ldr r6, [sp, #4]",
    "mov r0, r5",
    "add r1, r5, r4",
    "mov r2, r7",
    "add r3, r7, r6",
    "add r5, r5, r4, lsl #1",
    "add r7, r7, r6, lsl #1",
    "movs r4, #0",
    "movs r6, #0",
    "mov.w r8, #0",
    "mov.w r10, #0",
    "dlstp.8 lr, r12",
    "1:",
    "vldrb.u8 q0, [r0], #16",
    "vldrb.u8 q1, [r2], #16",
    "vmladava.s8 r4, q0, q1",
    "vaddva.s8 r8, q0",
    "vldrb.u8 q2, [r1], #16",
    "vldrb.u8 q3, [r3], #16",
    "vmladava.s8 r6, q2, q3",
    "vaddva.s8 r10, q2",
    "letp lr, 1b",
    "ldr r0, [sp, #8]",
    "mls r4, r8, r0, r4",
    "mls r6, r10, r0, r6",
    "strd r4, r6, [r11], #8",
    "subs r9, r9, #2",
    "b 2b",
    // The last row of an odd count.
    "3:",
    "cmp r9, #0",
    "beq 9f",
    "mov r0, r5",
    "mov r2, r7",
    "movs r4, #0",
    "mov.w r8, #0",
    "dlstp.8 lr, r12",
    "4:",
    "vldrb.u8 q0, [r0], #16",
    "vldrb.u8 q1, [r2], #16",
    "vmladava.s8 r4, q0, q1",
    "vaddva.s8 r8, q0",
    "letp lr, 4b",
    "ldr r0, [sp, #8]",
    "mls r4, r8, r0, r4",
    "str r4, [r11]",
    "9:",
);

unsafe extern "C" {
    fn planner_mve_dot_rows_x(a: *const DotRowsArgs);
}

/// `out[r] = Σ_{i<k} a[r·a_stride + i] · (x[i] − z)` (wrapping) for every `r <
/// out.len()`, four rows per pass sharing the loads of `x`, widened to int16 with the zero
/// point taken off (so no sum of `a` is needed: `z` must be an int8 value, so that `x − z`
/// fits); false (nothing written) when `k` is 0, `z` is outside `-128..=127` or a size does
/// not fit `u32`. The caller has checked every length.
pub(super) fn dot_rows_x((a, a_stride): (&[i8], usize), x: &[i8], z: i32, out: &mut [i32]) -> bool {
    let int = |v: usize| u32::try_from(v).ok();
    let (Some(sa), Some(k), Some(rows)) = (int(a_stride), int(x.len()), int(out.len())) else {
        return false;
    };
    if k == 0 || rows == 0 || !(-128..=127).contains(&z) {
        return false;
    }
    let args = DotRowsArgs {
        a: a.as_ptr(),
        a_stride: sa,
        b: x.as_ptr(),
        b_stride: 0,
        k,
        rows,
        z,
        out: out.as_mut_ptr(),
    };
    // SAFETY: the assembly reads `k` bytes of `a` at `r · a_stride` for each row `r <
    // rows` (inside `a`: the caller checked `(rows - 1) · a_stride + k` against its
    // length), the `k` bytes of `x` (its length), and writes `rows` int32 of `out` (its
    // length; borrowed mutably, the rest shared, so nothing else touches them). Its vector
    // loads past `k` elements are predicated off by `DLSTP`, so they touch no memory. It
    // follows the AAPCS: it saves and restores r4-r11 and lr, uses 16 bytes of stack below
    // them and restores `sp`.
    unsafe { planner_mve_dot_rows_x(&args) };
    true
}

// Frame: 0 a_stride, 4 x, 8 rows left.
mve_asm!(
    "planner_mve_dot_rows_x",
    push ["r4-r11"] frame "16";
    "ldr r1, [r0, #4]",
    "str r1, [sp, #0]",
    "ldr r1, [r0, #8]",
    "str r1, [sp, #4]",
    "ldr r1, [r0, #20]",
    "str r1, [sp, #8]",
    "ldr r9, [r0, #0]",
    "ldr r12, [r0, #16]",
    "ldr r7, [r0, #24]",
    "ldr r11, [r0, #28]",
    // Four rows per pass: r0, r1, r3, r5 their `a`, r2 `x`, r4, r6, r8, r10 the sums (the
    // accumulators of `VMLADAVA` are even registers); r7 the zero point, r9 the next row,
    // r11 the next output, r12 `k`.
    "2:",
    "ldr r4, [sp, #8]",
    "cmp r4, #4",
    "blt 5f",
    "subs r4, r4, #4",
    "str r4, [sp, #8]",
    "ldr r4, [sp, #0]",
    "mov r0, r9",
    "add r1, r9, r4",
    "add r3, r1, r4",
    "add r5, r3, r4",
    "add r9, r5, r4",
    "ldr r2, [sp, #4]",
    "movs r4, #0",
    "movs r6, #0",
    "mov.w r8, #0",
    "mov.w r10, #0",
    "dlstp.16 lr, r12",
    "1:",
    "vldrb.s16 q0, [r2], #8",
    "vsub.i16 q0, q0, r7",
    "vldrb.s16 q1, [r0], #8",
    "vmladava.s16 r4, q0, q1",
    "vldrb.s16 q2, [r1], #8",
    "vmladava.s16 r6, q0, q2",
    "vldrb.s16 q3, [r3], #8",
    "vmladava.s16 r8, q0, q3",
    "vldrb.s16 q1, [r5], #8",
    "vmladava.s16 r10, q0, q1",
    "letp lr, 1b",
    "strd r4, r6, [r11], #8",
    "strd r8, r10, [r11], #8",
    "b 2b",
    // The rows past the last multiple of four, one at a time (r4: the rows left).
    "5:",
    "cmp r4, #0",
    "beq 9f",
    "subs r4, r4, #1",
    "str r4, [sp, #8]",
    "mov r0, r9",
    "ldr r4, [sp, #0]",
    "add r9, r9, r4",
    "ldr r2, [sp, #4]",
    "movs r4, #0",
    "dlstp.16 lr, r12",
    "6:",
    "vldrb.s16 q0, [r2], #8",
    "vsub.i16 q0, q0, r7",
    "vldrb.s16 q1, [r0], #8",
    "vmladava.s16 r4, q0, q1",
    "letp lr, 6b",
    "str r4, [r11], #4",
    "ldr r4, [sp, #8]",
    "b 5b",
    "9:",
);
