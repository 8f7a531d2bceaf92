// A tampered plan file (hash restated): `e` is an alias of `y`, op 1's in-place output over
// `x`, but live at op 0, where op 0 reads `x` and writes `e` over the same bytes. The views of
// op 0 would hold `&[i8]` and `&mut [i8]` to one buffer: the const check must refuse it.
planner_macros::include_model!("../plans/in-place-alias-early.plan.json");

fn main() {}
