//! The Helium (MVE) GEMM: Cortex-M55 and M85, chosen by `planner_mve` (build.rs).
//!
//! `planner_mve_gemm_s8` computes four output channels of one row at a time: the row's
//! inputs and the four channels' weights stream through `VLDRB` in a tail-predicated loop
//! (`DLSTP.8`/`LETP`, so any `k` works without a scalar tail) and `VMLADAVA.S8` sums sixteen
//! products per instruction into four scalar accumulators; the four sums then go through
//! TFLite's requantisation as one vector: effective bias (`VADD`), left shift (`VSHL`),
//! rounding doubling high multiply (`VQRDMULH`, which rounds exactly as gemmlowp's
//! `SaturatingRoundingDoublingHighMul`), the right shift rounding half away from zero
//! (`VRSHL` rounds half up, so negative values are first lowered by one where the shift is
//! not zero: `VSHR #31`, `VAND`, `VQADD`), the zero point, the clamp, and one `VSTRB.32`.
//! Channels past the last multiple of four go through the portable loop.

use super::{DW_MAX_TAPS, DwHead, Requant};

/// A [`Requant`] as the assembly reads it: the per-channel rows, then the zero point and
/// the clamp.
#[repr(C)]
struct RequantArgs {
    bias: *const i32,  // 0
    mult: *const i32,  // 4
    shift: *const i32, // 8
    out_zero: i32,     // 12
    lo: i32,           // 16
    hi: i32,           // 20
}

impl RequantArgs {
    /// `q`'s rows (at their first channel) and constants.
    #[inline(always)]
    fn new(q: &Requant<'_>) -> RequantArgs {
        RequantArgs {
            bias: q.bias.as_ptr(),
            mult: q.mult.as_ptr(),
            shift: q.shift.as_ptr(),
            out_zero: q.out_zero,
            lo: q.lo,
            hi: q.hi,
        }
    }
}

/// Arguments of `planner_mve_gemm_s8`, read by offset from the assembly.
#[repr(C)]
struct Args {
    x: *const i8,   // 0
    x_stride: u32,  // 4
    rows: u32,      // 8
    w: *const i8,   // 12
    k: u32,         // 16
    blocks: u32,    // 20: output channels / 4
    y: *mut i8,     // 24
    y_stride: u32,  // 28
    q: RequantArgs, // 32..56
}

unsafe extern "C" {
    fn planner_mve_gemm_s8(a: *const Args);
}

/// The first `4 · floor(cols / 4)` channels of [`super::gemm_s8`]'s contract; returns the
/// channels it computed (0 when it computed none: shifts outside `-31..=31`, sizes past
/// `u32`, or fewer than four channels). The caller has checked every length.
pub(super) fn gemm_s8(g: &super::Gemm<'_>, q: &Requant<'_>, y: &mut [i8]) -> usize {
    let (x, x_stride, rows, w, k, y_stride) = (g.x, g.x_stride, g.rows, g.w, g.k, g.y_stride);
    let cols = q.channels() / 4 * 4;
    let int = |v: usize| u32::try_from(v).ok();
    let shifts_fit = q.shift.iter().take(cols).all(|s| (-31..=31).contains(s));
    let (Some(xs), Some(r), Some(kk), Some(blocks), Some(ys)) = (
        int(x_stride),
        int(rows),
        int(k),
        int(cols / 4),
        int(y_stride),
    ) else {
        return 0;
    };
    if cols == 0 || rows == 0 || k == 0 || !shifts_fit {
        return 0;
    }
    // The contract's lengths, checked again here because the assembly relies on them.
    let fits = x.len() >= (rows - 1) * x_stride + k
        && w.len() >= cols * k
        && y.len() >= (rows - 1) * y_stride + cols
        && q.bias.len() >= cols
        && q.mult.len() >= cols
        && q.shift.len() >= cols;
    if !fits {
        return 0;
    }
    let args = Args {
        x: x.as_ptr(),
        x_stride: xs,
        rows: r,
        w: w.as_ptr(),
        k: kk,
        blocks,
        y: y.as_mut_ptr(),
        y_stride: ys,
        q: RequantArgs::new(q),
    };
    // SAFETY: the assembly reads `rows` rows of `k` bytes of `x`, `x_stride` apart, `cols`
    // rows of `k` bytes of `w`, `cols` words of each of `bias`, `mult` and `shift`, and
    // writes `cols` bytes of each of `rows` rows of `y`, `y_stride` apart: every one of them
    // inside its slice (checked above). Its vector loads past a row's `k` bytes are
    // predicated off by `DLSTP`, so they touch no memory. It follows the AAPCS: it saves
    // r4-r11, lr and d8-d15 and restores them, and keeps its frame on the stack it was
    // given. `y` is borrowed mutably, the rest shared, so nothing else writes them.
    unsafe { planner_mve_gemm_s8(&args) };
    cols
}

