//! Patch regions ([`Region`]): where a pixel of a view lies in its data, which input
//! pixels an output region reads, and the refusal of a region by a kernel that does not
//! run on one.
//!
//! A kernel that honours regions computes the pixels of its output's region (all of
//! them when the output has none) exactly as it computes them on the whole tensor: it
//! reads input pixels at whole-tensor coordinates, pads only outside the image (the
//! view's shape is the whole tensor's) and finds each pixel in the data through a
//! [`Plane`]. The whole tensor is the region that covers everything, so each kernel has
//! one loop for both.

use core::ops::Range;

use planner_rt::kernel::{OpView, Region};

use crate::reference::{KernelError, common::dims4};

/// Where the pixels of a `[n, h, w, c]` view lie in its data: the whole tensor (no
/// region, every batch), or a region in the dense or whole layout (batch 0 only, as
/// [`Region::pixel`] reads them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plane {
    /// Channels.
    pub(crate) c: usize,
    /// The pixels the view holds, in whole-tensor coordinates (the whole image when the
    /// view has no region).
    pub(crate) region: Region,
    /// The index of channel 0 of pixel `(0, 0)`, wrapping: for a dense region, the
    /// region's first pixel moved back by `top` rows and `left` columns, which may lie
    /// before the data; [`Plane::at`] adds it back for a pixel inside the region.
    base: usize,
    /// Elements from one row to the next.
    row: usize,
    /// Elements from one batch to the next.
    batch: usize,
}

/// The error for a region view that does not fit its tensor.
const OUTSIDE: KernelError = KernelError::Shape {
    what: "a region is empty or reaches outside its tensor, or its view's length is neither the region's (dense) nor the tensor's (whole); plan the region inside the tensor",
};

impl Plane {
    /// The plane of a view of `len` elements of a tensor of shape `shape` (rank at most
    /// 4, leading dimensions of 1 added) over `region` (`None`: the whole tensor, `len`
    /// its element count). A region needs a `[1, h, w, c]` shape, a non-empty extent
    /// inside the image and a dense or whole length.
    pub(crate) fn new(
        shape: &[usize],
        region: Option<Region>,
        len: usize,
    ) -> Result<Plane, KernelError> {
        let [n, h, w, c] = dims4(shape).ok_or(KernelError::Shape {
            what: "rank above 4",
        })?;
        let Some(r) = region else {
            let elements = [n, h, w, c]
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d));
            if elements != Some(len) {
                return Err(KernelError::Shape {
                    what: "a tensor's length differs from its shape",
                });
            }
            return Ok(Plane {
                c,
                region: Region::new(0, 0, h, w),
                base: 0,
                row: w * c,
                batch: h * w * c,
            });
        };
        if shape.len() != 4 || n != 1 {
            return Err(KernelError::Shape {
                what: "a region view of a tensor whose shape is not [1, h, w, c]; plan patches only over single-batch 4-D tensors",
            });
        }
        let inside = |start: usize, extent: usize, size: usize| {
            extent > 0 && start.checked_add(extent).is_some_and(|end| end <= size)
        };
        if !inside(r.top, r.height, h) || !inside(r.left, r.width, w) {
            return Err(OUTSIDE);
        }
        let origin = r.pixel(shape, len, r.top, r.left).ok_or(OUTSIDE)?;
        let row = if r.height > 1 {
            let next = r.pixel(shape, len, r.top + 1, r.left).ok_or(OUTSIDE)?;
            next.checked_sub(origin).ok_or(OUTSIDE)?
        } else {
            // One row: the row step is never taken.
            0
        };
        Ok(Plane {
            c,
            region: r,
            base: origin
                .wrapping_sub(r.top.wrapping_mul(row))
                .wrapping_sub(r.left.wrapping_mul(c)),
            row,
            batch: 0,
        })
    }

    /// The index of channel 0 of pixel `(y, x)` of batch `b`, for a pixel inside the
    /// region and `b < n` (elsewhere a meaningless index: callers check the region first
    /// and read through `get`).
    #[inline(always)]
    pub(crate) fn at(&self, b: usize, y: usize, x: usize) -> usize {
        self.base
            .wrapping_add(b.wrapping_mul(self.batch))
            .wrapping_add(y.wrapping_mul(self.row))
            .wrapping_add(x.wrapping_mul(self.c))
    }

    /// The region's rows.
    pub(crate) fn rows(&self) -> Range<usize> {
        self.region.top..self.region.top + self.region.height
    }

    /// The region's columns.
    pub(crate) fn cols(&self) -> Range<usize> {
        self.region.left..self.region.left + self.region.width
    }

    /// `(base, strides)` of the plane as the last 4 of `RANK` dimensions: element
    /// `(b, y, x, ch)` is at `base + b · s[0] + y · s[1] + x · s[2] + ch · s[3]`
    /// (wrapping).
    pub(crate) fn strides(&self) -> (usize, [usize; 4]) {
        (self.base, [self.batch, self.row, self.c, 1])
    }

    /// Checks that the region holds the input rows and columns `reach` says an output
    /// region reads (`None`: none inside the image along that axis, so no pixel is read
    /// at all).
    pub(crate) fn holds(
        &self,
        rows: Option<(usize, usize)>,
        cols: Option<(usize, usize)>,
    ) -> Result<(), KernelError> {
        let within = |(first, last): (usize, usize), range: Range<usize>| {
            range.start <= first && last < range.end
        };
        let (Some(rows), Some(cols)) = (rows, cols) else {
            return Ok(());
        };
        if within(rows, self.rows()) && within(cols, self.cols()) {
            Ok(())
        } else {
            Err(KernelError::Shape {
                what: "the input's region lacks pixels inside the image that the output's region reads; trace the input region back through the op's window (kernel, stride, dilation, padding)",
            })
        }
    }
}

