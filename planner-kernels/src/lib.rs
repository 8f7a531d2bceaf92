//! Kernel sets for models planned by `planner`, with TensorFlow Lite Micro's arithmetic, so
//! that a host build and a Cortex-M build of the same model give the bytes TFLM gives.
//!
//! [`Reference`] and [`Optimized`] are the kernel sets a model's generated `run()` takes:
//!
//! ```ignore
//! planner_macros::include_model!(env!("PLANNER_PLAN"));
//! let mut model = my_model::Model::take().unwrap().init();
//! model.run(&mut planner_kernels::Optimized)?; // or &mut planner_kernels::Reference
//! ```
//!
//! Each op kind is a trait of `planner_rt::kernel`; a model whose op kinds a set does not
//! all implement does not compile, and the error names the missing op. Both sets implement
//! the same kinds (one table emits both), with the same error type ([`KernelError`]), and
//! give the same bytes, op by op, on every input: [`Reference`] is written for clarity,
//! [`Optimized`] for speed.
//!
//! Besides the kernel sets the crate exports the fixed-point helpers the kernels use
//! ([`quantize_multiplier`], [`multiply_by_quantized_multiplier`], ...), the per-op
//! constants [`Optimized`] computes or reads ([`prepare`]), and a standalone
//! fully-connected layer ([`FullyConnected`]) for code that calls a layer by hand.
//!
//! `no_std`, no allocation, and `unsafe` only where [`Optimized`] calls the target's vector
//! instructions (Helium and DSP assembly, SSE2 on x86-64 hosts), each block with the reason it
//! is sound: the kernels take the tensor views that `include_model!` generates (plain
//! slices) and the quantisation parameters of the plan.
//!
//! # The optimized set
//!
//! [`Optimized`] has fast paths for int8 `CONV_2D` (1x1 filters without padding as a GEMM
//! over the input pixels, other filters through im2col rows, groups included),
//! `DEPTHWISE_CONV_2D` (any depth multiplier, stride, dilation and padding; in place too),
//! `FULLY_CONNECTED`, `ADD`, `SUB` and `MUL` (operands of the output's shape or one row of
//! its last dimension broadcast; in place too), `MEAN` over a run of neighbouring axes,
//! `PAD` over the rows and columns of an NHWC tensor, `QUANTIZE` from int8 or int16 to int8, `SVDF` (int8 or int16
//! state) and the int8 `UNIDIRECTIONAL_SEQUENCE_LSTM`. Everything else (float and int16
//! tensors, patch regions, other broadcasts,
//! a fully-connected layer whose weights have a zero point, every other kind) runs the
//! reference kernel. The convolutions and fully-connected layers accumulate `Σ x · w` plus
//! a per-channel *effective bias* `bias - x_zero · Σ w` (TFLite's `Σ (x - x_zero) · w +
//! bias` modulo 2^32) and requantise as [`multiply_by_quantized_multiplier`] does. Stack
//! use is bounded (a few KiB: the constants of [`CHUNK`] channels, at most
//! [`IM2COL_STACK`] bytes of im2col rows, 2 KiB of expanded depthwise rows), whatever the
//! tensors' sizes.
//!
//! Two contracts with a build step, which the planner keeps with `[kernels] set =
//! "optimized"` in the manifest (docs/manifest.md, *Kernel sets*):
//!
//! - *Prepared constants.* When an int8 `CONV_2D`, `DEPTHWISE_CONV_2D` or
//!   `FULLY_CONNECTED` op has an input 3, it must be an int32 tensor of shape `[3, c_out]`:
//!   row 0 the effective biases, row 1 the Q31 multipliers, row 2 the shifts of the output
//!   channels, exactly what [`prepare::requant_v1`] writes. [`Optimized`] then reads them
//!   instead of computing them on every call ([`CHUNK`] channels at a time); a tensor of
//!   another type or shape is [`KernelError::Prepared`]. [`Optimized`] implements
//!   `planner_rt::kernel::RequantV1`, which the generated `run()` of a plan with prepared
//!   ops asks for; [`Reference`] ignores input 3 and does not implement it, so such a plan
//!   run with it is a compile error.
//! - *im2col buffer.* A `CONV_2D` whose first scratch tensor is int8 and holds at least
//!   [`prepare::im2col_bytes`] (`4 · fh · fw · c_in / groups`) bytes gets its im2col rows
//!   there (4 rows or more at a time): the planner plans that tensor in the arena. Otherwise
//!   they go in a stack buffer of [`IM2COL_STACK`] bytes, and a filter whose row (`fh · fw ·
//!   c_in / groups` bytes) does not fit there runs the reference kernel.
//!
//! # Requantisation
//!
//! Requantisation, the one step where int8 kernels differ, comes two ways in
//! [`FullyConnected`] ([`Requantize`]):
//!
//! - [`Requantize::Tflite`], the fixed-point scheme TFLite uses for int8 models: the real
//!   multiplier `input_scale * filter_scale / output_scale` becomes a Q31 multiplier and a
//!   power-of-two shift ([`quantize_multiplier`]), applied with a rounding doubling high
//!   multiply and a rounding right shift ([`multiply_by_quantized_multiplier`]);
//! - [`Requantize::Double`], the accumulator times the scales in `f64`, rounded half away
//!   from zero: the plain reference arithmetic. On the TFLM `hello_world` sweep the two
//!   differ by one step of the output at some inputs.
//!
//! Both kernel sets always use TFLite's scheme.

