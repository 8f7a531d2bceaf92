//! The plan file: everything `include_model!` needs, written by `planner-build` into
//! `OUT_DIR` as JSON, versioned.
//!
//! It is self-describing: the model's name; its memories with their budgets; each arena
//! with role, memory, source memory, size, budget, alignment and section name; each placed
//! tensor with id, name, dtype, shape, size, quantisation, lifetime and binding (arena,
//! offset, alignment); the operators in order with their inputs, outputs and scratch; the
//! model's named inputs and outputs; and a plan hash (FNV-1a 64 over the file's canonical
//! bytes) that the Rust expansion and the C header both carry, so code built against one
//! plan can tell when it meets another.
//!
//! [`PlanFile::from_plan`] builds one from a graph and its [`MemoryPlan`];
//! [`PlanFile::parse`] reads one back and rejects a `format_version` it does not know;
//! [`PlanFile::blobs`] lays out the weight blob of each constant arena. A group of models
//! planned together has a group plan file ([`group::GroupPlanFile`]): the group's arenas and
//! each model's plan file inside; [`group::read`] reads either kind.

mod entries;
pub mod group;
pub use crate::naming;
pub use crate::patch_plan as patch;

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::graph::{DType, Graph, OpOptions, Quantization, TensorIndex, TensorKind};
use crate::plan::{ArenaRole, MemoryConstraint, MemoryPlan};
use entries::{arena_entries, op_entries, patches, renumber, tensor_entries};

/// The format version this build writes and reads.
///
/// History (older versions are refused with a message saying to rebuild):
/// - 1: one model; arenas, tensors, ops (opcode, inputs, outputs, scratch), inputs, outputs.
/// - 2: this release. Every addition of this release goes under version 2 (see the fields'
///   docs); it is bumped once per release, not once per field. Added so far: each op's
///   typed `options` ([`OpEntry::options`]: strides, padding, activation, axes, ... and the
///   constant operands that parameterise the op); group plan files ([`group::GroupPlanFile`],
///   told apart by their `group` field: several models over shared arenas, each model's
///   plan inside). Single-model plan files are unchanged by groups.
/// - 3: ops that run in place ([`OpEntry::in_place`]: an output written over an input that
///   dies at the op, and the op's temporary) and PADs folded into the convolution that
///   consumes them ([`Padding::Explicit`](crate::rt::options::Padding::Explicit) with the
///   convolution's per-side `pads`). Version 2 files are refused with "rebuild".
///   Patch-based execution of the first stage ([`PlanFile::patches`]) is an addition of the
///   same release, so it goes under version 3 too: a file without `patches` reads as one
///   run per layer.
pub const FORMAT_VERSION: u32 = 3;

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
    /// `role.MEMORY` ([`naming::arena_name`]).
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
}

/// How an op runs in place: output `output` starts at the offset of input `input` (in the
/// same arena), which the op is the last to read. The two tensors share bytes at this op
/// only: the input's lifetime ends at the op and the output's starts there. The `const`
/// check and the verifier accept that overlap, and no other.
///
/// The generated `run()` calls the kind's in-place kernel method (`*InPlace` traits of
/// `rt::kernel`) for such an op, whose view shows the input as
/// [`Data::InPlace`](crate::rt::kernel::Data::InPlace) of the output, and the output's
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

/// What the plan needs from the platform that a [`MemoryPlan`] does not record.
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

