#!/usr/bin/env python3
"""One-op models and text goldens of TFLM's `TFLite_Detection_PostProcess` (the SSD
decoder: box decoding against anchors, then fast or regular multi-class NMS).

Each case is one custom op (builtin code 32, custom code `TFLite_Detection_PostProcess`)
with its options as a flexbuffer map: ints as ints, floats as floats, `use_regular_nms` as
a bool; some cases leave `detections_per_class` and `use_regular_nms` out (TFLM's
defaults, 100 and false). The box encodings and the class predictions are the model's
inputs, the anchors a constant. The script runs the model with the `tflite-micro`
package's interpreter on several random inputs and writes

* `tests/run-models/single_signal/op_dpp_<case>.tflite`, the model, and
* `planner-kernels/src/reference/detection/goldens/<case>.txt`, the golden the Rust tests
  in `planner-kernels/src/reference/detection/tests.rs` read.

Golden format (one item a line, fields separated by spaces):

    option <name> <value>       (all eleven options, as the kernel reads them: ints,
                                 floats, use_regular_nms as 0/1)
    absent <name>               (a key the model's map leaves out; its option line holds
                                 TFLM's default)
    shape boxes|classes|anchors <dims...>
    entries <n>                 (entries of the outputs: classes and scores hold n floats,
                                 boxes 4n)
    anchors <values...>
    run <index>
    boxes <values...>           (the box encodings, flattened)
    classes <values...>         (the class predictions, flattened)
    then either
    error                       (TFLM's invoke failed)
    or
    out_boxes <values...>       (`-` for a float TFLM left as it was)
    out_classes <values...>
    out_scores <values...>
    out_num <value>

Floats are written in the shortest form that reads back as the same float32 (`nan` is the
quiet NaN 0x7fc00000, the only NaN the inputs hold). The fast NMS writes only its
detections (and, with more than one class a box, at TFLM's gap-leaving indices, see the
kernel's docs); the entries it does not write keep what the tensor held, which the script
checks (from the second run on, they equal the previous run's values) and writes as `-`.

It also checks that TFLM refuses uint8 and int8 models (its kernel runs float32 only), and
measures TFLM's arena head for one model: the sum of the activations (each rounded up to
16 bytes) and of the scratch buffers the kernel requests.

    python3 scripts/tflm_detection_postprocess.py
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflm_custom_ops as custom  # noqa: E402
from tflm_single_ops import s  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "run-models" / "single_signal"
GOLDENS = ROOT / "planner-kernels" / "src" / "reference" / "detection" / "goldens"
CODE = "TFLite_Detection_PostProcess"
ARENA = 4 * 1024 * 1024
HEAD = re.compile(r"Arena allocation head (\d+) bytes")
RNG = np.random.default_rng(20240917)
INT_KEYS = ["max_detections", "max_classes_per_detection", "detections_per_class", "num_classes"]
FLOAT_KEYS = ["nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale", "w_scale"]
ORDER = ["max_detections", "max_classes_per_detection", "detections_per_class", "use_regular_nms",
         "nms_score_threshold", "nms_iou_threshold", "num_classes", "y_scale", "x_scale",
         "h_scale", "w_scale"]
DEFAULTS = {"detections_per_class": 100, "use_regular_nms": False}


def model(options, n, stride, row, anchors, entries, quantized=None, quant=None):
    """The flatbuffer of the one-op model: `options` the flexbuffer map's values (absent
    keys left out), `n` boxes of `stride` encodings and `row` class scores, the constant
    `anchors`, outputs of `entries` entries; the two inputs float32, or of the
    `quantized` TensorType with `quant` (scale, zero point)."""
    t = custom.Graph("scripts/tflm_detection_postprocess.py")
    dtype = np.float32 if quantized is None else np.int8
    boxes = t.tensor("box_encodings", [1, n, stride], dtype, quant)
    classes = t.tensor("class_predictions", [1, n, row], dtype, quant)
    if quantized is not None:
        t.tensors[boxes].type = quantized
        t.tensors[classes].type = quantized
    anchor = t.tensor("anchors", [n, 4], np.float32, data=anchors)
    outs = [t.tensor("detection_boxes", [1, entries, 4], np.float32),
            t.tensor("detection_classes", [1, entries], np.float32),
            t.tensor("detection_scores", [1, entries], np.float32),
            t.tensor("num_detections", [1], np.float32)]
    return t.one_op(CODE, [boxes, classes, anchor], outs, options)


def fmt(values):
    """Floats in the shortest form that reads back as the same float32."""
    out = []
    for v in np.asarray(values, dtype=np.float32).reshape(-1):
        if np.isnan(v):
            assert v.view(np.uint32) == 0x7FC00000, hex(v.view(np.uint32))
            out.append("nan")
        else:
            out.append(str(np.float32(v)))
    return " ".join(out)


def written_entries(options, entries, num):
    """Which output entries TFLM writes: all of them in the regular NMS; in the fast one,
    entry `k·j + c` for the `j`-th of `num` detections (`k` classes a box, `c = j % k`)."""
    w = np.zeros(entries, dtype=bool)
    if options["use_regular_nms"]:
        w[:] = True
        return w
    k = min(options["max_classes_per_detection"], options["num_classes"])
    for j in range(num):
        w[k * j + j % k] = True
    return w


def grid(values, step):
    """`values` rounded to multiples of `step` (short goldens, exact ties)."""
    return (np.round(np.asarray(values) / step) * step).astype(np.float32)


def make_anchors(n, dup, step=1 / 256):
    """`n` anchors `[y, x, h, w]` over the unit square, every `dup`-th a copy of the one
    before (overlaps and identical boxes)."""
    a = np.empty((n, 4), dtype=np.float32)
    a[:, 0:2] = grid(RNG.uniform(0.1, 0.9, size=(n, 2)), step)
    a[:, 2:4] = grid(RNG.uniform(0.1, 0.4, size=(n, 2)), step)
    if dup:
        for i in range(dup, n, dup):
            a[i] = a[i - 1]
    return a


def random_inputs(n, stride, row, score_step, enc_step, nan=0):
    """Box encodings (centre offsets and log sizes around 0) and class scores in [0, 1)
    (on a grid of `score_step` for ties when given), `nan` of the scores NaN."""
    enc = RNG.normal(0.0, 1.0, size=(1, n, stride))
    enc = grid(enc, enc_step) if enc_step else enc.astype(np.float32)
    scores = RNG.uniform(0.0, 1.0, size=(1, n, row)) ** 1.5
    scores = grid(scores, score_step) if score_step else scores.astype(np.float32)
    if nan:
        flat = scores.reshape(-1)
        flat[RNG.choice(flat.size, nan, replace=False)] = np.nan
    return enc.astype(np.float32), scores.astype(np.float32)


def run_case(case, options, n, stride, background, runs, entries=None, absent=(), dup=3,
             score_step=None, enc_step=None, nan=0, anchors=None, expect_error=False,
             copies=False):
    """Builds the model, runs it `runs` times on random inputs, writes the model and the
    golden. `copies`: each box of a copied anchor also copies the encodings and the scores
    of the box before it (identical boxes: an IoU of exactly 1, tied scores)."""
    row = options["num_classes"] + (1 if background else 0)
    entries = entries or options["max_detections"]
    if anchors is None:
        anchors = make_anchors(n, dup)
    mapped = {}
    for key in ORDER:
        if key in absent:
            assert options[key] == DEFAULTS[key], key
            continue
        v = options[key]
        mapped[key] = int(v) if key in INT_KEYS else (bool(v) if key == "use_regular_nms"
                                                       else float(np.float32(v)))
    data = model(mapped, n, stride, row, anchors, entries)
    interp = runtime.Interpreter.from_bytes(data, arena_size=ARENA)
    lines = []
    for key in ORDER:
        v = options[key]
        text = fmt([v]) if key in FLOAT_KEYS else str(int(v))
        lines.append(f"option {key} {text}")
    lines += [f"absent {key}" for key in absent]
    lines += [f"shape boxes 1 {n} {stride}", f"shape classes 1 {n} {row}", f"shape anchors {n} 4",
              f"entries {entries}", "anchors " + fmt(anchors)]
    previous = None
    results = set()
    nums = []
    for r in range(runs):
        enc, scores = random_inputs(n, stride, row, score_step, enc_step, nan)
        if copies:
            for i in range(dup, n, dup):
                enc[0, i] = enc[0, i - 1]
                scores[0, i] = scores[0, i - 1]
        interp.set_input(enc, 0)
        interp.set_input(scores, 1)
        lines += [f"run {r}", "boxes " + fmt(enc), "classes " + fmt(scores)]
        try:
            interp.invoke()
        except RuntimeError:
            assert expect_error, case
            lines.append("error")
            continue
        assert not expect_error, case
        outs = [np.array(interp.get_output(i), dtype=np.float32).reshape(-1).copy()
                for i in range(4)]
        num = int(outs[3][0])
        nums.append(num)
        w = written_entries(options, entries, num)
        if previous is not None:
            for o, p, per in zip(outs[:3], previous[:3], (4, 1, 1)):
                kept = ~np.repeat(w, per)
                assert np.array_equal(o[kept].view(np.uint32), p[kept].view(np.uint32)), case
        previous = outs
        results.add(b"".join(o.tobytes() for o in outs))
        for name, o, per in zip(("out_boxes", "out_classes", "out_scores"), outs[:3], (4, 1, 1)):
            mask = np.repeat(w, per)
            lines.append(" ".join([name] + [fmt([v]) if k else "-" for v, k in zip(o, mask)]))
        lines.append("out_num " + fmt(outs[3]))
    if not expect_error:
        # The outputs follow the inputs: they differ from run to run, with detections.
        assert len(results) == runs, case
        assert max(nums) > 0, case
    (MODELS / f"op_dpp_{case}.tflite").write_bytes(data)
    text = "\n".join(lines) + "\n"
    assert len(text) < 40_000, (case, len(text))
    (GOLDENS / f"{case}.txt").write_text(text)
    print(f"{case}: {len(text)} bytes, detections per run {nums}")
    return data


def options_of(max_detections, num_classes, regular, threshold, iou, classes_per_detection=1,
               detections_per_class=100, scales=(10.0, 10.0, 5.0, 5.0)):
    return {"max_detections": max_detections, "max_classes_per_detection": classes_per_detection,
            "detections_per_class": detections_per_class, "use_regular_nms": regular,
            "nms_score_threshold": threshold, "nms_iou_threshold": iou,
            "num_classes": num_classes, "y_scale": scales[0], "x_scale": scales[1],
            "h_scale": scales[2], "w_scale": scales[3]}


def head_child(path):
    """Runs in a child process: TFLM prints its arena figures from C++."""
    interp = runtime.Interpreter.from_file(path, arena_size=ARENA)
    sys.stdout.flush()
    interp.print_allocations()
    sys.stdout.flush()


def measure_head(path, n, stride, row, entries):
    """TFLM's arena head for the model at `path`, and the kernel's scratch: the head less
    the activations (inputs and outputs, each rounded up to 16 bytes)."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--head", str(path)],
                          capture_output=True, text=True, check=False)
    m = HEAD.search(done.stdout + done.stderr)
    assert done.returncode == 0 and m, done.stdout + done.stderr
    head = int(m.group(1))
    align = lambda b: (b + 15) // 16 * 16  # noqa: E731
    acts = sum(align(4 * e) for e in (n * stride, n * row, 4 * entries, entries, entries, 1))
    return head, head - acts


