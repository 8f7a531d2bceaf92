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
from tflm_single_ops import A, B, F32, I8, I32, O, Model, conv_options, s  # noqa: E402



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


def tensor_in(m, name, shape, dtype, q):
    """A model input: int8 with quantisation `q`, float32 drawn from [-4, 4], or int32."""
    if dtype == F32:
        return bounded(m, name, shape, -4, 4)
    return m.tensor(name, shape, dtype, q if dtype == I8 else None)


def split(name, shape, axis, n, dtype, q=None):
    m = Model()
    a = m.tensor("axis", [], I32, data=np.array(axis, dtype=I32))
    x = tensor_in(m, "x", shape, dtype, q)
    part = list(shape)
    part[axis] //= n
    ys = [m.tensor(f"y{k}", part, dtype, q if dtype == I8 else None) for k in range(n)]
    o = s.SplitOptionsT()
    o.numSplits = n
    m.write(f"b2_{name}", B.SPLIT, [a, x], ys, O.SplitOptions, o)


def split_v(name, shape, sizes, axis, dtype, q=None):
    m = Model()
    x = tensor_in(m, "x", shape, dtype, q)
    sz = m.tensor("size_splits", [len(sizes)], I32, data=sizes)
    a = m.tensor("axis", [], I32, data=np.array(axis, dtype=I32))
    total = shape[axis]
    known = [v for v in sizes if v >= 0]
    ys = []
    for k, v in enumerate(sizes):
        part = list(shape)
        part[axis] = v if v >= 0 else total - sum(known)
        ys.append(m.tensor(f"y{k}", part, dtype, q if dtype == I8 else None))
    o = s.SplitVOptionsT()
    o.numSplits = len(sizes)
    m.write(f"b2_{name}", B.SPLIT_V, [x, sz, a], ys, O.SplitVOptions, o)


def pack(name, shape, n, axis, dtype, q=None):
    m = Model()
    xs = [tensor_in(m, f"x{k}", shape, dtype, q) for k in range(n)]
    rank = len(shape) + 1
    a = axis % rank
    out = list(shape[:a]) + [n] + list(shape[a:])
    y = m.tensor("y", out, dtype, q if dtype == I8 else None)
    o = s.PackOptionsT()
    o.valuesCount, o.axis = n, axis
    m.write(f"b2_{name}", B.PACK, xs, [y], O.PackOptions, o)


def unpack(name, shape, axis, dtype, q=None):
    m = Model()
    x = tensor_in(m, "x", shape, dtype, q)
    a = axis % len(shape)
    n = shape[a]
    part = list(shape[:a]) + list(shape[a + 1:])
    ys = [m.tensor(f"y{k}", part, dtype, q if dtype == I8 else None) for k in range(n)]
    o = s.UnpackOptionsT()
    o.num, o.axis = n, axis
    m.write(f"b2_{name}", B.UNPACK, [x], ys, O.UnpackOptions, o)


def splits():
    q = (0.07, -5)
    split("split_i8_middle", [2, 6, 3], 1, 3, I8, q)
    split("split_f32_negative", [3, 5, 4], -1, 2, F32)
    split("split_i32_first", [4, 3], 0, 4, I32)
    split_v("split_v_i8_infer", [2, 3, 9], [2, -1, 4], -1, I8, q)
    split_v("split_v_f32_middle", [3, 7, 2], [1, 5, 1], 1, F32)
    split_v("split_v_i32_first", [6, 5], [1, -1, 2], 0, I32)
    pack("pack_i8_middle", [3, 5], 4, 1, I8, q)
    pack("pack_f32_negative", [2, 3], 3, -1, F32)
    pack("pack_i32_first", [7], 2, 0, I32)
    unpack("unpack_i8_negative", [2, 3, 5], -2, I8, q)
    unpack("unpack_f32_last", [4, 3], 1, F32)
    unpack("unpack_i32_first", [3, 2, 2], 0, I32)


