//! A model's plan file: [`PlanFile`] and its entries, the format version, the plan hash and
//! the checks [`PlanFile::parse`] makes before code generation trusts a file.

use serde::{Deserialize, Serialize};

use crate::control::{self, Control};
use crate::error::{Error, Result};
use crate::patch;
use crate::values::{
    ArenaRole, DType, KernelSet, MemoryConstraint, PreparedLayout, Quantization, TensorKind,
};
use planner_rt::options::OpOptions;

/// The format version this build writes and reads.
///
/// History (older versions are refused with a message saying to rebuild):
/// - 1: one model; arenas, tensors, ops (opcode, inputs, outputs, scratch), inputs, outputs.
/// - 2: this release. Every addition of this release goes under version 2 (see the fields'
///   docs); it is bumped once per release, not once per field. Added so far: each op's
///   typed `options` ([`OpEntry::options`]: strides, padding, activation, axes, ... and the
///   constant operands that parameterise the op); group plan files ([`GroupPlanFile`](crate::GroupPlanFile),
///   told apart by their `group` field: several models over shared arenas, each model's
///   plan inside). Single-model plan files are unchanged by groups.
/// - 3: ops that run in place ([`OpEntry::in_place`]: an output written over an input that
///   dies at the op, and the op's temporary) and PADs folded into the convolution that
///   consumes them ([`Padding::Explicit`](planner_rt::options::Padding::Explicit) with the
///   convolution's per-side `pads`). Version 2 files are refused with "rebuild".
///   Patch-based execution of the first stage ([`PlanFile::patches`]) is an addition of the
///   same release, so it goes under version 3 too: a file without `patches` reads as one
///   run per layer.
/// - 4: plans for a kernel set that reads prepared constants (`[kernels] set = "optimized"`):
///   the file's [`PlanFile::kernels`], and per op what the planner prepared for it
///   ([`OpEntry::prepared`]: a constant input of a known layout, `requant-v1`) and which of
///   its scratch tensors are planned kernel scratch ([`OpEntry::kernel_scratch`]). All three
///   are left out for the reference set, whose files differ from version 3 in the version
///   alone. Version 3 files are refused with "rebuild".
/// - 5: models with several subgraphs: [`PlanFile::control`], the op ranges that run
///   conditionally (`IF`), in a loop (`WHILE`) or once (`CALL_ONCE`), over one op list that
///   holds every subgraph's ops (see [`control`](crate::control)). Left out for a model
///   without control flow, whose file differs from version 4 in the version alone.
///   Version 4 files are refused with "rebuild".
/// - 6: row overlap ([`InPlaceEntry::rows`]): a convolution or pool whose output starts
///   before its input, over the input rows it has read (see `planner_rt::rows`). Left out
///   for an op without it, so a file without row overlap differs from version 5 in the
///   version alone. Version 5 files are refused with "rebuild".
pub const FORMAT_VERSION: u32 = 6;

/// A plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// The tool that wrote it (`planner <version>`); informative only.
    pub generator: String,
    /// The model's name: the module `include_model!` makes and the prefix of every section.
    pub model: String,
    /// The kernel set the plan was made for (since version 4); left out for
    /// [`KernelSet::Reference`].
    #[serde(default, skip_serializing_if = "KernelSet::is_reference")]
    pub kernels: KernelSet,
    /// `fnv1a64:<16 hex digits>` over the file with this field empty (see [`PlanFile::hash`]).
    pub plan_hash: String,
    /// Memories the arenas live in, with their budgets.
    pub memories: Vec<MemoryEntry>,
    /// Arenas: scratch, then persistent, then constant, each by memory name.
    pub arenas: Vec<ArenaEntry>,
    /// Placed tensors, in graph order.
    pub tensors: Vec<TensorEntry>,
    /// Operators in execution order.
    pub ops: Vec<OpEntry>,
    /// Model inputs by signature name.
    pub inputs: Vec<IoEntry>,
    /// Model outputs by signature name.
    pub outputs: Vec<IoEntry>,
    /// How the first stage runs patch by patch (since version 3); left out when every op
    /// runs once over whole tensors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patches: Option<patch::PatchPlan>,
    /// The op ranges that run conditionally, in a loop or once (since version 5), in op
    /// order, an enclosing entry before those inside it; left out when every op runs once
    /// per run, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control: Vec<Control>,
}

