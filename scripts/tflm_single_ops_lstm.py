#!/usr/bin/env python3
"""One-op UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF models, and TFLM's state over two invokes.

1. Writes `tests/run-models/single/op_lstm_<case>.tflite` and `op_svdf_<case>.tflite` (with
   the helpers of `scripts/tflm_single_ops.py`): one LSTM or SVDF op with random weights over
   the cases the bundled models do not cover (float32; int8 time-major with two batches, a
   cell clip, a cell scale that is not a power of two and a hidden zero point far from 0;
   an SVDF of more than 64 units, one of rank 2 over ten batches with an int16 state;
   float32 SVDFs with a fused RELU or TANH).
   Their per-op goldens are then written as every one-op model's: `python3
   scripts/tflm_op_goldens.py --only op_lstm_<case>`.
2. Writes `tests/run-models/goldens/state/<model>.json` for every bundled model and every
   one-op model of `single/` with variable tensors (an LSTM's or an SVDF's state): two
   inputs invoked one after the other on one TFLM interpreter, without a reset, and per
   invoke the model's outputs and every variable tensor's bytes after it (with the last op
   that reads it and its input position there); also the model's
   outputs for the second input on a fresh interpreter (so a test can check that the state
   carried over matters). The inputs are made as `scripts/tflm_op_goldens.py` makes them
   (same generator and range as the model's op goldens, other seeds: FNV-1a 64 of the
   model's file stem + `0x57A7E000 + 16 * invoke + input`).

    python3 scripts/tflm_single_ops_lstm.py          # models, then state goldens
    python3 scripts/tflm_single_ops_lstm.py --state  # state goldens only

Needs: python3 with `tflite-micro` and `numpy`. CI does not run this: the Rust tests read
the stored files.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_op_goldens import (  # noqa: E402
    GOLDENS,
    MODELS,
    SINGLE,
    input_seed,
    make_input,
    outputs_of,
)
from tflm_single_ops import OUT, ROOT, Model, model_bytes, s, save  # noqa: E402

from tflite_micro.python.tflite_micro import runtime  # noqa: E402

STATE = ROOT / "tests" / "run-models" / "goldens" / "state"
# Added to the FNV-1a 64 of the model's stem (`input_seed`): the state goldens' input streams.
STATE_SALT = 0x57A7E000


class LstmModel(Model):
    """A one-LSTM model: the graph's inputs are the op's first input only."""

    def variable(self, name, shape, dtype, quant=None):
        t = self.tensor(name, shape, dtype, quant)
        self.tensors[t].isVariable = True
        return t

    def write_lstm(self, name, inputs, output, options):
        """Writes `single/op_<name>.tflite`: the LSTM over `inputs`, the graph's input the
        op's first."""
        lstm = s.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM
        kind = s.BuiltinOptions.UnidirectionalSequenceLSTMOptions
        save(f"op_{name}", model_bytes(self.tensors, self.buffers, lstm, inputs, [output], kind,
                                       options, "scripts/tflm_single_ops_lstm.py", [inputs[0]]))


def options(time_major, cell_clip=0.0):
    o = s.UnidirectionalSequenceLSTMOptionsT()
    o.fusedActivationFunction = s.ActivationFunctionType.TANH
    o.cellClip = cell_clip
    o.projClip = 0.0
    o.timeMajor = time_major
    return o


def lstm_float(name, batch, steps, n_in, units, time_major, cell_clip, seed):
    rng = np.random.default_rng(seed)
    m = LstmModel()
    shape = [steps, batch, n_in] if time_major else [batch, steps, n_in]
    x = m.tensor("input", shape, np.float32)
    w = [
        m.tensor(f"w_{g}", [units, n_in], np.float32, data=rng.normal(0, 0.6, (units, n_in)))
        for g in "ifco"
    ]
    r = [
        m.tensor(f"r_{g}", [units, units], np.float32, data=rng.normal(0, 0.5, (units, units)))
        for g in "ifco"
    ]
    b = [m.tensor(f"b_{g}", [units], np.float32, data=rng.normal(0, 0.3, units)) for g in "ifco"]
    h = m.variable("hidden", [batch, units], np.float32)
    c = m.variable("cell", [batch, units], np.float32)
    out_shape = shape[:2] + [units]
    y = m.tensor("output", out_shape, np.float32)
    inputs = [x] + w + r + [-1, -1, -1] + b + [-1, -1, h, c, -1, -1, -1, -1]
    m.write_lstm(name, inputs, y, options(time_major, cell_clip))


