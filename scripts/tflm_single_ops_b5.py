#!/usr/bin/env python3
"""One-op models of the element types of the activation and quantisation kinds the reference
kernels lacked: RELU and RELU6 on int16, HARD_SWISH and LOG_SOFTMAX on float32, SOFTMAX int16
to int16 (and int8 to int16), QUANTIZE float32 to int16, int32 to int8 and int16, int8 to
int16, int16 to int16, int8 to uint8 and uint8 to int8, and DEQUANTIZE from uint8, for the
per-op golden tests.

Writes `tests/run-models/single/op_b5_<case>.tflite` with the layout of
`scripts/tflm_single_ops_b3.py` (its `Graph`: one or more ops, their non-constant inputs the
model's inputs, constants in the model). The input generators make no uint8 values, so the
uint8 kinds run in two-op models: an int8 input quantised to uint8, then quantised back to
int8 or dequantised (every op's output compared). The cases cover saturation at both ends of
each type, zero points at the extremes, int16 RELU with scales whose multiplier differs when
their ratio is taken in f32 (as TFLM's `activations_common.cc` reads) and in f64 (45 of the
32,767 positive inputs give other outputs, 12 of this model's; the `tflite-micro` package's
RELU agrees with the f64 ratio on all of them), and ties of the float-to-int16 rounding.

Run it, then `scripts/tflm_op_goldens.py --only` on each model it writes, as
`scripts/tflm_single_ops_b3.py` says with `b5` for `b3` (a model's description sets its
input ranges as there; needs python3 with `tflite-micro` and `numpy`):

    python3 scripts/tflm_single_ops_b5.py
"""

import numpy as np

import tflm_single_ops
import tflm_single_ops_b3 as b3
from tflm_single_ops import B, pack, s, save
from tflm_single_ops_b3 import F32, I8, I16, I32, options

U8 = np.uint8
# The model writer's element types lack uint8.
tflm_single_ops.TYPES.setdefault(U8, s.TensorType.UINT8)

# `tflm_single_ops_b3.Graph`, written by this script as `single/op_b5_<name>.tflite`.
Graph = type("Graph", (b3.Graph,), {"SCRIPT": "scripts/tflm_single_ops_b5.py", "PREFIX": "op_b5_"})


def unary(name, builtin, shape, types, qin=None, qout=None, opts=(), **ranges):
    """One op of one input and one output of `shape` (`types`: input, output)."""
    g = Graph(**ranges)
    x = g.tensor("x", shape, types[0], qin)
    y = g.tensor("y", shape, types[1], qout)
    g.op(builtin, [x], [y], *opts)
    g.write(name)


def through_uint8(name, shape, qin, qmid, qback, **ranges):
    """int8 `x` quantised to uint8 (`qmid`), then quantised back to int8 (`qback`) and
    dequantised."""
    g = Graph(**ranges)
    x = g.tensor("x", shape, I8, qin)
    u = g.tensor("u", shape, U8, qmid)
    back = g.tensor("back", shape, I8, qback)
    real = g.tensor("real", shape, F32)
    g.op(B.QUANTIZE, [x], [u])
    g.op(B.QUANTIZE, [u], [back])
    g.op(B.DEQUANTIZE, [u], [real])
    g.write(name)


def softmax_options(beta):
    return options("SoftmaxOptions", beta=beta)


