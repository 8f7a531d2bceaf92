//! Reading one op's options: the union table its kind has, checked field by field, and
//! the constant operands that parameterise it.

use super::*;

/// An options table with a `fused_activation_function` field.
trait Fused<'b>: UnionMember<'b> + Copy {
    fn fused(&self) -> Option<i8>;
}

/// [`Fused`] for tables whose field is named `activation`.
macro_rules! fused {
    ($($table:ident),*) => {
        $(impl<'b> Fused<'b> for $table<'b> {
            fn fused(&self) -> Option<i8> {
                self.activation()
            }
        })*
    };
}

fused!(Add, Sub, Mul, DivT, Conv2D, DepthwiseConv2D);

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

/// What one op's options read needs: the op, its table, the graph's tensors.
pub(super) struct Ctx<'r, 'p, 'b> {
    pub(super) r: &'r Reader<'p, 'b>,
    k: usize,
    pub(super) op: &'r Op,
    table: Operator<'b>,
    tensors: &'r [Tensor],
}

impl<'b> Ctx<'_, '_, 'b> {
    fn what(&self) -> String {
        format!("op {} ({})", self.k, self.op.opcode)
    }

    /// The options as `T`: `None` when the op has no options table (all fields take their
    /// schema defaults), an error when it has a table of another type.
    pub(super) fn table<T: UnionMember<'b>>(&self) -> Result<Option<T>> {
        let key = self.table.builtin_options_type().unwrap_or(0);
        if key == 0 {
            return Ok(None);
        }
        if key != T::KEY {
            let name = member_name(key).map_or_else(|| "unknown".to_string(), str::to_string);
            return Err(self.r.corrupt(format_args!(
                "{} has builtin options of type {key} ({name}), but a {} op has {} ({})",
                self.what(),
                self.op.opcode,
                T::NAME,
                T::KEY
            )));
        }
        match self.table.builtin_options::<T>() {
            Some(t) => Ok(Some(t)),
            None => Err(self.r.corrupt(format_args!(
                "{} names builtin options type {} but has no options table",
                self.what(),
                T::NAME
            ))),
        }
    }

    /// No options table, or an empty one of type `T`.
    fn none<T: UnionMember<'b>>(&self) -> Result<NoOptions> {
        self.table::<T>().map(|_| NoOptions {})
    }

    /// An op kind whose schema has no options table: any options type is an error.
    fn no_table(&self) -> Result<NoOptions> {
        match self.table.builtin_options_type().unwrap_or(0) {
            0 => Ok(NoOptions {}),
            key => {
                let name = member_name(key).unwrap_or("unknown");
                Err(self.r.corrupt(format_args!(
                    "{} has builtin options of type {key} ({name}), but a {} op has no options",
                    self.what(),
                    self.op.opcode
                )))
            }
        }
    }

    pub(super) fn bad_enum(&self, field: &str, value: i8, allowed: &str) -> crate::Error {
        self.r.corrupt(format_args!(
            "{} has {field} {value}, which the TFLite schema does not define (allowed: {allowed})",
            self.what()
        ))
    }

    fn padding(&self, v: Option<i8>) -> Result<Padding> {
        match v.unwrap_or(0) {
            0 => Ok(Padding::Same),
            1 => Ok(Padding::Valid),
            x => Err(self.bad_enum("padding", x, "0 SAME, 1 VALID")),
        }
    }

    pub(super) fn activation(&self, v: Option<i8>) -> Result<Activation> {
        Ok(match v.unwrap_or(0) {
            0 => Activation::None,
            1 => Activation::Relu,
            2 => Activation::ReluN1To1,
            3 => Activation::Relu6,
            4 => Activation::Tanh,
            5 => Activation::SignBit,
            x => {
                return Err(self.bad_enum(
                    "fused_activation_function",
                    x,
                    "0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH, 5 SIGN_BIT",
                ));
            }
        })
    }

    /// The options table `T` (if any) and its fused activation, checked.
    fn fused<T: Fused<'b>>(&self) -> Result<(Option<T>, Activation)> {
        let t = self.table::<T>()?;
        Ok((t, self.activation(t.and_then(|t| t.fused()))?))
    }

    /// `ADD`'s or `SUB`'s options from table `T`, whose `pot_scale_int16` is read by
    /// `pot_scale`.
    fn add<T: Fused<'b>>(&self, pot_scale: fn(&T) -> Option<bool>) -> Result<AddOptions> {
        let (t, activation) = self.fused::<T>()?;
        Ok(AddOptions {
            activation,
            pot_scale_int16: t.and_then(|t| pot_scale(&t)).unwrap_or(true),
        })
    }

    /// The float option of table `T` that `get` reads (`field`, 0.0 when left out), finite.
    fn float<T: UnionMember<'b>>(&self, field: &str, get: fn(&T) -> Option<f32>) -> Result<f32> {
        let v = self.table::<T>()?.and_then(|t| get(&t));
        self.finite(T::NAME, field, v, 0.0)
    }

    /// An `ARG_MAX` or `ARG_MIN` `output_type`: int32 (2) or int64 (4), when stated.
    pub(super) fn output_type(&self, v: Option<i8>) -> Result<()> {
        match v {
            None | Some(2 | 4) => Ok(()),
            Some(x) => Err(self.bad_enum("output_type", x, "2 INT32, 4 INT64")),
        }
    }

    /// A stride, dilation or window size: at least 1.
    pub(super) fn positive(&self, field: &str, v: Option<i32>, default: i32) -> Result<i32> {
        let v = v.unwrap_or(default);
        if v < 1 {
            return Err(self.r.corrupt(format_args!(
                "{} has {field} {v}; it must be at least 1",
                self.what()
            )));
        }
        Ok(v)
    }

    /// A float option (`field` of options table `table`): finite, or an error. TFLM gives a
    /// NaN or infinite `beta`, `cell_clip` or `proj_clip` no meaning (the int8 kernels turn
    /// them into fixed-point multipliers and clip bounds, where they overflow), and neither
    /// the plan file (JSON) nor the generated `f32` constants can carry one.
    fn finite(&self, table: &str, field: &str, v: Option<f32>, default: f32) -> Result<f32> {
        let v = v.unwrap_or(default);
        if !v.is_finite() {
            return Err(self.r.err(
                format_args!(
                    "{} has {table}.{field} = {v}, which is not a finite number",
                    self.what()
                ),
                &format!(
                    "set {field} to a finite value ({}) and export the model again",
                    match field {
                        "beta" => "the converter writes 1.0",
                        "alpha" => "the slope below zero, such as 0.2",
                        _ => "0.0 means no clipping",
                    }
                ),
            ));
        }
        Ok(v)
    }

    /// The integers of constant input `j` (`what` names it), int32 or int64.
    fn ints(&self, j: usize, what: &str) -> Result<Vec<i32>> {
        let t = self
            .op
            .inputs
            .get(j)
            .copied()
            .flatten()
            .and_then(|t| self.tensors.get(t.get()));
        let Some(t) = t else {
            return Err(self
                .r
                .corrupt(format_args!("{} has no input {j} ({what})", self.what())));
        };
        let Some(data) = t.data.as_deref() else {
            return Err(self.r.err(
                format_args!(
                    "{} takes its {what} from tensor `{}`, which is not constant; kernels need it before run time",
                    self.what(),
                    t.name
                ),
                "fold the computation of the operand into a constant when converting the model",
            ));
        };
        let out: Option<Vec<i32>> = match t.dtype {
            DType::I32 => data
                .chunks_exact(4)
                .map(|c| c.try_into().ok().map(i32::from_le_bytes))
                .collect(),
            DType::I64 => data
                .chunks_exact(8)
                .map(|c| {
                    let v = i64::from_le_bytes(c.try_into().ok()?);
                    i32::try_from(v).ok()
                })
                .collect(),
            _ => None,
        };
        out.ok_or_else(|| {
            self.r.corrupt(format_args!(
                "{} takes its {what} from tensor `{}` of type {}; expected int32 or int64 values that fit 32 bits",
                self.what(),
                t.name,
                t.dtype.name()
            ))
        })
    }

    /// The one integer of constant input `j` (`what` names it).
    pub(super) fn scalar(&self, j: usize, what: &str) -> Result<i32> {
        match self.ints(j, what)?[..] {
            [v] => Ok(v),
            ref v => Err(self.r.corrupt(format_args!(
                "{} takes its {what} from a constant of {} values; expected one",
                self.what(),
                v.len()
            ))),
        }
    }

    /// A short list, or an error naming the field when it is longer than [`Dims`] holds.
    fn dims(&self, what: &str, v: &[i32]) -> Result<Dims> {
        Dims::new(v).ok_or_else(|| {
            self.r.corrupt(format_args!(
                "{} has {} {what} values; kernels take at most {}",
                self.what(),
                v.len(),
                crate::rt::options::MAX_DIMS
            ))
        })
    }
}

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
            "RESIZE_NEAREST_NEIGHBOR" => {
                let t = cx.table::<ResizeNearest>()?;
                OpOptions::ResizeNearestNeighbor(ResizeNearestNeighborOptions {
                    align_corners: t.and_then(|t| t.align_corners()).unwrap_or(false),
                    half_pixel_centers: t.and_then(|t| t.half_pixel_centers()).unwrap_or(false),
                })
            }
            "LOGISTIC" => OpOptions::Logistic(cx.no_table()?),
            "TANH" => OpOptions::Tanh(cx.no_table()?),
            "RELU" => OpOptions::Relu(cx.no_table()?),
            "RELU6" => OpOptions::Relu6(cx.no_table()?),
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
        "GATHER" => {
            let t = cx.table::<GatherT>()?;
            OpOptions::Gather(GatherOptions {
                axis: t.and_then(|t| t.axis()).unwrap_or(0),
                batch_dims: t.and_then(|t| t.batch_dims()).unwrap_or(0),
            })
        }
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
        "PACK" => {
            let t = cx.table::<PackT>()?;
            OpOptions::Pack(PackOptions {
                axis: t.and_then(|t| t.axis()).unwrap_or(0),
                values_count: t.and_then(|t| t.values_count()).unwrap_or(0),
            })
        }
        "UNPACK" => {
            let t = cx.table::<UnpackT>()?;
            OpOptions::Unpack(UnpackOptions {
                axis: t.and_then(|t| t.axis()).unwrap_or(0),
                num: t.and_then(|t| t.num()).unwrap_or(0),
            })
        }
        "RESIZE_BILINEAR" => {
            let t = cx.table::<ResizeBilinearT>()?;
            OpOptions::ResizeBilinear(ResizeBilinearOptions {
                align_corners: t.and_then(|t| t.align_corners()).unwrap_or(false),
                half_pixel_centers: t.and_then(|t| t.half_pixel_centers()).unwrap_or(false),
            })
        }
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

pub(super) fn pool(cx: &Ctx<'_, '_, '_>) -> Result<Pool2dOptions> {
    let t = cx.table::<Pool2D>()?;
    Ok(Pool2dOptions {
        padding: cx.padding(t.and_then(|t| t.padding()))?,
        stride_w: cx.positive("stride_w", t.and_then(|t| t.stride_w()), 0)?,
        stride_h: cx.positive("stride_h", t.and_then(|t| t.stride_h()), 0)?,
        filter_w: cx.positive("filter_width", t.and_then(|t| t.filter_w()), 0)?,
        filter_h: cx.positive("filter_height", t.and_then(|t| t.filter_h()), 0)?,
        activation: cx.activation(t.and_then(|t| t.activation()))?,
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

/// `SUM` and `REDUCE_MAX`: `ReducerOptions` and the constant `axis` operand.
pub(super) fn reduce(cx: &Ctx<'_, '_, '_>) -> Result<ReduceOptions> {
    Ok(ReduceOptions {
        keep_dims: cx
            .table::<Reducer>()?
            .and_then(|t| t.keep_dims())
            .unwrap_or(false),
        axes: cx.dims("axis", &cx.ints(1, "axes")?)?,
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
