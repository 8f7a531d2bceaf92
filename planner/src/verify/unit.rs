//! The independent check of a unit of N >= 1 models planned together, with cross-model
//! lifetimes. A model checked on its own ([`super::verify_with`]) is a unit of one.
//!
//! It reads which models may run at the same time, the budgets, each model's graph and plan,
//! and the unit's shared arena records, and re-derives what it checks:
//!
//! - each model's plan passes the model check (within a model, two tensors share bytes only
//!   when their lifetimes are disjoint; slots aligned and inside their arena);
//! - every model's arena records are the unit's;
//! - across models, scratch tensors share bytes only when the two models never run at the
//!   same time; persistent tensors never share bytes; constants share bytes only as the
//!   same slot holding identical bytes (with one model: nothing to check);
//! - every memory's budget holds the unit's arenas.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::string::String;
use std::vec::Vec;

use super::{VerifyRules, Violation, check_model};
use crate::graph::Graph;
use crate::manifest::Group;
use crate::plan::{ArenaRole, ArenaUsage, MemoryPlan};
use crate::planned::{GroupArena, GroupPlanned};

/// One slot of the unit: bytes `[start, end)`, model index, tensor index.
type Slot = (u64, u64, usize, usize);

/// One model of a unit, as the check reads it.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// The model's name (in messages of a unit of two or more).
    pub name: &'a str,
    /// The graph as planned.
    pub graph: &'a Graph,
    /// Its plan, offsets in the unit's arenas.
    pub plan: &'a MemoryPlan,
}

/// A unit of N >= 1 models to check.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// The models, in unit order.
    pub members: Vec<Member<'a>>,
    /// The arenas the models share; empty when the unit has no records of its own (a model
    /// checked alone: its plan's arenas are the unit's).
    pub arenas: &'a [GroupArena],
    /// Sets of models (indices into `members`) that may run at the same time.
    pub concurrent: &'a [Vec<usize>],
}

impl<'a> Unit<'a> {
    /// A model on its own, with no arena records besides its plan's.
    pub fn one(graph: &'a Graph, plan: &'a MemoryPlan) -> Unit<'a> {
        Unit {
            members: vec![Member {
                name: &graph.name,
                graph,
                plan,
            }],
            arenas: &[],
            concurrent: &[],
        }
    }

    /// The models of `planned` and its shared arenas.
    pub fn of(planned: &'a GroupPlanned) -> Unit<'a> {
        Unit {
            members: planned
                .models
                .iter()
                .map(|p| Member {
                    name: &p.model,
                    graph: &p.graph,
                    plan: &p.plan,
                })
                .collect(),
            arenas: &planned.arenas,
            concurrent: &planned.concurrent,
        }
    }

    /// True when models `a` and `b` are named together in some concurrent set.
    fn may_run_together(&self, a: usize, b: usize) -> bool {
        a != b
            && self
                .concurrent
                .iter()
                .any(|set| set.contains(&a) && set.contains(&b))
    }
}

/// Checks `planned` against the group it claims to plan: [`verify_unit`] with the group's
/// concurrent sets (`planned` records its own) and its first model's platform rules.
pub fn verify_group(group: &Group, planned: &GroupPlanned) -> Result<(), Vec<Violation>> {
    if planned.models.len() != group.models.len() {
        return Err(vec![Violation::new(format!(
            "the group lists {} models but the plan has {}",
            group.models.len(),
            planned.models.len()
        ))]);
    }
    let Some(first) = group.models.first() else {
        return Ok(());
    };
    let unit = Unit {
        concurrent: &group.concurrent,
        ..Unit::of(planned)
    };
    verify_unit(&unit, &VerifyRules::from_manifest(first))
}

/// Checks a unit of N >= 1 models under the platform's `rules`: each model's plan, its arena
/// records against the unit's, the budgets over the unit's arenas, and bytes shared across
/// models. Messages about one model of several name it.
pub fn verify_unit(unit: &Unit<'_>, rules: &VerifyRules) -> Result<(), Vec<Violation>> {
    let mut v: Vec<String> = Vec::new();
    // Budgets hold for the unit's arenas together, so models are checked without them.
    let model_rules = if rules.budgets.is_empty() {
        Cow::Borrowed(rules)
    } else {
        Cow::Owned(VerifyRules {
            budgets: BTreeMap::new(),
            ..rules.clone()
        })
    };
    let named = unit.members.len() > 1;
    for m in &unit.members {
        let found = check_model(m.graph, m.plan, &model_rules);
        if named {
            v.extend(found.into_iter().map(|x| format!("model {}: {x}", m.name)));
        } else {
            v.extend(found);
        }
        if !unit.arenas.is_empty() {
            records(unit, m, &mut v);
        }
    }
    let arenas: Vec<&ArenaUsage> = if unit.arenas.is_empty() {
        unit.members.iter().flat_map(|m| m.plan.arenas()).collect()
    } else {
        unit.arenas.iter().map(|g| &g.arena).collect()
    };
    check_budgets(&arenas, &rules.budgets, &mut v);
    check_cross_model(unit, &mut v);
    if v.is_empty() {
        Ok(())
    } else {
        Err(v.into_iter().map(Violation::new).collect())
    }
}