/// The first and last input index that the windows of outputs `out` read along an axis
/// of `size` inputs: tap `k` of output `o` is input `o · stride + k · dilation - pad`,
/// read when inside `0..size` (padding is never read). `None` when no tap is inside.
pub(crate) fn reach(
    out: Range<usize>,
    stride: usize,
    dilation: usize,
    pad: usize,
    filter: usize,
    size: usize,
) -> Option<(usize, usize)> {
    let mut span: Option<(usize, usize)> = None;
    for o in out {
        for k in 0..filter {
            let Some(i) = (o * stride + k * dilation).checked_sub(pad) else {
                continue;
            };
            if i < size {
                span = Some(span.map_or((i, i), |(a, b)| (a.min(i), b.max(i))));
            }
        }
    }
    span
}

/// Refuses an op whose tensors carry a region other than on its first `inputs` inputs
/// and output 0 (the tensors a region-aware kernel reads as images): `inputs` is 0 for
/// a kernel that does not run on regions.
pub(crate) fn only_on(op: &OpView<'_, '_>, inputs: usize) -> Result<(), KernelError> {
    let refuse = |tensor| Err(KernelError::Region { tensor });
    for (i, x) in op.inputs.iter().enumerate() {
        if i >= inputs && x.is_some_and(|x| x.region.is_some()) {
            return refuse(match i {
                0 => "input 0",
                1 => "input 1",
                2 => "input 2",
                _ => "an input past the second",
            });
        }
    }
    for (i, y) in op.outputs.iter().enumerate() {
        if (inputs == 0 || i > 0) && y.region.is_some() {
            return refuse(if i == 0 {
                "output 0"
            } else {
                "an output past the first"
            });
        }
    }
    if op.scratch.iter().any(|s| s.region.is_some()) {
        return refuse("a scratch tensor");
    }
    if op.variables.iter().any(|v| v.region.is_some()) {
        return refuse("a variable");
    }
    Ok(())
}
