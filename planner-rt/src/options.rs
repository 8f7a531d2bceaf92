//! Typed operator options: what a kernel needs besides the tensors (strides, padding,
//! dilation, fused activation, axes, ...).
//!
//! The TFLite importer reads them from each operator's builtin options table, and from the
//! constant operands that parameterise an op (a reshape's shape, a pad's amounts, a mean's
//! axes, a transpose's permutation); the plan file carries them (as [`OpOptions`]); and
//! `include_model!` emits them as a typed `const` per op (`ops::Op3::OPTIONS`) and passes them
//! to the kernel trait of the op's kind ([`crate::kernel`]).
//!
//! Every type here is plain `Copy` data without allocation, so the constants live in flash.

/// Most dimensions a [`Dims`] holds: TFLite kernels handle up to 6, rarely more.
pub const MAX_DIMS: usize = 8;

/// A short list of integers (a shape, axes, a permutation, pad amounts), stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dims {
    len: u8,
    dims: [i32; MAX_DIMS],
}

impl Dims {
    /// The empty list.
    pub const EMPTY: Dims = Dims {
        len: 0,
        dims: [0; MAX_DIMS],
    };

    /// The list `v`; `None` when it has more than [`MAX_DIMS`] entries.
    pub const fn new(v: &[i32]) -> Option<Dims> {
        if v.len() > MAX_DIMS {
            return None;
        }
        let mut dims = [0; MAX_DIMS];
        let mut i = 0;
        while i < v.len() {
            dims[i] = v[i];
            i += 1;
        }
        Some(Dims {
            len: v.len() as u8,
            dims,
        })
    }

    /// The entries.
    pub fn as_slice(&self) -> &[i32] {
        &self.dims[..usize::from(self.len).min(MAX_DIMS)]
    }

    /// Number of entries.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True when there are no entries.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for Dims {
    fn default() -> Self {
        Dims::EMPTY
    }
}

impl core::fmt::Debug for Dims {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl serde::Serialize for Dims {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.as_slice())
    }
}

impl<'de> serde::Deserialize<'de> for Dims {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(DimsVisitor)
    }
}

/// Reads a list of integers into a [`Dims`] without allocating; a longer list is read to
/// its end (to name its length) and refused.
struct DimsVisitor;

impl<'de> serde::de::Visitor<'de> for DimsVisitor {
    type Value = Dims;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "a sequence")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Dims, A::Error> {
        let mut dims = [0; MAX_DIMS];
        let mut len = 0usize;
        while let Some(d) = seq.next_element::<i32>()? {
            if let Some(slot) = dims.get_mut(len) {
                *slot = d;
            }
            len += 1;
        }
        dims.get(..len).and_then(Dims::new).ok_or_else(|| {
            serde::de::Error::custom(format_args!(
                "a list of {len} integers where at most {MAX_DIMS} fit"
            ))
        })
    }
}

/// How the Rust expression of an option value is written, for `include_model!`: into any
/// [`core::fmt::Write`], so the runtime needs no allocator.
#[doc(hidden)]
pub trait RustExpr {
    /// Writes a Rust expression of this value to `out`; `rt` is the path of this runtime
    /// crate.
    fn rust_expr(&self, rt: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result;
}

impl RustExpr for Dims {
    fn rust_expr(&self, rt: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        write!(out, "match {rt}::options::Dims::new(&[")?;
        for (i, d) in self.as_slice().iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(out, "{sep}{d}i32")?;
        }
        write!(
            out,
            "]) {{ Some(d) => d, None => {rt}::options::Dims::EMPTY }}"
        )
    }
}

impl RustExpr for i32 {
    fn rust_expr(&self, _: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        write!(out, "{self}i32")
    }
}

impl RustExpr for bool {
    fn rust_expr(&self, _: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        write!(out, "{self}")
    }
}

impl RustExpr for f32 {
    fn rust_expr(&self, _: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        // Bit-exact, and valid for every value (NaN and infinities too).
        write!(out, "f32::from_bits({:#010x}u32)", self.to_bits())
    }
}

