//! The DSP-extension GEMM (Cortex-M4, M7, M33, M35P): `planner_dsp` (build.rs).
//!
//! `planner_dsp_gemm_s8` computes two rows times two output channels at a time. It first
//! widens the two rows' int8 inputs to halfword pairs once (`SXTB16` and `SXTB16 ROR 8`: each
//! word of four inputs becomes elements 0 and 2, and 1 and 3), interleaved so that one `LDM`
//! loads four elements of both rows; each weight word is widened the same way, so `SMLAD` sums
//! two matching products into an accumulator: 16 multiply-accumulates take 17 instructions.
//! The `k % 4` last elements go one by one (`MLA`). The requantisation is TFLite's, in scalar
//! code per output: `SMULL` and a 64-bit rounding add for the doubling high multiply, the
//! remainder test for the rounding right shift, `QADD` for the zero point, then the clamp.
//! The per-channel constants are precomputed per call into a table the assembly loads with
//! one `LDM` per channel ([`Channel`]).
//!
//! Stack: the widened rows (`4 · k` bytes, `k` at most [`MAX_K`]) and a table of
//! [`CHUNK`] channels (36 bytes each), about 4.3 KiB.

use super::{DW_MAX_TAPS, DwHead, Requant};

/// Longest row the assembly widens on the stack; longer rows take the portable loop.
pub(super) const MAX_K: usize = 768;

/// Output channels whose constants are tabled at a time.
const CHUNK: usize = 32;

/// One output channel's requantisation, as the assembly loads it with one `LDM`: the bias,
/// then the words of a [`DwChannel`] (both `repr(C)`: nine `i32` in this order).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Channel {
    bias: i32,
    rest: DwChannel,
}

/// Arguments of `planner_dsp_gemm_s8`, read by offset from the assembly.
#[repr(C)]
struct Args {
    x0: *const i8,      // 0: row 0's input
    x1: *const i8,      // 4: row 1's input (row 0's when there is one row)
    w: *const i8,       // 8: output channel 0's weights, k each
    k: u32,             // 12
    cols: u32,          // 16: output channels
    ch: *const Channel, // 20: one per output channel
    y0: *mut i8,        // 24: row 0's outputs
    y1: *mut i8,        // 28: row 1's outputs (row 0's when there is one row)
    buf: *mut i32,      // 32: the widened rows
}

unsafe extern "C" {
    fn planner_dsp_gemm_s8(a: *const Args);
}

/// Largest `|x · w|` of two int8 values: the bound on each product of an accumulator.
const MAX_PRODUCT: i64 = 128 * 128;

/// A channel's shift and rounding fields for the assembly's requantisation, `(left,
/// right, mask, threshold)`, and whether it may take the fast one.
///
/// The exact sequence is TFLite's: the doubling high multiply from a 64-bit `SMULL` and
/// the rounding right shift from the remainder. When every accumulator this channel can
/// see is bounded so that `|(acc + bias) · 2^(left + 1)| < 2^31` (at most `products`
/// products of two int8 values plus the bias), the right shift is at least 1 and the zero
/// point at most `2^30`, the fast one gives the same values: `SMMULR` of the accumulator
/// shifted left by `left + 1` is the doubling high multiply (`(2ab + 2^31) >> 32`, which
/// rounds as gemmlowp's nudge for either sign and cannot saturate in that range), its
/// result is below `2^30` in magnitude, so `(s + (s >> 31) + 2^(right - 1)) >> right`
/// cannot overflow and rounds half away from zero, and the zero point's addition cannot
/// overflow either. Fast entries hold `left + 1`, `right`, `2^(right - 1)` and -1 in the
/// threshold slot, which the assembly tests.
fn rounding(bias: i32, shift: i32, zero: i32, products: usize) -> (i32, i32, i32, i32, bool) {
    let left = shift.max(0);
    let right = (-shift).max(0);
    let bound = i64::from(bias).abs() + MAX_PRODUCT * products as i64;
    let fast = right >= 1
        && i64::from(zero).abs() <= 1 << 30
        && bound
            .checked_shl(left as u32 + 1)
            .is_some_and(|b| b < 1 << 31);
    if fast {
        (left + 1, right, 1 << (right - 1), -1, true)
    } else {
        let mask = ((1i64 << right) - 1) as i32;
        (left, right, mask, mask >> 1, false)
    }
}