impl LayoutSource for crate::manifest::Manifest {
    fn layout(&self) -> Layout {
        Layout {
            min_alignment: self.platform.min_alignment,
            constraints: self
                .platform
                .memories
                .iter()
                .map(|m| crate::plan::MemoryConstraint {
                    name: m.name.clone(),
                    max_size: self.budget(&m.name),
                    arena_alignment: Some(self.memory_alignment(&m.name)),
                    app_bound: self.constraint(&m.name).is_some_and(|c| c.app_bound),
                })
                .collect(),
        }
    }
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

fn hash_text(h: u64) -> String {
    format!("fnv1a64:{h:016x}")
}

/// The hash `hash_text` wrote; `None` when `text` is not `fnv1a64:<16 hex digits>`.
fn parse_hash(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("fnv1a64:")?;
    (hex.len() == 16)
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
}

impl PlanFile {
    /// Builds the plan file of `graph` planned as `plan`: one entry per placed tensor, the
    /// arenas of the plan, the ops with their tensors renumbered. Errors when an op or an
    /// input or output uses a tensor the plan did not place, or the plan names an arena it
    /// does not have.
    pub fn from_plan(graph: &Graph, plan: &MemoryPlan, layout: &Layout) -> Result<PlanFile> {
        let model = graph.name.clone();
        let (memories, arenas, arena_index) = arena_entries(&model, plan, layout);
        let (tensors, number) = tensor_entries(graph, plan, layout, &arena_index)?;
        let ops = op_entries(graph, &number)?;
        let io = |list: &[crate::graph::IoName], kind: &str| -> Result<Vec<IoEntry>> {
            list.iter()
                .map(|io| {
                    Ok(IoEntry {
                        name: io.name.clone(),
                        tensor: renumber(graph, &number, io.tensor, &|| {
                            format!("model {kind} `{}`", io.name)
                        })?,
                    })
                })
                .collect()
        };
        let mut file = PlanFile {
            format_version: FORMAT_VERSION,
            generator: format!("planner {}", env!("CARGO_PKG_VERSION")),
            model: model.clone(),
            plan_hash: String::new(),
            memories,
            arenas,
            tensors,
            ops,
            inputs: io(&graph.inputs, "input")?,
            outputs: io(&graph.outputs, "output")?,
            patches: patches(graph, &number)?,
        };
        // Blob hashes need the blobs; the plan hash then covers them.
        let blobs = file.blobs(graph)?;
        for (a, blob) in &blobs.blobs {
            if let Some(b) = file.arenas[*a].blob.as_mut() {
                b.hash = hash_text(fnv1a64(blob));
            }
        }
        file.plan_hash = hash_text(file.hash());
        Ok(file)
    }

    /// The plan hash: FNV-1a 64 over the canonical JSON of the file with `plan_hash` empty.
    pub fn hash(&self) -> u64 {
        let mut canonical = self.clone();
        canonical.plan_hash = String::new();
        // Serialising plain data to a Vec cannot fail; an empty hash input would still be
        // a stable value.
        fnv1a64(&serde_json::to_vec(&canonical).unwrap_or_default())
    }

    /// The plan hash as a number, parsed from [`PlanFile::plan_hash`]; `None` when the field
    /// is not `fnv1a64:<16 hex digits>`.
    pub fn hash_value(&self) -> Option<u64> {
        parse_hash(&self.plan_hash)
    }

    /// The file's bytes: pretty JSON with a trailing newline. Same plan, same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// Reads a plan file; `origin` names it in errors. Rejects a `format_version` other
    /// than [`FORMAT_VERSION`] before looking at anything else.
    pub fn parse(text: &str, origin: &str) -> Result<PlanFile> {
        check_version(text, origin)?;
        let file: PlanFile = serde_json::from_str(text).map_err(|e| {
            Error::input(format!("{origin} is not a valid plan file: {e}"))
                .help("regenerate it with planner-build rather than editing it by hand")
        })?;
        file.check_scales(origin)?;
        file.check_patches(origin)?;
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
            Err(Error::input(format!("{origin} has a bad patch plan: {m}"))
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
            let dense =
                crate::patch::dense_size(p, e.tensor, Some(split), &inputs, t.dtype, &t.shape);
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
                return Err(Error::input(format!(
                    "{origin}: tensor `{}` has quantization scale {s}, which is not a finite f32 (a value past 3.4e38 reads as infinite)",
                    t.id
                ))
                .help("rebuild the plan with planner-build rather than editing it by hand"));
            }
        }
        Ok(())
    }

