#!/usr/bin/env python3
"""Per-op golden outputs of TFLite Micro's reference kernels for every bundled model.

For each `models/*.tflite` and each one-op model of `tests/run-models/single/` (written by
`scripts/tflm_single_ops.py`), runs TFLM's interpreter (the `tflite-micro` PyPI package, its
reference kernels, `InterpreterConfig.kPreserveAllTensors` so that every intermediate
tensor keeps its bytes after `invoke()`, read back with `GetTensor`) on RUNS inputs in
sequence on one interpreter (state such as an LSTM's or an SVDF's carries from one invoke
to the next, as it does across `run()` calls in Rust), and writes
`tests/run-models/goldens/ops/<model>.json`: per run, the inputs (how to make them again),
and per op (model order), each output tensor's name, dtype, shape, FNV-1a 64 of its bytes,
the FNV-1a 32 of each BLOCK-byte block (so a test can say where an output first differs),
and the bytes in hex when the output has at most HEX_MAX bytes (so it can say what TFLM
gave there).

    python3 scripts/tflm_op_goldens.py            # rewrite the goldens
    python3 scripts/tflm_op_goldens.py --check    # compare with the stored ones, exit 1 on change
    python3 scripts/tflm_op_goldens.py --dump DIR # also write every op output's bytes to DIR
                                                  # (tests/run-models reads them when
                                                  # TFLM_OP_DUMP=DIR is set)

Inputs: element `i` of input `k` of run `r` comes from a SplitMix64 stream at
`seed = FNV-1a 64 of the model's file stem + 0x0BE5_0000 + 16 * r + k` (mod 2^64), advanced
once per element (`tests/run-models/src/lib.rs` makes the same seed and bytes): a model's
inputs depend on its name only, so adding or removing a model changes no other golden.
- int8, int16 and int32: `lo + ((next >> 32) * (hi - lo + 1) >> 32)`, uniform in `[lo, hi]` (a
  subrange of the input's quantised range, around its zero point);
- float32: `lo + (hi - lo) * ((next >> 40) / 2^24)` in float64, then rounded to float32.
  Its range is [0, 1), or `[LO, HI)` when the model's description has `float_range=LO:HI`
  (one-op models whose floats must reach past 1 or below 0), times the amplitude. With
  `float_step=S` in the description, each value is then `floor(v / S + 0.5) * S` in float64
  (one-op models that need equal values, ties), and the input's entry says `"step": S`.
- int64 as int32, its default range that of int32; bool as `lo + ((next >> 32) * 2 >> 32)`
  in `[0, 1]`. `int_range=LO:HI` in the description sets the range of every integer input
  (one-op models whose ids or shapes must be valid, or whose values must repeat), whatever
  the amplitude.
The range is the one of AMPLITUDES (fractions of the type's range around the zero point, or
of [0, 1) for float inputs, or of [min, max] for a float input whose quantisation
parameters state a min and a max) for which the RUNS outputs differ from each other, no run's
output is all at the int8 or int16 extremes, and the fewest output elements are at those
extremes (the widest on a tie); when none qualifies, the first of NARROW_AMPLITUDES that
does; a model for which none qualifies keeps the widest, and the script says so
(`"informative": false` in its file). Per op, `"informative_ops"` says whether one of its
outputs is informative in the same sense (the RUNS outputs differ and none is all at the
int8 or int16 extremes): the Rust test checks that the op outputs it compares include
informative ones for every model (te_mcunetv2_large's outputs are the same for every
input from op 131 on, tflm_keyword_scrambled_8bit's from op 1 on: a property of these
models, see docs/running-models.md).
These are random inputs drawn from the input's quantisation range, not real samples.

Needs: python3 with `tflite-micro` and `numpy` (`pip install tflite-micro`). CI does not run
this: the Rust tests read the stored JSON.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SINGLE = ROOT / "tests" / "run-models" / "single"
CONTROL = ROOT / "tests" / "run-models" / "control"
GOLDENS = ROOT / "tests" / "run-models" / "goldens" / "ops"
MASK = (1 << 64) - 1
# Added to the FNV-1a 64 of the model's stem: the op goldens' input streams.
# `scripts/tflm_single_ops_lstm.py` seeds the state goldens' with its own salt.
OPS_SALT = 0x0BE50000
RUNS = 3
BLOCK = 1024
HEX_MAX = 2048
AMPLITUDES = [1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125]
# Tried, in order, only when no amplitude of AMPLITUDES qualifies: the first that does is
# taken (tflm_micro_speech_lstm's outputs saturate for every wider input range). Each
# still gives at least 2 input values for 8-bit inputs.
NARROW_AMPLITUDES = [0.0234375, 0.015625]


def splitmix64(state, count):
    """`count` values of the SplitMix64 stream from `state`, as Python ints."""
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def fill(dtype, count, seed, lo, hi, step=None):
    """`count` values of `dtype` in `[lo, hi]` from the stream at `seed` (floats on a grid of
    `step` when given)."""
    raw = splitmix64(seed, count)
    if dtype in (np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64, np.bool_):
        span = hi - lo + 1
        return np.array([lo + (((v >> 32) * span) >> 32) for v in raw], dtype=dtype)
    if dtype == np.float32:
        values = np.array(
            [lo + (hi - lo) * ((v >> 40) / float(1 << 24)) for v in raw], dtype=np.float64
        )
        if step is not None:
            values = np.floor(values / step + 0.5) * step
        return values.astype(np.float32)
    raise SystemExit(f"no input generator for dtype {dtype}")


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def input_seed(stem, run, k, salt=OPS_SALT):
    """The SplitMix64 seed of input `k` of run `run` of the model whose file stem is `stem`:
    FNV-1a 64 of the stem's UTF-8 bytes, plus `salt + 16 * run + k`, modulo 2^64."""
    return (fnv1a64(stem.encode()) + salt + 16 * run + k) & MASK


