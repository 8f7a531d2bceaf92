//! The pipeline for one graph: lifetimes → placement → packing → plan → verify, as stage
//! functions that each take what they read (borrowed) and return what they decided, so the
//! order is in the types:
//!
//! 1. [`inputs::Inputs::new`] → `Inputs`: lifetimes (with scratch slabs between runs), the
//!    resolver's requests, slot sizes of alias groups; read-only from here on.
//! 2. [`arenas::constants`] → `Bumped`: one bump-allocated constant arena per runtime
//!    memory, each with one source memory (a staged arena charges its source memory for the
//!    blob and its destination for the copy).
//! 3. [`arenas::persistent`] (after the constants' charges) → `Bumped`: state, pinned or
//!    in the first bank with room.
//! 4. [`arenas::budgets`] (the two arena sets) → `Budgeted`: constants and state within
//!    budget; each arena's share; the `Budget` scratch has left.
//! 5. [`scratch::fill`] (the budget left) → `Scratch`: scratch fills the banks in
//!    preference order, pinned tensors first; an unpinned tensor that does not fit spills
//!    to the next bank. The three stages' placed roots make the `Places`;
//!    [`scratch::join_split`] puts split in-place pairs at one offset.
//! 6. [`bind::bind`] (the places and the arenas) → the `MemoryPlan`: every used tensor
//!    bound (aliases take their slot's binding).
//! 7. [`crate::verify`]: the independent checker.
//!
//! One model or many are planned by one function, [`plan_unit`]: each model alone
//! ([`plan_alone`]: kernel preparation, op order, in-place ops, patches, then the stages
//! above), then the
//! unit's shared arenas (with one model, its own arenas unchanged), then the unit check
//! (see `unit.rs`). [`plan`], [`plan_graph`] and [`plan_group`] are its callers.

mod arenas;
mod bind;
mod inputs;
mod problem;
mod rows;
mod scratch;
mod solve;
mod unit;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::alias;
use crate::error::{Error, Result};
use crate::graph::{Graph, KernelSet, TensorIndex};
use crate::in_place;
use crate::lifetimes::{self, Lifetimes};
use crate::manifest::{Manifest, Schedule};
use crate::patch::{self, PatchMode};
use crate::patch_plan::PatchInput;
use crate::plan::MemoryPlan;
use crate::schedule;
use crate::verify::{self, VerifyRules};

pub use crate::planned::{ArenaReport, ArenaUser, GroupArena, GroupPlanned, Planned};
pub use unit::{Unit, plan_group, plan_unit, users_of};
pub use problem::{ProblemInput, ProblemOutcome, plan_problem, problem_input};
pub use solve::{
    DEFAULT_SEARCH_TIME, MAX_PROBLEM_HEIGHT, Solution, SolvedProblem, solve_problem,
    solve_problem_chain, solve_problem_within,
};

/// Plans the model a manifest names: imports it, then [`plan_graph`]. The one entry point
/// for users of the library.
pub fn plan(manifest: &Manifest) -> Result<Planned> {
    let graph = crate::import::load(manifest)?;
    plan_graph(manifest, &graph)
}

/// Plans `graph` under `manifest` as a unit of one ([`plan_unit`]).
pub fn plan_graph(manifest: &Manifest, graph: &Graph) -> Result<Planned> {
    let mut planned = plan_unit(&Unit::one(manifest, graph))?;
    match (planned.models.pop(), planned.models.is_empty()) {
        (Some(p), true) => Ok(p),
        _ => Err(internal("a unit of one model did not plan one model")),
    }
}

