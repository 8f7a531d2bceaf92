#!/usr/bin/env python3
"""One-op models of the builtin kinds of issue 39 (the ones TFLM's interpreter registers
that the reference kernels lacked), for the per-op golden tests.

Writes `tests/run-models/single/op_b3_<case>.tflite` with the layout of
`scripts/tflm_single_ops.py` (one operator, its non-constant inputs the model's inputs, its
parameters constants), for every new kind and every element type TFLM runs it on:
comparisons (broadcasting, NaN and infinities, rescaled int8), logical ops, SELECT_V2,
element-wise math (ties of ROUND, zero of RSQRT, extreme zero points), FLOOR_DIV and
FLOOR_MOD (infinite and NaN divisors), ADD_N, CUMSUM (exclusive, reverse, negative axes),
L2_NORMALIZATION, L2_POOL_2D, BATCH_MATMUL (adjoints, broadcast batches), the space
kinds, MIRROR_PAD (both modes), REVERSE_V2, GATHER_ND, EMBEDDING_LOOKUP,
DYNAMIC_UPDATE_SLICE (clamped starts), FILL, BROADCAST_TO, BROADCAST_ARGS, ARG_MIN,
REDUCE_MIN and REDUCE_ALL. ZEROS_LIKE and SHAPE, whose outputs do not depend on the input
values, run beside a REVERSE_V2 of the same input so the model still has an output that
varies (two ops, both compared).

A model's description sets its input ranges for `scripts/tflm_op_goldens.py`:
`float_range=LO:HI`, `float_step=S` (floats on a grid, for ties and equal values) and
`int_range=LO:HI` (every integer input: valid ids and shapes, repeated values).

    python3 scripts/tflm_single_ops_b3.py
    for m in tests/run-models/single/op_b3_*.tflite; do
        python3 scripts/tflm_op_goldens.py --only "$(basename "$m" .tflite)"
    done

Needs: python3 with `tflite-micro` and `numpy`.
"""

import numpy as np

from tflm_single_ops import B, O, Tensors, operator, pack, s, save

F32, I8, I16, I32, I64, BOOL = np.float32, np.int8, np.int16, np.int32, np.int64, np.bool_


class Graph(Tensors):
    """A one-subgraph model of one or more ops under construction, written by SCRIPT as
    `single/<PREFIX><name>.tflite` (the later batches' scripts set both)."""

    SCRIPT = "scripts/tflm_single_ops_b3.py"
    PREFIX = "op_b3_"

    def __init__(self, **ranges):
        words = [self.SCRIPT]
        for key, value in ranges.items():
            words.append(f"{key}={value[0]}:{value[1]}" if isinstance(value, tuple) else f"{key}={value}")
        super().__init__(" ".join(words))
        self.ops = []
        self.codes = []
        self.outputs = []

    def op(self, builtin, inputs, outputs, options_type=0, options=None):
        """Adds an op; its outputs become model outputs."""
        if builtin not in self.codes:
            self.codes.append(builtin)
        self.ops.append(operator(self.codes.index(builtin), inputs, outputs, options_type, options))
        self.outputs += outputs

    def write(self, name):
        """Writes `single/<PREFIX><name>.tflite`."""
        produced = {t for op in self.ops for t in op.outputs}
        inputs = []
        for op in self.ops:
            for t in op.inputs:
                if t >= 0 and self.tensors[t].buffer == 0 and t not in produced and t not in inputs:
                    inputs.append(t)
        save(f"{self.PREFIX}{name}", pack(self.tensors, self.buffers, self.codes, self.ops, inputs,
                                   self.outputs, self.description))


def options(kind, **fields):
    """`(options type, options)` of table `kind` with `fields` set."""
    o = getattr(s, kind + "T")()
    for k, v in fields.items():
        setattr(o, k, v)
    return getattr(O, kind), o


def broadcast(*shapes):
    return list(np.broadcast_shapes(*(tuple(x) for x in shapes)))


# Per element type: the operand shapes, quantisations and input ranges of a comparison.
COMPARE_CASES = {
    # b a constant with NaN and both infinities; a on a grid that hits 0.
    F32: ([2, 3, 4], [4], None, None, [np.nan, -np.inf, 0.0, np.inf],
          {"float_range": (-1, 1), "float_step": 0.5}),
    I32: ([3, 5], [1, 5], None, None, None, {"int_range": (-2, 2)}),
    I64: ([2, 1, 3], [4, 1], None, None, None, {"int_range": (-1, 1)}),
    # Different scales and zero points: compared after TFLM's rescaling.
    I8: ([4, 8], [4, 8], (0.5, 1), (0.25, 0), None, {"int_range": (-3, 3)}),
    BOOL: ([2, 4], [4], None, None, None, {}),
}


