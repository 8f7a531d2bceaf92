//! A bounded reader of the FlexBuffers maps that custom ops carry as `custom_options` (the
//! signal library's ops): every offset, width and length is checked against the buffer, so
//! a corrupt map is an error that says what is wrong, never a panic or a read outside it.
//!
//! TFLM's signal kernels read their options by position in the map's values (which a
//! FlexBuffers map keeps sorted by key) and ignore the keys; [`Map::expect`] therefore
//! requires exactly the keys the op's kernel reads, so a value read by position is the value
//! of its key.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// FlexBuffers value types (the `type` part of a packed type byte) this reader uses.
mod kind {
    pub(super) const NULL: u8 = 0;
    pub(super) const INT: u8 = 1;
    pub(super) const UINT: u8 = 2;
    pub(super) const FLOAT: u8 = 3;
    pub(super) const KEY: u8 = 4;
    pub(super) const INDIRECT_INT: u8 = 6;
    pub(super) const INDIRECT_UINT: u8 = 7;
    pub(super) const INDIRECT_FLOAT: u8 = 8;
    pub(super) const MAP: u8 = 9;
    pub(super) const BOOL: u8 = 26;
}

/// What a map value may be read as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Value {
    /// An integer (signed or unsigned, inline or indirect).
    Int(i128),
    /// A boolean.
    Bool(bool),
    /// A float (inline or indirect).
    Float(f64),
    /// Another type (its FlexBuffers type code): strings, vectors, maps, blobs, null.
    Other(u8),
}

/// A FlexBuffers map: its values and its keys, both checked to lie inside the buffer.
pub(super) struct Map<'a> {
    keys: Vec<&'a str>,
    values: Vec<Value>,
}

