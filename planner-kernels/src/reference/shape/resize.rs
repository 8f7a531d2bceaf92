//! `RESIZE_BILINEAR`, NHWC, int8 or float32 (input and output of one type), with
//! `align_corners` or `half_pixel_centers` (not both, which TFLM refuses too).
//!
//! Float: TFLM's reference in `f32`: the scale `in / out` (or `(in - 1) / (out - 1)` with
//! `align_corners`), the source position `y · scale` (or `(y + 0.5) · scale - 0.5`), its
//! floor and ceiling clamped into the image, and the four neighbours weighted by the
//! fractions, summed in the reference's order.
//!
//! int8: TFLM's integer variant, without floats: the scale in Q10, rounded
//! (`(1024 · in + out / 2) / out`), the source position in Q10 (`y · scale`, or
//! `y · scale + scale / 2 - 512`), the four neighbours times their Q10 weights summed in
//! `i64` (Q20), and rounded half away from zero to the output.

use planner_rt::kernel::{Data, DataMut, OpView};
use planner_rt::options::ResizeBilinearOptions;

use crate::reference::{KernelError, common::output};

/// One axis of a resize: per output index, the two source indices and the weights.
struct Axis {
    input: usize,
    output: usize,
    align_corners: bool,
    half_pixel_centers: bool,
}

impl Axis {
    /// Float: `(position, lower, upper)`, TFLM's `ComputeInterpolationValues`.
    fn float(&self, v: usize) -> (f32, usize, usize) {
        let mut scale = self.input as f32 / self.output as f32;
        if self.align_corners && self.output > 1 {
            scale = (self.input - 1) as f32 / (self.output - 1) as f32;
        }
        let at = if self.half_pixel_centers {
            (v as f32 + 0.5) * scale - 0.5
        } else {
            v as f32 * scale
        };
        let lo = (libm::floorf(at) as i32).max(0);
        let hi = (libm::ceilf(at) as i32).min(self.input as i32 - 1);
        (at, lo.max(0) as usize, hi.max(0) as usize)
    }

    /// Integer: `(position in Q10, lower, upper)`, TFLM's
    /// `ComputeInterpolationValuesInteger`.
    fn integer(&self, v: usize) -> (i64, usize, usize) {
        let (input, output) = (self.input as i64, self.output as i64);
        let scale = if self.align_corners && output > 1 {
            ((1 << 10) * (input - 1) + (output - 1) / 2) / (output - 1)
        } else {
            ((1 << 10) * input + output / 2) / output
        };
        let v = v as i64;
        let at = if self.half_pixel_centers {
            v * scale + scale / 2 - (1 << 9)
        } else {
            v * scale
        };
        // Division truncating toward zero, as C++'s.
        let lo = (at / (1 << 10)).max(0);
        let hi = ((at + (1 << 10) - 1) / (1 << 10)).min(input - 1);
        (at, lo as usize, hi.max(0) as usize)
    }
}

