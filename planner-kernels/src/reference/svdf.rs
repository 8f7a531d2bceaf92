//! `SVDF`, int8 input and output with an int8 or int16 state and time weights: each step
//! shifts the state one step back in time, writes the feature projection of the input as
//! the newest step (requantised into the state's type), then sums the state against the
//! time weights, adds the bias, sums each unit's `rank` filters and requantises to int8.
//! The fused activation is not applied, as TFLite Micro's integer kernel does not apply it.

use planner_rt::kernel::{DataMut, OpView};
use planner_rt::options::SvdfOptions;

use super::{KernelError, input_i8, params};
use crate::{multiply_by_quantized_multiplier, quantize_multiplier};

/// State element types: int8 or int16.
trait State: Copy {
    const MIN: i32;
    const MAX: i32;
    fn get(self) -> i32;
    fn from(v: i32) -> Self;
}

macro_rules! state {
    ($($t:ty),*) => {$(
        impl State for $t {
            const MIN: i32 = <$t>::MIN as i32;
            const MAX: i32 = <$t>::MAX as i32;
            fn get(self) -> i32 {
                i32::from(self)
            }
            fn from(v: i32) -> Self {
                v as $t
            }
        }
    )*};
}
state!(i8, i16);

/// Writes the newest features through the setter it is given (position, value).
type Features<'f> = &'f dyn Fn(&mut dyn FnMut(usize, i32));

/// Sizes of one SVDF op.
struct Dims {
    batch: usize,
    input: usize,
    filters: usize,
    memory: usize,
    rank: usize,
}

pub(crate) fn svdf(mut op: OpView<'_, '_>, o: &SvdfOptions) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let (wf, wfi) = input_i8(&op, 1, "input 1 (feature weights)")?;
    let wt = op.input(2).ok_or(KernelError::Missing {
        tensor: "input 2 (time weights)",
    })?;
    let bias = match op.input(3) {
        Some(b) => Some(b.i32().ok_or(KernelError::Type {
            tensor: "input 3 (bias)",
        })?),
        None => None,
    };
    let (s_in, z_in) = params(xi.quant, "input 0")?;
    let (s_wf, _) = params(wfi.quant, "input 1 (feature weights)")?;
    let (s_wt, _) = params(wt.quant, "input 2 (time weights)")?;
    let (s_out, z_out) = params(op.outputs.first().and_then(|o| o.quant), "output 0")?;
    let state_quant = op.input(4).and_then(|s| s.quant);
    let (s_state, z_state) = params(state_quant, "input 4 (state)")?;
    let d = match (xi.shape, wfi.shape, wt.shape) {
        ([batch, input], [filters, input2], [filters2, memory])
            if input == input2 && filters == filters2 =>
        {
            Dims {
                batch: *batch,
                input: *input,
                filters: *filters,
                memory: *memory,
                rank: usize::try_from(o.rank).unwrap_or(0),
            }
        }
        _ => {
            return Err(KernelError::Shape {
                what: "svdf input, feature weights and time weights do not fit",
            });
        }
    };
    if d.rank == 0
        || d.filters % d.rank != 0
        || x.len() != d.batch * d.input
        || wf.len() != d.filters * d.input
    {
        return Err(KernelError::Shape {
            what: "svdf rank or lengths do not fit",
        });
    }
    let units = d.filters / d.rank;
    // TFLite Micro computes both scales in `f32`, then widens them.
    let m1 = quantize_multiplier(f64::from(s_in * s_wf / s_state));
    let m2 = quantize_multiplier(f64::from(s_state * s_wt / s_out));
    if units > 64 || bias.is_some_and(|b| b.len() != units) {
        return Err(KernelError::Shape {
            what: "svdf has more than 64 units or a bias of another length",
        });
    }
    let state = op.variable(4).ok_or(KernelError::Missing {
        tensor: "input 4 (state)",
    })?;
    let features = |set: &mut dyn FnMut(usize, i32)| {
        project(x, wf, &d, z_in, m1, set);
    };
    let mut results = [[0i32; 64]; 8];
    if d.batch > results.len() {
        return Err(KernelError::Shape {
            what: "svdf has more than 8 batches",
        });
    }
    let mut keep = |b: usize, a: &[i32]| results[b][..a.len()].copy_from_slice(a);
    match (&mut state.data, wt.data) {
        (DataMut::I8(s), planner_rt::kernel::Data::I8(t)) => {
            step(s, t, &d, z_state, &features, bias, &mut keep)?;
        }
        (DataMut::I16(s), planner_rt::kernel::Data::I16(t)) => {
            step(s, t, &d, z_state, &features, bias, &mut keep)?;
        }
        _ => {
            return Err(KernelError::Type {
                tensor: "input 4 (state)",
            });
        }
    }
    let y = super::output(&mut op)?
        .i8()
        .ok_or(KernelError::Type { tensor: "output 0" })?;
    if y.len() != d.batch * units {
        return Err(KernelError::Shape {
            what: "svdf output is not batch x units",
        });
    }
    if units == 0 {
        return Ok(());
    }
    for (row, out) in results.iter().zip(y.chunks_exact_mut(units)) {
        for (acc, o) in row.iter().zip(out.iter_mut()) {
            *o = multiply_by_quantized_multiplier(*acc, m2)
                .saturating_add(z_out)
                .clamp(-128, 127) as i8;
        }
    }
    Ok(())
}

