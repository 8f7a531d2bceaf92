//! `CUSTOM:TFLite_Detection_PostProcess`: TFLM's SSD decoder, box decoding against anchors
//! then multi-class non-maximum suppression (NMS), fast or regular, with TFLM's float
//! arithmetic and its sorts' exact order (ties included).
//!
//! Inputs (float32 only: TFLM's kernel refuses any other type of the box encodings and the
//! class predictions, and reads the anchors as float32 whatever their type):
//!
//! * box encodings `[1, num_boxes, box_size]`, `box_size >= 4`: per box `[y, x, h, w]`
//!   (centre and log size, scaled), then anything (keypoints, ignored);
//! * class predictions `[1, num_boxes, num_classes]` or `[1, num_boxes, num_classes + 1]`
//!   (background first, skipped);
//! * anchors (rank 2; TFLM reads its first `4 · num_boxes` floats as `[y, x, h, w]` rows).
//!
//! Outputs (float32): detection boxes (`[ymin, xmin, ymax, xmax]` each), classes, scores,
//! and the number of detections (one float).
//!
//! * Regular NMS (`use_regular_nms`): an NMS pass per class (at most
//!   `detections_per_class` boxes each), the best `max_detections` over all classes kept
//!   as they come; writes `max_detections` entries, zeros after the detections.
//! * Fast NMS: each box's best `k = min(max_classes_per_detection, num_classes)` classes,
//!   one NMS pass on each box's best score (at most `max_detections` boxes), then `k`
//!   entries per selected box. TFLM writes entry `c` of the `j`-th output entry (counting
//!   `k` per selected box) at index `k · j + c` (a gap-leaving layout when `k > 1`), and
//!   leaves every other entry as it was; this kernel does the same, and refuses (before
//!   writing anything) a selection whose entries would fall outside the outputs, where TFLM
//!   writes past them. The number of detections is `k` per selected box.
//!
//! Options: [`DetectionPostprocessOptions`]. The kernel allocates nothing: [`detection_scratch_len`]
//! gives the float32 and int32 scratch it needs.

mod nms;
mod sort;
/// `TFLite_Detection_PostProcess` (the SSD decoder), float32: box encodings, class
/// predictions and anchors to the detected boxes, classes, scores and their count, through
/// the op's two scratch tensors (float32 decoded boxes, int32 indices).
pub(crate) fn detection_postprocess_op(
    op: OpView<'_, '_>,
    options: &o::DetectionPostprocessOptions,
) -> Result<(), KernelError> {
    use crate::reference::detection::{DetectionInputs, DetectionOutputs};
    let input = |i: usize, tensor: &'static str| {
        let x = op.input(i).ok_or(KernelError::Missing { tensor })?;
        match x.data {
            Data::F32(data) => Ok(Shaped::new(data, x.shape)),
            _ => Err(KernelError::Type { tensor }),
        }
    };
    let inputs = DetectionInputs {
        box_encodings: input(0, "input 0 (box encodings)")?,
        class_predictions: input(1, "input 1 (class predictions)")?,
        anchors: input(2, "input 2 (anchors)")?,
    };
    let mut scratch = op.scratch.iter_mut();
    let floats = typed_elements!(scratch.next(), F32, "scratch 0 (decoded boxes)");
    let ints = typed_elements!(scratch.next(), I32, "scratch 1 (indices)");
    let mut outs = op.outputs.iter_mut();
    let mut outputs = DetectionOutputs {
        boxes: typed_elements!(outs.next(), F32, "output 0 (boxes)"),
        classes: typed_elements!(outs.next(), F32, "output 1 (classes)"),
        scores: typed_elements!(outs.next(), F32, "output 2 (scores)"),
        num_detections: typed_elements!(outs.next(), F32, "output 3 (count)"),
    };
    detection_postprocess(options, &inputs, &mut outputs, floats, ints)
}

#[cfg(test)]
mod tests;

use crate::reference::KernelError;
use crate::reference::common::operands::typed_elements;
use nms::{Pass, boxes_valid, decode, single_class_nms};
use planner_rt::kernel::{Data, DataMut, OpView, Out};
use planner_rt::options::{self as o, DetectionPostprocessOptions};
use sort::partial_sort_desc;

