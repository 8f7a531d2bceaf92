//! The Helium (MVE) parts of the fast LSTM step, four units per vector in tail-predicated
//! loops (`DLSTP.32`): `planner_mve_lstm_gate` requantises one gate's values over the
//! step's units, `planner_mve_lstm_units` computes the units' cell and hidden values from
//! them.
//!
//! For each unit the input product plus bias and the recurrent product go through TFLite's
//! `MultiplyByQuantizedMultiplier` as vectors (left shift `VSHL`, rounding doubling high
//! multiply `VQRDMULH`, which rounds exactly as gemmlowp's and saturates the one product
//! that overflows; the right shift rounding half away from zero as `VRSHL` after lowering
//! negative values by one where the shift is not zero: `VSHR #31`, `VAND`, `VQADD`), each is
//! clamped to int16 (`VQMOVNB`), the two are added with int16 saturation (`VQADD.S16`) and
//! widened back (`VMOVLB`): [`super::scalar_gate`] for four units at once.
//!
//! The units' part is [`super::Tail::unit`] for four units at once: TFLM's int16 logistic
//! and tanh read the sigmoid table with halfword gathers (`VLDRH.U32 [table, index, UXTW
//! #1]`) and interpolate, the sign's two cases computed both and selected by the sign mask,
//! tanh's saturation past the table as the index held at 254 with a fraction of 256 (which
//! gives the last entry); the cell update and the hidden value requantise as above, the
//! hidden value saturating to int8 through two `VQMOVNB`.

use super::Mbqm;
use crate::optimized::mac::MbqmArgs;

/// Arguments of `planner_mve_lstm_gate`, read by offset from the assembly.
#[repr(C)]
struct Args {
    acc: *mut i32,       // 0: the input products plus bias, overwritten by the gate values
    rec: *const i32,     // 4: the recurrent products
    n: u32,              // 8: units
    input: MbqmArgs,     // 12..28
    recurrent: MbqmArgs, // 28..44
}

unsafe extern "C" {
    fn planner_mve_lstm_gate(a: *const Args);
}

/// `acc[j] = Tail::gate(acc[j], rec[j])` with `input` and `recurrent` the gate's two
/// requantisations, for every `j` below the shorter length.
pub(super) fn gate(acc: &mut [i32], rec: &[i32], [input, recurrent]: [&Mbqm; 2]) {
    let n = acc.len().min(rec.len());
    let Ok(count) = u32::try_from(n) else {
        // (Unreachable on a 32-bit core.)
        for (v, &r) in acc.iter_mut().zip(rec) {
            *v = super::gate_value([input, recurrent], *v, r);
        }
        return;
    };
    if n == 0 {
        return;
    }
    let args = Args {
        acc: acc.as_mut_ptr(),
        rec: rec.as_ptr(),
        n: count,
        input: MbqmArgs::new(input),
        recurrent: MbqmArgs::new(recurrent),
    };
    // SAFETY: the assembly reads `n` int32 of `rec` and reads and writes `n` int32 of `acc`
    // (both at least `n` long, `n > 0`; `acc` borrowed mutably, `rec` shared, so nothing
    // else touches them meanwhile), and nothing else. It follows the AAPCS: it saves and
    // restores r4-r8 and d8-d9 (q4), and uses no stack beyond that.
    unsafe { planner_mve_lstm_gate(&args) };
}

mve_asm!(
    "planner_mve_lstm_gate",
    push ["r4-r8"] vpush "d8-d9";
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
);

/// Arguments of `planner_mve_lstm_units`, read by offset from the assembly. A
/// requantisation is `(multiplier, left shift, minus the right shift, 1 when the right
/// shift is not 0)`.
#[repr(C)]
struct Units {
    gates: [*const i32; 4], // 0: the gate values of units 0.. (input, forget, cell, output)
    c: *mut i16,            // 16: the cell state
    y: *mut i8,             // 20: the new hidden state
    n: u32,                 // 24: units
    table: *const u16,      // 28: the sigmoid table (256 entries)
    forget: [i32; 4],       // 32
    input: [i32; 4],        // 48
    hidden: [i32; 4],       // 64
    z_h: i32,               // 80
    clip: [i32; 2],         // 84: the cell clip's bounds (int16's without one)
    cell_scaling: [i32; 3], // 92: tanh's input multiplier, minus its shift, its rounding
}

/// A requantisation as the assembly reads it.
fn packed(m: &Mbqm) -> [i32; 4] {
    [
        m.mult,
        m.left as i32,
        -(m.right as i32),
        i32::from(m.right > 0),
    ]
}

