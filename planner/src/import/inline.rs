//! The inline graph of a manifest (`model.tensors`, `model.ops`, `model.inputs`,
//! `model.outputs`): the TOML tables, kept with their spans by [`crate::manifest`], turned
//! into a [`Graph`] here, with errors that point at the manifest's line and column.

use std::collections::BTreeMap;
use std::path::Path;
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use toml::Spanned;

use crate::error::{Result, did_you_mean};
use crate::graph::{DType, Graph, IoName, Op, Quantization, Tensor, TensorIndex, TensorKind};
use crate::manifest::{Ctx, InlineModel, RawTensor};

/// Reads the inline graph of a manifest; `name` is the model's name.
pub(crate) fn read(model: &InlineModel, name: &str) -> Result<Graph> {
    let ctx = Ctx {
        path: &model.path,
        text: &model.text,
    };
    let ctx = &ctx;
    let base = model.path.parent().unwrap_or(Path::new(""));
    let raw_tensors = &model.tensors;
    let mut tensors: Vec<Tensor> = Vec::with_capacity(raw_tensors.len());
    let mut index: BTreeMap<String, TensorIndex> = BTreeMap::new();
    for (i, t) in raw_tensors.iter().enumerate() {
        let t = t.get_ref();
        let id = t.id.get_ref().clone();
        if id.is_empty() {
            return Err(ctx.err(
                &t.id,
                "tensor id is empty",
                "give every tensor a non-empty id",
            ));
        }
        if index.contains_key(&id) {
            return Err(ctx.err(
                &t.id,
                format!("tensor id {id:?} is used twice"),
                "give each tensor its own id",
            ));
        }
        tensors.push(read_tensor(ctx, base, t, id.clone())?);
        index.insert(id, TensorIndex(i as u32));
    }
    let lookup = |s: &Spanned<String>, what: &str| -> Result<TensorIndex> {
        index.get(s.get_ref()).copied().ok_or_else(|| {
            let hint = did_you_mean(s.get_ref(), index.keys().map(|k| k.as_str()))
                .map(|x| format!("did you mean {x:?}? "))
                .unwrap_or_default();
            ctx.err(
                s,
                format!(
                    "{what} names tensor {:?}, which model.tensors does not declare",
                    s.get_ref()
                ),
                format!("{hint}declare it in model.tensors or fix the id"),
            )
        })
    };
    let mut ops = Vec::new();
    for (k, op) in model.ops.iter().enumerate() {
        let op = op.get_ref();
        let what = format!("op {k} ({})", op.opcode);
        let inputs = op
            .inputs
            .iter()
            .map(|s| lookup(s, &what).map(Some))
            .collect::<Result<Vec<_>>>()?;
        let outputs = op
            .outputs
            .iter()
            .map(|s| lookup(s, &what))
            .collect::<Result<Vec<_>>>()?;
        let scratch = op
            .scratch
            .iter()
            .map(|s| lookup(s, &what))
            .collect::<Result<Vec<_>>>()?;
        for (s, &o) in op.outputs.iter().zip(&outputs) {
            if tensors[o.get()].kind == TensorKind::Constant {
                return Err(ctx.err(
                    s,
                    format!("{what} writes constant tensor {:?}", s.get_ref()),
                    "constants are read-only; make the output an activation or a variable",
                ));
            }
        }
        ops.push(Op {
            opcode: op.opcode.clone(),
            inputs,
            outputs,
            scratch,
            options: Default::default(),
        });
    }
    let io = |list: &Option<Vec<Spanned<String>>>, what: &str| -> Result<Option<Vec<IoName>>> {
        list.as_ref()
            .map(|l| {
                l.iter()
                    .map(|s| {
                        lookup(s, what).map(|t| IoName {
                            name: tensors[t.get()].name.clone(),
                            tensor: t,
                        })
                    })
                    .collect()
            })
            .transpose()
    };
    let inputs = io(&model.inputs, "model.inputs")?;
    let outputs = io(&model.outputs, "model.outputs")?;
    let mut graph = Graph {
        name: name.to_string(),
        tensors,
        ops,
        inputs: Vec::new(),
        outputs: Vec::new(),
        aliases: Vec::new(),
        warnings: Vec::new(),
        in_place: Vec::new(),
        folded_pads: Vec::new(),
        patches: None,
        ..Graph::default()
    };
    let (default_inputs, default_outputs) = default_io(&graph);
    graph.inputs = inputs.unwrap_or(default_inputs);
    graph.outputs = outputs.unwrap_or(default_outputs);
    graph.validate()?;
    Ok(graph)
}