def compare(builtin, tag, dtype):
    sa, sb, qa, qb, const, ranges = COMPARE_CASES[dtype]
    g = Graph(**ranges)
    a = g.tensor("a", sa, dtype, qa)
    b = g.tensor("b", sb, dtype, qb, const)
    y = g.tensor("y", broadcast(sa, sb), BOOL)
    g.op(builtin, [a, b], [y])
    g.write(f"{tag}_{np.dtype(dtype).name}")


def unary(name, builtin, shape, dtype, qin=None, qout=None, **ranges):
    g = Graph(**ranges)
    x = g.tensor("x", shape, dtype, qin)
    y = g.tensor("y", shape, dtype, qout)
    g.op(builtin, [x], [y])
    g.write(name)


def binary(name, builtin, sa, sb, dtype, const=None, **ranges):
    g = Graph(**ranges)
    a = g.tensor("a", sa, dtype)
    b = g.tensor("b", sb, dtype, None, const)
    y = g.tensor("y", broadcast(sa, sb), dtype)
    g.op(builtin, [a, b], [y])
    g.write(name)


def with_constant(name, builtin, shape, dtype, constant, out, q=None, opts=(), **ranges):
    """One op of an input `x` (`shape`, `dtype`, quantisation `q`) and a constant operand
    (`constant`: its name, element type and values), writing `y` of shape `out` and the input's
    quantisation; `opts`: the op's `options(...)`."""
    g = Graph(**ranges)
    x = g.tensor("x", shape, dtype, q)
    what, cdtype, values = constant
    c = g.tensor(what, list(np.shape(values)), cdtype, None, values)
    y = g.tensor("y", out, dtype, q)
    g.op(builtin, [x, c], [y], *opts)
    g.write(name)


def add_n(name, count, shape, dtype, q=None, qout=None, **ranges):
    g = Graph(**ranges)
    xs = [g.tensor(f"x{k}", shape, dtype, q) for k in range(count)]
    y = g.tensor("y", shape, dtype, qout)
    g.op(B.ADD_N, xs, [y])
    g.write(name)


def cumsum(name, shape, axis, dtype, exclusive, reverse, q=None, qout=None, **ranges):
    g = Graph(**ranges)
    x = g.tensor("x", shape, dtype, q)
    a = g.tensor("axis", [], I32, None, axis)
    y = g.tensor("y", shape, dtype, qout)
    g.op(B.CUMSUM, [x, a], [y], *options("CumsumOptions", exclusive=exclusive, reverse=reverse))
    g.write(name)


def batch_matmul(name, sx, sy, dtype, adj_x, adj_y, qs=None, y_const=False, **ranges):
    g = Graph(**ranges)
    x = g.tensor("x", sx, dtype, qs[0] if qs else None)
    data = None
    if y_const:
        rng = np.random.default_rng(len(name))
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, size=sy, endpoint=True)
    y = g.tensor("y", sy, dtype, qs[1] if qs else None, data)
    xm = sx[-1] if adj_x else sx[-2]
    yn = sy[-2] if adj_y else sy[-1]
    out = broadcast(sx[:-2], sy[:-2]) + [xm, yn]
    z = g.tensor("z", out, dtype, qs[2] if qs else None)
    g.op(B.BATCH_MATMUL, [x, y], [z], *options("BatchMatMulOptions", adjX=adj_x, adjY=adj_y))
    g.write(name)


