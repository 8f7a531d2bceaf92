// Buffers the application allocates, init's zeroing and hydrating, an alias, and an op whose
// input is also its output.
planner_macros::include_model!("../plans/stateful.plan.json");

use stateful::{Buffers, Model};

#[repr(C, align(32))]
struct Aligned<const N: usize>([u8; N]);

fn buffer<const N: usize>(fill: u8) -> &'static mut [u8] {
    &mut Box::leak(Box::new(Aligned([fill; N]))).0
}

fn main() {
    // Too small, and misaligned: the error names the arena and the numbers.
    let err = Model::from_buffers(Buffers {
        scratch_sram: buffer::<8>(0),
        persistent_sram: buffer::<64>(0),
        constant_dtcm: buffer::<64>(0),
    })
    .err()
    .unwrap();
    assert_eq!(err.arena, "scratch.SRAM");
    let text = err.to_string();
    assert!(text.contains("too small: 8 bytes given, 20 needed"), "{text}");
    let err = Model::from_buffers(Buffers {
        scratch_sram: buffer::<64>(0),
        persistent_sram: &mut buffer::<64>(0)[1..],
        constant_dtcm: buffer::<64>(0),
    })
    .err()
    .unwrap();
    assert_eq!(err.arena, "persistent.SRAM");
    assert!(err.to_string().contains("is not aligned to 16 bytes"), "{err}");

    // Good buffers full of garbage: init zeroes the persistent arena and copies the staged
    // weights, and leaves scratch alone.
    let model = Model::from_buffers(Buffers {
        scratch_sram: buffer::<64>(0xAA),
        persistent_sram: buffer::<64>(0xAA),
        constant_dtcm: buffer::<64>(0xAA),
    })
    .unwrap();
    let mut model = model.init();
    assert_eq!(model.tensor_tiny_state(), &[0; 4]);
    let w: Vec<u8> = model.tensor_tiny_w().iter().map(|&b| b as u8).collect();
    let blob: Vec<u8> = (0..16u8).map(|i| i.wrapping_mul(7).wrapping_add(5)).collect();
    assert_eq!(w, blob);
    assert_eq!(model.input_in(), &[0xAAu8 as i8; 4]);

    // RESHAPE: its output is its input's bytes, so the view holds only the output.
    let op = model.op1();
    op.output0.fill(2);
    assert_eq!(model.tensor_tiny_out(), &[2; 4]);
    // ADD(r, state) -> state: state is written, so it is not also read.
    let op = model.op2();
    for (s, r) in op.output0.iter_mut().zip(op.input0) {
        *s += i16::from(*r);
    }
    assert_eq!(model.output_state(), &[2; 4]);

    // The statics' handle, one arena rebound.
    let mut handle = Model::take().unwrap();
    assert!(Model::take().is_none());
    let err = handle.bind_scratch_sram(buffer::<4>(0)).unwrap_err();
    assert_eq!(err.arena, "scratch.SRAM");
    handle.bind_scratch_sram(buffer::<32>(7)).unwrap();
    let model = handle.init();
    assert_eq!(model.tensor_tiny_in(), &[7; 4]);
    assert_eq!(model.tensor_tiny_state(), &[0; 4]);
    assert_eq!(stateful::ARENAS, ["scratch.SRAM", "persistent.SRAM", "constant.DTCM"]);
}