/// Without explicit lists: inputs are activations read but never written, outputs are
/// activations written but never read.
fn default_io(graph: &Graph) -> (Vec<IoName>, Vec<IoName>) {
    let n = graph.tensors.len();
    let mut read = vec![false; n];
    let mut written = vec![false; n];
    for op in &graph.ops {
        for t in op.inputs.iter().flatten() {
            read[t.get()] = true;
        }
        for t in &op.outputs {
            written[t.get()] = true;
        }
    }
    let activation = |i: usize| graph.tensors[i].kind == TensorKind::Activation;
    let default_io = |pred: &dyn Fn(usize) -> bool| -> Vec<IoName> {
        (0..n)
            .filter(|&i| activation(i) && pred(i))
            .map(|i| IoName {
                name: graph.tensors[i].name.clone(),
                tensor: TensorIndex(i as u32),
            })
            .collect()
    };
    (
        default_io(&|i| read[i] && !written[i]),
        default_io(&|i| written[i] && !read[i]),
    )
}

/// One tensor of `model.tensors`: dtype, shape or size, data file, kind, alignment and
/// quantisation checked against each other.
fn read_tensor(ctx: &Ctx<'_>, base: &Path, t: &RawTensor, id: String) -> Result<Tensor> {
    let dtype = DType::from_name(t.dtype.get_ref()).ok_or_else(|| {
        let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        let hint = did_you_mean(t.dtype.get_ref(), names.iter().copied())
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        ctx.err(
            &t.dtype,
            format!("tensor {id:?} has unknown dtype {:?}", t.dtype.get_ref()),
            format!("{hint}dtypes: {}", names.join(", ")),
        )
    })?;
    let mut shape = Vec::new();
    for d in t.shape.iter().flatten() {
        let v = *d.get_ref();
        if v < 0 {
            return Err(ctx.err(
                d,
                format!("tensor {id:?} has dimension {v}"),
                "dimensions must be >= 0 (dynamic sizes cannot be planned statically)",
            ));
        }
        shape.push(v as u64);
    }
    let from_shape = if t.shape.is_some() {
        let elements = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        Some(elements.and_then(|e| dtype.bytes_for(e)).ok_or_else(|| {
            ctx.err(
                &t.id,
                format!("tensor {id:?}: the byte size of shape {shape:?} of {} overflows or is undefined", dtype.name()),
                "give `size` in bytes, or a smaller shape",
            )
        })?)
    } else {
        None
    };
    let declared = match (&t.size, from_shape) {
        (Some(s), Some(fs)) if s.get_ref().0 != fs => {
            return Err(ctx.err(
                s,
                format!(
                    "tensor {id:?} has size {} but its shape {shape:?} of {} makes {fs} bytes",
                    s.get_ref().0,
                    dtype.name()
                ),
                "drop `size` or make it match the shape",
            ));
        }
        (Some(s), _) => Some(s.get_ref().0),
        (None, fs) => fs,
    };
    let data = match &t.data {
        Some(file) => Some(read_data(ctx, base, file, &id, declared)?),
        None => None,
    };
    let size = match (declared, &data) {
        (Some(n), _) => n,
        (None, Some(d)) => d.len() as u64,
        (None, None) => {
            return Err(ctx.err(
                &t.id,
                format!("tensor {id:?} has neither `shape` nor `size`"),
                "give its shape (e.g. `shape = [1, 49, 10]`) or its size in bytes",
            ));
        }
    };
    if let (Some(d), Some(file)) = (&data, &t.data)
        && d.len() as u64 != size
    {
        return Err(ctx.err(
            file,
            format!(
                "constant data for tensor {id:?} has {} bytes, the tensor has {size}",
                d.len()
            ),
            "fix the file or the tensor's shape",
        ));
    }
    if t.shape.is_none() {
        shape = shape_of_size(ctx, t, &id, dtype, size)?;
    }
    let constant = t.constant || data.is_some();
    if constant && t.variable {
        return Err(ctx.err(
            &t.id,
            format!("tensor {id:?} is both constant and variable"),
            "a variable tensor is writable state; drop one of the two",
        ));
    }
    let align_hint = ctx.optional_alignment(&t.alignment, &format!("tensor {id:?} alignment"))?;
    let quantization = match &t.quantization {
        Some(q) => {
            if q.scale.is_empty() || q.scale.len() != q.zero_point.len() {
                return Err(ctx.err(
                    &t.id,
                    format!(
                        "tensor {id:?} quantization has {} scales and {} zero points",
                        q.scale.len(),
                        q.zero_point.len()
                    ),
                    "give one scale and one zero point per channel (one each for per-tensor)",
                ));
            }
            if let Some(bad) = q.scale.iter().find(|s| !s.is_finite()) {
                return Err(ctx.err(
                    &t.id,
                    format!(
                        "tensor {id:?} has quantization scale {bad}, which is not a finite number"
                    ),
                    "give finite scales: generated code keeps each as an f32 constant",
                ));
            }
            Some(Quantization {
                scale: q.scale.clone(),
                zero_point: q.zero_point.clone(),
                axis: q.axis,
            })
        }
        None => None,
    };
    Ok(Tensor {
        name: t.name.clone().unwrap_or_else(|| id.clone()),
        id,
        dtype,
        shape,
        size,
        kind: if constant {
            TensorKind::Constant
        } else if t.variable {
            TensorKind::Variable
        } else {
            TensorKind::Activation
        },
        quantization,
        align_hint,
        data,
    })
}

