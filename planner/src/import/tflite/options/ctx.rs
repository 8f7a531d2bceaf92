//! What reading one op's options needs ([`Ctx`]: the op, its options table, the graph's
//! tensors, and the checks of each field) and the readers several kinds share, below the
//! per-kind readers of `read` and `more`.

use super::*;

/// An options table with a `fused_activation_function` field.
pub(super) trait Fused<'b>: UnionMember<'b> + Copy {
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

/// What one op's options read needs: the op, its table, the graph's tensors.
pub(super) struct Ctx<'r, 'p, 'b> {
    pub(super) r: &'r Reader<'p, 'b>,
    pub(super) k: usize,
    pub(super) op: &'r Op,
    pub(super) table: Operator<'b>,
    pub(super) tensors: &'r [Tensor],
}

impl<'b> Ctx<'_, '_, 'b> {
    pub(super) fn what(&self) -> String {
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
    pub(super) fn none<T: UnionMember<'b>>(&self) -> Result<NoOptions> {
        self.table::<T>().map(|_| NoOptions {})
    }

    /// An op kind whose schema has no options table: any options type is an error.
    pub(super) fn no_table(&self) -> Result<NoOptions> {
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

    pub(super) fn padding(&self, v: Option<i8>) -> Result<Padding> {
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
    pub(super) fn fused<T: Fused<'b>>(&self) -> Result<(Option<T>, Activation)> {
        let t = self.table::<T>()?;
        Ok((t, self.activation(t.and_then(|t| t.fused()))?))
    }

    /// `ADD`'s or `SUB`'s options from table `T`, whose `pot_scale_int16` is read by
    /// `pot_scale`.
    pub(super) fn add<T: Fused<'b>>(&self, pot_scale: fn(&T) -> Option<bool>) -> Result<AddOptions> {
        let (t, activation) = self.fused::<T>()?;
        Ok(AddOptions {
            activation,
            pot_scale_int16: t.and_then(|t| pot_scale(&t)).unwrap_or(true),
        })
    }

    /// The float option of table `T` that `get` reads (`field`, 0.0 when left out), finite.
    pub(super) fn float<T: UnionMember<'b>>(&self, field: &str, get: fn(&T) -> Option<f32>) -> Result<f32> {
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
    pub(super) fn finite(&self, table: &str, field: &str, v: Option<f32>, default: f32) -> Result<f32> {
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
    pub(super) fn ints(&self, j: usize, what: &str) -> Result<Vec<i32>> {
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
    pub(super) fn dims(&self, what: &str, v: &[i32]) -> Result<Dims> {
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