/// A memory and its budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryEntry {
    /// The memory's name (also the linker region the fragment places its arenas in).
    pub name: String,
    /// Most bytes all its arenas may take together; `None`: no limit known.
    pub budget: Option<u64>,
}

/// An arena.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArenaEntry {
    /// `role.MEMORY` ([`naming::arena_name`](crate::naming::arena_name)).
    pub name: String,
    /// What it holds.
    pub role: ArenaRole,
    /// Runtime memory.
    pub memory: String,
    /// Where its bytes come from; differs from `memory` only for staged constants.
    pub source_memory: String,
    /// Bytes: the length of its `static`.
    pub size: u64,
    /// Bytes the plan allows it; `None`: no limit.
    pub budget: Option<u64>,
    /// Alignment of its base.
    pub alignment: u64,
    /// Link section of its writable `static`; `None` for a cold constant arena, which has
    /// only its blob.
    pub section: Option<String>,
    /// The blob that fills a constant arena.
    pub blob: Option<BlobEntry>,
    /// True for a writable arena the application binds (`app_bound = true` on its memory's
    /// constraint): it has no section, the macro makes no `static` (and no `take()`) and
    /// the linker fragment reserves nothing for it. Left out when false.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub app_bound: bool,
}

impl ArenaEntry {
    /// True for a constant arena copied from its source memory at init.
    pub fn is_staged(&self) -> bool {
        self.role == ArenaRole::Constant && self.source_memory != self.memory
    }
}

/// A constant arena's blob file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlobEntry {
    /// File name, relative to the plan file.
    pub file: String,
    /// Link section of the blob's `static`, in the source memory.
    pub section: String,
    /// Bytes (equal to the arena's size).
    pub size: u64,
    /// `fnv1a64:<hex>` of the blob's bytes, so the plan hash covers the weights.
    pub hash: String,
}

/// The ops over which a tensor is live, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lifetime {
    /// First op.
    pub start_op: u32,
    /// Last op.
    pub end_op: u32,
}

/// A placed tensor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorEntry {
    /// Stable id.
    pub id: String,
    /// Name in the model.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<u64>,
    /// Bytes.
    pub size: u64,
    /// Activation, constant or variable.
    pub kind: TensorKind,
    /// Quantisation parameters.
    pub quantization: Option<Quantization>,
    /// When it is live.
    pub lifetime: Lifetime,
    /// Index into [`PlanFile::arenas`].
    pub arena: u32,
    /// Byte offset in the arena.
    pub offset: u64,
    /// Alignment of the slot.
    pub alignment: u64,
    /// Index into [`PlanFile::tensors`] of the tensor whose bytes this one is, for an alias
    /// (a reshape's output).
    pub alias_of: Option<u32>,
}

/// An operator; tensor numbers index [`PlanFile::tensors`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpEntry {
    /// Operator name (`FULLY_CONNECTED`, `CUSTOM:...`).
    pub opcode: String,
    /// Inputs; `None` for an optional input left out.
    pub inputs: Vec<Option<u32>>,
    /// Outputs.
    pub outputs: Vec<u32>,
    /// Op-local scratch tensors.
    pub scratch: Vec<u32>,
    /// Typed options (since version 2): `{"kind": "conv2d", "padding": "same", ...}`, or
    /// `{"kind": "none"}` for an op without typed options. Left out, it reads as none.
    #[serde(default, deserialize_with = "crate::options_de::deserialize")]
    pub options: OpOptions,
    /// How the op runs in place (since version 3); left out for an op that runs out of
    /// place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place: Option<InPlaceEntry>,
    /// The constant input the planner prepared for the op's kernel (since version 4); left
    /// out when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepared: Option<PreparedEntry>,
    /// Positions in [`OpEntry::scratch`] of the op's planned kernel scratch (since version
    /// 4): buffers the kernel set asked for, live during the op only. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_scratch: Vec<u32>,
}