/// Plans one model of a unit on its own: prepares it for the manifest's kernel set, reorders
/// its ops when the manifest asks (`schedule = "memory"`), adds the in-place aliases it
/// allows, then plans with lifetimes from the resulting op order. [`plan_unit`] lays the result out and checks it.
fn plan_alone(manifest: &Manifest, graph: &Graph) -> Result<Planned> {
    graph.validate()?;
    control_flow_allows(manifest, graph)?;
    // `[kernels] set`: the constants and kernel scratch the set asks for join the graph
    // before anything is counted or ordered (the reference set asks for none).
    let prepared;
    let graph = if manifest.kernels == KernelSet::Reference {
        graph
    } else {
        let mut g = graph.clone();
        crate::prepare::apply(&mut g, manifest.kernels)?;
        prepared = g;
        &prepared
    };
    let classic_bound = if manifest.aliasing.in_place || manifest.aliasing.row_overlap {
        Some(classic_bound(manifest, graph)?)
    } else {
        None
    };
    // The patch split op is named in the model as imported, before PADs fold.
    let split = match &manifest.patches.mode {
        PatchMode::Fixed { split, .. } => Some(patch::resolve(graph, split).map_err(|m| {
            manifest.patches.error(
                m,
                "name the split op by its index in the model or its output tensor's name",
            )
        })?),
        _ => None,
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
    let (g, order) = match manifest.schedule {
        Schedule::Fixed => (
            graph.clone(),
            (0..graph.ops.len() as u32).collect::<Vec<u32>>(),
        ),
        Schedule::Memory => {
            let mut s = schedule::reorder(graph, manifest.platform.min_alignment);
            s.graph.folded_pads.clone_from(&graph.folded_pads);
            (s.graph, s.order)
        }
    };
    let (mut planned, order) = match &manifest.patches.mode {
        PatchMode::Off => (finish(manifest, g)?, order),
        PatchMode::Fixed { grid, .. } => {
            let p = &manifest.patches;
            let split = split.ok_or_else(|| internal("the patch split was not resolved"))?;
            let c = patch::fixed(&g, split, *grid, p.input)
                .map_err(|m| p.error(m, "pick another split op or grid, or patches = \"auto\""))?;
            if let Some(max) = p.max_recompute
                && c.overhead() > max
            {
                return Err(p.error(
                    format!(
                        "the patch plan split after op {} with grid {}x{} costs {} ({} per layer, {} with patches), above memory.max_recompute = {max}",
                        c.stage.split_op,
                        grid[0],
                        grid[1],
                        patch::overhead_text(c.macs, c.patch_macs),
                        c.macs,
                        c.patch_macs
                    ),
                    "use a coarser grid or a split op nearer the input, or raise max_recompute",
                ));
            }
            with_patches(manifest, g, &order, &c)?
        }
        PatchMode::Auto { max_recompute } => {
            auto(manifest, g, order, manifest.patches.input, *max_recompute)?
        }
    };
    planned.order = order;
    planned.classic_bound = classic_bound;
    Ok(planned)
}

/// A model with control flow ([`Graph::control`]) runs its ops in the order they are listed,
/// each over whole tensors: the techniques that move, fold, merge or split ops are refused
/// for it by name (reshape aliases are left out on their own, see [`alias::detect`]).
fn control_flow_allows(manifest: &Manifest, graph: &Graph) -> Result<()> {
    let Some(c) = graph.control.first() else {
        return Ok(());
    };
    let asked = [
        (manifest.aliasing.runs_in_place(), "memory.in_place (or in_place_ops)"),
        (manifest.schedule == Schedule::Memory, "schedule = \"memory\""),
        (
            !matches!(manifest.patches.mode, PatchMode::Off),
            "memory.patches",
        ),
    ];
    match asked.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(Error::input(format!(
            "model `{}` runs other subgraphs ({} over ops {}..{}), and {what} is not supported for a model with control flow",
            graph.name,
            c.name(),
            c.span().start,
            c.span().end
        ))
        .help("leave that setting at its default for this model")),
        None => Ok(()),
    }
}

/// Scratch bytes of a plan: the sum over its scratch arenas.
pub fn scratch_bytes(p: &Planned) -> u64 {
    p.scratch_reports.iter().map(|r| r.used).sum()
}