#![no_std]
#![deny(missing_docs)]

/// Defines `fn $name(v: $float) -> $int`: `v` rounded half away from zero, saturating
/// (NaN gives 0), without `std`. The truncation and the fraction are exact (below the
/// float's mantissa width the fraction is representable, above it `v` is an integer), so
/// each width rounds in its own arithmetic (no `f64` on an `f32`-only FPU).
macro_rules! round_half_away {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($float:ty) -> $int:ty) => {
        $(#[$doc])*
        $vis fn $name(v: $float) -> $int {
            let t = v as $int;
            let frac = v - t as $float;
            if frac >= 0.5 {
                t.saturating_add(1)
            } else if frac <= -0.5 {
                t.saturating_sub(1)
            } else {
                t
            }
        }
    };
}

pub mod golden;
mod optimized;
mod reference;
mod sets;

/// The per-op constants [`Optimized`] reads (prepared by the build as input 3) or computes
/// per call: `planner_rt::prepare`, the one module the planner's preparation stage and the
/// kernels share, so the two can never disagree.
pub use planner_rt::prepare;

pub use optimized::{CHUNK, IM2COL_STACK, Optimized};
pub use reference::{KernelError, Reference};

/// The multiplier split ([`quantize_multiplier`]) lives in `planner_rt::prepare`, which the
/// planner's prepared constants use too; re-exported here at its old path.
pub use planner_rt::prepare::{QuantizedMultiplier, quantize_multiplier};

/// `a · b / 2^31` rounded half up (gemmlowp's nudge), saturating the one overflowing case (`i32::MIN · i32::MIN`).
pub fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == i32::MIN && b == i32::MIN {
        return i32::MAX;
    }
    let ab = i64::from(a) * i64::from(b);
    let nudge = if ab >= 0 {
        1i64 << 30
    } else {
        1 - (1i64 << 30)
    };
    // Division truncates toward zero, as in C++.
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// `x / 2^exponent`, rounding half away from zero; `exponent` in `0..=31`.
pub fn rounding_divide_by_pot(x: i32, exponent: u32) -> i32 {
    let exponent = exponent.min(31);
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> exponent) + i32::from(remainder > threshold)
}

/// `x · real`, where `m` is `real` as [`quantize_multiplier`] gives it.
pub fn multiply_by_quantized_multiplier(x: i32, m: QuantizedMultiplier) -> i32 {
    let left = m.shift.max(0) as u32;
    let right = (-m.shift).max(0) as u32;
    let shifted = x.wrapping_mul(1i32.wrapping_shl(left.min(31)));
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(shifted, m.multiplier),
        right,
    )
}

/// Quantisation of one int8 tensor: `real = scale · (q − zero_point)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quant {
    /// Scale.
    pub scale: f32,
    /// Zero point.
    pub zero_point: i32,
}

/// The fused activation of a layer, as a clamp of the int8 output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// No clamp beyond the int8 range.
    None,
    /// `max(0, x)`: clamp below at the output's zero point.
    Relu,
}

