//! [`super::dot_rows`] with the DSP extension (Cortex-M4, M7, M33): each word of four int8
//! elements is widened into two halfword pairs (`SXTB16`, and `SXTB16` of the word rotated
//! by 8: elements 0 and 2, 1 and 3), the zero point is taken off `b`'s pairs (`SSUB16`: an
//! int8 value minus an int8 zero point fits a halfword), and `SMLAD` adds two products per
//! instruction (its 32-bit sum wraps as `wrapping_add` does; it only sets the sticky Q
//! flag). A `b` shared by every row is widened once per call, on the stack; the `k % 4` last
//! elements go one by one. Word-aligned rows of 8, 16 or 32 elements back to back in `a`
//! and `b` (an SVDF's time weights and state) are assembly's, unrolled, two words of each
//! per `LDRD` ([`time_rows`]).

use crate::optimized::arm_dsp::{smlad, ssub16, sxtb16, sxtb16_ror8, word};

/// `out[r] = Σ_{i<k} a[r·sa + i] · (b[r·sb + i] − z)` for every `r < out.len()`, wrapping;
/// false (nothing written) when `z` is not an int8 value. The caller has checked that every
/// row fits its slice.
pub(super) fn dot_rows(d: &super::DotRows<'_>, out: &mut [i32]) -> bool {
    let super::DotRows { a, sa, b, sb, k, z } = *d;
    if !(-128..=127).contains(&z) {
        return false;
    }
    // `z` in both halfwords.
    let zz = (z as u32 & 0xffff) * 0x1_0001;
    if sb == 0 {
        // Buffers no larger than the row needs: safe Rust zeroes them on every call.
        return match k / 4 {
            0..=4 => shared::<4>((a, sa), b, k, (z, zz), out),
            5..=8 => shared::<8>((a, sa), b, k, (z, zz), out),
            9..=16 => shared::<16>((a, sa), b, k, (z, zz), out),
            17..=32 => shared::<32>((a, sa), b, k, (z, zz), out),
            33..=128 => shared::<128>((a, sa), b, k, (z, zz), out),
            129..=256 => shared::<256>((a, sa), b, k, (z, zz), out),
            _ => false,
        };
    }
    if sa == k && sb == k {
        // Rows back to back (an SVDF's time weights and state): cut once, no per-row
        // slicing; short rows of a multiple of four with their loop unrolled.
        let n = out.len() * k;
        let (a, b) = (&a[..n], &b[..n]);
        if time_rows((a, b), k, zz, out) {
            return true;
        }
        match k {
            8 => back_to_back::<2>(a, b, zz, out),
            16 => back_to_back::<4>(a, b, zz, out),
            32 => back_to_back::<8>(a, b, zz, out),
            _ => {
                let rows = a.chunks_exact(k).zip(b.chunks_exact(k));
                for (o, (ar, br)) in out.iter_mut().zip(rows) {
                    *o = row(ar, br, (z, zz));
                }
            }
        }
        return true;
    }
    for (r, o) in out.iter_mut().enumerate() {
        *o = row(&a[r * sa..r * sa + k], &b[r * sb..r * sb + k], (z, zz));
    }
    true
}

/// `Σ a[i] · (b[i] − z)` over two rows of one length, wrapping.
#[inline(always)]
fn row(a: &[i8], b: &[i8], (z, zz): (i32, u32)) -> i32 {
    let ((ag, a_tail), (bg, b_tail)) = (a.as_chunks::<4>(), b.as_chunks::<4>());
    let mut acc = 0i32;
    for (wa, wb) in ag.iter().zip(bg) {
        let (wa, wb) = (word(wa), word(wb));
        acc = smlad(sxtb16(wa), ssub16(sxtb16(wb), zz), acc);
        acc = smlad(sxtb16_ror8(wa), ssub16(sxtb16_ror8(wb), zz), acc);
    }
    tail(acc, a_tail, b_tail, z)
}

/// [`dot_rows`] of rows of `4 · G` elements back to back in `a` and `b` (`zz` the zero
/// point in both halfwords), each row's loop unrolled.
#[inline(always)]
fn back_to_back<const G: usize>(a: &[i8], b: &[i8], zz: u32, out: &mut [i32]) {
    let rows = a.as_chunks::<4>().0.chunks_exact(G);
    let rows = rows.zip(b.as_chunks::<4>().0.chunks_exact(G));
    for (o, (ar, br)) in out.iter_mut().zip(rows) {
        let mut acc = 0i32;
        for (wa, wb) in ar.iter().zip(br) {
            let (wa, wb) = (word(wa), word(wb));
            acc = smlad(sxtb16(wa), ssub16(sxtb16(wb), zz), acc);
            acc = smlad(sxtb16_ror8(wa), ssub16(sxtb16_ror8(wb), zz), acc);
        }
        *o = acc;
    }
}

