#!/usr/bin/env python3
"""Golden outputs of TFLite Micro's reference kernels for every bundled model.

For each `models/*.tflite`, fills every input with values from a seeded SplitMix64 stream
(the same stream `tests/run-models/src/lib.rs` regenerates in Rust, so the inputs are
not stored), runs TFLM's interpreter from the `tflite-micro` PyPI package (its reference
kernels) once, and writes `tests/run-models/goldens/<model>.json`: the seed, each
input's name, dtype, shape and FNV-1a 64 of its bytes (so the Rust side can check it made
the same inputs), and each output's dtype, shape and bytes in hex.

    python3 scripts/tflm_goldens.py            # rewrite the goldens
    python3 scripts/tflm_goldens.py --check    # compare with the stored ones, exit 1 on change
    python3 scripts/tflm_goldens.py --time 20  # also print invoke() time per model (ms)

Input values: int8 `(next >> 56)` as a signed byte; int16 `(next >> 48)` as a signed
16-bit value; float32 `(next >> 40) / 2^24` (exact in float32, in [0, 1): the range of
image models' normalised pixels; inputs quantised from [0, 1] clamp negative values, so
[-1, 1) drove te_mcunet_vww to a constant output).
The stream starts at `seed = 0x5EED_0000 + 256 * model index + input index` (models in
sorted file-name order) and is advanced once per element.

Needs: python3 with `tflite-micro` and `numpy` (`pip install tflite-micro`). CI does not run
this: the Rust tests read the stored JSON.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_op_goldens import input_details, outputs_of, write_or_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
GOLDENS = ROOT / "tests" / "run-models" / "goldens"
MASK = (1 << 64) - 1


def splitmix64(state):
    """Yields the SplitMix64 stream from `state`."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def fill(dtype, count, seed):
    """`count` values of `dtype` from the stream at `seed`."""
    stream = splitmix64(seed)
    raw = np.fromiter((next(stream) for _ in range(count)), dtype=np.uint64, count=count)
    if dtype == np.int8:
        return (raw >> np.uint64(56)).astype(np.uint8).view(np.int8)
    if dtype == np.int16:
        return (raw >> np.uint64(48)).astype(np.uint16).view(np.int16)
    if dtype == np.float32:
        return ((raw >> np.uint64(40)).astype(np.float64) / float(1 << 24)).astype(np.float32)
    raise SystemExit(f"no input generator for dtype {dtype}")


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & MASK
    return f"{h:016x}"


def run(path, index, repeat):
    interp = runtime.Interpreter.from_file(str(path))
    inputs = []
    for k, details in enumerate(input_details(interp)):
        shape = [int(d) for d in details["shape"]]
        dtype = np.dtype(details["dtype"]).type
        seed = 0x5EED0000 + 256 * index + k
        data = fill(dtype, int(np.prod(shape)), seed).reshape(shape)
        interp.set_input(data, k)
        inputs.append(
            {
                "dtype": np.dtype(dtype).name,
                "shape": shape,
                "seed": seed,
                "fnv1a64": fnv1a64(data.tobytes()),
            }
        )
    interp.invoke()
    outputs = [
        {"dtype": out.dtype.name, "shape": [int(d) for d in out.shape], "hex": out.tobytes().hex()}
        for out in outputs_of(interp)
    ]
    elapsed = None
    if repeat:
        interp.invoke()
        start = time.perf_counter()
        for _ in range(repeat):
            interp.invoke()
        elapsed = (time.perf_counter() - start) / repeat * 1e3
    return {"model": path.stem, "inputs": inputs, "outputs": outputs}, elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    ap.add_argument("--time", type=int, default=0, metavar="N", help="time N invokes")
    args = ap.parse_args()
    GOLDENS.mkdir(parents=True, exist_ok=True)
    changed = 0
    for index, path in enumerate(sorted(MODELS.glob("*.tflite"))):
        golden, ms = run(path, index, args.time)
        changed += write_or_check(GOLDENS / f"{path.stem}.json", golden, args.check)
        line = f"{path.stem}: {len(golden['inputs'])} inputs, {len(golden['outputs'])} outputs"
        if ms is not None:
            line += f", invoke {ms:.3f} ms"
        print(line)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