/// `detections_per_class` when the map has no such key (TFLM's default; the importer
/// fills it in).
#[cfg(test)]
pub(crate) const DEFAULT_DETECTIONS_PER_CLASS: i32 = 100;

/// One input: its floats and its shape (row-major, `data.len()` the product).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shaped<'a> {
    /// The elements.
    pub(crate) data: &'a [f32],
    /// Their shape.
    pub(crate) shape: &'a [usize],
}

impl<'a> Shaped<'a> {
    /// `data` of shape `shape`.
    pub(crate) fn new(data: &'a [f32], shape: &'a [usize]) -> Self {
        Shaped { data, shape }
    }

    /// Whether the elements are as many as the shape says.
    fn is_whole(&self) -> bool {
        let product = self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        product == Some(self.data.len())
    }
}

/// The op's three inputs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DetectionInputs<'a> {
    /// Box encodings, `[1, num_boxes, box_size >= 4]`.
    pub(crate) box_encodings: Shaped<'a>,
    /// Class predictions, `[1, num_boxes, num_classes (+ 1)]`.
    pub(crate) class_predictions: Shaped<'a>,
    /// Anchors, rank 2, at least `4 · num_boxes` floats.
    pub(crate) anchors: Shaped<'a>,
}

/// The op's four outputs. TFLM does not check their shapes; each must hold what the
/// kernel writes in it (see the module's documentation).
#[derive(Debug)]
pub(crate) struct DetectionOutputs<'a> {
    /// Detection boxes, 4 floats an entry.
    pub(crate) boxes: &'a mut [f32],
    /// Detection classes (class indices without the background, as floats).
    pub(crate) classes: &'a mut [f32],
    /// Detection scores.
    pub(crate) scores: &'a mut [f32],
    /// The number of detections: its first element.
    pub(crate) num_detections: &'a mut [f32],
}

/// The geometry of the inputs, checked.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    /// Boxes (anchors).
    boxes: usize,
    /// Floats per box encoding (at least 4).
    stride: usize,
    /// The class predictions' last dimension.
    row: usize,
    /// `num_classes`.
    classes: usize,
    /// 1 with a background class (skipped), else 0.
    offset: usize,
}

/// `max(v, 0)` as a `usize`.
fn count(v: i32) -> usize {
    usize::try_from(v).unwrap_or(0)
}

/// The scratch of one run: `(shared, extra)` int32 elements, `shared` reused from phase to
/// phase.
fn int_layout(options: &DetectionPostprocessOptions, num_boxes: usize) -> (usize, usize) {
    let n = num_boxes;
    let d = count(options.max_detections);
    let c = count(options.num_classes);
    if options.use_regular_nms {
        let m = d.saturating_add(n.min(count(options.detections_per_class)));
        (n.saturating_mul(2).max(m), m)
    } else {
        let k = count(options.max_classes_per_detection).min(c);
        (n.saturating_mul(2).max(c), n.saturating_mul(k))
    }
}

/// The `(float32, int32)` scratch elements [`detection_postprocess`] needs for
/// `num_boxes` boxes (the box encodings' dimension 1) under `options`:
///
/// * float32: `4 · num_boxes` (the decoded boxes);
/// * int32, fast NMS: `max(2 · num_boxes, num_classes) + num_boxes · k` with
///   `k = min(max_classes_per_detection, num_classes)` (the NMS's sorted boxes and merge
///   scratch, or one box's class ranking; each box's best `k` classes);
/// * int32, regular NMS: `max(2 · num_boxes, m) + m` with
///   `m = max_detections + min(num_boxes, detections_per_class)` (the NMS's sorted boxes
///   and merge scratch, or the ranking of the candidates; the candidates, the best so far
///   then one class's selection).
///
/// Negative options count as 0; sums saturate (the kernel refuses such options anyway).
pub(crate) fn detection_scratch_len(
    options: &DetectionPostprocessOptions,
    num_boxes: usize,
) -> (usize, usize) {
    let (shared, extra) = int_layout(options, num_boxes);
    (num_boxes.saturating_mul(4), shared.saturating_add(extra))
}

