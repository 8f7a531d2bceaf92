//! Tests of the FFT ops against goldens of TFLM's interpreter (`scripts/tflm_signal_fft.py`
//! writes them; `golden` reads them): every element compared bit for bit
//! (floats by their bits), the op's state made once and kept over the golden's runs.

extern crate std;

use std::vec;
use std::vec::Vec;

use super::kiss::{FftScalar, stages};
use super::{fft_auto_scale, irfft, irfft_init, irfft_state_len, rfft, rfft_init, rfft_state_len};
use crate::reference::KernelError;
use crate::reference::signal::golden::{Golden, Value, each_run, goldens, replay_golden};

/// Runs an RFFT or IRFFT golden with elements of `T`.
fn check_fft<T: FftScalar + Value>(name: &str, g: &Golden) {
    let n: usize = g.opt("fft_length");
    let mut state = vec![T::default(); rfft_state_len(n)];
    let forward = g.op == "SignalRfft";
    if forward {
        rfft_init(n, &mut state).unwrap();
    } else {
        assert_eq!(g.op, "SignalIrfft");
        irfft_init(n, &mut state).unwrap();
    }
    let row = *g.input_shape.last().unwrap();
    replay_golden(name, g, T::default(), |x, y| {
        if forward {
            rfft(n, &mut state, x, row, y).unwrap();
        } else {
            irfft(n, &mut state, x, y).unwrap();
        }
        None
    });
}

/// Runs each RFFT or IRFFT golden of `goldens` with elements of its type.
fn check_fft_goldens(goldens: &[(&str, &str)]) {
    for &(name, text) in goldens {
        let g = Golden::parse(text);
        match g.ty {
            "i16" => check_fft::<i16>(name, &g),
            "i32" => check_fft::<i32>(name, &g),
            "f32" => check_fft::<f32>(name, &g),
            other => panic!("{name}: type {other}"),
        }
    }
}

#[test]
fn rfft_i16_goldens() {
    check_fft_goldens(&goldens![
        "rfft_i16_len4",
        "rfft_i16_len6",
        "rfft_i16_len8",
        "rfft_i16_len10",
        "rfft_i16_len16_rank3_pad",
        "rfft_i16_len18",
        "rfft_i16_len30",
        "rfft_i16_len50",
        "rfft_i16_len96",
        "rfft_i16_len120_pad",
        "rfft_i16_len256",
        "rfft_i16_len512_frame",
        "rfft_i16_len2048_short",
        "rfft_i16_extremes",
    ]);
}

#[test]
fn rfft_f32_and_i32_goldens() {
    check_fft_goldens(&goldens![
        "rfft_f32_len4",
        "rfft_f32_len8",
        "rfft_f32_len12_pad",
        "rfft_f32_len30",
        "rfft_f32_len50",
        "rfft_f32_len256_pad",
        "rfft_i32_len4",
        "rfft_i32_len8",
        "rfft_i32_len12_pad",
        "rfft_i32_len30",
        "rfft_i32_len50",
        "rfft_i32_len256_pad",
        "rfft_i32_extremes",
    ]);
}

#[test]
fn irfft_goldens() {
    check_fft_goldens(&goldens![
        "irfft_i16_len4",
        "irfft_i16_len6",
        "irfft_i16_len8",
        "irfft_i16_len10",
        "irfft_i16_len16_rank3",
        "irfft_i16_len30",
        "irfft_i16_len50",
        "irfft_i16_len512",
        "irfft_i16_extremes",
        "irfft_f32_len4",
        "irfft_f32_len8",
        "irfft_f32_len12",
        "irfft_f32_len30",
        "irfft_f32_len50",
        "irfft_f32_len256",
        "irfft_i32_len4",
        "irfft_i32_len8",
        "irfft_i32_len12",
        "irfft_i32_len30",
        "irfft_i32_len50",
        "irfft_i32_len256",
        "irfft_i32_extremes",
    ]);
}

#[test]
fn fft_auto_scale_goldens() {
    let goldens = goldens![
        "fft_auto_scale_len17",
        "fft_auto_scale_min",
        "fft_auto_scale_len1",
        "fft_auto_scale_len512",
    ];
    each_run(&goldens, "SignalFftAutoScale", |_| {
        |run| {
            let input: Vec<i16> = run.input("input");
            let mut got = vec![0i16; input.len()];
            let mut bits = [0i32];
            fft_auto_scale(&input, &mut got, &mut bits).unwrap();
            assert_eq!(got, run.output::<i16>("output"));
            assert_eq!(bits[..], run.output::<i32>("scale_bits"));
        }
    });
}

/// The stages kiss FFT splits lengths into; lengths TFLM's build cannot run have none.
#[test]
fn stage_splits() {
    let split = |n| stages(n).map(|s| s.list().to_vec());
    assert_eq!(split(128), Some(vec![(4, 32), (4, 8), (4, 2), (2, 1)]));
    assert_eq!(split(30), Some(vec![(2, 15), (3, 5), (5, 1)]));
    assert_eq!(split(9), Some(vec![(3, 3), (3, 1)]));
    assert_eq!(split(50), Some(vec![(2, 25), (5, 5), (5, 1)]));
    assert_eq!(split(2), Some(vec![(2, 1)]));
    for n in [0, 1, 7, 14, 11 * 4, 49, 1 << 40] {
        assert!(split(n).is_none(), "{n}");
    }
}