/// [`dot_rows`] with one `b` for every row, its `k / 4 <= G` groups widened once: four
/// rows per pass of `planner_dsp_dot4` ([`dot4`]), the rest two rows per pass.
fn shared<const G: usize>(
    (a, sa): (&[i8], usize),
    b: &[i8],
    k: usize,
    (z, zz): (i32, u32),
    out: &mut [i32],
) -> bool {
    let (bg, b_tail) = b[..k].as_chunks::<4>();
    let mut wide = [[0u32; 2]; G];
    for (p, g) in wide.iter_mut().zip(bg) {
        let w = word(g);
        *p = [ssub16(sxtb16(w), zz), ssub16(sxtb16_ror8(w), zz)];
    }
    let wide = &wide[..bg.len()];
    let row = |r: usize| a[r * sa..r * sa + k].as_chunks::<4>();
    let done = dot4((a, sa), wide, out);
    if !b_tail.is_empty() {
        for (r, o) in out[..done].iter_mut().enumerate() {
            *o = tail(*o, row(r).1, b_tail, z);
        }
    }
    let row = |r: usize| row(done + r);
    let out = &mut out[done..];
    let last = out.len().saturating_sub(1);
    let mut pairs = out.chunks_exact_mut(2);
    for (p, o) in (&mut pairs).enumerate() {
        let ((g0, t0), (g1, t1)) = (row(2 * p), row(2 * p + 1));
        let (mut a0, mut a1) = (0i32, 0i32);
        for ((&[even, odd], w0), w1) in wide.iter().zip(g0).zip(g1) {
            let (w0, w1) = (word(w0), word(w1));
            a0 = smlad(sxtb16(w0), even, a0);
            a0 = smlad(sxtb16_ror8(w0), odd, a0);
            a1 = smlad(sxtb16(w1), even, a1);
            a1 = smlad(sxtb16_ror8(w1), odd, a1);
        }
        o[0] = tail(a0, t0, b_tail, z);
        o[1] = tail(a1, t1, b_tail, z);
    }
    if let [o] = pairs.into_remainder() {
        let (g, t) = row(last);
        let mut acc = 0i32;
        for (&[even, odd], w) in wide.iter().zip(g) {
            let w = word(w);
            acc = smlad(sxtb16(w), even, acc);
            acc = smlad(sxtb16_ror8(w), odd, acc);
        }
        *o = tail(acc, t, b_tail, z);
    }
    true
}

/// `acc` plus the products of the last (fewer than four) elements.
#[inline(always)]
fn tail(acc: i32, a: &[i8], b: &[i8], z: i32) -> i32 {
    a.iter().zip(b).fold(acc, |s, (&a, &b)| {
        s.wrapping_add(i32::from(a).wrapping_mul(i32::from(b) - z))
    })
}

/// Arguments of `planner_dsp_dot4`, read by offset from the assembly.
#[repr(C)]
struct Dot4Args {
    a: *const i8,          // 0: row 0
    stride: u32,           // 4: bytes from one row to the next
    groups: u32,           // 8: words of a row (> 0)
    wide: *const [u32; 2], // 12: `b`'s halfword pairs, even and odd elements per word
    out: *mut i32,         // 16
    blocks: u32,           // 20: blocks of four rows (> 0)
}

unsafe extern "C" {
    /// [`dot4`]'s routine: saves and restores r4-r11 and returns through the saved lr; 20
    /// bytes of stack beyond that. `SMLAD` may set the sticky Q flag, which no Rust code
    /// reads.
    fn planner_dsp_dot4(args: *const Dot4Args);
}

/// `out[r] = Σ_{g < wide.len()} Σ_{j < 4} a[r·sa + 4g + j] · b_j` (`wide[g]` holding the
/// `b_j` as `[b_0 | b_2, b_1 | b_3]` halfword pairs, the words `shared` widens), wrapping,
/// for the first `4 · ⌊out.len() / 4⌋` rows: four rows per pass of `planner_dsp_dot4`,
/// each word of `b` loaded once for the four (LLVM's loop of four rows spilled). Returns
/// the rows written (0 when there are fewer than four, `wide` is empty or a size does not
/// fit `u32`). The caller has checked that every row's `4 · wide.len()` elements are in `a`.
pub(crate) fn dot4((a, sa): (&[i8], usize), wide: &[[u32; 2]], out: &mut [i32]) -> usize {
    let rows = out.len() / 4 * 4;
    let (Ok(stride), Ok(groups), Ok(blocks)) = (
        u32::try_from(sa),
        u32::try_from(wide.len()),
        u32::try_from(rows / 4),
    ) else {
        return 0;
    };
    // The assembly forms `3 · sa` and steps `4 · sa` per block.
    if blocks == 0 || groups == 0 || stride.checked_mul(4).is_none() {
        return 0;
    }
    let fits = (rows - 1)
        .checked_mul(sa)
        .and_then(|v| v.checked_add(4 * wide.len()))
        .is_some_and(|need| need <= a.len());
    if !fits {
        return 0;
    }
    let args = Dot4Args {
        a: a.as_ptr(),
        stride,
        groups,
        wide: wide.as_ptr(),
        out: out.as_mut_ptr(),
        blocks,
    };
    // SAFETY: the assembly reads `4 · groups` bytes of each of the `rows` rows at
    // `r · sa` in `a` (checked above to lie inside `a`; plain `LDR`s, which the M-profile
    // cores with the DSP extension allow unaligned), the `groups` pairs of `wide` (`LDRD`:
    // `[u32; 2]` is word-aligned), and writes `out[..rows]` (`STM` of four words: `out` is
    // `i32`, word-aligned, borrowed mutably, so nothing else touches it meanwhile), and
    // nothing else; it follows the AAPCS, saving and restoring what it uses.
    unsafe { planner_dsp_dot4(&args) };
    rows
}

