#!/usr/bin/env python3
"""One-op models and goldens of TFLM's signal FFT ops (`SignalRfft`, `SignalIrfft`,
`SignalFftAutoScale`).

For each case, builds a model of one custom op with its options as a flexbuffer map
(`T`: the element type as a TensorType, `fft_length`), runs it in the `tflite_micro`
interpreter over several consecutive runs with different random inputs (one interpreter,
so the op's state made at init serves every run; `tflm_custom_ops.py` builds the model,
draws the inputs and writes the files), and writes

- `tests/run-models/single_signal/op_sig_<case>.tflite`, the model, and
- `planner-kernels/src/reference/signal/goldens/<case>.txt`, the golden the kernels'
  unit tests read (format below).

Golden format, one item a line, values separated by spaces (integers in decimal, floats
as the shortest decimal that reads back to the same float32):

    # comment
    op <custom code>
    type <i16 | i32 | f32>          the element type of input and output 0
    opt <key> <value>               one per flexbuffer option other than T
    shape <in | out> <dims...>      the shapes of input 0 and output 0
    run                             starts a run; runs are in order on one interpreter
    in input <values...>            the run's input
    out output <values...>          output 0
    out scale_bits <value>          output 1 (SignalFftAutoScale)

    python3 scripts/tflm_signal_fft.py

CI needs neither this script nor Python: it reads the stored files.
"""

import numpy as np

import tflm_custom_ops as custom

SCRIPT = "scripts/tflm_signal_fft.py"
RNG = custom.Random(20261207)
RUNS = 3
TYPE_NAMES = {np.int16: "i16", np.int32: "i32", np.float32: "f32"}
# Integers in decimal, floats as the shortest decimal that reads back to the same float32.
fmt = custom.values_text


def run_cases(model, inputs, outputs=1):
    """Runs `model` on each input in turn; returns the `outputs` outputs of each run."""
    interp = custom.interpreter(model, arena_size=1 << 20)
    results = [custom.invoke(interp, [x], outputs) for x in inputs]
    custom.assert_vary(SCRIPT, [r[0] for r in results])
    return results


def write(case, model, lines):
    """Writes the model and the golden of `case`."""
    print(f"{case}: {custom.write_case(case, model, lines, SCRIPT)} bytes")


def fft(case, code, dtype, fft_length, in_shape, make=RNG.scaled, runs=RUNS):
    """A `SignalRfft` or `SignalIrfft` case: input of `in_shape` (its last dimension the
    rows' length), output rows of `fft_length + 2` (RFFT) or `fft_length` (IRFFT)."""
    out_last = fft_length + 2 if code == "SignalRfft" else fft_length
    out_shape = list(in_shape[:-1]) + [out_last]
    t = custom.Graph(SCRIPT)
    i = t.tensor("input", in_shape, dtype)
    o = t.tensor("output", out_shape, dtype)
    options = {"T": custom.TYPE_CODES[dtype], "fft_length": fft_length}
    model = t.one_op(code, [i], [o], options)
    inputs = [make(dtype, in_shape, r) for r in range(runs)]
    results = run_cases(model, inputs)
    lines = [
        f"op {code}",
        f"type {TYPE_NAMES[dtype]}",
        f"opt fft_length {fft_length}",
        "shape in " + " ".join(map(str, in_shape)),
        "shape out " + " ".join(map(str, out_shape)),
    ]
    for x, (y,) in zip(inputs, results):
        assert list(y.shape) == out_shape
        lines += ["run", "in input " + fmt(x), "out output " + fmt(y)]
    write(case, model, lines)


def auto_scale(case, inputs):
    """A `SignalFftAutoScale` case over the given 1-D inputs, one a run."""
    n = len(inputs[0])
    t = custom.Graph(SCRIPT)
    i = t.tensor("input", [n], np.int16)
    o = t.tensor("output", [n], np.int16)
    b = t.tensor("scale_bits", [], np.int32)
    model = t.one_op("SignalFftAutoScale", [i], [o, b], None)
    inputs = [np.asarray(x, dtype=np.int16) for x in inputs]
    results = run_cases(model, inputs, outputs=2)
    lines = ["op SignalFftAutoScale", "type i16", f"shape in {n}", f"shape out {n}"]
    for x, (y, bits) in zip(inputs, results):
        lines += ["run", "in input " + fmt(x), "out output " + fmt(y),
                  "out scale_bits " + fmt(bits)]
    write(case, model, lines)


