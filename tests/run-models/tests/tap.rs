//! The tap (`Hooks::tap`): after each op ran, a hook sees its inputs and outputs read-only.

use planner::planfile::PlanFile;
use run_models::{MODELS, Record, Set, input};

/// On every model the reference kernels run: op `k`'s recorded outputs have the sizes of
/// its output tensors, each model input is the input of the ops that read it, each model
/// output the output of the op that writes it, and an op's input is the output of the op
/// that wrote it (as the tap saw both).
#[test]
fn the_tap_sees_every_op_s_inputs_and_outputs() {
    let mut seen = 0;
    for model in MODELS.iter().filter(|m| m.supported()) {
        let plan = PlanFile::parse(
            std::str::from_utf8(model.plan_file()).unwrap(),
            model.name(),
        )
        .unwrap();
        let inputs: Vec<Vec<u8>> = plan
            .inputs
            .iter()
            .enumerate()
            .map(|(j, io)| {
                let t = &plan.tensors[io.tensor as usize];
                let count = t.shape.iter().product::<u64>() as usize;
                let dtype = match t.dtype.name() {
                    "i8" => "int8",
                    "i16" => "int16",
                    "f32" => "float32",
                    other => panic!("{}: no input generator for {other}", model.name()),
                };
                input(dtype, count, 7 + j as u64).unwrap()
            })
            .collect();
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut record = Record::default();
        let outputs = model.run(&refs, Set::Reference, &mut record).unwrap();
        assert_eq!(record.ops.len(), plan.ops.len(), "{}", model.name());
        // Who wrote each tensor, and what the tap saw there.
        let mut written = std::collections::BTreeMap::new();
        for (k, op) in plan.ops.iter().enumerate() {
            for (j, &t) in op.outputs.iter().enumerate() {
                let bytes = &record.ops[k][j];
                assert_eq!(
                    bytes.len() as u64,
                    plan.tensors[t as usize].size,
                    "{} op {k}",
                    model.name()
                );
                written.insert(t, bytes.clone());
            }
            for (j, t) in op.inputs.iter().enumerate() {
                let Some(t) = t else { continue };
                let seen_in = record.inputs[k][j].as_ref();
                if let Some(i) = plan.inputs.iter().position(|io| io.tensor == *t) {
                    assert_eq!(
                        seen_in,
                        Some(&inputs[i]),
                        "{} op {k} input {j}",
                        model.name()
                    );
                }
                // A variable's bytes change as the op runs; others are what their writer left.
                if let Some(w) = written.get(t)
                    && plan.tensors[*t as usize].kind != planner::graph::TensorKind::Variable
                {
                    assert_eq!(seen_in, Some(w), "{} op {k} input {j}", model.name());
                }
            }
        }
        for (o, io) in plan.outputs.iter().enumerate() {
            assert_eq!(
                written.get(&io.tensor),
                Some(&outputs[o]),
                "{} output {o}",
                model.name()
            );
        }
        seen += 1;
    }
    assert!(seen >= 10, "{seen} models run");
}
