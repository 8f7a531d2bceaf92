//! TensorFlow Lite flatbuffers (`.tflite`) in, [`Graph`] out.
//!
//! [`read`] loads a file, [`parse`] reads bytes already in memory. Both return the main
//! subgraph (subgraph 0) as a validated [`Graph`]: tensor ids are the tensors' indices in
//! the subgraph as decimal strings, names are the TFLite tensor names, operators keep the
//! file's execution order. The ops of every subgraph an `IF`, `WHILE` or `CALL_ONCE` runs
//! join the op list where that op stood, their tensors after subgraph 0's (ids: their index
//! in the graph; names: `<subgraph name>/<tensor name>`), with a [`Graph::control`] entry;
//! resource variables become persistent tensors (the `control` module says how).
//!
//! # How the file is read
//!
//! The whole flatbuffer is first run through the `flatbuffers` crate's [`Verifier`], with
//! one verifier per table below that checks every field this module reads, at the type it
//! is read as. Only then are fields read, by field id, through the crate's [`Table`] API.
//! The schema is not compiled into this crate: the few tables and fields read are declared
//! here by hand, and everything else in the file (the options of op kinds without typed
//! options, sparsity details, metadata, the description) is skipped without being
//! interpreted.
//!
//! | table | field (id) | used for |
//! |---|---|---|
//! | `Model` | `version` (0), `operator_codes` (1), `subgraphs` (2), `buffers` (4), `signature_defs` (7) | schema version 3 only; everything below |
//! | `OperatorCode` | `deprecated_builtin_code` (0), `custom_code` (1), `builtin_code` (3) | [`Op::opcode`]: the larger of the two builtin codes, named as TFLite names it (`"CONV_2D"`), `"CUSTOM:<custom_code>"`, or `"BUILTIN:<code>"` for a code newer than this reader |
//! | `SubGraph` | `tensors` (0), `inputs` (1), `outputs` (2), `operators` (3) | tensors, [`Graph::inputs`], [`Graph::outputs`], ops |
//! | `Tensor` | `shape` (0), `type` (1), `buffer` (2), `name` (3), `quantization` (4), `is_variable` (5), `sparsity` (6, presence only), `shape_signature` (7) | [`Tensor`] |
//! | `QuantizationParameters` | `scale` (2), `zero_point` (3), `quantized_dimension` (6) | [`Quantization`] |
//! | `Operator` | `opcode_index` (0), `inputs` (1), `outputs` (2), `builtin_options_type` (3), `builtin_options` (4), `custom_options` (5), `custom_options_format` (6), `intermediates` (8) | [`Op`]; input `-1` is an absent optional input; intermediates become [`Op::scratch`]; the options union, or a signal op's FlexBuffers custom options, becomes [`Op::options`] (see the `options` module for the tables read) |
//! | `Buffer` | `data` (0), `offset` (1), `size` (2) | constant bytes, inline or, for files over 2 GiB, at `offset`/`size` from the start of the file |
//! | `SignatureDef` | `inputs` (0), `outputs` (1), `subgraph_index` (4) | input and output names ([`IoName`]) |
//! | `TensorMap` | `name` (0), `tensor_index` (1) | the same |
//!
//! # What becomes what
//!
//! - A tensor whose buffer holds bytes is a [`TensorKind::Constant`] with those bytes
//!   (constants stored once in the file share one copy: compare [`Tensor::data`] with
//!   [`Arc::ptr_eq`] to count weights once); an `is_variable` tensor is a [`TensorKind::Variable`] (its initial bytes, if any, are not
//!   kept); every other tensor is an [`TensorKind::Activation`].
//! - Size = bytes per element × product of the shape, checked for overflow. `INT4` packs two
//!   elements per byte (rounded up). A sparse constant is refused (no dense view fits it). A shape
//!   with a `0` dimension (the empty intermediates of LSTM operators) takes no bytes.
//! - An `INT4` constant that is the filter (input 1) of a `CONV_2D`, `DEPTHWISE_CONV_2D` or
//!   `FULLY_CONNECTED` becomes an int8 constant of the same shape, unpacked as TFLM unpacks it
//!   at every run (the `int4` module): the int8 kernels run it, no arena byte unpacks it.
//! - `shape` gives the dimensions. A `-1` in `shape_signature` where `shape` has a concrete
//!   size is planned with that size (TFLM and Vela do the same): the exported size is the one
//!   a microcontroller runs. On the batch (first) dimension of a tensor of rank 2 or more,
//!   what converters write for "any batch size", this is silent; anywhere else the graph
//!   carries a warning ([`Graph::warnings`]) naming the tensors.
//! - Input and output names come from the signature of subgraph 0 where the model has one,
//!   otherwise from the tensor names.
//!
//! # What is rejected, with an error naming the file and what is wrong
//!
//! A file that is too short, lacks the `TFL3` identifier, fails the verifier, or has a schema
//! version other than 3; an index (buffer, tensor, operator code) out of range; a dynamic
//! dimension (`-1` in `shape`, or a `-1` in `shape_signature` where `shape` gives no size:
//! `0`, `-1`, or a rank that differs); a size that overflows 64 bits; a
//! constant whose bytes do not match its shape; a `STRING`, `RESOURCE` or `VARIANT` tensor
//! that is not constant (its size is only known at run time; a `RESOURCE` variable handle
//! is resolved instead); a tensor type this planner has no size for; an operator that runs
//! other subgraphs other than `IF`, `WHILE` and `CALL_ONCE` (`CALL` and the StableHLO ops
//! with bodies), a subgraph that runs itself, and a malformed `IF`, `WHILE`, `CALL_ONCE` or
//! variable op (see the `control` module); and, in a model with several subgraphs, a builtin
//! code this reader does not know (it might run one). Subgraphs no op runs are checked by the
//! verifier but not planned.

