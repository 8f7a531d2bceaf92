// A model whose SRAM arenas are `app_bound` in the manifest: the expansion has no static for
// them (and so no `take()`); the handle comes from buffers the application owns.
planner_macros::include_model!("../plans/app.plan.json");

#[repr(C, align(16))]
struct Aligned<const N: usize>([u8; N]);

fn main() {
    let mut scratch = Aligned([0u8; 64]);
    let mut state = Aligned([0xAAu8; 16]);
    let model = app::Handle::from_buffers(app::Buffers {
        scratch_sram: &mut scratch.0,
        persistent_sram: &mut state.0,
    });
    let mut model = model.unwrap().init();
    assert_eq!(model.tensor_state(), &[0; 16], "init zeroed the bound state");
    model.input_x_mut().fill(3);
    let ptrs = model.arena_ptrs();
    drop(model);
    assert_eq!(ptrs[0], scratch.0.as_mut_ptr());
    assert_eq!(app::ARENA_INFO[0].section, None, "no static, no section");
}
