//! Files and folders the command's tests write (`cli.rs`, `cli_patch.rs`, `cli_streams.rs`,
//! `repro.rs`): a fresh folder per test and process, manifests of the bundled models.
// Each test crate that includes this uses some of the helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The folder `planner-{name}-{pid}` in the temporary folder, emptied and created.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("planner-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A manifest of model `name` from the bundled `models/{model}` (its `source` a full
/// path), then `rest`: its `[platform]` and `[memory]` tables.
pub fn model_toml(name: &str, model: &str, rest: &str) -> String {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models")
        .join(model);
    format!("[model]\nname = \"{name}\"\nsource = {source:?}\n{rest}")
}