/// Checks the inputs' shapes against each other and `num_classes` as TFLM does (and the
/// lengths TFLM trusts), returning their geometry.
fn geometry(
    options: &DetectionPostprocessOptions,
    inputs: &DetectionInputs<'_>,
) -> Result<Geometry, KernelError> {
    let shape = |what| KernelError::Shape { what };
    let &[b0, boxes, stride] = inputs.box_encodings.shape else {
        return Err(shape("box encodings are not of rank 3"));
    };
    let &[c0, class_boxes, row] = inputs.class_predictions.shape else {
        return Err(shape("class predictions are not of rank 3"));
    };
    if inputs.anchors.shape.len() != 2 {
        return Err(shape("anchors are not of rank 2"));
    }
    if !inputs.box_encodings.is_whole()
        || !inputs.class_predictions.is_whole()
        || !inputs.anchors.is_whole()
    {
        return Err(shape("a detection input's length is not its shape's"));
    }
    if b0 != 1 || c0 != 1 {
        return Err(shape("detection inputs have a batch other than 1"));
    }
    if stride < 4 {
        return Err(shape("box encodings have fewer than 4 values a box"));
    }
    if class_boxes != boxes {
        return Err(shape(
            "class predictions and box encodings have different box counts",
        ));
    }
    if boxes
        .checked_mul(4)
        .is_none_or(|n| inputs.anchors.data.len() < n)
    {
        return Err(shape("anchors hold fewer than 4 values a box"));
    }
    let within_i32 = |n: usize| i32::try_from(n).is_ok();
    if !within_i32(inputs.class_predictions.data.len()) || !within_i32(boxes) {
        return Err(shape("too many boxes or classes for TFLM's int indices"));
    }
    let classes = usize::try_from(options.num_classes).map_err(|_| KernelError::Options {
        what: "num_classes is negative",
    })?;
    let offset = match row.checked_sub(classes) {
        Some(o @ (0 | 1)) => o,
        _ => {
            return Err(shape(
                "class predictions' last dimension is not num_classes or num_classes + 1",
            ));
        }
    };
    Ok(Geometry {
        boxes,
        stride,
        row,
        classes,
        offset,
    })
}

/// Runs `TFLite_Detection_PostProcess` once: decodes the boxes into `scratch_f32`, runs
/// the fast or the regular NMS ([`DetectionPostprocessOptions::use_regular_nms`]) and writes the
/// outputs. `scratch_f32` and `scratch_i32` hold at least [`detection_scratch_len`]
/// elements (their contents in and out are unspecified).
///
/// Refuses, as TFLM does: inputs of other ranks, a batch other than 1, box encodings of
/// fewer than 4 values, class predictions of another box count or whose last dimension
/// is neither `num_classes` nor `num_classes + 1` ([`KernelError::Shape`]); a negative
/// `max_detections`, `detections_per_class < 1` (regular), `max_classes_per_detection < 1`
/// (fast), and, when an NMS pass runs (always in the fast NMS, when `num_classes > 0` in
/// the regular one), an IoU threshold outside `(0, 1]` ([`KernelError::Options`]); a
/// decoded box with `ymin >= ymax` or `xmin >= xmax` then too ([`KernelError::Value`]).
/// Refuses also what TFLM would read or write out of bounds: anchors of fewer than
/// `4 · num_boxes` floats, outputs too short for what it writes, a negative `num_classes`
/// and the fast NMS with `num_classes == 0` ([`KernelError::Shape`] or
/// [`KernelError::Options`]). Nothing is written on a refusal (but the scratch).
pub(crate) fn detection_postprocess(
    options: &DetectionPostprocessOptions,
    inputs: &DetectionInputs<'_>,
    outputs: &mut DetectionOutputs<'_>,
    scratch_f32: &mut [f32],
    scratch_i32: &mut [i32],
) -> Result<(), KernelError> {
    let g = geometry(options, inputs)?;
    if options.max_detections < 0 {
        return Err(KernelError::Options {
            what: "max_detections is negative",
        });
    }
    let (float_len, int_len) = detection_scratch_len(options, g.boxes);
    let (Some(decoded), Some(ints)) = (
        scratch_f32.get_mut(..float_len),
        scratch_i32.get_mut(..int_len),
    ) else {
        return Err(KernelError::Shape {
            what: "detection scratch shorter than detection_scratch_len",
        });
    };
    if outputs.num_detections.is_empty() {
        return Err(KernelError::Shape {
            what: "the detection count output is empty",
        });
    }
    // The option the chosen NMS limits each pass or box by.
    let (per_pass, what) = if options.use_regular_nms {
        (options.detections_per_class, "detections_per_class below 1")
    } else {
        (
            options.max_classes_per_detection,
            "max_classes_per_detection below 1",
        )
    };
    if per_pass < 1 {
        return Err(KernelError::Options { what });
    }
    let scales = [
        options.y_scale,
        options.x_scale,
        options.h_scale,
        options.w_scale,
    ];
    decode(
        inputs.box_encodings.data,
        g.stride,
        inputs.anchors.data,
        scales,
        decoded,
    );
    let nms = Nms {
        options,
        g,
        predictions: inputs.class_predictions.data,
        decoded,
        ints,
        outputs,
    };
    if options.use_regular_nms {
        nms.regular()
    } else {
        nms.fast()
    }
}

