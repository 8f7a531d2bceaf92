//! The group plan file: several models planned together ([`crate::plan_group`]), written
//! by `planner-build` as `<group>.plan.json` and expanded by `include_model!("<group>")`.
//!
//! The format and its reader are the `group` module of the `planner-planfile` crate, whose
//! docs list the fields; its items are re-exported here. [`BuildGroupPlanFile::from_group`]
//! builds a group's file from the planned group.

#[doc(no_inline)]
pub use planner_planfile::group::{
    AnyPlan, ArenaUserEntry, GroupArenaEntry, GroupPlanFile, read,
};

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use planner_planfile::hash_text;

use super::{ArenaEntry, Blobs, BuildPlanFile, FORMAT_VERSION, Layout, MemoryEntry, PlanFile, fnv1a64, naming};
use crate::error::{Error, Result};
use crate::plan::ArenaRole;
use crate::planned::GroupPlanned;

/// Builds a group's [`GroupPlanFile`] from the planned group; a trait on the format's type
/// as [`BuildPlanFile`] is (import it to call `GroupPlanFile::from_group`).
pub trait BuildGroupPlanFile: Sized {
    /// Builds the group's plan file and the bytes of its constant arenas' blobs (by index
    /// into [`GroupPlanFile::arenas`]); `layouts` are the models' platform facts, in model
    /// order. Errors when a model's plan cannot be written, or two models put different
    /// bytes at one constant offset.
    fn from_group(planned: &GroupPlanned, layouts: &[Layout]) -> Result<(Self, Blobs)>;
}

impl BuildGroupPlanFile for GroupPlanFile {
    fn from_group(planned: &GroupPlanned, layouts: &[Layout]) -> Result<(Self, Blobs)> {
        let group = planned.name.clone();
        let mut models = Vec::new();
        let mut model_blobs = Vec::new();
        for (k, p) in planned.models.iter().enumerate() {
            let layout = layouts.get(k).cloned().unwrap_or_default();
            let mut file = PlanFile::from_plan(&p.graph, &p.plan, &layout)?;
            let blobs = file.blobs(&p.graph)?;
            for a in &mut file.arenas {
                rename(a, &group);
            }
            model_blobs.push(blobs);
            models.push(file);
        }
        let mut memories: BTreeMap<String, Option<u64>> = BTreeMap::new();
        for m in models.iter().flat_map(|f| &f.memories) {
            memories.entry(m.name.clone()).or_insert(m.budget);
        }
        let mut arenas = Vec::new();
        let mut out = Blobs::default();
        let shared = layouts.first().cloned().unwrap_or_default();
        for (g, a) in planned.arenas.iter().enumerate() {
            let mut entry = super::entries::arena_entry(&group, &a.arena, &shared);
            if entry.role == ArenaRole::Constant {
                let bytes = merge_blob(&entry, &models, &model_blobs)?;
                if let Some(b) = entry.blob.as_mut() {
                    b.hash = hash_text(fnv1a64(&bytes));
                }
                out.blobs.insert(g, bytes);
            }
            let users = a
                .users
                .iter()
                .map(|u| ArenaUserEntry {
                    model: planned
                        .models
                        .get(u.model)
                        .map_or_else(String::new, |m| m.model.clone()),
                    base: u.base,
                    bytes: u.bytes,
                })
                .collect();
            arenas.push(GroupArenaEntry {
                arena: entry,
                users,
            });
        }
        for (file, blobs) in models.iter_mut().zip(model_blobs) {
            out.warnings.extend(blobs.warnings);
            for a in &mut file.arenas {
                let group_blob = arenas
                    .iter()
                    .find(|g| g.arena.name == a.name)
                    .and_then(|g| g.arena.blob.as_ref());
                if let (Some(b), Some(gb)) = (a.blob.as_mut(), group_blob) {
                    b.hash = gb.hash.clone();
                }
            }
            file.plan_hash = hash_text(file.hash());
        }
        let concurrent = planned
            .concurrent
            .iter()
            .map(|set| {
                set.iter()
                    .filter_map(|&k| planned.models.get(k).map(|m| m.model.clone()))
                    .collect()
            })
            .collect();
        let mut file = GroupPlanFile {
            format_version: FORMAT_VERSION,
            generator: format!("planner {}", env!("CARGO_PKG_VERSION")),
            group,
            plan_hash: String::new(),
            concurrent,
            memories: memories
                .into_iter()
                .map(|(name, budget)| MemoryEntry { name, budget })
                .collect(),
            arenas,
            models,
        };
        file.plan_hash = hash_text(file.hash());
        Ok((file, out))
    }
}

/// Gives a model's arena entry the group's section and blob names.
fn rename(a: &mut ArenaEntry, group: &str) {
    if a.section.is_some() {
        a.section = Some(naming::zeroed_section(group, a.role, &a.memory));
    }
    if let Some(b) = a.blob.as_mut() {
        b.file = naming::blob_file(group, &a.memory);
        b.section = naming::blob_section(group, &a.source_memory, &a.memory);
    }
}