/// [`super::gemm_s8`]'s contract; returns the channels it computed: all of them, or 0 when
/// it computed none (`k` above [`MAX_K`] or 0, shifts outside `-31..=31`). The caller has
/// checked every length.
pub(super) fn gemm_s8(g: &super::Gemm<'_>, q: &Requant<'_>, y: &mut [i8]) -> usize {
    let (x, x_stride, rows, w, k, y_stride) = (g.x, g.x_stride, g.rows, g.w, g.k, g.y_stride);
    let cols = q.channels();
    let shifts_fit = q.shift.iter().take(cols).all(|s| (-31..=31).contains(s));
    if cols == 0 || rows == 0 || k == 0 || k > MAX_K || !shifts_fit {
        return 0;
    }
    let fits = x.len() >= (rows - 1) * x_stride + k
        && w.len() >= cols * k
        && y.len() >= (rows - 1) * y_stride + cols
        && q.mult.len() >= cols
        && q.shift.len() >= cols;
    if !fits {
        return 0;
    }
    // Buffers no larger than the layer needs: safe Rust zeroes them on every call (a
    // fully-connected layer of 64 inputs would otherwise clear 4 KiB to use 268 bytes).
    match (k, cols) {
        (0..=61, 0..=8) => run::<64, 8>(g, q, y),
        (0..=61, _) => run::<64, CHUNK>(g, q, y),
        (0..=253, _) => run::<256, CHUNK>(g, q, y),
        _ => run::<{ MAX_K + 3 }, CHUNK>(g, q, y),
    }
    cols
}

/// One checked call of [`gemm_s8`]: the assembly's calls with a widening buffer of `B`
/// words (`k + 3 <= B`) and a table of `T` channels (`T <= CHUNK`).
fn run<const B: usize, const T: usize>(g: &super::Gemm<'_>, q: &Requant<'_>, y: &mut [i8]) {
    let (x, x_stride, rows, w, k, y_stride) = (g.x, g.x_stride, g.rows, g.w, g.k, g.y_stride);
    let (cols, kk) = (q.channels(), k as u32);
    let mut buf = [0i32; B];
    let mut table = [Channel::default(); T];
    let mut c0 = 0;
    while c0 < cols {
        let n = T.min(cols - c0);
        let entries = table.iter_mut().map(|t| &mut t.rest);
        fill(q, c0..c0 + n, k, entries);
        for (t, c) in table.iter_mut().zip(c0..c0 + n) {
            t.bias = q.bias[c];
        }
        let mut r = 0;
        while r < rows {
            // The last row of an odd count goes as a pair of itself: the same outputs,
            // written twice to the same bytes.
            let r1 = if r + 1 < rows { r + 1 } else { r };
            let args = Args {
                x0: x[r * x_stride..].as_ptr(),
                x1: x[r1 * x_stride..].as_ptr(),
                w: w[c0 * k..].as_ptr(),
                k: kk,
                cols: n as u32,
                ch: table.as_ptr(),
                y0: y[r * y_stride + c0..].as_mut_ptr(),
                y1: y[r1 * y_stride + c0..].as_mut_ptr(),
                buf: buf.as_mut_ptr(),
            };
            // SAFETY: the assembly reads `k` bytes of rows `r` and `r1` of `x` and of each of
            // the `n` weight rows from `c0`, `n` entries of `table`, and writes `n` bytes of
            // rows `r` and `r1` of `y` from `c0` (all inside their slices: the lengths were
            // checked by `gemm_s8`, `r1 < rows`, `c0 + n <= cols`) and at most `4 · k + 12`
            // bytes of `buf` (`k + 3 <= B`, as `gemm_s8` chose `B`, so inside it;
            // word-aligned, as its `LDM`/`STM` need). It
            // follows the AAPCS, saving and restoring r4-r11 and lr. When `r1 == r` the two
            // output pointers are one and the same bytes receive the same value twice; no
            // reference to them is used meanwhile.
            unsafe { planner_dsp_gemm_s8(&args) };
            r += 2;
        }
        c0 += n;
    }
}