def cases(code, dtype, table, runs=RUNS):
    """A case of `code` with elements of `dtype` per `(fft_length, input shape, suffix)` of
    `table`, named `<rfft | irfft>_<type>_len<fft_length><suffix>`."""
    prefix = "rfft" if code == "SignalRfft" else "irfft"
    for n, shape, suffix in table:
        fft(f"{prefix}_{TYPE_NAMES[dtype]}_len{n}{suffix}", code, dtype, n, shape, runs=runs)


def direction(code, i16_table, wide_table):
    """The cases of `code` (`SignalRfft` or `SignalIrfft`), int16 first, then float32 and
    int32: each radix alone (half lengths 2, 3, 4 and 5 for int16, 2 and 4 for the others;
    4 runs) on input rows of `fft_length` values (RFFT) or `fft_length / 2 + 1` complex ones
    (IRFFT); the rows of `i16_table` or `wide_table` (`cases`' tables); full-scale int16 and
    int32 inputs."""
    i16, i32, f32 = np.int16, np.int32, np.float32
    prefix, extra = ("rfft", 0) if code == "SignalRfft" else ("irfft", 2)
    cases(code, i16, [(n, [n + extra], "") for n in (4, 6, 8, 10)], runs=4)
    cases(code, i16, i16_table)
    fft(f"{prefix}_i16_extremes", code, i16, 64, [2, 64 + extra], make=RNG.extremes)
    for dtype in (f32, i32):
        cases(code, dtype, [(n, [n + extra], "") for n in (4, 8)], runs=4)
        cases(code, dtype, wide_table)
    fft(f"{prefix}_i32_extremes", code, i32, 40, [2, 40 + extra], make=RNG.extremes)


def main():
    # RFFT: int16 mixed radices, zero padding of short rows, rank 3, the audio front end's
    # 480-sample frame in 512, the longest length the Python op allows (2048) on a short
    # row; float32 and int32 zero padding and mixed radices.
    direction("SignalRfft",
              [(16, [2, 3, 11], "_rank3_pad"), (18, [18], ""), (30, [2, 30], ""), (50, [50], ""),
               (96, [96], ""), (120, [2, 100], "_pad"), (256, [256], ""),
               (512, [480], "_frame"), (2048, [64], "_short")],
              [(12, [3, 10], "_pad"), (30, [2, 30], ""), (50, [50], ""), (256, [200], "_pad")])
    # IRFFT: the same radices, rows of fft_length / 2 + 1 complex values.
    direction("SignalIrfft",
              [(16, [2, 2, 18], "_rank3"), (30, [2, 32], ""), (50, [52], ""), (512, [514], "")],
              [(12, [3, 14], ""), (30, [2, 32], ""), (50, [52], ""), (256, [258], "")])
    # FFT auto scale: amplitudes from 1 to full scale; -32768 (TFLM's maximum magnitude
    # becomes -32768, and any later value above it replaces it); all zeros (shift 0);
    # one element.
    small = RNG.small
    auto_scale("fft_auto_scale_len17", [small(17, 1), small(17, 300), small(17, 16383),
                                        small(17, 32767)])
    neg = small(12, 50)
    neg[3] = -32768
    neg_last = small(12, 50)
    neg_last[-1] = -32768
    auto_scale("fft_auto_scale_min", [neg, neg_last, np.zeros(12), small(12, 16384)])
    auto_scale("fft_auto_scale_len1", [[0], [-1], [16384], [-32768], [5]])
    auto_scale("fft_auto_scale_len512", [small(512, 2000), small(512, 9), small(512, 32767)])


if __name__ == "__main__":
    main()
