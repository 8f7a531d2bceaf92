//! The independent check of a group plan, with cross-model lifetimes.
//!
//! It reads the group manifest (which models may run at the same time, the budgets), each
//! model's graph and plan, and the group's arena records, and re-derives what it checks:
//!
//! - each model's plan passes [`super::verify_with`] (within a model, two tensors share
//!   bytes only when their lifetimes are disjoint; slots aligned and inside their arena);
//! - every model's arena records are the group's;
//! - across models, scratch tensors share bytes only when the two models never run at the
//!   same time; persistent tensors never share bytes; constants share bytes only as the
//!   same slot holding identical bytes;
//! - every memory's budget holds the group's arenas.

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use super::{VerifyRules, Violation, verify_with};
use crate::manifest::Group;
use crate::planned::GroupPlanned;
use crate::plan::ArenaRole;

/// One slot of the group: bytes `[start, end)`, model index, tensor index.
type Slot = (u64, u64, usize, usize);

/// Checks `planned` against the group it claims to plan.
pub fn verify_group(group: &Group, planned: &GroupPlanned) -> Result<(), Vec<Violation>> {
    let mut v: Vec<Violation> = Vec::new();
    if planned.models.len() != group.models.len() {
        v.push(Violation::new(format!(
            "the group lists {} models but the plan has {}",
            group.models.len(),
            planned.models.len()
        )));
        return Err(v);
    }
    let Some(first) = group.models.first() else {
        return Ok(());
    };
    let mut rules = VerifyRules::from_manifest(first);
    let budgets = std::mem::take(&mut rules.budgets);
    for p in &planned.models {
        if let Err(list) = verify_with(&p.graph, &p.plan, &rules) {
            v.extend(
                list.into_iter()
                    .map(|x| Violation::new(format!("model {}: {x}", p.model))),
            );
        }
        for a in p.plan.arenas() {
            let same = planned
                .arena(a.role, &a.memory)
                .is_some_and(|g| g.arena == *a);
            if !same {
                v.push(Violation::new(format!(
                    "model {}: its {} arena in {} ({} bytes) is not the group's",
                    p.model,
                    a.role.name(),
                    a.memory,
                    a.used
                )));
            }
        }
    }
    check_budgets(planned, &budgets, &mut v);
    check_cross_model(group, planned, &mut v);
    if v.is_empty() { Ok(()) } else { Err(v) }
}

fn check_budgets(planned: &GroupPlanned, budgets: &BTreeMap<String, u64>, v: &mut Vec<Violation>) {
    let mut per_memory: BTreeMap<&str, u64> = BTreeMap::new();
    for g in &planned.arenas {
        let a = &g.arena;
        if a.used > a.total_size {
            v.push(Violation::new(format!(
                "group {} arena in {} uses {} of {} bytes",
                a.role.name(),
                a.memory,
                a.used,
                a.total_size
            )));
        }
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
            v.push(Violation::new(format!(
                "memory {m} holds {total} bytes of the group's arenas, over its budget of {cap}"
            )));
        }
    }
}

/// Pairs of slots of two different models that share bytes in one arena.
fn check_cross_model(group: &Group, planned: &GroupPlanned, v: &mut Vec<Violation>) {
    let mut arenas: BTreeMap<(ArenaRole, &str), Vec<Slot>> = BTreeMap::new();
    for (k, p) in planned.models.iter().enumerate() {
        for (i, t, b) in p.bound_tensors(None) {
            if t.size == 0 {
                continue;
            }
            arenas
                .entry((b.role, b.memory.as_str()))
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
                let (a, b) = (&planned.models[k1], &planned.models[k2]);
                let (ta, tb) = (&a.graph.tensors[i1], &b.graph.tensors[i2]);
                let why = match role {
                    ArenaRole::Scratch if !group.may_run_together(k1, k2) => continue,
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
                v.push(Violation::new(format!(
                    "tensor `{}` of model {} [{s1}, {e1}) and tensor `{}` of model {} [{s2}, {e2}) share bytes in the {} arena of {memory}: {why}",
                    ta.id,
                    a.model,
                    tb.id,
                    b.model,
                    role.name()
                )));
            }
        }
    }
}
