//! One table of what the toolchain knows about each TFLite op kind, by name: its
//! `BuiltinOperator` code, how the generated `run()` calls its kernel, how it reads the image
//! (for patch-based execution), whether its output is its input's bytes under another shape,
//! how it may run in place, and what TFLM's reference kernel asks for as scratch.
//!
//! Every list the planner, the macro and the kernel sets keep about op kinds derives from
//! [`OP_KINDS`] or is checked against it by a test: a kind is added here, once. Kinds with
//! typed options also have a line in `__op_kinds!` below (their [`OpOptions`] variant,
//! options type and kernel trait), and kinds that run in place one in `__in_place_kinds!`
//! below (their in-place kernel trait); both lists sit beside the table, and tests keep them
//! in step with its [`Kernels`] and [`InPlace`] columns.
//!
//! [`OpOptions`]: crate::options::OpOptions

/// How `run()` calls an op kind's kernel, and whether the bundled kernel sets run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// Through the kind's own kernel trait with typed options (a variant of
    /// [`OpOptions`](crate::options::OpOptions)); the bundled kernel sets implement it.
    Typed,
    /// Through [`Builtin`](crate::kernel::Builtin) keyed by the kind's name (no typed
    /// options); the bundled kernel sets implement it. (Not named `Builtin`: rustc would then
    /// spell the trait's full path in its messages.)
    Untyped,
    /// Through [`Builtin`](crate::kernel::Builtin), which no bundled kernel set implements
    /// for this kind: the planner knows its facts, a user's kernel set must bring the kernel.
    Unbundled,
}

/// How an op reads the image, for patch-based execution (a patch stage holds only kinds
/// that are not [`Spatial::Global`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spatial {
    /// Each output pixel reads the same pixel of each input (elementwise with equal shapes,
    /// activations, per-channel quantisation).
    Pointwise,
    /// Each output pixel reads a window of input pixels, from the op's options (stride,
    /// dilation, padding): convolutions, pools, padding.
    Window,
    /// Each output pixel reads the same pixel of every input, along the channels
    /// (`CONCATENATION` on the last axis).
    Channels,
    /// An output element may read any input element: not patch-local.
    Global,
}

/// How an op kind may write its output over one of its inputs (`memory.in_place`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPlace {
    /// Never in place.
    Never,
    /// Over input 0, with the same element count and an output no larger than the input.
    Unary,
    /// Over one of its two operands, of the output's exact shape and element size.
    Binary,
    /// A depthwise convolution over its data input, one input channel at a time through a
    /// temporary of one channel.
    Depthwise,
}

/// The scratch buffers TFLM's reference kernel of a kind requests at `Prepare`
/// (`RequestScratchBufferInArena`), as measured with the `tflite-micro` package on one-op
/// models; what the TFLM exporter leaves room for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TflmScratch {
    /// No scratch buffer.
    None,
    /// `SVDF`: `batch * num_filters` and, for integer models, `batch * num_units` 32-bit words.
    Svdf,
    /// `UNIDIRECTIONAL_SEQUENCE_LSTM`: four gate buffers of `batch * state_dimension` cell
    /// state elements (the cell state is input 19).
    Lstm,
    /// `MEAN`, `SUM`: the input's rank and the axis count as 32-bit words, then, for 8- and
    /// 16-bit integer inputs, one 32-bit sum per output element.
    MeanOrSum,
    /// `REDUCE_MAX`: the input's rank and the axis count as 32-bit words.
    MinMax,
    /// `CUSTOM:SignalRfft`: `fft_length` elements of the input's type.
    Rfft,
    /// `MIRROR_PAD`: the input's rank as 32-bit words, twice.
    MirrorPad,
    /// `ADD_N`: one pointer per input, 8 bytes on the 64-bit host the table was measured on
    /// (4 on a Cortex-M: the exported plan leaves 4 bytes per input spare there).
    AddN,
    /// `CUSTOM:TFLite_Detection_PostProcess`, for `n` boxes, `d` detections at most and `c`
    /// classes: `n` bytes, `16 n`, 4 bytes per class prediction, `4 n` twice, `4 d n`
    /// twice, `4 n`, `4 d n`, `4 max(c, d) n`, `4 min(n, d) n`.
    DetectionPostprocess,
}

