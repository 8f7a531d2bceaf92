//! The model graph every importer produces: tensors and operators in execution order.
//!
//! A [`Graph`] is what the rest of the pipeline reads. Importers (inline manifest graphs,
//! `.tflite` files, MiniMalloc CSV problems) build one; nothing downstream knows where it
//! came from.

use std::string::{String, ToString};
use std::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::error::Error;
pub use crate::rt::options::OpOptions;
#[doc(inline)]
pub use planner_planfile::{
    Control, DType, KernelSet, OpRange, PreparedLayout, Quantization, TensorKind, alias_root,
};

/// Index of a tensor in [`Graph::tensors`]. Plans name tensors by [`Tensor::id`] instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TensorIndex(pub u32);

impl TensorIndex {
    /// The index as a `usize`, for indexing [`Graph::tensors`].
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// One tensor of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// Stable id used in plans and placement rules (the subgraph index for TFLite models).
    pub id: String,
    /// Human name (the TFLite tensor name; the id for inline graphs without one).
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Shape; empty for scalars.
    pub shape: Vec<u64>,
    /// Bytes the tensor takes.
    pub size: u64,
    /// What the tensor is.
    pub kind: TensorKind,
    /// Quantisation, when the tensor is quantised.
    pub quantization: Option<Quantization>,
    /// Extra alignment the tensor asks for (a power of two), beyond its dtype's.
    pub align_hint: Option<u64>,
    /// Constant bytes; `None` for non-constants, and for constants planned by size only.
    #[serde(skip)]
    pub data: Option<std::sync::Arc<[u8]>>,
}

impl Tensor {
    /// Number of elements (product of the shape; 1 for a scalar), `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// A tensor for unit tests: named `id`, unquantised, a constant when it has `data` and
    /// an activation otherwise, its size what the shape takes.
    #[cfg(test)]
    pub(crate) fn fixture(id: &str, dtype: DType, shape: &[u64], data: Option<Vec<u8>>) -> Tensor {
        Tensor {
            id: id.into(),
            name: id.into(),
            dtype,
            shape: shape.to_vec(),
            size: dtype.bytes_for(shape.iter().product()).unwrap_or(0),
            kind: if data.is_some() {
                TensorKind::Constant
            } else {
                TensorKind::Activation
            },
            quantization: None,
            align_hint: None,
            data: data.map(std::sync::Arc::from),
        }
    }
}

impl Tensor {
    /// Checks what generated code relies on: an alignment it can make, finite quantisation
    /// scales (they become `f32` literals), and a size that is exactly the shape's elements
    /// (a typed view of the tensor has that many elements).
    fn validate(&self, dense: Option<u64>) -> Result<(), Error> {
        let id = &self.id;
        if let Some(a) = self.align_hint
            && a > crate::rt::MAX_ALIGN
        {
            return Err(Error::model(format!(
                "tensor `{id}` asks for alignment {a}, above {}, the largest alignment generated arenas support; use a power of two up to {}",
                crate::rt::MAX_ALIGN,
                crate::rt::MAX_ALIGN
            )));
        }
        if let Some(q) = &self.quantization
            && let Some(s) = q.non_finite_scale()
        {
            return Err(Error::model(format!(
                "tensor `{id}` has quantization scale {s}, which is not a finite number; give finite scales"
            )));
        }
        if self.size > crate::plan::MAX_ARENA {
            return Err(Error::infeasible(format!(
                "tensor `{id}` takes {} bytes, more than {}, the largest arena a 32-bit target can address; it does not fit any memory",
                self.size,
                crate::plan::MAX_ARENA
            )));
        }
        let Some(bits) = self.dtype.bits() else {
            return Ok(());
        };
        // A dense tensor of a patch stage takes its largest region's bytes.
        let want = match dense {
            Some(d) => Some(d),
            None => self.elements().and_then(|e| self.dtype.bytes_for(e)),
        };
        // A sparse constant from a `.tflite` file is planned at its stored bytes, fewer than
        // its dense shape takes.
        let sparse = self.kind == TensorKind::Constant
            && self
                .data
                .as_ref()
                .is_some_and(|d| d.len() as u64 == self.size)
            && want.is_some_and(|w| self.size < w);
        if want != Some(self.size) && !sparse {
            let bytes = match want {
                Some(b) => format!("{b} bytes"),
                None => "more bytes than fit in 64 bits".to_string(),
            };
            return Err(Error::model(format!(
                "tensor `{id}` has {} bytes but its shape {:?} of {} ({bits} bits each) takes {bytes}; make the size {} times the element count",
                self.size,
                self.shape,
                self.dtype.name(),
                if bits >= 8 {
                    (bits / 8).to_string()
                } else {
                    format!("{bits}/8")
                },
            )));
        }
        Ok(())
    }
}

