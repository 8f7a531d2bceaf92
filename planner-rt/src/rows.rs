//! Row overlap (`memory.row_overlap`): an op that slides a window down its input (a
//! convolution or a pool over a `[1, H, W, C]` tensor) writes its output over the input
//! rows it no longer reads.
//!
//! Output row `r` reads input rows from [`Rows::first_read`]`(r)` on, and that row only
//! grows with `r`. So when the output starts `shift` elements before the input, in one
//! buffer, and every output row `r` ends at or before the start of input row
//! `first_read(r)`, computing the rows in order never overwrites an input row that a later
//! row reads: [`Rows::min_shift`] is the least such shift. [`run`] computes the rows band by
//! band through the op's usual kernel (output and input as regions of their tensors, in
//! two disjoint slices of the buffer), so any kernel set that runs the op on regions runs
//! it with row overlap. The planner places the pair so, its verifier and the generated
//! `const` check prove the shift with [`Rows::min_shift`], and the two tensors of the pair
//! share the bytes of one buffer of [`Rows::buffer`] elements at that op only.

use crate::kernel::Region;
use crate::options::{OpOptions, Padding};

/// How an op's output rows read its input rows, in elements of the (one) element type of
/// its input and output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rows {
    /// Input rows (`H`).
    pub in_rows: usize,
    /// Input columns (`W`).
    pub in_width: usize,
    /// Elements of one input row (`W · C`).
    pub in_row: usize,
    /// Output rows.
    pub out_rows: usize,
    /// Output columns.
    pub out_width: usize,
    /// Elements of one output row.
    pub out_row: usize,
    /// Stride along the height.
    pub stride: usize,
    /// Padding rows before the first input row.
    pub pad_top: usize,
    /// Input rows one output row's window spans (`(K - 1) · dilation + 1`).
    pub extent: usize,
}

impl Rows {
    /// The rows of an op with `options`, whose input 0 has shape `input`, output 0 `output`
    /// and (for a convolution) input 1 `filter`: `None` for a kind that does not slide a
    /// window down its input (`CONV_2D`, `DEPTHWISE_CONV_2D`, `AVERAGE_POOL_2D` and
    /// `MAX_POOL_2D` do), for shapes that are not `[1, H, W, C]`, and for options that do
    /// not fit the shapes.
    pub fn of(
        options: &OpOptions,
        input: &[usize],
        output: &[usize],
        filter: Option<&[usize]>,
    ) -> Option<Rows> {
        let (&[1, h, w, c], &[1, oh, ow, oc]) = (input, output) else {
            return None;
        };
        let kernel = |f: Option<&[usize]>| match f {
            Some(&[_, kh, _, _]) => Some(kh),
            _ => None,
        };
        let (padding, pads, stride, dilation, k) = match options {
            OpOptions::Conv2d(o) => (o.padding, o.pads, o.stride_h, o.dilation_h, kernel(filter)?),
            OpOptions::DepthwiseConv2d(o) => {
                (o.padding, o.pads, o.stride_h, o.dilation_h, kernel(filter)?)
            }
            OpOptions::AveragePool2d(o) | OpOptions::MaxPool2d(o) => (
                o.padding,
                crate::options::Dims::EMPTY,
                o.stride_h,
                1,
                usize::try_from(o.filter_h).ok()?,
            ),
            _ => return None,
        };
        let stride = usize::try_from(stride).ok().filter(|&s| s > 0)?;
        let dilation = usize::try_from(dilation).ok().filter(|&d| d > 0)?;
        let extent = k.checked_sub(1)?.checked_mul(dilation)?.checked_add(1)?;
        let pad_top = match padding {
            Padding::Valid => 0,
            Padding::Explicit => usize::try_from(*pads.as_slice().first()?).ok()?,
            Padding::Same => {
                let span = oh
                    .checked_sub(1)?
                    .checked_mul(stride)?
                    .checked_add(extent)?;
                span.saturating_sub(h) / 2
            }
        };
        Some(Rows {
            in_rows: h,
            in_width: w,
            in_row: w.checked_mul(c)?,
            out_rows: oh,
            out_width: ow,
            out_row: ow.checked_mul(oc)?,
            stride,
            pad_top,
            extent,
        })
    }

    /// The first input row output row `r` reads (its window's first row inside the image).
    pub const fn first_read(&self, r: usize) -> usize {
        let top = r.saturating_mul(self.stride).saturating_sub(self.pad_top);
        if top < self.in_rows {
            top
        } else {
            self.in_rows
        }
    }

