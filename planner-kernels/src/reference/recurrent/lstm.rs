//! `UNIDIRECTIONAL_SEQUENCE_LSTM`, the standard LSTM (no peephole, projection, layer norm
//! or coupled input and forget gates, as TFLite Micro runs it), int8 or float32.
//!
//! At each time step, for each batch and each unit `j`, four gates
//! `gate = act(W_x · x_t + bias + W_h · h_{t-1})` (the forget, input and output gates through
//! the logistic function, the cell gate through tanh), the cell state `c = f · c + i · g`
//! (clipped to `±cell_clip` when it is set) and the hidden state `h = o · tanh(c)`, which
//! is also the step's output. Both states are the op's variable inputs (18 hidden, 19 cell)
//! and carry from one run to the next.
//!
//! int8 follows TFLite Micro's integer LSTM: int8 input, weights and hidden state, int32
//! biases, an int16 cell state. Each gate's two products are requantised to int16 at scale
//! 2^-12 (saturating), added with saturation, and go through TFLM's int16 logistic or tanh
//! (Q3.12 in, Q0.15 out). The cell update multiplies Q0.15 values and requantises into the
//! cell state's scale (`2^-15` for `f · c`, `2^-30 / cell_scale` for `i · g`), adds with int16
//! saturation and clips at `cell_clip / cell_scale`; tanh reads the cell state at the power
//! of two nearest its scale; `o · tanh(c)` is requantised by `2^-30 / hidden_scale` with the
//! hidden state's zero point. The model's intermediate tensors (gate scales of the layer-norm
//! variant) are not used, as TFLM does not use them for this LSTM.
//!
//! float32 follows TFLM's float kernel: each gate's input product plus bias plus recurrent
//! product summed in `f32` in element order, the gates through the float `LOGISTIC` and
//! `TANH` of [`crate::reference::common::float`] (the same `expf` and `tanhf` as every float kernel: TFLM
//! calls the C library's, and a correctly rounded `tanh` differs from glibc's on about 5 % of
//! arguments, which the recurrence carries on).
//!
//! Each unit's new hidden value is written to the output first, and the hidden state is
//! copied from there once the step's units are done (the gates of every unit read the
//! previous hidden state): the kernel needs no buffer.

use planner_rt::kernel::{Data, DataMut, In, OpView, Out};
use planner_rt::options::{Activation, UnidirectionalSequenceLstmOptions};

use crate::reference::activation::{logistic16, tanh16};
use crate::reference::common::float::{logistic_f32, tanhf};
use crate::reference::{KernelError, common::params};
use crate::{QuantizedMultiplier, multiply_by_quantized_multiplier, quantize_multiplier};

/// Input positions of the op (TFLite's `lstm_shared.h`).
const INPUT: usize = 0;
/// Input-to-gate weights, in gate order input, forget, cell, output.
const INPUT_WEIGHTS: [usize; 4] = [1, 2, 3, 4];
/// Recurrent weights, same order.
const RECURRENT_WEIGHTS: [usize; 4] = [5, 6, 7, 8];
/// Gate biases, same order.
const BIASES: [usize; 4] = [12, 13, 14, 15];
/// The hidden state (TFLite's output state).
const HIDDEN: usize = 18;
/// The cell state.
const CELL: usize = 19;
/// Inputs of the variants TFLM does not run: peephole weights (9..=11), the projection
/// (16, 17) and layer-norm coefficients (20..=23).
const UNSUPPORTED: [(usize, &str); 9] = [
    (9, "peephole weights (input 9)"),
    (10, "peephole weights (input 10)"),
    (11, "peephole weights (input 11)"),
    (16, "a projection (input 16)"),
    (17, "a projection bias (input 17)"),
    (20, "layer normalisation (input 20)"),
    (21, "layer normalisation (input 21)"),
    (22, "layer normalisation (input 22)"),
    (23, "layer normalisation (input 23)"),
];

/// Gate order of the arrays: input, forget, cell, output.
const I: usize = 0;
const F: usize = 1;
const G: usize = 2;
const O: usize = 3;

/// Names of the gates' tensors, for errors.
const WEIGHT_NAMES: [&str; 4] = [
    "input 1 (input-to-input weights)",
    "input 2 (input-to-forget weights)",
    "input 3 (input-to-cell weights)",
    "input 4 (input-to-output weights)",
];
const RECURRENT_NAMES: [&str; 4] = [
    "input 5 (recurrent-to-input weights)",
    "input 6 (recurrent-to-forget weights)",
    "input 7 (recurrent-to-cell weights)",
    "input 8 (recurrent-to-output weights)",
];
const BIAS_NAMES: [&str; 4] = [
    "input 12 (input gate bias)",
    "input 13 (forget gate bias)",
    "input 14 (cell gate bias)",
    "input 15 (output gate bias)",
];

