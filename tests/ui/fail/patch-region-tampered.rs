// A plan whose region table was edited: tensor `a`, placed with its largest region's 16
// bytes, is given a 5x5 region in patch 3. The `const` check of the patch stage fails,
// naming the tensor, the region, the patch and the bytes.
planner_macros::include_model!("../plans/patches-tampered.plan.json");

fn main() {}
