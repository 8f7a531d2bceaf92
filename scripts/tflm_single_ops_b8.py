#!/usr/bin/env python3
"""One-op models of the 16x8 convolutions, for the per-op golden tests.

Writes `tests/run-models/single/op_b8_<case>.tflite` with the helpers of
`scripts/tflm_single_ops.py`: CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of an int16
input and output (zero points 0) and an int8 filter, with an int64 bias (what converters
write: a 64-bit accumulator and TFLM's 64-bit requantisation), an int32 one (CONV_2D and
FULLY_CONNECTED: TFLM then sums in 32 bits) or none. Output scales follow the spread of a
uniform int16 input (about 18,900 steps of standard deviation) so that outputs use the
int16 range without all saturating.

Run it, then the goldens script on each model it writes, as `scripts/tflm_single_ops_b0.py`
says with `b8` for `b0`:

    python3 scripts/tflm_single_ops_b8.py
"""

import numpy as np

from tflm_single_ops import A, B, O, Model, conv_options, s
from tflm_single_ops_b0 import SAME, VALID, conv_geometry, per_channel

I16, I32, I64 = np.int16, np.int32, np.int64
IN_SCALE = 1 / 4096


def out_scale(w_scales, terms):
    return IN_SCALE * float(np.mean(w_scales)) * 18918 * 73 * np.sqrt(terms) * 3 / 32768


def bias(m, r, n, dtype, w_scales):
    """A bias of `n` `dtype` values at scale input x filter (None: no bias)."""
    if dtype is None:
        return -1
    bound = 2**20 if dtype == I64 else 2**18
    return per_channel(m, "bias", [n], [IN_SCALE * w for w in w_scales],
                       r.integers(-bound, bound, n), 0, dtype)


def conv(name, in_shape, filt, stride, padding, dilation=(1, 1), activation=A.NONE,
         bias_type=I64, depthwise=False, seed=91):
    """CONV_2D (filter [out_c, h, w, in_c], per channel along 0) or DEPTHWISE_CONV_2D
    (filter [1, h, w, out_c], per channel along 3), `filt` = (out_c, h, w)."""
    m = Model()
    m.description = "scripts/tflm_single_ops_b8.py"
    r = np.random.default_rng(seed)
    out_c, in_c = filt[0], in_shape[3]
    scales = r.uniform(0.004, 0.02, out_c)
    wshape, dim, terms, out = conv_geometry(in_shape, filt, stride, padding, dilation, depthwise)
    x = m.tensor("x", in_shape, I16, (IN_SCALE, 0))
    wt = per_channel(m, "w", wshape, scales, r.integers(-127, 128, wshape), dim)
    b = bias(m, r, out_c, bias_type, scales)
    y = m.tensor("y", out, I16, (out_scale(scales, terms), 0))
    builtin, otype, o = conv_options(depthwise, out_c // in_c, padding, stride, dilation, activation)
    m.write(f"b8_{name}", builtin, [x, wt, b], [y], otype, o)


def fc(name, in_shape, units, per_chan, activation=A.NONE, bias_type=I64, seed=101):
    """FULLY_CONNECTED of an int8 filter [units, depth], per unit or per tensor."""
    m = Model()
    m.description = "scripts/tflm_single_ops_b8.py"
    r = np.random.default_rng(seed)
    depth = in_shape[-1]
    scales = r.uniform(0.005, 0.015, units) if per_chan else [0.01]
    x = m.tensor("x", in_shape, I16, (IN_SCALE, 0))
    wt = per_channel(m, "w", [units, depth], scales, r.integers(-127, 128, (units, depth)), 0)
    b = bias(m, r, units, bias_type, scales if per_chan else [0.01] * units)
    if not per_chan and b >= 0:
        # Per tensor: one bias scale, as TFLM checks it against input x filter.
        m.tensors[b].quantization.scale = [IN_SCALE * 0.01]
        m.tensors[b].quantization.zeroPoint = [0]
    y = m.tensor("y", [int(np.prod(in_shape)) // depth, units], I16, (out_scale(scales, depth), 0))
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    m.write(f"b8_{name}", B.FULLY_CONNECTED, [x, wt, b], [y], O.FullyConnectedOptions, o)


def main():
    # SAME, stride 2 on even sizes, RELU, int64 bias.
    conv("conv_i16_same_s2_relu", [1, 8, 8, 3], (4, 3, 3), (2, 2), SAME, activation=A.RELU)
    # VALID, dilation 2, two batches, no bias (64-bit accumulation).
    conv("conv_i16_valid_dil2_nobias", [2, 9, 7, 2], (3, 3, 3), (1, 1), VALID, (2, 2),
         bias_type=None, seed=92)
    # An int32 bias: TFLM sums in 32 bits and requantises as int8 does; a 2x3 filter, RELU6.
    conv("conv_i16_int32_bias_relu6", [1, 7, 5, 5], (6, 2, 3), (1, 1), SAME, activation=A.RELU6,
         bias_type=I32, seed=93)
    # Depth multiplier 1, SAME, stride 2; depth multiplier 2, VALID, RELU_N1_TO_1.
    conv("dwconv_i16_m1_same_s2", [1, 8, 8, 4], (4, 3, 3), (2, 2), SAME, depthwise=True, seed=94)
    conv("dwconv_i16_m2_valid_relu_n1", [1, 9, 8, 3], (6, 3, 3), (1, 1), VALID,
         activation=A.RELU_N1_TO_1, depthwise=True, seed=95)
    # FULLY_CONNECTED per tensor (int64 bias), per unit with an int32 bias, and without a
    # bias through RELU.
    fc("fc_i16_per_tensor", [3, 13], 7, False, seed=101)
    fc("fc_i16_per_channel_int32_bias", [2, 3, 11], 5, True, bias_type=I32, seed=102)
    fc("fc_i16_nobias_relu", [4, 17], 6, True, A.RELU, bias_type=None, seed=103)


if __name__ == "__main__":
    main()