/// Sizes of one LSTM op.
#[derive(Debug, Clone, Copy)]
struct Dims {
    time_major: bool,
    batch: usize,
    steps: usize,
    input: usize,
    units: usize,
}

impl Dims {
    /// True when the input, output and state lengths are the sizes' (without overflow).
    fn fits(&self, x: usize, y: usize, hidden: usize, cell: usize) -> bool {
        let rows = self.batch.checked_mul(self.steps);
        rows.and_then(|r| r.checked_mul(self.input)) == Some(x)
            && rows.and_then(|r| r.checked_mul(self.units)) == Some(y)
            && self.batch.checked_mul(self.units) == Some(hidden)
            && hidden == cell
    }

    /// True when a gate's weights, recurrent weights and bias have the sizes' lengths.
    fn gate_fits(&self, w: usize, r: usize, bias: usize) -> bool {
        self.units.checked_mul(self.input) == Some(w)
            && self.units.checked_mul(self.units) == Some(r)
            && bias == self.units
    }

    /// Offsets of step `t` of batch `b` in the input and the output.
    fn offsets(&self, t: usize, b: usize) -> (usize, usize) {
        let row = if self.time_major {
            t * self.batch + b
        } else {
            b * self.steps + t
        };
        (row * self.input, row * self.units)
    }
}

/// The int8 kernel's inner product, which a faster kernel set may replace with one that
/// gives the same value, bit for bit.
pub(crate) trait GateDot {
    /// `Σ (w[i] − w_zero) · (x[i] − x_zero)` over `x.len()` elements (`w` as long),
    /// wrapping.
    fn gate_dot(&self, w: &[i8], w_zero: i32, x: &[i8], x_zero: i32) -> i32;
}

/// TFLite Micro's loop, element by element.
pub(crate) struct Plain;

impl GateDot for Plain {
    fn gate_dot(&self, w: &[i8], w_zero: i32, x: &[i8], x_zero: i32) -> i32 {
        let mut acc: i32 = 0;
        for (xv, wv) in x.iter().zip(w) {
            acc = acc.wrapping_add((i32::from(*wv) - w_zero).wrapping_mul(i32::from(*xv) - x_zero));
        }
        acc
    }
}

/// How the int8 kernel runs one time step of one batch, which a faster kernel set may
/// replace with a way that gives the same values, bit for bit.
pub(crate) trait Int8Steps {
    /// Called once per call, after the op's parameters were read and checked and before
    /// its first step, with the op's scratch tensors.
    fn prepare(&mut self, p: &Int8<'_>, scratch: &mut [Out<'_>]);

    /// One step: every unit's new cell value into `c` and its new hidden value into `y`,
    /// from the step's input `x` and the previous hidden state `h` (`c`, `h` and `y` hold
    /// `p.units` elements, `x` `p.input`), with the scratch tensors [`Int8Steps::prepare`]
    /// saw.
    fn step(&mut self, p: &Int8<'_>, scratch: &mut [Out<'_>], io: Step<'_>);
}

/// One step's operands ([`Int8Steps::step`]).
pub(crate) struct Step<'s> {
    /// The step's input.
    pub(crate) x: &'s [i8],
    /// The previous hidden state.
    pub(crate) h: &'s [i8],
    /// The cell state, updated.
    pub(crate) c: &'s mut [i16],
    /// The new hidden state, the step's output.
    pub(crate) y: &'s mut [i8],
}

/// Unit by unit, each gate input from two [`GateDot`] products.
pub(crate) struct PerUnit<L>(pub(crate) L);

impl<L: GateDot> Int8Steps for PerUnit<L> {
    fn prepare(&mut self, _: &Int8<'_>, _: &mut [Out<'_>]) {}

    fn step(&mut self, p: &Int8<'_>, _: &mut [Out<'_>], io: Step<'_>) {
        let Step { x, h, c, y } = io;
        for (j, (yj, cj)) in y.iter_mut().zip(c.iter_mut()).enumerate() {
            let gate = |g: usize| gate16(&self.0, &p.gates[g], j, (x, p.z_x), (h, p.z_h));
            *yj = p.unit([gate(I), gate(F), gate(G), gate(O)], cj);
        }
    }
}

