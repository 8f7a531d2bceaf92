//! Group planning: several models over one platform, one plan.
//!
//! Every model is first planned alone ([`super::plan`]), so each model's scratch layout is
//! the one it has alone. Then the group's arenas are laid out per memory and role:
//!
//! - **constants**: one arena per runtime memory (one source memory), every model's slots
//!   bump-allocated in model order; a slot whose bytes are identical to one another model
//!   already stored (same size, same data, alignment kept) takes that slot instead;
//! - **persistent**: the models' arenas concatenated, always disjoint;
//! - **scratch**: models that may run at the same time (connected components of the
//!   `concurrent` sets) are stacked within their component; components share base 0. So
//!   the arena is the largest component's need, and with no `concurrent` set, the largest
//!   model's need.
//!
//! Budgets are charged for the whole group; then [`crate::verify::verify_group`] checks the
//! result with cross-model lifetimes.

use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use super::{Planned, internal, plan};
use crate::error::{Error, Result};
use crate::manifest::{Group, Manifest};
use crate::plan::{ArenaRole, ArenaUsage, align_up};

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

/// Plans every model of `group` and lays out the group's shared arenas.
pub fn plan_group(group: &Group) -> Result<GroupPlanned> {
    let alone: Vec<Planned> = group.models.iter().map(plan).collect::<Result<_>>()?;
    let components = components(group.models.len(), &group.concurrent);
    let mut layout = Layout::default();
    scratch(&alone, &components, &mut layout);
    persistent(&alone, &mut layout);
    constants(group, &alone, &mut layout)?;
    let manifest = &group.models[0];
    charge(group, manifest, &mut layout)?;
    let models = alone
        .into_iter()
        .enumerate()
        .map(|(k, p)| rebase(k, p, &layout))
        .collect::<Result<Vec<_>>>()?;
    let planned = GroupPlanned {
        name: group.name.clone(),
        models,
        arenas: layout.arenas,
        concurrent: group.concurrent.clone(),
        shared_constants: layout.shared,
    };
    if let Err(violations) = crate::verify::verify_group(group, &planned) {
        let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        return Err(internal(&format!(
            "the group plan failed verification: {}",
            list.join("; ")
        )));
    }
    Ok(planned)
}

/// Arenas laid out so far, and where each model's slots moved.
#[derive(Default)]
struct Layout {
    arenas: Vec<GroupArena>,
    /// (model, role, memory) → base of the model's block (scratch and persistent).
    bases: BTreeMap<(usize, ArenaRole, String), u64>,
    /// (model, memory, old offset) → new offset of a constant slot.
    constant_slots: BTreeMap<(usize, String, u64), u64>,
    shared: usize,
}

/// Connected components of the "may run together" relation, each sorted, ordered by their
/// smallest model.
fn components(n: usize, concurrent: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut label: Vec<usize> = (0..n).collect();
    // Relabel until stable: few models, few sets.
    let mut changed = true;
    while changed {
        changed = false;
        for set in concurrent {
            let low = set.iter().filter_map(|&k| label.get(k)).min().copied();
            let Some(low) = low else { continue };
            for &k in set {
                if let Some(l) = label.get_mut(k)
                    && *l != low
                {
                    *l = low;
                    changed = true;
                }
            }
        }
    }
    let mut by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, l) in label.into_iter().enumerate() {
        by.entry(l).or_default().push(k);
    }
    by.into_values().collect()
}

