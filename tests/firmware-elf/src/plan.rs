//! The arenas of a plan file (`<model>.plan.json`, written by `planner-build`), as the ELF
//! check expects to find them in the image.
//!
//! The file is read with the planner's own schema and version check
//! ([`planner::planfile::PlanFile::parse`]), so the check and the macro can never disagree
//! about what a plan file says.

use std::path::{Path, PathBuf};

use planner::planfile::PlanFile;

use crate::{Contents, ExpectedArena};

/// The plan-file format version this reader understands: the planner's own, since the plan
/// is read with the planner's one schema ([`PlanFile::parse`]).
pub const FORMAT_VERSION: u32 = planner::planfile::FORMAT_VERSION;

// Section and symbol names come from the planner's one naming module, as the fragment's do.
pub use planner::planfile::naming::{linker_symbol, output_section};

/// One model's expected arenas.
#[derive(Debug, Clone)]
pub struct ModelArenas {
    /// The model's name.
    pub model: String,
    /// The plan file it came from.
    pub plan: PathBuf,
    /// Every arena the image must hold: each writable arena (scratch, persistent, a staged
    /// constant's runtime copy) and each constant blob, in the memory it is read from.
    pub arenas: Vec<ExpectedArena>,
}

/// Reads the plan file at `path` and the blobs beside it.
pub fn load(path: &Path) -> Result<ModelArenas, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read plan file {}: {e}", path.display()))?;
    let plan = PlanFile::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut arenas = Vec::new();
    for a in &plan.arenas {
        if let Some(section) = &a.section {
            arenas.push(ExpectedArena {
                section: output_section(section),
                region: a.memory.clone(),
                size: a.size,
                align: a.alignment,
                contents: Contents::Zeroed,
                start_symbols: vec![linker_symbol(section, false)],
                end_symbols: vec![linker_symbol(section, true)],
            });
        }
        if let Some(blob) = &a.blob {
            let file = dir.join(&blob.file);
            let bytes = std::fs::read(&file).map_err(|e| {
                format!(
                    "cannot read the blob of arena {} of model {}: {}: {e}; rebuild the firmware",
                    a.name,
                    plan.model,
                    file.display()
                )
            })?;
            if bytes.len() as u64 != blob.size {
                return Err(format!(
                    "blob {} is {} bytes, its plan file says {}; rebuild the firmware",
                    file.display(),
                    bytes.len(),
                    blob.size
                ));
            }
            arenas.push(ExpectedArena {
                section: output_section(&blob.section),
                region: a.source_memory.clone(),
                size: blob.size,
                align: a.alignment,
                contents: Contents::Blob(bytes),
                start_symbols: vec![linker_symbol(&blob.section, false)],
                end_symbols: vec![linker_symbol(&blob.section, true)],
            });
        }
    }
    Ok(ModelArenas {
        model: plan.model,
        plan: path.to_path_buf(),
        arenas,
    })
}

/// Every `*.plan.json` in `dir`, in name order.
pub fn find(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list plan directory {}: {e}", dir.display()))?;
    let mut plans: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".plan.json"))
        })
        .collect();
    plans.sort();
    Ok(plans)
}