pub(crate) fn unidirectional_sequence_lstm(
    op: OpView<'_, '_>,
    o: &UnidirectionalSequenceLstmOptions,
) -> Result<(), KernelError> {
    unidirectional_sequence_lstm_with(op, o, &mut PerUnit(Plain))
}

/// `UNIDIRECTIONAL_SEQUENCE_LSTM` (module docs), int8 steps run by `steps`.
pub(crate) fn unidirectional_sequence_lstm_with<S: Int8Steps>(
    op: OpView<'_, '_>,
    o: &UnidirectionalSequenceLstmOptions,
    steps: &mut S,
) -> Result<(), KernelError> {
    for (i, what) in UNSUPPORTED {
        if op.input(i).is_some() {
            return Err(KernelError::Options { what });
        }
    }
    if o.diagonal_recurrent_tensors {
        return Err(KernelError::Options {
            what: "diagonal recurrent weights",
        });
    }
    if o.activation != Activation::Tanh {
        return Err(KernelError::Options {
            what: "an LSTM cell activation other than TANH",
        });
    }
    let x = op
        .input(INPUT)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let d = dims(&op, &x, o.time_major)?;
    match x.data {
        Data::I8(_) => int8(op, o, d, steps),
        Data::F32(_) => float(op, o, d),
        _ => Err(crate::reference::common::kind_error(&x, "input 0")),
    }
}

/// The op's sizes from its input and its weights, every weight, bias and state checked.
fn dims(op: &OpView<'_, '_>, x: &In<'_>, time_major: bool) -> Result<Dims, KernelError> {
    let (steps, batch, input) = match (x.shape, time_major) {
        ([t, b, i], true) | ([b, t, i], false) => (*t, *b, *i),
        _ => {
            return Err(KernelError::Shape {
                what: "lstm input is not rank 3",
            });
        }
    };
    let w = op.input(INPUT_WEIGHTS[F]).ok_or(KernelError::Missing {
        tensor: WEIGHT_NAMES[F],
    })?;
    let units = match w.shape {
        [units, _] => *units,
        _ => {
            return Err(KernelError::Shape {
                what: "lstm input-to-forget weights are not [units, input]",
            });
        }
    };
    let d = Dims {
        time_major,
        batch,
        steps,
        input,
        units,
    };
    for g in 0..4 {
        let w = op.input(INPUT_WEIGHTS[g]).ok_or(KernelError::Missing {
            tensor: WEIGHT_NAMES[g],
        })?;
        let r = op.input(RECURRENT_WEIGHTS[g]).ok_or(KernelError::Missing {
            tensor: RECURRENT_NAMES[g],
        })?;
        let b = op.input(BIASES[g]).ok_or(KernelError::Missing {
            tensor: BIAS_NAMES[g],
        })?;
        if w.shape != [units, input] || r.shape != [units, units] || b.shape != [units] {
            return Err(KernelError::Shape {
                what: "lstm weights are not [units, input] and [units, units] with biases of units",
            });
        }
    }
    let out = op
        .outputs
        .first()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    match out.shape {
        [a, b, u] if [*a, *b] == x.shape[..2] && *u == units => {}
        _ => {
            return Err(KernelError::Shape {
                what: "lstm output is not the input's first two dimensions by units",
            });
        }
    }
    Ok(d)
}

/// The elements of a constant int8 tensor.
fn i8s<'a>(op: &OpView<'_, 'a>, i: usize, tensor: &'static str) -> Result<In<'a>, KernelError> {
    let t = op.input(i).ok_or(KernelError::Missing { tensor })?;
    match t.data {
        Data::I8(_) => Ok(t),
        _ => Err(crate::reference::common::kind_error(&t, tensor)),
    }
}

/// The one scale and zero point of a weight tensor (TFLM's LSTM multiplies by one scale
/// per weight tensor).
fn per_tensor(t: &In<'_>, tensor: &'static str) -> Result<(f32, i32), KernelError> {
    match t.quant {
        Some(q) if !q.is_per_tensor() => Err(KernelError::Quantization {
            tensor: "lstm weights with per-channel scales (TFLM's LSTM takes one scale per weight tensor)",
        }),
        q => params(q, tensor),
    }
}

