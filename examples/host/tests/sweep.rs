//! The model, run through the generated views with the example's kernel, approximates sin.

#[test]
fn hello_world_tracks_sin_over_a_period() {
    let mut model = host::hello_world::Model::take().unwrap().init();
    // The handle is taken once per process, so this test also covers pre-processing in the
    // planned step-scope slab: each step keeps two f32 temporaries for eight inputs, 64
    // bytes of the 192-byte slab.
    let mut xs = [0.0f32; 21];
    let f = host::sweep_inputs(&mut model, &mut xs).unwrap();
    assert_eq!(
        (f.capacity, f.high_water, f.needed, f.overflow),
        (192, 64, 64, 0)
    );
    for (i, x) in xs.iter().enumerate() {
        assert_eq!(*x, i as f32 * std::f32::consts::TAU / 20.0);
    }
    // The slab's bytes are zeroed again afterwards.
    assert!(model.tensor_pre().iter().all(|&b| b == 0));
    let mut total = 0.0f32;
    let mut worst = 0.0f32;
    let n = 100;
    for i in 0..n {
        let x = i as f32 * std::f32::consts::TAU / n as f32;
        let err = (host::infer(&mut model, x) - x.sin()).abs();
        total += err;
        worst = worst.max(err);
    }
    let mean = total / n as f32;
    // The TFLM model itself is this close; wrong weights, offsets or quantisation are not.
    assert!(mean < 0.05, "mean error {mean}");
    assert!(worst < 0.2, "largest error {worst}");
}

#[test]
fn constants_and_io_carry_their_quantisation() {
    use host::hello_world::{inputs, ops, outputs, tensors};
    assert_eq!(inputs::SERVING_DEFAULT_DENSE_INPUT_0.shape, &[1, 1]);
    assert_eq!(outputs::DENSE_2.elements, 1);
    assert_eq!(ops::Op1::INPUT1.shape, &[16, 16]);
    assert_eq!(ops::Op1::INPUT1.dtype, "i8");
    assert_eq!(tensors::SEQUENTIAL_DENSE_1_MAT_MUL.size, 256);
    let (scale, zero) = ops::Op0::INPUT2.params().unwrap();
    assert!(
        scale > 0.0 && zero == 0,
        "bias scale {scale}, zero point {zero}"
    );
    assert_eq!(host::hello_world::OPCODES, ["FULLY_CONNECTED"; 3]);
}
