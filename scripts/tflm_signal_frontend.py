#!/usr/bin/env python3
"""One-op models and goldens of TFLM's signal front-end ops (the `Signal*` custom ops).

For each case, builds a model of one custom op (`SignalWindow`, `SignalEnergy`,
`SignalFilterBank`, `SignalFilterBankSquareRoot`, `SignalFilterBankLog`,
`SignalFilterBankSpectralSubtraction`, `SignalPCAN`) with its options as a flexbuffer map
and its tables as constants, runs it in the `tflite_micro` interpreter over several
consecutive runs (one interpreter, so state such as the spectral subtraction's noise
estimate carries from run to run), and writes

- `tests/run-models/single_signal/op_sig_<case>.tflite`, the model, and
- `planner-kernels/src/reference/signal/goldens/<case>.txt`, the golden the kernels'
  unit tests read (format below).

Golden format, one item a line, values as decimal integers separated by spaces:

    # comment
    op <custom code>
    opt <key> <value>             one per flexbuffer option (bool as 0 or 1)
    const <name> <values...>      a constant input (tables, weights, LUT, scale bits)
    run                           starts a run; runs are in order on one interpreter
    in <name> <values...>         a graph input of the run
    out <name> <values...>        an output of the run (elements TFLM does not write, which
                                  hold whatever the arena held, as 0: see `unwritten`)

The model building, the random inputs and the golden writing are `tflm_custom_ops.py`'s.

    python3 scripts/tflm_signal_frontend.py

CI needs neither this script nor Python: it reads the stored files.
"""

import numpy as np

import tflm_custom_ops as custom

SCRIPT = "scripts/tflm_signal_frontend.py"
RNG = custom.Random(20261207)
RUNS = 4
SIZES = []  # the goldens' sizes, case by case


def case(name, code, options, consts, inputs, outputs, runs, unwritten=None):
    """Builds, runs and stores one case: the op `code` with flexbuffer `options`, its
    inputs `consts` (position, name, dtype, shape, values: constants in the model) and
    `inputs` (position, name, dtype, shape: graph inputs, in `runs` order), its `outputs`
    (name, dtype, shape), over `runs` (each a list of the graph inputs' values) on one
    interpreter. `unwritten` maps an output's index to the slice of it the op leaves as it
    is (stored as 0, the arena's leftovers not being TFLM's result). Asserts each output
    differs from run to run. Records the golden's size in `SIZES`."""
    t = custom.Graph(SCRIPT)
    slots = {}
    for pos, cname, dtype, shape, values in consts:
        slots[pos] = t.tensor(cname, shape, dtype, data=np.asarray(values, dtype=dtype))
    for pos, iname, dtype, shape in inputs:
        slots[pos] = t.tensor(iname, shape, dtype)
    op_inputs = [slots[p] for p in sorted(slots)]
    op_outputs = [t.tensor(oname, shape, dtype) for oname, dtype, shape in outputs]
    data = t.one_op(code, op_inputs, op_outputs, options)

    interp = custom.interpreter(data)
    lines = [f"op {code}"]
    for k in sorted(options or {}):
        lines.append(f"opt {k} {int(options[k])}")
    for _pos, cname, dtype, shape, values in consts:
        lines.append(f"const {cname} {custom.values_text(np.asarray(values, dtype=dtype))}")
    seen = []
    for run in runs:
        lines.append("run")
        arrays = []
        for (_pos, iname, dtype, shape), value in zip(inputs, run):
            arrays.append(np.asarray(value, dtype=dtype).reshape(shape))
            lines.append(f"in {iname} {custom.values_text(arrays[-1])}")
        outs = []
        got = custom.invoke(interp, arrays, len(outputs))
        for j, ((oname, dtype, shape), o) in enumerate(zip(outputs, got)):
            o = o.reshape(-1)
            assert o.dtype == np.dtype(dtype), (name, o.dtype, dtype)
            if unwritten and j in unwritten:
                for part in unwritten[j]:
                    o[part] = 0
            outs.append(o)
            lines.append(f"out {oname} {custom.values_text(o)}")
        seen.append(outs)
    for j in range(len(outputs)):
        custom.assert_vary(f"{name} output {j}", [outs[j] for outs in seen])
    size = custom.write_case(name, data, lines, SCRIPT)
    print(f"{name}: {len(runs)} runs, {size} bytes")
    SIZES.append(size)


# ---- the ops ---------------------------------------------------------------------------

def window_cases():
    q14_hann = np.round(16384 * 0.5 * (1 - np.cos(2 * np.pi * np.arange(15) / 15))).astype(np.int16)
    specs = [
        ("window_shift12_frames", [3, 16], 16, 12, RNG.i16_full(16)),
        ("window_shift0_saturates", [24], 8, 0, RNG.i16_full(8)),
        ("window_shift31", [2, 7], 7, 31, RNG.i16_full(7)),
        ("window_hann15_shift14", [15], 15, 14, q14_hann),
        ("window_shift15_rank3", [2, 2, 5], 5, 15, RNG.i16_full(5)),
    ]
    for name, shape, wlen, shift, weights in specs:
        n = int(np.prod(shape))
        runs = [[RNG.i16_full(n)] for _ in range(RUNS)]
        case(name, "SignalWindow", {"shift": shift},
             [(1, "weights", np.int16, [wlen], weights)],
             [(0, "input", np.int16, shape)],
             [("output", np.int16, shape)], runs)


