//! The whole pipeline for one graph: lifetimes → placement → packing → plan → verify.
//!
//! Budgets are charged in this order: constant arenas (a staged arena charges its source
//! memory for the blob and its destination for the copy), then persistent arenas, then
//! scratch, which gets what is left. Scratch fills the banks in preference order; an unpinned
//! tensor that does not fit spills to the next bank, pinned tensors are placed first.

use std::boxed::Box;
use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::alias;
use crate::error::{Error, Result};
use crate::graph::{Graph, TensorIndex};
use crate::lifetimes::{self, Lifetimes};
use crate::manifest::{Manifest, Schedule};
use crate::pack::{self, Item, Problem};
use crate::placement::{self, Decision};
use crate::plan::{
    ArenaRole, ArenaUsage, MemoryPlan, TensorAllocation, TensorBinding, TensorLifetime,
};
use crate::schedule;
use crate::verify::{self, VerifyRules};

/// Quality figures of one scratch arena.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaReport {
    /// Memory of the scratch arena.
    pub memory: String,
    /// Bytes the arena takes.
    pub used: u64,
    /// Bytes it may take (`None`: unlimited).
    pub budget: Option<u64>,
    /// No packing of the tensors placed there is lower ([`pack::height_lower_bound`]:
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
}

/// Plans `graph` under `manifest`: reorders its ops when the manifest asks
/// (`schedule = "memory"`), adds the in-place aliases it allows, then plans with lifetimes
/// from the resulting op order.
pub fn plan_graph(manifest: &Manifest, graph: &Graph) -> Result<Planned> {
    graph.validate()?;
    let (mut g, order) = match manifest.schedule {
        Schedule::Fixed => (graph.clone(), (0..graph.ops.len() as u32).collect()),
        Schedule::Memory => {
            let s = schedule::reorder(graph, manifest.platform.min_alignment);
            (s.graph, s.order)
        }
    };
    let found = alias::detect(&g, &manifest.aliasing);
    g.aliases.extend(found);
    let lifetimes = lifetimes::compute(&g)?;
    let mut planned = plan_with(manifest, &g, &lifetimes, &BTreeMap::new())?;
    planned.order = order;
    Ok(planned)
}

