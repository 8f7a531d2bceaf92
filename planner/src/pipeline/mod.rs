//! The pipeline for one graph: lifetimes → placement → packing → plan → verify, as stage
//! functions over one explicit [`State`](state::State):
//!
//! 1. [`state::State::new`]: lifetimes (with scratch slabs between runs), the resolver's
//!    requests, slot sizes of alias groups.
//! 2. [`arenas::constants`]: one bump-allocated constant arena per runtime memory, each
//!    with one source memory (a staged arena charges its source memory for the blob and its
//!    destination for the copy).
//! 3. [`arenas::persistent`]: state, pinned or in the first bank with room.
//! 4. [`arenas::budgets`]: constants and state within budget; each arena's share.
//! 5. [`scratch::fill`]: scratch fills the banks in preference order, pinned tensors first;
//!    an unpinned tensor that does not fit spills to the next bank.
//! 6. [`bind::bind`]: every used tensor bound (aliases take their slot's binding).
//! 7. [`crate::verify`]: the independent checker.
//!
//! A group of models ([`plan_group`]) plans each model alone, then lays out the group's
//! shared arenas (see `group.rs`).

mod arenas;
mod bind;
mod group;
mod problem;
mod scratch;
mod solve;
mod state;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::alias;
use crate::error::{Error, Result};
use crate::graph::{Graph, TensorIndex};
use crate::in_place;
use crate::lifetimes::{self, Lifetimes};
use crate::manifest::{Manifest, Schedule};
use crate::placement::Decision;
use crate::plan::MemoryPlan;
use crate::schedule;
use crate::verify::{self, VerifyRules};

pub use group::{ArenaUser, GroupArena, GroupPlanned, plan_group, users_of};
pub use problem::{ProblemInput, ProblemOutcome, plan_problem, problem_input};
pub use solve::{MAX_PROBLEM_HEIGHT, Solution, SolvedProblem, solve_problem};

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
    /// With `memory.in_place`: the classic lower bound, the largest sum of whole live
    /// scratch tensors at one op without folded PADs or in-place ops (what the plan would
    /// need at best without them); `None` otherwise.
    pub classic_bound: Option<u64>,
}

/// Plans the model a manifest names: imports it, then [`plan_graph`]. The one entry point
/// for users of the library.
pub fn plan(manifest: &Manifest) -> Result<Planned> {
    let graph = crate::import::load(manifest)?;
    plan_graph(manifest, &graph)
}

/// Plans `graph` under `manifest`: reorders its ops when the manifest asks
/// (`schedule = "memory"`), adds the in-place aliases it allows, then plans with lifetimes
/// from the resulting op order.
pub fn plan_graph(manifest: &Manifest, graph: &Graph) -> Result<Planned> {
    graph.validate()?;
    let classic_bound = if manifest.aliasing.in_place {
        Some(classic_bound(manifest, graph)?)
    } else {
        None
    };
    // `memory.in_place`: PADs fold into their convolutions before the order is chosen.
    let folded;
    let graph = if manifest.aliasing.in_place {
        let mut g = graph.clone();
        in_place::fold_pads(&mut g);
        folded = g;
        &folded
    } else {
        graph
    };
    let (mut g, order) = match manifest.schedule {
        Schedule::Fixed => (graph.clone(), (0..graph.ops.len() as u32).collect()),
        Schedule::Memory => {
            let mut s = schedule::reorder(graph, manifest.platform.min_alignment);
            s.graph.folded_pads.clone_from(&graph.folded_pads);
            (s.graph, s.order)
        }
    };
    let found = alias::detect(&g, &manifest.aliasing);
    g.aliases.extend(found);
    if manifest.aliasing.in_place {
        in_place::detect(&mut g);
    }
    // In-place pairs with a smaller output are packed as two slots and then put at one
    // offset. A pair that cannot be is packed again with both slots fixed at the input's
    // offset of the first packing; failing that, merged into one slot.
    let mut merged = std::collections::BTreeSet::new();
    let mut fixed = BTreeMap::new();
    let mut fixed_outputs = Vec::new();
    let mut planned = loop {
        let lifetimes = lifetimes::compute_merging(&g, &merged)?;
        let last_try = lifetimes.split.is_empty();
        let result = plan_with(manifest, Cow::Borrowed(&g), &lifetimes, &fixed);
        match result {
            Ok(Ok(p)) => break p,
            // Slots fixed from another packing may not fit together: merge those pairs.
            Err(_) if !fixed_outputs.is_empty() => {
                merged.extend(fixed_outputs.drain(..));
                fixed.clear();
            }
            Err(e) => return Err(e),
            Ok(Err(_)) if last_try => {
                return Err(internal("in-place pairs stayed apart without split slots"));
            }
            Ok(Err(failed)) => {
                for f in failed {
                    let retried = fixed.contains_key(&f.output_slot);
                    match f.input_offset {
                        Some(o) if !retried => {
                            fixed.insert(f.input_slot, o);
                            fixed.insert(f.output_slot, o);
                            fixed_outputs.push(f.output);
                        }
                        _ => {
                            fixed.remove(&f.input_slot);
                            fixed.remove(&f.output_slot);
                            merged.insert(f.output);
                        }
                    }
                }
            }
        }
    };
    planned.order = order;
    planned.classic_bound = classic_bound;
    Ok(planned)
}

