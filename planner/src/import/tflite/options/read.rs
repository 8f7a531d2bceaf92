//! Reading one op's options: the union table its kind has, checked field by field, and
//! the constant operands that parameterise it.

use super::ctx::{Ctx, Fused, pool, reduce};
use super::more::plain;
use super::*;

/// A convolution's options table: its padding, and its stride and dilation along the width
/// and the height.
trait ConvTable<'b>: Fused<'b> {
    fn window(&self) -> (Option<i8>, [Option<i32>; 4]);
}

/// [`ConvTable`] for tables with those fields.
macro_rules! conv_table {
    ($($table:ident),*) => {
        $(impl<'b> ConvTable<'b> for $table<'b> {
            fn window(&self) -> (Option<i8>, [Option<i32>; 4]) {
                let w = [self.stride_w(), self.stride_h(), self.dilation_w(), self.dilation_h()];
                (self.padding(), w)
            }
        })*
    };
}

conv_table!(Conv2D, DepthwiseConv2D);

impl<'b> Reader<'_, 'b> {
    /// The typed options of op `k` (`op`, read from `table`); [`OpOptions::None`] for an op
    /// kind without typed options.
    pub(in crate::import::tflite) fn options(
        &self,
        k: usize,
        op: &Op,
        table: Operator<'b>,
        tensors: &[Tensor],
    ) -> Result<OpOptions> {
        let cx = Ctx {
            r: self,
            k,
            op,
            table,
            tensors,
        };
        Ok(match op.opcode.as_str() {
            "CONV_2D" => OpOptions::Conv2d(conv(&cx, cx.table::<Conv2D>()?)?),
            "DEPTHWISE_CONV_2D" => OpOptions::DepthwiseConv2d(depthwise(&cx)?),
            "FULLY_CONNECTED" => OpOptions::FullyConnected(fully_connected(&cx)?),
            "AVERAGE_POOL_2D" => OpOptions::AveragePool2d(pool(&cx)?),
            "MAX_POOL_2D" => OpOptions::MaxPool2d(pool(&cx)?),
            "ADD" => OpOptions::Add(cx.add(Add::pot_scale_int16)?),
            "SUB" => OpOptions::Sub(cx.add(Sub::pot_scale_int16)?),
            "MUL" => OpOptions::Mul(MulOptions {
                activation: cx.fused::<Mul>()?.1,
            }),
            "SOFTMAX" => OpOptions::Softmax(SoftmaxOptions {
                beta: cx.float("beta", Softmax::beta)?,
            }),
            "RESHAPE" => OpOptions::Reshape(reshape(&cx)?),
            "CONCATENATION" => {
                let t = cx.table::<Concatenation>()?;
                OpOptions::Concatenation(ConcatenationOptions {
                    axis: t.and_then(|t| t.axis()).unwrap_or(0),
                    activation: cx.activation(t.and_then(|t| t.activation()))?,
                })
            }
            "PAD" => OpOptions::Pad(pad(&cx)?),
            "MEAN" => OpOptions::Mean(MeanOptions {
                keep_dims: cx
                    .table::<Reducer>()?
                    .and_then(|t| t.keep_dims())
                    .unwrap_or(false),
                axes: cx.dims("axis", &cx.ints(1, "axes")?)?,
            }),
            "TRANSPOSE" => {
                cx.table::<TransposeT>()?;
                OpOptions::Transpose(TransposeOptions {
                    perm: cx.dims("perm", &cx.ints(1, "permutation")?)?,
                })
            }
            "STRIDED_SLICE" => OpOptions::StridedSlice(strided_slice(&cx)?),
            "SVDF" => {
                let t = cx.table::<Svdf>()?;
                OpOptions::Svdf(SvdfOptions {
                    rank: cx.positive("rank", t.and_then(|t| t.rank()), 0)?,
                    activation: cx.activation(t.and_then(|t| t.activation()))?,
                    asymmetric_quantize_inputs: t
                        .and_then(|t| t.asymmetric_quantize_inputs())
                        .unwrap_or(false),
                })
            }
            "UNIDIRECTIONAL_SEQUENCE_LSTM" => OpOptions::UnidirectionalSequenceLstm(lstm(&cx)?),
            "QUANTIZE" => OpOptions::Quantize(cx.none::<QuantizeT>()?),
            "DEQUANTIZE" => OpOptions::Dequantize(cx.none::<DequantizeT>()?),
            "HARD_SWISH" => OpOptions::HardSwish(cx.none::<HardSwishT>()?),
            "RESIZE_NEAREST_NEIGHBOR" => plain!(cx, ResizeNearest => ResizeNearestNeighbor(
                ResizeNearestNeighborOptions { align_corners, half_pixel_centers }
            )),
            "LOGISTIC" => OpOptions::Logistic(cx.no_table()?),
            "TANH" => OpOptions::Tanh(cx.no_table()?),
            "RELU" => OpOptions::Relu(cx.no_table()?),
            "RELU6" => OpOptions::Relu6(cx.no_table()?),
            code if code.starts_with("CUSTOM:Signal") => signal::options(&cx)?,
            "CUSTOM:TFLite_Detection_PostProcess" => signal::detection_postprocess(&cx)?,
            _ => kinds_of_batches(&cx)?,
        })
    }
}