def lstm_int8(name, batch, steps, n_in, units, time_major, cell_clip, q, seed):
    """int8 LSTM: `q` holds the input, hidden and cell quantisations."""
    rng = np.random.default_rng(seed)
    m = LstmModel()
    shape = [steps, batch, n_in] if time_major else [batch, steps, n_in]
    x = m.tensor("input", shape, np.int8, q["input"])

    def weights(tag, rows, cols):
        data = rng.integers(-127, 128, (rows, cols))
        return m.tensor(tag, [rows, cols], np.int8, (rng.uniform(0.002, 0.02), 0), data)

    w = [weights(f"w_{g}", units, n_in) for g in "ifco"]
    r = [weights(f"r_{g}", units, units) for g in "ifco"]
    b = [
        m.tensor(f"b_{g}", [units], np.int32, (1e-5, 0), rng.integers(-3000, 3000, units))
        for g in "ifco"
    ]
    h = m.variable("hidden", [batch, units], np.int8, q["hidden"])
    c = m.variable("cell", [batch, units], np.int16, q["cell"])
    y = m.tensor("output", shape[:2] + [units], np.int8, q["hidden"])
    inputs = [x] + w + r + [-1, -1, -1] + b + [-1, -1, h, c, -1, -1, -1, -1]
    m.write_lstm(name, inputs, y, options(time_major, cell_clip))


def svdf_int8(name, batch, n_in, units, rank, memory, state_type, q, seed):
    """int8 SVDF with an int8 or int16 (`state_type`) state and time weights: `q` holds the
    input, state and output quantisations."""
    rng = np.random.default_rng(seed)
    m = LstmModel()
    filters = units * rank
    x = m.tensor("input", [batch, n_in], np.int8, q["input"])
    wf = m.tensor("weights_feature", [filters, n_in], np.int8, (rng.uniform(0.004, 0.02), 0),
                  rng.integers(-127, 128, (filters, n_in)))
    top = 127 if state_type == np.int8 else 32767
    s_wt = rng.uniform(0.004, 0.02)
    wt = m.tensor("weights_time", [filters, memory], state_type, (s_wt, 0),
                  rng.integers(-top, top + 1, (filters, memory)))
    # TFLM asks the bias for the scale of the time sums: the state's times the weights'.
    b = m.tensor("bias", [units], np.int32, (q["state"][0] * s_wt, 0),
                 rng.integers(-20000, 20000, units))
    st = m.variable("state", [batch, filters * memory], state_type, q["state"])
    y = m.tensor("output", [batch, units], np.int8, q["output"])
    o = s.SVDFOptionsT()
    o.rank = rank
    o.fusedActivationFunction = s.ActivationFunctionType.NONE
    o.asymmetricQuantizeInputs = False
    save(f"op_{name}", model_bytes(m.tensors, m.buffers, s.BuiltinOperator.SVDF,
                                   [x, wf, wt, b, st], [y], s.BuiltinOptions.SVDFOptions, o,
                                   "scripts/tflm_single_ops_lstm.py", [x]))


def svdf_float(name, batch, n_in, units, rank, memory, activation, seed):
    """float32 SVDF with the fused `activation` (TFLM's float kernel applies it)."""
    rng = np.random.default_rng(seed)
    m = LstmModel()
    filters = units * rank
    x = m.tensor("input", [batch, n_in], np.float32)
    wf = m.tensor("weights_feature", [filters, n_in], np.float32,
                  data=rng.normal(0, 0.5, (filters, n_in)))
    wt = m.tensor("weights_time", [filters, memory], np.float32,
                  data=rng.normal(0, 0.5, (filters, memory)))
    b = m.tensor("bias", [units], np.float32, data=rng.normal(0, 0.3, units))
    st = m.variable("state", [batch, filters * memory], np.float32)
    y = m.tensor("output", [batch, units], np.float32)
    o = s.SVDFOptionsT()
    o.rank = rank
    o.fusedActivationFunction = activation
    o.asymmetricQuantizeInputs = False
    save(f"op_{name}", model_bytes(m.tensors, m.buffers, s.BuiltinOperator.SVDF,
                                   [x, wf, wt, b, st], [y], s.BuiltinOptions.SVDFOptions, o,
                                   "scripts/tflm_single_ops_lstm.py", [x]))


