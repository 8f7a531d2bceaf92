#!/usr/bin/env python3
"""One-op models over kernel edge cases, for the per-op golden tests.

Writes `tests/run-models/single/op_<case>.tflite`: each model is one operator with its
inputs as the model's inputs and its parameters (axes) as constants, built with the
`tflite-micro` package's flatbuffer schema (`pip install tflite-micro`). Then
`scripts/tflm_op_goldens.py` runs TFLM on them as on the bundled models, and
`tests/run-models` plans them, runs them and compares with those goldens; CI needs neither
script, only the stored files.

    python3 scripts/tflm_single_ops.py
"""

from pathlib import Path

import flatbuffers
import numpy as np
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "run-models" / "single"

TYPES = {
    np.int8: s.TensorType.INT8,
    np.int16: s.TensorType.INT16,
    np.int32: s.TensorType.INT32,
    np.int64: s.TensorType.INT64,
    np.float32: s.TensorType.FLOAT32,
    np.bool_: s.TensorType.BOOL,
}
# Short names the batch scripts share.
F32 = np.float32
I8 = np.int8
I32 = np.int32
B = s.BuiltinOperator
O = s.BuiltinOptions
A = s.ActivationFunctionType


class Tensors:
    """The tensors and buffers of a one-subgraph model under construction (buffer 0 the empty
    one of every non-constant tensor), and its description."""

    def __init__(self, description):
        self.buffers = [s.BufferT()]
        self.tensors = []
        self.description = description

    def tensor(self, name, shape, dtype, quant=None, data=None):
        """Adds a tensor (a constant when `data` is given); returns its index."""
        t = s.TensorT()
        t.name = name
        t.shape = list(shape)
        t.type = TYPES[dtype]
        t.buffer = 0
        if data is not None:
            b = s.BufferT()
            b.data = list(np.asarray(data, dtype=dtype).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None:
            q = s.QuantizationParametersT()
            q.scale = [float(quant[0])]
            q.zeroPoint = [int(quant[1])]
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1


class Model(Tensors):
    """A one-subgraph model of one op under construction."""

    def __init__(self):
        super().__init__("scripts/tflm_single_ops.py")

    def write(self, name, builtin, inputs, outputs, options_type=0, options=None):
        """Writes the model of one `builtin` op reading `inputs` and writing `outputs`."""
        save(f"op_{name}", model_bytes(self.tensors, self.buffers, builtin, inputs, outputs,
                                       options_type, options, self.description))


def model_bytes(tensors, buffers, builtin, inputs, outputs, options_type=0, options=None,
                description="scripts/tflm_single_ops.py", graph_inputs=None):
    """The flatbuffer of a one-subgraph model of one `builtin` op over `tensors` and
    `buffers`, reading `inputs` and writing `outputs`; the graph's inputs are `graph_inputs`,
    by default the op's inputs that are present (not -1) and not constants."""
    op = operator(0, inputs, outputs, options_type, options)
    if graph_inputs is None:
        graph_inputs = [i for i in inputs if i >= 0 and tensors[i].buffer == 0]
    return pack(tensors, buffers, [builtin], [op], graph_inputs, outputs, description)


def operator(opcode_index, inputs, outputs, options_type=0, options=None):
    """An op of operator code `opcode_index` reading `inputs` and writing `outputs`."""
    op = s.OperatorT()
    op.opcodeIndex = opcode_index
    op.inputs = inputs
    op.outputs = outputs
    op.builtinOptionsType = options_type
    op.builtinOptions = options
    return op


def pack(tensors, buffers, builtins, ops, inputs, outputs, description):
    """The flatbuffer of a one-subgraph model: `ops` (their opcode indices into `builtins`,
    each builtin at version 1) over `tensors` and `buffers`, the graph reading `inputs` and
    writing `outputs`."""
    g = s.SubGraphT()
    g.tensors = tensors
    g.inputs = inputs
    g.outputs = outputs
    g.operators = ops
    g.name = "main"
    return model_flatbuffer(builtins, [g], buffers, description)


def model_flatbuffer(builtins, subgraphs, buffers, description):
    """The flatbuffer of a model of `subgraphs` (subgraph 0 the one that runs; their ops'
    opcode indices into `builtins`, each builtin at version 1) over the shared `buffers`."""
    codes = []
    for builtin in builtins:
        code = s.OperatorCodeT()
        code.builtinCode = builtin
        code.deprecatedBuiltinCode = min(builtin, 127)
        code.version = 1
        codes.append(code)
    m = s.ModelT()
    m.version = 3
    m.operatorCodes = codes
    m.subgraphs = subgraphs
    m.buffers = buffers
    m.description = description
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def conv_options(depthwise, multiplier, padding, stride, dilation, activation):
    """`(builtin, options type, options)` of a CONV_2D, or of a DEPTHWISE_CONV_2D with depth
    multiplier `multiplier`."""
    if depthwise:
        o = s.DepthwiseConv2DOptionsT()
        o.depthMultiplier = multiplier
        builtin, otype = B.DEPTHWISE_CONV_2D, O.DepthwiseConv2DOptions
    else:
        o = s.Conv2DOptionsT()
        builtin, otype = B.CONV_2D, O.Conv2DOptions
    o.padding = padding
    o.strideH, o.strideW = stride
    o.dilationHFactor, o.dilationWFactor = dilation
    o.fusedActivationFunction = activation
    return builtin, otype, o


def save(stem, data):
    """Writes `single/<stem>.tflite` and prints its path."""
    path = OUT / f"{stem}.tflite"
    path.write_bytes(data)
    print(path.relative_to(ROOT))


def mean(name, shape, axes, keep, qin, qout):
    m = Model()
    x = m.tensor("x", shape, np.int8, qin)
    a = m.tensor("axes", [len(axes)], np.int32, data=axes)
    rank = len(shape)
    reduced = {(d + rank) % rank for d in axes}
    out = [1 if d in reduced else n for d, n in enumerate(shape) if keep or d not in reduced]
    y = m.tensor("y", out, np.int8, qout)
    o = s.ReducerOptionsT()
    o.keepDims = keep
    m.write(name, s.BuiltinOperator.MEAN, [x, a], [y], s.BuiltinOptions.ReducerOptions, o)


def quantize(name, shape, qout):
    m = Model()
    x = m.tensor("x", shape, np.float32)
    y = m.tensor("y", shape, np.int8, qout)
    m.write(name, s.BuiltinOperator.QUANTIZE, [x], [y])


def concatenation(name, shapes, axis, q):
    m = Model()
    xs = [m.tensor(f"x{i}", sh, np.int8, q) for i, sh in enumerate(shapes)]
    rank = len(shapes[0])
    a = (axis + rank) % rank
    out = list(shapes[0])
    out[a] = sum(sh[a] for sh in shapes)
    y = m.tensor("y", out, np.int8, q)
    o = s.ConcatenationOptionsT()
    o.axis = axis
    m.write(
        name,
        s.BuiltinOperator.CONCATENATION,
        xs,
        [y],
        s.BuiltinOptions.ConcatenationOptions,
        o,
    )


def unary(name, builtin, shape, dtypes, qin, qout):
    """One op of one input and one output of the same shape (`dtypes`: input, output)."""
    m = Model()
    x = m.tensor("x", shape, dtypes[0], qin)
    y = m.tensor("y", shape, dtypes[1], qout)
    m.write(name, builtin, [x], [y])


def binary(name, builtin, shapes, qs, options_type=0, options=None):
    """One op of two int8 inputs (shapes[0], shapes[1], which broadcast) and one int8 output
    (quantisations `qs`: input 0, input 1, output)."""
    m = Model()
    a = m.tensor("a", shapes[0], np.int8, qs[0])
    b = m.tensor("b", shapes[1], np.int8, qs[1])
    out = list(np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])))
    y = m.tensor("y", out, np.int8, qs[2])
    m.write(name, builtin, [a, b], [y], options_type, options)


