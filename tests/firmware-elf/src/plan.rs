//! The arenas of a plan file (`<model>.plan.json`, written by `planner-build`), as the ELF
//! check expects to find them in the image.
//!
//! The file is read with the planner's own schema and version check, the plan-file crate
//! the macro reads it with ([`planner_planfile::read`], for a model's plan file or a
//! group's), so the check and the macro can never disagree about what a plan file says.

use std::path::{Path, PathBuf};

use planner_planfile::group::GroupArenaEntry;
use planner_planfile::{AnyPlan, ArenaEntry, ArenaRole, GroupPlanFile, read};

use crate::{Contents, ExpectedArena};

/// The plan-file format version this reader understands: the planner's own, since the plan
/// is read with the planner's one schema ([`read`]).
pub const FORMAT_VERSION: u32 = planner_planfile::FORMAT_VERSION;

// Section and symbol names come from the planner's one naming module, as the fragment's do.
pub use planner_planfile::naming::{linker_symbol, output_section};

/// One model's expected arenas.
#[derive(Debug, Clone)]
pub struct ModelArenas {
    /// The model's name.
    pub model: String,
    /// The plan file it came from.
    pub plan: PathBuf,
    /// The models the plan covers: the model itself, or every model of a group.
    pub models: Vec<String>,
    /// Every arena the image must hold: each writable arena (scratch, persistent, a staged
    /// constant's runtime copy) and each constant blob, in the memory it is read from.
    pub arenas: Vec<ExpectedArena>,
    /// For a group: one line per writable group arena, its size against its users' needs.
    pub notes: Vec<String>,
}

/// Reads the plan file at `path` (a model's or a group's) and the blobs beside it. A group's
/// arenas are the group's sections, each shared by its users; each must be exactly the
/// group's need (see [`group_need`]).
pub fn load(path: &Path) -> Result<ModelArenas, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read plan file {}: {e}", path.display()))?;
    let mut notes = Vec::new();
    let mut models = Vec::new();
    let (owner, entries) =
        match read(&text, &path.display().to_string()).map_err(|e| e.to_string())? {
            AnyPlan::Model(plan) => {
                models.push(plan.model.clone());
                (plan.model, plan.arenas)
            }
            AnyPlan::Group(group) => {
                models.extend(group.models.iter().map(|m| m.model.clone()));
                for a in &group.arenas {
                    let need = group_need(&group, a)?;
                    if a.arena.role != ArenaRole::Constant {
                        notes.push(need_note(&group, a, need));
                    }
                }
                (group.group.clone(), group.arena_entries())
            }
        };
    let dir = path.parent().unwrap_or(Path::new("."));
    Ok(ModelArenas {
        arenas: expected(&owner, &entries, dir)?,
        model: owner,
        plan: path.to_path_buf(),
        models,
        notes,
    })
}

/// A group arena's size must be its need: for scratch, the largest end of a user's block
/// when no two users run at the same time (not the sum of the users), and the stacked
/// blocks of users that may; for state, every user's block, disjoint. Errors name the arena
/// and both figures.
pub fn group_need(group: &GroupPlanFile, a: &GroupArenaEntry) -> Result<u64, String> {
    let need = a
        .users
        .iter()
        .map(|u| u.base.saturating_add(u.bytes))
        .max()
        .unwrap_or(0);
    if a.arena.role != ArenaRole::Constant && a.arena.size != need {
        return Err(format!(
            "arena {} of group {} is {} bytes, but its users ({}) need {need}; rebuild the firmware",
            a.arena.name,
            group.group,
            a.arena.size,
            a.users
                .iter()
                .map(|u| u.model.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(need)
}

/// `group fw: arena scratch.DTCM is 16000 B, the group's need (a 288 B at 0, kws 16000 B at
/// 0); separate arenas would take 16288 B`.
fn need_note(group: &GroupPlanFile, a: &GroupArenaEntry, need: u64) -> String {
    let users: Vec<String> = a
        .users
        .iter()
        .map(|u| format!("{} {} B at {}", u.model, u.bytes, u.base))
        .collect();
    let separate: u64 = a.users.iter().map(|u| u.bytes).sum();
    format!(
        "group {}: arena {} is {need} B, the group's need ({}); separate arenas would take {separate} B",
        group.group,
        a.arena.name,
        users.join(", ")
    )
}

/// The sections `arenas` of `owner` must have in the image.
fn expected(owner: &str, arenas: &[ArenaEntry], dir: &Path) -> Result<Vec<ExpectedArena>, String> {
    let mut out = Vec::new();
    for a in arenas {
        if let Some(section) = &a.section {
            out.push(ExpectedArena {
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
                    owner,
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
            out.push(ExpectedArena {
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
    Ok(out)
}

/// The folder holding the plan files, given the firmware's `OUT_DIR` (where `planner-build`
/// writes them under `planner/`) or that `planner` folder itself: `dir` when it holds a plan
/// file, else `dir/planner` when that does. An error names both places when neither does.
pub fn plan_dir(dir: &Path) -> Result<PathBuf, String> {
    if !find(dir)?.is_empty() {
        return Ok(dir.to_path_buf());
    }
    let nested = dir.join("planner");
    if nested.is_dir() && !find(&nested)?.is_empty() {
        return Ok(nested);
    }
    Err(format!(
        "no plan file (*.plan.json) in {} or {}; point --plan-dir at the firmware's OUT_DIR \
         (target/<triple>/<profile>/build/<crate>-<hash>/out, where planner-build writes \
         planner/*.plan.json) or at its planner folder",
        dir.display(),
        nested.display()
    ))
}

/// The plan files (`*.plan.json`) directly in `dir`, sorted.
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
