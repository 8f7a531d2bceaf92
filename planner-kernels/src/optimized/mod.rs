//! [`Optimized`]: a drop-in for [`Reference`](crate::Reference) that gives the same bytes,
//! op by op, on every input, and is fast where it matters. What it speeds up, what it hands
//! to the reference kernels and its two contracts with a build step (prepared constants as
//! input 3, an im2col scratch tensor) are in the crate docs.
//!
//! Each group of fast kinds has a module (`conv`, `depthwise`, `fc`, `elementwise`, `pool`:
//! `MEAN` and `PAD`, `svdf`, `lstm`) whose
//! entry point checks the op as the reference kernel would and runs the reference kernel
//! for anything it does not speed up (so errors are the reference's too). The inner loops
//! of the convolutions and fully-connected layers are [`mac`]'s, behind two functions an
//! architecture-specific version replaces; [`Constants`] hands them the per-channel
//! constants, prepared or computed [`CHUNK`] channels at a time.

/// The directives that open the assembly routine `$name` (its own section, a global Thumb
/// function, word-aligned) and its label; each routine's `global_asm!` starts with its
/// `.cpu` line and this.
#[cfg(any(planner_mve, planner_dsp))]
macro_rules! asm_function {
    ($name:literal) => {
        concat!(
            ".section .text.",
            $name,
            ",\"ax\",%progbits\n",
            ".global ",
            $name,
            "\n",
            ".type ",
            $name,
            ",%function\n",
            ".thumb_func\n",
            ".p2align 2\n",
            $name,
            ":",
        )
    };
}

/// The Helium routine `$name`: its `global_asm!` with the features of `-C
/// target-cpu=cortex-m55` stated for the assembler (with LTO the module's assembly is also
/// parsed without the crate's target features), [`asm_function!`], the AAPCS prologue
/// (`push` of `$regs` and lr, `vpush` of `$vregs`, `$frame` bytes of stack), `$body`, then
/// the epilogue that undoes it and returns, and the routine's size.
#[cfg(planner_mve)]
macro_rules! mve_asm {
    (
        $name:literal,
        push [$($regs:literal)?] $(vpush $vregs:literal)? $(frame $frame:literal)?;
        $($body:expr),+ $(,)?
    ) => {
        core::arch::global_asm!(
            ".cpu cortex-m55",
            asm_function!($name),
            concat!("push {{", $($regs, ", ",)? "lr}}"),
            $(concat!("vpush {{", $vregs, "}}"),)?
            $(concat!("sub sp, sp, #", $frame),)?
            $($body,)+
            $(concat!("add sp, sp, #", $frame),)?
            $(concat!("vpop {{", $vregs, "}}"),)?
            concat!("pop {{", $($regs, ", ",)? "pc}}"),
            concat!(".size ", $name, ", . - ", $name),
        );
    };
}

#[cfg(all(planner_dsp, not(planner_mve)))]
mod arm_dsp;
pub(crate) mod conv;
pub(crate) mod depthwise;
pub(crate) mod elementwise;
pub(crate) mod fc;
mod lanes;
pub(crate) mod lstm;
mod mac;
pub(crate) mod pool;
pub(crate) mod svdf;

use core::ops::Range;

use planner_rt::kernel::{Data, DataMut, Kernel, OpView};

use crate::prepare::{RequantInputs, RequantRows, requant_v1_channels};
use crate::reference::KernelError;
use mac::Requant;

/// The optimized kernel set: [`Reference`](crate::Reference)'s kinds and bytes, with fast
/// int8 convolutions and fully-connected layers (module docs). Holds nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Optimized;

impl Kernel for Optimized {
    type Error = KernelError;
}

/// Every kind a patch stage may hold honours regions: a view with one runs the reference
/// kernel.
impl planner_rt::kernel::Patches for Optimized {}

/// Output channels whose requantisation constants one call computes at a time, on the stack
/// (three `i32` each), when the op has no prepared input 3.
pub const CHUNK: usize = mac::BLOCK;

/// Bytes of the stack buffer for im2col rows when the op has no scratch tensor for them.
pub const IM2COL_STACK: usize = 2048;