def sub(name, shapes, qs, activation):
    o = s.SubOptionsT()
    o.fusedActivationFunction = activation
    binary(name, s.BuiltinOperator.SUB, shapes, qs, s.BuiltinOptions.SubOptions, o)


def strided_slice(name, shape, begin, end, strides, masks, q):
    """STRIDED_SLICE of an int8 input; `masks` = (begin, end, shrink_axis); the output shape is
    numpy's slice of the input with the same bounds."""
    m = Model()
    x = m.tensor("x", shape, np.int8, q)
    rank = len(shape)
    b = m.tensor("begin", [rank], np.int32, data=begin)
    e = m.tensor("end", [rank], np.int32, data=end)
    st = m.tensor("strides", [rank], np.int32, data=strides)
    index = []
    for d in range(rank):
        if masks[2] & (1 << d):
            index.append(begin[d])
            continue
        lo = None if masks[0] & (1 << d) else begin[d]
        hi = None if masks[1] & (1 << d) else end[d]
        index.append(slice(lo, hi, strides[d]))
    out = np.zeros(shape)[tuple(index)].shape
    y = m.tensor("y", list(out), np.int8, q)
    o = s.StridedSliceOptionsT()
    o.beginMask, o.endMask, o.shrinkAxisMask = masks
    m.write(
        name, s.BuiltinOperator.STRIDED_SLICE, [x, b, e, st], [y],
        s.BuiltinOptions.StridedSliceOptions, o,
    )


