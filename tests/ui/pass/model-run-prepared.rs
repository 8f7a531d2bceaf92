// A model planned with `[kernels] set = "optimized"` (the hello_world model: three int8
// FULLY_CONNECTED ops) runs with a kernel set that declares it reads requant-v1: each op gets
// its prepared constant as input 3, and its rows are what `planner::rt::prepare` computes
// from the op's own filter, bias and scales.
planner_macros::include_model!("../plans/prepared.plan.json");

use planner::rt::Quant;
use planner::rt::kernel::{FullyConnected, Kernel, OpView, RequantV1};
use planner::rt::options::FullyConnectedOptions;
use planner::rt::prepare::{FilterLayout, RequantInputs, requant_v1};

struct Checked {
    ops: usize,
}

impl Kernel for Checked {
    type Error = &'static str;
}

impl RequantV1 for Checked {}

fn params(q: Option<Quant>) -> Result<(f32, i32), &'static str> {
    let (scale, zero) = q.and_then(|q| q.params(0)).ok_or("no quantisation")?;
    Ok((scale, zero as i32))
}

impl FullyConnected for Checked {
    fn fully_connected(&mut self, op: OpView<'_, '_>, _: &FullyConnectedOptions) -> Result<(), &'static str> {
        let x = op.input(0).ok_or("input 0")?;
        let w = op.input(1).ok_or("input 1")?;
        let prepared = op.input(3).and_then(|p| p.i32()).ok_or("prepared input 3")?;
        let (input_scale, input_zero_point) = params(x.quant)?;
        let (output_scale, _) = params(op.outputs[0].quant)?;
        let mut rows = [0i32; 48];
        let rows = rows.get_mut(..prepared.len()).ok_or("more than 16 channels")?;
        let inputs = RequantInputs {
            filter: w.i8().ok_or("filter")?,
            layout: FilterLayout::ChannelFirst,
            channels: prepared.len() / 3,
            bias: op.input(2).and_then(|b| b.i32()),
            input_scale,
            input_zero_point,
            filter_scales: w.quant.ok_or("filter quantisation")?.scale,
            output_scale,
        };
        requant_v1(&inputs, rows).map_err(|_| "requant_v1")?;
        if rows != prepared {
            return Err("the prepared constant differs from requant_v1");
        }
        self.ops += 1;
        Ok(())
    }
}

fn main() {
    let mut model = prepared::Model::take().unwrap().init();
    let mut kernels = Checked { ops: 0 };
    model.run(&mut kernels).unwrap();
    assert_eq!(kernels.ops, 3);
}