/// Plans `g` rewritten for patch candidate `c`; the op order composed with `order`.
fn with_patches(
    manifest: &Manifest,
    mut g: Graph,
    order: &[u32],
    c: &patch::Candidate,
) -> Result<(Planned, Vec<u32>)> {
    let perm = patch::apply(&mut g, c);
    let order = perm.iter().map(|&k| order[k]).collect();
    Ok((finish(manifest, g)?, order))
}

/// `patches = "auto"`: the best few candidates by peak bound planned in full, the lowest
/// scratch peak kept (ties: fewer MACs, then the earlier candidate); the plan without
/// patches when no candidate is lower (with in-place ops, never above in-place ops alone).
fn auto(
    manifest: &Manifest,
    g: Graph,
    order: Vec<u32>,
    input: PatchInput,
    max_recompute: f64,
) -> Result<(Planned, Vec<u32>)> {
    let list = patch::candidates(&g, input, max_recompute);
    // Why no op ends a stage at all (the op that blocks every split), for the warning.
    let no_stage = if list.is_empty() {
        patch::no_stage(&g)
    } else {
        None
    };
    let mut best: Option<(u64, u64, Planned, Vec<u32>)> = None;
    // Ranked by bound: without in-place ops, a candidate whose bound is not below the
    // best peak planned cannot beat it, so most models plan one candidate in full.
    for s in list.iter().take(patch::PACKED_CANDIDATES) {
        if !manifest.aliasing.runs_in_place() && best.as_ref().is_some_and(|b| s.bound >= b.0) {
            break;
        }
        let c = patch::build(&g, s, input).map_err(|m| internal(&m))?;
        let (p, o) = with_patches(manifest, g.clone(), &order, &c)?;
        let peak = scratch_bytes(&p);
        if best
            .as_ref()
            .is_none_or(|b| (peak, c.patch_macs) < (b.0, b.1))
        {
            best = Some((peak, c.patch_macs, p, o));
        }
    }
    // Below the live bytes of the plan without patches, a patch plan needs no comparison;
    // but in-place ops take that plan below those bytes, so with them it is planned too.
    let plain_bound = if manifest.aliasing.runs_in_place() {
        0
    } else {
        lifetimes::compute(&g)
            .map(|lt| live_bound(&g, &lt))
            .unwrap_or(0)
    };
    let macs = patch::graph_macs(&g);
    match best {
        Some((peak, _, p, o)) if peak < plain_bound => Ok((p, o)),
        best => {
            let mut plain = finish(manifest, g)?;
            match best {
                Some((peak, _, p, o)) if peak < scratch_bytes(&plain) => Ok((p, o)),
                _ => {
                    let reason = if list.is_empty() {
                        match no_stage {
                            Some(why) => format!(
                                "memory.patches = \"auto\" found no op that ends a patch stage: {why}"
                            ),
                            None => format!(
                                "memory.patches = \"auto\" found no split op whose stage is spatially local within max_recompute = {max_recompute} (every stage recomputes more{})",
                                if input == PatchInput::Streamed {
                                    ", or reads the streamed input in a way a stage cannot"
                                } else {
                                    ""
                                }
                            ),
                        }
                    } else {
                        format!(
                            "memory.patches = \"auto\" found no patch plan below the plan without patches ({} bytes, {macs} MACs)",
                            scratch_bytes(&plain)
                        )
                    };
                    if manifest.patches.required {
                        return Err(manifest.patches.error(
                            format!("memory.patches_required = true, but {reason}"),
                            "raise max_recompute, name a split op that can end a stage (patches = { split = ..., grid = [n, m] }), or remove patches_required to plan without patches",
                        ));
                    }
                    plain.warnings.push(format!("{reason}; planned without patches"));
                    Ok((plain, order))
                }
            }
        }
    }
}

/// Live bytes at the busiest op (a lower bound of any packing).
fn live_bound(g: &Graph, lt: &Lifetimes) -> u64 {
    let n = lt.ops as usize;
    let mut diff = vec![0i128; n + 2];
    for (i, t) in g.tensors.iter().enumerate() {
        if t.kind != crate::graph::TensorKind::Activation || lt.slot_of[i].get() != i {
            continue;
        }
        if let Some((s, e)) = lt.live[i] {
            diff[(s as usize).min(n)] += t.size as i128;
            diff[(e as usize + 1).min(n + 1)] -= t.size as i128;
        }
    }
    let mut cur = 0i128;
    let mut best = 0i128;
    for d in diff {
        cur += d;
        best = best.max(cur);
    }
    best.max(0) as u64
}

