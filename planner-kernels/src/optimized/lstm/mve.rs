//! The Helium (MVE) requantisation of one gate's values over a step's units:
//! `planner_mve_lstm_gate`, four units per vector in a tail-predicated loop (`DLSTP.32`).
//!
//! For each unit the input product plus bias and the recurrent product go through TFLite's
//! `MultiplyByQuantizedMultiplier` as vectors (left shift `VSHL`, rounding doubling high
//! multiply `VQRDMULH`, which rounds exactly as gemmlowp's and saturates the one product
//! that overflows; the right shift rounding half away from zero as `VRSHL` after lowering
//! negative values by one where the shift is not zero: `VSHR #31`, `VAND`, `VQADD`), each is
//! clamped to int16 (`VQMOVNB`), the two are added with int16 saturation (`VQADD.S16`) and
//! widened back (`VMOVLB`): [`super::Tail::gate`] for four units at once.

use super::Mbqm;

/// Arguments of `planner_mve_lstm_gate`, read by offset from the assembly.
#[repr(C)]
struct Args {
    acc: *mut i32,     // 0: the input products plus bias, overwritten by the gate values
    rec: *const i32,   // 4: the recurrent products
    n: u32,            // 8: units
    mult_in: i32,      // 12
    left_in: i32,      // 16: 0..=31
    right_in: i32,     // 20: minus the right shift, -31..=0
    negative_in: i32,  // 24: -1 when the right shift is not 0
    mult_rec: i32,     // 28
    left_rec: i32,     // 32
    right_rec: i32,    // 36
    negative_rec: i32, // 40
}

unsafe extern "C" {
    fn planner_mve_lstm_gate(a: *const Args);
}

/// `acc[j] = Tail::gate(acc[j], rec[j])` with `input` and `recurrent` the gate's two
/// requantisations, for every `j` below the shorter length.
pub(super) fn gate(acc: &mut [i32], rec: &[i32], [input, recurrent]: [&Mbqm; 2]) {
    let n = acc.len().min(rec.len());
    let Ok(count) = u32::try_from(n) else {
        return super::scalar_gate(acc, rec, [input, recurrent]);
    };
    if n == 0 {
        return;
    }
    let args = Args {
        acc: acc.as_mut_ptr(),
        rec: rec.as_ptr(),
        n: count,
        mult_in: input.mult,
        left_in: input.left as i32,
        right_in: -(input.right as i32),
        negative_in: -i32::from(input.right > 0),
        mult_rec: recurrent.mult,
        left_rec: recurrent.left as i32,
        right_rec: -(recurrent.right as i32),
        negative_rec: -i32::from(recurrent.right > 0),
    };
    // SAFETY: the assembly reads `n` int32 of `rec` and reads and writes `n` int32 of `acc`
    // (both at least `n` long, `n > 0`; `acc` borrowed mutably, `rec` shared, so nothing
    // else touches them meanwhile), and nothing else. It follows the AAPCS: it saves and
    // restores r4-r8 and d8-d9 (q4), and uses no stack beyond that.
    unsafe { planner_mve_lstm_gate(&args) };
}

core::arch::global_asm!(
    // As in `mac::mve`: the features of `-C target-cpu=cortex-m55`, for the assembler.
    ".cpu cortex-m55",
    ".section .text.planner_mve_lstm_gate,\"ax\",%progbits",
    ".global planner_mve_lstm_gate",
    ".type planner_mve_lstm_gate,%function",
    ".thumb_func",
    ".p2align 2",
    "planner_mve_lstm_gate:",
    "push {{r4-r8, lr}}",
    "vpush {{d8-d9}}",
    "ldr r1, [r0, #4]",
    "ldr r2, [r0, #8]",
    "ldr r3, [r0, #12]",
    "ldr r4, [r0, #16]",
    "ldr r5, [r0, #20]",
    "ldr r12, [r0, #24]",
    "vdup.32 q3, r12",
    "ldr r6, [r0, #28]",
    "ldr r7, [r0, #32]",
    "ldr r8, [r0, #36]",
    "ldr r12, [r0, #40]",
    "vdup.32 q4, r12",
    "ldr r0, [r0, #0]",
    "dlstp.32 lr, r2",
    "1:",
    "vldrw.u32 q0, [r0]",
    "vldrw.u32 q1, [r1], #16",
    "vshl.s32 q0, r4",
    "vshl.s32 q1, r7",
    "vqrdmulh.s32 q0, q0, r3",
    "vqrdmulh.s32 q1, q1, r6",
    "vshr.s32 q2, q0, #31",
    "vand q2, q2, q3",
    "vqadd.s32 q0, q0, q2",
    "vrshl.s32 q0, r5",
    "vshr.s32 q2, q1, #31",
    "vand q2, q2, q4",
    "vqadd.s32 q1, q1, q2",
    "vrshl.s32 q1, r8",
    "vqmovnb.s32 q0, q0",
    "vqmovnb.s32 q1, q1",
    "vqadd.s16 q0, q0, q1",
    "vmovlb.s16 q0, q0",
    "vstrw.32 q0, [r0], #16",
    "letp lr, 1b",
    "vpop {{d8-d9}}",
    "pop {{r4-r8, pc}}",
    ".size planner_mve_lstm_gate, . - planner_mve_lstm_gate",
);