/// One gate's integer parameters.
#[derive(Clone, Copy)]
pub(crate) struct Gate<'a> {
    /// Input-to-gate weights, `[units, input]`, and their zero point.
    pub(crate) w: &'a [i8],
    pub(crate) w_zero: i32,
    /// Recurrent weights, `[units, units]`, and their zero point.
    pub(crate) r: &'a [i8],
    pub(crate) r_zero: i32,
    pub(crate) bias: &'a [i32],
    /// The input and the recurrent product's multipliers to scale 2^-12.
    pub(crate) m_in: QuantizedMultiplier,
    pub(crate) m_rec: QuantizedMultiplier,
}

impl Gate<'_> {
    /// The int16 gate input at scale 2^-12 from the input product plus the bias (`acc`)
    /// and the recurrent product (`rec`): each requantised and clamped to int16, then
    /// added with saturation.
    #[inline(always)]
    pub(crate) fn input16(&self, acc: i32, rec: i32) -> i32 {
        let a = clamp16(multiply_by_quantized_multiplier(acc, self.m_in));
        let b = clamp16(multiply_by_quantized_multiplier(rec, self.m_rec));
        clamp16(a + b)
    }
}

/// The int16 gate input at scale 2^-12 of unit `j` ([`Gate::input16`]).
fn gate16<L: GateDot>(
    dot: &L,
    g: &Gate<'_>,
    j: usize,
    (x, z_x): (&[i8], i32),
    (h, z_h): (&[i8], i32),
) -> i32 {
    let (n, s) = (x.len(), h.len());
    let acc = dot
        .gate_dot(&g.w[j * n..(j + 1) * n], g.w_zero, x, z_x)
        .wrapping_add(g.bias[j]);
    let rec = dot.gate_dot(&g.r[j * s..(j + 1) * s], g.r_zero, h, z_h);
    g.input16(acc, rec)
}

fn clamp16(v: i32) -> i32 {
    v.clamp(i32::from(i16::MIN), i32::from(i16::MAX))
}

/// The exponent of the power of two nearest `scale` (TFLite's `CheckedLog2`, whose result
/// TFLM uses also when the scale is not a power of two); `None` for a scale that is not
/// positive and normal.
fn nearest_log2(scale: f32) -> Option<i32> {
    if !(scale.is_normal() && scale > 0.0) {
        return None;
    }
    // `scale = m · 2^e` with `m` in `[0.5, 1)`: `2m` is the mantissa in `[1, 2)`.
    let (m, e) = libm::frexpf(scale);
    Some(e - 1 + i32::from(2.0 * m >= core::f32::consts::SQRT_2))
}

/// The input scaling of TFLM's int16 tanh for a cell state at scale `2^power`: the table
/// reads Q3.12 times 3, so a left shift of `12 + power` folds into the multiplier 3, and a
/// right shift stays one.
fn cell_tanh_scaling(power: i32) -> Result<(i32, u32), KernelError> {
    let left = 12 + power;
    match left {
        0..=15 => Ok((3 << left, 0)),
        -31..=-1 => Ok((3, left.unsigned_abs())),
        _ => Err(KernelError::Quantization {
            tensor: "input 19 (cell state scale out of TFLM's int16 tanh range)",
        }),
    }
}

/// The int8 op's parameters, read and checked once per call.
pub(crate) struct Int8<'a> {
    /// Units (hidden state elements per batch).
    pub(crate) units: usize,
    /// Input elements per step.
    pub(crate) input: usize,
    /// Zero points of the input and of the hidden state.
    pub(crate) z_x: i32,
    pub(crate) z_h: i32,
    /// The gates in the order input, forget, cell, output ([`I`], [`F`], [`G`], [`O`]).
    pub(crate) gates: [Gate<'a>; 4],
    /// The multipliers of `f · c` and `i · g` into the cell state's scale, and of
    /// `o · tanh(c)` into the hidden state's.
    pub(crate) m_forget: QuantizedMultiplier,
    pub(crate) m_input: QuantizedMultiplier,
    pub(crate) m_hidden: QuantizedMultiplier,
    /// The input scaling of tanh for the cell state ([`cell_tanh_scaling`]).
    pub(crate) cell_scaling: (i32, u32),
    /// The cell clip in the cell state's scale, when there is one.
    pub(crate) clip: Option<i32>,
}

