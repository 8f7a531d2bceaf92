#!/usr/bin/env python3
"""One-op models of the second batch of builtin kernels (issue 25), for the per-op golden tests.

Writes `tests/run-models/single/op_b2_<case>.tflite` with the helpers of
`scripts/tflm_single_ops.py`: the float32 kernels (FULLY_CONNECTED, ADD, SUB, MUL, LOGISTIC,
TANH, SOFTMAX, RELU, RELU6), SPLIT, SPLIT_V, PACK, UNPACK, RESIZE_BILINEAR and TRANSPOSE_CONV.
Then `scripts/tflm_op_goldens.py --only <stem>` writes each one's TFLM goldens.

Float inputs state a `(min, max)` in their quantisation parameters (TFLM ignores them on a
float tensor): `scripts/tflm_op_goldens.py` draws their values from that range, so that
negative values, the cut-offs of LOGISTIC and the clamps of RELU6 are exercised.

    python3 scripts/tflm_single_ops_b2.py
    for f in tests/run-models/single/op_b2_*.tflite; do
        python3 scripts/tflm_op_goldens.py --only "$(basename "$f" .tflite)"
    done
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_single_ops import Model, s  # noqa: E402

F32 = np.float32
I8 = np.int8
I32 = np.int32
B = s.BuiltinOperator
O = s.BuiltinOptions
A = s.ActivationFunctionType


def bounded(m, name, shape, lo, hi):
    """A float input whose values `scripts/tflm_op_goldens.py` draws from `[lo, hi]`."""
    t = m.tensor(name, shape, F32)
    q = s.QuantizationParametersT()
    q.min = [float(lo)]
    q.max = [float(hi)]
    m.tensors[t].quantization = q
    return t


def rng(seed):
    return np.random.default_rng(seed)


def fc_f32(name, in_shape, units, bounds, activation, bias=True, seed=1):
    m = Model()
    x = bounded(m, "x", in_shape, *bounds)
    depth = in_shape[-1]
    r = rng(seed)
    w = m.tensor("w", [units, depth], F32, data=r.normal(0, 0.5, (units, depth)).astype(F32))
    inputs = [x, w]
    if bias:
        inputs.append(m.tensor("bias", [units], F32, data=r.normal(0, 1.0, units).astype(F32)))
    batches = int(np.prod(in_shape)) // depth
    y = m.tensor("y", [batches, units], F32)
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    m.write(f"b2_{name}", B.FULLY_CONNECTED, inputs, [y], O.FullyConnectedOptions, o)


def binary_f32(name, builtin, shapes, bounds, activation):
    m = Model()
    a = bounded(m, "a", shapes[0], *bounds[0])
    b = bounded(m, "b", shapes[1], *bounds[1])
    out = list(np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])))
    y = m.tensor("y", out, F32)
    opts = {
        B.ADD: (O.AddOptions, s.AddOptionsT),
        B.SUB: (O.SubOptions, s.SubOptionsT),
        B.MUL: (O.MulOptions, s.MulOptionsT),
    }[builtin]
    o = opts[1]()
    o.fusedActivationFunction = activation
    m.write(f"b2_{name}", builtin, [a, b], [y], opts[0], o)


def unary_f32(name, builtin, shape, bounds, options_type=0, options=None):
    m = Model()
    x = bounded(m, "x", shape, *bounds)
    y = m.tensor("y", shape, F32)
    m.write(f"b2_{name}", builtin, [x], [y], options_type, options)


def softmax_f32(name, shape, bounds, beta):
    o = s.SoftmaxOptionsT()
    o.beta = beta
    unary_f32(name, B.SOFTMAX, shape, bounds, O.SoftmaxOptions, o)


def floats():
    fc_f32("fc_f32_relu", [3, 13], 7, (-2, 2), A.RELU)
    fc_f32("fc_f32_rank3_nobias", [2, 3, 5], 4, (-4, 3), A.NONE, bias=False, seed=2)
    fc_f32("fc_f32_long", [2, 301], 5, (-1, 1), A.RELU6, seed=3)
    binary_f32("add_f32_broadcast_relu6", B.ADD, [[2, 3, 4], [3, 1]], [(-4, 4), (-3, 5)], A.RELU6)
    binary_f32("add_f32_same", B.ADD, [[5, 7], [5, 7]], [(-1e3, 1e3), (-1e-3, 1e-3)], A.NONE)
    binary_f32("sub_f32_broadcast", B.SUB, [[3, 1, 5], [4, 1]], [(-2, 2), (-3, 1)], A.NONE)
    binary_f32("sub_f32_relu", B.SUB, [[2, 9], [2, 9]], [(-2, 2), (-2, 2)], A.RELU)
    binary_f32("mul_f32_broadcast_n1", B.MUL, [[4, 1, 5], [3, 1]], [(-2, 2), (-1.5, 1.5)], A.RELU_N1_TO_1)
    binary_f32("mul_f32_same", B.MUL, [[3, 11], [3, 11]], [(-30, 30), (-0.1, 0.7)], A.NONE)
    unary_f32("logistic_f32", B.LOGISTIC, [2, 250], (-20, 20))
    unary_f32("logistic_f32_small", B.LOGISTIC, [3, 77], (-1, 1))
    unary_f32("tanh_f32", B.TANH, [2, 250], (-12, 12))
    unary_f32("tanh_f32_small", B.TANH, [3, 77], (-0.7, 0.7))
    unary_f32("relu_f32", B.RELU, [3, 51], (-5, 5))
    unary_f32("relu6_f32", B.RELU6, [5, 21], (-3, 9))
    softmax_f32("softmax_f32", [3, 37], (-8, 8), 1.0)
    softmax_f32("softmax_f32_beta", [2, 5, 9], (-20, 20), 0.7)


def main():
    floats()


if __name__ == "__main__":
    main()
