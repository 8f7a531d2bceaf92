#!/usr/bin/env python3
"""Multi-op models built like real ones, for the per-op golden tests of `tests/run-models`.

Writes three models to `tests/run-models/single/` (named `op_sig_*` so that they sort with
the one-op signal models; `scripts/tflm_op_goldens.py --only <stem>` makes their goldens):

* `op_sig_frontend.tflite`: the audio front end of TFLM's micro_speech example (its
  `audio_preprocessor.py`, float output) with the example's parameters, preceded by a
  `SignalFramer` that cuts 30 ms windows every 20 ms out of 20 ms of int16 audio, and
  followed (on a second output) by a `SignalStacker` of the log features with two frames of
  left context:

      audio i16[320] -> SignalFramer(480, 320, prefill) -> SignalWindow(Hann, Q12, shift 12)
      -> RESHAPE[-1] -> SignalFftAutoScale -> SignalRfft(512) -> SignalEnergy(0, 257)
      -> CAST i32 -> STRIDED_SLICE[5:241] -> CONCATENATION(zeros 5, ., zeros 16)
      -> CAST u32 -> SignalFilterBank(40 mel channels, 125..7500 Hz)
      -> SignalFilterBankSquareRoot(auto scale's shift) -> SignalFilterBankSpectralSubtraction
      -> SignalPCAN(strength 0.95, offset 80, gain bits 21) -> SignalFilterBankLog(3, 64)
      -> CAST f32 -> MUL 1/25.6                                   (features, f32[40])
      SignalFilterBankLog -> SignalStacker(40, left 2, right 0, step 1)  (stacked, i16[120])

  The example's int8 output instead ends in CAST i32 -> MUL 256 -> ADD 333 -> DIV 666 ->
  ADD -128 -> MINIMUM 127 -> MAXIMUM -128 -> CAST i8, int32 arithmetic the kernels here do
  not have yet (int32 MUL, ADD, DIV, MINIMUM, MAXIMUM): `--int8-tail PATH` writes that
  variant to PATH (not to the test models).

  The example's SignalEnergy computes bins 5..241 only (the slice and concatenation then
  zero the others); here it computes all 257 (the same features): the op-golden test
  compares every element of the energy's output, and TFLM leaves the 21 others as the
  arena held them (garbage: 0x67f03d2c at element 0 of the first run).

  The tables are computed here as TFLM's Python helpers compute them (the mel filter bank's
  layout with 4-byte alignment and blocks of 4, its float32 mel scale; the Hann weights; the
  PCAN gain LUT's quadratic pieces); `--compare MODEL` checks them against the constants of
  a model the example's script wrote (`audio_preprocessor_int8.tflite`).

* `op_sig_synthesis.tflite`: a noise-suppression style analysis / synthesis chain (int16,
  8 ms hops of 16 kHz audio, 16 ms square-root Hann windows so that analysis times synthesis
  window overlap-adds to a constant), a fixed per-bin spectral gain where a suppressor
  would apply its computed one, and the dry signal delayed by the chain's latency and
  mixed in:

      audio i16[128] -> SignalFramer(256, 128, prefill) -> SignalWindow(sqrt Hann, Q14, 14)
      -> RESHAPE[-1] -> SignalRfft(256) -> CAST f32 -> MUL gain(per bin) -> CAST i16
      -> SignalIrfft(256) -> SignalWindow(sqrt Hann, Q14, 14) -> RESHAPE[1, 256]
      -> SignalOverlapAdd(step 128) -> CAST f32 -> MUL 32 -> ADD -> CAST i16 (output, i16[128])
      audio -> SignalDelay(128) -> CAST f32 -> MUL 1/8 -> (the ADD above)

* `op_sig_float_lstm_ops.tflite`: NOT a signal model. A float32 Keras-style LSTM (4 inputs,
  8 units, 3 time steps) written out op by op as the TF converter writes an unfused
  LSTM, then a dense layer and a softmax: TRANSPOSE to time-major, UNPACK the steps, the
  zero states from FILL, per step FULLY_CONNECTED (input and recurrent kernels), ADD, SPLIT
  into the i, f, g, o gates, LOGISTIC / TANH, MUL and ADD for the cell and hidden states;
  PACK of the hidden states (the sequence output), and a RESHAPE whose shape is computed
  from SHAPE -> STRIDED_SLICE -> PACK (the batch size, as `tf.reshape(h, [tf.shape(x)[0],
  -1])` converts): the planner must see that it is static.

The script runs every model three times in the `tflite_micro` interpreter as a check
(the framer's and the stacker's valid flags must be set every run, so that every output
element is written). The models are built with `tflm_custom_ops.py`'s `Graph`.

    python3 scripts/tflm_signal_models.py [--compare audio_preprocessor_int8.tflite]
    python3 scripts/tflm_op_goldens.py --only op_sig_frontend   # and the others
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

import tflm_custom_ops as custom
from tflm_custom_ops import runtime, s

OUT = custom.ROOT / "tests" / "run-models" / "single"

B = s.BuiltinOperator
O = s.BuiltinOptions
I16, I32, U32, U64, F32, I8, BOOL = (np.int16, np.int32, np.uint32, np.uint64, np.float32,
                                     np.int8, np.bool_)
# TensorType codes, as the FFT and overlap-add ops' "T" option gives the element type.
T_INT16 = custom.TYPE_CODES[np.int16]


class Graph(custom.Graph):
    """A one-subgraph model of several ops (builtin and custom) under construction, with
    the builtins these models use."""

    # Builtins with their options.

    def cast(self, x, name, shape, dtype):
        return self.builtin(B.CAST, [x], [self.tensor(name, shape, dtype)])

    def arith(self, builtin, a, b, name, shape, dtype):
        if builtin == B.ADD:
            o, ot = s.AddOptionsT(), O.AddOptions
        elif builtin == B.MUL:
            o, ot = s.MulOptionsT(), O.MulOptions
        elif builtin == B.DIV:
            o, ot = s.DivOptionsT(), O.DivOptions
        else:
            o, ot = None, 0
        return self.builtin(builtin, [a, b], [self.tensor(name, shape, dtype)], ot, o)

    def reshape(self, x, name, shape, new_shape, dtype, shape_tensor=None):
        if shape_tensor is None:
            shape_tensor = self.const(f"{name}/shape", new_shape, I32)
        o = s.ReshapeOptionsT()
        o.newShape = list(new_shape)
        return self.builtin(B.RESHAPE, [x, shape_tensor], [self.tensor(name, shape, dtype)],
                            O.ReshapeOptions, o)


# ---- the front end's tables ----------------------------------------------------------------

def freq_to_mel(freq):
    """TFLM's float32 mel scale: 1127 * log1p(freq / 700), in float32."""
    f = np.float32(freq)
    return np.float32(np.float32(1127.0) * np.log1p(np.float32(f / np.float32(700.0))))