def energy_cases():
    specs = [
        ("energy_full33", 33, 0, 33),
        ("energy_part", 33, 4, 20),
        ("energy_odd9", 9, 1, 9),
        ("energy_one_bin", 17, 16, 17),
    ]
    for name, bins, start, end in specs:
        runs = [[RNG.i16_full(2 * bins)] for _ in range(RUNS)]
        case(name, "SignalEnergy", {"start_index": start, "end_index": end}, [],
             [(0, "input", np.int16, [2 * bins])],
             [("output", np.uint32, [bins])], runs,
             unwritten={0: [slice(0, start), slice(end, None)]})


def fbsqrt_cases():
    for name, n, scale, min_bits in [("fbsqrt_scale0", 40, 0, 0), ("fbsqrt_scale7", 23, 7, 0),
                                     ("fbsqrt_scale31", 16, 31, 60)]:
        runs = []
        for r in range(RUNS):
            v = RNG.u_bits(n, 64, np.uint64, min_bits)
            if r == 0:
                edges = [0, 1, 2, 3, 4, 2**32 - 1, 2**32, 2**64 - 1, 2**62, (2**32 - 1) ** 2,
                         (2**32 - 1) ** 2 - 1, (2**32 - 1) ** 2 + 1, 65535**2, 65535**2 + 1,
                         65536**2 - 1, 0xFFFF_FFFF_0000_0000]
                v[: len(edges)] = np.array(edges, dtype=np.uint64)[:n]
            runs.append([v])
        case(name, "SignalFilterBankSquareRoot", None,
             [(1, "scale_bits", np.int32, [], [scale])],
             [(0, "input", np.uint64, [n])],
             [("output", np.uint32, [n])], runs)


def mel_tables(channels, spectrum):
    """Contiguous triangular tables as TFLM's generator makes them (weights Q12)."""
    edges = np.linspace(1, spectrum - 1, channels + 2).astype(int)
    starts, wstarts, widths, weights, unweights = [], [], [], [], []
    for c in range(channels + 1):
        lo, hi = edges[c], edges[c + 1]
        starts.append(lo)
        wstarts.append(len(weights))
        widths.append(hi - lo)
        for j in range(hi - lo):
            w = int(4096 * (1 - (j + 0.5) / (hi - lo)))
            weights.append(w)
            unweights.append(4096 - w)
    return starts, wstarts, widths, weights, unweights


def random_tables(channels, spectrum, nweights):
    starts, wstarts, widths = [], [], []
    for _ in range(channels + 1):
        w = int(RNG.integers(-2, 9))
        fs = int(RNG.integers(0, spectrum - max(w, 0) + 1))
        ws = int(RNG.integers(0, nweights - max(w, 0) + 1))
        if w <= 0 and RNG.integers(0, 2):
            fs, ws = -5, -7  # never read: the width is not positive
        starts.append(fs)
        wstarts.append(ws)
        widths.append(w)
    return starts, wstarts, widths, RNG.i16_full(nweights), RNG.i16_full(nweights)


def filter_bank_case(name, channels, spectrum, tables, outlen, input_fn):
    starts, wstarts, widths, weights, unweights = tables
    consts = [
        (1, "weights", np.int16, [len(weights)], weights),
        (2, "unweights", np.int16, [len(unweights)], unweights),
        (3, "channel_frequency_starts", np.int16, [channels + 1], starts),
        (4, "channel_weight_starts", np.int16, [channels + 1], wstarts),
        (5, "channel_widths", np.int16, [channels + 1], widths),
    ]
    runs = [[input_fn(spectrum)] for _ in range(RUNS)]
    case(name, "SignalFilterBank", {"num_channels": channels}, consts,
         [(0, "input", np.uint32, [spectrum])],
         [("output", np.uint64, [outlen])], runs)


def filter_bank_cases():
    filter_bank_case("filter_bank_mel", 10, 65, mel_tables(10, 65), 10,
                     lambda n: RNG.u_bits(n, 32, np.uint32))
    filter_bank_case("filter_bank_signed_wraps", 9, 31, random_tables(9, 31, 40), 9,
                     lambda n: RNG.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32))
    filter_bank_case("filter_bank_short_output", 6, 20, random_tables(6, 20, 25), 4,
                     lambda n: RNG.u_bits(n, 32, np.uint32))
    filter_bank_case("filter_bank_max", 4, 40, mel_tables(4, 40), 4,
                     lambda n: np.full(n, 2**32 - 1, dtype=np.uint64).astype(np.uint32)
                     - RNG.integers(0, 3, size=n).astype(np.uint32))


