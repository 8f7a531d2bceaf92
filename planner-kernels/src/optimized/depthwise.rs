//! The fast int8 `DEPTHWISE_CONV_2D`, out of place and in place: interior pixels with depth
//! multiplier 1 through [`depthwise_s8`], the others through [`border`]; anything else runs
//! the reference kernel.

use planner_rt::kernel::{Data, OpView};
use planner_rt::options::DepthwiseConv2dOptions;

use super::mac::{DwGeometry, Requant, Unpacked, depthwise_s8, gemm_s8, mac_row};
use super::{CHUNK, Constants, IM2COL_STACK, filter_scales, int8_whole, int32_bias};

/// Bytes of the stack copy of an output row's input rows (see `Dw::padded_row`).
const DW_ROWS: usize = 4096;
/// Bytes of the stack buffer of input rows expanded for a depth multiplier above 1.
const EXPAND: usize = 2048;
use crate::prepare::{FilterLayout, RequantInputs};
use crate::reference::conv::Depthwise;
use crate::reference::{self, KernelError};

/// `DEPTHWISE_CONV_2D` (module docs): the fast path when it applies, the reference kernel
/// otherwise.
pub(crate) fn depthwise_conv_2d(
    op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let plan = if int8_whole(&op) && int32_bias(&op) {
        Dw::plan(&op, o)?
    } else {
        None
    };
    let Some(d) = plan else {
        return reference::conv::depthwise_conv_2d(op, o);
    };
    let Some(x) = op.input(0).and_then(|x| x.i8()) else {
        return reference::conv::depthwise_conv_2d(op, o);
    };
    if x.len() != d.d.input_len() {
        return reference::conv::depthwise_conv_2d(op, o);
    }
    let out_len = d.d.output_len();
    let Some(y) = op.outputs.first_mut().and_then(|y| y.i8()) else {
        return Err(KernelError::Type { tensor: "output 0" });
    };
    if y.len() != out_len {
        return reference::conv::depthwise_conv_2d(op, o);
    }
    let image = d.d.win.in_h * d.d.win.in_w * d.d.in_c;
    let out_image = d.d.out_h * d.d.out_w * d.d.out_c;
    if d.d.in_c == 1 && d.d.f_h * d.d.f_w * CHUNK.min(d.d.out_c) <= IM2COL_STACK {
        for b in 0..d.d.n {
            let x = &x[b * image..(b + 1) * image];
            let y = &mut y[b * out_image..(b + 1) * out_image];
            d.consts
                .each(0..d.d.out_c, (d.d.out_zero, d.d.lo, d.d.hi), |c0, q| {
                    d.single_channel(x, c0, q, y);
                })?;
        }
        return Ok(());
    }
    for b in 0..d.d.n {
        let src = Source {
            x: &x[b * image..(b + 1) * image],
            row: d.d.win.in_w * d.d.in_c,
            pixel: d.d.in_c,
            first: 0,
        };
        let y = &mut y[b * out_image..(b + 1) * out_image];
        d.consts
            .each(0..d.d.out_c, (d.d.out_zero, d.d.lo, d.d.hi), |c0, q| {
                d.channels(&src, c0, q, y);
            })?;
    }
    Ok(())
}