/// [`super::Tail::unit`] for every unit: `values` holds the step's four rows of gate
/// values (`c.len()` each), `c` the cell state, `y` the new hidden state.
pub(super) fn units(t: &super::Tail, values: &[i32], c: &mut [i16], y: &mut [i8]) {
    let n = c.len().min(y.len());
    let (m, shift) = t.cell_scaling;
    let Ok(count) = u32::try_from(n) else {
        return super::scalar_units(t, values, c, y);
    };
    if n == 0 || values.len() < 4 * n || shift > 31 {
        return super::scalar_units(t, values, c, y);
    }
    let table: &'static [u16; 256] = &crate::reference::activation::SIGMOID_Q16;
    let (lo, hi) = match t.clip {
        Some(clip) => (-clip, clip),
        None => (-32768, 32767),
    };
    let args = Units {
        gates: [0, 1, 2, 3].map(|g| values[g * n..].as_ptr()),
        c: c.as_mut_ptr(),
        y: y.as_mut_ptr(),
        n: count,
        table: table.as_ptr(),
        forget: packed(&t.forget),
        input: packed(&t.input),
        hidden: packed(&t.hidden),
        z_h: t.z_h,
        clip: [lo, hi],
        cell_scaling: [
            m,
            -(shift as i32),
            if shift > 0 { 1 << (shift - 1) } else { 0 },
        ],
    };
    // SAFETY: the assembly reads `n` int32 of each of the four rows (inside `values`:
    // `values.len() >= 4 · n`), reads and writes `n` int16 of `c`, writes `n` bytes of
    // `y` (both at least `n` long and borrowed mutably, `values` shared), and gathers
    // halfwords of the 256-entry table at indices 0..=255 only (clamped to 254 before the
    // second entry's read). It follows the AAPCS: it saves and restores r4-r11 and d8-d15
    // and uses no stack beyond that.
    unsafe { planner_mve_lstm_units(&args) };
}

unsafe extern "C" {
    fn planner_mve_lstm_units(a: *const Units);
}

