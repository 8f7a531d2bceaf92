//! Which op may write an output over one of its inputs: the verifier's own reading of the
//! op-kind table's in-place column ([`crate::rt::op_kinds`]), written apart from the
//! planner's in-place pass, so that a pair that pass should not have made is refused here.
//!
//! The table names the rule; what each rule needs of the two tensors for the bundled kernels
//! to compute the output in the input's bytes is spelled out below.

use std::format;
use std::string::String;
use std::vec::Vec;

use crate::graph::{Graph, Op, Tensor, TensorKind};
use crate::rt::op_kinds::{self, InPlace};
use crate::rt::rows::Rows;

/// `Ok` when `op` may write its output at position `output` over its input at position
/// `input`, else why not. The liveness of the two (the input dies at the op) is checked by
/// the caller.
pub(super) fn may_overwrite(
    graph: &Graph,
    op: &Op,
    input: usize,
    output: usize,
) -> Result<(), String> {
    let kind = op.opcode.as_str();
    let rule = op_kinds::in_place(kind);
    let over: &[usize] = match rule {
        InPlace::Never => {
            return Err(format!(
                "{kind} ops do not run in place (the op-kind table's rule for {kind} is `Never`)"
            ));
        }
        InPlace::Unary | InPlace::Depthwise => &[0],
        InPlace::Binary => &[0, 1],
    };
    if output != 0 || !over.contains(&input) {
        return Err(format!(
            "{kind} writes output 0 over input {} only, not output {output} over input {input}",
            if over.len() == 1 { "0" } else { "0 or 1" }
        ));
    }
    if op.options.in_place_codegen().is_none() {
        return Err(format!(
            "{kind} ops with these options do not run in place (no in-place kernel takes them)"
        ));
    }
    let (Some(&Some(i)), Some(&o)) = (op.inputs.get(input), op.outputs.get(output)) else {
        return Err(format!("the op has no input {input} or no output {output}"));
    };
    if op.inputs.iter().filter(|&&t| t == Some(i)).count() > 1 {
        return Err(format!(
            "the op reads `{}` at two positions, and would read bytes it has already written",
            graph.tensor(i).id
        ));
    }
    let (x, y) = (graph.tensor(i), graph.tensor(o));
    if x.kind != TensorKind::Activation || y.kind != TensorKind::Activation {
        return Err(format!(
            "`{}` and `{}` must both be activations to share bytes",
            x.id, y.id
        ));
    }
    if alignment(y) > alignment(x) {
        return Err(format!(
            "`{}` needs alignment {}, more than `{}`'s {}",
            y.id,
            alignment(y),
            x.id,
            alignment(x)
        ));
    }
    let width = |t: &Tensor| t.dtype.bits();
    match rule {
        InPlace::Unary if x.elements() != y.elements() || y.size > x.size => Err(format!(
            "{kind} over `{}` ({:?}, {} bytes) into `{}` ({:?}, {} bytes): the output must have \
             the input's elements in no more bytes",
            x.id, x.shape, x.size, y.id, y.shape, y.size
        )),
        InPlace::Binary if x.shape != y.shape || width(x) != width(y) => Err(format!(
            "{kind} over operand `{}` {:?}: an operand written over must not be broadcast and \
             must have the element size of output `{}` {:?}",
            x.id, x.shape, y.id, y.shape
        )),
        InPlace::Depthwise if !depthwise_fits(x, y) => Err(format!(
            "{kind} over `{}` {:?} into `{}` {:?}: in place needs one batch, the same channels, \
             no more output pixels than input pixels and one element size",
            x.id, x.shape, y.id, y.shape
        )),
        _ => Ok(()),
    }
}

/// The alignment a tensor's slot must have: its element type's, or its hint when larger.
fn alignment(t: &Tensor) -> u64 {
    t.align_hint.unwrap_or(1).max(t.dtype.align())
}

/// A depthwise convolution computes channel by channel through a one-channel temporary, so
/// its output fits in its input's bytes when both are one 4-D image of the same channels and
/// element size and the output has no more pixels.
fn depthwise_fits(x: &Tensor, y: &Tensor) -> bool {
    let ([n, h, w, c], [m, p, q, d]) = (x.shape.as_slice(), y.shape.as_slice()) else {
        return false;
    };
    (*n, *m) == (1, 1)
        && c == d
        && p.saturating_mul(*q) <= h.saturating_mul(*w)
        && x.dtype.bits() == y.dtype.bits()
}

/// `Ok` with the op's rows when `op` may write its output 0 over its input 0 with row
/// overlap ([`crate::rt::rows`]), else why not: the op slides a window down a `[1, H, W, C]`
/// input ([`Rows::of`]), the kernels run its kind on regions (the op-kind table) for its
/// element type (the patch stage's rule), and input and output are activations of one
/// element type, the input read once.
pub(super) fn may_overlap_rows(
    graph: &Graph,
    op: &Op,
    input: usize,
    output: usize,
) -> Result<Rows, String> {
    let kind = op.opcode.as_str();
    let (Some(&Some(i)), Some(&o)) = (op.inputs.get(input), op.outputs.get(output)) else {
        return Err(format!("the op has no input {input} or no output {output}"));
    };
    if (input, output) != (0, 0) {
        return Err(format!(
            "{kind} writes output 0 over the rows of input 0 only, not output {output} over input {input}"
        ));
    }
    let (x, y) = (graph.tensor(i), graph.tensor(o));
    let dims = |t: &Tensor| -> Option<Vec<usize>> {
        t.shape.iter().map(|&d| usize::try_from(d).ok()).collect()
    };
    let filter = op.inputs.get(1).copied().flatten().map(|f| graph.tensor(f));
    let rows = match (dims(x), dims(y), filter.map(dims)) {
        (Some(xs), Some(ys), f) => Rows::of(&op.options, &xs, &ys, f.flatten().as_deref()),
        _ => None,
    }
    .ok_or_else(|| {
        format!(
            "{kind} over `{}` {:?} into `{}` {:?} does not slide a window down a [1, H, W, C] \
             input (row overlap runs CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D)",
            x.id, x.shape, y.id, y.shape
        )
    })?;
    planner_planfile::patch::stage_op(kind, y.dtype, false)
        .map_err(|why| format!("row overlap runs the op on regions, but {why}"))?;
    if x.kind != TensorKind::Activation || y.kind != TensorKind::Activation || x.dtype != y.dtype {
        return Err(format!(
            "`{}` and `{}` must be activations of one element type to share bytes row by row",
            x.id, y.id
        ));
    }
    if op.inputs.iter().filter(|&&t| t == Some(i)).count() > 1 {
        return Err(format!(
            "the op reads `{}` at two positions, and would read rows it has already written",
            x.id
        ));
    }
    Ok(rows)
}
