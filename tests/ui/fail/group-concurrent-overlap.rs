// `pair.plan.json` with model `c`'s input moved onto model `b`'s: `b` and `c` may run at the
// same time, so the group check must refuse it, naming both models.
planner_macros::include_model!("../plans/pair-overlap.plan.json");

fn main() {}