/// A constant input the planner computed for an op's kernel from the op's other operands
/// (`[kernels] set = "optimized"`), so the kernel does not compute it per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreparedEntry {
    /// How its elements are laid out.
    pub layout: PreparedLayout,
    /// Its position in [`OpEntry::inputs`].
    pub input: u32,
}

/// How an op runs in place: output `output` starts at the offset of input `input` (in the
/// same arena; before it with [`InPlaceEntry::rows`]), which the op is the last to read. The two tensors share bytes at this op
/// only: the input's lifetime ends at the op and the output's starts there. The `const`
/// check and the verifier accept that overlap, and no other.
///
/// The generated `run()` calls the kind's in-place kernel method (`*InPlace` traits of
/// `rt::kernel`) for such an op, whose view shows the input as
/// [`Data::InPlace`](planner_rt::kernel::Data::InPlace) of the output, and the output's
/// buffer over the longer of the two tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InPlaceEntry {
    /// Position in [`OpEntry::inputs`] of the input whose bytes the output takes over.
    pub input: u32,
    /// Position in [`OpEntry::outputs`] of the output written over it.
    pub output: u32,
    /// Position in [`OpEntry::scratch`] of the op's temporary (a depthwise convolution's
    /// copy of one input channel), when it has one.
    pub temp: Option<u32>,
    /// Row overlap (since version 6; `memory.row_overlap`): the output starts before the
    /// input, which starts at least `planner_rt::rows::Rows::min_shift` elements later
    /// (and inside the output's slot), and the op computes its output rows from the top
    /// over input rows it has read (`planner_rt::rows::run`). False (left out): the output
    /// starts at the input.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rows: bool,
}

/// A named model input or output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoEntry {
    /// Signature name.
    pub name: String,
    /// Index into [`PlanFile::tensors`].
    pub tensor: u32,
}

/// What the plan needs from the platform that a memory plan (`planner::plan::MemoryPlan`)
/// does not record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The platform's `min_alignment` for slots and arenas.
    pub min_alignment: u64,
    /// Budgets and arena alignments per memory (the manifest's `memory.constraints`).
    pub constraints: Vec<MemoryConstraint>,
}

impl Layout {
    /// True when the application binds the writable arenas of `memory`.
    pub fn app_bound(&self, memory: &str) -> bool {
        self.constraints
            .iter()
            .any(|c| c.name == memory && c.app_bound)
    }

    /// The platform facts of `source` (a manifest): its `min_alignment`, and each memory's
    /// budget and arena alignment.
    pub fn of(source: &impl LayoutSource) -> Layout {
        source.layout()
    }
}

/// What a [`Layout`] is read from: a manifest, or anything else that knows the platform.
pub trait LayoutSource {
    /// The platform facts a plan needs.
    fn layout(&self) -> Layout;
}

/// The environment variable `planner-build` sets (with `cargo::rustc-env`) to the
/// directory holding the plan files, which `include_model!` reads.
pub const PLAN_DIR_VAR: &str = "PLANNER_PLAN_DIR";

/// FNV-1a, 64-bit: the plan hash. Stable across machines and releases.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The text of plan hash `h` as the files carry it: `fnv1a64:<16 hex digits>`.
pub fn hash_text(h: u64) -> String {
    format!("fnv1a64:{h:016x}")
}

/// The hash `hash_text` wrote; `None` when `text` is not `fnv1a64:<16 hex digits>`.
pub(crate) fn parse_hash(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("fnv1a64:")?;
    (hex.len() == 16)
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
}

/// The plan hash of a plan file of either kind: FNV-1a 64 over its canonical JSON with
/// its `plan_hash` field (the one `hash_field` gives) empty.
pub(crate) fn canonical_hash<T: Clone + Serialize>(
    file: &T,
    hash_field: fn(&mut T) -> &mut String,
) -> u64 {
    let mut canonical = file.clone();
    hash_field(&mut canonical).clear();
    // Serialising plain data to a Vec cannot fail; an empty hash input would still be a
    // stable value.
    fnv1a64(&serde_json::to_vec(&canonical).unwrap_or_default())
}