/// The classic lower bound of `graph` (see [`Planned::classic_bound`]): one item per
/// activation slot (alias groups merged as the manifest allows), at its dtype's alignment
/// and the platform's.
fn classic_bound(manifest: &Manifest, graph: &Graph) -> Result<u64> {
    let mut g = graph.clone();
    g.aliases.extend(alias::detect(&g, &manifest.aliasing));
    let lt = lifetimes::compute(&g)?;
    let mut size = vec![0u64; g.tensors.len()];
    let mut align = vec![1u64; g.tensors.len()];
    for (i, t) in g.tensors.iter().enumerate() {
        if t.kind == crate::graph::TensorKind::Activation && lt.live[i].is_some() {
            let r = lt.slot_of[i].get();
            size[r] = size[r].max(t.size);
            align[r] = align[r]
                .max(t.dtype.align())
                .max(t.align_hint.unwrap_or(1))
                .max(manifest.platform.min_alignment);
        }
    }
    let items = (0..g.tensors.len())
        .filter(|&i| size[i] > 0 && lt.slot_of[i].get() == i)
        .filter_map(|i| {
            let (start, end) = lt.live[i]?;
            Some(crate::pack::Item {
                align: align[i],
                ..crate::pack::Item::new(size[i], start, end)
            })
        })
        .collect();
    Ok(crate::pack::height_lower_bound(&crate::pack::Problem {
        items,
        capacity: None,
    }))
}

/// Plans `graph` with given lifetimes and fixed scratch offsets (a CSV problem's `offset`
/// column): the stages in order. An owned graph moves into the result (on 10^6 tensors a
/// copy costs a second and hundreds of megabytes); a borrowed one is copied.
pub(crate) fn plan_lifetimes(
    manifest: &Manifest,
    graph: Cow<'_, Graph>,
    lifetimes: &Lifetimes,
    fixed: &BTreeMap<TensorIndex, u64>,
) -> Result<Planned> {
    plan_with(manifest, graph, lifetimes, fixed)?
        .map_err(|_| internal("split in-place slots outside the model pipeline"))
}

/// [`plan_lifetimes`]; `Ok(Err(pairs))` when those split in-place pairs
/// ([`Lifetimes::split`]) could not be put at one offset.
fn plan_with(
    manifest: &Manifest,
    graph: Cow<'_, Graph>,
    lifetimes: &Lifetimes,
    fixed: &BTreeMap<TensorIndex, u64>,
) -> Result<std::result::Result<Planned, Vec<scratch::Unjoined>>> {
    let (plan, decisions, reports, warnings) = {
        let mut st = state::State::new(manifest, &graph, lifetimes, fixed)?;
        arenas::constants(&mut st)?;
        arenas::persistent(&mut st)?;
        arenas::budgets(&mut st)?;
        scratch::fill(&mut st)?;
        let failed = scratch::join_split(&mut st);
        if !failed.is_empty() {
            return Ok(Err(failed));
        }
        let (plan, decisions) = bind::bind(&st)?;
        (plan, decisions, st.reports, st.warnings)
    };
    let rules = VerifyRules::from_manifest(manifest);
    if let Err(violations) = verify::verify_with(&graph, &plan, &rules) {
        let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        return Err(internal(&format!(
            "the plan failed verification: {}",
            list.join("; ")
        )));
    }
    let ops = graph.ops.len() as u32;
    Ok(Ok(Planned {
        graph: graph.into_owned(),
        order: (0..ops).collect(),
        model: manifest.name.clone(),
        planner: manifest.planner.name().to_string(),
        plan,
        decisions,
        scratch_reports: reports,
        warnings,
        ops: lifetimes.ops,
        classic_bound: None,
    }))
}

/// An error that only a bug in the planner can cause.
fn internal(what: &str) -> Error {
    Error::input(format!(
        "internal planner error: {what}; please report it with the manifest and model"
    ))
}
