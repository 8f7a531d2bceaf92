//! Kernel preparation (`[kernels] set = "optimized"`): the build knows every shape and
//! weight, so what a kernel would compute on every call it computes once, and the buffers a
//! kernel needs are planned in the arena like tensors (and proven by the `const` check).
//!
//! [`RULES`] is the one table of what a kernel set asks for: per op kind, a prepared
//! constant (its [`PreparedLayout`]) or a kernel scratch buffer (its size from the op's
//! shapes, [`ScratchRule`]). [`apply`] runs the rules of one set over a graph, before the
//! op order is chosen:
//!
//! - a prepared constant is a constant tensor like any weight (placed by the manifest's
//!   rules, in the blob, the C header and the linker fragment), named `<output id>/requant`
//!   (name `<output name>/requant`), appended as the op's input 3 (input 2, the bias, may be
//!   absent). `requant-v1` is int32 `[3, c_out]`, computed by
//!   [`rt::prepare::requant_v1`](crate::rt::prepare::requant_v1), the function the kernels
//!   use too;
//! - a kernel scratch buffer is an op-local tensor (`<output id>/kernel_scratch`), the op's
//!   first scratch tensor, live at its op only, so the packer shares its bytes with every
//!   tensor not live there.
//!
//! Both are recorded in [`Graph::prepared`] and [`Graph::kernels`]; the plan file lists them
//! per op (`prepared`, `kernel_scratch`), and the generated `run()` of a plan with prepared
//! ops asks the kernel set for `rt::kernel::RequantV1`. The reference set has no rule: its
//! graph, plan and outputs are unchanged.

use std::collections::HashSet;
use std::string::String;
use std::sync::Arc;
use std::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{
    DType, Graph, KernelSet, Op, OpOptions, PreparedLayout, PreparedOp, Tensor, TensorIndex,
    TensorKind,
};
use crate::rt::options::{Padding, WeightsFormat};
use crate::rt::prepare::{FilterLayout, RequantInputs, requant_v1};

/// One row of [`RULES`]: what kernel set `set` asks for ops of kind `opcode`.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The op kind (`CONV_2D`).
    pub opcode: &'static str,
    /// The kernel set that asks for it.
    pub set: KernelSet,
    /// What the op gets.
    pub adds: Adds,
}

/// What a [`Rule`] adds to an op.
#[derive(Debug, Clone, Copy)]
pub enum Adds {
    /// A constant input of this layout, for the ops whose operands it can be computed from.
    Constant(PreparedLayout),
    /// A kernel scratch tensor.
    Scratch(ScratchRule),
}

/// A kernel scratch buffer: its size from the op's shapes.
#[derive(Debug, Clone, Copy)]
pub struct ScratchRule {
    /// Bytes the op needs, from its tensors and options; `None` (or 0) for an op that needs
    /// none.
    pub bytes: fn(&Graph, &Op) -> Option<u64>,
    /// The buffer's element type, the one the kernel reads it as.
    pub elem: ScratchElem,
    /// Alignment of the buffer (at least; the platform's may be larger).
    pub alignment: u64,
}

/// Element types of kernel scratch buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScratchElem {
    /// int8 elements (im2col rows).
    I8,
    /// int32 elements (sums), the bytes a multiple of 4.
    I32,
}

impl ScratchElem {
    /// The tensor's dtype.
    pub fn dtype(self) -> DType {
        match self {
            ScratchElem::I8 => DType::I8,
            ScratchElem::I32 => DType::I32,
        }
    }

    /// Bytes per element.
    pub fn width(self) -> u64 {
        match self {
            ScratchElem::I8 => 1,
            ScratchElem::I32 => 4,
        }
    }
}

/// What each kernel set asks for, one row per op kind and addition. The reference set asks
/// for nothing.
pub const RULES: &[Rule] = &[
    Rule {
        opcode: "CONV_2D",
        set: KernelSet::Optimized,
        adds: Adds::Constant(PreparedLayout::RequantV1),
    },
    Rule {
        opcode: "DEPTHWISE_CONV_2D",
        set: KernelSet::Optimized,
        adds: Adds::Constant(PreparedLayout::RequantV1),
    },
    Rule {
        opcode: "FULLY_CONNECTED",
        set: KernelSet::Optimized,
        adds: Adds::Constant(PreparedLayout::RequantV1),
    },
    // The im2col rows of the filter window, a few output pixels at a time.
    Rule {
        opcode: "CONV_2D",
        set: KernelSet::Optimized,
        adds: Adds::Scratch(ScratchRule {
            bytes: conv_columns,
            elem: ScratchElem::I8,
            alignment: 4,
        }),
    },
    // The gates' weight-row sums, computed once per call instead of once per step, and a
    // step's gate values.
    Rule {
        opcode: "UNIDIRECTIONAL_SEQUENCE_LSTM",
        set: KernelSet::Optimized,
        adds: Adds::Scratch(ScratchRule {
            bytes: lstm_scratch,
            elem: ScratchElem::I32,
            alignment: 4,
        }),
    },
];

