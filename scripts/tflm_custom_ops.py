"""What the scripts that write models of TFLM's custom ops (`scripts/tflm_signal_*.py`;
`scripts/tflm_detection_postprocess.py` builds its models only) share: building models of
custom ops (their options a flexbuffer map) and builtins, the seeded random inputs, running
a model in the `tflite_micro` interpreter, the check that the outputs vary with the input,
the text of a golden's values, writing a case's model and golden, and TFLM's PCAN gain
table.

Not a script: `import tflm_custom_ops as custom` from a script in this folder.
"""

import sys
from pathlib import Path

import flatbuffers
import numpy as np
from flatbuffers import flexbuffers
from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_single_ops as single  # noqa: E402
from tflm_single_ops import Tensors, operator, s  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# The one-op models of the signal ops, and the goldens their kernels' unit tests read.
MODELS = ROOT / "tests" / "run-models" / "single_signal"
GOLDENS = ROOT / "planner-kernels" / "src" / "reference" / "signal" / "goldens"

# Element types the custom ops use that the shared script's table lacks (this process only).
single.TYPES.setdefault(np.uint32, s.TensorType.UINT32)
single.TYPES.setdefault(np.uint64, s.TensorType.UINT64)
# A dtype's TensorType code, as the ops' "T" option gives their element type.
TYPE_CODES = single.TYPES

CUSTOM = 32


class Graph(Tensors):
    """A one-subgraph model of one or more ops (builtin and custom) under construction."""

    def __init__(self, description):
        super().__init__(description)
        self.codes = []
        self.ops = []

    def const(self, name, values, dtype, shape=None):
        values = np.asarray(values, dtype=dtype)
        return self.tensor(name, list(values.shape) if shape is None else shape, dtype,
                           data=values)

    def _code(self, key):
        if key not in self.codes:
            self.codes.append(key)
        return self.codes.index(key)

    def builtin(self, builtin, inputs, outputs, options_type=0, options=None):
        self.ops.append(operator(self._code(builtin), inputs, outputs, options_type, options))
        return outputs[0] if len(outputs) == 1 else outputs

    def custom(self, code, inputs, outputs, options=None):
        """Adds the custom op `code`, its `options` (a dict, or None for none) as a
        flexbuffer map; returns its output (or outputs, when more than one)."""
        op = operator(self._code(code), inputs, outputs)
        if options is not None:
            op.customOptions = list(flexbuffers.Dumps(options))
            op.customOptionsFormat = 0
        self.ops.append(op)
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self, inputs, outputs):
        """The flatbuffer of the model, the graph reading `inputs` and writing `outputs`."""
        codes = []
        for key in self.codes:
            c = s.OperatorCodeT()
            if isinstance(key, str):
                c.builtinCode = CUSTOM
                c.deprecatedBuiltinCode = CUSTOM
                c.customCode = key
            else:
                c.builtinCode = key
                c.deprecatedBuiltinCode = min(key, 127)
            c.version = 1
            codes.append(c)
        g = s.SubGraphT()
        g.tensors = self.tensors
        g.inputs = inputs
        g.outputs = outputs
        g.operators = self.ops
        g.name = "main"
        m = s.ModelT()
        m.version = 3
        m.operatorCodes = codes
        m.subgraphs = [g]
        m.buffers = self.buffers
        m.description = self.description
        b = flatbuffers.Builder(4096)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def one_op(self, code, inputs, outputs, options):
        """The flatbuffer of a model of the one custom op `code` over this graph's tensors,
        the graph's inputs the op's inputs that are not constants."""
        self.custom(code, inputs, outputs, options)
        return self.model([i for i in inputs if self.tensors[i].buffer == 0], outputs)


def pcan_gain_lut(strength, offset, input_bits, gain_bits):
    """The PCAN gain LUT: gain(x) = 2^gain_bits (x / 2^input_bits + offset)^-strength in
    Q0 int16 (float32 arithmetic, saturated, rounded half up) at x = 0 and 1, then per
    power-of-two interval [2^(i-1), 2^i) of x (i = 2..32) a quadratic through its start,
    middle and end: `y0, a1, a2, 0` (4 values an interval, the last interval's dropped
    padding making 125 values)."""

    def gain(x):
        xf = np.float32(np.float32(x) / np.float32(1 << input_bits))
        g = np.float32(np.float32(1 << gain_bits)
                       * np.power(np.float32(xf + np.float32(offset)), np.float32(-strength)))
        return 32767 if g > 32767 else int(g + np.float32(0.5))

    lut = [gain(0), gain(1)]
    for i in range(2, 33):
        x0 = 1 << (i - 1)
        x1 = x0 + (x0 >> 1)
        x2 = x0 + (x0 - 1) if i == 32 else 2 * x0
        y0, y1, y2 = gain(x0), gain(x1), gain(x2)
        a1 = 4 * (y1 - y0) - (y2 - y0)
        a2 = (y2 - y0) - a1
        # Interval i starts at 4 i - 6: intervals 2.. follow the two single values.
        assert len(lut) == 4 * i - 6
        lut += [y0, a1, a2, 0]
    return np.array(lut[:4 * 32 - 3], dtype=np.int64).astype(np.int16)