/// `global_asm!` of the routine `$body`. With LTO the module's assembly is also parsed
/// without the crate's target features, so the DSP extension is stated for the assembler
/// where the target triple lacks it: an Armv8-M Mainline core with it is a Cortex-M33 to
/// the assembler (the instructions here are Armv7E-M's, encoded alike). Armv7E-M always
/// has it.
macro_rules! dsp_asm {
    ($($body:tt)*) => {
        #[cfg(planner_v8m)]
        core::arch::global_asm!(".cpu cortex-m33", $($body)*);
        #[cfg(not(planner_v8m))]
        core::arch::global_asm!($($body)*);
    };
}

// The rows' inputs are first widened into `buf`: for each group of 4 elements
// [x0e, x0o, x1e, x1o], where x0e holds elements 0 and 2 of row 0 as two halfwords and x0o
// elements 1 and 3 (SXTB16 and SXTB16 ROR 8), so that SMLAD with a weight word widened the
// same way multiplies matching elements; then the k % 4 last elements of row 0 and of row 1
// as halfwords.
//
// Frame (sp): 0 args, 4 channel pointer, 8 column, 12 tail count, 16 spill a01, 20 spill a11,
// 24 group bytes (16 per group), 28 weight pointer of the column pair.
dsp_asm!(
    asm_function!("planner_dsp_gemm_s8"),
    "push {{r4-r11, lr}}",
    "sub sp, sp, #32",
    "str r0, [sp, #0]",
    // Widen the two rows.
    "ldr r1, [r0, #0]",
    "ldr r2, [r0, #4]",
    "ldr r3, [r0, #12]",
    "ldr r10, [r0, #32]",
    "lsrs r12, r3, #2",
    "lsl r11, r12, #4",
    "str r11, [sp, #24]",
    "and r3, r3, #3",
    "str r3, [sp, #12]",
    "cmp r12, #0",
    "beq 2f",
    "1:",
    "ldr r4, [r1], #4",
    "ldr r6, [r2], #4",
    "sxtb16 r5, r4, ror #8",
    "sxtb16 r4, r4",
    "sxtb16 r7, r6, ror #8",
    "sxtb16 r6, r6",
    "stm r10!, {{r4-r7}}",
    "subs r12, r12, #1",
    "bne 1b",
    "2:",
    // The tail: row 0's k % 4 last elements, then row 1's, as halfwords.
    "cbz r3, 4f",
    "mov r12, r3",
    "3:",
    "ldrsb r4, [r1], #1",
    "strh r4, [r10], #2",
    "subs r12, r12, #1",
    "bne 3b",
    "mov r12, r3",
    "5:",
    "ldrsb r4, [r2], #1",
    "strh r4, [r10], #2",
    "subs r12, r12, #1",
    "bne 5b",
    "4:",
    "ldr r1, [r0, #20]",
    "str r1, [sp, #4]",
    "movs r1, #0",
    "str r1, [sp, #8]",
    "ldr r1, [r0, #8]",
    "str r1, [sp, #28]",
    // A column pair: c and c + 1 (c again when c is the last column).
    "10:",
    "ldr r0, [sp, #0]",
    "ldr r8, [r0, #12]",
    "ldr r9, [r0, #16]",
    "ldr r11, [sp, #28]",
    "ldr r10, [sp, #8]",
    "add r10, r10, #1",
    "cmp r10, r9",
    "ite lo",
    "addlo r12, r11, r8",
    "movhs r12, r11",
    "ldr r10, [r0, #32]",
    "ldr lr, [sp, #24]",
    "add lr, lr, r10",
    "movs r0, #0",
    "movs r1, #0",
    "movs r2, #0",
    "movs r3, #0",
    "cmp r10, lr",
    "beq 12f",
    "11:",
    "ldm r10!, {{r4-r7}}",
    "ldr r8, [r11], #4",
    "sxtb16 r9, r8, ror #8",
    "sxtb16 r8, r8",
    "smlad r0, r4, r8, r0",
    "smlad r0, r5, r9, r0",
    "smlad r2, r6, r8, r2",
    "smlad r2, r7, r9, r2",
    "ldr r8, [r12], #4",
    "sxtb16 r9, r8, ror #8",
    "sxtb16 r8, r8",
    "smlad r1, r4, r8, r1",
    "smlad r1, r5, r9, r1",
    "smlad r3, r6, r8, r3",
    "smlad r3, r7, r9, r3",
    "cmp r10, lr",
    "bne 11b",
    "12:",
    // The tail: r10 points at row 0's halfwords; row 1's follow after t of them.
    "ldr lr, [sp, #12]",
    "cmp lr, #0",
    "beq 14f",
    "lsl r8, lr, #1",
    "13:",
    "ldrsh r4, [r10]",
    "ldrsh r5, [r10, r8]",
    "add r10, r10, #2",
    "ldrsb r6, [r11], #1",
    "ldrsb r7, [r12], #1",
    "mla r0, r4, r6, r0",
    "mla r2, r5, r6, r2",
    "mla r1, r4, r7, r1",
    "mla r3, r5, r7, r3",
    "subs lr, lr, #1",
    "bne 13b",
    "14:",
    // Requantise: column c's two accumulators, then column c + 1's.
    "str r1, [sp, #16]",
    "str r3, [sp, #20]",
    "ldr r1, [sp, #4]",
    "ldm r1, {{r4-r12}}",
    "mov r1, r2",
    // TFLite's requantisation of \\acc, exact (r2, r3 scratch).
    ".macro PLANNER_DSP_EXACT acc",
    "add \\acc, \\acc, r4",
    "lsl \\acc, \\acc, r6",
    "smull r2, r3, \\acc, r5",
    "adds r2, r2, #0x40000000",
    "adc r3, r3, #0",
    "lsls r3, r3, #1",
    "orr \\acc, r3, r2, lsr #31",
    "and r2, \\acc, r8",
    "asr \\acc, \\acc, r7",
    "add r3, r9, \\acc, lsr #31",
    "cmp r2, r3",
    "it gt",
    "addgt \\acc, \\acc, #1",
    "qadd \\acc, \\acc, r10",
    "PLANNER_DSP_CLAMP \\acc",
    ".endm",
    // The same values when the table entry is fast (see `rounding`).
    ".macro PLANNER_DSP_FAST acc",
    "add \\acc, \\acc, r4",
    "lsl \\acc, \\acc, r6",
    "smmulr \\acc, \\acc, r5",
    "add \\acc, \\acc, \\acc, asr #31",
    "add \\acc, \\acc, r8",
    "asr \\acc, \\acc, r7",
    "add \\acc, \\acc, r10",
    "PLANNER_DSP_CLAMP \\acc",
    ".endm",
    ".macro PLANNER_DSP_CLAMP acc",
    "cmp \\acc, r11",
    "it lt",
    "movlt \\acc, r11",
    "cmp \\acc, r12",
    "it gt",
    "movgt \\acc, r12",
    ".endm",
    "cmp r9, #0",
    "blt 31f",
    "PLANNER_DSP_EXACT r0",
    "PLANNER_DSP_EXACT r1",
    "b 32f",
    "31:",
    "PLANNER_DSP_FAST r0",
    "PLANNER_DSP_FAST r1",
    "32:",
    "ldr lr, [sp, #0]",
    "ldr r2, [lr, #24]",
    "ldr r3, [sp, #8]",
    "strb r0, [r2, r3]",
    "ldr r2, [lr, #28]",
    "strb r1, [r2, r3]",
    // Column c + 1, unless c was the last.
    "ldr r2, [lr, #16]",
    "add r3, r3, #1",
    "cmp r3, r2",
    "bhs 20f",
    "ldr r1, [sp, #4]",
    "add r1, r1, #36",
    "ldm r1, {{r4-r12}}",
    "ldr r0, [sp, #16]",
    "ldr r1, [sp, #20]",
    "cmp r9, #0",
    "blt 33f",
    "PLANNER_DSP_EXACT r0",
    "PLANNER_DSP_EXACT r1",
    "b 34f",
    "33:",
    "PLANNER_DSP_FAST r0",
    "PLANNER_DSP_FAST r1",
    "34:",
    "ldr lr, [sp, #0]",
    "ldr r2, [lr, #24]",
    "ldr r3, [sp, #8]",
    "add r3, r3, #1",
    "strb r0, [r2, r3]",
    "ldr r2, [lr, #28]",
    "strb r1, [r2, r3]",
    // Next pair.
    "ldr r2, [lr, #16]",
    "add r3, r3, #1",
    "str r3, [sp, #8]",
    "ldr r1, [sp, #4]",
    "add r1, r1, #72",
    "str r1, [sp, #4]",
    "ldr r1, [lr, #12]",
    "ldr r0, [sp, #28]",
    "add r0, r0, r1, lsl #1",
    "str r0, [sp, #28]",
    "cmp r3, r2",
    "blo 10b",
    "20:",
    ".purgem PLANNER_DSP_EXACT",
    ".purgem PLANNER_DSP_FAST",
    ".purgem PLANNER_DSP_CLAMP",
    "add sp, sp, #32",
    "pop {{r4-r11, pc}}",
    ".size planner_dsp_gemm_s8, . - planner_dsp_gemm_s8",
);

