#!/usr/bin/env python3
"""One-op models and text goldens of TFLM's stateful signal ops: SignalFramer,
SignalStacker, SignalDelay and SignalOverlapAdd.

Each case is one custom op with its options as a flexbuffer map. The script runs it with
the `tflite-micro` package's interpreter over several consecutive runs with random inputs
(the op's state carries from run to run) and writes

* `tests/run-models/single_signal/op_sig_<case>.tflite`, the model, and
* `planner-kernels/src/reference/signal/goldens/<case>.txt`, the golden the Rust tests
  read: the options, the shapes, then each run's input and expected outputs.

Golden format (one item a line, fields separated by spaces):

    op <framer|stacker|delay|overlap_add>
    type <i16|f32>
    option <name> <integer>          (one line per option; bools as 0/1)
    shape <input|output> <dims...>   (a scalar's line has no dims)
    run <index>
    in <values...>                   (the input, flattened)
    out <values...>                  (output 0, flattened; `-` for an element TFLM has
                                      not written yet, see below)
    valid <0|1>                      (output 1 of the framer and the stacker)

Floats are written in the shortest form that reads back as the same float32.

The framer writes only the frames that are ready and the stacker only a ready window (its
valid flag); the others keep what the output tensor held (arena garbage before the first
write, which differs from interpreter to interpreter). The script finds the framer's
frames TFLM wrote: in the first run, those that are a window of the row's input after
`frame_size` zeros (garbage is not); later, those that differ from the previous run's.
Frames never written so far are `-` in the golden, where the Rust kernel must leave the
output untouched.

The model building, the random inputs and the golden writing are `tflm_custom_ops.py`'s.

    python3 scripts/tflm_signal_framing.py
"""

import numpy as np

import tflm_custom_ops as custom

SCRIPT = "scripts/tflm_signal_framing.py"
RUNS = 8
RNG = custom.Random(20240611)