def resize_bilinear(name, shape, size, dtype, align_corners=False, half_pixel_centers=False):
    """RESIZE_BILINEAR of an NHWC input to `size` (int8: one quantisation for both)."""
    m = Model()
    q = (0.05, -9)
    x = tensor_in(m, "x", shape, dtype, q)
    sz = m.tensor("size", [2], I32, data=size)
    y = m.tensor("y", [shape[0], size[0], size[1], shape[3]], dtype, q if dtype == I8 else None)
    o = s.ResizeBilinearOptionsT()
    o.alignCorners, o.halfPixelCenters = align_corners, half_pixel_centers
    m.write(f"b2_{name}", B.RESIZE_BILINEAR, [x, sz], [y], O.ResizeBilinearOptions, o)


def resizes():
    for dtype, t in [(I8, "i8"), (F32, "f32")]:
        resize_bilinear(f"resize_bilinear_{t}_x2", [1, 4, 5, 3], [8, 10], dtype)
        resize_bilinear(f"resize_bilinear_{t}_odd", [2, 3, 4, 2], [7, 5], dtype)
        resize_bilinear(f"resize_bilinear_{t}_down", [1, 9, 8, 3], [4, 3], dtype)
        for tag, ac, hp in [("align", True, False), ("half", False, True)]:
            resize_bilinear(f"resize_bilinear_{t}_{tag}_up", [2, 4, 5, 3], [7, 9], dtype, ac, hp)
            resize_bilinear(f"resize_bilinear_{t}_{tag}_down", [1, 11, 9, 2], [4, 5], dtype, ac, hp)


def per_channel(m, name, shape, scales, data):
    """An int8 constant quantised per output channel (dimension 0), zero points 0."""
    t = m.tensor(name, shape, I8, data=data)
    q = s.QuantizationParametersT()
    q.scale = [float(v) for v in scales]
    q.zeroPoint = [0] * len(scales)
    q.quantizedDimension = 0
    m.tensors[t].quantization = q
    return t


def transpose_conv(name, in_shape, filt, out_hw, stride, padding, dtype, bias, activation=0, seed=7):
    """TRANSPOSE_CONV of an NHWC input by a filter `filt` = [out_c, h, w] (int8 per channel,
    or float32) to `out_hw`, with `stride` = (h, w)."""
    m = Model()
    r = rng(seed)
    out_c, fh, fw = filt
    in_c = in_shape[3]
    out_shape = [in_shape[0], out_hw[0], out_hw[1], out_c]
    shape_t = m.tensor("output_shape", [4], I32, data=out_shape)
    in_q = (0.05, -9)
    if dtype == I8:
        scales = r.uniform(0.004, 0.02, out_c)
        w = per_channel(m, "w", [out_c, fh, fw, in_c], scales,
                        r.integers(-127, 128, (out_c, fh, fw, in_c)))
        terms = max(1.0, fh * fw * in_c / (stride[0] * stride[1]))
        out_scale = in_q[0] * float(np.mean(scales)) * 73 * 73 * np.sqrt(terms) * 3 / 128
        out_q = (out_scale, 5)
    else:
        w = m.tensor("w", [out_c, fh, fw, in_c], F32,
                     data=r.normal(0, 0.5, (out_c, fh, fw, in_c)).astype(F32))
    x = tensor_in(m, "x", in_shape, dtype, in_q)
    inputs = [shape_t, w, x]
    if bias:
        if dtype == I8:
            inputs.append(m.tensor("bias", [out_c], I32, data=r.integers(-3000, 3000, out_c)))
        else:
            inputs.append(m.tensor("bias", [out_c], F32, data=r.normal(0, 1, out_c).astype(F32)))
    y = m.tensor("y", out_shape, dtype, out_q if dtype == I8 else None)
    o = s.TransposeConvOptionsT()
    o.padding = padding
    o.strideH, o.strideW = stride
    o.fusedActivationFunction = activation
    m.write(f"b2_{name}", B.TRANSPOSE_CONV, inputs, [y], O.TransposeConvOptions, o)


