//! Operator options: the `Operator.builtin_options` union and the constant operands that
//! parameterise an op, read into [`OpOptions`].
//!
//! The union is verified with the rest of the file: [`verify_builtin_options`] checks the
//! value as the table its type key names, for every type listed here; a value of any other
//! type is left unverified and never read. [`Reader::options`] then reads, for each op kind
//! of [`OpOptions`], the one options type that kind has: another type is an error naming the
//! op and both types, an enum value outside the schema an error naming the field, and a
//! stride, dilation or window below 1 an error too. An op of a kind outside the list keeps
//! [`OpOptions::None`] and is still planned.
//!
//! | union type (key) | fields read (id) |
//! |---|---|
//! | `Conv2DOptions` (1) | padding (0), stride_w (1), stride_h (2), fused_activation_function (3), dilation_w_factor (4), dilation_h_factor (5) |
//! | `DepthwiseConv2DOptions` (2) | padding (0), stride_w (1), stride_h (2), depth_multiplier (3), fused_activation_function (4), dilation_w_factor (5), dilation_h_factor (6) |
//! | `Pool2DOptions` (5) | padding (0), stride_w (1), stride_h (2), filter_width (3), filter_height (4), fused_activation_function (5) |
//! | `SVDFOptions` (6) | rank (0), fused_activation_function (1), asymmetric_quantize_inputs (2) |
//! | `FullyConnectedOptions` (8) | fused_activation_function (0), weights_format (1), keep_num_dims (2), asymmetric_quantize_inputs (3) |
//! | `SoftmaxOptions` (9) | beta (0) |
//! | `ConcatenationOptions` (10) | axis (0), fused_activation_function (1) |
//! | `AddOptions` (11), `SubOptions` (28) | fused_activation_function (0), pot_scale_int16 (1) |
//! | `ReshapeOptions` (17) | new_shape (0) |
//! | `MulOptions` (21) | fused_activation_function (0) |
//! | `ReducerOptions` (27) | keep_dims (0) |
//! | `StridedSliceOptions` (32) | begin_mask (0) .. shrink_axis_mask (4), offset (5) |
//! | `UnidirectionalSequenceLSTMOptions` (71) | fused_activation_function (0), cell_clip (1), proj_clip (2), time_major (3), asymmetric_quantize_inputs (4), diagonal_recurrent_tensors (5) |
//! | `ResizeNearestNeighborOptions` (74) | align_corners (0), half_pixel_centers (1) |
//! | `SplitOptions` (35), `SplitVOptions` (79) | num_splits (0) |
//! | `PackOptions` (59) | values_count (0), axis (1) |
//! | `UnpackOptions` (64) | num (0), axis (1) |
//! | `ResizeBilinearOptions` (15) | align_corners (2), half_pixel_centers (3) |
//! | `TransposeConvOptions` (49) | padding (0), stride_w (1), stride_h (2), fused_activation_function (3) |
//! | `PadOptions` (22), `TransposeOptions` (26), `DequantizeOptions` (38), `QuantizeOptions` (89), `HardSwishOptions` (91) | none |
//! | `DivOptions` (29) | fused_activation_function (0) |
//! | `LeakyReluOptions` (75) | alpha (0) |
//! | `GatherOptions` (23) | axis (0), batch_dims (1) |
//! | `ArgMaxOptions` (40) | output_type (0): int32 or int64 |
//! | `SqueezeOptions` (30) | squeeze_dims (0) |
//! | `ExpandDimsOptions` (52), `SliceOptions` (48), `PadV2Options` (43) | none |
//! | `ArgMinOptions` (57) | output_type (0): int32 or int64 |
//! | `BatchMatMulOptions` (101) | adj_x (0), adj_y (1), asymmetric_quantize_inputs (2) |
//! | `CumsumOptions` (102) | exclusive (0), reverse (1) |
//! | `DepthToSpaceOptions` (94), `SpaceToDepthOptions` (19) | block_size (0), at least 1 |
//! | `L2NormOptions` (12) | fused_activation_function (0) |
//! | `MirrorPadOptions` (77) | mode (0): 0 REFLECT, 1 SYMMETRIC |
//!
//! Constant operands: `RESHAPE` input 1 (when the options have no shape; else the output's
//! shape), `PAD` input 1 (`[rank, 2]`), `MEAN` input 1, `TRANSPOSE` input 1,
//! `STRIDED_SLICE` inputs 1 to 3, `SPLIT` input 0 and `SPLIT_V` input 2 (the axis, one
//! value); int32 or int64. A `PAD`, `MEAN`, `TRANSPOSE`, `STRIDED_SLICE`, `SPLIT` or
//! `SPLIT_V` whose operand is not constant is an error: its kernel needs the values before
//! run time.
//!
//! Batch 1: `SUM` and `REDUCE_MAX` input 1 (axes, with `ReducerOptions`), `ARG_MAX` and
//! `EXPAND_DIMS` input 1 (one value), `SLICE` inputs 1 and 2 (begin, size), `PADV2` input 1
//! (paddings, as `PAD`'s; its pad value, input 2, is read by the kernel); constant too.
//!
//! Issue 39: `ARG_MIN` input 1 (one value, as `ARG_MAX`), `REDUCE_MIN` and `REDUCE_ALL` input
//! 1 (axes, with `ReducerOptions`), constant; `L2_POOL_2D` reads `Pool2DOptions`. `CUMSUM`'s
//! axis and `MIRROR_PAD`'s amounts are left to the kernel, which reads them when the op runs
//! (as TFLM does), constant or not; so are the operands of the new kinds without typed options.