impl Int8<'_> {
    /// One unit's new hidden value from its int16 gate inputs `[i, f, g, o]` (scale
    /// 2^-12, [`Gate::input16`]), its cell value `c` updated.
    #[inline(always)]
    pub(crate) fn unit(&self, [gi, gf, gg, go]: [i32; 4], c: &mut i16) -> i8 {
        let f = i32::from(logistic16(gf as i16, (3, 0)));
        let i = i32::from(logistic16(gi as i16, (3, 0)));
        let g = i32::from(tanh16(gg as i16, (3, 0)));
        let kept = clamp16(multiply_by_quantized_multiplier(
            f * i32::from(*c),
            self.m_forget,
        ));
        let added = clamp16(multiply_by_quantized_multiplier(i * g, self.m_input));
        let mut cj = clamp16(kept + added);
        if let Some(clip) = self.clip {
            cj = cj.clamp(-clip, clip);
        }
        *c = cj as i16;
        let og = i32::from(logistic16(go as i16, (3, 0)));
        let th = i32::from(tanh16(cj as i16, self.cell_scaling));
        multiply_by_quantized_multiplier(th * og, self.m_hidden)
            .saturating_add(self.z_h)
            .clamp(-128, 127) as i8
    }
}

fn int8<S: Int8Steps>(
    mut op: OpView<'_, '_>,
    o: &UnidirectionalSequenceLstmOptions,
    d: Dims,
    steps: &mut S,
) -> Result<(), KernelError> {
    let xi = i8s(&op, INPUT, "input 0")?;
    let x = xi.i8().unwrap_or_default();
    let (s_x, z_x) = params(xi.quant, "input 0")?;
    let hi = op.input(HIDDEN).ok_or(KernelError::Missing {
        tensor: "input 18 (hidden state)",
    })?;
    let ci = op.input(CELL).ok_or(KernelError::Missing {
        tensor: "input 19 (cell state)",
    })?;
    let (s_h, z_h) = params(hi.quant, "input 18 (hidden state)")?;
    let (s_c, _) = params(ci.quant, "input 19 (cell state)")?;
    let gate_scale = 1.0f64 / 4096.0;
    let gate = |g: usize| -> Result<Gate<'_>, KernelError> {
        let wi = i8s(&op, INPUT_WEIGHTS[g], WEIGHT_NAMES[g])?;
        let ri = i8s(&op, RECURRENT_WEIGHTS[g], RECURRENT_NAMES[g])?;
        let (s_w, w_zero) = per_tensor(&wi, WEIGHT_NAMES[g])?;
        let (s_r, r_zero) = per_tensor(&ri, RECURRENT_NAMES[g])?;
        let bias = op
            .input(BIASES[g])
            .and_then(|b| b.i32())
            .ok_or(KernelError::Type {
                tensor: BIAS_NAMES[g],
            })?;
        let (w, r) = (wi.i8().unwrap_or_default(), ri.i8().unwrap_or_default());
        if !d.gate_fits(w.len(), r.len(), bias.len()) {
            return Err(KernelError::Shape {
                what: "lstm weight or bias lengths do not fit units and input",
            });
        }
        Ok(Gate {
            w,
            w_zero,
            r,
            r_zero,
            bias,
            m_in: quantize_multiplier(f64::from(s_x) * f64::from(s_w) / gate_scale),
            m_rec: quantize_multiplier(f64::from(s_h) * f64::from(s_r) / gate_scale),
        })
    };
    let gates = [gate(I)?, gate(F)?, gate(G)?, gate(O)?];
    let q15 = 1.0f64 / 32768.0;
    let power = nearest_log2(s_c).ok_or(KernelError::Quantization {
        tensor: "input 19 (cell state)",
    })?;
    let p = Int8 {
        units: d.units,
        input: d.input,
        z_x,
        z_h,
        gates,
        m_forget: quantize_multiplier(q15 * f64::from(s_c) / f64::from(s_c)),
        m_input: quantize_multiplier(q15 * q15 / f64::from(s_c)),
        m_hidden: quantize_multiplier(q15 * q15 / f64::from(s_h)),
        cell_scaling: cell_tanh_scaling(power)?,
        clip: (o.cell_clip > 0.0)
            .then(|| (f64::from(o.cell_clip) / f64::from(s_c)).clamp(-32768.0, 32767.0) as i32),
    };
    let scratch = core::mem::take(&mut op.scratch);
    steps.prepare(&p, scratch);
    let types = "inputs 18 and 19 (an int8 hidden state and an int16 cell state)";
    run_steps(&mut op, d, x, types, |x, h, c, y| {
        steps.step(&p, scratch, Step { x, h, c, y });
    })
}