def transpose_convs():
    SAME, VALID = s.Padding.SAME, s.Padding.VALID
    transpose_conv("tconv_i8_same_s2_bias", [1, 4, 5, 3], [4, 3, 3], [8, 10], (2, 2), SAME, I8, True)
    transpose_conv("tconv_i8_valid_s2_nobias", [2, 3, 4, 2], [3, 3, 3], [7, 9], (2, 2), VALID, I8, False)
    transpose_conv("tconv_i8_same_s1_relu", [1, 5, 5, 4], [2, 2, 2], [5, 5], (1, 1), SAME, I8, True, A.RELU)
    # Odd output and a 4x3 filter: total padding 3 along the height, 1 before.
    transpose_conv("tconv_i8_same_s2_odd", [1, 5, 3, 2], [3, 4, 3], [9, 5], (2, 2), SAME, I8, True)
    transpose_conv("tconv_i8_valid_s2x1", [1, 3, 4, 3], [2, 2, 3], [6, 6], (2, 1), VALID, I8, True)
    transpose_conv("tconv_f32_same_s2_bias", [1, 4, 4, 2], [3, 3, 3], [8, 8], (2, 2), SAME, F32, True)
    transpose_conv("tconv_f32_valid_s2_relu", [1, 3, 3, 3], [2, 3, 3], [7, 7], (2, 2), VALID, F32, False, A.RELU)


def conv_f32(name, in_shape, filt, stride, padding, dilation=(1, 1), activation=0, bias=True,
             depthwise=False, seed=11):
    """float32 CONV_2D (filter [out_c, h, w, in_c]) or DEPTHWISE_CONV_2D (filter [1, h, w,
    out_c]), `filt` = (out_c, h, w); the output size from TFLite's SAME / VALID rule."""
    m = Model()
    r = rng(seed)
    out_c, fh, fw = filt
    n, h, w, in_c = in_shape
    x = bounded(m, "x", in_shape, -2, 2)
    wshape = [1, fh, fw, out_c] if depthwise else [out_c, fh, fw, in_c]
    wt = m.tensor("w", wshape, F32, data=r.normal(0, 0.5, wshape).astype(F32))
    inputs = [x, wt]
    if bias:
        inputs.append(m.tensor("bias", [out_c], F32, data=r.normal(0, 1, out_c).astype(F32)))

    def size(i, f, st, d):
        ext = (f - 1) * d + 1
        return -(-i // st) if padding == s.Padding.SAME else (i - ext) // st + 1

    out = [n, size(h, fh, stride[0], dilation[0]), size(w, fw, stride[1], dilation[1]), out_c]
    y = m.tensor("y", out, F32)
    builtin, otype, o = conv_options(depthwise, out_c // in_c, padding, stride, dilation, activation)
    m.write(f"b2_{name}", builtin, inputs, [y], otype, o)


def float_convs():
    SAME, VALID = s.Padding.SAME, s.Padding.VALID
    conv_f32("conv_f32_same_s2", [1, 9, 7, 5], (4, 3, 3), (2, 2), SAME)
    conv_f32("conv_f32_valid_dil_relu6", [2, 8, 8, 3], (5, 3, 2), (1, 2), VALID, (2, 1), A.RELU6)
    conv_f32("conv_f32_same_nobias", [1, 6, 5, 7], (3, 1, 1), (1, 1), SAME, bias=False)
    conv_f32("dwconv_f32_same_m2", [1, 7, 9, 3], (6, 3, 3), (2, 2), SAME, depthwise=True)
    conv_f32("dwconv_f32_valid_dil_relu", [2, 9, 8, 4], (4, 3, 3), (1, 1), VALID, (2, 2), A.RELU,
             depthwise=True)


def main():
    floats()
    splits()
    resizes()
    transpose_convs()
    float_convs()


if __name__ == "__main__":
    main()