use std::collections::BTreeMap;
use std::path::Path;
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use flatbuffers::{
    Follow, ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Vector, Verifiable, Verifier,
    VerifierOptions,
};

use crate::error::{Error, Result};
use crate::graph::{
    DType, Graph, IoName, Op, OpOptions, Quantization, Tensor, TensorIndex, TensorKind,
};

/// The file identifier of TFLite flatbuffers, at bytes 4..8.
const IDENTIFIER: &[u8; 4] = b"TFL3";

/// How many times its own length a file's flatbuffer may expand to when every offset is
/// followed (see [`VerifierOptions::max_apparent_size`]).
const APPARENT_SIZE_FACTOR: usize = 8;

/// The schema version this reader understands.
const SCHEMA_VERSION: u32 = 3;

/// Reads the `.tflite` file at `path` and returns its main subgraph.
pub fn read(path: &Path) -> Result<Graph> {
    let bytes = super::limited::read_flatbuffer(path)?;
    parse(&bytes, path)
}

/// Reads a `.tflite` flatbuffer held in memory; `path_for_errors` names it in errors and
/// gives the graph its name (the file stem).
pub fn parse(bytes: &[u8], path_for_errors: &Path) -> Result<Graph> {
    Reader {
        path: path_for_errors,
        bytes,
    }
    .graph()
}

/// The field offset of field `id` in a vtable (two `u16` header words, then one per field).
const fn field_offset(id: VOffsetT) -> VOffsetT {
    4 + 2 * id
}

/// Declares a wrapper for one flatbuffer table: the fields it reads (by id and type), a
/// [`Verifiable`] implementation that checks exactly those fields at exactly those types,
/// and one accessor per field. Declaring both from one list keeps them in step, which is
/// what makes the `unsafe` reads in the accessors sound.
///
/// A table with a union field adds `union <key id> / <value id> => <verifier>;` after the
/// fields: the key is verified as `u8` (declare it as a field too), the value by the
/// verifier function, given the key and the position of the value's offset.
macro_rules! table {
    ($(#[$doc:meta])* $name:ident<$lt:lifetime> {
        $($(#[$fdoc:meta])* $id:literal $field:ident: $ty:ty,)*
    } $(union $kid:literal / $vid:literal => $verify:path;)?) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        struct $name<$lt>(Table<$lt>);

        impl<$lt> Follow<$lt> for $name<$lt> {
            type Inner = Self;
            unsafe fn follow(buf: &$lt [u8], loc: usize) -> Self {
                // SAFETY: `Follow::follow`'s caller guarantees a valid table at `loc`, which
                // is exactly `Table::new`'s requirement.
                $name(unsafe { Table::new(buf, loc) })
            }
        }

        impl<$lt> Verifiable for $name<$lt> {
            fn run_verifier(
                v: &mut Verifier<'_, '_>,
                pos: usize,
            ) -> core::result::Result<(), InvalidFlatbuffer> {
                #[allow(unused_mut)]
                let mut t = v.visit_table(pos)?
                    $(.visit_field::<$ty>(stringify!($field), field_offset($id), false)?)*;
                $(
                    let key = match t.deref(field_offset($kid))? {
                        Some(at) => t.verifier().get_u8(at)?,
                        None => 0,
                    };
                    if let Some(at) = t.deref(field_offset($vid))? {
                        $verify(key, t.verifier(), at)?;
                    }
                )?
                t.finish();
                Ok(())
            }
        }

        #[allow(dead_code)]
        impl<$lt> $name<$lt> {
            $(
                $(#[$fdoc])*
                fn $field(&self) -> Option<<$ty as Follow<$lt>>::Inner> {
                    // SAFETY: tables are only reached from a root that passed the verifier,
                    // and this table's `run_verifier` (generated from the same field list)
                    // checked field `$id` as `$ty` when present.
                    unsafe { self.0.get::<$ty>(field_offset($id), None) }
                }
            )*

            /// True when the field with this id is present (reads the verified vtable only).
            fn has(&self, id: VOffsetT) -> bool {
                self.0.vtable().get(field_offset(id)) != 0
            }
        }
    };
}

/// A vector of tables.
type Tables<'a, T> = ForwardsUOffset<Vector<'a, ForwardsUOffset<T>>>;
/// A vector of scalars.
type Scalars<'a, T> = ForwardsUOffset<Vector<'a, T>>;
/// A string.
type Str<'a> = ForwardsUOffset<&'a str>;

table! {
    /// `Model`, the root table.
    Model<'a> {
        0 version: u32,
        1 operator_codes: Tables<'a, OperatorCode<'a>>,
        2 subgraphs: Tables<'a, SubGraph<'a>>,
        4 buffers: Tables<'a, Buffer<'a>>,
        7 signature_defs: Tables<'a, SignatureDef<'a>>,
    }
}

table! {
    /// `OperatorCode`: which operator an `Operator` runs.
    OperatorCode<'a> {
        0 deprecated_builtin_code: i8,
        1 custom_code: Str<'a>,
        3 builtin_code: i32,
    }
}

