//! Running planner-build's API from its tests (`group.rs`, `names.rs`): into a fresh folder,
//! without cargo directives.
// Each test crate that includes this uses some of the helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// planner-build on `manifest` into `dir`, without cargo directives.
pub fn build(manifest: &Path, dir: &Path) -> Result<planner_build::Outputs, planner::Error> {
    planner_build::Builder::new()
        .manifest(manifest)
        .out_dir(dir)
        .cargo_directives(false)
        .try_compile()
}

/// The output folder `name` of the test crate `test` (`planner-build-{test}-{name}-{pid}` in
/// the temporary folder), emptied.
pub fn out_dir(test: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "planner-build-{test}-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}
