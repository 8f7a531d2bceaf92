// `out` says it is an alias of `h` but sits at offset 0, not at `h`'s offset 16: its view
// would read other bytes than `h`'s.
planner_macros::include_model!("../plans/alias-moved.plan.json");

fn main() {}