def fnv1a32(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def input_range(dtype, details, amplitude, bounds=None, float_range=(0.0, 1.0), int_range=None):
    """`(lo, hi)` of an input: `amplitude` of the type's range around the zero point; of a
    float input, of `bounds` (its stated quantisation `(min, max)`) when there are some,
    else of `float_range` ([0, 1) unless the model's description says `float_range=LO:HI`);
    of an integer input `int_range` when the description gives one; of a bool [0, 1]."""
    if dtype == np.bool_:
        return (0, 1)
    if int_range is not None and dtype != np.float32:
        return int_range
    if dtype == np.int64:
        dtype = np.int32
    if dtype == np.float32:
        if bounds is not None:
            return (float(np.float32(bounds[0] * amplitude)), float(np.float32(bounds[1] * amplitude)))
        return (float_range[0] * amplitude, float_range[1] * float(amplitude))
    info = np.iinfo(dtype)
    zps = details.get("quantization_parameters", {}).get("zero_points", [])
    zero = int(zps[0]) if len(zps) else 0
    half = (int(info.max) - int(info.min) + 1) / 2 * amplitude
    lo = max(int(info.min), int(round(zero - half)))
    hi = min(int(info.max), int(round(zero + half - 1)))
    return (lo, hi)


def input_details(interp):
    """The details of each input of the interpreter, in order."""
    k = 0
    while True:
        try:
            yield interp.get_input_details(k)
        except (IndexError, RuntimeError, ValueError):
            return
        k += 1


def outputs_of(interp):
    """Copies of the interpreter's outputs, in order."""
    out = []
    k = 0
    while True:
        try:
            out.append(np.asarray(interp.get_output(k)).copy())
        except (IndexError, RuntimeError, ValueError):
            return out
        k += 1


def make_input(details, seed, lo, hi, step=None):
    """An input of `details`' dtype and shape from the stream at `seed` in `[lo, hi]` (a
    float one on a grid of `step` when given), and its golden entry (how to make it again)."""
    shape = [int(d) for d in details["shape"]]
    dtype = np.dtype(details["dtype"]).type
    step = step if dtype == np.float32 else None
    data = fill(dtype, int(np.prod(shape)), seed, lo, hi, step).reshape(shape)
    entry = {
        "dtype": np.dtype(dtype).name,
        "shape": shape,
        "seed": seed,
        "lo": lo,
        "hi": hi,
        "fnv1a64": f"{fnv1a64(data.tobytes()):016x}",
    }
    if step is not None:
        entry["step"] = step
    return data, entry


def write_or_check(target, golden, check):
    """Writes `golden` as JSON to `target`, or with `check` compares it with the stored file;
    1 when they differ (said on stdout), else 0."""
    text = json.dumps(golden, indent=1) + "\n"
    if not check:
        target.write_text(text)
        return 0
    if target.exists() and target.read_text() == text:
        return 0
    print(f"{target.stem}: differs from {target}")
    return 1


def graph(path):
    """The model's operators: `(opcode name, output tensor indices)`, and tensor names."""
    model = schema.Model.GetRootAsModel(path.read_bytes(), 0)
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    sub = model.Subgraphs(0)
    ops = []
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = names.get(builtin, str(builtin))
        if name == "CUSTOM":
            name = "CUSTOM:" + code.CustomCode().decode()
        # A RESOURCE output (a variable handle) has no bytes the interpreter can show.
        outs = [int(op.Outputs(j)) for j in range(op.OutputsLength())]
        outs = [t for t in outs if sub.Tensors(t).Type() != schema.TensorType.RESOURCE]
        ops.append((name, outs))
    tensors = [(sub.Tensors(i).Name() or b"").decode() for i in range(sub.TensorsLength())]
    return ops, tensors


def input_bounds(path):
    """Per model input, the `(min, max)` its quantisation parameters state, or `None`."""
    sub = schema.Model.GetRootAsModel(path.read_bytes(), 0).Subgraphs(0)
    out = []
    for k in range(sub.InputsLength()):
        q = sub.Tensors(sub.Inputs(k)).Quantization()
        if q is not None and q.MinLength() == 1 and q.MaxLength() == 1:
            out.append((q.Min(0), q.Max(0)))
        else:
            out.append(None)
    return out


def run_model(path, amplitude, dump, digests=True):
    """Runs RUNS inputs through one interpreter; the golden runs and the model outputs."""
    interp = runtime.Interpreter.from_file(
        str(path),
        # The package's default (10 times the file) is too small for one-op models.
        arena_size=max(10 * path.stat().st_size, 1 << 16),
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )
    ops, names = graph(path)
    float_range = (0.0, 1.0)
    int_range = None
    step = None
    description = (schema.Model.GetRootAsModel(path.read_bytes(), 0).Description() or b"").decode()
    for word in description.split():
        if word.startswith("float_range="):
            lo, hi = word.split("=", 1)[1].split(":")
            float_range = (float(lo), float(hi))
        if word.startswith("int_range="):
            lo, hi = word.split("=", 1)[1].split(":")
            int_range = (int(lo), int(hi))
        if word.startswith("float_step="):
            step = float(word.split("=", 1)[1])
    bounds = input_bounds(path)
    runs = []
    outputs = []
    # values[j][t][r]: output `t` of op `j` in run `r`.
    values = [[[] for _ in outs] for _, outs in ops]
    for r in range(RUNS):
        inputs = []
        for k, details in enumerate(input_details(interp)):
            dtype = np.dtype(details["dtype"]).type
            lo, hi = input_range(
                dtype, details, amplitude, bounds[k] if k < len(bounds) else None, float_range,
                int_range,
            )
            data, entry = make_input(details, input_seed(path.stem, r, k), lo, hi, step)
            interp.set_input(data, k)
            inputs.append(entry)
        interp.invoke()
        per_op = []
        for j, (opcode, outs) in enumerate(ops if digests else []):
            tensors = []
            for t in outs:
                got = interp.GetTensor(t, 0)
                value = np.asarray(got["tensor_data"], dtype=got["dtype"])
                raw = value.tobytes()
                values[j][len(tensors)].append(value)
                entry = {
                    "tensor": names[t],
                    "dtype": value.dtype.name,
                    "shape": [int(d) for d in got["shape"]],
                    "fnv1a64": f"{fnv1a64(raw):016x}",
                    "blocks": "".join(
                        f"{fnv1a32(raw[b:b + BLOCK]):08x}" for b in range(0, len(raw), BLOCK)
                    ),
                }
                if len(raw) <= HEX_MAX:
                    entry["hex"] = raw.hex()
                tensors.append(entry)
                if dump is not None:
                    d = dump / path.stem / str(r)
                    d.mkdir(parents=True, exist_ok=True)
                    (d / f"{j}_{len(tensors) - 1}.bin").write_bytes(raw)
            per_op.append({"op": j, "opcode": opcode, "outputs": tensors})
        outputs.append(outputs_of(interp))
        runs.append({"inputs": inputs, "ops": per_op})
    informative_ops = [
        any(len(runs_of) == RUNS and informative([[v] for v in runs_of]) for runs_of in op)
        for op in values
    ]
    return runs, outputs, informative_ops


def informative(outputs):
    """True when the runs' outputs differ from each other and none is all at the extremes
    (`outputs[r]`: the arrays of run `r`; a model's outputs, or one op output's)."""
    flat = [b"".join(o.tobytes() for o in run) for run in outputs]
    if len(set(flat)) != len(flat):
        return False
    for run in outputs:
        values = [o for o in run if o.dtype in (np.int8, np.int16)]
        if values and all(
            np.all((o == np.iinfo(o.dtype).min) | (o == np.iinfo(o.dtype).max)) for o in values
        ):
            return False
    return True


def saturation(outputs):
    """Per run, how many int8 or int16 output elements are at the type's extremes."""
    return [
        sum(
            int(np.sum((o == np.iinfo(o.dtype).min) | (o == np.iinfo(o.dtype).max)))
            for o in run
            if o.dtype in (np.int8, np.int16)
        )
        for run in outputs
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    ap.add_argument("--dump", type=Path, help="also write every op output's bytes here")
    ap.add_argument("--only", help="only the model with this file stem")
    args = ap.parse_args()
    GOLDENS.mkdir(parents=True, exist_ok=True)
    changed = 0
    # Bundled models, then the one-op models of `scripts/tflm_single_ops.py` (the order
    # changes no seed).
    paths = (
        sorted(MODELS.glob("*.tflite"))
        + sorted(SINGLE.glob("*.tflite"))
        + sorted(CONTROL.glob("*.tflite"))
    )
    for path in paths:
        if args.only and path.stem != args.only:
            continue
        chosen = None
        best = None
        for amplitude in AMPLITUDES:
            _, outputs, _ = run_model(path, amplitude, None, digests=False)
            if informative(outputs):
                s = sum(saturation(outputs))
                if best is None or s < best:
                    chosen, best = amplitude, s
        for amplitude in NARROW_AMPLITUDES if chosen is None else []:
            _, outputs, _ = run_model(path, amplitude, None, digests=False)
            if informative(outputs):
                chosen = amplitude
                break
        note = ""
        if chosen is None:
            chosen = AMPLITUDES[0]
            note = " (no amplitude gives outputs that differ and are not all saturated)"
        runs, outputs, informative_ops = run_model(path, chosen, args.dump)
        golden = {
            "model": path.stem,
            "generator": "scripts/tflm_op_goldens.py",
            "block": BLOCK,
            "amplitude": chosen,
            "informative": note == "",
            "informative_ops": informative_ops,
            "runs": runs,
        }
        changed += write_or_check(GOLDENS / f"{path.stem}.json", golden, args.check)
        saturated = saturation(outputs)
        size = sum(o.size for o in outputs[0])
        print(
            f"{path.stem}: {len(runs[0]['ops'])} ops, amplitude {chosen}{note}, "
            f"saturated outputs per run {saturated} of {size}, "
            f"{sum(informative_ops)} informative ops"
        )
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