/// The input position of a prepared constant.
pub const PREPARED_INPUT: usize = 3;

/// Suffix of a prepared constant's id and name.
pub const CONSTANT_SUFFIX: &str = "/requant";

/// Suffix of a kernel scratch tensor's id and name.
pub const SCRATCH_SUFFIX: &str = "/kernel_scratch";

/// The rows of [`RULES`] for ops of kind `opcode` under `set`.
pub fn rules(set: KernelSet, opcode: &str) -> impl Iterator<Item = &'static Rule> + '_ {
    RULES
        .iter()
        .filter(move |r| r.set == set && r.opcode == opcode)
}

/// An int8 `CONV_2D` that the optimized kernel runs through im2col rows (every filter but a
/// 1x1 one without padding, which it runs as a GEMM over the input pixels): room for
/// [`rt::prepare::IM2COL_ROWS`](crate::rt::prepare::IM2COL_ROWS) rows of `fh · fw · (c_in /
/// groups)` int8 elements ([`rt::prepare::im2col_bytes`](crate::rt::prepare::im2col_bytes)).
fn conv_columns(g: &Graph, op: &Op) -> Option<u64> {
    let OpOptions::Conv2d(o) = &op.options else {
        return None;
    };
    let (x, w, y) = (input(g, op, 0)?, input(g, op, 1)?, output(g, op)?);
    if [x.dtype, w.dtype, y.dtype] != [DType::I8; 3] {
        return None;
    }
    let [_, fh, fw, c] = w.shape[..] else {
        return None;
    };
    let padded = o.padding == Padding::Explicit && o.pads.as_slice().iter().any(|&p| p != 0);
    if fh == 1 && fw == 1 && !padded {
        return None;
    }
    let dim = |d: u64| usize::try_from(d).ok();
    crate::rt::prepare::im2col_bytes(dim(fh)?, dim(fw)?, dim(c)?).and_then(|b| u64::try_from(b).ok())
}

/// An int8 `UNIDIRECTIONAL_SEQUENCE_LSTM` (int8 input and input-to-forget weights
/// `[units, input]`): [`rt::prepare::lstm_scratch_len`](crate::rt::prepare::lstm_scratch_len)
/// int32 elements.
fn lstm_scratch(g: &Graph, op: &Op) -> Option<u64> {
    let (x, w) = (input(g, op, 0)?, input(g, op, 2)?);
    if [x.dtype, w.dtype] != [DType::I8; 2] {
        return None;
    }
    let [units, _] = w.shape[..] else {
        return None;
    };
    let len = crate::rt::prepare::lstm_scratch_len(usize::try_from(units).ok()?)?;
    u64::try_from(len).ok()?.checked_mul(4)
}

fn input<'g>(g: &'g Graph, op: &Op, i: usize) -> Option<&'g Tensor> {
    g.tensors.get(op.inputs.get(i).copied().flatten()?.get())
}

fn output<'g>(g: &'g Graph, op: &Op) -> Option<&'g Tensor> {
    g.tensors.get(op.outputs.first()?.get())
}

/// The kernel scratch `set`'s rules give the ops of `graph`, as `(op index, bytes)`: what
/// the set needs whether or not the graph was prepared for it (reports show the other
/// set's).
pub fn kernel_scratch(graph: &Graph, set: KernelSet) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    for (k, op) in graph.ops.iter().enumerate() {
        for r in rules(set, &op.opcode) {
            if let Adds::Scratch(s) = r.adds
                && let Some(b) = (s.bytes)(graph, op).filter(|&b| b > 0)
            {
                out.push((k, b));
            }
        }
    }
    out
}

