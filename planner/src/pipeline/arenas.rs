//! Bump-allocated arenas: constants (one per runtime memory, one source memory each) and
//! persistent state; then the budgets they charge.

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use super::inputs::{Budget, Inputs, Placed};
use crate::error::{Error, Result};
use crate::placement::{Decision, Home, Reason, Request};
use crate::plan::{ArenaRole, ArenaUsage, MAX_ARENA, MemoryPlan};

/// What a bump-allocating stage returns.
pub(super) struct Bumped {
    /// Its arenas, by memory.
    pub(super) arenas: BTreeMap<String, ArenaUsage>,
    /// The slot roots it placed.
    pub(super) placed: Placed,
    /// Warnings for the user.
    pub(super) warnings: Vec<String>,
}

/// What the budgets stage returns: the constant and persistent arenas with their shares
/// of their memories' budgets, and what the budgets have left for scratch.
pub(super) struct Budgeted {
    /// The plan so far: constant and persistent arenas.
    pub(super) plan: MemoryPlan,
    /// Bytes charged to each memory and what its budget has left.
    pub(super) budget: Budget,
}

/// Stage 2: one constant arena per runtime memory, each from one source memory.
pub(super) fn constants(inp: &Inputs<'_>) -> Result<Bumped> {
    let mut by_dest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in inp.roots_of(ArenaRole::Constant) {
        if let Home::Memory { memory, .. } = &r.home {
            by_dest.entry(memory.clone()).or_default().push(i);
        }
    }
    one_source_each(inp, &by_dest)?;
    let mut out = Bumped {
        arenas: BTreeMap::new(),
        placed: Vec::new(),
        warnings: Vec::new(),
    };
    for (dest, tensors) in &by_dest {
        let source = match inp.requests[tensors[0]].as_ref().map(|r| &r.home) {
            Some(Home::Memory { source, .. }) => source.clone(),
            _ => dest.clone(),
        };
        let decisions = tensors.iter().map(|&i| pinned(inp, i));
        let arena = bump_arena(
            inp,
            (ArenaRole::Constant, dest, &source),
            tensors,
            decisions,
            &mut out.placed,
        )?;
        if source != *dest {
            out.warnings.push(format!(
                "{} constants ({} bytes) staged {source} -> {dest}: copied at init",
                tensors.len(),
                arena.used
            ));
        }
        out.arenas.insert(dest.clone(), arena);
    }
    Ok(out)
}

/// Several source memories staged into one destination: one error listing every tensor.
fn one_source_each(inp: &Inputs<'_>, by_dest: &BTreeMap<String, Vec<usize>>) -> Result<()> {
    let mut conflicts = Vec::new();
    for (dest, tensors) in by_dest {
        let mut sources: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for &i in tensors {
            let src = match inp.requests[i].as_ref().map(|r| &r.home) {
                Some(Home::Memory { source, .. }) => source.as_str(),
                _ => dest.as_str(),
            };
            sources
                .entry(src)
                .or_default()
                .push(inp.graph.tensors[i].id.as_str());
        }
        if sources.len() > 1 {
            let list: Vec<String> = sources
                .iter()
                .map(|(s, ids)| format!("from {s}: {}", ids.join(", ")))
                .collect();
            conflicts.push(format!("{dest} ({})", list.join("; ")));
        }
    }
    if conflicts.is_empty() {
        return Ok(());
    }
    Err(Error::input(format!(
        "constant arenas with more than one source memory: {}",
        conflicts.join(" | ")
    ))
    .help("stage into each destination from one source memory: change `memory` or `constant_destination_memory` in the rules so each destination has one source"))
}

/// Bytes charged to each memory by constant and persistent arenas: an arena charges its
/// memory, a staged constant arena its source memory too.
fn charged<'a>(arenas: impl Iterator<Item = &'a ArenaUsage>) -> Budget {
    let mut budget = Budget::default();
    for a in arenas {
        budget.charge(&a.memory, a.used);
        if a.is_staged() {
            budget.charge(&a.source_memory, a.used);
        }
    }
    budget
}

