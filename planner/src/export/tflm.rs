//! A `.tflite` model carrying our plan in the form TensorFlow Lite Micro's offline planner
//! reads: the `OfflineMemoryAllocation` metadata entry.
//!
//! # The format (TFLM's `memory_management.md`)
//!
//! A `Metadata` entry of the model named `OfflineMemoryAllocation` names a buffer whose bytes
//! are little-endian 32-bit integers: the format version, the number of subgraphs, the
//! number of offsets `n`, then `n` offsets, one per tensor of every subgraph in order (the
//! tensors of subgraph 0 first). An offset is the tensor's byte offset from the start of
//! TFLM's non-persistent ("head") section of the arena; `-1` lets TFLM plan the tensor at run
//! time. TFLM ignores the version and the subgraph count, requires `n` to be the total
//! number of tensors, takes lifetimes from its own walk of the graph, and plans everything
//! marked `-1` (and the scratch buffers kernels request) around the fixed offsets.
//!
//! [`offsets`] turns a plan of subgraph 0 into that list: each tensor of the single scratch
//! arena gets its offset; constants (read in place from the model), variables (TFLM keeps
//! them in its persistent tail), zero-size and unused tensors, and every tensor of other
//! subgraphs get `-1`. The plan must be of the model's own op order without aliases, since
//! TFLM runs the file's order and gives each tensor its own bytes.
//!
//! # How the file is rewritten
//!
//! [`write()`] keeps every byte of the original and prepends a new head: a root offset and
//! the `TFL3` identifier, a new `Model` table whose fields point at the original's vectors
//! (operator codes, subgraphs, description, signatures, the deprecated metadata buffer), a
//! `buffers` vector of the original buffers plus one holding the offsets, and a `metadata`
//! vector of the original entries (an earlier `OfflineMemoryAllocation` is replaced) plus
//! the new one. Flatbuffer offsets are relative, so the original's tables and vectors keep
//! their meaning when shifted; the head's length is a multiple of 64, so every alignment
//! the original had is kept. Two things would not survive a shift and are refused: buffers
//! stored outside the flatbuffer at absolute `offset`s (models over 2 GiB), and `Model`
//! fields newer than this writer. [`read`] reads the entry back.

use std::string::String;
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{DType, Graph, Tensor, TensorIndex, TensorKind};
use crate::manifest::{Manifest, ModelSource};
use crate::pipeline::Planned;
use crate::plan::ArenaRole;

/// The metadata name TFLM looks for.
pub const METADATA_NAME: &str = "OfflineMemoryAllocation";

/// The format version written in the first word (TFLM ignores it).
pub const FORMAT_VERSION: i32 = 0;

/// The length of the new head is a multiple of this, so the original keeps its alignment.
const HEAD_ALIGN: usize = 64;

/// `Model` field ids (TFLite schema).
const MODEL_VERSION: u16 = 0;
const MODEL_SUBGRAPHS: u16 = 2;
const MODEL_BUFFERS: u16 = 4;
const MODEL_METADATA: u16 = 6;
/// Fields this writer knows; ids 1, 2, 3, 5 and 7 are offsets it re-points.
const MODEL_FIELDS: u16 = 8;

/// An offline plan as stored in the metadata buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfflinePlan {
    /// Word 0: the format version.
    pub version: i32,
    /// Word 1: the number of subgraphs.
    pub subgraphs: i32,
    /// One offset per tensor of every subgraph; `-1`: planned by TFLM.
    pub offsets: Vec<i32>,
}

pub use crate::rt::op_kinds::TflmScratch as KernelScratch;

/// The rule of `opcode` (the `TFLM scratch` column of the op-kind table,
/// [`crate::rt::op_kinds::OP_KINDS`], measured with the `tflite-micro` package on one-op
/// models: `scripts/tflm_kernel_scratch.py`, figures in
/// `tests/data/tflm_kernel_scratch_ops.csv`, checked by
/// `planner/tests/tflm_kernel_scratch.rs`); `None` when the exporter does not know its
/// kernel's scratch.
#[doc(hidden)]
pub fn kernel_scratch_rule(opcode: &str) -> Option<KernelScratch> {
    crate::rt::op_kinds::OpKind::of(opcode).and_then(|k| k.tflm_scratch)
}

