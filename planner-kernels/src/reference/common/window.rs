//! What every convolution reads besides its data: the multiplier of each output channel,
//! the window of input pixels an output pixel covers ([`Window`], [`Spatial`],
//! [`pad_before`]) and the bias. Below the int8 and float convolutions, the pools and the
//! fully connected op, which share it.

use planner_rt::Quant;
use planner_rt::kernel::{In, OpView};
use planner_rt::options::{Activation, Conv2dOptions, DepthwiseConv2dOptions, Dims, Padding};

use crate::reference::KernelError;
use crate::reference::common::region::{Plane, reach};
use crate::{QuantizedMultiplier, quantize_multiplier};

/// The multiplier of output channel `c`: `input_scale · filter_scale[c] / output_scale`,
/// in `f64` from the `f32` scales (one filter scale for per-tensor quantisation).
pub(crate) fn channel_multiplier(
    input_scale: f32,
    filter: &Quant,
    output_scale: f32,
    c: usize,
) -> QuantizedMultiplier {
    let filter_scale = filter.params(c).map_or(0.0, |(s, _)| s);
    quantize_multiplier(f64::from(input_scale) * f64::from(filter_scale) / f64::from(output_scale))
}

/// Padding before the first element along one axis (`axis` 0 is the height, 1 the
/// width), and a check that the output size is the one the padding gives: `ceil(in /
/// stride)` for SAME, `ceil((in - extent + 1) / stride)` for VALID, `(in + before + after -
/// extent) / stride + 1` for EXPLICIT (`pads` is `[top, bottom, left, right]`, a PAD the
/// planner folded into the op), where `extent = (filter - 1) · dilation + 1`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pad_before(
    padding: Padding,
    pads: &Dims,
    axis: usize,
    stride: usize,
    dilation: usize,
    input: usize,
    filter: usize,
    out: usize,
) -> Result<usize, KernelError> {
    let extent = filter.saturating_sub(1) * dilation + 1;
    let mismatch = KernelError::Shape {
        what: "output size differs from the one the padding and stride give",
    };
    let (expected, before) = match padding {
        Padding::Same | Padding::Valid if !pads.as_slice().is_empty() => {
            return Err(KernelError::Options {
                what: "per-side pads given with SAME or VALID padding",
            });
        }
        Padding::Same => (input.div_ceil(stride), None),
        Padding::Valid => ((input + stride).saturating_sub(extent) / stride, None),
        Padding::Explicit => {
            let side = |i: usize| {
                pads.as_slice()
                    .get(axis * 2 + i)
                    .and_then(|&p| usize::try_from(p).ok())
            };
            let (Some(b), Some(a), 4) = (side(0), side(1), pads.as_slice().len()) else {
                return Err(KernelError::Options {
                    what: "explicit padding needs 4 non-negative pads [top, bottom, left, right]",
                });
            };
            let padded = input + b + a;
            if padded < extent {
                return Err(mismatch);
            }
            ((padded - extent) / stride + 1, Some(b))
        }
    };
    if expected != out || out == 0 {
        return Err(mismatch);
    }
    if let Some(b) = before {
        return Ok(b);
    }
    let total = ((out - 1) * stride + extent).saturating_sub(input);
    Ok(total / 2)
}

/// The window geometry shared by convolutions: input size, strides, dilations and
/// padding.
pub(crate) struct Window {
    pub(crate) in_h: usize,
    pub(crate) in_w: usize,
    pub(crate) stride: (usize, usize),
    pub(crate) dilation: (usize, usize),
    pub(crate) pad: (usize, usize),
}

/// The options `CONV_2D` and `DEPTHWISE_CONV_2D` share, int8 or float.
pub(crate) struct Spatial<'o> {
    pub(crate) activation: Activation,
    padding: Padding,
    pads: &'o Dims,
    stride: (i32, i32),
    dilation: (i32, i32),
}