class Random(np.random.Generator):
    """A seeded generator (the stream of `np.random.default_rng(seed)`) with the random
    inputs the scripts draw."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))

    def i16(self, shape):
        """Uniform int16 values over the whole range."""
        return self.integers(-32768, 32768, size=shape, dtype=np.int64).astype(np.int16)

    def i16_full(self, n):
        """Uniform int16 values with some of them set to -32768 and some to 32767."""
        v = self.integers(-32768, 32768, size=n, dtype=np.int64)
        v[self.integers(0, n, size=max(1, n // 8))] = -32768
        v[self.integers(0, n, size=max(1, n // 8))] = 32767
        return v.astype(np.int16)

    def u_bits(self, n, max_bits, dtype, min_bits=0):
        """Unsigned values of random bit lengths min_bits..max_bits (every magnitude)."""
        bits = self.integers(min_bits, max_bits + 1, size=n)
        out = []
        for b in bits:
            if b == 0:
                out.append(0)
            else:
                low = int(self.integers(0, 1 << (int(b) - 1), dtype=np.uint64))
                out.append((1 << (int(b) - 1)) | low)
        return np.array(out, dtype=np.uint64).astype(dtype)

    def scaled(self, dtype, shape, run):
        """Run `run`'s input: full scale, then smaller amplitudes, a different one a run."""
        if dtype == np.float32:
            amp = [1000.0, 1.0, 30000.0, 0.01][run % 4]
            return (self.standard_normal(shape) * amp).astype(np.float32)
        info = np.iinfo(dtype)
        amp = [info.max, 300, info.max // 7, 3][run % 4]
        x = self.integers(-amp, amp, size=shape, endpoint=True, dtype=np.int64)
        return x.astype(dtype)

    def extremes(self, dtype, shape, run=None):
        """Full-scale values only (the type's minimum and maximum), a different mix a run."""
        info = np.iinfo(dtype)
        return self.choice(np.array([info.min, info.max], dtype=dtype), size=shape)

    def small(self, n, amp):
        """`n` integers of -amp..=amp."""
        return self.integers(-amp, amp, size=n, endpoint=True)


def interpreter(model, arena_size=None, **kwargs):
    """The `tflite_micro` interpreter of `model` (its default arena unless `arena_size`)."""
    if arena_size is not None:
        kwargs["arena_size"] = arena_size
    return runtime.Interpreter.from_bytes(model, **kwargs)


def invoke(interp, inputs, outputs):
    """Sets the graph's inputs to `inputs`, runs `interp` once and returns copies of its
    first `outputs` outputs."""
    for i, x in enumerate(inputs):
        interp.set_input(x, i)
    interp.invoke()
    return [np.array(interp.get_output(k)) for k in range(outputs)]


def assert_vary(case, runs, at_least=None):
    """Asserts that the outputs follow the inputs: `runs` (per run an array, or a list of
    arrays) differ from run to run, all of them or at least `at_least` distinct."""
    distinct = {b"".join(np.asarray(a).tobytes() for a in (r if isinstance(r, list) else [r]))
                for r in runs}
    need = len(runs) if at_least is None else at_least
    assert len(distinct) >= need, f"{case}: outputs do not vary with the input"


def positional(v):
    """A float as the shortest positional decimal that reads back to the same float32."""
    return np.format_float_positional(v, unique=True, trim="-")


def values_text(values, float_str=positional):
    """The values of an array, flattened, as a golden's text: separated by spaces, integers
    in decimal, float32 values by `float_str` (finite only)."""
    flat = np.asarray(values).reshape(-1)
    if flat.dtype == np.float32:
        assert np.all(np.isfinite(flat)), "non-finite float in a golden"
        return " ".join(float_str(v) for v in flat)
    return " ".join(str(int(v)) for v in flat)


def save_model(stem, data, folder=MODELS):
    """Writes `folder/<stem>.tflite`; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.tflite"
    path.write_bytes(data)
    return path


def write_case(case, model, lines, script=None):
    """Writes the model of `case` (`MODELS/op_sig_<case>.tflite`) and its golden
    (`GOLDENS/<case>.txt`: `lines`, after a comment naming `script` unless None); returns
    the golden's length."""
    save_model(f"op_sig_{case}", model)
    if script is not None:
        lines = [f"# {case}: written by {script}"] + lines
    text = "\n".join(lines) + "\n"
    assert len(text) < 40_000, f"{case}: golden of {len(text)} bytes"
    GOLDENS.mkdir(parents=True, exist_ok=True)
    (GOLDENS / f"{case}.txt").write_text(text)
    return len(text)
