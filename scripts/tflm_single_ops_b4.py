#!/usr/bin/env python3
"""One-op models of the element types of the element-wise kinds the reference kernels lacked
(ADD, SUB and MUL on int16 and int32, DIV on int32, MAXIMUM and MINIMUM on float32, int16,
int32 and int64, SQUARED_DIFFERENCE on int16 and int32, PRELU and LEAKY_RELU on int16), for
the per-op golden tests, and the int32 tail of TFLM's micro_speech
audio preprocessor (CAST, MUL, ADD, DIV, ADD, MINIMUM, MAXIMUM, CAST) as one model.

Writes `tests/run-models/single/op_b4_<case>.tflite` with the layout of
`scripts/tflm_single_ops_b3.py` (its `Graph`: one or more ops, their non-constant inputs the
model's inputs, constants in the model). The cases cover int32 overflow (inputs over the
whole int32 range: TFLM's sums and products wrap), TFLM ignoring ADD's fused activation on
int32 while SUB, MUL and DIV clamp to it, truncating int32 division by negative divisors,
int16 saturation and activation clamps, broadcasting, and NaN, infinities and signed zeros
in float MAXIMUM and MINIMUM (TFLM's `a > b ? a : b` keeps the second operand on a NaN
first one and on equal ones).

Run it, then `scripts/tflm_op_goldens.py --only` on each model it writes, as
`scripts/tflm_single_ops_b3.py` says with `b4` for `b3` (a model's description sets its
input ranges as there; needs python3 with `tflite-micro` and `numpy`):

    python3 scripts/tflm_single_ops_b4.py
"""

import numpy as np

import tflm_single_ops_b3 as b3
from tflm_single_ops import A, B, pack, save
from tflm_single_ops_b3 import F32, I8, I16, I32, I64, broadcast, options


# `tflm_single_ops_b3.Graph`, written by this script as `single/op_b4_<name>.tflite`.
Graph = type("Graph", (b3.Graph,), {"SCRIPT": "scripts/tflm_single_ops_b4.py", "PREFIX": "op_b4_"})


# The options table of each arithmetic kind.
ARITHMETIC = {
    B.ADD: "AddOptions",
    B.SUB: "SubOptions",
    B.MUL: "MulOptions",
    B.DIV: "DivOptions",
}


def arithmetic(name, builtin, sa, sb, dtype, qs=(None, None, None), act=A.NONE, const=None,
               const_first=False, **ranges):
    """One binary op `y = a op b` of `dtype` (quantisations `qs`, fused activation `act`);
    `const`: the values of the constant operand, `b` (or `a` with `const_first`)."""
    g = Graph(**ranges)
    a = g.tensor("a", sa, dtype, qs[0], const if const_first else None)
    b = g.tensor("b", sb, dtype, qs[1], None if const_first else const)
    y = g.tensor("y", broadcast(sa, sb), dtype, qs[2])
    if builtin in ARITHMETIC:
        g.op(builtin, [a, b], [y], *options(ARITHMETIC[builtin], fusedActivationFunction=act))
    else:
        g.op(builtin, [a, b], [y])
    g.write(name)


def micro_speech_tail():
    """The int32 tail of TFLM's micro_speech audio preprocessor (int8 output): the int16
    filter-bank log cast to int32, `(x · 256 + 333) / 666 - 128` clipped to [-128, 127], cast
    to int8."""
    g = Graph()
    x = g.tensor("log", [40], I16)
    prev = g.tensor("cast", [40], I32)
    g.op(B.CAST, [x], [prev])
    for k, (builtin, value) in enumerate([(B.MUL, 256), (B.ADD, 333), (B.DIV, 666),
                                          (B.ADD, -128), (B.MINIMUM, 127), (B.MAXIMUM, -128)]):
        c = g.tensor(f"c{k}", [], I32, None, value)
        y = g.tensor(f"y{k}", [40], I32)
        if builtin in ARITHMETIC:
            g.op(builtin, [prev, c], [y], *options(ARITHMETIC[builtin]))
        else:
            g.op(builtin, [prev, c], [y])
        prev = y
    out = g.tensor("out", [40], I8)
    g.op(B.CAST, [prev], [out])
    g.write("micro_speech_tail")


