// A tampered plan file that declares an op in place wrongly: CONV_2D-like op that cannot run in place (FULLY_CONNECTED).
planner_macros::include_model!("../plans/in-place-fully-connected.plan.json");

fn main() {}
