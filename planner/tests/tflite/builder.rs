//! Models built with the flatbuffers builder, for the reader's tests: specs of tensors,
//! ops and operator codes, and [`build`], which writes them as a TFLite flatbuffer. Field ids
//! are the TFLite schema's (the same ones the reader documents).

use std::path::Path;

use flatbuffers::{FlatBufferBuilder, WIPOffset, field_index_to_field_offset as field};
use planner::graph::Graph;
use planner::import::tflite;

#[derive(Clone)]
pub struct TensorSpec {
    pub name: &'static str,
    pub shape: Vec<i32>,
    pub signature: Option<Vec<i32>>,
    pub ty: i8,
    pub buffer: u32,
    pub variable: bool,
    /// `(scale, zero_point, quantized_dimension)`.
    pub quantization: Option<(Vec<f32>, Vec<i64>, i32)>,
    /// Writes an (empty) `sparsity` table.
    pub sparse: bool,
}

pub fn tensor(name: &'static str, shape: &[i32], buffer: u32) -> TensorSpec {
    TensorSpec {
        name,
        shape: shape.to_vec(),
        signature: None,
        ty: 9, // INT8
        buffer,
        variable: false,
        quantization: None,
        sparse: false,
    }
}

/// An options table's fields as `(field id, value)`.
pub type OptionFields = Vec<(u16, i32)>;

#[derive(Clone)]
pub struct OpSpec {
    pub code: u32,
    pub inputs: Vec<i32>,
    pub outputs: Vec<i32>,
    pub intermediates: Vec<i32>,
    /// `builtin_options_type` and, when `Some`, the options table's fields as
    /// `(field id, value)`, each written as an `i32` (a byte or bool field reads its low byte).
    pub options: Option<(u8, Option<OptionFields>)>,
    /// `custom_options` bytes (a FlexBuffers map) and `custom_options_format`.
    pub custom: Option<(Vec<u8>, i8)>,
}

pub fn op(code: u32, inputs: &[i32], outputs: &[i32]) -> OpSpec {
    OpSpec {
        code,
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
        intermediates: Vec::new(),
        options: None,
        custom: None,
    }
}

#[derive(Clone)]
pub struct SubgraphSpec {
    pub tensors: Vec<TensorSpec>,
    pub ops: Vec<OpSpec>,
    pub inputs: Vec<i32>,
    pub outputs: Vec<i32>,
}

#[derive(Clone)]
pub enum BufferSpec {
    Empty,
    Data(Vec<u8>),
    External { offset: u64, size: u64 },
}

#[derive(Clone)]
pub struct CodeSpec {
    pub deprecated: i8,
    pub builtin: i32,
    pub custom: Option<&'static str>,
}

pub fn code(builtin: i32) -> CodeSpec {
    CodeSpec {
        deprecated: i8::try_from(builtin.min(127)).unwrap(),
        builtin,
        custom: None,
    }
}

