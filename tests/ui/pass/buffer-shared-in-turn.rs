// One buffer the application owns (on the stack, not 'static) serves two models in turn, in
// safe code: each handle borrows it for as long as the handle lives.
planner_macros::include_model!("../plans/tiny.plan.json");
planner_macros::include_model!("../plans/stateful.plan.json");

#[repr(C, align(32))]
struct Aligned<const N: usize>([u8; N]);

fn main() {
    let mut scratch = Aligned([0u8; 64]);
    {
        let tiny = tiny::Handle::from_buffers(tiny::Buffers {
            scratch_sram: &mut scratch.0,
        });
        let mut tiny = tiny.unwrap().init();
        tiny.input_x_mut().fill(5);
    }
    let mut state = Aligned([0u8; 64]);
    let mut weights = Aligned([0u8; 64]);
    let stateful = stateful::Handle::from_buffers(stateful::Buffers {
        scratch_sram: &mut scratch.0,
        persistent_sram: &mut state.0,
        constant_dtcm: &mut weights.0,
    });
    let mut stateful = stateful.unwrap().init();
    // Both models' inputs are at offset 0 of their scratch arena: the same bytes.
    assert_eq!(stateful.input_in(), &[5; 4]);
    stateful.input_in_mut().fill(6);
    drop(stateful);
    assert_eq!(&scratch.0[..4], &[6; 4]);
}
