//! The options of TFLM's signal library ops (`CUSTOM:Signal*`): FlexBuffers maps in
//! `Operator.custom_options`, read through the bounded reader of `flex`.
//!
//! | custom code | keys (sorted, as stored) |
//! |---|---|
//! | `SignalWindow` | `shift` |
//! | `SignalRfft`, `SignalIrfft` | `T` (not read), `fft_length` (at least 1) |
//! | `SignalEnergy` | `end_index`, `start_index` |
//! | `SignalFilterBank` | `num_channels` (at least 1) |
//! | `SignalFilterBankLog` | `input_correction_bits`, `output_scale` |
//! | `SignalFilterBankSpectralSubtraction` | `alternate_one_minus_smoothing`, `alternate_smoothing`, `clamping`, `min_signal_remaining`, `num_channels` (at least 1), `one_minus_smoothing`, `smoothing`, `smoothing_bits`, `spectral_subtraction_bits` |
//! | `SignalPCAN` | `snr_shift` |
//! | `SignalFramer` | `frame_size`, `frame_step` (both at least 1), `prefill` |
//! | `SignalStacker` | `num_channels` (at least 1), `stacker_left_context`, `stacker_right_context` (at least 0), `stacker_step` (at least 1) |
//! | `SignalDelay` | `delay_length` (at least 0) |
//! | `SignalOverlapAdd` | `T` (not read), `frame_step` (at least 1) |
//! | `SignalFftAutoScale`, `SignalFilterBankSquareRoot` | none read |
//!
//! TFLM's kernels read these values by position, so the map must hold exactly these keys.
//!
//! `TFLite_Detection_PostProcess` (the SSD decoder, [`detection_postprocess`]) reads its keys
//! by name: `max_detections`, `max_classes_per_detection`, `num_classes` (at least 1), the
//! floats `nms_score_threshold`, `nms_iou_threshold`, `y_scale`, `x_scale`, `h_scale`,
//! `w_scale`, and the optional `detections_per_class` (100 when absent) and
//! `use_regular_nms` (false when absent); other keys are ignored, as TFLM ignores them.

use super::super::flex::Map;
use super::ctx::Ctx;
use super::*;
use crate::rt::options::{
    DetectionPostprocessOptions, SignalDelayOptions, SignalEnergyOptions, SignalFftOptions, SignalFilterBankLogOptions,
    SignalFilterBankOptions, SignalFramerOptions, SignalOverlapAddOptions, SignalPcanOptions,
    SignalSpectralSubtractionOptions, SignalStackerOptions, SignalWindowOptions,
};

/// The typed options of a `CUSTOM:Signal*` op; [`OpOptions::None`] for a custom code of
/// the `Signal` family that TFLM does not have.
pub(super) fn options(cx: &Ctx<'_, '_, '_>) -> Result<OpOptions> {
    let code = cx.op.opcode.trim_start_matches("CUSTOM:");
    let keys: &[&str] = match code {
        "SignalWindow" => &["shift"],
        "SignalRfft" | "SignalIrfft" => &["T", "fft_length"],
        "SignalEnergy" => &["end_index", "start_index"],
        "SignalFilterBank" => &["num_channels"],
        "SignalFilterBankLog" => &["input_correction_bits", "output_scale"],
        "SignalFilterBankSpectralSubtraction" => &[
            "alternate_one_minus_smoothing",
            "alternate_smoothing",
            "clamping",
            "min_signal_remaining",
            "num_channels",
            "one_minus_smoothing",
            "smoothing",
            "smoothing_bits",
            "spectral_subtraction_bits",
        ],
        "SignalPCAN" => &["snr_shift"],
        "SignalFramer" => &["frame_size", "frame_step", "prefill"],
        "SignalStacker" => &[
            "num_channels",
            "stacker_left_context",
            "stacker_right_context",
            "stacker_step",
        ],
        "SignalDelay" => &["delay_length"],
        "SignalOverlapAdd" => &["T", "frame_step"],
        "SignalFftAutoScale" => return Ok(OpOptions::SignalFftAutoScale(NoOptions {})),
        "SignalFilterBankSquareRoot" => {
            return Ok(OpOptions::SignalFilterBankSquareRoot(NoOptions {}));
        }
        _ => return Ok(OpOptions::None),
    };
    let m = map(cx)?;
    m.expect(keys).map_err(|e| bad(cx, e))?;
    let int = |key: &str| m.int32(key).map_err(|e| bad(cx, e));
    let at_least = |key: &str, min: i32| at_least(cx, &m, key, min);
    let boolean = |key: &str| m.boolean(key).map_err(|e| bad(cx, e));
    Ok(match code {
        "SignalWindow" => OpOptions::SignalWindow(SignalWindowOptions {
            shift: int("shift")?,
        }),
        "SignalRfft" | "SignalIrfft" => {
            let fft_length = at_least("fft_length", 1)?;
            let o = SignalFftOptions { fft_length };
            if code == "SignalRfft" {
                OpOptions::SignalRfft(o)
            } else {
                OpOptions::SignalIrfft(o)
            }
        }
        "SignalEnergy" => OpOptions::SignalEnergy(SignalEnergyOptions {
            start_index: at_least("start_index", 0)?,
            end_index: at_least("end_index", 0)?,
        }),
        "SignalFilterBank" => OpOptions::SignalFilterBank(SignalFilterBankOptions {
            num_channels: at_least("num_channels", 1)?,
        }),
        "SignalFilterBankLog" => OpOptions::SignalFilterBankLog(SignalFilterBankLogOptions {
            input_correction_bits: int("input_correction_bits")?,
            output_scale: int("output_scale")?,
        }),
        "SignalFilterBankSpectralSubtraction" => {
            OpOptions::SignalFilterBankSpectralSubtraction(SignalSpectralSubtractionOptions {
                alternate_one_minus_smoothing: int("alternate_one_minus_smoothing")?,
                alternate_smoothing: int("alternate_smoothing")?,
                clamping: boolean("clamping")?,
                min_signal_remaining: int("min_signal_remaining")?,
                num_channels: at_least("num_channels", 1)?,
                one_minus_smoothing: int("one_minus_smoothing")?,
                smoothing: int("smoothing")?,
                smoothing_bits: int("smoothing_bits")?,
                spectral_subtraction_bits: int("spectral_subtraction_bits")?,
            })
        }
        "SignalPCAN" => OpOptions::SignalPcan(SignalPcanOptions {
            snr_shift: int("snr_shift")?,
        }),
        "SignalFramer" => OpOptions::SignalFramer(SignalFramerOptions {
            frame_size: at_least("frame_size", 1)?,
            frame_step: at_least("frame_step", 1)?,
            prefill: boolean("prefill")?,
        }),
        "SignalStacker" => OpOptions::SignalStacker(SignalStackerOptions {
            num_channels: at_least("num_channels", 1)?,
            stacker_left_context: at_least("stacker_left_context", 0)?,
            stacker_right_context: at_least("stacker_right_context", 0)?,
            stacker_step: at_least("stacker_step", 1)?,
        }),
        "SignalDelay" => OpOptions::SignalDelay(SignalDelayOptions {
            delay_length: at_least("delay_length", 0)?,
        }),
        _ => OpOptions::SignalOverlapAdd(SignalOverlapAddOptions {
            frame_step: at_least("frame_step", 1)?,
        }),
    })
}

