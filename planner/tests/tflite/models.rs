//! The bundled real models (`models/`, see `models/NOTICE`) and the figures measured for
//! each when it was added.

use std::path::{Path, PathBuf};

/// One bundled model and the figures measured for it when it was added (its source is in
/// `models/NOTICE`).
pub struct Figures {
    pub name: &'static str,
    pub ops: usize,
    pub tensors: usize,
    /// Bytes of constant data, each buffer counted once.
    pub weights: u64,
    /// Largest sum of live activation bytes at one op.
    pub lb: u64,
    /// The same with every size rounded up to 16.
    pub lb16: u64,
}

pub const MODELS: [Figures; 12] = [
    Figures {
        name: "tflm_hello_world_int8",
        ops: 3,
        tensors: 10,
        weights: 420,
        lb: 32,
        lb16: 32,
    },
    Figures {
        name: "tflm_micro_speech_int8",
        ops: 4,
        tensors: 10,
        weights: 16_704,
        lb: 5_960,
        lb16: 5_968,
    },
    Figures {
        name: "tflm_keyword_scrambled_8bit",
        ops: 15,
        tensors: 54,
        weights: 22_728,
        lb: 288,
        lb16: 288,
    },
    Figures {
        name: "tflm_mnist_lstm_int8",
        ops: 4,
        tensors: 27,
        weights: 9_808,
        lb: 1_344,
        lb16: 1_344,
    },
    Figures {
        name: "tflm_person_detect_int8",
        ops: 31,
        tensors: 89,
        weights: 218_928,
        lb: 55_296,
        lb16: 55_296,
    },
    Figures {
        name: "tflm_micro_speech_lstm",
        ops: 4,
        tensors: 27,
        weights: 120_900,
        lb: 16_513,
        lb16: 16_528,
    },
    Figures {
        name: "tiny_kws_dscnn_int8",
        ops: 13,
        tensors: 35,
        weights: 24_376,
        lb: 16_000,
        lb16: 16_000,
    },
    Figures {
        name: "tiny_ad01_int8",
        ops: 10,
        tensors: 31,
        weights: 270_880,
        lb: 768,
        lb16: 768,
    },
    Figures {
        name: "tiny_ic_resnet8_int8",
        ops: 16,
        tensors: 38,
        weights: 78_752,
        lb: 49_152,
        lb16: 49_152,
    },
    Figures {
        name: "tiny_str_ww_int8",
        ops: 11,
        tensors: 31,
        weights: 48_396,
        lb: 6_656,
        lb16: 6_656,
    },
    Figures {
        name: "te_mcunet_vww",
        ops: 63,
        tensors: 163,
        weights: 445_128,
        lb: 161_472,
        lb16: 161_472,
    },
    Figures {
        name: "te_mcunetv2_large",
        ops: 163,
        tensors: 380,
        weights: 1_850_546,
        lb: 2_451_840,
        lb16: 2_451_840,
    },
];

/// The path of a bundled model.
pub fn model_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models")
        .join(format!("{name}.tflite"))
}
