//! Planning a unit: N >= 1 models over one platform, one plan. A model planned on its own
//! ([`super::plan_graph`]) is a unit of one; a group manifest's models ([`plan_group`]) a
//! unit of several.
//!
//! Every model is first planned alone ([`super::plan_alone`]), so each model's scratch
//! layout is the one it has alone. Then the unit's arenas are laid out per memory and role
//! (with one model, each arena is the model's own, unchanged):
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
//! Budgets are charged for the whole unit. When a memory's total passes its budget, the
//! models using it are planned again with shares of that memory that add up to its budget
//! (in model order within each concurrent component), so their overflow spills to the next
//! bank as a single model's does; a group that still does not fit is refused naming the
//! `max_size` to raise and the models to take out of `concurrent`. Then
//! [`crate::verify::verify_unit`] checks the result with cross-model lifetimes.

use std::collections::{BTreeMap, BTreeSet};
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use super::{ArenaUser, GroupArena, GroupPlanned, Planned, internal, plan_alone};
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::manifest::{Group, Manifest};
use crate::plan::{ArenaRole, ArenaUsage, align_up};
use crate::verify::{self, VerifyRules};

/// Most rounds of re-planning models under smaller shares of a memory before the group is
/// refused (each round lowers at least one share, so this only bounds pathological cases).
const MAX_SPILL_ROUNDS: usize = 64;

/// N >= 1 models to plan as one unit.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// The unit's name (a group's, or the model's).
    pub name: &'a str,
    /// Each model's manifest and graph (as imported), in unit order. The first model's
    /// manifest gives the platform and the budgets.
    pub models: Vec<(&'a Manifest, &'a Graph)>,
    /// Sets of models (indices into `models`) that may run at the same time.
    pub concurrent: &'a [Vec<usize>],
}

impl<'a> Unit<'a> {
    /// One model on its own.
    pub fn one(manifest: &'a Manifest, graph: &'a Graph) -> Unit<'a> {
        Unit {
            name: &manifest.name,
            models: vec![(manifest, graph)],
            concurrent: &[],
        }
    }

    /// The models of `group`, with their graphs in `graphs` (in model order).
    pub fn of(group: &'a Group, graphs: &'a [Graph]) -> Unit<'a> {
        Unit {
            name: &group.name,
            models: group.models.iter().zip(graphs).collect(),
            concurrent: &group.concurrent,
        }
    }
}

/// Imports every model of `group` and plans them as one unit ([`plan_unit`]).
pub fn plan_group(group: &Group) -> Result<GroupPlanned> {
    let graphs: Vec<Graph> = group
        .models
        .iter()
        .map(crate::import::load)
        .collect::<Result<_>>()?;
    plan_unit(&Unit::of(group, &graphs))
}

/// Plans every model of `unit` and lays out the unit's shared arenas: the one planning
/// path for one model or many.
///
/// When a memory's total for the unit passes its budget, the models using it are planned
/// again jointly under that budget: each gets a share of the memory (the budget less the
/// other models' constants and state there and the scratch of the models before it in its
/// concurrent component), so its overflow spills to the next bank of `memory.constraints`
/// exactly as a single model's would. Units that fit are laid out from the plans alone.
pub fn plan_unit(unit: &Unit<'_>) -> Result<GroupPlanned> {
    let Some(&(manifest, _)) = unit.models.first() else {
        return Err(Error::input(format!(
            "group {} lists no model to plan",
            unit.name
        ))
        .help("add a [[model]] table to the manifest"));
    };
    let mut alone: Vec<Planned> = unit
        .models
        .iter()
        .map(|&(m, g)| plan_alone(m, g))
        .collect::<Result<_>>()?;
    let components = components(unit.models.len(), unit.concurrent);
    // (model, memory) → the model's budget in that memory when lower than the manifest's.
    let mut shares: BTreeMap<(usize, String), u64> = BTreeMap::new();
    let mut rounds = 0usize;
    let mut layout = loop {
        let layout = lay_out(unit, &alone, &components)?;
        let Some(over) = overflow(manifest, &layout) else {
            break layout;
        };
        rounds += 1;
        let spilled =
            rounds <= MAX_SPILL_ROUNDS && spill(unit, &components, &over, &mut shares, &mut alone);
        if !spilled {
            return Err(refusal(unit, manifest, &components, &layout, &over));
        }
    };
    charge(manifest, &mut layout);
    let models = alone
        .into_iter()
        .enumerate()
        .map(|(k, p)| rebase(k, p, &layout))
        .collect::<Result<Vec<_>>>()?;
    let planned = GroupPlanned {
        name: unit.name.to_string(),
        models,
        arenas: layout.arenas,
        concurrent: unit.concurrent.to_vec(),
        shared_constants: layout.shared,
    };
    let rules = VerifyRules::from_manifest(manifest);
    if let Err(violations) = verify::verify_unit(&verify::Unit::of(&planned), &rules) {
        let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        return Err(internal(&format!(
            "the plan failed verification: {}",
            list.join("; ")
        )));
    }
    Ok(planned)
}