/// Signature names: `(name, tensor index)`.
pub type Names = Vec<(&'static str, u32)>;

#[derive(Clone)]
pub struct ModelSpec {
    pub version: u32,
    pub codes: Vec<CodeSpec>,
    pub subgraphs: Vec<SubgraphSpec>,
    pub buffers: Vec<BufferSpec>,
    /// Signature input and output names of subgraph 0.
    pub signature: Option<(Names, Names)>,
}

/// Input `x` [1, 4] → FULLY_CONNECTED (weights [4, 4], no bias) → `h` → SOFTMAX → `y`.
pub fn small_model() -> ModelSpec {
    ModelSpec {
        version: 3,
        codes: vec![code(9), code(25)],
        subgraphs: vec![SubgraphSpec {
            tensors: vec![
                tensor("x", &[1, 4], 0),
                tensor("w", &[4, 4], 1),
                tensor("h", &[1, 4], 0),
                tensor("y", &[1, 4], 0),
            ],
            ops: vec![op(0, &[0, 1, -1], &[2]), op(1, &[2], &[3])],
            inputs: vec![0],
            outputs: vec![3],
        }],
        buffers: vec![BufferSpec::Empty, BufferSpec::Data((0..16).collect())],
        signature: None,
    }
}

pub fn build(m: &ModelSpec) -> Vec<u8> {
    let mut b = FlatBufferBuilder::new();
    let mut codes = Vec::new();
    for c in &m.codes {
        let custom = c.custom.map(|s| b.create_string(s));
        let t = b.start_table();
        b.push_slot_always(field(0), c.deprecated);
        if let Some(s) = custom {
            b.push_slot_always(field(1), s);
        }
        b.push_slot_always(field(3), c.builtin);
        codes.push(b.end_table(t));
    }
    let mut subgraphs = Vec::new();
    for sg in &m.subgraphs {
        let mut tensors = Vec::new();
        for t in &sg.tensors {
            let shape = b.create_vector(&t.shape);
            let signature = t.signature.as_ref().map(|s| b.create_vector(s));
            let name = b.create_string(t.name);
            let quantization = t.quantization.as_ref().map(|(scale, zero, axis)| {
                let scale = b.create_vector(scale);
                let zero = b.create_vector(zero);
                let q = b.start_table();
                b.push_slot_always(field(2), scale);
                b.push_slot_always(field(3), zero);
                b.push_slot_always(field(6), *axis);
                b.end_table(q)
            });
            let sparsity = t.sparse.then(|| {
                let sp = b.start_table();
                b.end_table(sp)
            });
            let table = b.start_table();
            b.push_slot_always(field(0), shape);
            b.push_slot_always(field(1), t.ty);
            b.push_slot_always(field(2), t.buffer);
            b.push_slot_always(field(3), name);
            if let Some(q) = quantization {
                b.push_slot_always(field(4), q);
            }
            if t.variable {
                b.push_slot_always(field(5), true);
            }
            if let Some(sp) = sparsity {
                b.push_slot_always(field(6), sp);
            }
            if let Some(s) = signature {
                b.push_slot_always(field(7), s);
            }
            tensors.push(b.end_table(table));
        }
        let mut ops = Vec::new();
        for o in &sg.ops {
            let inputs = b.create_vector(&o.inputs);
            let outputs = b.create_vector(&o.outputs);
            let intermediates = b.create_vector(&o.intermediates);
            let custom = o
                .custom
                .as_ref()
                .map(|(bytes, format)| (b.create_vector(bytes), *format));
            let options = o.options.as_ref().and_then(|(_, fields)| {
                let fields = fields.as_ref()?;
                let t = b.start_table();
                for &(id, v) in fields {
                    b.push_slot_always(field(id), v);
                }
                Some(b.end_table(t))
            });
            let table = b.start_table();
            b.push_slot_always(field(0), o.code);
            b.push_slot_always(field(1), inputs);
            b.push_slot_always(field(2), outputs);
            if let Some((key, _)) = &o.options {
                b.push_slot_always(field(3), *key);
            }
            if let Some(t) = options {
                b.push_slot_always(field(4), t);
            }
            if let Some((bytes, format)) = custom {
                b.push_slot_always(field(5), bytes);
                b.push_slot_always(field(6), format);
            }
            b.push_slot_always(field(8), intermediates);
            ops.push(b.end_table(table));
        }
        let tensors = b.create_vector(&tensors);
        let inputs = b.create_vector(&sg.inputs);
        let outputs = b.create_vector(&sg.outputs);
        let ops = b.create_vector(&ops);
        let table = b.start_table();
        b.push_slot_always(field(0), tensors);
        b.push_slot_always(field(1), inputs);
        b.push_slot_always(field(2), outputs);
        b.push_slot_always(field(3), ops);
        subgraphs.push(b.end_table(table));
    }
    let mut buffers = Vec::new();
    for buf in &m.buffers {
        let data = match buf {
            BufferSpec::Data(d) => Some(b.create_vector(d)),
            _ => None,
        };
        let table = b.start_table();
        if let Some(d) = data {
            b.push_slot_always(field(0), d);
        }
        if let BufferSpec::External { offset, size } = buf {
            b.push_slot_always(field(1), *offset);
            b.push_slot_always(field(2), *size);
        }
        buffers.push(b.end_table(table));
    }
    let signatures = m.signature.as_ref().map(|(ins, outs)| {
        let mut maps = |list: &[(&str, u32)]| {
            let mut v: Vec<WIPOffset<_>> = Vec::new();
            for &(name, index) in list {
                let name = b.create_string(name);
                let t = b.start_table();
                b.push_slot_always(field(0), name);
                b.push_slot_always(field(1), index);
                v.push(b.end_table(t));
            }
            b.create_vector(&v)
        };
        let ins = maps(ins);
        let outs = maps(outs);
        let t = b.start_table();
        b.push_slot_always(field(0), ins);
        b.push_slot_always(field(1), outs);
        b.push_slot_always(field(4), 0u32);
        let sig = b.end_table(t);
        b.create_vector(&[sig])
    });
    let codes = b.create_vector(&codes);
    let subgraphs = b.create_vector(&subgraphs);
    let buffers = b.create_vector(&buffers);
    let root = b.start_table();
    b.push_slot_always(field(0), m.version);
    b.push_slot_always(field(1), codes);
    b.push_slot_always(field(2), subgraphs);
    b.push_slot_always(field(4), buffers);
    if let Some(s) = signatures {
        b.push_slot_always(field(7), s);
    }
    let root = b.end_table(root);
    b.finish(root, Some("TFL3"));
    b.finished_data().to_vec()
}

pub const BUILT: &str = "built.tflite";

pub fn read_built(m: &ModelSpec) -> Result<Graph, planner::Error> {
    tflite::parse(&build(m), Path::new(BUILT))
}

/// The error's message, checked to name the file.
pub fn error_of(m: &ModelSpec) -> String {
    let e = read_built(m).expect_err("the model should be rejected");
    let msg = e.message().to_string();
    assert!(msg.starts_with(BUILT), "{msg}");
    assert!(e.help_text().is_some(), "{msg}");
    msg
}

/// [`error_of`] the [`small_model`] after `edit`.
pub fn error_with(edit: impl FnOnce(&mut ModelSpec)) -> String {
    let mut m = small_model();
    edit(&mut m);
    error_of(&m)
}
