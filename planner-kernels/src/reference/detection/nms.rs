//! Box decoding, box validation, intersection over union and the greedy single-class
//! non-maximum suppression of TFLM's detection post-processing, with TFLM's arithmetic.

use super::sort::stable_sort_desc;

/// Decodes box `i` of `encodings` (rows of `stride >= 4` floats, `[y, x, h, w]` first)
/// against anchor `i` of `anchors` (rows of 4 floats, `[y, x, h, w]`) into `decoded`
/// (rows of 4 floats, `[ymin, xmin, ymax, xmax]`), for every row of `decoded`; `scales` is
/// `[y_scale, x_scale, h_scale, w_scale]`.
///
/// TFLM's arithmetic: in double, `ycenter = y / y_scale · anchor_h + anchor_y` and
/// `half_h = 0.5 · exp(h / h_scale) · anchor_h` (the same along x), each rounded to
/// float, then `ymin = ycenter - half_h`, `ymax = ycenter + half_h` in float. `exp` is
/// `libm`'s (TFLM calls glibc's: both within an ulp of the double result, which the
/// rounding to float almost always hides). The caller checks the lengths: `encodings`
/// holds `rows · stride` floats, `anchors` `4 · rows`.
pub(super) fn decode(
    encodings: &[f32],
    stride: usize,
    anchors: &[f32],
    scales: [f32; 4],
    decoded: &mut [f32],
) {
    let [sy, sx, sh, sw] = scales.map(f64::from);
    let rows = decoded.chunks_exact_mut(4).zip(anchors.chunks_exact(4));
    for (i, (out, anchor)) in rows.enumerate() {
        let Some(e) = encodings.get(i * stride..i * stride + 4) else {
            return;
        };
        let [y, x, h, w] = [e[0], e[1], e[2], e[3]].map(f64::from);
        let [ay, ax, ah, aw] = [anchor[0], anchor[1], anchor[2], anchor[3]].map(f64::from);
        let ycenter = (y / sy * ah + ay) as f32;
        let xcenter = (x / sx * aw + ax) as f32;
        let half_h = (0.5 * libm::exp(h / sh) * ah) as f32;
        let half_w = (0.5 * libm::exp(w / sw) * aw) as f32;
        out.copy_from_slice(&[
            ycenter - half_h,
            xcenter - half_w,
            ycenter + half_h,
            xcenter + half_w,
        ]);
    }
}

/// Whether every decoded box has `ymin < ymax` and `xmin < xmax`, as TFLM demands before
/// each NMS pass (a NaN coordinate passes: TFLM tests `ymin >= ymax || xmin >= xmax`).
pub(super) fn boxes_valid(decoded: &[f32]) -> bool {
    decoded
        .chunks_exact(4)
        .all(|b| !(b[0] >= b[2] || b[1] >= b[3]))
}

/// `std::max(a, b)` on floats: `b` when `a < b`, else `a`.
fn max_f(a: f32, b: f32) -> f32 {
    if a < b { b } else { a }
}

/// `std::min(a, b)` on floats: `b` when `b < a`, else `a`.
fn min_f(a: f32, b: f32) -> f32 {
    if b < a { b } else { a }
}

/// The decoded box `i` (`[ymin, xmin, ymax, xmax]`), zeros past the end.
fn corners(decoded: &[f32], i: i32) -> [f32; 4] {
    let start = usize::try_from(i).unwrap_or(usize::MAX).saturating_mul(4);
    match decoded.get(start..start.saturating_add(4)) {
        Some(b) => [b[0], b[1], b[2], b[3]],
        None => [0.0; 4],
    }
}

/// Intersection over union of decoded boxes `i` (the selected one) and `j`, in float as
/// TFLM: 0 when either area is not positive, else the clamped intersection's area over
/// `area_i + area_j - intersection`.
pub(super) fn intersection_over_union(decoded: &[f32], i: i32, j: i32) -> f32 {
    let [iy0, ix0, iy1, ix1] = corners(decoded, i);
    let [jy0, jx0, jy1, jx1] = corners(decoded, j);
    let area_i = (iy1 - iy0) * (ix1 - ix0);
    let area_j = (jy1 - jy0) * (jx1 - jx0);
    if area_i <= 0.0 || area_j <= 0.0 {
        return 0.0;
    }
    let ymin = max_f(iy0, jy0);
    let xmin = max_f(ix0, jx0);
    let ymax = min_f(iy1, jy1);
    let xmax = min_f(ix1, jx1);
    let intersection = max_f(ymax - ymin, 0.0) * max_f(xmax - xmin, 0.0);
    intersection / (area_i + area_j - intersection)
}

/// One NMS pass's thresholds and limit.
pub(super) struct Pass {
    /// A box is a candidate when its score is `>=` this.
    pub(super) score_threshold: f32,
    /// A candidate overlapping a selected box by an IoU `>` this is dropped.
    pub(super) iou_threshold: f32,
    /// At most this many boxes are selected.
    pub(super) limit: usize,
}

/// TFLM's single-class NMS over boxes `0..order.len()` scored by `score`: the boxes
/// scoring at least the threshold, in increasing index order, sorted stably by decreasing
/// score ([`stable_sort_desc`], `merge` its scratch, as long as `order`); then, in that
/// order, each box still active is selected and drops every later active box it overlaps
/// by more than the IoU threshold, until `limit` boxes are selected or none is active.
///
/// Returns how many boxes it selected; their indices are `order[..count]`, best first.
/// A dropped box is marked `-1` in `order` (TFLM keeps a flag per box instead).
pub(super) fn single_class_nms(
    decoded: &[f32],
    score: &impl Fn(i32) -> f32,
    pass: &Pass,
    order: &mut [i32],
    merge: &mut [i32],
) -> usize {
    let mut kept = 0;
    for b in 0..order.len() {
        let b = b as i32; // the caller bounds the boxes by i32::MAX
        if score(b) >= pass.score_threshold {
            order[kept] = b;
            kept += 1;
        }
    }
    let order = &mut order[..kept];
    stable_sort_desc(order, merge, score);
    let output_size = kept.min(pass.limit);
    let mut active = kept;
    let mut selected = 0;
    for i in 0..kept {
        if active == 0 || selected >= output_size {
            break;
        }
        let chosen = order[i];
        if chosen < 0 {
            continue;
        }
        // Positions up to `i` are read no more: the selection goes there.
        order[selected] = chosen;
        selected += 1;
        active -= 1;
        for other in &mut order[i + 1..] {
            if *other >= 0 && intersection_over_union(decoded, chosen, *other) > pass.iou_threshold
            {
                *other = -1;
                active -= 1;
            }
        }
    }
    selected
}
