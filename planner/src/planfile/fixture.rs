//! A small planned model for tests here and in the macro and build crates (behind the
//! `fixture` feature, which only their dev-dependencies enable): two FULLY_CONNECTED ops,
//! int8 activations in a scratch arena in SRAM, weights in a constant arena in FLASH; and a
//! model with every kind of arena.

use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use crate::graph::{DType, Graph, IoName, Op, Quantization, Tensor, TensorIndex, TensorKind};
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
    let t = |i: u32| TensorIndex(i);
    let graph = Graph {
        name: "tiny".to_string(),
        tensors,
        ops: vec![
            Op {
                opcode: "FULLY_CONNECTED".to_string(),
                inputs: vec![Some(t(0)), Some(t(1)), Some(t(2))],
                outputs: vec![t(3)],
                scratch: vec![],
                options: crate::graph::OpOptions::FullyConnected(Default::default()),
            },
            Op {
                opcode: "FULLY_CONNECTED".to_string(),
                inputs: vec![Some(t(3)), Some(t(4)), Some(t(5))],
                outputs: vec![t(6)],
                scratch: vec![],
                options: crate::graph::OpOptions::FullyConnected(Default::default()),
            },
        ],
        inputs: vec![IoName {
            name: "x".to_string(),
            tensor: t(0),
        }],
        outputs: vec![IoName {
            name: "y".to_string(),
            tensor: t(6),
        }],
        aliases: vec![],
        warnings: vec![],
        in_place: vec![],
        folded_pads: vec![],
        patches: None,
    };
    let mut plan = MemoryPlan::default();
    let mut place =
        |id: &str, role: ArenaRole, memory: &str, offset: u64, size: u64, l: (u32, u32)| {
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
                        source_memory: memory.to_string(),
                        offset,
                    }),
                },
            );
            plan.tensor_lifetimes.insert(
                id.to_string(),
                TensorLifetime {
                    tensor_id: id.to_string(),
                    start_op: l.0,
                    end_op: l.1,
                },
            );
        };
    place("in", ArenaRole::Scratch, "SRAM", 0, 4, (0, 0));
    place("h", ArenaRole::Scratch, "SRAM", 16, 4, (0, 1));
    place("out", ArenaRole::Scratch, "SRAM", 0, 4, (1, 1));
    place("w1", ArenaRole::Constant, "FLASH", 0, 16, (0, 1));
    place("b1", ArenaRole::Constant, "FLASH", 16, 16, (0, 1));
    place("w2", ArenaRole::Constant, "FLASH", 32, 16, (0, 1));
    place("b2", ArenaRole::Constant, "FLASH", 48, 16, (0, 1));
    let mut scratch = ArenaUsage::new("SRAM", ArenaRole::Scratch, "SRAM", 1024, 16);
    scratch.used = 20;
    let mut constant = ArenaUsage::new("FLASH", ArenaRole::Constant, "FLASH", 4096, 16);
    constant.used = 64;
    plan.arena_usages.insert("SRAM".to_string(), scratch);
    plan.constant_arenas.insert("FLASH".to_string(), constant);
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

#[allow(clippy::too_many_arguments)]
fn place(
    plan: &mut MemoryPlan,
    id: &str,
    role: ArenaRole,
    memory: &str,
    source: &str,
    offset: u64,
    size: u64,
    live: (u32, u32),
) {
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

/// A model with every kind of arena: scratch and persistent in SRAM, weights staged
/// from FLASH into DTCM, and an alias (a reshape's output is its input's bytes):
/// `in -> FC(w) -> out`, `RESHAPE(out) -> r`, `ADD(r, state) -> state`.
pub fn stateful() -> (Graph, MemoryPlan, Layout) {
    use TensorKind::*;
    let t = TensorIndex;
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
            Op {
                opcode: "FULLY_CONNECTED".to_string(),
                inputs: vec![Some(t(0)), Some(t(1)), None],
                outputs: vec![t(2)],
                scratch: vec![],
                options: crate::graph::OpOptions::FullyConnected(Default::default()),
            },
            Op {
                opcode: "RESHAPE".to_string(),
                inputs: vec![Some(t(2))],
                outputs: vec![t(3)],
                scratch: vec![],
                options: crate::graph::OpOptions::Reshape(crate::rt::options::ReshapeOptions {
                    new_shape: crate::rt::options::Dims::new(&[4]).unwrap_or_default(),
                }),
            },
            Op {
                opcode: "ADD".to_string(),
                inputs: vec![Some(t(3)), Some(t(4))],
                outputs: vec![t(4)],
                scratch: vec![],
                options: crate::graph::OpOptions::Add(Default::default()),
            },
        ],
        inputs: vec![IoName {
            name: "in".to_string(),
            tensor: t(0),
        }],
        outputs: vec![IoName {
            name: "state".to_string(),
            tensor: t(4),
        }],
        aliases: vec![(t(3), t(2))],
        warnings: vec![],
        in_place: vec![],
        folded_pads: vec![],
        patches: None,
    };
    let mut plan = MemoryPlan::default();
    place(
        &mut plan,
        "in",
        ArenaRole::Scratch,
        "SRAM",
        "SRAM",
        0,
        4,
        (0, 0),
    );
    place(
        &mut plan,
        "out",
        ArenaRole::Scratch,
        "SRAM",
        "SRAM",
        16,
        4,
        (0, 2),
    );
    place(
        &mut plan,
        "r",
        ArenaRole::Scratch,
        "SRAM",
        "SRAM",
        16,
        4,
        (0, 2),
    );
    place(
        &mut plan,
        "state",
        ArenaRole::Persistent,
        "SRAM",
        "SRAM",
        0,
        8,
        (0, 2),
    );
    place(
        &mut plan,
        "w",
        ArenaRole::Constant,
        "DTCM",
        "FLASH",
        0,
        16,
        (0, 2),
    );
    let mut scratch = ArenaUsage::new("SRAM", ArenaRole::Scratch, "SRAM", 1024, 16);
    scratch.used = 20;
    let mut persistent = ArenaUsage::new("SRAM", ArenaRole::Persistent, "SRAM", 1024, 16);
    persistent.used = 8;
    let mut staged = ArenaUsage::new("DTCM", ArenaRole::Constant, "FLASH", 256, 32);
    staged.used = 16;
    plan.arena_usages.insert("SRAM".to_string(), scratch);
    plan.persistent_arenas
        .insert("SRAM".to_string(), persistent);
    plan.constant_arenas.insert("DTCM".to_string(), staged);
    let layout = Layout {
        min_alignment: 16,
        constraints: vec![],
    };
    (graph, plan, layout)
}
