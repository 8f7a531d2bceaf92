//! The TFLite reader on the bundled real models (`models/`, see `models/NOTICE`) and on
//! models built here with the flatbuffers builder.
#![cfg(feature = "std")]

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use planner::graph::{DType, Graph, TensorKind};
use planner::import::tflite;
use planner::lifetimes;
use planner::manifest::Manifest;
use planner::pack::{Item, Problem, aligned_live_sum};
use planner::verify;

use common::{Rng, assert_says};

#[path = "tflite/models.rs"]
mod models;

use models::{Figures, MODELS, model_path};

/// Constant bytes, each shared buffer counted once.
fn weight_bytes(g: &Graph) -> u64 {
    let mut seen = BTreeSet::new();
    g.tensors
        .iter()
        .filter_map(|t| t.data.as_ref())
        .filter(|d| seen.insert(d.as_ptr() as usize))
        .map(|d| d.len() as u64)
        .sum()
}

/// The lower bound as the models README defines it: activations only (constants and
/// variables left out), each live over its lifetime ([`lifetimes::compute`]: first to last op
/// that uses it, inputs from op 0, outputs to the last op), unaligned and rounded to 16.
fn lower_bounds(g: &Graph) -> (u64, u64) {
    let lt = lifetimes::compute(g).unwrap();
    let bound = |align: u64| {
        let items = g
            .tensors
            .iter()
            .zip(&lt.live)
            .filter(|(t, _)| t.kind == TensorKind::Activation)
            .filter_map(|(t, live)| {
                live.map(|(start, end)| Item {
                    size: t.size,
                    start,
                    end,
                    align,
                    fixed: None,
                    spillable: false,
                })
            })
            .collect();
        aligned_live_sum(&Problem {
            items,
            capacity: None,
        })
    };
    (bound(1), bound(16))
}

#[test]
fn bundled_models_match_published_figures() {
    for m in &MODELS {
        let path = model_path(m.name);
        let g = tflite::read(&path).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        let (lb, lb16) = lower_bounds(&g);
        println!(
            "{}: ops {} tensors {} weights {} lb {lb} lb16 {lb16}",
            m.name,
            g.ops.len(),
            g.tensors.len(),
            weight_bytes(&g)
        );
        assert_eq!(g.name, m.name);
        assert_eq!(g.ops.len(), m.ops, "{}: ops", m.name);
        assert_eq!(g.tensors.len(), m.tensors, "{}: tensors", m.name);
        assert_eq!(weight_bytes(&g), m.weights, "{}: weight bytes", m.name);
        assert_eq!(lb, m.lb, "{}: LB", m.name);
        assert_eq!(lb16, m.lb16, "{}: LB16", m.name);
        let planned = planner::plan_graph(&Manifest::for_model_file(&path), &g)
            .unwrap_or_else(|e| panic!("{}: {e}", m.name));
        verify::verify(&g, &planned.plan).unwrap_or_else(|v| panic!("{}: {v:?}", m.name));
    }
}

/// Flips `flips` bytes of `bytes` (read from `path`, model `name`) one at a time, each by a
/// random non-zero mask at the position `at` draws for flip k, and restored before the next;
/// returns how many flipped files still read (each outcome checked by [`check_outcome`]).
fn flips_that_read(
    bytes: &[u8],
    path: &Path,
    name: &str,
    rng: &mut Rng,
    flips: usize,
    mut at: impl FnMut(&mut Rng, usize) -> usize,
) -> usize {
    let mut copy = bytes.to_vec();
    let mut read = 0;
    for k in 0..flips {
        let pos = at(rng, k);
        let mask = u8::try_from(1 + rng.index(255)).unwrap();
        copy[pos] ^= mask;
        let what = format!("{name} byte {pos} ^ {mask:#x}");
        read += usize::from(check_outcome(tflite::parse(&copy, path), path, &what));
        copy[pos] = bytes[pos];
    }
    read
}

/// Every error names the file; a success is a graph whose indices are in range, and which
/// plans under the default platform with a plan the verifier passes (the pipeline runs it),
/// unless planning reports an error.
fn check_outcome(result: Result<Graph, planner::Error>, path: &Path, what: &str) -> bool {
    match result {
        Err(e) => {
            assert!(
                e.message().contains(&path.display().to_string()),
                "{what}: error does not name the file: {e}"
            );
            false
        }
        Ok(g) => {
            g.validate().unwrap();
            for t in &g.tensors {
                if let Some(d) = &t.data {
                    assert_eq!(t.kind, TensorKind::Constant, "{what}");
                    assert_eq!(t.size, d.len() as u64, "{what}");
                }
            }
            if let Ok(planned) = planner::plan_graph(&Manifest::for_model_file(path), &g) {
                verify::verify(&g, &planned.plan).unwrap_or_else(|v| panic!("{what}: {v:?}"));
            }
            true
        }
    }
}