use std::string::{String, ToString};
use std::vec::Vec;

use flatbuffers::{
    Follow, ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Vector, Verifiable, Verifier,
};

use super::{Operator, Reader, Scalars, field_offset};
use crate::error::Result;
use crate::graph::{DType, Op, Tensor};
use crate::rt::options::{
    Activation, AddOptions, ArgMaxOptions, ConcatenationOptions, Conv2dOptions,
    DepthwiseConv2dOptions, Dims, DivOptions, ExpandDimsOptions, FullyConnectedOptions,
    GatherOptions, LeakyReluOptions, MeanOptions, MulOptions, NoOptions, OpOptions, PadOptions,
    Padding, Pool2dOptions, ReduceOptions, ReshapeOptions, ResizeNearestNeighborOptions,
    SliceOptions, SoftmaxOptions, SqueezeOptions, StridedSliceOptions, SvdfOptions,
    TransposeOptions, UnidirectionalSequenceLstmOptions, WeightsFormat,
};
use crate::rt::options::{
    PackOptions, ResizeBilinearOptions, SplitOptions, SplitVOptions, TransposeConvOptions,
    UnpackOptions,
};

/// A table type that is a member of the `BuiltinOptions` union: its key and name.
pub(super) trait UnionMember<'a>: Follow<'a, Inner = Self> + Verifiable + 'a {
    /// The union's type key for this table.
    const KEY: u8;
    /// The schema's name of the table.
    const NAME: &'static str;
}

/// Declares the union members: each table's [`UnionMember`] key, and the verifier of the
/// union's value, which checks it as the table its key names. Both come from one list, which
/// is what makes [`Operator::builtin_options`] sound.
macro_rules! members {
    ($($key:literal $ty:ident = $name:literal,)*) => {
        $(
            impl<'a> UnionMember<'a> for $ty<'a> {
                const KEY: u8 = $key;
                const NAME: &'static str = $name;
            }
        )*

        /// Verifies the union value at `pos` (the position of its offset) as the table key
        /// `key` names; other keys are not verified (and never read).
        pub(super) fn verify_builtin_options(
            key: u8,
            v: &mut Verifier<'_, '_>,
            pos: usize,
        ) -> core::result::Result<(), InvalidFlatbuffer> {
            match key {
                $($key => v.verify_union_variant::<ForwardsUOffset<$ty<'_>>>($name, pos),)*
                _ => Ok(()),
            }
        }

        /// The schema's name of union type `key`, for errors.
        fn member_name(key: u8) -> Option<&'static str> {
            match key {
                $($key => Some($name),)*
                _ => None,
            }
        }
    };
}