/// The buffer TFLM's `CONV_2D`, `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED` ask for at
/// `Prepare` to unpack an `INT4` filter into, one byte per element, as `(op, bytes)`: the
/// importer unpacked the filters of `g` at build time (so [`reference_kernel_scratch`] sees
/// int8 filters), the file `bytes` TFLM runs still packs them.
fn int4_unpack_scratch(bytes: &[u8], path: &std::path::Path, g: &Graph) -> Result<Vec<(usize, u64)>> {
    let packed = crate::import::tflite::int4::packed_tensors(bytes, path)?;
    if packed.is_empty() {
        return Ok(Vec::new());
    }
    let kinds = crate::import::tflite::int4::INT4_FILTER_KINDS;
    Ok(g.ops
        .iter()
        .enumerate()
        .filter(|(_, op)| kinds.contains(&op.opcode.as_str()))
        .filter_map(|(k, op)| {
            let f = op.inputs.get(1).copied().flatten()?;
            packed.contains(&f.get()).then_some(())?;
            Some((k, g.tensors.get(f.get())?.elements()?))
        })
        .collect())
}

/// Scratch buffers TFLM's reference kernels ask for at `Prepare`
/// (`RequestScratchBufferInArena`), live during their op only, as `(op, bytes)` in request
/// order: TFLM plans them at run time around the offline offsets, so a plan that leaves no
/// room for them at their op makes TFLM put them on top. The rules are [`kernel_scratch_rule`]'s.
///
/// Errors on an op whose kernel is not in the table, unless `known` holds its index (the
/// user said its scratch with `--kernel-scratch`): leaving it out could make TFLM's arena
/// larger than with TFLM's own plan.
#[doc(hidden)]
pub fn reference_kernel_scratch(g: &Graph, known: &[usize]) -> Result<Vec<(usize, u64)>> {
    let tensor = |t: Option<TensorIndex>| t.and_then(|t| g.tensors.get(t.get()));
    let dim = |t: Option<TensorIndex>, k: usize| tensor(t).and_then(|t| t.shape.get(k).copied());
    let words = |n: u64| n.saturating_mul(4);
    let mut out = Vec::new();
    for (k, op) in g.ops.iter().enumerate() {
        let Some(rule) = kernel_scratch_rule(&op.opcode) else {
            if known.contains(&k) {
                continue;
            }
            return Err(Error::input(format!(
                "op {k} (`{}`) of model `{}` has a TFLM kernel whose scratch buffers the exporter does not know, so TFLM could plan them above the exported plan; measure them (scripts/tflm_kernel_scratch.py) and pass `--kernel-scratch {k}=BYTES` (`{k}=0` when the kernel requests none)",
                op.opcode, g.name
            )));
        };
        let input = op.inputs.first().copied().flatten();
        let output = op.outputs.first().copied();
        let integer = tensor(input).is_some_and(|t| t.dtype != DType::F32);
        match rule {
            KernelScratch::None => {}
            KernelScratch::Svdf => {
                let feature = op.inputs.get(1).copied().flatten();
                let (Some(batch), Some(filters), Some(units)) =
                    (dim(input, 0), dim(feature, 0), dim(output, 1))
                else {
                    continue;
                };
                out.push((k, words(batch.saturating_mul(filters))));
                if integer {
                    out.push((k, words(batch.saturating_mul(units))));
                }
            }
            KernelScratch::Lstm => {
                let cell = tensor(op.inputs.get(19).copied().flatten());
                let Some(cell) = cell else { continue };
                let elements = cell.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d));
                let bytes = elements.saturating_mul(cell.dtype.align());
                out.extend(std::iter::repeat_n((k, bytes), 4));
            }
            KernelScratch::Rfft => {
                let length = match op.options {
                    crate::rt::options::OpOptions::SignalRfft(o) => u64::try_from(o.fft_length).unwrap_or(0),
                    _ => 0,
                };
                let Some(bytes) = tensor(input).and_then(|t| t.dtype.bytes_for(length)) else {
                    continue;
                };
                out.push((k, bytes));
            }
            KernelScratch::DetectionPostprocess => {
                let crate::rt::options::OpOptions::DetectionPostprocess(o) = op.options else {
                    continue;
                };
                let predictions = op.inputs.get(1).copied().flatten();
                let (Some(n), Some(p1), Some(p2)) =
                    (dim(input, 1), dim(predictions, 1), dim(predictions, 2))
                else {
                    continue;
                };
                let d = u64::try_from(o.max_detections).unwrap_or(0);
                let c = u64::try_from(o.num_classes).unwrap_or(0);
                let dn = words(d.saturating_mul(n));
                out.extend([
                    n,
                    n.saturating_mul(16),
                    words(p1.saturating_mul(p2)),
                    words(n),
                    words(n),
                    dn,
                    dn,
                    words(n),
                    dn,
                    words(c.max(d).saturating_mul(n)),
                    words(n.min(d).saturating_mul(n)),
                ]
                .map(|bytes| (k, bytes)));
            }
            KernelScratch::MirrorPad => {
                let rank = tensor(input).map_or(0, |t| t.shape.len() as u64);
                out.extend([(k, words(rank)), (k, words(rank))]);
            }
            KernelScratch::AddN => {
                let inputs = op.inputs.iter().flatten().count() as u64;
                out.push((k, inputs.saturating_mul(8)));
            }
            KernelScratch::MeanOrSum | KernelScratch::MinMax => {
                let rank = tensor(input).map_or(0, |t| t.shape.len() as u64);
                let axes = tensor(op.inputs.get(1).copied().flatten()).map_or(0, |t| {
                    t.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
                });
                out.push((k, words(rank)));
                out.push((k, words(axes)));
                let small_int =
                    tensor(input).is_some_and(|t| matches!(t.dtype, DType::I8 | DType::I16));
                if rule == KernelScratch::MeanOrSum && small_int {
                    let elements = tensor(output).map_or(0, |t| {
                        t.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
                    });
                    out.push((k, words(elements)));
                }
            }
        }
    }
    Ok(out)
}

