//! Bump-allocated arenas: constants (one per runtime memory, one source memory each) and
//! persistent state; then the budgets they charge.

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use super::state::State;
use crate::error::{Error, Result};
use crate::placement::{Decision, Home, Reason, Request};
use crate::plan::{ArenaRole, ArenaUsage, MAX_ARENA};

/// Stage 2: one constant arena per runtime memory, each from one source memory.
pub(super) fn constants(st: &mut State<'_>) -> Result<()> {
    let mut by_dest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in st.roots_of(ArenaRole::Constant) {
        if let Home::Memory { memory, .. } = &r.home {
            by_dest.entry(memory.clone()).or_default().push(i);
        }
    }
    one_source_each(st, &by_dest)?;
    for (dest, tensors) in &by_dest {
        let source = match st.requests[tensors[0]].as_ref().map(|r| &r.home) {
            Some(Home::Memory { source, .. }) => source.clone(),
            _ => dest.clone(),
        };
        for &i in tensors {
            decide_pinned(st, i);
        }
        let arena = bump_arena(st, (ArenaRole::Constant, dest, &source), tensors)?;
        st.charge(dest, arena.used);
        if source != *dest {
            st.charge(&source, arena.used);
            st.warnings.push(format!(
                "{} constants ({} bytes) staged {source} -> {dest}: copied at init",
                tensors.len(),
                arena.used
            ));
        }
        st.plan.constant_arenas.insert(dest.clone(), arena);
    }
    Ok(())
}

/// Several source memories staged into one destination: one error listing every tensor.
fn one_source_each(st: &State<'_>, by_dest: &BTreeMap<String, Vec<usize>>) -> Result<()> {
    let mut conflicts = Vec::new();
    for (dest, tensors) in by_dest {
        let mut sources: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for &i in tensors {
            let src = match st.requests[i].as_ref().map(|r| &r.home) {
                Some(Home::Memory { source, .. }) => source.as_str(),
                _ => dest.as_str(),
            };
            sources
                .entry(src)
                .or_default()
                .push(st.graph.tensors[i].id.as_str());
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

/// Stage 3: persistent arenas, pinned ones in their memory, the rest in the first bank
/// with room.
pub(super) fn persistent(st: &mut State<'_>) -> Result<()> {
    let banks: Vec<String> = st
        .manifest
        .scratch_banks()
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let mut persistent: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    // Bytes each bank's state takes so far, counted as slot size plus alignment.
    let mut taken: BTreeMap<String, u64> = BTreeMap::new();
    let state: Vec<(usize, Request)> = st
        .roots_of(ArenaRole::Persistent)
        .map(|(i, r)| (i, r.clone()))
        .collect();
    for (i, r) in state {
        let memory = match &r.home {
            Home::Memory { memory, .. } => {
                decide_pinned(st, i);
                memory.clone()
            }
            Home::FirstBankWithRoom => {
                let need = st.slot_size[i];
                let found = banks.iter().find(|b| {
                    let have = st
                        .charged
                        .get(*b)
                        .copied()
                        .unwrap_or(0)
                        .saturating_add(taken.get(*b).copied().unwrap_or(0));
                    st.manifest
                        .budget(b)
                        .is_none_or(|cap| have.saturating_add(need) <= cap)
                });
                let Some(b) = found.or(banks.first()) else {
                    return Err(Error::input(format!(
                        "persistent tensor `{}` has no writable memory to go to",
                        st.graph.tensors[i].id
                    )));
                };
                st.decided[i] = Some(Decision {
                    role: ArenaRole::Persistent,
                    memory: b.clone(),
                    source_memory: b.clone(),
                    rule: r.rule,
                    reason: Reason::FirstBank {
                        role: ArenaRole::Persistent,
                        bank: b.clone(),
                    },
                });
                b.clone()
            }
        };
        let cost = st.slot_size[i].saturating_add(st.slot_align(i, &memory));
        let t = taken.entry(memory.clone()).or_insert(0);
        *t = t.saturating_add(cost);
        persistent.entry(memory).or_default().push(i);
    }
    for (memory, tensors) in &persistent {
        let arena = bump_arena(st, (ArenaRole::Persistent, memory, memory), tensors)?;
        st.charge(memory, arena.used);
        st.plan.persistent_arenas.insert(memory.clone(), arena);
    }
    Ok(())
}

/// Stage 4: constants and state within every budget; then each arena's share of its
/// memory's budget (`total_size`): constants first, then persistent state; scratch gets
/// what is left.
pub(super) fn budgets(st: &mut State<'_>) -> Result<()> {
    for (memory, &used) in &st.charged {
        let Some(cap) = st.manifest.budget(memory) else {
            continue;
        };
        if used <= cap {
            continue;
        }
        let what: Vec<String> = [
            st.plan
                .constant_arenas
                .get(memory)
                .map(|a| format!("constants {}", a.used)),
            st.plan
                .persistent_arenas
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
        return Err(st.at_budget(e, memory));
    }
    let staged: Vec<(String, u64)> = st
        .plan
        .constant_arenas
        .values()
        .filter(|a| a.is_staged())
        .map(|a| (a.source_memory.clone(), a.used))
        .collect();
    for (source, used) in staged {
        st.share(&source, used);
    }
    let mut plan = std::mem::take(&mut st.plan);
    for arena in plan
        .constant_arenas
        .values_mut()
        .chain(plan.persistent_arenas.values_mut())
    {
        arena.total_size = st.share(&arena.memory, arena.used);
    }
    st.plan = plan;
    Ok(())
}

/// Records the decision of a tensor the resolver already sent to a memory.
fn decide_pinned(st: &mut State<'_>, i: usize) {
    if let Some(Request {
        role,
        home: Home::Memory {
            memory,
            source,
            reason,
        },
        rule,
    }) = &st.requests[i]
    {
        st.decided[i] = Some(Decision {
            role: *role,
            memory: memory.clone(),
            source_memory: source.clone(),
            rule: *rule,
            reason: reason.clone(),
        });
    }
}

/// Lays out a bump-allocated arena (constants or persistent state) of `role` in `memory`,
/// sourced from `source`: every tensor in order at its slot alignment, offsets recorded.
fn bump_arena(
    st: &mut State<'_>,
    (role, memory, source): (ArenaRole, &str, &str),
    tensors: &[usize],
) -> Result<ArenaUsage> {
    let align = tensors
        .iter()
        .map(|&i| st.slot_align(i, memory))
        .max()
        .unwrap_or(1);
    let base = st.arena_base_align(memory, align);
    // No arena passes MAX_ARENA, so no offset in it overflows either.
    let mut arena = ArenaUsage::new(memory, role, source, MAX_ARENA, base);
    for &i in tensors {
        let off = arena
            .allocate(st.slot_size[i], st.slot_align(i, memory))
            .map_err(|_| {
                Error::infeasible(format!(
                    "the {} arena in {memory} passes {MAX_ARENA} bytes, the largest arena, at tensor `{}` ({} bytes after {} bytes of others)",
                    role.name(),
                    st.graph.tensors[i].id,
                    st.slot_size[i],
                    arena.used
                ))
                .help("move some of these tensors to another memory with memory.tensors rules")
            })?;
        st.offsets[i] = Some(off);
    }
    Ok(arena)
}