def hann(length, shift):
    """Hann weights sampled at the centres of the samples, rounded to Q`shift`."""
    n = np.arange(length)
    w = 0.5 - 0.5 * np.cos(2 * np.pi / length * (n + 0.5))
    return np.round(w * (1 << shift)).astype(np.int16)


def sqrt_hann(length, shift):
    """The square root of `hann`: sin(pi (n + 0.5) / length), rounded to Q`shift`."""
    n = np.arange(length)
    return np.round(np.sin(np.pi / length * (n + 0.5)) * (1 << shift)).astype(np.int16)


def mel_filter_bank(spectrum, rate, channels, lo_hz, hi_hz, alignment, block, bits=12):
    """The `SignalFilterBank` tables as TFLM's Python helper lays them out: per channel (and
    one more, the last channel's upper half), its first spectrum bin rounded down to the
    alignment, its first weight and its width padded to a multiple of `block` (channels
    without any bin point at `block` zero weights at the start); Q`bits` weights of the
    rising edge of each triangle and their complements. Returns the tables and the
    range of bins the channels read, `(start, end)`."""
    align = max(1, alignment // 2)  # int16 weights
    mel_lo, mel_hi = freq_to_mel(lo_hz), freq_to_mel(hi_hz)
    spacing = np.float32((mel_hi - mel_lo) / np.float32(channels + 1))
    centres = (mel_lo + spacing * np.arange(1, channels + 2, dtype=np.float32)).astype(
        np.float32)
    hz_per_bin = (rate / 2) / (spectrum - 1)
    start = round(1 + lo_hz / hz_per_bin)
    n = channels + 1
    freq_starts = np.zeros(n, np.int16)
    weight_starts = np.zeros(n, np.int16)
    widths = np.zeros(n, np.int16)
    bins = []  # per channel: its first bin and number of bins
    first, next_weight, zeros_added = start, 0, False
    for c in range(n):
        k = first
        while freq_to_mel(k * hz_per_bin) <= centres[c]:
            k += 1
        width = k - first
        bins.append((first, width))
        if width == 0:
            freq_starts[c], weight_starts[c], widths[c] = 0, 0, block
            if not zeros_added:
                zeros_added = True
                weight_starts[:c] += block
                next_weight += block
        else:
            aligned = first // align * align
            padded = ((first - aligned + width - 1) // block + 1) * block
            freq_starts[c], weight_starts[c], widths[c] = aligned, next_weight, padded
            next_weight += padded
        first = k
    weights = np.zeros(next_weight, np.int16)
    unweights = np.zeros(next_weight, np.int16)
    end = 0
    for c in range(n):
        f0, width = bins[c]
        below = mel_lo if c == 0 else centres[c - 1]
        for j in range(width):
            k = f0 + j
            w = np.float32(np.float32(centres[c] - freq_to_mel(k * hz_per_bin))
                           / np.float32(centres[c] - below))
            at = int(weight_starts[c]) + (f0 - int(freq_starts[c])) + j
            weights[at] = int(w * (1 << bits))
            unweights[at] = int((1 - w) * (1 << bits))
        end = max(end, f0 + width)
    assert end < spectrum
    return (weights, unweights, freq_starts, weight_starts, widths), (start, end)


# ---- the models ------------------------------------------------------------------------------

RATE = 16000
WINDOW = 480  # 30 ms
STRIDE = 320  # 20 ms
CHANNELS = 40
FFT = 512
SCALING_BITS = 12  # the filter bank's weights, and so the square root's halving
LO_HZ, HI_HZ = 125.0, 7500.0


def frontend_tables():
    spectrum = FFT // 2 + 1
    tables, (start, end) = mel_filter_bank(spectrum, RATE, CHANNELS, LO_HZ, HI_HZ, 4, 4,
                                           SCALING_BITS)
    correction = int(math.log2(FFT)) - SCALING_BITS // 2
    lut = custom.pcan_gain_lut(0.95, 80.0, 10 - correction, 21)
    return hann(WINDOW, 12), tables, (start, end), correction, lut


def frontend(int8_tail=False):
    g = Graph("scripts/tflm_signal_models.py: micro_speech audio front end")
    window, tables, (start, end), correction, lut = frontend_tables()
    spectrum = FFT // 2 + 1
    audio = g.tensor("audio", [STRIDE], I16)
    frames = g.custom("SignalFramer", [audio],
                      [g.tensor("signal_framer", [1, WINDOW], I16),
                       g.tensor("signal_framer/valid", [], BOOL)],
                      {"frame_size": WINDOW, "frame_step": STRIDE, "prefill": True})[0]
    w = g.custom("SignalWindow", [frames, g.const("hann_window_weights", window, I16)],
                 [g.tensor("signal_window", [1, WINDOW], I16)], {"shift": 12})
    flat = g.reshape(w, "Reshape", [WINDOW], [-1], I16)
    scaled, shift = g.custom("SignalFftAutoScale", [flat],
                             [g.tensor("signal_fft_auto_scale", [WINDOW], I16),
                              g.tensor("signal_fft_auto_scale/shift", [], I32)])
    spec = g.custom("SignalRfft", [scaled], [g.tensor("signal_rfft", [FFT + 2], I16)],
                    {"T": T_INT16, "fft_length": FFT})
    # The example's energy op computes bins [start, end) only and leaves the others as the
    # arena held them (the STRIDED_SLICE and CONCATENATION below zero them); here it
    # computes every bin (the chain's output is the same), as the op-golden test compares
    # every element of every op output with TFLM's, leftovers included.
    energy = g.custom("SignalEnergy", [spec], [g.tensor("signal_energy", [spectrum], U32)],
                      {"start_index": 0, "end_index": spectrum})
    # Zero the bins outside [start, end), which the filter bank does not read.
    e32 = g.cast(energy, "Cast", [spectrum], I32)
    ss = s.StridedSliceOptionsT()
    band = g.builtin(B.STRIDED_SLICE,
                     [e32, g.const("strided_slice/begin", [start], I32),
                      g.const("strided_slice/end", [end], I32),
                      g.const("strided_slice/strides", [1], I32)],
                     [g.tensor("strided_slice", [end - start], I32)], O.StridedSliceOptions,
                     ss)
    co = s.ConcatenationOptionsT()
    co.axis = 0
    full = g.builtin(B.CONCATENATION,
                     [g.const("zeros_head", np.zeros(start), I32), band,
                      g.const("zeros_tail", np.zeros(spectrum - end), I32)],
                     [g.tensor("concat", [spectrum], I32)], O.ConcatenationOptions, co)
    eu = g.cast(full, "Cast_1", [spectrum], U32)
    weights, unweights, freq_starts, weight_starts, widths = tables
    fb = g.custom("SignalFilterBank",
                  [eu, g.const("filter_bank/weights", weights, I16),
                   g.const("filter_bank/unweights", unweights, I16),
                   g.const("filter_bank/channel_frequency_starts", freq_starts, I16),
                   g.const("filter_bank/channel_weight_starts", weight_starts, I16),
                   g.const("filter_bank/channel_widths", widths, I16)],
                  [g.tensor("signal_filter_bank", [CHANNELS], U64)],
                  {"num_channels": CHANNELS})
    sq = g.custom("SignalFilterBankSquareRoot", [fb, shift],
                  [g.tensor("signal_filter_bank_square_root", [CHANNELS], U32)])
    bits = 14
    one = 1 << bits
    smoothing, alternate, remaining = int(0.025 * one), int(0.06 * one), int(0.05 * one)
    noise, estimate = g.custom(
        "SignalFilterBankSpectralSubtraction", [sq],
        [g.tensor("signal_filter_bank_spectral_subtraction", [CHANNELS], U32),
         g.tensor("signal_filter_bank_spectral_subtraction/noise_estimate", [CHANNELS], U32)],
        {"num_channels": CHANNELS, "smoothing": smoothing,
         "one_minus_smoothing": one - smoothing, "alternate_smoothing": alternate,
         "alternate_one_minus_smoothing": one - alternate, "smoothing_bits": 10,
         "min_signal_remaining": remaining, "clamping": False,
         "spectral_subtraction_bits": bits})
    agc = g.custom("SignalPCAN", [noise, estimate, g.const("pcan/gain_lut", lut, I16)],
                   [g.tensor("signal_pcan", [CHANNELS], U32)],
                   {"snr_shift": 21 - correction - 12})
    log = g.custom("SignalFilterBankLog", [agc],
                   [g.tensor("signal_filter_bank_log", [CHANNELS], I16)],
                   {"input_correction_bits": correction, "output_scale": 1 << 6})
    if int8_tail:
        # The example's int8 features: (feature * 256 + 333) / 666 - 128, clamped, in int32.
        v = g.cast(log, "Cast_2", [CHANNELS], I32)
        v = g.arith(B.MUL, v, g.const("value_scale", 256, I32), "mul", [CHANNELS], I32)
        v = g.arith(B.ADD, v, g.const("half_div", 333, I32), "add", [CHANNELS], I32)
        v = g.arith(B.DIV, v, g.const("value_div", 666, I32), "TruncateDiv", [CHANNELS], I32)
        v = g.arith(B.ADD, v, g.const("offset", -128, I32), "add_1", [CHANNELS], I32)
        v = g.arith(B.MINIMUM, v, g.const("clip_max", 127, I32), "clip_by_value/Minimum",
                    [CHANNELS], I32)
        v = g.arith(B.MAXIMUM, v, g.const("clip_min", -128, I32), "clip_by_value",
                    [CHANNELS], I32)
        features = g.cast(v, "features", [CHANNELS], I8)
    else:
        # The example's float features: feature / 25.6, as a float MUL by 1 / 25.6.
        v = g.cast(log, "Cast_2", [CHANNELS], F32)
        features = g.arith(B.MUL, v, g.const("truediv/y", np.float32(1 / 25.6), F32),
                           "features", [CHANNELS], F32)
    stacked, _valid = g.custom("SignalStacker", [log],
                               [g.tensor("signal_stacker", [3 * CHANNELS], I16),
                                g.tensor("signal_stacker/valid", [], BOOL)],
                               {"num_channels": CHANNELS, "stacker_left_context": 2,
                                "stacker_right_context": 0, "stacker_step": 1})
    return g.model([audio], [features, stacked])


HOP = 128
FRAME = 256


def spectral_gain():
    """A fixed per-bin gain (what a suppressor would compute per frame): bins below
    ~190 Hz cut, a gentle tilt above; interleaved (real, imaginary) like the RFFT's output."""
    bins = FRAME // 2 + 1
    hz = np.arange(bins) * RATE / FRAME
    gain = np.where(hz < 190, 0.1, 1.5 - 0.5 * hz / (RATE / 2))
    return np.repeat(gain.astype(np.float32), 2)


def synthesis():
    g = Graph("scripts/tflm_signal_models.py: analysis / synthesis chain")
    window = sqrt_hann(FRAME, 14)
    audio = g.tensor("audio", [HOP], I16)
    frames = g.custom("SignalFramer", [audio],
                      [g.tensor("signal_framer", [1, FRAME], I16),
                       g.tensor("signal_framer/valid", [], BOOL)],
                      {"frame_size": FRAME, "frame_step": HOP, "prefill": True})[0]
    analysis_w = g.const("analysis_window", window, I16)
    w = g.custom("SignalWindow", [frames, analysis_w],
                 [g.tensor("analysis", [1, FRAME], I16)], {"shift": 14})
    flat = g.reshape(w, "Reshape", [FRAME], [-1], I16)
    spec = g.custom("SignalRfft", [flat], [g.tensor("signal_rfft", [FRAME + 2], I16)],
                    {"T": T_INT16, "fft_length": FRAME})
    n = FRAME + 2
    sf = g.cast(spec, "spectrum_f32", [n], F32)
    sf = g.arith(B.MUL, sf, g.const("spectral_gain", spectral_gain(), F32), "gained", [n],
                 F32)
    s16 = g.cast(sf, "gained_i16", [n], I16)
    time = g.custom("SignalIrfft", [s16], [g.tensor("signal_irfft", [FRAME], I16)],
                    {"T": T_INT16, "fft_length": FRAME})
    synth_w = g.const("synthesis_window", window, I16)
    y = g.custom("SignalWindow", [time, synth_w], [g.tensor("synthesis", [FRAME], I16)],
                 {"shift": 14})
    y = g.reshape(y, "Reshape_1", [1, FRAME], [1, FRAME], I16)
    wet = g.custom("SignalOverlapAdd", [y], [g.tensor("signal_overlap_add", [HOP], I16)],
                   {"T": T_INT16, "frame_step": HOP})
    dry = g.custom("SignalDelay", [audio], [g.tensor("signal_delay", [HOP], I16)],
                   {"delay_length": FRAME - HOP})
    # The round trip scales by 1/256 (the int16 FFTs' scaling): bring the wet signal up,
    # mix in the dry signal at -18 dB (in float: the int32 MUL and ADD, and MINIMUM and
    # MAXIMUM of anything but int8, have no kernels here yet).
    wet = g.cast(wet, "wet_f32", [HOP], F32)
    wet = g.arith(B.MUL, wet, g.const("wet_gain", np.float32(32), F32), "wet_scaled", [HOP],
                  F32)
    dry = g.cast(dry, "dry_f32", [HOP], F32)
    dry = g.arith(B.MUL, dry, g.const("dry_gain", np.float32(0.125), F32), "dry_scaled",
                  [HOP], F32)
    mix = g.arith(B.ADD, wet, dry, "mix", [HOP], F32)
    out = g.cast(mix, "output", [HOP], I16)
    return g.model([audio], [out])


def float_lstm():
    """A Keras LSTM(8) over 3 steps of 4 features, unrolled into ops, then Dense(5) and a
    softmax (not a signal model)."""
    steps, feats, units, classes = 3, 4, 8, 5
    rng = np.random.default_rng(20261207)
    g = Graph("scripts/tflm_signal_models.py: unrolled float LSTM (not a signal model) "
              "float_range=-1:1")
    x = g.tensor("input", [1, steps, feats], F32)
    # Time-major, then one tensor per step.
    xt = g.builtin(B.TRANSPOSE, [x, g.const("transpose/perm", [1, 0, 2], I32)],
                   [g.tensor("transpose", [steps, 1, feats], F32)])
    uo = s.UnpackOptionsT()
    uo.num, uo.axis = steps, 0
    xs = g.builtin(B.UNPACK, [xt], [g.tensor(f"unstack:{t}", [1, feats], F32)
                                    for t in range(steps)], O.UnpackOptions, uo)
    # Zero initial states: tf.zeros([1, units]).
    dims = g.const("zeros/shape", [1, units], I32)
    zero = g.const("zeros/value", np.float32(0.0), F32)
    h = g.builtin(B.FILL, [dims, zero], [g.tensor("h0", [1, units], F32)])
    c = g.builtin(B.FILL, [dims, zero], [g.tensor("c0", [1, units], F32)])
    kernel = g.const("lstm/kernel", rng.normal(0, 0.6, (4 * units, feats)), F32)
    recurrent = g.const("lstm/recurrent_kernel", rng.normal(0, 0.4, (4 * units, units)), F32)
    bias = np.zeros(4 * units)
    bias[units:2 * units] = 1.0  # unit forget bias
    bias = g.const("lstm/bias", bias + rng.normal(0, 0.1, 4 * units), F32)
    axis = g.const("split/axis", np.int32(1), I32)
    hs = []
    for t in range(steps):
        fo = s.FullyConnectedOptionsT()
        zx = g.builtin(B.FULLY_CONNECTED, [xs[t], kernel, bias],
                       [g.tensor(f"step{t}/x_proj", [1, 4 * units], F32)],
                       O.FullyConnectedOptions, fo)
        zh = g.builtin(B.FULLY_CONNECTED, [h, recurrent, -1],
                       [g.tensor(f"step{t}/h_proj", [1, 4 * units], F32)],
                       O.FullyConnectedOptions, s.FullyConnectedOptionsT())
        z = g.arith(B.ADD, zx, zh, f"step{t}/z", [1, 4 * units], F32)
        so = s.SplitOptionsT()
        so.numSplits = 4
        gi, gf, gg, go = g.builtin(B.SPLIT, [axis, z],
                                   [g.tensor(f"step{t}/split:{k}", [1, units], F32)
                                    for k in range(4)], O.SplitOptions, so)
        i = g.builtin(B.LOGISTIC, [gi], [g.tensor(f"step{t}/i", [1, units], F32)])
        f = g.builtin(B.LOGISTIC, [gf], [g.tensor(f"step{t}/f", [1, units], F32)])
        cc = g.builtin(B.TANH, [gg], [g.tensor(f"step{t}/g", [1, units], F32)])
        o = g.builtin(B.LOGISTIC, [go], [g.tensor(f"step{t}/o", [1, units], F32)])
        fc = g.arith(B.MUL, f, c, f"step{t}/f_c", [1, units], F32)
        ig = g.arith(B.MUL, i, cc, f"step{t}/i_g", [1, units], F32)
        c = g.arith(B.ADD, fc, ig, f"step{t}/c", [1, units], F32)
        tc = g.builtin(B.TANH, [c], [g.tensor(f"step{t}/tanh_c", [1, units], F32)])
        h = g.arith(B.MUL, o, tc, f"step{t}/h", [1, units], F32)
        hs.append(h)
    po = s.PackOptionsT()
    po.valuesCount, po.axis = steps, 1
    seq = g.builtin(B.PACK, hs, [g.tensor("sequence", [1, steps, units], F32)],
                    O.PackOptions, po)
    # The batch size from the input's shape: tf.reshape(h, [tf.shape(x)[0], -1]).
    sho = s.ShapeOptionsT()
    sho.outType = s.TensorType.INT32
    shape = g.builtin(B.SHAPE, [x], [g.tensor("Shape", [3], I32)], O.ShapeOptions, sho)
    sso = s.StridedSliceOptionsT()
    sso.shrinkAxisMask = 1
    batch = g.builtin(B.STRIDED_SLICE,
                      [shape, g.const("batch/begin", [0], I32), g.const("batch/end", [1], I32),
                       g.const("batch/strides", [1], I32)],
                      [g.tensor("batch", [], I32)], O.StridedSliceOptions, sso)
    po2 = s.PackOptionsT()
    po2.valuesCount, po2.axis = 2, 0
    new_shape = g.builtin(B.PACK, [batch, g.const("minus_one", np.int32(-1), I32)],
                          [g.tensor("Reshape/shape", [2], I32)], O.PackOptions, po2)
    last = g.reshape(h, "Reshape", [1, units], [1, -1], F32, shape_tensor=new_shape)
    dense = g.const("dense/kernel", rng.normal(0, 0.8, (classes, units)), F32)
    dense_b = g.const("dense/bias", rng.normal(0, 0.1, classes), F32)
    logits = g.builtin(B.FULLY_CONNECTED, [last, dense, dense_b],
                       [g.tensor("logits", [1, classes], F32)], O.FullyConnectedOptions,
                       s.FullyConnectedOptionsT())
    smo = s.SoftmaxOptionsT()
    smo.beta = 1.0
    probs = g.builtin(B.SOFTMAX, [logits], [g.tensor("probs", [1, classes], F32)],
                      O.SoftmaxOptions, smo)
    return g.model([x], [probs, seq])


# ---- checks ---------------------------------------------------------------------------------

def check_runs(name, data, make_input, runs=3):
    """Runs the model `runs` times on one interpreter; the outputs must change from run to
    run and every valid flag (an output tensor named `.../valid`) must be set."""
    interp = custom.interpreter(
        data, arena_size=max(10 * len(data), 1 << 16),
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    model = s.Model.GetRootAsModel(data, 0).Subgraphs(0)
    valid = [i for i in range(model.TensorsLength())
             if model.Tensors(i).Name().decode().endswith("/valid")]
    seen = []
    for r in range(runs):
        outs = custom.invoke(interp, [make_input(r)], model.OutputsLength())
        for t in valid:
            assert bool(np.asarray(interp.GetTensor(t, 0)["tensor_data"]).reshape(-1)[0]), \
                (name, r, t)
        seen.append(outs)
        print(f"  run {r}: " + "; ".join(
            f"{o.dtype}{list(o.shape)} [{o.min()}, {o.max()}]" for o in outs))
    custom.assert_vary(name, seen)


def compare(path):
    """Compares the front end's tables with the constants of the example's model."""
    buf = Path(path).read_bytes()
    sub = s.Model.GetRootAsModel(buf, 0).Subgraphs(0)
    m = s.Model.GetRootAsModel(buf, 0)
    consts = {}
    for i in range(sub.TensorsLength()):
        t = sub.Tensors(i)
        data = m.Buffers(t.Buffer()).DataAsNumpy()
        if not isinstance(data, int) and t.Type() == s.TensorType.INT16:
            consts[t.Name().decode()] = np.frombuffer(data.tobytes(), np.int16)
    window, tables, _, _, lut = frontend_tables()
    ours = {"Const": window, "signal_pcan/Const": lut}
    for k, table in enumerate(tables):
        ours["signal_filter_bank/Const" + ("" if k == 0 else f"_{k}")] = table
    bad = 0
    for name, values in ours.items():
        theirs = consts.get(name)
        same = theirs is not None and np.array_equal(theirs, values)
        if not same:
            bad += 1
            diff = "missing" if theirs is None else np.flatnonzero(theirs != values)[:10]
            print(f"{name}: differs {diff}")
        else:
            print(f"{name}: equal ({len(values)} values)")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", help="an audio_preprocessor_int8.tflite to compare with")
    ap.add_argument("--int8-tail", metavar="PATH",
                    help="write the front end with the example's int8 tail (int32 MUL, ADD, "
                    "DIV, MINIMUM, MAXIMUM) to PATH instead")
    args = ap.parse_args()
    if args.compare:
        return 1 if compare(args.compare) else 0
    rng = np.random.default_rng(7)
    if args.int8_tail:
        data = frontend(int8_tail=True)
        Path(args.int8_tail).write_bytes(data)
        check_runs("frontend_int8", data,
                   lambda r: rng.integers(-8000, 8000, STRIDE).astype(np.int16))
        return 0
    models = [
        ("op_sig_frontend", frontend(),
         lambda r: rng.integers(-8000, 8000, STRIDE).astype(np.int16)),
        ("op_sig_synthesis", synthesis(),
         lambda r: rng.integers(-20000, 20000, HOP).astype(np.int16)),
        ("op_sig_float_lstm_ops", float_lstm(),
         lambda r: rng.uniform(-1, 1, (1, 3, 4)).astype(np.float32)),
    ]
    for name, data, make in models:
        path = custom.save_model(name, data, OUT)
        print(f"{path.relative_to(custom.ROOT)}: {len(data)} bytes")
        check_runs(name, data, make)
    return 0


if __name__ == "__main__":
    sys.exit(main())
