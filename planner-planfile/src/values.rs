//! The small value types the plan file is made of, shared with the planner: element types,
//! quantisation, tensor kinds, arena roles and memory budgets.

use serde::{Deserialize, Serialize};

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum DType {
    F16,
    F32,
    F64,
    Bf16,
    I4,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Bool,
    Complex64,
    Complex128,
    /// Variable-length strings: only as constant bytes.
    String,
    /// Opaque resource handles: only as constant bytes.
    Resource,
    /// Opaque variant values: only as constant bytes.
    Variant,
}

impl DType {
    /// All dtypes, in declaration order.
    pub const ALL: [DType; 19] = [
        DType::F16,
        DType::F32,
        DType::F64,
        DType::Bf16,
        DType::I4,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::Bool,
        DType::Complex64,
        DType::Complex128,
        DType::String,
        DType::Resource,
        DType::Variant,
    ];

    /// The manifest spelling (`"i8"`, `"f32"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::Bf16 => "bf16",
            DType::I4 => "i4",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::Bool => "bool",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::String => "string",
            DType::Resource => "resource",
            DType::Variant => "variant",
        }
    }

    /// Parses the manifest spelling; TFLite's long names (`int8`, `float32`, `uint8`,
    /// `int4`, ...) are accepted too.
    pub fn from_name(name: &str) -> Option<DType> {
        let lower = name.to_ascii_lowercase();
        let short = match lower.as_str() {
            "float16" => "f16",
            "float32" => "f32",
            "float64" => "f64",
            "bfloat16" => "bf16",
            "int4" => "i4",
            "int8" => "i8",
            "uint8" => "u8",
            "int16" => "i16",
            "uint16" => "u16",
            "int32" => "i32",
            "uint32" => "u32",
            "int64" => "i64",
            "uint64" => "u64",
            other => other,
        };
        DType::ALL.iter().copied().find(|d| d.name() == short)
    }

    /// Bits per element; `None` for types without a fixed width (string, resource, variant).
    pub fn bits(self) -> Option<u64> {
        Some(match self {
            DType::I4 => 4,
            DType::I8 | DType::U8 | DType::Bool => 8,
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => 16,
            DType::F32 | DType::I32 | DType::U32 => 32,
            DType::F64 | DType::I64 | DType::U64 | DType::Complex64 => 64,
            DType::Complex128 => 128,
            DType::String | DType::Resource | DType::Variant => return None,
        })
    }

    /// Natural alignment of one element in bytes (at least 1). Complex numbers align as
    /// their component.
    pub fn align(self) -> u64 {
        match self {
            DType::Complex64 => 4,
            DType::Complex128 => 8,
            d => d.bits().map_or(1, |b| (b / 8).max(1)),
        }
    }

    /// Bytes taken by `elements` elements (packed 4-bit types round up to whole bytes);
    /// `None` on overflow or for types without a fixed width.
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        match self.bits()? {
            4 => Some(elements.div_ceil(2)),
            bits => elements.checked_mul(bits / 8),
        }
    }
}

/// Quantisation parameters (`real = scale * (q - zero_point)`), per tensor or per channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantization {
    /// One scale per channel (one entry for per-tensor quantisation).
    pub scale: Vec<f32>,
    /// One zero point per channel (one entry for per-tensor quantisation).
    pub zero_point: Vec<i64>,
    /// The channel axis for per-channel quantisation.
    pub axis: i32,
}

impl Quantization {
    /// The first scale that is not a finite number (NaN or infinite): generated code keeps
    /// each scale as an `f32` constant, and a plan file cannot write one back.
    pub fn non_finite_scale(&self) -> Option<f32> {
        self.scale.iter().copied().find(|s| !s.is_finite())
    }
}

/// What a tensor is, which decides its default role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TensorKind {
    /// Produced and consumed by operators: a scratch slot reused by liveness.
    Activation,
    /// Read-only weights with bytes known at plan time.
    Constant,
    /// State that lives across runs (`is_variable` in TFLite): persistent.
    Variable,
}

/// What an arena holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArenaRole {
    /// Transient activations; slots are reused by liveness.
    Scratch,
    /// Whole-run writable state (variable tensors); zeroed at init.
    Persistent,
    /// Read-only weights. Cold: read in place from its source memory. Staged: a writable
    /// runtime copy in `memory`, hydrated from a blob in `source_memory` before the first run.
    Constant,
}

impl ArenaRole {
    /// The lowercase name used in manifests, section names and reports.
    pub fn name(self) -> &'static str {
        match self {
            ArenaRole::Scratch => "scratch",
            ArenaRole::Persistent => "persistent",
            ArenaRole::Constant => "constant",
        }
    }
}

/// The kernel set a plan is made for (`[kernels] set` in the manifest): what the planner
/// prepares for it and which kernel scratch it plans.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum KernelSet {
    /// TFLite Micro's arithmetic (`planner_kernels::Reference`): nothing prepared, no
    /// kernel scratch.
    #[default]
    Reference,
    /// A kernel set that reads prepared constants (`requant-v1`) and uses planned kernel
    /// scratch (`planner_kernels::Optimized`).
    Optimized,
}

impl KernelSet {
    /// Every set, in the order messages list them.
    pub const ALL: [KernelSet; 2] = [KernelSet::Reference, KernelSet::Optimized];

    /// The name the manifest and the plan file use.
    pub fn name(self) -> &'static str {
        match self {
            KernelSet::Reference => "reference",
            KernelSet::Optimized => "optimized",
        }
    }

    /// The set called `name`.
    pub fn from_name(name: &str) -> Option<KernelSet> {
        KernelSet::ALL.into_iter().find(|k| k.name() == name)
    }

    /// True for the default set (the plan file leaves it out).
    pub fn is_reference(&self) -> bool {
        *self == KernelSet::Reference
    }
}

/// How a prepared constant input of an op is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PreparedLayout {
    /// int32 `[3, c_out]`: effective biases, Q31 multipliers, shifts, as
    /// `planner_rt::prepare::requant_v1` writes them.
    #[serde(rename = "requant-v1")]
    RequantV1,
}

impl PreparedLayout {
    /// The name the plan file uses.
    pub fn name(self) -> &'static str {
        match self {
            PreparedLayout::RequantV1 => "requant-v1",
        }
    }
}

/// A budget on one memory: the most bytes the plan may use there, and arena alignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryConstraint {
    /// Memory name.
    pub name: String,
    /// Most bytes all arenas in this memory may take together (`None`: the memory's size).
    pub max_size: Option<u64>,
    /// Alignment of arena bases and slots in this memory (`None`: the platform minimum).
    pub arena_alignment: Option<u64>,
    /// The application binds the writable arenas of this memory (`from_buffers`): the plan
    /// file gives them no section, so no `static` and no linker section is made for them.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub app_bound: bool,
}

/// Follows alias links from `start` to the root of its alias group: `next(i)` is the tensor
/// `i` shares bytes with (or `None`, or `i` itself, at a root). At most `limit` steps, so a
/// cycle in a hand-edited file ends the walk instead of hanging it. The one place aliases are
/// chased, for graphs, plan files and generated code alike.
pub fn alias_root(start: usize, limit: usize, next: impl Fn(usize) -> Option<usize>) -> usize {
    let mut i = start;
    for _ in 0..limit {
        match next(i) {
            Some(t) if t != i => i = t,
            _ => break,
        }
    }
    i
}