    /// One past the last input row output row `r` reads.
    pub const fn end_read(&self, r: usize) -> usize {
        let end = r
            .saturating_mul(self.stride)
            .saturating_add(self.extent)
            .saturating_sub(self.pad_top);
        if end < self.in_rows {
            end
        } else {
            self.in_rows
        }
    }

    /// The least shift (in elements) of the input after the output's start at which
    /// computing the output rows in order overwrites only input rows no later output row
    /// reads: every output row `r` ends at or before input row `first_read(r)` starts.
    pub const fn min_shift(&self) -> usize {
        let mut need = 0;
        let mut r = 0;
        while r < self.out_rows {
            let end = (r + 1).saturating_mul(self.out_row);
            let start = self.first_read(r).saturating_mul(self.in_row);
            let n = end.saturating_sub(start);
            if n > need {
                need = n;
            }
            r += 1;
        }
        need
    }

    /// Elements of the buffer the pair shares at `shift`: the output's, or the input's
    /// after the shift, whichever reaches further.
    pub const fn buffer(&self, shift: usize) -> usize {
        let out = self.out_rows.saturating_mul(self.out_row);
        let inp = shift.saturating_add(self.in_rows.saturating_mul(self.in_row));
        if out > inp { out } else { inp }
    }
}

/// Runs an op with row overlap over `buf`, which holds its input from element `shift` on
/// and receives its output from element 0: `f(input, input_region, output, output_region)`
/// computes the output rows of `output_region` (dense, every column) from the input rows of
/// `input_region` (dense, every column), band after band from the top. Each band is as
/// many output rows as end before the first input row the band reads, so the two slices
/// never share an element. Stops at the first band the shift leaves no room for, which a
/// shift of at least [`Rows::min_shift`] rules out (the plan's `const` check proves it).
pub fn run<T, E>(
    buf: &mut [T],
    shift: usize,
    rows: &Rows,
    mut f: impl FnMut(&[T], Region, &mut [T], Region) -> Result<(), E>,
) -> Result<(), E> {
    if rows.out_row == 0 || rows.in_row == 0 {
        return Ok(());
    }
    let mut r = 0;
    while r < rows.out_rows {
        let lo = rows.first_read(r);
        let split = shift.saturating_add(lo.saturating_mul(rows.in_row));
        let fits = (split / rows.out_row).min(rows.out_rows);
        if fits <= r || split > buf.len() {
            return Ok(());
        }
        let hi = rows.end_read(fits - 1);
        let (head, tail) = buf.split_at_mut(split);
        let (Some(output), Some(input)) = (
            head.get_mut(r * rows.out_row..fits * rows.out_row),
            tail.get(..hi.saturating_sub(lo) * rows.in_row),
        ) else {
            return Ok(());
        };
        f(
            input,
            Region::new(lo, 0, hi.saturating_sub(lo), rows.in_width),
            output,
            Region::new(r, 0, fits - r, rows.out_width),
        )?;
        r = fits;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Activation, Conv2dOptions, Pool2dOptions};
    use std::vec;
    use std::vec::Vec;

    fn conv(padding: Padding, stride: i32) -> OpOptions {
        OpOptions::Conv2d(Conv2dOptions {
            padding,
            stride_h: stride,
            stride_w: stride,
            dilation_h: 1,
            dilation_w: 1,
            activation: Activation::None,
            ..Default::default()
        })
    }

    /// The rows of a `CONV_2D` with `padding` and `stride` from `x` into `y` with filter
    /// `f`, square and undilated.
    fn conv_rows(padding: Padding, stride: i32, x: &[usize], y: &[usize], f: &[usize]) -> Rows {
        Rows::of(&conv(padding, stride), x, y, Some(f)).unwrap()
    }

    /// A convolution's padding, stride, input, output and filter shapes, and its padding rows
    /// on top and least shift.
    type Case = (
        Padding,
        i32,
        [usize; 4],
        [usize; 4],
        [usize; 4],
        usize,
        usize,
    );

    /// Padding rows on top and least shifts of three convolutions: person detection's first
    /// pointwise one (48x48x8 -> 48x48x16: every output row but the last before its input
    /// row), a 3x3 stride-2 SAME one (no padding row on top: one output row) and a 3x3
    /// stride-1 SAME one (one padding row on top, reads from the row before).
    #[test]
    fn least_shifts_of_known_convolutions() {
        let cases: [Case; 3] = [
            (
                Padding::Valid,
                1,
                [1, 48, 48, 8],
                [1, 48, 48, 16],
                [16, 1, 1, 8],
                0,
                18_816,
            ),
            (
                Padding::Same,
                2,
                [1, 48, 48, 16],
                [1, 24, 24, 16],
                [16, 3, 3, 16],
                0,
                24 * 16,
            ),
            (
                Padding::Same,
                1,
                [1, 8, 8, 4],
                [1, 8, 8, 4],
                [4, 3, 3, 4],
                1,
                2 * 32,
            ),
        ];
        for (padding, stride, x, y, f, pad_top, shift) in cases {
            let rows = conv_rows(padding, stride, &x, &y, &f);
            assert_eq!((rows.pad_top, rows.min_shift()), (pad_top, shift));
        }
        let rows = conv_rows(cases[0].0, 1, &cases[0].2, &cases[0].3, &cases[0].4);
        assert_eq!(rows.buffer(rows.min_shift()), 37_248);
        let rows = conv_rows(cases[2].0, 1, &cases[2].2, &cases[2].3, &cases[2].4);
        assert_eq!((rows.first_read(0), rows.end_read(0)), (0, 2));
        assert_eq!((rows.first_read(5), rows.end_read(5)), (4, 7));
    }

    #[test]
    fn other_kinds_and_shapes_have_no_rows() {
        let pool = Pool2dOptions {
            padding: Padding::Valid,
            stride_w: 2,
            stride_h: 2,
            filter_w: 2,
            filter_h: 2,
            activation: Activation::None,
        };
        let (x, y) = (&[1, 4, 4, 1][..], &[1, 2, 2, 1][..]);
        assert!(Rows::of(&OpOptions::MaxPool2d(pool), x, y, None).is_some());
        assert!(Rows::of(&OpOptions::L2Pool2d(pool), x, y, None).is_none());
        let c = conv(Padding::Valid, 1);
        let f = Some(&[1, 1, 1, 1][..]);
        assert!(Rows::of(&c, &[2, 4, 4, 1], &[2, 4, 4, 1], f).is_none());
        assert!(Rows::of(&c, x, x, None).is_none());
        assert!(Rows::of(&OpOptions::None, x, x, f).is_none());
    }

    /// A 3x1 window sum, stride `s`, SAME, one channel: row overlap at the least shift
    /// gives what a separate output does, and every band's slices are disjoint.
    #[test]
    fn bands_at_the_least_shift_compute_what_separate_buffers_do() {
        for (h, s) in [(9usize, 1usize), (9, 2), (10, 3), (1, 1)] {
            let oh = h.div_ceil(s);
            let rows = conv_rows(
                Padding::Same,
                s as i32,
                &[1, h, 2, 1],
                &[1, oh, 2, 2],
                &[2, 3, 1, 1],
            );
            let input: Vec<i32> = (0..(h * 2) as i32).map(|v| v * 7 % 11).collect();
            let window = |x: &[i32], top: usize, r: usize, c: usize| -> i32 {
                (rows.first_read(r)..rows.end_read(r))
                    .map(|y| x[(y - top) * 2 + c])
                    .sum()
            };
            let mut want = vec![0; oh * 4];
            for r in 0..oh {
                for c in 0..2 {
                    want[r * 4 + c * 2] = window(&input, 0, r, c);
                    want[r * 4 + c * 2 + 1] = -window(&input, 0, r, c);
                }
            }
            let shift = rows.min_shift();
            let mut buf = vec![i32::MIN; rows.buffer(shift)];
            buf[shift..shift + input.len()].copy_from_slice(&input);
            let mut computed = 0;
            run(&mut buf, shift, &rows, |x, xr, y, yr| {
                assert_eq!((x.len(), y.len()), (xr.height * 2, yr.height * 4));
                for r in yr.top..yr.top + yr.height {
                    for c in 0..2 {
                        let v = window(x, xr.top, r, c);
                        y[(r - yr.top) * 4 + c * 2] = v;
                        y[(r - yr.top) * 4 + c * 2 + 1] = -v;
                    }
                }
                computed += yr.height;
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(&buf[..oh * 4], &want[..], "h {h} stride {s}");
            assert_eq!(computed, oh);
            // One element less and some row has no room before the rows it reads: the run
            // stops short of it.
            if shift > 0 {
                let mut computed = 0;
                let mut buf = vec![0; rows.buffer(shift)];
                run(&mut buf, shift - 1, &rows, |_, _, _, yr| {
                    computed += yr.height;
                    Ok::<(), ()>(())
                })
                .unwrap();
                assert!(computed < oh, "h {h} stride {s}");
            }
        }
    }
}
