//! The op kinds of both kernel sets, in one table: every kind [`Reference`] runs, the
//! reference function that runs it, and, where [`Optimized`] has a fast path, the function
//! it calls instead (`fast ...`; it hands what it does not speed up to the reference
//! function itself). The macros below emit both sets' trait impls from each row, so the two
//! sets run exactly the same kinds, typed, in place and by builtin name: a kind added to the
//! table is added to both, and a model that compiles against one compiles against the other.

use planner_rt::kernel::OpView;
use planner_rt::options as o;

use crate::optimized::{self, Optimized};
use crate::reference::common::region;
use crate::reference::elementwise::compare::Cmp;
use crate::reference::elementwise::math::Float;
use crate::reference::{
    KernelError, Reference, activation, conv, detection, elementwise, index, pool, recurrent,
    reduce, shape, signal,
};

/// Implements kernel traits for both sets by calling the op's function (`Optimized`: its
/// `fast` function when the row names one), after refusing a region on any tensor but the
/// first `regions` inputs and output 0 (`[0]`: no region anywhere).
macro_rules! kinds {
    (@impl $set:ty, $kind:ident, $method:ident, $options:ty, $regions:literal, $f:expr) => {
        impl planner_rt::kernel::$kind for $set {
            fn $method(&mut self, op: OpView<'_, '_>, options: &$options) -> Result<(), KernelError> {
                region::only_on(&op, $regions)?;
                $f(op, options)
            }
        }
    };
    (@fast $f:expr) => { $f };
    (@fast $f:expr, $fast:expr) => { $fast };
    ($($kind:ident :: $method:ident ($options:ty) [$regions:literal] => $f:expr $(, fast $fast:expr)?;)*) => {
        $(
            kinds!(@impl Reference, $kind, $method, $options, $regions, $f);
            kinds!(@impl Optimized, $kind, $method, $options, $regions, kinds!(@fast $f $(, $fast)?));
        )*
    };
}

