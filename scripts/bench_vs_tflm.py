#!/usr/bin/env python3
"""Host run() time per bundled model, with both kernel sets, beside TFLite Micro's invoke().

    python3 scripts/bench_vs_tflm.py [ROUNDS] [BENCH_BINARY] [--models NAME,NAME,...]

Builds and runs `cargo run --release -p run-models --example bench -- ROUNDS [NAME...]`
(planner's generated run() with `planner_kernels::Reference` and with
`planner_kernels::Optimized`, on the golden inputs), then times TFLM's Python interpreter
(`tflite-micro` from PyPI, its reference kernels) over ROUNDS invokes of each model on the
same inputs, and prints the three in milliseconds with the ratios `Reference / TFLM` and
`TFLM / Optimized` (how many times faster the optimized kernels run than TFLM). With
BENCH_BINARY, runs that already built bench binary instead of building a release one; with
`--models`, only the models named. Figures depend on the machine and its load; nothing
asserts on them.
"""

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_goldens  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", nargs="?", type=int, default=20)
    ap.add_argument("binary", nargs="?", help="an already built bench binary")
    ap.add_argument("--models", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    only = [m for m in args.models.split(",") if m]
    command = ["cargo", "run", "--release", "-q", "-p", "run-models", "--example", "bench", "--"]
    if args.binary:
        command = [args.binary]
    out = subprocess.run(
        command + [str(args.rounds)] + only,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    ours = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "bench":
            ours.setdefault(parts[1], {})[parts[2]] = float(parts[3])
        else:
            print(line)
    print(
        f"{'model':32} {'Reference ms':>13} {'Optimized ms':>13} {'TFLM invoke() ms':>17}"
        f" {'Ref/TFLM':>9} {'TFLM/Opt':>9}"
    )
    for index, path in enumerate(sorted(tflm_goldens.MODELS.glob("*.tflite"))):
        if path.stem not in ours:
            continue
        _, tflm = tflm_goldens.run(path, index, args.rounds)
        ref = ours[path.stem].get("Reference", float("nan"))
        opt = ours[path.stem].get("Optimized", float("nan"))
        print(
            f"{path.stem:32} {ref:13.3f} {opt:13.3f} {tflm:17.3f} {ref / tflm:9.2f} {tflm / opt:9.2f}"
        )


if __name__ == "__main__":
    main()