/// Positions of the bytes outside constant data. Each constant's bytes are found where the
/// flatbuffer keeps a vector: a little-endian `u32` length, then the bytes.
fn structure_positions(bytes: &[u8], g: &Graph) -> Vec<usize> {
    let mut data = vec![false; bytes.len()];
    for d in g.tensors.iter().filter_map(|t| t.data.as_ref()) {
        let len = u32::try_from(d.len()).unwrap().to_le_bytes();
        let found = (4..bytes.len().saturating_sub(d.len()))
            .step_by(4)
            .find(|&p| bytes[p - 4..p] == len && bytes[p..p + d.len()] == d[..])
            .expect("constant bytes are in the file");
        data[found..found + d.len()].fill(true);
    }
    (0..bytes.len()).filter(|&p| !data[p]).collect()
}

/// Calls `f(model, path, bytes, rng)` with every bundled model's file, `rng` seeded with
/// `seed` once for all of them.
fn each_model_file(seed: u64, mut f: impl FnMut(&Figures, &Path, &[u8], &mut Rng)) {
    let mut rng = Rng::new(seed);
    for m in &MODELS {
        let path = model_path(m.name);
        let bytes = std::fs::read(&path).unwrap();
        f(m, &path, &bytes, &mut rng);
    }
}

#[test]
fn corrupted_models_are_errors_not_panics() {
    each_model_file(0x5EED_7F11_7E00_0003, |m, path, bytes, rng| {
        let n = bytes.len();
        // Truncation: the first bytes one by one, then points spread over the file.
        let mut cuts: Vec<usize> = (0..12).collect();
        cuts.extend((0..48).map(|_| rng.index(n)));
        cuts.push(n - 1);
        for cut in cuts {
            // A cut into trailing padding may leave a readable model; any other is an error.
            let r = tflite::parse(&bytes[..cut], path);
            assert!(
                cut >= 8 || r.is_err(),
                "{}: truncated to {cut} bytes but read",
                m.name
            );
            check_outcome(r, path, &format!("{} cut at {cut}", m.name));
        }
        // Flips: two in three in the flatbuffer's structure (tables, vtables, offsets,
        // shapes, names, quantisation: every byte outside constant data), the rest anywhere.
        // A flip in a name, a scale or an unused byte may still read.
        let structure = structure_positions(bytes, &tflite::parse(bytes, path).unwrap());
        let flips = 128;
        let read = flips_that_read(bytes, path, m.name, rng, flips, |rng, k| {
            if k % 3 == 2 {
                rng.index(n)
            } else {
                structure[rng.index(structure.len())]
            }
        });
        // Most flips in the structure must be caught; a flip in a name, a scale or an
        // unused byte may still read.
        // Some of the flips must have been caught: they did reach the structure.
        assert!(read < flips, "{}: all {flips} flipped files read", m.name);
        // Several flips at once.
        for _ in 0..8 {
            let mut copy = bytes.to_vec();
            for _ in 0..8 {
                let pos = rng.index(n);
                copy[pos] = u8::try_from(rng.index(256)).unwrap();
            }
            check_outcome(tflite::parse(&copy, path), path, m.name);
        }
    });
}

#[path = "tflite/builder.rs"]
mod builder;
#[path = "tflite/control.rs"]
mod control;
#[path = "tflite/signal.rs"]
mod signal;

use builder::*;

#[test]
fn built_model_reads() {
    let mut m = small_model();
    m.signature = Some((vec![("audio", 0)], vec![("scores", 3)]));
    let g = read_built(&m).unwrap();
    assert_eq!(g.name, "built");
    let ids: Vec<&str> = g.tensors.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["0", "1", "2", "3"]);
    assert_eq!(g.tensors[1].name, "w");
    assert_eq!(g.tensors[1].kind, TensorKind::Constant);
    assert_eq!(g.tensors[1].dtype, DType::I8);
    assert_eq!(g.tensors[1].size, 16);
    assert_eq!(
        g.tensors[1].data.as_deref(),
        Some(&(0..16).collect::<Vec<u8>>()[..])
    );
    assert_eq!(g.tensors[0].kind, TensorKind::Activation);
    assert_eq!(g.tensors[0].data, None);
    assert_eq!(g.ops[0].opcode, "FULLY_CONNECTED");
    assert_eq!(g.ops[1].opcode, "SOFTMAX");
    assert_eq!(g.ops[0].inputs[2], None);
    assert_eq!(g.ops[0].outputs.len(), 1);
    assert_eq!(g.inputs[0].name, "audio");
    assert_eq!(g.outputs[0].name, "scores");
    // Without a signature the tensor names are used.
    let g = read_built(&small_model()).unwrap();
    assert_eq!(
        (g.inputs[0].name.as_str(), g.outputs[0].name.as_str()),
        ("x", "y")
    );
}