/// The Rust expression of an op's options (see [`OpOptions::codegen`]), written when
/// displayed.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct OptionsExpr<'a> {
    value: &'a dyn RustExpr,
    rt: &'a str,
}

impl core::fmt::Display for OptionsExpr<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.value.rust_expr(self.rt, f)
    }
}

/// Declares a fieldless enum of option values with its plan-file spelling.
macro_rules! value_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[derive(serde::Serialize, serde::Deserialize)]
        pub enum $name {
            #[default]
            $($(#[$vdoc])* #[serde(rename = $text)] $variant,)*
        }

        impl RustExpr for $name {
            fn rust_expr(&self, rt: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
                match self {
                    $($name::$variant => write!(out, concat!("{}::options::", stringify!($name), "::", stringify!($variant)), rt),)*
                }
            }
        }
    };
}

value_enum! {
    /// How a window op pads its input (TFLite `Padding`).
    Padding {
        /// Output size `ceil(input / stride)`, zero padding split evenly (extra at the end).
        Same = "same",
        /// No padding: output size `ceil((input - filter_extent + 1) / stride)`.
        Valid = "valid",
        /// The per-side amounts of the op's `pads` (`[top, bottom, left, right]`), filled
        /// with the input's zero point: a PAD the planner folded into the convolution that
        /// consumes it. Output size `(input + before + after - filter_extent) / stride + 1`.
        Explicit = "explicit",
    }
}

value_enum! {
    /// The activation fused into an op's output (TFLite `ActivationFunctionType`).
    Activation {
        /// None.
        None = "none",
        /// `max(0, x)`.
        Relu = "relu",
        /// `clamp(x, -1, 1)`.
        ReluN1To1 = "relu_n1_to_1",
        /// `clamp(x, 0, 6)`.
        Relu6 = "relu6",
        /// `tanh(x)`.
        Tanh = "tanh",
        /// The sign bit.
        SignBit = "sign_bit",
    }
}

value_enum! {
    /// Layout of a fully-connected op's weights (TFLite `FullyConnectedOptionsWeightsFormat`).
    WeightsFormat {
        /// Row-major `[outputs, depth]`.
        Default = "default",
        /// Shuffled in 4x16 int8 blocks.
        Shuffled4x16Int8 = "shuffled4x16_int8",
    }
}

/// Declares option structs: plain `Copy` data, serialisable, and writable as a
/// Rust expression for the generated constants.
macro_rules! options_struct {
    ($($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty,)* })*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            #[derive(serde::Serialize, serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $name {
                $($(#[$fdoc])* pub $field: $ty,)*
            }

            impl RustExpr for $name {
                // `NoOptions` has no field to separate.
                #[allow(unused_mut, unused_assignments, unused_variables)]
                fn rust_expr(&self, rt: &str, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
                    write!(out, concat!("{}::options::", stringify!($name), " {{ "), rt)?;
                    let mut sep = "";
                    $(
                        write!(out, concat!("{}", stringify!($field), ": "), sep)?;
                        self.$field.rust_expr(rt, out)?;
                        sep = ", ";
                    )*
                    write!(out, " }}")
                }
            }
        )*
    };
}

