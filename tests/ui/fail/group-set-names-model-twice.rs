// The tamper_concurrent_self reproducer: the group plan of a, b, c with its concurrent set
// edited from ["a", "b"] to ["a", "a"] and the hashes recomputed. `g.a_and_a()` would lend
// two handles of model `a`, two live `&mut [i8]` over the same bytes; the plan must be
// refused (the loader names the set; the `const` check refuses such a table too, see
// group-check-tampered-tables.rs).
planner_macros::include_model!("../plans/concurrent-self.plan.json");

fn main() {
    let mut g = grp::Group::take().unwrap().init();
    let (mut x, mut y) = g.a_and_a();
    let p = x.input_in_mut();
    let q = y.input_in_mut();
    p[0] = 1;
    q[0] = 2;
}