table! {
    /// `SubGraph`: tensors and operators in execution order.
    SubGraph<'a> {
        0 tensors: Tables<'a, TensorTable<'a>>,
        1 inputs: Scalars<'a, i32>,
        2 outputs: Scalars<'a, i32>,
        3 operators: Tables<'a, Operator<'a>>,
        4 name: Str<'a>,
    }
}

table! {
    /// `Tensor`.
    TensorTable<'a> {
        0 shape: Scalars<'a, i32>,
        1 tensor_type: i8,
        2 buffer: u32,
        3 name: Str<'a>,
        4 quantization: ForwardsUOffset<QuantizationParameters<'a>>,
        5 is_variable: bool,
        7 shape_signature: Scalars<'a, i32>,
    }
}

/// `Tensor.sparsity`: only its presence is read.
const TENSOR_SPARSITY: VOffsetT = 6;

table! {
    /// `QuantizationParameters`.
    QuantizationParameters<'a> {
        2 scale: Scalars<'a, f32>,
        3 zero_point: Scalars<'a, i64>,
        6 quantized_dimension: i32,
    }
}

table! {
    /// `Operator`.
    Operator<'a> {
        0 opcode_index: u32,
        1 inputs: Scalars<'a, i32>,
        2 outputs: Scalars<'a, i32>,
        3 builtin_options_type: u8,
        5 custom_options: Scalars<'a, u8>,
        6 custom_options_format: i8,
        8 intermediates: Scalars<'a, i32>,
    }
    union 3 / 4 => options::verify_builtin_options;
}

table! {
    /// `Buffer`: constant bytes.
    Buffer<'a> {
        0 data: Scalars<'a, u8>,
        1 offset: u64,
        2 size: u64,
    }
}

table! {
    /// `SignatureDef`: named inputs and outputs of one subgraph.
    SignatureDef<'a> {
        0 inputs: Tables<'a, TensorMap<'a>>,
        1 outputs: Tables<'a, TensorMap<'a>>,
        4 subgraph_index: u32,
    }
}

table! {
    /// `TensorMap`: one name of a signature.
    TensorMap<'a> {
        0 name: Str<'a>,
        1 tensor_index: u32,
    }
}

// After `table!`, which it uses.
mod control;
mod flex;
pub(crate) mod int4;
mod options;
mod state;

/// Element `i` of a verified vector, `None` when out of range (never panics).
fn element<'a, T: Follow<'a> + 'a>(v: &Vector<'a, T>, i: usize) -> Option<T::Inner> {
    (i < v.len()).then(|| v.get(i))
}

