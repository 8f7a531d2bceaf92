// A plan whose region table was edited: tensor `a`, placed with its largest region's 16
// bytes, is given a 5x5 region in patch 3. Reading the plan file refuses it, naming the
// tensor and the bytes; the `const` check of the patch stage (rt::check::patch, whose unit
// tests feed it such a table directly) is the second line behind it.
planner_macros::include_model!("../plans/patches-tampered.plan.json");

fn main() {}