    /// Lays out the blob of every constant arena: the arena's size in bytes, each constant
    /// tensor's bytes copied at its offset (repacked: weights in a `.tflite` file are often
    /// not aligned), padding zero. Aliases of a constant share its bytes and are skipped.
    /// A constant planned without bytes (by size only) is left zero and reported in
    /// [`Blobs::warnings`].
    pub fn blobs(&self, graph: &Graph) -> Result<Blobs> {
        let mut out = Blobs::default();
        for (a, arena) in self.arenas.iter().enumerate() {
            if arena.role != ArenaRole::Constant {
                continue;
            }
            let size = usize::try_from(arena.size).map_err(|_| {
                Error::input(format!(
                    "constant arena {} of {} bytes does not fit this machine's memory",
                    arena.name, arena.size
                ))
            })?;
            let mut bytes = vec![0u8; size];
            for t in &self.tensors {
                if t.arena as usize != a || t.alias_of.is_some() {
                    continue;
                }
                let data = graph.find(&t.id).and_then(|i| graph.tensor(i).data.clone());
                let Some(data) = data else {
                    out.warnings.push(format!(
                        "constant `{}` of model `{}` has no bytes (planned by size only); its {} bytes in arena {} are zero",
                        t.id, self.model, t.size, arena.name
                    ));
                    continue;
                };
                if data.len() as u64 != t.size {
                    return Err(Error::model(format!(
                        "constant `{}` has {} bytes of data but its size is {}; fix the model",
                        t.id,
                        data.len(),
                        t.size
                    )));
                }
                let start = usize::try_from(t.offset).ok();
                let range = start.and_then(|s| Some(s..s.checked_add(data.len())?));
                match range.and_then(|r| bytes.get_mut(r)) {
                    Some(slot) => slot.copy_from_slice(&data),
                    None => {
                        return Err(Error::input(format!(
                            "constant `{}` at offset {} ({} bytes) does not fit arena {} of {} bytes; re-plan",
                            t.id, t.offset, t.size, arena.name, arena.size
                        )));
                    }
                }
            }
            out.blobs.insert(a, bytes);
        }
        Ok(out)
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
        Error::input(format!("{origin} is not a plan file: {e}"))
            .help("regenerate it with planner-build")
    })?;
    match version.format_version {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(FORMAT_VERSION)) => {
            Ok(())
        }
        Some(v) => Err(Error::input(format!(
            "{origin} has plan format version {v}, but this planner reads only version {FORMAT_VERSION}; rebuild it with the same planner version as planner-macros (cargo clean -p <your crate>, then build)"
        ))),
        None => Err(Error::input(format!(
            "{origin} has no format_version, so it is not a plan file; regenerate it with planner-build"
        ))),
    }
}

/// The laid-out blobs of a plan's constant arenas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blobs {
    /// Blob bytes by index into [`PlanFile::arenas`].
    pub blobs: BTreeMap<usize, Vec<u8>>,
    /// Constants left zero because the graph has no bytes for them.
    pub warnings: Vec<String>,
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

/// A small planned model for tests here and in the macro and build crates: two
/// FULLY_CONNECTED ops, int8 activations in a scratch arena in SRAM, weights in a constant
/// arena in FLASH.
#[doc(hidden)]
pub mod fixture {
    use std::string::{String, ToString};
    use std::sync::Arc;
    use std::vec::Vec;

    use crate::graph::{DType, Graph, IoName, Op, Quantization, Tensor, TensorIndex, TensorKind};
    use crate::plan::{
        ArenaRole, ArenaUsage, MemoryConstraint, MemoryPlan, TensorAllocation, TensorBinding,
        TensorLifetime,
    };

    use super::Layout;

    fn tensor(id: &str, dtype: DType, shape: &[u64], kind: TensorKind, seed: u8) -> Tensor {
        let elements: u64 = shape.iter().product();
        let size = dtype.bytes_for(elements).unwrap_or(0);
        let data = (kind == TensorKind::Constant).then(|| {
            (0..size)
                .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
                .collect::<Vec<u8>>()
                .into()
        });
        Tensor {
            id: id.to_string(),
            name: format!("tiny/{id}"),
            dtype,
            shape: shape.to_vec(),
            size,
            kind,
            quantization: Some(Quantization {
                scale: vec![0.5],
                zero_point: vec![-1],
                axis: 0,
            }),
            align_hint: None,
            data: data.map(|d: Arc<[u8]>| d),
        }
    }

