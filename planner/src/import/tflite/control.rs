//! Models with several subgraphs: the ops of every subgraph an `IF`, `WHILE` or `CALL_ONCE`
//! runs, put into one op list where the op stood, with a [`Control`] entry saying how they
//! run; and resource variables (`VAR_HANDLE`, `READ_VARIABLE`, `ASSIGN_VARIABLE`) as
//! persistent tensors.
//!
//! - `IF (cond, args...) -> outs`: the `then` subgraph's ops, then the `else` subgraph's.
//!   Each branch reads the op's arguments in place of its inputs; a branch output an op of
//!   the branch writes is written straight into the op's output when the two have one type
//!   and shape, and copied there otherwise (as TFLM copies it).
//! - `WHILE (args...) -> outs`: the outputs are the loop's values. Each starts as a copy of
//!   its argument; the condition and the body read them in place of their inputs; the body
//!   ends with a copy of each output into its value (through a temporary when the output is
//!   itself one of the values, so a swap stays a swap).
//! - `CALL_ONCE`: the initialisation subgraph's ops, run while a one-element bool variable
//!   (zeroed with the rest of the state) is false, which they then set.
//! - `VAR_HANDLE` names a variable by `(container, shared_name)`; every handle that names it
//!   is resolved when the model is read. `READ_VARIABLE` becomes a copy from the variable's
//!   tensor (a persistent [`TensorKind::Variable`], typed and shaped by the first op that
//!   uses it) and `ASSIGN_VARIABLE` a copy into it. A variable starts at zero bytes, or at
//!   its zero point for int8, as TFLM's do (`init()` fills int8 variables so); every use
//!   must agree on the zero point, and another type with a zero point other than 0 is
//!   refused.
//!
//! A copy is a `RESHAPE` (the same bytes, perhaps under another shape), which every kernel
//! set runs. A subgraph that runs itself, directly or not, is refused, and so is a model
//! whose subgraphs would put more than [`MAX_OPS`] ops, [`MAX_COPIES`] subgraph copies or
//! [`MAX_TENSORS`] tensors into the list.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use super::options::Linked;
use super::{Buffer, Opcode, Operator, Reader, Shared, SubGraph, element, int4};
use crate::error::Result;
use crate::graph::{Control, DType, Op, OpOptions, OpRange, Tensor, TensorIndex, TensorKind};
use crate::rt::options::{Dims, ReshapeOptions};

/// Most ops a model's subgraphs may put into the op list (each op that runs a subgraph
/// copies that subgraph's ops).
pub(super) const MAX_OPS: usize = 1 << 20;

/// Most tensors the op list may hold.
const MAX_TENSORS: usize = 1 << 22;

/// Most subgraph copies a model may make: a chain of subgraphs whose ops each run the next
/// twice copies the last one 2^depth times, ops or not.
pub(super) const MAX_COPIES: usize = 1 << 16;

/// The ops that run subgraphs which this module puts into the op list.
pub(super) const RUNS: [&str; 3] = ["IF", "WHILE", "CALL_ONCE"];

/// The `TensorType` code of `RESOURCE` tensors (variable handles).
const RESOURCE: i8 = 13;

/// The op list being built from a model's subgraphs.
pub(super) struct Flat<'r, 'p, 'b> {
    r: &'r Reader<'p, 'b>,
    subgraphs: Vec<SubGraph<'b>>,
    opcodes: &'r [Opcode],
    buffers: &'r [Buffer<'b>],
    pub(super) shared: Shared,
    pub(super) tensors: Vec<Tensor>,
    pub(super) ops: Vec<Op>,
    pub(super) control: Vec<Control>,
    /// The variable each resource handle (a graph tensor) names.
    handles: BTreeMap<TensorIndex, (String, String)>,
    /// The tensor of each variable, by `(container, shared_name)`.
    variables: BTreeMap<(String, String), TensorIndex>,
    /// The subgraphs being put into the list, innermost last.
    running: Vec<usize>,
    /// Subgraph copies made so far.
    copies: usize,
}