/// The builtin operator names, indexed by `BuiltinOperator` code (public TFLite schema
/// facts: the enum's names and values).
#[rustfmt::skip]
const BUILTIN_NAMES: [&str; 210] = [
    // 0
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D",
    "DEPTH_TO_SPACE", "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED",
    // 10
    "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION",
    "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU",
    // 20
    "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH",
    "SVDF", "TANH", "CONCAT_EMBEDDINGS",
    // 30
    "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND",
    "TRANSPOSE",
    // 40
    "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE",
    "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT",
    // 50
    "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM",
    "ARG_MAX", "MINIMUM", "LESS", "NEG",
    // 60
    "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN",
    "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE",
    // 70
    "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW",
    "ARG_MIN",
    // 80
    "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND",
    "LOGICAL_NOT", "UNPACK", "REDUCE_MIN",
    // 90
    "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE",
    "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE",
    // 100
    "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND",
    "COS", "WHERE",
    // 110
    "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND",
    "HARD_SWISH", "IF", "WHILE",
    // 120
    "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY",
    "SEGMENT_SUM", "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE",
    // 130
    "BROADCAST_TO", "RFFT2D", "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE",
    "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE",
    // 140
    "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE",
    "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL",
    // 150
    "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD",
    "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN",
    "BITCAST",
    // 160
    "BITWISE_XOR", "RIGHT_SHIFT", "STABLEHLO_LOGISTIC", "STABLEHLO_ADD", "STABLEHLO_DIVIDE",
    "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE", "STABLEHLO_CLAMP",
    "STABLEHLO_CONCATENATE",
    // 170
    "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE",
    "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE", "STABLEHLO_ABS", "STABLEHLO_AND",
    "STABLEHLO_COSINE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR",
    // 180
    "STABLEHLO_LOG", "STABLEHLO_MINIMUM", "STABLEHLO_NEGATE", "STABLEHLO_OR",
    "STABLEHLO_POWER", "STABLEHLO_REMAINDER", "STABLEHLO_RSQRT", "STABLEHLO_SELECT",
    "STABLEHLO_SUBTRACT", "STABLEHLO_TANH",
    // 190
    "STABLEHLO_SCATTER", "STABLEHLO_COMPARE", "STABLEHLO_CONVERT", "STABLEHLO_DYNAMIC_SLICE",
    "STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_PAD", "STABLEHLO_IOTA",
    "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT",
    // 200
    "STABLEHLO_WHILE", "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE",
    "STABLEHLO_RNG_BIT_GENERATOR", "REDUCE_WINDOW", "STABLEHLO_COMPOSITE",
    "STABLEHLO_SHIFT_LEFT", "STABLEHLO_CBRT", "STABLEHLO_CASE",
];

/// `BuiltinOperator` code of custom operators.
const BUILTIN_CUSTOM: i32 = 32;

/// The name of a builtin operator code, `None` for codes this reader does not know.
fn builtin_name(code: i32) -> Option<&'static str> {
    match code {
        225 => Some("TEMP_STREAMING_CONV_2D"),
        _ => usize::try_from(code)
            .ok()
            .and_then(|i| BUILTIN_NAMES.get(i).copied()),
    }
}

/// Builtin operators that run other subgraphs (their options name subgraph indices).
const RUNS_SUBGRAPHS: [&str; 12] = [
    "CALL",
    "IF",
    "WHILE",
    "CALL_ONCE",
    "STABLEHLO_CUSTOM_CALL",
    "STABLEHLO_REDUCE",
    "STABLEHLO_SCATTER",
    "STABLEHLO_REDUCE_WINDOW",
    "STABLEHLO_SORT",
    "STABLEHLO_WHILE",
    "STABLEHLO_COMPOSITE",
    "STABLEHLO_CASE",
];

/// The [`DType`] of a `TensorType` code, or the type's name when the planner has no dtype
/// for it.
fn dtype(code: i8) -> core::result::Result<DType, String> {
    Ok(match code {
        0 => DType::F32,
        1 => DType::F16,
        2 => DType::I32,
        3 => DType::U8,
        4 => DType::I64,
        5 => DType::String,
        6 => DType::Bool,
        7 => DType::I16,
        8 => DType::Complex64,
        9 => DType::I8,
        10 => DType::F64,
        11 => DType::Complex128,
        12 => DType::U64,
        13 => DType::Resource,
        14 => DType::Variant,
        15 => DType::U32,
        16 => DType::U16,
        17 => DType::I4,
        18 => DType::Bf16,
        19 => return Err("INT2 (19)".to_string()),
        20 => return Err("UINT4 (20)".to_string()),
        21 => return Err("FLOAT8_E4M3FN (21)".to_string()),
        22 => return Err("FLOAT8_E5M2 (22)".to_string()),
        c => return Err(format!("unknown type code {c}")),
    })
}