/// One output channel's requantisation for `planner_dsp_dw_s8` (its bias starts the
/// accumulator, from the contract's bias row).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct DwChannel {
    mult: i32,
    /// Left shift, 0..=31 (`left + 1` in a fast entry, see [`rounding`]).
    left: i32,
    /// Right shift, 0..=31.
    right: i32,
    /// `(1 << right) - 1` (`2^(right - 1)` in a fast entry).
    mask: i32,
    /// `mask >> 1` (-1 in a fast entry).
    threshold: i32,
    zero: i32,
    lo: i32,
    hi: i32,
}

// The assembly loads a `Channel` with one `LDM` of nine words and steps 36 bytes per
// channel; a `DwChannel` with eight (32 bytes).
const _: () = assert!(size_of::<Channel>() == 36 && size_of::<DwChannel>() == 32);

/// The assembly's constants of channels `cs` of `q` (sums of `k` products each) into
/// `table`, one entry per channel: one kind of requantisation for the whole run, the fast
/// entries when every channel of it allows them ([`rounding`]).
fn fill<'t>(
    q: &Requant<'_>,
    cs: core::ops::Range<usize>,
    k: usize,
    table: impl Iterator<Item = &'t mut DwChannel>,
) {
    let fast = cs
        .clone()
        .all(|c| rounding(q.bias[c], q.shift[c], q.out_zero, k).4);
    let zero = if fast { q.out_zero } else { i32::MAX };
    for (t, c) in table.zip(cs) {
        let (left, right, mask, threshold, _) = rounding(q.bias[c], q.shift[c], zero, k);
        *t = DwChannel {
            mult: q.mult[c],
            left,
            right,
            mask,
            threshold,
            zero: q.out_zero,
            lo: q.lo,
            hi: q.hi,
        };
    }
}

