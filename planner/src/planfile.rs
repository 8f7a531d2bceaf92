//! The plan file: everything `include_model!` needs, written by `planner-build` into
//! `OUT_DIR` as JSON, versioned.
//!
//! The format and its reader are the `planner-planfile` crate, which the macro depends on
//! alone; every item of it is re-exported here. This module adds what builds a plan file
//! from a planned graph: [`BuildPlanFile::from_plan`] builds one from a graph and its
//! [`MemoryPlan`], [`BuildPlanFile::blobs`] lays out the weight blob of each constant
//! arena, and [`group::BuildGroupPlanFile::from_group`] builds a group's
//! ([`group::GroupPlanFile`]: the group's arenas and each model's plan file inside).
//! [`PlanFile::parse`] reads a model's plan file back and [`group::read`] either kind.

mod entries;
#[cfg(any(test, feature = "fixture"))]
#[doc(hidden)]
pub mod fixture;
pub mod group;

/// The names generated code, plan files and linker scripts share, for `planner-build` and
/// the macro (documented in the `planner-planfile` crate).
#[doc(hidden)]
pub use planner_planfile::naming;
#[doc(no_inline)]
pub use planner_planfile::{
    ArenaEntry, BlobEntry, Error as ReadError, FORMAT_VERSION, InPlaceEntry, IoEntry, KernelSet,
    Layout, LayoutSource, Lifetime, MemoryEntry, OpEntry, PLAN_DIR_VAR, PlanFile, PreparedEntry,
    PreparedLayout, TensorEntry, fnv1a64, patch, rows,
};

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use planner_planfile::hash_text;

use crate::error::{Error, Result};
use crate::graph::{Graph, TensorIndex};
use crate::plan::{ArenaRole, MemoryPlan};
use entries::{arena_entries, control, op_entries, patches, renumber, tensor_entries};

/// Builds a model's [`PlanFile`] from its planned graph, and lays out its weight blobs.
///
/// The format is the `planner-planfile` crate's; building it needs the planner's graph and
/// plan, so it is here, as a trait on the format's type: import it (`use
/// planner::planfile::BuildPlanFile`) to call `PlanFile::from_plan` and `file.blobs(..)`.
pub trait BuildPlanFile: Sized {
    /// Builds the plan file of `graph` planned as `plan`: one entry per placed tensor, the
    /// arenas of the plan, the ops with their tensors renumbered. Errors when an op or an
    /// input or output uses a tensor the plan did not place, or the plan names an arena it
    /// does not have.
    fn from_plan(graph: &Graph, plan: &MemoryPlan, layout: &Layout) -> Result<Self>;

    /// Lays out the blob of every constant arena: the arena's size in bytes, each constant
    /// tensor's bytes copied at its offset (repacked: weights in a `.tflite` file are often
    /// not aligned), padding zero. Aliases of a constant share its bytes and are skipped.
    /// A constant planned without bytes (by size only) is left zero and reported in
    /// [`Blobs::warnings`].
    fn blobs(&self, graph: &Graph) -> Result<Blobs>;
}

impl BuildPlanFile for PlanFile {
    fn from_plan(graph: &Graph, plan: &MemoryPlan, layout: &Layout) -> Result<PlanFile> {
        let model = graph.name.clone();
        let (memories, arenas, arena_index) = arena_entries(&model, plan, layout);
        let (tensors, number) = tensor_entries(graph, plan, layout, &arena_index)?;
        let ops = op_entries(graph, &number)?;
        let io = |list: &[crate::graph::IoName], kind: &str| -> Result<Vec<IoEntry>> {
            list.iter()
                .map(|io| {
                    Ok(IoEntry {
                        name: io.name.clone(),
                        tensor: renumber(graph, &number, io.tensor, &|| {
                            format!("model {kind} `{}`", io.name)
                        })?,
                    })
                })
                .collect()
        };
        let mut file = PlanFile {
            format_version: FORMAT_VERSION,
            generator: format!("planner {}", env!("CARGO_PKG_VERSION")),
            model: model.clone(),
            kernels: graph.kernels,
            plan_hash: String::new(),
            memories,
            arenas,
            tensors,
            ops,
            inputs: io(&graph.inputs, "input")?,
            outputs: io(&graph.outputs, "output")?,
            patches: patches(graph, &number)?,
            control: control(graph, &number)?,
        };
        // Blob hashes need the blobs; the plan hash then covers them.
        let blobs = file.blobs(graph)?;
        for (a, blob) in &blobs.blobs {
            if let Some(b) = file.arenas[*a].blob.as_mut() {
                b.hash = hash_text(fnv1a64(blob));
            }
        }
        file.plan_hash = hash_text(file.hash());
        Ok(file)
    }