/// Prepares `graph` for kernel set `set`: runs its [`RULES`] over every op (see the
/// module docs) and records the set in [`Graph::kernels`]. An op already prepared (listed
/// in [`Graph::prepared`]) is left as it is. The reference set changes nothing.
pub fn apply(graph: &mut Graph, set: KernelSet) -> Result<()> {
    if set == KernelSet::Reference {
        return Ok(());
    }
    graph.kernels = set;
    let mut ids: HashSet<String> = graph.tensors.iter().map(|t| t.id.clone()).collect();
    for k in 0..graph.ops.len() {
        let op = &graph.ops[k];
        let Some(out) = op.outputs.first().copied() else {
            continue;
        };
        if graph.prepared_of(op).is_some() {
            continue;
        }
        let asks: Vec<&Rule> = rules(set, &op.opcode).collect();
        let mut added = PreparedOp {
            output: out,
            constant: None,
            scratch: Vec::new(),
        };
        for r in asks {
            let op = &graph.ops[k];
            let tensor = match r.adds {
                Adds::Constant(layout) => match constant(graph, op, layout, k)? {
                    Some(t) => t,
                    None => continue,
                },
                Adds::Scratch(s) => match (s.bytes)(graph, op).filter(|&b| b > 0) {
                    Some(bytes) => scratch(bytes, s.elem, s.alignment),
                    None => continue,
                },
            };
            let index = add(graph, &mut ids, out, tensor, r.adds)?;
            let op = &mut graph.ops[k];
            match r.adds {
                Adds::Constant(layout) => {
                    op.inputs.resize(PREPARED_INPUT, None);
                    op.inputs.push(Some(index));
                    added.constant = Some((layout, index));
                }
                Adds::Scratch(_) => {
                    // Kernel scratch comes first, in rule order, before the op's own.
                    op.scratch.insert(added.scratch.len(), index);
                    added.scratch.push(index);
                }
            }
        }
        if added.constant.is_some() || !added.scratch.is_empty() {
            graph.prepared.push(added);
        }
    }
    Ok(())
}

/// Adds `tensor` to `graph`, named after the op's output `out` with the suffix of what it
/// is (`_1`, `_2`, ... appended while the id is taken).
fn add(
    graph: &mut Graph,
    ids: &mut HashSet<String>,
    out: TensorIndex,
    mut tensor: Tensor,
    adds: Adds,
) -> Result<TensorIndex> {
    let suffix = match adds {
        Adds::Constant(_) => CONSTANT_SUFFIX,
        Adds::Scratch(_) => SCRATCH_SUFFIX,
    };
    let o = graph.tensor(out);
    let (id, name) = (format!("{}{suffix}", o.id), format!("{}{suffix}", o.name));
    let fresh = (0u64..)
        .map(|n| match n {
            0 => (id.clone(), name.clone()),
            n => (format!("{id}_{n}"), format!("{name}_{n}")),
        })
        .find(|(id, _)| !ids.contains(id));
    let Some((id, name)) = fresh else {
        return Err(Error::model(format!(
            "model `{}` has no free tensor id for `{id}`; rename its tensors",
            graph.name
        )));
    };
    (tensor.id, tensor.name) = (id, name);
    let index = u32::try_from(graph.tensors.len())
        .map(TensorIndex)
        .map_err(|_| {
            Error::model(format!(
                "model `{}` has too many tensors to add `{}`; split the model",
                graph.name, tensor.id
            ))
        })?;
    ids.insert(tensor.id.clone());
    graph.tensors.push(tensor);
    Ok(index)
}

/// A kernel scratch tensor of `bytes` bytes of `elem` elements aligned to `alignment`
/// (id and name set by [`add`]).
fn scratch(bytes: u64, elem: ScratchElem, alignment: u64) -> Tensor {
    Tensor {
        id: String::new(),
        name: String::new(),
        dtype: elem.dtype(),
        shape: vec![bytes / elem.width()],
        size: bytes,
        kind: TensorKind::Activation,
        quantization: None,
        align_hint: Some(alignment),
        data: None,
    }
}

