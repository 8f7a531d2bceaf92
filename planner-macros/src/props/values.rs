//! What the random manifests of the property tests (`props.rs`) and of the
//! `manifest_structured` fuzz target (which includes this file) are drawn from: byte counts,
//! alignments and origins at the limits of `u32`, `i64` and `u64`, names that collide after
//! case folding and sanitising, and element types.

/// Values at and around the limits a size, an alignment or an origin can reach.
pub const EDGES: [u64; 13] = [
    0,
    1,
    3,
    16,
    4096,
    65_536,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    1 << 63,
    u64::MAX - 15,
    u64::MAX,
];

/// Tensor names: `a` and `a_mut` make clashing accessors, `x/y` and `x_y` one identifier,
/// `A`, `In` and `sram` differ from others in case only.
pub const NAMES: [&str; 9] = ["a", "a_mut", "A", "b", "x/y", "x_y", "In", "sram", "t0"];

/// Element types: those with views, a packed one (`i4`), and last one of no fixed width
/// (which the property tests leave out).
pub const DTYPES: [&str; 10] = [
    "i8",
    "u8",
    "i16",
    "f32",
    "i32",
    "f64",
    "i4",
    "complex64",
    "bool",
    "string",
];

/// A byte count as TOML: an integer, or a hex string above `i64::MAX` (TOML integers are
/// signed 64-bit).
pub fn size_lit(v: u64) -> String {
    if v > i64::MAX as u64 {
        format!("\"{v:#x}\"")
    } else {
        v.to_string()
    }
}
