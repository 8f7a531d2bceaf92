//! The shapes and weight format of a `FULLY_CONNECTED` op, read the same way by its int8,
//! float32 and 16x8 kernels and the optimized one.

use planner_rt::options::{FullyConnectedOptions, WeightsFormat};

use crate::reference::KernelError;

/// `(units, depth)` of weights shaped `[units, depth]`.
pub(crate) fn units_depth(w_shape: &[usize]) -> Result<(usize, usize), KernelError> {
    match *w_shape {
        [units, depth] => Ok((units, depth)),
        _ => Err(KernelError::Shape {
            what: "weights are not [units, depth]",
        }),
    }
}

/// The batches of a fully-connected op from the lengths of its input, weights and output,
/// and of its bias (when present), checked against `(units, depth)`.
pub(crate) fn batches(
    [x, w, y]: [usize; 3],
    (units, depth): (usize, usize),
    bias: Option<usize>,
) -> Result<usize, KernelError> {
    if depth == 0 || !x.is_multiple_of(depth) || w != units * depth {
        return Err(KernelError::Shape {
            what: "input length is not a multiple of the weights' depth",
        });
    }
    let batches = x / depth;
    if y != batches * units || bias.is_some_and(|b| b != units) {
        return Err(KernelError::Shape {
            what: "output or bias length differs from batches x units",
        });
    }
    Ok(batches)
}

/// Refuses shuffled weights: every kernel reads them as `[units, depth]`.
pub(crate) fn default_weights(o: &FullyConnectedOptions) -> Result<(), KernelError> {
    if o.weights_format != WeightsFormat::Default {
        return Err(KernelError::Options {
            what: "shuffled fully-connected weights",
        });
    }
    Ok(())
}
