// Group `pair`: `a` and `b` run in turn from one scratch arena; `b` and `c` may run at the
// same time and are held together; `c`'s state survives the other models' runs.
planner_macros::include_model!("../plans/pair.plan.json");

fn main() {
    assert!(pair::Group::take().is_some());
    assert!(pair::Group::take().is_none(), "the second take gives nothing");
    let mut scratch = Aligned([0xAA; 256]);
    let mut state = Aligned([0xAA; 64]);
    let group = pair::Handle::from_buffers(pair::Buffers {
        scratch_sram: &mut scratch.0,
        persistent_sram: &mut state.0,
    })
    .unwrap();
    let mut group = group.init();

    // `c` keeps state; `a` and `b` then run in turn over the shared scratch.
    group.c().tensor_state_mut().fill(7);
    let a_base = {
        let mut a = group.a();
        a.input_x_mut().fill(1);
        a.arena_ptrs()[0]
    };
    let b_base = {
        let mut b = group.b();
        b.input_x_mut().fill(2);
        b.arena_ptrs()[0]
    };
    assert_eq!(a_base, b_base, "a and b share the scratch arena");
    assert_eq!(group.c().tensor_state(), &[7; 16], "c's state survived");

    // Concurrent models: both handles at once, disjoint bytes.
    let (mut b, mut c) = group.b_and_c();
    b.input_x_mut().fill(3);
    c.input_x_mut().fill(4);
    assert_eq!(b.input_x(), &[3; 32]);
    assert_eq!(c.input_x(), &[4; 16]);
    // Each model's own block of the shared scratch arena: `c` runs beside `b`, so its block
    // starts after `b`'s 64 bytes, and the addresses differ.
    let (pb, pc) = (b.arena_ptrs()[0], c.arena_ptrs()[0]);
    assert_eq!(pb, b_base);
    assert_eq!(pc as usize - pb as usize, 64);
    // `arena_ptrs` takes `&self`: it can be read beside a view.
    let view = c.input_x();
    let ptrs = c.arena_ptrs();
    assert!(ptrs[0] as usize <= view.as_ptr() as usize);
    assert_eq!(view, &[4; 16]);
    assert_eq!(pair::MODELS, ["a", "b", "c"]);
}

#[repr(C, align(64))]
struct Aligned<const N: usize>([u8; N]);
