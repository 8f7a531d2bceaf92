//! TFLM's signal library (`CUSTOM:Signal*` ops): the audio front end's window, FFT,
//! energy, filter bank, noise reduction and log kernels, and the framing kernels that keep
//! state across runs, with TFLM's arithmetic.

mod delay;
mod energy;
mod fft;
mod filter_bank;
mod filter_bank_log;
mod filter_bank_square_root;
mod framer;
#[cfg(test)]
mod golden;
mod overlap_add;
mod pcan;
mod spectral_subtraction;
mod stacker;
mod window;

use planner_rt::kernel::{Data, DataMut, OpView, Out};
use planner_rt::options as o;

use crate::reference::KernelError;
use crate::reference::common::operands::{typed_elements, typed_input};

/// Input 0's shape.
fn shape(op: &OpView<'_, '_>) -> Result<&'static [usize], KernelError> {
    op.input(0)
        .map(|x| x.shape)
        .ok_or(KernelError::Missing { tensor: "input 0" })
}

/// Output 0 and output 1, both mutable.
fn two_outputs<'o, 'a>(
    outputs: &'o mut [Out<'a>],
) -> (Option<&'o mut Out<'a>>, Option<&'o mut Out<'a>>) {
    let mut it = outputs.iter_mut();
    (it.next(), it.next())
}

/// Writes a bool output (viewed as `u8`).
fn set_flag(out: Option<&mut Out<'_>>, value: bool) -> Result<(), KernelError> {
    let flag = typed_elements!(out, U8, "output 1 (bool)");
    let first = flag.first_mut().ok_or(KernelError::Shape {
        what: "an empty bool output",
    })?;
    *first = u8::from(value);
    Ok(())
}

