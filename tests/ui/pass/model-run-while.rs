// A model with a WHILE loop (`plans/looped.plan.json`): `run()` runs the condition's ops,
// then the body's while the condition holds, with the reference kernels. The loop counts
// from 4·s up to 5.75 by 1, halving the vector and adding a constant each pass; a start past
// the limit runs the condition once and the body never.
planner_macros::include_model!("../plans/looped.plan.json");

use planner::rt::kernel::Hooks;

/// How many times each op ran.
#[derive(Default)]
struct Count([usize; 9]);

impl Hooks for Count {
    fn after_op(&mut self, op: usize, _: &'static str) {
        self.0[op] += 1;
    }
}

fn main() {
    let mut model = looped::Model::take().unwrap().init();
    let mut run = |s: f32| -> (Vec<f32>, f32, [usize; 9]) {
        let x = [0.5f32, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5, 0.0];
        model.input_x_mut().copy_from_slice(&x);
        model.input_s_mut()[0] = s;
        let mut count = Count::default();
        model
            .run_with(&mut planner_kernels::Reference::default(), &mut count)
            .unwrap();
        // The same loop, by hand.
        let shift = model.tensor_body_shift().to_vec();
        let (mut i, mut v) = (4.0 * s, x.to_vec());
        while i < 5.75 {
            i += 1.0;
            for (e, c) in v.iter_mut().zip(&shift) {
                *e = *e * 0.5 + c;
            }
        }
        assert_eq!(model.output_v(), &v[..]);
        assert_eq!(model.output_count()[0], i);
        (v, i, count.0)
    };
    // 4 · 0.25 = 1: passes at 1, 2, 3, 4, 5; the condition runs once more.
    let (_, i, ops) = run(0.25);
    assert_eq!(i, 6.0);
    assert_eq!(ops, [1, 1, 1, 6, 5, 5, 5, 5, 5]);
    // A start past the limit: the values are the inputs, the body never runs.
    let (v, i, ops) = run(2.0);
    assert_eq!((v[0], i), (0.5, 8.0));
    assert_eq!(ops, [1, 1, 1, 1, 0, 0, 0, 0, 0]);
}