/// The bytes of a plan file of either kind: pretty JSON with a trailing newline.
pub(crate) fn pretty_bytes<T: Serialize>(file: &T) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(file).unwrap_or_default();
    out.push(b'\n');
    out
}

impl PlanFile {
    /// The plan hash: FNV-1a 64 over the canonical JSON of the file with `plan_hash` empty.
    pub fn hash(&self) -> u64 {
        canonical_hash(self, |f| &mut f.plan_hash)
    }

    /// The plan hash as a number, parsed from [`PlanFile::plan_hash`]; `None` when the field
    /// is not `fnv1a64:<16 hex digits>`.
    pub fn hash_value(&self) -> Option<u64> {
        parse_hash(&self.plan_hash)
    }

    /// The file's bytes: pretty JSON with a trailing newline. Same plan, same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        pretty_bytes(self)
    }

    /// Reads a plan file; `origin` names it in errors. Rejects a `format_version` other
    /// than [`FORMAT_VERSION`] before looking at anything else.
    pub fn parse(text: &str, origin: &str) -> Result<PlanFile> {
        check_version(text, origin)?;
        let file: PlanFile = serde_json::from_str(text).map_err(|e| {
            Error::new(format!("{origin} is not a valid plan file: {e}"))
                .help("regenerate it with planner-build rather than editing it by hand")
        })?;
        file.check_scales(origin)?;
        file.check_patches(origin)?;
        file.check_control(origin)?;
        Ok(file)
    }

    /// Refuses a patch plan ([`PlanFile::patches`]) that code generation could not trust:
    /// a split op or tensor out of range, a tensor that is not `[1, H, W, C]`, a region
    /// count other than the grid's, a region outside its tensor, or a dense stage tensor
    /// whose size is not its largest region's bytes (the split tensor and a resident input
    /// are whole, sized by their shape).
    pub(crate) fn check_patches(&self, origin: &str) -> Result<()> {
        let Some(p) = &self.patches else {
            return Ok(());
        };
        let bad = |m: String| {
            Err(Error::new(format!("{origin} has a bad patch plan: {m}"))
                .help("regenerate it with planner-build rather than editing it by hand"))
        };
        let Some(&split) = self
            .ops
            .get(p.split as usize)
            .and_then(|o| o.outputs.first())
        else {
            return bad(format!("split op {} is not an op with an output", p.split));
        };
        if p.tensor(split).is_none() {
            return bad(format!("split tensor #{split} has no regions"));
        }
        let inputs: Vec<u32> = self.inputs.iter().map(|io| io.tensor).collect();
        let n = p.patches();
        for e in &p.tensors {
            let Some(t) = self.tensors.get(e.tensor as usize) else {
                return bad(format!(
                    "tensor #{} is past the last of {}",
                    e.tensor,
                    self.tensors.len()
                ));
            };
            let [1, h, w, _] = t.shape[..] else {
                return bad(format!(
                    "tensor `{}` has shape {:?}, not [1, H, W, C]",
                    t.id, t.shape
                ));
            };
            if e.regions.len() != n {
                return bad(format!(
                    "tensor `{}` has {} regions for a {}x{} grid",
                    t.id,
                    e.regions.len(),
                    p.grid[0],
                    p.grid[1]
                ));
            }
            if let Some(r) = e
                .regions
                .iter()
                .find(|r| r[0] as u64 + r[2] as u64 > h || r[1] as u64 + r[3] as u64 > w)
            {
                return bad(format!(
                    "tensor `{}` ({h}x{w}) has region {r:?} outside it",
                    t.id
                ));
            }
            let dense = p
                .dense_elements(e.tensor, Some(split), &inputs, &t.shape)
                .and_then(|n| t.dtype.bytes_for(n));
            if let Some(d) = dense
                && d != t.size
            {
                return bad(format!(
                    "tensor `{}` takes {} bytes, but its largest region takes {d}",
                    t.id, t.size
                ));
            }
        }
        Ok(())
    }

    /// Refuses a quantization scale that is not finite. A number past f32's range reads as
    /// infinite, which the file cannot hold again (JSON writes it as null), as the planner
    /// refuses it in a model. For model plan files and each model of a group plan file.
    pub(crate) fn check_scales(&self, origin: &str) -> Result<()> {
        for t in &self.tensors {
            if let Some(s) = t
                .quantization
                .as_ref()
                .and_then(Quantization::non_finite_scale)
            {
                return Err(Error::new(format!(
                    "{origin}: tensor `{}` has quantization scale {s}, which is not a finite f32 (a value past 3.4e38 reads as infinite)",
                    t.id
                ))
                .help("rebuild the plan with planner-build rather than editing it by hand"));
            }
        }
        Ok(())
    }

    /// Refuses control entries ([`PlanFile::control`]) that code generation could not
    /// trust: ranges outside the op list or crossing each other, a tensor number out of
    /// range, a condition not live where it is read, a tensor that crosses a loop's edge
    /// without living over the whole loop, a condition that is not a bool tensor, or a once
    /// flag that is not a one-element bool variable.
    pub(crate) fn check_control(&self, origin: &str) -> Result<()> {
        let fail = |m: String| {
            Error::new(format!("{origin}: {m}"))
                .help("rebuild the plan with planner-build rather than editing it by hand")
        };
        let nt = self.tensors.len();
        control::check(&self.control, self.ops.len(), nt).map_err(fail)?;
        for (i, c) in self.control.iter().enumerate() {
            let t = &self.tensors[c.tensor() as usize];
            let elements: Option<u64> = t.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
            let bad = match c {
                Control::Once { .. } => {
                    t.dtype != DType::Bool || t.kind != TensorKind::Variable || elements != Some(1)
                }
                _ => t.dtype != DType::Bool || elements.is_none_or(|n| n == 0),
            };
            if bad {
                return Err(fail(format!(
                    "control entry {i} ({}) reads tensor `{}` ({} {:?}, {:?}), but a condition is a bool tensor with an element and a once flag a one-element bool variable",
                    c.name(),
                    t.id,
                    t.dtype.name(),
                    t.shape,
                    t.kind
                )));
            }
        }
        let live = |t: u32| {
            self.tensors
                .get(t as usize)
                .map(|e| (e.lifetime.start_op, e.lifetime.end_op))
        };
        let name = |t: u32| {
            self.tensors
                .get(t as usize)
                .map_or_else(|| format!("#{t}"), |e| format!("`{}`", e.id))
        };
        let n = u32::try_from(nt).unwrap_or(u32::MAX);
        control::check_lifetimes(&self.control, &live, n, &name).map_err(fail)
    }

    /// The index of the tensor with id `id`.
    pub fn tensor(&self, id: &str) -> Option<usize> {
        self.tensors.iter().position(|t| t.id == id)
    }

    /// The arena of tensor `t`, when its index is in range.
    pub fn arena_of(&self, t: &TensorEntry) -> Option<&ArenaEntry> {
        self.arenas.get(t.arena as usize)
    }
}