/// Arguments of `planner_dsp_dw_s8`, read by offset from the assembly.
#[repr(C)]
struct DwArgs {
    head: DwHead,         // 0..48: blocks of four channels
    bias: *const i32,     // 48
    ch: *const DwChannel, // 52: one per channel
    wbuf: *mut i32,       // 56: 2 · fh · fw words, the block's weights widened tap after tap
}

unsafe extern "C" {
    fn planner_dsp_dw_s8(a: *const DwArgs);
}

/// The first `4 · floor(ch / 4)` channels of [`super::depthwise_s8`]'s contract, in runs of
/// [`CHUNK`] channels; returns the channels it computed (0 when none: shifts outside
/// `-31..=31`, a window of more than [`DW_MAX_TAPS`] taps, sizes past `u32`, fewer than four
/// channels). The caller has checked every length.
pub(super) fn depthwise_s8(
    x: &[i8],
    g: &super::DwGeometry,
    n: usize,
    w: &[i8],
    q: &Requant<'_>,
    y: &mut [i8],
) -> usize {
    let ch = q.channels() / 4 * 4;
    let taps = g.fh * g.fw;
    let int = |v: usize| u32::try_from(v).ok();
    let shifts_fit = q.shift.iter().take(ch).all(|s| (-31..=31).contains(s));
    let (Some(n32), Some(fh), Some(fw), Some(tr), Some(tc), Some(xs), Some(wt), Some(ys)) = (
        int(n),
        int(g.fh),
        int(g.fw),
        int(g.tap_row),
        int(g.tap_col),
        int(g.x_step),
        int(g.w_tap),
        int(g.y_step),
    ) else {
        return 0;
    };
    if ch == 0 || n == 0 || taps == 0 || taps > DW_MAX_TAPS || !shifts_fit {
        return 0;
    }
    let x_len = (n - 1) * g.x_step + (g.fh - 1) * g.tap_row + (g.fw - 1) * g.tap_col + ch;
    let fits = x.len() >= x_len
        && w.len() >= (taps - 1) * g.w_tap + ch
        && y.len() >= (n - 1) * g.y_step + ch
        && q.bias.len() >= ch
        && q.mult.len() >= ch
        && q.shift.len() >= ch;
    if !fits {
        return 0;
    }
    let mut wbuf = [0i32; 2 * DW_MAX_TAPS];
    let mut table = [DwChannel::default(); CHUNK];
    let mut c0 = 0;
    while c0 < ch {
        let cc = CHUNK.min(ch - c0);
        fill(q, c0..c0 + cc, taps, table.iter_mut());
        let args = DwArgs {
            head: DwHead {
                x: x[c0..].as_ptr(),
                n: n32,
                fh,
                fw,
                tap_row: tr,
                tap_col: tc,
                x_step: xs,
                w: w[c0..].as_ptr(),
                w_tap: wt,
                y: y[c0..].as_mut_ptr(),
                y_step: ys,
                blocks: (cc / 4) as u32,
            },
            bias: q.bias[c0..].as_ptr(),
            ch: table.as_ptr(),
            wbuf: wbuf.as_mut_ptr(),
        };
        // SAFETY: for each block of four channels from `c0` the assembly reads four bytes at
        // every tap of every output pixel's window in `x` (the farthest ends within `x_len`,
        // inside `x`), four bytes at every tap in `w` (inside: `(taps - 1) · w_tap + ch`),
        // four words of `bias` and four entries of `table`, writes four bytes per output pixel
        // in `y` (inside: `(n - 1) · y_step + ch`) and `2 · taps` words of `wbuf` (at most
        // `2 · DW_MAX_TAPS`, word-aligned for its `LDM`/`STM`). It follows the AAPCS, saving
        // and restoring r4-r11 and lr. `y`, `wbuf` and `table` are not otherwise used
        // meanwhile.
        unsafe { planner_dsp_dw_s8(&args) };
        c0 += cc;
    }
    ch
}

