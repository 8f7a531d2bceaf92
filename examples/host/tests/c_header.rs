//! C code compiled against the generated header finds the same bytes as the Rust views.

use host::hello_world;

#[test]
fn c_and_rust_agree_on_the_plan_and_the_bytes() {
    let mut model = hello_world::Model::take().unwrap().init();
    // SAFETY: the C functions only return constants from the header.
    let (hash, regions) = unsafe { (host::host_c_plan_hash(), host::host_c_region_count()) };
    assert_eq!(hash, hello_world::PLAN_HASH);
    assert_eq!(regions as usize, hello_world::ARENAS.len());

    // Offsets and sizes: the header's against the Rust side's plan table.
    let rust = |id: &str| {
        let s = hello_world::PLAN.slots.iter().find(|s| s.id == id).unwrap();
        (s.offset as u32, s.size as u32)
    };
    let ids = [
        hello_world::tensors::SEQUENTIAL_DENSE_1_MAT_MUL.id,
        hello_world::inputs::SERVING_DEFAULT_DENSE_INPUT_0.id,
    ];
    for (which, id) in ids.into_iter().enumerate() {
        // SAFETY: as above.
        let c = unsafe {
            (
                host::host_c_tensor_offset(which as u32),
                host::host_c_tensor_size(which as u32),
            )
        };
        assert_eq!(c, rust(id), "tensor {id}");
    }

    // Bytes: C sums through region + offset, Rust through the typed views.
    model.input_serving_default_dense_input_0_mut()[0] = -77;
    let rust_weights: i64 = model
        .tensor_sequential_dense_1_mat_mul()
        .iter()
        .map(|&w| i64::from(w))
        .sum();
    let rust_input: i64 = model
        .input_serving_default_dense_input_0()
        .iter()
        .map(|&x| i64::from(x))
        .sum();
    let ptrs = model.arena_ptrs();
    // SAFETY: `ptrs` holds one base per region in header order, each valid for its region's
    // size; the C functions only read; no Rust view is alive while they run.
    let (c_weights, c_input) = unsafe {
        (
            host::host_c_sum_dense_1_weights(ptrs.as_ptr()),
            host::host_c_sum_input(ptrs.as_ptr()),
        )
    };
    assert_eq!(c_input, rust_input);
    assert_eq!(c_input, -77);
    assert_eq!(c_weights, rust_weights);
    // The staged weights were copied: a zeroed DTCM arena would sum to 0.
    assert_ne!(rust_weights, 0);
}