    /// The graph and its plan: `in -> FC(w1, b1) -> h -> FC(w2, b2) -> out`.
    pub fn tiny() -> (Graph, MemoryPlan, Layout) {
        use TensorKind::*;
        let tensors = vec![
            tensor("in", DType::I8, &[1, 4], Activation, 0),
            tensor("w1", DType::I8, &[4, 4], Constant, 1),
            tensor("b1", DType::I32, &[4], Constant, 2),
            tensor("h", DType::I8, &[1, 4], Activation, 0),
            tensor("w2", DType::I8, &[4, 4], Constant, 3),
            tensor("b2", DType::I32, &[4], Constant, 4),
            tensor("out", DType::I8, &[1, 4], Activation, 0),
        ];
        let t = |i: u32| TensorIndex(i);
        let graph = Graph {
            name: "tiny".to_string(),
            tensors,
            ops: vec![
                Op {
                    opcode: "FULLY_CONNECTED".to_string(),
                    inputs: vec![Some(t(0)), Some(t(1)), Some(t(2))],
                    outputs: vec![t(3)],
                    scratch: vec![],
                    options: crate::graph::OpOptions::FullyConnected(Default::default()),
                },
                Op {
                    opcode: "FULLY_CONNECTED".to_string(),
                    inputs: vec![Some(t(3)), Some(t(4)), Some(t(5))],
                    outputs: vec![t(6)],
                    scratch: vec![],
                    options: crate::graph::OpOptions::FullyConnected(Default::default()),
                },
            ],
            inputs: vec![IoName {
                name: "x".to_string(),
                tensor: t(0),
            }],
            outputs: vec![IoName {
                name: "y".to_string(),
                tensor: t(6),
            }],
            aliases: vec![],
            warnings: vec![],
            in_place: vec![],
            folded_pads: vec![],
            patches: None,
        };
        let mut plan = MemoryPlan::default();
        let mut place =
            |id: &str, role: ArenaRole, memory: &str, offset: u64, size: u64, l: (u32, u32)| {
                plan.tensor_allocs.insert(
                    id.to_string(),
                    TensorAllocation {
                        tensor_id: id.to_string(),
                        memory: memory.to_string(),
                        offset,
                        size,
                        binding: Some(TensorBinding {
                            role,
                            memory: memory.to_string(),
                            source_memory: memory.to_string(),
                            offset,
                        }),
                    },
                );
                plan.tensor_lifetimes.insert(
                    id.to_string(),
                    TensorLifetime {
                        tensor_id: id.to_string(),
                        start_op: l.0,
                        end_op: l.1,
                    },
                );
            };
        place("in", ArenaRole::Scratch, "SRAM", 0, 4, (0, 0));
        place("h", ArenaRole::Scratch, "SRAM", 16, 4, (0, 1));
        place("out", ArenaRole::Scratch, "SRAM", 0, 4, (1, 1));
        place("w1", ArenaRole::Constant, "FLASH", 0, 16, (0, 1));
        place("b1", ArenaRole::Constant, "FLASH", 16, 16, (0, 1));
        place("w2", ArenaRole::Constant, "FLASH", 32, 16, (0, 1));
        place("b2", ArenaRole::Constant, "FLASH", 48, 16, (0, 1));
        let mut scratch = ArenaUsage::new("SRAM", ArenaRole::Scratch, "SRAM", 1024, 16);
        scratch.used = 20;
        let mut constant = ArenaUsage::new("FLASH", ArenaRole::Constant, "FLASH", 4096, 16);
        constant.used = 64;
        plan.arena_usages.insert("SRAM".to_string(), scratch);
        plan.constant_arenas.insert("FLASH".to_string(), constant);
        let layout = Layout {
            min_alignment: 16,
            constraints: vec![MemoryConstraint {
                name: String::from("SRAM"),
                max_size: Some(2048),
                arena_alignment: None,
                app_bound: false,
            }],
        };
        (graph, plan, layout)
    }

