#!/usr/bin/env python3
"""One-op models of batch 1 of issue 25's op kinds, for the per-op golden tests.

Writes `tests/run-models/single/op_b1_<case>.tflite` with the helpers of
`scripts/tflm_single_ops.py` (same layout: one operator, its non-constant inputs the
model's inputs, its parameters constants): DIV, SQUARED_DIFFERENCE, PRELU, LEAKY_RELU,
LOG_SOFTMAX, CAST, ARG_MAX, GATHER, SUM, REDUCE_MAX, SQUEEZE, EXPAND_DIMS, SLICE and PADV2
over their edge cases (odd sizes, broadcasting, negative axes, extreme zero points,
saturation, per-channel alpha). A model whose float input must reach beyond [0, 1) says
so in its description (`float_range=LO:HI`, read by `scripts/tflm_op_goldens.py`).
Then, for each case:

    python3 scripts/tflm_single_ops_b1.py
    for m in tests/run-models/single/op_b1_*.tflite; do
        python3 scripts/tflm_op_goldens.py --only "$(basename "$m" .tflite)"
    done
"""

import numpy as np

from tflm_single_ops import OUT, B, Model, O, s


class B1Model(Model):
    """A one-op model named `op_b1_<name>`, with an optional float input range."""

    def __init__(self, float_range=None):
        super().__init__()
        self.description = "scripts/tflm_single_ops_b1.py"
        if float_range is not None:
            self.description += f" float_range={float_range[0]}:{float_range[1]}"

    def write(self, name, *args, **kwargs):
        """`Model.write`, to `single/op_b1_<name>.tflite`."""
        super().write(f"b1_{name}", *args, **kwargs)


TYPES = {np.int64: s.TensorType.INT64, np.uint8: s.TensorType.UINT8}


def tensor(m, name, shape, dtype, quant=None, data=None):
    """`Model.tensor`, with int64 too."""
    if dtype in TYPES:
        i = m.tensor(name, shape, np.int32, quant, None)
        m.tensors[i].type = TYPES[dtype]
        if data is not None:
            b = s.BufferT()
            b.data = list(np.asarray(data, dtype=dtype).tobytes())
            m.buffers.append(b)
            m.tensors[i].buffer = len(m.buffers) - 1
        return i
    return m.tensor(name, shape, dtype, quant, data)


def div(name, shapes, dtype, qs, activation, divisor=None, float_range=None):
    """DIV of `a` (an input) by `b` (an input, or the constant `divisor`)."""
    m = B1Model(float_range)
    a = m.tensor("a", shapes[0], dtype, qs[0] if qs else None)
    b = m.tensor("b", shapes[1], dtype, qs[1] if qs else None, divisor)
    out = list(np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])))
    y = m.tensor("y", out, dtype, qs[2] if qs else None)
    o = s.DivOptionsT()
    o.fusedActivationFunction = activation
    m.write(name, B.DIV, [a, b], [y], O.DivOptions, o)


def squared_difference(name, shapes, dtype, qs, float_range=None):
    m = B1Model(float_range)
    a = m.tensor("a", shapes[0], dtype, qs[0] if qs else None)
    b = m.tensor("b", shapes[1], dtype, qs[1] if qs else None)
    out = list(np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])))
    y = m.tensor("y", out, dtype, qs[2] if qs else None)
    m.write(name, B.SQUARED_DIFFERENCE, [a, b], [y], O.SquaredDifferenceOptions,
            s.SquaredDifferenceOptionsT())


def prelu(name, shape, alpha_shape, alpha, dtype, qs, float_range=None):
    """PRELU of an input with a constant alpha that broadcasts to it."""
    m = B1Model(float_range)
    x = m.tensor("x", shape, dtype, qs[0] if qs else None)
    a = m.tensor("alpha", alpha_shape, dtype, qs[1] if qs else None, alpha)
    y = m.tensor("y", shape, dtype, qs[2] if qs else None)
    m.write(name, B.PRELU, [x, a], [y])


def leaky_relu(name, shape, alpha, qin, qout):
    m = B1Model()
    x = m.tensor("x", shape, np.int8, qin)
    y = m.tensor("y", shape, np.int8, qout)
    o = s.LeakyReluOptionsT()
    o.alpha = alpha
    m.write(name, B.LEAKY_RELU, [x], [y], O.LeakyReluOptions, o)


