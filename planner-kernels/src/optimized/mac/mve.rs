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

use super::Requant;

/// Arguments of `planner_mve_gemm_s8`, read by offset from the assembly.
#[repr(C)]
struct Args {
    x: *const i8,      // 0
    x_stride: u32,     // 4
    rows: u32,         // 8
    w: *const i8,      // 12
    k: u32,            // 16
    blocks: u32,       // 20: output channels / 4
    bias: *const i32,  // 24
    mult: *const i32,  // 28
    shift: *const i32, // 32
    y: *mut i8,        // 36
    y_stride: u32,     // 40
    out_zero: i32,     // 44
    lo: i32,           // 48
    hi: i32,           // 52
}

unsafe extern "C" {
    fn planner_mve_gemm_s8(a: *const Args);
}

/// The first `4 · floor(cols / 4)` channels of [`super::gemm_s8`]'s contract; returns the
/// channels it computed (0 when it computed none: shifts outside `-31..=31`, sizes past
/// `u32`, or fewer than four channels). The caller has checked every length.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_s8(
    x: &[i8],
    x_stride: usize,
    rows: usize,
    w: &[i8],
    k: usize,
    q: &Requant<'_>,
    y: &mut [i8],
    y_stride: usize,
) -> usize {
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
        bias: q.bias.as_ptr(),
        mult: q.mult.as_ptr(),
        shift: q.shift.as_ptr(),
        y: y.as_mut_ptr(),
        y_stride: ys,
        out_zero: q.out_zero,
        lo: q.lo,
        hi: q.hi,
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
core::arch::global_asm!(
    // The features of `-C target-cpu=cortex-m55`, stated for the assembler: with LTO the
    // module's assembly is also parsed without the crate's target features.
    ".cpu cortex-m55",
    ".section .text.planner_mve_gemm_s8,\"ax\",%progbits",
    ".global planner_mve_gemm_s8",
    ".type planner_mve_gemm_s8,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_gemm_s8:",
    "push {{r4-r11, lr}}",
    "vpush {{d8-d15}}",
    "sub sp, sp, #64",
    "ldr r1, [r0, #20]",
    "str r1, [sp, #0]",
    "ldr r1, [r0, #4]",
    "str r1, [sp, #8]",
    "ldr r1, [r0, #40]",
    "str r1, [sp, #12]",
    "ldr r1, [r0, #44]",
    "str r1, [sp, #16]",
    "ldr r1, [r0, #24]",
    "str r1, [sp, #20]",
    "ldr r1, [r0, #28]",
    "str r1, [sp, #24]",
    "ldr r1, [r0, #32]",
    "str r1, [sp, #28]",
    "ldr r1, [r0, #8]",
    "str r1, [sp, #32]",
    "ldr r1, [r0, #0]",
    "str r1, [sp, #36]",
    "ldr r1, [r0, #36]",
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
    "add sp, sp, #64",
    "vpop {{d8-d15}}",
    "pop {{r4-r11, pc}}",
    ".size planner_mve_gemm_s8, . - planner_mve_gemm_s8",
);

/// Arguments of `planner_mve_dw_s8`, read by offset from the assembly. Strides in bytes.
#[repr(C)]
struct DwArgs {
    x: *const i8,      // 0: channel 0 of the first tap of output pixel 0
    n: u32,            // 4: output pixels
    fh: u32,           // 8
    fw: u32,           // 12
    tap_row: u32,      // 16
    tap_col: u32,      // 20
    x_step: u32,       // 24
    w: *const i8,      // 28: channel 0 of tap 0
    w_tap: u32,        // 32
    y: *mut i8,        // 36
    y_step: u32,       // 40
    blocks: u32,       // 44: channels / 8
    bias: *const i32,  // 48
    mult: *const i32,  // 52
    shift: *const i32, // 56
    out_zero: i32,     // 60
    lo: i32,           // 64
    hi: i32,           // 68
    wbuf: *mut i8,     // 72: fh · fw · 8 bytes, the block's weights tap after tap
}

unsafe extern "C" {
    fn planner_mve_dw_s8(a: *const DwArgs);
}

/// Most taps the weight buffer holds (a 9x9 window); larger windows take the portable loop.
const MAX_TAPS: usize = 81;

/// The first `8 · floor(ch / 8)` channels of [`super::depthwise_s8`]'s contract; returns the
/// channels it computed (0 when none: shifts outside `-31..=31`, a window of more than
/// [`MAX_TAPS`] taps, sizes past `u32`, fewer than eight channels). The caller has checked
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
    if ch == 0 || n == 0 || taps == 0 || taps > MAX_TAPS || !shifts_fit {
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
    let mut wbuf = [0u32; 2 * MAX_TAPS];
    let args = DwArgs {
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
        bias: q.bias.as_ptr(),
        mult: q.mult.as_ptr(),
        shift: q.shift.as_ptr(),
        out_zero: q.out_zero,
        lo: q.lo,
        hi: q.hi,
        wbuf: wbuf.as_mut_ptr().cast(),
    };
    // SAFETY: for each block of eight channels the assembly reads eight bytes at every tap
    // of every output pixel's window in `x` (the farthest ends at `x_len`, inside `x`),
    // eight bytes at every tap in `w` (inside, `(taps - 1) · w_tap + ch`), eight words of
    // `bias`, `mult` and `shift` (inside, `ch` each), writes eight bytes per output pixel
    // in `y` (inside, `(n - 1) · y_step + ch`) and `8 · taps` bytes of `wbuf` (at most
    // `8 · MAX_TAPS`). It follows the AAPCS (r4-r11, lr and d8-d15 saved and restored) and
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
core::arch::global_asm!(
    ".cpu cortex-m55",
    ".section .text.planner_mve_dw_s8,\"ax\",%progbits",
    ".global planner_mve_dw_s8",
    ".type planner_mve_dw_s8,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_dw_s8:",
    "push {{r4-r11, lr}}",
    "vpush {{d8-d15}}",
    "sub sp, sp, #176",
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
    "add sp, sp, #176",
    "vpop {{d8-d15}}",
    "pop {{r4-r11, pc}}",
    ".size planner_mve_dw_s8, . - planner_mve_dw_s8",
);

/// Arguments of `planner_mve_requant`, read by offset from the assembly.
#[repr(C)]
struct RequantArgs {
    v: *mut i32,   // 0
    n: u32,        // 4
    mult: i32,     // 8
    left: i32,     // 12: 0..=31
    right: i32,    // 16: minus the right shift, -31..=0
    negative: i32, // 20: -1 when the right shift is not 0
    zero: i32,     // 24
    lo: i32,       // 28
    hi: i32,       // 32
}

unsafe extern "C" {
    fn planner_mve_requant(a: *const RequantArgs);
}

/// [`super::requant`] four values per vector; false (nothing written) when `v` is longer
/// than `u32` counts.
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
        left: m.left as i32,
        right: -(m.right as i32),
        negative: -i32::from(m.right > 0),
        zero,
        lo,
        hi,
    };
    // SAFETY: the assembly reads and writes `n` int32 of `v` (`n > 0`, `v` exactly that
    // long and borrowed mutably, so nothing else touches it meanwhile; the tail-predicated
    // loop's lanes past `n` are off and touch no memory), and nothing else. It follows the
    // AAPCS: it saves and restores r4-r6 and d8-d9 (q4), and uses no stack beyond that.
    unsafe { planner_mve_requant(&args) };
    true
}

