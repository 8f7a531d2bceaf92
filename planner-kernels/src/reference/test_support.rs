//! What the reference kernels' unit tests share: a tensor description and an op runner.

use planner_rt::kernel::{In, OpView, Out};
use planner_rt::options::{Activation, Padding, Pool2dOptions};
use planner_rt::{Quant, TensorInfo};

use super::KernelError;

/// A tensor description of `shape` (id and name `t`), quantised with `scale` and
/// `zero_point` along `axis` when `quant` is given.
pub(crate) fn tensor_info<T>(
    shape: &'static [usize],
    quant: Option<(&'static [f32], &'static [i64])>,
    axis: i32,
) -> TensorInfo<T> {
    let quant = quant.map(|(scale, zero_point)| Quant {
        scale,
        zero_point,
        axis,
    });
    TensorInfo::unnamed(shape, quant)
}

/// Runs `f` on an op with `inputs`, `outputs` and `scratch`.
pub(crate) fn run_op<'a>(
    inputs: &[Option<In<'a>>],
    outputs: &mut [Out<'a>],
    scratch: &mut [Out<'a>],
    f: impl FnOnce(OpView<'_, 'a>) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    run_with_state(inputs, (outputs, scratch), &mut [], f)
}

/// Runs `f` on an op with `inputs`, `outputs`, `scratch` and the variable tensors
/// `variables` (an op that keeps state: SVDF, LSTM).
pub(crate) fn run_with_state<'a>(
    inputs: &[Option<In<'a>>],
    (outputs, scratch): (&mut [Out<'a>], &mut [Out<'a>]),
    variables: &mut [Out<'a>],
    f: impl FnOnce(OpView<'_, 'a>) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    f(OpView {
        index: 0,
        opcode: "TEST",
        inputs,
        outputs,
        scratch,
        variables,
    })
}

/// Runs `f` on an op with `inputs` and one output.
pub(crate) fn run<'a>(
    inputs: &[Option<In<'a>>],
    output: Out<'a>,
    f: impl FnOnce(OpView<'_, 'a>) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    run_op(inputs, &mut [output], &mut [], f)
}

/// Pooling options: a `filter` window (rows, columns) moved by `stride`.
pub(crate) fn pool_options(
    padding: Padding,
    filter: (usize, usize),
    stride: (usize, usize),
    activation: Activation,
) -> Pool2dOptions {
    let int = |v: usize| i32::try_from(v).unwrap_or(i32::MAX);
    Pool2dOptions {
        padding,
        stride_h: int(stride.0),
        stride_w: int(stride.1),
        filter_h: int(filter.0),
        filter_w: int(filter.1),
        activation,
    }
}