/// In the depthwise assembly's `.macro`s of channel `\i`: its accumulator into r0 and its
/// table entry into r3-r10, then the accumulator shifted left.
macro_rules! dw_load {
    () => {
        concat!(
            "ldr r0, [sp, #(32 + 4 * \\i)]\n",
            "add lr, r11, #(32 * \\i)\n",
            "ldm lr, {{r3-r10}}\n",
            "lsl r0, r0, r4\n",
        )
    };
}

/// In the depthwise assembly's `.macro`s of channel `\i`: r0 clamped to `[r9, r10]` and
/// stored at `[r12, #\i]`.
macro_rules! dw_store {
    () => {
        concat!(
            "cmp r0, r9\n",
            "it lt\n",
            "movlt r0, r9\n",
            "cmp r0, r10\n",
            "it gt\n",
            "movgt r0, r10\n",
            "strb r0, [r12, #\\i]\n",
        )
    };
}

// The depthwise assembly. `PLANNER_DSP_DW_OUT i` requantises the accumulator of the
// block's channel `i` (spilled at `sp + 32 + 4i`; its table entry at `r11 + 32i`) and
// stores it at `[r12, #i]`; `PLANNER_DSP_DW_FAST i` does the same from a fast entry (see
// `rounding`).
dsp_asm!(
    asm_function!("planner_dsp_dw_s8"),
    "push {{r4-r11, lr}}",
    "sub sp, sp, #56",
    // Frame: 0 args, 4 blocks left, 8 pixels left, 12 block's x, 16 block's y, 20 bias,
    // 24 table entry, 28 pixel's x, 32..47 the four accumulators, 48 pixel's y.
    "str r0, [sp, #0]",
    "ldr r1, [r0, #44]",
    "str r1, [sp, #4]",
    "ldr r1, [r0, #0]",
    "str r1, [sp, #12]",
    "ldr r1, [r0, #36]",
    "str r1, [sp, #16]",
    "ldr r1, [r0, #48]",
    "str r1, [sp, #20]",
    "ldr r1, [r0, #52]",
    "str r1, [sp, #24]",
    // A block of four channels: widen its weights, tap after tap, into the buffer.
    "2:",
    "ldr r0, [sp, #0]",
    "ldr r1, [sp, #4]",
    "ldr r2, [r0, #44]",
    "subs r1, r2, r1",
    "ldr r2, [r0, #28]",
    "add r2, r2, r1, lsl #2",
    "ldr r3, [r0, #32]",
    "ldr r8, [r0, #8]",
    "ldr r9, [r0, #12]",
    "mul r8, r8, r9",
    "ldr r9, [r0, #56]",
    "3:",
    "ldr r4, [r2]",
    "add r2, r2, r3",
    "sxtb16 r5, r4, ror #8",
    "sxtb16 r4, r4",
    "stm r9!, {{r4, r5}}",
    "subs r8, r8, #1",
    "bne 3b",
    "ldr r1, [sp, #12]",
    "str r1, [sp, #28]",
    "ldr r1, [r0, #4]",
    "str r1, [sp, #8]",
    "ldr r1, [sp, #16]",
    "str r1, [sp, #48]",
    // A pixel: the accumulators start at the channels' biases. Through its taps: r8 the
    // tap's input, r9 the widened weights, r10 rows left, r11 the row's first tap, r12 the
    // step between taps of a row, lr taps left in the row.
    "4:",
    "ldr r0, [sp, #20]",
    "ldm r0, {{r0-r3}}",
    "ldr lr, [sp, #0]",
    "ldr r9, [lr, #56]",
    "ldr r10, [lr, #8]",
    "ldr r12, [lr, #20]",
    "ldr r11, [sp, #28]",
    "5:",
    "mov r8, r11",
    "ldr lr, [sp, #0]",
    "ldr lr, [lr, #12]",
    "6:",
    "ldr r4, [r8]",
    "add r8, r8, r12",
    "sxtb16 r5, r4, ror #8",
    "sxtb16 r4, r4",
    "ldm r9!, {{r6, r7}}",
    "smlabb r0, r4, r6, r0",
    "smlatt r2, r4, r6, r2",
    "smlabb r1, r5, r7, r1",
    "smlatt r3, r5, r7, r3",
    "subs lr, lr, #1",
    "bne 6b",
    "ldr r6, [sp, #0]",
    "ldr r6, [r6, #16]",
    "add r11, r11, r6",
    "subs r10, r10, #1",
    "bne 5b",
    // Requantise the four channels and store them at r12.
    "add lr, sp, #32",
    "stm lr, {{r0-r3}}",
    "ldr r11, [sp, #24]",
    "ldr r12, [sp, #48]",
    ".macro PLANNER_DSP_DW_OUT i",
    dw_load!(),
    "smull r1, r2, r0, r3",
    "adds r1, r1, #0x40000000",
    "adc r2, r2, #0",
    "lsls r2, r2, #1",
    "orr r0, r2, r1, lsr #31",
    "and r1, r0, r6",
    "asr r0, r0, r5",
    "add r2, r7, r0, lsr #31",
    "cmp r1, r2",
    "it gt",
    "addgt r0, r0, #1",
    "qadd r0, r0, r8",
    dw_store!(),
    ".endm",
    ".macro PLANNER_DSP_DW_FAST i",
    dw_load!(),
    "smmulr r0, r0, r3",
    "add r0, r0, r0, asr #31",
    "add r0, r0, r6",
    "asr r0, r0, r5",
    "add r0, r0, r8",
    dw_store!(),
    ".endm",
    // The block's entries are all fast or all exact: the first one's threshold says.
    "ldr r0, [r11, #16]",
    "cmp r0, #0",
    "blt 41f",
    "PLANNER_DSP_DW_OUT 0",
    "PLANNER_DSP_DW_OUT 1",
    "PLANNER_DSP_DW_OUT 2",
    "PLANNER_DSP_DW_OUT 3",
    "b 42f",
    "41:",
    "PLANNER_DSP_DW_FAST 0",
    "PLANNER_DSP_DW_FAST 1",
    "PLANNER_DSP_DW_FAST 2",
    "PLANNER_DSP_DW_FAST 3",
    "42:",
    ".purgem PLANNER_DSP_DW_OUT",
    ".purgem PLANNER_DSP_DW_FAST",
    // The next pixel.
    "ldr lr, [sp, #0]",
    "ldr r1, [lr, #40]",
    "add r12, r12, r1",
    "str r12, [sp, #48]",
    "ldr r1, [lr, #24]",
    "ldr r2, [sp, #28]",
    "add r2, r2, r1",
    "str r2, [sp, #28]",
    "ldr r1, [sp, #8]",
    "subs r1, r1, #1",
    "str r1, [sp, #8]",
    "bne 4b",
    // The next block: four channels on in x, y, the biases and the table.
    "ldr r1, [sp, #12]",
    "adds r1, r1, #4",
    "str r1, [sp, #12]",
    "ldr r1, [sp, #16]",
    "adds r1, r1, #4",
    "str r1, [sp, #16]",
    "ldr r1, [sp, #20]",
    "adds r1, r1, #16",
    "str r1, [sp, #20]",
    "ldr r1, [sp, #24]",
    "adds r1, r1, #128",
    "str r1, [sp, #24]",
    "ldr r1, [sp, #4]",
    "subs r1, r1, #1",
    "str r1, [sp, #4]",
    "bne 2b",
    "add sp, sp, #56",
    "pop {{r4-r11, pc}}",
    ".size planner_dsp_dw_s8, . - planner_dsp_dw_s8",
);