options_struct! {
    /// Options of an op that takes none (`QUANTIZE`, `DEQUANTIZE`, `LOGISTIC`, `TANH`, `RELU`,
    /// `RELU6`, `HARD_SWISH`).
    NoOptions {}

    /// `CONV_2D`.
    Conv2dOptions {
        /// Padding.
        padding: Padding,
        /// `[top, bottom, left, right]` for [`Padding::Explicit`]; empty otherwise.
        pads: Dims,
        /// Stride along the width (at least 1).
        stride_w: i32,
        /// Stride along the height (at least 1).
        stride_h: i32,
        /// Dilation along the width (at least 1).
        dilation_w: i32,
        /// Dilation along the height (at least 1).
        dilation_h: i32,
        /// Fused activation.
        activation: Activation,
    }

    /// `DEPTHWISE_CONV_2D`.
    DepthwiseConv2dOptions {
        /// Padding.
        padding: Padding,
        /// `[top, bottom, left, right]` for [`Padding::Explicit`]; empty otherwise.
        pads: Dims,
        /// Stride along the width (at least 1).
        stride_w: i32,
        /// Stride along the height (at least 1).
        stride_h: i32,
        /// Output channels per input channel, as the file states it (0 when left out; the
        /// filter's shape then decides).
        depth_multiplier: i32,
        /// Dilation along the width (at least 1).
        dilation_w: i32,
        /// Dilation along the height (at least 1).
        dilation_h: i32,
        /// Fused activation.
        activation: Activation,
    }

    /// `FULLY_CONNECTED`.
    FullyConnectedOptions {
        /// Fused activation.
        activation: Activation,
        /// Weights layout.
        weights_format: WeightsFormat,
        /// Keep the input's leading dimensions in the output.
        keep_num_dims: bool,
        /// Hybrid models: quantise float inputs asymmetrically.
        asymmetric_quantize_inputs: bool,
    }

    /// `AVERAGE_POOL_2D`, `MAX_POOL_2D` and `L2_POOL_2D`.
    Pool2dOptions {
        /// Padding.
        padding: Padding,
        /// Stride along the width (at least 1).
        stride_w: i32,
        /// Stride along the height (at least 1).
        stride_h: i32,
        /// Window width (at least 1).
        filter_w: i32,
        /// Window height (at least 1).
        filter_h: i32,
        /// Fused activation.
        activation: Activation,
    }

    /// `ADD` and `SUB`.
    AddOptions {
        /// Fused activation.
        activation: Activation,
        /// int16 only: the scales are powers of two.
        pot_scale_int16: bool,
    }

    /// `MUL`.
    MulOptions {
        /// Fused activation.
        activation: Activation,
    }

    /// `SOFTMAX`.
    SoftmaxOptions {
        /// The input's multiplier before the exponential.
        beta: f32,
    }

    /// `RESHAPE`: the new shape, from the options or the constant shape operand, else the
    /// output tensor's shape.
    ReshapeOptions {
        /// The new shape (one entry may be `-1` in the file; the output's shape resolves it).
        new_shape: Dims,
    }

    /// `CONCATENATION`.
    ConcatenationOptions {
        /// The axis (negative counts from the end).
        axis: i32,
        /// Fused activation.
        activation: Activation,
    }

    /// `PAD` and `PADV2`: the amounts, from the constant `paddings` operand.
    PadOptions {
        /// Elements added before each dimension.
        before: Dims,
        /// Elements added after each dimension.
        after: Dims,
    }

    /// `MEAN` (TFLite `ReducerOptions` and the constant `axis` operand).
    MeanOptions {
        /// Axes reduced (negative counts from the end), as the file lists them.
        axes: Dims,
        /// Keep reduced dimensions with size 1.
        keep_dims: bool,
    }

    /// `TRANSPOSE`: the permutation, from the constant `perm` operand.
    TransposeOptions {
        /// Output dimension `i` is input dimension `perm[i]`.
        perm: Dims,
    }

    /// `STRIDED_SLICE`, with the constant `begin`, `end` and `strides` operands.
    StridedSliceOptions {
        /// Begin mask.
        begin_mask: i32,
        /// End mask.
        end_mask: i32,
        /// Ellipsis mask.
        ellipsis_mask: i32,
        /// New-axis mask.
        new_axis_mask: i32,
        /// Shrink-axis mask.
        shrink_axis_mask: i32,
        /// `end` is an offset from `begin`.
        offset: bool,
        /// Begin indices.
        begin: Dims,
        /// End indices.
        end: Dims,
        /// Strides.
        strides: Dims,
    }

    /// `SVDF`.
    SvdfOptions {
        /// Rank of the decomposition (at least 1).
        rank: i32,
        /// Fused activation.
        activation: Activation,
        /// Hybrid models: quantise float inputs asymmetrically.
        asymmetric_quantize_inputs: bool,
    }

    /// `UNIDIRECTIONAL_SEQUENCE_LSTM`.
    UnidirectionalSequenceLstmOptions {
        /// Activation of the cell output.
        activation: Activation,
        /// Clip of the cell state (0: none).
        cell_clip: f32,
        /// Clip of the projection (0: none).
        proj_clip: f32,
        /// Inputs are `[time, batch, ...]` rather than `[batch, time, ...]`.
        time_major: bool,
        /// Hybrid models: quantise float inputs asymmetrically.
        asymmetric_quantize_inputs: bool,
        /// Recurrent weights are diagonal.
        diagonal_recurrent_tensors: bool,
    }

    /// `RESIZE_NEAREST_NEIGHBOR` (TFLite `ResizeNearestNeighborOptions`).
    ResizeNearestNeighborOptions {
        /// Map the corner pixels of input and output onto each other: the scale is
        /// `(in - 1) / (out - 1)` and the source index is rounded rather than floored.
        align_corners: bool,
        /// Sample at pixel centres: the source index is taken at `out + 0.5`.
        half_pixel_centers: bool,
    }

    /// `SPLIT` (TFLite `SplitOptions` and the constant `axis` operand, input 0).
    SplitOptions {
        /// The axis split (negative counts from the end).
        axis: i32,
        /// Number of outputs, as the file states it.
        num_splits: i32,
    }

    /// `SPLIT_V` (TFLite `SplitVOptions` and the constant `axis` operand, input 2; each
    /// output's size along the axis is its shape's).
    SplitVOptions {
        /// The axis split (negative counts from the end).
        axis: i32,
        /// Number of outputs, as the file states it.
        num_splits: i32,
    }

    /// `PACK` (TFLite `PackOptions`).
    PackOptions {
        /// The output's new axis (negative counts from the end of the output's dimensions).
        axis: i32,
        /// Number of inputs, as the file states it.
        values_count: i32,
    }

    /// `UNPACK` (TFLite `UnpackOptions`).
    UnpackOptions {
        /// The input's axis taken apart (negative counts from the end).
        axis: i32,
        /// Number of outputs, as the file states it.
        num: i32,
    }

    /// `RESIZE_BILINEAR` (TFLite `ResizeBilinearOptions`; the size is the output's shape).
    ResizeBilinearOptions {
        /// Map the corner pixels of input and output onto each other: the scale is
        /// `(in - 1) / (out - 1)`.
        align_corners: bool,
        /// Sample at pixel centres: the source position is `(out + 0.5) · scale - 0.5`.
        half_pixel_centers: bool,
    }

    /// `TRANSPOSE_CONV` (TFLite `TransposeConvOptions`; the output size is the output's
    /// shape, the constant `output_shape` operand's).
    TransposeConvOptions {
        /// Padding (`Same` or `Valid`).
        padding: Padding,
        /// Stride along the width (at least 1).
        stride_w: i32,
        /// Stride along the height (at least 1).
        stride_h: i32,
        /// Fused activation.
        activation: Activation,
    }
}