/// Plans `graph` with given lifetimes and fixed scratch offsets (a CSV problem's `offset`
/// column).
pub fn plan_with(
    manifest: &Manifest,
    graph: &Graph,
    lifetimes: &Lifetimes,
    fixed: &BTreeMap<TensorIndex, u64>,
) -> Result<Planned> {
    graph.validate()?;
    let ops = lifetimes.ops;
    if lifetimes.live.len() != graph.tensors.len() {
        return Err(Error::input(format!(
            "lifetimes cover {} tensors but the graph has {}",
            lifetimes.live.len(),
            graph.tensors.len()
        )));
    }
    // Scratch slabs live "between runs": one step past the last op, so they share bytes with
    // every scratch tensor of the model and with nothing that is live during a run.
    let mut slab_lifetimes;
    let lifetimes = if manifest.slabs.iter().any(|s| s.role == ArenaRole::Scratch) {
        slab_lifetimes = lifetimes.clone();
        let between = lifetimes.ops;
        for s in manifest
            .slabs
            .iter()
            .filter(|s| s.role == ArenaRole::Scratch)
        {
            if let Some(t) = graph.find(&s.tensor_id()) {
                slab_lifetimes.live[t.get()] = Some((between, between));
            }
        }
        slab_lifetimes.ops = between + 1;
        &slab_lifetimes
    } else {
        lifetimes
    };
    let placement = placement::resolve(manifest, graph, lifetimes)?;
    let mut decisions = placement.decisions;
    let mut warnings = placement.warnings;
    let mut plan = MemoryPlan::default();
    let mut charged: BTreeMap<String, u64> = BTreeMap::new();
    let last = lifetimes.ops.saturating_sub(1);
    let slot_align = |t: usize, memory: &str| -> u64 {
        let tensor = &graph.tensors[t];
        manifest
            .memory_alignment(memory)
            .max(tensor.dtype.align())
            .max(tensor.align_hint.unwrap_or(1))
    };
    let roots: Vec<usize> = (0..graph.tensors.len())
        .filter(|&i| decisions[i].is_some() && !lifetimes.is_alias(TensorIndex(i as u32)))
        .collect();
    // Alias groups take the largest member's size.
    let mut slot_size: Vec<u64> = graph.tensors.iter().map(|t| t.size).collect();
    for (i, d) in decisions.iter().enumerate() {
        let r = lifetimes.slot_of[i].get();
        if r != i && d.is_some() {
            slot_size[r] = slot_size[r].max(graph.tensors[i].size);
        }
    }

    // 1. Constant arenas, one per runtime memory, each with one source memory.
    let mut by_dest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in &roots {
        if let Some(d) = &decisions[i]
            && d.role == ArenaRole::Constant
            && let Some(m) = &d.memory
        {
            by_dest.entry(m.clone()).or_default().push(i);
        }
    }
    let mut offsets: BTreeMap<usize, u64> = BTreeMap::new();
    let mut conflicts = Vec::new();
    for (dest, tensors) in &by_dest {
        let mut sources: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for &i in tensors {
            let src = decisions[i]
                .as_ref()
                .and_then(|d| d.source_memory.as_deref())
                .unwrap_or(dest.as_str());
            sources
                .entry(src)
                .or_default()
                .push(graph.tensors[i].id.as_str());
        }
        if sources.len() > 1 {
            let list: Vec<String> = sources
                .iter()
                .map(|(s, ids)| format!("from {s}: {}", ids.join(", ")))
                .collect();
            conflicts.push(format!("{dest} ({})", list.join("; ")));
        }
    }
    if !conflicts.is_empty() {
        return Err(Error::input(format!(
            "constant arenas with more than one source memory: {}",
            conflicts.join(" | ")
        ))
        .help("stage into each destination from one source memory: change `memory` or `constant_destination_memory` in the rules so each destination has one source"));
    }
    for (dest, tensors) in &by_dest {
        let source = decisions[tensors[0]]
            .as_ref()
            .and_then(|d| d.source_memory.clone())
            .unwrap_or_else(|| dest.clone());
        let arena = bump_arena(
            (ArenaRole::Constant, dest, &source),
            tensors,
            &slot_size,
            &slot_align,
            manifest,
            graph,
            &mut offsets,
        )?;
        charge(&mut charged, dest, arena.used);
        if source != *dest {
            charge(&mut charged, &source, arena.used);
            warnings.push(format!(
                "{} constants ({} bytes) staged {source} -> {dest}: copied at init",
                tensors.len(),
                arena.used
            ));
        }
        plan.constant_arenas.insert(dest.clone(), arena);
    }

    // 2. Persistent arenas: pinned ones in their memory, the rest in the first bank with room.
    let banks: Vec<String> = manifest
        .scratch_banks()
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let mut persistent: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in &roots {
        let Some(d) = &mut decisions[i] else { continue };
        if d.role != ArenaRole::Persistent {
            continue;
        }
        let memory = match &d.memory {
            Some(m) => m.clone(),
            None => {
                let need = slot_size[i];
                let found = banks.iter().find(|b| {
                    let used: u64 = persistent
                        .get(*b)
                        .map(|v| v.iter().map(|&j| slot_size[j] + slot_align(j, b)).sum())
                        .unwrap_or(0);
                    let have = charged.get(*b).copied().unwrap_or(0) + used;
                    manifest
                        .budget(b)
                        .is_none_or(|cap| have.saturating_add(need) <= cap)
                });
                let Some(b) = found.or(banks.first()) else {
                    return Err(Error::input(format!(
                        "persistent tensor `{}` has no writable memory to go to",
                        graph.tensors[i].id
                    )));
                };
                d.reason = format!("persistent in {b}: first bank in preference order with room");
                b.clone()
            }
        };
        d.memory = Some(memory.clone());
        d.source_memory = Some(memory.clone());
        persistent.entry(memory).or_default().push(i);
    }
    for (memory, tensors) in &persistent {
        let arena = bump_arena(
            (ArenaRole::Persistent, memory, memory),
            tensors,
            &slot_size,
            &slot_align,
            manifest,
            graph,
            &mut offsets,
        )?;
        charge(&mut charged, memory, arena.used);
        plan.persistent_arenas.insert(memory.clone(), arena);
    }

    // Budgets for constants and persistents, then each arena's share.
    for (memory, &used) in &charged {
        if let Some(cap) = manifest.budget(memory)
            && used > cap
        {
            let what: Vec<String> = [
                plan.constant_arenas
                    .get(memory)
                    .map(|a| format!("constants {}", a.used)),
                plan.persistent_arenas
                    .get(memory)
                    .map(|a| format!("persistent {}", a.used)),
            ]
            .into_iter()
            .flatten()
            .collect();
            return Err(Error::infeasible(format!(
                    "memory {memory} is full before any scratch: {used} bytes needed ({}), budget {cap}",
                    what.join(", ")
                ))
                .help(format!(
                    "raise the max_size of {memory}, or move constants or state elsewhere with memory.tensors rules"
                )));
        }
    }
    // Each arena's `total_size` is what its memory's budget had left when it was laid out:
    // constants first, then persistent state, then scratch.
    let mut budget_left: BTreeMap<String, Option<u64>> = manifest
        .platform
        .memories
        .iter()
        .map(|m| (m.name.clone(), manifest.budget(&m.name)))
        .collect();
    for arena in plan.constant_arenas.values().filter(|a| a.is_staged()) {
        share(&mut budget_left, &arena.source_memory, arena.used);
    }
    for arena in plan.constant_arenas.values_mut() {
        arena.total_size = share(&mut budget_left, &arena.memory, arena.used);
    }
    for arena in plan.persistent_arenas.values_mut() {
        arena.total_size = share(&mut budget_left, &arena.memory, arena.used);
    }

    // 3. Scratch: pinned first in their banks, the rest filling banks in preference order.
    let mut scratch_banks: Vec<String> = banks.clone();
    let mut pinned: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut unpinned: Vec<usize> = Vec::new();
    for &i in &roots {
        let Some(d) = &decisions[i] else { continue };
        if d.role != ArenaRole::Scratch {
            continue;
        }
        match &d.memory {
            Some(m) => {
                if !scratch_banks.contains(m) {
                    scratch_banks.push(m.clone());
                }
                pinned.entry(m.clone()).or_default().push(i);
            }
            None => unpinned.push(i),
        }
    }
    let mut reports = Vec::new();
    let mut carry: Vec<usize> = unpinned;
    let mut spill_notes: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (bi, bank) in scratch_banks.iter().enumerate() {
        let in_preference = bi < banks.len();
        let pins = pinned.get(bank).cloned().unwrap_or_default();
        let movers: Vec<usize> = if in_preference {
            std::mem::take(&mut carry)
        } else {
            Vec::new()
        };
        if pins.is_empty() && movers.is_empty() {
            continue;
        }
        let members: Vec<usize> = pins.iter().chain(&movers).copied().collect();
        let capacity = budget_left.get(bank).copied().flatten();
        let last_bank = bi + 1 == banks.len() || !in_preference;
        let problem = Problem {
            items: members
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    let (start, end) = lifetimes.live[i].unwrap_or((0, last));
                    Item {
                        size: slot_size[i],
                        start,
                        end,
                        align: slot_align(i, bank),
                        fixed: fixed.get(&TensorIndex(i as u32)).copied(),
                        spillable: k >= pins.len() && !last_bank,
                    }
                })
                .collect(),
            capacity,
        };
        let pack_report = pack::pack_report(&manifest.planner, &problem);
        let packing = pack_report.packing;
        let mut placed_items = Vec::new();
        for (k, (&i, off)) in members.iter().zip(&packing.offsets).enumerate() {
            match off {
                Some(o) => {
                    offsets.insert(i, *o);
                    placed_items.push(k);
                    let d = decisions[i]
                        .as_mut()
                        .ok_or_else(|| internal("decision vanished"))?;
                    d.memory = Some(bank.clone());
                    d.source_memory = Some(bank.clone());
                    if d.reason.is_empty() {
                        let notes = spill_notes.remove(&i).unwrap_or_default();
                        d.reason = if notes.is_empty() {
                            format!("scratch in {bank}: first bank in preference order with room")
                        } else {
                            format!("spilled: {}", notes.join("; "))
                        };
                    }
                }
                None => {
                    let (op, left) =
                        fullest_op(&problem, &packing.offsets, k, capacity.unwrap_or(0));
                    spill_notes.entry(i).or_default().push(format!(
                        "{bank} full at op {op} (needs {}, {left} left)",
                        problem.items[k].size
                    ));
                    carry.push(i);
                }
            }
        }
        if let Some(cap) = capacity
            && packing.height > cap
        {
            // Only unspillable items can pass the capacity: name the highest.
            let k = members
                .iter()
                .enumerate()
                .filter_map(|(k, _)| packing.offsets[k].map(|o| (k, o)))
                .max_by_key(|&(k, o)| (o + problem.items[k].size, std::cmp::Reverse(k)))
                .map(|(k, _)| k)
                .ok_or_else(|| internal("height without items"))?;
            let i = members[k];
            let it = &problem.items[k];
            let (op, left) = fullest_op(&problem, &packing.offsets, k, cap);
            let pinned_here = k < pins.len();
            let fix = if pinned_here {
                let next = banks.iter().find(|b| *b != bank);
                format!(
                    "raise the max_size of {bank}{}",
                    next.map(|n| format!(" or let it spill to {n} (unpin it)"))
                        .unwrap_or_default()
                )
            } else {
                format!("raise the max_size of {bank}, or add a bank to memory.constraints")
            };
            return Err(Error::infeasible(format!(
                "memory {bank} is full: tensor {} ({}) needs {} bytes at op {op}, {left} left; {fix}",
                graph.tensors[i].id, graph.tensors[i].name, it.size
            )));
        }
        // The bound of the placed items, the one the certificate's `optimal` rests on.
        let lower_bound = pack_report.certificate.lower_bound;
        let used = packing.height;
        let align = placed_items
            .iter()
            .map(|&k| problem.items[k].align)
            .max()
            .unwrap_or(1);
        let base = arena_base_align(manifest, bank, align);
        let mut arena = ArenaUsage::new(bank.clone(), ArenaRole::Scratch, bank.clone(), 0, base);
        arena.used = used;
        arena.total_size = share(&mut budget_left, bank, used);
        plan.arena_usages.insert(bank.clone(), arena);
        reports.push(ArenaReport {
            memory: bank.clone(),
            used,
            budget: capacity,
            lower_bound,
            fragmentation: used.saturating_sub(lower_bound),
            // The height reaches the lower bound, or the exact search proved it.
            optimal: pack_report.certificate.optimal,
        });
    }
    if let Some(&i) = carry.first() {
        let t = &graph.tensors[i];
        let notes = spill_notes.get(&i).cloned().unwrap_or_default();
        return Err(Error::infeasible(format!(
            "no memory has room for tensor {} ({}): {} bytes over ops {}..={}; {}",
            t.id,
            t.name,
            slot_size[i],
            lifetimes.live[i].map_or(0, |l| l.0),
            lifetimes.live[i].map_or(0, |l| l.1),
            notes.join("; ")
        ))
        .help("raise max_size in memory.constraints, or add another writable bank to it"));
    }
    let spilled = decisions
        .iter()
        .flatten()
        .filter(|d| d.reason.starts_with("spilled"))
        .count();
    if spilled > 0 {
        warnings.push(format!(
            "{spilled} scratch tensors spilled past their preferred bank (see `planner explain`)"
        ));
    }

    // 4. The plan: every used tensor bound (aliases take their slot's binding).
    for (i, t) in graph.tensors.iter().enumerate() {
        if decisions[i].is_none() {
            continue;
        }
        let slot = lifetimes.slot_of[i].get();
        // An alias is bound wherever its slot went.
        let Some(d) = decisions[slot].as_ref().or(decisions[i].as_ref()) else {
            continue;
        };
        let (Some(memory), Some(offset)) = (d.memory.clone(), offsets.get(&slot).copied()) else {
            return Err(internal(&format!("tensor {} was not placed", t.id)));
        };
        let (start, end) = lifetimes.live[i].unwrap_or((0, last));
        let binding = TensorBinding {
            role: d.role,
            memory: memory.clone(),
            source_memory: d.source_memory.clone().unwrap_or_else(|| memory.clone()),
            offset,
        };
        plan.tensor_allocs.insert(
            t.id.clone(),
            TensorAllocation {
                tensor_id: t.id.clone(),
                memory,
                offset,
                size: t.size,
                binding: Some(binding),
            },
        );
        plan.tensor_lifetimes.insert(
            t.id.clone(),
            TensorLifetime {
                tensor_id: t.id.clone(),
                start_op: start,
                end_op: end,
            },
        );
    }
    // Alias members inherit their slot's decision.
    for i in 0..graph.tensors.len() {
        let r = lifetimes.slot_of[i].get();
        if r != i
            && decisions[i].is_some()
            && let Some(rd) = decisions[r].clone()
        {
            decisions[i] = Some(Decision {
                reason: format!("alias of `{}`: shares its slot", graph.tensors[r].id),
                ..rd
            });
        }
    }

    let rules = VerifyRules::from_manifest(manifest);
    if let Err(violations) = verify::verify_with(graph, &plan, &rules) {
        let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        return Err(internal(&format!(
            "the plan failed verification: {}",
            list.join("; ")
        )));
    }
    Ok(Planned {
        graph: graph.clone(),
        order: (0..graph.ops.len() as u32).collect(),
        model: manifest.name.clone(),
        planner: manifest.planner.name().to_string(),
        plan,
        decisions,
        scratch_reports: reports,
        warnings,
        ops,
    })
}

