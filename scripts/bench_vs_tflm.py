#!/usr/bin/env python3
"""Host run() time per bundled model, with both kernel sets, beside TFLite Micro's invoke().

    python3 scripts/bench_vs_tflm.py [ROUNDS] [BENCH_BINARY] [--models NAME,NAME,...]
        [--repeat N] [--clock wall|cpu]

Builds and runs `cargo run --release -p run-models --example bench -- ROUNDS [NAME...]`
(planner's generated run() with `planner_kernels::Reference` and with
`planner_kernels::Optimized`, on the golden inputs), then times TFLM's Python interpreter
(`tflite-micro` from PyPI, its reference kernels) over ROUNDS invokes of each model on the
same inputs, and prints the three in milliseconds (the mean over the rounds) with the
ratios `Reference / TFLM` and `TFLM / Optimized` (how many times faster the optimized
kernels run than TFLM). `--clock cpu` times both sides by the CPU time of the thread that
runs them (`/proc/thread-self/schedstat` in the bench, `time.thread_time` here) instead of
the wall clock: on a shared machine, time spent waiting for a core then counts on neither
side. With `--repeat N`, does all of that N times, one after the other, and keeps each
figure's smallest mean: on a loaded machine the least disturbed run. With
BENCH_BINARY, runs that already built bench binary instead of building a release one; with
`--models`, only the models named. Figures depend on the machine and its load; nothing
asserts on them.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_goldens  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def tflm_ms(path, index, rounds, clock):
    """Milliseconds per `invoke()` of TFLM's interpreter on `path` over `rounds` invokes,
    by `clock`, on the golden inputs of model `index` (`tflm_goldens.run`'s)."""
    interp = runtime.Interpreter.from_file(str(path))
    golden, _ = tflm_goldens.run(path, index, 0)
    for k, details in enumerate(tflm_goldens.input_details(interp)):
        spec = golden["inputs"][k]
        count = int(np.prod(spec["shape"]))
        data = tflm_goldens.fill(np.dtype(details["dtype"]).type, count, spec["seed"])
        interp.set_input(data.reshape(spec["shape"]), k)
    interp.invoke()
    start = clock()
    for _ in range(rounds):
        interp.invoke()
    return (clock() - start) / rounds * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", nargs="?", type=int, default=20)
    ap.add_argument("binary", nargs="?", help="an already built bench binary")
    ap.add_argument("--models", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="repeat N times, keep the minima")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall", help="what to time")
    args = ap.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    # The bench's columns: 3 is the wall time per run, 5 the CPU time.
    column = 5 if args.clock == "cpu" else 3
    only = [m for m in args.models.split(",") if m]
    command = ["cargo", "run", "--release", "-q", "-p", "run-models", "--example", "bench", "--"]
    if args.binary:
        command = [args.binary]
    ours = {}
    tflm = {}
    paths = [
        (index, path)
        for index, path in enumerate(sorted(tflm_goldens.MODELS.glob("*.tflite")))
        if not only or path.stem in only
    ]
    for _ in range(max(args.repeat, 1)):
        out = subprocess.run(
            command + [str(args.rounds)] + only,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for line in out.splitlines():
            parts = line.split()
            if parts and parts[0] == "bench":
                sets = ours.setdefault(parts[1], {})
                ms = float(parts[column]) if parts[column] != "-" else float("nan")
                sets[parts[2]] = min(ms, sets.get(parts[2], float("inf")))
            else:
                print(line)
        for index, path in paths:
            if path.stem in ours:
                ms = tflm_ms(path, index, args.rounds, clock)
                tflm[path.stem] = min(ms, tflm.get(path.stem, float("inf")))
    print(
        f"{'model':32} {'Reference ms':>13} {'Optimized ms':>13} {'TFLM invoke() ms':>17}"
        f" {'Ref/TFLM':>9} {'TFLM/Opt':>9}"
    )
    for _, path in paths:
        if path.stem not in tflm:
            continue
        ref = ours[path.stem].get("Reference", float("nan"))
        opt = ours[path.stem].get("Optimized", float("nan"))
        t = tflm[path.stem]
        ratio = lambda a, b: a / b if b > 0 else float("nan")  # noqa: E731
        print(
            f"{path.stem:32} {ref:13.3f} {opt:13.3f} {t:17.3f}"
            f" {ratio(ref, t):9.2f} {ratio(t, opt):9.2f}"
        )


if __name__ == "__main__":
    main()
