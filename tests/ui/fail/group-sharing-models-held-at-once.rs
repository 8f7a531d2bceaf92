// Models `a` and `b` of group `pair` run one after another, so their scratch shares bytes:
// the group lends one handle at a time, and holding both is a borrow error.
planner_macros::include_model!("../plans/pair.plan.json");

fn main() {
    let mut group = pair::Group::take().unwrap().init();
    let mut a = group.a();
    let mut b = group.b();
    a.input_x_mut().fill(1);
    b.input_x_mut().fill(2);
}