def log_softmax(name, shape, qin):
    m = B1Model()
    x = m.tensor("x", shape, np.int8, qin)
    y = m.tensor("y", shape, np.int8, (16 / 256, 127))
    m.write(name, B.LOG_SOFTMAX, [x], [y], O.LogSoftmaxOptions, s.LogSoftmaxOptionsT())


def cast(name, shape, src, dst, float_range=None):
    m = B1Model(float_range)
    x = m.tensor("x", shape, src)
    y = m.tensor("y", shape, dst)
    m.write(name, B.CAST, [x], [y])


def arg_max(name, shape, axis, dtype, q, out=np.int32, float_range=None):
    m = B1Model(float_range)
    x = m.tensor("x", shape, dtype, q)
    a = m.tensor("axis", [1], np.int32, data=[axis])
    rank = len(shape)
    y = tensor(m, "y", [n for d, n in enumerate(shape) if d != (axis + rank) % rank], out)
    o = s.ArgMaxOptionsT()
    o.outputType = s.TensorType.INT32 if out == np.int32 else s.TensorType.INT64
    m.write(name, B.ARG_MAX, [x, a], [y], O.ArgMaxOptions, o)


def gather(name, shape, indices, axis, dtype, q, float_range=None):
    """GATHER of an input by constant int32 indices along `axis`."""
    m = B1Model(float_range)
    x = m.tensor("x", shape, dtype, q)
    idx = np.asarray(indices, dtype=np.int32)
    i = m.tensor("indices", list(idx.shape), np.int32, data=idx)
    a = (axis + len(shape)) % len(shape)
    out = list(shape[:a]) + list(idx.shape) + list(shape[a + 1:])
    y = m.tensor("y", out, dtype, q)
    o = s.GatherOptionsT()
    o.axis = axis
    o.batchDims = 0
    m.write(name, B.GATHER, [x, i], [y], O.GatherOptions, o)


def reduce(name, builtin, shape, axes, keep, dtype, qin, qout, float_range=None):
    m = B1Model(float_range)
    x = m.tensor("x", shape, dtype, qin)
    a = m.tensor("axes", [len(axes)], np.int32, data=axes)
    rank = len(shape)
    reduced = {(d + rank) % rank for d in axes}
    out = [1 if d in reduced else n for d, n in enumerate(shape) if keep or d not in reduced]
    y = m.tensor("y", out, dtype, qout)
    o = s.ReducerOptionsT()
    o.keepDims = keep
    m.write(name, builtin, [x, a], [y], O.ReducerOptions, o)


def squeeze(name, shape, dims, dtype, q):
    m = B1Model()
    x = m.tensor("x", shape, dtype, q)
    rank = len(shape)
    gone = {(d + rank) % rank for d in dims} if dims else {d for d, n in enumerate(shape) if n == 1}
    y = m.tensor("y", [n for d, n in enumerate(shape) if d not in gone], dtype, q)
    o = s.SqueezeOptionsT()
    o.squeezeDims = list(dims)
    m.write(name, B.SQUEEZE, [x], [y], O.SqueezeOptions, o)


def expand_dims(name, shape, axis, dtype, q):
    m = B1Model()
    x = m.tensor("x", shape, dtype, q)
    a = m.tensor("axis", [1], np.int32, data=[axis])
    out = list(shape)
    at = axis if axis >= 0 else len(shape) + 1 + axis
    out.insert(at, 1)
    y = m.tensor("y", out, dtype, q)
    m.write(name, B.EXPAND_DIMS, [x, a], [y], O.ExpandDimsOptions, s.ExpandDimsOptionsT())


def slice_(name, shape, begin, size, dtype, q):
    m = B1Model()
    x = m.tensor("x", shape, dtype, q)
    b = m.tensor("begin", [len(shape)], np.int32, data=begin)
    z = m.tensor("size", [len(shape)], np.int32, data=size)
    out = [n - bg if sz < 0 else sz for n, bg, sz in zip(shape, begin, size)]
    y = m.tensor("y", out, dtype, q)
    m.write(name, B.SLICE, [x, b, z], [y], O.SliceOptions, s.SliceOptionsT())


