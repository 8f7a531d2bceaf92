#!/usr/bin/env python3
"""Multi-subgraph models of TFLite's control-flow ops, for the per-op golden tests.

Writes `tests/run-models/control/cf_<case>.tflite` with the helpers of
`scripts/tflm_single_ops.py` (its `Tensors`, `operator` and `model_flatbuffer`; each subgraph
has its own tensors, the buffers are the model's, shared): float32 models whose subgraph 0 runs
others.
- `cf_if_branches`: IF on `s > THRESHOLD` (`s` a second input of one element) over `x`
  [1, 8]; the then branch (subgraph 1) is `x + x`, the else branch (subgraph 2) two
  FULLY_CONNECTED layers 8 -> 32 (RELU) -> 8, its intermediate four times the size of `x`.
- `cf_while_loop`: WHILE over a counter starting at `4 * s` and a vector from `x`; the cond
  (subgraph 1) is `counter < LIMIT`, the body (subgraph 2) `counter + 1` and
  `v * 0.5 + c` (`c` a constant [1, 8]): `ceil(LIMIT - 4 s)` iterations, 2 to 6 for `s` in
  [0, 1). Outputs: the vector, then the counter.
- `cf_call_once_vars`: the pattern TensorFlow's converter emits for a `tf.Variable`:
  CALL_ONCE of subgraph 1 (VAR_HANDLE "acc", ASSIGN_VARIABLE of a constant [1, 8]), then
  VAR_HANDLE "acc", READ_VARIABLE, ADD of `x`, ASSIGN_VARIABLE of the sum, the sum the
  output: the variable accumulates from one invoke to the next.
- `cf_nested`: the three nested: CALL_ONCE of subgraph 1 (VAR_HANDLE "bias",
  ASSIGN_VARIABLE of a constant [1, 8]), then WHILE over a counter starting at `4 * s` and
  `x`; the cond (subgraph 2) is `counter < NESTED_LIMIT`, the body (subgraph 3) IF on
  `counter > NESTED_BRANCH_AT` over `v` (then, subgraph 4: two FULLY_CONNECTED layers
  8 -> 16 (RELU) -> 8; else, subgraph 5: `v * 0.5`), then its own VAR_HANDLE "bias",
  READ_VARIABLE, `v_next = branch + bias`, ASSIGN_VARIABLE of `v_next - bias * 0.5`, and
  `counter + 1`: "bias" carries from one pass to the next and from one invoke to the next.
  Outputs: the vector, then the counter.
Every input is float32, so the input streams of `scripts/tflm_op_goldens.py` (its
`run_model`) can feed them. At its amplitude 1 (the one it picks for these), THRESHOLD makes
its three runs of `cf_if_branches` take then, else, then, LIMIT makes those of
`cf_while_loop` iterate 5, 3 and 4 times, and NESTED_LIMIT and NESTED_BRANCH_AT make those
of `cf_nested` pass 2, 3 and 5 times, each run's last pass through the FULLY_CONNECTED
branch and its others through the halving one. TFLM's `GetTensor` of a RESOURCE tensor (the
handles of `cf_call_once_vars`) crashes the `tflite-micro` package (numpy has no type for
it): per-op digests must skip the handles.

    python3 scripts/tflm_control_flow.py
    python3 scripts/tflm_op_goldens.py --only cf_if_branches    # and each other model

`tests/run-models` plans them (its `CONTROL_FLOW` table) and compares each output of a
subgraph-0 op with TFLM's, by tensor name, over three consecutive runs (`tests/ops.rs`).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_single_ops import (  # noqa: E402
    A, B, F32, O, ROOT, Tensors, model_flatbuffer, operator, s)

OUT = ROOT / "tests" / "run-models" / "control"
DESCRIPTION = "scripts/tflm_control_flow.py"
BOOL = np.bool_
# `cf_if_branches` takes the then branch when its input `s` is above this: the goldens'
# three runs take both branches at each of their amplitudes from 1 to 1/8.
THRESHOLD = 0.05
# `cf_while_loop` counts from 4 * s up by 1 while below this: at amplitude 1 the goldens'
# three runs iterate a different number of times each.
LIMIT = 5.75
# `cf_nested` counts from 4 * s up by 1 while below NESTED_LIMIT (the goldens' three runs at
# amplitude 1: 2, 3 and 5 passes), and its body takes the FULLY_CONNECTED branch when the
# counter is above NESTED_BRANCH_AT, the halving one otherwise (each run takes both).
NESTED_LIMIT = 5.25
NESTED_BRANCH_AT = 4.0


class Graph(Tensors):
    """One subgraph under construction: its tensors, ops, inputs and outputs; its constants'
    buffers go to the model's list, which every subgraph shares."""

    def __init__(self, net, name):
        super().__init__(DESCRIPTION)
        self.buffers = net.buffers
        self.net = net
        self.name = name
        self.ops = []
        self.inputs = []
        self.outputs = []

    def op(self, builtin, inputs, outputs, options_type=0, options=None):
        """Appends an op of `builtin` reading `inputs` and writing `outputs`."""
        code = self.net.opcode(builtin)
        self.ops.append(operator(code, inputs, outputs, options_type, options))

    def call_once(self, init):
        """Appends a CALL_ONCE of subgraph `init`."""
        o = s.CallOnceOptionsT()
        o.initSubgraphIndex = init
        self.op(B.CALL_ONCE, [], [], O.CallOnceOptions, o)

    def var_handle(self, handle, name):
        """Appends a VAR_HANDLE of the variable `name` writing the RESOURCE tensor `handle`."""
        self.op(B.VAR_HANDLE, [], [handle], O.VarHandleOptions, var_handle_options(name))

    def read_variable(self, handle, value):
        """Appends a READ_VARIABLE of `handle`'s variable into `value`."""
        self.op(B.READ_VARIABLE, [handle], [value], O.ReadVariableOptions,
                s.ReadVariableOptionsT())

    def assign_variable(self, handle, value):
        """Appends an ASSIGN_VARIABLE of `value` to `handle`'s variable."""
        self.op(B.ASSIGN_VARIABLE, [handle, value], [], O.AssignVariableOptions,
                s.AssignVariableOptionsT())

    def resource(self, name):
        """Adds a scalar RESOURCE tensor (a variable's handle); returns its index."""
        t = s.TensorT()
        t.name = name
        t.shape = []
        t.type = s.TensorType.RESOURCE
        t.buffer = 0
        self.tensors.append(t)
        return len(self.tensors) - 1

    def subgraph(self):
        """The subgraph's flatbuffer object."""
        g = s.SubGraphT()
        g.tensors = self.tensors
        g.inputs = self.inputs
        g.outputs = self.outputs
        g.operators = self.ops
        g.name = self.name
        return g