#[test]
fn dynamic_dimensions_are_rejected_with_the_tensor_name() {
    // An unknown dimension in the shape itself.
    let msg = error_with(|m| m.subgraphs[0].tensors[0].shape = vec![1, -1]);
    assert!(
        msg.contains("tensor 0 `x`") && msg.contains("dynamic"),
        "{msg}"
    );
    // A dynamic signature dimension over an empty (0) or missing size in `shape`.
    let mut m = small_model();
    m.subgraphs[0].tensors[2].shape = vec![1, 0];
    m.subgraphs[0].tensors[2].signature = Some(vec![1, -1]);
    let msg = error_of(&m);
    assert!(
        msg.contains("tensor 2 `h`") && msg.contains("[1, -1]"),
        "{msg}"
    );
    let msg = error_with(|m| m.subgraphs[0].tensors[2].signature = Some(vec![1, -1, 4]));
    assert!(msg.contains("tensor 2 `h`"), "{msg}");
    // "Any batch" over an exported batch of 1 is what converters write: planned as 1,
    // silently.
    let mut m = small_model();
    m.subgraphs[0].tensors[0].signature = Some(vec![-1, 4]);
    let g = read_built(&m).unwrap();
    assert_eq!(g.tensors[0].shape, [1, 4]);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
}

/// A `-1` in the signature where `shape` has a concrete size (an unrolled LSTM's
/// `[49, 1, 10]` under `[49, -1, 10]`) plans with `shape`'s size and warns, wherever it is.
#[test]
fn dynamic_signature_over_a_concrete_shape_plans_with_a_warning() {
    let mut m = small_model();
    let ts = &mut m.subgraphs[0].tensors;
    ts[0].shape = vec![49, 1, 4];
    ts[0].signature = Some(vec![49, -1, 4]);
    ts[2].shape = vec![49, 1, 4];
    ts[2].signature = Some(vec![-1, 1, -1]);
    ts[3].shape = vec![49, 1, 4];
    let g = read_built(&m).unwrap();
    assert_eq!(g.tensors[0].shape, [49, 1, 4]);
    assert_eq!(g.tensors[0].size, 196);
    assert_eq!(g.tensors[2].shape, [49, 1, 4]);
    assert_eq!(g.warnings.len(), 1, "{:?}", g.warnings);
    let w = &g.warnings[0];
    assert!(w.starts_with(BUILT), "{w}");
    assert!(
        w.contains("tensor 0 `x`") && w.contains("[49, -1, 4]") && w.contains("[49, 1, 4]"),
        "{w}"
    );
    assert!(w.contains("1 more"), "{w}");
    let planned = planner::plan_graph(&Manifest::for_model_file(Path::new(BUILT)), &g).unwrap();
    assert_eq!(planned.graph.warnings, g.warnings);
    verify::verify(&planned.graph, &planned.plan).unwrap();
}

#[test]
fn ops_that_run_other_subgraphs_are_rejected_by_name() {
    // CALL (31) with two subgraphs it could run (IF, WHILE and CALL_ONCE are read: see
    // `tflite/control.rs`).
    let body = SubgraphSpec {
        tensors: vec![tensor("i", &[1], 0), tensor("o", &[1], 0)],
        ops: vec![],
        inputs: vec![0],
        outputs: vec![1],
    };
    let mut m = small_model();
    m.codes.push(code(31));
    m.subgraphs[0].ops.push(op(2, &[3], &[3]));
    m.subgraphs.push(body.clone());
    m.subgraphs.push(body);
    let msg = error_of(&m);
    assert!(
        msg.contains("op 2 is CALL") && msg.contains("3 subgraphs"),
        "{msg}"
    );
    // CALL_ONCE (129) through the extended builtin_code field: read, and refused for want
    // of the options that name its subgraph.
    let mut m2 = m.clone();
    m2.codes[2] = CodeSpec {
        deprecated: 127,
        builtin: 129,
        custom: None,
    };
    assert!(error_of(&m2).contains("CALL_ONCE"));
    // An operator code this reader does not know, in a model with several subgraphs.
    m2.codes[2] = CodeSpec {
        deprecated: 127,
        builtin: 400,
        custom: None,
    };
    assert!(error_of(&m2).contains("code 400"));
    // The same unknown code with one subgraph cannot run another one: read.
    let mut m3 = m2.clone();
    m3.subgraphs.truncate(1);
    assert_eq!(read_built(&m3).unwrap().ops[2].opcode, "BUILTIN:400");
}