/// Lays out a bump-allocated arena (constants or persistent state) of `role` in `memory`,
/// sourced from `source`: every tensor in order at its slot alignment, offsets recorded.
fn bump_arena(
    (role, memory, source): (ArenaRole, &str, &str),
    tensors: &[usize],
    slot_size: &[u64],
    slot_align: &dyn Fn(usize, &str) -> u64,
    manifest: &Manifest,
    graph: &Graph,
    offsets: &mut BTreeMap<usize, u64>,
) -> Result<ArenaUsage> {
    let align = tensors
        .iter()
        .map(|&i| slot_align(i, memory))
        .max()
        .unwrap_or(1);
    let base = arena_base_align(manifest, memory, align);
    let mut arena = ArenaUsage::new(memory, role, source, u64::MAX, base);
    for &i in tensors {
        let off = arena
            .allocate(slot_size[i], slot_align(i, memory))
            .map_err(|_| {
                Error::infeasible(format!(
                    "{} arena in {memory} overflows the address space at tensor `{}`",
                    role.name(),
                    graph.tensors[i].id
                ))
            })?;
        offsets.insert(i, off);
    }
    Ok(arena)
}

fn internal(what: &str) -> Error {
    Error::input(format!(
        "internal planner error: {what}; please report it with the manifest and model"
    ))
}