table! {
    /// `Conv2DOptions`.
    Conv2D<'a> {
        0 padding: i8,
        1 stride_w: i32,
        2 stride_h: i32,
        3 activation: i8,
        4 dilation_w: i32,
        5 dilation_h: i32,
    }
}

table! {
    /// `DepthwiseConv2DOptions`.
    DepthwiseConv2D<'a> {
        0 padding: i8,
        1 stride_w: i32,
        2 stride_h: i32,
        3 depth_multiplier: i32,
        4 activation: i8,
        5 dilation_w: i32,
        6 dilation_h: i32,
    }
}

table! {
    /// `Pool2DOptions`.
    Pool2D<'a> {
        0 padding: i8,
        1 stride_w: i32,
        2 stride_h: i32,
        3 filter_w: i32,
        4 filter_h: i32,
        5 activation: i8,
    }
}

table! {
    /// `SVDFOptions`.
    Svdf<'a> {
        0 rank: i32,
        1 activation: i8,
        2 asymmetric_quantize_inputs: bool,
    }
}

table! {
    /// `FullyConnectedOptions`.
    FullyConnected<'a> {
        0 activation: i8,
        1 weights_format: i8,
        2 keep_num_dims: bool,
        3 asymmetric_quantize_inputs: bool,
    }
}

table! {
    /// `SoftmaxOptions`.
    Softmax<'a> {
        0 beta: f32,
    }
}

table! {
    /// `ConcatenationOptions`.
    Concatenation<'a> {
        0 axis: i32,
        1 activation: i8,
    }
}

table! {
    /// `AddOptions` (and `SubOptions`, which has the same fields).
    Add<'a> {
        0 activation: i8,
        1 pot_scale_int16: bool,
    }
}

table! {
    /// `SubOptions`.
    Sub<'a> {
        0 activation: i8,
        1 pot_scale_int16: bool,
    }
}

table! {
    /// `ReshapeOptions`.
    Reshape<'a> {
        0 new_shape: Scalars<'a, i32>,
    }
}

table! {
    /// `MulOptions`.
    Mul<'a> {
        0 activation: i8,
    }
}

table! {
    /// `ReducerOptions`.
    Reducer<'a> {
        0 keep_dims: bool,
    }
}

table! {
    /// `StridedSliceOptions`.
    StridedSlice<'a> {
        0 begin_mask: i32,
        1 end_mask: i32,
        2 ellipsis_mask: i32,
        3 new_axis_mask: i32,
        4 shrink_axis_mask: i32,
        5 offset: bool,
    }
}

table! {
    /// `UnidirectionalSequenceLSTMOptions`.
    SequenceLstm<'a> {
        0 activation: i8,
        1 cell_clip: f32,
        2 proj_clip: f32,
        3 time_major: bool,
        4 asymmetric_quantize_inputs: bool,
        5 diagonal_recurrent_tensors: bool,
    }
}

table! {
    /// `ResizeNearestNeighborOptions`.
    ResizeNearest<'a> {
        0 align_corners: bool,
        1 half_pixel_centers: bool,
    }
}

table! {
    /// `SplitOptions`.
    SplitT<'a> {
        0 num_splits: i32,
    }
}

table! {
    /// `SplitVOptions`.
    SplitVT<'a> {
        0 num_splits: i32,
    }
}

table! {
    /// `PackOptions`.
    PackT<'a> {
        0 values_count: i32,
        1 axis: i32,
    }
}

table! {
    /// `UnpackOptions`.
    UnpackT<'a> {
        0 num: i32,
        1 axis: i32,
    }
}

table! {
    /// `ResizeBilinearOptions`.
    ResizeBilinearT<'a> {
        2 align_corners: bool,
        3 half_pixel_centers: bool,
    }
}

table! {
    /// `TransposeConvOptions`.
    TransposeConvT<'a> {
        0 padding: i8,
        1 stride_w: i32,
        2 stride_h: i32,
        3 activation: i8,
    }
}

