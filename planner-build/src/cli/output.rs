//! What the commands print: every write to standard output and error goes through [`print`]
//! and [`eprint`], which never panic (`println!` does when the stream is closed, as in
//! `planner plan x | head -1`), and tables of rows as text, JSON or CSV.

use std::io::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use planner::{Error, Planned};

use super::args::Format;

/// Set when a write to standard output failed: the answer did not get out, so the command
/// ends with exit code 3 whatever it planned.
pub(super) static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Why the first write to standard output failed, for the message on standard error.
static STDOUT_ERROR: OnceLock<String> = OnceLock::new();

pub(super) fn note_stdout_error(why: String) {
    let _ = STDOUT_ERROR.set(why);
    STDOUT_FAILED.store(true, Ordering::Relaxed);
}

/// Set by [`stdout_closed_at_start`] when descriptor 1 was closed before the program ran.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Descriptor 1 was closed when the process started (`planner plan m.tflite >&-`). The Rust
/// runtime then opens `/dev/null` in its place, which takes every write: without this the
/// answer would vanish under exit code 0. The first print is then a failed write (exit 3).
pub(super) fn stdout_closed_at_start() {
    STDOUT_CLOSED.store(true, Ordering::Relaxed);
}

/// Whether standard output was closed from the start; a print to it is then a failure.
pub(super) fn stdout_closed() -> bool {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        note_stdout_error("standard output was closed when the command started".into());
        return true;
    }
    false
}

/// The message for a failed standard output, once the command is done.
pub(super) fn stdout_failure() -> String {
    let why = STDOUT_ERROR.get().map_or("", String::as_str);
    format!(
        "error: the answer could not be written to standard output: {why}\n  \
         help: give the command an open standard output: a terminal, a file (`> out.txt`) \
         or a pipe that is read to its end\n"
    )
}

/// Writes `s` to standard output; a failure (a closed pipe) is remembered for the exit code
/// and the rest of the output is dropped, never a panic.
pub(super) fn print(s: &str) {
    if STDOUT_FAILED.load(Ordering::Relaxed) || stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        note_stdout_error(e.to_string());
    }
}

/// Writes `s` to standard error. A closed standard error is ignored: the exit code still
/// says what happened.
pub(super) fn eprint(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes()).and_then(|()| err.flush());
}

/// Refuses `path` as the file a command writes (`-o`) when it exists and is not a regular
/// file: a directory, a device, or a fifo, which opening for writing would block on until a
/// reader came. Looked at before any planning.
pub(super) fn output_file(path: &std::path::Path, what: &str) -> Result<(), Error> {
    let Ok(meta) = std::fs::metadata(path) else {
        // Missing (written new), or unreadable (the write says why).
        return Ok(());
    };
    if meta.is_file() {
        return Ok(());
    }
    let kind = if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file (a fifo, device or socket: writing it could wait for a reader forever)"
    };
    Err(Error::invalid_input(format!(
        "the output {} for the {what} is {kind}; give the path of a file to write, new or \
         to be replaced",
        path.display()
    )))
}

pub(super) fn warn(planned: &Planned) {
    for w in planned.graph.warnings.iter().chain(&planned.warnings) {
        eprint(&format!("warning: {w}\n"));
    }
}

/// A table's rows (the first is the header) as JSON objects keyed by the header in
/// snake case (numbers as numbers, `12.5 ms` as `time_ms`), or as CSV.
pub(super) fn rows_as(format: Format, rows: &[Vec<String>]) -> String {
    let Some((header, body)) = rows.split_first() else {
        return String::new();
    };
    let keys: Vec<String> = header.iter().map(|h| h.replace(' ', "_")).collect();
    if format == Format::Csv {
        let field = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut s = keys.join(",") + "\n";
        for r in body {
            let line: Vec<String> = r.iter().map(|c| field(c)).collect();
            s.push_str(&line.join(","));
            s.push('\n');
        }
        return s;
    }
    // JSON by hand: planner-build has no JSON dependency of its own.
    let string = |s: &str| {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    let objects: Vec<String> = body
        .iter()
        .map(|r| {
            let fields: Vec<String> = keys
                .iter()
                .zip(r)
                .map(|(k, c)| {
                    let (key, text) = match c.strip_suffix(" ms") {
                        Some(ms) => (format!("{k}_ms"), ms),
                        None => (k.clone(), c.as_str()),
                    };
                    // Names stay strings even when they look like numbers (tensor ids).
                    const NAMES: [&str; 9] = [
                        "planner",
                        "arena",
                        "memory",
                        "source_memory",
                        "model",
                        "tensor",
                        "name",
                        "role",
                        "reason",
                    ];
                    let number = !NAMES.contains(&key.as_str()) && text.parse::<u64>().is_ok()
                        || !NAMES.contains(&key.as_str())
                            && text.parse::<f64>().is_ok_and(|x| x.is_finite());
                    let value = if number && !text.is_empty() {
                        text.to_string()
                    } else {
                        string(text)
                    };
                    format!("    {}: {value}", string(&key))
                })
                .collect();
            format!("  {{\n{}\n  }}", fields.join(",\n"))
        })
        .collect();
    format!("[\n{}\n]\n", objects.join(",\n"))
}