/// Refuses a plan file whose `format_version` is not [`FORMAT_VERSION`], before looking at
/// anything else.
pub(crate) fn check_version(text: &str, origin: &str) -> Result<()> {
    #[derive(Deserialize)]
    struct Version {
        format_version: Option<serde_json::Value>,
    }
    let version: Version = serde_json::from_str(text).map_err(|e| {
        Error::new(format!("{origin} is not a plan file: {e}"))
            .help("regenerate it with planner-build")
    })?;
    match version.format_version {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(FORMAT_VERSION)) => {
            Ok(())
        }
        Some(v) => Err(Error::new(format!(
            "{origin} has plan format version {v}, but this planner reads only version {FORMAT_VERSION}; rebuild it with the same planner version as planner-macros (cargo clean -p <your crate>, then build)"
        ))),
        None => Err(Error::new(format!(
            "{origin} has no format_version, so it is not a plan file; regenerate it with planner-build"
        ))),
    }
}

impl core::fmt::Display for PlanFile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "plan of model `{}`: {} arenas, {} tensors, {} ops ({})",
            self.model,
            self.arenas.len(),
            self.tensors.len(),
            self.ops.len(),
            self.plan_hash
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::patch::{PatchInput, PatchPlan, PatchTensor};

    /// A small plan file built by hand: `x -> RELU -> y`, both int8 `[1, 2, 2, 1]` in one
    /// scratch arena, with its plan hash.
    pub(crate) fn relu() -> PlanFile {
        let tensor = |id: &str, offset: u64, lifetime: (u32, u32)| TensorEntry {
            id: id.to_string(),
            name: id.to_string(),
            dtype: DType::I8,
            shape: vec![1, 2, 2, 1],
            size: 4,
            kind: TensorKind::Activation,
            quantization: Some(Quantization {
                scale: vec![0.5],
                zero_point: vec![-1],
                axis: 0,
            }),
            lifetime: Lifetime {
                start_op: lifetime.0,
                end_op: lifetime.1,
            },
            arena: 0,
            offset,
            alignment: 16,
            alias_of: None,
        };
        let mut file = PlanFile {
            format_version: FORMAT_VERSION,
            generator: "test".to_string(),
            model: "relu".to_string(),
            kernels: KernelSet::Reference,
            plan_hash: String::new(),
            memories: vec![MemoryEntry {
                name: "SRAM".to_string(),
                budget: Some(64),
            }],
            arenas: vec![ArenaEntry {
                name: crate::naming::arena_name(ArenaRole::Scratch, "SRAM"),
                role: ArenaRole::Scratch,
                memory: "SRAM".to_string(),
                source_memory: "SRAM".to_string(),
                size: 32,
                budget: Some(64),
                alignment: 16,
                section: Some(crate::naming::zeroed_section(
                    "relu",
                    ArenaRole::Scratch,
                    "SRAM",
                )),
                blob: None,
                app_bound: false,
            }],
            tensors: vec![tensor("x", 0, (0, 0)), tensor("y", 16, (0, 0))],
            ops: vec![OpEntry {
                opcode: "RELU".to_string(),
                inputs: vec![Some(0)],
                outputs: vec![1],
                scratch: vec![],
                options: OpOptions::None,
                in_place: None,
                prepared: None,
                kernel_scratch: Vec::new(),
            }],
            inputs: vec![IoEntry {
                name: "x".to_string(),
                tensor: 0,
            }],
            outputs: vec![IoEntry {
                name: "y".to_string(),
                tensor: 1,
            }],
            patches: None,
            control: Vec::new(),
        };
        file.plan_hash = hash_text(file.hash());
        file
    }

    fn text(f: &PlanFile) -> String {
        String::from_utf8(f.to_bytes()).unwrap()
    }

    #[test]
    fn round_trips_with_its_hash() {
        let f = relu();
        assert_eq!(f.hash_value(), Some(f.hash()));
        assert!(f.plan_hash.starts_with("fnv1a64:") && f.plan_hash.len() == 24);
        let bytes = f.to_bytes();
        assert_eq!(bytes.last(), Some(&b'\n'));
        let back = PlanFile::parse(&text(&f), "relu.plan.json").unwrap();
        assert_eq!(back, f);
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(f.tensor("y"), Some(1));
        assert_eq!(f.arena_of(&f.tensors[1]).map(|a| a.size), Some(32));
        assert_eq!(
            f.to_string(),
            format!(
                "plan of model `relu`: 1 arenas, 2 tensors, 1 ops ({})",
                f.plan_hash
            )
        );
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    /// Version 4's additions: the kernel set and each op's prepared input and kernel
    /// scratch are written only when set, read back as written, and a file without them is
    /// a reference plan.
    #[test]
    fn round_trips_prepared_ops() {
        let reference = relu();
        let plain = text(&reference);
        for key in ["kernels", "prepared", "kernel_scratch"] {
            assert!(!plain.contains(key), "{key} in {plain}");
        }
        let mut f = reference.clone();
        f.kernels = KernelSet::Optimized;
        f.ops[0].inputs.extend([None, None, Some(1)]);
        f.ops[0].prepared = Some(PreparedEntry {
            layout: PreparedLayout::RequantV1,
            input: 3,
        });
        f.ops[0].scratch = vec![0];
        f.ops[0].kernel_scratch = vec![0];
        f.plan_hash = hash_text(f.hash());
        let t = text(&f);
        assert!(t.contains("\"kernels\": \"optimized\""), "{t}");
        let compact: String = t.split_whitespace().collect();
        assert!(
            compact
                .contains(r#""prepared":{"layout":"requant-v1","input":3},"kernel_scratch":[0]"#),
            "{t}"
        );
        let back = PlanFile::parse(&t, "p.plan.json").unwrap();
        assert_eq!(back, f);
        assert_ne!(back.hash(), reference.hash());
        let e = PlanFile::parse(&t.replace("requant-v1", "requant-v9"), "p.plan.json").unwrap_err();
        assert!(e.message().contains("requant-v9"), "{}", e.message());
        let e =
            PlanFile::parse(&t.replace("\"optimized\"", "\"fast\""), "p.plan.json").unwrap_err();
        assert!(e.message().contains("fast"), "{}", e.message());
    }

    #[test]
    fn rejects_other_versions_and_garbage() {
        let e = PlanFile::parse(r#"{"format_version": 99}"#, "x.plan.json").unwrap_err();
        assert!(e.message().contains("version 99"), "{}", e.message());
        assert!(e.message().contains("reads only version 6"));
        for old in [1, 2, 3, 4, 5] {
            let e = PlanFile::parse(&format!(r#"{{"format_version": {old}}}"#), "old.plan.json")
                .unwrap_err();
            assert!(e.message().contains("rebuild"), "{}", e.message());
        }
        let e = PlanFile::parse("{}", "x.plan.json").unwrap_err();
        assert!(e.message().contains("no format_version"));
        assert!(PlanFile::parse("nope", "x").is_err());
        let e = PlanFile::parse(r#"{"format_version": 6, "model": 3}"#, "x").unwrap_err();
        assert!(e.message().contains("not a valid plan file"));
        assert_eq!(
            e.help_text(),
            Some("regenerate it with planner-build rather than editing it by hand")
        );
    }

    #[test]
    fn rejects_a_scale_past_f32() {
        let t = text(&relu());
        let huge = t.replacen("0.5", "70798160296587914266e76", 1);
        let e = PlanFile::parse(&huge, "x.plan.json").unwrap_err();
        assert_eq!(
            e.message(),
            "x.plan.json: tensor `x` has quantization scale inf, which is not a finite f32 (a value past 3.4e38 reads as infinite)"
        );
    }

    #[test]
    fn rejects_a_patch_plan_it_cannot_trust() {
        let mut f = relu();
        let whole = |t: u32| PatchTensor {
            tensor: t,
            regions: vec![[0, 0, 1, 2], [1, 0, 1, 2]],
        };
        f.patches = Some(PatchPlan {
            split: 0,
            grid: [2, 1],
            input: PatchInput::Resident,
            tensors: vec![whole(0), whole(1)],
            macs: 0,
            patch_macs: 0,
        });
        assert!(PlanFile::parse(&text(&f), "p").is_ok());
        let bad = |edit: &dyn Fn(&mut PatchPlan)| {
            let mut g = f.clone();
            edit(g.patches.as_mut().unwrap());
            PlanFile::parse(&text(&g), "p.plan.json")
                .unwrap_err()
                .message()
                .to_string()
        };
        assert_eq!(
            bad(&|p| p.split = 7),
            "p.plan.json has a bad patch plan: split op 7 is not an op with an output"
        );
        assert_eq!(
            bad(&|p| p.tensors[0].regions[1] = [1, 1, 1, 2]),
            "p.plan.json has a bad patch plan: tensor `x` (2x2) has region [1, 1, 1, 2] outside it"
        );
        assert_eq!(
            bad(&|p| p.tensors[1].regions.pop().map(drop).unwrap_or(())),
            "p.plan.json has a bad patch plan: tensor `y` has 1 regions for a 2x1 grid"
        );
        // Streamed, the input is dense: one region of 2 bytes, not its 4.
        assert_eq!(
            bad(&|p| p.input = PatchInput::Streamed),
            "p.plan.json has a bad patch plan: tensor `x` takes 4 bytes, but its largest region takes 2"
        );
    }
}