/// The options of a `TFLite_Detection_PostProcess` op, read by key as TFLM reads them.
pub(super) fn detection_postprocess(cx: &Ctx<'_, '_, '_>) -> Result<OpOptions> {
    let m = map(cx)?;
    let int = |key: &str, min: i32| at_least(cx, &m, key, min);
    let float = |key: &str| m.float32(key).map_err(|e| bad(cx, e));
    Ok(OpOptions::DetectionPostprocess(DetectionPostprocessOptions {
        max_detections: int("max_detections", 0)?,
        max_classes_per_detection: int("max_classes_per_detection", 0)?,
        detections_per_class: if m.has("detections_per_class") {
            int("detections_per_class", 0)?
        } else {
            100
        },
        use_regular_nms: m.has("use_regular_nms")
            && m.boolean("use_regular_nms").map_err(|e| bad(cx, e))?,
        nms_score_threshold: float("nms_score_threshold")?,
        nms_iou_threshold: float("nms_iou_threshold")?,
        num_classes: int("num_classes", 1)?,
        y_scale: float("y_scale")?,
        x_scale: float("x_scale")?,
        h_scale: float("h_scale")?,
        w_scale: float("w_scale")?,
    }))
}

/// The op's custom options as a FlexBuffers map (none: an empty map).
fn map<'b>(cx: &Ctx<'_, '_, 'b>) -> Result<Map<'b>> {
    let format = cx.table.custom_options_format().unwrap_or(0);
    if format != 0 {
        return Err(bad(
            cx,
            format!("its custom_options_format is {format}; TFLM reads FlexBuffers (0) only"),
        ));
    }
    let bytes = cx.table.custom_options().map_or(&[][..], |v| v.bytes());
    Map::root(bytes).map_err(|e| bad(cx, format!("its custom options are not a FlexBuffers map: {e}")))
}

/// The int32 option `key` of map `m`, at least `min`.
fn at_least(cx: &Ctx<'_, '_, '_>, m: &Map<'_>, key: &str, min: i32) -> Result<i32> {
    let v = m.int32(key).map_err(|e| bad(cx, e))?;
    if v < min {
        return Err(bad(
            cx,
            format!("its option `{key}` is {v}; it must be at least {min}"),
        ));
    }
    Ok(v)
}

/// An error about op `k`'s custom options.
fn bad(cx: &Ctx<'_, '_, '_>, problem: String) -> crate::error::Error {
    cx.r.err(
        format_args!("{}: {problem}", cx.what()),
        "export the model again with the options TFLM's signal library writes for this op (its Python op wrapper)",
    )
}