#[test]
fn operator_codes() {
    let mut m = small_model();
    // Old files have only the deprecated byte; new ones past 127 only the extended field.
    m.codes[0] = CodeSpec {
        deprecated: 8,
        builtin: 0,
        custom: None,
    };
    m.codes[1] = CodeSpec {
        deprecated: 127,
        builtin: 150,
        custom: None,
    };
    let g = read_built(&m).unwrap();
    assert_eq!(
        (g.ops[0].opcode.as_str(), g.ops[1].opcode.as_str()),
        ("FLOOR", "GELU")
    );
    m.codes[1] = CodeSpec {
        deprecated: 32,
        builtin: 32,
        custom: Some("MyPostProcess"),
    };
    assert_eq!(
        read_built(&m).unwrap().ops[1].opcode,
        "CUSTOM:MyPostProcess"
    );
    // A custom op the toolchain knows reads its options: the SSD decoder without any is
    // refused by name.
    m.codes[1].custom = Some("TFLite_Detection_PostProcess");
    let msg = error_of(&m);
    assert!(
        msg.contains("op 1 (CUSTOM:TFLite_Detection_PostProcess): its custom options have no `max_detections`"),
        "{msg}"
    );
    m.codes[1].custom = None;
    assert!(error_of(&m).contains("custom operator without a custom_code"));
    assert!(
        error_with(|m| m.subgraphs[0].ops[1].code = 7)
            .contains("op 1 uses operator code 7, but the model has 2")
    );
}

#[test]
fn indices_out_of_range_are_errors() {
    let msg = error_with(|m| m.subgraphs[0].tensors[1].buffer = 7);
    assert_says(
        &msg,
        &["tensor 1 `w` names buffer 7, but the model has 2 buffers"],
    );
    let msg = error_with(|m| m.subgraphs[0].ops[1].inputs = vec![9]);
    assert_says(&msg, &["op 1 (SOFTMAX) input 0 names tensor 9"]);
    assert!(
        error_with(|m| m.subgraphs[0].ops[1].outputs = vec![-1])
            .contains("output 0 names tensor -1")
    );
    assert!(
        error_with(|m| m.subgraphs[0].outputs = vec![4])
            .contains("subgraph 0 output 0 names tensor 4")
    );
    assert!(error_with(|m| m.subgraphs.clear()).contains("no subgraph"));
}

#[test]
fn sizes_are_checked() {
    // A shape whose byte count passes 2^64.
    let mut m = small_model();
    m.subgraphs[0].tensors[2].shape = vec![i32::MAX, i32::MAX, i32::MAX];
    m.subgraphs[0].tensors[2].ty = 4; // INT64
    let msg = error_of(&m);
    assert!(
        msg.contains("tensor 2 `h`") && msg.contains("more than 2^64"),
        "{msg}"
    );
    // A constant whose buffer does not match its shape.
    let mut m = small_model();
    m.buffers[1] = BufferSpec::Data(vec![1; 15]);
    assert!(error_of(&m).contains("needs 16 bytes, but its buffer holds 15"));
    // Packed INT4: three elements in two bytes.
    let mut m = small_model();
    m.subgraphs[0].tensors[1].shape = vec![3];
    m.subgraphs[0].tensors[1].ty = 17;
    m.buffers[1] = BufferSpec::Data(vec![0x21, 0x03]);
    let g = read_built(&m).unwrap();
    // ... the filter of op 0 (FULLY_CONNECTED): unpacked to int8, low nibble first.
    assert_eq!((g.tensors[1].dtype, g.tensors[1].size), (DType::I8, 3));
    assert_eq!(g.tensors[1].data.as_deref(), Some(&[1u8, 2, 3][..]));
    // ... input 1 of another kind (ADD): left packed, for its kernel to refuse by name.
    m.codes[0] = code(0);
    let g = read_built(&m).unwrap();
    assert_eq!((g.tensors[1].dtype, g.tensors[1].size), (DType::I4, 2));
    // Size-0 intermediates take no bytes.
    let mut m = small_model();
    m.subgraphs[0].tensors.push(tensor("scratch", &[0], 0));
    m.subgraphs[0].ops[0].intermediates = vec![4];
    let g = read_built(&m).unwrap();
    assert_eq!(g.ops[0].scratch, [planner::graph::TensorIndex(4)]);
    assert_eq!(g.tensors[4].size, 0);
    // FLOAT32 is 4 bytes an element.
    let mut m = small_model();
    m.subgraphs[0].tensors[2].ty = 0;
    assert_eq!(read_built(&m).unwrap().tensors[2].size, 16);
    // A type with no size here.
    assert!(error_with(|m| m.subgraphs[0].tensors[2].ty = 19).contains("INT2 (19)"));
}

#[test]
fn strings_and_variables() {
    // STRING activation: size unknown
    let msg = error_with(|m| m.subgraphs[0].tensors[2].ty = 5);
    assert_says(&msg, &["tensor 2 `h` has type string but is not constant"]);
    let mut m = small_model();
    m.subgraphs[0].tensors[1].ty = 5; // STRING constant: its bytes
    let g = read_built(&m).unwrap();
    assert_eq!(
        (g.tensors[1].kind, g.tensors[1].size),
        (TensorKind::Constant, 16)
    );
    let mut m = small_model();
    m.subgraphs[0].tensors[2].variable = true;
    assert_eq!(
        read_built(&m).unwrap().tensors[2].kind,
        TensorKind::Variable
    );
}

