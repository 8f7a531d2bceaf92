#!/usr/bin/env python3
"""Records TensorFlow Lite Micro's own arena figures for every bundled model.

For each models/*.tflite, a child process builds TFLM's interpreter (the `tflite-micro`
PyPI package, `runtime.Interpreter.from_file`, reference kernels, GreedyMemoryPlanner) and
calls `print_allocations()`, which prints the RecordingMicroAllocator's figures from C++ to
the process's stdout. The parent parses them and writes tests/data/tflm_figures.json:

  head   the non-persistent section: TFLM's memory plan of every activation tensor and
         kernel scratch buffer (what the `tflm` planner reproduces from the model file)
  tail   persistent data: TfLiteEvalTensor structs, kernel op data, variable tensors
  total  head + tail

Usage (from the repository root; needs `pip install tflite-micro`):

  python3 scripts/tflm_figures.py            # writes tests/data/tflm_figures.json
  python3 scripts/tflm_figures.py --check    # fails if the stored file differs

CI has no Python: the Rust test planner/tests/tflm_figures.rs reads the stored file.
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "tflm_figures.json")
# Large enough for every bundled model; TFLM only records what it uses.
ARENA_SIZE = 8 * 1024 * 1024
FIGURE = re.compile(r"Arena allocation (head|tail|total) (\d+) bytes")


def child(model):
    """Runs in the child process: TFLM prints its figures to fd 1."""
    from tflite_micro.python.tflite_micro import runtime

    interpreter = runtime.Interpreter.from_file(model, arena_size=ARENA_SIZE)
    sys.stdout.flush()
    interpreter.print_allocations()
    sys.stdout.flush()


def measure(model):
    """TFLM's head, tail and total for one model, from a child process's output."""
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--one", model],
        capture_output=True,
        text=True,
        check=False,
    )
    text = done.stdout + done.stderr
    if done.returncode != 0:
        raise SystemExit(f"error: tflm failed on {model} (exit {done.returncode}):\n{text}")
    figures = {k: int(v) for k, v in FIGURE.findall(text)}
    missing = {"head", "tail", "total"} - figures.keys()
    if missing:
        raise SystemExit(f"error: no {sorted(missing)} figure in tflm's output for {model}:\n{text}")
    return figures


def tflm_version():
    try:
        from importlib.metadata import version

        return version("tflite-micro")
    except Exception:  # the package may expose no metadata
        return "unknown"


def main(argv):
    if len(argv) == 3 and argv[1] == "--one":
        child(argv[2])
        return 0
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        raise SystemExit("usage: tflm_figures.py [--check]")
    models_dir = os.path.join(ROOT, "models")
    rows = []
    for name in sorted(os.listdir(models_dir)):
        if not name.endswith(".tflite"):
            continue
        f = measure(os.path.join(models_dir, name))
        rows.append({"model": name[: -len(".tflite")], "head": f["head"], "tail": f["tail"], "total": f["total"]})
        print(f"{name}: head {f['head']} tail {f['tail']} total {f['total']}")
    doc = {
        "source": "tflite-micro (PyPI) " + tflm_version()
        + ", runtime.Interpreter.from_file(model, arena_size=8 MiB).print_allocations()",
        "command": "python3 scripts/tflm_figures.py",
        "models": rows,
    }
    text = json.dumps(doc, indent=2) + "\n"
    if check:
        with open(OUT) as f:
            stored = json.load(f)
        if stored["models"] != rows:
            raise SystemExit(f"error: {OUT} differs from TFLM's figures; rerun without --check")
        print(f"{OUT} matches")
        return 0
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