class Net:
    """A model of several subgraphs under construction (subgraph 0 the one that runs)."""

    def __init__(self):
        self.buffers = [s.BufferT()]
        self.builtins = []
        self.graphs = []

    def graph(self, name):
        """Adds a subgraph; its index is the number of subgraphs before it."""
        g = Graph(self, name)
        self.graphs.append(g)
        return g

    def opcode(self, builtin):
        """The index of `builtin`'s operator code, added at its first use."""
        if builtin not in self.builtins:
            self.builtins.append(builtin)
        return self.builtins.index(builtin)

    def bytes(self):
        """The model's flatbuffer (every builtin at version 1)."""
        subgraphs = [g.subgraph() for g in self.graphs]
        return model_flatbuffer(self.builtins, subgraphs, self.buffers, DESCRIPTION)

    def write(self, stem):
        """Writes `control/<stem>.tflite` and prints its path."""
        path = OUT / f"{stem}.tflite"
        path.write_bytes(self.bytes())
        print(path.relative_to(ROOT))


def fc_options(activation=A.NONE):
    """FULLY_CONNECTED's options (default weights format, `activation` fused)."""
    o = s.FullyConnectedOptionsT()
    o.fusedActivationFunction = activation
    return o


def add_options():
    """ADD's options (no fused activation)."""
    return s.AddOptionsT()


def mul_options():
    """MUL's options (no fused activation)."""
    return s.MulOptionsT()


def constant(g, name, shape, r, lo=-1.0, hi=1.0):
    """A float32 constant of `shape`, uniform in [lo, hi) from the generator `r`."""
    return g.tensor(name, shape, F32, data=r.uniform(lo, hi, shape).astype(F32))