def fblog_cases():
    specs = [
        ("fblog_typical", 40, 3, 1600),
        ("fblog_corr0_scale32768", 33, 0, 32768),
        ("fblog_corr31", 16, 31, 7),
        ("fblog_scale_wraps", 24, 0, 1 << 24),
        ("fblog_negative_scale", 12, 5, -3000),
    ]
    for name, n, corr, scale in specs:
        runs = []
        for r in range(RUNS):
            v = RNG.u_bits(n, 32, np.uint32)
            if r == 0:
                v[:6] = [0, 1, 2, 3, 2**31, 2**32 - 1]
            runs.append([v])
        case(name, "SignalFilterBankLog",
             {"input_correction_bits": corr, "output_scale": scale}, [],
             [(0, "input", np.uint32, [n])],
             [("output", np.int16, [n])], runs)


def specsub_options(n, smoothing, alt, smoothing_bits, min_remaining, clamping, bits):
    one = 1 << bits
    return {
        "num_channels": n,
        "smoothing": smoothing,
        "one_minus_smoothing": one - smoothing,
        "alternate_smoothing": alt,
        "alternate_one_minus_smoothing": one - alt,
        "smoothing_bits": smoothing_bits,
        "min_signal_remaining": min_remaining,
        "clamping": clamping,
        "spectral_subtraction_bits": bits,
    }


def specsub_cases():
    specs = [
        # The Python wrapper's defaults: smoothing 0.04, min remaining 0.05, 14 bits.
        ("specsub_typical", specsub_options(16, 655, 655, 10, 819, False, 14), 16, 22),
        ("specsub_clamping_alt_odd", specsub_options(13, 655, 8192, 0, 819, True, 14), 13, 32),
        ("specsub_wraps", dict(specsub_options(8, 0x7FFF_0000, 0x4000_0000, 31, 0x7FFF_FFFF,
                                               True, 33),
                               one_minus_smoothing=-1, alternate_one_minus_smoothing=123456789),
         8, 32),
        ("specsub_bits0", specsub_options(9, 1, 0, 3, 1, False, 0), 9, 29),
        ("specsub_fewer_channels", specsub_options(6, 3000, 12000, 4, 2000, True, 14), 10, 20),
        # Weights near 2³²: the uint64 sum of the two products wraps.
        ("specsub_sum_wraps", dict(specsub_options(7, -1, -2, 0, -1, False, 1),
                                   one_minus_smoothing=-1, alternate_one_minus_smoothing=-3),
         7, 32),
    ]
    for name, opts, n, in_bits in specs:
        runs = []
        level = RNG.u_bits(n, in_bits, np.uint64)
        for _ in range(RUNS + 2):
            # Slowly varying levels so the estimate goes above and below the signal.
            jitter = RNG.integers(0, 2**max(in_bits - 2, 1), size=n, dtype=np.uint64)
            runs.append([((level + jitter) % (1 << 32)).astype(np.uint32)])
            level = level // 2 if RNG.integers(0, 2) else level
        case(name, "SignalFilterBankSpectralSubtraction", opts, [],
             [(0, "input", np.uint32, [n])],
             [("output", np.uint32, [n]),
              ("noise_estimate", np.uint32, [opts["num_channels"]])],
             runs, unwritten={0: [slice(opts["num_channels"], None)]})


def extreme_lut():
    """A gain table of int16's extremes, both signs: the interpolation's largest products."""
    lut = RNG.choice(np.array([32767, -32768, 32767, 32767], dtype=np.int16), size=125)
    return lut.astype(np.int16)


def pcan_cases():
    specs = [
        ("pcan_typical", 20, 6, custom.pcan_gain_lut(0.95, 80.0, 7, 21), 26, 26),
        ("pcan_random_lut_shift0", 17, 0, RNG.i16_full(125), 20, 32),
        ("pcan_shift20", 12, 20, RNG.i16_full(125), 32, 32),
        ("pcan_odd_shift12", 9, 12, custom.pcan_gain_lut(0.5, 1.0, 4, 15), 32, 12),
        # Extreme coefficients and estimates of all ones below the top bit (f = 1023): the
        # interpolation's int32 products at their largest (just inside int32).
        ("pcan_interpolation_wraps", 16, 16, extreme_lut(), 32, 32),
    ]
    for name, n, shift, lut, in_bits, noise_bits in specs:
        runs = []
        for r in range(RUNS):
            noise = RNG.u_bits(n, noise_bits, np.uint32)
            if name == "pcan_interpolation_wraps":
                ones = (1 << RNG.integers(11, 33, size=n, dtype=np.uint64)) - 1
                noise[::2] = ones[::2].astype(np.uint32)
            if r == 0:
                noise[:4] = [0, 1, 2, 3]
            runs.append([RNG.u_bits(n, in_bits, np.uint32), noise])
        case(name, "SignalPCAN", {"snr_shift": shift},
             [(2, "gain_lut", np.int16, [len(lut)], lut)],
             [(0, "input", np.uint32, [n]), (1, "noise_estimate", np.uint32, [n])],
             [("output", np.uint32, [n])], runs)


def main():
    for group in (window_cases, energy_cases, fbsqrt_cases, filter_bank_cases, fblog_cases,
                  specsub_cases, pcan_cases):
        group()
    total = sum(SIZES)
    assert total < 400_000, total
    print(f"total {total} bytes")


if __name__ == "__main__":
    main()