options_struct! {
    /// `DIV`.
    DivOptions {
        /// Fused activation.
        activation: Activation,
    }

    /// `LEAKY_RELU`.
    LeakyReluOptions {
        /// The slope below zero.
        alpha: f32,
    }

    /// `ARG_MAX` and `ARG_MIN`, with the constant `axis` operand.
    ArgMaxOptions {
        /// The axis reduced (negative counts from the end).
        axis: i32,
    }

    /// `GATHER`.
    GatherOptions {
        /// The axis gathered along (negative counts from the end).
        axis: i32,
        /// Leading dimensions the input and the indices share (negative counts from the
        /// end of the indices' dimensions).
        batch_dims: i32,
    }

    /// `SUM`, `REDUCE_MAX`, `REDUCE_MIN` and `REDUCE_ALL` (TFLite `ReducerOptions` and the
    /// constant `axis` operand).
    ReduceOptions {
        /// Axes reduced (negative counts from the end), as the file lists them.
        axes: Dims,
        /// Keep reduced dimensions with size 1.
        keep_dims: bool,
    }

    /// `SQUEEZE`.
    SqueezeOptions {
        /// The dimensions removed (all of size 1 when empty).
        squeeze_dims: Dims,
    }

    /// `EXPAND_DIMS`, with the constant `axis` operand.
    ExpandDimsOptions {
        /// Where the new dimension of size 1 goes (negative counts from the end of the
        /// output's dimensions).
        axis: i32,
    }

    /// `SLICE`, with the constant `begin` and `size` operands.
    SliceOptions {
        /// First index of each dimension.
        begin: Dims,
        /// Elements taken along each dimension (`-1`: to the end).
        size: Dims,
    }
}

