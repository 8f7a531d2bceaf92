//! The TFLM `hello_world` model end to end through the API `include_model!` generates.
//!
//! `build.rs` plans the model with `planner_build::compile("hello_world.toml")`; the macro
//! below turns the plan into `static` arenas and views; [`infer`] runs the three
//! FULLY_CONNECTED ops with a reference int8 kernel written here, reading the weights
//! through the generated op views and their quantisation constants.

planner_macros::include_model!("hello_world");

use hello_world::ops::{Op0, Op1, Op2};
use planner::rt::TensorInfo;

/// Scale and zero point of a per-tensor quantised tensor (1.0 and 0 when it has none).
fn params<T>(t: &TensorInfo<T>) -> (f32, i64) {
    t.params().unwrap_or((1.0, 0))
}

/// Reference int8 FULLY_CONNECTED (TFLite semantics): for each output row `o`,
/// `acc = bias[o] + Σ (x[i] - x_zero) * (w[o][i] - w_zero)`, then
/// `y[o] = round(acc * x_scale * w_scale / y_scale) + y_zero`, clamped to int8 and, with
/// `relu`, to at least `y_zero` (the quantised 0). Weights are `[outputs, inputs]`, row
/// major; per-channel weight scales are taken per output row.
#[allow(clippy::too_many_arguments)]
pub fn fully_connected(
    x: &[i8],
    x_info: &TensorInfo<i8>,
    w: &[i8],
    w_info: &TensorInfo<i8>,
    bias: &[i32],
    y: &mut [i8],
    y_info: &TensorInfo<i8>,
    relu: bool,
) {
    let (x_scale, x_zero) = params(x_info);
    let (y_scale, y_zero) = params(y_info);
    let inputs = x.len();
    for (o, out) in y.iter_mut().enumerate() {
        let (w_scale, w_zero) = w_info.quant.and_then(|q| q.params(o)).unwrap_or((1.0, 0));
        let row = &w[o * inputs..(o + 1) * inputs];
        let acc: i64 = row
            .iter()
            .zip(x)
            .map(|(&wi, &xi)| (i64::from(xi) - x_zero) * (i64::from(wi) - w_zero))
            .sum::<i64>()
            + i64::from(bias.get(o).copied().unwrap_or(0));
        let scaled = (acc as f64 * f64::from(x_scale) * f64::from(w_scale) / f64::from(y_scale))
            .round() as i64
            + y_zero;
        let low = if relu { y_zero.max(-128) } else { -128 };
        *out = scaled.clamp(low, 127) as i8;
    }
}

/// Runs the model on `x` and returns its estimate of `sin(x)`.
pub fn infer(model: &mut hello_world::Model, x: f32) -> f32 {
    let input = hello_world::inputs::SERVING_DEFAULT_DENSE_INPUT_0;
    let q = input.quant.map_or(0, |q| q.quantize(x, 0, -128, 127));
    model.input_serving_default_dense_input_0_mut()[0] = q as i8;

    // dense (ReLU) -> dense_1 (ReLU) -> dense_2: the layers of the TFLM example.
    let op = model.op0();
    fully_connected(
        op.input0,
        &Op0::INPUT0,
        op.input1,
        &Op0::INPUT1,
        op.input2,
        op.output0,
        &Op0::OUTPUT0,
        true,
    );
    let op = model.op1();
    fully_connected(
        op.input0,
        &Op1::INPUT0,
        op.input1,
        &Op1::INPUT1,
        op.input2,
        op.output0,
        &Op1::OUTPUT0,
        true,
    );
    let op = model.op2();
    fully_connected(
        op.input0,
        &Op2::INPUT0,
        op.input1,
        &Op2::INPUT1,
        op.input2,
        op.output0,
        &Op2::OUTPUT0,
        false,
    );

    let output = hello_world::outputs::DENSE_2;
    let y = model.output_dense_2()[0];
    output
        .quant
        .map_or(f32::from(y), |q| q.dequantize(i64::from(y), 0))
}

/// What the pre-processing's step scopes took from the `pre` slab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlabFigures {
    /// Bytes of the slab.
    pub capacity: usize,
    /// The most bytes one step took.
    pub high_water: usize,
    /// The most bytes one step asked for: the slab size that serves every step.
    pub needed: usize,
    /// Bytes the largest step asked for beyond the slab.
    pub overflow: usize,
}

/// Pre-processing: the sweep's inputs, `x_i = 2π i / (n - 1)`, computed step by step in the
/// step-scope slab the plan reserves (scratch slab `pre`, which shares the scratch arena
/// between runs). Each step handles eight inputs in slab temporaries and keeps its results
/// with `retain`; the slab is reset between steps. Returns the slab's figures, or the first
/// overflow.
pub fn sweep_inputs(
    model: &mut hello_world::Model,
    out: &mut [f32],
) -> Result<SlabFigures, planner::rt::slab::Overflow> {
    let n = out.len();
    model.with_slab_pre(|slab| {
        for (chunk, dst) in out.chunks_mut(8).enumerate() {
            slab.scope(|s| -> Result<(), planner::rt::slab::Overflow> {
                let index = s.alloc_with(dst.len(), |k| (chunk * 8 + k) as f32)?;
                let x = s.alloc::<f32>(dst.len())?;
                let last = (n.max(2) - 1) as f32;
                for (xi, &i) in x.iter_mut().zip(index.iter()) {
                    *xi = i * std::f32::consts::TAU / last;
                }
                // Lengths match by construction: the chunk is the slice's length.
                let _ = s.retain(x, dst);
                Ok(())
            })?;
        }
        Ok(SlabFigures {
            capacity: slab.capacity(),
            high_water: slab.high_water(),
            needed: slab.needed(),
            overflow: slab.overflow(),
        })
    })
}

/// One line per arena: name, size, alignment.
pub fn describe() -> String {
    let mut s = format!(
        "model {} (plan {:016x})",
        hello_world::MODEL,
        hello_world::PLAN_HASH
    );
    for arena in hello_world::PLAN.arenas {
        s.push_str(&format!(
            "\n  arena {:<16} {:>5} bytes, aligned to {}",
            arena.name, arena.size, arena.align
        ));
    }
    s
}

unsafe extern "C" {
    /// Sums dense_1's weights through the C header's region and offset.
    pub fn host_c_sum_dense_1_weights(regions: *const *mut u8) -> i64;
    /// Sums the input tensor through the C header's region and offset.
    pub fn host_c_sum_input(regions: *const *mut u8) -> i64;
    /// The header's plan hash.
    pub fn host_c_plan_hash() -> u64;
    /// The header's region count.
    pub fn host_c_region_count() -> u32;
    /// The header's offset of tensor 0 (dense_1 weights) or 1 (the input).
    pub fn host_c_tensor_offset(which: u32) -> u32;
    /// The header's size of tensor 0 (dense_1 weights) or 1 (the input).
    pub fn host_c_tensor_size(which: u32) -> u32;
}