/// One operator, in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Op {
    /// Operator name: the builtin name (`"CONV_2D"`) or `"CUSTOM:<code>"`.
    pub opcode: String,
    /// Inputs; `None` for an optional input left out.
    pub inputs: Vec<Option<TensorIndex>>,
    /// Outputs.
    pub outputs: Vec<TensorIndex>,
    /// Op-local tensors (TFLite intermediates, kernel scratch): live only during this op.
    pub scratch: Vec<TensorIndex>,
    /// Typed options (strides, padding, activation, axes, ...); [`OpOptions::None`] when the
    /// importer reads none for this op (inline and CSV graphs, custom ops).
    #[serde(default, deserialize_with = "planner_planfile::deserialize_op_options")]
    pub options: OpOptions,
}

impl Op {
    /// Every tensor the op touches: inputs, outputs, then scratch.
    pub fn tensors(&self) -> impl Iterator<Item = TensorIndex> + '_ {
        self.inputs
            .iter()
            .flatten()
            .copied()
            .chain(self.outputs.iter().copied())
            .chain(self.scratch.iter().copied())
    }

    /// An op for tests: `opcode` from `inputs` (tensor numbers; `None` for an optional input
    /// left out) to tensor `output`, with `options` and no scratch.
    #[cfg(any(test, feature = "fixture"))]
    pub(crate) fn fixture(
        opcode: &str,
        inputs: &[Option<u32>],
        output: u32,
        options: OpOptions,
    ) -> Op {
        Op {
            opcode: opcode.into(),
            inputs: inputs.iter().map(|i| i.map(TensorIndex)).collect(),
            outputs: vec![TensorIndex(output)],
            scratch: vec![],
            options,
        }
    }
}

/// A named model input or output (a signature name where the model has one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoName {
    /// Signature name, or the tensor's own name.
    pub name: String,
    /// The tensor.
    pub tensor: TensorIndex,
}

/// A model graph: tensors, operators in execution order, inputs and outputs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// Model name.
    pub name: String,
    /// Every tensor; [`TensorIndex`] indexes this.
    pub tensors: Vec<Tensor>,
    /// Operators in execution order.
    pub ops: Vec<Op>,
    /// Model inputs (live from op 0).
    pub inputs: Vec<IoName>,
    /// Model outputs (live to the last op).
    pub outputs: Vec<IoName>,
    /// Aliases: `(alias, target)` pairs where `alias` is `target`'s bytes (a reshape's output
    /// is its input). The alias takes the target's slot; lifetimes merge.
    pub aliases: Vec<(TensorIndex, TensorIndex)>,
    /// What the importer accepted with a caveat (a dynamic signature dimension planned with
    /// the size in `shape`); reports print these beside the plan's own warnings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Ops that run in place (`memory.in_place = true`): each output
    /// written over an input that dies at its op. Unlike an alias, the two are tensors of
    /// their own that share bytes at that op only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_place: Vec<InPlaceOp>,
    /// PADs folded into the convolution that consumes them (`memory.in_place = true`): they
    /// left `ops`, and their padded output left the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folded_pads: Vec<FoldedPad>,
    /// The patch-based first stage ([`crate::patch`], `memory.patches`), with graph tensor
    /// indices: its ops are `ops[0..=split]`, each dense stage tensor's `size` is its
    /// largest region's bytes, and the split tensor (and a resident input) stays whole and
    /// lives from op 0 through the stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patches: Option<planner_planfile::patch::PatchPlan>,
    /// The kernel set the graph was prepared for (the `prepare` pass, `[kernels] set`);
    /// the reference set prepares nothing.
    #[serde(default, skip_serializing_if = "KernelSet::is_reference")]
    pub kernels: KernelSet,
    /// What the `prepare` pass added to ops for [`Graph::kernels`]: one entry per op it
    /// gave a prepared constant input or kernel scratch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prepared: Vec<PreparedOp>,
    /// The op ranges of other subgraphs that run conditionally, in a loop or once (a
    /// `.tflite` model's `IF`, `WHILE` and `CALL_ONCE`: the importer puts each subgraph's
    /// ops where the op stood), with graph tensor indices; see
    /// [`planner_planfile::control`]. Empty for a model of one subgraph.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control: Vec<Control>,
}

/// What the `prepare` pass added to one op. The op is named by its first output, as an
/// [`InPlaceOp`] is, so a new op order keeps the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreparedOp {
    /// The op's first output.
    pub output: TensorIndex,
    /// The constant input added (one of the op's inputs) and its layout.
    pub constant: Option<(PreparedLayout, TensorIndex)>,
    /// The kernel scratch tensors added (some of the op's scratch tensors).
    pub scratch: Vec<TensorIndex>,
}

/// An op that runs in place: `output` starts at `input`'s offset (before it with
/// [`InPlaceOp::rows`]); `input` ends at the op (its last reader) and `output` starts there. The op is `output`'s producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InPlaceOp {
    /// The input whose bytes the output takes over.
    pub input: TensorIndex,
    /// The output written over it.
    pub output: TensorIndex,
    /// The op's temporary (a depthwise convolution's copy of one input channel), one of the
    /// op's scratch tensors.
    pub temp: Option<TensorIndex>,
    /// Row overlap (`memory.row_overlap`): `output` starts before `input`, which starts at
    /// least [`Rows::min_shift`](crate::rt::rows::Rows::min_shift) elements later inside
    /// `output`'s slot, and the op computes its rows from the top (see [`crate::rt::rows`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rows: bool,
}

