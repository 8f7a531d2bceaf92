//! Packed int4 filters, unpacked once at build time.
//!
//! TFLM's `CONV_2D`, `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED` accept an `INT4` filter beside
//! an int8 input: at every run they unpack it into a scratch buffer of one byte per element
//! (`tensor_utils::UnpackDenseInt4IntoInt8`: element `2i` is the low nibble of byte `i`,
//! element `2i + 1` the high one, both sign-extended) and run their int8 kernel over it. The
//! build knows the filter, so the importer does that unpacking here, once: the filter becomes
//! an int8 constant of the same shape and quantisation, the int8 kernels run it unchanged, and
//! the arena holds no unpacking buffer. The cost is flash: one byte per element instead of
//! half of one.

use std::path::Path;
use std::sync::Arc;
use std::vec::Vec;

use super::{Reader, element};
use crate::error::Result;
use crate::graph::{DType, Tensor, TensorKind};

/// The schema's `TensorType` code of `INT4`.
pub(super) const TYPE_CODE: i8 = 17;

/// The op kinds whose input 1 (the filter) TFLM reads as packed int4.
pub(crate) const INT4_FILTER_KINDS: [&str; 3] = ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"];

/// Unpacks input 1 of an op of `opcode` in place among `tensors` when it is a constant
/// `INT4` filter (of `elements` elements and `ceil(elements / 2)` bytes, which the importer
/// has checked). Other tensors and ops are left alone: an int4 tensor anywhere else reaches
/// the kernels as it is, and they refuse it by name.
pub(super) fn unpack_filter(opcode: &str, filter: Option<usize>, tensors: &mut [Tensor]) {
    if !INT4_FILTER_KINDS.contains(&opcode) {
        return;
    }
    let Some(t) = filter.and_then(|i| tensors.get_mut(i)) else {
        return;
    };
    if t.dtype != DType::I4 || t.kind != TensorKind::Constant {
        return;
    }
    let (Some(elements), Some(data)) = (t.elements(), t.data.as_deref()) else {
        return;
    };
    let Ok(n) = usize::try_from(elements) else {
        return;
    };
    let unpacked = unpack(data, n);
    t.dtype = DType::I8;
    t.size = unpacked.len() as u64;
    t.data = Some(Arc::from(unpacked));
}

/// The indices of the main subgraph's `INT4` tensors in the `.tflite` flatbuffer `bytes`:
/// what the file packed before [`super::parse`] unpacked its filters, for the exporter,
/// whose TFLM still unpacks them at run time.
pub(crate) fn packed_tensors(bytes: &[u8], path_for_errors: &Path) -> Result<Vec<usize>> {
    let reader = Reader {
        path: path_for_errors,
        bytes,
    };
    let model = reader.verified_root()?;
    let subgraphs = model.subgraphs().unwrap_or_default();
    let tensors = element(&subgraphs, 0)
        .and_then(|g| g.tensors())
        .unwrap_or_default();
    Ok(tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| t.tensor_type() == Some(TYPE_CODE))
        .map(|(i, _)| i)
        .collect())
}

/// `n` int8 values from packed int4 `bytes`: the low nibble of each byte first, each nibble
/// sign-extended; a missing byte reads as 0.
pub(super) fn unpack(bytes: &[u8], n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| {
            let byte = bytes.get(i / 2).copied().unwrap_or(0);
            let nibble = if i % 2 == 0 { byte << 4 } else { byte & 0xF0 };
            ((nibble as i8) >> 4) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::unpack;
    use std::vec::Vec;

    #[test]
    fn nibbles_unpack_low_first_and_sign_extended() {
        // 0x7F: low 0xF = -1, high 0x7 = 7; 0x80: low 0, high 0x8 = -8; 0x19: 9 = -7, 1.
        let out: Vec<i8> = unpack(&[0x7F, 0x80, 0x19], 5)
            .into_iter()
            .map(|b| b as i8)
            .collect();
        assert_eq!(out, [-1, 7, 0, -8, -7]);
    }

    #[test]
    fn every_nibble_maps_to_its_twos_complement_value() {
        for v in -8i8..=7 {
            let nibble = (v as u8) & 0x0F;
            let packed = nibble | (nibble << 4);
            assert_eq!(unpack(&[packed], 2), [v as u8, v as u8], "nibble {nibble:#x}");
        }
    }
}
