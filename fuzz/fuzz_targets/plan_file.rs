//! The plan-file parser on arbitrary text: a file it accepts round-trips, and the table the
//! macro would build from it is built without a panic (whether the `const` check accepts it
//! is rustc's verdict on a hand-edited plan, not a bug).
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use planner::planfile::PlanFile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = PlanFile::parse(text, "fuzz.plan.json") else {
        return;
    };
    common::plan_file(&file, false);
    let _ = common::with_table(&file, |t| t.slots.len());
});
