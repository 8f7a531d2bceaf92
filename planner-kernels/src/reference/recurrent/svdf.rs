//! `SVDF`, int8 input and output with an int8 or int16 state and time weights (a float32
//! input goes to `svdf_f32`, with either kernel set's loops): each step
//! shifts the state one step back in time, writes the feature projection of the input as
//! the newest step (requantised into the state's type), then sums the state against the
//! time weights, adds the bias, sums each unit's `rank` filters and requantises to int8.
//! The fused activation is not applied, as TFLite Micro's integer kernel does not apply it.

use planner_rt::kernel::{DataMut, OpView, Out};
use planner_rt::options::SvdfOptions;

use super::state_at;

use crate::reference::common::operands::typed_elements;
use crate::reference::{
    KernelError,
    common::{input_i8, params},
};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// State element types: int8 or int16.
pub(crate) trait State: Copy {
    const MIN: i32;
    const MAX: i32;
    fn get(self) -> i32;
    fn from(v: i32) -> Self;
    /// `s` as int8 values, when they are.
    fn int8(s: &[Self]) -> Option<&[i8]>;
    /// `s` as mutable int8 values, when they are.
    fn int8_mut(s: &mut [Self]) -> Option<&mut [i8]>;
}

macro_rules! state {
    ($($t:ty => $int8:expr, $int8_mut:expr);*) => {$(
        impl State for $t {
            const MIN: i32 = <$t>::MIN as i32;
            const MAX: i32 = <$t>::MAX as i32;
            fn get(self) -> i32 {
                i32::from(self)
            }
            fn from(v: i32) -> Self {
                v as $t
            }
            fn int8(s: &[Self]) -> Option<&[i8]> {
                $int8(s)
            }
            fn int8_mut(s: &mut [Self]) -> Option<&mut [i8]> {
                $int8_mut(s)
            }
        }
    )*};
}
state!(i8 => Some, Some; i16 => |_| None, |_| None);

/// The inner loops of one SVDF step, which a faster kernel set may replace with loops that
/// give the same values, bit for bit ([`svdf_with`] checks the op and calls them with
/// lengths that fit).
pub(crate) trait Loops {
    /// For each row `r` of `dots.len()` rows of `p.w` (`p.x.len()` weights each, back to
    /// back): `q = clamp(mbqm(Σ w[r][i] · (x[i] − p.z), p.m), T::MIN, T::MAX)` (the sum
    /// wrapping) stored as `T::from(q + p.z_state)` (wrapping, as C's conversion) in the
    /// last element of row `r` of `state` (rows of `memory > 0` elements). `dots` is the
    /// caller's scratch, to be overwritten.
    fn features<T: State>(&self, p: &Projection<'_>, dots: &mut [i32], state: (&mut [T], usize));
    /// For each row `r` of `out.len()` rows of `memory` elements: `out[r] = Σ w[r][i] ·
    /// (s[r][i] − z)`, wrapping.
    fn time<T: State>(&self, w: &[T], s: &[T], memory: usize, z: i32, out: &mut [i32]);
    /// `y[i] = clamp(mbqm(acc[i] + bias[i], q.m) + q.zero, -128, 127)` (`acc[i]` alone without a
    /// bias), the first addition wrapping, the second saturating (`acc` is the caller's
    /// scratch: it may be overwritten; the bias is as long as `acc`).
    fn output(&self, acc: &mut [i32], bias: Option<&[i32]>, q: OutputScale, y: &mut [i8]);
    /// Moves every element of `state` one place down (`state[i] = state[i + 1]`; the last
    /// keeps its value).
    fn shift<T: State>(&self, state: &mut [T]) {
        state.copy_within(1.., 0);
    }
}

/// The reference loops: TFLite Micro's, element by element.
struct Plain;

impl Loops for Plain {
    fn features<T: State>(&self, p: &Projection<'_>, dots: &mut [i32], state: (&mut [T], usize)) {
        let (x, w, z, m, z_state) = (p.x, p.w, p.z, p.m, p.z_state);
        let (state, memory) = state;
        let k = x.len();
        let rows = state.chunks_exact_mut(memory.max(1));
        for (r, (q, row)) in dots.iter_mut().zip(rows).enumerate() {
            let mut dot: i32 = 0;
            for (w, v) in w.get(r * k..(r + 1) * k).unwrap_or_default().iter().zip(x) {
                dot = dot.wrapping_add(i32::from(*w) * (i32::from(*v) - z));
            }
            *q = multiply_by_quantized_multiplier(dot, m).clamp(T::MIN, T::MAX);
            newest(row, *q, z_state);
        }
    }

    fn time<T: State>(&self, w: &[T], s: &[T], memory: usize, z: i32, out: &mut [i32]) {
        let rows = w
            .chunks_exact(memory.max(1))
            .zip(s.chunks_exact(memory.max(1)));
        for (o, (w, s)) in out.iter_mut().zip(rows) {
            let mut sum: i32 = 0;
            for (w, v) in w.iter().zip(s) {
                sum = sum.wrapping_add(w.get() * (v.get() - z));
            }
            *o = sum;
        }
    }