/// The typed options of the kinds added with the kernel batches (DIV to TRANSPOSE_CONV);
/// [`OpOptions::None`] for an op kind without typed options.
fn kinds_of_batches(cx: &Ctx<'_, '_, '_>) -> Result<OpOptions> {
    Ok(match cx.op.opcode.as_str() {
        "DIV" => OpOptions::Div(DivOptions {
            activation: cx.fused::<DivT>()?.1,
        }),
        "LEAKY_RELU" => OpOptions::LeakyRelu(LeakyReluOptions {
            alpha: cx.float("alpha", LeakyReluT::alpha)?,
        }),
        "ARG_MAX" => OpOptions::ArgMax(arg_max(cx)?),
        "GATHER" => plain!(cx, GatherT => Gather(GatherOptions { axis, batch_dims })),
        "SUM" => OpOptions::Sum(reduce(cx)?),
        "REDUCE_MAX" => OpOptions::ReduceMax(reduce(cx)?),
        "SQUEEZE" => {
            let dims: Vec<i32> = cx
                .table::<SqueezeT>()?
                .and_then(|t| t.squeeze_dims())
                .map(|v: Vector<'_, i32>| v.iter().collect())
                .unwrap_or_default();
            OpOptions::Squeeze(SqueezeOptions {
                squeeze_dims: cx.dims("squeeze_dims", &dims)?,
            })
        }
        "EXPAND_DIMS" => {
            cx.table::<ExpandDimsT>()?;
            OpOptions::ExpandDims(ExpandDimsOptions {
                axis: cx.scalar(1, "axis")?,
            })
        }
        "SLICE" => {
            cx.table::<SliceT>()?;
            OpOptions::Slice(SliceOptions {
                begin: cx.dims("begin", &cx.ints(1, "begin")?)?,
                size: cx.dims("size", &cx.ints(2, "size")?)?,
            })
        }
        "PADV2" => OpOptions::PadV2(pad_with::<PadV2T>(cx)?),
        "SPLIT" => {
            let t = cx.table::<SplitT>()?;
            OpOptions::Split(SplitOptions {
                axis: axis_operand(cx, 0)?,
                num_splits: t.and_then(|t| t.num_splits()).unwrap_or(0),
            })
        }
        "SPLIT_V" => {
            let t = cx.table::<SplitVT>()?;
            OpOptions::SplitV(SplitVOptions {
                axis: axis_operand(cx, 2)?,
                num_splits: t.and_then(|t| t.num_splits()).unwrap_or(0),
            })
        }
        "PACK" => plain!(cx, PackT => Pack(PackOptions { axis, values_count })),
        "UNPACK" => plain!(cx, UnpackT => Unpack(UnpackOptions { axis, num })),
        "RESIZE_BILINEAR" => plain!(cx, ResizeBilinearT => ResizeBilinear(
            ResizeBilinearOptions { align_corners, half_pixel_centers }
        )),
        "TRANSPOSE_CONV" => {
            let t = cx.table::<TransposeConvT>()?;
            OpOptions::TransposeConv(TransposeConvOptions {
                padding: cx.padding(t.and_then(|t| t.padding()))?,
                stride_w: cx.positive("stride_w", t.and_then(|t| t.stride_w()), 0)?,
                stride_h: cx.positive("stride_h", t.and_then(|t| t.stride_h()), 0)?,
                activation: cx.activation(t.and_then(|t| t.activation()))?,
            })
        }
        _ => super::more::options(cx)?.unwrap_or(OpOptions::None),
    })
}

/// A convolution's window and activation from table `t` (`CONV_2D`'s options, and
/// `DEPTHWISE_CONV_2D`'s but its multiplier), checked in the schema's field order.
fn conv<'b, T: ConvTable<'b>>(cx: &Ctx<'_, '_, 'b>, t: Option<T>) -> Result<Conv2dOptions> {
    let (padding, [stride_w, stride_h, dilation_w, dilation_h]) =
        t.map_or((None, [None; 4]), |t| t.window());
    Ok(Conv2dOptions {
        padding: cx.padding(padding)?,
        pads: Dims::EMPTY,
        stride_w: cx.positive("stride_w", stride_w, 0)?,
        stride_h: cx.positive("stride_h", stride_h, 0)?,
        dilation_w: cx.positive("dilation_w_factor", dilation_w, 1)?,
        dilation_h: cx.positive("dilation_h_factor", dilation_h, 1)?,
        activation: cx.activation(t.and_then(|t| t.fused()))?,
    })
}

fn depthwise(cx: &Ctx<'_, '_, '_>) -> Result<DepthwiseConv2dOptions> {
    let t = cx.table::<DepthwiseConv2D>()?;
    let multiplier = t.and_then(|t| t.depth_multiplier()).unwrap_or(0);
    if multiplier < 0 {
        return Err(cx.r.corrupt(format_args!(
            "{} has depth_multiplier {multiplier}; it must not be negative",
            cx.what()
        )));
    }
    let c = conv(cx, t)?;
    Ok(DepthwiseConv2dOptions {
        padding: c.padding,
        pads: c.pads,
        stride_w: c.stride_w,
        stride_h: c.stride_h,
        depth_multiplier: multiplier,
        dilation_w: c.dilation_w,
        dilation_h: c.dilation_h,
        activation: c.activation,
    })
}

fn fully_connected(cx: &Ctx<'_, '_, '_>) -> Result<FullyConnectedOptions> {
    let t = cx.table::<FullyConnected>()?;
    let weights_format = match t.and_then(|t| t.weights_format()).unwrap_or(0) {
        0 => WeightsFormat::Default,
        1 => WeightsFormat::Shuffled4x16Int8,
        x => {
            return Err(cx.bad_enum("weights_format", x, "0 DEFAULT, 1 SHUFFLED4x16INT8"));
        }
    };
    Ok(FullyConnectedOptions {
        activation: cx.activation(t.and_then(|t| t.activation()))?,
        weights_format,
        keep_num_dims: t.and_then(|t| t.keep_num_dims()).unwrap_or(false),
        asymmetric_quantize_inputs: t
            .and_then(|t| t.asymmetric_quantize_inputs())
            .unwrap_or(false),
    })
}

fn reshape(cx: &Ctx<'_, '_, '_>) -> Result<ReshapeOptions> {
    let from_options: Vec<i32> = cx
        .table::<Reshape>()?
        .and_then(|t| t.new_shape())
        .map(|v: Vector<'_, i32>| v.iter().collect())
        .unwrap_or_default();
    let shape_input = cx
        .op
        .inputs
        .get(1)
        .copied()
        .flatten()
        .and_then(|t| cx.tensors.get(t.get()))
        .is_some_and(|t| t.data.is_some());
    let shape = if !from_options.is_empty() {
        from_options
    } else if shape_input {
        cx.ints(1, "shape")?
    } else {
        let out = cx.op.outputs.first().and_then(|t| cx.tensors.get(t.get()));
        out.map(|t| {
            t.shape
                .iter()
                .map(|&d| i32::try_from(d).unwrap_or(i32::MAX))
                .collect()
        })
        .unwrap_or_default()
    };
    Ok(ReshapeOptions {
        new_shape: cx.dims("new_shape", &shape)?,
    })
}

fn pad(cx: &Ctx<'_, '_, '_>) -> Result<PadOptions> {
    pad_with::<PadT>(cx)
}

/// The amounts of a `PAD` (options table `PadT`) or `PADV2` (`PadV2T`).
fn pad_with<'b, T: UnionMember<'b>>(cx: &Ctx<'_, '_, 'b>) -> Result<PadOptions> {
    cx.table::<T>()?;
    let v = cx.ints(1, "paddings")?;
    if v.len() % 2 != 0 {
        return Err(cx.r.corrupt(format_args!(
            "{} has {} padding values; expected two per dimension",
            cx.what(),
            v.len()
        )));
    }
    if let Some(&x) = v.iter().find(|&&x| x < 0) {
        return Err(cx.r.corrupt(format_args!(
            "{} has a negative padding {x}; pads are at least 0",
            cx.what()
        )));
    }
    let before: Vec<i32> = v.iter().step_by(2).copied().collect();
    let after: Vec<i32> = v.iter().skip(1).step_by(2).copied().collect();
    Ok(PadOptions {
        before: cx.dims("paddings", &before)?,
        after: cx.dims("paddings", &after)?,
    })
}

fn strided_slice(cx: &Ctx<'_, '_, '_>) -> Result<StridedSliceOptions> {
    let t = cx.table::<StridedSlice>()?;
    Ok(StridedSliceOptions {
        begin_mask: t.and_then(|t| t.begin_mask()).unwrap_or(0),
        end_mask: t.and_then(|t| t.end_mask()).unwrap_or(0),
        ellipsis_mask: t.and_then(|t| t.ellipsis_mask()).unwrap_or(0),
        new_axis_mask: t.and_then(|t| t.new_axis_mask()).unwrap_or(0),
        shrink_axis_mask: t.and_then(|t| t.shrink_axis_mask()).unwrap_or(0),
        offset: t.and_then(|t| t.offset()).unwrap_or(false),
        begin: cx.dims("begin", &cx.ints(1, "begin")?)?,
        end: cx.dims("end", &cx.ints(2, "end")?)?,
        strides: cx.dims("strides", &cx.ints(3, "strides")?)?,
    })
}

fn lstm(cx: &Ctx<'_, '_, '_>) -> Result<UnidirectionalSequenceLstmOptions> {
    const OPTS: &str = "UnidirectionalSequenceLSTMOptions";
    let t = cx.table::<SequenceLstm>()?;
    let flag = |v: Option<bool>| v.unwrap_or(false);
    Ok(UnidirectionalSequenceLstmOptions {
        activation: cx.activation(t.and_then(|t| t.activation()))?,
        cell_clip: cx.finite(OPTS, "cell_clip", t.and_then(|t| t.cell_clip()), 0.0)?,
        proj_clip: cx.finite(OPTS, "proj_clip", t.and_then(|t| t.proj_clip()), 0.0)?,
        time_major: flag(t.and_then(|t| t.time_major())),
        asymmetric_quantize_inputs: flag(t.and_then(|t| t.asymmetric_quantize_inputs())),
        diagonal_recurrent_tensors: flag(t.and_then(|t| t.diagonal_recurrent_tensors())),
    })
}

/// `ARG_MAX`: the constant `axis` operand (one value), and an `output_type` of int32 (2)
/// or int64 (4), the output tensor's type.
fn arg_max(cx: &Ctx<'_, '_, '_>) -> Result<ArgMaxOptions> {
    let t = cx.table::<ArgMaxT>()?;
    cx.output_type(t.and_then(|t| t.output_type()))?;
    Ok(ArgMaxOptions {
        axis: cx.scalar(1, "axis")?,
    })
}

/// The axis of a `SPLIT` or `SPLIT_V`: constant input `j`, exactly one value.
fn axis_operand(cx: &Ctx<'_, '_, '_>, j: usize) -> Result<i32> {
    match cx.ints(j, "axis")?.as_slice() {
        [axis] => Ok(*axis),
        v => Err(cx.r.corrupt(format_args!(
            "{} has {} axis values; expected exactly one",
            cx.what(),
            v.len()
        ))),
    }
}