/// The positions among the op's variables of the hidden and the cell state (inputs 18 and
/// 19), which must be two distinct variables.
fn states(op: &OpView<'_, '_>) -> Result<[usize; 2], KernelError> {
    let at = |i: usize, tensor| match op.input(i).map(|t| t.data) {
        Some(Data::Variable(at)) => Ok(at),
        _ => Err(KernelError::Missing { tensor }),
    };
    let h = at(HIDDEN, "input 18 (hidden state, a variable)")?;
    let c = at(CELL, "input 19 (cell state, a variable)")?;
    if h == c || h.max(c) >= op.variables.len() {
        return Err(KernelError::Missing {
            tensor: "inputs 18 and 19 (two distinct state variables)",
        });
    }
    Ok([h, c])
}

fn float(
    mut op: OpView<'_, '_>,
    o: &UnidirectionalSequenceLstmOptions,
    d: Dims,
) -> Result<(), KernelError> {
    let f32s = |i: usize, tensor: &'static str| -> Result<&[f32], KernelError> {
        let t = op.input(i).ok_or(KernelError::Missing { tensor })?;
        t.f32().ok_or(KernelError::Type { tensor })
    };
    let x = f32s(INPUT, "input 0")?;
    let gate = |g: usize| -> Result<[&[f32]; 3], KernelError> {
        let gate = [
            f32s(INPUT_WEIGHTS[g], WEIGHT_NAMES[g])?,
            f32s(RECURRENT_WEIGHTS[g], RECURRENT_NAMES[g])?,
            f32s(BIASES[g], BIAS_NAMES[g])?,
        ];
        if !d.gate_fits(gate[0].len(), gate[1].len(), gate[2].len()) {
            return Err(KernelError::Shape {
                what: "lstm weight or bias lengths do not fit units and input",
            });
        }
        Ok(gate)
    };
    let (gi, gf, gg, go) = (gate(I)?, gate(F)?, gate(G)?, gate(O)?);
    let clip = o.cell_clip;
    let types = "inputs 18 and 19 (float32 hidden and cell states)";
    run_steps(&mut op, d, x, types, |xt, h, c: &mut [f32], y| {
        for (j, (yj, c)) in y.iter_mut().zip(c.iter_mut()).enumerate() {
            let f = logistic_f32(gate_f32(gf, j, xt, h));
            let i = logistic_f32(gate_f32(gi, j, xt, h));
            let g = tanhf(gate_f32(gg, j, xt, h));
            let mut cj = no_activation(no_activation(f * *c) + no_activation(i * g));
            if clip > 0.0 {
                cj = min_f32(max_f32(cj, -clip), clip);
            }
            *c = cj;
            let og = logistic_f32(gate_f32(go, j, xt, h));
            *yj = no_activation(tanhf(cj) * og);
        }
    })
}

/// Element types of the states and the output: how to see a variable or an output as them.
trait Elem: Sized {
    fn of<'s>(data: &'s mut DataMut<'_>) -> Option<&'s mut [Self]>;
}

macro_rules! elem {
    ($($t:ty => $v:ident),*) => {$(
        impl Elem for $t {
            fn of<'s>(data: &'s mut DataMut<'_>) -> Option<&'s mut [$t]> {
                match data {
                    DataMut::$v(s) => Some(s),
                    _ => None,
                }
            }
        }
    )*};
}
elem!(i8 => I8, i16 => I16, f32 => F32);

/// Runs every step of every batch: `step(x_t, h, c, y_t)` updates the batch's cell values
/// `c` and writes its new hidden values, the step's output `y_t`; the hidden state (input
/// 18) takes the step's outputs once all its units are done (every unit reads the previous
/// one). `types` names the states' element types for the error when they are others.
fn run_steps<X, H: Elem + Copy, C: Elem>(
    op: &mut OpView<'_, '_>,
    d: Dims,
    x: &[X],
    types: &'static str,
    mut step: impl FnMut(&[X], &[H], &mut [C], &mut [H]),
) -> Result<(), KernelError> {
    let at = states(op)?;
    let Ok([h_var, c_var]) = op.variables.get_disjoint_mut(at) else {
        return Err(KernelError::Missing {
            tensor: "inputs 18 and 19 (hidden and cell state variables)",
        });
    };
    let (Some(hidden), Some(cell)) = (H::of(&mut h_var.data), C::of(&mut c_var.data)) else {
        return Err(KernelError::Type { tensor: types });
    };
    let out = op
        .outputs
        .first_mut()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    let y = H::of(&mut out.data).ok_or(KernelError::Type { tensor: "output 0" })?;
    let (u, n) = (d.units, d.input);
    if !d.fits(x.len(), y.len(), hidden.len(), cell.len()) {
        return Err(KernelError::Shape {
            what: "lstm input, output or state lengths do not fit batch, steps, input and units",
        });
    }
    for t in 0..d.steps {
        for b in 0..d.batch {
            let (xo, yo) = d.offsets(t, b);
            let xt = &x[xo..xo + n];
            let h = &hidden[b * u..(b + 1) * u];
            let c = &mut cell[b * u..(b + 1) * u];
            let yt = &mut y[yo..yo + u];
            step(xt, h, c, yt);
            hidden[b * u..(b + 1) * u].copy_from_slice(yt);
        }
    }
    Ok(())
}

