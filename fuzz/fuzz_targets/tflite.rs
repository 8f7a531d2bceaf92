//! The TFLite reader on arbitrary bytes; a model it accepts is planned with the defaults.
#![no_main]

#[path = "common.rs"]
mod common;

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use planner::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.tflite");
    let graph = match planner::import::tflite::parse(data, path) {
        Ok(g) => g,
        Err(e) => return common::expected(&e),
    };
    let manifest = Manifest::for_model_file(path);
    match planner::plan_graph(&manifest, &graph) {
        Ok(planned) => common::accepted(&manifest, &planned),
        Err(e) => common::expected(&e),
    }
});