#[test]
fn quantization_and_sparsity() {
    let mut m = small_model();
    m.subgraphs[0].tensors[1].quantization =
        Some((vec![0.5, 0.25, 0.125, 1.0], vec![0, 1, 2, 3], 0));
    m.subgraphs[0].tensors[2].quantization = Some((vec![0.75], vec![-128], 0));
    let g = read_built(&m).unwrap();
    let q = g.tensors[1].quantization.as_ref().unwrap();
    assert_eq!(
        (q.scale.as_slice(), q.zero_point.as_slice(), q.axis),
        (&[0.5, 0.25, 0.125, 1.0][..], &[0, 1, 2, 3][..], 0)
    );
    let q = g.tensors[2].quantization.as_ref().unwrap();
    assert_eq!(
        (q.scale.as_slice(), q.zero_point.as_slice()),
        (&[0.75][..], &[-128][..])
    );
    assert_eq!(g.tensors[0].quantization, None);
    // A sparse constant is refused: no dense view of its shape fits its stored bytes.
    let mut m = small_model();
    m.subgraphs[0].tensors[1].sparse = true;
    m.buffers[1] = BufferSpec::Data(vec![7; 6]);
    assert!(error_of(&m).contains("is a sparse (compressed) constant"));
    // A sparse activation has no size before run time.
    assert!(
        error_with(|m| m.subgraphs[0].tensors[2].sparse = true)
            .contains("tensor 2 `h` is sparse but is not constant")
    );
}

#[test]
fn external_buffers_are_read_at_their_offset() {
    // Files over 2 GiB keep buffers after the flatbuffer, at `offset`/`size`; a small file
    // laid out the same way exercises the same path.
    let mut m = small_model();
    let offset = 1u64 << 16;
    m.buffers[1] = BufferSpec::External { offset, size: 16 };
    let mut bytes = build(&m);
    assert!(bytes.len() < 1 << 16);
    bytes.resize(1 << 16, 0);
    bytes.extend(100..116u8);
    let g = tflite::parse(&bytes, Path::new(BUILT)).unwrap();
    assert_eq!(
        g.tensors[1].data.as_deref(),
        Some(&(100..116).collect::<Vec<u8>>()[..])
    );
    // Past the end of the file.
    bytes.truncate(bytes.len() - 1);
    let e = tflite::parse(&bytes, Path::new(BUILT)).unwrap_err();
    assert!(
        e.message()
            .contains("buffer 1 of tensor 1 `w` lies at bytes 65536..65552"),
        "{e}"
    );
}

#[test]
fn not_a_model() {
    let path = Path::new(BUILT);
    let e = tflite::parse(b"TFL3", path).unwrap_err();
    assert!(e.message().contains("too short"), "{e}");
    let mut bytes = build(&small_model());
    bytes[4..8].copy_from_slice(b"ONNX");
    let e = tflite::parse(&bytes, path).unwrap_err();
    assert!(e.message().contains("file identifier is \"ONNX\""), "{e}");
    assert!(error_with(|m| m.version = 2).contains("schema version is 2"));
    let e = tflite::read(Path::new("does/not/exist.tflite")).unwrap_err();
    assert!(e.is_io(), "{e}");
}

/// Byte positions of every operator's options in a model: the union's type byte, the offset
/// to the table, and the table with its vtable (raw reads; the file is a valid model).
fn options_positions(bytes: &[u8]) -> Vec<usize> {
    options_layout(bytes).0
}

/// [`options_positions`], and the position of each operator's offset to its options table.
fn options_layout(bytes: &[u8]) -> (Vec<usize>, Vec<usize>) {
    let u32_at = |p: usize| u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
    let u16_at = |p: usize| u16::from_le_bytes(bytes[p..p + 2].try_into().unwrap()) as usize;
    let vtable = |t: usize| {
        let soffset = i32::from_le_bytes(bytes[t..t + 4].try_into().unwrap());
        (t as i64 - i64::from(soffset)) as usize
    };
    let field_at = |t: usize, id: usize| {
        let vt = vtable(t);
        let slot = 4 + 2 * id;
        (slot < u16_at(vt) && u16_at(vt + slot) != 0).then(|| t + u16_at(vt + slot))
    };
    let deref = |p: usize| p + u32_at(p);
    let root = u32_at(0);
    let subgraphs = deref(field_at(root, 2).unwrap());
    let main = deref(subgraphs + 4);
    let ops = deref(field_at(main, 3).unwrap());
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for i in 0..u32_at(ops) {
        let op = deref(ops + 4 + 4 * i);
        if let Some(key) = field_at(op, 3) {
            out.push(key);
        }
        let Some(value) = field_at(op, 4) else {
            continue;
        };
        out.extend(value..value + 4);
        offsets.push(value);
        let t = deref(value);
        let vt = vtable(t);
        out.extend(vt..vt + u16_at(vt));
        out.extend(t..t + u16_at(vt + 2));
    }
    out.sort_unstable();
    out.dedup();
    (out, offsets)
}

