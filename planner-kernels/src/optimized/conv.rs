//! The fast int8 `CONV_2D`: a GEMM over the input pixels for a 1x1 filter without padding,
//! im2col rows for the others; anything else runs the reference kernel.

use planner_rt::kernel::OpView;
use planner_rt::options::Conv2dOptions;

use super::mac::{Requant, gemm_s8};
use super::{Constants, IM2COL_STACK, filter_scales, int8_whole, int32_bias};
use crate::prepare::{FilterLayout, RequantInputs, im2col_bytes};
use crate::reference::common::window::{Spatial, Window};
use crate::reference::conv::Operands;
use crate::reference::{self, KernelError, common::activation_range};

/// `CONV_2D` (module docs): the fast path when it applies, the reference kernel otherwise.
pub(crate) fn conv_2d(op: OpView<'_, '_>, o: &Conv2dOptions) -> Result<(), KernelError> {
    match Conv::plan(&op, o)? {
        Some(conv) => conv.run(op),
        None => reference::conv::conv_2d(op, o),
    }
}

/// How the input reaches the GEMM.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// 1x1 filter, no padding: the input pixels are the GEMM's rows.
    Pointwise,
    /// im2col rows in the first scratch tensor (`true`) or on the stack.
    Im2col(bool),
}

/// A checked int8 `CONV_2D` the fast path runs.
struct Conv<'a> {
    x: &'a [i8],
    w: &'a [i8],
    consts: Constants<'a>,
    /// Input `[n, h, w, c]`, output `[_, oh, ow, c_out]`, filter `[_, fh, fw, fc]`.
    x_dims: [usize; 4],
    y_dims: [usize; 4],
    f_dims: [usize; 4],
    win: Window,
    in_zero: i8,
    out: (i32, i32, i32),
    path: Path,
}

impl<'a> Conv<'a> {
    /// The op's fast plan; `None` when the reference kernel runs it (another element type,
    /// a region, or a shape the reference refuses, which it then reports).
    fn plan(op: &OpView<'_, 'a>, o: &Conv2dOptions) -> Result<Option<Self>, KernelError> {
        if !int8_whole(op) || !int32_bias(op) {
            return Ok(None);
        }
        let (Some(xi), Some(out)) = (op.input(0), op.outputs.first()) else {
            return Ok(None);
        };
        let (Some(x), Ok(ops)) = (
            xi.i8(),
            Operands::new(op, &xi, out.shape, out.quant, |[out_c, ..]| out_c),
        ) else {
            return Ok(None);
        };
        let ([n, in_h, in_w, in_c], [out_c, f_h, f_w, f_c]) = (ops.x, ops.f);
        let [on, out_h, out_w, oc] = ops.y;
        let ((in_scale, in_zero), (out_scale, out_zero)) = (ops.input, ops.output);
        let fits = on == n
            && oc == out_c
            && f_c != 0
            && in_c % f_c == 0
            && out_c % (in_c / f_c) == 0
            && Some(ops.w.len())
                == [out_c, f_h, f_w, f_c]
                    .iter()
                    .try_fold(1usize, |a, &d| a.checked_mul(d))
            && Some(x.len())
                == [n, in_h, in_w, in_c]
                    .iter()
                    .try_fold(1usize, |a, &d| a.checked_mul(d))
            && Some(y_len(out))
                == [n, out_h, out_w, out_c]
                    .iter()
                    .try_fold(1usize, |a, &d| a.checked_mul(d));
        let Ok(in_zero8) = i8::try_from(in_zero) else {
            return Ok(None);
        };
        if !fits {
            return Ok(None);
        }
        let Ok(win) = Spatial::from(o).window((in_h, in_w), (f_h, f_w), (out_h, out_w)) else {
            return Ok(None);
        };
        let Ok((lo, hi)) = activation_range(o.activation, out_scale, out_zero) else {
            return Ok(None);
        };
        if lo > hi {
            return Ok(None);
        }
        // A 1x1 filter without padding on either side reads input pixels only.
        let inside = (out_h - 1) * win.stride.0 < in_h && (out_w - 1) * win.stride.1 < in_w;
        let path = if f_h == 1 && f_w == 1 && win.pad == (0, 0) && inside {
            Path::Pointwise
        } else {
            let row = f_h * f_w * f_c;
            // A kernel scratch tensor the plan gave the op (`[kernels] set = "optimized"`):
            // room for IM2COL_ROWS rows at least.
            let scratch = op.scratch.first().is_some_and(|s| match &s.data {
                planner_rt::kernel::DataMut::I8(d) => {
                    im2col_bytes(f_h, f_w, f_c).is_some_and(|r| d.len() >= r)
                }
                _ => false,
            });
            if !scratch && row > IM2COL_STACK {
                return Ok(None);
            }
            Path::Im2col(scratch)
        };
        let consts = Constants::new(
            op,
            RequantInputs {
                filter: ops.w,
                layout: FilterLayout::ChannelFirst,
                channels: out_c,
                bias: ops.bias,
                input_scale: in_scale,
                input_zero_point: in_zero,
                filter_scales: filter_scales(&ops.wq),
                output_scale: out_scale,
            },
        )?;
        Ok(Some(Conv {
            x,
            w: ops.w,
            consts,
            x_dims: ops.x,
            y_dims: ops.y,
            f_dims: ops.f,
            win,
            in_zero: in_zero8,
            out: (out_zero, lo, hi),
            path,
        }))
    }

    /// Runs the plan, writing output 0: im2col rows in the op's planned kernel scratch, or
    /// in a stack buffer when the plan gave it none.
    fn run(self, op: OpView<'_, '_>) -> Result<(), KernelError> {
        match self.path {
            Path::Im2col(false) => self.run_on_stack(op),
            _ => self.run_in(op, None),
        }
    }