    fn blobs(&self, graph: &Graph) -> Result<Blobs> {
        let mut out = Blobs::default();
        for (a, arena) in self.arenas.iter().enumerate() {
            if arena.role != ArenaRole::Constant {
                continue;
            }
            let mut bytes = zeroed_blob(arena)?;
            for t in &self.tensors {
                if t.arena as usize != a || t.alias_of.is_some() {
                    continue;
                }
                let data = graph.find(&t.id).and_then(|i| graph.tensor(i).data.clone());
                let Some(data) = data else {
                    out.warnings.push(format!(
                        "constant `{}` of model `{}` has no bytes (planned by size only); its {} bytes in arena {} are zero",
                        t.id, self.model, t.size, arena.name
                    ));
                    continue;
                };
                if data.len() as u64 != t.size {
                    return Err(Error::model(format!(
                        "constant `{}` has {} bytes of data but its size is {}; fix the model",
                        t.id,
                        data.len(),
                        t.size
                    )));
                }
                let start = usize::try_from(t.offset).ok();
                let range = start.and_then(|s| Some(s..s.checked_add(data.len())?));
                match range.and_then(|r| bytes.get_mut(r)) {
                    Some(slot) => slot.copy_from_slice(&data),
                    None => {
                        return Err(Error::input(format!(
                            "constant `{}` at offset {} ({} bytes) does not fit arena {} of {} bytes; re-plan",
                            t.id, t.offset, t.size, arena.name, arena.size
                        )));
                    }
                }
            }
            out.blobs.insert(a, bytes);
        }
        Ok(out)
    }

}

/// The laid-out blobs of a plan's constant arenas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blobs {
    /// Blob bytes by index into [`PlanFile::arenas`].
    pub blobs: BTreeMap<usize, Vec<u8>>,
    /// Constants left zero because the graph has no bytes for them.
    pub warnings: Vec<String>,
}

/// A constant arena's blob before its constants are laid in: `arena.size` zero bytes.
fn zeroed_blob(arena: &ArenaEntry) -> Result<Vec<u8>> {
    let size = usize::try_from(arena.size).map_err(|_| {
        Error::input(format!(
            "constant arena {} of {} bytes does not fit this machine's memory",
            arena.name, arena.size
        ))
    })?;
    Ok(vec![0u8; size])
}

/// A refused plan file is bad input, with the reader's message and help.
impl From<ReadError> for Error {
    fn from(e: ReadError) -> Error {
        let error = Error::input(e.message());
        match e.help_text() {
            Some(h) => error.help(h),
            None => error,
        }
    }
}

impl LayoutSource for crate::manifest::Manifest {
    fn layout(&self) -> Layout {
        Layout {
            min_alignment: self.platform.min_alignment,
            constraints: self
                .platform
                .memories
                .iter()
                .map(|m| crate::plan::MemoryConstraint {
                    name: m.name.clone(),
                    max_size: self.budget(&m.name),
                    arena_alignment: Some(self.memory_alignment(&m.name)),
                    app_bound: self.constraint(&m.name).is_some_and(|c| c.app_bound),
                })
                .collect(),
        }
    }
}