core::arch::global_asm!(
    // As above: the features of `-C target-cpu=cortex-m55`, for the assembler.
    ".cpu cortex-m55",
    ".section .text.planner_mve_requant,\"ax\",%progbits",
    ".global planner_mve_requant",
    ".type planner_mve_requant,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_requant:",
    "push {{r4-r6, lr}}",
    "vpush {{d8-d9}}",
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
    "ldr r0, [r0, #0]",
    "dlstp.32 lr, r1",
    "1:",
    "vldrw.u32 q0, [r0]",
    "vshl.s32 q0, r3",
    "vqrdmulh.s32 q0, q0, r2",
    // Half away from zero: negative values one less before a rounding shift that is one.
    "vshr.s32 q1, q0, #31",
    "vand q1, q1, q2",
    "vqadd.s32 q0, q0, q1",
    "vrshl.s32 q0, r4",
    "vqadd.s32 q0, q0, r5",
    "vmax.s32 q0, q0, q3",
    "vmin.s32 q0, q0, q4",
    "vstrw.32 q0, [r0], #16",
    "letp lr, 1b",
    "vpop {{d8-d9}}",
    "pop {{r4-r6, pc}}",
    ".size planner_mve_requant, . - planner_mve_requant",
);

/// Arguments of `planner_mve_requant_scatter`, read by offset from the assembly.
#[repr(C)]
struct ScatterArgs {
    v: *const i32,     // 0
    n: u32,            // 4
    mult: i32,         // 8
    left: i32,         // 12: 0..=31
    right: i32,        // 16: minus the right shift, -31..=0
    negative: i32,     // 20: -1 when the right shift is not 0
    zero: i32,         // 24
    lo: i32,           // 28
    hi: i32,           // 32
    add: i32,          // 36
    out: *mut i8,      // 40
    offsets: [u32; 4], // 44: 0, stride, 2 stride, 3 stride
    step: u32,         // 60: 4 stride
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
        v: v.as_ptr(),
        n,
        mult: m.mult,
        left: m.left as i32,
        right: -(m.right as i32),
        negative: -i32::from(m.right > 0),
        zero,
        lo,
        hi,
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

core::arch::global_asm!(
    // As above: the features of `-C target-cpu=cortex-m55`, for the assembler.
    ".cpu cortex-m55",
    ".section .text.planner_mve_requant_scatter,\"ax\",%progbits",
    ".global planner_mve_requant_scatter",
    ".type planner_mve_requant_scatter,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_requant_scatter:",
    "push {{r4-r8, lr}}",
    "vpush {{d8-d11}}",
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
    "ldr r6, [r0, #36]",
    "ldr r7, [r0, #40]",
    "add r12, r0, #44",
    "vldrw.u32 q5, [r12]",
    "ldr r8, [r0, #60]",
    "ldr r0, [r0, #0]",
    "dlstp.32 lr, r1",
    "1:",
    "vldrw.u32 q0, [r0], #16",
    "vshl.s32 q0, r3",
    "vqrdmulh.s32 q0, q0, r2",
    // Half away from zero: negative values one less before a rounding shift that is one.
    "vshr.s32 q1, q0, #31",
    "vand q1, q1, q2",
    "vqadd.s32 q0, q0, q1",
    "vrshl.s32 q0, r4",
    "vqadd.s32 q0, q0, r5",
    "vmax.s32 q0, q0, q3",
    "vmin.s32 q0, q0, q4",
    // The addition wraps; the store keeps the low byte.
    "vadd.i32 q0, q0, r6",
    "vstrb.32 q0, [r7, q5]",
    "add r7, r7, r8",
    "letp lr, 1b",
    "vpop {{d8-d11}}",
    "pop {{r4-r8, pc}}",
    ".size planner_mve_requant_scatter, . - planner_mve_requant_scatter",
);

/// Arguments of `planner_mve_dot_rows`, read by offset from the assembly.
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
pub(super) fn dot_rows(
    (a, a_stride): (&[i8], usize),
    (b, b_stride): (&[i8], usize),
    k: usize,
    z: i32,
    out: &mut [i32],
) -> bool {
    let int = |v: usize| u32::try_from(v).ok();
    let (Some(sa), Some(sb), Some(kk), Some(rows)) =
        (int(a_stride), int(b_stride), int(k), int(out.len()))
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
core::arch::global_asm!(
    // As above: the features of `-C target-cpu=cortex-m55`, for the assembler.
    ".cpu cortex-m55",
    ".section .text.planner_mve_dot_rows,\"ax\",%progbits",
    ".global planner_mve_dot_rows",
    ".type planner_mve_dot_rows,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_dot_rows:",
    "push {{r4-r11, lr}}",
    "sub sp, sp, #16",
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
    "add sp, sp, #16",
    "pop {{r4-r11, pc}}",
    ".size planner_mve_dot_rows, . - planner_mve_dot_rows",
);

/// Arguments of `planner_mve_dot_rows_x`, read by offset from the assembly.
#[repr(C)]
struct DotRowsXArgs {
    a: *const i8,  // 0
    a_stride: u32, // 4
    x: *const i8,  // 8
    k: u32,        // 12
    rows: u32,     // 16
    out: *mut i32, // 20
    z: i32,        // 24
}

unsafe extern "C" {
    fn planner_mve_dot_rows_x(a: *const DotRowsXArgs);
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
    let args = DotRowsXArgs {
        a: a.as_ptr(),
        a_stride: sa,
        x: x.as_ptr(),
        k,
        rows,
        out: out.as_mut_ptr(),
        z,
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
core::arch::global_asm!(
    // As above: the features of `-C target-cpu=cortex-m55`, for the assembler.
    ".cpu cortex-m55",
    ".section .text.planner_mve_dot_rows_x,\"ax\",%progbits",
    ".global planner_mve_dot_rows_x",
    ".type planner_mve_dot_rows_x,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_dot_rows_x:",
    "push {{r4-r11, lr}}",
    "sub sp, sp, #16",
    "ldr r1, [r0, #4]",
    "str r1, [sp, #0]",
    "ldr r1, [r0, #8]",
    "str r1, [sp, #4]",
    "ldr r1, [r0, #16]",
    "str r1, [sp, #8]",
    "ldr r9, [r0, #0]",
    "ldr r12, [r0, #12]",
    "ldr r7, [r0, #24]",
    "ldr r11, [r0, #20]",
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
    "add sp, sp, #16",
    "pop {{r4-r11, pc}}",
    ".size planner_mve_dot_rows_x, . - planner_mve_dot_rows_x",
);