value_enum! {
    /// How `MIRROR_PAD` mirrors (TFLite `MirrorPadMode`).
    MirrorPadMode {
        /// The edge element is not repeated: `[a, b, c]` padded by 2 before is `[c, b, a, b, c]`.
        Reflect = "reflect",
        /// The edge element is repeated: `[a, b, c]` padded by 2 before is `[b, a, a, b, c]`.
        Symmetric = "symmetric",
    }
}

options_struct! {
    /// `BATCH_MATMUL` (TFLite `BatchMatMulOptions`).
    BatchMatMulOptions {
        /// Transpose the last two dimensions of input 0 before multiplying.
        adj_x: bool,
        /// Transpose the last two dimensions of input 1 before multiplying.
        adj_y: bool,
        /// Hybrid models: quantise float inputs asymmetrically.
        asymmetric_quantize_inputs: bool,
    }

    /// `CUMSUM` (TFLite `CumsumOptions`; the axis is input 1, read when the op runs).
    CumsumOptions {
        /// Each output leaves its own input out of the sum.
        exclusive: bool,
        /// Sum from the end of the axis.
        reverse: bool,
    }

    /// `DEPTH_TO_SPACE` and `SPACE_TO_DEPTH` (TFLite `DepthToSpaceOptions`,
    /// `SpaceToDepthOptions`).
    BlockSizeOptions {
        /// Side of the square block moved between the channels and the image (at least 1).
        block_size: i32,
    }

    /// `L2_NORMALIZATION` (TFLite `L2NormOptions`).
    L2NormOptions {
        /// Fused activation (TFLM runs none).
        activation: Activation,
    }

    /// `MIRROR_PAD` (TFLite `MirrorPadOptions`; the amounts are input 1, read when the op
    /// runs).
    MirrorPadOptions {
        /// Reflect or symmetric.
        mode: MirrorPadMode,
    }
}

