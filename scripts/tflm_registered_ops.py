#!/usr/bin/env python3
"""The builtin op kinds the `tflite-micro` interpreter's op resolver registers, written to
`tests/run-models/registered_ops.txt`, which `tests/run-models/tests/registered.rs` checks
against the kinds `planner_kernels::Reference` runs.

The package exposes no list of its resolver's kinds, so each builtin code of the schema is
asked for: a model of one op of that code, built with the schema, is handed to the
interpreter in a process of its own (an op that is found may crash on the dummy tensors),
and the code is registered unless TFLM says `Didn't find op for builtin opcode`. `CUSTOM`
and codes the schema does not name are left out as builtin codes; custom ops are looked up
by name, so each name of CUSTOM_CANDIDATES (TFLM's signal library, the SSD decoder, the
Ethos-U op) is asked for the same way, and listed as `CUSTOM:<name>` unless TFLM says
`Didn't find op for custom opcode`. Kinds other engineers handle outside the reference kernels are marked
`elsewhere` with the reason.

    python3 scripts/tflm_registered_ops.py            # rewrite the list
    python3 scripts/tflm_registered_ops.py --check    # compare with the stored list

Needs: python3 with `tflite-micro` and `numpy`.
"""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s

from tflm_single_ops import Model, model_bytes

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "run-models" / "registered_ops.txt"

# Registered kinds that the reference kernels do not run, and why.
ELSEWHERE = {
    "CUSTOM:ethos-u": "an Ethos-U NPU's command stream",
    "IF": "the importer: both branches join the op list under an `if` control entry",
    "WHILE": "the importer: condition and body join the op list under a `while` control entry",
    "CALL_ONCE": "the importer: the initialisation subgraph joins the op list under a `once` control entry",
    "VAR_HANDLE": "the importer: resolves the handle to the variable's persistent tensor",
    "READ_VARIABLE": "the importer: a copy out of the variable's persistent tensor",
    "ASSIGN_VARIABLE": "the importer: a copy into the variable's persistent tensor",
}

PROBE = """
import sys
from tflite_micro.python.tflite_micro import runtime
data = sys.stdin.buffer.read()
try:
    runtime.Interpreter.from_bytes(data, arena_size=1 << 16)
except Exception:
    pass
"""


def registered(code):
    """True unless TFLM's resolver has no op for builtin `code`."""
    m = Model()
    x = m.tensor("x", [1], np.float32)
    y = m.tensor("y", [1], np.float32)
    data = model_bytes(m.tensors, m.buffers, code, [x], [y])
    run = subprocess.run([sys.executable, "-c", PROBE], input=data, capture_output=True,
                         timeout=120, check=False)
    text = (run.stdout + run.stderr).decode(errors="replace")
    return "Didn't find op for builtin opcode" not in text


# Custom op names TFLM's interpreter may register.
CUSTOM_CANDIDATES = [
    "SignalDelay", "SignalEnergy", "SignalFftAutoScale", "SignalFilterBank",
    "SignalFilterBankLog", "SignalFilterBankSpectralSubtraction", "SignalFilterBankSquareRoot",
    "SignalFramer", "SignalIrfft", "SignalOverlapAdd", "SignalPCAN", "SignalRfft",
    "SignalStacker", "SignalWindow", "TFLite_Detection_PostProcess", "ethos-u",
]


def registered_custom(name):
    """True unless TFLM's resolver has no op for custom op `name`."""
    m = Model()
    x = m.tensor("x", [1], np.float32)
    y = m.tensor("y", [1], np.float32)
    data = bytearray(model_bytes(m.tensors, m.buffers, 32, [x], [y]))
    model = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
    model.operatorCodes[0].customCode = name
    import flatbuffers
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    run = subprocess.run([sys.executable, "-c", PROBE], input=bytes(b.Output()),
                         capture_output=True, timeout=120, check=False)
    text = (run.stdout + run.stderr).decode(errors="replace")
    return "Didn't find op for custom opcode" not in text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    names = {v: k for k, v in vars(s.BuiltinOperator).items() if not k.startswith("_")}
    kinds = sorted(names[c] for c in sorted(names) if names[c] != "CUSTOM" and registered(c))
    kinds += sorted(f"CUSTOM:{n}" for n in CUSTOM_CANDIDATES if registered_custom(n))
    from tflite_micro.python.tflite_micro import _version
    lines = [
        "# Op kinds (builtin, and custom by name) the tflite-micro interpreter's op resolver registers",
        f"# (package {_version.__version__}), written by scripts/tflm_registered_ops.py.",
        "# `NAME elsewhere: why` marks a kind the reference kernels leave to other code.",
    ]
    for k in kinds:
        lines.append(f"{k} elsewhere: {ELSEWHERE[k]}" if k in ELSEWHERE else k)
    text = "\n".join(lines) + "\n"
    if args.check:
        same = TARGET.exists() and TARGET.read_text() == text
        print(f"{TARGET.name}: {'unchanged' if same else 'differs'}")
        return 0 if same else 1
    TARGET.write_text(text)
    print(f"{TARGET.relative_to(ROOT)}: {len(kinds)} kinds, {len(ELSEWHERE)} elsewhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