/// Reads `n` bytes at `at` as a little-endian unsigned integer (`n` is 1, 2, 4 or 8).
fn uint(buf: &[u8], at: usize, n: usize) -> Result<u64, String> {
    let bytes = at
        .checked_add(n)
        .and_then(|end| buf.get(at..end))
        .ok_or_else(|| format!("a {n}-byte value at byte {at} runs past its end"))?;
    Ok(bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

/// Reads `n` bytes at `at` as a little-endian signed integer.
fn int(buf: &[u8], at: usize, n: usize) -> Result<i64, String> {
    let u = uint(buf, at, n)?;
    let shift = 64 - 8 * n as u32;
    Ok(((u << shift) as i64) >> shift)
}

/// Reads `n` bytes at `at` as a float (`n` is 4 or 8).
fn float(buf: &[u8], at: usize, n: usize) -> Result<f64, String> {
    match n {
        4 => Ok(f64::from(f32::from_bits(uint(buf, at, 4)? as u32))),
        8 => Ok(f64::from_bits(uint(buf, at, 8)?)),
        _ => Err(format!("a float of {n} bytes at byte {at}")),
    }
}

/// The byte width a packed type's low two bits give.
fn width(packed: u8) -> usize {
    1 << (packed & 3)
}

/// The target of the offset of `n` bytes stored at `at` (offsets point backwards).
fn indirect(buf: &[u8], at: usize, n: usize) -> Result<usize, String> {
    let off = uint(buf, at, n)?;
    usize::try_from(off)
        .ok()
        .and_then(|off| at.checked_sub(off))
        .ok_or_else(|| format!("the offset {off} at byte {at} points before the buffer's start"))
}

/// The element count stored `n` bytes before a vector at `at`.
fn length(buf: &[u8], at: usize, n: usize) -> Result<usize, String> {
    let before = at
        .checked_sub(n)
        .ok_or_else(|| format!("the length of a vector at byte {at} lies before the buffer"))?;
    let len = uint(buf, before, n)?;
    usize::try_from(len)
        .ok()
        .filter(|&len| len <= buf.len())
        .ok_or_else(|| format!("a vector at byte {at} claims {len} elements in {} bytes", buf.len()))
}

/// The value of packed type `packed` stored in `n` bytes at `at` (the parent's width).
fn value(buf: &[u8], at: usize, n: usize, packed: u8) -> Result<Value, String> {
    let w = width(packed);
    Ok(match packed >> 2 {
        kind::INT => Value::Int(i128::from(int(buf, at, n)?)),
        kind::UINT => Value::Int(i128::from(uint(buf, at, n)?)),
        kind::BOOL => Value::Bool(uint(buf, at, n)? != 0),
        kind::FLOAT => Value::Float(float(buf, at, n)?),
        kind::INDIRECT_INT => Value::Int(i128::from(int(buf, indirect(buf, at, n)?, w)?)),
        kind::INDIRECT_UINT => Value::Int(i128::from(uint(buf, indirect(buf, at, n)?, w)?)),
        kind::INDIRECT_FLOAT => Value::Float(float(buf, indirect(buf, at, n)?, w)?),
        other => Value::Other(other),
    })
}

/// The null-terminated key at `at`.
fn key(buf: &[u8], at: usize) -> Result<&str, String> {
    let rest = buf
        .get(at..)
        .ok_or_else(|| format!("a key at byte {at} lies past the end"))?;
    let end = rest
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| format!("the key at byte {at} has no terminating zero"))?;
    core::str::from_utf8(&rest[..end]).map_err(|_| format!("the key at byte {at} is not UTF-8"))
}

impl<'a> Map<'a> {
    /// The root map of `buf`; an error saying what is malformed otherwise (an empty buffer
    /// is an empty map, as TFLM reads it).
    pub(super) fn root(buf: &'a [u8]) -> Result<Map<'a>, String> {
        if buf.is_empty() {
            return Ok(Map {
                keys: Vec::new(),
                values: Vec::new(),
            });
        }
        let n = buf.len();
        if n < 3 {
            return Err(format!("{n} bytes are too few for a FlexBuffers root"));
        }
        let root_width = usize::from(buf[n - 1]);
        let packed = buf[n - 2];
        if !matches!(root_width, 1 | 2 | 4 | 8) {
            return Err(format!("the root width is {root_width} (1, 2, 4 or 8)"));
        }
        let root = (n - 2)
            .checked_sub(root_width)
            .ok_or_else(|| format!("a root of {root_width} bytes does not fit in {n} bytes"))?;
        if packed >> 2 != kind::MAP {
            return Err(format!(
                "the root is of FlexBuffers type {}, not a map (type {})",
                packed >> 2,
                kind::MAP
            ));
        }
        let values_at = indirect(buf, root, root_width)?;
        let w = width(packed);
        let len = length(buf, values_at, w)?;
        let meta = values_at
            .checked_sub(3 * w)
            .ok_or_else(|| "the map's key vector lies before the buffer".to_string())?;
        let keys_at = indirect(buf, meta, w)?;
        let keys_width = uint(buf, meta + w, w)?;
        let keys_width = match keys_width {
            1 | 2 | 4 | 8 => keys_width as usize,
            other => return Err(format!("the map's keys have width {other} (1, 2, 4 or 8)")),
        };
        if length(buf, keys_at, keys_width)? != len {
            return Err(format!(
                "the map has {len} values but {} keys",
                length(buf, keys_at, keys_width)?
            ));
        }
        let types_at = len
            .checked_mul(w)
            .and_then(|b| values_at.checked_add(b))
            .ok_or_else(|| "the map's type bytes lie past the end".to_string())?;
        let mut keys = Vec::with_capacity(len);
        let mut values = Vec::with_capacity(len);
        for i in 0..len {
            let packed = *buf
                .get(types_at + i)
                .ok_or_else(|| format!("the type of map value {i} lies past the end"))?;
            values.push(value(buf, values_at + i * w, w, packed)?);
            let k = keys_at + i * keys_width;
            keys.push(key(buf, indirect(buf, k, keys_width)?)?);
        }
        Ok(Map { keys, values })
    }

    /// Checks that the map has exactly `expected` keys (in sorted order, as FlexBuffers
    /// stores them, so each key's value is at the position TFLM reads).
    pub(super) fn expect(&self, expected: &[&str]) -> Result<(), String> {
        if self.keys == expected {
            return Ok(());
        }
        let missing: Vec<&str> = expected
            .iter()
            .filter(|k| !self.keys.contains(k))
            .copied()
            .collect();
        let extra: Vec<&str> = self
            .keys
            .iter()
            .filter(|k| !expected.contains(k))
            .copied()
            .collect();
        let mut say = format!("its custom options have keys {:?}", self.keys);
        if !missing.is_empty() {
            say += &format!("; missing {missing:?}");
        }
        if !extra.is_empty() {
            say += &format!("; unknown {extra:?}");
        }
        Err(format!(
            "{say}; TFLM's kernel reads exactly {expected:?} (by position)"
        ))
    }

    /// The value of `key`.
    fn get(&self, key: &str) -> Result<Value, String> {
        self.keys
            .iter()
            .position(|k| *k == key)
            .map(|i| self.values[i])
            .ok_or_else(|| format!("its custom options have no `{key}`"))
    }

    /// `key` as an `i32` (an integer or a boolean, as TFLM's `AsInt32` reads them).
    pub(super) fn int32(&self, key: &str) -> Result<i32, String> {
        match self.get(key)? {
            Value::Int(v) => i32::try_from(v)
                .map_err(|_| format!("its option `{key}` is {v}, outside the 32-bit range")),
            Value::Bool(b) => Ok(i32::from(b)),
            other => Err(format!(
                "its option `{key}` is {}, not an integer",
                describe(other)
            )),
        }
    }

    /// Whether the map has `key` (a key read by name may be left out).
    pub(super) fn has(&self, key: &str) -> bool {
        self.keys.contains(&key)
    }

    /// `key` as an `f32` (a float, or an integer converted, as TFLM's `AsFloat`).
    pub(super) fn float32(&self, key: &str) -> Result<f32, String> {
        match self.get(key)? {
            Value::Float(v) => Ok(v as f32),
            Value::Int(v) => Ok(v as f32),
            other => Err(format!(
                "its option `{key}` is {}, not a number",
                describe(other)
            )),
        }
    }

    /// `key` as a boolean (a boolean, or an integer that is not zero, as TFLM's `AsBool`).
    pub(super) fn boolean(&self, key: &str) -> Result<bool, String> {
        match self.get(key)? {
            Value::Bool(b) => Ok(b),
            Value::Int(v) => Ok(v != 0),
            other => Err(format!(
                "its option `{key}` is {}, not a boolean",
                describe(other)
            )),
        }
    }
}

/// A value's kind, for messages.
fn describe(v: Value) -> String {
    match v {
        Value::Int(i) => format!("the integer {i}"),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Float(f) => format!("the float {f}"),
        Value::Other(kind::NULL) => "null".to_string(),
        Value::Other(kind::KEY) => "a key".to_string(),
        Value::Other(t) => format!("a value of FlexBuffers type {t}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{"fft_length": 512, "T": 7}` as Python's `flexbuffers.Dumps` writes it.
    const RFFT: &[u8] = &[
        102, 102, 116, 95, 108, 101, 110, 103, 116, 104, 0, 84, 0, 2, 3, 15, 2, 0, 1, 0, 2, 0, 7,
        0, 0, 2, 5, 5, 6, 37, 1,
    ];

    /// `{"prefill": True, "frame_size": 400, "frame_step": 160}` (Python's `Dumps`).
    const FRAMER: &[u8] = &[
        112, 114, 101, 102, 105, 108, 108, 0, 102, 114, 97, 109, 101, 95, 115, 105, 122, 101, 0,
        102, 114, 97, 109, 101, 95, 115, 116, 101, 112, 0, 3, 23, 13, 33, 3, 0, 1, 0, 3, 0, 144, 1,
        160, 0, 1, 0, 5, 5, 105, 9, 37, 1,
    ];

    /// `{"x": -3000000000}` (Python's `Dumps`): an indirect 64-bit integer.
    const WIDE: &[u8] = &[
        120, 0, 1, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
        0, 0, 0, 162, 47, 77, 255, 255, 255, 255, 7, 9, 39, 1,
    ];

    #[test]
    fn reads_a_python_written_map() {
        let m = Map::root(RFFT).unwrap();
        m.expect(&["T", "fft_length"]).unwrap();
        assert_eq!(m.int32("T").unwrap(), 7);
        assert_eq!(m.int32("fft_length").unwrap(), 512);
        let err = m.expect(&["fft_length"]).unwrap_err();
        assert!(err.contains("unknown [\"T\"]"), "{err}");
        let err = m.int32("shift").unwrap_err();
        assert!(err.contains("no `shift`"), "{err}");
        let m = Map::root(FRAMER).unwrap();
        m.expect(&["frame_size", "frame_step", "prefill"]).unwrap();
        assert_eq!(m.int32("frame_size").unwrap(), 400);
        assert_eq!(m.int32("frame_step").unwrap(), 160);
        assert!(m.boolean("prefill").unwrap());
        let m = Map::root(WIDE).unwrap();
        let err = m.int32("x").unwrap_err();
        assert!(err.contains("-3000000000, outside the 32-bit range"), "{err}");
    }

    #[test]
    fn an_empty_buffer_is_an_empty_map() {
        let m = Map::root(&[]).unwrap();
        m.expect(&[]).unwrap();
        assert!(m.expect(&["shift"]).unwrap_err().contains("missing [\"shift\"]"));
    }

    #[test]
    fn no_corruption_panics() {
        // Every truncation and every single-byte change of a real map reads or errs.
        for map in [RFFT, FRAMER, WIDE] {
            for n in 0..map.len() {
                let _ = Map::root(&map[map.len() - n..]);
                let _ = Map::root(&map[..n]);
            }
            for i in 0..map.len() {
                for b in [0u8, 1, 2, 3, 4, 8, 36, 37, 38, 39, 0x7f, 0x80, 0xff] {
                    let mut v = map.to_vec();
                    v[i] = b;
                    if let Ok(m) = Map::root(&v) {
                        let _ = m.int32("fft_length");
                        let _ = m.boolean("prefill");
                    }
                }
            }
        }
    }
}
