//! The group plan file (format version 2): several models planned together
//! (`planner::plan_group`), written by `planner-build` as `<group>.plan.json` and expanded
//! by `include_model!("<group>")`.
//!
//! A group plan file is told from a model's by its `group` field (a model's has `model`).
//! Its fields:
//!
//! - `format_version`, `generator`, `plan_hash`: as in a model's plan file; the hash covers
//!   the whole file, the models' plans included;
//! - `group`: the group's name, the module `include_model!` makes and the prefix of every
//!   section (`.bss.planner.<group>.scratch.sram`);
//! - `concurrent`: sets of model names that may run at the same time; models in no common
//!   set run one after another, so their scratch may share bytes;
//! - `memories`: every memory the group's arenas use, with its budget;
//! - `arenas`: the group's arenas (`arena`: an arena entry as in a model's plan file, with
//!   the group's size, section and blob) and their `users` (`model`, `base`: where the
//!   model's block starts, `bytes`: the model's own need);
//! - `models`: each model's plan file, complete (its own `plan_hash`), whose arenas are the
//!   group arenas it uses: same name, size, section and blob, offsets in the group arenas.
//!
//! A single-model plan file is unchanged by all of this.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{
    ArenaEntry, MemoryEntry, PlanFile, canonical_hash, check_version, pretty_bytes,
};

/// A group plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupPlanFile {
    /// [`FORMAT_VERSION`](crate::FORMAT_VERSION) of the writer.
    pub format_version: u32,
    /// The tool that wrote it; informative only.
    pub generator: String,
    /// The group's name.
    pub group: String,
    /// `fnv1a64:<16 hex digits>` over the file with this field empty.
    pub plan_hash: String,
    /// Sets of model names that may run at the same time.
    pub concurrent: Vec<Vec<String>>,
    /// Memories the group's arenas use, with their budgets.
    pub memories: Vec<MemoryEntry>,
    /// The group's arenas and their users.
    pub arenas: Vec<GroupArenaEntry>,
    /// Each model's plan, over the group's arenas.
    pub models: Vec<PlanFile>,
}

/// One arena of the group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupArenaEntry {
    /// The arena: the group's size, section and blob.
    pub arena: ArenaEntry,
    /// The models using it, in model order.
    pub users: Vec<ArenaUserEntry>,
}

/// A model's part of a group arena.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArenaUserEntry {
    /// The model's name.
    pub model: String,
    /// Where its block starts (constants: its lowest slot).
    pub base: u64,
    /// Bytes it needs planned alone.
    pub bytes: u64,
}

/// A plan file of either kind, as [`read`] finds it.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyPlan {
    /// One model.
    Model(PlanFile),
    /// A group of models.
    Group(GroupPlanFile),
}

/// Reads a plan file of either kind; `origin` names it in errors. The version is checked
/// first, as [`PlanFile::parse`] does.
pub fn read(text: &str, origin: &str) -> Result<AnyPlan> {
    #[derive(Deserialize)]
    struct Kind {
        group: Option<serde_json::Value>,
    }
    check_version(text, origin)?;
    let kind: Kind = serde_json::from_str(text)
        .map_err(|e| Error::new(format!("{origin} is not a plan file: {e}")))?;
    if kind.group.is_none() {
        return PlanFile::parse(text, origin).map(AnyPlan::Model);
    }
    let group: GroupPlanFile = serde_json::from_str(text).map_err(|e| {
        Error::new(format!("{origin} is not a valid group plan file: {e}"))
            .help("regenerate it with planner-build rather than editing it by hand")
    })?;
    for m in &group.models {
        let origin = format!("{origin}, model `{}`", m.model);
        m.check_scales(&origin)?;
        m.check_control(&origin)?;
    }
    Ok(AnyPlan::Group(group))
}

impl GroupPlanFile {
    /// The plan hash: FNV-1a 64 over the canonical JSON with `plan_hash` empty.
    pub fn hash(&self) -> u64 {
        canonical_hash(self, |f| &mut f.plan_hash)
    }

    /// The stated plan hash as a number; `None` when it is not `fnv1a64:<16 hex digits>`.
    pub fn hash_value(&self) -> Option<u64> {
        crate::model::parse_hash(&self.plan_hash)
    }

    /// The file's bytes: pretty JSON with a trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        pretty_bytes(self)
    }

    /// Index of the model named `name`.
    pub fn model(&self, name: &str) -> Option<usize> {
        self.models.iter().position(|m| m.model == name)
    }

    /// The group arena entries as a list of plain arenas (for the linker fragment).
    pub fn arena_entries(&self) -> Vec<ArenaEntry> {
        self.arenas.iter().map(|a| a.arena.clone()).collect()
    }

    /// Pairs of model indices (low, high) that may run at the same time.
    pub fn concurrent_pairs(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for set in &self.concurrent {
            let ks: Vec<usize> = set.iter().filter_map(|n| self.model(n)).collect();
            for (i, &a) in ks.iter().enumerate() {
                for &b in &ks[i + 1..] {
                    out.push((a.min(b), a.max(b)));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::relu;

    fn group() -> GroupPlanFile {
        let model = relu();
        let mut g = GroupPlanFile {
            format_version: crate::FORMAT_VERSION,
            generator: "test".to_string(),
            group: "pair".to_string(),
            plan_hash: String::new(),
            concurrent: vec![vec!["a".to_string(), "b".to_string()]],
            memories: model.memories.clone(),
            arenas: vec![GroupArenaEntry {
                arena: model.arenas[0].clone(),
                users: vec![],
            }],
            models: ["a", "b", "c"]
                .map(|name| {
                    let mut m = model.clone();
                    m.model = name.to_string();
                    m.plan_hash = crate::hash_text(m.hash());
                    m
                })
                .to_vec(),
        };
        g.plan_hash = crate::hash_text(g.hash());
        g
    }

    #[test]
    fn reads_either_kind() {
        let g = group();
        assert_eq!(g.hash_value(), Some(g.hash()));
        assert_eq!(g.concurrent_pairs(), vec![(0, 1)]);
        assert_eq!(g.model("c"), Some(2));
        assert_eq!(g.arena_entries(), vec![g.arenas[0].arena.clone()]);
        let text = String::from_utf8(g.to_bytes()).unwrap();
        assert_eq!(read(&text, "g").unwrap(), AnyPlan::Group(g.clone()));
        let m = relu();
        let text_m = String::from_utf8(m.to_bytes()).unwrap();
        assert_eq!(read(&text_m, "m").unwrap(), AnyPlan::Model(m));
        let e = read(r#"{"format_version": 1, "group": "g"}"#, "old").unwrap_err();
        assert!(e.message().contains("rebuild"), "{}", e.message());
        // A scale past f32 in one model names the model.
        let e = read(&text.replacen("0.5", "7e95", 1), "g.plan.json").unwrap_err();
        assert_eq!(
            e.message(),
            "g.plan.json, model `a`: tensor `x` has quantization scale inf, which is not a finite f32 (a value past 3.4e38 reads as infinite)"
        );
        let e = read(r#"{"format_version": 6, "group": 5}"#, "g.plan.json").unwrap_err();
        assert!(
            e.message()
                .starts_with("g.plan.json is not a valid group plan file: "),
            "{}",
            e.message()
        );
    }
}
