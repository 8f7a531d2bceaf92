//! The seeded inputs of the golden scripts (`scripts/tflm_goldens.py`,
//! `scripts/tflm_op_goldens.py`) and their digest: what a firmware fills a model's inputs
//! with to compare the outputs with TFLite Micro's, byte for byte.

use planner_rt::kernel::Data;

/// SplitMix64: the golden scripts' input stream.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The stream's next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Fills an int8 input from the stream at `seed`: `(next >> 56)` as a signed byte.
pub fn fill_i8(input: &mut [i8], seed: u64) {
    let mut s = SplitMix64(seed);
    for v in input {
        *v = (s.next_u64() >> 56) as u8 as i8;
    }
}

/// Fills an int16 input from the stream at `seed`: `(next >> 48)` as a signed 16-bit value.
pub fn fill_i16(input: &mut [i16], seed: u64) {
    let mut s = SplitMix64(seed);
    for v in input {
        *v = (s.next_u64() >> 48) as u16 as i16;
    }
}

/// Fills an int8 input from the stream at `seed`, uniform in `[lo, hi]` as the op goldens'
/// script does: `lo + ((next >> 32) · (hi − lo + 1) >> 32)`.
pub fn fill_i8_in(input: &mut [i8], seed: u64, lo: i64, hi: i64) {
    let mut s = SplitMix64(seed);
    let span = (hi - lo + 1).max(1) as u64;
    for v in input {
        *v = (lo + (((s.next_u64() >> 32) * span) >> 32) as i64) as i8;
    }
}

/// Fills an int16 input from the stream at `seed`, uniform in `[lo, hi]` as the op goldens'
/// script does: `lo + ((next >> 32) · (hi − lo + 1) >> 32)`.
pub fn fill_i16_in(input: &mut [i16], seed: u64, lo: i64, hi: i64) {
    let mut s = SplitMix64(seed);
    let span = (hi - lo + 1).max(1) as u64;
    for v in input {
        *v = (lo + (((s.next_u64() >> 32) * span) >> 32) as i64) as i16;
    }
}

/// Fills a float32 input from the stream at `seed`, in `[lo, hi]` as the op goldens' script
/// does: `lo + (hi - lo) * ((next >> 40) / 2^24)` in double precision, rounded to `f32`
/// (`lo = 0`, `hi = 1`: the output goldens' `(next >> 40) / 2^24`).
pub fn fill_f32(input: &mut [f32], seed: u64, lo: f64, hi: f64) {
    let mut s = SplitMix64(seed);
    for v in input {
        let unit = (s.next_u64() >> 40) as f64 / f64::from(1u32 << 24);
        *v = (lo + (hi - lo) * unit) as f32;
    }
}

/// FNV-1a 64's offset basis and one byte's step.
const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
}

/// FNV-1a 64 of `bytes`: the goldens' digest of a whole tensor.
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(FNV_BASIS, fnv_step)
}

/// Calls `f` with each little-endian byte of a tensor view's elements, in order (a
/// complex element's real part first); false, never calling `f`, for a view that holds no
/// elements itself (an in-place or variable reference).
pub fn le_bytes(data: &Data<'_>, mut f: impl FnMut(u8)) -> bool {
    fn each<T: Copy, const N: usize>(s: &[T], le: fn(T) -> [u8; N], f: &mut impl FnMut(u8)) {
        for &v in s {
            le(v).into_iter().for_each(&mut *f);
        }
    }
    match *data {
        Data::I8(s) => each(s, i8::to_le_bytes, &mut f),
        Data::U8(s) => each(s, u8::to_le_bytes, &mut f),
        Data::I16(s) => each(s, i16::to_le_bytes, &mut f),
        Data::U16(s) => each(s, u16::to_le_bytes, &mut f),
        Data::I32(s) => each(s, i32::to_le_bytes, &mut f),
        Data::U32(s) => each(s, u32::to_le_bytes, &mut f),
        Data::I64(s) => each(s, i64::to_le_bytes, &mut f),
        Data::U64(s) => each(s, u64::to_le_bytes, &mut f),
        Data::F32(s) => each(s, f32::to_le_bytes, &mut f),
        Data::F64(s) => each(s, f64::to_le_bytes, &mut f),
        Data::C64(s) => each(s.as_flattened(), f32::to_le_bytes, &mut f),
        Data::C128(s) => each(s.as_flattened(), f64::to_le_bytes, &mut f),
        Data::InPlace(_) | Data::Variable(_) => return false,
    }
    true
}

/// FNV-1a 64 of a tensor view's little-endian bytes (see [`le_bytes`]); `None` for a view
/// that holds no elements itself.
pub fn digest(data: &Data<'_>) -> Option<u64> {
    let mut h = FNV_BASIS;
    le_bytes(data, |b| h = fnv_step(h, b)).then_some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_and_digest_are_the_published_ones() {
        // SplitMix64's first output for seed 0, and FNV-1a 64 of "a".
        assert_eq!(SplitMix64(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(fnv1a64(*b"a"), 0xaf63_dc4c_8601_ec8c);
        let mut x = [0i8; 3];
        fill_i8(&mut x, 0);
        assert_eq!(x[0], 0xe2u8 as i8);
    }
}
