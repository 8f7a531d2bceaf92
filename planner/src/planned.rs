//! What planning returns: a model's finished plan ([`Planned`]) and a group's
//! ([`GroupPlanned`]), with the figures reports need. Plain data the pipeline fills and the
//! verifier, the plan file, the reports and the exports read; it depends on none of them.

use std::string::String;
use std::vec::Vec;

use crate::graph::{Graph, Tensor};
use crate::placement::Decision;
use crate::plan::{ArenaRole, ArenaUsage, MemoryPlan, TensorBinding};

/// Quality figures of one scratch arena.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaReport {
    /// Memory of the scratch arena.
    pub memory: String,
    /// Bytes the arena takes.
    pub used: u64,
    /// Bytes it may take (`None`: unlimited).
    pub budget: Option<u64>,
    /// No packing of the tensors placed there is lower ([`crate::pack::height_lower_bound`]:
    /// the sizes live at one op, padding counted only where alignment forces it), so
    /// `used >= lower_bound` always.
    pub lower_bound: u64,
    /// `used - lower_bound`.
    pub fragmentation: u64,
    /// True when no packing of these tensors is lower: `used` reaches a lower bound, or an
    /// exhaustive search proved it.
    pub optimal: bool,
}

/// A finished plan with everything the reports and code generators need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Planned {
    /// The graph as planned: ops in the plan's order, aliases added. Code generators and
    /// reports read this one, not the imported graph.
    pub graph: Graph,
    /// `order[k]` is the model's index of the op that runs k-th (the identity unless
    /// `schedule = "memory"` found a better order).
    pub order: Vec<u32>,
    /// Model name.
    pub model: String,
    /// Planner that packed the scratch arenas.
    pub planner: String,
    /// The plan itself.
    pub plan: MemoryPlan,
    /// Per tensor (by index): where it went and why; `None` for unused tensors.
    pub decisions: Vec<Option<Decision>>,
    /// Per scratch arena, in bank order.
    pub scratch_reports: Vec<ArenaReport>,
    /// Rules that matched nothing, spills, staged constants.
    pub warnings: Vec<String>,
    /// Number of ops in the schedule.
    pub ops: u32,
    /// With `memory.in_place` or `memory.row_overlap`: the classic lower bound, the largest
    /// sum of whole live scratch tensors at one op without folded PADs, in-place ops or row
    /// overlap (what the plan would need at best without them); `None` otherwise.
    pub classic_bound: Option<u64>,
}

impl Planned {
    /// The planned graph's tensors the plan binds to an arena, with their index and
    /// binding, in graph order: the one lookup export, the group layout and the group
    /// check read tensors' places through. `role` keeps only that role's.
    pub fn bound_tensors(
        &self,
        role: Option<ArenaRole>,
    ) -> impl Iterator<Item = (usize, &Tensor, &TensorBinding)> {
        self.graph
            .tensors
            .iter()
            .enumerate()
            .filter_map(|(i, t)| self.plan.binding(&t.id).map(|b| (i, t, b)))
            .filter(move |(_, _, b)| role.is_none_or(|r| b.role == r))
    }
}

/// One model's part of a group arena.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaUser {
    /// Index of the model in the group.
    pub model: usize,
    /// Where the model's block starts in the group arena (constants: its lowest slot).
    pub base: u64,
    /// Bytes of the model's own arena when planned alone.
    pub bytes: u64,
}

/// One arena of the group: a region of one memory, of one role, and the models using it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupArena {
    /// The arena (its `used` is the group's bytes).
    pub arena: ArenaUsage,
    /// The models that use it, in model order.
    pub users: Vec<ArenaUser>,
    /// What separate plans would take: the sum of the users' own bytes.
    pub separate: u64,
    /// Lower bound of the group's need (scratch: the largest component's sum of lower
    /// bounds; other roles: `used`).
    pub lower_bound: u64,
    /// The bytes this arena may take: its memory's budget less what the group's arenas
    /// before it there take (constants, then state, then scratch); `None` when the memory
    /// has no budget. The same figure as `arena.total_size` where there is a budget.
    pub budget: Option<u64>,
}

/// A finished group plan.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GroupPlanned {
    /// Group name.
    pub name: String,
    /// Each model's plan, with offsets in the group's arenas and the group's arena sizes.
    pub models: Vec<Planned>,
    /// The group's arenas: scratch, then persistent, then constant, each by memory.
    pub arenas: Vec<GroupArena>,
    /// Model indices that may run at the same time, as the manifest gives them.
    pub concurrent: Vec<Vec<usize>>,
    /// Constant slots stored once for two or more models.
    pub shared_constants: usize,
}

impl GroupPlanned {
    /// The group arena of `role` in `memory`.
    pub fn arena(&self, role: ArenaRole, memory: &str) -> Option<&GroupArena> {
        self.arenas
            .iter()
            .find(|a| a.arena.role == role && a.arena.memory == memory)
    }
}