/// `DEPTHWISE_CONV_2D` in place (the reference's contract: the output takes over the
/// input's bytes, depth multiplier 1, no more output pixels than input pixels, the op's
/// last scratch tensor as the temporary): as many channels at a time as the temporary
/// holds (at most [`CHUNK`]), copied there pixel by pixel, then computed from it into their
/// output positions, which held only those channels' inputs or an earlier batch's.
pub(crate) fn depthwise_conv_2d_in_place(
    op: OpView<'_, '_>,
    o: &DepthwiseConv2dOptions,
) -> Result<(), KernelError> {
    let Some((d, at)) = in_place_plan(&op, o)? else {
        return reference::conv::depthwise_conv_2d_in_place(op, o);
    };
    let OpView {
        outputs, scratch, ..
    } = op;
    let (Some(y), Some(temp)) = (
        outputs.get_mut(at).and_then(|y| y.i8()),
        scratch.last_mut().and_then(|t| t.i8()),
    ) else {
        return Err(KernelError::Missing {
            tensor: "the in-place buffer or temporary",
        });
    };
    let (in_h, in_w, c_n) = (d.d.win.in_h, d.d.win.in_w, d.d.in_c);
    let (in_pixels, out_pixels) = (in_h * in_w, d.d.out_h * d.d.out_w);
    let group = (temp.len() / in_pixels).min(CHUNK);
    for b in 0..d.d.n {
        let mut c0 = 0;
        while c0 < c_n {
            let g = group.min(c_n - c0);
            let temp = &mut temp[..in_pixels * g];
            let image = &y[b * in_pixels * c_n..(b + 1) * in_pixels * c_n];
            for (t, px) in temp.chunks_exact_mut(g).zip(image.chunks_exact(c_n)) {
                t.copy_from_slice(&px[c0..c0 + g]);
            }
            let src = Source {
                x: temp,
                row: in_w * g,
                pixel: g,
                first: c0,
            };
            let out_image = &mut y[b * out_pixels * c_n..(b * out_pixels + out_pixels) * c_n];
            d.consts
                .each(c0..c0 + g, (d.d.out_zero, d.d.lo, d.d.hi), |first, q| {
                    d.channels(&src, first, q, out_image);
                })?;
            c0 += g;
        }
    }
    Ok(())
}

/// The in-place op's fast plan, with the output its input's bytes are in; `None` when the
/// reference kernel runs it (and reports what it refuses).
fn in_place_plan<'a>(
    op: &OpView<'_, 'a>,
    o: &DepthwiseConv2dOptions,
) -> Result<Option<(Dw<'a>, usize)>, KernelError> {
    let Some(xi) = op.input(0) else {
        return Ok(None);
    };
    let Data::InPlace(at) = xi.data else {
        return Ok(None);
    };
    let Some(out) = op.outputs.get(at) else {
        return Ok(None);
    };
    let int8 = matches!(out.data, planner_rt::kernel::DataMut::I8(_));
    if !int8 || out.region.is_some() || !int32_bias(op) {
        return Ok(None);
    }
    let Some(d) = Dw::plan(op, o)? else {
        return Ok(None);
    };
    let (in_pixels, out_pixels) = (d.d.win.in_h * d.d.win.in_w, d.d.out_h * d.d.out_w);
    let temp = op.scratch.last().and_then(|t| match &t.data {
        planner_rt::kernel::DataMut::I8(t) => Some(t.len()),
        _ => None,
    });
    let y_len = match &out.data {
        planner_rt::kernel::DataMut::I8(y) => y.len(),
        _ => 0,
    };
    let ok = d.d.multiplier == 1
        && out_pixels <= in_pixels
        && in_pixels > 0
        && temp.is_some_and(|t| t >= in_pixels)
        && y_len == d.d.input_len().max(d.d.output_len());
    Ok(ok.then_some((d, at)))
}

/// Where the input pixels of one image lie: channel `c` of pixel `(iy, ix)` at `iy · row +
/// ix · pixel + (c - first)`.
struct Source<'x> {
    x: &'x [i8],
    row: usize,
    pixel: usize,
    first: usize,
}

/// A checked int8 depthwise op and its constants.
struct Dw<'a> {
    d: Depthwise<'a>,
    consts: Constants<'a>,
}