/// The group's arenas from the models' plans.
fn lay_out(unit: &Unit<'_>, alone: &[Planned], components: &[Vec<usize>]) -> Result<Layout> {
    let mut layout = Layout::default();
    scratch(alone, components, &mut layout);
    persistent(alone, &mut layout);
    constants(unit, alone, &mut layout)?;
    Ok(layout)
}

/// A memory whose group total passes its budget.
struct Overflow {
    memory: String,
    /// Constants (staged copies' sources included), persistent, scratch, lower bound.
    need: [u64; 4],
    cap: u64,
}

impl Overflow {
    fn total(&self) -> u64 {
        self.need[0]
            .saturating_add(self.need[1])
            .saturating_add(self.need[2])
    }
}

/// Bytes the group needs in each memory: constants (a staged arena charges its source
/// too), persistent, scratch, and the lower bound of the three.
fn needs(layout: &Layout) -> BTreeMap<String, [u64; 4]> {
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
    need
}

/// The first memory (in name order) whose group total passes its budget.
fn overflow(manifest: &Manifest, layout: &Layout) -> Option<Overflow> {
    needs(layout).into_iter().find_map(|(memory, need)| {
        let cap = manifest.budget(&memory)?;
        let over = Overflow { memory, need, cap };
        (over.total() > cap).then_some(over)
    })
}

/// Bytes model `p` alone charges to `memory` besides scratch: its constants there, the
/// sources of its staged constants, and its persistent state.
fn own_fixed(p: &Planned, memory: &str) -> u64 {
    let constants = p
        .plan
        .constant_arenas
        .values()
        .filter(|a| a.memory == memory || (a.is_staged() && a.source_memory == memory))
        .fold(0u64, |s, a| s.saturating_add(a.used));
    let state = p.plan.persistent_arenas.get(memory).map_or(0, |a| a.used);
    constants.saturating_add(state)
}