options_struct! {
    /// `CUSTOM:SignalWindow` (TFLM's signal library; FlexBuffers custom options, as are all
    /// the `Signal*` options below).
    SignalWindowOptions {
        /// Right shift of each windowed product.
        shift: i32,
    }

    /// `CUSTOM:SignalRfft` and `CUSTOM:SignalIrfft`.
    SignalFftOptions {
        /// Length of the transform (a power of two).
        fft_length: i32,
    }

    /// `CUSTOM:SignalEnergy`.
    SignalEnergyOptions {
        /// First bin whose energy is computed.
        start_index: i32,
        /// One past the last bin whose energy is computed.
        end_index: i32,
    }

    /// `CUSTOM:SignalFilterBank`.
    SignalFilterBankOptions {
        /// Number of output channels.
        num_channels: i32,
    }

    /// `CUSTOM:SignalFilterBankLog`.
    SignalFilterBankLogOptions {
        /// Bits the input was scaled down by, added back before the log.
        input_correction_bits: i32,
        /// Scale of the output.
        output_scale: i32,
    }

    /// `CUSTOM:SignalFilterBankSpectralSubtraction`.
    SignalSpectralSubtractionOptions {
        /// Smoothing of the noise estimate for odd channels, `1 - alternate_smoothing`.
        alternate_one_minus_smoothing: i32,
        /// Smoothing of the noise estimate for odd channels.
        alternate_smoothing: i32,
        /// Clamp the noise-reduced signal at zero.
        clamping: bool,
        /// Fraction of the signal kept at least.
        min_signal_remaining: i32,
        /// Number of channels.
        num_channels: i32,
        /// `1 - smoothing`.
        one_minus_smoothing: i32,
        /// Smoothing of the noise estimate.
        smoothing: i32,
        /// Fixed-point bits of the smoothing factors.
        smoothing_bits: i32,
        /// Fixed-point bits of the subtraction.
        spectral_subtraction_bits: i32,
    }

    /// `CUSTOM:SignalPCAN`.
    SignalPcanOptions {
        /// Shift of the signal-to-noise ratio.
        snr_shift: i32,
    }

    /// `CUSTOM:SignalFramer`.
    SignalFramerOptions {
        /// Samples per frame.
        frame_size: i32,
        /// Samples between the starts of two frames.
        frame_step: i32,
        /// Start with a buffer of zeros, so the first run already outputs a frame.
        prefill: bool,
    }

    /// `CUSTOM:SignalStacker`.
    SignalStackerOptions {
        /// Channels per input frame.
        num_channels: i32,
        /// Frames stacked before the current one.
        stacker_left_context: i32,
        /// Frames stacked after the current one.
        stacker_right_context: i32,
        /// Frames between two outputs.
        stacker_step: i32,
    }

    /// `CUSTOM:SignalDelay`.
    SignalDelayOptions {
        /// Samples of delay.
        delay_length: i32,
    }

    /// `CUSTOM:SignalOverlapAdd`.
    SignalOverlapAddOptions {
        /// Samples output per frame.
        frame_step: i32,
    }

    /// `CUSTOM:TFLite_Detection_PostProcess`, the SSD decoder (FlexBuffers options read by
    /// key).
    DetectionPostprocessOptions {
        /// Detections output at most.
        max_detections: i32,
        /// Classes kept per detection (fast non-maximum suppression).
        max_classes_per_detection: i32,
        /// Detections kept per class (regular non-maximum suppression; 100 when absent).
        detections_per_class: i32,
        /// Regular (per class) rather than fast non-maximum suppression (false when absent).
        use_regular_nms: bool,
        /// Scores below this are dropped.
        nms_score_threshold: f32,
        /// Boxes overlapping a kept one by more than this are suppressed.
        nms_iou_threshold: f32,
        /// Classes, background left out.
        num_classes: i32,
        /// Scale of the encoded box centres' y.
        y_scale: f32,
        /// Scale of the encoded box centres' x.
        x_scale: f32,
        /// Scale of the encoded box heights.
        h_scale: f32,
        /// Scale of the encoded box widths.
        w_scale: f32,
    }
}

/// Lists every op kind with typed options: the `OpOptions` variant (also the kernel trait's
/// name), the TFLite opcode, the options type, and the kernel method.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident = $opcode:literal, $ty:ident, $method:ident, $missing:literal;)*) => {
        /// An operator's typed options, by op kind; `None` for an op whose options the
        /// importer does not read (custom ops, and builtin ops outside this list).
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        ///
        /// Serialised internally tagged (`{"kind": "conv2d", ...}`). Reading that form back
        /// needs an allocator, so the host crate reads it (with the same list of kinds, from
        /// `__op_kinds!`).
        #[derive(serde::Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum OpOptions {
            /// No typed options (an op kind outside this list).
            #[default]
            None,
            $($(#[$doc])* $variant($ty),)*
        }

        impl OpOptions {
            /// The opcodes with typed options, in declaration order.
            pub const OPCODES: &'static [&'static str] = &[$($opcode),*];

            /// The TFLite opcode these options belong to; `None` for [`OpOptions::None`].
            pub fn opcode(&self) -> Option<&'static str> {
                match self {
                    OpOptions::None => None,
                    $(OpOptions::$variant(_) => Some($opcode),)*
                }
            }

            /// For generated code: `(kernel trait, kernel method, options type, value
            /// expression)`; `rt` is the path of the runtime module. `None` for
            /// [`OpOptions::None`].
            #[doc(hidden)]
            pub fn codegen<'a>(&'a self, rt: &'a str) -> Option<(&'static str, &'static str, &'static str, OptionsExpr<'a>)> {
                match self {
                    OpOptions::None => None,
                    $(OpOptions::$variant(o) => Some((
                        stringify!($variant),
                        stringify!($method),
                        stringify!($ty),
                        OptionsExpr { value: o, rt },
                    )),)*
                }
            }
        }

    };
}