/// The prepared constant of `layout` for op `k`, `None` when the op's operands are not the
/// ones the layout is computed from.
fn constant(g: &Graph, op: &Op, layout: PreparedLayout, k: usize) -> Result<Option<Tensor>> {
    match layout {
        PreparedLayout::RequantV1 => {
            let Some(r) = Requant::of(g, op) else {
                return Ok(None);
            };
            let mut values = vec![0i32; r.channels.saturating_mul(3)];
            requant_v1(&r.inputs(), &mut values).map_err(|e| {
                Error::model(format!(
                    "op {k} ({}) of model `{}`: cannot prepare its requant-v1 constants: {e}; fix the model's filter and bias shapes, or plan with [kernels] set = \"reference\"",
                    op.opcode, g.name
                ))
            })?;
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            Ok(Some(Tensor {
                id: String::new(),
                name: String::new(),
                dtype: DType::I32,
                shape: vec![3, r.channels as u64],
                size: data.len() as u64,
                kind: TensorKind::Constant,
                quantization: None,
                align_hint: None,
                data: Some(Arc::from(data)),
            }))
        }
    }
}

/// The operands of an int8 convolution or fully-connected op that `requant-v1` is computed
/// from, decoded.
struct Requant {
    filter: Vec<i8>,
    layout: FilterLayout,
    bias: Option<Vec<i32>>,
    input: (f32, i32),
    filter_scales: Vec<f32>,
    output_scale: f32,
    channels: usize,
}

impl Requant {
    /// The operands of `op`, when it is an int8 `CONV_2D`, `DEPTHWISE_CONV_2D` or
    /// `FULLY_CONNECTED` (with its typed options, default weights format) with int8 input
    /// and output, an int8 constant filter of the kind's rank whose zero points are 0 (one
    /// scale, or one per output channel), an int32 constant bias of one element per output
    /// channel or none, and no input past the bias.
    fn of(g: &Graph, op: &Op) -> Option<Requant> {
        let (layout, rank) = match &op.options {
            OpOptions::Conv2d(_) => (FilterLayout::ChannelFirst, 4),
            OpOptions::DepthwiseConv2d(_) => (FilterLayout::ChannelLast, 4),
            OpOptions::FullyConnected(o) if o.weights_format == WeightsFormat::Default => {
                (FilterLayout::ChannelFirst, 2)
            }
            _ => return None,
        };
        if op.inputs.len() > PREPARED_INPUT {
            return None;
        }
        let (x, w, y) = (input(g, op, 0)?, input(g, op, 1)?, output(g, op)?);
        if [x.dtype, w.dtype, y.dtype] != [DType::I8; 3]
            || w.kind != TensorKind::Constant
            || w.shape.len() != rank
        {
            return None;
        }
        let channels = match layout {
            FilterLayout::ChannelFirst => w.shape.first(),
            FilterLayout::ChannelLast => w.shape.last(),
        };
        let channels = usize::try_from(*channels?).ok().filter(|&c| c > 0)?;
        let data = w.data.as_ref()?;
        if w.elements() != Some(data.len() as u64) {
            return None;
        }
        let (xq, wq, yq) = (
            x.quantization.as_ref()?,
            w.quantization.as_ref()?,
            y.quantization.as_ref()?,
        );
        let input_zero_point = i32::try_from(*xq.zero_point.first()?).ok()?;
        if wq.zero_point.iter().any(|&z| z != 0)
            || !(wq.scale.len() == 1 || wq.scale.len() == channels)
        {
            return None;
        }
        let bias = match op.inputs.get(2).copied().flatten() {
            None => None,
            Some(b) => Some(bias(g.tensors.get(b.get())?, channels)?),
        };
        Some(Requant {
            filter: data.iter().map(|&b| b as i8).collect(),
            layout,
            bias,
            input: (*xq.scale.first()?, input_zero_point),
            filter_scales: wq.scale.clone(),
            output_scale: *yq.scale.first()?,
            channels,
        })
    }

    fn inputs(&self) -> RequantInputs<'_> {
        RequantInputs {
            filter: &self.filter,
            layout: self.layout,
            channels: self.channels,
            bias: self.bias.as_deref(),
            input_scale: self.input.0,
            input_zero_point: self.input.1,
            filter_scales: &self.filter_scales,
            output_scale: self.output_scale,
        }
    }
}

/// The values of an int32 constant bias of `channels` elements.
fn bias(b: &Tensor, channels: usize) -> Option<Vec<i32>> {
    let data = b.data.as_ref()?;
    if b.dtype != DType::I32
        || b.kind != TensorKind::Constant
        || data.len() != channels.checked_mul(4)?
    {
        return None;
    }
    data.chunks_exact(4)
        .map(|c| <[u8; 4]>::try_from(c).ok().map(i32::from_le_bytes))
        .collect()
}

#[cfg(test)]
mod tests;
