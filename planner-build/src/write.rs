//! Writing outputs: only files whose bytes change, each through a temporary file and a
//! rename, so a reader sees the old file or the new one, never half of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use planner::Error;

/// Writes every `(file name, bytes)` into `dir`; returns each path with `true` when it was
/// (re)written.
pub(crate) fn write_all(
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<PathBuf, bool>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::file(dir, "create output directory", e))?;
    let mut out = BTreeMap::new();
    for (name, bytes) in files {
        let path = dir.join(name);
        let changed = write_if_changed(&path, bytes)?;
        out.insert(path, changed);
    }
    Ok(out)
}

/// Writes `bytes` to `path` unless it already holds exactly them; `true` when written.
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    // Only a regular file of the same length is read (a fifo there would block the read;
    // the rename below replaces whatever is there).
    let same_length =
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64);
    if same_length && std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| Error::file(&tmp, "write", e))?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::file(path, "replace", e));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_changed_files() {
        let dir = std::env::temp_dir().join(format!("planner-build-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut files = BTreeMap::new();
        files.insert("a.bin".to_string(), vec![1, 2, 3]);
        files.insert("b.txt".to_string(), b"x".to_vec());
        let first = write_all(&dir, &files).unwrap();
        assert!(first.values().all(|&c| c));
        files.insert("b.txt".to_string(), b"y".to_vec());
        let second = write_all(&dir, &files).unwrap();
        assert!(!second[&dir.join("a.bin")]);
        assert!(second[&dir.join("b.txt")]);
        assert_eq!(std::fs::read(dir.join("b.txt")).unwrap(), b"y");
        let leftovers = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
