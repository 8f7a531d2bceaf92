#!/usr/bin/env python3
"""One-op models of the older int8 kernels (issue 25), for the per-op golden tests.

Writes `tests/run-models/single/op_b0_<case>.tflite` with the helpers of
`scripts/tflm_single_ops.py`: int8 CONV_2D and DEPTHWISE_CONV_2D (per-channel filters),
FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL, SOFTMAX, RESHAPE, PAD, TRANSPOSE and
DEQUANTIZE. Then `scripts/tflm_op_goldens.py --only <stem>` writes each one's TFLM goldens.

Output scales are chosen from the spread of a uniform int8 input (about 73 steps of standard
deviation around the zero point) so that the outputs use the int8 range without all
saturating; the goldens script checks that the three runs differ and are not all saturated.

    python3 scripts/tflm_single_ops_b0.py
    for f in tests/run-models/single/op_b0_*.tflite; do
        python3 scripts/tflm_op_goldens.py --only "$(basename "$f" .tflite)"
    done
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_single_ops import A, B, F32, I8, I32, O, Model, conv_options, binary, s, unary  # noqa: E402

SAME, VALID = s.Padding.SAME, s.Padding.VALID


def rng(seed):
    return np.random.default_rng(seed)


def per_channel(m, name, shape, scales, data, dim, dtype=I8):
    """A constant (int8 unless `dtype` says) quantised per channel along `dim`, zero points 0."""
    t = m.tensor(name, shape, dtype, data=data)
    q = s.QuantizationParametersT()
    q.scale = [float(v) for v in scales]
    q.zeroPoint = [0] * len(scales)
    q.quantizedDimension = dim
    m.tensors[t].quantization = q
    return t


def out_size(i, f, st, d, padding):
    ext = (f - 1) * d + 1
    return -(-i // st) if padding == SAME else (i - ext) // st + 1


def conv_geometry(in_shape, filt, stride, padding, dilation, depthwise):
    """`(filter shape, quantised dimension, products per output, output shape)` of a CONV_2D
    (filter [out_c, h, w, in_c]) or a DEPTHWISE_CONV_2D (filter [1, h, w, out_c]) of an NHWC
    input, `filt` = (out_c, h, w)."""
    out_c, fh, fw = filt
    n, h, w, in_c = in_shape
    if depthwise:
        wshape, dim, terms = [1, fh, fw, out_c], 3, fh * fw
    else:
        wshape, dim, terms = [out_c, fh, fw, in_c], 0, fh * fw * in_c
    out = [n, out_size(h, fh, stride[0], dilation[0], padding),
           out_size(w, fw, stride[1], dilation[1], padding), out_c]
    return wshape, dim, terms, out


def conv(name, in_shape, filt, stride, padding, dilation=(1, 1), activation=A.NONE, bias=True,
         depthwise=False, in_q=(0.05, -9), out_zp=5, seed=21):
    """int8 CONV_2D (filter [out_c, h, w, in_c], per channel along 0) or DEPTHWISE_CONV_2D
    (filter [1, h, w, out_c], per channel along 3), `filt` = (out_c, h, w)."""
    m = Model()
    r = rng(seed)
    out_c, in_c = filt[0], in_shape[3]
    scales = r.uniform(0.004, 0.02, out_c)
    wshape, dim, terms, out = conv_geometry(in_shape, filt, stride, padding, dilation, depthwise)
    wt = per_channel(m, "w", wshape, scales, r.integers(-127, 128, wshape), dim)
    x = m.tensor("x", in_shape, I8, in_q)
    inputs = [x, wt]
    if bias:
        inputs.append(m.tensor("bias", [out_c], I32, data=r.integers(-3000, 3000, out_c)))
    out_scale = in_q[0] * float(np.mean(scales)) * 73 * 73 * np.sqrt(terms) * 3 / 128
    y = m.tensor("y", out, I8, (out_scale, out_zp))
    builtin, otype, o = conv_options(depthwise, out_c // in_c, padding, stride, dilation, activation)
    m.write(f"b0_{name}", builtin, inputs, [y], otype, o)


def convs():
    # SAME, stride 2 on even sizes (TFLM pads 0 before, 1 after), fused RELU6.
    conv("conv_i8_same_s2_even_relu6", [1, 8, 8, 3], (4, 3, 3), (2, 2), SAME, activation=A.RELU6)
    # VALID with dilation 2 along both axes, odd sizes, two batches.
    conv("conv_i8_valid_dil2", [2, 9, 7, 2], (3, 3, 3), (1, 1), VALID, (2, 2), seed=22)
    # SAME of odd sizes, a 2x3 filter (asymmetric padding), no bias, extreme zero points.
    conv("conv_i8_same_odd_nobias", [1, 7, 5, 5], (6, 2, 3), (1, 1), SAME, bias=False,
         in_q=(0.03, -128), out_zp=127, seed=23)
    # VALID stride 2x1 on odd sizes, a 1x1 filter (the pointwise case).
    conv("conv_i8_valid_s2x1_1x1", [1, 9, 5, 8], (5, 1, 1), (2, 1), VALID, seed=24)
    # VALID stride 2 on even sizes (the last row and column unread), fused RELU.
    conv("conv_i8_valid_s2_even_relu", [1, 8, 6, 3], (4, 2, 3), (2, 2), VALID, activation=A.RELU,
         seed=29)
    # Depth multiplier 1, SAME, stride 2 on even sizes.
    conv("dwconv_i8_m1_same_s2", [1, 8, 8, 4], (4, 3, 3), (2, 2), SAME, depthwise=True, seed=25)
    # Depth multiplier 2, VALID, dilation 2, fused RELU.
    conv("dwconv_i8_m2_valid_dil2_relu", [1, 9, 8, 3], (6, 3, 3), (1, 1), VALID, (2, 2), A.RELU,
         depthwise=True, seed=26)
    # Depth multiplier 2, SAME, odd sizes, a 3x2 filter, no bias, two batches.
    conv("dwconv_i8_m2_same_odd_nobias", [2, 5, 7, 2], (4, 3, 2), (1, 1), SAME, bias=False,
         depthwise=True, in_q=(0.04, 100), out_zp=-100, seed=27)
    # Depth multiplier 1, SAME, stride 2 and dilation 2 at once (TFLM allows both), RELU6.
    conv("dwconv_i8_m1_same_s2_dil2_relu6", [1, 9, 9, 3], (3, 3, 3), (2, 2), SAME, (2, 2),
         A.RELU6, depthwise=True, seed=28)


def fc(name, in_shape, units, activation, bias=True, keep=False, in_q=(0.05, -9), out_zp=3,
       seed=31, per_chan=False):
    """int8 FULLY_CONNECTED, a filter [units, depth] per tensor (or per unit)."""
    m = Model()
    r = rng(seed)
    depth = in_shape[-1]
    w_scale = 0.01
    x = m.tensor("x", in_shape, I8, in_q)
    data = r.integers(-127, 128, (units, depth))
    if per_chan:
        scales = r.uniform(0.5 * w_scale, 1.5 * w_scale, units)
        wt = per_channel(m, "w", [units, depth], scales, data, 0)
    else:
        wt = m.tensor("w", [units, depth], I8, (w_scale, 0), data)
    inputs = [x, wt]
    if bias:
        inputs.append(m.tensor("bias", [units], I32, data=r.integers(-5000, 5000, units)))
    out_scale = in_q[0] * w_scale * 73 * 73 * np.sqrt(depth) * 3 / 128
    if keep:
        out = list(in_shape[:-1]) + [units]
    else:
        out = [int(np.prod(in_shape)) // depth, units]
    y = m.tensor("y", out, I8, (out_scale, out_zp))
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    o.keepNumDims = keep
    m.write(f"b0_{name}", B.FULLY_CONNECTED, inputs, [y], O.FullyConnectedOptions, o)


def fcs():
    fc("fc_i8_bias_relu", [3, 13], 7, A.RELU)
    fc("fc_i8_nobias", [2, 17], 5, A.NONE, bias=False, in_q=(0.02, 127), out_zp=-128, seed=32)
    fc("fc_i8_keep_num_dims", [2, 3, 9], 4, A.NONE, keep=True, seed=33)
    fc("fc_i8_rank3_flatten_relu6", [2, 3, 11], 6, A.RELU6, seed=34)
    # Per-unit filter scales (TFLM's per-channel FULLY_CONNECTED).
    fc("fc_i8_per_channel", [3, 10], 6, A.NONE, seed=35, per_chan=True)


def pool(name, builtin, shape, filt, stride, padding, activation=A.NONE, q=(0.05, -9)):
    """int8 AVERAGE_POOL_2D or MAX_POOL_2D (the output of the input's quantisation)."""
    m = Model()
    n, h, w, c = shape
    x = m.tensor("x", shape, I8, q)
    out = [n, out_size(h, filt[0], stride[0], 1, padding),
           out_size(w, filt[1], stride[1], 1, padding), c]
    y = m.tensor("y", out, I8, q)
    o = s.Pool2DOptionsT()
    o.padding = padding
    o.strideH, o.strideW = stride
    o.filterHeight, o.filterWidth = filt
    o.fusedActivationFunction = activation
    m.write(f"b0_{name}", builtin, [x], [y], O.Pool2DOptions, o)


def pools():
    AVG, MAX = B.AVERAGE_POOL_2D, B.MAX_POOL_2D
    # SAME on odd sizes: the edge windows cover fewer elements (the average divides by them).
    pool("avg_pool_i8_same_s2_edges", AVG, [1, 7, 9, 3], (3, 3), (2, 2), SAME)
    pool("avg_pool_i8_valid_s2_relu6", AVG, [1, 8, 8, 2], (2, 2), (2, 2), VALID, A.RELU6,
         (0.03, -20))
    # A 3x2 window at stride 1, SAME: half-way averages of negative sums round away from 0.
    pool("avg_pool_i8_same_s1_3x2", AVG, [2, 5, 6, 4], (3, 2), (1, 1), SAME, q=(0.1, 127))
    pool("max_pool_i8_same_s2_relu", MAX, [1, 6, 7, 4], (3, 2), (2, 2), SAME, A.RELU)
    pool("max_pool_i8_valid_s1", MAX, [2, 9, 9, 3], (3, 3), (1, 1), VALID, q=(0.02, -128))
    pool("max_pool_i8_same_s2_edges_relu6", MAX, [1, 7, 5, 2], (3, 3), (2, 2), SAME, A.RELU6,
         (0.04, 30))


def add_mul(name, builtin, shapes, qs, activation):
    if builtin == B.ADD:
        o, otype = s.AddOptionsT(), O.AddOptions
    else:
        o, otype = s.MulOptionsT(), O.MulOptions
    o.fusedActivationFunction = activation
    binary(f"b0_{name}", builtin, shapes, qs, otype, o)


# ADD and MUL cases: (name, builtin, operand shapes, (scale, zero point) of each operand and
# the output, fused activation).
ADDS_MULS = [
    ("add_i8_broadcast_relu6", B.ADD, [[2, 3, 4], [3, 1]], [(0.1, 3), (0.05, -7), (0.06, -100)], A.RELU6),
    ("add_i8_extreme_zero", B.ADD, [[4, 5], [4, 5]], [(0.02, -128), (0.03, 127), (0.05, 0)], A.NONE),
    ("add_i8_broadcast4d_relu", B.ADD, [[1, 3, 1, 4], [2, 1, 5, 1]], [(0.04, 10), (0.2, -50), (0.1, -128)], A.RELU),
    ("mul_i8_broadcast_relu", B.MUL, [[2, 3, 4], [1, 4]], [(0.05, 3), (0.04, -7), (0.1, -100)], A.RELU),
    ("mul_i8_extreme_zero", B.MUL, [[3, 7], [3, 7]], [(0.02, -128), (0.03, 127), (0.1, 0)], A.NONE),
    ("mul_i8_broadcast4d_relu6", B.MUL, [[2, 1, 3, 1], [1, 4, 1, 5]], [(0.05, 20), (0.05, -20), (0.03, -128)], A.RELU6),
    # A one-element second operand broadcast to every element.
    ("add_i8_scalar", B.ADD, [[3, 5], [1]], [(0.05, -9), (0.02, 60), (0.06, 4)], A.NONE),
    ("mul_i8_scalar_relu_n1", B.MUL, [[2, 7], [1]], [(0.01, -9), (0.02, 60), (0.008, 0)], A.RELU_N1_TO_1),
]


def adds_muls():
    for case in ADDS_MULS:
        add_mul(*case)


def softmax(name, shape, qin, beta):
    o = s.SoftmaxOptionsT()
    o.beta = beta
    m = Model()
    x = m.tensor("x", shape, I8, qin)
    y = m.tensor("y", shape, I8, (1 / 256, -128))
    m.write(f"b0_{name}", B.SOFTMAX, [x], [y], O.SoftmaxOptions, o)


def softmaxes():
    softmax("softmax_i8", [3, 37], (0.1, -9), 1.0)
    softmax("softmax_i8_beta", [2, 5, 9], (0.05, 20), 0.6)
    softmax("softmax_i8_beta_large", [4, 10], (0.02, -128), 2.5)
    # A fine input scale: the whole int8 range, differences below one exp step.
    softmax("softmax_i8_fine", [2, 50], (0.01, 0), 1.0)


def reshape(name, shape, new_shape, q=(0.05, -9)):
    m = Model()
    x = m.tensor("x", shape, I8, q)
    sh = m.tensor("shape", [len(new_shape)], I32, data=new_shape)
    out = list(np.zeros(shape).reshape(new_shape).shape)
    y = m.tensor("y", out, I8, q)
    o = s.ReshapeOptionsT()
    o.newShape = list(new_shape)
    m.write(f"b0_{name}", B.RESHAPE, [x, sh], [y], O.ReshapeOptions, o)


def pad(name, shape, paddings, q):
    m = Model()
    x = m.tensor("x", shape, I8, q)
    p = m.tensor("paddings", [len(shape), 2], I32, data=np.array(paddings, dtype=I32))
    out = [n + a + b for n, (a, b) in zip(shape, paddings)]
    y = m.tensor("y", out, I8, q)
    m.write(f"b0_{name}", B.PAD, [x, p], [y], O.PadOptions, s.PadOptionsT())


def transpose(name, shape, perm, q=(0.05, -9)):
    m = Model()
    x = m.tensor("x", shape, I8, q)
    p = m.tensor("perm", [len(perm)], I32, data=perm)
    y = m.tensor("y", [shape[d] for d in perm], I8, q)
    m.write(f"b0_{name}", B.TRANSPOSE, [x, p], [y], O.TransposeOptions, s.TransposeOptionsT())


def shapes():
    reshape("reshape_i8_flatten", [2, 3, 5], [6, 5])
    reshape("reshape_i8_inferred", [1, 4, 3, 2], [2, -1, 3])
    pad("pad_i8_asymmetric", [1, 3, 4, 2], [[0, 0], [1, 2], [0, 3], [2, 1]], (0.05, -9))
    pad("pad_i8_2d_extreme_zero", [3, 5], [[2, 0], [1, 4]], (0.02, 127))
    pad("pad_i8_rank3", [2, 3, 3], [[1, 1], [0, 2], [3, 0]], (0.1, -128))
    transpose("transpose_i8_rank3", [2, 3, 5], [2, 0, 1])
    transpose("transpose_i8_rank4", [2, 3, 4, 5], [0, 3, 1, 2])
    transpose("transpose_i8_rank4_reverse", [3, 1, 4, 2], [3, 2, 1, 0])
    unary("b0_dequantize_i8", B.DEQUANTIZE, [3, 17], (I8, F32), (0.05, -9), None)
    unary("b0_dequantize_i8_extreme_zero", B.DEQUANTIZE, [2, 3, 7], (I8, F32), (0.0031, 127),
          None)


def main():
    convs()
    fcs()
    pools()
    adds_muls()
    softmaxes()
    shapes()


if __name__ == "__main__":
    main()