// q0-q4 are an activation's temporaries; q5-q7 hold values across them. r0 the arguments,
// r1-r4 the gate rows, r5 the cell state, r6 the hidden state, r7 the table, r8 the table
// plus one entry, r9-r12 scalars loaded where used.
mve_asm!(
    "planner_mve_lstm_units",
    push ["r4-r11"] vpush "d8-d15";
    // LOGISTIC out, in: TFLM's int16 logistic of `in` at scale 2^-12 (the table read at
    // `3 · in`, whose index is at most 192: no saturation), into `out`; q0-q4 clobbered.
    ".macro planner_logistic out, in",
    "vshl.i32 q1, \\in, #1",
    "vadd.i32 q0, \\in, q1",
    "vabs.s32 q1, q0",
    "vshr.u32 q2, q1, #9",
    "vldrh.u32 q3, [r7, q2, uxtw #1]",
    "vldrh.u32 q4, [r8, q2, uxtw #1]",
    "vsub.i32 q4, q4, q3",
    "vshl.i32 q2, q2, #9",
    "vsub.i32 q2, q1, q2",
    "vmul.i32 q4, q4, q2",
    "vshl.i32 q3, q3, #9",
    "vadd.i32 q3, q3, q4",
    // Non-negative: r + 2^9; negative: 2^25 - r + 2^9 - 1.
    "mov r9, #512",
    "vadd.i32 q4, q3, r9",
    "vneg.s32 q3, q3",
    "mov r9, #0x2000000",
    "add r9, r9, #511",
    "vadd.i32 q3, q3, r9",
    "vshr.s32 q0, q0, #31",
    "vsub.i32 q3, q3, q4",
    "vand q3, q3, q0",
    "vadd.i32 q3, q3, q4",
    "vshr.u32 \\out, q3, #10",
    ".endm",
    // TANH out, in: TFLM's int16 tanh of `in` already on the table's scale (`d`), into
    // `out`; past the table the index stays at 254 with the fraction 256, which reads the
    // last entry; q0-q4 clobbered.
    ".macro planner_tanh out, in",
    "vmov q0, \\in",
    "vabs.s32 q1, q0",
    "vshr.u32 q2, q1, #8",
    "mov r9, #254",
    "vdup.32 q3, r9",
    "vmin.u32 q2, q2, q3",
    "vldrh.u32 q3, [r7, q2, uxtw #1]",
    "vldrh.u32 q4, [r8, q2, uxtw #1]",
    "vsub.i32 q4, q4, q3",
    "vshl.i32 q2, q2, #8",
    "vsub.i32 q1, q1, q2",
    "mov r9, #256",
    "vdup.32 q2, r9",
    "vmin.u32 q1, q1, q2",
    "vmul.i32 q4, q4, q1",
    "vshl.i32 q3, q3, #8",
    "vadd.i32 q3, q3, q4",
    // Non-negative: r - 2^23 + 2^7; negative: 2^23 + 2^7 - 1 - r.
    "mov r9, #0x800000",
    "sub r9, r9, #128",
    "vsub.i32 q4, q3, r9",
    "vneg.s32 q3, q3",
    "mov r9, #0x800000",
    "add r9, r9, #127",
    "vadd.i32 q3, q3, r9",
    "vshr.s32 q0, q0, #31",
    "vsub.i32 q3, q3, q4",
    "vand q3, q3, q0",
    "vadd.i32 q3, q3, q4",
    "vshr.s32 \\out, q3, #8",
    ".endm",
    // MBQM q, off: multiply_by_quantized_multiplier of `q` by the requantisation at `off`
    // in the arguments; q0 clobbered.
    ".macro planner_mbqm q, off",
    "ldr r9, [r0, #\\off]",
    "ldr r10, [r0, #(\\off + 4)]",
    "ldr r11, [r0, #(\\off + 8)]",
    "ldr r12, [r0, #(\\off + 12)]",
    "vshl.s32 \\q, r10",
    "vqrdmulh.s32 \\q, \\q, r9",
    "vshr.s32 q0, \\q, #31",
    "vmul.i32 q0, q0, r12",
    "vqadd.s32 \\q, \\q, q0",
    "vrshl.s32 \\q, r11",
    ".endm",
    "ldrd r1, r2, [r0, #0]",
    "ldrd r3, r4, [r0, #8]",
    "ldrd r5, r6, [r0, #16]",
    "ldr r12, [r0, #24]",
    "ldr r7, [r0, #28]",
    "add r8, r7, #2",
    "dlstp.32 lr, r12",
    "2:",
    // kept = clamp16(mbqm(f · c)).
    "vldrw.u32 q5, [r2], #16",
    "planner_logistic q7, q5",
    "vldrh.s32 q6, [r5]",
    "vmul.i32 q7, q7, q6",
    "planner_mbqm q7, 32",
    "vqmovnb.s32 q7, q7",
    "vmovlb.s16 q7, q7",
    // added = clamp16(mbqm(i · g)).
    "vldrw.u32 q5, [r1], #16",
    "planner_logistic q6, q5",
    "vldrw.u32 q5, [r3], #16",
    "vshl.i32 q1, q5, #1",
    "vadd.i32 q5, q5, q1",
    "planner_tanh q5, q5",
    "vmul.i32 q6, q6, q5",
    "planner_mbqm q6, 48",
    "vqmovnb.s32 q6, q6",
    "vmovlb.s16 q6, q6",
    // c = clip(clamp16(kept + added)).
    "vadd.i32 q7, q7, q6",
    "vqmovnb.s32 q7, q7",
    "vmovlb.s16 q7, q7",
    "ldr r9, [r0, #84]",
    "vdup.32 q6, r9",
    "vmax.s32 q7, q7, q6",
    "ldr r9, [r0, #88]",
    "vdup.32 q6, r9",
    "vmin.s32 q7, q7, q6",
    "vstrh.32 q7, [r5], #8",
    // y = clamp8(mbqm(tanh(c) · o) + z_h).
    "vldrw.u32 q5, [r4], #16",
    "planner_logistic q6, q5",
    "ldr r9, [r0, #92]",
    "ldr r10, [r0, #96]",
    "ldr r11, [r0, #100]",
    "vmul.i32 q7, q7, r9",
    "vadd.i32 q7, q7, r11",
    "vshl.s32 q7, r10",
    "planner_tanh q7, q7",
    "vmul.i32 q7, q7, q6",
    "planner_mbqm q7, 64",
    "ldr r9, [r0, #80]",
    "vqadd.s32 q7, q7, r9",
    "vqmovnb.s32 q7, q7",
    "vqmovnb.s16 q7, q7",
    "vstrb.32 q7, [r6], #4",
    "letp lr, 2b",
    ".purgem planner_logistic",
    ".purgem planner_tanh",
    ".purgem planner_mbqm",
);