impl<'a> Dw<'a> {
    /// The checked op (the reference's checks) and its constants; `None` when the reference
    /// kernel runs it.
    fn plan(op: &OpView<'_, 'a>, o: &DepthwiseConv2dOptions) -> Result<Option<Self>, KernelError> {
        let Some(out) = op.outputs.first() else {
            return Ok(None);
        };
        let Ok(d) = Depthwise::new(op, o, out.shape, out.quant) else {
            return Ok(None);
        };
        if d.lo > d.hi || d.f_h == 0 || d.f_w == 0 || d.out_c == 0 {
            return Ok(None);
        }
        let consts = Constants::new(
            op,
            RequantInputs {
                filter: d.w,
                layout: FilterLayout::ChannelLast,
                channels: d.out_c,
                bias: d.bias,
                input_scale: d.in_scale,
                input_zero_point: d.in_zero,
                filter_scales: filter_scales(&d.wq),
                output_scale: d.out_scale,
            },
        )?;
        Ok(Some(Dw { d, consts }))
    }

    /// Output channels `c0..c0 + q.channels()` of one image from `src` into `y` (the
    /// image's output, `[oh, ow, c_out]`).
    fn channels(&self, src: &Source<'_>, c0: usize, q: &Requant<'_>, y: &mut [i8]) {
        let d = &self.d;
        let win = &d.win;
        let (sh, sw) = win.stride;
        let (dh, dw) = win.dilation;
        let (ph, pw) = win.pad;
        // Output columns whose windows lie inside the image horizontally: ox · sw >= pw and
        // ox · sw - pw + (fw - 1) · dw < in_w.
        let span_w = (d.f_w - 1) * dw;
        let ox_lo = pw.div_ceil(sw).min(d.out_w);
        let ox_hi = if d.win.in_w + pw > span_w {
            ((d.win.in_w + pw - span_w - 1) / sw + 1).min(d.out_w)
        } else {
            0
        }
        .max(ox_lo);
        let span_h = (d.f_h - 1) * dh;
        let geometry = DwGeometry {
            fh: d.f_h,
            fw: d.f_w,
            tap_row: dh * src.row,
            tap_col: dw * src.pixel,
            x_step: sw * src.pixel,
            w_tap: d.out_c,
            y_step: d.out_c,
        };
        let n = q.channels();
        let u = Unpacked::new(q, 0);
        // With a depth multiplier above 1, interior pixels go through rows of the input
        // expanded to the output channels, as many columns at a time as EXPAND holds.
        let expand_cols = match d.multiplier {
            1 => usize::MAX,
            _ => (EXPAND / (d.f_h * n).max(1)).saturating_sub(span_w) / sw,
        };
        let mut expand = [0i8; EXPAND];
        for oy in 0..d.out_h {
            let iy0 = (oy * sh).wrapping_sub(ph);
            let rows_inside = oy * sh >= ph && iy0 + span_h < win.in_h;
            let row = &mut y[oy * d.out_w * d.out_c..(oy + 1) * d.out_w * d.out_c];
            let (a, b) = if rows_inside && expand_cols > 0 {
                (ox_lo, ox_hi)
            } else {
                (d.out_w, d.out_w)
            };
            if d.multiplier == 1 && self.padded_row(src, oy, c0, q, row) {
                continue;
            }
            for ox in (0..a).chain(b..d.out_w) {
                let at = ox * d.out_c + c0;
                let y = &mut row[at..at + n];
                if !(d.multiplier == 1 && self.window(src, oy, ox, c0, q, y)) {
                    self.border(src, oy, ox, c0, &u, y);
                }
            }
            if a < b && d.multiplier == 1 {
                let ix0 = a * sw - pw;
                let at = iy0 * src.row + ix0 * src.pixel + c0 - src.first;
                depthwise_s8(
                    &src.x[at..],
                    &geometry,
                    b - a,
                    &d.w[c0..],
                    q,
                    &mut row[a * d.out_c + c0..],
                );
                continue;
            }
            let mut o0 = a;
            while o0 < b {
                let o1 = b.min(o0 + expand_cols);
                let y = &mut row[o0 * d.out_c + c0..];
                self.expanded(src, iy0, (o0, o1), (c0, q), &mut expand, y);
                o0 = o1;
            }
        }
    }