table! {
    /// `PadOptions`.
    PadT<'a> {}
}
table! {
    /// `TransposeOptions`.
    TransposeT<'a> {}
}
table! {
    /// `DequantizeOptions`.
    DequantizeT<'a> {}
}
table! {
    /// `QuantizeOptions`.
    QuantizeT<'a> {}
}
table! {
    /// `HardSwishOptions`.
    HardSwishT<'a> {}
}

table! {
    /// `DivOptions`.
    DivT<'a> {
        0 activation: i8,
    }
}

table! {
    /// `LeakyReluOptions`.
    LeakyReluT<'a> {
        0 alpha: f32,
    }
}

table! {
    /// `GatherOptions`.
    GatherT<'a> {
        0 axis: i32,
        1 batch_dims: i32,
    }
}

table! {
    /// `ArgMaxOptions`.
    ArgMaxT<'a> {
        0 output_type: i8,
    }
}

table! {
    /// `SqueezeOptions`.
    SqueezeT<'a> {
        0 squeeze_dims: Scalars<'a, i32>,
    }
}

table! {
    /// `ExpandDimsOptions`.
    ExpandDimsT<'a> {}
}
table! {
    /// `SliceOptions`.
    SliceT<'a> {}
}
table! {
    /// `PadV2Options`.
    PadV2T<'a> {}
}

table! {
    /// `ArgMinOptions`.
    ArgMinT<'a> {
        0 output_type: i8,
    }
}

table! {
    /// `BatchMatMulOptions`.
    BatchMatMulT<'a> {
        0 adj_x: bool,
        1 adj_y: bool,
        2 asymmetric_quantize_inputs: bool,
    }
}

table! {
    /// `CumsumOptions`.
    CumsumT<'a> {
        0 exclusive: bool,
        1 reverse: bool,
    }
}

table! {
    /// `DepthToSpaceOptions`.
    DepthToSpaceT<'a> {
        0 block_size: i32,
    }
}

table! {
    /// `SpaceToDepthOptions`.
    SpaceToDepthT<'a> {
        0 block_size: i32,
    }
}

table! {
    /// `L2NormOptions`.
    L2NormT<'a> {
        0 activation: i8,
    }
}

table! {
    /// `MirrorPadOptions`.
    MirrorPadT<'a> {
        0 mode: i8,
    }
}

members! {
    1 Conv2D = "Conv2DOptions",
    2 DepthwiseConv2D = "DepthwiseConv2DOptions",
    5 Pool2D = "Pool2DOptions",
    6 Svdf = "SVDFOptions",
    8 FullyConnected = "FullyConnectedOptions",
    9 Softmax = "SoftmaxOptions",
    10 Concatenation = "ConcatenationOptions",
    11 Add = "AddOptions",
    17 Reshape = "ReshapeOptions",
    21 Mul = "MulOptions",
    22 PadT = "PadOptions",
    26 TransposeT = "TransposeOptions",
    27 Reducer = "ReducerOptions",
    28 Sub = "SubOptions",
    32 StridedSlice = "StridedSliceOptions",
    38 DequantizeT = "DequantizeOptions",
    71 SequenceLstm = "UnidirectionalSequenceLSTMOptions",
    74 ResizeNearest = "ResizeNearestNeighborOptions",
    89 QuantizeT = "QuantizeOptions",
    91 HardSwishT = "HardSwishOptions",
    29 DivT = "DivOptions",
    75 LeakyReluT = "LeakyReluOptions",
    23 GatherT = "GatherOptions",
    40 ArgMaxT = "ArgMaxOptions",
    30 SqueezeT = "SqueezeOptions",
    52 ExpandDimsT = "ExpandDimsOptions",
    48 SliceT = "SliceOptions",
    43 PadV2T = "PadV2Options",
    35 SplitT = "SplitOptions",
    79 SplitVT = "SplitVOptions",
    59 PackT = "PackOptions",
    64 UnpackT = "UnpackOptions",
    15 ResizeBilinearT = "ResizeBilinearOptions",
    49 TransposeConvT = "TransposeConvOptions",
    57 ArgMinT = "ArgMinOptions",
    101 BatchMatMulT = "BatchMatMulOptions",
    102 CumsumT = "CumsumOptions",
    94 DepthToSpaceT = "DepthToSpaceOptions",
    19 SpaceToDepthT = "SpaceToDepthOptions",
    12 L2NormT = "L2NormOptions",
    77 MirrorPadT = "MirrorPadOptions",
    92 IfT = "IfOptions",
    93 WhileT = "WhileOptions",
    103 CallOnceT = "CallOnceOptions",
    111 VarHandleT = "VarHandleOptions",
}

