//! TFLM's signal ops: their FlexBuffers options read into typed options, the state the
//! framing, noise-reduction and FFT ops keep made variable tensors of the plan, and every
//! bad options map an error naming the file, the op and what is wrong.

use super::builder::*;
use planner::graph::{DType, TensorKind};
use planner::rt::options::{OpOptions, SignalDelayOptions};

/// `{"delay_length": 3}`, `{"delay_length": "x"}`, `{"delay_length": 3, "extra": 1}` and
/// `{"delay_length": -2}` as Python's `flexbuffers.Dumps` writes them.
const DELAY_3: &[u8] = &[
    100, 101, 108, 97, 121, 95, 108, 101, 110, 103, 116, 104, 0, 1, 14, 1, 1, 1, 3, 4, 2, 36, 1,
];
const DELAY_STRING: &[u8] = &[
    100, 101, 108, 97, 121, 95, 108, 101, 110, 103, 116, 104, 0, 1, 120, 0, 1, 17, 1, 1, 1, 7, 20,
    2, 36, 1,
];
const DELAY_EXTRA: &[u8] = &[
    100, 101, 108, 97, 121, 95, 108, 101, 110, 103, 116, 104, 0, 101, 120, 116, 114, 97, 0, 2, 20,
    8, 2, 1, 2, 3, 1, 4, 4, 4, 36, 1,
];
const DELAY_NEGATIVE: &[u8] = &[
    100, 101, 108, 97, 121, 95, 108, 101, 110, 103, 116, 104, 0, 1, 14, 1, 1, 1, 254, 4, 2, 36, 1,
];

/// Input `x` int16 [2, 5] -> `SignalDelay` with `options` (format `format`) -> `y`.
fn delay_model(options: &[u8], format: i8) -> ModelSpec {
    let int16 = |name, shape: &[i32]| TensorSpec {
        ty: 7,
        ..tensor(name, shape, 0)
    };
    let mut delay = op(0, &[0], &[1]);
    delay.custom = Some((options.to_vec(), format));
    ModelSpec {
        version: 3,
        codes: vec![CodeSpec {
            deprecated: 32,
            builtin: 32,
            custom: Some("SignalDelay"),
        }],
        subgraphs: vec![SubgraphSpec {
            tensors: vec![int16("x", &[2, 5]), int16("y", &[2, 5])],
            ops: vec![delay],
            inputs: vec![0],
            outputs: vec![1],
        }],
        buffers: vec![BufferSpec::Empty],
        signature: None,
    }
}

#[test]
fn signal_options_and_state_are_read() {
    let g = read_built(&delay_model(DELAY_3, 0)).unwrap();
    let op = &g.ops[0];
    assert_eq!(op.opcode, "CUSTOM:SignalDelay");
    assert_eq!(
        op.options,
        OpOptions::SignalDelay(SignalDelayOptions { delay_length: 3 })
    );
    // The delay line: one variable int16 tensor of 2 rows x 3 samples, appended to the
    // op's inputs and to the graph's tensors.
    assert_eq!(op.inputs.len(), 2);
    let state = &g.tensors[op.inputs[1].unwrap().get()];
    assert_eq!(state.name, "y/state0");
    assert_eq!(
        (state.kind, state.dtype, state.shape.as_slice(), state.size),
        (TensorKind::Variable, DType::I16, &[6u64][..], 12)
    );
    assert_eq!(g.tensors.len(), 3);
}

#[test]
fn bad_signal_options_say_what_is_wrong() {
    for (options, format, says) in [
        (
            DELAY_STRING,
            0,
            "its option `delay_length` is a value of FlexBuffers type 5, not an integer",
        ),
        (
            DELAY_EXTRA,
            0,
            "unknown [\"extra\"]; TFLM's kernel reads exactly [\"delay_length\"] (by position)",
        ),
        (
            DELAY_NEGATIVE,
            0,
            "its option `delay_length` is -2; it must be at least 0",
        ),
        (&[], 0, "missing [\"delay_length\"]"),
        (
            DELAY_3,
            1,
            "its custom_options_format is 1; TFLM reads FlexBuffers (0) only",
        ),
        (
            &DELAY_3[..DELAY_3.len() - 4],
            0,
            "its custom options are not a FlexBuffers map",
        ),
    ] {
        let msg = error_of(&delay_model(options, format));
        assert!(msg.contains("op 0 (CUSTOM:SignalDelay)"), "{msg}");
        assert!(msg.contains(says), "{msg}");
    }
    // Every truncation and every byte of the map changed: read or refused, never a panic.
    for n in 0..DELAY_3.len() {
        let _ = read_built(&delay_model(&DELAY_3[..n], 0));
        let _ = read_built(&delay_model(&DELAY_3[n..], 0));
    }
    for i in 0..DELAY_3.len() {
        for b in [0u8, 1, 4, 36, 37, 0x80, 0xff] {
            let mut v = DELAY_3.to_vec();
            v[i] = b;
            let _ = read_built(&delay_model(&v, 0));
        }
    }
}