// Frame (64 bytes above the saved registers):
//  0 blocks left   4 rows left   8 x_stride   12 y_stride   16 out_zero
// 20 bias ptr     24 mult ptr   28 shift ptr  32 rows       36 x base
// 40 y column     48..63 the upper clamp, as a vector
mve_asm!(
    "planner_mve_gemm_s8",
    push ["r4-r11"] vpush "d8-d15" frame "64";
    "ldr r1, [r0, #20]",
    "str r1, [sp, #0]",
    "ldr r1, [r0, #4]",
    "str r1, [sp, #8]",
    "ldr r1, [r0, #28]",
    "str r1, [sp, #12]",
    "ldr r1, [r0, #44]",
    "str r1, [sp, #16]",
    "ldr r1, [r0, #32]",
    "str r1, [sp, #20]",
    "ldr r1, [r0, #36]",
    "str r1, [sp, #24]",
    "ldr r1, [r0, #40]",
    "str r1, [sp, #28]",
    "ldr r1, [r0, #8]",
    "str r1, [sp, #32]",
    "ldr r1, [r0, #0]",
    "str r1, [sp, #36]",
    "ldr r1, [r0, #24]",
    "str r1, [sp, #40]",
    "ldr r1, [r0, #48]",
    "vdup.32 q7, r1",
    "ldr r1, [r0, #52]",
    "vdup.32 q1, r1",
    "vstrw.32 q1, [sp, #48]",
    "ldr r2, [r0, #16]",
    "ldr r0, [r0, #12]",
    // r0: the block's first weight row; r2: k.
    "2:",
    "ldr r4, [sp, #20]",
    "vldrw.u32 q3, [r4], #16",
    "str r4, [sp, #20]",
    "ldr r4, [sp, #24]",
    "vldrw.u32 q4, [r4], #16",
    "str r4, [sp, #24]",
    "ldr r4, [sp, #28]",
    "vldrw.u32 q6, [r4], #16",
    "str r4, [sp, #28]",
    "vmov.i32 q0, #0",
    "vmax.s32 q5, q6, q0",
    "vmin.s32 q6, q6, q0",
    "ldr r3, [sp, #36]",
    "ldr r4, [sp, #32]",
    "str r4, [sp, #4]",
    "ldr r1, [sp, #40]",
    // One row: r3 its input, r1 its four outputs.
    "3:",
    "mov r5, r3",
    "mov r7, r0",
    "add r9, r0, r2",
    "add r11, r9, r2",
    "add r12, r11, r2",
    "movs r4, #0",
    "movs r6, #0",
    "movs r8, #0",
    "movs r10, #0",
    "dlstp.8 lr, r2",
    "4:",
    "vldrb.u8 q0, [r5], #16",
    "vldrb.u8 q1, [r7], #16",
    "vmladava.s8 r4, q0, q1",
    "vldrb.u8 q1, [r9], #16",
    "vmladava.s8 r6, q0, q1",
    "vldrb.u8 q1, [r11], #16",
    "vmladava.s8 r8, q0, q1",
    "vldrb.u8 q1, [r12], #16",
    "vmladava.s8 r10, q0, q1",
    "letp lr, 4b",
    "vmov q2[2], q2[0], r4, r8",
    "vmov q2[3], q2[1], r6, r10",
    "vadd.i32 q2, q2, q3",
    "vshl.s32 q2, q2, q5",
    "vqrdmulh.s32 q2, q2, q4",
    "vshr.s32 q1, q6, #31",
    "vshr.s32 q0, q2, #31",
    "vand q0, q0, q1",
    "vqadd.s32 q2, q2, q0",
    "vrshl.s32 q2, q2, q6",
    "ldr r4, [sp, #16]",
    "vadd.i32 q2, q2, r4",
    "vmax.s32 q2, q2, q7",
    "vldrw.u32 q1, [sp, #48]",
    "vmin.s32 q2, q2, q1",
    "vstrb.32 q2, [r1]",
    "ldr r4, [sp, #12]",
    "add r1, r1, r4",
    "ldr r4, [sp, #8]",
    "add r3, r3, r4",
    "ldr r4, [sp, #4]",
    "subs r4, r4, #1",
    "str r4, [sp, #4]",
    "bne 3b",
    "ldr r4, [sp, #40]",
    "adds r4, r4, #4",
    "str r4, [sp, #40]",
    "add r0, r0, r2, lsl #2",
    "ldr r4, [sp, #0]",
    "subs r4, r4, #1",
    "str r4, [sp, #0]",
    "bne 2b",
);

