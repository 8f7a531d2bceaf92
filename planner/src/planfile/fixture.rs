//! A small planned model for tests here and in the macro and build crates (behind the
//! `fixture` feature, which only their dev-dependencies enable): two FULLY_CONNECTED ops,
//! int8 activations in a scratch arena in SRAM, weights in a constant arena in FLASH; and a
//! model with every kind of arena.

use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use crate::graph::{
    DType, Graph, IoName, Op, OpOptions, Quantization, Tensor, TensorIndex, TensorKind,
};
use crate::plan::{
    ArenaRole, ArenaUsage, MemoryConstraint, MemoryPlan, TensorAllocation, TensorBinding,
    TensorLifetime,
};

use super::Layout;

fn tensor(id: &str, dtype: DType, shape: &[u64], kind: TensorKind, seed: u8) -> Tensor {
    let elements: u64 = shape.iter().product();
    let size = dtype.bytes_for(elements).unwrap_or(0);
    let data = (kind == TensorKind::Constant).then(|| {
        (0..size)
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
            .collect::<Vec<u8>>()
            .into()
    });
    Tensor {
        id: id.to_string(),
        name: format!("tiny/{id}"),
        dtype,
        shape: shape.to_vec(),
        size,
        kind,
        quantization: Some(Quantization {
            scale: vec![0.5],
            zero_point: vec![-1],
            axis: 0,
        }),
        align_hint: None,
        data: data.map(|d: Arc<[u8]>| d),
    }
}

fn fc() -> OpOptions {
    OpOptions::FullyConnected(Default::default())
}

/// A model input or output list of one: `name`, tensor number `tensor`.
fn io(name: &str, tensor: u32) -> Vec<IoName> {
    vec![IoName {
        name: name.to_string(),
        tensor: TensorIndex(tensor),
    }]
}

/// The graph and its plan: `in -> FC(w1, b1) -> h -> FC(w2, b2) -> out`.
pub fn tiny() -> (Graph, MemoryPlan, Layout) {
    use TensorKind::*;
    let tensors = vec![
        tensor("in", DType::I8, &[1, 4], Activation, 0),
        tensor("w1", DType::I8, &[4, 4], Constant, 1),
        tensor("b1", DType::I32, &[4], Constant, 2),
        tensor("h", DType::I8, &[1, 4], Activation, 0),
        tensor("w2", DType::I8, &[4, 4], Constant, 3),
        tensor("b2", DType::I32, &[4], Constant, 4),
        tensor("out", DType::I8, &[1, 4], Activation, 0),
    ];
    let graph = Graph {
        name: "tiny".to_string(),
        tensors,
        ops: vec![
            Op::fixture("FULLY_CONNECTED", &[Some(0), Some(1), Some(2)], 3, fc()),
            Op::fixture("FULLY_CONNECTED", &[Some(3), Some(4), Some(5)], 6, fc()),
        ],
        inputs: io("x", 0),
        outputs: io("y", 6),
        ..Graph::default()
    };
    let mut plan = MemoryPlan::default();
    let scratch = ("SRAM", ArenaRole::Scratch, "SRAM");
    let in_h_out = [("in", 0, 4, (0, 0)), ("h", 16, 4, (0, 1)), ("out", 0, 4, (1, 1))];
    arena(&mut plan, scratch, (1024, 16, 20), &in_h_out);
    let weights = [
        ("w1", 0, 16, (0, 1)),
        ("b1", 16, 16, (0, 1)),
        ("w2", 32, 16, (0, 1)),
        ("b2", 48, 16, (0, 1)),
    ];
    arena(&mut plan, ("FLASH", ArenaRole::Constant, "FLASH"), (4096, 16, 64), &weights);
    let layout = Layout {
        min_alignment: 16,
        constraints: vec![MemoryConstraint {
            name: String::from("SRAM"),
            max_size: Some(2048),
            arena_alignment: None,
            app_bound: false,
        }],
    };
    (graph, plan, layout)
}