def two_layers(net, name, hidden, r):
    """A subgraph `name` of two FULLY_CONNECTED layers, [1, 8] -> `hidden` (RELU) -> [1, 8],
    weights and biases drawn from `r`."""
    g = net.graph(name)
    a = g.tensor("a", [1, 8], F32)
    w1 = constant(g, "w1", [hidden, 8], r)
    b1 = constant(g, "b1", [hidden], r, -0.25, 0.25)
    h = g.tensor("h", [1, hidden], F32)
    w2 = constant(g, "w2", [8, hidden], r, -0.5, 0.5)
    b2 = constant(g, "b2", [8], r, -0.25, 0.25)
    out = g.tensor("out", [1, 8], F32)
    g.inputs, g.outputs = [a], [out]
    g.op(B.FULLY_CONNECTED, [a, w1, b1], [h], O.FullyConnectedOptions, fc_options(A.RELU))
    g.op(B.FULLY_CONNECTED, [h, w2, b2], [out], O.FullyConnectedOptions, fc_options())
    return g


def counter_below(net, limit):
    """A WHILE condition subgraph over (counter [1], v [1, 8]): `counter < limit`."""
    cond = net.graph("cond")
    c = cond.tensor("counter", [1], F32)
    cv = cond.tensor("v", [1, 8], F32)
    bound = cond.tensor("limit", [1], F32, data=[limit])
    more = cond.tensor("more", [1], BOOL)
    cond.inputs, cond.outputs = [c, cv], [more]
    cond.op(B.LESS, [c, bound], [more])
    return cond


def counted_while(net, cond, body, init=None):
    """Subgraph 0 over inputs `x` [1, 8] and `s` [1]: CALL_ONCE of subgraph `init` when given,
    then WHILE (`cond`, `body` the subgraph indices) over (4 s, x); outputs the vector, then
    the counter."""
    main = net.graph("main")
    x = main.tensor("x", [1, 8], F32)
    sv = main.tensor("s", [1], F32)
    four = main.tensor("four", [1], F32, data=[4.0])
    start = main.tensor("start", [1], F32)
    v = main.tensor("v", [1, 8], F32)
    count = main.tensor("count", [1], F32)
    main.inputs, main.outputs = [x, sv], [v, count]
    if init is not None:
        main.call_once(init)
    main.op(B.MUL, [sv, four], [start], O.MulOptions, mul_options())
    o = s.WhileOptionsT()
    o.condSubgraphIndex, o.bodySubgraphIndex = cond, body
    main.op(B.WHILE, [start, x], [count, v], O.WhileOptions, o)
    return main


def variable_init(net, name, values):
    """A CALL_ONCE init subgraph: ASSIGN_VARIABLE of the constant `values` [1, 8] to the
    variable `name`."""
    init = net.graph("init")
    handle = init.resource(f"{name}_handle")
    first = init.tensor(f"{name}_init", [1, 8], F32, data=values)
    init.var_handle(handle, name)
    init.assign_variable(handle, first)
    return init


def if_branches():
    """IF(s > THRESHOLD, x): then `x + x`, else FC 8 -> 32 (RELU) -> FC 32 -> 8."""
    net = Net()
    r = np.random.default_rng(91)
    main = net.graph("main")
    x = main.tensor("x", [1, 8], F32)
    sv = main.tensor("s", [1], F32)
    threshold = main.tensor("threshold", [1], F32, data=[THRESHOLD])
    cond = main.tensor("cond", [1], BOOL)
    y = main.tensor("y", [1, 8], F32)
    main.inputs, main.outputs = [x, sv], [y]
    main.op(B.GREATER, [sv, threshold], [cond])
    o = s.IfOptionsT()
    o.thenSubgraphIndex, o.elseSubgraphIndex = 1, 2
    main.op(B.IF, [cond, x], [y], O.IfOptions, o)

    then = net.graph("then")
    a = then.tensor("a", [1, 8], F32)
    twice = then.tensor("twice", [1, 8], F32)
    then.inputs, then.outputs = [a], [twice]
    then.op(B.ADD, [a, a], [twice], O.AddOptions, add_options())

    two_layers(net, "else", 32, r)
    net.write("cf_if_branches")


def while_loop():
    """WHILE(counter < LIMIT) over (4 s, x): counter + 1, v * 0.5 + c."""
    net = Net()
    r = np.random.default_rng(92)
    counted_while(net, 1, 2)
    counter_below(net, LIMIT)

    body = net.graph("body")
    c = body.tensor("counter", [1], F32)
    bv = body.tensor("v", [1, 8], F32)
    one = body.tensor("one", [1], F32, data=[1.0])
    half = body.tensor("half", [1], F32, data=[0.5])
    shift = constant(body, "shift", [1, 8], r)
    c2 = body.tensor("counter_next", [1], F32)
    halved = body.tensor("halved", [1, 8], F32)
    v2 = body.tensor("v_next", [1, 8], F32)
    body.inputs, body.outputs = [c, bv], [c2, v2]
    body.op(B.ADD, [c, one], [c2], O.AddOptions, add_options())
    body.op(B.MUL, [bv, half], [halved], O.MulOptions, mul_options())
    body.op(B.ADD, [halved, shift], [v2], O.AddOptions, add_options())
    net.write("cf_while_loop")