/// Gives the models using `over.memory` shares of it that fit together and plans the ones
/// that do not fit their share again under it, so their overflow spills to their next
/// bank. In each concurrent component, in model order, a model's share is the budget less
/// the group's constants and state there that are not its own, less the end of the
/// scratch of the models before it in the component (as they are after re-planning).
/// Returns false when no model could be planned under a smaller share (nothing more
/// spills).
fn spill(
    unit: &Unit<'_>,
    components: &[Vec<usize>],
    over: &Overflow,
    shares: &mut BTreeMap<(usize, String), u64>,
    alone: &mut [Planned],
) -> bool {
    let memory = &over.memory;
    let fixed = over.need[0].saturating_add(over.need[1]);
    let mut changed = false;
    for comp in components {
        let mut end = 0u64;
        for &k in comp {
            let own = own_fixed(&alone[k], memory);
            let scratch = alone[k].plan.arena_usages.get(memory);
            if scratch.is_none() && own == 0 {
                continue;
            }
            let align = scratch.map_or(1, |a| a.alignment);
            let base = align_up(end, align).unwrap_or(u64::MAX);
            let others = fixed.saturating_sub(own);
            let share = over.cap.saturating_sub(others).saturating_sub(base);
            let used = own.saturating_add(scratch.map_or(0, |a| a.used));
            let key = (k, memory.clone());
            // A share is only ever lowered, so the rounds end.
            let lower = shares.get(&key).is_none_or(|&s| share < s);
            if used > share && lower {
                let (manifest, graph) = unit.models[k];
                let replanned = with_share(manifest, memory, share).map(|m| plan_alone(&m, graph));
                if let Some(Ok(p)) = replanned {
                    alone[k] = p;
                    shares.insert(key, share);
                    changed = true;
                }
            }
            let scratch = alone[k].plan.arena_usages.get(memory).map_or(0, |a| a.used);
            end = base.saturating_add(scratch);
        }
    }
    changed
}

/// `manifest` with the budget of `memory` lowered to `share` (`None` when the memory is
/// not in `memory.constraints`: adding it would change the bank order).
fn with_share(manifest: &Manifest, memory: &str, share: u64) -> Option<Manifest> {
    let mut m = manifest.clone();
    let c = m.constraints.iter_mut().find(|c| c.name == memory)?;
    c.max_size = Some(c.max_size.map_or(share, |max| max.min(share)));
    Some(m)
}

