//! The `planner` command against its streams and inputs: closed or cut output pipes (never a
//! panic; a closed standard output is exit 3 with a message), devices and FIFOs given as
//! inputs or outputs (refused at once, not read or waited on).

#[path = "../../planner/tests/common/mod.rs"]
mod common;
#[path = "support/files.rs"]
mod files;
#[path = "support/cli.rs"]
mod support;

use std::process::Command;

use common::assert_says;
use files::fresh_dir;
use support::{refused, root, text, tmp};

/// Runs `planner args` with its standard output (or error) a pipe whose reading end is
/// closed before the command starts: every write to it fails with EPIPE.
fn with_closed(args: &[&str], stderr: bool) -> Option<i32> {
    use std::process::Stdio;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planner"));
    cmd.args(args).current_dir(root()).stdin(Stdio::null());
    if stderr {
        cmd.stderr(writer).stdout(Stdio::null());
    } else {
        cmd.stdout(writer).stderr(Stdio::null());
    }
    cmd.status().expect("the planner binary runs").code()
}

/// Runs `planner args` with its standard error read for `keep` bytes, then closed, as
/// `2> >(head -c 40 >/dev/null)` does: whether a write fails depends on timing.
fn with_stderr_cut(args: &[&str], keep: usize) -> Option<i32> {
    use std::io::Read as _;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the planner binary runs");
    if let Some(mut err) = child.stderr.take() {
        let mut buf = vec![0u8; keep];
        let _ = err.read_exact(&mut buf);
    }
    child.wait().expect("the planner exits").code()
}

#[test]
fn closed_output_streams_never_panic() {
    let bad = tmp("closed_bad.toml", "[model]\nname = 3\n");
    let bad = bad.to_str().unwrap();
    let kws = "models/tiny_kws_dscnn_int8.tflite";
    // An error on a closed stderr keeps its exit code (2); an answer that cannot reach a
    // closed stdout ends with 3; a closed stderr under a good plan changes nothing.
    assert_eq!(with_closed(&["plan", bad], true), Some(2));
    assert_eq!(with_closed(&["plan", kws], false), Some(3));
    assert_eq!(with_closed(&["explain", kws], false), Some(3));
    assert_eq!(with_closed(&["compare", kws], false), Some(3));
    assert_eq!(with_closed(&["--help"], false), Some(3));
    assert_eq!(with_closed(&["plan", kws], true), Some(0));
    // The reproducer's race, run often enough to hit it (9 of 20 runs panicked before).
    for _ in 0..20 {
        assert_eq!(with_stderr_cut(&["plan", bad], 40), Some(2));
    }
}

/// Runs `planner args` through `sh` with descriptor 1 closed (`>&-`), not a broken pipe:
/// the Rust runtime puts `/dev/null` there before `main`, so the answer vanished under
/// exit code 0.
#[cfg(unix)]
fn with_stdout_shut(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("sh runs the planner binary")
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_is_exit_3_with_a_message() {
    let kws = "models/tiny_kws_dscnn_int8.tflite";
    let csv = "bench/examples/input.12.csv";
    for args in [
        &["plan", kws][..],
        &["plan", kws, "--format", "json"],
        &["plan", csv, "--format", "svg"],
        &["explain", kws],
        &["compare", kws],
        &["import", kws],
        &["--help"],
        &["--version"],
    ] {
        let out = with_stdout_shut(args);
        assert_eq!(out.status.code(), Some(3), "planner {args:?}");
        assert_says(
            &text(&out.stderr),
            &[
                "error: the answer could not be written to standard output",
                "closed",
            ],
        );
    }
    // A broken pipe says so too.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(["plan", kws])
        .current_dir(root())
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_says(&text(&out.stderr), &["standard output", "Broken pipe"]);
    // Errors keep their own code; nothing to print is no failure: the file is written.
    assert_eq!(
        with_stdout_shut(&["plan", "missing.toml"]).status.code(),
        Some(2)
    );
    let dir = fresh_dir("cli-shut");
    let to = dir.join("m.toml");
    let out = with_stdout_shut(&["import", kws, "-o", to.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&to).unwrap().contains("[model]"));
}

#[cfg(unix)]
#[test]
fn a_device_as_manifest_is_refused_not_read() {
    let dir = fresh_dir("cli-dev");
    let link = dir.join("z.toml");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let err = refused(&["plan", link.to_str().unwrap()]);
    assert_says(&err, &["z.toml is not a regular file (a device or socket)"]);
    let big = dir.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(planner::import::MAX_MANIFEST + 1).unwrap();
    let err = refused(&["plan", big.to_str().unwrap()]);
    assert_says(
        &err,
        &["big.toml is 67108865 bytes, but a manifest is at most 67108864 bytes"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fifo as any input (a manifest, a problem, a model, a manifest's model `source`, the
/// model of `import` or `export`) or as the file `import` or `export` writes is refused at
/// once, naming it (exit code 2): opening a fifo waits for the other end, and `planner plan
/// f.toml` on one blocked forever (the outside audit). A command still running after two
/// minutes is killed and fails the test rather than hanging it.
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_at_once_as_any_input_or_output() {
    use std::time::{Duration, Instant};
    let dir = fresh_dir("cli-fifo");
    for f in [
        "f.toml",
        "f.csv",
        "f.tflite",
        "m.tflite",
        "out.tflite",
        "out.toml",
    ] {
        let made = Command::new("mkfifo").arg(dir.join(f)).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {f}");
    }
    std::fs::write(
        dir.join("source.toml"),
        "[model]\nname = \"m\"\nsource = \"m.tflite\"\n",
    )
    .unwrap();
    let kws = root().join("models/tiny_kws_dscnn_int8.tflite");
    let kws = kws.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["plan", "f.toml"], "manifest f.toml is a fifo"),
        (&["plan", "f.csv"], "problem f.csv is a fifo"),
        (&["plan", "f.tflite"], "model f.tflite is a fifo"),
        (&["plan", "source.toml"], "model m.tflite is a fifo"),
        (&["explain", "f.toml"], "manifest f.toml is a fifo"),
        (&["compare", "f.csv"], "problem f.csv is a fifo"),
        (&["import", "f.tflite"], "model f.tflite is a fifo"),
        (
            &["export", "tflm", "f.tflite", "-o", "x.tflite"],
            "model f.tflite is a fifo",
        ),
        (
            &["import", kws, "-o", "out.toml"],
            "the output out.toml for the manifest is not a regular file",
        ),
        (
            &["export", "tflm", kws, "-o", "out.tflite"],
            "the output out.tflite for the exported model is not a regular file",
        ),
    ];
    for (args, says) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_planner"))
            .args(*args)
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                panic!("planner {args:?} still runs after two minutes: it blocks on the fifo");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(status.code(), Some(2), "planner {args:?}: {err}");
        assert_says(&err, &[says]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
