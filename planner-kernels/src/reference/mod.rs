//! [`Reference`]: the kernel set (int8, int16 and float32) that a model's generated `run()`
//! takes, with TFLite Micro's reference arithmetic, op by op.
//!
//! Each op kind is a trait of `planner_rt::kernel`; [`Reference`] implements the kinds the
//! bundled int8 models use: `CONV_2D`, `DEPTHWISE_CONV_2D` (both with SAME, VALID or
//! explicit per-side padding, a PAD the planner folded into them), `FULLY_CONNECTED`,
//! `AVERAGE_POOL_2D`, `MAX_POOL_2D`, `ADD`, `SUB`, `MUL`, `SOFTMAX`, `RESHAPE`, `PAD`,
//! `MEAN`, `TRANSPOSE`, `QUANTIZE` (float, int8 or int16 to int8, int8 or int16 to int32),
//! `DEQUANTIZE` (int8 or int16 to float), `RELU`, `RELU6`, `HARD_SWISH` (int8), `LOGISTIC`,
//! `TANH` (int8 and int16), `MAXIMUM`, `MINIMUM` (int8), `STRIDED_SLICE`,
//! `RESIZE_NEAREST_NEIGHBOR` (any element type, all four combinations of `align_corners`
//! and `half_pixel_centers`), `SVDF` (int8 or int16 state), and `CONCATENATION` (any
//! element type, inputs quantised as the output). A model with any other op kind does not compile against it
//! (the trait bound of `run()` names the op).
//!
//! It also runs every op kind the planner may run in place (the `*InPlace` traits):
//! `DEPTHWISE_CONV_2D` (depth multiplier 1, channel by channel through the op's one-channel
//! temporary), `ADD`, `SUB`, `MUL` (onto the operand of the output's shape; the other may
//! broadcast), `QUANTIZE`, `DEQUANTIZE`, `LOGISTIC`, `TANH`, `RELU`, `RELU6` and
//! `HARD_SWISH`, with the same arithmetic as out of place (one function computes both).
//! The view of an in-place op does not carry the taken-over input's element type: the
//! unary kernels take it from the buffer's length (see `common::unary::InType`), so an input
//! narrower than its output (never planned in place) is refused.
//!
//! Further kinds: `DIV` (float32, int8), `SQUARED_DIFFERENCE` (float32, int8), `PRELU`
//! (float32, int8, alpha broadcast), `LEAKY_RELU` (float32, int8), `LOG_SOFTMAX` (int8),
//! `CAST` (int8, int16, int32, uint32, float32 or bool to int8, int16, int32, uint32 or
//! float32), `ARG_MAX` (int32 or int64 indices), `GATHER` (any element type, int32 or int64
//! indices, `batch_dims`), `SUM` (int8, int32, float32), `REDUCE_MAX` (int8, float32),
//! `SQUEEZE`, `EXPAND_DIMS`, `SLICE` and `PADV2` (with its constant pad value); all with
//! broadcasting and negative axes where the op has them, and a type combination TFLM does
//! not run refused with [`KernelError::Type`].
//!
//! # Patch regions
//!
//! [`Reference`] implements [`planner_rt::kernel::Patches`]: the kernels of every kind a
//! patch stage may hold honour [`In::region`] and [`Out::region`]: `CONV_2D` and
//! `DEPTHWISE_CONV_2D` (every padding, stride, dilation and quantisation above),
//! `AVERAGE_POOL_2D` (dividing by the window's pixels inside the image, as TFLM) and
//! `MAX_POOL_2D`, `PAD` (int8: the output region's pixel `p` is the input's pixel `p -
//! before`, or the zero point outside the input), `ADD`, `SUB`, `MUL`, `MAXIMUM` and
//! `MINIMUM` (an operand with a region has the output's shape; one without is read whole,
//! broadcasting or not), `QUANTIZE`, `DEQUANTIZE`, `RELU`, `RELU6`, `LOGISTIC`, `TANH` and
//! `HARD_SWISH`, with the element types above. Such a kernel computes the pixels of the
//! output's region (all of them when the output has none) exactly as it computes them on
//! the whole tensor: it reads input pixels at whole-tensor coordinates, pads only outside
//! the image (a view's shape is the whole tensor's, never a region's edge inside it), and
//! finds each pixel through the view's layout, dense (the region's elements only) or whole
//! (the tensor's), told apart by the data's length as
//! [`Region::pixel`](planner_rt::kernel::Region::pixel) says. The whole tensor is the
//! region that covers everything: the arithmetic exists once. An input region that lacks
//! a pixel inside the image the output region reads is refused
//! ([`KernelError::Shape`]); so are a region reaching outside its tensor, a view whose
//! length is neither layout's, and a region over a tensor of more than one batch.
//!
//! Every other kind, the in-place variants, and a region on any tensor but the image
//! inputs and output 0 (a filter, a bias, a scratch tensor) are refused with
//! [`KernelError::Region`], never computed on the wrong pixels; so are the float32 paths
//! of the kinds above (the int8 paths, and `QUANTIZE` from float32, honour regions).
//!
//! The arithmetic follows the operators' definitions in TFLite's integer scheme: int32
//! accumulation of `(x - input_zero_point) · w`, the bias, then the real multiplier
//! `input_scale · filter_scale / output_scale` (per output channel where the filter has
//! several scales) applied as a Q31 multiplier and a shift ([`crate::quantize_multiplier`],
//! [`crate::multiply_by_quantized_multiplier`]), the output zero point, and the fused
//! activation as a clamp.
//!
//! float32 `FULLY_CONNECTED`, `CONV_2D`, `DEPTHWISE_CONV_2D`, `ADD`,
//! `SUB`, `MUL`, `LOGISTIC`, `TANH`, `SOFTMAX`, `RELU` and `RELU6` (the int8 kernels hand an
//! op whose output is `f32` to them) with TFLM's float reference arithmetic, sums in the
//! same order (`exp` and `tanh` through the `libm` crate: one ulp from glibc's on rare
//! arguments, see `common::float`); `SPLIT`, `SPLIT_V`, `PACK` and `UNPACK` (any element type,
//! negative axes); `RESIZE_BILINEAR` (int8 through TFLM's Q10 integer variant, float32
//! through its float one; `align_corners` or `half_pixel_centers`); and `TRANSPOSE_CONV`
//! (int8 with per-channel filters and an optional int32 bias, or float32; SAME or VALID,
//! any stride, fused activation).
//!
//! `UNIDIRECTIONAL_SEQUENCE_LSTM` (the standard LSTM TFLM runs: no peephole, projection,
//! layer norm or coupled gates; batch- or time-major) runs in int8 (int8 input, weights
//! and hidden state, int32 biases, int16 cell state, TFLM's integer gate arithmetic at
//! Q3.12 into its int16 logistic and tanh) and in float32; its hidden and cell states are
//! the op's variables and carry from run to run.
//!
//! [`In::region`]: planner_rt::kernel::In::region
//! [`Out::region`]: planner_rt::kernel::Out::region