def var_handle_options(name):
    """VAR_HANDLE's options: the variable `name` in the container "" (present, empty)."""
    o = s.VarHandleOptionsT()
    o.container, o.sharedName = "", name
    return o


def call_once_vars():
    """CALL_ONCE(init) then acc = READ_VARIABLE("acc") + x, ASSIGN_VARIABLE("acc", acc)."""
    net = Net()
    main = net.graph("main")
    x = main.tensor("x", [1, 8], F32)
    handle = main.resource("acc_handle")
    acc = main.tensor("acc", [1, 8], F32)
    new = main.tensor("acc_next", [1, 8], F32)
    main.inputs, main.outputs = [x], [new]
    main.call_once(1)
    main.var_handle(handle, "acc")
    main.read_variable(handle, acc)
    main.op(B.ADD, [acc, x], [new], O.AddOptions, add_options())
    main.assign_variable(handle, new)

    # Distinct, non-zero, exactly representable.
    variable_init(net, "acc", [[0.5, -1.0, 1.5, -2.0, 2.5, -3.0, 3.5, -4.0]])
    net.write("cf_call_once_vars")


def nested():
    """CALL_ONCE(init: "bias" = constant), then WHILE(counter < NESTED_LIMIT) over (4 s, x)
    whose body runs IF(counter > NESTED_BRANCH_AT, v) (FC 8 -> 16 (RELU) -> 8, or v * 0.5),
    adds READ_VARIABLE("bias") to it and assigns the branch's output + bias * 0.5 to "bias"."""
    net = Net()
    r = np.random.default_rng(94)
    counted_while(net, 2, 3, init=1)
    # Distinct, non-zero, exactly representable.
    variable_init(net, "bias", [[0.125, -0.25, 0.375, -0.5, 0.625, -0.75, 0.875, -1.0]])
    counter_below(net, NESTED_LIMIT)

    body = net.graph("body")
    c = body.tensor("counter", [1], F32)
    bv = body.tensor("v", [1, 8], F32)
    one = body.tensor("one", [1], F32, data=[1.0])
    at = body.tensor("branch_at", [1], F32, data=[NESTED_BRANCH_AT])
    half = body.tensor("half", [1], F32, data=[0.5])
    handle = body.resource("bias_handle")
    c2 = body.tensor("counter_next", [1], F32)
    big = body.tensor("big", [1], BOOL)
    branched = body.tensor("branched", [1, 8], F32)
    bias = body.tensor("bias", [1, 8], F32)
    v2 = body.tensor("v_next", [1, 8], F32)
    decayed = body.tensor("bias_half", [1, 8], F32)
    bias2 = body.tensor("bias_next", [1, 8], F32)
    body.inputs, body.outputs = [c, bv], [c2, v2]
    body.op(B.GREATER, [c, at], [big])
    o = s.IfOptionsT()
    o.thenSubgraphIndex, o.elseSubgraphIndex = 4, 5
    body.op(B.IF, [big, bv], [branched], O.IfOptions, o)
    body.var_handle(handle, "bias")
    body.read_variable(handle, bias)
    body.op(B.ADD, [branched, bias], [v2], O.AddOptions, add_options())
    body.op(B.MUL, [bias, half], [decayed], O.MulOptions, mul_options())
    body.op(B.SUB, [v2, decayed], [bias2], O.SubOptions, s.SubOptionsT())
    body.assign_variable(handle, bias2)
    body.op(B.ADD, [c, one], [c2], O.AddOptions, add_options())

    two_layers(net, "then", 16, r)

    other = net.graph("else")
    a = other.tensor("a", [1, 8], F32)
    half = other.tensor("half", [1], F32, data=[0.5])
    halved = other.tensor("halved", [1, 8], F32)
    other.inputs, other.outputs = [a], [halved]
    other.op(B.MUL, [a, half], [halved], O.MulOptions, mul_options())
    net.write("cf_nested")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    if_branches()
    while_loop()
    call_once_vars()
    nested()


if __name__ == "__main__":
    main()