/// The group blob of constant arena `entry`: every model's constants at their group
/// offsets. Two models may share a slot only with identical bytes.
fn merge_blob(entry: &ArenaEntry, models: &[PlanFile], blobs: &[Blobs]) -> Result<Vec<u8>> {
    let mut bytes = super::zeroed_blob(entry)?;
    let size = bytes.len();
    let mut owner: Vec<Option<usize>> = vec![None; size];
    for (k, (file, b)) in models.iter().zip(blobs).enumerate() {
        let Some(a) = file.arenas.iter().position(|x| x.name == entry.name) else {
            continue;
        };
        let Some(src) = b.blobs.get(&a) else { continue };
        for t in file.tensors.iter().filter(|t| t.arena as usize == a) {
            let start = usize::try_from(t.offset).unwrap_or(usize::MAX);
            let end = start.saturating_add(usize::try_from(t.size).unwrap_or(usize::MAX));
            let (Some(from), Some(to)) = (src.get(start..end), bytes.get_mut(start..end)) else {
                return Err(Error::input(format!(
                    "constant `{}` of model `{}` at {start}..{end} does not fit arena {} of {size} bytes; re-plan",
                    t.id, file.model, entry.name
                )));
            };
            for (i, (d, s)) in to.iter_mut().zip(from).enumerate() {
                match owner[start + i] {
                    Some(o) if o != k && *d != *s => {
                        return Err(Error::input(format!(
                            "models `{}` and `{}` put different bytes at offset {} of arena {}; re-plan the group",
                            models[o].model,
                            file.model,
                            start + i,
                            entry.name
                        )));
                    }
                    _ => {
                        *d = *s;
                        owner[start + i] = Some(k);
                    }
                }
            }
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Quantization;
    use crate::manifest::Group;
    use crate::manifest::tests::inline_model;

    /// The group `pair`: `a` (a fully connected layer over 64 elements) runs alone, `b` and
    /// `c` (RELUs over 32 and 16) together.
    fn pair_text() -> String {
        let model = |name, opcode, len| inline_model("[[model]]", name, opcode, len);
        format!(
            "[group]\nname = \"pair\"\nconcurrent = [[\"b\", \"c\"]]\n\n{}\n{}\n{}\n[platform]\npreset = \"mps3-an547\"\n\n[memory]\nconstraints = [{{ name = \"DTCM\" }}, {{ name = \"SRAM\" }}]\n",
            model("a", "FULLY_CONNECTED", 64),
            model("b", "RELU", 32),
            model("c", "RELU", 16),
        )
    }

    fn pair() -> (GroupPlanFile, Blobs) {
        let g = Group::parse(&pair_text(), std::path::Path::new("pair.toml")).unwrap();
        let planned = crate::plan_group(&g).unwrap();
        let layouts: Vec<Layout> = g.models.iter().map(Layout::of).collect();
        GroupPlanFile::from_group(&planned, &layouts).unwrap()
    }

    #[test]
    fn group_file_round_trips_and_models_share_the_group_arenas() {
        let (f, blobs) = pair();
        assert_eq!(f.models.len(), 3);
        assert_eq!(f.concurrent_pairs(), vec![(1, 2)]);
        let bytes = f.to_bytes();
        let text = std::str::from_utf8(&bytes).unwrap();
        match read(text, "pair.plan.json").unwrap() {
            AnyPlan::Group(back) => assert_eq!(back, f),
            AnyPlan::Model(_) => panic!("read as a model"),
        }
        assert_eq!(f.hash_value(), Some(f.hash()));
        for m in &f.models {
            assert_eq!(m.hash_value(), Some(m.hash()), "{}", m.model);
            for a in &m.arenas {
                let g = f.arenas.iter().find(|g| g.arena.name == a.name).unwrap();
                assert_eq!(a.size, g.arena.size);
                assert_eq!(a.section, g.arena.section);
                assert_eq!(a.blob, g.arena.blob);
            }
        }
        let scratch = &f.arenas[0].arena;
        assert_eq!(
            scratch.section.as_deref(),
            Some(".bss.planner.pair.scratch.dtcm")
        );
        // a and b run in turn (a from 0), b and c are stacked.
        let users = &f.arenas[0].users;
        assert_eq!(users.len(), 3);
        assert_eq!(users[0].base, 0);
        assert!(users[2].base >= users[1].base + users[1].bytes);
        assert_eq!(blobs.blobs.len(), 1);
        // The same input gives the same bytes.
        assert_eq!(pair().0.to_bytes(), bytes);
    }

    /// A scale past f32's range in one model of a group is refused as in a model's plan
    /// file, naming the model (it would be written back as `null`).
    #[test]
    fn a_group_model_with_a_scale_past_f32_is_refused() {
        let (mut f, _) = pair();
        f.models[1].tensors[0].quantization = Some(Quantization {
            scale: vec![0.25],
            zero_point: vec![0],
            axis: 0,
        });
        let text = String::from_utf8(f.to_bytes()).unwrap();
        assert_eq!(text.matches("0.25").count(), 1, "{text}");
        let e = read(&text.replacen("0.25", "7e95", 1), "g.plan.json").unwrap_err();
        assert!(
            e.message().starts_with("g.plan.json, model `b`: tensor `")
                && e.message()
                    .contains("has quantization scale inf, which is not a finite f32"),
            "{}",
            e.message()
        );
        assert!(read(&text, "g.plan.json").is_ok());
    }

    #[test]
    fn a_model_file_still_reads_as_a_model() {
        let (g, p, l) = crate::planfile::fixture::tiny();
        let f = PlanFile::from_plan(&g, &p, &l).unwrap();
        let bytes = f.to_bytes();
        let any = read(std::str::from_utf8(&bytes).unwrap(), "tiny").unwrap();
        assert_eq!(any, AnyPlan::Model(f));
        let e = read(r#"{"format_version": 1, "group": "g"}"#, "old").unwrap_err();
        assert!(e.message().contains("rebuild"), "{}", e.message());
    }
}
