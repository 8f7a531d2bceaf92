#!/usr/bin/env python3
"""One-op models of the element types of the pooling, padding and reduction kinds the
reference kernels lacked (AVERAGE_POOL_2D and MAX_POOL_2D on float32 and int16, PAD on
float32, int16 and int32, MEAN on float32 and int16, SUM on int16), for the per-op golden
tests.

Writes `tests/run-models/single/op_b6_<case>.tflite` with the layout of
`scripts/tflm_single_ops_b3.py` (its `Graph`: one op, its non-constant inputs the model's
inputs, constants in the model). The cases cover SAME and VALID padding (windows clipped at
the edges, so the average's count varies), strides and non-square filters, every fused
activation (int16 clamps at the quantised bounds), int16 averages rounding half away from
zero on both signs, PAD's zero fill on each type and on every dimension, MEAN over the
rows and columns with and without keep_dims (TFLM's special float path and its general
one), negative, repeated-order and several axes, nonzero int16 zero points, and int16 SUM
saturating.

Run it, then `scripts/tflm_op_goldens.py --only` on each model it writes, as
`scripts/tflm_single_ops_b3.py` says with `b6` for `b3` (a model's description sets its
input ranges as there; needs python3 with `tflite-micro` and `numpy`):

    python3 scripts/tflm_single_ops_b6.py
"""

import numpy as np

import tflm_single_ops_b3 as b3
from tflm_single_ops import A, B, pack, save
from tflm_single_ops_b3 import F32, I16, I32, options


# `tflm_single_ops_b3.Graph`, written by this script as `single/op_b6_<name>.tflite`.
Graph = type("Graph", (b3.Graph,), {"SCRIPT": "scripts/tflm_single_ops_b6.py", "PREFIX": "op_b6_"})


SAME, VALID = 0, 1