/// The verifier's multi-line report as one lowercase line without a trailing period.
fn one_line(report: &str) -> String {
    let words: Vec<&str> = report.split_whitespace().collect();
    let mut line = words.join(" ").replace(". while", ", while");
    while line.ends_with('.') {
        line.pop();
    }
    let mut chars = line.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One parse: the bytes and the path that names them in errors.
struct Reader<'p, 'b> {
    path: &'p Path,
    bytes: &'b [u8],
}

impl<'p, 'b> Reader<'p, 'b> {
    /// An error about this file: `problem` first, then `fix` as the help line.
    fn err(&self, problem: impl core::fmt::Display, fix: &str) -> Error {
        Error::model(format!("{}: {problem}", self.path.display())).help(fix)
    }

    /// A file that is not a well-formed model.
    fn corrupt(&self, problem: impl core::fmt::Display) -> Error {
        self.err(
            problem,
            "the file is truncated or corrupt; export the model again with the TFLite converter",
        )
    }

    fn graph(&self) -> Result<Graph> {
        let model = self.verified_root()?;
        let version = model.version().unwrap_or(0);
        if version != SCHEMA_VERSION {
            return Err(self.err(
                format_args!(
                    "TFLite schema version is {version}, this reader reads version {SCHEMA_VERSION}"
                ),
                "convert the model with a TFLite converter from TensorFlow 2.x",
            ));
        }
        let opcodes = self.opcodes(&model)?;
        let buffers: Vec<Buffer<'b>> = model
            .buffers()
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let subgraphs = model.subgraphs().unwrap_or_default();
        let mut flat = control::Flat::new(self, control::subgraphs(&subgraphs), &opcodes, &buffers);
        flat.main()?;
        let Some(main) = element(&subgraphs, 0) else {
            return Err(self.corrupt("the model has no subgraph"));
        };
        let (tensors, ops, control, shared) = (flat.tensors, flat.ops, flat.control, flat.shared);
        let names = self.signature_names(&model);
        let inputs = self.io(main.inputs(), "input", &tensors, &names)?;
        let outputs = self.io(main.outputs(), "output", &tensors, &names)?;

        let name = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "model".to_string());
        let graph = Graph {
            name,
            tensors,
            ops,
            inputs,
            outputs,
            aliases: Vec::new(),
            warnings: relaxed_warning(self.path, &shared.relaxed)
                .into_iter()
                .collect(),
            in_place: Vec::new(),
            folded_pads: Vec::new(),
            patches: None,
            control,
            ..Graph::default()
        };
        graph.validate().map_err(|e| {
            self.err(
                e.message(),
                "fix the model: the converter's output cannot be planned as it is",
            )
        })?;
        Ok(graph)
    }

    /// Checks the identifier, runs the verifier and returns the root table.
    fn verified_root(&self) -> Result<Model<'b>> {
        let bytes = self.bytes;
        if bytes.len() < 8 {
            return Err(self.err(
                format_args!(
                    "file is {} bytes, too short to be a TFLite model",
                    bytes.len()
                ),
                "pass a .tflite file written by the TFLite converter",
            ));
        }
        let ident = bytes.get(4..8).unwrap_or_default();
        if ident != IDENTIFIER {
            return Err(self.err(
                format_args!(
                    "not a TFLite model: file identifier is {:?}, expected \"TFL3\"",
                    String::from_utf8_lossy(ident)
                ),
                "pass a .tflite file written by the TFLite converter",
            ));
        }
        // Bounds the work (and the memory for shapes, scales, names) a crafted file can ask
        // for through shared offsets: a real model's apparent size is close to its length.
        let opts = VerifierOptions {
            max_apparent_size: bytes
                .len()
                .saturating_mul(APPARENT_SIZE_FACTOR)
                .clamp(1 << 20, 1 << 32),
            ..VerifierOptions::default()
        };
        flatbuffers::root_with_opts::<Model<'b>>(&opts, bytes).map_err(|e| {
            self.corrupt(format_args!(
                "the flatbuffer fails verification: {}",
                one_line(&e.to_string())
            ))
            .with_source(e)
        })
    }

    /// Tensor `raw` of a subgraph (which has `n` tensors), as named by `what`.
    fn tensor_index(
        &self,
        raw: i32,
        n: usize,
        what: impl FnOnce() -> String,
    ) -> Result<TensorIndex> {
        usize::try_from(raw)
            .ok()
            .filter(|&i| i < n)
            .and_then(|i| u32::try_from(i).ok())
            .map(TensorIndex)
            .ok_or_else(|| {
                self.corrupt(format_args!(
                    "{} names tensor {raw}, but its subgraph has {n} tensors",
                    what()
                ))
            })
    }

    /// Operator `k` of a subgraph that has `n` tensors, in a model of `n_subgraphs`.
    fn op(
        &self,
        k: usize,
        op: Operator<'b>,
        opcodes: &[Opcode],
        n: usize,
        n_subgraphs: usize,
    ) -> Result<Op> {
        let code = op.opcode_index().unwrap_or(0);
        let opcode = usize::try_from(code)
            .ok()
            .and_then(|c| opcodes.get(c))
            .ok_or_else(|| {
                self.corrupt(format_args!(
                    "op {k} uses operator code {code}, but the model has {} operator codes",
                    opcodes.len()
                ))
            })?;
        let opcode = match opcode {
            Opcode::Named(name) => name.clone(),
            Opcode::Unknown(c) if n_subgraphs > 1 => {
                return Err(self.err(
                    format_args!(
                        "op {k} has builtin operator code {c}, which this reader does not know, and the model has {n_subgraphs} subgraphs that such an op could run"
                    ),
                    "the planner plans one subgraph; convert the model without control flow",
                ));
            }
            Opcode::Unknown(c) => format!("BUILTIN:{c}"),
        };
        if RUNS_SUBGRAPHS.contains(&opcode.as_str()) && !control::RUNS.contains(&opcode.as_str()) {
            return Err(self.err(
                format_args!(
                    "op {k} is {opcode}, which runs other subgraphs (the model has {n_subgraphs} subgraphs); the planner plans subgraph 0 alone"
                ),
                "convert the model without control flow (unroll loops, fold conditionals), or split it into one model per subgraph",
            ));
        }
        let what = |list: &str, j: usize| format!("op {k} ({opcode}) {list} {j}");
        let mut inputs = Vec::new();
        for (j, raw) in op.inputs().unwrap_or_default().iter().enumerate() {
            inputs.push(if raw == -1 {
                None
            } else {
                Some(self.tensor_index(raw, n, || what("input", j))?)
            });
        }
        let mut outputs = Vec::new();
        for (j, raw) in op.outputs().unwrap_or_default().iter().enumerate() {
            outputs.push(self.tensor_index(raw, n, || what("output", j))?);
        }
        let mut scratch = Vec::new();
        for (j, raw) in op.intermediates().unwrap_or_default().iter().enumerate() {
            scratch.push(self.tensor_index(raw, n, || what("intermediate", j))?);
        }
        Ok(Op {
            opcode,
            inputs,
            outputs,
            scratch,
            options: OpOptions::None,
        })
    }

    /// Subgraph 0's inputs or outputs, named by the signature where it names them.
    fn io(
        &self,
        list: Option<Vector<'b, i32>>,
        what: &str,
        tensors: &[Tensor],
        names: &[(TensorIndex, String)],
    ) -> Result<Vec<IoName>> {
        let mut v = Vec::new();
        for (j, raw) in list.unwrap_or_default().iter().enumerate() {
            let t = self.tensor_index(raw, tensors.len(), || format!("subgraph 0 {what} {j}"))?;
            let name = names
                .iter()
                .find(|(i, _)| *i == t)
                .map(|(_, n)| n.clone())
                .or_else(|| tensors.get(t.get()).map(|x| x.name.clone()))
                .unwrap_or_default();
            v.push(IoName { name, tensor: t });
        }
        Ok(v)
    }

    /// Every operator code's name, in order.
    fn opcodes(&self, model: &Model<'b>) -> Result<Vec<Opcode>> {
        let mut names = Vec::new();
        for (i, oc) in model
            .operator_codes()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let code = oc
                .builtin_code()
                .unwrap_or(0)
                .max(i32::from(oc.deprecated_builtin_code().unwrap_or(0)));
            names.push(if code == BUILTIN_CUSTOM {
                match oc.custom_code() {
                    Some(c) if !c.is_empty() => Opcode::Named(format!("CUSTOM:{c}")),
                    _ => {
                        return Err(self.corrupt(format_args!(
                            "operator code {i} is a custom operator without a custom_code name"
                        )));
                    }
                }
            } else if let Some(n) = builtin_name(code) {
                Opcode::Named(n.to_string())
            } else {
                Opcode::Unknown(code)
            });
        }
        Ok(names)
    }

    /// `(tensor, name)` for the inputs and outputs of the first signature of subgraph 0.
    fn signature_names(&self, model: &Model<'b>) -> Vec<(TensorIndex, String)> {
        let Some(sig) = model
            .signature_defs()
            .unwrap_or_default()
            .iter()
            .find(|s| s.subgraph_index().unwrap_or(0) == 0)
        else {
            return Vec::new();
        };
        let maps = sig.inputs().unwrap_or_default().iter();
        maps.chain(sig.outputs().unwrap_or_default().iter())
            .filter_map(|m| {
                let name = m.name().filter(|n| !n.is_empty())?;
                Some((TensorIndex(m.tensor_index()?), name.to_string()))
            })
            .collect()
    }

    /// The bytes of buffer `b`: inline data, or the `offset`/`size` range of the file.
    fn buffer_bytes(&self, buffers: &[Buffer<'b>], b: u32, tensor: &str) -> Result<&'b [u8]> {
        let Some(buf) = usize::try_from(b).ok().and_then(|i| buffers.get(i)) else {
            if b == 0 && buffers.is_empty() {
                return Ok(&[]);
            }
            return Err(self.corrupt(format_args!(
                "{tensor} names buffer {b}, but the model has {} buffers",
                buffers.len()
            )));
        };
        if let Some(data) = buf.data().filter(|d| !d.is_empty()) {
            return Ok(data.bytes());
        }
        let offset = buf.offset().unwrap_or(0);
        let size = buf.size().unwrap_or(0);
        // The schema marks an offset of 0 or 1 as "no external data".
        if offset <= 1 || size == 0 {
            return Ok(&[]);
        }
        offset
            .checked_add(size)
            .and_then(|end| {
                let start = usize::try_from(offset).ok()?;
                let end = usize::try_from(end).ok()?;
                self.bytes.get(start..end)
            })
            .ok_or_else(|| {
                self.corrupt(format_args!(
                    "buffer {b} of {tensor} lies at bytes {offset}..{} of the file, which has {} bytes",
                    offset.saturating_add(size),
                    self.bytes.len()
                ))
            })
    }

    /// The shared copy of a constant's bytes: tensors whose bytes are the same range of the
    /// file (one buffer, or buffers the converter deduplicated) share one copy. Real models'
    /// constants never overlap, so the copies together stay within the file's length; a file
    /// whose buffers overlap to ask for more is rejected rather than allowed to exhaust memory.
    fn constant_bytes(
        &self,
        shared: &mut Shared,
        data: &'b [u8],
        label: &str,
    ) -> Result<Arc<[u8]>> {
        let start = (data.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        if let Some(copy) = shared.copies.get(&(start, data.len())) {
            return Ok(Arc::clone(copy));
        }
        shared.total = shared.total.saturating_add(data.len());
        if shared.total > self.bytes.len() {
            return Err(self.corrupt(format_args!(
                "the constant buffers overlap: with {label} they add up to more bytes than the file holds ({})",
                self.bytes.len()
            )));
        }
        let copy: Arc<[u8]> = Arc::from(data);
        shared.copies.insert((start, data.len()), Arc::clone(&copy));
        Ok(copy)
    }

    /// One tensor of subgraph 0.
    /// The planned shape of a tensor: `shape`, checked against `shape_signature`.
    fn shape(
        &self,
        label: &str,
        shape_raw: Vector<'b, i32>,
        signature: Vector<'b, i32>,
        shared: &mut Shared,
    ) -> Result<Vec<u64>> {
        // A `-1` in the signature over a concrete size in `shape` is planned with that size:
        // the exported size is the one a microcontroller runs. A batch (first) dimension is
        // what converters write for "any batch" and is planned silently; elsewhere the
        // tensor is noted for a warning. A size `shape` does not give is not guessed.
        let dynamic = shape_raw.iter().any(|d| d < 0)
            || (signature.len() != shape_raw.len() && signature.iter().any(|d| d < 0))
            || signature
                .iter()
                .zip(shape_raw.iter())
                .any(|(s, d)| s < 0 && d <= 0);
        let relaxed = signature
            .iter()
            .enumerate()
            .any(|(j, d)| d < 0 && (j > 0 || shape_raw.len() < 2));
        if dynamic {
            let dims = |v: Vector<'b, i32>| {
                v.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let sig = if signature.is_empty() {
                String::new()
            } else {
                format!(", shape_signature [{}]", dims(signature))
            };
            return Err(self.err(
                format_args!(
                    "{label} has a dynamic dimension: shape [{}]{sig}; the planner needs every size before run time",
                    dims(shape_raw)
                ),
                "fix the dimension when converting (for example a batch size of 1, or a fixed sequence length) and export the model again",
            ));
        }
        let shape: Vec<u64> = shape_raw.iter().map(|d| d.unsigned_abs().into()).collect();
        if relaxed {
            shared.relaxed.push(format!(
                "{label}: shape_signature [{}] planned as shape [{}]",
                signature
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(shape)
    }

    fn tensor(
        &self,
        i: usize,
        t: TensorTable<'b>,
        buffers: &[Buffer<'b>],
        shared: &mut Shared,
    ) -> Result<Tensor> {
        let id = i.to_string();
        let name = t
            .name()
            .filter(|n| !n.is_empty())
            .map_or_else(|| id.clone(), |n| n.to_string());
        let label = format!("tensor {i} `{name}`");

        let shape_raw = t.shape().unwrap_or_default();
        let signature = t.shape_signature().unwrap_or_default();
        let shape = self.shape(&label, shape_raw, signature, shared)?;

        let type_code = t.tensor_type().unwrap_or(0);
        let dtype = dtype(type_code).map_err(|ty| {
            self.err(
                format_args!("{label} has tensor type {ty}, which the planner has no size for"),
                "quantize or convert the tensor to a supported type (int8, int16, float32, ...)",
            )
        })?;

        let data = self.buffer_bytes(buffers, t.buffer().unwrap_or(0), &label)?;
        let variable = t.is_variable().unwrap_or(false);
        let kind = if variable {
            TensorKind::Variable
        } else if !data.is_empty() {
            TensorKind::Constant
        } else {
            TensorKind::Activation
        };

        if kind == TensorKind::Constant && t.has(TENSOR_SPARSITY) {
            // Its stored bytes are not its shape's: no dense view include_model! could give a
            // kernel fits them, and the plan check would refuse the slot.
            return Err(self.err(
                format_args!("{label} is a sparse (compressed) constant"),
                "the planner gives kernels dense tensors; convert the model without sparsity",
            ));
        }
        let size = if dtype.bits().is_none() || t.has(TENSOR_SPARSITY) {
            if kind != TensorKind::Constant {
                let what = if dtype.bits().is_none() {
                    format!("has type {}", dtype.name())
                } else {
                    "is sparse".to_string()
                };
                return Err(self.err(
                    format_args!("{label} {what} but is not constant, so its size is only known at run time"),
                    "the planner plans tensors of fixed size; remove the op that produces it or make it constant",
                ));
            }
            data.len() as u64
        } else {
            let elements = shape
                .iter()
                .try_fold(1u64, |acc, &d| acc.checked_mul(d))
                .and_then(|n| dtype.bytes_for(n));
            let Some(size) = elements else {
                return Err(self.corrupt(format_args!(
                    "{label} of shape {shape:?} and type {} takes more than 2^64 bytes",
                    dtype.name()
                )));
            };
            if kind == TensorKind::Constant && data.len() as u64 != size {
                return Err(self.corrupt(format_args!(
                    "{label} of shape {shape:?} and type {} needs {size} bytes, but its buffer holds {}",
                    dtype.name(),
                    data.len()
                )));
            }
            size
        };

        let data = if kind == TensorKind::Constant {
            Some(self.constant_bytes(shared, data, &label)?)
        } else {
            None
        };

        let quantization = t.quantization().and_then(|q| {
            let scale: Vec<f32> = q.scale().unwrap_or_default().iter().collect();
            (!scale.is_empty()).then(|| Quantization {
                scale,
                zero_point: q.zero_point().unwrap_or_default().iter().collect(),
                axis: q.quantized_dimension().unwrap_or(0),
            })
        });

        Ok(Tensor {
            id,
            name,
            dtype,
            shape,
            size,
            kind,
            quantization,
            align_hint: None,
            data,
        })
    }
}

/// One warning for every tensor planned with `shape` under a dynamic `shape_signature`.
fn relaxed_warning(path: &Path, relaxed: &[String]) -> Option<String> {
    let first = relaxed.first()?;
    let more = match relaxed.len() {
        1 => String::new(),
        n => format!(" (and {} more tensors)", n - 1),
    };
    Some(format!(
        "{}: {first}{more}; the model accepts other sizes there, this plan holds only the sizes in `shape`; fix the dimension when converting to silence this",
        path.display()
    ))
}

/// Copies of constant bytes, keyed by their range in the file.
#[derive(Default)]
struct Shared {
    copies: BTreeMap<(usize, usize), Arc<[u8]>>,
    total: usize,
    /// Tensors whose dynamic signature dimensions were planned with `shape`'s sizes.
    relaxed: Vec<String>,
}

/// A resolved operator code.
enum Opcode {
    /// A builtin name or `CUSTOM:<name>`.
    Named(String),
    /// A builtin code this reader has no name for.
    Unknown(i32),
}

#[cfg(test)]
mod tests;