    /// Output row `oy`'s channels `c0..c0 + q.channels()` (depth multiplier 1) through one
    /// [`depthwise_s8`] call over a copy of the input rows its windows read, the taps outside
    /// the image holding the input zero point (so they add `x_zero · w`, as the effective
    /// bias expects): borders cost no more than the inside. Only when the copy fits
    /// [`DW_ROWS`] bytes and is cheap next to the arithmetic: the run holds every channel of
    /// the source's pixels (each input row's part inside the image is one copy) or at least
    /// 16 of them; false otherwise, having written nothing.
    fn padded_row(
        &self,
        src: &Source<'_>,
        oy: usize,
        c0: usize,
        q: &Requant<'_>,
        row: &mut [i8],
    ) -> bool {
        let d = &self.d;
        let win = &d.win;
        let n = q.channels();
        let (sh, sw) = win.stride;
        let (dh, dw) = win.dilation;
        let width = (d.out_w - 1) * sw + (d.f_w - 1) * dw + 1;
        let whole = n == src.pixel;
        let len = width.checked_mul(d.f_h).and_then(|b| b.checked_mul(n));
        let Some(len) = len.filter(|&l| l <= DW_ROWS && l > 0 && (whole || n >= 16)) else {
            return false;
        };
        let mut buf = [0i8; DW_ROWS];
        let zero = d.in_zero as i8;
        // Input columns ix = j - pad for j in 0..width; those inside the image, j_in.
        let j_in = win.pad.1.min(width)..(win.pad.1 + win.in_w).min(width);
        for (ty, taps) in buf[..len].chunks_exact_mut(width * n).enumerate() {
            let iy = (oy * sh + ty * dh).wrapping_sub(win.pad.0);
            if iy >= win.in_h || j_in.is_empty() {
                taps.fill(zero);
                continue;
            }
            taps[..j_in.start * n].fill(zero);
            taps[j_in.end * n..].fill(zero);
            let inside = &mut taps[j_in.start * n..j_in.end * n];
            let at = iy * src.row + (j_in.start - win.pad.1) * src.pixel + c0 - src.first;
            if whole {
                inside.copy_from_slice(&src.x[at..at + inside.len()]);
            } else {
                for (k, px) in inside.chunks_exact_mut(n).enumerate() {
                    let p = at + k * src.pixel;
                    px.copy_from_slice(&src.x[p..p + n]);
                }
            }
        }
        let geometry = DwGeometry {
            fh: d.f_h,
            fw: d.f_w,
            tap_row: width * n,
            tap_col: dw * n,
            x_step: sw * n,
            w_tap: d.out_c,
            y_step: d.out_c,
        };
        depthwise_s8(
            &buf[..len],
            &geometry,
            d.out_w,
            &d.w[c0..],
            q,
            &mut row[c0..],
        );
        true
    }

    /// One output pixel's channels (depth multiplier 1) through [`depthwise_s8`] over a
    /// copy of its window, the taps outside the image holding the input zero point. False,
    /// having written nothing, when the window does not fit [`IM2COL_STACK`] bytes.
    fn window(
        &self,
        src: &Source<'_>,
        oy: usize,
        ox: usize,
        c0: usize,
        q: &Requant<'_>,
        y: &mut [i8],
    ) -> bool {
        let d = &self.d;
        let n = q.channels();
        let taps = d.f_h * d.f_w;
        if n == 0 || taps * n > IM2COL_STACK {
            return false;
        }
        let mut buf = [0i8; IM2COL_STACK];
        let zero = d.in_zero as i8;
        for (t, px) in buf[..taps * n].chunks_exact_mut(n).enumerate() {
            match d.win.tap(oy, ox, t / d.f_w, t % d.f_w) {
                Some((iy, ix)) => {
                    let at = iy * src.row + ix * src.pixel + c0 - src.first;
                    px.copy_from_slice(&src.x[at..at + n]);
                }
                None => px.fill(zero),
            }
        }
        let geometry = DwGeometry {
            fh: d.f_h,
            fw: d.f_w,
            tap_row: d.f_w * n,
            tap_col: n,
            x_step: 0,
            w_tap: d.out_c,
            y_step: d.out_c,
        };
        depthwise_s8(&buf[..taps * n], &geometry, 1, &d.w[c0..], q, y);
        true
    }