/// `Spatial::from(&options)` for each convolution's options.
macro_rules! spatial_from {
    ($($options:ty),*) => {$(
        impl<'o> From<&'o $options> for Spatial<'o> {
            fn from(o: &'o $options) -> Self {
                Spatial {
                    activation: o.activation,
                    padding: o.padding,
                    pads: &o.pads,
                    stride: (o.stride_h, o.stride_w),
                    dilation: (o.dilation_h, o.dilation_w),
                }
            }
        }
    )*};
}
spatial_from!(Conv2dOptions, DepthwiseConv2dOptions);

impl Spatial<'_> {
    /// The window of a convolution: strides and dilations (positive), the padding
    /// (`pad_before` on each axis), over an input of `input` rows and columns, a filter of
    /// `filter` and an output of `out`.
    pub(crate) fn window(
        &self,
        input: (usize, usize),
        filter: (usize, usize),
        out: (usize, usize),
    ) -> Result<Window, KernelError> {
        let stride = (
            positive(self.stride.0, "stride_h below 1")?,
            positive(self.stride.1, "stride_w below 1")?,
        );
        let dilation = (
            positive(self.dilation.0, "dilation_h below 1")?,
            positive(self.dilation.1, "dilation_w below 1")?,
        );
        let (padding, pads) = (self.padding, self.pads);
        Ok(Window {
            in_h: input.0,
            in_w: input.1,
            stride,
            dilation,
            pad: (
                pad_before(
                    padding, pads, 0, stride.0, dilation.0, input.0, filter.0, out.0,
                )?,
                pad_before(
                    padding, pads, 1, stride.1, dilation.1, input.1, filter.1, out.1,
                )?,
            ),
        })
    }
}

impl Window {
    /// Checks that the input plane `x` holds every pixel inside the image that a
    /// `filter`-sized window reads for the outputs of the plane `y`.
    pub(crate) fn read_by(
        &self,
        x: &Plane,
        y: &Plane,
        filter: (usize, usize),
    ) -> Result<(), KernelError> {
        let rows = reach(
            y.rows(),
            self.stride.0,
            self.dilation.0,
            self.pad.0,
            filter.0,
            self.in_h,
        );
        let cols = reach(
            y.cols(),
            self.stride.1,
            self.dilation.1,
            self.pad.1,
            filter.1,
            self.in_w,
        );
        x.holds(rows, cols)
    }

    /// The input row and column of filter tap `(fy, fx)` for output `(oy, ox)`, when inside.
    pub(crate) fn tap(&self, oy: usize, ox: usize, fy: usize, fx: usize) -> Option<(usize, usize)> {
        let y = (oy * self.stride.0 + fy * self.dilation.0).checked_sub(self.pad.0)?;
        let x = (ox * self.stride.1 + fx * self.dilation.1).checked_sub(self.pad.1)?;
        (y < self.in_h && x < self.in_w).then_some((y, x))
    }
}

/// Positive `i32` option as `usize`.
fn positive(v: i32, what: &'static str) -> Result<usize, KernelError> {
    usize::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or(KernelError::Options { what })
}

/// Input 2 as an int32 bias of `n` elements, when present.
pub(crate) fn bias<'a>(op: &OpView<'_, 'a>, n: usize) -> Result<Option<&'a [i32]>, KernelError> {
    bias_of(op, n, In::i32, "input 2 (bias)")
}

/// Input 2 as a bias of `n` elements `read` takes out (naming it `tensor` when it cannot),
/// when present.
pub(crate) fn bias_of<'a, T>(
    op: &OpView<'_, 'a>,
    n: usize,
    read: fn(&In<'a>) -> Option<&'a [T]>,
    tensor: &'static str,
) -> Result<Option<&'a [T]>, KernelError> {
    let Some(b) = op.input(2) else {
        return Ok(None);
    };
    let b = read(&b).ok_or(KernelError::Type { tensor })?;
    if b.len() != n {
        return Err(KernelError::Shape {
            what: "bias length differs from the output channels",
        });
    }
    Ok(Some(b))
}