/// The float gate input of unit `j`: the input product plus the bias, plus the recurrent
/// product, each sum in element order as TFLM's float `FULLY_CONNECTED`.
fn gate_f32([w, r, bias]: [&[f32]; 3], j: usize, x: &[f32], h: &[f32]) -> f32 {
    let n = x.len();
    let mut a = 0.0f32;
    for (xv, wv) in x.iter().zip(&w[j * n..(j + 1) * n]) {
        a += xv * wv;
    }
    let s = h.len();
    let mut b = 0.0f32;
    for (hv, wv) in h.iter().zip(&r[j * s..(j + 1) * s]) {
        b += hv * wv;
    }
    no_activation(a + bias[j]) + no_activation(b + 0.0)
}

/// C++'s `std::max(x, lo)`: `x` unless `x < lo` (a NaN stays).
fn max_f32(x: f32, lo: f32) -> f32 {
    if x < lo { lo } else { x }
}

/// C++'s `std::min(x, hi)`: `x` unless `hi < x` (a NaN stays).
fn min_f32(x: f32, hi: f32) -> f32 {
    if hi < x { hi } else { x }
}

/// TFLM's clamp for a float op without activation: to the finite range (an infinity
/// becomes the largest finite value), a NaN left as it is.
fn no_activation(x: f32) -> f32 {
    min_f32(max_f32(x, f32::MIN), f32::MAX)
}

#[cfg(test)]
mod tests {
    use planner_rt::kernel::{In, OpView, Out};
    use planner_rt::options::{Activation, UnidirectionalSequenceLstmOptions};
    use planner_rt::{Quant, TensorInfo};

    use super::{KernelError, unidirectional_sequence_lstm};

    fn info<T>(shape: &'static [usize], scale: &'static [f32]) -> TensorInfo<T> {
        crate::reference::tests::info(shape, scale, &[0, 0])
    }