    /// Output channels `c0..c0 + q.channels()` of one image of a depthwise op with one
    /// input channel (every output channel reads it: a convolution with one input channel)
    /// through [`gemm_s8`]: the filter's taps of each channel transposed into rows, and an
    /// im2col row of the taps per output pixel (the input zero point outside the image).
    /// The caller checked that `taps · q.channels()` fits [`IM2COL_STACK`].
    fn single_channel(&self, x: &[i8], c0: usize, q: &Requant<'_>, y: &mut [i8]) {
        let d = &self.d;
        let n = q.channels();
        let taps = d.f_h * d.f_w;
        let mut wt = [0i8; IM2COL_STACK];
        for (c, row) in wt[..taps * n].chunks_exact_mut(taps).enumerate() {
            for (t, v) in row.iter_mut().enumerate() {
                *v = d.w[t * d.out_c + c0 + c];
            }
        }
        let mut buf = [0i8; IM2COL_STACK];
        let rows_per_block = (IM2COL_STACK / taps).max(1);
        let pixels = d.out_h * d.out_w;
        let zero = d.in_zero as i8;
        let mut p0 = 0;
        while p0 < pixels {
            let rows = rows_per_block.min(pixels - p0);
            let (sh, sw) = d.win.stride;
            let (dh, dw) = d.win.dilation;
            let in_w = d.win.in_w;
            let (mut oy, mut ox) = (p0 / d.out_w, p0 % d.out_w);
            for row in buf.chunks_exact_mut(taps).take(rows) {
                let x0 = (ox * sw).wrapping_sub(d.win.pad.1);
                for (fy, taps) in row.chunks_exact_mut(d.f_w).enumerate() {
                    let iy = (oy * sh + fy * dh).wrapping_sub(d.win.pad.0);
                    let line = match iy < d.win.in_h {
                        true => x.get(iy * in_w..(iy + 1) * in_w),
                        false => None,
                    };
                    let Some(line) = line else {
                        taps.fill(zero);
                        continue;
                    };
                    match line.get(x0..x0.wrapping_add(d.f_w)) {
                        Some(run) if dw == 1 => copy_taps(taps, run),
                        _ => {
                            for (fx, v) in taps.iter_mut().enumerate() {
                                *v = *line.get(x0.wrapping_add(fx * dw)).unwrap_or(&zero);
                            }
                        }
                    }
                }
                ox += 1;
                if ox == d.out_w {
                    (oy, ox) = (oy + 1, 0);
                }
            }
            let ys = &mut y[p0 * d.out_c + c0..];
            gemm_s8(&buf, taps, rows, &wt[..taps * n], taps, q, ys, d.out_c);
            p0 += rows;
        }
    }