/// One word of each of the four rows (at r0, r0 + r1, r0 + r2, r0 + r3) against that
/// word's pairs of `b` (loaded from r4 into r5: elements 0 and 2, r6: 1 and 3), into the
/// sums r7-r10; r0 and r4 step on.
macro_rules! dot4_word {
    () => {
        concat!(
            "ldrd r5, r6, [r4], #8\n",
            "ldr r11, [r0]\n",
            "sxtb16 r12, r11\n",
            "smlad r7, r12, r5, r7\n",
            "sxtb16 r12, r11, ror #8\n",
            "smlad r7, r12, r6, r7\n",
            "ldr r11, [r0, r1]\n",
            "sxtb16 r12, r11\n",
            "smlad r8, r12, r5, r8\n",
            "sxtb16 r12, r11, ror #8\n",
            "smlad r8, r12, r6, r8\n",
            "ldr r11, [r0, r2]\n",
            "sxtb16 r12, r11\n",
            "smlad r9, r12, r5, r9\n",
            "sxtb16 r12, r11, ror #8\n",
            "smlad r9, r12, r6, r9\n",
            "ldr r11, [r0, r3]\n",
            "sxtb16 r12, r11\n",
            "smlad r10, r12, r5, r10\n",
            "sxtb16 r12, r11, ror #8\n",
            "smlad r10, r12, r6, r10\n",
            "add r0, r0, #4\n",
        )
    };
}

core::arch::global_asm!(
    // As in `dsp`: an ARMv8-M core with the DSP extension, for the assembler; every
    // instruction here is ARMv7E-M's too (the Cortex-M4's).
    ".cpu cortex-m33",
    asm_function!("planner_dsp_dot4"),
    "push {{r4-r11, lr}}",
    // r1-r3: one, two and three rows on; the block's out, count, row 0, words and `b` on
    // the stack at 0, 4, 8, 12 and 16.
    "ldr r1, [r0, #4]",
    "add r2, r1, r1",
    "add r3, r2, r1",
    "ldr r4, [r0, #16]",
    "ldr r5, [r0, #20]",
    "ldr r6, [r0, #0]",
    "ldr r7, [r0, #8]",
    "ldr r8, [r0, #12]",
    "push {{r4-r8}}",
    "1:",
    "ldr r0, [sp, #8]",
    "ldr r4, [sp, #16]",
    "ldr lr, [sp, #12]",
    "mov r7, #0",
    "mov r8, #0",
    "mov r9, #0",
    "mov r10, #0",
    // An odd word first, then two words per pass.
    "tst lr, #1",
    "beq 3f",
    dot4_word!(),
    "3:",
    "lsrs lr, lr, #1",
    "beq 4f",
    "2:",
    dot4_word!(),
    dot4_word!(),
    "subs lr, lr, #1",
    "bne 2b",
    "4:",
    "ldr r0, [sp, #0]",
    "stmia r0!, {{r7-r10}}",
    "str r0, [sp, #0]",
    "ldr r0, [sp, #8]",
    "add r0, r0, r1, lsl #2",
    "str r0, [sp, #8]",
    "ldr r0, [sp, #4]",
    "subs r0, r0, #1",
    "str r0, [sp, #4]",
    "bne 1b",
    "add sp, sp, #20",
    "pop {{r4-r11, pc}}",
    ".size planner_dsp_dot4, . - planner_dsp_dot4",
);

/// Arguments of `planner_dsp_time_rows`, read by offset from the assembly.
#[repr(C)]
struct TimeArgs {
    a: *const i8,  // 0: word-aligned
    b: *const i8,  // 4: word-aligned
    out: *mut i32, // 8
    rows: u32,     // 12: > 0
    zz: u32,       // 16: the zero point in both halfwords
    pairs: u32,    // 20: pairs of words per row: 1, 2 or 4
}