// One module per op family, each with its int8, int16 and float32 kernels; `common` holds
// what they share and imports none of them.
pub(crate) mod activation;
pub(crate) mod common;
pub(crate) mod conv;
pub(crate) mod detection;
pub(crate) mod elementwise;
pub(crate) mod index;
pub(crate) mod pool;
pub(crate) mod recurrent;
pub(crate) mod reduce;
pub(crate) mod shape;
pub(crate) mod signal;

use core::fmt;

use planner_rt::kernel::Kernel;

/// The reference kernel set. Holds nothing: every kernel works in the tensors it is given.
#[derive(Debug, Default, Clone, Copy)]
pub struct Reference;

/// Why a reference kernel refused an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelError {
    /// A tensor has an element type (or combination of types) this kernel does not handle.
    Type {
        /// Which tensor (`"input 0"`, `"output 0"`, ...).
        tensor: &'static str,
    },
    /// A tensor the op needs is missing, or its bytes are an output's (in place), which
    /// this kernel does not handle.
    Missing {
        /// Which tensor.
        tensor: &'static str,
    },
    /// A tensor has no quantisation parameters but the kernel needs them.
    Quantization {
        /// Which tensor.
        tensor: &'static str,
    },
    /// Shapes or lengths that do not fit together.
    Shape {
        /// What does not fit.
        what: &'static str,
    },
    /// An input value the op is not defined for, which TFLM's kernel refuses when it runs
    /// too: a zero divisor of `FLOOR_DIV`, an index outside its dimension, a negative
    /// `RSQRT` input, shapes that do not broadcast in `BROADCAST_ARGS`.
    Value {
        /// What is wrong.
        what: &'static str,
    },
    /// Options this kernel does not implement (a fused activation other than none, RELU,
    /// RELU_N1_TO_1 and RELU6; shuffled weights).
    Options {
        /// Which option.
        what: &'static str,
    },
    /// A tensor has a patch region ([`planner_rt::kernel::Region`]) and this kernel does
    /// not run on regions (an op kind outside those listed in the module docs, an in-place
    /// variant, or a tensor other than an image input or output 0).
    Region {
        /// Which tensor.
        tensor: &'static str,
    },
    /// Input 3 of an int8 `CONV_2D`, `DEPTHWISE_CONV_2D` or `FULLY_CONNECTED` (the
    /// requantisation constants a build step prepared, [`crate::prepare::requant_v1`]) is
    /// not an int32 `[3, channels]` tensor. Only [`crate::Optimized`] reads it.
    Prepared {
        /// Its shape.
        shape: &'static [usize],
        /// Whether its elements are int32.
        int32: bool,
        /// The op's output channels.
        channels: usize,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Type { tensor } => {
                write!(
                    f,
                    "{tensor} has an element type this kernel does not handle"
                )
            }
            KernelError::Missing { tensor } => write!(
                f,
                "{tensor} is missing or shares its bytes with an output; plan the op without in-place aliasing"
            ),
            KernelError::Quantization { tensor } => {
                write!(f, "{tensor} has no quantisation parameters")
            }
            KernelError::Shape { what } => write!(f, "shapes do not fit: {what}"),
            KernelError::Value { what } => {
                write!(f, "an input value the op is not defined for: {what}")
            }
            KernelError::Options { what } => write!(f, "option not supported: {what}"),
            KernelError::Region { tensor } => write!(
                f,
                "{tensor} is a patch region and this kernel runs only on whole tensors; plan the op outside the patch stage"
            ),
            KernelError::Prepared {
                shape,
                int32,
                channels,
            } => write!(
                f,
                "input 3 (prepared requantisation constants) is {} of shape {shape:?}, not an int32 [3, {channels}] tensor (effective bias, multiplier and shift of each output channel); write it with planner_kernels::prepare::requant_v1, or leave input 3 out",
                if *int32 { "int32" } else { "not int32" }
            ),
        }
    }
}

/// A kernel's per-call requantisation constants ([`crate::prepare`]) whose operands do not
/// fit together: the shape error the reference kernel reports for the same operands.
impl From<crate::prepare::PrepareError> for KernelError {
    fn from(e: crate::prepare::PrepareError) -> Self {
        use crate::prepare::PrepareError;
        KernelError::Shape {
            what: match e {
                PrepareError::Output { .. } => {
                    "the requantisation rows are not three of one element per output channel"
                }
                PrepareError::Filter { .. } => {
                    "the filter's length is not a multiple of its output channels"
                }
                PrepareError::Bias { .. } => "bias length differs from the output channels",
                PrepareError::Channel { .. } => {
                    "requantisation rows of different lengths, or past the output channels"
                }
            },
        }
    }
}

impl Kernel for Reference {
    type Error = KernelError;
}

/// Every kind a patch stage may hold honours [`In::region`] and [`Out::region`] (see the
/// module docs).
///
/// [`In::region`]: planner_rt::kernel::In::region
/// [`Out::region`]: planner_rt::kernel::Out::region
impl planner_rt::kernel::Patches for Reference {}

#[cfg(test)]
mod edge_tests;
#[cfg(test)]
pub(crate) mod in_place_tests;
#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod region_tests;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