/// Steps the state back in time, writes the newest features (from `features`), and sums
/// the state against the time weights, with the bias, per batch and unit into `per_batch`.
fn step<T: State>(
    state: &mut [T],
    time: &[T],
    d: &Dims,
    z_state: i32,
    features: Features<'_>,
    bias: Option<&[i32]>,
    per_batch: &mut dyn FnMut(usize, &[i32]),
) -> Result<(), KernelError> {
    if state.len() != d.batch * d.filters * d.memory || time.len() != d.filters * d.memory {
        return Err(KernelError::Shape {
            what: "svdf state or time weights have another length",
        });
    }
    state.copy_within(1.., 0);
    // TFLM clamps the projection to the state type's range, then adds the zero point and
    // stores it as that type (wrapping, as C's conversion does).
    features(&mut |at, q| state[at] = T::from(q.clamp(T::MIN, T::MAX).wrapping_add(z_state)));
    let units = d.filters / d.rank;
    for b in 0..d.batch {
        let mut acc = [0i32; 64];
        for (u, a) in acc.iter_mut().enumerate().take(units) {
            *a = bias.map_or(0, |bias| bias[u]);
        }
        for f in 0..d.filters {
            let mut sum: i32 = 0;
            let s = &state[(b * d.filters + f) * d.memory..][..d.memory];
            for (w, v) in time[f * d.memory..(f + 1) * d.memory].iter().zip(s) {
                sum = sum.wrapping_add(w.get() * (v.get() - z_state));
            }
            acc[f / d.rank] = acc[f / d.rank].wrapping_add(sum);
        }
        per_batch(b, &acc[..units]);
    }
    Ok(())
}

/// The feature projection of the input, requantised into the state's scale: calls `set`
/// with each filter's newest state position and value (before clamping and before the
/// state's zero point).
fn project(
    x: &[i8],
    wf: &[i8],
    d: &Dims,
    z_in: i32,
    m1: crate::QuantizedMultiplier,
    set: &mut dyn FnMut(usize, i32),
) {
    for b in 0..d.batch {
        let input = &x[b * d.input..(b + 1) * d.input];
        for f in 0..d.filters {
            let mut dot: i32 = 0;
            for (w, v) in wf[f * d.input..(f + 1) * d.input].iter().zip(input) {
                dot = dot.wrapping_add(i32::from(*w) * (i32::from(*v) - z_in));
            }
            let q = multiply_by_quantized_multiplier(dot, m1);
            set((b * d.filters + f) * d.memory + d.memory - 1, q);
        }
    }
}
