// The tiny model's API end to end: one handle, init, tensor and op views, constants.
planner_macros::include_model!("../plans/tiny.plan.json");

fn main() {
    let model = tiny::Model::take().expect("the first take gives the handle");
    assert!(tiny::Model::take().is_none(), "the second take gives nothing");
    let mut model = model.init();

    model.input_x_mut().copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(model.tensor_tiny_in(), &[1, 2, 3, 4]);
    assert_eq!(tiny::inputs::X.shape, &[1, 4]);
    assert_eq!(tiny::tensors::TINY_W1.elements, 16);
    assert_eq!(tiny::tensors::TINY_B1.dtype, "i32");
    assert_eq!(tiny::tensors::TINY_W1.params(), Some((0.5, -1)));
    assert_eq!(tiny::OPCODES, ["FULLY_CONNECTED", "FULLY_CONNECTED"]);
    assert_eq!(tiny::ARENAS, ["scratch.SRAM", "constant.FLASH"]);
    assert_ne!(tiny::PLAN_HASH, 0);

    // Weights come from the blob at their planned offsets (the fixture's byte pattern).
    let w2: Vec<u8> = model.tensor_tiny_w2().iter().map(|&b| b as u8).collect();
    let expected: Vec<u8> = (0..16u8).map(|i| i.wrapping_mul(7).wrapping_add(3)).collect();
    assert_eq!(w2, expected);

    // Op 0 reads `in` and the weights, writes `h`; op 1 reads `h`, writes `out`, which
    // reuses `in`'s bytes.
    let op = model.op0();
    assert_eq!(op.input1.len(), 16);
    assert_eq!(op.input2.len(), 4);
    for (o, i) in op.output0.iter_mut().zip(op.input0) {
        *o = i * 2;
    }
    assert_eq!(tiny::ops::Op0::OPCODE, "FULLY_CONNECTED");
    assert_eq!(tiny::ops::Op0::OUTPUT0.name, "tiny/h");
    let op = model.op1();
    for (o, i) in op.output0.iter_mut().zip(op.input0.iter()) {
        *o = i + 1;
    }
    assert_eq!(model.output_y(), &[3, 5, 7, 9]);
    assert_eq!(model.tensor_tiny_in(), &[3, 5, 7, 9], "out reuses in's slot");

    // `arena_ptrs` takes `&self`: it can be read beside a view.
    let view = model.tensor_tiny_in();
    let beside = model.arena_ptrs();
    assert_eq!((view.len(), beside.len()), (4, 2));

    // Addresses: aligned as planned, C-visible.
    let ptrs = model.arena_ptrs();
    assert_eq!(ptrs[0] as usize % 16, 0);
    assert_eq!(ptrs[1] as usize % 16, 0);
}
