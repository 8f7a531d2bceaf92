// A plan with row overlap (`plans/rows.plan.json`, TFLM's micro_speech model): its
// DEPTHWISE_CONV_2D writes its output rows over the input rows it has read, the output
// starting 2,240 bytes before the input in one buffer. `run()` calls the usual kernel band
// by band; on the input of TFLite Micro's golden run (`tests/run-models/goldens`) the output
// is TFLite Micro's, and it depends on the input.
planner_macros::include_model!("../plans/rows.plan.json");

use planner::rt::kernel::{Hooks, Tap};

/// The golden run's input seed and TFLite Micro's output for it.
const SEED: u64 = 1592591360;
const TFLM: [i8; 4] = [0x80u8 as i8, 0x96u8 as i8, 0xea_u8 as i8, 0x00];

/// The depthwise op's output as the tap shows it.
#[derive(Default)]
struct Taps(Vec<usize>);

impl Hooks for Taps {
    fn tap(&mut self, tap: &Tap<'_, '_>) {
        if tap.index == 1 {
            self.0.push(tap.output(0).and_then(|o| o.data.len()).unwrap_or(0));
        }
    }
}

fn main() {
    let mut model = rows::Model::take().unwrap().init();
    let mut run = |seed: u64| {
        planner_kernels::golden::fill_i8(model.input_reshape_1_mut(), seed);
        let mut taps = Taps::default();
        model
            .run_with(&mut planner_kernels::Reference::default(), &mut taps)
            .unwrap();
        (model.output_labels_softmax().to_vec(), taps.0)
    };
    let (out, taps) = run(SEED);
    assert_eq!(out, TFLM);
    // The tap shows the op's 4,000-element output, not the buffer it shared with its input.
    assert_eq!(taps, [4000]);
    // Another input, another output: the comparison above depends on the input.
    assert_ne!(run(SEED + 1).0, TFLM);
}