def resize_nearest(name, shape, size, q, align_corners=False, half_pixel_centers=False):
    """RESIZE_NEAREST_NEIGHBOR of an int8 NHWC input to `size`, with the options given."""
    m = Model()
    x = m.tensor("x", shape, np.int8, q)
    sz = m.tensor("size", [2], np.int32, data=size)
    y = m.tensor("y", [shape[0], size[0], size[1], shape[3]], np.int8, q)
    o = s.ResizeNearestNeighborOptionsT()
    o.alignCorners, o.halfPixelCenters = align_corners, half_pixel_centers
    m.write(
        name, s.BuiltinOperator.RESIZE_NEAREST_NEIGHBOR, [x, sz], [y],
        s.BuiltinOptions.ResizeNearestNeighborOptions, o,
    )


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # MEAN over 7x7 with other scales: 1/49 folded into the multiplier (TFLM -8 where the
    # float mean gives -9 for a sum of 23 above the zero point).
    mean("mean_7x7_rescaled", [1, 7, 7, 8], [1, 2], True, (0.11841, -128), (0.0234, -11))
    # MEAN over a negative axis of odd size, dropping it, zero points at both ends.
    mean("mean_last_axis_dropped", [2, 5, 3], [-1], False, (0.05, 127), (0.03, 100))
    # MEAN with the input's quantisation (TFLM still rescales through the multiplier).
    mean("mean_same_quant", [1, 6, 5, 4], [1, 2], True, (0.04854253, 6), (0.04854253, 6))
    # QUANTIZE float to int8, the quotient in f32 (half-way cases round away from zero).
    quantize("quantize_f32", [1, 257], (0.007839307, 0))
    quantize("quantize_offset", [3, 7], (0.0031, -77))
    # CONCATENATION along a middle axis, and a negative one, of odd sizes.
    concatenation("concat_middle", [[1, 3, 2, 2], [1, 3, 1, 2], [1, 3, 3, 2]], 2, (0.5, 3))
    concatenation("concat_last_negative", [[2, 3], [2, 5]], -1, (0.1, -128))
    i8 = (np.int8, np.int8)
    B = s.BuiltinOperator
    # QUANTIZE int8 to int8: requantisation through a Q31 multiplier.
    unary("quantize_i8_requant", B.QUANTIZE, [4, 9], i8, (0.02, 10), (0.05, -3))
    # RELU requantises (input and output scales differ); RELU6 clamps in the input's.
    unary("relu_rescaled", B.RELU, [2, 5, 7], i8, (0.05, -10), (0.03, -128))
    unary("relu6", B.RELU6, [3, 11], i8, (0.04, -30), (0.04, -30))
    # LOGISTIC and TANH, int8, their fixed output quantisation; inputs past the radius too.
    unary("logistic", B.LOGISTIC, [1, 300], i8, (0.06, 5), (1 / 256, -128))
    unary("logistic_fine", B.LOGISTIC, [5, 61], i8, (0.011, -128), (1 / 256, -128))
    unary("tanh", B.TANH, [1, 300], i8, (0.05, 3), (1 / 128, 0))
    unary("tanh_coarse", B.TANH, [7, 13], i8, (0.3, 127), (1 / 128, 0))
    # LOGISTIC and TANH, int16: TFLM's table, a power-of-two input scale and another.
    i16 = (np.int16, np.int16)
    unary("logistic_i16", B.LOGISTIC, [2, 300], i16, (0.0003, 0), (1 / 32768, 0))
    unary("logistic_i16_pot", B.LOGISTIC, [3, 101], i16, (1 / 4096, 0), (1 / 32768, 0))
    unary("tanh_i16", B.TANH, [2, 300], i16, (0.00041, 0), (1 / 32768, 0))
    unary("tanh_i16_pot", B.TANH, [3, 101], i16, (1 / 4096, 0), (1 / 32768, 0))
    # Scales the table was not measured on.
    unary("logistic_i16_fine", B.LOGISTIC, [1, 513], i16, (0.00007, 0), (1 / 32768, 0))
    unary("tanh_i16_coarse", B.TANH, [1, 513], i16, (0.0021, 0), (1 / 32768, 0))
    # HARD_SWISH with the relu-ish multiplier shifting left (coarse input) and right (fine).
    unary("hard_swish", B.HARD_SWISH, [2, 150], i8, (0.05, -20), (0.04, -50))
    unary("hard_swish_fine", B.HARD_SWISH, [3, 7, 5], i8, (0.005, 17), (0.003, -128))
    # SUB broadcasting the second operand, with RELU6; and of the same shape.
    sub("sub_broadcast_relu6", [[2, 3, 4], [1, 4]], [(0.1, 3), (0.05, -7), (0.06, -100)], 3)
    # MAXIMUM and MINIMUM, raw comparisons, one operand broadcasting.
    q = (0.05, -9)
    binary("maximum_broadcast", B.MAXIMUM, [[2, 3, 5], [3, 1]], [q, q, q])
    binary("minimum_broadcast", B.MINIMUM, [[4, 1], [1, 7]], [q, q, q])
    # STRIDED_SLICE: negative begin and stride, masks, shrinking, odd sizes.
    strided_slice("strided_slice_step2", [1, 7, 9, 3], [0, 1, -8, 0], [1, 6, 9, 3], [1, 2, 3, 1], (0, 0, 0), q)
    strided_slice("strided_slice_reverse", [5, 6], [-1, 4], [0, 0], [-1, -2], (0, 2, 0), q)
    strided_slice("strided_slice_masks_shrink", [2, 5, 4], [1, 1, 0], [2, -1, 3], [1, 1, 1], (4, 0, 1), q)
    # RESIZE_NEAREST_NEIGHBOR up by 2, up by a non-integer factor, and down.
    resize_nearest("resize_nearest_x2", [1, 5, 3, 4], [10, 6], q)
    resize_nearest("resize_nearest_odd", [2, 3, 4, 2], [7, 5], q)
    resize_nearest("resize_nearest_down", [1, 9, 8, 3], [4, 3], q)
    # ... with align_corners, half_pixel_centers, and both, at non-integer scales up and down.
    for tag, ac, hp in [("align", True, False), ("half", False, True), ("align_half", True, True)]:
        resize_nearest(f"resize_nearest_{tag}_up", [2, 4, 5, 3], [7, 9], q, ac, hp)
        resize_nearest(f"resize_nearest_{tag}_down", [1, 11, 9, 2], [4, 5], q, ac, hp)
    sub("sub_same_shape", [[3, 5, 7], [3, 5, 7]], [(0.02, -128), (0.03, 127), (0.05, 0)], 0)


if __name__ == "__main__":
    main()
