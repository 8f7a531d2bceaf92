#!/usr/bin/env python3
"""Runs every bundled model through TFLM before and after `planner export tflm`.

For each `models/*.tflite`: exports it with our plan as TFLM's `OfflineMemoryAllocation`
metadata, loads the original and the exported model in the `tflite-micro` PyPI interpreter
(the TFLM C++ runtime), feeds both the same seeded random inputs for a few invocations
(stateful models keep their state across them, the same way in both) and compares every
output bit for bit. The arena figures come from TFLM's RecordingMicroAllocator
(`print_allocations`): `total` is the arena bytes the interpreter used (head + tail),
`head` its non-persistent section, the part the offline plan decides.

Also exports the one-op models of `tests/data/tflm_scratch/` (written by
`scripts/tflm_kernel_scratch.py`), whose plans mostly end off a multiple of 16, so TFLM's head
is the plan's end rounded up (stored under `generated`), and the multi-subgraph models of
`tests/run-models/control/` (`scripts/tflm_control_flow.py`; under `control`): only subgraph
0's tensors get offline offsets, TFLM plans the other subgraphs' around them.

Writes `tests/data/tflm_export.json`, which the Rust test `tflm_export` (no Python) checks
(every model, exported head equal to the exporter's, never above TFLM's own), and prints a
table. Usage, from the repository root:

    pip install tflite-micro numpy      # once
    python3 scripts/tflm_export_check.py

A control export from the `greedy` planner (larger plans on several models) must move
TFLM's head to at least that plan's, which shows TFLM uses the offsets.

Exits 1 when any model's outputs differ, its exported arena is larger, or the control's
head does not follow its plan.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema_fb

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261130
INVOCATIONS = 3


def planner_binary():
    subprocess.run(
        ["cargo", "build", "-q", "-p", "planner-build", "--features", "cli", "--bin", "planner"],
        cwd=ROOT,
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "planner"


def allocations(interp):
    """TFLM's own arena report, captured from the C++ side's stderr."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            interp.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode()
    figures = {}
    for key in ("total", "head", "tail"):
        m = re.search(rf"Arena allocation {key} (\d+) bytes", text)
        if not m:
            raise RuntimeError(f"no '{key}' in TFLM's allocation report:\n{text}")
        figures[key] = int(m.group(1))
    return figures


def io_counts(data):
    sg = schema_fb.Model.GetRootAsModel(data, 0).Subgraphs(0)
    return sg.InputsLength(), sg.OutputsLength()


def ranges(data):
    """`(int_range, float_range)` a one-op golden model's description sets for its inputs
    (`int_range=LO:HI`, `float_range=LO:HI`: valid indices, shapes, ranks; see
    scripts/tflm_op_goldens.py), `None` where it sets none."""
    text = schema_fb.Model.GetRootAsModel(data, 0).Description() or b""
    found = {}
    for word in text.decode(errors="replace").split():
        key, _, value = word.partition("=")
        if key in ("int_range", "float_range") and ":" in value:
            lo, hi = value.split(":")
            found[key] = (float(lo), float(hi))
    return found.get("int_range"), found.get("float_range")


def seeded_inputs(interp, n_inputs, rng, int_range=None, float_range=None):
    out = []
    for i in range(n_inputs):
        d = interp.get_input_details(i)
        dtype = np.dtype(d["dtype"])
        shape = tuple(int(x) for x in d["shape"])
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -128), min(info.max, 127)
            if int_range is not None:
                lo, hi = int(int_range[0]), int(int_range[1])
            x = rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(dtype)
        elif dtype == np.bool_:
            x = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif float_range is not None:
            x = rng.uniform(float_range[0], float_range[1], size=shape).astype(dtype)
        else:
            x = rng.standard_normal(size=shape).astype(dtype)
        out.append(x)
    return out