/// `g` with one op-local `u8` tensor per `(op, bytes)` of `scratch`, appended after the
/// model's tensors (ids `kernel_scratch/<op>/<n>`), so a plan leaves room for them.
#[doc(hidden)]
pub fn with_kernel_scratch(g: &Graph, scratch: &[(usize, u64)]) -> Result<Graph> {
    let mut g = g.clone();
    for (n, &(k, bytes)) in scratch.iter().enumerate() {
        let ops = g.ops.len();
        let index = TensorIndex(
            u32::try_from(g.tensors.len())
                .map_err(|_| Error::model(format!("model `{}` has too many tensors", g.name)))?,
        );
        let op = g.ops.get_mut(k).ok_or_else(|| {
            Error::input(format!(
                "kernel scratch for op {k}, but model `{}` has {ops} ops (0 to {})",
                g.name,
                ops.saturating_sub(1)
            ))
        })?;
        op.scratch.push(index);
        g.tensors.push(Tensor {
            id: format!("kernel_scratch/{k}/{n}"),
            name: format!("scratch buffer of op {k} ({})", op.opcode),
            dtype: DType::U8,
            shape: vec![bytes],
            size: bytes,
            kind: TensorKind::Activation,
            quantization: None,
            align_hint: None,
            data: None,
        });
    }
    Ok(g)
}

/// TFLM runs an `IF`, `WHILE` or `CALL_ONCE` as one step of subgraph 0, every tensor the
/// op touches live over the whole step, and plans the other subgraphs' tensors itself around
/// the offline offsets. So the plan exported treats every control entry as a loop over its
/// span (a tensor that lives into or out of it, the condition included, lives over all of
/// it), which gives subgraph 0's tensors TFLM's lifetimes; only theirs are exported.
fn as_tflm_steps(control: &mut [crate::graph::Control]) {
    use crate::graph::{Control, OpRange};
    for c in control {
        let span = c.span();
        let (cond, split) = match *c {
            Control::If { cond, then_ops, .. } => (cond, then_ops.end),
            Control::While { cond, cond_ops, .. } => (cond, cond_ops.end),
            Control::Once { flag, .. } => (flag, span.end),
        };
        *c = Control::While {
            cond,
            cond_ops: OpRange {
                start: span.start,
                end: split,
            },
            body_ops: OpRange {
                start: split,
                end: span.end,
            },
        };
    }
}

