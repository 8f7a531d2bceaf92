//! The two index sorts of TFLM's detection post-processing, reproduced step by step so that
//! every comparison happens in the same order as in TFLM (which matters for ties, and for
//! NaN scores, where the comparators are no strict weak order).
//!
//! * [`stable_sort_desc`]: TFLM's own merge sort (insertion sort below 20 elements, top-down
//!   merges above), stable, decreasing by a score; it sorts the boxes kept by the score
//!   threshold of one NMS pass.
//! * [`partial_sort_desc`]: `std::partial_sort` as libstdc++ (which the `tflite-micro`
//!   package is built with) implements it, a heap selection then a heap sort of the first
//!   `k` elements, with TFLM's comparator (decreasing score, the smaller index first among
//!   equal scores, compared as C++17 compares `std::tuple`s); it picks the classes of a box
//!   in the fast NMS and the best detections across classes in the regular NMS.

use core::cmp::Ordering;

/// Sorts `values` (indices) stably by decreasing `score`: `a` goes before `b` when
/// `score(a) > score(b)`; equal (or unordered) scores keep their order. `scratch` holds at
/// least `values.len()` elements; its contents afterwards are unspecified.
///
/// Below 20 elements an insertion sort (each element moved to the first position whose
/// element it beats, found by a binary search); above, the two halves (the first
/// `len / 2` elements, then the rest) sorted the same way and merged, the right element
/// taken only when it strictly beats the left one. A `scratch` too short leaves `values`
/// unsorted (never the case in this module: it sizes the scratch).
pub(super) fn stable_sort_desc(
    values: &mut [i32],
    scratch: &mut [i32],
    score: &impl Fn(i32) -> f32,
) {
    let n = values.len();
    if n < 20 {
        insertion_sort(values, score);
        return;
    }
    let Some(scratch) = scratch.get_mut(..n) else {
        return;
    };
    let half = n / 2;
    let (left_half, right_half) = values.split_at_mut(half);
    stable_sort_desc(left_half, scratch, score);
    stable_sort_desc(right_half, scratch, score);
    let (mut left, mut right) = (0, half);
    for slot in scratch.iter_mut() {
        let take_right = left >= half || (right < n && score(values[right]) > score(values[left]));
        if take_right {
            *slot = values[right];
            right += 1;
        } else {
            *slot = values[left];
            left += 1;
        }
    }
    values.copy_from_slice(scratch);
}

/// The insertion sort of [`stable_sort_desc`]: element `i` moves to the first position
/// of the sorted prefix `[0, i)` whose element it beats (`std::upper_bound`'s binary search,
/// halving the range each step), the elements from there shifting right by one.
fn insertion_sort(values: &mut [i32], score: &impl Fn(i32) -> f32) {
    for i in 0..values.len() {
        let value = values[i];
        let key = score(value);
        let (mut first, mut len) = (0, i);
        while len > 0 {
            let half = len >> 1;
            let middle = first + half;
            if key > score(values[middle]) {
                len = half;
            } else {
                first = middle + 1;
                len = len - half - 1;
            }
        }
        values[first..=i].rotate_right(1);
    }
}

/// Puts the `k` first elements of `values` (indices) under TFLM's comparator [`before`] in
/// order at its start, as libstdc++'s `std::partial_sort` does: a heap of the first `k`
/// elements whose top goes last, every later element that goes before the top swapped in
/// for it, then the heap sorted. The order of the elements after `k` is
/// libstdc++'s, which no caller reads. `k` is at most `values.len()`; `k == 0` leaves
/// `values` as it is.
pub(super) fn partial_sort_desc(values: &mut [i32], k: usize, score: &impl Fn(i32) -> f32) {
    if k == 0 || k > values.len() {
        return;
    }
    make_heap(values, k, score);
    for i in k..values.len() {
        if before(values[i], values[0], score) {
            pop_heap(values, k, i, score);
        }
    }
    let mut last = k;
    while last > 1 {
        last -= 1;
        pop_heap(values, last, last, score);
    }
}

/// TFLM's comparator of its partial sorts: `a` before `b` when the tuple `(score(a), b)`
/// is greater than `(score(b), a)` as C++17 compares tuples: `score(b) < score(a)`, or
/// neither score below the other (equal, or one NaN) and `a < b`.
fn before(a: i32, b: i32, score: &impl Fn(i32) -> f32) -> bool {
    match score(a).partial_cmp(&score(b)) {
        Some(Ordering::Greater) => true,
        Some(Ordering::Less) => false,
        // Equal or unordered (NaN): the index decides.
        _ => a < b,
    }
}

/// libstdc++'s `__make_heap` over `values[..len]`: sift down every parent, from the last
/// one (`(len - 2) / 2`) to the root.
fn make_heap(values: &mut [i32], len: usize, score: &impl Fn(i32) -> f32) {
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = values[parent];
        adjust_heap(values, parent, len, value, score);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// libstdc++'s `__pop_heap`: `values[result]` takes the heap's top and its old value
/// sifts into the heap `values[..len]` from the root.
fn pop_heap(values: &mut [i32], len: usize, result: usize, score: &impl Fn(i32) -> f32) {
    let value = values[result];
    values[result] = values[0];
    adjust_heap(values, 0, len, value, score);
}

/// libstdc++'s `__adjust_heap`: moves the hole at `hole` down to a leaf of the heap
/// `values[..len]` (a max-heap under [`before`]: its top goes last), always along the child
/// that goes later (the left one only when the right one goes before it), then pushes
/// `value` up from there (not above `hole`'s start). `len` is at least 1.
fn adjust_heap(
    values: &mut [i32],
    hole: usize,
    len: usize,
    value: i32,
    score: &impl Fn(i32) -> f32,
) {
    let top = hole;
    let mut hole = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if before(values[child], values[child - 1], score) {
            child -= 1;
        }
        values[hole] = values[child];
        hole = child;
    }
    if len & 1 == 0 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        values[hole] = values[child - 1];
        hole = child - 1;
    }
    // `__push_heap`: up while the parent goes after `value`.
    let mut parent = hole.saturating_sub(1) / 2;
    while hole > top && before(values[parent], value, score) {
        values[hole] = values[parent];
        hole = parent;
        parent = hole.saturating_sub(1) / 2;
    }
    values[hole] = value;
}