#[test]
fn corrupted_options_are_errors_not_panics() {
    each_model_file(0x0B71_0115_0000_0012, |m, path, bytes, rng| {
        let positions = options_positions(bytes);
        assert!(!positions.is_empty(), "{}: no options found", m.name);
        let flips = 96;
        let read = flips_that_read(bytes, path, m.name, rng, flips, |rng, _| {
            positions[rng.index(positions.len())]
        });
        // A flipped option value may still be a valid one (a stride of 3, a padding of
        // VALID); a flipped type, offset or vtable mostly is not.
        assert!(read < flips, "{}: no options flip was caught", m.name);
    });
}

/// `small_model` with op 0 of operator code `builtin` and with `options`.
fn with_op_options(builtin: i32, options: (u8, Option<OptionFields>)) -> ModelSpec {
    let mut m = small_model();
    m.codes[0] = code(builtin);
    m.subgraphs[0].ops[0].options = Some(options);
    m
}

/// `small_model` with options on op 0 (FULLY_CONNECTED).
fn with_fc_options(key: u8, fields: Option<OptionFields>) -> ModelSpec {
    with_op_options(9, (key, fields))
}

/// The options op 0 of [`with_op_options`] reads as.
fn options_of(builtin: i32, options: (u8, Option<OptionFields>)) -> planner::graph::OpOptions {
    let g = read_built(&with_op_options(builtin, options)).unwrap();
    g.ops.into_iter().next().unwrap().options
}

#[test]
fn options_are_read_and_checked() {
    use planner::graph::OpOptions;
    use planner::rt::options::{Activation, FullyConnectedOptions, WeightsFormat};
    let g = read_built(&with_fc_options(8, Some(vec![(0, 3), (2, 1)]))).unwrap();
    assert_eq!(
        g.ops[0].options,
        OpOptions::FullyConnected(FullyConnectedOptions {
            activation: Activation::Relu6,
            weights_format: WeightsFormat::Default,
            keep_num_dims: true,
            asymmetric_quantize_inputs: false,
        })
    );
    // No options table: the schema's defaults.
    let g = read_built(&small_model()).unwrap();
    assert!(
        matches!(g.ops[0].options, OpOptions::FullyConnected(o) if o.activation == Activation::None)
    );
    assert!(matches!(g.ops[1].options, OpOptions::Softmax(o) if o.beta == 0.0));
    // An enum value outside the schema names the op and the field.
    let msg = error_of(&with_fc_options(8, Some(vec![(0, 9)])));
    assert_says(
        &msg,
        &["op 0 (FULLY_CONNECTED) has fused_activation_function 9"],
    );
    let msg = error_of(&with_fc_options(8, Some(vec![(1, 4)])));
    assert!(msg.contains("weights_format 4"), "{msg}");
    // Options of another op kind, or of a type this reader does not know.
    let msg = error_of(&with_fc_options(1, Some(vec![(0, 1)])));
    assert!(
        msg.contains(
            "type 1 (Conv2DOptions), but a FULLY_CONNECTED op has FullyConnectedOptions (8)"
        ),
        "{msg}"
    );
    let msg = error_of(&with_fc_options(200, Some(vec![])));
    assert!(msg.contains("type 200 (unknown)"), "{msg}");
    // A type without its table.
    let msg = error_of(&with_fc_options(8, None));
    assert!(msg.contains("has no options table"), "{msg}");
    // A conv op with a stride of 0 or an unknown padding.
    let msg = error_of(&with_op_options(3, (1, Some(vec![(0, 1), (1, 0), (2, 1)]))));
    assert!(msg.contains("op 0 (CONV_2D) has stride_w 0"), "{msg}");
    let msg = error_of(&with_op_options(3, (1, Some(vec![(0, 2), (1, 1), (2, 1)]))));
    assert!(msg.contains("padding 2"));
}