impl<'r, 'p, 'b> Flat<'r, 'p, 'b> {
    pub(super) fn new(
        r: &'r Reader<'p, 'b>,
        subgraphs: Vec<SubGraph<'b>>,
        opcodes: &'r [Opcode],
        buffers: &'r [Buffer<'b>],
    ) -> Flat<'r, 'p, 'b> {
        Flat {
            r,
            subgraphs,
            opcodes,
            buffers,
            shared: Shared::default(),
            tensors: Vec::new(),
            ops: Vec::new(),
            control: Vec::new(),
            handles: BTreeMap::new(),
            variables: BTreeMap::new(),
            running: Vec::new(),
            copies: 0,
        }
    }

    /// Reads subgraph 0 (its tensors first, at their own indices) and every subgraph its ops
    /// run.
    pub(super) fn main(&mut self) -> Result<()> {
        if self.subgraphs.is_empty() {
            return Err(self.r.corrupt("the model has no subgraph"));
        }
        let map = self.tensors_of(0)?;
        self.put(0, &map)
    }

    /// The label of subgraph `s` in names and errors: its name, or `subgraph<s>`.
    fn label(&self, s: usize) -> String {
        self.subgraphs
            .get(s)
            .and_then(|g| g.name())
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("subgraph{s}"), str::to_string)
    }

    /// Appends fresh copies of subgraph `s`'s tensors (a resource handle as an unplanned
    /// placeholder); returns the graph index of each.
    fn tensors_of(&mut self, s: usize) -> Result<Vec<TensorIndex>> {
        self.copies += 1;
        if self.copies > MAX_COPIES {
            return Err(self.r.err(
                format_args!(
                    "the model's subgraphs are run from more than {MAX_COPIES} places in all (at {})",
                    self.label(s)
                ),
                "run fewer subgraphs from more places, or split the model",
            ));
        }
        let sub = self.subgraphs[s];
        let label = self.label(s);
        let mut map = Vec::new();
        for (i, t) in sub.tensors().unwrap_or_default().iter().enumerate() {
            let mut tensor = if t.tensor_type() == Some(RESOURCE) && t.buffer().unwrap_or(0) == 0 {
                Tensor {
                    id: String::new(),
                    name: t.name().unwrap_or_default().to_string(),
                    dtype: DType::Resource,
                    shape: Vec::new(),
                    size: 0,
                    kind: TensorKind::Activation,
                    quantization: None,
                    align_hint: None,
                    data: None,
                }
            } else {
                self.r.tensor(i, t, self.buffers, &mut self.shared)?
            };
            if s != 0 {
                tensor.name = format!("{label}/{}", tensor.name);
            }
            map.push(self.push(tensor)?);
        }
        Ok(map)
    }

    /// Appends `tensor`, its id its index; returns the index.
    fn push(&mut self, mut tensor: Tensor) -> Result<TensorIndex> {
        let index = self.tensors.len();
        if index >= MAX_TENSORS {
            return Err(self.r.err(
                format_args!(
                    "the model's subgraphs put more than {MAX_TENSORS} tensors into the plan"
                ),
                "run fewer subgraphs from more places, or split the model",
            ));
        }
        let t = u32::try_from(index)
            .map_err(|_| self.r.corrupt("the model's subgraphs hold more than 2^32 tensors"))?;
        tensor.id = index.to_string();
        self.tensors.push(tensor);
        Ok(TensorIndex(t))
    }

    /// Appends the ops of subgraph `s`, its tensors at `map`.
    fn put(&mut self, s: usize, map: &[TensorIndex]) -> Result<()> {
        self.running.push(s);
        let sub = self.subgraphs[s];
        let n_subgraphs = self.subgraphs.len();
        // An error about an op of another subgraph says which subgraph its op numbers count in.
        let label = self.label(s);
        let place = |e: crate::Error| {
            if s == 0 {
                e
            } else {
                e.note(format!(
                    "op and tensor numbers count in {label} (subgraph {s}), which the model's control flow runs"
                ))
            }
        };
        for (k, table) in sub.operators().unwrap_or_default().iter().enumerate() {
            let mut op = self
                .r
                .op(k, table, self.opcodes, map.len(), n_subgraphs)
                .map_err(place)?;
            for t in op
                .inputs
                .iter_mut()
                .flatten()
                .chain(op.outputs.iter_mut())
                .chain(op.scratch.iter_mut())
            {
                *t = map[t.get()];
            }
            let at = format!("op {k} ({}) of {}", op.opcode, self.label(s));
            match op.opcode.as_str() {
                "IF" | "WHILE" | "CALL_ONCE" | "VAR_HANDLE" => {
                    let linked = table.linked(&op.opcode).ok_or_else(|| {
                        self.r.err(
                            format_args!("{at} has no options of its kind"),
                            "export the model again with the TFLite converter",
                        )
                    })?;
                    self.linked(&at, &op, linked)?;
                }
                "READ_VARIABLE" => self.read_variable(&at, &op)?,
                "ASSIGN_VARIABLE" => self.assign_variable(&at, &op)?,
                _ => self.plain(k, op, table).map_err(place)?,
            }
            if self.ops.len() > MAX_OPS {
                return Err(self.r.err(
                    format_args!(
                        "the model's subgraphs put more than {MAX_OPS} ops into the plan (at {at})"
                    ),
                    "run fewer subgraphs from more places, or split the model",
                ));
            }
        }
        self.running.pop();
        Ok(())
    }

    /// An op of a kernel: its options, state and kernel scratch as subgraph 0's.
    fn plain(&mut self, k: usize, mut op: Op, table: Operator<'b>) -> Result<()> {
        let filter = op.inputs.get(1).copied().flatten().map(|t| t.get());
        int4::unpack_filter(&op.opcode, filter, &mut self.tensors);
        op.options = self.r.options(k, &op, table, &self.tensors)?;
        self.r.add_state(k, &mut op, &mut self.tensors)?;
        self.r.add_kernel_scratch(k, &mut op, &mut self.tensors)?;
        self.ops.push(op);
        Ok(())
    }

    /// The subgraph `raw` an op at `at` runs, checked: in range, not subgraph 0's own
    /// caller chain.
    fn callee(&self, at: &str, raw: i32) -> Result<usize> {
        let s = usize::try_from(raw)
            .ok()
            .filter(|&s| s < self.subgraphs.len())
            .ok_or_else(|| {
                self.r.corrupt(format_args!(
                    "{at} runs subgraph {raw}, but the model has {} subgraphs",
                    self.subgraphs.len()
                ))
            })?;
        if self.running.contains(&s) {
            return Err(self.r.err(
                format_args!(
                    "{at} runs {}, which is already running (it would run itself)",
                    self.label(s)
                ),
                "the planner runs subgraphs without recursion; convert the model without it",
            ));
        }
        Ok(s)
    }

    fn linked(&mut self, at: &str, op: &Op, linked: Linked) -> Result<()> {
        match linked {
            Linked::If { then, otherwise } => {
                let then = self.callee(at, then)?;
                let otherwise = self.callee(at, otherwise)?;
                self.if_op(at, op, then, otherwise)
            }
            Linked::While { cond, body } => {
                let cond = self.callee(at, cond)?;
                let body = self.callee(at, body)?;
                self.while_op(at, op, cond, body)
            }
            Linked::Once { init } => {
                let init = self.callee(at, init)?;
                self.once(at, init)
            }
            Linked::Variable { container, name } => {
                let out = op.outputs.first().copied().ok_or_else(|| {
                    self.r
                        .corrupt(format_args!("{at} has no output for its handle"))
                })?;
                self.handles.insert(out, (container, name));
                Ok(())
            }
        }
    }

    /// `IF`: both branches, one after the other.
    fn if_op(&mut self, at: &str, op: &Op, then: usize, otherwise: usize) -> Result<()> {
        let Some(Some(cond)) = op.inputs.first().copied() else {
            return Err(self.r.corrupt(format_args!("{at} has no condition input")));
        };
        let c = &self.tensors[cond.get()];
        if c.dtype != DType::Bool || c.elements() != Some(1) {
            return Err(self.r.err(
                format_args!(
                    "{at} has condition `{}` of type {} and shape {:?}; TFLM's IF takes one bool",
                    c.name,
                    c.dtype.name(),
                    c.shape
                ),
                "export the model with a one-element bool condition",
            ));
        }
        let args: Vec<TensorIndex> = op.inputs[1..].iter().copied().flatten().collect();
        let at_entry = self.control.len();
        self.control.push(Control::If {
            cond: cond.0,
            then_ops: OpRange { start: 0, end: 0 },
            else_ops: OpRange { start: 0, end: 0 },
        });
        let then_ops = self.branch(at, then, &args, &op.outputs)?;
        let else_ops = self.branch(at, otherwise, &args, &op.outputs)?;
        self.control[at_entry] = Control::If {
            cond: cond.0,
            then_ops,
            else_ops,
        };
        Ok(())
    }

    /// One branch of an `IF`: subgraph `s` over `args`, writing `outs`; its op range.
    fn branch(
        &mut self,
        at: &str,
        s: usize,
        args: &[TensorIndex],
        outs: &[TensorIndex],
    ) -> Result<OpRange> {
        let start = self.op_number();
        let mut map = self.tensors_of(s)?;
        let (inputs, outputs) = self.io_of(at, s, args.len(), outs.len())?;
        for (&i, &a) in inputs.iter().zip(args) {
            map[i] = a;
        }
        // An output an op of the branch writes, of the op output's type and shape, is
        // written there directly; the rest are copied after the branch's ops.
        let written = self.written_by(s);
        let mut copies = Vec::new();
        for (j, (&o, &y)) in outputs.iter().zip(outs).enumerate() {
            let direct = written.contains(&o)
                && !inputs.contains(&o)
                && outputs.iter().filter(|&&x| x == o).count() == 1
                && self.same_type(map[o], y);
            if direct {
                map[o] = y;
            } else {
                copies.push((j, o));
            }
        }
        self.put(s, &map)?;
        for (j, o) in copies {
            self.copy(at, map[o], outs[j])?;
        }
        Ok(OpRange {
            start,
            end: self.op_number(),
        })
    }

    /// `WHILE`: the values start as copies of the arguments; then the condition and the
    /// body, which ends by copying its outputs into the values.
    fn while_op(&mut self, at: &str, op: &Op, cond: usize, body: usize) -> Result<()> {
        let args: Vec<TensorIndex> = op.inputs.iter().copied().flatten().collect();
        if args.len() != op.inputs.len() || args.len() != op.outputs.len() {
            return Err(self.r.corrupt(format_args!(
                "{at} has {} inputs and {} outputs; a WHILE has one output per input",
                op.inputs.len(),
                op.outputs.len()
            )));
        }
        let values = op.outputs.clone();
        for (&a, &v) in args.iter().zip(&values) {
            if let Some(key) = self.handles.get(&a).cloned() {
                self.handles.insert(v, key);
            } else {
                self.copy(at, a, v)?;
            }
        }
        let at_entry = self.control.len();
        let start = self.op_number();
        self.control.push(Control::While {
            cond: 0,
            cond_ops: OpRange { start, end: start },
            body_ops: OpRange { start, end: start },
        });
        // The condition.
        let mut map = self.tensors_of(cond)?;
        let (inputs, outputs) = self.io_of(at, cond, values.len(), 1)?;
        for (&i, &v) in inputs.iter().zip(&values) {
            map[i] = v;
        }
        self.put(cond, &map)?;
        let flag = map[outputs[0]];
        let f = &self.tensors[flag.get()];
        if f.dtype != DType::Bool || f.elements().is_none_or(|n| n == 0) {
            return Err(self.r.err(
                format_args!(
                    "{at} has a condition subgraph ({}) whose output `{}` is {} of shape {:?}, not bool",
                    self.label(cond),
                    f.name,
                    f.dtype.name(),
                    f.shape
                ),
                "export the loop with a bool condition",
            ));
        }
        let cond_end = self.op_number();
        // The body.
        let mut map = self.tensors_of(body)?;
        let (inputs, outputs) = self.io_of(at, body, values.len(), values.len())?;
        for (&i, &v) in inputs.iter().zip(&values) {
            map[i] = v;
        }
        self.put(body, &map)?;
        let results: Vec<TensorIndex> = outputs.iter().map(|&o| map[o]).collect();
        // A result that is one of the values (other than its own) goes through a temporary.
        let mut staged = Vec::new();
        for (j, (&r, &v)) in results.iter().zip(&values).enumerate() {
            if self.handles.contains_key(&v) {
                if self.handles.get(&r) != self.handles.get(&v) {
                    return Err(self.r.err(
                        format_args!(
                            "{at} passes resource handle {j} of its loop on as another variable's"
                        ),
                        "keep each variable handle in its loop position",
                    ));
                }
                continue;
            }
            if r == v {
                continue;
            }
            if values.contains(&r) {
                let temp = self.temporary(r, &format!("{}/loop{j}", self.label(body)))?;
                self.copy(at, r, temp)?;
                staged.push((j, temp));
            } else {
                staged.push((j, r));
            }
        }
        for (j, r) in staged {
            self.copy(at, r, values[j])?;
        }
        self.control[at_entry] = Control::While {
            cond: flag.0,
            cond_ops: OpRange {
                start,
                end: cond_end,
            },
            body_ops: OpRange {
                start: cond_end,
                end: self.op_number(),
            },
        };
        Ok(())
    }

    /// `CALL_ONCE`: the initialisation subgraph's ops, guarded by a new flag.
    fn once(&mut self, at: &str, init: usize) -> Result<()> {
        self.io_of(at, init, 0, 0)?;
        let flag = self.push(Tensor {
            id: String::new(),
            name: format!("{}/called", self.label(init)),
            dtype: DType::Bool,
            shape: vec![1],
            size: 1,
            kind: TensorKind::Variable,
            quantization: None,
            align_hint: None,
            data: None,
        })?;
        let at_entry = self.control.len();
        let start = self.op_number();
        self.control.push(Control::Once {
            flag: flag.0,
            ops: OpRange { start, end: start },
        });
        let map = self.tensors_of(init)?;
        self.put(init, &map)?;
        self.control[at_entry] = Control::Once {
            flag: flag.0,
            ops: OpRange {
                start,
                end: self.op_number(),
            },
        };
        Ok(())
    }

    /// `READ_VARIABLE (handle) -> value`: a copy of the variable.
    fn read_variable(&mut self, at: &str, op: &Op) -> Result<()> {
        let (Some(Some(handle)), Some(&out)) = (op.inputs.first(), op.outputs.first()) else {
            return Err(self.r.corrupt(format_args!("{at} needs a handle and an output")));
        };
        let var = self.variable(at, *handle, out)?;
        self.copy(at, var, out)
    }

    /// `ASSIGN_VARIABLE (handle, value)`: a copy into the variable.
    fn assign_variable(&mut self, at: &str, op: &Op) -> Result<()> {
        let (Some(Some(handle)), Some(Some(value))) = (op.inputs.first(), op.inputs.get(1))
        else {
            return Err(self.r.corrupt(format_args!("{at} needs a handle and a value")));
        };
        let var = self.variable(at, *handle, *value)?;
        self.copy(at, *value, var)
    }

    /// The tensor of the variable `handle` names, made like `like` when it is new.
    fn variable(&mut self, at: &str, handle: TensorIndex, like: TensorIndex) -> Result<TensorIndex> {
        let Some(key) = self.handles.get(&handle).cloned() else {
            return Err(self.r.err(
                format_args!(
                    "{at} reads handle `{}`, which no VAR_HANDLE of the model wrote",
                    self.tensors[handle.get()].name
                ),
                "export the model with its variables created by VAR_HANDLE",
            ));
        };
        let zero = |t: &Tensor| {
            t.quantization
                .as_ref()
                .and_then(|q| q.zero_point.first().copied())
                .unwrap_or(0)
        };
        let z = zero(&self.tensors[like.get()]);
        if let Some(&t) = self.variables.get(&key) {
            // TFLM starts a variable at the zero point it was created with; every use must
            // agree on it.
            let was = zero(&self.tensors[t.get()]);
            if was != z {
                return Err(self.r.err(
                    format_args!(
                        "{at}: variable `{}` is used with zero point {z}, but it was created with zero point {was}",
                        key.1
                    ),
                    "export the model with one quantisation per variable",
                ));
            }
            return Ok(t);
        }
        let src = &self.tensors[like.get()];
        if z != 0 && src.dtype != DType::I8 {
            return Err(self.r.err(
                format_args!(
                    "{at}: variable `{}` is {} with zero point {z}; the state starts at zero bytes, and at the zero point for int8 only",
                    key.1,
                    src.dtype.name()
                ),
                "quantise the variable with zero point 0",
            ));
        }
        let name = ["variable", &key.0, &key.1]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("/");
        let var = Tensor {
            name,
            kind: TensorKind::Variable,
            data: None,
            ..src.clone()
        };
        let t = self.push(var)?;
        self.variables.insert(key, t);
        Ok(t)
    }

    /// A new activation like `like`, named `name`.
    fn temporary(&mut self, like: TensorIndex, name: &str) -> Result<TensorIndex> {
        let temp = Tensor {
            name: name.to_string(),
            kind: TensorKind::Activation,
            data: None,
            ..self.tensors[like.get()].clone()
        };
        self.push(temp)
    }

    /// Appends a copy of `from` into `to` (a `RESHAPE`); the two must hold the same bytes of
    /// one element type.
    fn copy(&mut self, at: &str, from: TensorIndex, to: TensorIndex) -> Result<()> {
        let (a, b) = (&self.tensors[from.get()], &self.tensors[to.get()]);
        if a.dtype != b.dtype || a.size != b.size || a.dtype.bits().is_none() {
            return Err(self.r.err(
                format_args!(
                    "{at} passes `{}` ({} {:?}) as `{}` ({} {:?}); TFLM copies between subgraphs only tensors of one type and size",
                    a.name,
                    a.dtype.name(),
                    a.shape,
                    b.name,
                    b.dtype.name(),
                    b.shape
                ),
                "export the model with matching subgraph inputs and outputs",
            ));
        }
        let dims: Vec<i32> = b
            .shape
            .iter()
            .map(|&d| i32::try_from(d).unwrap_or(i32::MAX))
            .collect();
        let new_shape = Dims::new(&dims).ok_or_else(|| {
            self.r.err(
                format_args!("{at} copies `{}` of rank {}, above 8", b.name, dims.len()),
                "export the model with tensors of rank 8 or less",
            )
        })?;
        self.ops.push(Op {
            opcode: "RESHAPE".to_string(),
            inputs: vec![Some(from)],
            outputs: vec![to],
            scratch: Vec::new(),
            options: OpOptions::Reshape(ReshapeOptions { new_shape }),
        });
        Ok(())
    }

    /// The inputs and outputs of subgraph `s` (raw indices), checked against the `inputs`
    /// and `outputs` its caller at `at` gives it.
    fn io_of(
        &self,
        at: &str,
        s: usize,
        inputs: usize,
        outputs: usize,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        let sub = self.subgraphs[s];
        let n = sub.tensors().map_or(0, |t| t.len());
        let list = |v: Option<flatbuffers::Vector<'b, i32>>, what: &str| -> Result<Vec<usize>> {
            v.unwrap_or_default()
                .iter()
                .map(|raw| {
                    usize::try_from(raw).ok().filter(|&i| i < n).ok_or_else(|| {
                        self.r.corrupt(format_args!(
                            "{} {what} names tensor {raw}, but it has {n} tensors",
                            self.label(s)
                        ))
                    })
                })
                .collect()
        };
        let ins = list(sub.inputs(), "input")?;
        let outs = list(sub.outputs(), "output")?;
        if ins.len() != inputs || outs.len() != outputs {
            return Err(self.r.err(
                format_args!(
                    "{at} gives {} {inputs} inputs and takes {outputs} outputs, but it has {} inputs and {} outputs",
                    self.label(s),
                    ins.len(),
                    outs.len()
                ),
                "export the model again with the TFLite converter",
            ));
        }
        Ok((ins, outs))
    }

    /// The raw tensors subgraph `s`'s ops write.
    fn written_by(&self, s: usize) -> Vec<usize> {
        let sub = self.subgraphs[s];
        let mut out = Vec::new();
        for op in sub.operators().unwrap_or_default().iter() {
            out.extend(
                op.outputs()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|t| usize::try_from(t).ok()),
            );
        }
        out
    }

    /// True when tensors `a` and `b` have one type, shape and quantisation.
    fn same_type(&self, a: TensorIndex, b: TensorIndex) -> bool {
        let (a, b) = (&self.tensors[a.get()], &self.tensors[b.get()]);
        a.dtype == b.dtype
            && a.shape == b.shape
            && a.quantization == b.quantization
            && a.kind == TensorKind::Activation
    }

    /// The number the next op gets.
    fn op_number(&self) -> u32 {
        u32::try_from(self.ops.len()).unwrap_or(u32::MAX)
    }
}

/// Subgraph `i` of a verified vector.
pub(super) fn subgraphs<'b>(
    v: &flatbuffers::Vector<'b, flatbuffers::ForwardsUOffset<SubGraph<'b>>>,
) -> Vec<SubGraph<'b>> {
    (0..v.len()).filter_map(|i| element(v, i)).collect()
}