table! {
    /// `IfOptions`.
    IfT<'a> {
        0 then_subgraph_index: i32,
        1 else_subgraph_index: i32,
    }
}

table! {
    /// `WhileOptions`.
    WhileT<'a> {
        0 cond_subgraph_index: i32,
        1 body_subgraph_index: i32,
    }
}

table! {
    /// `CallOnceOptions`.
    CallOnceT<'a> {
        0 init_subgraph_index: i32,
    }
}

table! {
    /// `VarHandleOptions`.
    VarHandleT<'a> {
        0 container: super::Str<'a>,
        1 shared_name: super::Str<'a>,
    }
}

/// What the options of an op that runs subgraphs, or names a resource variable, say
/// (read by the `control` module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Linked {
    /// `IF`: the subgraphs of its two branches.
    If { then: i32, otherwise: i32 },
    /// `WHILE`: its condition and body subgraphs.
    While { cond: i32, body: i32 },
    /// `CALL_ONCE`: its initialisation subgraph.
    Once { init: i32 },
    /// `VAR_HANDLE`: the variable's container and shared name.
    Variable { container: String, name: String },
}

impl<'a> Operator<'a> {
    /// The options of an `IF`, `WHILE`, `CALL_ONCE` or `VAR_HANDLE` op (`opcode`); `None`
    /// when the op has no options table of its kind (a subgraph index then reads as 0 in
    /// the schema, which the caller refuses as the caller's own subgraph or a loop).
    pub(super) fn linked(&self, opcode: &str) -> Option<Linked> {
        Some(match opcode {
            "IF" => {
                let t = self.builtin_options::<IfT<'a>>()?;
                Linked::If {
                    then: t.then_subgraph_index().unwrap_or(0),
                    otherwise: t.else_subgraph_index().unwrap_or(0),
                }
            }
            "WHILE" => {
                let t = self.builtin_options::<WhileT<'a>>()?;
                Linked::While {
                    cond: t.cond_subgraph_index().unwrap_or(0),
                    body: t.body_subgraph_index().unwrap_or(0),
                }
            }
            "CALL_ONCE" => Linked::Once {
                init: self
                    .builtin_options::<CallOnceT<'a>>()?
                    .init_subgraph_index()
                    .unwrap_or(0),
            },
            "VAR_HANDLE" => {
                let t = self.builtin_options::<VarHandleT<'a>>();
                let text = |s: Option<&str>| s.unwrap_or_default().to_string();
                Linked::Variable {
                    container: text(t.and_then(|t| t.container())),
                    name: text(t.and_then(|t| t.shared_name())),
                }
            }
            _ => return None,
        })
    }
}

impl<'a> Operator<'a> {
    /// The options table as `T`, when the union holds a `T`.
    fn builtin_options<T: UnionMember<'a>>(&self) -> Option<T> {
        if self.builtin_options_type() != Some(T::KEY) {
            return None;
        }
        // SAFETY: the root passed the verifier, whose `Operator` verifier ran
        // `verify_builtin_options` on this field with this key, which verified the value as
        // `ForwardsUOffset<T>` (the `members!` list maps `T::KEY` to `T` and nothing else).
        unsafe { self.0.get::<ForwardsUOffset<T>>(field_offset(4), None) }
    }
}

mod ctx;
mod more;
mod read;
mod signal;