    #[allow(clippy::too_many_arguments)]
    fn place(
        plan: &mut MemoryPlan,
        id: &str,
        role: ArenaRole,
        memory: &str,
        source: &str,
        offset: u64,
        size: u64,
        live: (u32, u32),
    ) {
        plan.tensor_allocs.insert(
            id.to_string(),
            TensorAllocation {
                tensor_id: id.to_string(),
                memory: memory.to_string(),
                offset,
                size,
                binding: Some(TensorBinding {
                    role,
                    memory: memory.to_string(),
                    source_memory: source.to_string(),
                    offset,
                }),
            },
        );
        plan.tensor_lifetimes.insert(
            id.to_string(),
            TensorLifetime {
                tensor_id: id.to_string(),
                start_op: live.0,
                end_op: live.1,
            },
        );
    }

    /// A model with every kind of arena: scratch and persistent in SRAM, weights staged
    /// from FLASH into DTCM, and an alias (a reshape's output is its input's bytes):
    /// `in -> FC(w) -> out`, `RESHAPE(out) -> r`, `ADD(r, state) -> state`.
    pub fn stateful() -> (Graph, MemoryPlan, Layout) {
        use TensorKind::*;
        let t = TensorIndex;
        let graph = Graph {
            name: "stateful".to_string(),
            tensors: vec![
                tensor("in", DType::I8, &[1, 4], Activation, 0),
                tensor("w", DType::I8, &[4, 4], Constant, 5),
                tensor("out", DType::I8, &[1, 4], Activation, 0),
                tensor("r", DType::I8, &[4], Activation, 0),
                tensor("state", DType::I16, &[4], Variable, 0),
            ],
            ops: vec![
                Op {
                    opcode: "FULLY_CONNECTED".to_string(),
                    inputs: vec![Some(t(0)), Some(t(1)), None],
                    outputs: vec![t(2)],
                    scratch: vec![],
                    options: crate::graph::OpOptions::FullyConnected(Default::default()),
                },
                Op {
                    opcode: "RESHAPE".to_string(),
                    inputs: vec![Some(t(2))],
                    outputs: vec![t(3)],
                    scratch: vec![],
                    options: crate::graph::OpOptions::Reshape(crate::rt::options::ReshapeOptions {
                        new_shape: crate::rt::options::Dims::new(&[4]).unwrap_or_default(),
                    }),
                },
                Op {
                    opcode: "ADD".to_string(),
                    inputs: vec![Some(t(3)), Some(t(4))],
                    outputs: vec![t(4)],
                    scratch: vec![],
                    options: crate::graph::OpOptions::Add(Default::default()),
                },
            ],
            inputs: vec![IoName {
                name: "in".to_string(),
                tensor: t(0),
            }],
            outputs: vec![IoName {
                name: "state".to_string(),
                tensor: t(4),
            }],
            aliases: vec![(t(3), t(2))],
            warnings: vec![],
            in_place: vec![],
            folded_pads: vec![],
            patches: None,
        };
        let mut plan = MemoryPlan::default();
        place(
            &mut plan,
            "in",
            ArenaRole::Scratch,
            "SRAM",
            "SRAM",
            0,
            4,
            (0, 0),
        );
        place(
            &mut plan,
            "out",
            ArenaRole::Scratch,
            "SRAM",
            "SRAM",
            16,
            4,
            (0, 2),
        );
        place(
            &mut plan,
            "r",
            ArenaRole::Scratch,
            "SRAM",
            "SRAM",
            16,
            4,
            (0, 2),
        );
        place(
            &mut plan,
            "state",
            ArenaRole::Persistent,
            "SRAM",
            "SRAM",
            0,
            8,
            (0, 2),
        );
        place(
            &mut plan,
            "w",
            ArenaRole::Constant,
            "DTCM",
            "FLASH",
            0,
            16,
            (0, 2),
        );
        let mut scratch = ArenaUsage::new("SRAM", ArenaRole::Scratch, "SRAM", 1024, 16);
        scratch.used = 20;
        let mut persistent = ArenaUsage::new("SRAM", ArenaRole::Persistent, "SRAM", 1024, 16);
        persistent.used = 8;
        let mut staged = ArenaUsage::new("DTCM", ArenaRole::Constant, "FLASH", 256, 32);
        staged.used = 16;
        plan.arena_usages.insert("SRAM".to_string(), scratch);
        plan.persistent_arenas
            .insert("SRAM".to_string(), persistent);
        plan.constant_arenas.insert("DTCM".to_string(), staged);
        let layout = Layout {
            min_alignment: 16,
            constraints: vec![],
        };
        (graph, plan, layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_round_trips() {
        let (g, p, l) = fixture::tiny();
        let f = PlanFile::from_plan(&g, &p, &l).unwrap();
        assert_eq!(f.arenas.len(), 2);
        assert_eq!(f.arenas[0].name, "scratch.SRAM");
        assert_eq!(
            f.arenas[0].section.as_deref(),
            Some(".bss.planner.tiny.scratch.sram")
        );
        assert_eq!(f.arenas[1].section, None);
        let blob = f.arenas[1].blob.as_ref().unwrap();
        assert_eq!(blob.section, ".rodata.planner.tiny.constant.flash");
        assert_eq!(f.tensors.len(), 7);
        assert_eq!(f.ops[1].inputs, vec![Some(3), Some(4), Some(5)]);
        assert_eq!(f.memories[1].budget, Some(2048));
        assert_eq!(f.hash_value(), Some(f.hash()));
        let bytes = f.to_bytes();
        let back = PlanFile::parse(std::str::from_utf8(&bytes).unwrap(), "t").unwrap();
        assert_eq!(back, f);
        // Same input, same bytes.
        assert_eq!(PlanFile::from_plan(&g, &p, &l).unwrap().to_bytes(), bytes);
    }

    #[test]
    fn blobs_hold_each_constant_at_its_offset() {
        let (g, p, l) = fixture::tiny();
        let f = PlanFile::from_plan(&g, &p, &l).unwrap();
        let b = f.blobs(&g).unwrap();
        let blob = &b.blobs[&1];
        assert_eq!(blob.len(), 64);
        let w2 = g.tensor(g.find("w2").unwrap()).data.clone().unwrap();
        assert_eq!(&blob[32..48], &w2[..]);
        assert!(b.warnings.is_empty());
    }

    #[test]
    fn rejects_other_versions_and_garbage() {
        let e = PlanFile::parse(r#"{"format_version": 99}"#, "x.plan.json").unwrap_err();
        assert!(e.message().contains("version 99"), "{}", e.message());
        assert!(e.message().contains("reads only version 3"));
        for old in [1, 2] {
            let e = PlanFile::parse(&format!(r#"{{"format_version": {old}}}"#), "old.plan.json")
                .unwrap_err();
            assert!(e.message().contains("rebuild"), "{}", e.message());
        }
        let e = PlanFile::parse("{}", "x.plan.json").unwrap_err();
        assert!(e.message().contains("no format_version"));
        assert!(PlanFile::parse("nope", "x").is_err());
        let e = PlanFile::parse(r#"{"format_version": 3, "model": 3}"#, "x").unwrap_err();
        assert!(e.message().contains("not a valid plan file"));
    }

    /// A scale past f32's range reads as infinite and would be written back as `null`,
    /// which no longer parses: refused when read (found by the `plan_file` fuzz target).
    #[test]
    fn rejects_a_scale_past_f32() {
        let (g, p, l) = fixture::tiny();
        let f = PlanFile::from_plan(&g, &p, &l).unwrap();
        let text = String::from_utf8(f.to_bytes()).unwrap();
        assert!(
            text.contains("\"scale\": [\n          0.5\n        ]"),
            "{text}"
        );
        let huge = text.replacen(
            "\"scale\": [\n          0.5\n        ]",
            "\"scale\": [70798160296587914266e76]",
            1,
        );
        let e = PlanFile::parse(&huge, "x.plan.json").unwrap_err();
        assert!(
            e.message().contains(
                "x.plan.json: tensor `in` has quantization scale inf, which is not a finite f32"
            ),
            "{}",
            e.message()
        );
    }

    #[test]
    fn unplaced_tensor_used_by_an_op_is_an_error() {
        let (g, mut p, l) = fixture::tiny();
        p.tensor_allocs.remove("h");
        let e = PlanFile::from_plan(&g, &p, &l).unwrap_err();
        assert!(e.message().contains("`h`"), "{}", e.message());
    }
}
