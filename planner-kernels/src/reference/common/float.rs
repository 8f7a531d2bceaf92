//! The scalar functions of the float32 kernels (`FULLY_CONNECTED`, the convolutions, `ADD`,
//! `SUB`, `MUL`, `LOGISTIC`, `TANH`, `SOFTMAX`, `LOG_SOFTMAX`, `RELU`, `RELU6`, `HARD_SWISH`,
//! the LSTM's gates), with TFLite Micro's float reference arithmetic: the same operations in
//! the same order, in `f32`, so that the results round as TFLM's do.
//!
//! The int8 kernels of these ops hand an op to their float kernel when output 0 holds `f32`
//! elements ([`float_output`]); an op with float and integer tensors mixed is refused.
//!
//! `exp` and `tanh`: TFLM calls the C library's `expf` and `tanhf`. Without `std` these come
//! from the `libm` crate: `expf(x)` is `libm::exp` in `f64` rounded to `f32` (glibc's `expf`
//! is within 0.502 ulp of the exact value, so the two differ by one ulp where the exact value
//! lies within that margin of a half-way point: measured on every 101st bit pattern with
//! `|x| <= 100`, 1,705 of 22,186,207 inputs, 0.008%), and `tanhf` is the classic
//! `expm1`-based formula glibc uses, over `libm::expm1f` (13 of the same 22,186,207 inputs
//! differ, by one ulp). The one-op tests (`op_b2_*_f32*`, 3 inputs each, about 2,800 `exp`
//! and 1,400 `tanh` evaluations) compare bit for bit and match TFLM on every element; a
//! model whose inputs hit one of those rare arguments would differ by one ulp there.
//!
//! Every float kernel that needs `exp` or `tanh` calls [`expf`] and [`tanhf`] (the float
//! LSTM's gates through [`logistic_f32`] and [`tanhf`] too). A correctly rounded `tanh` (in
//! `f64`, rounded once) would not match: glibc 2.36's `tanhf` differs from it on 9,130,102 of
//! 169,385,354 arguments in [-20, 20] (every 13th `f32`), [`tanhf`] on 56 of them.

use planner_rt::kernel::{DataMut, OpView};
use planner_rt::options::Activation;

use crate::reference::KernelError;

/// True when output 0 of the op holds `f32` elements: the float kernel runs it.
pub(crate) fn float_output(op: &OpView<'_, '_>) -> bool {
    matches!(op.outputs.first().map(|o| &o.data), Some(DataMut::F32(_)))
}

/// `(min, max)` of a fused activation on floats: TFLite's `CalculateActivationRange`.
pub(crate) fn float_activation_range(a: Activation) -> Result<(f32, f32), KernelError> {
    Ok(match a {
        Activation::None => (f32::MIN, f32::MAX),
        Activation::Relu => (0.0, f32::MAX),
        Activation::Relu6 => (0.0, 6.0),
        Activation::ReluN1To1 => (-1.0, 1.0),
        Activation::Tanh | Activation::SignBit => {
            return Err(KernelError::Options {
                what: "fused activation TANH or SIGN_BIT",
            });
        }
    })
}

/// `min(max(x, lo), hi)` as C++'s `std::min`/`std::max` compute it (TFLite's
/// `ActivationFunctionWithMinMax`): an infinity is clamped to the finite bounds.
pub(crate) fn clamp(x: f32, lo: f32, hi: f32) -> f32 {
    let v = if x < lo { lo } else { x };
    if hi < v { hi } else { v }
}

/// `expf` (see the module's doc): `exp` in `f64`, rounded to `f32`.
pub(crate) fn expf(x: f32) -> f32 {
    libm::exp(f64::from(x)) as f32
}

/// `1/c` and `log(c)` for the 16 subintervals of [`logf`] (glibc's `__logf_data`).
const LOGF_TABLE: [(u64, u64); 16] = [
    (0x3ff661ec79f8f3be, 0xbfd57bf7808caade),
    (0x3ff571ed4aaf883d, 0xbfd2bef0a7c06ddb),
    (0x3ff49539f0f010b0, 0xbfd01eae7f513a67),
    (0x3ff3c995b0b80385, 0xbfcb31d8a68224e9),
    (0x3ff30d190c8864a5, 0xbfc6574f0ac07758),
    (0x3ff25e227b0b8ea0, 0xbfc1aa2bc79c8100),
    (0x3ff1bb4a4a1a343f, 0xbfba4e76ce8c0e5e),
    (0x3ff12358f08ae5ba, 0xbfb1973c5a611ccc),
    (0x3ff0953f419900a7, 0xbfa252f438e10c1e),
    (0x3ff0000000000000, 0x0000000000000000),
    (0x3fee608cfd9a47ac, 0x3faaa5aa5df25984),
    (0x3feca4b31f026aa0, 0x3fbc5e53aa362eb4),
    (0x3feb2036576afce6, 0x3fc526e57720db08),
    (0x3fe9c2d163a1aa2d, 0x3fcbc2860d224770),
    (0x3fe886e6037841ed, 0x3fd1058bc8a07ee1),
    (0x3fe767dcf5534862, 0x3fd4043057b6ee09),
];