def tflm_scratch_rule(n, row, classes, d):
    """The scratch bytes TFLM's kernel requests (each buffer rounded up to 16 bytes)."""
    align = lambda b: (b + 15) // 16 * 16  # noqa: E731
    sizes = [n, 16 * n, 4 * n * row, 4 * n, 4 * n, 4 * d * n, 4 * d * n, 4 * n, 4 * d * n,
             4 * max(classes, d) * n, 4 * min(n, d) * n]
    return sum(align(x) for x in sizes)


def check_quantized_refused():
    """TFLM's kernel decodes float32 box encodings only: a uint8 or an int8 model fails to
    run."""
    n, row = 6, 3
    o = options_of(3, 2, False, 0.5, 0.5)
    mapped = {k: (bool(v) if k == "use_regular_nms" else v) for k, v in o.items()}
    for tensor_type, dtype in ((s.TensorType.UINT8, np.uint8), (s.TensorType.INT8, np.int8)):
        data = model(mapped, n, 4, row, make_anchors(n, 0), 3, tensor_type, (0.1, 0))
        interp = runtime.Interpreter.from_bytes(data, arena_size=ARENA)
        interp.set_input(np.full((1, n, 4), 100, dtype=dtype), 0)
        interp.set_input(np.full((1, n, row), 100, dtype=dtype), 1)
        try:
            interp.invoke()
        except RuntimeError:
            print(f"{dtype.__name__} inputs: refused by TFLM")
            continue
        raise SystemExit(f"error: TFLM ran a {dtype.__name__} detection model")