#[test]
fn options_of_later_op_kinds_are_read_and_checked() {
    use planner::graph::OpOptions;
    use planner::rt::options::Activation;
    // RESIZE_NEAREST_NEIGHBOR: ResizeNearestNeighborOptions (74), align_corners (field 0)
    // and half_pixel_centers (field 1), both false without a table.
    use planner::rt::options::ResizeNearestNeighborOptions;
    let mut m = small_model();
    m.codes[0] = code(97);
    let resize = |align_corners, half_pixel_centers| {
        OpOptions::ResizeNearestNeighbor(ResizeNearestNeighborOptions {
            align_corners,
            half_pixel_centers,
        })
    };
    for (fields, want) in [
        (None, resize(false, false)),
        (Some(vec![(0, 1)]), resize(true, false)),
        (Some(vec![(1, 1)]), resize(false, true)),
        (Some(vec![(0, 1), (1, 1)]), resize(true, true)),
    ] {
        m.subgraphs[0].ops[0].options = fields.map(|f| (74, Some(f)));
        assert_eq!(read_built(&m).unwrap().ops[0].options, want);
    }
    m.subgraphs[0].ops[0].options = Some((120, Some(vec![(0, 1)])));
    let msg = error_of(&m);
    assert!(
        msg.contains(
            "type 120 (unknown), but a RESIZE_NEAREST_NEIGHBOR op has ResizeNearestNeighborOptions (74)"
        ),
        "{msg}"
    );
    // PACK (PackOptions 59), UNPACK (UnpackOptions 64), RESIZE_BILINEAR
    // (ResizeBilinearOptions 15, fields 2 and 3), TRANSPOSE_CONV (TransposeConvOptions 49).
    use planner::rt::options::{
        PackOptions, Padding, ResizeBilinearOptions, TransposeConvOptions, UnpackOptions,
    };
    for (builtin, options, want) in [
        (
            83,
            (59, Some(vec![(0, 3), (1, -1)])),
            OpOptions::Pack(PackOptions {
                axis: -1,
                values_count: 3,
            }),
        ),
        (
            88,
            (64, Some(vec![(0, 4), (1, 1)])),
            OpOptions::Unpack(UnpackOptions { axis: 1, num: 4 }),
        ),
        (
            23,
            (15, Some(vec![(2, 1), (3, 1)])),
            OpOptions::ResizeBilinear(ResizeBilinearOptions {
                align_corners: true,
                half_pixel_centers: true,
            }),
        ),
        (
            67,
            (49, Some(vec![(0, 1), (1, 2), (2, 3), (3, 1)])),
            OpOptions::TransposeConv(TransposeConvOptions {
                padding: Padding::Valid,
                stride_w: 2,
                stride_h: 3,
                activation: Activation::Relu,
            }),
        ),
    ] {
        assert_eq!(options_of(builtin, options), want);
    }
    let msg = error_of(&with_op_options(
        67,
        (49, Some(vec![(0, 1), (1, 0), (2, 1)])),
    ));
    assert_says(&msg, &["op 0 (TRANSPOSE_CONV) has stride_w 0"]);
    // SPLIT takes its axis from constant input 0, SPLIT_V from input 2: not constant, of
    // another type, or missing, each is an error naming the op and the tensor.
    let mut m = with_op_options(49, (35, Some(vec![(0, 2)])));
    let msg = error_of(&m);
    assert_says(
        &msg,
        &["op 0 (SPLIT) takes its axis from tensor `x`, which is not constant"],
    );
    m.subgraphs[0].ops[0].inputs = vec![1, 0];
    let msg = error_of(&m);
    assert_says(&msg, &["takes its axis from tensor `w` of type i8"]);
    m.codes[0] = code(102);
    m.subgraphs[0].ops[0].options = Some((79, Some(vec![(0, 2)])));
    m.subgraphs[0].ops[0].inputs = vec![0, 1, -1];
    let msg = error_of(&m);
    assert_says(&msg, &["op 0 (SPLIT_V) has no input 2 (axis)"]);
    // An op kind without typed options (LSH_PROJECTION) keeps none, whatever its options.
    assert_eq!(options_of(15, (4, Some(vec![(0, 1)]))), OpOptions::None);
}

#[test]
fn options_of_the_batch_1_kinds_are_read_and_checked() {
    use planner::graph::OpOptions;
    use planner::rt::options::Activation;
    // Batch 1 of issue 25: GATHER (GatherOptions, 23), DIV (DivOptions, 29), LEAKY_RELU
    // (LeakyReluOptions, 75); ARG_MAX's output_type (ArgMaxOptions, 40) is int32 or int64.
    use planner::rt::options::{DivOptions, GatherOptions, LeakyReluOptions};
    assert_eq!(
        options_of(36, (23, Some(vec![(0, -1), (1, 0)]))),
        OpOptions::Gather(GatherOptions {
            axis: -1,
            batch_dims: 0
        })
    );
    assert_eq!(
        options_of(42, (29, Some(vec![(0, 3)]))),
        OpOptions::Div(DivOptions {
            activation: Activation::Relu6
        })
    );
    assert_eq!(
        options_of(98, (75, Some(vec![(0, 0.2f32.to_bits() as i32)]))),
        OpOptions::LeakyRelu(LeakyReluOptions { alpha: 0.2 })
    );
    let msg = error_of(&with_op_options(
        98,
        (75, Some(vec![(0, f32::NAN.to_bits() as i32)])),
    ));
    assert_says(
        &msg,
        &["op 0 (LEAKY_RELU) has LeakyReluOptions.alpha = NaN"],
    );
    let msg = error_of(&with_op_options(56, (40, Some(vec![(0, 9)]))));
    assert!(msg.contains("op 0 (ARG_MAX) has output_type 9"), "{msg}");
    // A table whose offset leaves the file fails verification.
    let mut bytes = build(&with_fc_options(8, Some(vec![(0, 1)])));
    let at = options_layout(&bytes).1[0];
    bytes[at + 3] = 0x7f;
    let e = tflite::parse(&bytes, Path::new(BUILT)).unwrap_err();
    assert!(e.message().contains("verification"), "{}", e.message());
}