/// `logf` as glibc (2.27 on) computes it, in `f64`: `x = 2^k · z` with `z` near a table
/// point `c` (16 subintervals from `0x3f330000`), `log(x) = k · ln 2 + log(c) + log1p(r)`
/// for `r = z / c - 1`, `log1p` a degree-4 polynomial; rounded to `f32` once. It matches
/// the host's `logf` on every 97th positive normal `f32`; `log` in `f64` rounded to `f32`
/// differs on 0.02% of them (TFLM's float `LOG_SOFTMAX` showed one). Zero, negative,
/// infinite and NaN arguments give `libm`'s results.
pub(crate) fn logf(x: f32) -> f32 {
    const LN2: f64 = f64::from_bits(0x3fe62e42fefa39ef);
    const A: [u64; 3] = [0xbfd00ea348b88334, 0x3fd5575b0be00b6a, 0xbfdffffef20a4123];
    let mut ix = x.to_bits();
    if ix == 0 || ix >= 0x7f80_0000 {
        return libm::logf(x);
    }
    if ix < 0x0080_0000 {
        // Subnormal: scaled into the normal range, the exponent taken back.
        ix = (x * f32::from_bits(0x4b00_0000))
            .to_bits()
            .wrapping_sub(23 << 23);
    }
    let tmp = ix.wrapping_sub(0x3f33_0000);
    let (invc, logc) = LOGF_TABLE[((tmp >> 19) % 16) as usize];
    let (invc, logc) = (f64::from_bits(invc), f64::from_bits(logc));
    let k = (tmp as i32) >> 23;
    let z = f64::from(f32::from_bits(ix.wrapping_sub(tmp & 0xff80_0000)));
    let r = z * invc - 1.0;
    let y0 = logc + f64::from(k) * LN2;
    let r2 = r * r;
    let y = f64::from_bits(A[1]) * r + f64::from_bits(A[2]);
    let y = f64::from_bits(A[0]) * r2 + y;
    (y * r2 + (y0 + r)) as f32
}

/// `tanhf` as glibc computes it: `±(1 - 2 / (expm1(2|x|) + 2))` for `|x| >= 1`,
/// `∓expm1(-2|x|) / (expm1(-2|x|) + 2)` below, `x · (1 + x)` for tiny `|x|`, and `±1` from
/// 22 on.
pub(crate) fn tanhf(x: f32) -> f32 {
    let bits = x.to_bits() & 0x7fff_ffff;
    let ax = f32::from_bits(bits);
    if x.is_nan() {
        return x;
    }
    let z = if bits >= 0x41b0_0000 {
        // |x| >= 22, or infinite: 1 - tiny rounds to 1.
        1.0
    } else if bits < 0x2400_0000 {
        // |x| < 2^-55.
        return x * (1.0 + x);
    } else if bits >= 0x3f80_0000 {
        let t = libm::expm1f(2.0 * ax);
        1.0 - 2.0 / (t + 2.0)
    } else {
        let t = libm::expm1f(-2.0 * ax);
        -t / (t + 2.0)
    };
    if x.is_sign_negative() { -z } else { z }
}

/// `LOGISTIC`, float: TFLM's reference, `1` above 16.619047, `exp(x)` below -9, else
/// `1 / (1 + exp(-x))`.
pub(crate) fn logistic_f32(x: f32) -> f32 {
    const UPPER: f32 = 16.619_047;
    const LOWER: f32 = -9.0;
    if x > UPPER {
        1.0
    } else if x < LOWER {
        expf(x)
    } else {
        1.0 / (1.0 + expf(-x))
    }
}

/// `RELU`, float: `x < 0 ? 0 : x` (so `-0.0` and NaN pass through, as in TFLM).
pub(crate) fn relu_f32(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// `RELU6`, float: TFLM's `x > 6 ? 6 : x < 0 ? 0 : x`, which is `f32::clamp` (NaN and `-0.0`
/// pass through both).
pub(crate) fn relu6_f32(x: f32) -> f32 {
    x.clamp(0.0, 6.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logf_is_the_host_logf() {
        extern crate std;
        let mut bits = 1u32;
        while bits < 0x7f80_0000 {
            let x = f32::from_bits(bits);
            assert_eq!(logf(x).to_bits(), x.ln().to_bits(), "log({x:e})");
            bits += 100_003;
        }
        assert_eq!(logf(1.0), 0.0);
        assert!(logf(-1.0).is_nan() && logf(0.0) == f32::NEG_INFINITY);
    }

    #[test]
    fn tanh_and_exp_are_the_functions() {
        for k in -400..=400 {
            let x = k as f32 / 37.0;
            let t = f64::from(tanhf(x));
            assert!((t - f64::from(x).tanh()).abs() < 1e-6, "tanh({x}) = {t}");
            let e = f64::from(expf(x));
            let want = f64::from(x).exp();
            assert!(((e - want) / want).abs() < 1e-7, "exp({x}) = {e}");
        }
        assert_eq!(tanhf(30.0), 1.0);
        assert_eq!(tanhf(-30.0), -1.0);
        assert_eq!(tanhf(f32::INFINITY), 1.0);
        assert!(tanhf(f32::NAN).is_nan());
        assert_eq!(logistic_f32(17.0), 1.0);
        assert_eq!(logistic_f32(-10.0), expf(-10.0));
        assert_eq!(clamp(f32::INFINITY, f32::MIN, f32::MAX), f32::MAX);
    }
}
