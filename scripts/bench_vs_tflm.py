#!/usr/bin/env python3
"""Host run() time per bundled model beside TFLite Micro's invoke(), same inputs, same run.

    python3 scripts/bench_vs_tflm.py [ROUNDS] [BENCH_BINARY]

Builds and runs `cargo run --release -p run-models --example bench -- ROUNDS` (planner's
generated run() with the reference kernels, the golden inputs), then times TFLM's Python
interpreter (`tflite-micro` from PyPI, its reference kernels) over ROUNDS invokes of each
model on the same inputs, and prints both in milliseconds with their ratio. With
BENCH_BINARY, runs that already built bench binary instead of building a release one. Figures
depend on the machine and its load; nothing asserts on them.
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_goldens  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    command = ["cargo", "run", "--release", "-q", "-p", "run-models", "--example", "bench", "--"]
    if len(sys.argv) > 2:
        command = [sys.argv[2]]
    out = subprocess.run(
        command + [str(rounds)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    ours = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "bench":
            ours[parts[1]] = float(parts[2])
        else:
            print(line)
    print(f"{'model':32} {'run() ms':>10} {'TFLM invoke() ms':>17} {'ratio':>7}")
    for index, path in enumerate(sorted(tflm_goldens.MODELS.glob("*.tflite"))):
        if path.stem not in ours:
            continue
        _, tflm = tflm_goldens.run(path, index, rounds)
        ms = ours[path.stem]
        print(f"{path.stem:32} {ms:10.3f} {tflm:17.3f} {ms / tflm:7.2f}")


if __name__ == "__main__":
    main()
