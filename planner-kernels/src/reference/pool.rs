//! `AVERAGE_POOL_2D` and `MAX_POOL_2D`, int8, NHWC. The window is clipped to the input
//! (padding never counts as a value); the average rounds half away from zero.

use planner_rt::kernel::OpView;
use planner_rt::options::{Dims, Pool2dOptions};

use super::KernelError;
use super::common::region::{Plane, reach};
use super::common::window::pad_before;
use super::common::{activation_range, dims4, input_i8, output, params};

/// Which pool.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    Average,
    Max,
}

/// `AVERAGE_POOL_2D` or `MAX_POOL_2D` over the output's region (the whole output when it
/// has none), from the input's region, which must hold every pixel inside the image those
/// outputs read. The average divides by the window's pixels inside the image, as TFLM.
pub(crate) fn pool_2d(
    mut op: OpView<'_, '_>,
    o: &Pool2dOptions,
    pool: Pool,
) -> Result<(), KernelError> {
    let (x, xi) = input_i8(&op, 0, "input 0")?;
    let out = output(&mut op)?;
    let (out_scale, out_zero) = params(out.quant, "output 0")?;
    let shape = |s: &[usize]| {
        dims4(s).ok_or(KernelError::Shape {
            what: "rank above 4",
        })
    };
    let [n, in_h, in_w, c] = shape(xi.shape)?;
    let [on, out_h, out_w, oc] = shape(out.shape)?;
    let (out_shape, out_region) = (out.shape, out.region);
    let y = out.i8().ok_or(KernelError::Type { tensor: "output 0" })?;
    if on != n || oc != c {
        return Err(KernelError::Shape {
            what: "pool input and output do not fit",
        });
    }
    let xp = Plane::new(xi.shape, xi.region, x.len())?;
    let yp = Plane::new(out_shape, out_region, y.len())?;
    let Window {
        s_h,
        s_w,
        f_h,
        f_w,
        pad_h,
        pad_w,
    } = Window::of(o, [in_h, in_w], [out_h, out_w])?;
    xp.holds(
        reach(yp.rows(), s_h, 1, pad_h, f_h, in_h),
        reach(yp.cols(), s_w, 1, pad_w, f_w, in_w),
    )?;
    let (lo, hi) = activation_range(o.activation, out_scale, out_zero)?;
    let short = KernelError::Shape {
        what: "pool input and output do not fit",
    };
    for b in 0..n {
        for oy in yp.rows() {
            // The window's rows inside the input: [y0, y1).
            let origin_y = (oy * s_h) as isize - pad_h as isize;
            let y0 = origin_y.max(0) as usize;
            let y1 = ((origin_y + f_h as isize).min(in_h as isize)).max(0) as usize;
            for ox in yp.cols() {
                let origin_x = (ox * s_w) as isize - pad_w as isize;
                let x0 = origin_x.max(0) as usize;
                let x1 = ((origin_x + f_w as isize).min(in_w as isize)).max(0) as usize;
                let at = yp.at(b, oy, ox);
                let out = y.get_mut(at..at.wrapping_add(c)).ok_or(short)?;
                for (ch, out) in out.iter_mut().enumerate() {
                    let mut sum: i32 = 0;
                    let mut max = i32::from(i8::MIN);
                    let mut count: i32 = 0;
                    for iy in y0..y1 {
                        for ix in x0..x1 {
                            let v = x.get(xp.at(b, iy, ix).wrapping_add(ch)).ok_or(short)?;
                            let v = i32::from(*v);
                            sum += v;
                            max = max.max(v);
                            count += 1;
                        }
                    }
                    let v = match pool {
                        Pool::Max => max,
                        Pool::Average if count == 0 => 0,
                        Pool::Average if sum > 0 => (sum + count / 2) / count,
                        Pool::Average => (sum - count / 2) / count,
                    };
                    *out = v.clamp(lo, hi) as i8;
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
    pub(crate) s_h: usize,
    pub(crate) s_w: usize,
    pub(crate) f_h: usize,
    pub(crate) f_w: usize,
    pub(crate) pad_h: usize,
    pub(crate) pad_w: usize,
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
        let (s_h, s_w) = (get(o.stride_h, "stride")?, get(o.stride_w, "stride")?);
        let (f_h, f_w) = (get(o.filter_h, "filter")?, get(o.filter_w, "filter")?);
        Ok(Window {
            s_h,
            s_w,
            f_h,
            f_w,
            pad_h: pad_before(o.padding, &Dims::EMPTY, 0, s_h, 1, in_h, f_h, out_h)?,
            pad_w: pad_before(o.padding, &Dims::EMPTY, 1, s_w, 1, in_w, f_w, out_w)?,
        })
    }
}
