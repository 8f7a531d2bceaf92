//! The manifest's TOML as serde reads it: every table and key with its span, before any
//! check. `deny_unknown_fields` everywhere, so a misspelt key is an error with a
//! did-you-mean (`check::toml_error`). The inline graph's tables (`model.tensors`,
//! `model.ops`) are read here too and kept as written: [`crate::import`] turns them into a
//! graph.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::string::String;
use std::sync::Arc;
use std::vec::Vec;

use serde::Deserialize;
use toml::Spanned;

use super::{K, M};

/// A single-model manifest: `[model]`, `[platform]`, `[memory]`, `[kernels]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawManifest {
    pub(crate) model: Spanned<RawModel>,
    pub(crate) platform: Option<Spanned<RawPlatform>>,
    pub(crate) memory: Option<RawMemory>,
    pub(crate) kernels: Option<RawKernels>,
}

/// The `[kernels]` table: which kernel set the plan is made for.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct RawKernels {
    pub(crate) set: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawModel {
    pub(crate) name: Spanned<String>,
    pub(crate) source: Option<Spanned<String>>,
    pub(crate) tensors: Option<Vec<Spanned<RawTensor>>>,
    pub(crate) ops: Option<Vec<Spanned<RawOp>>>,
    pub(crate) inputs: Option<Vec<Spanned<String>>>,
    pub(crate) outputs: Option<Vec<Spanned<String>>>,
    /// Placement rules of this model alone, after the shared `memory.tensors`.
    pub(crate) rules: Option<Vec<Spanned<RawRule>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlatform {
    pub(crate) preset: Option<Spanned<String>>,
    pub(crate) min_alignment: Option<Spanned<i64>>,
    pub(crate) memories: Option<Vec<Spanned<RawMemoryDef>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMemoryDef {
    pub(crate) name: Spanned<String>,
    pub(crate) size: Option<Spanned<Size>>,
    pub(crate) writable: bool,
    #[serde(default = "yes")]
    pub(crate) readable_in_place: bool,
    pub(crate) origin: Option<Spanned<Size>>,
}

fn yes() -> bool {
    true
}

/// The `[memory]` table; every key may be left out.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct RawMemory {
    pub(crate) planner: Option<Spanned<String>>,
    pub(crate) planner_options: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    pub(crate) constraints: Vec<Spanned<RawConstraint>>,
    pub(crate) tensors: Vec<Spanned<RawRule>>,
    pub(crate) slabs: Vec<Spanned<RawSlab>>,
    pub(crate) alias_reshapes: bool,
    pub(crate) in_place_ops: Vec<Spanned<String>>,
    pub(crate) in_place: bool,
    pub(crate) row_overlap: bool,
    pub(crate) schedule: Option<Spanned<String>>,
    pub(crate) max_zero_constants: Option<Spanned<Size>>,
    pub(crate) patches: Option<Spanned<toml::Value>>,
    pub(crate) max_recompute: Option<Spanned<toml::Value>>,
    pub(crate) patch_input: Option<Spanned<String>>,
    pub(crate) patches_required: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSlab {
    pub(crate) name: Spanned<String>,
    pub(crate) size: Spanned<Size>,
    pub(crate) memory: Spanned<String>,
    pub(crate) role: Option<Spanned<String>>,
    pub(crate) alignment: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConstraint {
    pub(crate) name: Spanned<String>,
    pub(crate) max_size: Option<Spanned<Size>>,
    pub(crate) arena_alignment: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) app_bound: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRule {
    #[serde(rename = "type")]
    pub(crate) rule_type: Option<Spanned<String>>,
    pub(crate) id: Option<Spanned<IdPattern>>,
    #[serde(default)]
    pub(crate) attributes: Option<Spanned<RawAttributes>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum IdPattern {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAttributes {
    pub(crate) memory: Option<Spanned<String>>,
    pub(crate) constant_destination_memory: Option<Spanned<String>>,
}

/// A byte count written as an integer or with a `K`/`M`/`G` suffix (`"512K"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Size, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte count: an integer, or a string such as \"512K\" or \"4M\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Size, E> {
                u64::try_from(v)
                    .map(Size)
                    .map_err(|_| E::custom(format!("size {v} is negative; give a byte count >= 0")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Size, E> {
                parse_size(v).map(Size).ok_or_else(|| {
                    E::custom(format!(
                        "size {v:?} is not a byte count; write an integer, or digits with K, M or G (\"512K\", \"4M\"), or 0x-hex"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses `"512K"`, `"4M"`, `"1G"`, `"4096"`, `"0x1000"` (also `KiB`/`KB` forms).
#[doc(hidden)]
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(&hex.replace('_', ""), 16).ok();
    }
    let digits_end = s
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    if num.is_empty() {
        return None;
    }
    let n: u64 = num.replace('_', "").parse().ok()?;
    let mult = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => K,
        "M" | "MB" | "MIB" => M,
        "G" | "GB" | "GIB" => 1024 * M,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A group manifest: `[group]`, `[[model]]` tables, `[platform]`, `[memory]`, `[kernels]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGroupManifest {
    pub(crate) group: Option<Spanned<RawGroup>>,
    pub(crate) model: Vec<Spanned<RawModel>>,
    pub(crate) platform: Option<Spanned<RawPlatform>>,
    pub(crate) memory: Option<RawMemory>,
    pub(crate) kernels: Option<RawKernels>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGroup {
    pub(crate) name: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) concurrent: Vec<Spanned<Vec<Spanned<String>>>>,
}

/// An inline graph as the manifest gives it, with the manifest's text for error spans.
#[derive(Clone)]
pub struct InlineModel {
    pub(crate) path: PathBuf,
    pub(crate) text: Arc<str>,
    pub(crate) tensors: Vec<Spanned<RawTensor>>,
    pub(crate) ops: Vec<Spanned<RawOp>>,
    pub(crate) inputs: Option<Vec<Spanned<String>>>,
    pub(crate) outputs: Option<Vec<Spanned<String>>>,
}

impl core::fmt::Debug for InlineModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("InlineModel")
            .field("path", &self.path)
            .field("tensors", &self.tensors.len())
            .field("ops", &self.ops.len())
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTensor {
    pub(crate) id: Spanned<String>,
    pub(crate) name: Option<String>,
    pub(crate) dtype: Spanned<String>,
    pub(crate) shape: Option<Vec<Spanned<i64>>>,
    pub(crate) size: Option<Spanned<Size>>,
    pub(crate) data: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) constant: bool,
    #[serde(default)]
    pub(crate) variable: bool,
    pub(crate) alignment: Option<Spanned<i64>>,
    pub(crate) quantization: Option<RawQuant>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQuant {
    pub(crate) scale: Vec<f32>,
    pub(crate) zero_point: Vec<i64>,
    #[serde(default)]
    pub(crate) axis: i32,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOp {
    pub(crate) opcode: String,
    #[serde(default)]
    pub(crate) inputs: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) outputs: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) scratch: Vec<Spanned<String>>,
}
