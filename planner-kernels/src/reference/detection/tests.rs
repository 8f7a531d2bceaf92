//! The detection post-processing against TFLM's goldens (written by
//! `scripts/tflm_detection_postprocess.py`, whose docstring describes their format), its
//! refusals, and its sorts against plain sorts.

extern crate std;

use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use super::sort::{partial_sort_desc, stable_sort_desc};
use super::{
    DetectionInputs, DetectionOutputs, DetectionPostprocessOptions, Shaped, detection_postprocess,
    detection_scratch_len,
};
use crate::reference::KernelError;

/// The goldens: `(case, text)`.
const GOLDENS: &[(&str, &str)] = &[
    ("fast_basic", include_str!("goldens/fast_basic.txt")),
    (
        "fast_defaults_absent",
        include_str!("goldens/fast_defaults_absent.txt"),
    ),
    (
        "fast_ties_nobg_keypoints",
        include_str!("goldens/fast_ties_nobg_keypoints.txt"),
    ),
    (
        "fast_merge_large",
        include_str!("goldens/fast_merge_large.txt"),
    ),
    (
        "fast_multi_class",
        include_str!("goldens/fast_multi_class.txt"),
    ),
    ("fast_few", include_str!("goldens/fast_few.txt")),
    (
        "fast_nan_scores",
        include_str!("goldens/fast_nan_scores.txt"),
    ),
    ("fast_nan_top1", include_str!("goldens/fast_nan_top1.txt")),
    ("fast_iou_one", include_str!("goldens/fast_iou_one.txt")),
    ("regular_basic", include_str!("goldens/regular_basic.txt")),
    (
        "regular_ties_nobg",
        include_str!("goldens/regular_ties_nobg.txt"),
    ),
    (
        "regular_default_large",
        include_str!("goldens/regular_default_large.txt"),
    ),
    ("regular_few", include_str!("goldens/regular_few.txt")),
    (
        "regular_small_max",
        include_str!("goldens/regular_small_max.txt"),
    ),
    (
        "regular_nan_scores",
        include_str!("goldens/regular_nan_scores.txt"),
    ),
    (
        "error_invalid_box",
        include_str!("goldens/error_invalid_box.txt"),
    ),
];

/// What the outputs hold before a run: a NaN no golden value has, so that an entry the
/// kernel leaves alone is told apart.
const UNTOUCHED: u32 = 0x7fa5_a5a5;

/// A float of a golden (`nan` the quiet NaN 0x7fc00000).
fn float(field: &str) -> f32 {
    if field == "nan" {
        f32::from_bits(0x7fc0_0000)
    } else {
        field.parse().unwrap()
    }
}

/// Expected output floats: `None` for `-` (left as it was).
fn expected(fields: &[&str]) -> Vec<Option<f32>> {
    fields
        .iter()
        .map(|&f| (f != "-").then(|| float(f)))
        .collect()
}

/// One run of a golden.
#[derive(Default)]
struct Run {
    /// The box encodings.
    boxes: Vec<f32>,
    /// The class predictions.
    classes: Vec<f32>,
    /// TFLM refused the run.
    error: bool,
    /// Expected boxes, classes, scores and count.
    outputs: [Vec<Option<f32>>; 4],
}

/// A parsed golden.
struct Golden {
    /// The options, as the kernel reads them.
    options: DetectionPostprocessOptions,
    /// Keys the model's map leaves out.
    absent: Vec<String>,
    /// Shapes of the box encodings, the class predictions and the anchors.
    shapes: [Vec<usize>; 3],
    /// Entries of the outputs.
    entries: usize,
    /// The anchors.
    anchors: Vec<f32>,
    /// The runs.
    runs: Vec<Run>,
}