kinds! {
    Conv2d::conv_2d(o::Conv2dOptions) [1] => conv::conv_2d, fast optimized::conv::conv_2d;
    DepthwiseConv2d::depthwise_conv_2d(o::DepthwiseConv2dOptions) [1] => conv::depthwise_conv_2d, fast optimized::depthwise::depthwise_conv_2d;
    FullyConnected::fully_connected(o::FullyConnectedOptions) [0] => conv::fc::fully_connected, fast optimized::fc::fully_connected;
    AveragePool2d::average_pool_2d(o::Pool2dOptions) [1] => |op, o| pool::pool_2d(op, o, pool::Pool::Average);
    MaxPool2d::max_pool_2d(o::Pool2dOptions) [1] => |op, o| pool::pool_2d(op, o, pool::Pool::Max);
    Softmax::softmax(o::SoftmaxOptions) [0] => activation::softmax::softmax;
    Reshape::reshape(o::ReshapeOptions) [0] => shape::reshape;
    Pad::pad(o::PadOptions) [1] => shape::pad, fast optimized::pool::pad;
    Mean::mean(o::MeanOptions) [0] => reduce::mean::mean, fast optimized::pool::mean;
    Transpose::transpose(o::TransposeOptions) [0] => shape::transpose;
    Concatenation::concatenation(o::ConcatenationOptions) [0] => shape::concatenation;
    Svdf::svdf(o::SvdfOptions) [0] => recurrent::svdf::svdf, fast optimized::svdf::svdf;
    StridedSlice::strided_slice(o::StridedSliceOptions) [0] => shape::strided_slice;
    ResizeNearestNeighbor::resize_nearest_neighbor(o::ResizeNearestNeighborOptions) [0] => shape::resize_nearest_neighbor;
    DepthwiseConv2dInPlace::depthwise_conv_2d_in_place(o::DepthwiseConv2dOptions) [0] => conv::depthwise_conv_2d_in_place, fast optimized::depthwise::depthwise_conv_2d_in_place;
    Div::div(o::DivOptions) [0] => elementwise::arithmetic::div;
    LeakyRelu::leaky_relu(o::LeakyReluOptions) [0] => elementwise::arithmetic::leaky_relu;
    ArgMax::arg_max(o::ArgMaxOptions) [0] => reduce::axes::arg_max;
    Gather::gather(o::GatherOptions) [0] => index::gather::gather;
    Sum::sum(o::ReduceOptions) [0] => reduce::axes::sum;
    ReduceMax::reduce_max(o::ReduceOptions) [0] => reduce::axes::reduce_max;
    Squeeze::squeeze(o::SqueezeOptions) [0] => shape::slice::squeeze;
    ExpandDims::expand_dims(o::ExpandDimsOptions) [0] => shape::slice::expand_dims;
    Slice::slice(o::SliceOptions) [0] => shape::slice::slice;
    PadV2::padv2(o::PadOptions) [0] => shape::slice::padv2;
    Split::split(o::SplitOptions) [0] => shape::split::split;
    SplitV::split_v(o::SplitVOptions) [0] => shape::split::split_v;
    Pack::pack(o::PackOptions) [0] => shape::split::pack;
    Unpack::unpack(o::UnpackOptions) [0] => shape::split::unpack;
    ResizeBilinear::resize_bilinear(o::ResizeBilinearOptions) [0] => shape::resize::resize_bilinear;
    TransposeConv::transpose_conv(o::TransposeConvOptions) [0] => conv::transpose::transpose_conv;
    UnidirectionalSequenceLstm::unidirectional_sequence_lstm(o::UnidirectionalSequenceLstmOptions) [0] => recurrent::lstm::unidirectional_sequence_lstm, fast optimized::lstm::unidirectional_sequence_lstm;
    ArgMin::arg_min(o::ArgMaxOptions) [0] => reduce::axes::arg_min;
    BatchMatMul::batch_matmul(o::BatchMatMulOptions) [0] => conv::matmul::batch_matmul;
    Cumsum::cumsum(o::CumsumOptions) [0] => reduce::accumulate::cumsum;
    DepthToSpace::depth_to_space(o::BlockSizeOptions) [0] => shape::space::depth_to_space;
    SpaceToDepth::space_to_depth(o::BlockSizeOptions) [0] => shape::space::space_to_depth;
    L2Normalization::l2_normalization(o::L2NormOptions) [0] => reduce::accumulate::l2_normalization;
    L2Pool2d::l2_pool_2d(o::Pool2dOptions) [0] => reduce::accumulate::l2_pool_2d;
    MirrorPad::mirror_pad(o::MirrorPadOptions) [0] => shape::space::mirror_pad;
    ReduceMin::reduce_min(o::ReduceOptions) [0] => reduce::axes::reduce_min;
    ReduceAll::reduce_all(o::ReduceOptions) [0] => reduce::axes::reduce_all;
    SignalWindow::signal_window(o::SignalWindowOptions) [0] => signal::signal_window;
    SignalEnergy::signal_energy(o::SignalEnergyOptions) [0] => signal::signal_energy;
    SignalFilterBank::signal_filter_bank(o::SignalFilterBankOptions) [0] => signal::signal_filter_bank;
    SignalFilterBankSquareRoot::signal_filter_bank_square_root(o::NoOptions) [0] => signal::signal_filter_bank_square_root;
    SignalFilterBankLog::signal_filter_bank_log(o::SignalFilterBankLogOptions) [0] => signal::signal_filter_bank_log;
    SignalFilterBankSpectralSubtraction::signal_filter_bank_spectral_subtraction(o::SignalSpectralSubtractionOptions) [0] => signal::signal_filter_bank_spectral_subtraction;
    SignalPcan::signal_pcan(o::SignalPcanOptions) [0] => signal::signal_pcan;
    SignalDelay::signal_delay(o::SignalDelayOptions) [0] => signal::signal_delay;
    SignalFramer::signal_framer(o::SignalFramerOptions) [0] => signal::signal_framer;
    SignalStacker::signal_stacker(o::SignalStackerOptions) [0] => signal::signal_stacker;
    SignalOverlapAdd::signal_overlap_add(o::SignalOverlapAddOptions) [0] => signal::signal_overlap_add;
    SignalRfft::signal_rfft(o::SignalFftOptions) [0] => signal::signal_rfft;
    SignalIrfft::signal_irfft(o::SignalFftOptions) [0] => signal::signal_irfft;
    SignalFftAutoScale::signal_fft_auto_scale(o::NoOptions) [0] => signal::signal_fft_auto_scale;
    DetectionPostprocess::detection_postprocess(o::DetectionPostprocessOptions) [0] => detection::detection_postprocess_op;
}