/// Every arena record of model `m` is the unit's.
fn records(unit: &Unit<'_>, m: &Member<'_>, v: &mut Vec<String>) {
    for a in m.plan.arenas() {
        let same = unit
            .arenas
            .iter()
            .any(|g| g.arena.role == a.role && g.arena.memory == a.memory && g.arena == *a);
        if !same {
            v.push(format!(
                "model {}: its {} arena in {} ({} bytes) is not the group's",
                m.name,
                a.role.name(),
                a.memory,
                a.used
            ));
        }
    }
}

/// Each memory's budget holds the unit's `arenas` (a staged constant arena counts in its
/// source memory too). Each arena's share (`used` within `total_size`) is the model
/// check's: the records are every model's.
fn check_budgets(arenas: &[&ArenaUsage], budgets: &BTreeMap<String, u64>, v: &mut Vec<String>) {
    let mut per_memory: BTreeMap<&str, u64> = BTreeMap::new();
    for a in arenas {
        // Saturating: a sum past 2^64 is over any budget, and must not wrap below one.
        let e = per_memory.entry(a.memory.as_str()).or_insert(0);
        *e = e.saturating_add(a.used);
        if a.is_staged() {
            let e = per_memory.entry(a.source_memory.as_str()).or_insert(0);
            *e = e.saturating_add(a.used);
        }
    }
    for (m, total) in per_memory {
        if let Some(&cap) = budgets.get(m)
            && total > cap
        {
            v.push(format!(
                "memory {m} holds {total} bytes of arenas, over its budget of {cap}"
            ));
        }
    }
}

/// Arenas (role, memory) that two or more models bind tensors in.
fn shared_arenas<'u>(unit: &Unit<'u>) -> BTreeSet<(ArenaRole, &'u str)> {
    let mut users: BTreeMap<(ArenaRole, &str), usize> = BTreeMap::new();
    for m in &unit.members {
        let mut mine: BTreeSet<(ArenaRole, &str)> = BTreeSet::new();
        for b in m.plan.tensor_allocs.values().filter_map(|a| a.binding.as_ref()) {
            mine.insert((b.role, b.memory.as_str()));
        }
        for key in mine {
            *users.entry(key).or_insert(0) += 1;
        }
    }
    users
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(key, _)| key)
        .collect()
}

/// Pairs of slots of two different models that share bytes in one arena.
fn check_cross_model(unit: &Unit<'_>, v: &mut Vec<String>) {
    let shared = shared_arenas(unit);
    if shared.is_empty() {
        return;
    }
    let mut arenas: BTreeMap<(ArenaRole, &str), Vec<Slot>> = BTreeMap::new();
    for (k, m) in unit.members.iter().enumerate() {
        for (i, t) in m.graph.tensors.iter().enumerate() {
            let Some(b) = m.plan.binding(&t.id) else {
                continue;
            };
            let key = (b.role, b.memory.as_str());
            if t.size == 0 || !shared.contains(&key) {
                continue;
            }
            arenas
                .entry(key)
                .or_default()
                .push((b.offset, b.offset.saturating_add(t.size), k, i));
        }
    }
    for ((role, memory), mut slots) in arenas {
        slots.sort_unstable();
        for (n, &(s1, e1, k1, i1)) in slots.iter().enumerate() {
            for &(s2, e2, k2, i2) in &slots[n + 1..] {
                if s2 >= e1 {
                    break;
                }
                if k1 == k2 {
                    continue;
                }
                let (a, b) = (&unit.members[k1], &unit.members[k2]);
                let (ta, tb) = (&a.graph.tensors[i1], &b.graph.tensors[i2]);
                let why = match role {
                    ArenaRole::Scratch if !unit.may_run_together(k1, k2) => continue,
                    ArenaRole::Scratch => "the models may run at the same time",
                    ArenaRole::Persistent => "persistent state is never shared",
                    ArenaRole::Constant => {
                        let same = s1 == s2
                            && e1 == e2
                            && matches!((&ta.data, &tb.data), (Some(x), Some(y)) if x == y);
                        if same {
                            continue;
                        }
                        "only identical constants may share bytes"
                    }
                };
                v.push(format!(
                    "tensor `{}` of model {} [{s1}, {e1}) and tensor `{}` of model {} [{s2}, {e2}) share bytes in the {} arena of {memory}: {why}",
                    ta.id,
                    a.name,
                    tb.id,
                    b.name,
                    role.name()
                ));
            }
        }
    }
}