/// Stage 3: persistent arenas, pinned ones in their memory, the rest in the first bank
/// with room (after the `constants` charged there).
pub(super) fn persistent(
    inp: &Inputs<'_>,
    constants: &BTreeMap<String, ArenaUsage>,
) -> Result<Bumped> {
    let charged = charged(constants.values()).charged;
    let banks = inp.bank_names();
    let mut persistent: BTreeMap<String, Vec<(usize, Decision)>> = BTreeMap::new();
    // Bytes each bank's state takes so far, counted as slot size plus alignment.
    let mut taken: BTreeMap<String, u64> = BTreeMap::new();
    for (i, r) in inp.roots_of(ArenaRole::Persistent) {
        let decision = match &r.home {
            Home::Memory { .. } => pinned(inp, i),
            Home::FirstBankWithRoom => {
                let need = inp.slot_size[i];
                let found = banks.iter().find(|b| {
                    let have = charged
                        .get(*b)
                        .copied()
                        .unwrap_or(0)
                        .saturating_add(taken.get(*b).copied().unwrap_or(0));
                    inp.manifest
                        .budget(b)
                        .is_none_or(|cap| have.saturating_add(need) <= cap)
                });
                let Some(b) = found.or(banks.first()) else {
                    return Err(Error::input(format!(
                        "persistent tensor `{}` has no writable memory to go to",
                        inp.graph.tensors[i].id
                    )));
                };
                Some(Decision {
                    role: ArenaRole::Persistent,
                    memory: b.clone(),
                    source_memory: b.clone(),
                    rule: r.rule,
                    reason: Reason::FirstBank {
                        role: ArenaRole::Persistent,
                        bank: b.clone(),
                    },
                })
            }
        };
        let Some(decision) = decision else { continue };
        let memory = decision.memory.clone();
        let cost = inp.slot_size[i].saturating_add(inp.slot_align(i, &memory));
        let t = taken.entry(memory.clone()).or_insert(0);
        *t = t.saturating_add(cost);
        persistent.entry(memory).or_default().push((i, decision));
    }
    let mut out = Bumped {
        arenas: BTreeMap::new(),
        placed: Vec::new(),
        warnings: Vec::new(),
    };
    for (memory, members) in persistent {
        let tensors: Vec<usize> = members.iter().map(|&(i, _)| i).collect();
        let decisions = members.into_iter().map(|(_, d)| Some(d));
        let role = (ArenaRole::Persistent, memory.as_str(), memory.as_str());
        let arena = bump_arena(inp, role, &tensors, decisions, &mut out.placed)?;
        out.arenas.insert(memory, arena);
    }
    Ok(out)
}

/// Stage 4: constants and state within every budget; then each arena's share of its
/// memory's budget (`total_size`): constants first, then persistent state; scratch gets
/// what is left.
pub(super) fn budgets(
    inp: &Inputs<'_>,
    mut constants: BTreeMap<String, ArenaUsage>,
    mut persistent: BTreeMap<String, ArenaUsage>,
) -> Result<Budgeted> {
    let mut budget = charged(constants.values().chain(persistent.values()));
    for (memory, &used) in &budget.charged {
        let Some(cap) = inp.manifest.budget(memory) else {
            continue;
        };
        if used <= cap {
            continue;
        }
        let what: Vec<String> = [
            constants
                .get(memory)
                .map(|a| format!("constants {}", a.used)),
            persistent
                .get(memory)
                .map(|a| format!("persistent {}", a.used)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let e = Error::infeasible(format!(
            "memory {memory} is full before any scratch: {used} bytes needed ({}), budget {cap}",
            what.join(", ")
        ))
        .help(format!(
            "raise the max_size of {memory}, or move constants or state elsewhere with memory.tensors rules"
        ));
        return Err(inp.at_budget(e, memory));
    }
    budget.left = inp
        .manifest
        .platform
        .memories
        .iter()
        .map(|m| (m.name.clone(), inp.manifest.budget(&m.name)))
        .collect();
    for a in constants.values().filter(|a| a.is_staged()) {
        budget.share(&a.source_memory, a.used);
    }
    for arena in constants.values_mut().chain(persistent.values_mut()) {
        arena.total_size = budget.share(&arena.memory, arena.used);
    }
    let plan = MemoryPlan {
        constant_arenas: constants,
        persistent_arenas: persistent,
        ..MemoryPlan::default()
    };
    Ok(Budgeted { plan, budget })
}

/// The decision of a tensor the resolver already sent to a memory.
fn pinned(inp: &Inputs<'_>, i: usize) -> Option<Decision> {
    let Some(Request {
        role,
        home: Home::Memory {
            memory,
            source,
            reason,
        },
        rule,
    }) = &inp.requests[i]
    else {
        return None;
    };
    Some(Decision {
        role: *role,
        memory: memory.clone(),
        source_memory: source.clone(),
        rule: *rule,
        reason: reason.clone(),
    })
}

/// Lays out a bump-allocated arena (constants or persistent state) of `role` in `memory`,
/// sourced from `source`: every tensor in order at its slot alignment, each placed (with
/// its decision, when it has one) onto `placed`.
fn bump_arena(
    inp: &Inputs<'_>,
    (role, memory, source): (ArenaRole, &str, &str),
    tensors: &[usize],
    decisions: impl Iterator<Item = Option<Decision>>,
    placed: &mut Placed,
) -> Result<ArenaUsage> {
    let align = tensors
        .iter()
        .map(|&i| inp.slot_align(i, memory))
        .max()
        .unwrap_or(1);
    let base = inp.arena_base_align(memory, align);
    // No arena passes MAX_ARENA, so no offset in it overflows either.
    let mut arena = ArenaUsage::new(memory, role, source, MAX_ARENA, base);
    for (&i, decision) in tensors.iter().zip(decisions) {
        let off = arena
            .allocate(inp.slot_size[i], inp.slot_align(i, memory))
            .map_err(|_| {
                Error::infeasible(format!(
                    "the {} arena in {memory} passes {MAX_ARENA} bytes, the largest arena, at tensor `{}` ({} bytes after {} bytes of others)",
                    role.name(),
                    inp.graph.tensors[i].id,
                    inp.slot_size[i],
                    arena.used
                ))
                .help("move some of these tensors to another memory with memory.tensors rules")
            })?;
        if let Some(d) = decision {
            placed.push((i, d, off));
        }
    }
    Ok(arena)
}
