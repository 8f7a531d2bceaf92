//! Reading input files with a bound on the bytes read.
//!
//! A path can name something endless (`/dev/zero`, a pipe that never closes) or something
//! far larger than the planner needs. Each reader says how many bytes it can use at most,
//! and reading stops one byte past that: an over-long input is an error that names the file,
//! the limit and what decides it, never a read until memory runs out.

use std::io::Read as _;
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::{Error, Result};

/// Reads at most `limit` bytes of `path`. `what` names the file in errors ("model",
/// "constant data") and `why` says what sets the limit ("tensor `w` takes 4096 bytes").
///
/// A directory, a fifo or a device is refused before it is opened (opening a fifo waits
/// for a writer, which may never come); a regular file longer than `limit` is refused by its
/// length, and reading stops one byte past `limit` whatever the file does meanwhile.
pub(crate) fn read(path: &Path, limit: u64, what: &str, why: &str) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &format!("read {what}"), e))?;
    regular(path, &meta, what)?;
    if meta.len() > limit {
        return Err(too_long(path, what, Some(meta.len()), limit, why));
    }
    let file =
        std::fs::File::open(path).map_err(|e| Error::io(path, &format!("read {what}"), e))?;
    // The path may have been replaced between the two looks: the file opened is checked too.
    let opened = file
        .metadata()
        .map_err(|e| Error::io(path, &format!("read {what}"), e))?;
    regular(path, &opened, what)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, &format!("read {what}"), e))?;
    if bytes.len() as u64 > limit {
        return Err(too_long(path, what, None, limit, why));
    }
    Ok(bytes)
}

/// The largest flatbuffer: its offsets are signed 32-bit, so no `.tflite` file is longer.
pub(crate) const MAX_FLATBUFFER: u64 = (1 << 31) - 1;

/// Reads a `.tflite` file, at most 2147483647 bytes (a flatbuffer's offsets are signed 32-bit).
pub fn read_flatbuffer(path: &Path) -> Result<Vec<u8>> {
    read(
        path,
        MAX_FLATBUFFER,
        "model",
        "a .tflite flatbuffer is at most 2147483647 bytes (2 GiB - 1)",
    )
}

/// The largest manifest: a manifest with an inline graph this long belongs in a `.tflite`
/// file, and the TOML parser would take several times this much memory to read it.
pub const MAX_MANIFEST: u64 = 64 << 20;

/// The largest linker script (`memory.x`) checked against a manifest.
pub const MAX_LINKER_SCRIPT: u64 = 1 << 20;

/// Reads the text of `path` (a manifest, a linker script: `what`), at most `limit` bytes:
/// a device, a directory or a longer file is refused before it fills memory, and bytes that
/// are not UTF-8 are refused with their offset. `why` says what sets the limit, `fix` what
/// to do about a file over it.
pub fn read_text(path: &Path, limit: u64, what: &str, why: &str, fix: &str) -> Result<String> {
    let bytes = read(path, limit, what, why).map_err(|e| {
        if e.message().contains(" bytes, but ") {
            e.help(fix)
        } else {
            e
        }
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        Error::input(format!(
            "{what} {} is not UTF-8 text: byte {at} is not valid UTF-8",
            path.display()
        ))
        .help(format!("save the {what} as UTF-8 text"))
    })
}

/// Reads a manifest (`.toml`), at most [`MAX_MANIFEST`] bytes.
pub(crate) fn read_manifest(path: &Path) -> Result<String> {
    read_text(
        path,
        MAX_MANIFEST,
        "manifest",
        "a manifest is at most 67108864 bytes (64 MiB)",
        "give the manifest file itself; a model this large belongs in a .tflite file named by model.source",
    )
}