    /// [`Conv::run`] with its im2col rows in a stack buffer of [`IM2COL_STACK`] bytes, in a
    /// frame of its own so the planned path's stack holds no such buffer.
    #[inline(never)]
    fn run_on_stack(self, op: OpView<'_, '_>) -> Result<(), KernelError> {
        let mut stack = [0i8; IM2COL_STACK];
        self.run_in(op, Some(&mut stack))
    }

    /// Runs the plan with im2col rows in `stack`, or (`None`) in the op's first scratch
    /// tensor.
    fn run_in(self, op: OpView<'_, '_>, stack: Option<&mut [i8]>) -> Result<(), KernelError> {
        let OpView {
            outputs, scratch, ..
        } = op;
        let buf: &mut [i8] = match (stack, scratch.first_mut().and_then(|s| s.i8())) {
            (Some(s), _) | (None, Some(s)) => s,
            (None, None) => &mut [],
        };
        let y = outputs
            .first_mut()
            .and_then(|y| y.i8())
            .ok_or(KernelError::Type { tensor: "output 0" })?;
        let [n, in_h, in_w, in_c] = self.x_dims;
        let [_, out_h, out_w, out_c] = self.y_dims;
        let [_, f_h, f_w, f_c] = self.f_dims;
        let groups = in_c / f_c;
        let per_group = out_c / groups;
        let k = f_h * f_w * f_c;
        let (x, w) = (self.x, self.w);
        let (sh, sw) = self.win.stride;
        let pixels = out_h * out_w;
        for g in 0..groups {
            self.consts
                .each(g * per_group..(g + 1) * per_group, self.out, |c0, q| {
                    let wq = &w[c0 * k..];
                    match self.path {
                        Path::Pointwise if sh == 1 && sw == 1 => {
                            // Every pixel of every batch, one after the other.
                            let xs = &x[g * f_c..];
                            gemm_s8(xs, in_c, n * pixels, wq, k, q, &mut y[c0..], out_c);
                        }
                        Path::Pointwise => {
                            for b in 0..n {
                                for oy in 0..out_h {
                                    let xs = &x[((b * in_h + oy * sh) * in_w) * in_c + g * f_c..];
                                    let ys = &mut y[(b * pixels + oy * out_w) * out_c + c0..];
                                    gemm_s8(xs, sw * in_c, out_w, wq, k, q, ys, out_c);
                                }
                            }
                        }
                        Path::Im2col(_) => self.im2col(g, buf, q, wq, y, c0),
                    }
                })?;
        }
        Ok(())
    }

    /// The output channels `c0..c0 + q.channels()` of group `g` through im2col rows in
    /// `buf` (at least one row long).
    fn im2col(&self, g: usize, buf: &mut [i8], q: &Requant<'_>, w: &[i8], y: &mut [i8], c0: usize) {
        let [n, _, _, _] = self.x_dims;
        let [_, out_h, out_w, out_c] = self.y_dims;
        let [_, f_h, f_w, f_c] = self.f_dims;
        let k = f_h * f_w * f_c;
        let rows_per_block = (buf.len() / k.max(1)).max(1);
        let pixels = out_h * out_w;
        for b in 0..n {
            let mut p0 = 0;
            while p0 < pixels {
                let rows = rows_per_block.min(pixels - p0);
                for (r, row) in buf.chunks_exact_mut(k.max(1)).take(rows).enumerate() {
                    let p = p0 + r;
                    self.fill_row(b, g, p / out_w, p % out_w, row);
                }
                let ys = &mut y[(b * pixels + p0) * out_c + c0..];
                gemm_s8(buf, k, rows, w, k, q, ys, out_c);
                p0 += rows;
            }
        }
    }

    /// Writes the im2col row of output pixel `(oy, ox)` of batch `b`, group `g`: for each
    /// filter tap `(fy, fx)` in order, the group's `fc` input channels at the tap, or the
    /// input zero point where the tap lies outside the image.
    fn fill_row(&self, b: usize, g: usize, oy: usize, ox: usize, row: &mut [i8]) {
        let [_, in_h, in_w, in_c] = self.x_dims;
        let [_, f_h, f_w, f_c] = self.f_dims;
        let win = &self.win;
        let (dh, dw) = win.dilation;
        let x0 = (ox * win.stride.1).wrapping_sub(win.pad.1);
        for (fy, taps) in row.chunks_exact_mut(f_w * f_c).take(f_h).enumerate() {
            let iy = (oy * win.stride.0 + fy * dh).wrapping_sub(win.pad.0);
            if iy >= in_h {
                taps.fill(self.in_zero);
                continue;
            }
            let image_row = (b * in_h + iy) * in_w * in_c + g * f_c;
            // Contiguous taps: undilated, every channel of each pixel, all inside.
            let last = x0.wrapping_add((f_w - 1) * dw);
            if dw == 1 && f_c == in_c && x0 < in_w && last < in_w {
                let at = image_row + x0 * in_c;
                taps.copy_from_slice(&self.x[at..at + f_w * f_c]);
                continue;
            }
            for (fx, tap) in taps.chunks_exact_mut(f_c).enumerate() {
                let ix = x0.wrapping_add(fx * dw);
                if ix < in_w {
                    let at = image_row + ix * in_c;
                    tap.copy_from_slice(&self.x[at..at + f_c]);
                } else {
                    tap.fill(self.in_zero);
                }
            }
        }
    }
}

/// The elements of an output view (0 for another type than int8).
fn y_len(out: &planner_rt::kernel::Out<'_>) -> usize {
    match &out.data {
        planner_rt::kernel::DataMut::I8(d) => d.len(),
        _ => 0,
    }
}