def main():
    i16 = (I16, I16)
    # RELU int16 (zero points 0, TFLM's requirement): requantised, saturating at 32767.
    unary("relu_i16", B.RELU, [4, 9], i16, (0.0005, 0), (0.0004, 0))
    unary("relu_i16_saturate", B.RELU, [3, 12], i16, (0.002, 0), (0.0005, 0),
          int_range=(-32768, 32767))
    # Scales whose multiplier differs by 33 / 2^31 between the f32 and the f64 ratio.
    unary("relu_i16_scale_ratio", B.RELU, [64, 128], i16, (0.0018648772966116667, 0),
          (0.0021129439119249582, 0), int_range=(-32768, 32767))
    # RELU6 int16: clamps in the input's quantisation; zero points, six past 32767.
    unary("relu6_i16", B.RELU6, [4, 9], i16, (0.0003, 0), (0.0003, 0), int_range=(-32768, 32767))
    unary("relu6_i16_zero_point", B.RELU6, [3, 10], i16, (0.0002, -1000), (0.0002, -1000),
          int_range=(-32768, 32767))
    unary("relu6_i16_min_zero_point", B.RELU6, [3, 10], i16, (0.0001, -32768), (0.0001, -32768),
          int_range=(-32768, 32767))
    unary("relu6_i16_six_saturates", B.RELU6, [3, 10], i16, (0.0001, 5000), (0.0001, 5000),
          int_range=(-32768, 32767))
    # HARD_SWISH float: both bends (-3 and 3) on a grid, and a wide range.
    unary("hard_swish_f32_grid", B.HARD_SWISH, [4, 10], (F32, F32), float_range=(-5, 5),
          float_step=0.25)
    unary("hard_swish_f32_wide", B.HARD_SWISH, [3, 16], (F32, F32), float_range=(-40, 40))
    # LOG_SOFTMAX float over the last axis.
    for name, shape, lo, hi in [("log_softmax_f32", [3, 8], -4, 4),
                                ("log_softmax_f32_wide", [2, 3, 7], -60, 60)]:
        unary(name, B.LOG_SOFTMAX, shape, (F32, F32),
              opts=(s.BuiltinOptions.LogSoftmaxOptions, s.LogSoftmaxOptionsT()),
              float_range=(lo, hi))
    # SOFTMAX int16 to int16 (zero points 0, output scale 2^-15), and int8 to int16.
    q15 = (1.0 / 32768, 0)
    unary("softmax_i16", B.SOFTMAX, [3, 10], i16, (0.001, 0), q15, softmax_options(1.0))
    unary("softmax_i16_beta", B.SOFTMAX, [2, 40], i16, (0.0003, 0), q15, softmax_options(0.5),
          int_range=(-32768, 32767))
    unary("softmax_i16_coarse", B.SOFTMAX, [4, 6], i16, (0.01, 0), q15, softmax_options(2.0),
          int_range=(-600, 600))
    unary("softmax_i8_to_i16", B.SOFTMAX, [3, 12], (I8, I16), (0.1, 3), (1.0 / 65536, -32768),
          softmax_options(1.0))
    # QUANTIZE float to int16: saturation, a zero point, ties (x / scale on halves).
    unary("quantize_f32_i16", B.QUANTIZE, [4, 10], (F32, I16), None, (0.001, 0),
          float_range=(-40, 40))
    unary("quantize_f32_i16_zero_point_ties", B.QUANTIZE, [4, 10], (F32, I16), None, (0.5, 1000),
          float_range=(-20, 20), float_step=0.25)
    # QUANTIZE int32 to int8 and int16: saturation, zero points at the extremes.
    unary("quantize_i32_i8", B.QUANTIZE, [4, 10], (I32, I8), (0.00005, 0), (0.005, 3),
          int_range=(-20000, 20000))
    unary("quantize_i32_i8_zero_points", B.QUANTIZE, [4, 10], (I32, I8), (0.01, 100),
          (0.02, -128), int_range=(-1000, 600))
    unary("quantize_i32_i16", B.QUANTIZE, [4, 10], (I32, I16), (0.0001, 0), (0.003, 0),
          int_range=(-3000000, 3000000))
    unary("quantize_i32_i16_upscale", B.QUANTIZE, [4, 10], (I32, I16), (0.02, 5), (0.01, -7),
          int_range=(-20000, 20000))
    # QUANTIZE int8 to int16, int16 to int16.
    unary("quantize_i8_i16", B.QUANTIZE, [4, 10], (I8, I16), (0.05, -128), (0.0001, 20),
          int_range=(-128, 127))
    unary("quantize_i16_i16", B.QUANTIZE, [4, 10], i16, (0.0003, 0), (0.0002, -100),
          int_range=(-32768, 32767))
    unary("quantize_i16_i16_down", B.QUANTIZE, [4, 10], i16, (0.0002, 300), (0.0007, 32767),
          int_range=(-32768, 32767))
    # int8 to uint8 and back, and uint8 dequantised: TFLM's shift by 128 (same scale), a
    # rescale saturating at 255, zero points at the extremes.
    through_uint8("quantize_uint8_shift", [4, 10], (0.1, 0), (0.1, 128), (0.2, -5),
                  int_range=(-128, 127))
    through_uint8("quantize_uint8_rescale", [4, 10], (0.05, -128), (0.04, 10), (0.1, -128),
                  int_range=(-128, 127))
    through_uint8("quantize_uint8_zero_low", [4, 10], (0.02, 10), (0.015, 0), (0.02, 10),
                  int_range=(-128, 127))


if __name__ == "__main__":
    main()