/// Refuses anything but a regular file: a directory, a fifo, a device or a socket, named.
fn regular(path: &Path, meta: &std::fs::Metadata, what: &str) -> Result<()> {
    let kind = if meta.is_file() {
        return Ok(());
    } else if meta.is_dir() {
        "a directory, not a file"
    } else if is_fifo(meta) {
        "a fifo (named pipe), not a regular file; reading it would wait for a writer"
    } else {
        "not a regular file (a device or socket)"
    };
    Err(Error::input(format!("{what} {} is {kind}", path.display()))
        .help(format!("give the path of the {what} file itself")))
}

/// `seen`: the length of a regular file; `None` when it grew past the limit while read.
fn too_long(path: &Path, what: &str, seen: Option<u64>, limit: u64, why: &str) -> Error {
    let seen = seen.map_or_else(|| format!("more than {limit}"), |n| n.to_string());
    Error::input(format!(
        "{what} {} is {seen} bytes, but {why}",
        path.display()
    ))
    .help(format!("give the right {what} file"))
}

#[cfg(unix)]
fn is_fifo(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    meta.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::Metadata) -> bool {
    false
}

/// Writes `bytes` to `path` and reads it with `read`, which must fail with the message
/// `want`, `{}` standing for the path.
#[cfg(test)]
pub(crate) fn refuses_bytes<T: core::fmt::Debug>(
    path: &Path,
    bytes: &[u8],
    read: impl FnOnce(&Path) -> Result<T>,
    want: &str,
) {
    std::fs::write(path, bytes).unwrap();
    let e = read(path).unwrap_err();
    assert_eq!(e.message(), want.replace("{}", &path.display().to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder `planner-{name}-{pid}` in the temporary folder, emptied and created.
    fn fresh_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("planner-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn endless_and_long_inputs_stop_at_the_limit() {
        #[cfg(unix)]
        {
            let e = read(Path::new("/dev/zero"), 4096, "constant data", "x").unwrap_err();
            assert_eq!(
                e.message(),
                "constant data /dev/zero is not a regular file (a device or socket)"
            );
        }
        let dir = fresh_dir("limited");
        let e = read(&dir, 10, "model", "x").unwrap_err();
        assert!(e.message().ends_with("is a directory, not a file"), "{e}");
        let f = dir.join("f.bin");
        std::fs::write(&f, [0u8; 20]).unwrap();
        assert_eq!(read(&f, 20, "model", "x").unwrap().len(), 20);
        let e = read(&f, 18, "constant data", "tensor `w` takes 18 bytes").unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "constant data {} is 20 bytes, but tensor `w` takes 18 bytes",
                f.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A fifo is refused before it is opened: opening one waits for a writer, and `planner
    /// plan f.toml` on a fifo blocked forever (the outside audit). The command-line test
    /// runs every command on one (`planner-build/tests/cli_streams.rs`).
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_before_it_is_opened() {
        let dir = fresh_dir("fifo");
        let f = dir.join("m.toml");
        let made = std::process::Command::new("mkfifo").arg(&f).status();
        if !made.is_ok_and(|s| s.success()) {
            // No mkfifo on this machine: nothing to test.
            return;
        }
        let e = read_manifest(&f).unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "manifest {} is a fifo (named pipe), not a regular file; reading it would wait for a writer",
                f.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn text_is_bounded_and_utf8() {
        #[cfg(unix)]
        {
            let e = read_manifest(Path::new("/dev/zero")).unwrap_err();
            assert_eq!(
                e.message(),
                "manifest /dev/zero is not a regular file (a device or socket)"
            );
        }
        let dir = fresh_dir("text");
        let f = dir.join("m.toml");
        std::fs::write(&f, "[model]\n").unwrap();
        assert_eq!(read_manifest(&f).unwrap(), "[model]\n");
        let e = read_text(&f, 4, "linker script", "why", "fix").unwrap_err();
        assert_eq!(
            e.message(),
            format!("linker script {} is 8 bytes, but why", f.display())
        );
        assert_eq!(e.help_text(), Some("fix"));
        refuses_bytes(
            &f,
            b"ab\xffc",
            read_manifest,
            "manifest {} is not UTF-8 text: byte 2 is not valid UTF-8",
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