/// The offline offsets of `planned` (a plan of subgraph 0 of a model whose first
/// `model_tensors` tensors are the file's subgraph 0, with `total_tensors` tensors over all
/// subgraphs; tensors after those, such as kernel scratch, get no entry). Errors when the
/// plan has more than one scratch arena, a reordered schedule or aliases (TFLM could not
/// follow it), or an offset past `i32::MAX`.
#[doc(hidden)]
pub fn offsets(planned: &Planned, model_tensors: usize, total_tensors: usize) -> Result<Vec<i32>> {
    let g = &planned.graph;
    let scratch: Vec<&String> = planned.plan.arena_usages.keys().collect();
    if scratch.len() > 1 {
        return Err(Error::input(format!(
            "model `{}` is planned over {} scratch arenas ({}), but TFLM has one arena; plan it with one writable memory for scratch",
            planned.model,
            scratch.len(),
            scratch
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if planned
        .order
        .iter()
        .enumerate()
        .any(|(k, &o)| o as usize != k)
    {
        return Err(Error::input(format!(
            "model `{}` is planned in a reordered schedule, but TFLM runs the file's op order; plan it with schedule = \"fixed\"",
            planned.model
        )));
    }
    if !g.aliases.is_empty() {
        return Err(Error::input(format!(
            "model `{}` is planned with {} in-place aliases, but TFLM gives each tensor its own bytes; plan it without alias_reshapes",
            planned.model,
            g.aliases.len()
        )));
    }
    if total_tensors < model_tensors || g.tensors.len() < model_tensors {
        return Err(Error::model(format!(
            "model `{}` has {model_tensors} tensors in subgraph 0, {} planned and {total_tensors} in all subgraphs; export the model the plan was made of",
            planned.model,
            g.tensors.len()
        )));
    }
    let mut out = vec![-1i32; total_tensors];
    for (i, t, b) in planned.bound_tensors(Some(ArenaRole::Scratch)) {
        if i >= model_tensors || t.kind != TensorKind::Activation || t.size == 0 {
            continue;
        }
        let Some(slot) = out.get_mut(i) else {
            continue;
        };
        *slot = i32::try_from(b.offset).map_err(|_| {
            Error::input(format!(
                "tensor `{}` of model `{}` is at offset {}, past the 2^31-1 bytes TFLM's offline plan can say",
                t.id, planned.model, b.offset
            ))
        })?;
    }
    Ok(out)
}

/// A bounds-checked view of a flatbuffer: every read is `None` past the end.
#[derive(Clone, Copy)]
struct Fb<'a>(&'a [u8]);

impl<'a> Fb<'a> {
    fn bytes<const N: usize>(self, pos: usize) -> Option<[u8; N]> {
        self.0.get(pos..pos.checked_add(N)?)?.try_into().ok()
    }
    fn u16(self, pos: usize) -> Option<u16> {
        self.bytes(pos).map(u16::from_le_bytes)
    }
    fn u32(self, pos: usize) -> Option<u32> {
        self.bytes(pos).map(u32::from_le_bytes)
    }
    fn i32(self, pos: usize) -> Option<i32> {
        self.bytes(pos).map(i32::from_le_bytes)
    }
    /// The target of the unsigned offset stored at `pos`.
    fn deref(self, pos: usize) -> Option<usize> {
        pos.checked_add(self.u32(pos)? as usize)
    }
    /// The vtable of the table at `table`: its position and length in bytes.
    fn vtable(self, table: usize) -> Option<(usize, u16)> {
        let vt = (table as i64).checked_sub(i64::from(self.i32(table)?))?;
        let vt = usize::try_from(vt).ok()?;
        Some((vt, self.u16(vt)?))
    }
    /// The position of field `id` of the table at `table`, `None` when absent.
    fn field(self, table: usize, id: u16) -> Option<usize> {
        let (vt, len) = self.vtable(table)?;
        let entry = 4 + 2 * usize::from(id);
        if entry + 2 > usize::from(len) {
            return None;
        }
        match self.u16(vt + entry)? {
            0 => None,
            off => table.checked_add(usize::from(off)),
        }
    }
    /// The elements of the vector of offsets stored (by offset) in field `id`: each
    /// element's target position.
    fn tables(self, table: usize, id: u16) -> Option<Vec<usize>> {
        let Some(f) = self.field(table, id) else {
            return Some(Vec::new());
        };
        let v = self.deref(f)?;
        let n = self.u32(v)? as usize;
        if n > self.0.len() / 4 {
            return None;
        }
        (0..n).map(|i| self.deref(v + 4 + 4 * i)).collect()
    }
    /// The bytes of the `[ubyte]` or string in field `id`.
    fn byte_vector(self, table: usize, id: u16) -> Option<&'a [u8]> {
        let v = self.deref(self.field(table, id)?)?;
        let n = self.u32(v)? as usize;
        self.0.get(v + 4..(v + 4).checked_add(n)?)
    }
    fn root(self) -> Option<usize> {
        if self.0.get(4..8)? != b"TFL3" {
            return None;
        }
        // A root whose vtable cannot be read is damage, not a model without fields.
        let root = self.deref(0)?;
        self.vtable(root)?;
        Some(root)
    }
}

/// Number of tensors of each subgraph of the `.tflite` flatbuffer `bytes`.
pub fn tensor_counts(bytes: &[u8]) -> Result<Vec<usize>> {
    let fb = Fb(bytes);
    let corrupt =
        || Error::model("the model's subgraphs cannot be read; check the file with `planner plan`");
    let root = fb.root().ok_or_else(corrupt)?;
    let mut out = Vec::new();
    for sg in fb.tables(root, MODEL_SUBGRAPHS).ok_or_else(corrupt)? {
        out.push(fb.tables(sg, 0).ok_or_else(corrupt)?.len());
    }
    Ok(out)
}

/// The offline plan stored in `bytes`, `None` when the model has none.
pub fn read(bytes: &[u8]) -> Result<Option<OfflinePlan>> {
    let fb = Fb(bytes);
    let corrupt = |what: &str| {
        Error::model(format!(
            "the model's {what} cannot be read; the file is damaged"
        ))
    };
    let root = fb.root().ok_or_else(|| corrupt("root table"))?;
    let metadata = fb
        .tables(root, MODEL_METADATA)
        .ok_or_else(|| corrupt("metadata"))?;
    let buffers = fb
        .tables(root, MODEL_BUFFERS)
        .ok_or_else(|| corrupt("buffers"))?;
    let mut found = None;
    for m in metadata {
        if fb.byte_vector(m, 0) != Some(METADATA_NAME.as_bytes()) {
            continue;
        }
        let index = fb.field(m, 1).and_then(|f| fb.u32(f)).unwrap_or(0) as usize;
        let buffer = *buffers.get(index).ok_or_else(|| {
            Error::model(format!(
                "the {METADATA_NAME} metadata names buffer {index}, but the model has {} buffers",
                buffers.len()
            ))
        })?;
        let data = fb.byte_vector(buffer, 0).unwrap_or(&[]);
        found = Some(parse_words(data)?);
    }
    Ok(found)
}

fn parse_words(data: &[u8]) -> Result<OfflinePlan> {
    if !data.len().is_multiple_of(4) || data.len() < 12 {
        return Err(Error::model(format!(
            "the {METADATA_NAME} buffer has {} bytes; it must be 3 or more 32-bit words",
            data.len()
        )));
    }
    let words: Vec<i32> = data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let n = words[2];
    if usize::try_from(n).ok() != Some(words.len() - 3) {
        return Err(Error::model(format!(
            "the {METADATA_NAME} buffer says {n} offsets but holds {}",
            words.len() - 3
        )));
    }
    Ok(OfflinePlan {
        version: words[0],
        subgraphs: words[1],
        offsets: words[3..].to_vec(),
    })
}

/// A growing head with fix-ups: offsets to later head items, and to positions in the
/// original (known once the head's length is).
#[derive(Default)]
struct Head {
    buf: Vec<u8>,
    /// `(field position, original position)`.
    to_original: Vec<(usize, usize)>,
}

impl Head {
    fn align(&mut self, a: usize) {
        while !self.buf.len().is_multiple_of(a) {
            self.buf.push(0);
        }
    }
    fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Writes a placeholder offset; returns its position for [`Head::point`].
    fn slot(&mut self) -> usize {
        let p = self.buf.len();
        self.u32(0);
        p
    }
    /// Makes the offset at `slot` point at the head's current end.
    fn point(&mut self, slot: usize) {
        let v = (self.buf.len() - slot) as u32;
        self.buf[slot..slot + 4].copy_from_slice(&v.to_le_bytes());
    }
    /// An offset to position `pos` of the original.
    fn original(&mut self, pos: usize) {
        let slot = self.slot();
        self.to_original.push((slot, pos));
    }
    /// A vtable for a table whose fields are 4 bytes each at ids `present`, then the table's
    /// `soffset`; returns the table's position. Fields follow in the order given.
    fn table(&mut self, fields: &[u16]) -> usize {
        self.align(4);
        let count = fields.iter().max().map_or(0, |&m| m + 1);
        let vt = self.buf.len();
        self.u16(4 + 2 * count);
        self.u16(4 + 4 * fields.len() as u16);
        for id in 0..count {
            let at = fields.iter().position(|&f| f == id);
            self.u16(at.map_or(0, |k| 4 + 4 * k as u16));
        }
        self.align(4);
        let table = self.buf.len();
        self.u32((table - vt) as u32);
        table
    }
    /// Finishes: pads to [`HEAD_ALIGN`], resolves offsets into the original, appends it.
    fn finish(mut self, original: &[u8]) -> Vec<u8> {
        self.align(HEAD_ALIGN);
        let shift = self.buf.len();
        for (slot, pos) in std::mem::take(&mut self.to_original) {
            let v = (pos + shift - slot) as u32;
            self.buf[slot..slot + 4].copy_from_slice(&v.to_le_bytes());
        }
        self.buf.extend_from_slice(original);
        self.buf
    }
}

/// The root table, the buffer tables and the metadata tables (without an earlier offline
/// plan) of a model that can be shifted behind a new head: one this writer knows every
/// root field of, without buffers at absolute file offsets.
fn movable(fb: Fb<'_>) -> Result<(usize, Vec<usize>, Vec<usize>)> {
    let corrupt = |what: &str| {
        Error::model(format!(
            "the model's {what} cannot be read; the file is damaged"
        ))
    };
    let root = fb.root().ok_or_else(|| corrupt("root table"))?;
    if fb.0.len() > i32::MAX as usize / 2 {
        return Err(Error::input(format!(
            "the model has {} bytes; export writes models under 1 GiB",
            fb.0.len()
        )));
    }
    let (vt, vt_len) = fb.vtable(root).ok_or_else(|| corrupt("root table"))?;
    for id in MODEL_FIELDS..(vt_len.saturating_sub(4) / 2) {
        if fb.u16(vt + 4 + 2 * usize::from(id)) != Some(0) {
            return Err(Error::input(format!(
                "the model's root table has field {id}, newer than this writer knows; export needs a model of the TFLite schema with fields 0 to 7"
            )));
        }
    }
    let buffers = fb
        .tables(root, MODEL_BUFFERS)
        .ok_or_else(|| corrupt("buffers"))?;
    for (i, &b) in buffers.iter().enumerate() {
        if fb
            .field(b, 1)
            .and_then(|f| fb.bytes::<8>(f))
            .map(u64::from_le_bytes)
            > Some(1)
        {
            return Err(Error::input(format!(
                "buffer {i} is stored outside the flatbuffer (a model over 2 GiB); export cannot move it"
            )));
        }
    }
    let metadata: Vec<usize> = fb
        .tables(root, MODEL_METADATA)
        .ok_or_else(|| corrupt("metadata"))?
        .into_iter()
        .filter(|&m| fb.byte_vector(m, 0) != Some(METADATA_NAME.as_bytes()))
        .collect();
    Ok((root, buffers, metadata))
}

/// The model `bytes` with `plan` as its `OfflineMemoryAllocation` metadata (replacing one it
/// had); every other table, vector and byte of the original is kept unchanged.
pub fn write(bytes: &[u8], plan: &OfflinePlan) -> Result<Vec<u8>> {
    let fb = Fb(bytes);
    let (root, buffers, metadata) = movable(fb)?;
    let corrupt = |what: &str| {
        Error::model(format!(
            "the model's {what} cannot be read; the file is damaged"
        ))
    };
    let offsets_of = [1u16, 2, 3, 5, 7];
    let mut fields: Vec<u16> = (0..MODEL_FIELDS)
        .filter(|&id| id == MODEL_BUFFERS || id == MODEL_METADATA || fb.field(root, id).is_some())
        .collect();
    fields.sort_unstable();

    let mut h = Head::default();
    let root_slot = h.slot();
    h.buf.extend_from_slice(b"TFL3");
    let model = h.table(&fields);
    h.point_at(root_slot, model);
    let mut buffers_slot = 0;
    let mut metadata_slot = 0;
    for &id in &fields {
        match id {
            MODEL_VERSION => {
                let v = fb.field(root, id).and_then(|f| fb.u32(f)).unwrap_or(0);
                h.u32(v);
            }
            MODEL_BUFFERS => buffers_slot = h.slot(),
            MODEL_METADATA => metadata_slot = h.slot(),
            _ if offsets_of.contains(&id) => {
                let target = fb.field(root, id).and_then(|f| fb.deref(f));
                h.original(target.ok_or_else(|| corrupt("root table"))?);
            }
            _ => h.u32(0),
        }
    }
    // buffers: the original ones, then the plan's.
    h.point(buffers_slot);
    h.u32(buffers.len() as u32 + 1);
    for &b in &buffers {
        h.original(b);
    }
    let new_buffer_slot = h.slot();
    // metadata: the original entries, then the plan's.
    h.point(metadata_slot);
    h.u32(metadata.len() as u32 + 1);
    for &m in &metadata {
        h.original(m);
    }
    let new_metadata_slot = h.slot();
    let entry = h.table(&[0, 1]);
    h.point_at(new_metadata_slot, entry);
    let name_slot = h.slot();
    h.u32(buffers.len() as u32);
    h.point(name_slot);
    h.u32(METADATA_NAME.len() as u32);
    h.buf.extend_from_slice(METADATA_NAME.as_bytes());
    h.buf.push(0);
    let buffer = h.table(&[0]);
    h.point_at(new_buffer_slot, buffer);
    let data_slot = h.slot();
    // The words start 16-aligned: TFLM reads them as `int32_t`.
    while !(h.buf.len() + 4).is_multiple_of(16) {
        h.buf.push(0);
    }
    h.point(data_slot);
    let words = words(plan)?;
    h.u32((words.len() * 4) as u32);
    for w in words {
        h.buf.extend_from_slice(&w.to_le_bytes());
    }
    Ok(h.finish(bytes))
}

impl Head {
    /// Makes the offset at `slot` point at head position `target` (after it).
    fn point_at(&mut self, slot: usize, target: usize) {
        let v = (target - slot) as u32;
        self.buf[slot..slot + 4].copy_from_slice(&v.to_le_bytes());
    }
}

fn words(plan: &OfflinePlan) -> Result<Vec<i32>> {
    let n = i32::try_from(plan.offsets.len()).map_err(|_| {
        Error::input(format!(
            "{} offsets do not fit TFLM's 32-bit count",
            plan.offsets.len()
        ))
    })?;
    let mut w = vec![plan.version, plan.subgraphs, n];
    w.extend_from_slice(&plan.offsets);
    Ok(w)
}

/// The offline plan of `planned` for the model `bytes` (one offset per tensor of all its
/// subgraphs), ready for [`write()`].
pub(crate) fn plan_for(bytes: &[u8], planned: &Planned) -> Result<OfflinePlan> {
    let counts = tensor_counts(bytes)?;
    let first = counts.first().copied().unwrap_or(0);
    Ok(OfflinePlan {
        version: FORMAT_VERSION,
        subgraphs: i32::try_from(counts.len()).unwrap_or(i32::MAX),
        offsets: offsets(planned, first, counts.iter().sum())?,
    })
}

/// A finished export: the model's new bytes and what went into them.
#[derive(Debug, Clone)]
pub struct Export {
    /// The exported model.
    pub bytes: Vec<u8>,
    /// The offline plan it carries.
    pub offline: OfflinePlan,
    /// The plan (of subgraph 0, with the kernel scratch tensors after the model's).
    pub planned: Planned,
    /// Kernel scratch buffers room was left for, as `(op, bytes)`.
    pub kernel_scratch: Vec<(usize, u64)>,
    /// Offsets that are not `-1`.
    pub fixed: usize,
    /// TFLM's head with the exported plan: the plan's height rounded up to TFLM's 16 bytes
    /// (TFLM rounds every buffer, offline ones too, up to 16 bytes).
    pub head: u64,
    /// TFLM's head with its own plan of the same buffers (the `tflm` planner's height):
    /// `head` is never larger.
    pub tflm_head: u64,
    /// The planner asked for, when its plan needed more than TFLM's own and the export
    /// carries TFLM's own plan instead.
    pub replaced: Option<String>,
}

/// TFLM's head for a plan of `planned`'s scratch arena: its height rounded up to 16.
fn tflm_head_of(planned: &Planned) -> u64 {
    let used = planned
        .plan
        .arena_usages
        .values()
        .map(|a| a.used)
        .max()
        .unwrap_or(0);
    crate::pack::tflm::head(used)
}

/// Plans the model `bytes` (the file `manifest` names; its platform should have one
/// writable memory for scratch and keep the op order; `memory.in_place` is ignored: TFLM
/// runs the classic plan), leaving room for the reference kernels' scratch
/// ([`reference_kernel_scratch`]) and `extra` (whose ops count as known), writes the offline
/// plan into it, and checks the result with [`verify_export`].
///
/// TFLM's arena is never larger than with TFLM's own plan: when the manifest's planner
/// needs more (after TFLM's rounding) than the `tflm` planner on the same buffers, the
/// export carries the `tflm` planner's plan, unless `keep_planner` (a planner the user
/// named) says to export that planner's plan as it is.
pub fn export(
    bytes: &[u8],
    manifest: &Manifest,
    extra: &[(usize, u64)],
    keep_planner: bool,
) -> Result<Export> {
    let path = match &manifest.source {
        ModelSource::File(p) => p.clone(),
        ModelSource::Inline(_) | ModelSource::Graph(_) => {
            return Err(Error::input(
                "export needs a .tflite model; this manifest has an inline graph",
            ));
        }
    };
    let mut graph = crate::import::tflite::parse(bytes, &path)?;
    graph.name = manifest.name.clone();
    // The bundled kernels' op-local scratch (tensors the importer adds after the file's):
    // TFLM's kernels request their own, added below.
    let file_tensors = tensor_counts(bytes)?.first().copied().unwrap_or(0);
    for op in &mut graph.ops {
        op.scratch.retain(|t| t.get() < file_tensors);
    }
    let known: Vec<usize> = extra.iter().map(|e| e.0).collect();
    let mut kernel_scratch = reference_kernel_scratch(&graph, &known)?;
    kernel_scratch.extend(int4_unpack_scratch(bytes, &path, &graph)?);
    kernel_scratch.extend_from_slice(extra);
    let mut graph = with_kernel_scratch(&graph, &kernel_scratch)?;
    as_tflm_steps(&mut graph.control);
    // TFLM runs every op out of place and cannot pad inside a convolution: a manifest with
    // `memory.in_place` exports its classic plan.
    let classic;
    let manifest = if manifest.aliasing.runs_in_place() {
        let mut m = manifest.clone();
        m.aliasing.in_place = false;
        m.aliasing.in_place_ops.clear();
        classic = m;
        &classic
    } else {
        manifest
    };
    let mut planned = crate::plan_graph(manifest, &graph)?;
    let mut replaced = None;
    let tflm_head = if manifest.planner == crate::pack::PlannerKind::Tflm {
        tflm_head_of(&planned)
    } else {
        let mut m = manifest.clone();
        m.planner = crate::pack::PlannerKind::Tflm;
        let own = crate::plan_graph(&m, &graph)?;
        let own_head = tflm_head_of(&own);
        if tflm_head_of(&planned) > own_head && !keep_planner {
            replaced = Some(planned.planner.clone());
            planned = own;
        }
        own_head
    };
    let offline = plan_for(bytes, &planned)?;
    let out = write(bytes, &offline)?;
    let fixed = verify_export(bytes, &out, &planned)?;
    Ok(Export {
        bytes: out,
        offline,
        head: tflm_head_of(&planned),
        planned,
        kernel_scratch,
        fixed,
        tflm_head,
        replaced,
    })
}

/// A check of an exported model against its plan: the model's graph reads back unchanged
/// and its offline offsets are the plan's (`planned` may hold kernel scratch tensors after
/// the model's own). Returns the number of offsets that are not `-1`.
pub fn verify_export(original: &[u8], exported: &[u8], planned: &Planned) -> Result<usize> {
    let path = std::path::Path::new(&planned.model);
    let before = crate::import::tflite::parse(original, path)?;
    let after = crate::import::tflite::parse(exported, path)?;
    if before != after {
        return Err(Error::model(format!(
            "model `{}` reads back differently after export; please report it",
            planned.model
        )));
    }
    let stored = read(exported)?.ok_or_else(|| {
        Error::model(format!(
            "the exported model `{}` has no {METADATA_NAME} metadata; please report it",
            planned.model
        ))
    })?;
    let want = plan_for(original, planned)?;
    if stored != want {
        return Err(Error::model(format!(
            "the exported model `{}` holds other offsets than its plan; please report it",
            planned.model
        )));
    }
    Ok(stored.offsets.iter().filter(|&&o| o >= 0).count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let p = OfflinePlan {
            version: 0,
            subgraphs: 1,
            offsets: vec![-1, 0, 16, -1],
        };
        let bytes: Vec<u8> = words(&p)
            .unwrap()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        assert_eq!(parse_words(&bytes).unwrap(), p);
        let e = parse_words(&bytes[..bytes.len() - 4]).unwrap_err();
        assert!(e.message().contains("says 4 offsets but holds 3"), "{e}");
        assert!(parse_words(&bytes[..6]).is_err());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bytes in [&b""[..], b"\x08\0\0\0TFL3", b"\xff\xff\xff\x7fTFL3\0\0\0\0"] {
            assert!(read(bytes).is_err(), "{bytes:?}: {:?}", read(bytes));
            assert!(tensor_counts(bytes).is_err());
            let p = OfflinePlan {
                version: 0,
                subgraphs: 1,
                offsets: vec![],
            };
            assert!(write(bytes, &p).is_err());
        }
    }
}