def pool(name, builtin, shape, dtype, padding, stride, filt, act, q=None, **ranges):
    """An AVERAGE_POOL_2D or MAX_POOL_2D of an NHWC input `shape` (`stride` and `filt` as
    `(h, w)`), input and output quantised alike by `q`."""
    g = Graph(**ranges)
    x = g.tensor("x", shape, dtype, q)
    if padding == SAME:
        out = [(n + s - 1) // s for n, s in zip(shape[1:3], stride)]
    else:
        out = [(n - f) // s + 1 for n, f, s in zip(shape[1:3], filt, stride)]
    y = g.tensor("y", [shape[0]] + out + [shape[3]], dtype, q)
    g.op(builtin, [x], [y], *options(
        "Pool2DOptions", padding=padding, strideH=stride[0], strideW=stride[1],
        filterHeight=filt[0], filterWidth=filt[1], fusedActivationFunction=act))
    g.write(name)


def pad(name, shape, paddings, dtype, q=None, **ranges):
    """A PAD of `shape` by `paddings` (`[before, after]` per dimension)."""
    g = Graph(**ranges)
    x = g.tensor("x", shape, dtype, q)
    p = g.tensor("paddings", [len(shape), 2], I32, None, paddings)
    out = [n + a + b for n, (a, b) in zip(shape, paddings)]
    y = g.tensor("y", out, dtype, q)
    g.op(B.PAD, [x, p], [y], *options("PadOptions"))
    g.write(name)


def reduce(name, builtin, shape, axes, keep, dtype, qin=None, qout=None, **ranges):
    """A MEAN or SUM of `shape` over `axes`."""
    g = Graph(**ranges)
    x = g.tensor("x", shape, dtype, qin)
    a = g.tensor("axes", [len(axes)], I32, None, axes)
    rank = len(shape)
    reduced = {(d + rank) % rank for d in axes}
    out = [1 if d in reduced else n for d, n in enumerate(shape) if keep or d not in reduced]
    y = g.tensor("y", out, dtype, qout)
    g.op(builtin, [x, a], [y], *options("ReducerOptions", keepDims=keep))
    g.write(name)


def main():
    avg, mx = B.AVERAGE_POOL_2D, B.MAX_POOL_2D
    # Float pools: windows clipped by SAME padding (counts 4, 6, 9), non-square filters and
    # strides, each activation.
    pool("avg_pool_f32_same_s2", avg, [1, 5, 5, 3], F32, SAME, (2, 2), (3, 3), A.NONE,
         float_range=(-3, 3))
    pool("avg_pool_f32_valid_relu6", avg, [2, 6, 7, 2], F32, VALID, (1, 2), (2, 3), A.RELU6,
         float_range=(-2, 8))
    pool("avg_pool_f32_same_relu_n1", avg, [1, 4, 6, 2], F32, SAME, (1, 1), (3, 2),
         A.RELU_N1_TO_1, float_range=(-2, 2))
    pool("max_pool_f32_same_relu", mx, [1, 6, 6, 4], F32, SAME, (2, 2), (3, 3), A.RELU,
         float_range=(-3, 3))
    pool("max_pool_f32_valid", mx, [2, 5, 4, 3], F32, VALID, (1, 1), (2, 2), A.NONE,
         float_range=(-1, 1), float_step=0.25)
    # int16 pools: averages of both signs rounding half away from zero, clamps at the
    # quantised activation bounds (relu6 at 6 / 0.0005 = 12000).
    pool("avg_pool_i16_same_s2", avg, [1, 7, 5, 3], I16, SAME, (2, 2), (3, 3), A.NONE,
         (0.001, 0))
    pool("avg_pool_i16_valid_relu", avg, [2, 6, 6, 2], I16, VALID, (2, 2), (2, 2), A.RELU,
         (0.002, 0))
    pool("avg_pool_i16_small_values", avg, [1, 4, 5, 2], I16, SAME, (1, 2), (2, 2), A.NONE,
         (0.01, 0), int_range=(-3, 3))
    pool("max_pool_i16_same_relu6", mx, [1, 5, 6, 2], I16, SAME, (1, 1), (3, 3), A.RELU6,
         (0.0005, 0))
    pool("max_pool_i16_valid_s2", mx, [2, 4, 5, 3], I16, VALID, (2, 2), (2, 3), A.NONE,
         (0.001, 0))
    # PAD: zero on every type, on every dimension and on the rows and columns only.
    pad("pad_f32", [2, 3, 4], [[1, 0], [0, 2], [2, 1]], F32, float_range=(-1, 1))
    pad("pad_f32_spatial", [1, 3, 3, 2], [[0, 0], [1, 1], [1, 1], [0, 0]], F32,
        float_range=(-1, 1))
    pad("pad_i16", [1, 4, 4, 3], [[0, 0], [1, 2], [2, 1], [0, 0]], I16, (0.001, 0))
    pad("pad_i16_all_dims", [2, 3, 2], [[1, 1], [0, 2], [3, 0]], I16, (0.001, 0))
    pad("pad_i32", [3, 5], [[2, 1], [0, 3]], I32, int_range=(-100000, 100000))
    # MEAN float: TFLM's special path (4-D, keep_dims, axes [1, 2] or [2, 1]) and its
    # general one (no keep_dims, other axes, all axes).
    reduce("mean_f32_hw_keep", B.MEAN, [2, 4, 5, 3], [1, 2], True, F32, float_range=(-1, 1))
    reduce("mean_f32_wh_keep", B.MEAN, [1, 3, 7, 4], [2, 1], True, F32, float_range=(-1, 1))
    reduce("mean_f32_hw_drop", B.MEAN, [2, 4, 5, 3], [1, 2], False, F32, float_range=(-1, 1))
    reduce("mean_f32_neg_axes", B.MEAN, [3, 4, 5], [-1, 0], False, F32, float_range=(-2, 3))
    reduce("mean_f32_all_keep", B.MEAN, [2, 3, 4], [0, 1, 2], True, F32, float_range=(0, 1))
    reduce("mean_f32_one_axis", B.MEAN, [5, 7], [1], True, F32, float_range=(-1, 1))
    # MEAN int16: rescaled, with the input's quantisation, with nonzero zero points.
    reduce("mean_i16_hw_keep", B.MEAN, [1, 5, 5, 4], [1, 2], True, I16, (0.002, 0),
           (0.001, 0))
    reduce("mean_i16_neg_axes", B.MEAN, [2, 3, 7], [-1, 0], False, I16, (0.001, 0),
           (0.0005, 0))
    reduce("mean_i16_same_quant", B.MEAN, [3, 6, 4], [1], False, I16, (0.001, 0), (0.001, 0))
    reduce("mean_i16_zero_points", B.MEAN, [2, 4, 3], [1, 2], True, I16, (0.003, 7),
           (0.002, -11))
    # SUM int16: rescaled, saturating, several axes kept.
    reduce("sum_i16", B.SUM, [2, 3, 4], [1], False, I16, (0.001, 0), (0.004, 0))
    reduce("sum_i16_axes_keep", B.SUM, [2, 5, 3], [0, 2], True, I16, (0.0005, 0), (0.005, 0))
    reduce("sum_i16_saturate", B.SUM, [4, 8], [-1], False, I16, (0.01, 0), (0.01, 0),
           int_range=(-6000, 9000))


if __name__ == "__main__":
    main()