/// What the toolchain knows about one op kind: a row of [`OP_KINDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpKind {
    /// The TFLite builtin name (`"CONV_2D"`), as op views and plan files carry it.
    pub name: &'static str,
    /// The `BuiltinOperator` code of the TFLite schema.
    pub code: u16,
    /// How `run()` calls its kernel.
    pub kernels: Kernels,
    /// How it reads the image (patch-based execution).
    pub spatial: Spatial,
    /// The bundled kernels run it on patch regions (on their integer paths), so it may sit
    /// in a patch stage (the rest of that rule: `planner::planfile::patch::stage_op`).
    pub regions: bool,
    /// Its output is input 0's bytes under another shape (`RESHAPE` and kin): the planner may
    /// give both one slot.
    pub reshape: bool,
    /// How it may run in place.
    pub in_place: InPlace,
    /// TFLM's reference kernel's scratch; `None` when not measured.
    pub tflm_scratch: Option<TflmScratch>,
}

impl OpKind {
    /// The row of `name`, `None` for a kind the table does not list (the toolchain knows no
    /// fact about it beyond its name).
    pub fn of(name: &str) -> Option<&'static OpKind> {
        OP_KINDS
            .binary_search_by(|k| k.name.cmp(name))
            .ok()
            .map(|i| &OP_KINDS[i])
    }

    /// The kinds whose `field` is `value`, in name order.
    pub fn with<T: PartialEq>(
        field: impl Fn(&OpKind) -> T,
        value: T,
    ) -> impl Iterator<Item = &'static OpKind> {
        OP_KINDS.iter().filter(move |k| field(k) == value)
    }

    /// The names of the kinds `keep` accepts, in name order, displayed comma-separated: the
    /// list an error message gives of the kinds that would be accepted.
    pub fn names(keep: fn(&OpKind) -> bool) -> Names {
        Names(keep)
    }
}

/// The names of the kinds a filter accepts, displayed `"ADD, MUL"`: [`OpKind::names`].
#[derive(Clone, Copy)]
pub struct Names(fn(&OpKind) -> bool);

impl core::fmt::Display for Names {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, k) in OP_KINDS.iter().filter(|k| (self.0)(k)).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(k.name)?;
        }
        Ok(())
    }
}

/// The in-place rule of `name`: [`InPlace::Never`] for a kind the table does not list.
pub fn in_place(name: &str) -> InPlace {
    OpKind::of(name).map_or(InPlace::Never, |k| k.in_place)
}

/// How `name` reads the image: [`Spatial::Global`] for a kind the table does not list.
pub fn spatial(name: &str) -> Spatial {
    OpKind::of(name).map_or(Spatial::Global, |k| k.spatial)
}

/// Whether `name`'s output is its input's bytes under another shape.
pub fn reshape(name: &str) -> bool {
    OpKind::of(name).is_some_and(|k| k.reshape)
}

/// One row of [`OP_KINDS`], its fields in declaration order.
macro_rules! row {
    ($name:literal, $code:literal, $kernels:ident, $spatial:ident, $regions:literal, $reshape:literal, $in_place:ident, $scratch:expr) => {
        OpKind {
            name: $name,
            code: $code,
            kernels: $kernels,
            spatial: $spatial,
            regions: $regions,
            reshape: $reshape,
            in_place: $in_place,
            tflm_scratch: $scratch,
        }
    };
}

use InPlace::{Binary, Depthwise, Never, Unary};
use Kernels::{Typed, Unbundled, Untyped};
use Spatial::{Channels, Global, Pointwise, Window};