fn charge(charged: &mut BTreeMap<String, u64>, memory: &str, bytes: u64) {
    let e = charged.entry(memory.to_string()).or_insert(0);
    *e = e.saturating_add(bytes);
}

/// Takes `used` bytes of `memory`'s remaining budget and returns the arena's `total_size`:
/// what was left for it (its `used` when the memory is unlimited).
fn share(left: &mut BTreeMap<String, Option<u64>>, memory: &str, used: u64) -> u64 {
    match left.get_mut(memory) {
        Some(Some(l)) => {
            let total = (*l).max(used);
            *l = l.saturating_sub(used);
            total
        }
        _ => used,
    }
}

/// Arena base alignment: max(16, min_alignment, arena_alignment, largest slot alignment).
fn arena_base_align(manifest: &Manifest, memory: &str, largest_slot: u64) -> u64 {
    16u64
        .max(manifest.memory_alignment(memory))
        .max(largest_slot)
}

/// The op in item `k`'s lifetime where the placed items take the most bytes, and how many
/// bytes of `capacity` are left there.
fn fullest_op(problem: &Problem, offsets: &[Option<u64>], k: usize, capacity: u64) -> (u32, u64) {
    let it = &problem.items[k];
    let mut best = (it.start, 0u64);
    let mut live: BTreeMap<u32, u64> = BTreeMap::new();
    for (j, other) in problem.items.iter().enumerate() {
        if j == k || offsets[j].is_none() || !it.overlaps_in_time(other) {
            continue;
        }
        let (s, e) = (other.start.max(it.start), other.end.min(it.end));
        for op in s..=e {
            *live.entry(op).or_insert(0) += other.size;
        }
    }
    for (&op, &bytes) in &live {
        if bytes > best.1 {
            best = (op, bytes);
        }
    }
    (best.0, capacity.saturating_sub(best.1))
}

