//! [`super::dot_rows`] with the DSP extension (Cortex-M4, M7, M33): each word of four int8
//! elements is widened into two halfword pairs (`SXTB16`, and `SXTB16` of the word rotated
//! by 8: elements 0 and 2, 1 and 3), the zero point is taken off `b`'s pairs (`SSUB16`: an
//! int8 value minus an int8 zero point fits a halfword), and `SMLAD` adds two products per
//! instruction (its 32-bit sum wraps as `wrapping_add` does; it only sets the sticky Q
//! flag). A `b` shared by every row is widened once per call, on the stack; the `k % 4` last
//! elements go one by one.

use crate::optimized::arm_dsp::{smlad, ssub16, sxtb16, sxtb16_ror8, word};

/// `out[r] = Σ_{i<k} a[r·sa + i] · (b[r·sb + i] − z)` for every `r < out.len()`, wrapping;
/// false (nothing written) when `z` is not an int8 value. The caller has checked that every
/// row fits its slice.
pub(super) fn dot_rows(
    (a, sa): (&[i8], usize),
    (b, sb): (&[i8], usize),
    k: usize,
    z: i32,
    out: &mut [i32],
) -> bool {
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

/// [`dot_rows`] with one `b` for every row, its `k / 4 <= G` groups widened once, two rows
/// per pass.
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