def padv2(name, shape, paddings, value, dtype, q):
    m = B1Model()
    x = m.tensor("x", shape, dtype, q)
    p = m.tensor("paddings", [len(shape), 2], np.int32, data=paddings)
    v = m.tensor("value", [], dtype, q, data=[value])
    out = [n + a + b for n, (a, b) in zip(shape, paddings)]
    y = m.tensor("y", out, dtype, q)
    m.write(name, B.PADV2, [x, p, v], [y], O.PadV2Options, s.PadV2OptionsT())


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    f32, i8, i16, i32 = np.float32, np.int8, np.int16, np.int32
    # DIV int8 by a constant divisor broadcast along the last axis (offsets of both signs,
    # small and large), and with RELU6 over the same shape; float by a float input. The
    # scales keep s1 / (s2 * s_out) at 64 or more: below, a dividend near its zero point
    # over a large divisor makes TFLM shift an int32 by 32 or more (undefined in C++; the
    # kernel's doc says what it gives instead).
    div("div_i8_broadcast", [[2, 3, 5], [1, 5]], i8,
        [(0.05, -3), (0.1, 10), (0.005, 5)], 0, divisor=[[-128, -60, 9, 11, 127]])
    div("div_i8_relu6_saturating", [[3, 7], [3, 7]], i8,
        [(0.2, 100), (0.003, -128), (0.5, -128)], 3,
        divisor=np.arange(21, dtype=np.int64).reshape(3, 7) * 12 - 127)
    div("div_i8_fine", [[4, 9], [9]], i8, [(0.01, 0), (0.02, 0), (0.0004, -7)], 0,
        divisor=[1, -1, 2, -3, 50, -70, 100, 127, -128])
    div("div_f32_relu", [[3, 4, 5], [4, 1]], f32, None, 1, float_range=(-8, 8))
    div("div_f32_const", [[2, 7], [7]], f32, None, 0,
        divisor=[0.5, -3.0, 7.25, 1e-3, -0.125, 100.0, 3.0], float_range=(-50, 50))
    # SQUARED_DIFFERENCE int8 broadcasting, extreme zero points; float.
    squared_difference("squared_difference_i8_broadcast", [[2, 3, 4], [3, 1]], i8,
                       [(0.05, -5), (0.07, 20), (0.2, -128)])
    squared_difference("squared_difference_i8_extreme_zero", [[5, 7], [5, 7]], i8,
                       [(0.02, 127), (0.01, -128), (0.5, -128)])
    squared_difference("squared_difference_f32", [[4, 1, 3], [5, 3]], f32, None,
                       float_range=(-3, 3))
    # PRELU int8, alpha per channel (broadcast over H and W) and over W x C; float.
    alpha_c = [-128, -20, 0, 37, 127]
    prelu("prelu_i8_per_channel", [1, 4, 3, 5], [5], alpha_c, i8,
          [(0.05, 10), (0.01, -5), (0.04, -20)])
    prelu("prelu_i8_wc", [2, 3, 4], [3, 4], np.arange(12).reshape(3, 4) * 20 - 100, i8,
          [(0.1, -128), (0.005, 3), (0.06, 40)])
    prelu("prelu_f32", [2, 5, 3], [1, 3], [[0.25, -0.5, 2.0]], f32, None,
          float_range=(-4, 4))
    # LEAKY_RELU int8: alpha below one, above one (the multiplier shifts left), tiny.
    leaky_relu("leaky_relu_i8", [2, 7, 5], 0.2, (0.05, 0), (0.04, -30))
    leaky_relu("leaky_relu_i8_steep", [3, 11], 1.7, (0.02, 60), (0.07, 10))
    leaky_relu("leaky_relu_i8_tiny", [1, 41], 0.01, (0.1, -128), (0.03, -128))
    # LOG_SOFTMAX int8 over the last axis: odd depth, fine and coarse input scales.
    log_softmax("log_softmax_i8", [3, 10], (0.1, 5))
    log_softmax("log_softmax_i8_coarse", [2, 5, 7], (0.5, -128))
    log_softmax("log_softmax_i8_fine", [4, 33], (0.01, 0))
    # CAST between the types TFLM casts.
    cast("cast_i8_f32", [3, 7], i8, f32)
    cast("cast_i8_i32", [2, 9], i8, i32)
    cast("cast_i16_i8", [41], i16, i8)
    cast("cast_i32_f32", [5, 5], i32, f32)
    cast("cast_i32_i8", [3, 11], i32, i8)
    cast("cast_f32_i32", [4, 6], f32, i32, float_range=(-1000, 1000))
    cast("cast_f32_i8", [3, 13], f32, i8, float_range=(-100, 100))
    cast("cast_f32_i16", [2, 17], f32, i16, float_range=(-30000, 30000))
    # ARG_MAX along the last axis (negative), a middle one and the first; ties keep the
    # first index (a coarse input range has many).
    q = (0.05, -9)
    arg_max("arg_max_i8_last", [2, 5, 7], -1, i8, q)
    arg_max("arg_max_i8_middle", [3, 6, 4], 1, i8, (0.5, -128))
    arg_max("arg_max_f32_first", [5, 4, 3], 0, f32, None, float_range=(-1, 1))
    arg_max("arg_max_f32_negative", [2, 3, 8], -2, f32, None, float_range=(-1, 1))
    # GATHER along a middle axis (2-D indices), the first and a negative one.
    gather("gather_i8_middle", [4, 6, 3], [[5, 0], [2, 2]], 1, i8, q)
    gather("gather_i8_negative", [2, 3, 7], [6, 0, 3], -1, i8, (0.1, 127))
    gather("gather_f32_first", [5, 4], [4, 1, 1, 0, 3], 0, f32, None)
    # SUM int8 over a negative and a middle axis, kept or dropped, rescaled; float.
    reduce("sum_i8_keep", B.SUM, [2, 5, 7], [1], True, i8, (0.05, -3), (0.2, 10))
    reduce("sum_i8_negative_dropped", B.SUM, [3, 4, 5], [-1, 0], False, i8,
           (0.01, 127), (0.3, -100))
    reduce("sum_i8_all", B.SUM, [2, 3, 3], [0, 1, 2], True, i8, (0.02, -128), (0.5, 0))
    reduce("sum_f32", B.SUM, [3, 4, 5], [1, 2], False, f32, None, None, float_range=(-2, 2))
    # REDUCE_MAX int8 (input and output quantised alike), kept or dropped; float.
    reduce("reduce_max_i8_keep", B.REDUCE_MAX, [2, 5, 7], [-2], True, i8, q, q)
    reduce("reduce_max_i8_two_axes", B.REDUCE_MAX, [3, 4, 5], [0, 2], False, i8,
           (0.1, 100), (0.1, 100))
    reduce("reduce_max_f32", B.REDUCE_MAX, [4, 3, 2], [-1], False, f32, None, None,
           float_range=(-1, 1))
    # SQUEEZE given dimensions (one negative) and all size-1 ones; EXPAND_DIMS.
    squeeze("squeeze_dims", [1, 5, 1, 3], [0, -2], i8, q)
    squeeze("squeeze_all", [1, 7, 1, 1], [], f32, None)
    expand_dims("expand_dims_negative", [5, 3], -1, i8, q)
    expand_dims("expand_dims_first", [4, 3], 0, f32, None)
    # SLICE with a size of -1 (to the end), odd sizes; float and int32.
    slice_("slice_i8", [3, 7, 5], [1, 2, 0], [2, -1, 3], i8, q)
    slice_("slice_f32", [4, 6], [1, 1], [3, 4], f32, None)
    slice_("slice_i32", [5, 4], [2, 0], [-1, 3], i32, None)
    # PADV2 int8 with a constant pad value other than the zero point; 2-D, pad 127.
    padv2("padv2_i8", [1, 4, 5, 3], [[0, 1], [2, 0], [1, 3], [0, 0]], -77, i8, (0.05, 6))
    padv2("padv2_i8_2d", [3, 5], [[1, 2], [0, 3]], 127, i8, (0.1, -128))


if __name__ == "__main__":
    main()
