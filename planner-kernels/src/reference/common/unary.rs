//! Element-by-element ops, out of place and in place through one driver: [`map`] runs `f`
//! from an input slice into an output slice, or over one buffer that holds the input at its
//! start and takes the output (an op the plan runs in place), so each op's arithmetic is
//! written once.

use planner_rt::kernel::{Data, DataMut, In, OpView};

use crate::reference::KernelError;
use crate::reference::common::operands::El;
use crate::reference::common::region::Plane;

/// An element type of a unary op's input or output, read and written by its bytes in
/// native order (an in-place buffer holds the input's bytes under the output's type).
pub(crate) trait Elem: El {
    /// Bytes per element.
    const SIZE: usize;
    /// Byte `k` (below `SIZE`) of the element, native order.
    fn byte(self, k: usize) -> u8;
    /// The element of the first `SIZE` bytes of `b`, native order.
    fn from_bytes(b: [u8; 8]) -> Self;
}

macro_rules! elem {
    ($($t:ty => $n:literal;)*) => {
        $(
            impl Elem for $t {
                const SIZE: usize = $n;
                fn byte(self, k: usize) -> u8 {
                    self.to_ne_bytes()[k]
                }
                fn from_bytes(b: [u8; 8]) -> Self {
                    let mut e = [0u8; $n];
                    e.copy_from_slice(&b[..$n]);
                    <$t>::from_ne_bytes(e)
                }
            }
        )*
    };
}

elem! {
    i8 => 1;
    u8 => 1;
    i16 => 2;
    i32 => 4;
    f32 => 4;
}

/// Element `i` of type `I` among the bytes of `buf`.
fn load<I: Elem, O: Elem>(buf: &[O], i: usize) -> I {
    let mut b = [0u8; 8];
    for (j, v) in b.iter_mut().enumerate().take(I::SIZE) {
        let k = i * I::SIZE + j;
        *v = buf[k / O::SIZE].byte(k % O::SIZE);
    }
    I::from_bytes(b)
}

/// The element types of an in-place input, which the view does not carry: the buffer
/// spans the longer of input and output, so an input longer than the output has
/// `buffer bytes / elements` bytes per element (4 bytes: `f32` without quantisation,
/// `i32` with it); an input no longer than the output is taken to have the output's type
/// (the plan runs an op in place only when its output is no larger than its input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InType {
    /// `i8`.
    I8,
    /// `u8` (never inferred in place, where one byte is taken for `i8`).
    U8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `f32`.
    F32,
}

impl InType {
    /// The type of input `x` of an op whose output is `out`: from its data, or (in place)
    /// from the buffer's length as [`InType`] says.
    pub(crate) fn of(x: &In<'_>, out: &DataMut<'_>) -> Result<InType, KernelError> {
        let from_size = |size: usize, quantised: bool| match size {
            1 => Some(InType::I8),
            2 => Some(InType::I16),
            4 if quantised => Some(InType::I32),
            4 => Some(InType::F32),
            _ => None,
        };
        let t = match x.data {
            Data::I8(_) => Some(InType::I8),
            Data::U8(_) => Some(InType::U8),
            Data::I16(_) => Some(InType::I16),
            Data::I32(_) => Some(InType::I32),
            Data::F32(_) => Some(InType::F32),
            Data::InPlace(_) => {
                let n: usize = x.shape.iter().product();
                let (out_size, out_type) = match out {
                    DataMut::I8(b) => (1, b.len()),
                    DataMut::U8(b) => (1, b.len()),
                    DataMut::I16(b) => (2, b.len()),
                    DataMut::I32(b) => (4, b.len()),
                    DataMut::F32(b) => (4, b.len()),
                    _ => return Err(KernelError::Type { tensor: "output 0" }),
                };
                let bytes = out_type * out_size;
                if n > 0 && bytes > n * out_size && bytes % n == 0 {
                    from_size(bytes / n, x.quant.is_some())
                } else {
                    from_size(out_size, !matches!(out, DataMut::F32(_)))
                }
            }
            _ => None,
        };
        t.ok_or(KernelError::Type { tensor: "input 0" })
    }
}