/// Implements a kind and its in-place variant (regions only on the first `regions` inputs
/// of the first, none on the in-place one) for both sets by calling the same function, with
/// `false` and with `true` for "in place"; `=> unary f` calls `f(op, in_place)` (no
/// options), `=> binary f` calls `f(op, options, in_place)`; `fast g` gives `Optimized`'s.
macro_rules! kinds_in_place {
    (@call unary $f:path, $op:ident, $o:ident, $in_place:literal) => {{
        let _ = $o;
        $f($op, $in_place)
    }};
    (@call binary $f:path, $op:ident, $o:ident, $in_place:literal) => {
        $f($op, $o, $in_place)
    };
    ($($kind:ident / $in_place:ident :: $method:ident / $in_place_method:ident ($options:ty) [$regions:literal] => $arity:ident $f:path $(, fast $fast:path)?;)*) => {
        kinds! {
            $(
                $kind::$method($options) [$regions] => |op, o| kinds_in_place!(@call $arity $f, op, o, false)
                    $(, fast |op, o| kinds_in_place!(@call $arity $fast, op, o, false))?;
                $in_place::$in_place_method($options) [0] => |op, o| kinds_in_place!(@call $arity $f, op, o, true)
                    $(, fast |op, o| kinds_in_place!(@call $arity $fast, op, o, true))?;
            )*
        }
    };
}

kinds_in_place! {
    Add / AddInPlace::add / add_in_place(o::AddOptions) [2] => binary elementwise::add, fast optimized::elementwise::add;
    Sub / SubInPlace::sub / sub_in_place(o::AddOptions) [2] => binary elementwise::sub, fast optimized::elementwise::sub;
    Mul / MulInPlace::mul / mul_in_place(o::MulOptions) [2] => binary elementwise::mul, fast optimized::elementwise::mul;
    Quantize / QuantizeInPlace::quantize / quantize_in_place(o::NoOptions) [1] => unary elementwise::quantize, fast optimized::elementwise::quantize;
    Dequantize / DequantizeInPlace::dequantize / dequantize_in_place(o::NoOptions) [1] => unary elementwise::dequantize;
    Relu / ReluInPlace::relu / relu_in_place(o::NoOptions) [1] => unary activation::relu;
    Relu6 / Relu6InPlace::relu6 / relu6_in_place(o::NoOptions) [1] => unary activation::relu6;
    Logistic / LogisticInPlace::logistic / logistic_in_place(o::NoOptions) [1] => unary activation::logistic;
    Tanh / TanhInPlace::tanh / tanh_in_place(o::NoOptions) [1] => unary activation::tanh;
    HardSwish / HardSwishInPlace::hard_swish / hard_swish_in_place(o::NoOptions) [1] => unary activation::hard_swish;
}

/// Implements [`Builtin`](planner_rt::kernel::Builtin) for op kinds without typed options,
/// by their TFLite name, for both sets (`fast g`: `Optimized`'s function).
macro_rules! builtins {
    (@impl $set:ty, $name:literal, $f:expr) => {
        impl planner_rt::kernel::Builtin<{ planner_rt::kernel::op_key($name) }> for $set {
            fn builtin(&mut self, op: OpView<'_, '_>) -> Result<(), KernelError> {
                region::only_on(&op, 2)?;
                $f(op)
            }
        }
    };
    ($($name:literal => $f:expr $(, fast $fast:expr)?;)*) => {
        $(
            builtins!(@impl Reference, $name, $f);
            builtins!(@impl Optimized, $name, kinds!(@fast $f $(, $fast)?));
        )*

        /// The kinds both sets run through `Builtin` (checked against the op-kind table).
        #[cfg(test)]
        const BUILTINS: &[&str] = &[$($name),*];
    };
}

