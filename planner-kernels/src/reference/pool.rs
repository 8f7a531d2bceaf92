//! `AVERAGE_POOL_2D` and `MAX_POOL_2D`, NHWC, on int8, int16 and float32 (the types TFLM
//! runs them on). The window is clipped to the input (padding never counts as a value);
//! the integer average rounds half away from zero, the float one divides the `f32` sum
//! (in row order) by the count.

use core::ops::Range;

use planner_rt::kernel::{Data, OpView, Region};
use planner_rt::options::{Dims, Pool2dOptions};

use super::KernelError;
use super::common::float::{clamp, float_activation_range};
use super::common::region::{Plane, reach};
use super::common::window::pad_before;
use super::common::{activation_range, dims4, int16_activation_range, kind_error, output, params};

/// Which pool.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    Average,
    Max,
}

/// `AVERAGE_POOL_2D` or `MAX_POOL_2D` over the output's region (the whole output when it
/// has none), from the input's region, which must hold every pixel inside the image those
/// outputs read. The average divides by the window's pixels inside the image, as TFLM.
/// int8 and int16 sum in int32 and clamp to the activation's quantised range; float32
/// sums in `f32` and clamps to the activation's range.
pub(crate) fn pool_2d(
    mut op: OpView<'_, '_>,
    o: &Pool2dOptions,
    pool: Pool,
) -> Result<(), KernelError> {
    let xi = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let out = output(&mut op)?;
    let shapes = (xi.shape, xi.region, out.shape, out.region);
    let type_error = KernelError::Type {
        tensor: "input 0 or output 0 (pools run int8, int16 or float32, one type throughout)",
    };
    match xi.data {
        Data::I8(x) => {
            let (scale, zero) = params(out.quant, "output 0")?;
            let (lo, hi) = activation_range(o.activation, scale, zero)?;
            let y = out.i8().ok_or(type_error)?;
            let f = |w: &mut dyn Iterator<Item = i8>| int_cell(w, pool, i8::MIN, (lo, hi)) as i8;
            run(x, y, shapes, o, f)
        }
        Data::I16(x) => {
            let (scale, zero) = params(out.quant, "output 0")?;
            let (lo, hi) = int16_activation_range(o.activation, scale, zero);
            let y = out.i16().ok_or(type_error)?;
            let f = |w: &mut dyn Iterator<Item = i16>| int_cell(w, pool, i16::MIN, (lo, hi)) as i16;
            run(x, y, shapes, o, f)
        }
        Data::F32(x) => {
            let (lo, hi) = float_activation_range(o.activation)?;
            let y = out.f32().ok_or(type_error)?;
            run(x, y, shapes, o, |w| float_cell(w, pool, (lo, hi)))
        }
        _ => Err(kind_error(&xi, "input 0")),
    }
}

/// One integer output of a window's values: the largest (from the type's lowest), or the
/// int32 sum divided by the count, rounded half away from zero (0 for an empty window),
/// then clamped to `[lo, hi]`.
fn int_cell<T: Copy + Into<i32>>(
    window: &mut dyn Iterator<Item = T>,
    pool: Pool,
    lowest: T,
    (lo, hi): (i32, i32),
) -> i32 {
    let (mut sum, mut max, mut count) = (0i32, lowest.into(), 0i32);
    for v in window {
        let v: i32 = v.into();
        sum = sum.wrapping_add(v);
        max = max.max(v);
        count += 1;
    }
    let v = match pool {
        Pool::Max => max,
        Pool::Average if count == 0 => 0,
        Pool::Average if sum > 0 => (sum + count / 2) / count,
        Pool::Average => (sum - count / 2) / count,
    };
    v.clamp(lo, hi)
}

/// One float output of a window's values: the largest (from `f32::MIN`, a NaN never
/// taken, as C++'s `std::max(max, v)`), or the `f32` sum in row order divided by the
/// count (0 for an empty window), then clamped as TFLite's `ActivationFunctionWithMinMax`.
fn float_cell(window: &mut dyn Iterator<Item = f32>, pool: Pool, (lo, hi): (f32, f32)) -> f32 {
    let (mut sum, mut max, mut count) = (0.0f32, f32::MIN, 0.0f32);
    for v in window {
        sum += v;
        if max < v {
            max = v;
        }
        count += 1.0;
    }
    let v = match pool {
        Pool::Max => max,
        Pool::Average if count == 0.0 => 0.0,
        Pool::Average => sum / count,
    };
    clamp(v, lo, hi)
}

/// The input's and output's shapes and regions.
type Shapes<'a> = (&'a [usize], Option<Region>, &'a [usize], Option<Region>);