/// `y[i] = f(x[i])` for the `n` elements: from `x` into `y` when `x` is given, else over
/// `y` itself, which holds the input's `n` elements (type `I`) at its start and spans the
/// longer of input and output in whole `O` elements. In place, each element is read
/// before any output overwrites it: front to back when outputs are no wider than inputs,
/// back to front otherwise.
pub(crate) fn map<I: Elem, O: Elem>(
    x: Option<&[I]>,
    y: &mut [O],
    n: usize,
    f: impl Fn(I) -> O,
) -> Result<(), KernelError> {
    let mismatch = KernelError::Shape {
        what: "input and output lengths differ",
    };
    match x {
        Some(x) => {
            if x.len() != n || y.len() != n {
                return Err(mismatch);
            }
            for (v, o) in x.iter().zip(y.iter_mut()) {
                *o = f(*v);
            }
        }
        None => {
            let bytes = (n * I::SIZE).max(n * O::SIZE);
            if y.len() != bytes.div_ceil(O::SIZE) {
                return Err(KernelError::Shape {
                    what: "the in-place buffer does not span the input and the output",
                });
            }
            if O::SIZE <= I::SIZE {
                for i in 0..n {
                    y[i] = f(load::<I, O>(y, i));
                }
            } else {
                for i in (0..n).rev() {
                    y[i] = f(load::<I, O>(y, i));
                }
            }
        }
    }
    Ok(())
}

/// Runs the unary op `f` (of `I` to `O`) on input 0 and output 0: out of place, or, when
/// `in_place`, with input 0 taken over by output 0 (`Data::InPlace(0)`). Out of place, on
/// the output's region when either tensor has one (both `[1, h, w, c]` of one shape, the
/// input's region holding the output's), row by row: a region's row is contiguous in the
/// dense and in the whole layout.
pub(crate) fn unary<I: Elem, O: Elem>(
    op: &mut OpView<'_, '_>,
    in_place: bool,
    f: impl Fn(I) -> O,
) -> Result<(), KernelError> {
    let x = op
        .input(0)
        .ok_or(KernelError::Missing { tensor: "input 0" })?;
    let n: usize = x.shape.iter().product();
    let src = match (x.data, in_place) {
        (Data::InPlace(0), true) => None,
        (Data::InPlace(_), true) => {
            return Err(KernelError::Shape {
                what: "an in-place input taken over by another output than output 0",
            });
        }
        (Data::InPlace(_), false) => return Err(KernelError::Missing { tensor: "input 0" }),
        (data, false) => Some(I::of(data).ok_or(KernelError::Type { tensor: "input 0" })?),
        (_, true) => return Err(KernelError::Type { tensor: "input 0" }),
    };
    let out = op
        .outputs
        .first_mut()
        .ok_or(KernelError::Missing { tensor: "output 0" })?;
    if out.shape.iter().product::<usize>() != n {
        return Err(KernelError::Shape {
            what: "input and output element counts differ",
        });
    }
    let (out_shape, out_region) = (out.shape, out.region);
    let y = O::of_mut(&mut out.data).ok_or(KernelError::Type { tensor: "output 0" })?;
    let Some(x_data) = src else {
        if x.region.is_some() || out_region.is_some() {
            return Err(KernelError::Region {
                tensor: "input 0 (an in-place op on a patch region)",
            });
        }
        return map(None, y, n, f);
    };
    // Runs of `(input start, output start, elements)`: the whole tensor, or each row of
    // the output's region.
    let whole = [(0, 0, n)];
    let planes = if x.region.is_some() || out_region.is_some() {
        if x.shape != out_shape {
            return Err(KernelError::Shape {
                what: "a unary op on a region with an input shape other than the output's",
            });
        }
        let xp = Plane::new(x.shape, x.region, x_data.len())?;
        let yp = Plane::new(out_shape, out_region, y.len())?;
        let (rows, cols) = (yp.rows(), yp.cols());
        xp.holds(
            Some((rows.start, rows.end.saturating_sub(1))),
            Some((cols.start, cols.end.saturating_sub(1))),
        )?;
        Some((xp, yp))
    } else {
        if x_data.len() != n || y.len() != n {
            return Err(KernelError::Shape {
                what: "input and output lengths differ",
            });
        }
        None
    };
    let region_runs = planes.iter().flat_map(|(xp, yp)| {
        let (left, len) = (yp.region.left, yp.region.width * yp.c);
        yp.rows()
            .map(move |r| (xp.at(0, r, left), yp.at(0, r, left), len))
    });
    let runs = (planes.is_none().then_some(whole).into_iter().flatten()).chain(region_runs);
    let short = KernelError::Shape {
        what: "input and output lengths differ",
    };
    for (at_x, at_y, len) in runs {
        let xs = x_data.get(at_x..at_x.wrapping_add(len)).ok_or(short)?;
        let ys = y.get_mut(at_y..at_y.wrapping_add(len)).ok_or(short)?;
        map(Some(xs), ys, len, &f)?;
    }
    Ok(())
}