/// A tensor in an arena: id, offset, size and the ops over which it is live.
type Slot<'a> = (&'a str, u64, u64, (u32, u32));

/// Adds to `plan` the arena of `(memory, role, source memory)`, `(size, alignment, used)`
/// bytes, and the tensors `slots` in it: their allocations, bindings and lifetimes.
fn arena(
    plan: &mut MemoryPlan,
    (memory, role, source): (&str, ArenaRole, &str),
    (total, alignment, used): (u64, u64, u64),
    slots: &[Slot<'_>],
) {
    let mut usage = ArenaUsage::new(memory, role, source, total, alignment);
    usage.used = used;
    let arenas = match role {
        ArenaRole::Scratch => &mut plan.arena_usages,
        ArenaRole::Persistent => &mut plan.persistent_arenas,
        ArenaRole::Constant => &mut plan.constant_arenas,
    };
    arenas.insert(memory.to_string(), usage);
    for &(id, offset, size, live) in slots {
        plan.tensor_allocs.insert(
            id.to_string(),
            TensorAllocation {
                tensor_id: id.to_string(),
                memory: memory.to_string(),
                offset,
                size,
                binding: Some(TensorBinding {
                    role,
                    memory: memory.to_string(),
                    source_memory: source.to_string(),
                    offset,
                }),
            },
        );
        plan.tensor_lifetimes.insert(
            id.to_string(),
            TensorLifetime {
                tensor_id: id.to_string(),
                start_op: live.0,
                end_op: live.1,
            },
        );
    }
}

/// A model with every kind of arena: scratch and persistent in SRAM, weights staged
/// from FLASH into DTCM, and an alias (a reshape's output is its input's bytes):
/// `in -> FC(w) -> out`, `RESHAPE(out) -> r`, `ADD(r, state) -> state`.
pub fn stateful() -> (Graph, MemoryPlan, Layout) {
    use TensorKind::*;
    let graph = Graph {
        name: "stateful".to_string(),
        tensors: vec![
            tensor("in", DType::I8, &[1, 4], Activation, 0),
            tensor("w", DType::I8, &[4, 4], Constant, 5),
            tensor("out", DType::I8, &[1, 4], Activation, 0),
            tensor("r", DType::I8, &[4], Activation, 0),
            tensor("state", DType::I16, &[4], Variable, 0),
        ],
        ops: vec![
            Op::fixture("FULLY_CONNECTED", &[Some(0), Some(1), None], 2, fc()),
            Op::fixture(
                "RESHAPE",
                &[Some(2)],
                3,
                OpOptions::Reshape(crate::rt::options::ReshapeOptions {
                    new_shape: crate::rt::options::Dims::new(&[4]).unwrap_or_default(),
                }),
            ),
            Op::fixture(
                "ADD",
                &[Some(3), Some(4)],
                4,
                OpOptions::Add(Default::default()),
            ),
        ],
        inputs: io("in", 0),
        outputs: io("state", 4),
        aliases: vec![(TensorIndex(3), TensorIndex(2))],
        ..Graph::default()
    };
    let mut plan = MemoryPlan::default();
    let scratch = ("SRAM", ArenaRole::Scratch, "SRAM");
    let in_out_r = [("in", 0, 4, (0, 0)), ("out", 16, 4, (0, 2)), ("r", 16, 4, (0, 2))];
    arena(&mut plan, scratch, (1024, 16, 20), &in_out_r);
    let state = ("SRAM", ArenaRole::Persistent, "SRAM");
    arena(&mut plan, state, (1024, 16, 8), &[("state", 0, 8, (0, 2))]);
    let staged = ("DTCM", ArenaRole::Constant, "FLASH");
    arena(&mut plan, staged, (256, 32, 16), &[("w", 0, 16, (0, 2))]);
    let layout = Layout {
        min_alignment: 16,
        constraints: vec![],
    };
    (graph, plan, layout)
}