/// How a CSV problem was solved against a capacity.
#[derive(Debug, Clone)]
pub enum ProblemOutcome {
    /// Planned; with a capacity, everything fits below it.
    Planned(Box<Planned>),
    /// Everything does not fit below the capacity. `proven` is true when an exhaustive search
    /// showed that no packing does; `best_height` is the lowest height found.
    DoesNotFit {
        /// The lowest height any planner found.
        best_height: u64,
        /// True when the exact search proved that nothing fits below the capacity.
        proven: bool,
    },
}

/// Plans a MiniMalloc CSV problem: one writable bank (`MEM`) with 1-byte alignment, each row
/// a buffer with its own lifetime (`start_op = lower`, `end_op = upper - 1`) and, where the
/// row has one, its fixed offset.
///
/// Without `capacity` the planner minimises the height. With it, a plan above the capacity
/// is handed to the exact search ([`pack::optimal`]) under `node_budget`, which either finds
/// offsets below it or proves there are none.
pub fn plan_problem(
    csv: &crate::import::csv::CsvProblem,
    name: &str,
    planner: &pack::PlannerKind,
    capacity: Option<u64>,
    node_budget: u64,
) -> Result<ProblemOutcome> {
    let (manifest, graph, lifetimes, mut fixed) = problem_input(csv, name, planner);
    let planned = plan_with(&manifest, &graph, &lifetimes, &fixed)?;
    let height = planned.plan.arena_usages.get("MEM").map_or(0, |a| a.used);
    let Some(cap) = capacity else {
        return Ok(ProblemOutcome::Planned(Box::new(planned)));
    };
    if height <= cap {
        return Ok(ProblemOutcome::Planned(Box::new(planned)));
    }
    let opts = pack::optimal::OptimalOptions {
        node_budget,
        time_limit: None,
    };
    match pack::optimal::fits(&csv.problem, cap, &opts) {
        pack::optimal::Outcome::Fits(packing) => {
            for (i, o) in packing.offsets.iter().enumerate() {
                if let Some(o) = o {
                    fixed.insert(TensorIndex(i as u32), *o);
                }
            }
            let mut exact = manifest;
            exact.planner = pack::PlannerKind::Greedy;
            let mut planned = plan_with(&exact, &graph, &lifetimes, &fixed)?;
            planned.planner = "optimal".to_string();
            Ok(ProblemOutcome::Planned(Box::new(planned)))
        }
        pack::optimal::Outcome::DoesNotFit => Ok(ProblemOutcome::DoesNotFit {
            best_height: height,
            proven: true,
        }),
        pack::optimal::Outcome::Unknown(best) => Ok(ProblemOutcome::DoesNotFit {
            best_height: height.min(best.height),
            proven: false,
        }),
    }
}