/// Runs a pool over the output's region: `cell` gives each output value from the values
/// of its window inside the input, in row order.
fn run<T: Copy>(
    x: &[T],
    y: &mut [T],
    (x_shape, x_region, y_shape, y_region): Shapes<'_>,
    o: &Pool2dOptions,
    cell: impl Fn(&mut dyn Iterator<Item = T>) -> T,
) -> Result<(), KernelError> {
    let shape = |s: &[usize]| {
        dims4(s).ok_or(KernelError::Shape {
            what: "rank above 4",
        })
    };
    let [n, in_h, in_w, c] = shape(x_shape)?;
    let [on, out_h, out_w, oc] = shape(y_shape)?;
    let short = KernelError::Shape {
        what: "pool input and output do not fit",
    };
    if on != n || oc != c {
        return Err(short);
    }
    let xp = Plane::new(x_shape, x_region, x.len())?;
    let yp = Plane::new(y_shape, y_region, y.len())?;
    let win = Window::of(o, [in_h, in_w], [out_h, out_w])?;
    xp.holds(
        reach(yp.rows(), win.h.stride, 1, win.h.pad, win.h.filter, in_h),
        reach(yp.cols(), win.w.stride, 1, win.w.pad, win.w.filter, in_w),
    )?;
    for b in 0..n {
        for oy in yp.rows() {
            let rows = win.rows(oy, in_h);
            for ox in yp.cols() {
                let cols = win.cols(ox, in_w);
                // The window's last pixel's channels lie within the view: so do all.
                if !rows.is_empty() && !cols.is_empty() {
                    let end = xp.at(b, rows.end - 1, cols.end - 1).wrapping_add(c);
                    if end > x.len() || xp.at(b, rows.start, cols.start) > end {
                        return Err(short);
                    }
                }
                let at = yp.at(b, oy, ox);
                let out = y.get_mut(at..at.wrapping_add(c)).ok_or(short)?;
                for (ch, out) in out.iter_mut().enumerate() {
                    let mut window = rows.clone().flat_map(|iy| {
                        cols.clone()
                            .map(move |ix| x[xp.at(b, iy, ix).wrapping_add(ch)])
                    });
                    *out = cell(&mut window);
                }
            }
        }
    }
    Ok(())
}

/// A pooling window's strides, filter size and padding before the first row and column,
/// read from its options (strides and filter sizes above 0) for input `[h, w]` and output
/// `[h, w]`: what AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D share.
pub(crate) struct Window {
    /// Along the rows.
    pub(crate) h: Axis,
    /// Along the columns.
    pub(crate) w: Axis,
}

/// A pooling window along one axis: its stride, its length and the padding before it.
#[derive(Clone, Copy)]
pub(crate) struct Axis {
    pub(crate) stride: usize,
    pub(crate) filter: usize,
    pub(crate) pad: usize,
}

impl Axis {
    /// The part of an input of `size` that output position `o`'s window covers (padding
    /// excluded; empty when it covers none).
    fn covered(&self, o: usize, size: usize) -> Range<usize> {
        inside(o * self.stride, self.pad, self.filter, size)
    }
}

impl Window {
    pub(crate) fn of(
        o: &Pool2dOptions,
        [in_h, in_w]: [usize; 2],
        [out_h, out_w]: [usize; 2],
    ) -> Result<Window, KernelError> {
        let get = |v: i32, what| {
            usize::try_from(v)
                .ok()
                .filter(|&v| v > 0)
                .ok_or(KernelError::Options { what })
        };
        let axis = |stride: i32,
                    filter: i32,
                    dim: usize,
                    size: usize,
                    out: usize|
         -> Result<Axis, KernelError> {
            let (stride, filter) = (get(stride, "stride")?, get(filter, "filter")?);
            let pad = pad_before(o.padding, &Dims::EMPTY, dim, stride, 1, size, filter, out)?;
            Ok(Axis {
                stride,
                filter,
                pad,
            })
        };
        Ok(Window {
            h: axis(o.stride_h, o.filter_h, 0, in_h, out_h)?,
            w: axis(o.stride_w, o.filter_w, 1, in_w, out_w)?,
        })
    }

    /// The rows of an input of `in_h` rows that output row `oy`'s window covers (padding
    /// excluded; empty when it covers none).
    pub(crate) fn rows(&self, oy: usize, in_h: usize) -> Range<usize> {
        self.h.covered(oy, in_h)
    }

    /// The columns of an input of `in_w` columns that output column `ox`'s window covers.
    pub(crate) fn cols(&self, ox: usize, in_w: usize) -> Range<usize> {
        self.w.covered(ox, in_w)
    }
}

/// The part inside `0..size` of the `f` inputs from `at - pad`.
fn inside(at: usize, pad: usize, f: usize, size: usize) -> Range<usize> {
    let origin = at as isize - pad as isize;
    let start = origin.max(0) as usize;
    let end = (origin + f as isize).min(size as isize).max(0) as usize;
    start..end.max(start)
}