/// Every op kind the toolchain knows a fact about, sorted by name (a test keeps it sorted).
/// Columns: name, `BuiltinOperator` code, [`Kernels`], [`Spatial`], runs on regions,
/// reshape-like, [`InPlace`], [`TflmScratch`].
#[rustfmt::skip]
pub const OP_KINDS: &[OpKind] = &[
    //   name                             code  kernels    spatial    regions reshape in place TFLM scratch
    row!("ABS",                           101,  Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("ADD",                           0,    Typed,     Pointwise, true,  false, Binary,    Some(TflmScratch::None)),
    row!("ADD_N",                         106,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::AddN)),
    row!("ARG_MAX",                       56,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("ARG_MIN",                       79,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("AVERAGE_POOL_2D",               1,    Typed,     Window,    true,  false, Never,     Some(TflmScratch::None)),
    row!("BATCH_MATMUL",                  126,  Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("BATCH_TO_SPACE_ND",             37,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("BITCAST",                       159,  Unbundled, Global,    false, true,  Never,     None),
    row!("BROADCAST_ARGS",                145,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("BROADCAST_TO",                  130,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CAST",                          53,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CEIL",                          104,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CONCATENATION",                 2,    Typed,     Channels,  false, false, Never,     Some(TflmScratch::None)),
    row!("CONV_2D",                       3,    Typed,     Window,    true,  false, Never,     Some(TflmScratch::None)),
    row!("COS",                           108,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUMSUM",                        128,  Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalDelay",                 32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalEnergy",                32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalFftAutoScale",          32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalFilterBank",            32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalFilterBankLog",         32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalFilterBankSpectralSubtraction",32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalFilterBankSquareRoot",  32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalFramer",                32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalIrfft",                 32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalOverlapAdd",            32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalPCAN",                  32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalRfft",                  32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::Rfft)),
    row!("CUSTOM:SignalStacker",               32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:SignalWindow",                32,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("CUSTOM:TFLite_Detection_PostProcess", 32, Typed,    Global,    false, false, Never,     Some(TflmScratch::DetectionPostprocess)),
    row!("DEPTHWISE_CONV_2D",             4,    Typed,     Window,    true,  false, Depthwise, Some(TflmScratch::None)),
    row!("DEPTH_TO_SPACE",                5,    Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("DEQUANTIZE",                    6,    Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("DIV",                           42,   Typed,     Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("DYNAMIC_UPDATE_SLICE",          151,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("ELU",                           111,  Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("EMBEDDING_LOOKUP",              7,    Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("EQUAL",                         71,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("EXP",                           47,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("EXPAND_DIMS",                   70,   Typed,     Global,    false, true,  Never,     Some(TflmScratch::None)),
    row!("FILL",                          94,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("FLOOR",                         8,    Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("FLOOR_DIV",                     90,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("FLOOR_MOD",                     95,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("FULLY_CONNECTED",               9,    Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("GATHER",                        36,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("GATHER_ND",                     107,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("GELU",                          150,  Unbundled, Pointwise, false, false, Never,     None),
    row!("GREATER",                       61,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("GREATER_EQUAL",                 62,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("HARD_SWISH",                    117,  Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("L2_NORMALIZATION",              11,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("L2_POOL_2D",                    12,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LEAKY_RELU",                    98,   Typed,     Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("LESS",                          58,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LESS_EQUAL",                    63,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LOG",                           73,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LOGICAL_AND",                   86,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LOGICAL_NOT",                   87,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LOGICAL_OR",                    84,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("LOGISTIC",                      14,   Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("LOG_SOFTMAX",                   50,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("MAXIMUM",                       55,   Untyped,   Pointwise, true,  false, Never,     Some(TflmScratch::None)),
    row!("MAX_POOL_2D",                   17,   Typed,     Window,    true,  false, Never,     Some(TflmScratch::None)),
    row!("MEAN",                          40,   Typed,     Global,    false, false, Never,     Some(TflmScratch::MeanOrSum)),
    row!("MINIMUM",                       57,   Untyped,   Pointwise, true,  false, Never,     Some(TflmScratch::None)),
    row!("MIRROR_PAD",                    100,  Typed,     Global,    false, false, Never,     Some(TflmScratch::MirrorPad)),
    row!("MUL",                           18,   Typed,     Pointwise, true,  false, Binary,    Some(TflmScratch::None)),
    row!("NEG",                           59,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("NOT_EQUAL",                     72,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("PACK",                          83,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("PAD",                           34,   Typed,     Window,    true,  false, Never,     Some(TflmScratch::None)),
    row!("PADV2",                         60,   Typed,     Window,    false, false, Never,     Some(TflmScratch::None)),
    row!("PRELU",                         54,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("QUANTIZE",                      114,  Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("REDUCE_ALL",                    140,  Typed,     Global,    false, false, Never,     Some(TflmScratch::MinMax)),
    row!("REDUCE_MAX",                    82,   Typed,     Global,    false, false, Never,     Some(TflmScratch::MinMax)),
    row!("REDUCE_MIN",                    89,   Typed,     Global,    false, false, Never,     Some(TflmScratch::MinMax)),
    row!("RELU",                          19,   Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("RELU6",                         21,   Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("RELU_0_TO_1",                   152,  Unbundled, Pointwise, false, false, Never,     None),
    row!("RELU_N1_TO_1",                  20,   Unbundled, Pointwise, false, false, Never,     None),
    row!("RESHAPE",                       22,   Typed,     Global,    false, true,  Never,     Some(TflmScratch::None)),
    row!("RESIZE_BILINEAR",               23,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("RESIZE_NEAREST_NEIGHBOR",       97,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("REVERSE_V2",                    105,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("ROUND",                         116,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("RSQRT",                         76,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("SELECT_V2",                     123,  Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SHAPE",                         77,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SIN",                           66,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SLICE",                         65,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SOFTMAX",                       25,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SPACE_TO_BATCH_ND",             38,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SPACE_TO_DEPTH",                26,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SPLIT",                         49,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SPLIT_V",                       102,  Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SQRT",                          75,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("SQUARE",                        92,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("SQUARED_DIFFERENCE",            99,   Untyped,   Pointwise, false, false, Never,     Some(TflmScratch::None)),
    row!("SQUEEZE",                       43,   Typed,     Global,    false, true,  Never,     Some(TflmScratch::None)),
    row!("STRIDED_SLICE",                 45,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("SUB",                           41,   Typed,     Pointwise, true,  false, Binary,    Some(TflmScratch::None)),
    row!("SUM",                           74,   Typed,     Global,    false, false, Never,     Some(TflmScratch::MeanOrSum)),
    row!("SVDF",                          27,   Typed,     Global,    false, false, Never,     Some(TflmScratch::Svdf)),
    row!("TANH",                          28,   Typed,     Pointwise, true,  false, Unary,     Some(TflmScratch::None)),
    row!("TRANSPOSE",                     39,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("TRANSPOSE_CONV",                67,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("UNIDIRECTIONAL_SEQUENCE_LSTM",  44,   Typed,     Global,    false, false, Never,     Some(TflmScratch::Lstm)),
    row!("UNPACK",                        88,   Typed,     Global,    false, false, Never,     Some(TflmScratch::None)),
    row!("ZEROS_LIKE",                    93,   Untyped,   Global,    false, false, Never,     Some(TflmScratch::None)),
];

mod state;

pub use state::{StateElement, StateTensor, keeps_state, kernel_scratch, state};

#[cfg(test)]
mod tests;

/// The op kinds with typed options, handed to the macro `$callback`: one line per kind with
/// its docs, `OpOptions` variant, TFLite opcode, options type, kernel method and the message
/// for a kernel set without it. This runtime declares `OpOptions` and the kernel traits from
/// it; the host crate reads the plan file's options with it. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_kinds {
    ($callback:ident) => {
        $callback! {
            /// `CONV_2D`.
            Conv2d = "CONV_2D", Conv2dOptions, conv_2d, "the kernel set `{Self}` has no CONV_2D kernel, and the model runs CONV_2D";
            /// `DEPTHWISE_CONV_2D`.
            DepthwiseConv2d = "DEPTHWISE_CONV_2D", DepthwiseConv2dOptions, depthwise_conv_2d, "the kernel set `{Self}` has no DEPTHWISE_CONV_2D kernel, and the model runs DEPTHWISE_CONV_2D";
            /// `FULLY_CONNECTED`.
            FullyConnected = "FULLY_CONNECTED", FullyConnectedOptions, fully_connected, "the kernel set `{Self}` has no FULLY_CONNECTED kernel, and the model runs FULLY_CONNECTED";
            /// `AVERAGE_POOL_2D`.
            AveragePool2d = "AVERAGE_POOL_2D", Pool2dOptions, average_pool_2d, "the kernel set `{Self}` has no AVERAGE_POOL_2D kernel, and the model runs AVERAGE_POOL_2D";
            /// `MAX_POOL_2D`.
            MaxPool2d = "MAX_POOL_2D", Pool2dOptions, max_pool_2d, "the kernel set `{Self}` has no MAX_POOL_2D kernel, and the model runs MAX_POOL_2D";
            /// `ADD`.
            Add = "ADD", AddOptions, add, "the kernel set `{Self}` has no ADD kernel, and the model runs ADD";
            /// `SUB`.
            Sub = "SUB", AddOptions, sub, "the kernel set `{Self}` has no SUB kernel, and the model runs SUB";
            /// `MUL`.
            Mul = "MUL", MulOptions, mul, "the kernel set `{Self}` has no MUL kernel, and the model runs MUL";
            /// `SOFTMAX`.
            Softmax = "SOFTMAX", SoftmaxOptions, softmax, "the kernel set `{Self}` has no SOFTMAX kernel, and the model runs SOFTMAX";
            /// `RESHAPE`.
            Reshape = "RESHAPE", ReshapeOptions, reshape, "the kernel set `{Self}` has no RESHAPE kernel, and the model runs RESHAPE";
            /// `CONCATENATION`.
            Concatenation = "CONCATENATION", ConcatenationOptions, concatenation, "the kernel set `{Self}` has no CONCATENATION kernel, and the model runs CONCATENATION";
            /// `PAD`.
            Pad = "PAD", PadOptions, pad, "the kernel set `{Self}` has no PAD kernel, and the model runs PAD";
            /// `MEAN`.
            Mean = "MEAN", MeanOptions, mean, "the kernel set `{Self}` has no MEAN kernel, and the model runs MEAN";
            /// `TRANSPOSE`.
            Transpose = "TRANSPOSE", TransposeOptions, transpose, "the kernel set `{Self}` has no TRANSPOSE kernel, and the model runs TRANSPOSE";
            /// `STRIDED_SLICE`.
            StridedSlice = "STRIDED_SLICE", StridedSliceOptions, strided_slice, "the kernel set `{Self}` has no STRIDED_SLICE kernel, and the model runs STRIDED_SLICE";
            /// `SVDF`.
            Svdf = "SVDF", SvdfOptions, svdf, "the kernel set `{Self}` has no SVDF kernel, and the model runs SVDF";
            /// `UNIDIRECTIONAL_SEQUENCE_LSTM`.
            UnidirectionalSequenceLstm = "UNIDIRECTIONAL_SEQUENCE_LSTM", UnidirectionalSequenceLstmOptions, unidirectional_sequence_lstm, "the kernel set `{Self}` has no UNIDIRECTIONAL_SEQUENCE_LSTM kernel, and the model runs UNIDIRECTIONAL_SEQUENCE_LSTM";
            /// `CUSTOM:SignalDelay` (TFLM's signal library).
            SignalDelay = "CUSTOM:SignalDelay", SignalDelayOptions, signal_delay, "the kernel set `{Self}` has no kernel for the custom op SignalDelay, and the model runs it";
            /// `CUSTOM:SignalEnergy` (TFLM's signal library).
            SignalEnergy = "CUSTOM:SignalEnergy", SignalEnergyOptions, signal_energy, "the kernel set `{Self}` has no kernel for the custom op SignalEnergy, and the model runs it";
            /// `CUSTOM:SignalFftAutoScale` (TFLM's signal library).
            SignalFftAutoScale = "CUSTOM:SignalFftAutoScale", NoOptions, signal_fft_auto_scale, "the kernel set `{Self}` has no kernel for the custom op SignalFftAutoScale, and the model runs it";
            /// `CUSTOM:SignalFilterBank` (TFLM's signal library).
            SignalFilterBank = "CUSTOM:SignalFilterBank", SignalFilterBankOptions, signal_filter_bank, "the kernel set `{Self}` has no kernel for the custom op SignalFilterBank, and the model runs it";
            /// `CUSTOM:SignalFilterBankLog` (TFLM's signal library).
            SignalFilterBankLog = "CUSTOM:SignalFilterBankLog", SignalFilterBankLogOptions, signal_filter_bank_log, "the kernel set `{Self}` has no kernel for the custom op SignalFilterBankLog, and the model runs it";
            /// `CUSTOM:SignalFilterBankSpectralSubtraction` (TFLM's signal library).
            SignalFilterBankSpectralSubtraction = "CUSTOM:SignalFilterBankSpectralSubtraction", SignalSpectralSubtractionOptions, signal_filter_bank_spectral_subtraction, "the kernel set `{Self}` has no kernel for the custom op SignalFilterBankSpectralSubtraction, and the model runs it";
            /// `CUSTOM:SignalFilterBankSquareRoot` (TFLM's signal library).
            SignalFilterBankSquareRoot = "CUSTOM:SignalFilterBankSquareRoot", NoOptions, signal_filter_bank_square_root, "the kernel set `{Self}` has no kernel for the custom op SignalFilterBankSquareRoot, and the model runs it";
            /// `CUSTOM:SignalFramer` (TFLM's signal library).
            SignalFramer = "CUSTOM:SignalFramer", SignalFramerOptions, signal_framer, "the kernel set `{Self}` has no kernel for the custom op SignalFramer, and the model runs it";
            /// `CUSTOM:SignalIrfft` (TFLM's signal library).
            SignalIrfft = "CUSTOM:SignalIrfft", SignalFftOptions, signal_irfft, "the kernel set `{Self}` has no kernel for the custom op SignalIrfft, and the model runs it";
            /// `CUSTOM:SignalOverlapAdd` (TFLM's signal library).
            SignalOverlapAdd = "CUSTOM:SignalOverlapAdd", SignalOverlapAddOptions, signal_overlap_add, "the kernel set `{Self}` has no kernel for the custom op SignalOverlapAdd, and the model runs it";
            /// `CUSTOM:SignalPCAN` (TFLM's signal library).
            SignalPcan = "CUSTOM:SignalPCAN", SignalPcanOptions, signal_pcan, "the kernel set `{Self}` has no kernel for the custom op SignalPCAN, and the model runs it";
            /// `CUSTOM:SignalRfft` (TFLM's signal library).
            SignalRfft = "CUSTOM:SignalRfft", SignalFftOptions, signal_rfft, "the kernel set `{Self}` has no kernel for the custom op SignalRfft, and the model runs it";
            /// `CUSTOM:SignalStacker` (TFLM's signal library).
            SignalStacker = "CUSTOM:SignalStacker", SignalStackerOptions, signal_stacker, "the kernel set `{Self}` has no kernel for the custom op SignalStacker, and the model runs it";
            /// `CUSTOM:SignalWindow` (TFLM's signal library).
            SignalWindow = "CUSTOM:SignalWindow", SignalWindowOptions, signal_window, "the kernel set `{Self}` has no kernel for the custom op SignalWindow, and the model runs it";
            /// `CUSTOM:TFLite_Detection_PostProcess` (the SSD decoder).
            DetectionPostprocess = "CUSTOM:TFLite_Detection_PostProcess", DetectionPostprocessOptions, detection_postprocess, "the kernel set `{Self}` has no kernel for the custom op TFLite_Detection_PostProcess, and the model runs it";
            /// `QUANTIZE`.
            Quantize = "QUANTIZE", NoOptions, quantize, "the kernel set `{Self}` has no QUANTIZE kernel, and the model runs QUANTIZE";
            /// `DEQUANTIZE`.
            Dequantize = "DEQUANTIZE", NoOptions, dequantize, "the kernel set `{Self}` has no DEQUANTIZE kernel, and the model runs DEQUANTIZE";
            /// `LOGISTIC`.
            Logistic = "LOGISTIC", NoOptions, logistic, "the kernel set `{Self}` has no LOGISTIC kernel, and the model runs LOGISTIC";
            /// `TANH`.
            Tanh = "TANH", NoOptions, tanh, "the kernel set `{Self}` has no TANH kernel, and the model runs TANH";
            /// `RELU`.
            Relu = "RELU", NoOptions, relu, "the kernel set `{Self}` has no RELU kernel, and the model runs RELU";
            /// `RELU6`.
            Relu6 = "RELU6", NoOptions, relu6, "the kernel set `{Self}` has no RELU6 kernel, and the model runs RELU6";
            /// `HARD_SWISH`.
            HardSwish = "HARD_SWISH", NoOptions, hard_swish, "the kernel set `{Self}` has no HARD_SWISH kernel, and the model runs HARD_SWISH";
            /// `RESIZE_NEAREST_NEIGHBOR`.
            ResizeNearestNeighbor = "RESIZE_NEAREST_NEIGHBOR", ResizeNearestNeighborOptions, resize_nearest_neighbor, "the kernel set `{Self}` has no RESIZE_NEAREST_NEIGHBOR kernel, and the model runs RESIZE_NEAREST_NEIGHBOR";
            /// `DIV`.
            Div = "DIV", DivOptions, div, "the kernel set `{Self}` has no DIV kernel, and the model runs DIV";
            /// `LEAKY_RELU`.
            LeakyRelu = "LEAKY_RELU", LeakyReluOptions, leaky_relu, "the kernel set `{Self}` has no LEAKY_RELU kernel, and the model runs LEAKY_RELU";
            /// `ARG_MAX`.
            ArgMax = "ARG_MAX", ArgMaxOptions, arg_max, "the kernel set `{Self}` has no ARG_MAX kernel, and the model runs ARG_MAX";
            /// `GATHER`.
            Gather = "GATHER", GatherOptions, gather, "the kernel set `{Self}` has no GATHER kernel, and the model runs GATHER";
            /// `SUM`.
            Sum = "SUM", ReduceOptions, sum, "the kernel set `{Self}` has no SUM kernel, and the model runs SUM";
            /// `REDUCE_MAX`.
            ReduceMax = "REDUCE_MAX", ReduceOptions, reduce_max, "the kernel set `{Self}` has no REDUCE_MAX kernel, and the model runs REDUCE_MAX";
            /// `SQUEEZE`.
            Squeeze = "SQUEEZE", SqueezeOptions, squeeze, "the kernel set `{Self}` has no SQUEEZE kernel, and the model runs SQUEEZE";
            /// `EXPAND_DIMS`.
            ExpandDims = "EXPAND_DIMS", ExpandDimsOptions, expand_dims, "the kernel set `{Self}` has no EXPAND_DIMS kernel, and the model runs EXPAND_DIMS";
            /// `SLICE`.
            Slice = "SLICE", SliceOptions, slice, "the kernel set `{Self}` has no SLICE kernel, and the model runs SLICE";
            /// `PADV2`.
            PadV2 = "PADV2", PadOptions, padv2, "the kernel set `{Self}` has no PADV2 kernel, and the model runs PADV2";
            /// `SPLIT`.
            Split = "SPLIT", SplitOptions, split, "the kernel set `{Self}` has no SPLIT kernel, and the model runs SPLIT";
            /// `SPLIT_V`.
            SplitV = "SPLIT_V", SplitVOptions, split_v, "the kernel set `{Self}` has no SPLIT_V kernel, and the model runs SPLIT_V";
            /// `PACK`.
            Pack = "PACK", PackOptions, pack, "the kernel set `{Self}` has no PACK kernel, and the model runs PACK";
            /// `UNPACK`.
            Unpack = "UNPACK", UnpackOptions, unpack, "the kernel set `{Self}` has no UNPACK kernel, and the model runs UNPACK";
            /// `RESIZE_BILINEAR`.
            ResizeBilinear = "RESIZE_BILINEAR", ResizeBilinearOptions, resize_bilinear, "the kernel set `{Self}` has no RESIZE_BILINEAR kernel, and the model runs RESIZE_BILINEAR";
            /// `TRANSPOSE_CONV`.
            TransposeConv = "TRANSPOSE_CONV", TransposeConvOptions, transpose_conv, "the kernel set `{Self}` has no TRANSPOSE_CONV kernel, and the model runs TRANSPOSE_CONV";
            /// `ARG_MIN`.
            ArgMin = "ARG_MIN", ArgMaxOptions, arg_min, "the kernel set `{Self}` has no ARG_MIN kernel, and the model runs ARG_MIN";
            /// `BATCH_MATMUL`.
            BatchMatMul = "BATCH_MATMUL", BatchMatMulOptions, batch_matmul, "the kernel set `{Self}` has no BATCH_MATMUL kernel, and the model runs BATCH_MATMUL";
            /// `CUMSUM`.
            Cumsum = "CUMSUM", CumsumOptions, cumsum, "the kernel set `{Self}` has no CUMSUM kernel, and the model runs CUMSUM";
            /// `DEPTH_TO_SPACE`.
            DepthToSpace = "DEPTH_TO_SPACE", BlockSizeOptions, depth_to_space, "the kernel set `{Self}` has no DEPTH_TO_SPACE kernel, and the model runs DEPTH_TO_SPACE";
            /// `SPACE_TO_DEPTH`.
            SpaceToDepth = "SPACE_TO_DEPTH", BlockSizeOptions, space_to_depth, "the kernel set `{Self}` has no SPACE_TO_DEPTH kernel, and the model runs SPACE_TO_DEPTH";
            /// `L2_NORMALIZATION`.
            L2Normalization = "L2_NORMALIZATION", L2NormOptions, l2_normalization, "the kernel set `{Self}` has no L2_NORMALIZATION kernel, and the model runs L2_NORMALIZATION";
            /// `L2_POOL_2D`.
            L2Pool2d = "L2_POOL_2D", Pool2dOptions, l2_pool_2d, "the kernel set `{Self}` has no L2_POOL_2D kernel, and the model runs L2_POOL_2D";
            /// `MIRROR_PAD`.
            MirrorPad = "MIRROR_PAD", MirrorPadOptions, mirror_pad, "the kernel set `{Self}` has no MIRROR_PAD kernel, and the model runs MIRROR_PAD";
            /// `REDUCE_MIN`.
            ReduceMin = "REDUCE_MIN", ReduceOptions, reduce_min, "the kernel set `{Self}` has no REDUCE_MIN kernel, and the model runs REDUCE_MIN";
            /// `REDUCE_ALL`.
            ReduceAll = "REDUCE_ALL", ReduceOptions, reduce_all, "the kernel set `{Self}` has no REDUCE_ALL kernel, and the model runs REDUCE_ALL";
        }
    };
}

/// The op kinds that can run in place, handed to the macro `$callback`: one line per kind
/// with its `OpOptions` variant, in-place kernel trait, method, options type, TFLite opcode,
/// and the message and note for a kernel set without it. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __in_place_kinds {
    ($callback:ident) => {
        $callback! {
            DepthwiseConv2d => DepthwiseConv2dInPlace, depthwise_conv_2d_in_place, DepthwiseConv2dOptions, "DEPTHWISE_CONV_2D",
                "the kernel set `{Self}` cannot run DEPTHWISE_CONV_2D in place, and the plan runs DEPTHWISE_CONV_2D in place",
                "implement `planner::rt::kernel::DepthwiseConv2dInPlace` for `{Self}`, or plan without `in_place`";
            Add => AddInPlace, add_in_place, AddOptions, "ADD",
                "the kernel set `{Self}` cannot run ADD in place, and the plan runs ADD in place",
                "implement `planner::rt::kernel::AddInPlace` for `{Self}`, or plan without `in_place`";
            Sub => SubInPlace, sub_in_place, AddOptions, "SUB",
                "the kernel set `{Self}` cannot run SUB in place, and the plan runs SUB in place",
                "implement `planner::rt::kernel::SubInPlace` for `{Self}`, or plan without `in_place`";
            Mul => MulInPlace, mul_in_place, MulOptions, "MUL",
                "the kernel set `{Self}` cannot run MUL in place, and the plan runs MUL in place",
                "implement `planner::rt::kernel::MulInPlace` for `{Self}`, or plan without `in_place`";
            Quantize => QuantizeInPlace, quantize_in_place, NoOptions, "QUANTIZE",
                "the kernel set `{Self}` cannot run QUANTIZE in place, and the plan runs QUANTIZE in place",
                "implement `planner::rt::kernel::QuantizeInPlace` for `{Self}`, or plan without `in_place`";
            Dequantize => DequantizeInPlace, dequantize_in_place, NoOptions, "DEQUANTIZE",
                "the kernel set `{Self}` cannot run DEQUANTIZE in place, and the plan runs DEQUANTIZE in place",
                "implement `planner::rt::kernel::DequantizeInPlace` for `{Self}`, or plan without `in_place`";
            Logistic => LogisticInPlace, logistic_in_place, NoOptions, "LOGISTIC",
                "the kernel set `{Self}` cannot run LOGISTIC in place, and the plan runs LOGISTIC in place",
                "implement `planner::rt::kernel::LogisticInPlace` for `{Self}`, or plan without `in_place`";
            Tanh => TanhInPlace, tanh_in_place, NoOptions, "TANH",
                "the kernel set `{Self}` cannot run TANH in place, and the plan runs TANH in place",
                "implement `planner::rt::kernel::TanhInPlace` for `{Self}`, or plan without `in_place`";
            Relu => ReluInPlace, relu_in_place, NoOptions, "RELU",
                "the kernel set `{Self}` cannot run RELU in place, and the plan runs RELU in place",
                "implement `planner::rt::kernel::ReluInPlace` for `{Self}`, or plan without `in_place`";
            Relu6 => Relu6InPlace, relu6_in_place, NoOptions, "RELU6",
                "the kernel set `{Self}` cannot run RELU6 in place, and the plan runs RELU6 in place",
                "implement `planner::rt::kernel::Relu6InPlace` for `{Self}`, or plan without `in_place`";
            HardSwish => HardSwishInPlace, hard_swish_in_place, NoOptions, "HARD_SWISH",
                "the kernel set `{Self}` cannot run HARD_SWISH in place, and the plan runs HARD_SWISH in place",
                "implement `planner::rt::kernel::HardSwishInPlace` for `{Self}`, or plan without `in_place`";
        }
    };
}
