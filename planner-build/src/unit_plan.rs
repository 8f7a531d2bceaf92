//! The plan file a build writes, a model's or a group's, seen through one trait: everything
//! else a build writes (linker fragment, headers, `memory.x`, messages) is made from it by the
//! same code for both. Below `generate` and `linker`, which both use it.

use planner::planfile::group::GroupPlanFile;
use planner::planfile::{ArenaEntry, PlanFile};

/// A plan file a build writes: a model's ([`PlanFile`]) or a group's ([`GroupPlanFile`],
/// its models' plan files inside). Everything else a build writes is made from what this
/// says, by the same code for both.
pub(crate) trait UnitPlan {
    /// The model's or the group's name: the plan file's, the fragment's and `memory.x`'s.
    fn name(&self) -> &str;
    /// `model` or `group`, for messages.
    fn kind(&self) -> &'static str;
    /// The call that makes a binary use the statics, for the linker fragment's messages.
    fn take(&self) -> &'static str;
    /// The plan hash as the file records it.
    fn plan_hash(&self) -> &str;
    /// The arenas, each once (a group's shared arenas).
    fn arena_entries(&self) -> Vec<&ArenaEntry>;
    /// Each model's plan file, in model order (a model: itself).
    fn model_files(&self) -> Vec<&PlanFile>;
    /// The file's bytes.
    fn to_bytes(&self) -> Vec<u8>;
    /// The plan hash.
    fn hash(&self) -> u64;
    /// `model kws`, `group sensors`: whose statics, for messages.
    fn owner(&self) -> String {
        format!("{} {}", self.kind(), self.name())
    }
}

/// Implements [`UnitPlan`] for a plan-file type: the field naming it, its kind, the call
/// that takes its statics, and how its arenas and model files are listed.
macro_rules! unit_plan {
    ($file:ident {
        name: $name:ident,
        kind: $kind:literal,
        take: $take:literal,
        arenas: |$a:ident| $arenas:expr,
        models: |$m:ident| $models:expr $(,)?
    }) => {
        impl UnitPlan for $file {
            fn name(&self) -> &str {
                &self.$name
            }
            fn kind(&self) -> &'static str {
                $kind
            }
            fn take(&self) -> &'static str {
                $take
            }
            fn plan_hash(&self) -> &str {
                &self.plan_hash
            }
            fn arena_entries(&self) -> Vec<&ArenaEntry> {
                let $a = self;
                $arenas
            }
            fn model_files(&self) -> Vec<&PlanFile> {
                let $m = self;
                $models
            }
            fn to_bytes(&self) -> Vec<u8> {
                $file::to_bytes(self)
            }
            fn hash(&self) -> u64 {
                $file::hash(self)
            }
        }
    };
}

unit_plan!(PlanFile {
    name: model,
    kind: "model",
    take: "Model::take()",
    arenas: |p| p.arenas.iter().collect(),
    models: |p| vec![p],
});

unit_plan!(GroupPlanFile {
    name: group,
    kind: "group",
    take: "Group::take()",
    arenas: |g| g.arenas.iter().map(|a| &a.arena).collect(),
    models: |g| g.models.iter().collect(),
});