/// Parses a golden.
fn parse(text: &str) -> Golden {
    let mut o = DetectionPostprocessOptions {
        max_detections: 0,
        max_classes_per_detection: 0,
        detections_per_class: 0,
        use_regular_nms: false,
        nms_score_threshold: 0.0,
        nms_iou_threshold: 0.0,
        num_classes: 0,
        y_scale: 0.0,
        x_scale: 0.0,
        h_scale: 0.0,
        w_scale: 0.0,
    };
    let mut g = Golden {
        options: o,
        absent: Vec::new(),
        shapes: [Vec::new(), Vec::new(), Vec::new()],
        entries: 0,
        anchors: Vec::new(),
        runs: Vec::new(),
    };
    for line in text.lines().filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(' ').collect();
        let floats = || f[1..].iter().map(|v| float(v)).collect::<Vec<f32>>();
        match f[0] {
            "option" => {
                let int = || f[2].parse::<i32>().unwrap();
                match f[1] {
                    "max_detections" => o.max_detections = int(),
                    "max_classes_per_detection" => o.max_classes_per_detection = int(),
                    "detections_per_class" => o.detections_per_class = int(),
                    "use_regular_nms" => o.use_regular_nms = int() != 0,
                    "nms_score_threshold" => o.nms_score_threshold = float(f[2]),
                    "nms_iou_threshold" => o.nms_iou_threshold = float(f[2]),
                    "num_classes" => o.num_classes = int(),
                    "y_scale" => o.y_scale = float(f[2]),
                    "x_scale" => o.x_scale = float(f[2]),
                    "h_scale" => o.h_scale = float(f[2]),
                    "w_scale" => o.w_scale = float(f[2]),
                    other => panic!("unknown option {other}"),
                }
            }
            "absent" => g.absent.push(f[1].to_string()),
            "shape" => {
                let dims = f[2..].iter().map(|d| d.parse().unwrap()).collect();
                let at = ["boxes", "classes", "anchors"]
                    .iter()
                    .position(|&n| n == f[1])
                    .unwrap();
                g.shapes[at] = dims;
            }
            "entries" => g.entries = f[1].parse().unwrap(),
            "anchors" => g.anchors = floats(),
            "run" => g.runs.push(Run::default()),
            "boxes" => g.runs.last_mut().unwrap().boxes = floats(),
            "classes" => g.runs.last_mut().unwrap().classes = floats(),
            "error" => g.runs.last_mut().unwrap().error = true,
            name => {
                let at = ["out_boxes", "out_classes", "out_scores", "out_num"]
                    .iter()
                    .position(|&n| n == name)
                    .unwrap_or_else(|| panic!("unknown line {name}"));
                g.runs.last_mut().unwrap().outputs[at] = expected(&f[1..]);
            }
        }
    }
    g.options = o;
    g
}

/// Runs the kernel on one run of a golden, the outputs starting as [`UNTOUCHED`].
fn run(g: &Golden, r: &Run) -> (Result<(), KernelError>, [Vec<f32>; 4]) {
    let inputs = DetectionInputs {
        box_encodings: Shaped::new(&r.boxes, &g.shapes[0]),
        class_predictions: Shaped::new(&r.classes, &g.shapes[1]),
        anchors: Shaped::new(&g.anchors, &g.shapes[2]),
    };
    let sentinel = f32::from_bits(UNTOUCHED);
    let mut outs = [
        vec![sentinel; 4 * g.entries],
        vec![sentinel; g.entries],
        vec![sentinel; g.entries],
        vec![sentinel; 1],
    ];
    let (nf, ni) = detection_scratch_len(&g.options, g.shapes[0][1]);
    let (mut sf, mut si) = (vec![0.0f32; nf], vec![0i32; ni]);
    let [b, c, s, n] = &mut outs;
    let mut outputs = DetectionOutputs {
        boxes: b,
        classes: c,
        scores: s,
        num_detections: n,
    };
    let result = detection_postprocess(&g.options, &inputs, &mut outputs, &mut sf, &mut si);
    (result, outs)
}