def export(planner, model, out, args):
    """Runs `planner export tflm`; returns the planned head and the number of offsets."""
    msg = subprocess.run(
        [str(planner), "export", "tflm", str(model), "-o", str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    planned = int(re.search(r"non-persistent head (\d+) bytes", msg).group(1))
    fixed = int(re.search(r"(\d+) of \d+ tensors", msg).group(1))
    return planned, fixed


def run(path, data, arena):
    """Outputs of INVOCATIONS runs on seeded inputs, and TFLM's arena figures."""
    interp = runtime.Interpreter.from_file(str(path), arena_size=arena)
    n_in, n_out = io_counts(data)
    rng = np.random.default_rng(SEED)
    outputs = []
    for _ in range(INVOCATIONS):
        for i, x in enumerate(seeded_inputs(interp, n_in, rng, *ranges(data))):
            interp.set_input(x, i)
        interp.invoke()
        outputs.append([np.array(interp.get_output(k)).copy() for k in range(n_out)])
    return outputs, allocations(interp)


def same(a, b):
    return all(
        len(x) == len(y)
        # Bit for bit (NaN outputs included, which np.array_equal calls unequal).
        and all(p.dtype == q.dtype and p.shape == q.shape and p.tobytes() == q.tobytes() for p, q in zip(x, y))
        for x, y in zip(a, b)
    ) and len(a) == len(b)


def main():
    planner = planner_binary()
    version = subprocess.run(
        [sys.executable, "-m", "pip", "show", "tflite-micro"], capture_output=True, text=True
    ).stdout
    m = re.search(r"^Version: (.*)$", version, re.M)
    results = {
        "tflite_micro_version": m.group(1) if m else "unknown",
        "seed": SEED,
        "invocations": INVOCATIONS,
        "command": "python3 scripts/tflm_export_check.py",
        "models": {},
        "generated": {},
        "control": {},
    }
    ok = True
    out_dir = Path(tempfile.mkdtemp(prefix="tflm-export-"))
    rows = []
    bundled = sorted((ROOT / "models").glob("*.tflite"))
    generated = sorted((ROOT / "tests" / "data" / "tflm_scratch").glob("*.tflite"))
    control_flow = sorted((ROOT / "tests" / "run-models" / "control").glob("*.tflite"))
    for model in bundled + generated + control_flow:
        name = model.stem
        section = (
            "models" if model in bundled else "generated" if model in generated else "control"
        )
        exported = out_dir / f"{name}.tflite"
        planned, fixed = export(planner, model, exported, [])
        original = model.read_bytes()
        arena = 16 * 1024 * 1024 + 10 * len(original)
        out_a, alloc_a = run(model, original, arena)
        out_b, alloc_b = run(exported, exported.read_bytes(), arena)
        identical = same(out_a, out_b)
        # Control: the same export from the `greedy` planner (first fit in op order), whose
        # plan is larger on several models. TFLM's head must follow it, which shows TFLM
        # reads and uses the offsets rather than planning on its own.
        control = out_dir / f"{name}.greedy.tflite"
        greedy_planned, _ = export(planner, model, control, ["--planner", "greedy"])
        out_c, alloc_c = run(control, control.read_bytes(), arena)
        entry = {
            "planned_head": planned,
            "offline_offsets": fixed,
            "original": alloc_a,
            "exported": alloc_b,
            "outputs_identical": identical,
            "saved_total": alloc_a["total"] - alloc_b["total"],
            "saved_head": alloc_a["head"] - alloc_b["head"],
            "control_greedy": {
                "planned_head": greedy_planned,
                "tflm_head": alloc_c["head"],
                "outputs_identical": same(out_a, out_c),
            },
        }
        results[section][name] = entry
        # A control-flow model's plan covers every subgraph, but only subgraph 0's tensors
        # are exported: TFLM's head is its own placement of the rest around them, so only
        # "no larger than TFLM's own" holds there.
        exact = section != "control"
        if not identical or alloc_b["total"] > alloc_a["total"] or alloc_b["head"] > alloc_a["head"]:
            ok = False
        if exact and alloc_b["head"] != planned:
            ok = False
        if not entry["control_greedy"]["outputs_identical"] or alloc_c["head"] < greedy_planned:
            ok = False
        rows.append(
            f"{name:30} {planned:>8} {alloc_a['head']:>9} {alloc_b['head']:>9} "
            f"{alloc_a['total']:>10} {alloc_b['total']:>10} {entry['saved_total']:>7}  "
            f"{'yes' if identical else 'NO'}   {greedy_planned:>8} {alloc_c['head']:>8}"
        )
    out = ROOT / "tests" / "data" / "tflm_export.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(
        f"{'model':30} {'plan':>8} {'head':>9} {'head':>9} {'total':>10} {'total':>10} {'saved':>7}  same  {'greedy':>8} {'head':>8}"
    )
    print(
        f"{'':30} {'':>8} {'TFLM':>9} {'exported':>9} {'TFLM':>10} {'exported':>10} {'':>7}        {'plan':>8} {'TFLM':>8}"
    )
    print("\n".join(rows))
    print(f"wrote {out.relative_to(ROOT)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