/// Reads a constant's `data` file, at most the tensor's declared size (the largest tensor
/// when only the file gives it): an endless or over-long file stops there.
fn read_data(
    ctx: &Ctx<'_>,
    base: &Path,
    file: &Spanned<String>,
    id: &str,
    declared: Option<u64>,
) -> Result<Arc<[u8]>> {
    let path = base.join(file.get_ref());
    let (limit, why) = match declared {
        Some(n) => (n, format!("tensor {id:?} takes {n} bytes")),
        None => (
            crate::plan::MAX_ARENA,
            format!("a tensor takes at most {} bytes", crate::plan::MAX_ARENA),
        ),
    };
    let bytes = super::limited::read(&path, limit, "constant data", &why).map_err(|e| {
        ctx.err(
            file,
            e.message().to_string(),
            "the path is relative to the manifest's folder",
        )
    })?;
    Ok(Arc::from(bytes))
}

/// The shape of a tensor given by size alone: one dimension of `size` bytes' elements, so
/// its typed view has them all. A size that is not whole elements is an error at `size`.
fn shape_of_size(
    ctx: &Ctx<'_>,
    t: &RawTensor,
    id: &str,
    dtype: DType,
    size: u64,
) -> Result<Vec<u64>> {
    let elements = match dtype.bits() {
        None => return Ok(Vec::new()),
        Some(4) => size.saturating_mul(2),
        Some(bits) => {
            let each = bits / 8;
            if !size.is_multiple_of(each) {
                let message = format!(
                    "tensor {id:?} is {size} bytes, not a whole number of {} elements ({each} bytes each)",
                    dtype.name()
                );
                let help = format!("make the size a multiple of {each}, or give its shape");
                return Err(match (&t.size, &t.data) {
                    (Some(s), _) => ctx.err(s, message, help),
                    (None, Some(f)) => ctx.err(f, message, help),
                    (None, None) => ctx.err(&t.id, message, help),
                });
            }
            size / each
        }
    };
    Ok(vec![elements])
}