crate::__op_kinds!(kinds);

/// Lists the op kinds that can run in place (the plan file's `in_place` entry of an op): the
/// `OpOptions` variant, the in-place kernel trait and its method.
macro_rules! in_place_kinds {
    ($($variant:ident => $trait:ident, $method:ident, $ty:ident, $opcode:literal, $missing:literal, $note:literal;)*) => {
        /// The kinds with an in-place kernel trait (checked against the op-kind table).
        #[cfg(test)]
        pub(crate) const IN_PLACE_OPCODES: &[&str] = &[$($opcode),*];

        impl OpOptions {
            /// For generated code: `(in-place kernel trait, its method)` of this op's kind;
            /// `None` for a kind that never runs in place.
            #[doc(hidden)]
            pub fn in_place_codegen(&self) -> Option<(&'static str, &'static str)> {
                match self {
                    $(OpOptions::$variant(_) => Some((stringify!($trait), stringify!($method))),)*
                    _ => None,
                }
            }
        }

    };
}

crate::__in_place_kinds!(in_place_kinds);

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn dims_hold_up_to_eight() {
        assert_eq!(Dims::new(&[1, -1, 3]).unwrap().as_slice(), &[1, -1, 3]);
        assert!(Dims::new(&[0; 9]).is_none());
        assert!(Dims::EMPTY.is_empty());
    }

    #[test]
    fn options_serialise_and_read_back() {
        let o = OpOptions::Conv2d(Conv2dOptions {
            padding: Padding::Valid,
            pads: Dims::EMPTY,
            stride_w: 2,
            stride_h: 1,
            dilation_w: 1,
            dilation_h: 1,
            activation: Activation::Relu6,
        });
        let text = serde_json::to_string(&o).unwrap();
        assert!(text.contains("\"kind\":\"conv2d\""), "{text}");
        assert!(text.contains("\"padding\":\"valid\""), "{text}");
        let m = MeanOptions {
            axes: Dims::new(&[1, 2]).unwrap(),
            keep_dims: true,
        };
        let text = serde_json::to_string(&OpOptions::Mean(m)).unwrap();
        assert!(text.contains("\"axes\":[1,2]"), "{text}");
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<MeanOptions>(&text).unwrap(), m);
        let err =
            serde_json::from_str::<MeanOptions>(r#"{"axes":[0,0,0,0,0,0,0,0,0],"keep_dims":true}"#)
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("a list of 9 integers where at most 8 fit"),
            "{err}"
        );
        assert_eq!(serde_json::from_str::<Dims>("[]").unwrap(), Dims::EMPTY);
        assert_eq!(
            serde_json::to_string(&OpOptions::None).unwrap(),
            r#"{"kind":"none"}"#
        );
    }

    #[test]
    fn codegen_names_trait_method_and_type() {
        let o = OpOptions::Softmax(SoftmaxOptions { beta: 1.0 });
        let (t, m, ty, v) = o.codegen("::planner::rt").unwrap();
        assert_eq!((t, m, ty), ("Softmax", "softmax", "SoftmaxOptions"));
        assert_eq!(
            v.to_string(),
            "::planner::rt::options::SoftmaxOptions { beta: f32::from_bits(0x3f800000u32) }"
        );
        let p = OpOptions::Mean(MeanOptions {
            axes: Dims::new(&[1, 2]).unwrap(),
            keep_dims: false,
        });
        assert_eq!(
            p.codegen("rt").unwrap().3.to_string(),
            "rt::options::MeanOptions { axes: match rt::options::Dims::new(&[1i32, 2i32]) \
             { Some(d) => d, None => rt::options::Dims::EMPTY }, keep_dims: false }"
        );
        let n = OpOptions::Quantize(NoOptions {});
        assert_eq!(
            n.codegen("rt").unwrap().3.to_string(),
            "rt::options::NoOptions {  }"
        );
        assert!(OpOptions::None.codegen("x").is_none());
        assert_eq!(OpOptions::OPCODES.len(), 66);
    }
}