    fn output(&self, acc: &mut [i32], bias: Option<&[i32]>, q: OutputScale, y: &mut [i8]) {
        if let Some(bias) = bias {
            for (a, b) in acc.iter_mut().zip(bias) {
                *a = a.wrapping_add(*b);
            }
        }
        for (a, o) in acc.iter().zip(y.iter_mut()) {
            *o = multiply_by_quantized_multiplier(*a, q.m)
                .saturating_add(q.zero)
                .clamp(-128, 127) as i8;
        }
    }
}

/// What a step's feature projection reads: the input, its zero point, one chunk of filters'
/// weights (rows of the input's length, back to back), the multiplier into the state's
/// scale and the state's zero point.
#[derive(Clone, Copy)]
pub(crate) struct Projection<'a> {
    pub(crate) x: &'a [i8],
    pub(crate) w: &'a [i8],
    pub(crate) z: i32,
    pub(crate) m: QuantizedMultiplier,
    pub(crate) z_state: i32,
}

/// Stores the requantised feature `q` as the newest (last) element of a state row, plus the
/// state's zero point (wrapping, as C's conversion does, as TFLite Micro stores it).
#[inline(always)]
pub(crate) fn newest<T: State>(row: &mut [T], q: i32, z_state: i32) {
    if let Some(last) = row.last_mut() {
        *last = T::from(q.wrapping_add(z_state));
    }
}

/// Filters whose projections or time sums one call of a [`Loops`] function computes.
const FILTER_CHUNK: usize = 64;

/// Units whose sums one call of [`Loops::output`] requantises (any number of units runs, a
/// chunk at a time).
const UNIT_CHUNK: usize = 64;

/// Sizes of one SVDF op.
struct Dims {
    batch: usize,
    input: usize,
    filters: usize,
    memory: usize,
    rank: usize,
}

pub(crate) fn svdf(op: OpView<'_, '_>, o: &SvdfOptions) -> Result<(), KernelError> {
    svdf_with(op, o, &Plain)
}

/// `SVDF` with the inner loops `loops` (the module docs' steps; every check here).
pub(crate) fn svdf_with<L: Loops>(
    op: OpView<'_, '_>,
    o: &SvdfOptions,
    loops: &L,
) -> Result<(), KernelError> {
    if super::svdf_f32::is_float(&op) {
        return super::svdf_f32::svdf(op, o);
    }
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
        || d.memory == 0
        || d.filters % d.rank != 0
        || Some(x.len()) != d.batch.checked_mul(d.input)
        || Some(wf.len()) != d.filters.checked_mul(d.input)
    {
        return Err(KernelError::Shape {
            what: "svdf rank, memory or lengths do not fit",
        });
    }
    let units = d.filters / d.rank;
    // TFLite Micro computes both scales in `f32`, then widens them.
    let m1 = quantize_multiplier(f64::from(s_in * s_wf / s_state));
    let m2 = quantize_multiplier(f64::from(s_state * s_wt / s_out));
    if bias.is_some_and(|b| b.len() != units) {
        return Err(KernelError::Shape {
            what: "svdf has a bias of another length than its units",
        });
    }
    let inputs = Inputs {
        x,
        wf,
        z_in,
        m1,
        z_state,
        bias,
    };
    // The state and the output, borrowed apart (both are the op's, in other fields).
    let state = op
        .variables
        .get_mut(state_at(&op)?)
        .ok_or(KernelError::Missing {
            tensor: "input 4 (state)",
        })?;
    let y = typed_elements!(op.outputs.first_mut(), I8, "output 0");
    if Some(y.len()) != d.batch.checked_mul(units) {
        return Err(KernelError::Shape {
            what: "svdf output is not batch x units",
        });
    }
    let out = Output {
        y,
        q: OutputScale { m: m2, zero: z_out },
    };
    match (&mut state.data, wt.data) {
        (DataMut::I8(s), planner_rt::kernel::Data::I8(t)) => step(s, t, &d, &inputs, loops, out),
        (DataMut::I16(s), planner_rt::kernel::Data::I16(t)) => step(s, t, &d, &inputs, loops, out),
        _ => Err(KernelError::Type {
            tensor: "input 4 (state)",
        }),
    }
}

/// Where the op's outputs go: `batch × units` int8 values, requantised by `q`.
struct Output<'y> {
    y: &'y mut [i8],
    q: OutputScale,
}

/// The requantisation of an SVDF's outputs: the multiplier of `state scale · time weights'
/// scale / output scale`, then the output's zero point.
#[derive(Clone, Copy)]
pub(crate) struct OutputScale {
    pub(crate) m: QuantizedMultiplier,
    pub(crate) zero: i32,
}