/// The checks TFLM makes at the start of every NMS pass: the IoU threshold in `(0, 1]`
/// and every decoded box valid.
fn check_pass(options: &DetectionPostprocessOptions, decoded: &[f32]) -> Result<(), KernelError> {
    let t = options.nms_iou_threshold;
    if !(t > 0.0 && t <= 1.0) {
        return Err(KernelError::Options {
            what: "nms_iou_threshold outside (0, 1]",
        });
    }
    if !boxes_valid(decoded) {
        return Err(KernelError::Value {
            what: "a decoded box has ymin >= ymax or xmin >= xmax",
        });
    }
    Ok(())
}

/// Whether each output holds `entries` entries (4 floats each for the boxes).
fn outputs_hold(outputs: &DetectionOutputs<'_>, entries: usize) -> bool {
    entries
        .checked_mul(4)
        .is_some_and(|n| outputs.boxes.len() >= n)
        && outputs.classes.len() >= entries
        && outputs.scores.len() >= entries
}

/// Writes output entry `at`: decoded box `anchor`, `class` and `score`. The caller has
/// checked the outputs hold the entry and `decoded` the box.
fn write_entry(
    outputs: &mut DetectionOutputs<'_>,
    at: usize,
    decoded: &[f32],
    anchor: usize,
    class: f32,
    score: f32,
) {
    outputs.boxes[4 * at..4 * at + 4].copy_from_slice(&decoded[4 * anchor..4 * anchor + 4]);
    outputs.classes[at] = class;
    outputs.scores[at] = score;
}

/// What the fast and the regular NMS work on: the options (their per-pass limit checked),
/// the inputs' geometry, the class predictions, the decoded boxes, the int32 scratch and
/// the outputs.
struct Nms<'a, 'o> {
    options: &'a DetectionPostprocessOptions,
    g: Geometry,
    predictions: &'a [f32],
    decoded: &'a [f32],
    ints: &'a mut [i32],
    outputs: &'a mut DetectionOutputs<'o>,
}