/// The graph, lifetimes and fixed offsets of a CSV problem, and a one-bank manifest.
pub fn problem_input(
    csv: &crate::import::csv::CsvProblem,
    name: &str,
    planner: &pack::PlannerKind,
) -> (Manifest, Graph, Lifetimes, BTreeMap<TensorIndex, u64>) {
    use crate::graph::{DType, Tensor, TensorKind};
    use crate::manifest::{Aliasing, Memory, ModelSource, Platform};
    let tensors: Vec<Tensor> = csv
        .ids
        .iter()
        .zip(&csv.problem.items)
        .map(|(id, it)| Tensor {
            id: id.clone(),
            name: id.clone(),
            dtype: DType::U8,
            shape: vec![it.size],
            size: it.size,
            kind: TensorKind::Activation,
            quantization: None,
            align_hint: (it.align > 1).then_some(it.align),
            data: None,
        })
        .collect();
    let live = csv
        .problem
        .items
        .iter()
        .map(|it| Some((it.start, it.end)))
        .collect();
    let fixed = csv
        .problem
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| it.fixed.map(|o| (TensorIndex(i as u32), o)))
        .collect();
    let graph = Graph {
        name: name.to_string(),
        tensors,
        ..Graph::default()
    };
    let manifest = Manifest {
        path: std::path::PathBuf::from("<csv>"),
        name: name.to_string(),
        source: ModelSource::Inline(Box::new(graph.clone())),
        platform: Platform {
            name: "problem".to_string(),
            memories: vec![Memory {
                name: "MEM".to_string(),
                size: None,
                writable: true,
                readable_in_place: true,
                origin: None,
            }],
            min_alignment: 1,
        },
        planner: planner.clone(),
        constraints: Vec::new(),
        rules: Vec::new(),
        slabs: Vec::new(),
        aliasing: Aliasing::default(),
        schedule: Schedule::Fixed,
    };
    (manifest, graph, Lifetimes::explicit(live), fixed)
}