def main(argv):
    if len(argv) == 3 and argv[1] == "--head":
        head_child(argv[2])
        return 0
    MODELS.mkdir(parents=True, exist_ok=True)
    GOLDENS.mkdir(parents=True, exist_ok=True)
    # Fast NMS.
    run_case("fast_basic", options_of(10, 3, False, 0.35, 0.5), 24, 4, True, 4)
    run_case("fast_defaults_absent", options_of(6, 2, False, 0.3, 0.45), 20, 4, True, 3,
             absent=("detections_per_class", "use_regular_nms"), score_step=1 / 64)
    run_case("fast_ties_nobg_keypoints", options_of(8, 2, False, 0.25, 0.4), 30, 6, False, 4,
             score_step=1 / 8, enc_step=1 / 16, dup=2)
    run_case("fast_merge_large", options_of(25, 2, False, 0.1, 0.6, scales=(8.0, 8.0, 4.0, 4.0)),
             120, 4, True, 2, score_step=1 / 32, enc_step=1 / 16, dup=4)
    run_case("fast_multi_class", options_of(4, 5, False, 0.3, 0.5, classes_per_detection=3),
             16, 4, True, 4, entries=36, score_step=1 / 16)
    run_case("fast_few", options_of(10, 2, False, 0.85, 0.5), 12, 4, True, 4)
    run_case("fast_nan_scores", options_of(3, 4, False, 0.2, 0.5, classes_per_detection=2),
             16, 4, True, 4, entries=12, nan=24, score_step=1 / 16)
    run_case("fast_nan_top1", options_of(5, 4, False, 0.2, 0.5), 16, 4, True, 3, nan=30,
             score_step=1 / 16)
    run_case("fast_iou_one", options_of(8, 2, False, 0.2, 1.0), 16, 4, True, 3, dup=2,
             enc_step=1 / 2, absent=("detections_per_class",), copies=True)
    # Regular NMS.
    run_case("regular_basic", options_of(10, 3, True, 0.3, 0.5, detections_per_class=4), 24, 4,
             True, 4)
    run_case("regular_ties_nobg", options_of(12, 3, True, 0.25, 0.45, detections_per_class=5),
             30, 5, False, 4, score_step=1 / 8, enc_step=1 / 16, dup=2)
    run_case("regular_default_large",
             options_of(30, 2, True, 0.2, 0.55, scales=(10.0, 10.0, 5.0, 5.0)), 100, 4, True, 2,
             absent=("detections_per_class",), score_step=1 / 32, enc_step=1 / 16, dup=4)
    run_case("regular_few", options_of(10, 3, True, 0.8, 0.5, detections_per_class=3), 12, 4,
             True, 4)
    run_case("regular_small_max", options_of(3, 4, True, 0.2, 0.5, detections_per_class=10), 16,
             4, True, 4, score_step=1 / 4, enc_step=1 / 8, dup=2)
    run_case("regular_nan_scores", options_of(6, 3, True, 0.2, 0.5, detections_per_class=3), 16,
             4, True, 3, nan=8, score_step=1 / 16)
    # A degenerate anchor (zero height): the decoded box is invalid, TFLM refuses.
    bad = make_anchors(8, 0)
    bad[5, 2] = 0.0
    run_case("error_invalid_box", options_of(4, 2, True, 0.3, 0.5, detections_per_class=2), 8, 4,
             True, 1, anchors=bad, expect_error=True)
    check_quantized_refused()
    # TFLM's scratch for one model: regular_basic (24 boxes, 4 scores a box, 3 classes,
    # 10 detections).
    head, scratch = measure_head(MODELS / "op_dpp_regular_basic.tflite", 24, 4, 4, 10)
    rule = tflm_scratch_rule(24, 4, 3, 10)
    print(f"op_dpp_regular_basic: TFLM arena head {head} bytes, kernel scratch {scratch} bytes"
          f" (request rule: {rule})")
    head, scratch = measure_head(MODELS / "op_dpp_fast_merge_large.tflite", 120, 4, 3, 25)
    rule = tflm_scratch_rule(120, 3, 2, 25)
    print(f"op_dpp_fast_merge_large: TFLM arena head {head} bytes, kernel scratch {scratch} bytes"
          f" (request rule: {rule})")
    total = sum(p.stat().st_size for p in GOLDENS.glob("*.txt"))
    assert total < 300_000, total
    print(f"goldens: {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