/// The plan file of [`fixture::tiny`]: what the tests here and `planner-build`'s writers
/// start from.
#[cfg(any(test, feature = "fixture"))]
#[doc(hidden)]
pub fn tiny_plan_file() -> Result<PlanFile> {
    let (graph, plan, layout) = fixture::tiny();
    PlanFile::from_plan(&graph, &plan, &layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_round_trips() {
        let f = tiny_plan_file().unwrap();
        assert_eq!(f.arenas.len(), 2);
        assert_eq!(f.arenas[0].name, "scratch.SRAM");
        assert_eq!(
            f.arenas[0].section.as_deref(),
            Some(".bss.planner.tiny.scratch.sram")
        );
        assert_eq!(f.arenas[1].section, None);
        let blob = f.arenas[1].blob.as_ref().unwrap();
        assert_eq!(blob.section, ".rodata.planner.tiny.constant.flash");
        assert_eq!(f.tensors.len(), 7);
        assert_eq!(f.ops[1].inputs, vec![Some(3), Some(4), Some(5)]);
        assert_eq!(f.memories[1].budget, Some(2048));
        assert_eq!(f.hash_value(), Some(f.hash()));
        let bytes = f.to_bytes();
        let back = PlanFile::parse(std::str::from_utf8(&bytes).unwrap(), "t").unwrap();
        assert_eq!(back, f);
        // Same input, same bytes.
        assert_eq!(tiny_plan_file().unwrap().to_bytes(), bytes);
    }

    #[test]
    fn blobs_hold_each_constant_at_its_offset() {
        let (g, p, l) = fixture::tiny();
        let f = PlanFile::from_plan(&g, &p, &l).unwrap();
        let b = f.blobs(&g).unwrap();
        let blob = &b.blobs[&1];
        assert_eq!(blob.len(), 64);
        let w2 = g.tensor(g.find("w2").unwrap()).data.clone().unwrap();
        assert_eq!(&blob[32..48], &w2[..]);
        assert!(b.warnings.is_empty());
    }

    /// A refused plan file is a planner error of bad input, message and help kept.
    #[test]
    fn a_read_error_is_bad_input_with_its_help() {
        let read = PlanFile::parse(r#"{"format_version": 6, "model": 3}"#, "x").unwrap_err();
        let e = Error::from(read.clone());
        assert_eq!(e.message(), read.message());
        assert!(e.message().starts_with("x is not a valid plan file: "));
        assert_eq!(e.help_text(), read.help_text());
        assert!(e.help_text().is_some());
        assert!(!e.is_infeasible() && !e.is_io());
        assert_eq!(e.to_string(), read.to_string());
    }

    /// A scale past f32's range reads as infinite and would be written back as `null`,
    /// which no longer parses: refused when read (found by the `plan_file` fuzz target).
    #[test]
    fn rejects_a_scale_past_f32() {
        let (g, p, l) = fixture::tiny();
        let f = PlanFile::from_plan(&g, &p, &l).unwrap();
        let text = String::from_utf8(f.to_bytes()).unwrap();
        assert!(
            text.contains("\"scale\": [\n          0.5\n        ]"),
            "{text}"
        );
        let huge = text.replacen(
            "\"scale\": [\n          0.5\n        ]",
            "\"scale\": [70798160296587914266e76]",
            1,
        );
        let e = PlanFile::parse(&huge, "x.plan.json").unwrap_err();
        assert!(
            e.message().contains(
                "x.plan.json: tensor `in` has quantization scale inf, which is not a finite f32"
            ),
            "{}",
            e.message()
        );
    }

    #[test]
    fn unplaced_tensor_used_by_an_op_is_an_error() {
        let (g, mut p, l) = fixture::tiny();
        p.tensor_allocs.remove("h");
        let e = PlanFile::from_plan(&g, &p, &l).unwrap_err();
        assert!(e.message().contains("`h`"), "{}", e.message());
    }
}