impl Nms<'_, '_> {
    /// The fast NMS: each box's best `k` classes ([`partial_sort_desc`] over its class
    /// scores, in the shared scratch), one NMS pass on their best scores limited to
    /// `max_detections`, then `k` entries per selected box at TFLM's indices.
    fn fast(self) -> Result<(), KernelError> {
        let (options, g) = (self.options, self.g);
        if g.classes == 0 {
            return Err(KernelError::Options {
                what: "num_classes is 0 in the fast NMS",
            });
        }
        let k = count(options.max_classes_per_detection).min(g.classes);
        let (shared_len, _) = int_layout(options, g.boxes);
        let (shared, best) = self.ints.split_at_mut(shared_len);
        for (b, best) in best.chunks_exact_mut(k).enumerate().take(g.boxes) {
            let start = b * g.row + g.offset;
            let row = &self.predictions[start..start + g.classes];
            let ranking = &mut shared[..g.classes];
            for (c, r) in ranking.iter_mut().enumerate() {
                *r = c as i32;
            }
            partial_sort_desc(ranking, k, &|c| row[c as usize]);
            best.copy_from_slice(&ranking[..k]);
        }
        check_pass(options, self.decoded)?;
        let best = &*best;
        let score = |b: i32| {
            let b = b as usize;
            self.predictions[b * g.row + g.offset + best[b * k] as usize]
        };
        let pass = Pass {
            score_threshold: options.nms_score_threshold,
            iou_threshold: options.nms_iou_threshold,
            limit: count(options.max_detections),
        };
        let (order, merge) = shared[..2 * g.boxes].split_at_mut(g.boxes);
        let selected = single_class_nms(self.decoded, &score, &pass, order, merge);
        let written = selected * k;
        if !written
            .checked_mul(k)
            .is_some_and(|entries| outputs_hold(self.outputs, entries))
        {
            return Err(KernelError::Shape {
                what: "detection outputs shorter than the fast NMS writes",
            });
        }
        for j in 0..written {
            let (box_index, c) = (order[j / k] as usize, j % k);
            let class = best[box_index * k + c];
            let score = self.predictions[box_index * g.row + g.offset + class as usize];
            write_entry(
                self.outputs,
                k * j + c,
                self.decoded,
                box_index,
                class as f32,
                score,
            );
        }
        self.outputs.num_detections[0] = written as f32;
        Ok(())
    }

    /// The regular NMS: per class, an NMS pass limited to `detections_per_class`, its
    /// selection appended to the best detections so far and the best `max_detections` of
    /// them kept ([`partial_sort_desc`], earlier candidates first among equal scores); then
    /// `max_detections` entries, zeros after the detections.
    ///
    /// A candidate is the index of its score in the class predictions (box · row + class +
    /// offset), as in TFLM.
    fn regular(self) -> Result<(), KernelError> {
        let (options, g) = (self.options, self.g);
        let max_detections = count(options.max_detections);
        if !outputs_hold(self.outputs, max_detections) {
            return Err(KernelError::Shape {
                what: "detection outputs shorter than max_detections",
            });
        }
        if g.classes > 0 {
            check_pass(options, self.decoded)?;
        }
        let (shared_len, _) = int_layout(options, g.boxes);
        let (shared, candidates) = self.ints.split_at_mut(shared_len);
        let pass = Pass {
            score_threshold: options.nms_score_threshold,
            iou_threshold: options.nms_iou_threshold,
            limit: count(options.detections_per_class),
        };
        let mut kept = 0;
        for class in 0..g.classes {
            let column = class + g.offset;
            let score = |b: i32| self.predictions[b as usize * g.row + column];
            let (order, merge) = shared[..2 * g.boxes].split_at_mut(g.boxes);
            let selected = single_class_nms(self.decoded, &score, &pass, order, merge);
            let total = kept + selected;
            for (slot, &b) in candidates[kept..total].iter_mut().zip(order.iter()) {
                *slot = b * g.row as i32 + column as i32;
            }
            let keep = total.min(max_detections);
            let ranking = &mut shared[..total];
            for (i, r) in ranking.iter_mut().enumerate() {
                *r = i as i32;
            }
            partial_sort_desc(ranking, keep, &|i| {
                self.predictions[candidates[i as usize] as usize]
            });
            for r in ranking[..keep].iter_mut() {
                *r = candidates[*r as usize];
            }
            candidates[..keep].copy_from_slice(&ranking[..keep]);
            kept = keep;
        }
        for at in 0..max_detections {
            if let Some(&index) = candidates[..kept].get(at) {
                let index = index as usize;
                let anchor = index / g.row;
                let class = index - anchor * g.row - g.offset;
                let score = self.predictions[index];
                write_entry(self.outputs, at, self.decoded, anchor, class as f32, score);
            } else {
                write_entry(self.outputs, at, &[0.0; 4], 0, 0.0, 0.0);
            }
        }
        self.outputs.num_detections[0] = kept as f32;
        Ok(())
    }
}
