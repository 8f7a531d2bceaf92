//! Running the `planner` binary from the tests of the command (`cli.rs`, `cli_patch.rs`).
// Each test crate that includes this uses some of the helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root, where the commands run.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `planner ARGS...`, run in the workspace root.
pub fn planner(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the planner binary runs")
}

/// The exit code of `planner ARGS...`.
pub fn exit_code(args: &[&str]) -> Option<i32> {
    planner(args).status.code()
}

/// `planner ARGS...`, which must refuse its input (exit code 2): its standard error as text.
pub fn refused(args: &[&str]) -> String {
    let o = planner(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "planner {args:?}: {err}");
    err
}

/// `planner ARGS...`, which must succeed, its standard output read as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    let o = planner(args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `planner ARGS...`, which must succeed: its standard output as text.
pub fn stdout_of(args: &[&str]) -> String {
    let o = planner(args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// An output stream as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes `contents` to `name` in this test process's temporary folder.
pub fn tmp(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("planner-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}