/// A PAD (or PADV2) folded into the convolution that consumed its output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedPad {
    /// `PAD` or `PADV2`.
    pub opcode: String,
    /// The PAD's index among the ops of the graph it was folded in.
    pub op: u32,
    /// The PAD's output, which left the plan.
    pub padded: TensorIndex,
    /// The convolution's output (names the convolution that now pads).
    pub consumer_output: TensorIndex,
    /// The convolution's explicit padding, `[top, bottom, left, right]` (the PAD's amounts
    /// plus the convolution's own SAME padding).
    pub pads: [i32; 4],
}

impl Graph {
    /// The tensor at `index`.
    pub fn tensor(&self, index: TensorIndex) -> &Tensor {
        &self.tensors[index.get()]
    }

    /// What the `prepare` pass added to `op` (found by its first output), if anything.
    pub fn prepared_of(&self, op: &Op) -> Option<&PreparedOp> {
        let out = op.outputs.first()?;
        self.prepared.iter().find(|p| p.output == *out)
    }

    /// The op that writes `t`, if any.
    pub fn producer(&self, t: TensorIndex) -> Option<usize> {
        self.ops.iter().position(|op| op.outputs.contains(&t))
    }

    /// Finds a tensor by id.
    pub fn find(&self, id: &str) -> Option<TensorIndex> {
        self.tensors
            .iter()
            .position(|t| t.id == id)
            .and_then(|i| u32::try_from(i).ok())
            .map(TensorIndex)
    }

    /// The bytes a dense tensor of the patch stage takes (its largest region's); `None` for
    /// a tensor sized by its shape (no patches, outside the stage, the split tensor, a
    /// resident input).
    pub fn dense_size(&self, index: TensorIndex) -> Option<u64> {
        let plan = self.patches.as_ref()?;
        let t = self.tensors.get(index.get())?;
        let split = self
            .ops
            .get(plan.split as usize)
            .and_then(|o| o.outputs.first())
            .map(|s| s.0);
        let inputs: Vec<u32> = self.inputs.iter().map(|io| io.tensor.0).collect();
        t.dtype
            .bytes_for(plan.dense_elements(index.0, split, &inputs, &t.shape)?)
    }

    /// Checks the graph's own consistency: ids unique, every index in range, sizes match
    /// shapes, alignment hints powers of two. Importers call it before returning.
    pub fn validate(&self) -> Result<(), Error> {
        let n = self.tensors.len();
        if u32::try_from(n).is_err() {
            return Err(Error::model(format!(
                "model `{}` has {n} tensors, more than 2^32; split the model",
                self.name
            )));
        }
        let mut ids = std::collections::HashSet::with_capacity(n);
        for (i, t) in self.tensors.iter().enumerate() {
            if !ids.insert(t.id.as_str()) {
                return Err(Error::model(format!(
                    "tensor id `{}` is used twice in model `{}`; give each tensor its own id",
                    t.id, self.name
                )));
            }
            if let Some(a) = t.align_hint
                && !a.is_power_of_two()
            {
                return Err(Error::model(format!(
                    "tensor `{}` asks for alignment {a}, which is not a power of two; use 1, 2, 4, 8, 16, ...",
                    t.id
                )));
            }
            t.validate(self.dense_size(TensorIndex(i as u32)))?;
        }
        let check = |i: TensorIndex, what: &str| -> Result<(), Error> {
            if i.get() >= n {
                Err(Error::model(format!(
                    "{what} names tensor index {} but model `{}` has only {n} tensors",
                    i.0, self.name
                )))
            } else {
                Ok(())
            }
        };
        for (k, op) in self.ops.iter().enumerate() {
            for t in op.tensors() {
                check(t, &format!("op {k} ({})", op.opcode))?;
            }
            for t in op.outputs.iter().chain(&op.scratch) {
                let t = self.tensor(*t);
                if t.kind == TensorKind::Constant {
                    return Err(Error::model(format!(
                        "op {k} ({}) of model `{}` writes constant tensor `{}` ({}); constants are read-only, so the op's output must be an activation or a variable",
                        op.opcode, self.name, t.id, t.name
                    )));
                }
            }
        }
        for io in self.inputs.iter().chain(&self.outputs) {
            check(io.tensor, &format!("model input/output `{}`", io.name))?;
        }
        for &(a, b) in &self.aliases {
            check(a, "an alias")?;
            check(b, "an alias")?;
        }
        planner_planfile::control::check(&self.control, self.ops.len(), n).map_err(|m| {
            Error::model(format!("model `{}`: {m}", self.name))
        })?;
        for p in &self.prepared {
            let constant = p.constant.iter().map(|&(_, t)| t);
            for t in std::iter::once(p.output).chain(constant).chain(p.scratch.iter().copied()) {
                check(t, "a prepared op")?;
            }
        }
        Ok(())
    }
}