/// Every run of every golden: the outputs TFLM wrote bit for bit, the others untouched,
/// TFLM's refusals refused.
#[test]
fn goldens_match_tflm_bit_for_bit() {
    let mut checked = 0;
    for (case, text) in GOLDENS {
        let g = parse(text);
        for key in &g.absent {
            match key.as_str() {
                "detections_per_class" => assert_eq!(
                    g.options.detections_per_class,
                    super::DEFAULT_DETECTIONS_PER_CLASS
                ),
                "use_regular_nms" => assert!(!g.options.use_regular_nms),
                other => panic!("{case}: absent {other}"),
            }
        }
        for (i, r) in g.runs.iter().enumerate() {
            let (result, outs) = run(&g, r);
            if r.error {
                assert!(
                    result.is_err(),
                    "{case} run {i}: TFLM refused, the kernel ran"
                );
                assert!(
                    outs.iter().flatten().all(|v| v.to_bits() == UNTOUCHED),
                    "{case} run {i}"
                );
                continue;
            }
            assert_eq!(result, Ok(()), "{case} run {i}");
            for (o, (got, want)) in outs.iter().zip(&r.outputs).enumerate() {
                assert_eq!(got.len(), want.len(), "{case} run {i} output {o}");
                for (e, (g, w)) in got.iter().zip(want).enumerate() {
                    let w = w.map_or(UNTOUCHED, f32::to_bits);
                    assert_eq!(
                        g.to_bits(),
                        w,
                        "{case} run {i} output {o} element {e}: {g} vs {}",
                        f32::from_bits(w)
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 52);
}

/// A small valid problem: 6 boxes (TFLM's test's), 2 classes plus background, 3 entries.
struct Small {
    options: DetectionPostprocessOptions,
    boxes: Vec<f32>,
    classes: Vec<f32>,
    anchors: Vec<f32>,
}

impl Small {
    /// The problem with the fast or the regular NMS.
    fn new(regular: bool) -> Self {
        let mut boxes = vec![0.0; 24];
        boxes[5] = 1.0;
        boxes[9] = -1.0;
        boxes[17] = 1.0;
        let classes = vec![
            0., 0.9, 0.8, 0., 0.75, 0.72, 0., 0.6, 0.5, 0., 0.93, 0.95, 0., 0.5, 0.4, 0., 0.3, 0.2,
        ];
        let mut anchors = Vec::new();
        for x in [0.5, 0.5, 0.5, 10.5, 10.5, 100.5] {
            anchors.extend_from_slice(&[0.5, x, 1.0, 1.0]);
        }
        let options = DetectionPostprocessOptions {
            max_detections: 3,
            max_classes_per_detection: 1,
            detections_per_class: 100,
            use_regular_nms: regular,
            nms_score_threshold: 0.0,
            nms_iou_threshold: 0.5,
            num_classes: 2,
            y_scale: 10.0,
            x_scale: 10.0,
            h_scale: 5.0,
            w_scale: 5.0,
        };
        Small {
            options,
            boxes,
            classes,
            anchors,
        }
    }

    /// Runs with outputs of `entries` entries; returns the result and the outputs.
    fn run(
        &self,
        entries: usize,
        class_shape: &[usize],
    ) -> (Result<(), KernelError>, Vec<f32>, Vec<f32>, f32) {
        let inputs = DetectionInputs {
            box_encodings: Shaped::new(&self.boxes, &[1, 6, 4]),
            class_predictions: Shaped::new(&self.classes, class_shape),
            anchors: Shaped::new(&self.anchors, &[6, 4]),
        };
        let (mut b, mut c, mut s, mut n) = (
            vec![0.0; 4 * entries],
            vec![0.0; entries],
            vec![0.0; entries],
            [0.0],
        );
        let (nf, ni) = detection_scratch_len(&self.options, 6);
        let (mut sf, mut si) = (vec![0.0; nf], vec![0; ni]);
        let mut outputs = DetectionOutputs {
            boxes: &mut b,
            classes: &mut c,
            scores: &mut s,
            num_detections: &mut n,
        };
        let result = detection_postprocess(&self.options, &inputs, &mut outputs, &mut sf, &mut si);
        (result, b, c, n[0])
    }
}

/// TFLM's own unit test's inputs (classes and count of its fast and regular cases).
#[test]
fn tflm_unit_test_cases() {
    // TFLM's own test: fast NMS picks boxes 3, 0 and 5 (classes 1, 0, 0).
    let (r, b, c, n) = Small::new(false).run(3, &[1, 6, 3]);
    assert_eq!(r, Ok(()));
    assert_eq!(c, [1.0, 0.0, 0.0]);
    assert_eq!(n, 3.0);
    assert_eq!(&b[..4], &[0.0, 10.0, 1.0, 11.0]);
    let (r, _, c, n) = Small::new(true).run(3, &[1, 6, 3]);
    assert_eq!(r, Ok(()));
    assert_eq!(n, 3.0);
    assert_eq!(&c[..2], &[1.0, 0.0]);
}

/// What TFLM refuses, and what it would read or write out of bounds, is refused.
#[test]
fn refusals() {
    let shape = |what| Err(KernelError::Shape { what });
    let mut s = Small::new(false);
    assert_eq!(
        s.run(3, &[1, 6, 2]).0,
        shape("a detection input's length is not its shape's")
    );
    s.options.num_classes = 4;
    assert_eq!(
        s.run(3, &[1, 6, 3]).0,
        shape("class predictions' last dimension is not num_classes or num_classes + 1")
    );
    s.options.num_classes = 0;
    assert!(matches!(
        s.run(3, &[1, 6, 3]).0,
        Err(KernelError::Shape { .. })
    ));
    s.options.num_classes = -1;
    assert!(matches!(
        s.run(3, &[1, 6, 3]).0,
        Err(KernelError::Options { .. })
    ));
    for (regular, edit) in [
        (
            false,
            (|o: &mut DetectionPostprocessOptions| o.max_detections = -1)
                as fn(&mut DetectionPostprocessOptions),
        ),
        (false, |o| o.max_classes_per_detection = 0),
        (true, |o| o.detections_per_class = 0),
        (false, |o| o.nms_iou_threshold = 0.0),
        (true, |o| o.nms_iou_threshold = 1.5),
        (true, |o| o.nms_iou_threshold = f32::NAN),
    ] {
        let mut s = Small::new(regular);
        edit(&mut s.options);
        assert!(matches!(
            s.run(3, &[1, 6, 3]).0,
            Err(KernelError::Options { .. })
        ));
    }
    // Outputs too short: regular always writes max_detections entries, fast only its
    // detections.
    assert!(matches!(
        Small::new(true).run(2, &[1, 6, 3]).0,
        Err(KernelError::Shape { .. })
    ));
    assert!(matches!(
        Small::new(false).run(2, &[1, 6, 3]).0,
        Err(KernelError::Shape { .. })
    ));
    let mut few = Small::new(false);
    few.options.nms_score_threshold = 0.92;
    let (r, _, _, n) = few.run(1, &[1, 6, 3]);
    assert_eq!((r, n), (Ok(()), 1.0));
    // An invalid box.
    let mut s = Small::new(true);
    s.anchors[2] = 0.0;
    assert!(matches!(
        s.run(3, &[1, 6, 3]).0,
        Err(KernelError::Value { .. })
    ));
    // Regular NMS with no class runs no pass: neither the IoU threshold nor the boxes are
    // checked, and nothing is detected.
    s.options.num_classes = 0;
    s.options.nms_iou_threshold = 0.0;
    s.classes = vec![0.0; 6];
    let (r, b, c, n) = s.run(3, &[1, 6, 1]);
    assert_eq!((r, n), (Ok(()), 0.0));
    assert!(b.iter().chain(&c).all(|&v| v == 0.0));
    // Fast NMS with no class is refused (TFLM reads an unwritten index).
    s.options.use_regular_nms = false;
    s.options.nms_iou_threshold = 0.5;
    assert!(matches!(
        s.run(3, &[1, 6, 1]).0,
        Err(KernelError::Options { .. })
    ));
}

/// A tiny deterministic generator.
struct Lcg(u64);

impl Lcg {
    /// The next 31 pseudo-random bits.
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// Without NaNs, the sorts agree with the standard library's: stable decreasing, and the
/// first `k` by decreasing score then increasing index.
#[test]
fn sorts_order_as_plain_sorts_do() {
    let mut rng = Lcg(7);
    for n in 0..70usize {
        let values: Vec<f32> = (0..n).map(|_| (rng.next() % 6) as f32).collect();
        let score = |i: i32| values[i as usize];
        // Stable, decreasing.
        let mut order: Vec<i32> = (0..n as i32).collect();
        let mut scratch = vec![0; n];
        stable_sort_desc(&mut order, &mut scratch, &score);
        let mut want: Vec<i32> = (0..n as i32).collect();
        want.sort_by(|&a, &b| score(b).partial_cmp(&score(a)).unwrap());
        assert_eq!(order, want, "stable {n}");
        // Partial: the first k by decreasing score, the smaller index first on ties.
        for k in 0..=n {
            let mut part: Vec<i32> = (0..n as i32).collect();
            partial_sort_desc(&mut part, k, &score);
            assert_eq!(&part[..k], &want[..k], "partial {n} {k}");
            let mut rest = part.clone();
            rest.sort_unstable();
            assert_eq!(rest, (0..n as i32).collect::<Vec<_>>());
        }
    }
}

/// Random small shapes, options, anchors and scratch lengths: the kernel returns, never
/// panics.
#[test]
fn never_panics_on_odd_inputs() {
    let mut rng = Lcg(11);
    for _ in 0..3000 {
        let mut pick = |m: u32| rng.next() % m;
        let n = pick(6) as usize;
        let stride = 3 + pick(3) as usize;
        let row = pick(4) as usize;
        let options = DetectionPostprocessOptions {
            max_detections: pick(6) as i32 - 1,
            max_classes_per_detection: pick(4) as i32 - 1,
            detections_per_class: pick(4) as i32 - 1,
            use_regular_nms: pick(2) == 0,
            nms_score_threshold: pick(4) as f32 / 4.0 - 0.25,
            nms_iou_threshold: pick(5) as f32 / 3.0 - 0.2,
            num_classes: pick(5) as i32 - 1,
            y_scale: pick(3) as f32,
            x_scale: 10.0,
            h_scale: pick(3) as f32,
            w_scale: 5.0,
        };
        let boxes: Vec<f32> = (0..n * stride).map(|_| pick(9) as f32 - 4.0).collect();
        let classes: Vec<f32> = (0..n * row).map(|_| pick(5) as f32 / 4.0).collect();
        let anchors: Vec<f32> = (0..4 * n).map(|_| pick(3) as f32 / 2.0).collect();
        let anchor_rows = n.saturating_sub(pick(2) as usize);
        let (box_shape, class_shape) = ([1, n, stride], [1, n, row]);
        let anchors_shape = [anchor_rows, 4];
        let inputs = DetectionInputs {
            box_encodings: Shaped::new(&boxes, &box_shape),
            class_predictions: Shaped::new(&classes, &class_shape),
            anchors: Shaped::new(&anchors[..4 * anchor_rows], &anchors_shape),
        };
        let entries = pick(8) as usize;
        let (mut b, mut c, mut s, mut k) = (
            vec![0.0; 4 * entries],
            vec![0.0; entries],
            vec![0.0; entries],
            [0.0],
        );
        let (nf, ni) = detection_scratch_len(&options, n);
        let (mut sf, mut si) = (vec![0.0; nf], vec![0; ni.saturating_sub(pick(2) as usize)]);
        let mut outputs = DetectionOutputs {
            boxes: &mut b,
            classes: &mut c,
            scores: &mut s,
            num_detections: &mut k,
        };
        let _ = detection_postprocess(&options, &inputs, &mut outputs, &mut sf, &mut si);
    }
}

/// The scratch the planner gives the op (`planner_rt::op_kinds::kernel_scratch`) is the
/// scratch the kernel asks for, over both NMS modes and a spread of sizes.
#[test]
fn the_plans_scratch_is_the_kernels() {
    use planner_rt::op_kinds::kernel_scratch;
    use planner_rt::options::OpOptions;
    for regular in [false, true] {
        for (n, classes, d, k, per_class) in
            [(24, 3, 10, 1, 100), (120, 2, 25, 2, 5), (4, 90, 3, 3, 1)]
        {
            let rt = DetectionPostprocessOptions {
                max_detections: d,
                max_classes_per_detection: k,
                detections_per_class: per_class,
                use_regular_nms: regular,
                num_classes: classes,
                ..Default::default()
            };
            let boxes = [1, n, 4];
            let plan = kernel_scratch(&OpOptions::DetectionPostprocess(rt), &[&boxes])
                .unwrap()
                .map(|t| t.map_or(0, |t| t.elements));
            let (f, i) = detection_scratch_len(&rt, n);
            assert_eq!(plan, [f.max(1), i.max(1)], "n {n} regular {regular}");
        }
    }
}