builtins! {
    "MAXIMUM" => |op| elementwise::min_max(op, true);
    "MINIMUM" => |op| elementwise::min_max(op, false);
    "SQUARED_DIFFERENCE" => elementwise::arithmetic::squared_difference;
    "PRELU" => elementwise::arithmetic::prelu;
    "LOG_SOFTMAX" => activation::log_softmax::log_softmax;
    "CAST" => elementwise::arithmetic::cast;
    "EQUAL" => |op| elementwise::compare::compare(op, Cmp::Equal);
    "NOT_EQUAL" => |op| elementwise::compare::compare(op, Cmp::NotEqual);
    "GREATER" => |op| elementwise::compare::compare(op, Cmp::Greater);
    "GREATER_EQUAL" => |op| elementwise::compare::compare(op, Cmp::GreaterEqual);
    "LESS" => |op| elementwise::compare::compare(op, Cmp::Less);
    "LESS_EQUAL" => |op| elementwise::compare::compare(op, Cmp::LessEqual);
    "LOGICAL_AND" => |op| elementwise::compare::logical(op, true);
    "LOGICAL_OR" => |op| elementwise::compare::logical(op, false);
    "LOGICAL_NOT" => elementwise::compare::logical_not;
    "SELECT_V2" => elementwise::compare::select_v2;
    "ABS" => elementwise::math::abs;
    "NEG" => |op| elementwise::math::float(op, Float::Neg);
    "FLOOR" => |op| elementwise::math::float(op, Float::Floor);
    "CEIL" => |op| elementwise::math::float(op, Float::Ceil);
    "ROUND" => |op| elementwise::math::float(op, Float::Round);
    "SQRT" => |op| elementwise::math::float(op, Float::Sqrt);
    "SQUARE" => |op| elementwise::math::float(op, Float::Square);
    "SIN" => |op| elementwise::math::float(op, Float::Sin);
    "COS" => |op| elementwise::math::float(op, Float::Cos);
    "LOG" => |op| elementwise::math::float(op, Float::Log);
    "EXP" => |op| elementwise::math::float(op, Float::Exp);
    "RSQRT" => elementwise::math::rsqrt;
    "ELU" => elementwise::math::elu;
    "FLOOR_DIV" => elementwise::math::floor_div;
    "FLOOR_MOD" => elementwise::math::floor_mod;
    "ADD_N" => reduce::accumulate::add_n;
    "BATCH_TO_SPACE_ND" => shape::space::batch_to_space_nd;
    "SPACE_TO_BATCH_ND" => shape::space::space_to_batch_nd;
    "REVERSE_V2" => shape::space::reverse_v2;
    "GATHER_ND" => index::lookup::gather_nd;
    "EMBEDDING_LOOKUP" => index::lookup::embedding_lookup;
    "DYNAMIC_UPDATE_SLICE" => index::lookup::dynamic_update_slice;
    "FILL" => index::lookup::fill;
    "ZEROS_LIKE" => index::lookup::zeros_like;
    "SHAPE" => index::lookup::shape;
    "BROADCAST_TO" => index::lookup::broadcast_to;
    "BROADCAST_ARGS" => index::lookup::broadcast_args;
}

/// `Optimized`'s int8 `CONV_2D`, `DEPTHWISE_CONV_2D` and `FULLY_CONNECTED` read an op's input
/// 3 as the `requant-v1` constants the planner prepares (`[kernels] set = "optimized"`),
/// instead of computing them per call, and a `CONV_2D`'s first scratch tensor as its im2col
/// rows (crate docs). `Reference` ignores input 3 and does not implement it, so a plan with
/// prepared ops does not compile with the reference kernels.
impl planner_rt::kernel::RequantV1 for Optimized {}

/// Both sets against the op-kind table ([`planner_rt::op_kinds::OP_KINDS`]): a row without a
/// kernel, or a kernel without a row, fails here (the typed and in-place ones at compile
/// time).
#[cfg(test)]
mod table {
    extern crate std;
    use std::collections::BTreeSet;

    use planner_rt::op_kinds::{InPlace, Kernels, OpKind};

    use super::BUILTINS;
    use crate::{Optimized, Reference};

    /// A function bounded by every typed kind's kernel trait.
    macro_rules! every_typed_kind {
        ($($(#[$doc:meta])* $variant:ident = $opcode:literal, $ty:ident, $method:ident, $missing:literal;)*) => {
            fn runs_every_typed_kind<K: $(planner_rt::kernel::$variant +)* Sized>() {}
        };
    }
    planner_rt::__op_kinds!(every_typed_kind);

    /// A function bounded by every in-place kernel trait.
    macro_rules! every_in_place_kind {
        ($($variant:ident => $trait:ident, $method:ident, $ty:ident, $opcode:literal, $missing:literal, $note:literal;)*) => {
            fn runs_every_in_place_kind<K: $(planner_rt::kernel::$trait +)* Sized>() {}
        };
    }
    planner_rt::__in_place_kinds!(every_in_place_kind);

    #[test]
    fn both_sets_run_every_typed_and_in_place_kind() {
        runs_every_typed_kind::<Reference>();
        runs_every_typed_kind::<Optimized>();
        runs_every_in_place_kind::<Reference>();
        runs_every_in_place_kind::<Optimized>();
        let in_place = OpKind::with(|k| k.kernels, Kernels::Typed)
            .filter(|k| k.in_place != InPlace::Never)
            .count();
        assert_eq!(in_place, 11);
    }

    #[test]
    fn builtin_rows_are_the_builtin_kernels() {
        let rows: BTreeSet<&str> = OpKind::with(|k| k.kernels, Kernels::Untyped)
            .map(|k| k.name)
            .collect();
        let kernels: BTreeSet<&str> = BUILTINS.iter().copied().collect();
        assert_eq!(
            kernels.len(),
            BUILTINS.len(),
            "a builtin kernel listed twice"
        );
        assert_eq!(rows, kernels);
    }
}
