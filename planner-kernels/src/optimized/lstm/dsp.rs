//! The DSP extension's part of the fast LSTM step (Cortex-M4, M7, M33):
//! `planner_dsp_lstm_gate` computes [`super::scalar_gate`] for a run of units in one pass,
//! each product plus its sums requantised in [`Mbqm::short`]'s six instructions (`ADDS` of
//! the value to itself, whose overflow flag ends the run; `SMMULR`; the rounding right
//! shift as two additions and `ASR`), clamped to int16 (`SSAT`), the two added and clamped
//! again. A unit whose value does not double within `i32` goes through [`Mbqm::apply`]
//! here, and the run goes on after it.

use super::{Mbqm, gate_value};

/// Arguments of `planner_dsp_lstm_gate`, read by offset from the assembly.
#[repr(C)]
struct Args {
    acc: *mut i32,       // 0: the input products, overwritten by the gate values
    si: *const i32,      // 4: their sums (bias and zero-point terms)
    rec: *const i32,     // 8: the recurrent products
    sr: *const i32,      // 12: their sums
    n: u32,              // 16: units (> 0)
    input: [i32; 3],     // 20: multiplier, 2^(right − 1), right ([`Mbqm::short_form`])
    recurrent: [i32; 3], // 32
}

unsafe extern "C" {
    /// Returns the units it wrote: all `n`, or fewer when the next one's input or
    /// recurrent value does not double within `i32` (that unit is left as it was). Saves
    /// and restores r4-r11 and returns through the saved lr; 4 bytes of stack beyond that.
    /// `SSAT` may set the sticky Q flag, which no Rust code reads.
    fn planner_dsp_lstm_gate(a: *const Args) -> u32;
}

/// `acc[j] = clamp16(clamp16(a(acc[j] + si[j])) + clamp16(b(rec[j] + sr[j])))` for every
/// unit `j` of the shortest slice, wrapping sums; false (nothing written) when either
/// multiplier has no short form.
pub(super) fn gate(
    (acc, si): (&mut [i32], &[i32]),
    (rec, sr): (&[i32], &[i32]),
    [a, b]: [&Mbqm; 2],
) -> bool {
    let (Some(input), Some(recurrent)) = (a.short_form(), b.short_form()) else {
        return false;
    };
    let n = acc.len().min(si.len()).min(rec.len()).min(sr.len());
    // Every run's count is at most `n`.
    if u32::try_from(n).is_err() {
        return false;
    }
    let mut j = 0;
    while j < n {
        let count = (n - j) as u32;
        let args = Args {
            acc: acc[j..].as_mut_ptr(),
            si: si[j..].as_ptr(),
            rec: rec[j..].as_ptr(),
            sr: sr[j..].as_ptr(),
            n: count,
            input,
            recurrent,
        };
        // SAFETY: the assembly reads and writes at most `count` int32 of `acc[j..]` and
        // reads at most `count` of `si[j..]`, `rec[j..]` and `sr[j..]` (each at least
        // `count = n − j > 0` long; `acc` borrowed mutably, the others shared, so nothing
        // else touches them meanwhile), and nothing else but its own stack. It follows the
        // AAPCS, saving and restoring what it uses.
        let done = unsafe { planner_dsp_lstm_gate(&args) } as usize;
        j += done.min(n - j);
        if j < n {
            let (x, r) = (acc[j].wrapping_add(si[j]), rec[j].wrapping_add(sr[j]));
            acc[j] = gate_value([a, b], x, r);
            j += 1;
        }
    }
    true
}

// r0-r3 the four rows, r4 the end of `acc`, r5-r7 and r8-r10 the two requantisations,
// r11, r12 and lr temporaries; the start of `acc` on the stack, for the count.
core::arch::global_asm!(
    // As in `mac::dsp`: an ARMv8-M core with the DSP extension, for the assembler; every
    // instruction here is ARMv7E-M's too (the Cortex-M4's).
    ".cpu cortex-m33",
    asm_function!("planner_dsp_lstm_gate"),
    "push {{r4-r11, lr}}",
    "ldrd r1, r2, [r0, #4]",
    "ldrd r3, r4, [r0, #12]",
    "ldrd r5, r6, [r0, #20]",
    "ldr r7, [r0, #28]",
    "ldrd r8, r9, [r0, #32]",
    "ldr r10, [r0, #40]",
    "ldr r0, [r0, #0]",
    "push {{r0}}",
    "add r4, r0, r4, lsl #2",
    "1:",
    // The input value, requantised and clamped.
    "ldr r11, [r0]",
    "ldr r12, [r1], #4",
    "add r11, r11, r12",
    "adds r11, r11, r11",
    "bvs 9f",
    "smmulr r12, r11, r5",
    "add r11, r12, r6",
    "add r11, r11, r12, asr #31",
    "asr r11, r11, r7",
    "ssat r11, #16, r11",
    // The recurrent value the same.
    "ldr r12, [r2], #4",
    "ldr lr, [r3], #4",
    "add r12, r12, lr",
    "adds r12, r12, r12",
    "bvs 9f",
    "smmulr lr, r12, r8",
    "add r12, lr, r9",
    "add r12, r12, lr, asr #31",
    "asr r12, r12, r10",
    "ssat r12, #16, r12",
    // Their sum, clamped.
    "add r11, r11, r12",
    "ssat r11, #16, r11",
    "str r11, [r0], #4",
    "cmp r0, r4",
    "bne 1b",
    "9:",
    "pop {{r1}}",
    "sub r0, r0, r1",
    "lsr r0, r0, #2",
    "pop {{r4-r11, pc}}",
    ".size planner_dsp_lstm_gate, . - planner_dsp_lstm_gate",
);