/// True when input 0 and output 0 are int8 and whole (no patch region): the views a fast
/// path reads.
fn int8_whole(op: &OpView<'_, '_>) -> bool {
    let input = op
        .input(0)
        .is_some_and(|x| matches!(x.data, Data::I8(_)) && x.region.is_none());
    let output = op
        .outputs
        .first()
        .is_some_and(|y| matches!(y.data, DataMut::I8(_)) && y.region.is_none());
    input && output
}

/// True when input 2 is absent or int32: a bias a fast path reads.
fn int32_bias(op: &OpView<'_, '_>) -> bool {
    op.input(2).is_none_or(|b| b.i32().is_some())
}

/// The requantisation constants of an op's output channels: prepared (input 3) or computed
/// per call.
enum Constants<'a> {
    /// Input 3: `[3, channels]`.
    Prepared(&'a [i32], usize),
    /// Computed a chunk at a time.
    PerCall(RequantInputs<'a>),
}

impl<'a> Constants<'a> {
    /// Input 3 when the op has one (checked: int32, `[3, channels]`), else the per-call
    /// computation from `inputs` (whose lengths are checked too).
    fn new(op: &OpView<'_, 'a>, inputs: RequantInputs<'a>) -> Result<Self, KernelError> {
        let channels = inputs.channels;
        if let Some(t) = op.input(3) {
            return match t.i32() {
                Some(d) if t.shape == [3, channels] && Some(d.len()) == channels.checked_mul(3) => {
                    Ok(Constants::Prepared(d, channels))
                }
                _ => Err(KernelError::Prepared {
                    shape: t.shape,
                    int32: t.i32().is_some(),
                    channels,
                }),
            };
        }
        // The lengths requant_v1_channels checks, once here.
        requant_v1_channels(
            &inputs,
            0,
            RequantRows {
                bias: &mut [],
                mult: &mut [],
                shift: &mut [],
            },
        )?;
        Ok(Constants::PerCall(inputs))
    }

    /// Calls `f(first, q)` for runs of at most [`CHUNK`] of the output channels `range`
    /// (`first` the run's first channel, `q` its constants), in order.
    fn each(
        &self,
        range: Range<usize>,
        (out_zero, lo, hi): (i32, i32, i32),
        mut f: impl FnMut(usize, &Requant<'_>),
    ) -> Result<(), KernelError> {
        match self {
            Constants::Prepared(t, n) => {
                let mut first = range.start;
                while first < range.end {
                    let end = first + CHUNK.min(range.end - first);
                    let row = |r: usize| {
                        t.get(r * n + first..r * n + end).ok_or(KernelError::Shape {
                            what: "output channels past the prepared requantisation tensor",
                        })
                    };
                    let q = Requant {
                        bias: row(0)?,
                        mult: row(1)?,
                        shift: row(2)?,
                        out_zero,
                        lo,
                        hi,
                    };
                    f(first, &q);
                    first = end;
                }
            }
            Constants::PerCall(p) => {
                let mut first = range.start;
                while first < range.end {
                    let n = CHUNK.min(range.end - first);
                    let (mut bias, mut mult, mut shift) =
                        ([0i32; CHUNK], [0i32; CHUNK], [0i32; CHUNK]);
                    let rows = RequantRows {
                        bias: &mut bias[..n],
                        mult: &mut mult[..n],
                        shift: &mut shift[..n],
                    };
                    requant_v1_channels(p, first, rows)?;
                    let q = Requant {
                        bias: &bias[..n],
                        mult: &mult[..n],
                        shift: &shift[..n],
                        out_zero,
                        lo,
                        hi,
                    };
                    f(first, &q);
                    first += n;
                }
            }
        }
        Ok(())
    }
}

/// The filter scales [`RequantInputs`] takes for a filter quantised `q`: none when it has
/// no zero points (the reference's `channel_multiplier` then uses a zero scale).
fn filter_scales(q: &planner_rt::Quant) -> &'static [f32] {
    if q.zero_point.is_empty() {
        &[]
    } else {
        q.scale
    }
}

#[cfg(test)]
pub(crate) mod tests;