/// What [`FullyConnected::run`] refuses: slices whose lengths do not fit together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeError {
    /// The input depth is zero, or does not divide the filter or the input.
    Depth {
        /// The input depth given.
        depth: usize,
        /// Elements in the filter.
        filter: usize,
        /// Elements in the input.
        input: usize,
    },
    /// The output is not `batches × output channels`.
    Output {
        /// Elements in the output.
        len: usize,
        /// Elements it should have.
        expected: usize,
    },
    /// The bias is not one `i32` per output channel.
    Bias {
        /// Elements in the bias.
        len: usize,
        /// Elements it should have.
        expected: usize,
    },
}

/// How an int32 accumulator becomes an int8 output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requantize {
    /// TFLite's fixed-point requantisation (Q31 multiplier and shift).
    Tflite,
    /// `round(acc · input_scale · filter_scale / output_scale)` in `f64`, evaluated left to
    /// right, rounded half away from zero.
    Double,
}

round_half_away! {
    /// `v` rounded half away from zero, as `f64::round` then `as i64` (saturating; NaN gives
    /// 0), without `std`.
    pub fn round_half_away(f64) -> i64
}

/// Parameters of one int8 fully-connected layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FullyConnected {
    /// Input quantisation.
    pub input: Quant,
    /// Filter (weights) quantisation; per-tensor.
    pub filter: Quant,
    /// Output quantisation.
    pub output: Quant,
    /// Fused activation.
    pub activation: Activation,
    /// Requantisation.
    pub requantize: Requantize,
}

impl FullyConnected {
    /// The requantisation multiplier, `input.scale · filter.scale / output.scale`, computed
    /// in `f64` from the `f32` scales as TFLite does.
    pub fn multiplier(&self) -> QuantizedMultiplier {
        let real = f64::from(self.input.scale) * f64::from(self.filter.scale)
            / f64::from(self.output.scale);
        quantize_multiplier(real)
    }

    /// `output[b][o] = act(requant(Σ_d (input[b][d] − zp_in) · (filter[o][d] − zp_f) + bias[o]))`
    /// for int8 `input` (`batches × depth`), `filter` (`outputs × depth`, row-major, as
    /// TFLite stores it), an optional int32 `bias` (`outputs`) and int8 `output`
    /// (`batches × outputs`).
    pub fn run(
        &self,
        depth: usize,
        input: &[i8],
        filter: &[i8],
        bias: Option<&[i32]>,
        output: &mut [i8],
    ) -> Result<(), ShapeError> {
        if depth == 0 || !filter.len().is_multiple_of(depth) || !input.len().is_multiple_of(depth) {
            return Err(ShapeError::Depth {
                depth,
                filter: filter.len(),
                input: input.len(),
            });
        }
        let outputs = filter.len() / depth;
        let batches = input.len() / depth;
        if output.len() != batches * outputs {
            return Err(ShapeError::Output {
                len: output.len(),
                expected: batches * outputs,
            });
        }
        if let Some(b) = bias
            && b.len() != outputs
        {
            return Err(ShapeError::Bias {
                len: b.len(),
                expected: outputs,
            });
        }
        if outputs == 0 {
            return Ok(());
        }
        let m = self.multiplier();
        let lo = match self.activation {
            Activation::None => i32::from(i8::MIN),
            Activation::Relu => self.output.zero_point.max(i32::from(i8::MIN)),
        };
        let hi = i32::from(i8::MAX);
        for (in_row, out_row) in input
            .chunks_exact(depth)
            .zip(output.chunks_exact_mut(outputs))
        {
            for (o, (w_row, out)) in filter
                .chunks_exact(depth)
                .zip(out_row.iter_mut())
                .enumerate()
            {
                let mut acc: i64 = 0;
                for (&x, &w) in in_row.iter().zip(w_row) {
                    let x = i64::from(x) - i64::from(self.input.zero_point);
                    let w = i64::from(w) - i64::from(self.filter.zero_point);
                    acc += x * w;
                }
                if let Some(b) = bias {
                    acc += i64::from(b[o]);
                }
                let scaled = match self.requantize {
                    // TFLite accumulates in int32.
                    Requantize::Tflite => {
                        i64::from(multiply_by_quantized_multiplier(acc as i32, m))
                    }
                    Requantize::Double => round_half_away(
                        acc as f64 * f64::from(self.input.scale) * f64::from(self.filter.scale)
                            / f64::from(self.output.scale),
                    ),
                };
                let y = scaled
                    .saturating_add(i64::from(self.output.zero_point))
                    .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
                *out = y.clamp(lo, hi) as i8;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
