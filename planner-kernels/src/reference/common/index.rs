//! Multi-index arithmetic the shape-moving and broadcasting kernels share.

/// Most dimensions these kernels handle (TFLM's reference kernels take at most 5 or 6).
pub(crate) const RANK: usize = 6;

/// Row-major strides of `shape`; dimensions past [`RANK`] are left out (callers refuse
/// such shapes first).
pub(crate) fn strides(shape: &[usize]) -> [usize; RANK] {
    let mut s = [0; RANK];
    let mut stride = 1;
    for (d, &n) in shape.iter().enumerate().rev() {
        if let Some(v) = s.get_mut(d) {
            *v = stride;
        }
        stride *= n;
    }
    s
}

/// `shape` with leading ones added up to [`RANK`] dimensions; `None` above `RANK`.
pub(crate) fn padded(shape: &[usize]) -> Option<[usize; RANK]> {
    let pad = RANK.checked_sub(shape.len())?;
    let mut dims = [1; RANK];
    dims[pad..].copy_from_slice(shape);
    Some(dims)
}

/// The broadcast ops' output dimensions: `shape` [`padded`], or the error of a rank above
/// [`RANK`].
pub(crate) fn broadcast_dims(
    shape: &[usize],
) -> Result<[usize; RANK], crate::reference::KernelError> {
    padded(shape).ok_or(crate::reference::KernelError::Shape {
        what: "rank above 6",
    })
}

/// The error of inputs whose shapes do not broadcast to the output's.
pub(crate) const NOT_BROADCAST: crate::reference::KernelError =
    crate::reference::KernelError::Shape {
        what: "the inputs do not broadcast to the output",
    };

/// Advances a multi-index over `shape`; false after the last one.
pub(crate) fn next(index: &mut [usize; RANK], shape: &[usize]) -> bool {
    for d in (0..shape.len().min(RANK)).rev() {
        index[d] += 1;
        if index[d] < shape[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

/// Advances the outer multi-index `index[..RANK - 1]` over the box `lo..hi` (the last
/// dimension is the caller's row); false after the last row.
pub(crate) fn next_row(index: &mut [usize; RANK], lo: &[usize; RANK], hi: &[usize; RANK]) -> bool {
    for d in (0..RANK - 1).rev() {
        index[d] += 1;
        if index[d] < hi[d] {
            return true;
        }
        index[d] = lo[d];
    }
    false
}

/// Element strides of `shape` seen from an output of `RANK` dimensions `out` (leading ones
/// added): 0 where the input broadcasts (size 1 against a larger output size). `None` when
/// the shapes do not broadcast.
pub(crate) fn broadcast_strides(shape: &[usize], out: &[usize; RANK]) -> Option<[usize; RANK]> {
    let dims = padded(shape)?;
    let mut strides = [0; RANK];
    let mut stride = 1;
    for d in (0..RANK).rev() {
        if dims[d] == out[d] {
            strides[d] = stride;
        } else if dims[d] != 1 {
            return None;
        }
        stride *= dims[d];
    }
    Some(strides)
}