def main():
    # ADD int32: the whole int32 range (sums wrap); TFLM ignores the fused RELU on int32.
    arithmetic("add_i32_wrap_relu_ignored", B.ADD, [2, 3, 4], [4], I32, act=A.RELU)
    arithmetic("add_i32_scalar_const", B.ADD, [5, 8], [], I32, const=333, int_range=(-500, 500))
    arithmetic("add_i32_broadcast_both", B.ADD, [3, 1], [1, 4], I32, act=A.RELU6,
               int_range=(-20, 20))
    # ADD int16: TFLM's general path (inputs shifted by 15), zero points, saturation, clamps.
    arithmetic("add_i16", B.ADD, [4, 9], [4, 9], I16, ((0.001, 0), (0.0025, 0), (0.003, 0)))
    arithmetic("add_i16_zero_points_saturate", B.ADD, [3, 11], [3, 11], I16,
               ((0.0005, 120), (0.0004, -300), (0.0006, 55)), int_range=(-32768, 32767))
    arithmetic("add_i16_broadcast_relu6", B.ADD, [2, 3, 5], [5], I16,
               ((0.0004, 0), (0.0002, 0), (0.0002, 0)), A.RELU6)
    arithmetic("add_i16_relu_n1", B.ADD, [2, 17], [1, 17], I16,
               ((0.0001, 0), (0.00007, 0), (0.00005, 0)), A.RELU_N1_TO_1)
    # SUB int32: wraps; the fused activation clamps.
    arithmetic("sub_i32_wrap", B.SUB, [3, 7], [3, 7], I32)
    arithmetic("sub_i32_broadcast_relu6", B.SUB, [2, 3, 4], [3, 1], I32, act=A.RELU6,
               int_range=(-10, 20))
    arithmetic("sub_i32_relu_const_first", B.SUB, [6], [2, 6], I32, act=A.RELU,
               const=[5, -7, 0, 100, -2147483648, 2147483647], const_first=True)
    # SUB int16.
    arithmetic("sub_i16", B.SUB, [4, 9], [4, 9], I16, ((0.0013, 0), (0.0029, 0), (0.0031, 0)))
    arithmetic("sub_i16_broadcast_relu", B.SUB, [2, 2, 6], [6], I16,
               ((0.00037, 0), (0.00011, 0), (0.00023, 0)), A.RELU)
    # SUB int8 with scales whose multipliers differ when their ratios are taken in f32 (as
    # TFLM's `sub_common.cc` reads) and in f64: 822 of the 65,536 input pairs give other
    # outputs. The `tflite-micro` package's SUB agrees with the f64 ratios.
    arithmetic("sub_i8_scale_ratios", B.SUB, [16, 32], [16, 32], I8,
               ((0.0088, 1), (0.0132, 7), (0.0216, -5)), int_range=(-128, 127))
    # MUL int32: the whole range wraps; the fused activation clamps.
    arithmetic("mul_i32_wrap_broadcast", B.MUL, [2, 3, 4], [3, 1], I32)
    arithmetic("mul_i32_relu", B.MUL, [3, 1], [1, 5], I32, act=A.RELU, int_range=(-1000, 1000))
    arithmetic("mul_i32_relu_n1", B.MUL, [12], [12], I32, act=A.RELU_N1_TO_1, int_range=(-2, 2))
    arithmetic("mul_i32_const_256", B.MUL, [40], [], I32, const=256)
    # MUL int16: zero points of 0 (TFLM's requirement), saturation, clamps.
    arithmetic("mul_i16", B.MUL, [4, 9], [4, 9], I16, ((0.001, 0), (0.002, 0), (0.05, 0)))
    arithmetic("mul_i16_saturate", B.MUL, [3, 8], [3, 8], I16, ((0.001, 0), (0.002, 0), (0.02, 0)),
               int_range=(-32768, 32767))
    arithmetic("mul_i16_broadcast_relu6", B.MUL, [2, 3, 5], [5], I16,
               ((0.0003, 0), (0.0005, 0), (0.0002, 0)), A.RELU6)
    # DIV int32: truncating division by divisors of both signs, activation clamps.
    arithmetic("div_i32_signs", B.DIV, [3, 6], [6], I32,
               const=[3, -2, 7, -1, 666, -100000], int_range=(-1000, 1000))
    arithmetic("div_i32_relu6", B.DIV, [2, 5], [5], I32, act=A.RELU6,
               const=[1, -1, 2, -3, 4], int_range=(-15, 15))
    arithmetic("div_i32_wide", B.DIV, [40], [], I32, const=666)
    arithmetic("div_i32_dividend_const_relu", B.DIV, [4], [3, 4], I32, act=A.RELU,
               const=[1000, -1000, 7, -2147483648], const_first=True, int_range=(1, 60))
    # MAXIMUM and MINIMUM: float (NaN, infinities, signed zeros, ties), int16, int32, int64.
    special = [np.nan, -np.inf, 0.0, -0.0, np.inf, 0.5]
    for builtin, tag in [(B.MAXIMUM, "maximum"), (B.MINIMUM, "minimum")]:
        arithmetic(f"{tag}_f32_special", builtin, [3, 6], [6], F32, const=special,
                   float_range=(-1, 1), float_step=0.5)
        arithmetic(f"{tag}_f32_special_first", builtin, [6], [2, 6], F32, const=special,
                   const_first=True, float_range=(-1, 1), float_step=0.5)
        arithmetic(f"{tag}_i16", builtin, [2, 3, 4], [4], I16, ((0.01, 0),) * 3)
        arithmetic(f"{tag}_i32", builtin, [4, 5], [4, 1], I32)
        arithmetic(f"{tag}_i32_scalar", builtin, [40], [], I32,
                   const=127 if builtin == B.MINIMUM else -128, int_range=(-300, 300))
        arithmetic(f"{tag}_i64", builtin, [3, 4], [1, 4], I64, int_range=(-9, 9))
    # SQUARED_DIFFERENCE int32 (wraps over the whole range) and int16 (zero points of 0).
    arithmetic("squared_difference_i32_wrap", B.SQUARED_DIFFERENCE, [3, 4], [4], I32)
    arithmetic("squared_difference_i32", B.SQUARED_DIFFERENCE, [2, 1, 5], [3, 1], I32,
               int_range=(-3000, 3000))
    arithmetic("squared_difference_i16", B.SQUARED_DIFFERENCE, [3, 10], [3, 10], I16,
               ((0.002, 0), (0.0015, 0), (0.2, 0)))
    arithmetic("squared_difference_i16_broadcast_saturate", B.SQUARED_DIFFERENCE, [2, 3, 4], [4],
               I16, ((0.001, 0), (0.003, 0), (0.01, 0)), int_range=(-32768, 32767))
    # PRELU: an int16 input and output, an int8 alpha broadcast per channel.
    g = Graph()
    x = g.tensor("x", [2, 3, 6], I16, (0.0005, 0))
    alpha = g.tensor("alpha", [6], I8, (0.01, 3), [-100, -20, 0, 25, 90, 127])
    y = g.tensor("y", [2, 3, 6], I16, (0.0004, 0))
    g.op(B.PRELU, [x, alpha], [y])
    g.write("prelu_i16")
    # LEAKY_RELU int16: alpha below and above 1, zero points.
    for name, alpha, qin, qout in [("leaky_relu_i16", 0.2, (0.001, 0), (0.0008, 0)),
                                   ("leaky_relu_i16_alpha_above_one", 1.7, (0.0005, 40),
                                    (0.0006, -25))]:
        g = Graph()
        x = g.tensor("x", [4, 9], I16, qin)
        y = g.tensor("y", [4, 9], I16, qout)
        g.op(B.LEAKY_RELU, [x], [y], *options("LeakyReluOptions", alpha=alpha))
        g.write(name)
    micro_speech_tail()


if __name__ == "__main__":
    main()