/// The error for a group that does not fit `over.memory` even after spilling: the figures,
/// the `max_size` to raise and by how much, and the models to take out of `concurrent`.
fn refusal(
    unit: &Unit<'_>,
    manifest: &Manifest,
    components: &[Vec<usize>],
    layout: &Layout,
    over: &Overflow,
) -> Error {
    let memory = &over.memory;
    let [c, p, s, lb] = over.need;
    let (total, cap) = (over.total(), over.cap);
    let name = |k: usize| {
        unit.models
            .get(k)
            .map_or_else(|| k.to_string(), |(m, _)| m.name.clone())
    };
    // The component whose stacked scratch is the memory's scratch arena.
    let arena = layout
        .arenas
        .iter()
        .find(|a| a.arena.role == ArenaRole::Scratch && &a.arena.memory == memory);
    let stacked: Option<Vec<usize>> = arena.and_then(|a| {
        components
            .iter()
            .filter(|comp| comp.len() > 1)
            .find(|comp| {
                let end = a
                    .users
                    .iter()
                    .filter(|u| comp.contains(&u.model))
                    .map(|u| u.base.saturating_add(u.bytes))
                    .max()
                    .unwrap_or(0);
                end == a.arena.used
            })
            .map(|comp| {
                comp.iter()
                    .copied()
                    .filter(|k| a.users.iter().any(|u| u.model == *k))
                    .collect()
            })
    });
    let mut help = format!(
        "raise the max_size of {memory} in memory.constraints to at least {total} ({} more)",
        total.saturating_sub(cap)
    );
    match stacked.as_deref() {
        Some(models @ [_, _, ..]) => {
            let list: Vec<String> = models.iter().map(|&k| format!("`{}`", name(k))).collect();
            help.push_str(&format!(
                ", or take `{}` out of its [group] concurrent set so that {} run in turn (their scratch then shares {memory})",
                name(models[models.len() - 1]),
                list.join(" and ")
            ));
        }
        _ => help.push_str(", or move constants or state elsewhere with rules"),
    }
    let e = Error::infeasible(format!(
        "group {} does not fit memory {memory}: it needs {total} bytes (constants {c}, persistent {p}, scratch {s}), budget {cap}, lower bound {lb}, and no model's scratch can spill further to a next bank",
        unit.name
    ))
    .help(help);
    match manifest.budget_source(memory) {
        Some((span, what)) => e.at(span).label(format!("{what} set here")),
        None => e,
    }
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
        // Set by `charge`, once every arena is known.
        budget: None,
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
    // The decisions say which tensors are constants here, so only those are looked up.
    let here = |i: usize| {
        p.decisions
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|d| d.role == ArenaRole::Constant && d.memory == memory)
    };
    for (_, t) in p.graph.tensors.iter().enumerate().filter(|&(i, _)| here(i)) {
        let Some(b) = p.plan.binding(&t.id) else {
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

/// Constant buffers stored so far: (size, bytes) → each slot of them, (offset, model that
/// stored it).
type Stored = BTreeMap<(u64, Arc<[u8]>), Vec<(u64, usize)>>;

/// Constants: one arena per runtime memory, each model's slots in turn, identical buffers
/// of two models stored once.
fn constants(unit: &Unit<'_>, alone: &[Planned], layout: &mut Layout) -> Result<()> {
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
        let mut stored: Stored = BTreeMap::new();
        let mut users = Vec::new();
        for &(k, a) in &arenas {
            let slot_align = unit.models[k].0.memory_alignment(&memory);
            let mut low = u64::MAX;
            // Offsets this model's slots reuse: two slots of one model are two tensors,
            // which the check keeps apart even when their bytes are equal.
            let mut reused = BTreeSet::new();
            for s in constant_slots(&alone[k], slot_align, &memory) {
                let key = s.data.clone().map(|d| (s.size, d));
                let reuse = key
                    .as_ref()
                    .and_then(|key| stored.get(key))
                    .and_then(|slots| {
                        slots.iter().find(|&&(o, owner)| {
                            owner != k && o % s.align == 0 && !reused.contains(&o)
                        })
                    })
                    .map(|&(o, _)| o);
                let new = match reuse {
                    Some(o) => {
                        layout.shared += 1;
                        reused.insert(o);
                        o
                    }
                    None => {
                        let o = out.allocate(s.size, s.align)?;
                        if let Some(key) = key {
                            stored.entry(key).or_default().push((o, k));
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
fn charge(manifest: &Manifest, layout: &mut Layout) {
    let need = needs(layout);
    let mut left: BTreeMap<String, u64> = BTreeMap::new();
    // Every memory fits its budget here: [`overflow`] found none that does not.
    for memory in need.keys() {
        let Some(cap) = manifest.budget(memory) else {
            continue;
        };
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
        let ga = &mut layout.arenas[i];
        let a = &mut ga.arena;
        ga.budget = left.get_mut(&a.memory).map(|l| {
            let t = (*l).max(a.used);
            *l = l.saturating_sub(a.used);
            t
        });
        a.total_size = ga.budget.unwrap_or(a.used);
    }
}

/// Model `k`'s plan with offsets in the group's arenas and the group's arena records.
fn rebase(k: usize, mut p: Planned, layout: &Layout) -> Result<Planned> {
    // The model's bases and constant slots, looked up by borrowed names (a model has a
    // few arenas; its constants may be many).
    let bases: Vec<(ArenaRole, &str, u64)> = layout
        .bases
        .iter()
        .filter(|((m, _, _), _)| *m == k)
        .map(|((_, role, memory), &base)| (*role, memory.as_str(), base))
        .collect();
    let constant_slots: BTreeMap<(&str, u64), u64> = layout
        .constant_slots
        .iter()
        .filter(|((m, _, _), _)| *m == k)
        .map(|((_, memory, old), &new)| ((memory.as_str(), *old), new))
        .collect();
    for alloc in p.plan.tensor_allocs.values_mut() {
        let Some(b) = alloc.binding.as_mut() else {
            continue;
        };
        let new = match b.role {
            ArenaRole::Constant => constant_slots.get(&(b.memory.as_str(), b.offset)).copied(),
            role => bases
                .iter()
                .find(|(r, memory, _)| *r == role && *memory == b.memory)
                .map(|(_, _, base)| base.saturating_add(b.offset)),
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