/// Memories of `role` arenas over all models, in name order.
fn memories(alone: &[Planned], role: ArenaRole) -> Vec<String> {
    let mut out: Vec<String> = alone
        .iter()
        .flat_map(|p| p.plan.arenas().filter(|a| a.role == role))
        .map(|a| a.memory.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Scratch: stacked within a component, components from base 0.
fn scratch(alone: &[Planned], components: &[Vec<usize>], layout: &mut Layout) {
    for memory in memories(alone, ArenaRole::Scratch) {
        let mut users = Vec::new();
        let (mut used, mut lower_bound, mut align) = (0u64, 0u64, 1u64);
        for comp in components {
            let (mut end, mut lb) = (0u64, 0u64);
            for &k in comp {
                let Some(a) = alone[k].plan.arena_usages.get(&memory) else {
                    continue;
                };
                let base = align_up(end, a.alignment).unwrap_or(u64::MAX);
                end = base.saturating_add(a.used);
                align = align.max(a.alignment);
                lb = lb.saturating_add(
                    alone[k]
                        .scratch_reports
                        .iter()
                        .find(|r| r.memory == memory)
                        .map_or(a.used, |r| r.lower_bound),
                );
                layout
                    .bases
                    .insert((k, ArenaRole::Scratch, memory.clone()), base);
                users.push(ArenaUser {
                    model: k,
                    base,
                    bytes: a.used,
                });
            }
            used = used.max(end);
            lower_bound = lower_bound.max(lb);
        }
        users.sort_by_key(|u| u.model);
        push_arena(
            layout,
            (ArenaRole::Scratch, &memory, &memory),
            used,
            align,
            users,
            lower_bound,
        );
    }
}

/// Persistent state: every model's arena after the one before.
fn persistent(alone: &[Planned], layout: &mut Layout) {
    for memory in memories(alone, ArenaRole::Persistent) {
        let mut users = Vec::new();
        let (mut end, mut align) = (0u64, 1u64);
        for (k, p) in alone.iter().enumerate() {
            let Some(a) = p.plan.persistent_arenas.get(&memory) else {
                continue;
            };
            let base = align_up(end, a.alignment).unwrap_or(u64::MAX);
            end = base.saturating_add(a.used);
            align = align.max(a.alignment);
            layout
                .bases
                .insert((k, ArenaRole::Persistent, memory.clone()), base);
            users.push(ArenaUser {
                model: k,
                base,
                bytes: a.used,
            });
        }
        push_arena(
            layout,
            (ArenaRole::Persistent, &memory, &memory),
            end,
            align,
            users,
            end,
        );
    }
}

fn push_arena(
    layout: &mut Layout,
    (role, memory, source): (ArenaRole, &str, &str),
    used: u64,
    alignment: u64,
    users: Vec<ArenaUser>,
    lower_bound: u64,
) {
    let mut arena = ArenaUsage::new(memory, role, source, used, alignment);
    arena.used = used;
    let separate = users.iter().fold(0u64, |s, u| s.saturating_add(u.bytes));
    layout.arenas.push(GroupArena {
        arena,
        users,
        separate,
        lower_bound,
    });
}

/// One constant slot of a model: its old offset, size, alignment and bytes.
struct Slot {
    offset: u64,
    size: u64,
    align: u64,
    data: Option<Arc<[u8]>>,
}

/// A model's constant slots in `memory`, by offset (aliases share their root's slot).
fn constant_slots(p: &Planned, manifest_align: u64, memory: &str) -> Vec<Slot> {
    let mut by: BTreeMap<u64, Slot> = BTreeMap::new();
    for t in &p.graph.tensors {
        let Some(b) = p
            .plan
            .tensor_allocs
            .get(&t.id)
            .and_then(|a| a.binding.as_ref())
        else {
            continue;
        };
        if b.role != ArenaRole::Constant || b.memory != memory {
            continue;
        }
        let align = manifest_align
            .max(t.dtype.align())
            .max(t.align_hint.unwrap_or(1));
        let slot = by.entry(b.offset).or_insert(Slot {
            offset: b.offset,
            size: 0,
            align: 1,
            data: None,
        });
        slot.align = slot.align.max(align);
        if t.size >= slot.size {
            slot.size = t.size;
            slot.data = t.data.clone().filter(|d| d.len() as u64 == t.size);
        }
    }
    by.into_values().collect()
}

/// Constant buffers stored so far: (size, bytes) → (offset, model that stored it).
type Stored = BTreeMap<(u64, Arc<[u8]>), (u64, usize)>;

/// Constants: one arena per runtime memory, each model's slots in turn, identical buffers
/// of two models stored once.
fn constants(group: &Group, alone: &[Planned], layout: &mut Layout) -> Result<()> {
    for memory in memories(alone, ArenaRole::Constant) {
        let arenas: Vec<(usize, &ArenaUsage)> = alone
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.plan.constant_arenas.get(&memory).map(|a| (k, a)))
            .collect();
        let source = arenas[0].1.source_memory.clone();
        if let Some((k, other)) = arenas.iter().find(|(_, a)| a.source_memory != source) {
            return Err(Error::input(format!(
                "constants in {memory} come from {source} for model {} but from {} for model {}",
                alone[arenas[0].0].model, other.source_memory, alone[*k].model
            ))
            .help("stage each memory's constants from one source memory in every model's rules"));
        }
        let align = arenas.iter().map(|(_, a)| a.alignment).max().unwrap_or(16);
        let mut out = ArenaUsage::new(
            memory.clone(),
            ArenaRole::Constant,
            source.clone(),
            u64::MAX,
            align,
        );
        // (size, bytes) → (offset, model that stored it).
        let mut stored: Stored = BTreeMap::new();
        let mut users = Vec::new();
        for &(k, a) in &arenas {
            let slot_align = group.models[k].memory_alignment(&memory);
            let mut low = u64::MAX;
            for s in constant_slots(&alone[k], slot_align, &memory) {
                let key = s.data.clone().map(|d| (s.size, d));
                let reuse = key
                    .as_ref()
                    .and_then(|key| stored.get(key))
                    .filter(|&&(o, owner)| owner != k && o % s.align == 0)
                    .map(|&(o, _)| o);
                let new = match reuse {
                    Some(o) => {
                        layout.shared += 1;
                        o
                    }
                    None => {
                        let o = out.allocate(s.size, s.align)?;
                        if let Some(key) = key {
                            stored.entry(key).or_insert((o, k));
                        }
                        o
                    }
                };
                low = low.min(new);
                layout
                    .constant_slots
                    .insert((k, memory.clone(), s.offset), new);
            }
            users.push(ArenaUser {
                model: k,
                base: if low == u64::MAX { 0 } else { low },
                bytes: a.used,
            });
        }
        let used = out.used;
        push_arena(
            layout,
            (ArenaRole::Constant, &memory, &source),
            used,
            align,
            users,
            used,
        );
    }
    Ok(())
}

/// Charges the group's arenas to every memory's budget (a staged constant arena charges its
/// source too); then gives each arena its share: constants, then state, then scratch.
fn charge(group: &Group, manifest: &Manifest, layout: &mut Layout) -> Result<()> {
    let mut need: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for a in &layout.arenas {
        let slot = match a.arena.role {
            ArenaRole::Constant => 0,
            ArenaRole::Persistent => 1,
            ArenaRole::Scratch => 2,
        };
        let e = need.entry(a.arena.memory.clone()).or_default();
        e[slot] = e[slot].saturating_add(a.arena.used);
        // The scratch lower bound; the other roles cannot shrink.
        e[3] = e[3].saturating_add(a.lower_bound);
        if a.arena.is_staged() {
            let s = need.entry(a.arena.source_memory.clone()).or_default();
            s[0] = s[0].saturating_add(a.arena.used);
            s[3] = s[3].saturating_add(a.arena.used);
        }
    }
    let mut left: BTreeMap<String, u64> = BTreeMap::new();
    for (memory, [c, p, s, lb]) in &need {
        let total = c.saturating_add(*p).saturating_add(*s);
        let Some(cap) = manifest.budget(memory) else {
            continue;
        };
        if total > cap {
            let e = Error::infeasible(format!(
                "group {} does not fit memory {memory}: it needs {total} bytes (constants {c}, persistent {p}, scratch {s}), budget {cap}, lower bound {lb}",
                group.name
            ))
            .help(format!(
                "raise the max_size of {memory}, move constants or state elsewhere with rules, or run fewer models concurrently"
            ));
            return Err(match manifest.budget_source(memory) {
                Some((span, what)) => e.at(span).label(format!("{what} set here")),
                None => e,
            });
        }
        left.insert(memory.clone(), cap);
    }
    let order = |r: ArenaRole| match r {
        ArenaRole::Constant => 0,
        ArenaRole::Persistent => 1,
        ArenaRole::Scratch => 2,
    };
    for a in layout.arenas.iter().filter(|a| a.arena.is_staged()) {
        if let Some(l) = left.get_mut(&a.arena.source_memory) {
            *l = l.saturating_sub(a.arena.used);
        }
    }
    let mut idx: Vec<usize> = (0..layout.arenas.len()).collect();
    idx.sort_by_key(|&i| order(layout.arenas[i].arena.role));
    for i in idx {
        let a = &mut layout.arenas[i].arena;
        a.total_size = match left.get_mut(&a.memory) {
            Some(l) => {
                let t = (*l).max(a.used);
                *l = l.saturating_sub(a.used);
                t
            }
            None => a.used,
        };
    }
    Ok(())
}

/// Model `k`'s plan with offsets in the group's arenas and the group's arena records.
fn rebase(k: usize, mut p: Planned, layout: &Layout) -> Result<Planned> {
    for alloc in p.plan.tensor_allocs.values_mut() {
        let Some(b) = alloc.binding.as_mut() else {
            continue;
        };
        let new = match b.role {
            ArenaRole::Constant => layout
                .constant_slots
                .get(&(k, b.memory.clone(), b.offset))
                .copied(),
            role => layout
                .bases
                .get(&(k, role, b.memory.clone()))
                .map(|base| base.saturating_add(b.offset)),
        };
        let Some(new) = new else {
            return Err(internal(&format!(
                "tensor {} of model {} has no place in the group arenas",
                alloc.tensor_id, p.model
            )));
        };
        b.offset = new;
        alloc.offset = new;
    }
    let plan = &mut p.plan;
    for (role, map) in [
        (ArenaRole::Scratch, &mut plan.arena_usages),
        (ArenaRole::Persistent, &mut plan.persistent_arenas),
        (ArenaRole::Constant, &mut plan.constant_arenas),
    ] {
        for (memory, arena) in map.iter_mut() {
            if let Some(g) = layout
                .arenas
                .iter()
                .find(|g| g.arena.role == role && &g.arena.memory == memory)
            {
                *arena = g.arena.clone();
            }
        }
    }
    Ok(p)
}

/// Names of the models using arena `a`, comma-separated (for reports).
pub fn users_of(planned: &GroupPlanned, a: &GroupArena) -> String {
    let names: Vec<String> = a
        .users
        .iter()
        .map(|u| {
            planned
                .models
                .get(u.model)
                .map_or_else(|| u.model.to_string(), |m| m.model.clone())
        })
        .collect();
    names.join(", ")
}