    /// Output pixels `o0..o1` of one row (windows inside the image, input rows from `iy0`)
    /// with a depth multiplier above 1: the input rows they read, expanded to the output
    /// channels `c0..c0 + q.channels()` (each input value repeated for the `m` channels it
    /// feeds) in a stack buffer, then [`depthwise_s8`] over it as over an input of those
    /// channels.
    fn expanded(
        &self,
        src: &Source<'_>,
        iy0: usize,
        (o0, o1): (usize, usize),
        (c0, q): (usize, &Requant<'_>),
        e: &mut [i8; EXPAND],
        y: &mut [i8],
    ) {
        let d = &self.d;
        let (n, m) = (q.channels(), d.multiplier);
        let (dh, dw) = d.win.dilation;
        let sw = d.win.stride.1;
        let cols = (o1 - o0 - 1) * sw + (d.f_w - 1) * dw + 1;
        let ix0 = o0 * sw - d.win.pad.1;
        for (ty, e_row) in e.chunks_exact_mut(cols * n).take(d.f_h).enumerate() {
            let image_row = (iy0 + ty * dh) * src.row;
            for (col, e_px) in e_row.chunks_exact_mut(n).enumerate() {
                let px = &src.x[image_row + (ix0 + col) * src.pixel..];
                let (mut c, mut ic) = (c0, c0 / m);
                while c < c0 + n {
                    let end = ((ic + 1) * m).min(c0 + n);
                    e_px[c - c0..end - c0].fill(px[ic - src.first]);
                    (c, ic) = (end, ic + 1);
                }
            }
        }
        let geometry = DwGeometry {
            fh: d.f_h,
            fw: d.f_w,
            tap_row: cols * n,
            tap_col: dw * n,
            x_step: sw * n,
            w_tap: d.out_c,
            y_step: d.out_c,
        };
        depthwise_s8(e, &geometry, o1 - o0, &d.w[c0..], q, y);
    }

    /// One output pixel's channels `c0..c0 + y.len()` (at most [`CHUNK`]; `u` holds their
    /// constants), with any depth multiplier and window: taps inside the image add `x · w`,
    /// taps outside `x_zero · w` (the effective bias subtracted `x_zero · Σ w` over every
    /// tap, and the reference adds nothing for them).
    fn border(
        &self,
        src: &Source<'_>,
        oy: usize,
        ox: usize,
        c0: usize,
        u: &Unpacked,
        y: &mut [i8],
    ) {
        let d = &self.d;
        let m = d.multiplier;
        let n = y.len().min(CHUNK);
        let mut acc = [0i32; CHUNK];
        let acc = &mut acc[..n];
        // Each tap's inputs by output channel: the input zero point outside the image,
        // input channel c / m inside.
        let mut xe = [0i8; CHUNK];
        let zero = i8::try_from(d.in_zero).ok().map(|z| [z; CHUNK]);
        for fy in 0..d.f_h {
            for fx in 0..d.f_w {
                let taps = &d.w[(fy * d.f_w + fx) * d.out_c + c0..][..n];
                let Some((iy, ix)) = d.win.tap(oy, ox, fy, fx) else {
                    match zero {
                        Some(z) => mac_row(acc, &z, taps),
                        None => {
                            for (a, &wv) in acc.iter_mut().zip(taps) {
                                *a = a.wrapping_add(d.in_zero.wrapping_mul(i32::from(wv)));
                            }
                        }
                    }
                    continue;
                };
                let px = &src.x[iy * src.row + ix * src.pixel..];
                if m == 1 {
                    mac_row(acc, &px[c0 - src.first..c0 - src.first + n], taps);
                    continue;
                }
                // Output channel c reads input channel c / m: runs of up to m channels
                // share one input value.
                let (mut c, mut ic) = (c0, c0 / m);
                while c < c0 + n {
                    let end = ((ic + 1) * m).min(c0 + n);
                    xe[c - c0..end - c0].fill(px[ic - src.first]);
                    (c, ic) = (end, ic + 1);
                }
                mac_row(acc, &xe[..n], taps);
            }
        }
        for (i, (yv, &a)) in y.iter_mut().zip(acc.iter()).enumerate() {
            *yv = u.output(a, i);
        }
    }
}

/// `dst.copy_from_slice(src)` (equal lengths), with the common filter widths as fixed-size
/// copies: a row of 3, 5 or 7 taps is a few loads and stores, not a `memcpy` call.
fn copy_taps(dst: &mut [i8], src: &[i8]) {
    fn fixed<const N: usize>(dst: &mut [i8], src: &[i8]) -> bool {
        match (<&mut [i8; N]>::try_from(dst), <&[i8; N]>::try_from(src)) {
            (Ok(d), Ok(s)) => {
                *d = *s;
                true
            }
            _ => false,
        }
    }
    let done = match dst.len() {
        3 => fixed::<3>(dst, src),
        5 => fixed::<5>(dst, src),
        7 => fixed::<7>(dst, src),
        _ => false,
    };
    if !done && dst.len() == src.len() {
        dst.copy_from_slice(src);
    }
}
