// A hand edit that keeps the plan valid (`out` moved to bytes 32..36 of a grown arena,
// disjoint from every live tensor) but leaves the stated plan hash stale: refused, since the
// C header and anything else built from the written plan would disagree with these views.
planner_macros::include_model!("../plans/edited.plan.json");

fn main() {}
