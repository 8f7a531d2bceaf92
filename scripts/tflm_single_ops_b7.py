#!/usr/bin/env python3
"""One-op models with packed int4 filters, for the per-op golden tests.

Writes `tests/run-models/single/op_b7_<case>.tflite` with the helpers of
`scripts/tflm_single_ops.py`: CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of an int8
input whose filter is an `INT4` constant (two values per byte, the low nibble first, as
TFLite packs them), quantised per channel or per tensor. TFLM unpacks such a filter into
a scratch buffer at every run; the planner's importer unpacks it once at build time. The
cases use every nibble value (-8 to 7), odd element counts (the last byte half used) and
the same shapes the int8 cases of `scripts/tflm_single_ops_b0.py` cover.

Run it, then the goldens script on each model it writes, as `scripts/tflm_single_ops_b0.py`
says with `b7` for `b0`:

    python3 scripts/tflm_single_ops_b7.py
"""

import numpy as np

from tflm_single_ops import A, B, I8, I32, O, Model, conv_options, s
from tflm_single_ops_b0 import SAME, VALID, conv_geometry


def packed(values):
    """int4 `values` (flat, -8..7) packed two per byte, the low nibble first."""
    nibbles = [int(v) & 0x0F for v in values]
    if len(nibbles) % 2:
        nibbles.append(0)
    return [lo | (hi << 4) for lo, hi in zip(nibbles[0::2], nibbles[1::2])]


def int4_filter(m, shape, scales, dim, r):
    """An INT4 constant of `shape` with values over -8..7 (each value at least once when
    there are 16 or more), quantised by `scales` along `dim` (one scale: per tensor)."""
    n = int(np.prod(shape))
    values = np.concatenate([np.arange(-8, 8), r.integers(-8, 8, max(n - 16, 0))])[:n]
    r.shuffle(values)
    b = s.BufferT()
    b.data = packed(values)
    m.buffers.append(b)
    t = s.TensorT()
    t.name = "w"
    t.shape = list(shape)
    t.type = s.TensorType.INT4
    t.buffer = len(m.buffers) - 1
    q = s.QuantizationParametersT()
    q.scale = [float(v) for v in scales]
    q.zeroPoint = [0] * len(scales)
    q.quantizedDimension = dim
    t.quantization = q
    m.tensors.append(t)
    return len(m.tensors) - 1


def conv(name, in_shape, filt, stride, padding, activation=A.NONE, depthwise=False,
         in_q=(0.05, -9), out_zp=5, seed=71):
    """CONV_2D (filter [out_c, h, w, in_c], per channel along 0) or DEPTHWISE_CONV_2D
    (filter [1, h, w, out_c], per channel along 3) of an int4 filter, `filt` = (out_c, h, w)."""
    m = Model()
    m.description = "scripts/tflm_single_ops_b7.py"
    r = np.random.default_rng(seed)
    out_c, in_c = filt[0], in_shape[3]
    scales = r.uniform(0.06, 0.3, out_c)
    wshape, dim, terms, out = conv_geometry(in_shape, filt, stride, padding, (1, 1), depthwise)
    wt = int4_filter(m, wshape, scales, dim, r)
    x = m.tensor("x", in_shape, I8, in_q)
    bias = m.tensor("bias", [out_c], I32, data=r.integers(-3000, 3000, out_c))
    out_scale = in_q[0] * float(np.mean(scales)) * 73 * 4.6 * np.sqrt(terms) * 3 / 128
    y = m.tensor("y", out, I8, (out_scale, out_zp))
    builtin, otype, o = conv_options(depthwise, out_c // in_c, padding, stride, (1, 1), activation)
    m.write(f"b7_{name}", builtin, [x, wt, bias], [y], otype, o)


def fc(name, in_shape, units, per_chan, activation=A.NONE, in_q=(0.05, -9), out_zp=3, seed=81):
    """FULLY_CONNECTED of an int4 filter [units, depth], per unit or per tensor."""
    m = Model()
    m.description = "scripts/tflm_single_ops_b7.py"
    r = np.random.default_rng(seed)
    depth = in_shape[-1]
    w_scale = 0.15
    scales = r.uniform(0.5 * w_scale, 1.5 * w_scale, units) if per_chan else [w_scale]
    x = m.tensor("x", in_shape, I8, in_q)
    wt = int4_filter(m, [units, depth], scales, 0, r)
    # Per tensor, TFLM checks the bias scale against input scale x filter scale.
    bias_q = None if per_chan else (in_q[0] * w_scale, 0)
    bias = m.tensor("bias", [units], I32, bias_q, r.integers(-5000, 5000, units))
    out_scale = in_q[0] * w_scale * 73 * 4.6 * np.sqrt(depth) * 3 / 128
    y = m.tensor("y", [int(np.prod(in_shape)) // depth, units], I8, (out_scale, out_zp))
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    m.write(f"b7_{name}", B.FULLY_CONNECTED, [x, wt, bias], [y], O.FullyConnectedOptions, o)


def main():
    # 3x3 stride 2 SAME, 4 x 3 x 3 x 3 = 108 values (even), RELU6.
    conv("conv_i4_same_s2_relu6", [1, 8, 8, 3], (4, 3, 3), (2, 2), SAME, A.RELU6)
    # A 2x3 filter over 5 channels, 6 x 2 x 3 x 5 = 180 values, VALID, two batches.
    conv("conv_i4_valid_2x3", [2, 7, 6, 5], (6, 2, 3), (1, 1), VALID, seed=72)
    # Pointwise with an odd number of values (7 x 1 x 1 x 3 = 21: the last byte half used).
    conv("conv_i4_1x1_odd", [1, 5, 4, 3], (7, 1, 1), (1, 1), VALID, seed=73)
    # Depthwise, multiplier 1, stride 2 SAME, 1 x 3 x 3 x 5 = 45 values (odd).
    conv("dwconv_i4_m1_same_s2", [1, 9, 8, 5], (5, 3, 3), (2, 2), SAME, depthwise=True, seed=74)
    # Depthwise, multiplier 2, VALID, RELU.
    conv("dwconv_i4_m2_valid_relu", [1, 6, 7, 3], (6, 3, 3), (1, 1), VALID, A.RELU,
         depthwise=True, seed=75)
    # FULLY_CONNECTED (per tensor: TFLM refuses a per-channel int4 one), one with an odd
    # value count (5 x 13 = 65), one flattening a rank-3 input, with RELU.
    fc("fc_i4_per_tensor_odd", [3, 13], 5, False, seed=81)
    fc("fc_i4_rank3_relu", [2, 3, 24], 7, False, A.RELU, seed=82)


if __name__ == "__main__":
    main()