/// Arguments of `planner_mve_dw_s8`, read by offset from the assembly.
#[repr(C)]
struct DwArgs {
    head: DwHead,   // 0..48: blocks of eight channels
    q: RequantArgs, // 48..72
    wbuf: *mut i8,  // 72: fh · fw · 8 bytes, the block's weights tap after tap
}

unsafe extern "C" {
    fn planner_mve_dw_s8(a: *const DwArgs);
}

/// The first `8 · floor(ch / 8)` channels of [`super::depthwise_s8`]'s contract; returns the
/// channels it computed (0 when none: shifts outside `-31..=31`, a window of more than
/// [`DW_MAX_TAPS`] taps, sizes past `u32`, fewer than eight channels). The caller has checked
/// every length.
pub(super) fn depthwise_s8(
    x: &[i8],
    g: &super::DwGeometry,
    n: usize,
    w: &[i8],
    q: &Requant<'_>,
    y: &mut [i8],
) -> usize {
    let ch = q.channels() / 8 * 8;
    let taps = g.fh * g.fw;
    let int = |v: usize| u32::try_from(v).ok();
    let shifts_fit = q.shift.iter().take(ch).all(|s| (-31..=31).contains(s));
    let (
        Some(n32),
        Some(fh),
        Some(fw),
        Some(tr),
        Some(tc),
        Some(xs),
        Some(wt),
        Some(ys),
        Some(blocks),
    ) = (
        int(n),
        int(g.fh),
        int(g.fw),
        int(g.tap_row),
        int(g.tap_col),
        int(g.x_step),
        int(g.w_tap),
        int(g.y_step),
        int(ch / 8),
    )
    else {
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
    // Words, so that the assembly's STRD finds it aligned.
    let mut wbuf = [0u32; 2 * DW_MAX_TAPS];
    let args = DwArgs {
        head: DwHead {
            x: x.as_ptr(),
            n: n32,
            fh,
            fw,
            tap_row: tr,
            tap_col: tc,
            x_step: xs,
            w: w.as_ptr(),
            w_tap: wt,
            y: y.as_mut_ptr(),
            y_step: ys,
            blocks,
        },
        q: RequantArgs::new(q),
        wbuf: wbuf.as_mut_ptr().cast(),
    };
    // SAFETY: for each block of eight channels the assembly reads eight bytes at every tap
    // of every output pixel's window in `x` (the farthest ends at `x_len`, inside `x`),
    // eight bytes at every tap in `w` (inside, `(taps - 1) · w_tap + ch`), eight words of
    // `bias`, `mult` and `shift` (inside, `ch` each), writes eight bytes per output pixel
    // in `y` (inside, `(n - 1) · y_step + ch`) and `8 · taps` bytes of `wbuf` (at most
    // `8 · DW_MAX_TAPS`). It follows the AAPCS (r4-r11, lr and d8-d15 saved and restored) and
    // keeps its frame on the stack it was given; `y` and `wbuf` are borrowed mutably.
    unsafe { planner_mve_dw_s8(&args) };
    ch
}

// Eight channels at a time, in 16-bit lanes: VLDRB.S16 loads a tap's eight inputs and eight
// weights, VMULLB.S16/VMULLT.S16 multiply the even and the odd lanes into two vectors of
// 32-bit products, summed into q0 (channels 0, 2, 4, 6) and q1 (1, 3, 5, 7). Each half is
// requantised as a vector (as in the GEMM); VMOVNT puts the odd half's bytes between the
// even half's and one VSTRB.16 stores the eight channels in order.
//
// Frame (sp): 0 blocks left, 4 pixels left, 8 args, 12 fh, 16 tap_row, 20 tap_col,
// 24 x_step, 28 y_step, 32 block's x, 36 block's y, 40 out_zero, 44 block index,
// 48 bias even, 64 bias odd, 80 multipliers even, 96 odd, 112 left shifts even, 128 odd,
// 144 right shifts (negative) even, 160 odd: the block's constants, de-interleaved.
// Registers through a block's pixels: q5 the lower clamp, q6 the upper; r5 the pixel's
// x, r6 its y, r7 the weight buffer (r4 its cursor: a widening load's base must be a low
// register), r8 the step between weight rows... see the code.
mve_asm!(
    "planner_mve_dw_s8",
    push ["r4-r11"] vpush "d8-d15" frame "176";
    "str r0, [sp, #8]",
    "ldr r1, [r0, #44]",
    "str r1, [sp, #0]",
    "ldr r1, [r0, #8]",
    "str r1, [sp, #12]",
    "ldr r1, [r0, #16]",
    "str r1, [sp, #16]",
    "ldr r1, [r0, #20]",
    "str r1, [sp, #20]",
    "ldr r1, [r0, #24]",
    "str r1, [sp, #24]",
    "ldr r1, [r0, #40]",
    "str r1, [sp, #28]",
    "ldr r1, [r0, #0]",
    "str r1, [sp, #32]",
    "ldr r1, [r0, #36]",
    "str r1, [sp, #36]",
    "ldr r1, [r0, #60]",
    "str r1, [sp, #40]",
    "movs r1, #0",
    "str r1, [sp, #44]",
    "ldr r1, [r0, #64]",
    "vdup.32 q5, r1",
    "ldr r1, [r0, #68]",
    "vdup.32 q6, r1",
    // A block of eight channels.
    "2:",
    "ldr r0, [sp, #8]",
    // Its constants, de-interleaved by gathers at word offsets {0, 2, 4, 6}: r1 the
    // block's first channel's offset in bytes within the word rows (32 · block).
    "ldr r1, [sp, #44]",
    "lsls r1, r1, #5",
    "movs r2, #0",
    "vidup.u32 q7, r2, #2",
    "ldr r2, [r0, #48]",
    "add r2, r2, r1",
    "vldrw.u32 q0, [r2, q7, uxtw #2]",
    "vstrw.32 q0, [sp, #48]",
    "adds r2, r2, #4",
    "vldrw.u32 q0, [r2, q7, uxtw #2]",
    "vstrw.32 q0, [sp, #64]",
    "ldr r2, [r0, #52]",
    "add r2, r2, r1",
    "vldrw.u32 q0, [r2, q7, uxtw #2]",
    "vstrw.32 q0, [sp, #80]",
    "adds r2, r2, #4",
    "vldrw.u32 q0, [r2, q7, uxtw #2]",
    "vstrw.32 q0, [sp, #96]",
    "ldr r2, [r0, #56]",
    "add r2, r2, r1",
    "vmov.i32 q2, #0",
    "vldrw.u32 q0, [r2, q7, uxtw #2]",
    "vmax.s32 q1, q0, q2",
    "vstrw.32 q1, [sp, #112]",
    "vmin.s32 q1, q0, q2",
    "vstrw.32 q1, [sp, #144]",
    "adds r2, r2, #4",
    "vldrw.u32 q0, [r2, q7, uxtw #2]",
    "vmax.s32 q1, q0, q2",
    "vstrw.32 q1, [sp, #128]",
    "vmin.s32 q1, q0, q2",
    "vstrw.32 q1, [sp, #160]",
    // Its weights, tap after tap, eight bytes each, into the buffer.
    "lsrs r1, r1, #2",
    "ldr r2, [r0, #28]",
    "add r2, r2, r1",
    "ldr r3, [r0, #32]",
    "ldr r4, [r0, #8]",
    "ldr r8, [r0, #12]",
    "mul r4, r4, r8",
    "ldr r7, [r0, #72]",
    "mov r8, r7",
    "3:",
    "ldr r9, [r2]",
    "ldr r10, [r2, #4]",
    "add r2, r2, r3",
    "strd r9, r10, [r8], #8",
    "subs r4, r4, #1",
    "bne 3b",
    // The pixels.
    "ldr r5, [sp, #32]",
    "ldr r6, [sp, #36]",
    "ldr r1, [r0, #4]",
    "str r1, [sp, #4]",
    "ldr r11, [r0, #12]",
    "ldr r12, [sp, #20]",
    "4:",
    "vldrw.u32 q0, [sp, #48]",
    "vldrw.u32 q1, [sp, #64]",
    "mov r4, r7",
    "mov r9, r5",
    "ldr r10, [sp, #12]",
    "5:",
    "mov r2, r9",
    "dls lr, r11",
    "6:",
    "vldrb.s16 q2, [r2]",
    "add r2, r2, r12",
    "vldrb.s16 q3, [r4], #8",
    "vmullb.s16 q4, q2, q3",
    "vadd.i32 q0, q0, q4",
    "vmullt.s16 q4, q2, q3",
    "vadd.i32 q1, q1, q4",
    "le lr, 6b",
    "ldr r3, [sp, #16]",
    "add r9, r9, r3",
    "subs r10, r10, #1",
    "bne 5b",
    // Requantise both halves.
    "ldr r3, [sp, #40]",
    ".macro PLANNER_MVE_DW_HALF acc, at",
    "vldrw.u32 q2, [sp, #(112 + \\at)]",
    "vshl.s32 \\acc, \\acc, q2",
    "vldrw.u32 q2, [sp, #(80 + \\at)]",
    "vqrdmulh.s32 \\acc, \\acc, q2",
    "vldrw.u32 q2, [sp, #(144 + \\at)]",
    "vshr.s32 q3, q2, #31",
    "vshr.s32 q4, \\acc, #31",
    "vand q4, q4, q3",
    "vqadd.s32 \\acc, \\acc, q4",
    "vrshl.s32 \\acc, \\acc, q2",
    "vadd.i32 \\acc, \\acc, r3",
    "vmax.s32 \\acc, \\acc, q5",
    "vmin.s32 \\acc, \\acc, q6",
    ".endm",
    "PLANNER_MVE_DW_HALF q0, 0",
    "PLANNER_MVE_DW_HALF q1, 16",
    ".purgem PLANNER_MVE_DW_HALF",
    "vmovnt.i32 q0, q1",
    "vstrb.16 q0, [r6]",
    "ldr r3, [sp, #28]",
    "add r6, r6, r3",
    "ldr r3, [sp, #24]",
    "add r5, r5, r3",
    "ldr r3, [sp, #4]",
    "subs r3, r3, #1",
    "str r3, [sp, #4]",
    "bne 4b",
    // The next block: eight channels on in x and y.
    "ldr r3, [sp, #32]",
    "adds r3, r3, #8",
    "str r3, [sp, #32]",
    "ldr r3, [sp, #36]",
    "adds r3, r3, #8",
    "str r3, [sp, #36]",
    "ldr r3, [sp, #44]",
    "adds r3, r3, #1",
    "str r3, [sp, #44]",
    "ldr r3, [sp, #0]",
    "subs r3, r3, #1",
    "str r3, [sp, #0]",
    "bne 2b",
);