/// What the feature projection reads: the input, the feature weights, the input's zero
/// point, the multiplier into the state's scale, the state's zero point (added to each
/// stored feature, taken off in the time sums), and the bias.
struct Inputs<'a> {
    x: &'a [i8],
    wf: &'a [i8],
    z_in: i32,
    m1: QuantizedMultiplier,
    z_state: i32,
    bias: Option<&'a [i32]>,
}

/// Steps the state back in time, writes the newest features (the input's projection,
/// requantised into the state's scale, clamped to its type, plus its zero point, wrapping
/// as C's conversion does, as TFLite Micro stores it), sums the state against the time
/// weights with the bias per unit, and requantises each batch's sums into its outputs.
fn step<T: State, L: Loops>(
    state: &mut [T],
    time: &[T],
    d: &Dims,
    inputs: &Inputs<'_>,
    loops: &L,
    out: Output<'_>,
) -> Result<(), KernelError> {
    let per_batch = d.filters.checked_mul(d.memory);
    if Some(state.len()) != per_batch.and_then(|p| p.checked_mul(d.batch))
        || Some(time.len()) != per_batch
    {
        return Err(KernelError::Shape {
            what: "svdf state or time weights have another length",
        });
    }
    loops.shift(state);
    // One filter per unit: the units' own sums take the projections first (the scratch
    // `features` overwrites), so the second buffer has no elements (nothing to zero).
    if d.rank == 1 {
        units::<T, L, 0>((state, time), (d, inputs), loops, out);
    } else {
        units::<T, L, FILTER_CHUNK>((state, time), (d, inputs), loops, out);
    }
    Ok(())
}

/// [`step`]'s projections, time sums and outputs over the state and the time weights, unit
/// chunk by unit chunk, with a buffer of `C` filters' sums (`FILTER_CHUNK`, or 0 for rank
/// 1: one filter per unit, whose sums go straight to the units').
fn units<T: State, L: Loops, const C: usize>(
    (state, time): (&mut [T], &[T]),
    (d, inputs): (&Dims, &Inputs<'_>),
    loops: &L,
    out: Output<'_>,
) {
    let z_state = inputs.z_state;
    let units = d.filters / d.rank;
    if units == 0 {
        return;
    }
    let mut chunk = [0i32; C];
    let mut acc = [0i32; UNIT_CHUNK];
    for (b, y) in out.y.chunks_exact_mut(units).enumerate() {
        let x = &inputs.x[b * d.input..(b + 1) * d.input];
        let state = &mut state[b * d.filters * d.memory..(b + 1) * d.filters * d.memory];
        // Units in chunks, each with its filters: a filter's projection and time sum touch
        // its own state row only, so the order of the chunks changes no value.
        let mut u0 = 0;
        while u0 < units {
            let nu = UNIT_CHUNK.min(units - u0);
            let acc = &mut acc[..nu];
            if d.rank > 1 {
                match inputs.bias {
                    Some(bias) => acc.copy_from_slice(&bias[u0..u0 + nu]),
                    None => acc.fill(0),
                }
            }
            let filters = u0 * d.rank..(u0 + nu) * d.rank;
            let mut f0 = filters.start;
            while f0 < filters.end {
                let n = FILTER_CHUNK.min(filters.end - f0);
                let p = Projection {
                    x,
                    w: &inputs.wf[f0 * d.input..(f0 + n) * d.input],
                    z: inputs.z_in,
                    m: inputs.m1,
                    z_state,
                };
                let rows = &mut state[f0 * d.memory..(f0 + n) * d.memory];
                let dots = if d.rank == 1 {
                    &mut acc[f0 - filters.start..][..n]
                } else {
                    &mut chunk[..n]
                };
                loops.features(&p, dots, (rows, d.memory));
                f0 += n;
            }
            let mut f0 = filters.start;
            while f0 < filters.end {
                let n = FILTER_CHUNK.min(filters.end - f0);
                let rows = f0 * d.memory..(f0 + n) * d.memory;
                let first = f0 - filters.start;
                // One filter per unit: the unit's sum goes straight to its place (the
                // output adds the bias); otherwise each unit adds its filters' sums.
                let sums = if d.rank == 1 {
                    &mut acc[first..first + n]
                } else {
                    &mut chunk[..n]
                };
                // `memory > 0`: the loops write every sum.
                loops.time(&time[rows.clone()], &state[rows], d.memory, z_state, sums);
                if d.rank > 1 {
                    for (f, sum) in chunk[..n].iter().enumerate() {
                        let u = (first + f) / d.rank;
                        acc[u] = acc[u].wrapping_add(*sum);
                    }
                }
                f0 += n;
            }
            let bias = match inputs.bias {
                Some(b) if d.rank == 1 => Some(&b[u0..u0 + nu]),
                _ => None,
            };
            loops.output(acc, bias, out.q, &mut y[u0..u0 + nu]);
            u0 += nu;
        }
    }
}
