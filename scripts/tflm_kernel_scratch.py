#!/usr/bin/env python3
"""Measures the scratch every TFLM reference kernel requests, op kind by op kind.

For each case below, writes a one-op model to `tests/data/tflm_scratch/<case>.tflite` (built
with the `tflite-micro` package's flatbuffer schema) and loads it in TFLM's interpreter (the
`tflite-micro` PyPI package: reference kernels, GreedyMemoryPlanner). In a one-op model every
activation tensor and every kernel scratch buffer is live at the one op, so TFLM's head is
the sum of their sizes, each rounded up to 16 bytes; the kernel's scratch is what is left:

    scratch = head - sum(align16(activation bytes))

Writes `tests/data/tflm_kernel_scratch_ops.csv` (case, opcode, head, activations, scratch),
which the Rust test `planner/tests/tflm_kernel_scratch.rs` (no Python) checks the exporter's
rule table against, model by model. Usage, from the repository root:

    pip install tflite-micro numpy      # once
    python3 scripts/tflm_kernel_scratch.py
    python3 scripts/tflm_kernel_scratch.py --check   # fails if the stored figures differ
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_single_ops import model_bytes  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "data" / "tflm_scratch"
OUT = ROOT / "tests" / "data" / "tflm_kernel_scratch_ops.csv"
ARENA = 4 * 1024 * 1024
HEAD = re.compile(r"Arena allocation head (\d+) bytes")

TYPES = {
    np.int8: (s.TensorType.INT8, 1),
    np.int16: (s.TensorType.INT16, 2),
    np.int32: (s.TensorType.INT32, 4),
    np.float32: (s.TensorType.FLOAT32, 4),
}
Q8 = (0.05, 3)


class Model:
    """A one-op model under construction."""

    def __init__(self):
        self.buffers = [s.BufferT()]
        self.tensors = []

    def tensor(self, shape, dtype, quant=None, data=None, scales=None, qdim=0):
        t = s.TensorT()
        t.name = f"t{len(self.tensors)}"
        t.shape = list(shape)
        t.type = TYPES[dtype][0]
        t.buffer = 0
        if data is not None:
            b = s.BufferT()
            b.data = list(np.asarray(data, dtype=dtype).reshape(-1).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None or scales is not None:
            q = s.QuantizationParametersT()
            if scales is not None:
                q.scale = [float(x) for x in scales]
                q.zeroPoint = [0] * len(scales)
                q.quantizedDimension = qdim
            else:
                q.scale = [float(quant[0])]
                q.zeroPoint = [int(quant[1])]
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, shape, dtype, value=1, quant=None, scales=None, qdim=0):
        return self.tensor(shape, dtype, quant, np.full(shape, value, dtype=dtype), scales, qdim)

    def bytes(self, builtin, inputs, outputs, options_type=0, options=None):
        return model_bytes(self.tensors, self.buffers, builtin, inputs, outputs, options_type,
                           options, "scripts/tflm_kernel_scratch.py")

    def activation_bytes(self):
        """The rounded bytes of every non-constant tensor."""
        total = 0
        for t in self.tensors:
            if t.buffer != 0:
                continue
            n = int(np.prod(t.shape)) if t.shape else 1
            size = n * next(v[1] for v in TYPES.values() if v[0] == t.type)
            total += (size + 15) // 16 * 16
        return total


def opts(cls, **kw):
    o = cls()
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def fully_connected(dtype, n, m):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor([1, n], dtype, q)
    w = md.const([m, n], dtype, 1, q)
    b = md.const([m], np.int32 if dtype == np.int8 else np.float32, 0, (0.0025, 0) if q else None)
    y = md.tensor([1, m], dtype, q)
    o = opts(s.FullyConnectedOptionsT)
    return md, (s.BuiltinOperator.FULLY_CONNECTED, [x, w, b], [y], s.BuiltinOptions.FullyConnectedOptions, o)


def conv(dtype, h, w, c, oc, k, depthwise=False, stride=1):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor([1, h, w, c], dtype, q)
    if depthwise:
        f = md.const([1, k, k, c], dtype, 1, None, scales=[0.01] * c if q else None, qdim=3)
        oc = c
    else:
        f = md.const([oc, k, k, c], dtype, 1, None, scales=[0.01] * oc if q else None)
    b = md.const([oc], np.int32 if q else np.float32, 0, None, scales=[0.0005] * oc if q else None)
    oh, ow = (h + stride - 1) // stride, (w + stride - 1) // stride
    y = md.tensor([1, oh, ow, oc], dtype, q)
    if depthwise:
        o = opts(s.DepthwiseConv2DOptionsT, padding=s.Padding.SAME, strideW=stride, strideH=stride,
                 depthMultiplier=1, dilationWFactor=1, dilationHFactor=1)
        return md, (s.BuiltinOperator.DEPTHWISE_CONV_2D, [x, f, b], [y],
                    s.BuiltinOptions.DepthwiseConv2DOptions, o)
    o = opts(s.Conv2DOptionsT, padding=s.Padding.SAME, strideW=stride, strideH=stride,
             dilationWFactor=1, dilationHFactor=1)
    return md, (s.BuiltinOperator.CONV_2D, [x, f, b], [y], s.BuiltinOptions.Conv2DOptions, o)


def pool(builtin, dtype, h, w, c, k):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor([1, h, w, c], dtype, q)
    y = md.tensor([1, h // k, w // k, c], dtype, q)
    o = opts(s.Pool2DOptionsT, padding=s.Padding.VALID, strideW=k, strideH=k, filterWidth=k,
             filterHeight=k)
    return md, (builtin, [x], [y], s.BuiltinOptions.Pool2DOptions, o)


def binary(builtin, dtype, shape, options_type, cls):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    a = md.tensor(shape, dtype, q)
    b = md.tensor(shape, dtype, q)
    y = md.tensor(shape, dtype, (0.1, -2) if q else None)
    return md, (builtin, [a, b], [y], options_type, cls())


def unary(builtin, dtype, shape, qout=None, out_dtype=None, options_type=0, options=None):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor(shape, dtype, q)
    od = out_dtype or dtype
    y = md.tensor(shape, od, qout if qout else (Q8 if od == np.int8 else None))
    return md, (builtin, [x], [y], options_type, options)


def shape_of(dtype, shape):
    """SHAPE: the int32 dimensions of a `dtype` input."""
    md = Model()
    x = md.tensor(shape, dtype, Q8 if dtype == np.int8 else None)
    y = md.tensor([len(shape)], np.int32)
    return md, (B.SHAPE, [x], [y], 0, None)


def reshape(dtype, shape, new):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor(shape, dtype, q)
    sh = md.tensor([len(new)], np.int32, data=new)
    y = md.tensor(new, dtype, q)
    return md, (s.BuiltinOperator.RESHAPE, [x, sh], [y], s.BuiltinOptions.ReshapeOptions,
                opts(s.ReshapeOptionsT, newShape=list(new)))


def pad(dtype, shape, p):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor(shape, dtype, q)
    pads = np.array([[p, p]] * len(shape), dtype=np.int32)
    pads[0] = [0, 0]
    pt = md.tensor([len(shape), 2], np.int32, data=pads)
    out = [n + 2 * p if d > 0 else n for d, n in enumerate(shape)]
    y = md.tensor(out, dtype, q)
    return md, (s.BuiltinOperator.PAD, [x, pt], [y], s.BuiltinOptions.PadOptions, s.PadOptionsT())


def transpose(dtype, shape, perm):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor(shape, dtype, q)
    pt = md.tensor([len(perm)], np.int32, data=perm)
    y = md.tensor([shape[p] for p in perm], dtype, q)
    return md, (s.BuiltinOperator.TRANSPOSE, [x, pt], [y], s.BuiltinOptions.TransposeOptions,
                s.TransposeOptionsT())


def reduce(builtin, dtype, shape, axes, keep, qout=None):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    x = md.tensor(shape, dtype, q)
    a = md.tensor([len(axes)], np.int32, data=axes)
    out = [1 if d in axes else n for d, n in enumerate(shape) if keep or d not in axes]
    y = md.tensor(out, dtype, qout if qout else q)
    return md, (builtin, [x, a], [y], s.BuiltinOptions.ReducerOptions,
                opts(s.ReducerOptionsT, keepDims=keep))


def concat(dtype, shapes, axis):
    md = Model()
    q = Q8 if dtype in (np.int8, np.int16) else None
    xs = [md.tensor(sh, dtype, q) for sh in shapes]
    out = list(shapes[0])
    out[axis] = sum(sh[axis] for sh in shapes)
    y = md.tensor(out, dtype, q)
    return md, (s.BuiltinOperator.CONCATENATION, xs, [y], s.BuiltinOptions.ConcatenationOptions,
                opts(s.ConcatenationOptionsT, axis=axis))


B = s.BuiltinOperator
BO = s.BuiltinOptions
SOFTMAX_OUT = (1.0 / 256, -128)
CASES = {
    "shape_i8_2x3x5": lambda: shape_of(np.int8, [2, 3, 5]),
    "zeros_like_f32_4x7": lambda: unary(B.ZEROS_LIKE, np.float32, [4, 7]),
    "fully_connected_i8_37x11": lambda: fully_connected(np.int8, 37, 11),
    "fully_connected_i8_250x129": lambda: fully_connected(np.int8, 250, 129),
    "fully_connected_f32_37x11": lambda: fully_connected(np.float32, 37, 11),
    "conv_2d_i8_9x7x3_5k3": lambda: conv(np.int8, 9, 7, 3, 5, 3),
    "conv_2d_i8_16x16x8_16k3s2": lambda: conv(np.int8, 16, 16, 8, 16, 3, stride=2),
    "conv_2d_f32_9x7x3_5k3": lambda: conv(np.float32, 9, 7, 3, 5, 3),
    "depthwise_conv_2d_i8_9x7x6k3": lambda: conv(np.int8, 9, 7, 6, 6, 3, depthwise=True),
    "depthwise_conv_2d_i8_16x16x24k3s2": lambda: conv(np.int8, 16, 16, 24, 24, 3, True, 2),
    "depthwise_conv_2d_f32_9x7x6k3": lambda: conv(np.float32, 9, 7, 6, 6, 3, depthwise=True),
    "average_pool_2d_i8_12x10x7k2": lambda: pool(B.AVERAGE_POOL_2D, np.int8, 12, 10, 7, 2),
    "average_pool_2d_f32_12x10x7k2": lambda: pool(B.AVERAGE_POOL_2D, np.float32, 12, 10, 7, 2),
    "max_pool_2d_i8_12x10x7k2": lambda: pool(B.MAX_POOL_2D, np.int8, 12, 10, 7, 2),
    "add_i8_3x37": lambda: binary(B.ADD, np.int8, [3, 37], BO.AddOptions, s.AddOptionsT),
    "add_f32_3x37": lambda: binary(B.ADD, np.float32, [3, 37], BO.AddOptions, s.AddOptionsT),
    "mul_i8_3x37": lambda: binary(B.MUL, np.int8, [3, 37], BO.MulOptions, s.MulOptionsT),
    "mul_f32_3x37": lambda: binary(B.MUL, np.float32, [3, 37], BO.MulOptions, s.MulOptionsT),
    "sub_i8_3x37": lambda: binary(B.SUB, np.int8, [3, 37], BO.SubOptions, s.SubOptionsT),
    "softmax_i8_3x37": lambda: unary(B.SOFTMAX, np.int8, [3, 37], SOFTMAX_OUT, None,
                                     BO.SoftmaxOptions, opts(s.SoftmaxOptionsT, beta=1.0)),
    "softmax_f32_3x37": lambda: unary(B.SOFTMAX, np.float32, [3, 37], None, None,
                                      BO.SoftmaxOptions, opts(s.SoftmaxOptionsT, beta=1.0)),
    "logistic_i8_3x37": lambda: unary(B.LOGISTIC, np.int8, [3, 37], SOFTMAX_OUT),
    "tanh_i8_3x37": lambda: unary(B.TANH, np.int8, [3, 37], (1.0 / 128, 0)),
    "relu_i8_3x37": lambda: unary(B.RELU, np.int8, [3, 37]),
    "quantize_f32_3x37": lambda: unary(B.QUANTIZE, np.float32, [3, 37], Q8, np.int8),
    "dequantize_i8_3x37": lambda: unary(B.DEQUANTIZE, np.int8, [3, 37], None, np.float32),
    "reshape_i8_3x37": lambda: reshape(np.int8, [3, 37], [1, 111]),
    "pad_i8_1x5x7x3p2": lambda: pad(np.int8, [1, 5, 7, 3], 2),
    "transpose_i8_2x3x5": lambda: transpose(np.int8, [2, 3, 5], [2, 0, 1]),
    "mean_i8_1x7x5x9": lambda: reduce(B.MEAN, np.int8, [1, 7, 5, 9], [1, 2], True, (0.02, -1)),
    "mean_i8_1x7x5x9_same": lambda: reduce(B.MEAN, np.int8, [1, 7, 5, 9], [1, 2], True),
    "mean_i8_1x12x12x40": lambda: reduce(B.MEAN, np.int8, [1, 12, 12, 40], [1, 2], False, (0.02, -1)),
    "mean_f32_1x7x5x9": lambda: reduce(B.MEAN, np.float32, [1, 7, 5, 9], [1, 2], True),
    "mean_i8_2x5x3_last": lambda: reduce(B.MEAN, np.int8, [2, 5, 3], [2], False, (0.02, -1)),
    "mean_i8_4x6_last": lambda: reduce(B.MEAN, np.int8, [4, 6], [1], True, (0.02, -1)),
    "mean_i8_2x3x4x5_three": lambda: reduce(B.MEAN, np.int8, [2, 3, 4, 5], [1, 2, 3], True,
                                            (0.02, -1)),
    "mean_i16_1x7x5x9": lambda: reduce(B.MEAN, np.int16, [1, 7, 5, 9], [1, 2], True),
    "mean_f32_4x6_last": lambda: reduce(B.MEAN, np.float32, [4, 6], [1], True),
    "mean_f32_2x3x4x5_three": lambda: reduce(B.MEAN, np.float32, [2, 3, 4, 5], [1, 2, 3], True),
    "mean_f32_1x12x12x40": lambda: reduce(B.MEAN, np.float32, [1, 12, 12, 40], [1, 2], False),
    "mean_f32_1x2x3x4x5_four": lambda: reduce(B.MEAN, np.float32, [1, 2, 3, 4, 5], [1, 2, 3, 4],
                                              True),
    "mean_f32_8_all": lambda: reduce(B.MEAN, np.float32, [8], [0], True),
    "sum_f32_1x7x5x9": lambda: reduce(B.SUM, np.float32, [1, 7, 5, 9], [1, 2], True),
    "sum_i8_4x6_last": lambda: reduce(B.SUM, np.int8, [4, 6], [1], True, (0.02, -1)),
    "reduce_max_i8_1x7x5x9": lambda: reduce(B.REDUCE_MAX, np.int8, [1, 7, 5, 9], [1, 2], True),
    "reduce_max_f32_4x6_last": lambda: reduce(B.REDUCE_MAX, np.float32, [4, 6], [1], True),
    "relu6_i8_3x37": lambda: unary(B.RELU6, np.int8, [3, 37]),
    "hard_swish_i8_3x37": lambda: unary(B.HARD_SWISH, np.int8, [3, 37], (0.07, 1)),
    "leaky_relu_i8_3x37": lambda: unary(B.LEAKY_RELU, np.int8, [3, 37], None, None,
                                        BO.LeakyReluOptions, opts(s.LeakyReluOptionsT, alpha=0.2)),
    "sum_i8_1x7x5x9": lambda: reduce(B.SUM, np.int8, [1, 7, 5, 9], [1, 2], True, (0.02, -1)),
    "concatenation_i8_2x3_2x5": lambda: concat(np.int8, [[2, 3], [2, 5]], 1),
}


def child(path):
    """Runs in a child process: TFLM prints its figures from C++."""
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_file(path, arena_size=ARENA)
    sys.stdout.flush()
    interp.print_allocations()
    sys.stdout.flush()


def head(path):
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", str(path)],
                          capture_output=True, text=True, check=False)
    text = done.stdout + done.stderr
    m = HEAD.search(text)
    if done.returncode != 0 or not m:
        raise SystemExit(f"error: tflm failed on {path} (exit {done.returncode}):\n{text}")
    return int(m.group(1))


def main(argv):
    if len(argv) == 3 and argv[1] == "--one":
        child(argv[2])
        return 0
    check = argv[1:] == ["--check"]
    MODELS.mkdir(parents=True, exist_ok=True)
    rows = ["case,opcode,head,activations,scratch"]
    for case, build in CASES.items():
        md, (builtin, ins, outs, ot, o) = build()
        data = md.bytes(builtin, ins, outs, ot, o)
        path = MODELS / f"{case}.tflite"
        if not check:
            path.write_bytes(data)
        h = head(path)
        act = md.activation_bytes()
        name = next(k for k, v in vars(B).items() if v == builtin and not k.startswith("_"))
        rows.append(f"{case},{name},{h},{act},{h - act}")
        print(rows[-1])
    measured = {row.split(",")[1] for row in rows[1:]}
    for stem in SIGNAL_CASES + other_kinds(measured):
        data, name, act = file_case(stem)
        case = stem.removeprefix("op_")
        path = MODELS / f"{case}.tflite"
        if not check:
            path.write_bytes(data)
        h = head(path)
        rows.append(f"{case},{name},{h},{act},{h - act}")
        print(rows[-1])
    text = (
        "# scripts/tflm_kernel_scratch.py: TFLM's head on one-op models (tests/data/tflm_scratch/)\n"
        "# minus their activations each rounded to 16 bytes = the scratch the reference kernel\n"
        "# requests. tflite-micro (PyPI) " + version() + "\n" + "\n".join(rows) + "\n"
    )
    if check:
        if OUT.read_text().splitlines()[3:] != text.splitlines()[3:]:
            raise SystemExit(f"error: {OUT} differs from TFLM's figures; rerun without --check")
        print(f"{OUT.relative_to(ROOT)} matches")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


# TFLM's signal library ops and the SSD decoder, measured on their one-op models of
# tests/run-models/single/ (scripts/tflm_signal_*.py, scripts/tflm_detection_postprocess.py):
# one case per op kind and element type (the decoder: per NMS mode).
SIGNAL_CASES = [
    "op_sig_window_hann15_shift14", "op_sig_fft_auto_scale_len512", "op_sig_rfft_i16_len512_frame",
    "op_sig_rfft_f32_len30", "op_sig_rfft_i32_len256_pad", "op_sig_irfft_i16_len512",
    "op_sig_irfft_f32_len256", "op_sig_irfft_i32_len30", "op_sig_energy_full33",
    "op_sig_filter_bank_mel", "op_sig_fbsqrt_scale7", "op_sig_specsub_typical",
    "op_sig_pcan_typical", "op_sig_fblog_typical", "op_sig_framer_outer_prefill",
    "op_sig_stacker_no_context", "op_sig_delay_long_outer", "op_sig_overlap_add_i16_outer",
    "op_sig_overlap_add_f32_frames", "op_dpp_fast_basic", "op_dpp_regular_basic",
]

# Bytes per element of the tensor types the signal models use.
WIDTH = {s.TensorType.INT8: 1, s.TensorType.INT16: 2, s.TensorType.INT32: 4,
         s.TensorType.FLOAT32: 4, s.TensorType.UINT32: 4, s.TensorType.UINT64: 8,
         s.TensorType.BOOL: 1, s.TensorType.INT64: 8}


def file_case(stem):
    """`(data, opcode, rounded activation bytes)` of a stored one-op model."""
    data = (ROOT / "tests" / "run-models" / "single" / f"{stem}.tflite").read_bytes()
    m = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
    g = m.subgraphs[0]
    code = m.operatorCodes[g.operators[0].opcodeIndex]
    builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
    if builtin != B.CUSTOM:
        name = next(k for k, v in vars(B).items() if v == builtin and not k.startswith("_"))
    else:
        custom = code.customCode.decode() if isinstance(code.customCode, bytes) else code.customCode
        name = f"CUSTOM:{custom}"
    total = 0
    for t in g.tensors:
        buf = m.buffers[t.buffer].data if t.buffer < len(m.buffers) else None
        if buf is not None and len(buf) > 0:
            continue
        n = int(np.prod(t.shape)) if t.shape is not None and len(t.shape) else 1
        total += (n * WIDTH[t.type] + 15) // 16 * 16
    return data, name, total


def other_kinds(measured):
    """One stored one-op model (tests/run-models/single/op_*, the per-op golden models) for
    each builtin kind the cases above leave out, so every kind the kernels run is measured."""
    stems = []
    seen = set(measured)
    for path in sorted((ROOT / "tests" / "run-models" / "single").glob("op_*.tflite")):
        data = path.read_bytes()
        m = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
        g = m.subgraphs[0]
        if len(g.operators) != 1 or any(t.isVariable for t in g.tensors):
            continue
        _, name, _ = file_case(path.stem)
        if name not in seen:
            seen.add(name)
            stems.append(path.stem)
    return stems


def version():
    try:
        from importlib.metadata import version as v

        return v("tflite-micro")
    except Exception:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
