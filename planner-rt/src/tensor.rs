//! Per-tensor constants and element types.

use core::marker::PhantomData;

/// Element types a tensor view may have: plain numbers for which every bit pattern is a
/// valid value, so any arena bytes can be viewed as them. Sealed.
pub trait Element: sealed::Sealed + Copy + 'static {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! elements {
    ($($t:ty),*) => {
        $(
            impl sealed::Sealed for $t {}
            impl Element for $t {}
        )*
    };
}
elements!(
    i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, [f32; 2], [f64; 2]
);

/// Quantisation parameters of a tensor: `real = scale * (q - zero_point)`, one entry per
/// channel along `axis` (one entry for per-tensor quantisation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quant {
    /// Scales, one per channel.
    pub scale: &'static [f32],
    /// Zero points, one per channel.
    pub zero_point: &'static [i64],
    /// The channel axis (meaningful when there is more than one channel).
    pub axis: i32,
}

impl Quant {
    /// True when one scale and zero point cover the whole tensor.
    pub const fn is_per_tensor(&self) -> bool {
        self.scale.len() <= 1
    }

    /// The scale and zero point of `channel` (channel 0 for per-tensor parameters; the last
    /// channel's when `channel` is past the end). `None` when the tensor has no parameters.
    pub fn params(&self, channel: usize) -> Option<(f32, i64)> {
        let i = channel.min(self.scale.len().checked_sub(1)?);
        Some((
            *self.scale.get(i)?,
            *self.zero_point.get(i).or(self.zero_point.last())?,
        ))
    }

    /// The real value of the quantised value `q` in `channel`.
    pub fn dequantize(&self, q: i64, channel: usize) -> f32 {
        match self.params(channel) {
            Some((scale, zero)) => scale * (q - zero) as f32,
            None => q as f32,
        }
    }

    /// The nearest quantised value of `real` in `channel`, rounded half away from zero and
    /// saturated to `min..=max` (the element type's range, say `-128..=127`).
    pub fn quantize(&self, real: f32, channel: usize, min: i64, max: i64) -> i64 {
        let Some((scale, zero)) = self.params(channel) else {
            return round(real).clamp(min, max);
        };
        if scale == 0.0 || scale.is_nan() {
            return zero.clamp(min, max);
        }
        round(real / scale).saturating_add(zero).clamp(min, max)
    }
}

/// Rounds half away from zero without `std` (saturating at the `i64` range; NaN gives 0).
fn round(x: f32) -> i64 {
    if x >= 0.0 {
        (x + 0.5) as i64
    } else {
        (x - 0.5) as i64
    }
}

/// What a model's tensor is, as constants: the generated `tensors` module has one per tensor,
/// typed by the element type its views have.
#[derive(Debug)]
pub struct TensorInfo<T> {
    /// The tensor's id in the plan.
    pub id: &'static str,
    /// The tensor's name in the model.
    pub name: &'static str,
    /// The element type's planner name (`"i8"`, `"f32"`, ...). Types without a Rust
    /// counterpart (`i4`, `f16`, `string`, ...) are viewed as raw `u8` or `u16` bits.
    pub dtype: &'static str,
    /// The shape (empty for a scalar).
    pub shape: &'static [usize],
    /// Elements a view has (the product of the shape, or bytes for raw-byte types).
    pub elements: usize,
    /// Bytes the tensor takes in its arena.
    pub size: usize,
    /// Quantisation parameters, when the tensor is quantised.
    pub quant: Option<Quant>,
    /// The element type.
    pub element: PhantomData<fn() -> T>,
}

impl<T> Clone for TensorInfo<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for TensorInfo<T> {}

impl<T> TensorInfo<T> {
    /// The description of an unnamed tensor (id and name `t`) of `shape`, quantised by
    /// `quant`: for tests and checks that hand a kernel views of their own buffers (the
    /// generated code describes a plan's tensors itself).
    pub const fn unnamed(shape: &'static [usize], quant: Option<Quant>) -> TensorInfo<T> {
        let mut elements: usize = 1;
        let mut i = 0;
        while i < shape.len() {
            elements = elements.saturating_mul(shape[i]);
            i += 1;
        }
        TensorInfo {
            id: "t",
            name: "t",
            dtype: "",
            shape,
            elements,
            size: 0,
            quant,
            element: PhantomData,
        }
    }

    /// The scale and zero point of the whole tensor (its first channel); `None` when it is
    /// not quantised.
    pub fn params(&self) -> Option<(f32, i64)> {
        self.quant.and_then(|q| q.params(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: Quant = Quant {
        scale: &[0.5],
        zero_point: &[-3],
        axis: 0,
    };

    #[test]
    fn quantises_round_trip_and_saturates() {
        assert_eq!(Q.quantize(1.0, 0, -128, 127), -1);
        assert_eq!(Q.dequantize(-1, 0), 1.0);
        assert_eq!(Q.quantize(-1.24, 0, -128, 127), -5);
        assert_eq!(Q.quantize(1e9, 0, -128, 127), 127);
        assert_eq!(Q.quantize(f32::NAN, 0, -128, 127), -3);
        let per_channel = Quant {
            scale: &[1.0, 2.0],
            zero_point: &[0, 0],
            axis: 0,
        };
        assert_eq!(per_channel.dequantize(3, 1), 6.0);
        assert_eq!(per_channel.dequantize(3, 9), 6.0);
        let none = Quant {
            scale: &[],
            zero_point: &[],
            axis: 0,
        };
        assert_eq!(none.params(0), None);
    }
}