unsafe extern "C" {
    /// [`time_rows`]' routine: saves and restores r4-r11 and returns through the saved lr,
    /// with no stack beyond that. `SMLAD` may set the sticky Q flag, which no Rust code
    /// reads.
    fn planner_dsp_time_rows(args: *const TimeArgs);
}

/// [`dot_rows`] of `out.len()` rows of `k` = 8, 16 or 32 elements back to back in `a` and
/// `b` (an SVDF's time weights and state; `zz` the zero point in both halfwords), both
/// word-aligned: each row's loop unrolled, one `LDRD` per two words of each (LLVM's loop
/// loads word by word and reloads its pointers). False (nothing written) for any other `k`,
/// alignment, or rows that do not fit the slices.
fn time_rows((a, b): (&[i8], &[i8]), k: usize, zz: u32, out: &mut [i32]) -> bool {
    let pairs = match k {
        8 => 1,
        16 => 2,
        32 => 4,
        _ => return false,
    };
    let aligned = |v: &[i8]| v.as_ptr().cast::<u32>().is_aligned();
    let fits = out
        .len()
        .checked_mul(k)
        .is_some_and(|n| n <= a.len() && n <= b.len());
    let Ok(rows) = u32::try_from(out.len()) else {
        return false;
    };
    if rows == 0 || !fits || !aligned(a) || !aligned(b) {
        return false;
    }
    let args = TimeArgs {
        a: a.as_ptr(),
        b: b.as_ptr(),
        out: out.as_mut_ptr(),
        rows,
        zz,
        pairs,
    };
    // SAFETY: the assembly reads the first `rows · k` bytes of `a` and of `b` (inside both,
    // checked above; `LDRD`s of word pairs, both word-aligned as checked and `k` a multiple
    // of 8) and writes `out[..rows]` (its length; `out` borrowed mutably, `a` and `b`
    // shared, so nothing else touches them meanwhile), and nothing else. It follows the
    // AAPCS, saving and restoring the registers it uses.
    unsafe { planner_dsp_time_rows(&args) };
    true
}

/// One word of `a` (in `$a`) against one of `b` (in `$b`) into the row's sum `lr`: each
/// widened into two halfword pairs, the zero point (r4) taken off `b`'s; r6 and r12 clobbered.
macro_rules! time_word {
    ($a:literal, $b:literal) => {
        concat!(
            "sxtb16 r12, ",
            $a,
            "\n",
            "sxtb16 r6, ",
            $b,
            "\n",
            "ssub16 r6, r6, r4\n",
            "smlad lr, r12, r6, lr\n",
            "sxtb16 r12, ",
            $a,
            ", ror #8\n",
            "sxtb16 r6, ",
            $b,
            ", ror #8\n",
            "ssub16 r6, r6, r4\n",
            "smlad lr, r12, r6, lr\n",
        )
    };
}

/// Two words of each row: `LDRD` of `a`'s (r0) and `b`'s (r1), both stepping on.
macro_rules! time_pair {
    () => {
        concat!(
            "ldrd r8, r9, [r0], #8\n",
            "ldrd r10, r11, [r1], #8\n",
            time_word!("r8", "r10"),
            time_word!("r9", "r11"),
        )
    };
}

/// A row's sum stored to `out` (r2, stepping on), and the loop back to `$row` until the
/// end of `out` (r3).
macro_rules! time_row_end {
    ($row:literal) => {
        concat!("str lr, [r2], #4\n", "cmp r2, r3\n", "bne ", $row, "\n",)
    };
}

core::arch::global_asm!(
    ".cpu cortex-m33",
    asm_function!("planner_dsp_time_rows"),
    "push {{r4-r11, lr}}",
    "ldrd r1, r2, [r0, #4]",
    "ldrd r3, r4, [r0, #12]",
    "ldr r5, [r0, #20]",
    "ldr r0, [r0, #0]",
    "add r3, r2, r3, lsl #2",
    "cmp r5, #2",
    "beq 2f",
    "bhi 4f",
    // Rows of one pair of words (8 elements).
    "1:",
    "mov lr, #0",
    time_pair!(),
    time_row_end!("1b"),
    "b 9f",
    // Two pairs (16 elements).
    "2:",
    "mov lr, #0",
    time_pair!(),
    time_pair!(),
    time_row_end!("2b"),
    "b 9f",
    // Four pairs (32 elements).
    "4:",
    "mov lr, #0",
    time_pair!(),
    time_pair!(),
    time_pair!(),
    time_pair!(),
    time_row_end!("4b"),
    "9:",
    "pop {{r4-r11, pc}}",
    ".size planner_dsp_time_rows, . - planner_dsp_time_rows",
);