/// The twiddles from `libm` (what every target uses) equal those from the host's C
/// library (glibc on Linux, which TFLM's Python interpreter links) for every supported
/// `fft_length` up to 4096, both directions, in all three types: a cos or sin an ulp apart
/// could move a rounding.
#[test]
fn twiddles_match_host_libm() {
    /// The state's twiddles and split twiddles as the host computes them.
    fn host<T: FftScalar + Value>(n: usize, inverse: bool, round: impl Fn(f64) -> T) -> Vec<u64> {
        let (pi, half) = (core::f64::consts::PI, n / 2);
        let sign = if inverse { -1.0 } else { 1.0 };
        let full = (0..half).map(|k| -2.0 * pi * k as f64 / half as f64);
        let split = (0..half / 2).map(|k| -pi * ((k + 1) as f64 / half as f64 + 0.5));
        let mut out = Vec::new();
        for phase in full.chain(split).map(|p| sign * p) {
            out.push(round(phase.cos()).bits());
            out.push(round(phase.sin()).bits());
        }
        out
    }
    fn ours<T: FftScalar + Value>(n: usize, inverse: bool) -> Vec<u64> {
        let mut state = vec![T::default(); rfft_state_len(n)];
        if inverse {
            irfft_init(n, &mut state).unwrap();
        } else {
            rfft_init(n, &mut state).unwrap();
        }
        let constants = 2 * (n / 2 + n / 4);
        state[..constants].iter().map(|v| v.bits()).collect()
    }
    let mut checked = 0;
    for n in (4..=4096).step_by(2).filter(|&n| stages(n / 2).is_some()) {
        for inverse in [false, true] {
            let q15 = |v: f64| (0.5 + 32767.0 * v).floor() as i16;
            let q31 = |v: f64| (0.5 + 2147483647.0 * v).floor() as i32;
            assert_eq!(ours::<i16>(n, inverse), host(n, inverse, q15), "i16 {n}");
            assert_eq!(ours::<i32>(n, inverse), host(n, inverse, q31), "i32 {n}");
            assert_eq!(
                ours::<f32>(n, inverse),
                host(n, inverse, |v| v as f32),
                "f32 {n}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100);
}

/// The float RFFT is the DFT (to rounding), and the float IRFFT inverts it.
#[test]
fn float_rfft_is_the_dft() {
    let n = 60;
    let x: Vec<f32> = (0..n)
        .map(|k| ((k * 37 % 11) as f32 - 5.0) * 0.25)
        .collect();
    let mut state = vec![0f32; rfft_state_len(n)];
    rfft_init(n, &mut state).unwrap();
    let mut y = vec![0f32; n + 2];
    rfft(n, &mut state, &x, n, &mut y).unwrap();
    for f in 0..=n / 2 {
        let (mut re, mut im) = (0f64, 0f64);
        for (k, &v) in x.iter().enumerate() {
            let phase = -2.0 * core::f64::consts::PI * (f * k) as f64 / n as f64;
            re += f64::from(v) * phase.cos();
            im += f64::from(v) * phase.sin();
        }
        assert!((f64::from(y[2 * f]) - re).abs() < 1e-4, "re {f}");
        assert!((f64::from(y[2 * f + 1]) - im).abs() < 1e-4, "im {f}");
    }
    let mut inv = vec![0f32; irfft_state_len(n)];
    irfft_init(n, &mut inv).unwrap();
    let mut back = vec![0f32; n];
    irfft(n, &mut inv, &y, &mut back).unwrap();
    for (a, b) in back.iter().zip(&x) {
        assert!((a - b).abs() < 1e-5, "{a} {b}");
    }
}

/// Lengths and shapes TFLM cannot run or that do not fit are refused, never a panic.
#[test]
fn refusals() {
    let options = |r: Result<(), KernelError>| matches!(r, Err(KernelError::Options { .. }));
    let shape = |r: Result<(), KernelError>| matches!(r, Err(KernelError::Shape { .. }));
    for n in [0, 2, 7, 14, 28, 1 << 33] {
        let mut state = vec![0i16; rfft_state_len(n).min(64)];
        assert!(options(rfft_init(n, &mut state)), "{n}");
        assert!(options(irfft_init(n, &mut state)), "{n}");
        assert!(options(rfft(n, &mut state, &[0; 4], 4, &mut [0; 6])), "{n}");
        assert!(options(irfft(n, &mut state, &[0; 6], &mut [0; 4])), "{n}");
    }
    let n = 8;
    let mut state = vec![0f32; rfft_state_len(n)];
    assert!(shape(rfft_init(n, &mut state[1..])));
    rfft_init(n, &mut state).unwrap();
    let mut out = vec![0f32; 20];
    assert!(shape(rfft(
        n,
        &mut state[1..],
        &[0.0; 8],
        8,
        &mut out[..10]
    )));
    assert!(shape(rfft(n, &mut state, &[0.0; 8], 0, &mut out[..10])));
    assert!(shape(rfft(n, &mut state, &[0.0; 9], 9, &mut out[..10])));
    assert!(shape(rfft(n, &mut state, &[0.0; 9], 3, &mut out[..10])));
    assert!(shape(rfft(n, &mut state, &[0.0; 8], 8, &mut out[..12])));
    assert!(rfft(n, &mut state, &[0.0; 12], 6, &mut out).is_ok());
    assert!(rfft(n, &mut state, &[], 6, &mut []).is_ok());
    assert!(shape(irfft(n, &mut state, &[0.0; 11], &mut out[..8])));
    assert!(shape(irfft(n, &mut state, &[0.0; 10], &mut out[..9])));
    assert!(irfft(n, &mut state, &[0.0; 20], &mut out[..16]).is_ok());
    assert!(shape(fft_auto_scale(&[1, 2], &mut [0; 3], &mut [0])));
    assert!(shape(fft_auto_scale(&[1, 2], &mut [0; 2], &mut [])));
    assert!(shape(fft_auto_scale(&[1, 2], &mut [0; 2], &mut [0; 2])));
}