def main():
    # Comparisons: every kind, every type TFLM compares (EQUAL and NOT_EQUAL bools too).
    for builtin, tag in [(B.EQUAL, "equal"), (B.NOT_EQUAL, "not_equal"), (B.GREATER, "greater"),
                         (B.GREATER_EQUAL, "greater_equal"), (B.LESS, "less"),
                         (B.LESS_EQUAL, "less_equal")]:
        for dtype in [F32, I32, I64, I8] + ([BOOL] if tag in ("equal", "not_equal") else []):
            compare(builtin, tag, dtype)
    binary("logical_and_broadcast", B.LOGICAL_AND, [2, 3], [3], BOOL)
    binary("logical_or_broadcast", B.LOGICAL_OR, [4, 1], [1, 3], BOOL)
    unary("logical_not", B.LOGICAL_NOT, [2, 5], BOOL)
    # SELECT_V2: the three operands broadcast; int8 values copied across quantisations.
    for dtype, sc, sx, sy, q in [(F32, [2, 1], [2, 3], [3], None),
                                 (I8, [3, 1], [1, 4], [3, 4], (0.1, 5)),
                                 (I16, [5], [5], [5], (0.01, 0))]:
        g = Graph(float_range=(-1, 1))
        c = g.tensor("c", sc, BOOL)
        x = g.tensor("x", sx, dtype, q)
        y = g.tensor("y", sy, dtype, q)
        z = g.tensor("z", broadcast(sc, sx, sy), dtype, q)
        g.op(B.SELECT_V2, [c, x, y], [z])
        g.write(f"select_v2_{np.dtype(dtype).name}")
    # Float element-wise math.
    unary("neg_f32", B.NEG, [3, 7], F32, float_range=(-5, 5))
    unary("floor_f32", B.FLOOR, [3, 7], F32, float_range=(-5, 5), float_step=0.25)
    unary("ceil_f32", B.CEIL, [3, 7], F32, float_range=(-5, 5), float_step=0.25)
    unary("round_f32_ties", B.ROUND, [4, 9], F32, float_range=(-4, 4), float_step=0.25)
    unary("sqrt_f32", B.SQRT, [3, 11], F32, float_range=(0, 100))
    unary("square_f32", B.SQUARE, [3, 11], F32, float_range=(-10, 10))
    unary("sin_f32", B.SIN, [2, 40], F32, float_range=(-10, 10))
    unary("cos_f32", B.COS, [2, 40], F32, float_range=(-10, 10))
    unary("log_f32", B.LOG, [2, 40], F32, float_range=(0, 100))
    unary("exp_f32", B.EXP, [2, 40], F32, float_range=(-10, 10))
    unary("elu_f32", B.ELU, [3, 20], F32, float_range=(-4, 2))
    unary("elu_i8", B.ELU, [4, 33], I8, (0.05, 10), (0.03, -20))
    # ABS: float, int8 rescaled to an extreme zero point and not, int16 with and without
    # quantisation (its -32768 stays).
    unary("abs_f32", B.ABS, [3, 9], F32, float_range=(-2, 2))
    unary("abs_i8_rescaled", B.ABS, [4, 17], I8, (0.1, -3), (0.07, -128))
    unary("abs_i8_same_scale", B.ABS, [3, 13], I8, (0.05, 20), (0.05, -100))
    unary("abs_i16_rescaled", B.ABS, [2, 31], I16, (0.001, 0), (0.0015, 0))
    unary("abs_i16_plain", B.ABS, [2, 31], I16)
    # RSQRT: float with exact squares; int8 from its zero point (0 gives the maximum);
    # int16 on non-negative inputs (TFLM refuses negative ones).
    unary("rsqrt_f32", B.RSQRT, [3, 9], F32, float_range=(0, 16), float_step=0.25)
    unary("rsqrt_i8", B.RSQRT, [4, 16], I8, (0.02, -128), (0.05, -100))
    unary("rsqrt_i16", B.RSQRT, [2, 40], I16, (0.002, 0), (0.0005, 0), int_range=(0, 32767))
    # FLOOR_DIV and FLOOR_MOD by constants with both signs, infinities and NaN.
    binary("floor_div_f32", B.FLOOR_DIV, [3, 5], [5], F32, [3.0, -2.5, np.inf, -np.inf, 0.75],
           float_range=(-10, 10))
    binary("floor_mod_f32", B.FLOOR_MOD, [3, 5], [5], F32, [3.0, -2.5, np.inf, np.nan, -0.75],
           float_range=(-10, 10))
    binary("floor_mod_f32_inputs", B.FLOOR_MOD, [2, 6], [2, 6], F32, float_range=(-4, 4),
           float_step=0.5)
    # ADD_N and CUMSUM: float and int8 (TFLM's starting offset shows in the int8 sums).
    add_n("add_n_f32", 3, [2, 5], F32, float_range=(-1, 1))
    add_n("add_n_i8", 3, [3, 7], I8, (0.1, -20), (0.15, 5))
    add_n("add_n_i8_extreme", 4, [20], I8, (0.05, 127), (0.2, 127))
    cumsum("cumsum_f32", [3, 4], 1, F32, False, False, float_range=(-1, 1))
    cumsum("cumsum_f32_exclusive_reverse", [2, 3, 2], -2, F32, True, True, float_range=(-1, 1))
    cumsum("cumsum_i8", [5, 3], 0, I8, False, False, (0.1, 5), (0.3, -10))
    cumsum("cumsum_i8_exclusive_reverse", [2, 4, 3], -1, I8, True, True, (0.05, -20), (0.1, 3))
    # L2_NORMALIZATION: the int8 output is at scale 1/128 and zero point 0.
    unary("l2_norm_f32", B.L2_NORMALIZATION, [2, 5], F32, float_range=(-1, 1))
    unary("l2_norm_i8", B.L2_NORMALIZATION, [1, 3, 4], I8, (0.05, -7), (1 / 128, 0))
    for name, shape, (pad, stride, filt), act in [
        ("l2_pool_f32_same_s2", [1, 5, 5, 2], (0, 2, 3), 0),
        ("l2_pool_f32_valid_relu6", [2, 4, 3, 3], (1, 1, 2), 3),
    ]:
        g = Graph(float_range=(-3, 3))
        x = g.tensor("x", shape, F32)
        out = [(n + stride - 1) // stride if pad == 0 else (n - filt) // stride + 1 for n in shape[1:3]]
        y = g.tensor("y", [shape[0]] + out + [shape[3]], F32)
        g.op(B.L2_POOL_2D, [x], [y], *options(
            "Pool2DOptions", padding=pad, strideW=stride, strideH=stride, filterWidth=filt,
            filterHeight=filt, fusedActivationFunction=act))
        g.write(name)
    # BATCH_MATMUL: float with and without adjoints and broadcast batches; int8 with zero
    # points and a constant right-hand side; int16.
    batch_matmul("batch_matmul_f32", [2, 3, 4], [2, 4, 5], F32, False, False, float_range=(-1, 1))
    batch_matmul("batch_matmul_f32_adj_broadcast", [1, 2, 4, 3], [3, 1, 5, 4], F32, True, True,
                 float_range=(-1, 1))
    batch_matmul("batch_matmul_i8", [3, 4], [4, 6], I8, False, False,
                 [(0.05, -3), (0.02, 7), (0.1, 2)], y_const=True)
    batch_matmul("batch_matmul_i8_adj_y_broadcast", [2, 1, 3, 5], [4, 5], I8, False, True,
                 [(0.03, 10), (0.04, -5), (0.08, -20)])
    batch_matmul("batch_matmul_i16", [2, 3, 4], [2, 4, 3], I16, False, False,
                 [(0.002, 0), (0.001, 0), (0.5, 0)])
    # Space and depth.
    for name, builtin, kind, shape, bs, dtype, q in [
        ("depth_to_space_f32", B.DEPTH_TO_SPACE, "DepthToSpaceOptions", [1, 2, 3, 8], 2, F32, None),
        ("depth_to_space_i8", B.DEPTH_TO_SPACE, "DepthToSpaceOptions", [2, 2, 2, 9], 3, I8, (0.1, 3)),
        ("space_to_depth_f32", B.SPACE_TO_DEPTH, "SpaceToDepthOptions", [1, 4, 6, 2], 2, F32, None),
        ("space_to_depth_i8", B.SPACE_TO_DEPTH, "SpaceToDepthOptions", [2, 6, 3, 1], 3, I8, (0.1, 3)),
    ]:
        g = Graph(float_range=(-1, 1))
        x = g.tensor("x", shape, dtype, q)
        n, h, w, c = shape
        out = ([n, h * bs, w * bs, c // bs // bs] if builtin == B.DEPTH_TO_SPACE
               else [n, h // bs, w // bs, c * bs * bs])
        y = g.tensor("y", out, dtype, q)
        g.op(builtin, [x], [y], *options(kind, blockSize=bs))
        g.write(name)
    # BATCH_TO_SPACE_ND's second constant is its crops, SPACE_TO_BATCH_ND's its paddings.
    for builtin, name, shape, block, (what, pairs), out, dtype, q in [
        (B.BATCH_TO_SPACE_ND, "batch_to_space_f32", [4, 2, 3, 2], [2, 2], ("crops", [[0, 1], [1, 0]]),
         [1, 3, 5, 2], F32, None),
        (B.BATCH_TO_SPACE_ND, "batch_to_space_i8_3d", [6, 3, 2], [3], ("crops", [[1, 1]]), [2, 7, 2],
         I8, (0.1, -7)),
        (B.SPACE_TO_BATCH_ND, "space_to_batch_f32", [1, 3, 5, 2], [2, 3], ("paddings", [[1, 0], [0, 1]]),
         [6, 2, 2, 2], F32, None),
        # A zero point of 7: TFLM pads with zero bytes, not the zero point.
        (B.SPACE_TO_BATCH_ND, "space_to_batch_i8_3d", [2, 5, 3], [2], ("paddings", [[1, 2]]), [4, 4, 3],
         I8, (0.1, 7)),
    ]:
        g = Graph(float_range=(-1, 1))
        x = g.tensor("x", shape, dtype, q)
        b = g.tensor("block", [len(block)], I32, None, block)
        p = g.tensor(what, [len(block), 2], I32, None, pairs)
        y = g.tensor("y", out, dtype, q)
        g.op(builtin, [x, b, p], [y])
        g.write(name)
    for name, shape, pads, mode, dtype, pdtype in [
        ("mirror_pad_f32_reflect", [2, 3, 4], [[1, 1], [0, 2], [3, 0]], 0, F32, I32),
        ("mirror_pad_i8_symmetric", [3, 4], [[2, 3], [4, 1]], 1, I8, I64),
    ]:
        with_constant(name, B.MIRROR_PAD, shape, dtype, ("paddings", pdtype, pads),
                      [n + a + b for n, (a, b) in zip(shape, pads)],
                      (0.1, 2) if dtype == I8 else None, options("MirrorPadOptions", mode=mode),
                      float_range=(-1, 1))
    for name, shape, axes, dtype in [
        ("reverse_f32", [2, 3, 4], [1], F32),
        ("reverse_i8_negative", [3, 5], [-1], I8),
        ("reverse_i16_two_axes", [2, 3, 2], [1, 0], I16),
        ("reverse_i32", [6], [0], I32),
        ("reverse_i64", [2, 3], [1], I64),
        ("reverse_bool", [3, 2], [0], BOOL),
    ]:
        with_constant(name, B.REVERSE_V2, shape, dtype, ("axes", I32, axes), shape,
                      float_range=(-1, 1))
    # Lookups.
    for name, pshape, idx, dtype in [
        ("gather_nd_f32", [3, 4, 2], [[0, 1], [2, 3], [1, 0]], F32),
        ("gather_nd_i8", [5, 3], [[[4], [0]], [[2], [2]]], I8),
    ]:
        g = Graph(float_range=(-1, 1))
        x = g.tensor("x", pshape, dtype, (0.1, 0) if dtype == I8 else None)
        idx = np.asarray(idx, dtype=np.int32)
        i = g.tensor("indices", list(idx.shape), I32, None, idx)
        nd = idx.shape[-1]
        y = g.tensor("y", list(idx.shape[:-1]) + pshape[nd:], dtype, (0.1, 0) if dtype == I8 else None)
        g.op(B.GATHER_ND, [x, i], [y])
        g.write(name)
    for name, tshape, tdtype, odtype, q in [
        ("embedding_lookup_f32", [4, 3], F32, F32, None),
        ("embedding_lookup_i8", [5, 2, 2], I8, I8, (0.1, 3)),
        ("embedding_lookup_i8_to_f32", [4, 6], I8, F32, (0.25, 0)),
    ]:
        g = Graph(float_range=(-1, 1), int_range=(0, tshape[0] - 1))
        ids = g.tensor("ids", [5], I32)
        t = g.tensor("table", tshape, tdtype, q)
        y = g.tensor("y", [5] + tshape[1:], odtype, q if odtype == I8 else None)
        g.op(B.EMBEDDING_LOOKUP, [ids, t], [y])
        g.write(name)
    for name, oshape, ushape, start, sdtype, dtype in [
        ("dynamic_update_slice_f32_clamped", [4, 5], [2, 3], [1, 3], I32, F32),
        ("dynamic_update_slice_i8", [3, 4, 2], [1, 2, 2], [-1, 1, 0], I64, I8),
        ("dynamic_update_slice_i16", [6], [2], [3], I32, I16),
        ("dynamic_update_slice_i32", [2, 3], [2, 1], [0, 2], I32, I32),
    ]:
        g = Graph(float_range=(-1, 1), int_range=(-100, 100))
        x = g.tensor("x", oshape, dtype)
        u = g.tensor("update", ushape, dtype)
        st = g.tensor("start", [len(start)], sdtype, None, start)
        y = g.tensor("y", oshape, dtype)
        g.op(B.DYNAMIC_UPDATE_SLICE, [x, u, st], [y])
        g.write(name)
    for name, dims, ddtype, dtype in [
        ("fill_f32", [2, 3], I32, F32),
        ("fill_i32", [3, 1, 2], I64, I32),
        ("fill_i8", [4], I32, I8),
    ]:
        g = Graph(float_range=(-1, 1), int_range=(-50, 50))
        d = g.tensor("dims", [len(dims)], ddtype, None, dims)
        v = g.tensor("value", [], dtype)
        y = g.tensor("y", dims, dtype)
        g.op(B.FILL, [d, v], [y])
        g.write(name)
    # ZEROS_LIKE and SHAPE beside a REVERSE_V2 of their input, whose output varies.
    for name, shape, dtype in [("zeros_like_i64", [2, 3], I64), ("zeros_like_i32", [5], I32),
                               ("zeros_like_i8", [2, 2], I8), ("zeros_like_f32", [3, 2], F32),
                               ("shape_f32", [2, 3, 4], F32), ("shape_i8", [5], I8)]:
        g = Graph(float_range=(-1, 1), int_range=(-9, 9))
        x = g.tensor("x", shape, dtype)
        if name.startswith("shape"):
            z = g.tensor("shape", [len(shape)], I32)
            g.op(B.SHAPE, [x], [z], *options("ShapeOptions", outType=s.TensorType.INT32))
        else:
            z = g.tensor("zeros", shape, dtype)
            g.op(B.ZEROS_LIKE, [x], [z])
        a = g.tensor("axis", [1], I32, None, [0])
        r = g.tensor("reversed", shape, dtype)
        g.op(B.REVERSE_V2, [x, a], [r])
        g.write(name)
    for name, shape, target, sdtype, dtype in [
        ("broadcast_to_f32", [1, 3], [2, 2, 3], I32, F32),
        ("broadcast_to_i8", [2, 1], [2, 3], I64, I8),
        ("broadcast_to_bool", [3, 1, 1], [3, 2, 2], I32, BOOL),
        ("broadcast_to_i16", [4], [1, 3, 4], I32, I16),
    ]:
        with_constant(name, B.BROADCAST_TO, shape, dtype, ("shape", sdtype, target), target,
                      float_range=(-1, 1))
    for name, na, b, dtype in [("broadcast_args_i32", 3, [1], I32),
                               ("broadcast_args_i64", 2, [5, 1, 1], I64)]:
        g = Graph(int_range=(1, 4))
        a = g.tensor("a", [na], dtype)
        c = g.tensor("b", [len(b)], dtype, None, b)
        y = g.tensor("y", [max(na, len(b))], dtype)
        g.op(B.BROADCAST_ARGS, [a, c], [y])
        g.write(name)
    # ARG_MIN (ties give the first index), REDUCE_MIN, REDUCE_ALL.
    for name, shape, axis, dtype, ranges in [
        ("arg_min_f32_ties", [3, 5], -1, F32, {"float_range": (-1, 1), "float_step": 0.5}),
        ("arg_min_i8", [2, 3, 4], 1, I8, {}),
    ]:
        g = Graph(**ranges)
        x = g.tensor("x", shape, dtype, (0.1, 0) if dtype == I8 else None)
        a = g.tensor("axis", [1], I32, None, [axis])
        y = g.tensor("y", [n for d, n in enumerate(shape) if d != axis % len(shape)], I32)
        g.op(B.ARG_MIN, [x, a], [y], *options("ArgMinOptions", outputType=s.TensorType.INT32))
        g.write(name)
    for name, builtin, shape, axes, keep, dtype in [
        ("reduce_min_f32_keep", B.REDUCE_MIN, [2, 3, 4], [0, 2], True, F32),
        ("reduce_min_i8", B.REDUCE_MIN, [3, 5], [-1], False, I8),
        ("reduce_all", B.REDUCE_ALL, [8, 2], [1], False, BOOL),
        ("reduce_all_keep", B.REDUCE_ALL, [2, 4, 1], [0, -1], True, BOOL),
    ]:
        gone = {d % len(shape) for d in axes}
        out = [1 if d in gone else n for d, n in enumerate(shape) if keep or d not in gone]
        with_constant(name, builtin, shape, dtype, ("axes", I32, axes), out,
                      (0.1, -4) if dtype == I8 else None, options("ReducerOptions", keepDims=keep),
                      float_range=(-1, 1))


if __name__ == "__main__":
    main()