/// The rest of [`plan_alone`] for a graph in its final op order: aliases and in-place ops
/// (those a patch stage allows), then lifetimes and the stages.
fn finish(manifest: &Manifest, mut g: Graph) -> Result<Planned> {
    let found = alias::detect(&g, &manifest.aliasing);
    let found: Vec<_> = if g.patches.is_some() {
        found
            .into_iter()
            .filter(|&(a, t)| {
                g.producer(a)
                    .is_none_or(|k| patch::pair_allowed(&g, k, t, a))
            })
            .collect()
    } else {
        found
    };
    g.aliases.extend(found);
    if manifest.aliasing.runs_in_place() {
        in_place::detect(&mut g, &manifest.aliasing.in_place_ops);
    }
    // In-place pairs with a smaller output are packed as two slots and then put at one
    // offset. A pair that cannot be is packed again with both slots fixed at the input's
    // offset of the first packing; failing that, merged into one slot.
    let mut merged = std::collections::BTreeSet::new();
    let mut fixed = BTreeMap::new();
    let mut fixed_outputs = Vec::new();
    let planned = loop {
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
    if manifest.aliasing.row_overlap {
        return rows::improve(manifest, &g, planned);
    }
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
/// column): the stages in order, then the check. An owned graph moves into the result (on
/// 10^6 tensors a copy costs a second and hundreds of megabytes); a borrowed one is copied.
pub(crate) fn plan_lifetimes(
    manifest: &Manifest,
    graph: Cow<'_, Graph>,
    lifetimes: &Lifetimes,
    fixed: &BTreeMap<TensorIndex, u64>,
) -> Result<Planned> {
    let planned = plan_with(manifest, graph, lifetimes, fixed)?
        .map_err(|_| internal("split in-place slots outside the model pipeline"))?;
    let rules = VerifyRules::from_manifest(manifest);
    if let Err(violations) = verify::verify_with(&planned.graph, &planned.plan, &rules) {
        let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        return Err(internal(&format!(
            "the plan failed verification: {}",
            list.join("; ")
        )));
    }
    Ok(planned)
}

/// The stages in order, unchecked (the caller checks what it keeps); `Ok(Err(pairs))` when
/// those split in-place pairs ([`Lifetimes::split`]) could not be put at one offset.
fn plan_with(
    manifest: &Manifest,
    graph: Cow<'_, Graph>,
    lifetimes: &Lifetimes,
    fixed: &BTreeMap<TensorIndex, u64>,
) -> Result<std::result::Result<Planned, Vec<scratch::Unjoined>>> {
    let (plan, decisions, reports, warnings) = {
        let (inp, mut warnings) = inputs::Inputs::new(manifest, &graph, lifetimes, fixed)?;
        let constants = arenas::constants(&inp)?;
        let persistent = arenas::persistent(&inp, &constants.arenas)?;
        let budgeted = arenas::budgets(&inp, constants.arenas, persistent.arenas)?;
        let scratch = scratch::fill(&inp, budgeted.budget)?;
        let places = inputs::Places::of(
            graph.tensors.len(),
            [constants.placed, persistent.placed, scratch.placed],
        );
        let places = match scratch::join_split(&inp, &scratch.reports, places) {
            Ok(places) => places,
            Err(failed) => return Ok(Err(failed)),
        };
        let plan = MemoryPlan {
            arena_usages: scratch.arenas,
            ..budgeted.plan
        };
        let (plan, decisions) = bind::bind(&inp, &places, plan)?;
        warnings.extend(constants.warnings);
        warnings.extend(persistent.warnings);
        warnings.extend(scratch.warnings);
        (plan, decisions, scratch.reports, warnings)
    };
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
