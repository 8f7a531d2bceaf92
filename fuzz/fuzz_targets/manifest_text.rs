//! Manifest text: parse, import the inline graph, plan. Planner options are left out (a
//! manifest may ask for an exact search of any length on purpose).
#![no_main]

#[path = "common.rs"]
mod common;

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use planner::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Relative `data` paths resolve in a folder that does not exist.
    let manifest = match Manifest::parse(text, Path::new("/nonexistent/fuzz.toml")) {
        Ok(m) => m,
        Err(e) => return common::expected(&e),
    };
    common::plan(manifest);
});