def models():
    OUT.mkdir(parents=True, exist_ok=True)
    # float32 SVDF: rank 2 over two batches with a RELU; rank 1 with a TANH.
    svdf_float("svdf_f32_relu_rank2", 2, 6, 5, 2, 4, s.ActivationFunctionType.RELU, 7)
    svdf_float("svdf_f32_tanh", 1, 9, 7, 1, 3, s.ActivationFunctionType.TANH, 8)
    # SVDF past the sizes of the bundled models: 100 units of rank 1 (more than 64 at once),
    # an int8 state; 40 units of rank 2 (80 filters) over ten batches with an int16 state.
    q = {"input": (0.05, -10), "state": (0.4, -20), "output": (1.5, 5)}
    svdf_int8("svdf_i8_wide", 1, 12, 100, 1, 5, np.int8, q, 5)
    q = {"input": (0.08, 3), "state": (0.002, 0), "output": (3.0, -7)}
    svdf_int8("svdf_i16_rank2_batches", 10, 7, 40, 2, 3, np.int16, q, 6)
    # float32, batch-major, odd sizes, no clip; and time-major with two batches and a clip.
    lstm_float("lstm_f32", 1, 7, 5, 6, False, 0.0, 1)
    lstm_float("lstm_f32_time_major_clip", 2, 5, 3, 4, True, 0.8, 2)
    # int8, time-major with two batches, a cell clip, a cell scale that is not a power of
    # two (tanh reads it at the nearest one) and a hidden zero point far from 0.
    q = {"input": (0.05, -20), "hidden": (0.0078, 100), "cell": (0.0003, 0)}
    lstm_int8("lstm_i8_time_major_clip", 2, 6, 9, 5, True, 0.9, q, 3)
    # int8, batch-major with three batches, an input zero point of 127, a coarse cell
    # scale (2^-9: tanh shifts left).
    q = {"input": (0.1, 127), "hidden": (0.009, 10), "cell": (1 / 512, 0)}
    lstm_int8("lstm_i8_coarse_cell", 3, 4, 7, 3, False, 0.0, q, 4)


def variables(path):
    """`(tensor index, name, op, input)` of the model's variable tensors, with the last op
    (model order) that reads each and the input position it has there."""
    model = s.Model.GetRootAsModel(path.read_bytes(), 0)
    sub = model.Subgraphs(0)
    out = []
    for i in range(sub.TensorsLength()):
        t = sub.Tensors(i)
        if not t.IsVariable():
            continue
        reader = None
        for k in range(sub.OperatorsLength()):
            op = sub.Operators(k)
            for j in range(op.InputsLength()):
                if op.Inputs(j) == i:
                    reader = (k, j)
        if reader is not None:
            out.append((i, (t.Name() or b"").decode(), reader[0], reader[1]))
    return out


def interpreter(path):
    return runtime.Interpreter.from_file(
        str(path),
        arena_size=max(10 * path.stat().st_size, 1 << 16),
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )


def state_goldens():
    STATE.mkdir(parents=True, exist_ok=True)
    paths = sorted(MODELS.glob("*.tflite")) + sorted(SINGLE.glob("*.tflite"))
    for path in paths:
        var = variables(path)
        if not var:
            continue
        ops_golden = GOLDENS / f"{path.stem}.json"
        if not ops_golden.exists():
            print(f"{path.stem}: no op goldens; run scripts/tflm_op_goldens.py --only {path.stem}")
            continue
        ops = json.loads(ops_golden.read_text())
        n_ops = len(ops["runs"][0]["ops"])
        ranges = [(i["lo"], i["hi"]) for i in ops["runs"][0]["inputs"]]
        interp = interpreter(path)
        runs = []
        fed = []
        for r in range(2):
            inputs = []
            feed = []
            for k, (lo, hi) in enumerate(ranges):
                seed = input_seed(path.stem, r, k, STATE_SALT)
                data, entry = make_input(interp.get_input_details(k), seed, lo, hi)
                interp.set_input(data, k)
                feed.append(data)
                inputs.append(entry)
            interp.invoke()
            fed.append(feed)
            state = []
            for t, name, op, position in var:
                got = interp.GetTensor(t, 0)
                value = np.asarray(got["tensor_data"], dtype=got["dtype"])
                state.append(
                    {
                        "tensor": name,
                        "index": t,
                        "op": op,
                        "input": position,
                        "dtype": value.dtype.name,
                        "hex": value.tobytes().hex(),
                    }
                )
            runs.append(
                {
                    "inputs": inputs,
                    "outputs": [o.tobytes().hex() for o in outputs_of(interp)],
                    "variables": state,
                }
            )
        fresh = interpreter(path)
        for k, data in enumerate(fed[1]):
            fresh.set_input(data, k)
        fresh.invoke()
        second_fresh = [o.tobytes().hex() for o in outputs_of(fresh)]
        golden = {
            "model": path.stem,
            "generator": "scripts/tflm_single_ops_lstm.py",
            "ops": n_ops,
            "runs": runs,
            "second_fresh": second_fresh,
        }
        (STATE / f"{path.stem}.json").write_text(json.dumps(golden, indent=1) + "\n")
        differs = second_fresh != runs[1]["outputs"]
        print(
            f"{path.stem}: {len(var)} variables; the second invoke's outputs "
            f"{'differ from' if differs else 'equal'} a fresh interpreter's"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", action="store_true", help="only the state goldens")
    args = ap.parse_args()
    if not args.state:
        models()
    state_goldens()


if __name__ == "__main__":
    main()