#[test]
fn options_of_the_issue_39_kinds_are_read_and_checked() {
    use planner::graph::OpOptions;
    use planner::rt::options::{
        Activation, BatchMatMulOptions, BlockSizeOptions, CumsumOptions, L2NormOptions,
        MirrorPadMode, MirrorPadOptions,
    };
    // BATCH_MATMUL (BatchMatMulOptions 101), CUMSUM (CumsumOptions 102), DEPTH_TO_SPACE
    // (DepthToSpaceOptions 94), SPACE_TO_DEPTH (SpaceToDepthOptions 19), L2_NORMALIZATION
    // (L2NormOptions 12), MIRROR_PAD (MirrorPadOptions 77).
    for (builtin, options, want) in [
        (
            126,
            (101, Some(vec![(1, 1)])),
            OpOptions::BatchMatMul(BatchMatMulOptions {
                adj_x: false,
                adj_y: true,
                asymmetric_quantize_inputs: false,
            }),
        ),
        (
            128,
            (102, Some(vec![(0, 1), (1, 1)])),
            OpOptions::Cumsum(CumsumOptions {
                exclusive: true,
                reverse: true,
            }),
        ),
        (
            5,
            (94, Some(vec![(0, 2)])),
            OpOptions::DepthToSpace(BlockSizeOptions { block_size: 2 }),
        ),
        (
            26,
            (19, Some(vec![(0, 3)])),
            OpOptions::SpaceToDepth(BlockSizeOptions { block_size: 3 }),
        ),
        (
            11,
            (12, Some(vec![(0, 1)])),
            OpOptions::L2Normalization(L2NormOptions {
                activation: Activation::Relu,
            }),
        ),
        (
            100,
            (77, Some(vec![(0, 1)])),
            OpOptions::MirrorPad(MirrorPadOptions {
                mode: MirrorPadMode::Symmetric,
            }),
        ),
        (
            100,
            (77, Some(vec![])),
            OpOptions::MirrorPad(MirrorPadOptions {
                mode: MirrorPadMode::Reflect,
            }),
        ),
    ] {
        assert_eq!(options_of(builtin, options), want);
    }
    let msg = error_of(&with_op_options(5, (94, Some(vec![]))));
    assert_says(
        &msg,
        &["op 0 (DEPTH_TO_SPACE) has block_size 0; it must be at least 1"],
    );
    let msg = error_of(&with_op_options(100, (77, Some(vec![(0, 2)]))));
    assert_says(&msg, &["op 0 (MIRROR_PAD) has mode 2"]);
    let msg = error_of(&with_op_options(128, (94, Some(vec![(0, 2)]))));
    assert!(
        msg.contains("but a CUMSUM op has CumsumOptions (102)"),
        "{msg}"
    );
}

#[test]
fn options_of_every_bundled_model_survive_the_plan_file() {
    use planner::planfile::{BuildPlanFile, Layout, PlanFile};
    for m in &MODELS {
        let path = model_path(m.name);
        let g = tflite::read(&path).unwrap();
        let typed = g
            .ops
            .iter()
            .filter(|o| o.options != planner::graph::OpOptions::None);
        assert_eq!(
            typed.count(),
            g.ops.len(),
            "{}: an op without typed options",
            m.name
        );
        let planned = planner::plan_graph(&Manifest::for_model_file(&path), &g).unwrap();
        let file = PlanFile::from_plan(
            &g,
            &planned.plan,
            &Layout {
                min_alignment: 16,
                constraints: vec![],
            },
        )
        .unwrap();
        let back = PlanFile::parse(std::str::from_utf8(&file.to_bytes()).unwrap(), "t").unwrap();
        for (k, (op, entry)) in g.ops.iter().zip(&back.ops).enumerate() {
            assert_eq!(op.options, entry.options, "{} op {k}", m.name);
            assert_eq!(
                op.options.opcode(),
                Some(op.opcode.as_str()),
                "{} op {k}",
                m.name
            );
        }
    }
}