/// `RESIZE_BILINEAR`.
pub(crate) fn resize_bilinear(
    mut op: OpView<'_, '_>,
    o: &ResizeBilinearOptions,
) -> Result<(), KernelError> {
    if o.align_corners && o.half_pixel_centers {
        return Err(KernelError::Options {
            what: "RESIZE_BILINEAR with both align_corners and half_pixel_centers (TFLM refuses it too)",
        });
    }
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let nhwc = |s: &[usize]| match *s {
        [n, h, w, c] => Ok([n, h, w, c]),
        _ => Err(KernelError::Shape {
            what: "RESIZE_BILINEAR needs 4-dimensional NHWC tensors",
        }),
    };
    let [n, in_h, in_w, c] = nhwc(x.shape)?;
    crate::reference::shape::resize_size(
        &op,
        "RESIZE_BILINEAR size operand differs from the output's height and width",
    )?;
    let out = output(&mut op)?;
    let [on, out_h, out_w, oc] = nhwc(out.shape)?;
    if on != n || oc != c || in_h == 0 || in_w == 0 {
        return Err(KernelError::Shape {
            what: "RESIZE_BILINEAR input and output batches or channels differ, or the image is empty",
        });
    }
    let axis = |input, output| Axis {
        input,
        output,
        align_corners: o.align_corners,
        half_pixel_centers: o.half_pixel_centers,
    };
    let (ay, ax) = (axis(in_h, out_h), axis(in_w, out_w));
    let at = |b: usize, y: usize, x: usize, ch: usize| ((b * in_h + y) * in_w + x) * c + ch;
    let len = n * in_h * in_w * c;
    match (x.data, &mut out.data) {
        (Data::F32(src), DataMut::F32(dst)) if src.len() == len => {
            if dst.len() != n * out_h * out_w * c {
                return Err(KernelError::Shape {
                    what: "output length is not its shape's",
                });
            }
            let mut k = 0;
            for b in 0..n {
                for y in 0..out_h {
                    let (iy, y0, y1) = ay.float(y);
                    let dy = iy - y0 as f32;
                    for xo in 0..out_w {
                        let (ix, x0, x1) = ax.float(xo);
                        let dx = ix - x0 as f32;
                        for ch in 0..c {
                            dst[k] = src[at(b, y0, x0, ch)] * (1.0 - dy) * (1.0 - dx)
                                + src[at(b, y1, x0, ch)] * dy * (1.0 - dx)
                                + src[at(b, y0, x1, ch)] * (1.0 - dy) * dx
                                + src[at(b, y1, x1, ch)] * dy * dx;
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::I8(src), DataMut::I8(dst)) if src.len() == len => {
            if dst.len() != n * out_h * out_w * c {
                return Err(KernelError::Shape {
                    what: "output length is not its shape's",
                });
            }
            const ONE: i64 = 1 << 10;
            let mut k = 0;
            for b in 0..n {
                for y in 0..out_h {
                    let (iy, y0, y1) = ay.integer(y);
                    let wy = iy - ONE * y0 as i64;
                    for xo in 0..out_w {
                        let (ix, x0, x1) = ax.integer(xo);
                        let wx = ix - ONE * x0 as i64;
                        for ch in 0..c {
                            let v = |y: usize, x: usize| i64::from(src[at(b, y, x, ch)]);
                            let sum = v(y0, x0) * (ONE - wy) * (ONE - wx)
                                + v(y1, x0) * wy * (ONE - wx)
                                + v(y0, x1) * (ONE - wy) * wx
                                + v(y1, x1) * wy * wx;
                            let round = if sum > 0 { 1 << 19 } else { -(1 << 19) };
                            // C++'s conversion to int8 keeps the low byte.
                            dst[k] = ((sum + round) / (1 << 20)) as i8;
                            k += 1;
                        }
                    }
                }
            }
            Ok(())
        }
        (Data::F32(_) | Data::I8(_), DataMut::F32(_) | DataMut::I8(_)) => Err(KernelError::Shape {
            what: "RESIZE_BILINEAR input length is not its shape's, or input and output types differ",
        }),
        (Data::InPlace(_) | Data::Variable(_), _) => {
            Err(KernelError::Missing { tensor: "input 0" })
        }
        _ => Err(KernelError::Type {
            tensor: "input 0 or output 0 (RESIZE_BILINEAR takes int8 or float32)",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_positions_follow_the_options() {
        let axis = |input, output, align_corners, half_pixel_centers| Axis {
            input,
            output,
            align_corners,
            half_pixel_centers,
        };
        // 3 to 5: scale round(1024 · 3 / 5) = 614.
        let a = axis(3, 5, false, false);
        assert_eq!(a.integer(4), (2456, 2, 2));
        // half pixel centres: 614 · 0 + 307 - 512 is below 0; both neighbours are row 0.
        let a = axis(3, 5, false, true);
        assert_eq!(a.integer(0), (-205, 0, 0));
        // align_corners: (1024 · 2 + 2) / 4 = 512.
        let a = axis(3, 5, true, false);
        assert_eq!(a.integer(3), (1536, 1, 2));
        let f = axis(3, 5, true, false);
        assert_eq!(f.float(3), (1.5, 1, 2));
    }
}