def framer_written(frames, xin, size):
    """Which frames of the framer's first run hold a window of their row's input preceded
    by `size` zeros (the prefill): those TFLM wrote."""
    rows = np.asarray(xin).reshape(-1, np.asarray(xin).shape[-1])
    per_row = len(frames) // len(rows)
    written = np.zeros(len(frames), dtype=bool)
    for f, values in enumerate(frames):
        seq = np.concatenate([np.zeros(size, dtype=rows.dtype), rows[f // per_row]])
        windows = np.lib.stride_tricks.sliding_window_view(seq, size)
        written[f] = bool(np.any(np.all(windows == values, axis=1)))
    return written


def fmt(values):
    """Integers in decimal, floats as numpy prints a float32."""
    return custom.values_text(values, float_str=str)


def random_input(shape, dtype):
    if dtype == np.float32:
        return RNG.normal(0.0, 100.0, size=shape).astype(np.float32)
    return RNG.i16(shape)


def run_case(case, op, code, dtype, options, in_shape, out_shape, frame):
    """Builds the model, runs it `RUNS` times, writes the model and the golden. `frame`:
    for an op with a valid flag (output 1), the elements of one frame of output 0 it
    writes or leaves whole; None for an op without one."""
    has_valid = frame is not None
    t = custom.Graph(SCRIPT)
    x = t.tensor("x", in_shape, dtype)
    y = t.tensor("y", out_shape, dtype)
    outputs = [y]
    if has_valid:
        outputs.append(t.tensor("valid", [], np.bool_))
    model = t.one_op(code, [x], outputs, options)
    interp = custom.interpreter(model)
    lines = [f"op {op}", f"type {'f32' if dtype == np.float32 else 'i16'}"]
    for key in sorted(options):
        if key != "T":
            lines.append(f"option {key} {int(options[key])}")
    lines.append("shape input " + " ".join(str(d) for d in in_shape))
    lines.append("shape output " + " ".join(str(d) for d in out_shape))
    outs = []
    n_out = int(np.prod(out_shape))
    known = np.zeros(n_out, dtype=bool)
    for r in range(RUNS):
        xin = random_input(in_shape, dtype)
        got = custom.invoke(interp, [xin], len(outputs))
        out = got[0].astype(dtype).reshape(-1)
        if has_valid:
            valid = bool(got[1].reshape(-1)[0])
            frames = out.reshape(-1, frame)
            if op == "stacker":
                written = np.full(len(frames), valid)
            elif r == 0:
                written = framer_written(frames, xin, frame)
                assert not valid or written.all(), case
            else:
                written = np.any(frames != outs[-1].reshape(-1, frame), axis=1)
            known |= np.repeat(written, frame)
        else:
            known[:] = True
        outs.append(out)
        lines.append(f"run {r}")
        lines.append("in " + fmt(xin))
        shown = fmt(out).split(" ") if n_out else []
        lines.append(" ".join(["out"] + [v if k else "-" for v, k in zip(shown, known)]))
        if has_valid:
            lines.append(f"valid {int(valid)}")
    # The outputs follow the inputs: they change from run to run and are not all zero.
    custom.assert_vary(case, outs, at_least=3)
    assert any(np.any(o != 0) for o in outs), case
    print(case, custom.write_case(case, model, lines))


def framer(case, in_shape, size, step, prefill):
    inner = in_shape[-1]
    out_shape = list(in_shape[:-1]) + [inner // step, size]
    options = {"frame_size": size, "frame_step": step, "prefill": prefill}
    run_case(f"framer_{case}", "framer", "SignalFramer", np.int16, options, in_shape,
             out_shape, size)


def stacker(case, channels, left, right, step):
    options = {"num_channels": channels, "stacker_left_context": left,
               "stacker_right_context": right, "stacker_step": step}
    run_case(f"stacker_{case}", "stacker", "SignalStacker", np.int16, options, [channels],
             [channels * (left + right + 1)], channels * (left + right + 1))


def delay(case, shape, length):
    run_case(f"delay_{case}", "delay", "SignalDelay", np.int16, {"delay_length": length},
             shape, shape, None)


def overlap_add(case, dtype, in_shape, step):
    out_shape = list(in_shape[:-2]) + [in_shape[-2] * step]
    options = {"T": custom.TYPE_CODES[dtype], "frame_step": step}
    run_case(f"overlap_add_{case}", "overlap_add", "SignalOverlapAdd", dtype, options,
             in_shape, out_shape, None)


def main():
    # Framer: several frames a run (the first ones of the first run not ready), outer
    # dimensions, prefill, a frame size that is not a multiple of the step (the capacity
    # rounds up, so without prefill the frames lag), step equal to and above the size.
    framer("multi_frame", [8], 4, 2, False)
    framer("outer_prefill", [2, 3, 6], 5, 3, True)
    framer("lagging", [3], 7, 3, False)
    framer("lagging_prefill", [3], 7, 3, True)
    framer("size_eq_step_prefill", [4], 4, 4, True)
    framer("step_above_size", [2, 6], 2, 3, False)
    framer("audio_like", [1, 32], 40, 16, False)
    # Stacker: left and right context, none, steps above one, step = the whole window.
    stacker("context", 3, 2, 1, 1)
    stacker("no_context", 2, 0, 0, 1)
    stacker("step2", 4, 1, 2, 2)
    stacker("step_window", 2, 1, 0, 2)
    stacker("right_only", 2, 0, 3, 3)
    # Delay: shorter and longer than a frame, zero, equal, outer dimensions.
    delay("short", [5], 2)
    delay("long_outer", [2, 3, 4], 7)
    delay("zero", [4], 0)
    delay("frame", [3, 6], 6)
    # Overlap-add: int16 (saturating) and float32, several frames, outer dimensions, a
    # step equal to the frame (no overlap) and a step of one.
    for dtype, tag in [(np.int16, "i16"), (np.float32, "f32")]:
        overlap_add(f"{tag}_frames", dtype, [3, 4], 2)
        overlap_add(f"{tag}_outer", dtype, [2, 2, 6], 4)
        overlap_add(f"{tag}_no_overlap", dtype, [1, 5], 5)
        overlap_add(f"{tag}_step1", dtype, [2, 3, 5], 1)


if __name__ == "__main__":
    main()