/// Kernels of input 0 of element type `$in` and output 0 of `$out`: each binds `$x` and
/// `$y` to their elements (and its `let`s between them, read before the output is
/// borrowed), then runs `$body`.
macro_rules! kernels {
    ($op:ident, $x:ident, $y:ident; $($(#[$doc:meta])* $f:ident($o:ident: $options:ty) $in:ident -> $out:ident
     { $(let $name:ident = $value:expr;)* } => $body:expr;)*) => {
        $(
            $(#[$doc])*
            pub(crate) fn $f($op: OpView<'_, '_>, $o: &$options) -> Result<(), KernelError> {
                let _ = $o;
                let $x = typed_input!($op, 0, $in, "input 0");
                $(let $name = $value;)*
                let $y = typed_elements!($op.outputs.first_mut(), $out, "output 0");
                $body
            }
        )*
    };
}

kernels! {
    op, x, y;

    /// `SignalWindow`, int16: input 1 the window's weights.
    signal_window(options: o::SignalWindowOptions) I16 -> I16 {
        let w = typed_input!(op, 1, I16, "input 1 (weights)");
    } => window::window(x, w, options.shift, y);

    /// `SignalEnergy`: int16 complex bins to uint32 energies.
    signal_energy(options: o::SignalEnergyOptions) I16 -> U32 {}
        => energy::energy(x, options.start_index, options.end_index, y);

    /// `SignalFilterBank`: uint32 bins to uint64 channels, through five int16 tables.
    signal_filter_bank(options: o::SignalFilterBankOptions) U32 -> U64 {
        let tables = filter_bank::FilterBankTables {
            weights: typed_input!(op, 1, I16, "input 1 (weights)"),
            unweights: typed_input!(op, 2, I16, "input 2 (unweights)"),
            channel_frequency_starts: typed_input!(op, 3, I16, "input 3 (channel frequency starts)"),
            channel_weight_starts: typed_input!(op, 4, I16, "input 4 (channel weight starts)"),
            channel_widths: typed_input!(op, 5, I16, "input 5 (channel widths)"),
        };
    } => filter_bank::filter_bank(x, &tables, options.num_channels, y);

    /// `SignalFilterBankSquareRoot`: uint64 to uint32, input 1 the scale's bits.
    signal_filter_bank_square_root(options: o::NoOptions) U64 -> U32 {
        let bits = *typed_input!(op, 1, I32, "input 1 (scale bits)")
            .first()
            .ok_or(KernelError::Missing { tensor: "input 1 (scale bits)" })?;
    } => filter_bank_square_root::filter_bank_square_root(x, bits, y);

    /// `SignalFilterBankLog`: uint32 to int16.
    signal_filter_bank_log(options: o::SignalFilterBankLogOptions) U32 -> I16 {}
        => filter_bank_log::filter_bank_log(x, options.output_scale, options.input_correction_bits, y);

    /// `SignalPCAN`: uint32 channels, their uint32 noise estimate (input 1) and an int16
    /// gain table (input 2).
    signal_pcan(options: o::SignalPcanOptions) U32 -> U32 {
        let noise = typed_input!(op, 1, U32, "input 1 (noise estimate)");
        let lut = typed_input!(op, 2, I16, "input 2 (gain table)");
    } => pcan::pcan(x, noise, lut, options.snr_shift, y);
}

/// `SignalFilterBankSpectralSubtraction`: uint32 channels, the noise estimate (output 1)
/// and its state.
pub(crate) fn signal_filter_bank_spectral_subtraction(
    op: OpView<'_, '_>,
    options: &o::SignalSpectralSubtractionOptions,
) -> Result<(), KernelError> {
    let x = typed_input!(op, 0, U32, "input 0");
    let state = typed_elements!(op.variables.first_mut(), U32, "the noise estimate state");
    let (y, noise) = two_outputs(op.outputs);
    let y = typed_elements!(y, U32, "output 0");
    let noise = typed_elements!(noise, U32, "output 1 (noise estimate)");
    spectral_subtraction::spectral_subtraction(options, x, y, noise, state)
}

/// `SignalDelay`, int16, its delay line the op's state (none for a delay of 0).
pub(crate) fn signal_delay(
    op: OpView<'_, '_>,
    options: &o::SignalDelayOptions,
) -> Result<(), KernelError> {
    let x = typed_input!(op, 0, I16, "input 0");
    let dims = shape(&op)?;
    let state: &mut [i16] = match op.variables.first_mut() {
        None => &mut [],
        some => typed_elements!(some, I16, "the delay line state"),
    };
    let y = typed_elements!(op.outputs.first_mut(), I16, "output 0");
    delay::delay(options.delay_length, x, dims, y, state)
}

/// Framing kernels (the framer, the stacker), int16: each binds `$x` to input 0, `$dims` to
/// its shape and `$io` to what it writes (output 0, and the sample and counter state: op
/// variables 0 and 1, named `$samples` and `$counters` in errors), then runs `$run`, which
/// gives the valid flag, written to output 1.
macro_rules! framing_kernels {
    ($o:ident; $($(#[$doc:meta])* $f:ident($options:ty, $samples:literal, $counters:literal)
     |$x:ident, $dims:pat, $io:ident| $run:expr;)*) => {
        $(
            $(#[$doc])*
            pub(crate) fn $f(op: OpView<'_, '_>, $o: &$options) -> Result<(), KernelError> {
                let $x = typed_input!(op, 0, I16, "input 0");
                let $dims = shape(&op)?;
                let mut states = op.variables.iter_mut();
                let samples = typed_elements!(states.next(), I16, $samples);
                let counters = typed_elements!(states.next(), I32, $counters);
                let (y, flag) = two_outputs(op.outputs);
                let y = typed_elements!(y, I16, "output 0");
                let $io = framer::Framing::new(y, samples, counters);
                set_flag(flag, $run?)
            }
        )*
    };
}

framing_kernels! {
    options;

    /// `SignalFramer`, int16: frames (output 0) and whether they are valid (output 1).
    signal_framer(o::SignalFramerOptions, "the framer's sample state", "the framer's counter state")
        |x, dims, io| framer::framer(options, x, dims, io);

    /// `SignalStacker`, int16: the stacked window (output 0) and whether it is valid (output
    /// 1).
    signal_stacker(o::SignalStackerOptions, "the stacker's sample state", "the stacker's counter state")
        |x, _, io| stacker::stacker(options, x, io);
}

/// `SignalOverlapAdd`, int16 or float32, its accumulator the op's state.
pub(crate) fn signal_overlap_add(
    op: OpView<'_, '_>,
    options: &o::SignalOverlapAddOptions,
) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let step = options.frame_step;
    match x.data {
        Data::I16(v) => {
            let state = typed_elements!(op.variables.first_mut(), I16, "the overlap-add state");
            let y = typed_elements!(op.outputs.first_mut(), I16, "output 0");
            overlap_add::overlap_add(step, v, x.shape, y, state)
        }
        Data::F32(v) => {
            let state = typed_elements!(op.variables.first_mut(), F32, "the overlap-add state");
            let y = typed_elements!(op.outputs.first_mut(), F32, "output 0");
            overlap_add::overlap_add(step, v, x.shape, y, state)
        }
        _ => Err(KernelError::Type { tensor: "input 0" }),
    }
}

/// An FFT over input 0 with its state (op variable 0) and output 0, of one element type
/// (int16, int32 or float32): the state is computed at the op's first run (a zeroed
/// state's first twiddle, `e^0 = 1`, is 0: not computed yet, as after `init()`), then
/// `run(fft_length, state, input, input's last dimension, output)`.
macro_rules! fft_op {
    ($op:ident, $options:ident, $init:path, $run:expr) => {{
        let x = $op
            .input(0)
            .ok_or(KernelError::Missing { tensor: "input 0" })?;
        let n = usize::try_from($options.fft_length).map_err(|_| KernelError::Options {
            what: "a negative fft_length",
        })?;
        let row = *x.shape.last().ok_or(KernelError::Shape {
            what: "a scalar FFT input",
        })?;
        let state = $op.variables.first_mut();
        let y = $op.outputs.first_mut();
        match x.data {
            Data::I16(v) => fft_op!(@typed I16, $init, $run, n, state, v, row, y),
            Data::I32(v) => fft_op!(@typed I32, $init, $run, n, state, v, row, y),
            Data::F32(v) => fft_op!(@typed F32, $init, $run, n, state, v, row, y),
            _ => Err(KernelError::Type { tensor: "input 0" }),
        }
    }};
    (@typed $v:ident, $init:path, $run:expr, $n:ident, $state:ident, $x:ident, $row:ident, $y:ident) => {{
        let state = typed_elements!($state, $v, "the FFT state");
        if state.first().is_some_and(|t| *t == Default::default()) {
            $init($n, &mut *state)?;
        }
        let y = typed_elements!($y, $v, "output 0");
        $run($n, state, $x, $row, y)
    }};
}

/// `SignalRfft`, int16, int32 or float32: each row of input 0, zero-padded to
/// `fft_length`, to `fft_length / 2 + 1` interleaved complex values.
pub(crate) fn signal_rfft(
    op: OpView<'_, '_>,
    options: &o::SignalFftOptions,
) -> Result<(), KernelError> {
    fft_op!(op, options, fft::rfft_init, fft::rfft)
}

/// `SignalIrfft`, int16, int32 or float32: rows of `fft_length / 2 + 1` interleaved complex
/// values to `fft_length` real ones.
pub(crate) fn signal_irfft(
    op: OpView<'_, '_>,
    options: &o::SignalFftOptions,
) -> Result<(), KernelError> {
    fft_op!(op, options, fft::irfft_init, |n, s, v, _row, y| fft::irfft(
        n, s, v, y
    ))
}

/// `SignalFftAutoScale`, int16: input 0 shifted left as far as its largest magnitude
/// allows (output 0) and the shift (output 1, int32).
pub(crate) fn signal_fft_auto_scale(
    op: OpView<'_, '_>,
    _: &o::NoOptions,
) -> Result<(), KernelError> {
    let x = typed_input!(op, 0, I16, "input 0");
    let (y, shift) = two_outputs(op.outputs);
    let y = typed_elements!(y, I16, "output 0");
    let shift = typed_elements!(shift, I32, "output 1 (scale bits)");
    fft::fft_auto_scale(x, y, shift)
}

#[cfg(test)]
mod tests {
    use planner_rt::op_kinds::{StateTensor, state};
    use planner_rt::options::{self as o, OpOptions};

    /// The element counts of the plan's state tensors for `options` over `input`.
    fn plan(options: OpOptions, input: &[usize]) -> [usize; 2] {
        state(&options, input)
            .expect("a valid state")
            .map(|t: Option<StateTensor>| t.map_or(0, |t| t.elements))
    }

    /// The state the planner allocates (`planner_rt::op_kinds::state`) is the state each
    /// kernel asks for, over a spread of options and shapes.
    #[test]
    fn the_plans_state_is_the_kernels() {
        for (rows, frame) in [(1, 4), (3, 5), (2, 16)] {
            for delay_length in [1, 3, 7] {
                let opts = OpOptions::SignalDelay(o::SignalDelayOptions { delay_length });
                let want = super::delay::delay_state_len(delay_length, &[rows, frame]);
                assert_eq!(plan(opts, &[rows, frame]), [want, 0]);
            }
            for (frame_size, frame_step, prefill) in [(5, 2, false), (4, 4, true), (7, 3, true)] {
                let opts_f = o::SignalFramerOptions {
                    frame_size,
                    frame_step,
                    prefill,
                };
                let opts = OpOptions::SignalFramer(opts_f);
                let shape = [rows, frame_step as usize * 2];
                let want = [
                    super::framer::framer_state_len(&opts_f, &shape),
                    super::framer::framer_counters_len(&shape),
                ];
                assert_eq!(plan(opts, &shape), want);
            }
            let shape = [rows, 3, frame];
            let opts = OpOptions::SignalOverlapAdd(o::SignalOverlapAddOptions { frame_step: 2 });
            assert_eq!(
                plan(opts, &shape),
                [super::overlap_add::overlap_add_state_len(&shape), 0]
            );
        }
        for (left, right, step) in [(0, 0, 1), (2, 1, 2), (3, 0, 4)] {
            let k = o::SignalStackerOptions {
                num_channels: 5,
                stacker_left_context: left,
                stacker_right_context: right,
                stacker_step: step,
            };
            let opts = OpOptions::SignalStacker(k);
            let want = [
                super::stacker::stacker_state_len(&k),
                super::stacker::STACKER_COUNTERS_LEN,
            ];
            assert_eq!(plan(opts, &[5]), want);
        }
        for num_channels in [1, 13, 40] {
            let k = o::SignalSpectralSubtractionOptions {
                num_channels,
                ..Default::default()
            };
            let opts = OpOptions::SignalFilterBankSpectralSubtraction(k);
            let want = super::spectral_subtraction::spectral_subtraction_state_len(&k);
            assert_eq!(plan(opts, &[num_channels as usize]), [want, 0]);
        }
        for fft_length in [4, 6, 16, 30, 512] {
            let opts = o::SignalFftOptions { fft_length };
            let n = fft_length as usize;
            assert_eq!(
                plan(OpOptions::SignalRfft(opts), &[n]),
                [super::fft::rfft_state_len(n), 0]
            );
            assert_eq!(
                plan(OpOptions::SignalIrfft(opts), &[n + 2]),
                [super::fft::irfft_state_len(n), 0]
            );
        }
    }
}