    /// Runs the op on `inputs`, `outputs` and `variables`, with `activation`.
    fn lstm<'a>(
        inputs: &[Option<In<'a>>],
        outputs: &mut [Out<'a>],
        variables: &mut [Out<'a>],
        activation: Activation,
    ) -> Result<(), KernelError> {
        let op = OpView {
            index: 0,
            opcode: "UNIDIRECTIONAL_SEQUENCE_LSTM",
            inputs,
            outputs,
            scratch: &mut [],
            variables,
        };
        unidirectional_sequence_lstm(op, &options(activation))
    }

    fn options(activation: Activation) -> UnidirectionalSequenceLstmOptions {
        UnidirectionalSequenceLstmOptions {
            activation,
            ..Default::default()
        }
    }

    /// One float unit, one input, zero weights: the gates are their biases' logistic
    /// (tanh for the cell gate), so `c = f · c + i · g` and `h = o · tanh(c)` step by step,
    /// the state carried from one call to the next.
    #[test]
    fn float_unit_carries_its_state_from_call_to_call() {
        let x = [0.7f32, -0.3];
        let zero = [0.0f32];
        let biases = [[0.4f32], [-0.2], [0.9], [1.1]];
        let (xi, wi, bi) = (
            info::<f32>(&[1, 2, 1], &[1.0]),
            info::<f32>(&[1, 1], &[1.0]),
            info::<f32>(&[1], &[1.0]),
        );
        let si = info::<f32>(&[1, 1], &[1.0]);
        let yi = info::<f32>(&[1, 2, 1], &[1.0]);
        let (mut h, mut c) = ([0.0f32], [0.0f32]);
        let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
        let (i, f, g, o) = (sig(0.4), sig(-0.2), 0.9f64.tanh(), sig(1.1));
        let mut want_c = 0.0f64;
        for call in 0..2 {
            let mut inputs = [None; 24];
            inputs[0] = Some(In::new(&x, &xi));
            for g in 0..4 {
                inputs[1 + g] = Some(In::new(&zero, &wi));
                inputs[5 + g] = Some(In::new(&zero, &wi));
                inputs[12 + g] = Some(In::new(&biases[g], &bi));
            }
            inputs[18] = Some(In::variable(0, &si));
            inputs[19] = Some(In::variable(1, &si));
            let mut y = [0.0f32; 2];
            let mut outputs = [Out::new(&mut y, &yi)];
            let mut variables = [Out::new(&mut h, &si), Out::new(&mut c, &si)];
            lstm(&inputs, &mut outputs, &mut variables, Activation::Tanh).unwrap();
            for (t, got) in y.iter().enumerate() {
                want_c = f * want_c + i * g;
                let want_h = o * want_c.tanh();
                assert!(
                    (f64::from(*got) - want_h).abs() < 1e-6,
                    "call {call} step {t}: {got} against {want_h}"
                );
            }
            assert!(
                (f64::from(c[0]) - want_c).abs() < 1e-6,
                "cell {} against {want_c}",
                c[0]
            );
            assert_eq!(h[0], y[1], "the hidden state is the last step's output");
        }
    }

    /// Variants TFLM does not run, a cell activation other than tanh, and a state that is
    /// not a variable are refused, not run.
    #[test]
    fn unsupported_variants_are_refused() {
        let x = [1i8; 2];
        let w = [1i8];
        let b = [0i32];
        let (xi, wi, bi) = (
            info::<i8>(&[1, 2, 1], &[0.1]),
            info::<i8>(&[1, 1], &[0.1]),
            info::<i32>(&[1], &[0.01]),
        );
        let hi = info::<i8>(&[1, 1], &[0.1]);
        let ci = info::<i16>(&[1, 1], &[1.0 / 4096.0]);
        let yi = info::<i8>(&[1, 2, 1], &[0.1]);
        let per_channel = TensorInfo {
            quant: Some(Quant {
                scale: &[0.1, 0.2],
                zero_point: &[0, 0],
                axis: 0,
            }),
            ..info::<i8>(&[1, 1], &[0.1])
        };
        let run = |peephole: bool, activation, variable: bool, pc: bool| {
            let (mut h, mut c, mut y) = ([0i8], [0i16], [0i8; 2]);
            let mut inputs = [None; 24];
            inputs[0] = Some(In::new(&x, &xi));
            for g in 0..4 {
                inputs[1 + g] = Some(In::new(&w, if pc { &per_channel } else { &wi }));
                inputs[5 + g] = Some(In::new(&w, &wi));
                inputs[12 + g] = Some(In::new(&b, &bi));
            }
            if peephole {
                inputs[10] = Some(In::new(&w, &wi));
            }
            let hv = [0i8];
            inputs[18] = Some(if variable {
                In::variable(0, &hi)
            } else {
                In::new(&hv, &hi)
            });
            inputs[19] = Some(In::variable(1, &ci));
            let mut outputs = [Out::new(&mut y, &yi)];
            let mut variables = [Out::new(&mut h, &hi), Out::new(&mut c, &ci)];
            lstm(&inputs, &mut outputs, &mut variables, activation)
        };
        assert!(run(false, Activation::Tanh, true, false).is_ok());
        // (peephole, activation, variable hidden state, per-channel weights), the refusal.
        type Refused = fn(&KernelError) -> bool;
        let refusals: [(_, Refused); 4] = [
            ((true, Activation::Tanh, true, false), |e| {
                matches!(e, KernelError::Options { .. })
            }),
            ((false, Activation::Relu, true, false), |e| {
                matches!(e, KernelError::Options { .. })
            }),
            ((false, Activation::Tanh, false, false), |e| {
                matches!(e, KernelError::Missing { .. })
            }),
            ((false, Activation::Tanh, true, true), |e| {
                matches!(e, KernelError::Quantization { .. })
            }),
        ];
        for ((peephole, activation, variable, pc), refused) in refusals {
            let got = run(peephole, activation, variable, pc);
            assert!(
                got.as_ref().is_err_and(refused),
                "{peephole} {activation:?} {variable} {pc}: {got:?}"
            );
        }
    }
}
