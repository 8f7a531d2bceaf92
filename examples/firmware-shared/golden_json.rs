//! How the build scripts of `bench-target` and `firmware-m55` read a golden file of
//! `tests/run-models/goldens/`: each includes this file with `#[path]`.

use std::fs;
use std::path::Path;

use serde_json::Value;

/// Reads the JSON file at `path` and has cargo rerun the build script when it changes.
/// Panics, failing the build, when the file cannot be read (the message ending with
/// `missing`, what writes it) or is not JSON.
pub fn json(path: &Path, missing: &str) -> Value {
    println!("cargo::rerun-if-changed={}", path.display());
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}; {missing}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{}: not JSON: {e}; rewrite it with its script",
            path.display()
        )
    })
}
